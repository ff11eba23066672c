//! Extension events (issue 16) through an [`App`] on a scripted faux model, with an in-test
//! [`ExtensionRunner`] whose listeners are closures: the order pi 0.73.1 emits them in (a
//! snapshot of the event types of a prompt with a tool call), each result applied (`input`,
//! `before_agent_start`, `tool_call` block and input, `tool_result`, `context`, `message_end`,
//! the session events' cancel, the compaction hook), chaining across two listeners, failing
//! listeners reported, and nothing asked of a runner without listeners.

#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use pi_agent_core::faux::{FauxModel, faux_assistant_message, faux_assistant_text, faux_tool_call};
use pi_agent_core::{AgentMessage, ThinkingLevel};
use pi_coding_agent::extensions::events::{InputSource, UserBashResult};
use pi_coding_agent::extensions::{EventListener, ExtensionError, ExtensionRunner};
use pi_coding_agent::{App, AppError, ModelSelectSource};
use pi_session_store::{EntryKind, SessionManager};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::support::faux_session;

type Answer = Arc<dyn Fn(&Value) -> Result<Option<Value>, ExtensionError> + Send + Sync>;

struct Listener {
    name: String,
    answer: Answer,
    log: Arc<Mutex<Vec<Value>>>,
}

#[async_trait]
impl EventListener for Listener {
    fn name(&self) -> &str {
        &self.name
    }
    async fn handle(&self, event: &Value, _cancel: &CancellationToken) -> Result<Option<Value>, ExtensionError> {
        self.log.lock().unwrap().push(event.clone());
        (self.answer)(event)
    }
}

/// Listeners by event type, in load order; every event they get is logged.
#[derive(Default)]
struct Runner {
    listeners: Mutex<HashMap<String, Vec<Arc<dyn EventListener>>>>,
    log: Arc<Mutex<Vec<Value>>>,
    reported: Mutex<Vec<String>>,
    asked: Mutex<Vec<String>>,
}

impl Runner {
    fn new() -> Arc<Self> {
        Arc::new(Runner::default())
    }

    /// Adds a listener of `kind` from extension `name`.
    fn on(
        self: &Arc<Self>,
        kind: &str,
        name: &str,
        answer: impl Fn(&Value) -> Result<Option<Value>, ExtensionError> + Send + Sync + 'static,
    ) -> Arc<Self> {
        let listener = Arc::new(Listener {
            name: name.to_owned(),
            answer: Arc::new(answer),
            log: self.log.clone(),
        });
        self.listeners
            .lock()
            .unwrap()
            .entry(kind.to_owned())
            .or_default()
            .push(listener);
        self.clone()
    }

    /// A listener of every kind answering nothing.
    fn on_all(self: &Arc<Self>, kinds: &[&str]) -> Arc<Self> {
        for kind in kinds {
            self.on(kind, "/ext/log.ts", |_| Ok(None));
        }
        self.clone()
    }

    fn events(&self, kind: &str) -> Vec<Value> {
        let log = self.log.lock().unwrap();
        log.iter().filter(|e| e["type"] == kind).cloned().collect()
    }

    fn types(&self) -> Vec<String> {
        let log = self.log.lock().unwrap();
        let mut types: Vec<String> = Vec::new();
        for event in log.iter() {
            let kind = event["type"].as_str().unwrap_or_default().to_owned();
            // The number of streamed updates depends on the faux model's chunking.
            if kind == "message_update" && types.last().is_some_and(|last| last == "message_update…") {
                continue;
            }
            types.push(if kind == "message_update" {
                "message_update…".into()
            } else {
                kind
            });
        }
        types
    }
}

impl ExtensionRunner for Runner {
    fn listeners(&self, event_type: &str) -> Vec<Arc<dyn EventListener>> {
        self.asked.lock().unwrap().push(event_type.to_owned());
        self.listeners
            .lock()
            .unwrap()
            .get(event_type)
            .cloned()
            .unwrap_or_default()
    }
    fn report(&self, error: ExtensionError) {
        self.reported.lock().unwrap().push(error.to_string());
    }
}

fn recording_faux() -> FauxModel {
    FauxModel::builder().record_calls(true).build()
}

