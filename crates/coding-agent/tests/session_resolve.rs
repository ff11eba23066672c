//! The session's resolve runtime end to end with the faux model: the reminder, forced `resolve`,
//! LIFO stacking, failed applies, the circuit breaker, `/force`, and the active tool set
//! (`reference/omp.md` §5.3 written fresh, plus SPEC §6's decisions).

#![allow(clippy::unwrap_used)]

use crate::support;

use std::sync::Arc;

use pi_agent_core::faux::{
    FauxModel, FauxResponse, faux_assistant_message, faux_assistant_text, faux_text, faux_tool_call,
};
use pi_agent_core::{AgentMessage, ToolChoice, ToolResult};
use pi_coding_agent::resolve::PendingAction;
use pi_coding_agent::resolve::{NO_PENDING_ACTION, RESOLVE_REMINDER};
use pi_coding_agent::{AgentSession, SessionError, SessionEvent, SessionOptions};
use serde_json::json;
use support::{faux_session, forced_choices, record, resolve_choice, roles, session};

fn stage(id: &str, path: &std::path::Path, content: &str) -> pi_agent_core::ContentBlock {
    faux_tool_call(id, "stage", json!({"path": path, "content": content}))
}

fn resolve(id: &str, action: &str) -> pi_agent_core::ContentBlock {
    faux_tool_call(
        id,
        "resolve",
        json!({"action": action, "reason": "Checked the preview."}),
    )
}

fn tool_result_texts(session: &AgentSession) -> Vec<String> {
    session
        .agent()
        .messages()
        .iter()
        .filter_map(AgentMessage::as_tool_result)
        .map(|r| r.text())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_preview_forces_resolve_and_apply_writes_only_then() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux, &["read"]);
    let observed = file.clone();
    faux.set_responses([
        FauxResponse::from(faux_assistant_message(vec![stage("c1", &file, "new")])),
        FauxResponse::factory(move |request| {
            // The preview has not touched the disk when the model is asked to resolve it.
            assert!(!observed.exists(), "nothing is written before apply");
            let last = request.context.messages.last().unwrap();
            assert_eq!(last.role(), "user", "the reminder reaches the model as a user message");
            faux_assistant_message(vec![resolve("c2", "apply")])
        }),
        faux_assistant_text("done").into(),
    ]);
    session.prompt("write it").await.unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
    assert_eq!(forced_choices(&faux), [None, resolve_choice(), None]);
    assert!(!session.pending_actions().has_pending());
    assert!(session.tool_choice_queue().is_empty());
    assert_eq!(
        roles(&session.agent().messages()),
        [
            "user",
            "assistant[stage]",
            "toolResult:stage",
            "custom:resolve-reminder",
            "assistant[resolve]",
            "toolResult:resolve",
            "assistant"
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn discard_never_writes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux, &["read"]);
    faux.set_responses([
        faux_assistant_message(vec![stage("c1", &file, "new")]),
        faux_assistant_message(vec![resolve("c2", "discard")]),
        faux_assistant_text("ok"),
    ]);
    session.prompt("write it").await.unwrap();
    assert!(!file.exists());
    assert!(!session.pending_actions().has_pending());
    assert_eq!(
        tool_result_texts(&session)[1],
        "Discarded: Stage: write a.txt. Reason: Checked the preview."
    );
    assert_eq!(forced_choices(&faux), [None, resolve_choice(), None]);
}

