//! The end of a run: `agent_end` listeners see an idle agent, may start the next run, and the
//! finishing run never clears a newer one.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::sync::Notify;

use super::*;
use crate::faux::{FauxModel, faux_assistant_text};

/// Long enough for a run that is wrongly refused or stuck to show; never waited out on success.
const PATIENCE: Duration = Duration::from_secs(10);
/// How long an assertion that something does not happen waits.
const SHORT: Duration = Duration::from_millis(50);

fn agent_answering(answers: &[&str]) -> Agent {
    let faux = FauxModel::new();
    faux.set_responses(answers.iter().map(|text| faux_assistant_text(*text)));
    Agent::new(AgentOptions::new(faux.model()).stream_fn(faux.stream_fn()))
}

fn roles(agent: &Agent) -> Vec<&'static str> {
    agent
        .messages()
        .iter()
        .map(|message| match message {
            AgentMessage::User(_) => "user",
            AgentMessage::Assistant(_) => "assistant",
            _ => "other",
        })
        .collect()
}

/// What an `agent_end` listener saw of the agent, and what its own prompt gave.
#[derive(Debug, Default)]
struct SeenAtEnd {
    streaming: Option<bool>,
    signal: Option<bool>,
    prompt: Option<Result<(), AgentError>>,
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_end_listener_sees_an_idle_agent_and_its_prompt_runs() {
    let agent = agent_answering(&["first answer", "second answer"]);
    let seen = Arc::new(Mutex::new(SeenAtEnd::default()));
    let ends = Arc::new(AtomicUsize::new(0));
    let (listener_agent, listener_seen) = (agent.clone(), seen.clone());
    let _subscription = agent.subscribe_async(move |event, _signal| -> BoxFuture<'static, ()> {
        let (agent, seen, ends) = (listener_agent.clone(), listener_seen.clone(), ends.clone());
        Box::pin(async move {
            if !matches!(event, AgentEvent::AgentEnd { .. }) || ends.fetch_add(1, Ordering::SeqCst) > 0 {
                return;
            }
            {
                let mut seen = lock(&seen);
                seen.streaming = Some(agent.is_streaming());
                seen.signal = Some(agent.signal().is_some());
            }
            let prompted = agent.prompt("second question").await;
            lock(&seen).prompt = Some(prompted);
        })
    });

    tokio::time::timeout(PATIENCE, agent.prompt("first question"))
        .await
        .expect("the first prompt settles")
        .unwrap();

    let seen = std::mem::take(&mut *lock(&seen));
    assert_eq!(
        seen.streaming,
        Some(false),
        "is_streaming() inside the agent_end listener"
    );
    assert_eq!(
        seen.signal,
        Some(false),
        "the run slot is free inside the agent_end listener"
    );
    assert_eq!(seen.prompt, Some(Ok(())), "a prompt from the agent_end listener");
    assert_eq!(roles(&agent), ["user", "assistant", "user", "assistant"]);
    let last = agent
        .messages()
        .last()
        .and_then(|m| m.as_assistant().map(AssistantMessage::text));
    assert_eq!(last.as_deref(), Some("second answer"));
    assert!(!agent.is_streaming());
    tokio::time::timeout(SHORT, agent.wait_for_idle())
        .await
        .expect("idle once both runs settled");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_started_from_agent_end_is_not_cleared_when_the_run_before_finishes() {
    let agent = agent_answering(&["first answer", "second answer"]);
    let starts = Arc::new(AtomicUsize::new(0));
    let ends = Arc::new(AtomicUsize::new(0));
    let second_started = Arc::new(Notify::new());
    let release_second = Arc::new(Notify::new());
    let second_prompt = Arc::new(Mutex::new(None));
    let listener_agent = agent.clone();
    let (started, release, prompt_slot) = (second_started.clone(), release_second.clone(), second_prompt.clone());
    let _subscription = agent.subscribe_async(move |event, _signal| -> BoxFuture<'static, ()> {
        let agent = listener_agent.clone();
        let (starts, ends) = (starts.clone(), ends.clone());
        let (started, release, prompt_slot) = (started.clone(), release.clone(), prompt_slot.clone());
        Box::pin(async move {
            match event {
                // The second run holds at its start until the test releases it.
                AgentEvent::AgentStart if starts.fetch_add(1, Ordering::SeqCst) == 1 => {
                    started.notify_one();
                    release.notified().await;
                }
                // The first run's `agent_end` starts the second run without waiting for it, and
                // returns once it is under way: then the first run finishes.
                AgentEvent::AgentEnd { .. } if ends.fetch_add(1, Ordering::SeqCst) == 0 => {
                    let runner = agent.clone();
                    *lock(&prompt_slot) = Some(tokio::spawn(async move { runner.prompt("second question").await }));
                    let _ = tokio::time::timeout(PATIENCE, started.notified()).await;
                }
                _ => {}
            }
        })
    });

    tokio::time::timeout(PATIENCE, agent.prompt("first question"))
        .await
        .expect("the first prompt settles")
        .unwrap();

    // The first run has finished: the second one still holds the slot.
    assert!(agent.is_streaming(), "the second run is streaming");
    assert!(agent.signal().is_some(), "the second run holds the run slot");
    assert_eq!(agent.prompt("third question").await, Err(AgentError::AlreadyPrompting));
    assert!(
        tokio::time::timeout(SHORT, agent.wait_for_idle()).await.is_err(),
        "wait_for_idle waits for the second run"
    );

    release_second.notify_one();
    tokio::time::timeout(PATIENCE, agent.wait_for_idle())
        .await
        .expect("idle once the second run settled");
    let second = lock(&second_prompt).take().expect("the second prompt was started");
    assert_eq!(second.await.unwrap(), Ok(()));
    assert!(!agent.is_streaming());
    assert!(agent.signal().is_none());
    assert_eq!(roles(&agent), ["user", "assistant", "user", "assistant"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_agent_end_listener_ends_the_run_without_a_second_agent_end() {
    let agent = agent_answering(&["answer"]);
    let kinds = Arc::new(Mutex::new(Vec::new()));
    let recorded = kinds.clone();
    let _recorder = agent.subscribe(move |event, _| lock(&recorded).push(event.kind()));
    let _failing = agent.subscribe(|event, _| {
        if matches!(event, AgentEvent::AgentEnd { .. }) {
            std::panic::resume_unwind(Box::new("agent_end listener failed"));
        }
    });

    tokio::time::timeout(PATIENCE, agent.prompt("question"))
        .await
        .expect("the prompt settles")
        .unwrap();

    let kinds = lock(&kinds).clone();
    assert_eq!(
        kinds.iter().filter(|kind| **kind == "agent_end").count(),
        1,
        "{kinds:?}"
    );
    assert_eq!(kinds.last(), Some(&"agent_end"));
    assert_eq!(roles(&agent), ["user", "assistant"]);
    assert!(!agent.is_streaming());
    agent
        .prompt("again")
        .await
        .unwrap_or_else(|e| panic!("the agent is usable again: {e}"));
}
