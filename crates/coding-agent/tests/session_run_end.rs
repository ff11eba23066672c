//! The session at the end of a run: its `agent_end` listeners see an idle agent, and a prompt
//! they start is a whole run of its own, with the resolve forcing working in it.

#![allow(clippy::unwrap_used)]

use crate::support;

use std::sync::{Arc, Mutex};

use pi_agent_core::faux::{FauxModel, FauxResponse, faux_assistant_message, faux_assistant_text, faux_tool_call};
use pi_agent_core::{AgentError, AgentEvent};
use pi_coding_agent::SessionEvent;
use serde_json::json;
use support::{forced_choices, resolve_choice, roles, session};

type Started = Arc<Mutex<Option<tokio::task::JoinHandle<Result<(), AgentError>>>>>;

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_started_on_agent_end_runs_and_is_forced_to_resolve_its_preview() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux, &["read"]);
    faux.set_responses([
        FauxResponse::from(faux_assistant_text("first answer")),
        faux_assistant_message(vec![faux_tool_call(
            "c1",
            "stage",
            json!({"path": file, "content": "new"}),
        )])
        .into(),
        faux_assistant_message(vec![faux_tool_call(
            "c2",
            "resolve",
            json!({"action": "apply", "reason": "Checked the preview."}),
        )])
        .into(),
        faux_assistant_text("done").into(),
    ]);

    let streaming_at_end = Arc::new(Mutex::new(Vec::new()));
    let started: Started = Arc::new(Mutex::new(None));
    let (listener_session, seen, slot) = (session.clone(), streaming_at_end.clone(), started.clone());
    let _subscription = session.subscribe(move |event| {
        let SessionEvent::Agent(AgentEvent::AgentEnd { .. }) = event else {
            return;
        };
        let mut seen = seen.lock().unwrap();
        seen.push(listener_session.agent().is_streaming());
        if seen.len() == 1 {
            let session = listener_session.clone();
            *slot.lock().unwrap() = Some(tokio::spawn(async move { session.prompt("write it").await }));
        }
    });

    session.prompt("hello").await.unwrap();
    let second = started.lock().unwrap().take().expect("the agent_end listener prompted");
    assert_eq!(second.await.unwrap(), Ok(()));
    session.agent().wait_for_idle().await;

    assert_eq!(*streaming_at_end.lock().unwrap(), [false, false]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
    assert_eq!(forced_choices(&faux), [None, None, resolve_choice(), None]);
    assert!(!session.pending_actions().has_pending());
    assert!(session.tool_choice_queue().is_empty());
    assert_eq!(session.pending_message_count(), 0);
    assert_eq!(
        roles(&session.agent().messages()),
        [
            "user",
            "assistant",
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