#[tokio::test(flavor = "multi_thread")]
async fn stacked_previews_resolve_newest_first_one_forced_call_each() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (dir.path().join("first.txt"), dir.path().join("second.txt"));
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux, &[]);
    faux.set_responses([
        faux_assistant_message(vec![stage("c1", &first, "1")]),
        // Forced to resolve, the model stages a second preview instead of resolving.
        faux_assistant_message(vec![stage("c2", &second, "2")]),
        faux_assistant_message(vec![resolve("c3", "apply")]),
        faux_assistant_message(vec![resolve("c4", "discard")]),
        faux_assistant_text("done"),
    ]);
    let events = record(&session);
    session.prompt("two previews").await.unwrap();
    assert_eq!(
        std::fs::read_to_string(&second).unwrap(),
        "2",
        "the newest preview was applied"
    );
    assert!(!first.exists(), "the older preview was discarded");
    let texts = tool_result_texts(&session);
    assert_eq!(
        texts[3],
        "Discarded: Stage: write first.txt. Reason: Checked the preview."
    );
    assert_eq!(
        forced_choices(&faux),
        [None, resolve_choice(), resolve_choice(), resolve_choice(), None]
    );
    let resolved: Vec<(String, usize)> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            SessionEvent::Resolved(o) => Some((o.label.clone(), o.remaining)),
            _ => None,
        })
        .collect();
    assert_eq!(
        resolved,
        [
            ("Stage: write second.txt".to_owned(), 1),
            ("Stage: write first.txt".to_owned(), 0)
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn two_previews_in_one_message_are_both_resolved_then_forcing_stops() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux, &[]);
    faux.set_responses([
        faux_assistant_message(vec![stage("c1", &a, "a"), stage("c2", &b, "b")]),
        // One message resolving both: the second call acts on the next top.
        faux_assistant_message(vec![resolve("c3", "apply"), resolve("c4", "apply")]),
        faux_assistant_text("done"),
    ]);
    session.prompt("go").await.unwrap();
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "a");
    assert_eq!(std::fs::read_to_string(&b).unwrap(), "b");
    // No phantom forced `resolve` once the stack is empty.
    assert_eq!(forced_choices(&faux), [None, resolve_choice(), None]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_apply_keeps_the_action_and_sends_the_reminder_again() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux, &[]);
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call(
            "c1",
            "stage",
            json!({"path": file, "content": "x", "fail": 1}),
        )]),
        faux_assistant_message(vec![resolve("c2", "apply")]),
        faux_assistant_message(vec![resolve("c3", "apply")]),
        faux_assistant_text("done"),
    ]);
    session.prompt("go").await.unwrap();
    let texts = tool_result_texts(&session);
    assert_eq!(texts[1], "Apply failed: disk full");
    assert_eq!(texts[2], "Wrote ".to_owned() + &file.display().to_string());
    assert_eq!(
        roles(&session.agent().messages()),
        [
            "user",
            "assistant[stage]",
            "toolResult:stage",
            "custom:resolve-reminder",
            "assistant[resolve]",
            "toolResult:resolve",
            "custom:resolve-reminder",
            "assistant[resolve]",
            "toolResult:resolve",
            "assistant"
        ]
    );
    assert_eq!(forced_choices(&faux), [None, resolve_choice(), resolve_choice(), None]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_discard_keeps_the_action_and_sends_the_reminder_again() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux, &[]);
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call(
            "c1",
            "stage",
            json!({"path": file, "content": "x", "rejectFail": 1}),
        )]),
        faux_assistant_message(vec![resolve("c2", "discard")]),
        faux_assistant_message(vec![resolve("c3", "discard")]),
        faux_assistant_text("done"),
    ]);
    session.prompt("go").await.unwrap();
    let texts = tool_result_texts(&session);
    assert_eq!(texts[1], "cleanup failed");
    assert_eq!(texts[2], "Discarded: Stage: write a.txt. Reason: Checked the preview.");
    assert_eq!(
        roles(&session.agent().messages()),
        [
            "user",
            "assistant[stage]",
            "toolResult:stage",
            "custom:resolve-reminder",
            "assistant[resolve]",
            "toolResult:resolve",
            // The action is still pending after the failed discard: the model is reminded.
            "custom:resolve-reminder",
            "assistant[resolve]",
            "toolResult:resolve",
            "assistant"
        ]
    );
    assert_eq!(forced_choices(&faux), [None, resolve_choice(), resolve_choice(), None]);
    assert!(!file.exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn no_reminder_follows_a_failed_apply_that_a_second_resolve_of_the_same_message_fixed() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux, &[]);
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call(
            "c1",
            "stage",
            json!({"path": file, "content": "x", "fail": 1}),
        )]),
        faux_assistant_message(vec![resolve("c2", "apply"), resolve("c3", "apply")]),
        faux_assistant_text("done"),
    ]);
    session.prompt("go").await.unwrap();
    let mut texts = tool_result_texts(&session);
    // The two calls run in parallel, one after the other in the runtime: whichever ran first failed.
    texts[1..].sort();
    assert_eq!(
        texts[1..],
        [
            "Apply failed: disk full".to_owned(),
            format!("Wrote {}", file.display())
        ]
    );
    assert!(!session.pending_actions().has_pending());
    assert_eq!(
        roles(&session.agent().messages()),
        [
            "user",
            "assistant[stage]",
            "toolResult:stage",
            "custom:resolve-reminder",
            "assistant[resolve,resolve]",
            "toolResult:resolve",
            "toolResult:resolve",
            // Nothing is pending any more: no reminder.
            "assistant"
        ]
    );
}

