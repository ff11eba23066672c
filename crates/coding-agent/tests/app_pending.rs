//! Whatever drops the pending previews of a session — a new session, a switch, a fork, a move in
//! the tree — first tells each one through its `reject` callback, with a reason, so tools with side
//! state hear that their preview is gone (issue 13, defect 6).

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::{Arc, Mutex};

use pi_agent_core::ToolResult;
use pi_agent_core::faux::{FauxModel, faux_assistant_text};
use pi_coding_agent::App;
use pi_coding_agent::resolve::{PendingAction, PendingError};
use pi_session_store::{EntryKind, SessionManager};
use pi_test_support::session_files::{self, header, message, user_message};

use crate::support::faux_session;

type Log = Arc<Mutex<Vec<String>>>;

/// An app over a faux session with an in-memory session holding one prompt, and the warnings.
async fn app(dir: &Path, faux: &FauxModel) -> (App, Log) {
    let session = faux_session(dir, faux, &["read"]);
    let warnings: Log = Arc::default();
    let sink = warnings.clone();
    let app = App::new(
        session,
        SessionManager::in_memory(dir),
        Arc::new(pi_ai::ModelRegistry::builtin()),
        None,
        Arc::new(move |warning| sink.lock().unwrap().push(warning)),
    );
    faux.set_responses([faux_assistant_text("hi")]);
    app.session().prompt("hello").await.unwrap();
    (app, warnings)
}

/// Stages three previews: one whose reject records its reason, one without reject, one whose reject
/// fails. Returns the log of reject calls.
fn stage_three(app: &App) -> Log {
    let log: Log = Arc::default();
    let store = app.session().pending_actions();
    let recorded = log.clone();
    store.push(
        PendingAction::new("Recorded", "t", |_, _| async { Ok(ToolResult::text("applied")) }).with_reject(
            move |reason, _| {
                recorded.lock().unwrap().push(format!("Recorded: {reason}"));
                async { Ok(Some(ToolResult::text("cleaned up"))) }
            },
        ),
    );
    store.push(PendingAction::new("Plain", "t", |_, _| async {
        Ok(ToolResult::text("applied"))
    }));
    let failing = log.clone();
    store.push(
        PendingAction::new("Failing", "t", |_, _| async { Ok(ToolResult::text("applied")) }).with_reject(
            move |reason, _| {
                failing.lock().unwrap().push(format!("Failing: {reason}"));
                async { Err(PendingError::Other("lock file busy".into())) }
            },
        ),
    );
    log
}

fn assert_all_rejected(app: &App, log: &Log, warnings: &Log, reason: &str) {
    assert!(!app.session().pending_actions().has_pending());
    assert!(app.session().tool_choice_queue().is_empty());
    // Newest first, as `resolve` would have taken them; a failing reject does not stop the others.
    assert_eq!(
        *log.lock().unwrap(),
        [format!("Failing: {reason}"), format!("Recorded: {reason}")]
    );
    assert_eq!(
        *warnings.lock().unwrap(),
        ["pi: discarding the pending preview \"Failing\" failed: lock file busy"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_session_rejects_the_pending_previews() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let (app, warnings) = app(dir.path(), &faux).await;
    let log = stage_three(&app);
    app.new_session(None).await.unwrap();
    assert_all_rejected(&app, &log, &warnings, "New session started.");
}

#[tokio::test(flavor = "multi_thread")]
async fn switching_sessions_rejects_the_pending_previews() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let (app, warnings) = app(dir.path(), &faux).await;
    let other = dir.path().join("other.jsonl");
    let lines = [
        header("other", "2025-01-01T00:00:00.000Z", dir.path()),
        message("m1", None, "2025-01-01T00:00:01.000Z", user_message("earlier", 1)),
    ];
    std::fs::write(&other, session_files::jsonl(&lines)).unwrap();
    let log = stage_three(&app);
    app.switch_session(&other).await.unwrap();
    assert_all_rejected(&app, &log, &warnings, "Session switched.");
}

#[tokio::test(flavor = "multi_thread")]
async fn forking_rejects_the_pending_previews() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let (app, warnings) = app(dir.path(), &faux).await;
    let first = first_user_entry(&app);
    let log = stage_three(&app);
    app.fork(&first).await.unwrap();
    assert_all_rejected(&app, &log, &warnings, "Session forked.");
}

#[tokio::test(flavor = "multi_thread")]
async fn moving_in_the_tree_rejects_the_pending_previews() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let (app, warnings) = app(dir.path(), &faux).await;
    let first = first_user_entry(&app);
    let log = stage_three(&app);
    app.navigate(&first).await.unwrap();
    assert_all_rejected(&app, &log, &warnings, "Moved to another point of the session tree.");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_change_of_session_keeps_the_previews() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let (app, _warnings) = app(dir.path(), &faux).await;
    let log = stage_three(&app);
    assert!(app.fork("no-such-entry").await.is_err());
    assert!(app.switch_session(&dir.path().join("missing.jsonl")).await.is_err());
    assert_eq!(app.session().pending_actions().len(), 3);
    assert!(log.lock().unwrap().is_empty());
}

fn first_user_entry(app: &App) -> String {
    app.with_store(|store| {
        store
            .entries()
            .iter()
            .find(|e| matches!(&e.kind, EntryKind::Message(m) if m.role() == "user"))
            .map(|e| e.id.clone())
            .unwrap()
    })
}
