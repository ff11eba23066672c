//! Compaction end to end (issue 17): `pi --mode rpc` against a mock server on 127.0.0.1. What pi
//! 0.73.1 itself does on the same scenarios (threshold compaction, overflow recovery, manual
//! `compact` with instructions, `set_auto_compaction`) is compared in the recorded conformance
//! suite (`tests/data/conformance/compaction-*`); here: a second overflow, `isCompacting`,
//! `abort_compaction`, and sessions compacted by one program continued by the other — pi's
//! compacted session (the `compaction-threshold` golden) in ours, and ours in pi 0.73.1 (which
//! needs pi's CLI with its dependencies, see [`full_pi`]).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use pi_test_support::sandbox::{Sandbox, output, text};
use pi_test_support::{MockServer, Reply, openai, pi073};
use serde_json::{Value, json};

use crate::pi_073::normalize;
use crate::rpc::Rpc;

const CONFORMANCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/conformance");

/// `models.json`: provider `mock` at `server`, `mock-model` with a 2 000-token context window.
fn models_json(server: &MockServer) -> String {
    json!({"providers": {"mock": {"baseUrl": server.url("/v1"), "api": "openai-completions", "apiKey": "k",
        "models": [{"id": "mock-model", "reasoning": false, "contextWindow": 2000, "maxTokens": 500}]}}})
    .to_string()
}

/// A sandbox running `program` with [`models_json`] and `settings` as the global settings.
fn sandbox_of(program: impl Into<PathBuf>, server: &MockServer, settings: &Value) -> Sandbox {
    let sandbox = Sandbox::new(program);
    sandbox.write_models_json(&models_json(server));
    std::fs::write(sandbox.agent_dir().join("settings.json"), settings.to_string()).unwrap();
    sandbox
}

/// [`sandbox_of`] our binary.
fn sandbox(server: &MockServer, settings: Value) -> Sandbox {
    sandbox_of(env!("CARGO_BIN_EXE_pi"), server, &settings)
}

const FLAGS: &[&str] = &["--provider", "mock", "--model", "mock-model", "--mode", "rpc"];