/// The text of a `resolve` refused because it came in the message that staged the action.
fn same_message_refusal(label: &str) -> String {
    format!(
        "Cannot resolve \"{label}\" in the message that staged it: the preview has not been shown to you yet. \
         Read it, then call resolve in your next message."
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn sequential_a_resolve_in_the_staging_message_is_refused_and_the_model_is_reminded() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    let faux = FauxModel::new();
    let settings = pi_coding_agent::SessionSettings {
        tool_execution: pi_agent_core::ToolExecutionMode::Sequential,
        ..Default::default()
    };
    let session = support::session_with(dir.path(), &faux, &[], settings);
    let (observed, store) = (file.clone(), session.pending_actions().clone());
    faux.set_responses([
        FauxResponse::from(faux_assistant_message(vec![
            stage("c1", &file, "new"),
            resolve("c2", "apply"),
        ])),
        FauxResponse::factory(move |request| {
            assert!(!observed.exists(), "the preview was applied before the model saw it");
            assert!(store.has_pending());
            let last = request.context.messages.last().unwrap();
            assert_eq!(last.role(), "user");
            assert_eq!(
                last.as_user().unwrap().content.text(),
                RESOLVE_REMINDER,
                "pending, so reminded"
            );
            faux_assistant_message(vec![resolve("c3", "apply")])
        }),
        faux_assistant_text("done").into(),
    ]);
    session.prompt("write it").await.unwrap();
    let messages = session.agent().messages();
    let refused = messages[3].as_tool_result().unwrap();
    assert!(refused.is_error);
    assert_eq!(refused.text(), same_message_refusal("Stage: write a.txt"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "new", "applied once seen");
    assert_eq!(
        roles(&messages),
        [
            "user",
            "assistant[stage,resolve]",
            "toolResult:stage",
            "toolResult:resolve",
            "custom:resolve-reminder",
            "assistant[resolve]",
            "toolResult:resolve",
            "assistant"
        ]
    );
    assert_eq!(forced_choices(&faux), [None, resolve_choice(), None]);
}

#[tokio::test(flavor = "multi_thread")]
async fn parallel_a_resolve_in_the_staging_message_never_applies_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux, &[]);
    let observed = file.clone();
    faux.set_responses([
        FauxResponse::from(faux_assistant_message(vec![
            stage("c1", &file, "new"),
            resolve("c2", "apply"),
        ])),
        FauxResponse::factory(move |_| {
            assert!(!observed.exists(), "the preview was applied before the model saw it");
            faux_assistant_message(vec![resolve("c3", "discard")])
        }),
        faux_assistant_text("done").into(),
    ]);
    session.prompt("write it").await.unwrap();
    let texts = tool_result_texts(&session);
    assert!(
        texts[1] == NO_PENDING_ACTION || texts[1] == same_message_refusal("Stage: write a.txt"),
        "{}",
        texts[1]
    );
    assert!(!file.exists());
    assert!(!session.pending_actions().has_pending());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_ignoring_the_forced_choice_three_times_is_not_forced_a_fourth_time() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux, &["ls"]);
    let ls = |id: &str| faux_assistant_message(vec![faux_tool_call(id, "ls", json!({}))]);
    faux.set_responses([
        faux_assistant_message(vec![stage("c1", &file, "x")]),
        ls("c2"),
        ls("c3"),
        ls("c4"),
        ls("c5"),
        faux_assistant_text("I will leave it."),
    ]);
    let events = record(&session);
    session.prompt("go").await.unwrap();
    assert_eq!(
        forced_choices(&faux),
        [None, resolve_choice(), resolve_choice(), resolve_choice(), None, None]
    );
    assert!(session.pending_actions().has_pending(), "the action stays pending");
    assert!(session.resolve_forcing_stopped());
    let stopped: Vec<String> = events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, SessionEvent::ResolveForcingStopped(_)))
        .filter_map(SessionEvent::notice)
        .collect();
    assert_eq!(
        stopped,
        ["The model did not call resolve in 3 forced turns; stopped forcing it. Still pending: Stage: write a.txt"]
    );
    // The next prompt is not forced either, but the model may still resolve on its own.
    faux.set_responses([
        faux_assistant_message(vec![resolve("c6", "apply")]),
        faux_assistant_text("applied"),
    ]);
    session.prompt("apply it now").await.unwrap();
    assert_eq!(forced_choices(&faux)[6..], [None, None]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    assert!(!session.resolve_forcing_stopped());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_that_answers_the_forced_resolve_with_more_previews_is_not_forced_forever() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux, &[]);
    let path = |n: u32| dir.path().join(format!("{n}.txt"));
    let mut responses: Vec<_> = (1..=4)
        .map(|n| faux_assistant_message(vec![stage(&format!("c{n}"), &path(n), "x")]))
        .collect();
    responses.push(faux_assistant_text("Staged them all."));
    faux.set_responses(responses);
    session.prompt("go").await.unwrap();
    // The first preview starts forcing; each forced call stages another preview instead, which
    // does not start the count again. (A preview staged in an unforced call would.)
    assert_eq!(
        forced_choices(&faux),
        [None, resolve_choice(), resolve_choice(), resolve_choice(), None]
    );
    assert!(session.resolve_forcing_stopped());
    assert_eq!(session.pending_actions().len(), 4);
    assert!((1..=4).all(|n| !path(n).exists()), "nothing was applied");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_that_keeps_failing_to_apply_is_not_forced_forever() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux, &[]);
    let mut responses = vec![FauxResponse::from(faux_assistant_message(vec![faux_tool_call(
        "c1",
        "stage",
        json!({"path": file, "content": "x", "fail": 100}),
    )]))];
    for i in 0..5 {
        responses.push(faux_assistant_message(vec![resolve(&format!("r{i}"), "apply")]).into());
    }
    responses.push(faux_assistant_text("giving up").into());
    faux.set_responses(responses);
    session.prompt("go").await.unwrap();
    let calls = forced_choices(&faux);
    assert_eq!(calls.iter().filter(|c| **c == resolve_choice()).count(), 3);
    assert_eq!(calls[4..].iter().filter(|c| c.is_some()).count(), 0);
    assert!(session.pending_actions().has_pending());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_reminder_lands_between_the_assistant_messages_and_forces_a_second_call() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux, &[]);
    let store = session.pending_actions().clone();
    faux.set_responses([
        FauxResponse::factory(move |_| {
            // The model call itself stages a preview (as omp's test does), then answers in text.
            store.push(PendingAction::new(
                "AST Edit: 1 replacement in 1 file",
                "ast_edit",
                |_, _| async { Ok(ToolResult::text("applied")) },
            ));
            faux_assistant_message(vec![faux_text("Done")])
        }),
        faux_assistant_text("ignored").into(),
    ]);
    session.prompt("run preview").await.unwrap();
    assert_eq!(faux.call_count(), 2);
    let messages = session.agent().messages();
    assert_eq!(
        roles(&messages),
        ["user", "assistant", "custom:resolve-reminder", "assistant"]
    );
    let reminder = serde_json::to_value(&messages[2]).unwrap();
    assert_eq!(reminder["content"], RESOLVE_REMINDER);
    assert_eq!(reminder["display"], false);
    assert_eq!(reminder["details"]["toolName"], "ast_edit");
}

