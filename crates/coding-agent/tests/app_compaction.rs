//! Compaction in an [`App`] on a faux model with a small context window (issue 17): automatic
//! compaction after a run, the [`CompactionHook`] seam (cancel, supply a summary, told after), and
//! — beyond pi — a pending `resolve` preview and its reminder surviving a compaction.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::{Arc, Mutex};

use pi_agent_core::AgentMessage;
use pi_agent_core::faux::{FauxModel, FauxResponse, faux_assistant_message, faux_assistant_text, faux_tool_call};
use pi_coding_agent::compaction::{
    BeforeCompact, BeforeCompactEvent, CompactionHook, CompactionResult, CompactionSettings,
    SUMMARIZATION_SYSTEM_PROMPT,
};
use pi_coding_agent::{App, SessionEvent};
use pi_session_store::{EntryKind, SessionEntry, SessionManager};
use serde_json::json;

use crate::support::faux_session;

type Log = Arc<Mutex<Vec<String>>>;

/// A faux model whose context window is 2000 tokens.
fn small_faux() -> FauxModel {
    let mut model = FauxModel::new().model();
    model.context_window = 2000;
    FauxModel::builder().model(model).build()
}

/// An app over `faux` (tools `tools`) with these compaction settings; the texts of its events.
fn app(dir: &Path, faux: &FauxModel, tools: &[&str], settings: CompactionSettings) -> (App, Log) {
    let session = faux_session(dir, faux, tools);
    let app = App::new(
        session,
        SessionManager::in_memory(dir),
        Arc::new(pi_ai::ModelRegistry::builtin()),
        None,
        Arc::new(|warning| panic!("{warning}")),
    );
    app.set_compaction_settings(settings);
    let events: Log = Arc::default();
    let sink = events.clone();
    // The subscription lives as long as the session.
    std::mem::forget(app.session().subscribe(move |event| match event {
        SessionEvent::CompactionStart { reason } => sink.lock().unwrap().push(format!("start {}", reason.as_str())),
        SessionEvent::CompactionEnd {
            reason,
            result,
            aborted,
            will_retry,
            error_message,
        } => sink.lock().unwrap().push(format!(
            "end {} result={} aborted={aborted} willRetry={will_retry} error={error_message:?}",
            reason.as_str(),
            result.as_ref().map_or("none".to_owned(), |r| r.summary.clone()),
        )),
        _ => {}
    }));
    (app, events)
}

/// A faux response answering summary requests (recording their prompt text) with `summary`.
fn summary_response(summary: &'static str, prompts: Log) -> FauxResponse {
    FauxResponse::factory(move |request| {
        assert_eq!(request.context.system_prompt, SUMMARIZATION_SYSTEM_PROMPT);
        assert!(request.context.tools.is_empty(), "no tools in a summary request");
        let AgentMessage::User(user) = &request.context.messages[0] else {
            panic!("a user message")
        };
        prompts.lock().unwrap().push(user.content.text());
        faux_assistant_text(summary)
    })
}

fn compactions(app: &App) -> Vec<SessionEntry> {
    app.with_store(|store| {
        store
            .entries()
            .iter()
            .filter(|e| matches!(e.kind, EntryKind::Compaction(_)))
            .cloned()
            .collect()
    })
}

