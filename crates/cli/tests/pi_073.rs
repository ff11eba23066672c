//! Our `--mode rpc` transcript of a whole session (prompt, steer, follow-up, abort, bash, an
//! unknown command) against pi 0.73.1's own, recorded in `tests/data/pi-0.73.1/` (see its README):
//! the same scripted model replies, the same commands, line by line and key by key once ids and
//! times are normalized. The differences left are listed in `docs/differences-from-pi.md` and
//! masked here, each with its reason. The JSON mode and the abort before any text are scenarios of
//! the conformance suite (`conformance.rs`: `json-text`, `json-tool`, `rpc-abort`); the helpers
//! here also serve other modules' comparisons with pi's recordings.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::time::Duration;

use pi_test_support::conformance::server_reply;
use pi_test_support::sandbox::Sandbox;
use pi_test_support::{MockServer, Reply};
use serde_json::{Value, json};

use crate::rpc::Rpc;

pub(crate) const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/pi-0.73.1");

pub(crate) fn data(name: &str) -> String {
    std::fs::read_to_string(format!("{DATA}/{name}")).unwrap()
}

/// The replies of a recorded script, built by the conformance suite's reply builder
/// ([`server_reply`]): the recording's `paced` / `sleep` seconds are its `pace`.
fn replies(script: &str) -> Vec<Reply> {
    let script: Value = serde_json::from_str(&data(script)).unwrap();
    script
        .as_array()
        .unwrap()
        .iter()
        .map(|spec| {
            let mut spec = spec.clone();
            if let Some(pace) = ["paced", "sleep"].iter().find_map(|key| spec[key].as_f64()) {
                spec["pace"] = pace.into();
            }
            server_reply(&spec).unwrap_or_else(|| panic!("not a reply: {spec}"))
        })
        .collect()
}

/// A sandbox with the recording's `models.json` pointed at `server` and its `a.txt`.
pub(crate) fn sandbox(server: &MockServer) -> Sandbox {
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    let models = data("models.json").replace("http://127.0.0.1:18431/v1", &server.url("/v1"));
    sandbox.write_models_json(&models);
    std::fs::write(sandbox.project.join("a.txt"), "hello\n").unwrap();
    sandbox
}

/// The recording's normalization: numeric timestamps 0; ids, times, paths as placeholders.
pub(crate) fn normalize(value: &mut Value) {
    normalize_ids(value, &HashMap::new());
}