#[tokio::test(flavor = "multi_thread")]
async fn forced_resolve_with_resolve_inactive_is_unavailable_and_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let session = faux_session(dir.path(), &faux, &["read"]);
    assert_eq!(session.active_tool_names(), ["read"]);
    session
        .pending_actions()
        .push(PendingAction::new("X", "custom_tool", |_, _| async {
            Ok(ToolResult::text("x"))
        }));
    for _ in 0..3 {
        assert_eq!(session.next_tool_choice(), None, "resolve is not active: not forced");
    }
    assert!(session.resolve_forcing_stopped());
    assert!(session.tool_choice_queue().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn abort_rejects_the_in_flight_choice_and_the_next_prompt_is_forced_again() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux, &[]);
    session
        .pending_actions()
        .push(PendingAction::new("Held", "stage", |_, _| async {
            Ok(ToolResult::text("applied"))
        }));
    assert_eq!(session.next_tool_choice(), resolve_choice());
    assert!(session.tool_choice_queue().has_in_flight());
    session.abort().await;
    assert!(!session.tool_choice_queue().has_in_flight());
    faux.set_responses([
        faux_assistant_message(vec![resolve("c1", "apply")]),
        faux_assistant_text("done"),
    ]);
    session.prompt("continue").await.unwrap();
    assert_eq!(forced_choices(&faux), [resolve_choice(), None]);
    assert!(!session.pending_actions().has_pending());
    assert!(!file.exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn resolve_with_nothing_pending_reports_the_seed_text() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux, &[]);
    faux.set_responses([
        faux_assistant_message(vec![resolve("c1", "apply")]),
        faux_assistant_text("ok"),
    ]);
    session.prompt("go").await.unwrap();
    let result = session.agent().messages()[2].as_tool_result().unwrap().clone();
    assert!(result.is_error);
    assert_eq!(result.text(), NO_PENDING_ACTION);
    assert_eq!(forced_choices(&faux), [None, None]);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_user_can_apply_from_outside_the_loop() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux, &[]);
    session
        .pending_actions()
        .push(PendingAction::new("Held", "stage", |_, _| async {
            Ok(ToolResult::text("applied by user"))
        }));
    let events = record(&session);
    let result = session
        .resolve_pending(pi_coding_agent::resolve::ResolveAction::Apply, "User accepted.")
        .await
        .unwrap();
    assert_eq!(result.content[0].as_text(), Some("applied by user"));
    assert!(!session.pending_actions().has_pending());
    assert_eq!(
        session.next_tool_choice(),
        None,
        "the queued forcing directive is dropped"
    );
    let notices: Vec<String> = events.lock().unwrap().iter().filter_map(SessionEvent::notice).collect();
    assert_eq!(notices, ["Applied: Held"]);
}