fn app(dir: &Path, faux: &FauxModel, runner: Option<Arc<Runner>>) -> App {
    let session = faux_session(dir, faux, &["read"]);
    session.agent().set_system_prompt("base prompt");
    let app = App::new(
        session,
        SessionManager::in_memory(dir),
        Arc::new(pi_ai::ModelRegistry::builtin()),
        None,
        Arc::new(|warning| panic!("{warning}")),
    );
    if let Some(runner) = runner {
        app.set_extension_runner(Some(runner));
    }
    app
}

fn tool_then_text(faux: &FauxModel, args: Value) {
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call("call-1", "read", args)]),
        faux_assistant_text("done"),
    ]);
}

fn tool_result_text(app: &App) -> String {
    app.session()
        .agent()
        .messages()
        .iter()
        .find_map(AgentMessage::as_tool_result)
        .map(|r| r.content.iter().filter_map(|b| b.as_text()).collect())
        .unwrap_or_default()
}

const AGENT_EVENTS: [&str; 17] = [
    "input",
    "before_agent_start",
    "agent_start",
    "agent_end",
    "turn_start",
    "turn_end",
    "message_start",
    "message_update",
    "message_end",
    "tool_execution_start",
    "tool_execution_update",
    "tool_execution_end",
    "context",
    "before_provider_request",
    "after_provider_response",
    "tool_call",
    "tool_result",
];

#[tokio::test]
async fn a_prompt_with_a_tool_call_emits_pis_events_in_pis_order() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "A\n").unwrap();
    let faux = recording_faux();
    tool_then_text(&faux, json!({"path": "a.txt"}));
    let runner = Runner::new().on_all(&AGENT_EVENTS);
    let app = app(dir.path(), &faux, Some(runner.clone()));
    assert!(
        app.prompt_from(AgentMessage::user("read a"), InputSource::Interactive)
            .await
            .unwrap()
    );
    insta::assert_snapshot!(runner.types().join("\n"));

    // pi's payloads.
    assert_eq!(
        runner.events("input")[0],
        json!({"type": "input", "text": "read a", "source": "interactive"})
    );
    let turns: Vec<Value> = runner
        .events("turn_start")
        .iter()
        .map(|e| e["turnIndex"].clone())
        .collect();
    assert_eq!(turns, [json!(0), json!(1)]);
    assert!(runner.events("turn_start")[0]["timestamp"].is_i64());
    let turn_end = &runner.events("turn_end")[0];
    assert_eq!(turn_end["turnIndex"], 0);
    assert_eq!(turn_end["toolResults"][0]["toolCallId"], "call-1");
    assert_eq!(
        runner.events("tool_call")[0],
        json!({"type": "tool_call", "toolCallId": "call-1", "toolName": "read", "input": {"path": "a.txt"}})
    );
    let result = &runner.events("tool_result")[0];
    assert_eq!(result["content"][0]["text"], "A\n");
    assert_eq!(result["isError"], false);
    assert_eq!(
        runner.events("tool_execution_start")[0],
        json!({"type": "tool_execution_start", "toolCallId": "call-1", "toolName": "read", "args": {"path": "a.txt"}})
    );
    assert_eq!(
        runner.events("after_provider_response")[0],
        json!({"type": "after_provider_response", "status": 200, "headers": {}})
    );
    let before = &runner.events("before_agent_start")[0];
    assert_eq!(before["prompt"], "read a");
    assert_eq!(before["systemPrompt"], "base prompt");
    // The prompt, the call, its result, the answer.
    assert_eq!(runner.events("agent_end")[0]["messages"].as_array().unwrap().len(), 4);
    assert!(runner.reported.lock().unwrap().is_empty());
}

/// An event as the recording extension logs it: type, role of a message_start/end, sorted keys.
fn logged(event: &Value) -> String {
    let kind = event["type"].as_str().unwrap_or_default();
    let role = match kind {
        "message_start" | "message_end" => event["message"]["role"].as_str().unwrap_or_default(),
        _ => "",
    };
    let mut keys: Vec<&str> = event
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .filter(|k| *k != "type")
        .collect();
    keys.sort_unstable();
    format!("{kind} {role} [{}]", keys.join(",")).replace("  [", " [")
}

