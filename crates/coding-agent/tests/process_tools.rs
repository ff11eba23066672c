//! Process tools end to end: real child processes (Python 3, standard library only) speaking the
//! protocol of `docs/custom-tools.md` — loading, calls, streamed updates, parallel calls,
//! cancellation, every failure mode, session events, pending actions through `resolve`, `ui.*`,
//! `exec`, and the examples driven by the faux model.

#![allow(clippy::unwrap_used)]

use crate::process_support;
use crate::support::faux_session;

use std::path::Path;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use pi_agent_core::faux::{FauxModel, FauxResponse, faux_assistant_message, faux_assistant_text, faux_tool_call};
use pi_agent_core::{AgentMessage, ToolChoice, ToolExecutionMode};
use pi_coding_agent::AgentSession;
use pi_coding_agent::App;
use pi_coding_agent::custom_tools::process::{load, load_spec};
use pi_coding_agent::custom_tools::{PENDING_STORE_UNAVAILABLE, SessionReason, ToolApi, ToolSessionEvent};
use pi_coding_agent::resolve::ResolveAction;
use pi_coding_agent::{NotifyKind, ToolUi};
use pi_session_store::{EntryKind, SessionManager};
use pi_test_support::scripted::{self, forced_choices};
use pi_test_support::tools::result_text;
use pi_test_support::wait::until;
use process_support::{ScriptedUi, Tools, context, example, load_example, probe, probe_with, script};
use serde_json::{Value, json};

fn api(dir: &Path) -> ToolApi {
    ToolApi::new(dir)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_hello_example_greets_through_the_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let tools = load_example("hello", &api(dir.path())).await;
    assert_eq!(tools.names(), ["hello"]);
    let hello = tools.get("hello");
    assert_eq!(hello.label(), "Hello");
    assert_eq!(hello.description(), "A simple greeting tool");
    assert_eq!(hello.parameters().schema()["required"], json!(["name"]));
    assert_eq!(hello.execution_mode(), None);
    let result = tools.call("hello", json!({"name": "pi"})).await.unwrap();
    assert_eq!(result_text(&result), "Hello, pi!");
    assert_eq!(result.details, json!({"greeted": "pi"}));
}

#[tokio::test(flavor = "multi_thread")]
async fn initialize_tells_the_process_cwd_ui_and_version_and_the_manifest_env_reaches_it() {
    let dir = tempfile::tempdir().unwrap();
    let tools = probe_with(
        &api(dir.path()),
        Duration::from_secs(60),
        &[("PROBE_ENV", "from the manifest")],
    )
    .await;
    let info = tools.call("info", json!({})).await.unwrap().details;
    assert_eq!(info["cwd"], json!(dir.path()));
    assert_eq!(info["hasUI"], json!(false));
    assert_eq!(info["piVersion"], json!(env!("CARGO_PKG_VERSION")));
    assert_eq!(info["env"], json!("from the manifest"));
}