// ---- `/force` (omp `agent-session-force-tool-choice.test.ts`) ----

fn plain_session(tools: &[&str]) -> (tempfile::TempDir, FauxModel, AgentSession) {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let session = faux_session(dir.path(), &faux, tools);
    (dir, faux, session)
}

#[test]
fn force_serves_the_tool_then_none_then_nothing() {
    let (_dir, _faux, session) = plain_session(&["read", "write"]);
    session.set_forced_tool_choice("write").unwrap();
    assert_eq!(session.next_tool_choice(), Some(ToolChoice::Tool("write".into())));
    session.tool_choice_queue().resolve();
    assert_eq!(session.next_tool_choice(), Some(ToolChoice::None));
    session.tool_choice_queue().resolve();
    assert_eq!(session.next_tool_choice(), None);
}

#[test]
fn a_forced_choice_for_a_filtered_out_tool_is_requeued() {
    let (_dir, _faux, session) = plain_session(&["bash", "write"]);
    session.set_forced_tool_choice("write").unwrap();
    session.set_active_tools(["bash"]).unwrap();
    assert_eq!(session.next_tool_choice(), None);
    assert!(!session.tool_choice_queue().has_in_flight());
    session.set_active_tools(["bash", "write"]).unwrap();
    assert_eq!(session.next_tool_choice(), Some(ToolChoice::Tool("write".into())));
}

#[test]
fn forcing_an_inactive_tool_fails() {
    let (_dir, _faux, session) = plain_session(&["write"]);
    let error = session.set_forced_tool_choice("read").unwrap_err();
    assert_eq!(error.to_string(), "Tool \"read\" is not currently active.");
}

