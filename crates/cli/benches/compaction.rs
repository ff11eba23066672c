//! A long session with compaction on (SPEC §8, issue 17): 2 000 prompts over `--mode rpc` to a
//! model with a 16 000-token context window (`compaction.reserveTokens` 4 000,
//! `keepRecentTokens` 2 000), whose mock server reports as input the size of what it was sent
//! (the request's messages, 4 characters a token) — so each program compacts when its own context
//! fills up. Printed for ours and, side by side, pi 0.73.1: wall time, peak resident memory
//! (`VmHWM` of the process, read before it exits), the compactions, and the tokens sent in all
//! (every request, summaries included: what a user pays for).
//!
//! pi is measured when Node.js and a runnable pi 0.73.1 package are found (`$PI_073_PACKAGE`, else
//! `.ci/pi073/node_modules/@mariozechner/pi-coding-agent`, as the tests find it, with its
//! dependencies installed); otherwise its last recorded figures are
//! printed, labelled as such. `cargo bench -p pi-cli --bench compaction` runs 2 000 turns
//! (`PI_BENCH_TURNS` for another count); `cargo test --benches` runs 30 turns of ours as a smoke
//! test.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pi_coding_agent::custom_tools::node::{check_version, find_node, node_version};
use pi_test_support::sandbox::Sandbox;
use pi_test_support::{MockServer, Reply, openai, pi073};
use serde_json::{Value, json};

const CONTEXT_WINDOW: u64 = 16_000;
const RESERVE_TOKENS: u64 = 4_000;
const KEEP_RECENT_TOKENS: u64 = 2_000;
const OUTPUT_TOKENS: u64 = 60;

/// pi 0.73.1's figures, measured with this bench on 2026-11-26 (Node v20, 2 000 turns, a 2-core
/// machine at load 1); printed when pi cannot be run.
const PI_RECORDED: &str = "pi 0.73.1 (recorded 2026-11-26, not measured now): 2000 turns in 23.1 s, peak RSS 255.5 MiB, 27 compactions, 15.27 M tokens sent in 2027 requests";

/// What one program did.
struct Figures {
    elapsed: Duration,
    peak_mib: f64,
    compactions: usize,
    tokens: u64,
    requests: u64,
}

/// The model: a text answer whose usage is the request's size, or a summary for a summary
/// request; `tokens` and `requests` add up what was sent.
async fn model(tokens: Arc<AtomicU64>, requests: Arc<AtomicU64>) -> MockServer {
    MockServer::start_with(move |request| {
        let body = request.json();
        let messages = body["messages"].to_string();
        let input = (messages.chars().count() as u64).div_ceil(4);
        tokens.fetch_add(input, Ordering::Relaxed);
        let n = requests.fetch_add(1, Ordering::Relaxed) + 1;
        let summary = messages.contains("<conversation>");
        let text = if summary {
            format!("## Goal\nBench summary {n}.\n\n## Progress\n- [x] Answered {n} prompts.")
        } else {
            format!("Answer {n}. {}", "ok ".repeat(60))
        };
        let chunk = |delta: Value, finish: Value| {
            json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "mock",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        };
        let mut last = chunk(json!({}), json!("stop"));
        last["usage"] = json!({"prompt_tokens": input, "completion_tokens": OUTPUT_TOKENS,
                               "total_tokens": input + OUTPUT_TOKENS});
        Reply::events(&[
            openai::data(&chunk(json!({"role": "assistant", "content": text}), Value::Null)),
            openai::data(&last),
            openai::DONE.to_owned(),
        ])
    })
    .await
}