#[tokio::test(flavor = "multi_thread")]
async fn updates_stream_while_the_call_runs() {
    let dir = tempfile::tempdir().unwrap();
    let tools = probe(&api(dir.path())).await;
    let (ctx, updates, _) = context();
    let result = tools
        .get("progress")
        .execute("p1", json!({"steps": 3}), ctx)
        .await
        .unwrap();
    assert_eq!(result_text(&result), "done");
    let seen: Vec<(String, Value)> = updates
        .lock()
        .unwrap()
        .iter()
        .map(|u| (result_text(u), u.details.clone()))
        .collect();
    assert_eq!(
        seen,
        [
            ("step 1".to_owned(), json!({"step": 1})),
            ("step 2".to_owned(), json!({"step": 2})),
            ("step 3".to_owned(), json!({"step": 3}))
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn two_calls_are_in_flight_on_one_process_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let tools = probe(&api(dir.path())).await;
    let meet = tools.get("meet");
    // Each call returns only once the other one is running in the same process.
    let (a, b) = tokio::join!(
        meet.execute("m1", json!({}), context().0),
        meet.execute("m2", json!({}), context().0)
    );
    assert_eq!(result_text(&a.unwrap()), "met");
    assert_eq!(result_text(&b.unwrap()), "met");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_aborted_call_returns_at_once_and_the_process_is_told() {
    let dir = tempfile::tempdir().unwrap();
    let tools = probe(&api(dir.path())).await;
    let (ctx, updates, cancel) = context();
    let tool = tools.get("wait_cancel");
    let call = tokio::spawn(async move { tool.execute("w1", json!({}), ctx).await });
    until("the first update", || !updates.lock().unwrap().is_empty()).await;
    cancel.cancel();
    let error = call.await.unwrap().unwrap_err();
    assert_eq!(error.message(), "Operation aborted");
    // The process got `cancel` (its late answer "too late" was ignored) and still serves.
    let log = tools.call("log", json!({"min": 1})).await.unwrap();
    assert_eq!(result_text(&log), "cancelled w1");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_aborted_call_kills_the_command_it_runs_through_exec() {
    let dir = tempfile::tempdir().unwrap();
    let tools = probe(&api(dir.path())).await;
    let marker = dir.path().join("started");
    let (ctx, _, cancel) = context();
    let tool = tools.get("exec_sleep");
    let args = json!({"marker": marker});
    let call = tokio::spawn(async move { tool.execute("e1", args, ctx).await });
    until("the command's marker file", || marker.exists()).await;
    cancel.cancel();
    assert_eq!(call.await.unwrap().unwrap_err().message(), "Operation aborted");
    let log = tools.call("log", json!({"min": 1})).await.unwrap();
    assert_eq!(result_text(&log), "exec killed=True");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crash_fails_every_call_in_flight_then_the_next_call_restarts_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let tools = probe(&api(dir.path())).await;
    for tool in &tools.0 {
        tool.on_session(&ToolSessionEvent::empty(SessionReason::Start)).await;
    }
    let before = tools.call("echo", json!({"text": "a"})).await.unwrap().details["pid"].clone();
    let (ctx, updates, _) = context();
    let waiting = tools.get("wait_cancel");
    let in_flight = tokio::spawn(async move { waiting.execute("w1", json!({}), ctx).await });
    until("the first update", || !updates.lock().unwrap().is_empty()).await;

    let error = tools
        .call("crash", json!({"message": "RuntimeError: disk on fire"}))
        .await
        .unwrap_err();
    assert_eq!(
        error.message(),
        "Tool \"crash\" process exited unexpectedly (exit code 3): RuntimeError: disk on fire"
    );
    assert_eq!(
        in_flight.await.unwrap().unwrap_err().message(),
        "Tool \"wait_cancel\" process exited unexpectedly (exit code 3): RuntimeError: disk on fire"
    );

    let after = tools.call("info", json!({})).await.unwrap().details;
    assert_ne!(after["pid"], before, "a new process serves the next call");
    // The new process was given the last session event again, so it can rebuild its state.
    assert_eq!(
        after["sessions"],
        json!([{"reason": "start", "entries": 0, "hasUI": false}])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_past_the_manifest_timeout_kills_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let tools = probe_with(&api(dir.path()), Duration::from_millis(500), &[]).await;
    let error = tools.call("hang", json!({})).await.unwrap_err();
    assert_eq!(error.message(), "Tool \"hang\" timed out after 0.5 s");
    assert_eq!(
        result_text(&tools.call("echo", json!({"text": "back"})).await.unwrap()),
        "back"
    );
}

/// A dialog slower than the call's time limit: answering it is pi's time, not the tool's.
struct SlowUi;

#[async_trait::async_trait]
impl ToolUi for SlowUi {
    fn has_ui(&self) -> bool {
        true
    }
    async fn select(&self, _title: &str, options: &[String]) -> Option<String> {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        options.first().cloned()
    }
    async fn confirm(&self, _title: &str, _message: &str) -> bool {
        false
    }
    async fn input(&self, _title: &str, _placeholder: Option<&str>) -> Option<String> {
        None
    }
    fn notify(&self, _message: &str, _kind: NotifyKind) {}
}

#[tokio::test(flavor = "multi_thread")]
async fn time_spent_answering_the_process_does_not_count_against_its_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let ui: Arc<dyn ToolUi> = Arc::new(SlowUi);
    let api = api(dir.path()).with_ui_slot(Arc::new(RwLock::new(ui)));
    let tools = probe_with(&api, Duration::from_secs(1), &[]).await;
    let result = tools.call("ui", json!({})).await.unwrap();
    assert_eq!(result.details["select"], json!("red"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_line_that_is_not_json_kills_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let tools = probe(&api(dir.path())).await;
    let error = tools.call("garbage", json!({})).await.unwrap_err();
    assert_eq!(error.message(), "Tool \"garbage\" wrote invalid JSON: this is not json");
    assert_eq!(
        result_text(&tools.call("echo", json!({"text": "back"})).await.unwrap()),
        "back"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn errors_and_invalid_results_reach_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let tools = probe(&api(dir.path())).await;
    let error = tools.call("fail", json!({})).await.unwrap_err();
    assert_eq!(error.message(), "It did not work.");
    assert_eq!(error.details(), Some(&json!({"why": "testing"})));
    let error = tools.call("bad_result", json!({})).await.unwrap_err();
    assert_eq!(
        error.message(),
        "Tool \"bad_result\" returned an invalid result: \"content\" must be an array"
    );
    let unknown = tools.call("unknown", json!({})).await.unwrap();
    assert_eq!(result_text(&unknown), "-32601 Method not found: nope");
}

fn write_manifest(dir: &Path, manifest: &str) {
    std::fs::write(dir.join("tool.json"), manifest).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_manifests_and_processes_that_cannot_start_name_the_file_or_command() {
    let dir = tempfile::tempdir().unwrap();
    let api = api(dir.path());
    let mut report = Vec::new();
    let cases = [
        None,
        Some("not json"),
        Some("{}"),
        Some(r#"{"command": "python3", "timeout": -5}"#),
        Some(r#"{"command": "./missing-tool", "args": ["--serve"]}"#),
    ];
    for manifest in cases {
        if let Some(manifest) = manifest {
            write_manifest(dir.path(), manifest);
        }
        let error = match load(dir.path(), &dir.path().join("tool.json"), &api).await {
            Ok(_) => "loaded".to_owned(),
            Err(error) => error.to_string().replace(&dir.path().display().to_string(), "<dir>"),
        };
        report.push(format!("{}\n  → {error}", manifest.unwrap_or("(no tool.json)")));
    }
    insta::assert_snapshot!("process_tools_bad_manifests", report.join("\n"));
}

#[tokio::test(flavor = "multi_thread")]
async fn processes_that_fail_initialize_are_load_errors() {
    let dir = tempfile::tempdir().unwrap();
    let api = api(dir.path());
    let answer = |result: &str| format!("read line; echo '{{\"jsonrpc\":\"2.0\",\"id\":1,{result}}}'; cat > /dev/null");
    let cases = [
        script(
            "quitter",
            "echo 'Traceback (most recent call last):' >&2; echo 'ImportError: no yaml' >&2; exit 1",
        ),
        script("refuser", &answer(r#""error":{"code":-32000,"message":"not today"}"#)),
        script("empty", &answer(r#""result":{"tools":[]}"#)),
        script(
            "nameless",
            &answer(r#""result":{"tools":[{"description":"d","parameters":{}}]}"#),
        ),
        script("chatty", "echo 'Hello! Starting up...'; cat > /dev/null"),
    ];
    let mut report = Vec::new();
    for spec in cases {
        let label = spec.label.clone();
        let error = load_spec(spec, &api)
            .await
            .err()
            .map_or_else(|| "loaded".to_owned(), |error| error.to_string());
        report.push(format!("{label}: {error}"));
    }
    insta::assert_snapshot!("process_tools_initialize_failures", report.join("\n"));
}

#[tokio::test(start_paused = true)]
async fn a_process_that_never_answers_initialize_is_given_ten_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let error = load_spec(script("silent", "cat > /dev/null"), &api(dir.path()))
        .await
        .err()
        .unwrap();
    assert_eq!(error.to_string(), "silent did not answer initialize within 10 s");
}

#[tokio::test(flavor = "multi_thread")]
async fn one_session_request_per_event_for_all_the_tools_of_a_process() {
    let dir = tempfile::tempdir().unwrap();
    let tools = probe(&api(dir.path())).await;
    assert!(tools.0.len() > 1);
    let start = ToolSessionEvent::empty(SessionReason::Start);
    let new = ToolSessionEvent::empty(SessionReason::New);
    for event in [&start, &new, &new] {
        // The session gives each event to every tool, one after another.
        for tool in &tools.0 {
            tool.on_session(event).await;
        }
    }
    let sessions = tools.call("info", json!({})).await.unwrap().details["sessions"].clone();
    let reasons: Vec<&str> = sessions
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["reason"].as_str().unwrap())
        .collect();
    // `new` was emitted twice, so it arrives twice; never once per tool.
    assert_eq!(reasons, ["start", "new", "new"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn shutdown_lets_the_process_clean_up_then_a_later_call_starts_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().display().to_string();
    let tools = probe_with(&api(dir.path()), Duration::from_secs(60), &[("PROBE_MARK_DIR", &mark)]).await;
    let pid = tools.call("info", json!({})).await.unwrap().details["pid"].clone();
    let shutdown = ToolSessionEvent::empty(SessionReason::Shutdown);
    for tool in &tools.0 {
        tool.on_session(&shutdown).await;
    }
    let cleaned_up = std::fs::read_to_string(dir.path().join("shutdown")).unwrap();
    assert_eq!(json!(cleaned_up.parse::<u64>().unwrap()), pid);
    let again = tools.call("info", json!({})).await.unwrap().details;
    assert_ne!(again["pid"], pid);
}

#[tokio::test(flavor = "multi_thread")]
async fn ui_requests_get_no_answer_without_a_ui_and_the_answers_with_one() {
    let dir = tempfile::tempdir().unwrap();
    let tools = probe(&api(dir.path())).await;
    let result = tools.call("ui", json!({})).await.unwrap();
    assert_eq!(result.details, json!({"select": null, "confirm": false, "input": null}));

    let ui = Arc::new(ScriptedUi::default());
    let slot: Arc<dyn ToolUi> = ui.clone();
    let api = api(dir.path()).with_ui_slot(Arc::new(RwLock::new(slot)));
    let tools = probe(&api).await;
    let result = tools.call("ui", json!({})).await.unwrap();
    assert_eq!(
        result.details,
        json!({"select": "green", "confirm": true, "input": "typed over your name"})
    );
    assert_eq!(
        *ui.notes.lock().unwrap(),
        [("probe says hi".to_owned(), NotifyKind::Warning)]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn exec_runs_in_the_session_cwd() {
    let dir = tempfile::tempdir().unwrap();
    let tools = probe(&api(dir.path())).await;
    let result = tools.call("exec", json!({})).await.unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(
        result.details,
        json!({"stdout": format!("{}\n", cwd.display()), "stderr": "err\n", "code": 2, "killed": false})
    );
}

fn session(cwd: &Path, faux: &FauxModel) -> AgentSession {
    faux_session(cwd, faux, &[])
}

fn activate(session: &AgentSession, tools: &Tools) {
    let (names, errors) = session.add_custom_tools(&tools.loaded());
    assert!(errors.is_empty(), "{errors:?}");
    session.set_active_tools(names).unwrap();
}

fn tool_results(session: &AgentSession) -> Vec<String> {
    session
        .agent()
        .messages()
        .iter()
        .filter_map(AgentMessage::as_tool_result)
        .map(|r| {
            format!(
                "{}{}: {}",
                r.tool_name,
                if r.is_error { " (error)" } else { "" },
                r.text()
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_5_mb_result_reaches_the_model_truncated_with_the_notice() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux);
    let tools = probe(&session.tool_api()).await;
    activate(&session, &tools);
    // 50,000 lines of 107 bytes: about 5 MB.
    faux.set_responses([
        scripted::tool_call("c1", "big", json!({"lines": 50_000, "width": 100})),
        scripted::text("done"),
    ]);
    session.prompt("something big").await.unwrap();
    let messages = session.agent().messages();
    let result = messages.iter().find_map(AgentMessage::as_tool_result).unwrap();
    assert!(!result.is_error);
    let text = result.text();
    let (kept, notice) = text.split_once("\n\n[").unwrap();
    assert_eq!(kept.lines().count(), 474);
    assert!(kept.starts_with("000001 xxxx") && kept.ends_with(&format!("000474 {}", "x".repeat(100))));
    let path = notice
        .strip_prefix("Showing lines 1-474 of 50000 (50.0KB limit). Full output: ")
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or_else(|| panic!("the notice: [{notice}"));
    // The whole text was saved where the notice says.
    let whole = std::fs::read_to_string(path).unwrap();
    assert_eq!(whole.len(), 50_000 * 108 - 1);
    assert!(whole.ends_with(&format!("050000 {}", "x".repeat(100))));
    std::fs::remove_file(path).unwrap();
    assert_eq!(faux.call_count(), 2, "the model read it and answered");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_huge_apply_result_reaches_the_model_through_resolve_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux);
    let tools = probe(&session.tool_api()).await;
    activate(&session, &tools);
    // 50,000 lines of 100 characters: about 5 MB.
    faux.set_responses([
        scripted::tool_call("c1", "stage", json!({"fail": false, "bigApply": 50_000})),
        scripted::tool_call("c2", "resolve", json!({"action": "apply", "reason": "Go."})),
        scripted::text("done"),
    ]);
    session.prompt("stage something big").await.unwrap();
    let messages = session.agent().messages();
    let result = messages
        .iter()
        .filter_map(AgentMessage::as_tool_result)
        .find(|r| r.tool_name == "resolve")
        .unwrap();
    assert!(!result.is_error, "{}", result.text());
    let text = result.text();
    let (kept, notice) = text.split_once("\n\n[").unwrap();
    assert!(kept.starts_with("applied 000001 aaa"));
    assert_eq!(kept.lines().count(), 506);
    let path = notice
        .strip_prefix("Showing lines 1-506 of 50000 (50.0KB limit). Full output: ")
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or_else(|| panic!("the notice: [{notice}"));
    assert_eq!(std::fs::metadata(path).unwrap().len(), 50_000 * 101 - 1);
    std::fs::remove_file(path).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn pending_actions_apply_and_discard_call_back_into_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux);
    let tools = probe(&session.tool_api()).await;
    // An apply that fails keeps the action; discarding it without a `reject` gets pi's text.
    assert_eq!(
        result_text(&tools.call("stage", json!({"fail": true})).await.unwrap()),
        "staged"
    );
    let store = session.pending_actions();
    assert_eq!(store.peek().unwrap().source_tool_name, "custom_tool");
    assert!(store.peek().unwrap().reject.is_none());
    let error = session.resolve_pending(ResolveAction::Apply, "Go.").await.unwrap_err();
    assert_eq!(error.message(), "Disk is full.");
    assert_eq!(store.len(), 1);
    let discarded = session.resolve_pending(ResolveAction::Discard, "No.").await.unwrap();
    assert_eq!(result_text(&discarded), "Discarded: Stage: probe. Reason: No.");
    assert!(store.is_empty());

    tools.call("stage", json!({"fail": false})).await.unwrap();
    let applied = session.resolve_pending(ResolveAction::Apply, "Go.").await.unwrap();
    assert_eq!(result_text(&applied), "applied: Go.");
    assert_eq!(applied.details["sourceResultDetails"], json!({"extra": null}));

    // Without a store the push fails, and so does the call.
    let tools = load_example("batch-rename-preview", &api(dir.path())).await;
    std::fs::write(dir.path().join("a.txt"), "a").unwrap();
    let args = json!({"renames": [{"from": "a.txt", "to": "b.txt"}]});
    let error = tools.call("batch_rename_preview", args).await.unwrap_err();
    assert_eq!(error.message(), PENDING_STORE_UNAVAILABLE);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_apply_that_raises_an_exception_reads_apply_failed_and_keeps_the_action() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux);
    let tools = probe(&session.tool_api()).await;
    tools
        .call("stage", json!({"fail": false, "crash": true}))
        .await
        .unwrap();
    let store = session.pending_actions();
    // pi_tool sends a raised exception as `kind: "exception"`, a `ToolError` as `kind: "tool"`.
    let error = session.resolve_pending(ResolveAction::Apply, "Go.").await.unwrap_err();
    assert_eq!(error.message(), "Apply failed: Out of memory.");
    assert_eq!(store.len(), 1);
    // A failing reject is reported without the prefix; the action stays as well.
    let error = session
        .resolve_pending(ResolveAction::Discard, "No.")
        .await
        .unwrap_err();
    assert_eq!(error.message(), "Cannot clean up.");
    assert_eq!(store.len(), 1);
}

async fn batch_rename(action: &str, reason: &str) -> (tempfile::TempDir, Vec<String>, Vec<Option<ToolChoice>>) {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a.txt", "b.txt"] {
        std::fs::write(dir.path().join(name), name).unwrap();
    }
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux);
    let tools = load_example("batch-rename-preview", &session.tool_api()).await;
    activate(&session, &tools);
    let renames = json!({"renames": [{"from": "a.txt", "to": "c.txt"}, {"from": "b.txt", "to": "d.txt"}]});
    let root = dir.path().to_path_buf();
    let resolve = json!({"action": action, "reason": reason});
    faux.set_responses([
        scripted::tool_call("c1", "batch_rename_preview", renames),
        FauxResponse::factory(move |_| {
            assert!(
                root.join("a.txt").exists() && !root.join("c.txt").exists(),
                "nothing renamed yet"
            );
            faux_assistant_message(vec![faux_tool_call("c2", "resolve", resolve.clone())])
        }),
        scripted::text("done"),
    ]);
    session.prompt("rename a and b").await.unwrap();
    let results = tool_results(&session);
    (dir, results, forced_choices(&faux))
}

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_rename_happens_only_when_resolve_applies_it() {
    let (dir, results, forced) = batch_rename("apply", "The new names are right.").await;
    assert_eq!(files(dir.path()), ["c.txt", "d.txt"]);
    assert_eq!(forced, [None, Some(ToolChoice::Tool("resolve".into())), None]);
    insta::assert_snapshot!("process_tools_batch_rename_applied", results.join("\n"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_discarded_batch_rename_leaves_the_files_alone() {
    let (dir, results, _) = batch_rename("discard", "Wrong names.").await;
    assert_eq!(files(dir.path()), ["a.txt", "b.txt"]);
    assert_eq!(
        results.last().unwrap(),
        "resolve: Discarded batch rename. Reason: Wrong names."
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_todo_example_rebuilds_its_list_from_the_branch_it_is_on() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux);
    let tools = load_example("todo", &session.tool_api()).await;
    activate(&session, &tools);
    let app = App::new(
        session,
        SessionManager::in_memory(dir.path()),
        Arc::new(pi_ai::ModelRegistry::builtin()),
        None,
        Arc::new(|_| {}),
    );
    app.notify_tools(SessionReason::Start, None).await;
    faux.set_responses([
        scripted::tool_call("t1", "todo", json!({"action": "add", "text": "milk"})),
        scripted::text("added"),
        scripted::tool_call("t2", "todo", json!({"action": "add", "text": "eggs"})),
        scripted::tool_call("t3", "todo", json!({"action": "toggle", "id": 1})),
        scripted::text("added"),
    ]);
    app.session().prompt("add milk").await.unwrap();
    app.session().prompt("add eggs, milk is done").await.unwrap();
    let list = |tools: &Tools| {
        let todo = tools.get("todo");
        async move { result_text(&todo.execute("l", json!({"action": "list"}), context().0).await.unwrap()) }
    };
    assert_eq!(list(&tools).await, "[x] #1: milk\n[ ] #2: eggs");

    // Forking before the second prompt: the branch holds only the first `add`.
    let second_prompt = app.with_store(|store| {
        let users = store
            .entries()
            .iter()
            .filter(|e| matches!(e.kind, EntryKind::Message(AgentMessage::User(_))));
        users.map(|e| e.id.clone()).nth(1).unwrap()
    });
    app.fork(&second_prompt).await.unwrap();
    assert_eq!(list(&tools).await, "[ ] #1: milk");

    app.new_session(None).await.unwrap();
    assert_eq!(list(&tools).await, "No todos");
}

async fn play_tic_tac_toe(tools: &Tools) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux);
    activate(&session, tools);
    let call = |id: &str, action: &str| faux_tool_call(id, "tic_tac_toe", json!({"action": action}));
    faux.set_responses([
        faux_assistant_message(vec![
            call("c1", "move_down"),
            call("c2", "move_right"),
            call("c3", "play"),
        ]),
        faux_assistant_text("Your turn."),
    ]);
    session.prompt("Play the centre.").await.unwrap();
    let play = tool_results(&session).pop().unwrap();
    let board = result_text(&tools.call("tic_tac_toe_see_board", json!({})).await.unwrap());
    (play, board)
}

#[tokio::test(flavor = "multi_thread")]
async fn tic_tac_toe_moves_run_in_order_when_the_tool_is_sequential() {
    let dir = tempfile::tempdir().unwrap();
    let tools = load_example("tic-tac-toe", &api(dir.path())).await;
    assert_eq!(
        tools.get("tic_tac_toe").execution_mode(),
        Some(ToolExecutionMode::Sequential)
    );
    let (play, board) = play_tic_tac_toe(&tools).await;
    assert_eq!(
        play,
        "tic_tac_toe: Placed O at (1, 1). Cursor reset to (0, 0). X played (0, 0). Status: playing."
    );
    insta::assert_snapshot!("process_tools_tic_tac_toe_sequential", board);
}

#[tokio::test(flavor = "multi_thread")]
async fn tic_tac_toe_plays_the_wrong_cell_when_the_same_tool_is_parallel() {
    // The example unchanged, declared parallel through its environment variable.
    let dir = tempfile::tempdir().unwrap();
    let script = example("tic-tac-toe").join("tool.py");
    let manifest = json!({
        "command": "python3",
        "args": [script],
        "env": {"TIC_TAC_TOE_MODE": "parallel"}
    });
    write_manifest(dir.path(), &manifest.to_string());
    let tools = process_support::Tools(
        load(dir.path(), &dir.path().join("tool.json"), &api(dir.path()))
            .await
            .unwrap(),
    );
    assert_eq!(
        tools.get("tic_tac_toe").execution_mode(),
        Some(ToolExecutionMode::Parallel)
    );
    let (play, board) = play_tic_tac_toe(&tools).await;
    // `play` has no delay, so it finished before the two moves: (0, 0) was marked.
    assert_eq!(
        play,
        "tic_tac_toe: Placed O at (0, 0). Cursor reset to (0, 0). X played (0, 1). Status: playing."
    );
    insta::assert_snapshot!("process_tools_tic_tac_toe_parallel", board);
}
