//! `read` on a huge file: the first 2000 lines of a 1 GB file of short lines, timed through the
//! tool, with the process's peak resident memory to show the file was never loaded.
//!
//! `cargo bench -p pi-tools --bench read` uses a 1 GB file; `cargo test --benches` (no `--bench`
//! argument) runs the same code on 10 MB so CI stays fast. The file lives in a temporary
//! directory and is deleted at the end.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::time::{Duration, Instant};

use pi_agent_core::{AgentTool, ToolContext};
use pi_tools::ReadTool;
use pi_tools::ToolEnv;

const GIB: u64 = 1024 * 1024 * 1024;
const MIB: u64 = 1024 * 1024;

/// Writes `size` bytes of short numbered lines by repeating a 1 MiB block.
fn generate(path: &std::path::Path, size: u64) {
    let mut block = Vec::with_capacity(MIB as usize);
    let mut i = 0u64;
    // 22-byte lines, so 2000 of them stay under the 50KB cap and the line limit is what stops.
    while block.len() + 22 <= MIB as usize {
        block.extend_from_slice(format!("{i:010} short line\n").as_bytes());
        i += 1;
    }
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut written = 0;
    while written < size {
        let n = block.len().min((size - written) as usize);
        file.write_all(&block[..n]).unwrap();
        written += n as u64;
    }
    file.flush().unwrap();
}

/// Peak resident set size of this process (`VmHWM`), in KiB.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn human(bytes: u64) -> String {
    if bytes >= GIB {
        format!("{:.1}GB", bytes as f64 / GIB as f64)
    } else {
        format!("{:.1}MB", bytes as f64 / MIB as f64)
    }
}

fn main() {
    let full = std::env::args().any(|arg| arg == "--bench");
    let size = if full { GIB } else { 10 * MIB };
    let runs = if full { 5 } else { 2 };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.log");
    let started = Instant::now();
    generate(&path, size);
    println!("generated {} in {} ms", human(size), started.elapsed().as_millis());
    let rss_before = peak_rss_kib();

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let tool = ReadTool::new(ToolEnv::new(dir.path()));
    let mut times: Vec<Duration> = Vec::new();
    for _ in 0..runs {
        let args = serde_json::json!({"path": "huge.log"});
        let started = Instant::now();
        let result = runtime
            .block_on(tool.execute("bench", args, ToolContext::detached()))
            .unwrap();
        times.push(started.elapsed());
        let text = result.content[0].as_text().unwrap();
        assert!(text.contains("[Showing lines 1-2000 of "), "unexpected output tail");
        std::hint::black_box(text);
    }
    times.sort();
    let median = times[times.len() / 2];
    println!(
        "read first 2000 lines of a {} file: {:.1} ms (median of {runs}; min {:.1} ms)",
        human(size),
        median.as_secs_f64() * 1000.0,
        times[0].as_secs_f64() * 1000.0
    );
    match (rss_before, peak_rss_kib()) {
        (Some(before), Some(after)) => println!(
            "peak RSS (VmHWM): {:.1} MB after generating, {:.1} MB after reading",
            before as f64 / 1024.0,
            after as f64 / 1024.0
        ),
        _ => println!("peak RSS: unavailable (no /proc/self/status)"),
    }
    drop(tool);
    dir.close().unwrap();
}