#[test]
fn forcing_needs_a_model_with_named_tool_choice() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let mut model = faux.model();
    // An API of a custom provider, which pi knows nothing of.
    model.api = "my-own-api".into();
    let options = SessionOptions::new(dir.path(), model).tools(["read"]);
    let session = AgentSession::new(options).unwrap();
    assert_eq!(
        session.set_forced_tool_choice("read").unwrap_err(),
        SessionError::ForcingUnsupported
    );
    assert_eq!(
        SessionError::ForcingUnsupported.to_string(),
        "Current model does not support forcing a specific tool."
    );
}

#[test]
fn gemini_vertex_mistral_and_bedrock_models_can_be_forced_to_a_tool() {
    // Gemini and Vertex limit the call to the tool (`allowedFunctionNames`); Mistral names it,
    // Bedrock's Converse API too (`toolChoice: {tool: {name}}`).
    for api in [
        "google-generative-ai",
        "google-vertex",
        "mistral-conversations",
        "bedrock-converse-stream",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let faux = FauxModel::new();
        let mut model = faux.model();
        model.api = api.into();
        let options = SessionOptions::new(dir.path(), model).tools(["read"]);
        let session = AgentSession::new(options).unwrap();
        assert_eq!(session.set_forced_tool_choice("read"), Ok(()), "{api}");
        assert_eq!(
            session.next_tool_choice(),
            Some(ToolChoice::Tool("read".into())),
            "{api}"
        );
    }
}

// ---- the active tool set (omp `tools/index.test.ts`, `sdk-tool-activation.test.ts`) ----

#[test]
fn the_default_active_set_is_pis() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let session = AgentSession::new(SessionOptions::new(dir.path(), faux.model())).unwrap();
    assert_eq!(session.active_tool_names(), ["read", "bash", "edit", "write"]);
    let registry = session.tool_registry();
    assert!(registry.get("resolve").is_some_and(|t| t.hidden));
    assert!(!registry.visible_names().contains(&"resolve".to_owned()));
    assert_eq!(
        registry.visible_names(),
        [
            "read", "bash", "edit", "write", "grep", "find", "ls", "ast_edit", "ast_grep"
        ]
    );
}

#[test]
fn resolve_is_appended_last_when_a_preview_tool_is_active() {
    let (_dir, _faux, session) = plain_session(&["resolve", "ast_edit", "read"]);
    assert_eq!(session.active_tool_names(), ["ast_edit", "read", "resolve"]);
    session.set_active_tools(["read", "write"]).unwrap();
    assert_eq!(session.active_tool_names(), ["read", "write"]);
}

#[test]
fn a_standing_handler_activates_resolve() {
    let (_dir, _faux, session) = plain_session(&["read"]);
    let handler: pi_coding_agent::resolve::StandingHandler =
        Arc::new(|_| Box::pin(async { Ok(ToolResult::text("Plan ready for approval.")) }));
    session.set_standing_resolve_handler(Some(handler));
    assert_eq!(session.active_tool_names(), ["read", "resolve"]);
    session.set_standing_resolve_handler(None);
    assert_eq!(session.active_tool_names(), ["read"]);
}

#[test]
fn unknown_tools_and_name_conflicts_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let error = AgentSession::new(SessionOptions::new(dir.path(), faux.model()).tools(["read", "nope"])).unwrap_err();
    assert_eq!(error.to_string(), "Unknown tool: nope");
    let session = AgentSession::new(SessionOptions::new(dir.path(), faux.model())).unwrap();
    let clash = pi_agent_core::FnTool::new("read", "x", json!({"type": "object"}), |_, _, _| async {
        Ok(ToolResult::text(""))
    });
    let error = session
        .register_tool(pi_coding_agent::RegisteredTool::custom(clash.into_arc(), None))
        .unwrap_err();
    assert_eq!(error.to_string(), "Tool name \"read\" conflicts with existing tool");
}

#[test]
fn the_ast_tools_can_be_disabled() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let settings = pi_coding_agent::SessionSettings {
        ast_edit: false,
        ast_grep: false,
        ..Default::default()
    };
    let session = AgentSession::new(SessionOptions::new(dir.path(), faux.model()).settings(settings)).unwrap();
    let registry = session.tool_registry();
    assert!(registry.get("ast_edit").is_none());
    assert!(registry.get("ast_grep").is_none());
    assert!(session.set_active_tools(["ast_edit"]).is_err());
}
