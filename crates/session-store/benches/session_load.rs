//! Loading a large session: `SessionManager::open` (read, parse, index) and `build_context` on a
//! generated 100 000-entry session file.
//!
//! `cargo bench -p pi-session-store --bench session_load` writes the file through
//! `SessionManager` appends (realistic turns: user prompts, assistant messages with thinking, text
//! and tool calls, `read` / `edit` / `bash` results with details, `bashExecution` messages, labels,
//! custom entries, model and thinking changes, a branch every 1 000 entries) into a temporary
//! directory, then times open and context building; figures are medians of 7 runs after a warm-up.
//! It also prints the append rate and, on Linux, the growth of the peak resident set over the first
//! load. `cargo test --benches` (no `--bench` argument) runs the same code once on 2 000 entries.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use pi_agent_core::{
    AgentMessage, AssistantMessage, ContentBlock, Cost, CustomMessage, StopReason, ThinkingContent, ToolCall,
    ToolResultMessage, Usage, UserMessage,
};
use pi_session_store::SessionManager;
use serde_json::{Map, json};

fn usage(input: u64, output: u64) -> Usage {
    Usage {
        input,
        output,
        cache_read: input / 2,
        cache_write: 0,
        total_tokens: input + output + input / 2,
        cost: Cost {
            input: input as f64 * 3e-6,
            output: output as f64 * 1.5e-5,
            cache_read: input as f64 * 1.5e-7,
            cache_write: 0.0,
            total: input as f64 * 3.15e-6 + output as f64 * 1.5e-5,
        },
    }
}

fn assistant(n: usize, content: Vec<ContentBlock>, stop_reason: StopReason) -> AgentMessage {
    AssistantMessage {
        content,
        api: "anthropic-messages".into(),
        provider: "anthropic".into(),
        model: "claude-sonnet-4-5".into(),
        response_id: Some(format!("msg_01{n:022}")),
        response_model: None,
        usage: usage(20_000 + n as u64 % 5000, 150 + n as u64 % 400),
        stop_reason,
        error_message: None,
        timestamp: 1_767_225_600_000 + n as i64 * 700,
    }
    .into()
}

fn source_text(n: usize, lines: usize) -> String {
    (0..lines)
        .map(|l| format!("    let value_{l} = compute_{n}(input.get({l}).copied().unwrap_or_default()); // step {l}\n"))
        .collect()
}

/// The message or entry at position `n` of a 10-step turn.
fn append_step(session: &mut SessionManager, n: usize) {
    let ts = 1_767_225_600_000 + n as i64 * 700;
    let call_id = format!("toolu_01{n:020}");
    match n % 10 {
        0 => {
            let text = format!(
                "Step {n}: the parser rejects nested generics in `src/parse_{n}.rs`; please fix it and add a test."
            );
            session
                .append_message(AgentMessage::User(UserMessage {
                    content: pi_agent_core::UserContent::Blocks(vec![ContentBlock::text(text)]),
                    timestamp: ts,
                }))
                .unwrap();
        }
        1 => {
            let thinking = ContentBlock::Thinking(ThinkingContent {
                thinking: format!(
                    "The user wants nested generics fixed in parse_{n}. I should read the file first, then look at how angle brackets are balanced."
                ),
                thinking_signature: Some("EqQBCkgIBRABGAIqQH".repeat(6)),
                redacted: None,
            });
            let call = ToolCall::new(&call_id, "read", json!({"path": format!("src/parse_{n}.rs")}));
            session
                .append_message(assistant(
                    n,
                    vec![
                        thinking,
                        ContentBlock::text("Let me read the parser."),
                        ContentBlock::ToolCall(call),
                    ],
                    StopReason::ToolUse,
                ))
                .unwrap();
        }
        2 | 6 => {
            let (name, text, details) = if n % 10 == 2 {
                ("read", source_text(n, 30), None)
            } else {
                (
                    "bash",
                    format!(
                        "running 12 tests\n{}test result: ok. 12 passed; 0 failed\n",
                        "test parse::nested ... ok\n".repeat(12)
                    ),
                    Some(json!({"truncation": null, "fullOutputPath": null})),
                )
            };
            session
                .append_message(
                    ToolResultMessage {
                        tool_call_id: call_id,
                        tool_name: name.into(),
                        content: vec![ContentBlock::text(text)],
                        details,
                        usage: None,
                        added_tool_names: None,
                        is_error: false,
                        timestamp: ts,
                    }
                    .into(),
                )
                .unwrap();
        }
        3 => {
            let edits = json!([{"oldText": format!("depth -= 1; // {n}"), "newText": format!("depth = depth.saturating_sub(1); // {n}")}]);
            let call = ToolCall::new(
                &call_id,
                "edit",
                json!({"path": format!("src/parse_{n}.rs"), "edits": edits}),
            );
            session
                .append_message(assistant(n, vec![ContentBlock::ToolCall(call)], StopReason::ToolUse))
                .unwrap();
        }
        4 => {
            let diff = format!("-{n} depth -= 1;\n+{n} depth = depth.saturating_sub(1);");
            let patch = format!(
                "--- src/parse_{n}.rs\n+++ src/parse_{n}.rs\n@@ -10,7 +10,7 @@\n{}",
                source_text(n, 6)
            );
            session
                .append_message(
                    ToolResultMessage {
                        tool_call_id: call_id,
                        tool_name: "edit".into(),
                        content: vec![ContentBlock::text(format!(
                            "Successfully replaced 1 block(s) in src/parse_{n}.rs."
                        ))],
                        details: Some(json!({"diff": diff, "patch": patch, "firstChangedLine": 10})),
                        usage: None,
                        added_tool_names: None,
                        is_error: false,
                        timestamp: ts,
                    }
                    .into(),
                )
                .unwrap();
        }
        5 => {
            let call = ToolCall::new(&call_id, "bash", json!({"command": "cargo test parse", "timeout": 120}));
            session
                .append_message(assistant(
                    n,
                    vec![ContentBlock::text("Running the tests."), ContentBlock::ToolCall(call)],
                    StopReason::ToolUse,
                ))
                .unwrap();
        }
        7 => {
            let text = format!(
                "Fixed: `parse_{n}` now keeps the bracket depth from going below zero, and the nested-generics test passes. I also added `tests/nested_{n}.rs`."
            );
            session
                .append_message(assistant(n, vec![ContentBlock::text(text)], StopReason::Stop))
                .unwrap();
        }
        8 => {
            let mut fields = Map::new();
            fields.insert("command".into(), json!("git diff --stat"));
            fields.insert(
                "output".into(),
                json!(format!(
                    " src/parse_{n}.rs | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)"
                )),
            );
            fields.insert("exitCode".into(), json!(0));
            fields.insert("cancelled".into(), json!(false));
            fields.insert("truncated".into(), json!(false));
            fields.insert("timestamp".into(), json!(ts));
            session
                .append_message(AgentMessage::Custom(CustomMessage {
                    role: "bashExecution".into(),
                    fields,
                }))
                .unwrap();
        }
        _ => {
            match n % 40 {
                9 => drop(
                    session
                        .append_custom("todo-state", Some(json!({"open": n % 7, "done": n / 10})))
                        .unwrap(),
                ),
                19 => drop(
                    session
                        .append_thinking_level_change(["low", "medium", "high"][n % 3])
                        .unwrap(),
                ),
                29 => {
                    let target = session.leaf_id().unwrap().to_owned();
                    session.append_label(&target, Some(&format!("checkpoint-{n}"))).unwrap();
                }
                _ => drop(session.append_model_change("anthropic", "claude-sonnet-4-5").unwrap()),
            }
            // Every 1 000 entries the user goes back two entries and continues from there.
            if n % 1000 == 999 {
                let back = session
                    .path_to_leaf()
                    .iter()
                    .rev()
                    .nth(2)
                    .map(|e| e.id.clone())
                    .unwrap();
                session.branch(&back).unwrap();
            }
        }
    }
}