/// The peak resident set of a running process, in MiB.
fn peak_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Runs `turns` prompts through `program leading… --mode rpc` in a fresh sandbox.
fn session(runtime: &tokio::runtime::Runtime, program: &Path, leading: &[&str], turns: usize) -> Figures {
    let tokens = Arc::new(AtomicU64::new(0));
    let requests = Arc::new(AtomicU64::new(0));
    let server = runtime.block_on(model(tokens.clone(), requests.clone()));
    let sandbox = Sandbox::new(program);
    sandbox.write_models_json(
        &json!({"providers": {"mock": {"baseUrl": server.url("/v1"), "api": "openai-completions", "apiKey": "k",
            "models": [{"id": "mock-model", "reasoning": false, "contextWindow": CONTEXT_WINDOW, "maxTokens": 1000}]}}})
        .to_string(),
    );
    std::fs::write(
        sandbox.agent_dir().join("settings.json"),
        json!({"compaction": {"reserveTokens": RESERVE_TOKENS, "keepRecentTokens": KEEP_RECENT_TOKENS},
               "retry": {"enabled": false}})
        .to_string(),
    )
    .unwrap();
    let mut args = leading.to_vec();
    args.extend(["--provider", "mock", "--model", "mock-model", "--mode", "rpc"]);
    let mut command: Command = sandbox.command(&args);
    command
        .env("PI_OFFLINE", "1")
        .env("PI_SKIP_VERSION_CHECK", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let started = Instant::now();
    let mut child = command.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let Ok(value) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if tx.send(value).is_err() {
                break;
            }
        }
    });
    let mut stdin = child.stdin.take().unwrap();
    let next = |kind: &str| -> Value {
        loop {
            let line = lines
                .recv_timeout(Duration::from_secs(120))
                .unwrap_or_else(|_| panic!("no {kind} within 120 s"));
            if line["type"] == kind {
                return line;
            }
        }
    };
    let threshold = CONTEXT_WINDOW - RESERVE_TOKENS;
    let mut compactions = 0;
    for turn in 1..=turns {
        let prompt = json!({"type": "prompt", "message": format!("Turn {turn}: {}", "word ".repeat(40))});
        writeln!(stdin, "{prompt}").unwrap();
        let end = next("agent_end");
        // Both programs compact after a run whose answer passed the threshold: wait for it.
        let used = end["messages"]
            .as_array()
            .and_then(|messages| messages.iter().rev().find(|m| m["role"] == "assistant"))
            .and_then(|m| m["usage"]["totalTokens"].as_u64())
            .unwrap_or(0);
        if used > threshold {
            next("compaction_end");
            compactions += 1;
        }
    }
    let peak_mib = peak_mib(child.id());
    drop(stdin);
    let _ = child.wait();
    Figures {
        elapsed: started.elapsed(),
        peak_mib,
        compactions,
        tokens: tokens.load(Ordering::Relaxed),
        requests: requests.load(Ordering::Relaxed),
    }
}

/// Node.js and pi 0.73.1's `dist/cli.js` when both are there and pi runs: the package is
/// [`pi073::package`], Node.js is found and checked as pi finds it
/// (`pi_coding_agent::custom_tools::node`).
fn pi_073(runtime: &tokio::runtime::Runtime) -> Option<(PathBuf, PathBuf)> {
    let package = pi073::package(&pi073::process_env).ok()?;
    let cli = package.join("dist/cli.js");
    let node = find_node(&pi073::process_env, &cli).ok()?;
    let version = runtime.block_on(node_version(&node)).ok()?;
    check_version(version, &node, &cli).ok()?;
    let version = Command::new(&node)
        .arg(&cli)
        .arg("--version")
        .env("PI_OFFLINE", "1")
        .env("PI_SKIP_VERSION_CHECK", "1")
        .output()
        .ok()?;
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&version.stdout),
        String::from_utf8_lossy(&version.stderr)
    );
    (version.status.success() && printed.contains("0.73.1")).then_some((node, cli))
}

fn report(who: &str, turns: usize, figures: &Figures) {
    println!(
        "{who}: {turns} turns in {:.1} s, peak RSS {:.1} MiB, {} compactions, {:.2} M tokens sent in {} requests",
        figures.elapsed.as_secs_f64(),
        figures.peak_mib,
        figures.compactions,
        figures.tokens as f64 / 1e6,
        figures.requests
    );
}

fn main() {
    let full = std::env::args().any(|arg| arg == "--bench");
    let turns = match std::env::var("PI_BENCH_TURNS").ok().and_then(|n| n.parse().ok()) {
        Some(n) => n,
        None if full => 2000,
        None => 30,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let ours = session(&runtime, Path::new(env!("CARGO_BIN_EXE_pi")), &[], turns);
    report("ours", turns, &ours);
    if !full {
        return;
    }
    match pi_073(&runtime) {
        Some((node, cli)) => {
            let cli = cli.display().to_string();
            let theirs = session(&runtime, &node, &[cli.as_str()], turns);
            report("pi 0.73.1", turns, &theirs);
        }
        None => println!("{PI_RECORDED}"),
    }
}
