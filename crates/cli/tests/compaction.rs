//! Compaction end to end (issue 17): `pi --mode rpc` against a mock server on 127.0.0.1, compared
//! with pi 0.73.1's own behaviour on the same scenarios (`tests/data/pi-0.73.1/`, see its README):
//! threshold compaction at the same point with the same summary request and the same context
//! after it, overflow recovery (compact and retry once), manual `compact` with instructions,
//! `set_auto_compaction`, `get_state` / `get_session_stats`, and a session compacted by pi
//! continued by ours with the same context sent to the model.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use pi_test_support::sandbox::Sandbox;
use pi_test_support::{MockServer, Reply, openai};
use serde_json::{Value, json};

use crate::pi_073::{normalize, normalize_ids};
use crate::rpc::Rpc;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/pi-0.73.1");

fn data(name: &str) -> String {
    std::fs::read_to_string(format!("{DATA}/{name}")).unwrap()
}

fn data_json(name: &str) -> Value {
    serde_json::from_str(&data(name)).unwrap()
}

/// The replies of a recorded script: chunks as the recording server sent them (usage
/// `[prompt, completion]` from the script), or an error status with its JSON body.
fn replies(script: &str) -> Vec<Reply> {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "mock",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    data_json(script)
        .as_array()
        .unwrap()
        .iter()
        .map(|reply| {
            if let Some(status) = reply["status"].as_u64() {
                return Reply::json(status as u16, &reply["body"].to_string());
            }
            let mut chunks: Vec<String> = reply["deltas"]
                .as_array()
                .unwrap()
                .iter()
                .map(|delta| openai::data(&chunk(delta.clone(), Value::Null)))
                .collect();
            let mut last = chunk(json!({}), reply["finish"].clone());
            let (prompt, completion) = (reply["usage"][0].as_u64().unwrap(), reply["usage"][1].as_u64().unwrap());
            last["usage"] = json!({"prompt_tokens": prompt, "completion_tokens": completion,
                                   "total_tokens": prompt + completion});
            chunks.push(openai::data(&last));
            chunks.push(openai::DONE.to_owned());
            Reply::events(&chunks)
        })
        .collect()
}

/// A sandbox with the recording's models (context window 2000) pointed at `server` and
/// `settings` as the global settings.
fn sandbox(server: &MockServer, settings: Value) -> Sandbox {
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    let models = data("compact-models.json").replace("http://127.0.0.1:18432/v1", &server.url("/v1"));
    sandbox.write_models_json(&models);
    std::fs::write(sandbox.agent_dir().join("settings.json"), settings.to_string()).unwrap();
    sandbox
}

const FLAGS: &[&str] = &["--provider", "mock", "--model", "mock-model", "--mode", "rpc"];

/// `Prompt k: word word …` as the recording sent it (400 characters, 100 tokens).
fn long_prompt(k: usize) -> String {
    format!("Prompt {k}: {}", "word ".repeat(78))
}

/// The session file's entries with ids replaced by `<entry N>` (N: the line of the entry), times
/// and paths by placeholders, as the recordings are normalized.
fn normalized_session(file: &Path) -> Vec<Value> {
    let entries: Vec<Value> = std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let ids: std::collections::HashMap<String, String> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e["type"] != "session")
        .map(|(i, e)| (e["id"].as_str().unwrap().to_owned(), format!("<entry {i}>")))
        .collect();
    entries
        .into_iter()
        .map(|mut entry| {
            normalize_ids(&mut entry, &ids);
            entry
        })
        .collect()
}

/// The lines compared with pi's: events and responses (the `>>>` commands and `message_update`
/// lines left out — their partials are timing-dependent in pi), normalized with `ids`.
fn comparable(lines: &[Value], ids: &std::collections::HashMap<String, String>) -> Vec<Value> {
    lines
        .iter()
        .filter(|line| {
            line.get("sent").is_none()
                && line["type"] != "message_update"
                && !(line["type"] == "message_start" && line["message"]["role"] == "assistant")
        })
        .cloned()
        .map(|mut line| {
            normalize_ids(&mut line, ids);
            mask_provider_error(&mut line);
            if let Some(map) = line.as_object_mut()
                && map.get("type").and_then(Value::as_str) == Some("response")
            {
                map.shift_remove("id");
            }
            line
        })
        .collect()
}

