//! The `pi` binary as a user runs it (SPEC §8): `pi --version` wall time and peak memory (budget
//! ≤ 15 ms and ≤ 15 MiB), and a scripted `-p` session with 7 tool calls against a local
//! OpenAI-compatible mock server (budget ≤ 80 ms).
//!
//! `cargo bench -p pi-cli --bench cli` measures the release binary; `cargo test --benches`
//! (no `--bench` argument) runs each scenario once as a smoke test. Peak memory is the child's
//! maximum resident set size from `getrusage(RUSAGE_CHILDREN)`, read after each child exits: the
//! largest of all children so far, which is why the version runs come first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use pi_test_support::sandbox::Sandbox;
use pi_test_support::{MockServer, Reply, openai};
use serde_json::json;

const STARTUP_BUDGET_MS: f64 = 15.0;
const STARTUP_BUDGET_MIB: f64 = 15.0;
const SESSION_BUDGET_MS: f64 = 80.0;

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Peak RSS of the children waited for so far, in MiB.
fn children_peak_mib() -> f64 {
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).unwrap();
    // Linux reports kilobytes.
    usage.max_rss() as f64 / 1024.0
}

fn run(mut command: Command) -> Duration {
    let started = Instant::now();
    let output = command.output().unwrap();
    let elapsed = started.elapsed();
    assert!(
        output.status.success(),
        "pi failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    elapsed
}

/// Seven tool calls over four turns, then an answer.
fn seven_tool_session(project: &Path) -> Vec<Reply> {
    let file = |name: &str| project.join(name).display().to_string();
    vec![
        openai::tool_calls(&[
            ("t1", "read", json!({"path": "README.md"})),
            ("t2", "read", json!({"path": "src/lib.rs"})),
        ]),
        openai::tool_calls(&[
            ("t3", "write", json!({"path": file("notes.md"), "content": "notes\n"})),
            (
                "t4",
                "edit",
                json!({"path": "src/lib.rs", "edits": [{"oldText": "one", "newText": "two"}]}),
            ),
        ]),
        openai::tool_calls(&[
            ("t5", "bash", json!({"command": "echo checked"})),
            ("t6", "read", json!({"path": "notes.md"})),
        ]),
        openai::tool_calls(&[("t7", "read", json!({"path": "src/lib.rs"}))]),
        openai::text("Done."),
    ]
}

fn project(dir: &Path) -> PathBuf {
    let project = dir.join("project");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(project.join("README.md"), "# bench\n").unwrap();
    std::fs::write(project.join("src/lib.rs"), "pub fn one() -> u32 { 1 }\n").unwrap();
    project
}

fn main() {
    let full = std::env::args().any(|arg| arg == "--bench");
    let (version_runs, session_runs) = if full { (30, 15) } else { (1, 1) };
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));

    // `pi --version`, in the sandbox's empty project: the process from exec to exit.
    let mut times = Vec::new();
    for _ in 0..version_runs {
        times.push(run(sandbox.command(&["--version"])));
    }
    let startup = median(times).as_secs_f64() * 1000.0;
    let startup_mib = children_peak_mib();
    println!(
        "pi --version: {startup:.1} ms (median of {version_runs}), peak RSS {startup_mib:.1} MiB \
         (budget ≤ {STARTUP_BUDGET_MS} ms, ≤ {STARTUP_BUDGET_MIB} MiB)"
    );

    // A scripted 7-tool-call session in print mode.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut times = Vec::new();
    for run_index in 0..session_runs {
        let project = project(&sandbox.root().join(format!("session-{run_index}")));
        let server = runtime.block_on(MockServer::start(seven_tool_session(&project)));
        sandbox.use_server(&server);
        let mut command = sandbox.command(&["-p", "--no-session", "Take notes on this project"]);
        command.current_dir(&project);
        times.push(run(command));
        assert_eq!(server.requests().len(), 5);
    }
    let session = median(times).as_secs_f64() * 1000.0;
    println!(
        "pi -p, 7 tool calls in 5 model calls against a local mock server: {session:.1} ms (median of \
         {session_runs}), peak RSS {:.1} MiB (budget ≤ {SESSION_BUDGET_MS} ms)",
        children_peak_mib()
    );
}
