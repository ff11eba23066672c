//! `edit` on a large file, timed through the tool (read, match, diff, atomic write with fsync).
//!
//! A generated 20 MB file of numbered lines is edited with one replacement near its end, with
//! three replacements (start, middle, end) and with one replacement that only matches fuzzily
//! (the file's line has smart quotes, the edit ASCII ones). Each run starts from a fresh copy of
//! the file (not timed). `cargo bench -p pi-tools --bench edit` prints
//!
//! ```text
//! edit 20MB file (1 edit): 75.6 ms (median of 7 runs)
//! ```
//!
//! Without `--bench` (as under `cargo test --benches`) the same scenarios run once on a 64 KB
//! file, so CI only checks that the bench works.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use pi_agent_core::{AgentTool, ToolContext};
use pi_tools::EditTool;
use pi_tools::ToolEnv;
use serde_json::{Value, json};

/// A file of `size` bytes (about) of numbered lines; one line near the end uses smart quotes.
fn generate(size: usize) -> (String, usize) {
    let mut text = String::with_capacity(size + 128);
    let mut lines = 0;
    while text.len() < size {
        text.push_str(&format!(
            "line {lines:08}: the quick brown fox jumps over the lazy dog\n"
        ));
        lines += 1;
    }
    let quoted = lines - 5;
    let plain = format!("line {quoted:08}: the quick brown fox jumps over the lazy dog\n");
    let smart = format!("line {quoted:08}: the \u{201C}quick\u{201D} brown fox jumps over the lazy dog\n");
    (text.replacen(&plain, &smart, 1), lines)
}

fn replace_line(n: usize) -> Value {
    json!({"oldText": format!("line {n:08}: the quick"), "newText": format!("line {n:08}: the slow")})
}

fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

fn main() {
    let full = std::env::args().any(|arg| arg == "--bench");
    let (size, label, runs) = if full {
        (20 * 1024 * 1024, "20MB", 7)
    } else {
        (64 * 1024, "64KB", 1)
    };
    let (original, lines) = generate(size);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.txt");
    let tool = EditTool::new(ToolEnv::new(dir.path()));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();

    let quoted = lines - 5;
    let scenarios = [
        ("1 edit", vec![replace_line(lines - 10)]),
        (
            "3 edits",
            vec![replace_line(10), replace_line(lines / 2), replace_line(lines - 10)],
        ),
        (
            "1 fuzzy edit",
            vec![json!({
                "oldText": format!("line {quoted:08}: the \"quick\" brown"),
                "newText": format!("line {quoted:08}: the \"slow\" brown"),
            })],
        ),
    ];
    for (name, edits) in scenarios {
        let count = edits.len();
        let args = json!({"path": "big.txt", "edits": edits});
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            reset(&file, &original);
            let started = Instant::now();
            let result = runtime
                .block_on(tool.execute("bench", args.clone(), ToolContext::detached()))
                .unwrap();
            times.push(started.elapsed());
            let text = result.content[0].as_text().unwrap().to_owned();
            assert_eq!(text, format!("Successfully replaced {count} block(s) in big.txt."));
        }
        println!(
            "edit {label} file ({name}): {:.1} ms (median of {runs} runs)",
            median(times).as_secs_f64() * 1000.0
        );
    }
}

fn reset(file: &Path, content: &str) {
    std::fs::write(file, content).unwrap();
}
