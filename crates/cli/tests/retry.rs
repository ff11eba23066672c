//! The automatic retry of failed turns against pi 0.73.1's own output (`tests/data/pi-0.73.1/`,
//! see its README): a server that answers 503 three times then streams an answer, one that
//! always answers 503, and RPC `set_auto_retry` / `abort_retry`. Both programs make the same
//! requests: 3 per attempt (the HTTP client's 2 retries, pi's SDKs' default) and up to 4 attempts.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pi_test_support::MockServer;
use pi_test_support::sandbox::{Sandbox, text};
use serde_json::{Value, json};

use crate::pi_073::{
    compact, json_mode_hi, lines, mask_partials, our_transcript, recorded, recorded_transcript, replies,
    rpc_comparable, sandbox, step,
};
use crate::rpc::Rpc;

/// The error text of the recording server's 503: ours names the status and quotes the body
/// (`docs/providers.md`), pi's SDK gives the status and the body's `error.message`.
const OURS_503: &str = r#"503 status code: {"error": {"message": "Service Unavailable", "type": "server_error"}}"#;
const PI_503: &str = "503 Service Unavailable";

/// pi's text for our 503 wherever it appears (a provider-layer difference, not the retry's).
fn pi_error_text(value: &mut Value) {
    match value {
        Value::String(text) if text == OURS_503 => *text = PI_503.to_owned(),
        Value::Object(map) => map.values_mut().for_each(pi_error_text),
        Value::Array(items) => items.iter_mut().for_each(pi_error_text),
        _ => {}
    }
}

/// A sandbox for `script` whose settings ask for the recording's `retry.baseDelayMs`.
fn retry_sandbox(server: &MockServer, base_delay_ms: u64) -> Sandbox {
    let sandbox = sandbox(server);
    std::fs::write(
        sandbox.agent_dir().join("settings.json"),
        json!({"retry": {"baseDelayMs": base_delay_ms}}).to_string(),
    )
    .unwrap();
    sandbox
}

/// What a JSON stream is compared on: partials and the assistant's `message_start` are
/// timing-dependent in pi (it serializes its events later, so a failed request's
/// `message_start` already shows the error).
fn comparable(stream: &[Value], ours: bool) -> Vec<Value> {
    stream
        .iter()
        .filter(|line| !(line["type"] == "message_start" && line["message"]["role"] == "assistant"))
        .cloned()
        .map(|mut line| {
            mask_partials(&mut line, ours);
            if ours {
                pi_error_text(&mut line);
            }
            line
        })
        .collect()
}

async fn json_run(script: &str) -> (std::process::Output, Vec<Value>, Sandbox, MockServer) {
    let server = MockServer::start(replies(script)).await;
    let sandbox = retry_sandbox(&server, 100);
    let output = json_mode_hi(&sandbox).await;
    let stream = lines(&text(&output.stdout));
    (output, stream, sandbox, server)
}