/// pi 0.73.1's recorded run from `input` to `agent_end`, normalised for a faux model: no
/// `before_provider_request` (pi's faux provider has no payload either), no `images` key (pi sends
/// it `undefined`, which JSON leaves out), and `context` just before `after_provider_response`: pi
/// runs it while its queue still delivers the turn's first events (an accident of its promise
/// chain), ours lets the queue deliver them first.
fn pi_recorded_run() -> Vec<String> {
    let text = include_str!("data/extension_events_pi073.txt");
    let lines: Vec<String> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .skip_while(|l| !l.starts_with("input "))
        .take_while(|l| !l.starts_with("session_shutdown"))
        .filter(|l| !l.starts_with("before_provider_request"))
        .map(|l| l.replace("[images,", "["))
        .collect();
    let mut out: Vec<String> = Vec::new();
    let mut held = None;
    for line in lines {
        if line.starts_with("context ") {
            held = Some(line);
            continue;
        }
        if line.starts_with("after_provider_response")
            && let Some(context) = held.take()
        {
            out.push(context);
        }
        out.push(line);
    }
    out
}

#[tokio::test]
async fn the_order_and_keys_are_pi_0_73_1s_recorded_ones() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "A\n").unwrap();
    let faux = recording_faux();
    tool_then_text(&faux, json!({"path": "a.txt"}));
    let runner = Runner::new().on_all(&AGENT_EVENTS);
    let app = app(dir.path(), &faux, Some(runner.clone()));
    app.prompt_from(AgentMessage::user("read a"), InputSource::Interactive)
        .await
        .unwrap();
    let mut ours: Vec<String> = Vec::new();
    for line in runner.log.lock().unwrap().iter().map(logged) {
        if !(line.starts_with("message_update") && ours.last() == Some(&line)) {
            ours.push(line);
        }
    }
    assert_eq!(ours, pi_recorded_run());
}

#[tokio::test]
async fn a_runner_without_listeners_gets_no_event_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "A\n").unwrap();
    let faux = recording_faux();
    tool_then_text(&faux, json!({"path": "a.txt"}));
    let runner = Runner::new();
    let app = app(dir.path(), &faux, Some(runner.clone()));
    app.prompt_from(AgentMessage::user("read a"), InputSource::Rpc)
        .await
        .unwrap();
    assert!(runner.log.lock().unwrap().is_empty());
    assert_eq!(tool_result_text(&app), "A\n");
    // Each event type was looked up, and nothing more was done for it.
    let asked = runner.asked.lock().unwrap().clone();
    for kind in [
        "input",
        "before_agent_start",
        "agent_start",
        "tool_call",
        "context",
        "message_update",
    ] {
        assert!(asked.iter().any(|a| a == kind), "{kind} looked up");
    }
}

#[tokio::test]
async fn tool_call_blocks_with_pis_default_text_or_the_reason_and_mutates_input() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "A\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "B\n").unwrap();

    let faux = recording_faux();
    tool_then_text(&faux, json!({"path": "a.txt"}));
    let runner = Runner::new().on("tool_call", "/ext/gate.ts", |_| Ok(Some(json!({"block": true}))));
    let app = app(dir.path(), &faux, Some(runner));
    app.prompt("read a").await.unwrap();
    assert_eq!(tool_result_text(&app), "Tool execution was blocked");

    let faux = recording_faux();
    tool_then_text(&faux, json!({"path": "a.txt"}));
    let runner = Runner::new().on("tool_call", "/ext/gate.ts", |_| {
        Ok(Some(json!({"block": true, "reason": "Blocked by user"})))
    });
    let app = self::app(dir.path(), &faux, Some(runner));
    app.prompt("read a").await.unwrap();
    assert_eq!(tool_result_text(&app), "Blocked by user");

    // Two listeners: the first changes the path, the second sees the change.
    let faux = recording_faux();
    tool_then_text(&faux, json!({"path": "a.txt"}));
    let runner = Runner::new()
        .on("tool_call", "/ext/redirect.ts", |_| {
            Ok(Some(json!({"input": {"path": "b.txt"}})))
        })
        .on("tool_call", "/ext/check.ts", |event| {
            assert_eq!(event["input"]["path"], "b.txt");
            Ok(None)
        });
    let app = self::app(dir.path(), &faux, Some(runner));
    app.prompt("read a").await.unwrap();
    assert_eq!(tool_result_text(&app), "B\n");
}