/// pi's OpenAI-compatible provider words an HTTP error as `400 <message>`, ours as `400 status
/// code: <body>` (a provider-layer difference in `docs/differences-from-pi.md`); both are
/// recognised as an overflow, which is what this file tests.
fn mask_provider_error(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                if key == "errorMessage" && field.as_str().is_some_and(|t| t.starts_with("400 ")) {
                    *field = "<provider error: 400>".into();
                } else {
                    mask_provider_error(field);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(mask_provider_error),
        _ => {}
    }
}

fn recorded_lines(name: &str) -> Vec<Value> {
    data(name)
        .lines()
        .filter(|line| !line.starts_with(">>> "))
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Our entry ids → `<entry N>`, from our session file.
fn id_map(file: &Path) -> std::collections::HashMap<String, String> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let entry: Value = serde_json::from_str(line).unwrap();
            (entry["type"] != "session").then(|| (entry["id"].as_str().unwrap().to_owned(), format!("<entry {i}>")))
        })
        .collect()
}

fn lines_text(lines: &[Value]) -> String {
    lines.iter().map(|v| format!("{v}\n")).collect()
}

/// Asserts that two transcripts are equal line by line, naming the first line that differs.
fn assert_same_lines(ours: &[Value], theirs: &[Value]) {
    for (i, (a, b)) in ours.iter().zip(theirs).enumerate() {
        assert_eq!(a, b, "line {i} differs:\nours:   {a}\ntheirs: {b}");
    }
    assert_eq!(ours.len(), theirs.len(), "{}", lines_text(ours));
}

/// What of a request is compared with pi's: the messages (our system prompt is not pi's, so a
/// conversation request's is left out; the summary request's is compared) and the output limit.
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
    // The tool definitions are the tools' own (compared by the tools' tests), not compaction's:
    // only whether there are any.
    json!({"messages": messages, "max_completion_tokens": request["max_completion_tokens"], "tools": request.get("tools").is_some()})
}

fn recorded_request_view(request: &Value) -> Value {
    json!({"messages": request["messages"], "max_completion_tokens": request["max_completion_tokens"], "tools": request.get("tools").is_some()})
}