fn middle(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

/// `VmRSS` and `VmHWM` (peak) of this process in KiB, where `/proc` has them.
fn memory_kib() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

fn main() {
    let full = std::env::args().any(|arg| arg == "--bench");
    let (entries, runs) = if full { (100_000, 7) } else { (2_000, 1) };
    let tmp = tempfile::tempdir().unwrap();

    let started = Instant::now();
    let mut session = SessionManager::create("/home/bench/project", tmp.path()).unwrap();
    for n in 0..entries {
        append_step(&mut session, n);
    }
    let append_time = started.elapsed();
    let file = session.file().unwrap().to_path_buf();
    // A reopened session's leaf is its last entry.
    let last = session.entries().last().unwrap().id.clone();
    session.branch(&last).unwrap();
    let expected_context = session.build_context();
    drop(session);
    let bytes = std::fs::metadata(&file).unwrap().len();
    println!(
        "session_load: wrote {entries} entries ({:.1} MiB) through appends in {} ms ({:.1} µs per append)",
        bytes as f64 / (1024.0 * 1024.0),
        ms(append_time),
        append_time.as_secs_f64() * 1e6 / entries as f64
    );

    let before = memory_kib();
    let mut opens = Vec::new();
    let mut contexts = Vec::new();
    let mut totals = Vec::new();
    let mut growth = None;
    for round in 0..=runs {
        let started = Instant::now();
        let (loaded, warnings) = SessionManager::open(Path::new(&file)).unwrap();
        let opened = started.elapsed();
        let context = loaded.build_context();
        let total = started.elapsed();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(loaded.entries().len(), entries);
        assert_eq!(context.messages.len(), expected_context.messages.len());
        if round == 0 {
            assert_eq!(context, expected_context);
            if let (Some((rss, _)), Some((_, peak))) = (before, memory_kib()) {
                growth = Some(peak.saturating_sub(rss));
            }
        } else {
            opens.push(opened);
            contexts.push(total - opened);
            totals.push(total);
        }
        drop((loaded, context));
    }
    let note = if full { "" } else { " [smoke run, not a measurement]" };
    println!(
        "session_load: open {} ms + build_context {} ms = {} ms for {entries} entries ({} context messages), median of {runs}{note}",
        ms(middle(opens)),
        ms(middle(contexts)),
        ms(middle(totals)),
        expected_context.messages.len()
    );
    if let Some(kib) = growth {
        println!(
            "session_load: peak RSS growth over the first open + build_context: {:.1} MiB (file {:.1} MiB)",
            kib as f64 / 1024.0,
            bytes as f64 / (1024.0 * 1024.0)
        );
    }
}