/// What of a request is compared across programs: the messages (a conversation request's system
/// prompt is each program's own and left out; the summary request's is compared) and the output
/// limit.
fn request_view(request: &Value) -> Value {
    let mut messages = request["messages"].as_array().unwrap().clone();
    if messages[0]["role"] == "system"
        && !messages[0]["content"]
            .as_str()
            .unwrap_or_default()
            .contains("summarization")
    {
        messages.remove(0);
    }
    let mut messages = Value::Array(messages);
    normalize(&mut messages);
    json!({"messages": messages, "max_completion_tokens": request["max_completion_tokens"], "tools": request.get("tools").is_some()})
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_overflow_after_the_retry_is_reported_not_retried_again() {
    let too_long =
        r#"{"error":{"message":"This model's maximum context length is 2000 tokens.","type":"invalid_request_error"}}"#;
    let server = MockServer::start(vec![
        openai::text("first"),
        Reply::json(400, too_long),
        openai::text("## Goal\nsummary"),
        Reply::json(400, too_long),
    ])
    .await;
    let sandbox = sandbox(
        &server,
        json!({"compaction": {"reserveTokens": 100, "keepRecentTokens": 1}}),
    );
    let mut rpc = Rpc::start_in(sandbox, FLAGS);
    let seen = tokio::task::spawn_blocking(move || {
        rpc.send(json!({"type": "prompt", "message": "one"}));
        rpc.event("agent_end");
        rpc.send(json!({"type": "prompt", "message": "two"}));
        rpc.event("agent_end");
        rpc.event("compaction_end");
        rpc.event("agent_end");
        rpc.until("the failure", |v| v["type"] == "compaction_end");
        rpc.close()
    })
    .await
    .unwrap();
    let ends: Vec<&Value> = seen.iter().filter(|l| l["type"] == "compaction_end").collect();
    assert_eq!(ends.len(), 2);
    assert_eq!(ends[0]["willRetry"], true);
    assert_eq!(
        ends[1].to_string(),
        r#"{"type":"compaction_end","reason":"overflow","aborted":false,"willRetry":false,"errorMessage":"Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or switching to a larger-context model."}"#
    );
    assert_eq!(server.requests().len(), 4, "one retry only");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_compacted_by_pi_continues_in_ours_with_the_same_context() {
    let server = MockServer::start(vec![openai::text("Answer 5.")]).await;
    let sandbox = sandbox(
        &server,
        json!({"compaction": {"reserveTokens": 1000, "keepRecentTokens": 150}}),
    );
    // pi's session file of the `compaction-threshold` scenario up to its compaction, the
    // placeholders made real again.
    let golden = |name: &str| std::fs::read_to_string(format!("{CONFORMANCE}/compaction-threshold/{name}")).unwrap();
    let mut text = golden("session1.jsonl")
        .replace("\"<time>\"", "\"2026-11-26T15:59:24.000Z\"")
        .replace("\"<cwd>\"", &format!("{:?}", sandbox.project.display().to_string()))
        .replace("\"<uuid-1>\"", "\"01a21895-3ecd-73fe-ac1d-ad719be189ac\"");
    for n in (1..20).rev() {
        text = text.replace(&format!("\"<entry-{n}>\""), &format!("\"{n:08x}\""));
    }
    let upto: Vec<&str> = text.lines().take_while(|line| !line.contains("Prompt 5")).collect();
    assert!(upto.last().unwrap().contains("\"type\":\"compaction\""), "{upto:?}");
    let file = sandbox.root().join("pi-compacted.jsonl");
    std::fs::write(&file, upto.join("\n") + "\n").unwrap();
    let file_arg = file.display().to_string();
    let mut args = vec!["--session", file_arg.as_str()];
    args.extend_from_slice(FLAGS);
    let mut rpc = Rpc::start_in(sandbox, &args);
    tokio::task::spawn_blocking(move || {
        rpc.send(json!({"type": "prompt", "message": "Prompt 5"}));
        rpc.event("agent_end");
        rpc.close();
    })
    .await
    .unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    // pi's request after its compaction (the sixth of the scenario).
    let recorded: Value = serde_json::from_str(golden("requests.jsonl").lines().nth(5).unwrap()).unwrap();
    assert_eq!(request_view(&requests[0].json()), request_view(&recorded));
}

/// Node.js and pi 0.73.1's `dist/cli.js` in a package whose dependencies are installed
/// ([`pi073::package`]), or why there are none.
async fn full_pi() -> Result<(PathBuf, PathBuf), String> {
    use pi_coding_agent::custom_tools::node::{check_version, find_node, node_version};
    let package = pi073::package(&pi073::process_env).map_err(|e| e.to_string())?;
    let cli = package.join("dist/cli.js");
    if !cli.is_file() {
        return Err(format!("no {} (run .ci/ensure-pi073)", cli.display()));
    }
    let entry = cli.clone();
    let node = tokio::task::spawn_blocking(move || find_node(&pi073::process_env, &entry))
        .await
        .unwrap()
        .map_err(|e| e.to_string())?;
    let version = node_version(&node).await.map_err(|e| e.to_string())?;
    check_version(version, &node, &cli).map_err(|e| e.to_string())?;
    let mut command = std::process::Command::new(&node);
    command
        .arg(&cli)
        .arg("--version")
        .env("PI_OFFLINE", "1")
        .env("PI_SKIP_VERSION_CHECK", "1");
    let out = output(command).await;
    let printed = format!("{}{}", text(&out.stdout), text(&out.stderr));
    if !out.status.success() || !printed.contains("0.73.1") {
        let first = printed
            .lines()
            .find(|l| l.contains("Error"))
            .or_else(|| printed.lines().find(|l| !l.trim().is_empty()))
            .unwrap_or_default()
            .to_owned();
        return Err(format!(
            "pi 0.73.1's CLI does not run from {} (its dependencies must be installed beside it, or PI_073_PACKAGE name a package inside a node_modules tree): {first}",
            package.display()
        ));
    }
    Ok((node, cli))
}

/// `pi -p <prompt>` on a copy of `session` in a fresh sandbox of `program` (leading `args`, e.g.
/// pi's `cli.js`) against a server answering `answer`: the request it sent.
async fn continue_with(program: &Path, leading: &[&str], session: &Path, settings: &Value) -> Value {
    let server = MockServer::start(vec![openai::text("Continued.")]).await;
    let sandbox = sandbox_of(program, &server, settings);
    let file = sandbox.root().join("compacted.jsonl");
    // The header's `cwd` is the sandbox's project.
    let content = std::fs::read_to_string(session).unwrap();
    let mut lines: Vec<Value> = content.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    lines[0]["cwd"] = sandbox.project.display().to_string().into();
    std::fs::write(&file, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let file_arg = file.display().to_string();
    let mut args: Vec<&str> = leading.to_vec();
    args.extend([
        "--provider",
        "mock",
        "--model",
        "mock-model",
        "--session",
        &file_arg,
        "-p",
        "three",
    ]);
    let mut command = sandbox.command(&args);
    command.env("PI_OFFLINE", "1").env("PI_SKIP_VERSION_CHECK", "1");
    let out = output(command).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Continued.\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    requests[0].json()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_compacted_by_ours_continues_in_pi_with_the_same_context() {
    let Some(pi) = pi073::or_skip("pi 0.73.1's CLI", full_pi().await, &pi073::process_env) else {
        return;
    };
    // Ours: two turns, then `compact` with instructions.
    let settings = json!({"compaction": {"enabled": false, "reserveTokens": 100, "keepRecentTokens": 5}});
    let server = MockServer::start(vec![
        openai::text("first answer"),
        openai::text("second answer"),
        openai::text("## Goal\nOur summary."),
    ])
    .await;
    let ours = sandbox(&server, settings.clone());
    let agent_dir = ours.agent_dir();
    let kept = tempfile::NamedTempFile::new().unwrap();
    let kept_path = kept.path().to_path_buf();
    let mut rpc = Rpc::start_in(ours, FLAGS);
    let compacted = tokio::task::spawn_blocking(move || {
        for message in ["one", "two"] {
            rpc.send(json!({"type": "prompt", "message": message}));
            rpc.event("agent_end");
        }
        rpc.send(json!({"id": "c", "type": "compact", "customInstructions": "Keep the numbers"}));
        let compacted = rpc.response("c");
        let sessions = pi_test_support::session_files::list(&agent_dir.join("sessions"));
        std::fs::copy(&sessions[0], &kept_path).unwrap();
        rpc.close();
        compacted
    })
    .await
    .unwrap();
    assert_eq!(compacted["success"], true, "{compacted}");
    // pi 0.73.1 and ours continue it with the same prompt: the same context goes to the model,
    // our summary in pi's words for a compaction.
    let (node, cli) = pi;
    let cli = cli.display().to_string();
    let theirs = continue_with(&node, &[cli.as_str()], kept.path(), &settings).await;
    let again = continue_with(Path::new(env!("CARGO_BIN_EXE_pi")), &[], kept.path(), &settings).await;
    let (theirs, again) = (request_view(&theirs), request_view(&again));
    let summary = theirs["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        summary.starts_with("The conversation history before this point was compacted into the following summary:\n\n<summary>\n## Goal\nOur summary."),
        "{theirs}"
    );
    assert_eq!(again, theirs);
}

#[tokio::test(flavor = "multi_thread")]
async fn get_state_reports_a_compaction_while_it_runs() {
    let server = MockServer::start(vec![
        openai::text("an answer of 120 tokens"),
        openai::text("## Goal\nslow summary").paced(std::time::Duration::from_millis(300)),
    ])
    .await;
    // Threshold 2000 − 1900 = 100: the answer's 120 tokens pass it.
    let sandbox = sandbox(
        &server,
        json!({"compaction": {"reserveTokens": 1900, "keepRecentTokens": 1}}),
    );
    let mut rpc = Rpc::start_in(sandbox, FLAGS);
    let (during, after) = tokio::task::spawn_blocking(move || {
        rpc.send(json!({"type": "prompt", "message": "one"}));
        rpc.event("compaction_start");
        rpc.send(json!({"id": "1", "type": "get_state"}));
        let during = rpc.response("1");
        rpc.event("compaction_end");
        rpc.send(json!({"id": "2", "type": "get_state"}));
        let after = rpc.response("2");
        rpc.close();
        (during, after)
    })
    .await
    .unwrap();
    assert_eq!(during["data"]["isCompacting"], true, "{during}");
    assert_eq!(after["data"]["isCompacting"], false, "{after}");
}

#[tokio::test(flavor = "multi_thread")]
async fn abort_compaction_cancels_a_manual_compact() {
    let server = MockServer::start(vec![
        openai::text("first answer"),
        // A summary that takes seconds: the abort comes first.
        openai::text("## Goal\nnever used, a slow summary").paced(std::time::Duration::from_secs(2)),
    ])
    .await;
    let sandbox = sandbox(&server, json!({"compaction": {"enabled": false}}));
    let mut rpc = Rpc::start_in(sandbox, FLAGS);
    let (compacted, end) = tokio::task::spawn_blocking(move || {
        rpc.send(json!({"type": "prompt", "message": "one"}));
        rpc.event("agent_end");
        rpc.send(json!({"id": "c", "type": "compact"}));
        rpc.event("compaction_start");
        rpc.send(json!({"id": "a", "type": "abort_compaction"}));
        // The abort's answer and the compaction's end race (in pi too): take them in either order.
        let end = rpc.event("compaction_end");
        let compacted = rpc.response("c");
        let aborted = rpc.response_read_or_next("a");
        assert_eq!(aborted["success"], true, "{aborted}");
        rpc.close();
        (compacted, end)
    })
    .await
    .unwrap();
    assert_eq!(
        end.to_string(),
        r#"{"type":"compaction_end","reason":"manual","aborted":true,"willRetry":false}"#
    );
    assert_eq!(compacted["success"], false);
    assert_eq!(compacted["error"], "Compaction cancelled");
}