#[tokio::test(flavor = "multi_thread")]
async fn threshold_compaction_happens_where_pi_compacts_and_writes_what_pi_writes() {
    let server = MockServer::start(replies("script-compact.json")).await;
    let sandbox = sandbox(
        &server,
        json!({"compaction": {"reserveTokens": 1000, "keepRecentTokens": 150}}),
    );
    let agent_dir = sandbox.agent_dir();
    let mut rpc = Rpc::start_in(sandbox, FLAGS);
    let (seen, file) = tokio::task::spawn_blocking(move || {
        for k in 1..=4 {
            rpc.send_noted(json!({"type": "prompt", "message": long_prompt(k)}));
            rpc.event("agent_end");
        }
        rpc.event("compaction_end");
        rpc.send_noted(json!({"id": "s1", "type": "get_session_stats"}));
        rpc.response("s1");
        rpc.send_noted(json!({"id": "st", "type": "get_state"}));
        rpc.response("st");
        rpc.send_noted(json!({"type": "prompt", "message": "Prompt 5"}));
        rpc.event("agent_end");
        rpc.send_noted(json!({"id": "s2", "type": "get_session_stats"}));
        rpc.response("s2");
        // The sandbox goes with the process: keep the session file.
        let file = keep_session_file(&agent_dir);
        (rpc.close(), file)
    })
    .await
    .unwrap();
    let file = file.path().to_path_buf();
    let ids = id_map(&file);
    // The events and responses, line for line (model, state and session paths normalized).
    let mut ours = comparable(&seen, &ids);
    let mut theirs = comparable(&recorded_lines("rpc-compact.txt"), &Default::default());
    for lines in [&mut ours, &mut theirs] {
        for line in lines.iter_mut() {
            if line["type"] == "response" && line["command"] == "get_state" {
                // Fields of the start-up state that are not compaction's (pi: its own defaults).
                for key in ["model", "steeringMode", "followUpMode", "sessionName"] {
                    line["data"].as_object_mut().unwrap().shift_remove(key);
                }
            }
        }
    }
    assert_same_lines(&ours, &theirs);
    // The session file: pi's entries, the compaction entry exactly as pi writes it.
    let ours = normalized_session(&file);
    let theirs: Vec<Value> = data("compact-session.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut ours_cmp = ours.clone();
    let mut theirs_cmp = theirs.clone();
    for entries in [&mut ours_cmp, &mut theirs_cmp] {
        for entry in entries.iter_mut() {
            // The header's version field order and pi's `thinking_level_change` for a model that
            // cannot reason are start-up matters, not compaction's.
            if entry["type"] == "session" {
                *entry = json!("<header>");
            }
        }
    }
    assert_same_lines(&ours_cmp, &theirs_cmp);
    let compaction = ours.iter().find(|e| e["type"] == "compaction").unwrap();
    assert_eq!(
        compaction.to_string(),
        r###"{"type":"compaction","id":"<entry 11>","parentId":"<entry 10>","timestamp":"<time>","summary":"## Goal\nSummarized goal.","firstKeptEntryId":"<entry 9>","tokensBefore":1205,"details":{"readFiles":[],"modifiedFiles":[]},"fromHook":false}"###
    );
    // The summary request, and the first request after compaction, are pi's.
    let requests = server.requests();
    assert_eq!(requests.len(), 6);
    let recorded = data_json("compact-requests.json");
    assert_eq!(
        request_view(&requests[4].json()),
        recorded_request_view(&recorded[0]),
        "the summary request"
    );
    assert_eq!(
        request_view(&requests[5].json()),
        recorded_request_view(&recorded[1]),
        "the context after compaction"
    );
}

/// A copy of the one session file under `agent_dir`, which outlives the sandbox.
fn keep_session_file(agent_dir: &Path) -> tempfile::NamedTempFile {
    let sessions = agent_dir.join("sessions");
    let dir = std::fs::read_dir(&sessions).unwrap().next().unwrap().unwrap().path();
    let file = std::fs::read_dir(dir).unwrap().next().unwrap().unwrap().path();
    let copy = tempfile::NamedTempFile::new().unwrap();
    std::fs::copy(file, copy.path()).unwrap();
    copy
}

#[tokio::test(flavor = "multi_thread")]
async fn a_context_overflow_is_compacted_and_retried_once_as_pi_does() {
    let server = MockServer::start(replies("script-overflow.json")).await;
    let sandbox = sandbox(
        &server,
        json!({"compaction": {"reserveTokens": 1000, "keepRecentTokens": 90}}),
    );
    let agent_dir = sandbox.agent_dir();
    let mut rpc = Rpc::start_in(sandbox, FLAGS);
    let (seen, file) = tokio::task::spawn_blocking(move || {
        for k in 1..=3 {
            rpc.send_noted(json!({"type": "prompt", "message": long_prompt(k)}));
            rpc.event("agent_end");
        }
        rpc.event("compaction_end");
        rpc.event("agent_end");
        rpc.send_noted(json!({"id": "s", "type": "get_session_stats"}));
        rpc.response("s");
        let file = keep_session_file(&agent_dir);
        (rpc.close(), file)
    })
    .await
    .unwrap();
    let file = file.path().to_path_buf();
    let ours = comparable(&seen, &id_map(&file));
    let theirs = comparable(&recorded_lines("rpc-overflow.txt"), &Default::default());
    assert_same_lines(&ours, &theirs);
    let end = ours.iter().find(|l| l["type"] == "compaction_end").unwrap();
    assert_eq!(end["reason"], "overflow");
    assert_eq!(end["willRetry"], true);
    // The failed request, the summary request and the retry are pi's.
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    let recorded = data_json("overflow-requests.json");
    for (i, what) in [(2, "the refused request"), (3, "the summary request"), (4, "the retry")] {
        assert_eq!(
            request_view(&requests[i].json()),
            recorded_request_view(&recorded[i - 2]),
            "{what}"
        );
    }
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
async fn rpc_compact_with_instructions_and_set_auto_compaction() {
    let server = MockServer::start(vec![
        openai::text("first answer"),
        openai::text("second answer"),
        openai::text("## Goal\nManual summary."),
    ])
    .await;
    let sandbox = sandbox(
        &server,
        json!({"compaction": {"reserveTokens": 100, "keepRecentTokens": 5}}),
    );
    let settings_file = sandbox.agent_dir().join("settings.json");
    let mut rpc = Rpc::start_in(sandbox, FLAGS);
    let (state, compacted, state_after, again, saved) = tokio::task::spawn_blocking(move || {
        rpc.send(json!({"id": "1", "type": "set_auto_compaction", "enabled": false}));
        rpc.response("1");
        rpc.send(json!({"id": "2", "type": "get_state"}));
        let state = rpc.response("2");
        for message in ["one", "two"] {
            rpc.send(json!({"type": "prompt", "message": message}));
            rpc.event("agent_end");
        }
        rpc.send(json!({"id": "3", "type": "compact", "customInstructions": "Keep the API notes"}));
        let compacted = rpc.response("3");
        rpc.send(json!({"id": "4", "type": "get_state"}));
        let state_after = rpc.response("4");
        rpc.send(json!({"id": "5", "type": "compact"}));
        let again = rpc.response("5");
        // The settings are written off the runtime's threads: wait for them (a guard, not a
        // timing assertion).
        let read = || -> Value { serde_json::from_str(&std::fs::read_to_string(&settings_file).unwrap()).unwrap() };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while read()["compaction"].get("enabled").is_none() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let saved = read();
        rpc.close();
        (state, compacted, state_after, again, saved)
    })
    .await
    .unwrap();
    assert_eq!(state["data"]["autoCompactionEnabled"], false);
    assert_eq!(state["data"]["isCompacting"], false);
    assert_eq!(state_after["data"]["autoCompactionEnabled"], false);
    // Saved as pi saves it: the one field, the others kept.
    assert_eq!(
        saved,
        json!({"compaction": {"reserveTokens": 100, "keepRecentTokens": 5, "enabled": false}})
    );
    assert_eq!(compacted["success"], true, "{compacted}");
    assert_eq!(compacted["data"]["summary"], "## Goal\nManual summary.");
    assert_eq!(
        compacted["data"]["details"],
        json!({"readFiles": [], "modifiedFiles": []})
    );
    assert!(compacted["data"]["firstKeptEntryId"].is_string());
    // The branch now ends with the compaction: pi's error, as an RPC error.
    assert_eq!(again["success"], false);
    assert_eq!(again["error"], "Already compacted");
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "no automatic compaction, one manual");
    let prompt = requests[2].json()["messages"][1]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        prompt.starts_with("<conversation>\n[User]: one\n\n[Assistant]: first answer"),
        "{prompt}"
    );
    assert!(
        prompt.ends_with(
            "Preserve exact file paths, function names, and error messages.\n\nAdditional focus: Keep the API notes"
        ),
        "{prompt}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_compacted_by_pi_continues_in_ours_with_the_same_context() {
    let server = MockServer::start(vec![openai::text("Answer 5.")]).await;
    let sandbox = sandbox(
        &server,
        json!({"compaction": {"reserveTokens": 1000, "keepRecentTokens": 150}}),
    );
    // pi's session file, its placeholders made real again.
    let file = sandbox.root().join("pi-compacted.jsonl");
    let text = data("compact-session.jsonl")
        .replace("\"<time>\"", "\"2026-11-26T15:59:24.000Z\"")
        .replace("\"<cwd>\"", &format!("{:?}", sandbox.project.display().to_string()))
        .replace("\"<session-id>\"", "\"01a21895-3ecd-73fe-ac1d-ad719be189ac\"");
    // Only up to the compaction: the prompt after it is sent again here.
    let upto: Vec<&str> = text.lines().take(12).collect();
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
    let recorded = data_json("compact-requests.json");
    assert_eq!(request_view(&requests[0].json()), recorded_request_view(&recorded[1]));
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
        rpc.response("a");
        let end = rpc.event("compaction_end");
        let compacted = rpc.response("c");
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