fn settings(reserve: u64, keep: u64) -> CompactionSettings {
    CompactionSettings {
        enabled: true,
        reserve_tokens: reserve,
        keep_recent_tokens: keep,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_past_the_threshold_is_compacted_and_the_context_rebuilt_from_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    let faux = small_faux();
    // Threshold: 2000 − 1999 = 1 token; every faux answer reports more than that.
    let (app, events) = app(dir.path(), &faux, &["read"], settings(1999, 5));
    let prompts: Log = Arc::default();
    app.set_auto_compaction(false);
    faux.set_responses([
        faux_assistant_text("first answer"),
        faux_assistant_text("second answer"),
    ]);
    app.prompt("one").await.unwrap();
    app.prompt("two").await.unwrap();
    assert!(events.lock().unwrap().is_empty(), "auto-compaction is off");
    // The check that follows every run, with auto-compaction back on.
    app.set_auto_compaction(true);
    faux.set_responses([summary_response("## Goal\nCount to two.", prompts.clone())]);
    app.after_run().await;
    assert_eq!(
        *events.lock().unwrap(),
        [
            "start threshold",
            "end threshold result=## Goal\nCount to two. aborted=false willRetry=false error=None"
        ]
    );
    // "second answer" (4 tokens) + "two" (1) reach keepRecentTokens 5: the cut is at "two".
    let prompt = prompts.lock().unwrap()[0].clone();
    assert!(prompt.starts_with("<conversation>\n[User]: one\n\n[Assistant]: first answer\n</conversation>\n\nThe messages above are a conversation to summarize."), "{prompt}");
    let [entry] = &compactions(&app)[..] else {
        panic!("one compaction")
    };
    let EntryKind::Compaction(compaction) = &entry.kind else {
        unreachable!()
    };
    assert_eq!(compaction.summary, "## Goal\nCount to two.");
    assert_eq!(compaction.from_hook, Some(false));
    assert_eq!(compaction.details, Some(json!({"readFiles": [], "modifiedFiles": []})));
    // The agent's context is the file's: the summary, then the kept messages.
    let messages = app.session().agent().messages();
    let roles: Vec<&str> = messages.iter().map(AgentMessage::role).collect();
    assert_eq!(roles, ["compactionSummary", "user", "assistant"]);
    let usage = app.context_usage().unwrap();
    assert_eq!((usage.tokens, usage.context_window, usage.percent), (None, 2000, None));
}

/// A hook that answers `answer` and notes what it saw.
struct Hook {
    answer: BeforeCompact,
    seen: Log,
}

#[async_trait::async_trait]
impl CompactionHook for Hook {
    async fn before_compact(&self, event: BeforeCompactEvent<'_>) -> BeforeCompact {
        self.seen.lock().unwrap().push(format!(
            "before {} instructions={:?} summarize={} branch={}",
            event.reason.as_str(),
            event.custom_instructions,
            event.preparation.messages_to_summarize.len(),
            event.branch_entries.len(),
        ));
        self.answer.clone()
    }

    async fn after_compact(&self, entry: &SessionEntry, from_hook: bool) {
        self.seen
            .lock()
            .unwrap()
            .push(format!("after {} from_hook={from_hook}", entry.entry_type()));
    }
}

async fn two_turns(app: &App, faux: &FauxModel) {
    faux.set_responses([
        faux_assistant_text("first answer"),
        faux_assistant_text("second answer"),
    ]);
    app.prompt("one").await.unwrap();
    app.prompt("two").await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hook_can_cancel_a_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let faux = small_faux();
    let (app, events) = app(dir.path(), &faux, &["read"], settings(16384, 5));
    app.set_auto_compaction(false);
    two_turns(&app, &faux).await;
    let seen: Log = Arc::default();
    app.add_compaction_hook(Arc::new(Hook {
        answer: BeforeCompact::Cancel,
        seen: seen.clone(),
    }));
    let calls = faux.call_count();
    let error = app.compact(Some("keep the numbers")).await.unwrap_err();
    assert_eq!(error.to_string(), "Compaction cancelled");
    assert_eq!(
        *events.lock().unwrap(),
        [
            "start manual",
            "end manual result=none aborted=true willRetry=false error=None"
        ]
    );
    // u, a, u, a on the branch; the hook saw the instructions.
    assert_eq!(
        *seen.lock().unwrap(),
        ["before manual instructions=Some(\"keep the numbers\") summarize=2 branch=4"]
    );
    assert_eq!(faux.call_count(), calls, "no summary was asked for");
    assert!(compactions(&app).is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hook_can_supply_the_summary_and_hears_about_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    let faux = small_faux();
    let (app, events) = app(dir.path(), &faux, &["read"], settings(16384, 5));
    app.set_auto_compaction(false);
    two_turns(&app, &faux).await;
    let first_kept = app.with_store(|store| store.entries()[2].id.clone());
    let seen: Log = Arc::default();
    app.add_compaction_hook(Arc::new(Hook {
        answer: BeforeCompact::Supply(CompactionResult {
            summary: "From the extension.".into(),
            first_kept_entry_id: first_kept.clone(),
            tokens_before: 42,
            details: Some(json!({"custom": true})),
        }),
        seen: seen.clone(),
    }));
    let calls = faux.call_count();
    let result = app.compact(None).await.unwrap();
    assert_eq!(result.summary, "From the extension.");
    assert_eq!(faux.call_count(), calls, "the model was not asked");
    let [entry] = &compactions(&app)[..] else {
        panic!("one compaction")
    };
    assert_eq!(
        serde_json::to_value(entry).unwrap()["fromHook"],
        true,
        "written as an extension's compaction"
    );
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "before manual instructions=None summarize=2 branch=4",
            "after compaction from_hook=true"
        ]
    );
    assert_eq!(events.lock().unwrap().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pending_preview_and_its_reminder_survive_a_compaction() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.ts"), "oldCall(1);\n").unwrap();
    let faux = small_faux();
    let (app, _events) = app(dir.path(), &faux, &["ast_edit"], settings(16384, 1));
    app.set_auto_compaction(false);
    faux.set_responses([
        faux_assistant_text("Nothing yet."),
        faux_assistant_message(vec![faux_tool_call(
            "stage-1",
            "ast_edit",
            json!({"ops": [{"pat": "oldCall($A)", "out": "newCall($A)"}], "paths": ["a.ts"]}),
        )]),
        // Forced to resolve, the model answers in text; the preview stays pending.
        faux_assistant_text("Please review the preview."),
        faux_assistant_text("Still waiting for you."),
    ]);
    app.prompt("hello").await.unwrap();
    app.prompt("rename it").await.unwrap();
    app.prompt("anything else?").await.unwrap();
    assert!(app.session().pending_actions().has_pending());
    let prompts: Log = Arc::default();
    // The cut lands on the staging call, inside its turn: the history and the turn's beginning
    // are summarized apart.
    faux.set_responses([
        summary_response("## Goal\nRename.", prompts.clone()),
        summary_response("## Original Request\nRename.", prompts.clone()),
    ]);
    app.compact(None).await.unwrap();
    // keepRecentTokens 1 alone would keep only the last answer; the call that staged the preview,
    // its result and the reminder stay instead, and are not summarized.
    let summarized = prompts.lock().unwrap().join("\n");
    assert!(!summarized.contains("ast_edit("), "{summarized}");
    assert!(summarized.contains("[User]: hello"), "{summarized}");
    assert!(summarized.contains("[User]: rename it"), "{summarized}");
    let messages = app.session().agent().messages();
    let has_call = messages.iter().any(|m| {
        m.as_assistant()
            .is_some_and(|a| a.tool_calls().any(|c| c.id == "stage-1"))
    });
    let has_result = messages
        .iter()
        .any(|m| matches!(m, AgentMessage::ToolResult(r) if r.tool_call_id == "stage-1"));
    let has_reminder = messages.iter().any(|m| match m {
        AgentMessage::Custom(c) => c.fields.get("customType").and_then(|v| v.as_str()) == Some("resolve-reminder"),
        _ => false,
    });
    assert!(has_call && has_result && has_reminder, "{messages:#?}");
    assert!(
        app.session().pending_actions().has_pending(),
        "compaction does not drop previews"
    );
}

/// The run an overflow compaction starts again is retried like any other when it fails with a
/// transient error (pi checks the retry first on every `agent_end`, the compaction after).
#[tokio::test]
async fn the_run_after_an_overflow_compaction_is_retried_on_a_transient_error() {
    let dir = tempfile::tempdir().unwrap();
    let faux = small_faux();
    let (app, events) = app(dir.path(), &faux, &["read"], settings(100, 1));
    app.session().set_retry_settings(pi_coding_agent::config::AgentRetry {
        enabled: true,
        max_retries: 3,
        base_delay_ms: 1,
    });
    let retries: Log = Arc::default();
    let sink = retries.clone();
    std::mem::forget(app.session().subscribe(move |event| {
        if let SessionEvent::AutoRetryStart { attempt, .. } = event {
            sink.lock().unwrap().push(format!("retry {attempt}"));
        }
    }));
    faux.set_responses([faux_assistant_text("first answer")]);
    app.prompt("one").await.unwrap();
    let prompts: Log = Arc::default();
    faux.set_responses([
        pi_agent_core::faux::faux_assistant_error("prompt is too long: 3000 tokens > 2000 maximum").into(),
        summary_response("## Goal\nAnswer.", prompts),
        pi_agent_core::faux::faux_assistant_error("503 Service Unavailable").into(),
        faux_assistant_text("recovered").into(),
    ]);
    app.prompt("two").await.unwrap();
    assert_eq!(
        events.lock().unwrap().first().map(String::as_str),
        Some("start overflow")
    );
    assert_eq!(*retries.lock().unwrap(), ["retry 1"]);
    let messages = app.session().agent().messages();
    let last = messages.last().and_then(AgentMessage::as_assistant).unwrap();
    let text: String = last
        .content
        .iter()
        .filter_map(pi_agent_core::ContentBlock::as_text)
        .collect();
    assert_eq!(text, "recovered");
}

/// A hook that holds the first compaction until it is let go.
struct Holding {
    entered: Arc<tokio::sync::Notify>,
    release: Arc<tokio::sync::Notify>,
    held: std::sync::atomic::AtomicBool,
}

#[async_trait::async_trait]
impl CompactionHook for Holding {
    async fn before_compact(&self, _event: BeforeCompactEvent<'_>) -> BeforeCompact {
        if !self.held.swap(true, std::sync::atomic::Ordering::SeqCst) {
            self.entered.notify_one();
            self.release.notified().await;
        }
        BeforeCompact::Proceed
    }
}

/// RPC answers `agent_end` before the compaction check that follows the run, so the next prompt
/// can arrive while that compaction runs: it waits for it instead of running beside it (which
/// sent its request in the middle of the compaction, against the context being replaced).
#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_sent_during_the_previous_prompts_compaction_waits_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let faux = small_faux();
    let (app, events) = app(dir.path(), &faux, &["read"], settings(1999, 5));
    let prompts: Log = Arc::default();
    app.set_auto_compaction(false);
    faux.set_responses([faux_assistant_text("first answer")]);
    app.prompt("one").await.unwrap();
    let (entered, release) = (
        Arc::new(tokio::sync::Notify::new()),
        Arc::new(tokio::sync::Notify::new()),
    );
    app.add_compaction_hook(Arc::new(Holding {
        entered: entered.clone(),
        release: release.clone(),
        held: std::sync::atomic::AtomicBool::new(false),
    }));
    // Auto-compaction comes on while "two" runs: the check after its run compacts (held).
    let switch = app.clone();
    faux.set_responses([
        FauxResponse::factory(move |_| {
            switch.set_auto_compaction(true);
            faux_assistant_text("second answer")
        }),
        summary_response("## Goal\nCount.", prompts.clone()),
        FauxResponse::from(faux_assistant_text("third answer")),
        summary_response("## Goal\nCount on.", prompts.clone()),
    ]);
    let first = tokio::spawn({
        let app = app.clone();
        async move { app.prompt("two").await }
    });
    // Limits: a compaction that never starts fails the test instead of holding CI.
    let limit = std::time::Duration::from_secs(20);
    tokio::time::timeout(limit, entered.notified())
        .await
        .expect("the threshold compaction starts");
    let calls = faux.call_count();
    let second = tokio::spawn({
        let app = app.clone();
        async move { app.prompt("three").await }
    });
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(faux.call_count(), calls, "the next prompt ran during the compaction");
    release.notify_one();
    let first = tokio::time::timeout(limit, first).await.expect("the first prompt ends");
    first.unwrap().unwrap();
    let second = tokio::time::timeout(limit, second)
        .await
        .expect("the second prompt ends");
    second.unwrap().unwrap();
    let events = events.lock().unwrap().clone();
    assert_eq!(
        events[..2],
        [
            "start threshold",
            "end threshold result=## Goal\nCount. aborted=false willRetry=false error=None"
        ]
    );
    assert_eq!(app.last_assistant_text().as_deref(), Some("third answer"));
}
