//! The extensions' [`ExtensionRunner`] over real processes: the Python example
//! (`examples/extensions/python-guard`) and small Python extensions, loaded with
//! [`Extensions::load`], their handlers called as the emit points call them — results, a handler
//! that throws, one that hangs (the process is restarted), `register` after `initialize`, and
//! `tools.execute` / `pi.events.emit` between processes. Needs `python3` (fails without it).
//! One Node extension: an aborted event aborts the handler's `ctx.signal` (`cancel {requestId}`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::{Arc, Mutex};

use pi_agent_core::faux::FauxModel;
use pi_ai::ModelRegistry;
use pi_coding_agent::custom_tools::ToolApi;
use pi_coding_agent::extensions::{EntryKind, ExtensionEntry, ExtensionError, Extensions, LoadOptions, Origin};
use pi_coding_agent::{App, ExtensionSetup, SessionBuilder};
use pi_session_store::SessionManager;
use pi_test_support::extensions::{examples_dir, python_extension};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn entry(dir: &Path) -> ExtensionEntry {
    ExtensionEntry {
        path: dir.to_path_buf(),
        kind: EntryKind::Process {
            manifest: dir.join("extension.json"),
        },
        origin: Origin::Cli,
        base_dir: None,
    }
}

async fn handle(extensions: &Extensions, event: Value) -> Vec<Result<Option<Value>, ExtensionError>> {
    let kind = event["type"].as_str().unwrap().to_owned();
    let mut outcomes = Vec::new();
    for listener in extensions.runner().listeners(&kind) {
        outcomes.push(listener.handle(&event, &CancellationToken::new()).await);
    }
    outcomes
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_example_blocks_rm_rf_and_transforms_input() {
    let dir = tempfile::tempdir().unwrap();
    let guard = examples_dir().join("python-guard");
    let extensions = Extensions::load(vec![entry(&guard)], &ToolApi::new(dir.path()), LoadOptions::default()).await;
    assert!(extensions.load_errors().is_empty(), "{:?}", extensions.load_errors());
    let registered = extensions.registrations();
    assert_eq!(registered[0].events, ["tool_call", "input"]);
    assert!(
        extensions.runner().listeners("agent_start").is_empty(),
        "no handler, no listener"
    );

    let blocked = handle(
        &extensions,
        json!({"type": "tool_call", "toolCallId": "c1", "toolName": "bash", "input": {"command": "rm -rf /"}}),
    )
    .await;
    assert_eq!(
        blocked,
        [Ok(Some(
            json!({"block": true, "reason": "Blocked by python-guard: rm -rf is not allowed"})
        ))]
    );
    let allowed = handle(
        &extensions,
        json!({"type": "tool_call", "toolCallId": "c2", "toolName": "bash", "input": {"command": "ls"}}),
    )
    .await;
    assert_eq!(allowed, [Ok(None)]);
    let shouted = handle(
        &extensions,
        json!({"type": "input", "text": "!shout hello", "source": "rpc"}),
    )
    .await;
    assert_eq!(shouted, [Ok(Some(json!({"action": "transform", "text": "HELLO"})))]);
    extensions.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_throwing_or_hanging_handler_is_an_error_and_the_process_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let body = r#"
import time

@ext.on("input")
def handler(event, ctx):
    if event["text"] == "throw":
        raise RuntimeError("input handler broke")
    if event["text"] == "hang":
        time.sleep(3600)
    return {"action": "transform", "text": event["text"] + "!"}
"#;
    let root = python_extension(dir.path(), "flaky", body, Some(500));
    let extensions = Extensions::load(vec![entry(&root)], &ToolApi::new(dir.path()), LoadOptions::default()).await;
    let reported = Arc::new(Mutex::new(Vec::new()));
    let sink = reported.clone();
    extensions.set_report(Arc::new(move |error: &ExtensionError| {
        sink.lock().unwrap().push(error.to_string())
    }));
    let path = root.display().to_string();

    let thrown = handle(&extensions, json!({"type": "input", "text": "throw"})).await;
    assert_eq!(
        thrown,
        [Err(ExtensionError::Handler {
            extension: path.clone(),
            event: "input".into(),
            message: "input handler broke".into(),
        })]
    );
    let hung = handle(&extensions, json!({"type": "input", "text": "hang"})).await;
    assert_eq!(
        hung,
        [Err(ExtensionError::Timeout {
            extension: path.clone(),
            event: "input".into(),
        })]
    );
    assert_eq!(
        hung[0].as_ref().unwrap_err().to_string(),
        format!("Extension \"{path}\" error in input handler: timed out")
    );
    // Killed after the time limit, started again for the next event.
    let again = handle(&extensions, json!({"type": "input", "text": "ok"})).await;
    assert_eq!(again, [Ok(Some(json!({"action": "transform", "text": "ok!"})))]);
    extensions.runner().report(hung[0].clone().unwrap_err());
    assert_eq!(
        *reported.lock().unwrap(),
        [format!("Extension \"{path}\" error in input handler: timed out")]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn builtin_tools_events_between_processes_and_late_registrations() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hello from the file\n").unwrap();
    let reader = r#"
import threading
seen = []

@ext.on_bus("greetings")
def greeted(data):
    seen.append(data)
    # Registered after initialize: a command of its own.
    ext._notify("register", {"path": ext.path, "commands": [{"name": "late", "description": "Came later"}],
                             "tools": [{"name": "late_tool", "description": "Came later",
                                        "parameters": {"type": "object", "properties": {}}}]})

@ext.command("read-notes")
def read_notes(args, ctx):
    result = ext.run_tool("read", {"path": "notes.txt"})
    ext.emit("read", {"text": result["content"][0]["text"], "seen": seen})
"#;
    let sender = r#"
received = []

@ext.on_bus("read")
def on_read(data):
    received.append(data)

@ext.command("hello")
def hello(args, ctx):
    ext.emit("greetings", {"from": "sender"})

@ext.command("report")
def report(args, ctx):
    raise pi_extension.ToolError(repr(received))
"#;
    let first = python_extension(dir.path(), "reader", reader, Some(5000));
    let second = python_extension(dir.path(), "sender", sender, Some(5000));
    let faux = FauxModel::new();
    let built = SessionBuilder::new(dir.path(), faux.model())
        .stream_fn(Arc::new(faux.clone()))
        .context_files(false)
        .extensions(ExtensionSetup {
            paths: vec![first, second],
            no_extensions: true,
            resolved: Vec::new(),
        })
        .build()
        .await
        .unwrap();
    let extensions = built.extensions;
    assert!(built.extension_errors.is_empty(), "{:?}", built.extension_errors);
    let app = App::new(
        built.session,
        SessionManager::in_memory(dir.path()),
        Arc::new(ModelRegistry::builtin()),
        None,
        Arc::new(|warning| panic!("{warning}")),
    );
    extensions.attach(&app);
    assert_eq!(extensions.run_command("/hello").await, Some(Ok(())));
    // `greetings` reached the reader, which registered `late` in answer.
    let names = || -> Vec<String> { extensions.commands().into_iter().map(|c| c.invocation_name).collect() };
    let has_late_tool = || app.session().active_tool_names().iter().any(|name| name == "late_tool");
    for _ in 0..100 {
        if names().len() == 4 && has_late_tool() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(names(), ["read-notes", "late", "hello", "report"]);
    // Its tool joined the running session, active.
    assert!(has_late_tool(), "{:?}", app.session().active_tool_names());
    // `tools.execute` runs pi's built-in `read` in pi's cwd; the text goes to the sender.
    assert_eq!(extensions.run_command("/read-notes").await, Some(Ok(())));
    // The bus is fire-and-forget (as `pi.events` is in pi): the sender gets `read` a moment later.
    let mut report = extensions.run_command("/report").await.unwrap().unwrap_err();
    for _ in 0..100 {
        if report.message() != "[]" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        report = extensions.run_command("/report").await.unwrap().unwrap_err();
    }
    assert_eq!(
        report.message(),
        "[{'text': 'hello from the file\\n', 'seen': [{'from': 'sender'}]}]"
    );
    assert!(extensions.run_command("/nope").await.is_none());
    extensions.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_extension_overrides_a_builtin_and_completes_its_command_arguments() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "the built-in read\n").unwrap();
    let body = r#"
@ext.tool(name="read", description="Read, logged", parameters={"type": "object", "properties": {"path": {"type": "string"}}})
def read(call, params):
    inner = ext.run_tool("read", {"path": params["path"]}, call_id=call.call_id)
    return "logged: " + inner["content"][0]["text"]

def complete(prefix):
    return [{"value": v, "label": v} for v in ["alpha", "beta", "alps"] if v.startswith(prefix)]

@ext.command("pick", description="Pick one", complete=complete)
def pick(args, ctx):
    pass
"#;
    let root = python_extension(dir.path(), "logged-read", body, Some(5000));
    let faux = FauxModel::new();
    let built = SessionBuilder::new(dir.path(), faux.model())
        .stream_fn(Arc::new(faux.clone()))
        .context_files(false)
        .extensions(ExtensionSetup {
            paths: vec![root.clone()],
            no_extensions: true,
            resolved: Vec::new(),
        })
        .build()
        .await
        .unwrap();
    assert!(built.extension_errors.is_empty(), "{:?}", built.extension_errors);
    let session = built.session;
    // The extension's `read` took the built-in's place (still active by default; as a custom tool
    // it may stage previews, so `resolve` comes with it) …
    assert_eq!(
        session.active_tool_names(),
        ["read", "bash", "edit", "write", "resolve"]
    );
    let read = session.tool_registry().get("read").unwrap().tool.clone();
    assert_eq!(read.description(), "Read, logged");
    // … and reaches the built-in through `tools.execute`.
    let result = read
        .execute(
            "c1",
            json!({"path": "notes.txt"}),
            pi_agent_core::ToolContext::detached(),
        )
        .await
        .unwrap();
    let text: Vec<String> = result
        .content
        .iter()
        .filter_map(|block| match block {
            pi_agent_core::ContentBlock::Text(text) => Some(text.text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(text, ["logged: the built-in read\n"]);
    let completions = built.extensions.complete("pick", "al").await.unwrap();
    assert_eq!(
        completions,
        [
            json!({"value": "alpha", "label": "alpha"}),
            json!({"value": "alps", "label": "alps"})
        ]
    );
    assert_eq!(built.extensions.complete("nope", "al").await, None);
    built.extensions.shutdown().await;
}

/// A listener whose token fires stops waiting — and the Node host hears `cancel {requestId}`:
/// the handler waiting on `ctx.signal` sees the abort (pi aborts the signal it handed out).
#[tokio::test(flavor = "multi_thread")]
async fn an_aborted_event_aborts_the_handlers_signal_in_the_node_host() {
    if crate::extension_support::node().await.is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("aborted.txt");
    let source = format!(
        r#"import {{ writeFileSync }} from "node:fs";
export default function (pi) {{
  pi.on("tool_call", async (_event, ctx) => {{
    await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, {{ once: true }}));
    writeFileSync({marker}, `aborted: ${{ctx.signal.aborted}}`);
  }});
}}
"#,
        marker = serde_json::to_string(&marker.display().to_string()).unwrap()
    );
    let path = crate::extension_support::write(dir.path(), "waits.mjs", &source);
    let entry = ExtensionEntry {
        path,
        kind: EntryKind::Script,
        origin: Origin::Cli,
        base_dir: None,
    };
    let extensions = Extensions::load(vec![entry], &ToolApi::new(dir.path()), LoadOptions::default()).await;
    assert!(extensions.load_errors().is_empty(), "{:?}", extensions.load_errors());
    let listeners = extensions.runner().listeners("tool_call");
    assert_eq!(listeners.len(), 1);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let event = json!({"type": "tool_call", "toolCallId": "c1", "toolName": "bash", "input": {"command": "ls"}});
    assert_eq!(listeners[0].handle(&event, &cancel).await, Ok(None));
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    // Until the whole line is there (the file exists a moment before its text does).
    while std::fs::read_to_string(&marker).ok().as_deref() != Some("aborted: true")
        && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(
        std::fs::read_to_string(&marker).ok().as_deref(),
        Some("aborted: true"),
        "the handler never saw its signal abort"
    );
    extensions.shutdown().await;
}

/// Two extensions in one Node host: the error of the second one's handler names that extension,
/// not the first one of the process (the host says which in `data.extension`).
#[tokio::test(flavor = "multi_thread")]
async fn a_failing_handler_is_named_by_its_own_extension_in_a_shared_host() {
    if crate::extension_support::node().await.is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let quiet = crate::extension_support::write(
        dir.path(),
        "quiet.mjs",
        "export default function (pi) { pi.on(\"tool_call\", () => undefined); }\n",
    );
    let broken = crate::extension_support::write(
        dir.path(),
        "broken.mjs",
        "export default function (pi) { pi.on(\"tool_call\", () => { throw new Error(\"gate broke\"); }); }\n",
    );
    let entries = [quiet, broken.clone()]
        .into_iter()
        .map(|path| ExtensionEntry {
            path,
            kind: EntryKind::Script,
            origin: Origin::Cli,
            base_dir: None,
        })
        .collect();
    let extensions = Extensions::load(entries, &ToolApi::new(dir.path()), LoadOptions::default()).await;
    assert!(extensions.load_errors().is_empty(), "{:?}", extensions.load_errors());
    let listeners = extensions.runner().listeners("tool_call");
    assert_eq!(listeners.len(), 1, "one process");
    assert!(extensions.runner().listens("tool_call"));
    assert!(
        !extensions.runner().listens("context"),
        "no extension listens to context"
    );
    let event = json!({"type": "tool_call", "toolCallId": "c1", "toolName": "bash", "input": {"command": "ls"}});
    assert_eq!(
        listeners[0].handle(&event, &CancellationToken::new()).await,
        Err(ExtensionError::Handler {
            extension: broken.display().to_string(),
            event: "tool_call".into(),
            message: "gate broke".into(),
        })
    );
    extensions.shutdown().await;
}

/// `ctx.newSession` that another handler cancels (`session_before_switch` → `{cancel: true}`)
/// answers `{cancelled: true}`, as pi's does — not an error.
#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_new_session_answers_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let body = r#"
@ext.on("session_before_switch")
def keep(event, ctx):
    return {"cancel": True}

@ext.command("fresh")
def fresh(args, ctx):
    ext.append_entry("answer", ctx.new_session())
"#;
    let root = python_extension(dir.path(), "keeper", body, Some(5000));
    let faux = FauxModel::new();
    let built = SessionBuilder::new(dir.path(), faux.model())
        .stream_fn(Arc::new(faux.clone()))
        .context_files(false)
        .extensions(ExtensionSetup {
            paths: vec![root],
            no_extensions: true,
            resolved: Vec::new(),
        })
        .build()
        .await
        .unwrap();
    let extensions = built.extensions;
    assert!(built.extension_errors.is_empty(), "{:?}", built.extension_errors);
    let app = App::new(
        built.session,
        SessionManager::in_memory(dir.path()),
        Arc::new(ModelRegistry::builtin()),
        None,
        Arc::new(|warning| panic!("{warning}")),
    );
    extensions.attach(&app);
    app.set_extension_runner(Some(extensions.runner()));
    assert_eq!(extensions.run_command("/fresh").await, Some(Ok(())));
    let answers: Vec<Value> = app.with_store(|store| {
        store
            .entries()
            .iter()
            .filter_map(|entry| match &entry.kind {
                pi_session_store::EntryKind::Custom { custom_type, data } if custom_type == "answer" => data.clone(),
                _ => None,
            })
            .collect()
    });
    assert_eq!(answers, [json!({"cancelled": true})]);
    extensions.shutdown().await;
}

/// `pi.sendUserMessage` while idle is a prompt with source "extension", as in pi: the `input`
/// event sees it (and may rewrite it) before the model does.
#[tokio::test(flavor = "multi_thread")]
async fn a_user_message_an_extension_sends_goes_through_input() {
    let dir = tempfile::tempdir().unwrap();
    let body = r#"
@ext.on("input")
def rewrite(event, ctx):
    if event.get("source") == "extension":
        return {"action": "transform", "text": event["text"] + " (via input)"}
    return None

@ext.command("nudge")
def nudge(args, ctx):
    ext.send_user_message("hello")
"#;
    let root = python_extension(dir.path(), "nudger", body, Some(5000));
    let faux = FauxModel::new();
    faux.set_responses([pi_agent_core::faux::faux_assistant_text("Hi.")]);
    let built = SessionBuilder::new(dir.path(), faux.model())
        .stream_fn(Arc::new(faux.clone()))
        .context_files(false)
        .extensions(ExtensionSetup {
            paths: vec![root],
            no_extensions: true,
            resolved: Vec::new(),
        })
        .build()
        .await
        .unwrap();
    let extensions = built.extensions;
    let app = App::new(
        built.session,
        SessionManager::in_memory(dir.path()),
        Arc::new(ModelRegistry::builtin()),
        None,
        Arc::new(|warning| panic!("{warning}")),
    );
    extensions.attach(&app);
    app.set_extension_runner(Some(extensions.runner()));
    assert_eq!(extensions.run_command("/nudge").await, Some(Ok(())));
    for _ in 0..200 {
        if app.last_assistant_text().is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(app.last_assistant_text().as_deref(), Some("Hi."));
    let sent: Vec<String> = app.user_messages().into_iter().map(|m| m.text).collect();
    assert_eq!(sent, ["hello (via input)"]);
    extensions.shutdown().await;
}

/// pi-ai's `complete()` from an extension (`ai.complete`): the session's model called with the
/// extension's context through pi's model boundary (the faux model here), the answer returned as
/// pi's `AssistantMessage`; a model the registry does not know rejects.
#[tokio::test(flavor = "multi_thread")]
async fn an_extension_calls_the_model_with_complete() {
    if crate::extension_support::node().await.is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let entry = crate::extension_support::write(
        dir.path(),
        "ask.mjs",
        r#"import { complete } from "@mariozechner/pi-ai";
export default function (pi) {
  pi.registerCommand("ask", {
    handler: async (args, ctx) => {
      const auth = await ctx.modelRegistry.getApiKeyAndHeaders(ctx.model);
      const response = await complete(
        ctx.model,
        { systemPrompt: "Be brief.", messages: [{ role: "user", content: [{ type: "text", text: args }], timestamp: Date.now() }] },
        { apiKey: auth.apiKey, maxTokens: 100 },
      );
      const text = response.content.filter((c) => c.type === "text").map((c) => c.text).join("");
      let missing;
      try {
        await complete({ provider: "nowhere", id: "none" }, { messages: [] });
      } catch (error) {
        missing = error.message;
      }
      pi.appendEntry("answer", { role: response.role, text, stop: response.stopReason, ok: auth.ok, missing });
    },
  });
}
"#,
    );
    let faux = FauxModel::new();
    faux.set_responses([pi_agent_core::faux::faux_assistant_text("Forty-two.")]);
    let built = SessionBuilder::new(dir.path(), faux.model())
        .stream_fn(Arc::new(faux.clone()))
        .context_files(false)
        .extensions(ExtensionSetup {
            paths: vec![entry],
            no_extensions: true,
            resolved: Vec::new(),
        })
        .build()
        .await
        .unwrap();
    let extensions = built.extensions;
    assert!(extensions.load_errors().is_empty(), "{:?}", extensions.load_errors());
    let app = App::new(
        built.session,
        SessionManager::in_memory(dir.path()),
        Arc::new(ModelRegistry::builtin()),
        None,
        Arc::new(|warning| panic!("{warning}")),
    );
    extensions.attach(&app);
    app.set_extension_runner(Some(extensions.runner()));
    assert_eq!(extensions.run_command("/ask What is the answer?").await, Some(Ok(())));
    let mut answer = None;
    for _ in 0..200 {
        answer = app.with_store(|store| {
            store.entries().iter().find_map(|entry| match &entry.kind {
                pi_session_store::EntryKind::Custom { custom_type, data } if custom_type == "answer" => data.clone(),
                _ => None,
            })
        });
        if answer.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(
        answer,
        Some(json!({
            "role": "assistant",
            "text": "Forty-two.",
            "stop": "stop",
            "ok": true,
            "missing": "Model not found: nowhere/none",
        }))
    );
    assert_eq!(faux.call_count(), 1);
    assert!(
        app.session().agent().messages().is_empty(),
        "a complete() call stays out of the transcript"
    );
    extensions.shutdown().await;
}