/// [`normalize`], and entry ids (`id`, `parentId`, `firstKeptEntryId`) found in `ids` replaced by
/// their value there (a session's ids mapped to the recording's).
pub(crate) fn normalize_ids(value: &mut Value, ids: &HashMap<String, String>) {
    match value {
        Value::Object(map) => {
            let is_header = map.get("type").and_then(Value::as_str) == Some("session");
            for (key, field) in map.iter_mut() {
                match key.as_str() {
                    "timestamp" if field.is_string() => *field = "<time>".into(),
                    "timestamp" => *field = 0.into(),
                    "sessionFile" => *field = "<session-file>".into(),
                    "sessionId" => *field = "<session-id>".into(),
                    "baseUrl" => *field = "<base-url>".into(),
                    "cwd" => *field = "<cwd>".into(),
                    "id" if is_header => *field = "<session-id>".into(),
                    "id" | "parentId" | "firstKeptEntryId" => {
                        if let Some(mapped) = field.as_str().and_then(|id| ids.get(id)) {
                            *field = mapped.clone().into();
                        }
                    }
                    _ => normalize_ids(field, ids),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| normalize_ids(item, ids)),
        _ => {}
    }
}

pub(crate) fn lines(output: &str) -> Vec<Value> {
    output
        .lines()
        .map(|line| {
            let mut value: Value = serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {line}"));
            normalize(&mut value);
            value
        })
        .collect()
}

pub(crate) fn compact(values: &[Value]) -> String {
    values.iter().map(|v| format!("{v}\n")).collect()
}

/// The recorded transcript: `>>> ` lines as `{"sent": …}`, the rest normalized.
pub(crate) fn recorded_transcript(name: &str) -> Vec<Value> {
    data(name)
        .lines()
        .map(|line| match line.strip_prefix(">>> ") {
            Some(command) => json!({"sent": serde_json::from_str::<Value>(command).unwrap()}),
            None => lines(line).remove(0),
        })
        .collect()
}

/// What an RPC transcript is compared on. Left out: `message_update` lines and the assistant's
/// `message_start` (pi writes its events asynchronously, so their partials show the message as it
/// was when written, often later than the event; the conformance suite's JSON-mode scenarios
/// compare them) and our `bash_execution_update` (an addition). Masked: the thinking
/// level a new session starts with, in the `get_state` response `fresh_state_id` (pi: `medium`
/// for a reasoning model; that default belongs to the thinking-level work) and our `id` on the
/// unknown-command error (pi leaves it out, so its own client times out; an addition).
pub(crate) fn rpc_comparable(transcript: &[Value], fresh_state_id: &str) -> Vec<Value> {
    transcript
        .iter()
        .filter(|line| {
            !(line["type"] == "message_update"
                || line["type"] == "bash_execution_update"
                || (line["type"] == "message_start" && line["message"]["role"] == "assistant"))
        })
        .cloned()
        .map(|mut line| {
            if line["type"] == "response" && line["command"] == "get_state" && line["id"] == fresh_state_id {
                line["data"]["thinkingLevel"] = "<default>".into();
            }
            if line["type"] == "response"
                && line["error"].as_str().is_some_and(|e| e.starts_with("Unknown command"))
                && let Some(map) = line.as_object_mut()
            {
                map.shift_remove("id");
            }
            line
        })
        .collect()
}

pub(crate) fn our_transcript(seen: Vec<Value>) -> Vec<Value> {
    seen.into_iter()
        .map(|mut line| {
            normalize(&mut line);
            line
        })
        .collect()
}

/// Sends `command` and waits for its response.
pub(crate) fn step(rpc: &mut Rpc, command: Value) {
    let id = command["id"].as_str().unwrap().to_owned();
    rpc.send_noted(command);
    rpc.response(&id);
}

#[tokio::test(flavor = "multi_thread")]
async fn rpc_session_matches_pi() {
    let server = MockServer::start(replies("script-rpc.json")).await;
    let sandbox = sandbox(&server);
    let mut rpc = Rpc::start_in(
        sandbox,
        &["--provider", "mock", "--model", "mock-model", "--mode", "rpc"],
    );
    let seen = tokio::task::spawn_blocking(move || {
        step(&mut rpc, json!({"id": "1", "type": "get_state"}));
        step(&mut rpc, json!({"id": "2", "type": "set_session_name", "name": "demo"}));
        step(
            &mut rpc,
            json!({"id": "3", "type": "set_thinking_level", "level": "low"}),
        );
        step(&mut rpc, json!({"id": "4", "type": "prompt", "message": "hi"}));
        rpc.until("text_delta", |v| v["assistantMessageEvent"]["type"] == "text_delta");
        step(&mut rpc, json!({"id": "5", "type": "steer", "message": "focus"}));
        step(&mut rpc, json!({"id": "6", "type": "follow_up", "message": "later"}));
        rpc.event("agent_end");
        rpc.send_noted(json!({"id": "7", "type": "prompt", "message": "slow"}));
        rpc.response("7");
        rpc.until("the user's message_end", |v| {
            v["type"] == "message_end" && v["message"]["role"] == "user"
        });
        std::thread::sleep(Duration::from_millis(500));
        rpc.send_noted(json!({"id": "8", "type": "abort"}));
        rpc.response("8");
        step(&mut rpc, json!({"id": "9", "type": "get_last_assistant_text"}));
        step(
            &mut rpc,
            json!({"id": "10", "type": "bash", "command": "printf 'a\\nb\\n'"}),
        );
        step(&mut rpc, json!({"id": "11", "type": "prompt", "message": "go"}));
        rpc.event("agent_end");
        step(&mut rpc, json!({"id": "12", "type": "frobnicate"}));
        step(&mut rpc, json!({"id": "13", "type": "get_state"}));
        rpc.close()
    })
    .await
    .unwrap();
    let ours = rpc_comparable(&our_transcript(seen), "1");
    insta::assert_snapshot!("rpc_session", compact(&ours));
    assert_eq!(
        compact(&ours),
        compact(&rpc_comparable(&recorded_transcript("rpc-session.txt"), "1"))
    );

    // The model saw what pi's saw (the system prompt aside): user content as text blocks, the
    // `bash` output with its trailing newline kept.
    let requests = server.requests();
    let mut last = requests.last().unwrap().json()["messages"].as_array().unwrap().clone();
    last.remove(0);
    let pi_last: Value = serde_json::from_str(&data("rpc-session-last-request.json")).unwrap();
    assert_eq!(Value::Array(last), pi_last);
}