#[tokio::test]
async fn a_failing_tool_call_listener_blocks_the_call_with_its_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "A\n").unwrap();
    let faux = recording_faux();
    tool_then_text(&faux, json!({"path": "a.txt"}));
    let runner = Runner::new().on("tool_call", "/ext/gate.ts", |_| {
        Err(ExtensionError::Handler {
            extension: "/ext/gate.ts".into(),
            event: "tool_call".into(),
            message: "gate crashed".into(),
        })
    });
    let app = app(dir.path(), &faux, Some(runner));
    app.prompt("read a").await.unwrap();
    assert_eq!(tool_result_text(&app), "gate crashed");
}

#[tokio::test]
async fn tool_result_patches_chain_across_two_listeners() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "A\n").unwrap();
    let faux = recording_faux();
    tool_then_text(&faux, json!({"path": "a.txt"}));
    let runner = Runner::new()
        .on("tool_result", "/ext/one.ts", |_| {
            Ok(Some(json!({"content": [{"type": "text", "text": "redacted"}]})))
        })
        .on("tool_result", "/ext/two.ts", |event| {
            let text = event["content"][0]["text"].as_str().unwrap_or_default();
            Ok(Some(
                json!({"content": [{"type": "text", "text": format!("{text}!")}], "details": {"by": "two"}}),
            ))
        });
    let app = app(dir.path(), &faux, Some(runner));
    app.prompt("read a").await.unwrap();
    assert_eq!(tool_result_text(&app), "redacted!");
    let details = app
        .session()
        .agent()
        .messages()
        .iter()
        .find_map(AgentMessage::as_tool_result)
        .and_then(|r| r.details.clone());
    assert_eq!(details, Some(json!({"by": "two"})));
}

#[tokio::test]
async fn context_changes_what_the_model_sees_but_not_the_transcript() {
    let dir = tempfile::tempdir().unwrap();
    let faux = recording_faux();
    faux.set_responses([faux_assistant_text("one"), faux_assistant_text("two")]);
    let runner = Runner::new().on("context", "/ext/trim.ts", |event| {
        // Keeps the last message only.
        let messages = event["messages"].as_array().unwrap();
        Ok(Some(json!({"messages": [messages[messages.len() - 1]]})))
    });
    let app = app(dir.path(), &faux, Some(runner));
    app.prompt("first").await.unwrap();
    app.prompt("second").await.unwrap();
    let calls = faux.calls();
    assert_eq!(calls[1].message_count, 1, "the model saw the trimmed context");
    assert_eq!(
        app.session().agent().messages().len(),
        4,
        "the transcript keeps everything"
    );
}