#[tokio::test(flavor = "multi_thread")]
async fn json_mode_retry_after_503s_matches_pi() {
    let (output, ours, sandbox, server) = json_run("script-retry.json").await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let retries: Vec<&Value> = ours
        .iter()
        .filter(|l| l["type"].as_str().unwrap().starts_with("auto_retry"))
        .collect();
    insta::assert_snapshot!(
        "json_retry_events",
        compact(&retries.into_iter().cloned().collect::<Vec<_>>())
    );
    assert_eq!(
        compact(&comparable(&ours, true)),
        compact(&comparable(&recorded("json-retry.jsonl"), false))
    );
    // Three failed requests (one attempt with its two HTTP retries), then the answer.
    assert_eq!(server.requests().len(), 4);

    // The session file keeps the failed answer, and the answer follows it, as pi's does.
    let files = sandbox.session_files();
    let shape = |entries: Vec<Value>| -> Vec<String> {
        entries
            .iter()
            .filter(|e| e["type"] == "message")
            .map(|e| format!("{} {}", e["message"]["role"], e["message"]["stopReason"]))
            .collect()
    };
    let ours = lines(&std::fs::read_to_string(&files[0]).unwrap());
    assert_eq!(shape(ours.clone()), shape(recorded("json-retry-session.jsonl")));
    // The header aside, every entry hangs below the one before.
    for pair in ours[1..].windows(2) {
        assert_eq!(pair[1]["parentId"], pair[0]["id"], "one branch");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn json_mode_retries_running_out_match_pi() {
    let (output, ours, _sandbox, server) = json_run("script-retry_exhausted.json").await;
    // pi exits 0 here; ours says the run failed (docs/differences-from-pi.md).
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert_eq!(
        compact(&comparable(&ours, true)),
        compact(&comparable(&recorded("json-retry-exhausted.jsonl"), false))
    );
    assert_eq!(
        ours.last().unwrap().to_string(),
        format!(
            r#"{{"type":"auto_retry_end","success":false,"attempt":3,"finalError":{}}}"#,
            json!(OURS_503)
        )
    );
    assert_eq!(server.requests().len(), 12, "4 attempts of 3 requests");
}

#[tokio::test(flavor = "multi_thread")]
async fn print_mode_reports_the_last_error_when_the_retries_run_out() {
    let server = MockServer::start(replies("script-retry_exhausted.json")).await;
    let sandbox = retry_sandbox(&server, 10);
    let output = sandbox
        .run(&["--provider", "mock", "--model", "mock-model", "-p", "hi"])
        .await;
    // pi: `503 Service Unavailable` on stderr, exit 1.
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(text(&output.stderr), format!("{OURS_503}\n"));
    assert_eq!(text(&output.stdout), "");
    assert_eq!(server.requests().len(), 12);
}

#[tokio::test(flavor = "multi_thread")]
async fn rpc_set_auto_retry_and_abort_retry_match_pi() {
    let server = MockServer::start(replies("script-rpc_retry.json")).await;
    let sandbox = retry_sandbox(&server, 5000);
    let settings = sandbox.agent_dir().join("settings.json");
    let mut rpc = Rpc::start_in(
        sandbox,
        &["--provider", "mock", "--model", "mock-model", "--mode", "rpc"],
    );
    let (seen, saved) = tokio::task::spawn_blocking(move || {
        step(&mut rpc, json!({"id": "1", "type": "set_auto_retry", "enabled": false}));
        step(&mut rpc, json!({"id": "2", "type": "prompt", "message": "hi"}));
        rpc.event("agent_end");
        std::thread::sleep(std::time::Duration::from_millis(500));
        step(&mut rpc, json!({"id": "3", "type": "set_auto_retry", "enabled": true}));
        step(&mut rpc, json!({"id": "4", "type": "prompt", "message": "again"}));
        rpc.event("auto_retry_start");
        step(&mut rpc, json!({"id": "5", "type": "get_state"}));
        step(&mut rpc, json!({"id": "6", "type": "abort_retry"}));
        std::thread::sleep(std::time::Duration::from_millis(300));
        step(&mut rpc, json!({"id": "7", "type": "get_state"}));
        let saved = std::fs::read_to_string(&settings).unwrap();
        (rpc.close(), saved)
    })
    .await
    .unwrap();
    let comparable = |transcript: Vec<Value>, ours: bool| -> Vec<Value> {
        rpc_comparable(&transcript, "")
            .into_iter()
            .map(|mut line| {
                if ours {
                    pi_error_text(&mut line);
                }
                // The default thinking level of a new session is the thinking-level work's.
                if line["command"] == "get_state" {
                    line["data"]["thinkingLevel"] = "<default>".into();
                }
                line
            })
            .collect()
    };
    let ours = comparable(our_transcript(seen), true);
    assert_eq!(
        compact(&ours),
        compact(&comparable(recorded_transcript("rpc-retry.txt"), false))
    );
    // During the wait and after the abort: not streaming, the failed answer out of the
    // transcript (3 messages: hi, its failure kept while retrying was off, again).
    for id in ["5", "7"] {
        let state = ours.iter().find(|l| l["id"] == id).unwrap();
        assert_eq!(state["data"]["isStreaming"], false);
        assert_eq!(state["data"]["messageCount"], 3);
    }
    // The last choice is saved, the other keys kept, as pi writes them.
    let saved: Value = serde_json::from_str(&saved).unwrap();
    assert_eq!(saved, json!({"retry": {"baseDelayMs": 5000, "enabled": true}}));
    assert_eq!(server.requests().len(), 6);
}