#[tokio::test]
async fn message_end_replaces_the_message_everywhere_and_keeps_the_role() {
    let dir = tempfile::tempdir().unwrap();
    let faux = recording_faux();
    faux.set_responses([faux_assistant_text("secret answer")]);
    let runner = Runner::new().on("message_end", "/ext/mask.ts", |event| {
        let mut message = event["message"].clone();
        match message["role"].as_str() {
            Some("assistant") => {
                message["content"] = json!([{"type": "text", "text": "masked"}]);
                Ok(Some(json!({ "message": message })))
            }
            // A user message turned into an assistant one: refused.
            _ => Ok(Some(
                json!({"message": {"role": "assistant", "content": [], "api": "x", "provider": "x",
                "model": "x", "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                "stopReason": "stop", "timestamp": 0}}),
            )),
        }
    });
    let app = app(dir.path(), &faux, Some(runner.clone()));
    app.prompt("hi").await.unwrap();
    assert_eq!(app.last_assistant_text().as_deref(), Some("masked"));
    let roles: Vec<String> = app
        .session()
        .agent()
        .messages()
        .iter()
        .map(|m| m.role().to_owned())
        .collect();
    assert_eq!(roles, ["user", "assistant"]);
    let stored = app.with_store(|store| {
        store
            .entries()
            .iter()
            .filter_map(|e| e.message().and_then(AgentMessage::as_assistant).map(|a| a.text()))
            .collect::<Vec<_>>()
    });
    assert_eq!(stored, ["masked"]);
    assert_eq!(
        *runner.reported.lock().unwrap(),
        [
            "Extension \"/ext/mask.ts\" error in message_end handler: message_end handlers must return a message with the same role"
        ]
    );
}

#[tokio::test]
async fn before_agent_start_injects_custom_messages_and_sets_the_system_prompt_for_that_run() {
    let dir = tempfile::tempdir().unwrap();
    let faux = recording_faux();
    faux.set_responses([faux_assistant_text("one"), faux_assistant_text("two")]);
    let runner = Runner::new()
        .on("before_agent_start", "/ext/a.ts", |event| {
            Ok(Some(json!({
                "message": {"customType": "memo", "content": "remember this", "display": true, "details": {"n": 1}},
                "systemPrompt": format!("{} + A", event["systemPrompt"].as_str().unwrap()),
            })))
        })
        .on("before_agent_start", "/ext/b.ts", |event| {
            Ok(Some(
                json!({"systemPrompt": format!("{} + B", event["systemPrompt"].as_str().unwrap())}),
            ))
        });
    let app = app(dir.path(), &faux, Some(runner));
    app.prompt("hi").await.unwrap();
    assert_eq!(faux.calls()[0].system_prompt, "base prompt + A + B");
    // The model sees the custom message as a user message; the transcript keeps its role.
    assert_eq!(faux.calls()[0].roles, ["user", "user"]);
    let roles: Vec<String> = app
        .session()
        .agent()
        .messages()
        .iter()
        .map(|m| m.role().to_owned())
        .collect();
    assert_eq!(roles, ["user", "custom", "assistant"]);
    assert_eq!(app.session().agent().state().system_prompt, "base prompt");
    let custom = app.with_store(|store| {
        store
            .entries()
            .iter()
            .find_map(|entry| match &entry.kind {
                EntryKind::CustomMessage { .. } => Some(serde_json::to_value(entry).unwrap()),
                _ => None,
            })
            .unwrap()
    });
    assert_eq!(custom["type"], "custom_message");
    assert_eq!(custom["customType"], "memo");
    assert_eq!(custom["content"], "remember this");
    assert_eq!(custom["display"], true);
    assert_eq!(custom["details"], json!({"n": 1}));
}

#[tokio::test]
async fn input_transforms_or_handles_the_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let faux = recording_faux();
    faux.set_responses([faux_assistant_text("ok")]);
    let runner = Runner::new().on("input", "/ext/input.ts", |event| {
        Ok(Some(match event["text"].as_str() {
            Some("ping") => json!({"action": "handled"}),
            Some(text) => {
                json!({"action": "transform", "text": format!("[{}] {text}", event["source"].as_str().unwrap())})
            }
            None => json!({"action": "continue"}),
        }))
    });
    let app = app(dir.path(), &faux, Some(runner));
    assert!(
        !app.prompt_from(AgentMessage::user("ping"), InputSource::Rpc)
            .await
            .unwrap()
    );
    assert_eq!(faux.call_count(), 0, "a handled input runs nothing");
    assert!(
        app.prompt_from(AgentMessage::user("hello"), InputSource::Rpc)
            .await
            .unwrap()
    );
    let first = app.session().agent().messages()[0].as_user().unwrap().content.text();
    assert_eq!(first, "[rpc] hello");
}

#[tokio::test]
async fn a_failing_listener_is_reported_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let faux = recording_faux();
    faux.set_responses([faux_assistant_text("fine")]);
    let runner = Runner::new()
        .on("context", "/ext/broken.ts", |_| {
            Err(ExtensionError::Timeout {
                extension: "/ext/broken.ts".into(),
                event: "context".into(),
            })
        })
        .on("turn_start", "/ext/broken.ts", |_| {
            Err(ExtensionError::Handler {
                extension: "/ext/broken.ts".into(),
                event: "turn_start".into(),
                message: "nope".into(),
            })
        });
    let app = app(dir.path(), &faux, Some(runner.clone()));
    app.prompt("hi").await.unwrap();
    assert_eq!(app.last_assistant_text().as_deref(), Some("fine"));
    assert_eq!(faux.calls()[0].message_count, 1);
    assert_eq!(
        *runner.reported.lock().unwrap(),
        [
            "Extension \"/ext/broken.ts\" error in turn_start handler: nope",
            "Extension \"/ext/broken.ts\" error in context handler: timed out",
        ]
    );
}

#[tokio::test]
async fn session_events_can_cancel_and_announce_replacements() {
    let dir = tempfile::tempdir().unwrap();
    let faux = recording_faux();
    faux.set_responses([faux_assistant_text("one")]);
    let cancel = Arc::new(Mutex::new(true));
    let flag = cancel.clone();
    let runner = Runner::new()
        .on("session_before_switch", "/ext/guard.ts", move |_| {
            Ok(Some(json!({ "cancel": *flag.lock().unwrap() })))
        })
        .on("session_before_fork", "/ext/guard.ts", |_| {
            Ok(Some(json!({"cancel": true})))
        })
        .on_all(&["session_shutdown", "session_start"]);
    let app = app(dir.path(), &faux, Some(runner.clone()));
    app.prompt("hi").await.unwrap();
    assert!(matches!(app.new_session(None).await, Err(AppError::Cancelled)));
    assert_eq!(app.session().agent().messages().len(), 2, "nothing changed");
    let user_id = app.with_store(|store| {
        store
            .entries()
            .iter()
            .find(|e| e.message().is_some())
            .unwrap()
            .id
            .clone()
    });
    assert!(matches!(app.fork(&user_id).await, Err(AppError::Cancelled)));

    *cancel.lock().unwrap() = false;
    app.new_session(None).await.unwrap();
    let types = runner.types();
    assert_eq!(
        types,
        [
            "session_before_switch",
            "session_before_fork",
            "session_before_switch",
            "session_shutdown",
            "session_start"
        ]
    );
    assert_eq!(
        runner.events("session_before_switch")[0],
        json!({"type": "session_before_switch", "reason": "new"})
    );
    assert_eq!(runner.events("session_before_fork")[0]["position"], "before");
    assert_eq!(runner.events("session_shutdown")[0]["reason"], "new");
    assert_eq!(
        runner.events("session_start")[0],
        json!({"type": "session_start", "reason": "new"})
    );
}

#[tokio::test]
async fn tree_navigation_can_be_cancelled_and_is_announced() {
    let dir = tempfile::tempdir().unwrap();
    let faux = recording_faux();
    faux.set_responses([faux_assistant_text("one"), faux_assistant_text("two")]);
    let cancel = Arc::new(Mutex::new(true));
    let flag = cancel.clone();
    let runner = Runner::new()
        .on("session_before_tree", "/ext/tree.ts", move |_| {
            Ok(Some(json!({"cancel": *flag.lock().unwrap(), "label": "checkpoint"})))
        })
        .on_all(&["session_tree"]);
    let app = app(dir.path(), &faux, Some(runner.clone()));
    app.prompt("first").await.unwrap();
    app.prompt("second").await.unwrap();
    let (first_answer, old_leaf) = app.with_store(|store| {
        let answer = store
            .entries()
            .iter()
            .find(|e| e.message().and_then(AgentMessage::as_assistant).is_some())
            .unwrap()
            .id
            .clone();
        (answer, store.leaf_id().unwrap().to_owned())
    });
    assert!(matches!(app.navigate(&first_answer).await, Err(AppError::Cancelled)));
    assert_eq!(app.session().agent().messages().len(), 4);

    *cancel.lock().unwrap() = false;
    app.navigate(&first_answer).await.unwrap();
    let before = &runner.events("session_before_tree")[1]["preparation"];
    assert_eq!(before["targetId"], first_answer.as_str());
    assert_eq!(before["oldLeafId"], old_leaf.as_str());
    assert_eq!(before["userWantsSummary"], false);
    assert_eq!(
        app.with_store(|store| store.label(&first_answer).map(str::to_owned))
            .as_deref(),
        Some("checkpoint")
    );
    // As in pi, the label entry (written on the target) is the new leaf.
    let new_leaf = app.with_store(|store| store.leaf_id().unwrap().to_owned());
    assert!(app.with_store(|store| matches!(store.entry(&new_leaf).unwrap().kind, EntryKind::Label { .. })));
    assert_eq!(
        runner.events("session_tree")[0],
        json!({"type": "session_tree", "newLeafId": new_leaf, "oldLeafId": old_leaf})
    );
}

#[tokio::test]
async fn an_extension_supplies_the_compaction_summary() {
    let dir = tempfile::tempdir().unwrap();
    let faux = recording_faux();
    faux.set_responses([faux_assistant_text("one"), faux_assistant_text("two")]);
    let runner = Runner::new()
        .on("session_before_compact", "/ext/compact.ts", |event| {
            let preparation = &event["preparation"];
            Ok(Some(json!({"compaction": {
                "summary": "extension summary",
                "firstKeptEntryId": preparation["firstKeptEntryId"],
                "tokensBefore": preparation["tokensBefore"],
                "details": {"from": "ext"},
            }})))
        })
        .on_all(&["session_compact"]);
    let app = app(dir.path(), &faux, Some(runner.clone()));
    app.set_compaction_settings(pi_coding_agent::compaction::CompactionSettings {
        enabled: true,
        reserve_tokens: 100,
        keep_recent_tokens: 1,
    });
    app.prompt("first").await.unwrap();
    app.prompt("second").await.unwrap();
    let result = app.compact(None).await.unwrap();
    assert_eq!(result.summary, "extension summary");
    assert_eq!(faux.call_count(), 2, "no summary was asked of the model");
    let before = &runner.events("session_before_compact")[0];
    assert!(before["branchEntries"].as_array().unwrap().len() >= 4);
    let compacted = &runner.events("session_compact")[0];
    assert_eq!(compacted["fromExtension"], true);
    assert_eq!(compacted["compactionEntry"]["summary"], "extension summary");
    assert_eq!(compacted["compactionEntry"]["details"], json!({"from": "ext"}));
}

#[tokio::test]
async fn model_and_thinking_selections_are_announced_with_their_source() {
    let dir = tempfile::tempdir().unwrap();
    let faux = recording_faux();
    let runner = Runner::new().on_all(&["model_select", "thinking_level_select"]);
    let app = app(dir.path(), &faux, Some(runner.clone()));
    let mut other = faux.model();
    other.id = "other".into();
    other.reasoning = true;
    app.select_model(other, Some(ThinkingLevel::High), ModelSelectSource::Cycle);
    app.set_thinking_level(ThinkingLevel::Low);
    // Queued like the run's events: delivered by the time the next prompt's events are.
    faux.set_responses([faux_assistant_text("ok")]);
    app.prompt("hi").await.unwrap();
    let select = &runner.events("model_select")[0];
    assert_eq!(select["source"], "cycle");
    assert_eq!(select["model"]["id"], "other");
    assert_eq!(select["previousModel"]["id"], faux.model().id);
    let levels: Vec<(Value, Value)> = runner
        .events("thinking_level_select")
        .iter()
        .map(|e| (e["level"].clone(), e["previousLevel"].clone()))
        .collect();
    assert_eq!(levels, [(json!("high"), json!("off")), (json!("low"), json!("high"))]);
}

#[tokio::test]
async fn user_bash_result_comes_from_the_first_extension_that_gives_one() {
    let dir = tempfile::tempdir().unwrap();
    let faux = recording_faux();
    let runner =
        Runner::new()
            .on("user_bash", "/ext/none.ts", |_| Ok(None))
            .on("user_bash", "/ext/remote.ts", |event| {
                Ok(Some(
                    json!({"result": {"output": format!("ran {}", event["command"].as_str().unwrap()),
                                      "exitCode": 0, "cancelled": false, "truncated": false}}),
                ))
            });
    let app = app(dir.path(), &faux, Some(runner.clone()));
    let result = app.emit_user_bash("ls", false).await.unwrap();
    assert_eq!(
        result,
        UserBashResult {
            output: "ran ls".into(),
            exit_code: Some(0),
            ..UserBashResult::default()
        }
    );
    let event = &runner.events("user_bash")[0];
    assert_eq!(event["excludeFromContext"], false);
    assert_eq!(event["cwd"], dir.path().to_str().unwrap());
}
