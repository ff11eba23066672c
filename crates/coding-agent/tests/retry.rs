//! The session's automatic retry of failed turns (pi 0.73.1's agent-level retry) on a faux
//! model: success after failures, running out of attempts, an abort during the wait, retrying
//! turned off, errors that are not retried, and a retry after a tool call.

#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_agent_core::faux::{
    FauxModel, faux_assistant_error, faux_assistant_message, faux_assistant_text, faux_tool_call,
};
use pi_agent_core::{AgentMessage, StopReason};
use pi_coding_agent::config::AgentRetry;
use pi_coding_agent::{AgentSession, SessionEvent, SessionOptions, SessionSettings};
use serde_json::json;

/// What a test compares: the retry events, plus the run boundaries they sit between.
#[derive(Debug, Clone, PartialEq)]
enum Seen {
    AgentStart,
    AgentEnd,
    Start {
        attempt: u32,
        max: u32,
        delay_ms: u64,
        error: String,
    },
    End {
        success: bool,
        attempt: u32,
        error: Option<String>,
    },
}

fn start(attempt: u32, delay_ms: u64, error: &str) -> Seen {
    Seen::Start {
        attempt,
        max: 3,
        delay_ms,
        error: error.into(),
    }
}

fn retry_session(dir: &std::path::Path, faux: &FauxModel, retry: AgentRetry) -> (AgentSession, Arc<Mutex<Vec<Seen>>>) {
    let settings = SessionSettings {
        retry,
        ..SessionSettings::default()
    };
    let options = SessionOptions::new(dir, faux.model())
        .stream_fn(faux.stream_fn())
        .tools(["read"])
        .settings(settings);
    let session = AgentSession::new(options).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    // Held for the session's life: the listener goes with the session.
    std::mem::forget(session.subscribe(move |event| {
        let item = match event {
            SessionEvent::Agent(pi_agent_core::AgentEvent::AgentStart) => Seen::AgentStart,
            SessionEvent::Agent(pi_agent_core::AgentEvent::AgentEnd { .. }) => Seen::AgentEnd,
            SessionEvent::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                error_message,
            } => Seen::Start {
                attempt: *attempt,
                max: *max_attempts,
                delay_ms: *delay_ms,
                error: error_message.clone(),
            },
            SessionEvent::AutoRetryEnd {
                success,
                attempt,
                final_error,
            } => Seen::End {
                success: *success,
                attempt: *attempt,
                error: final_error.clone(),
            },
            _ => return,
        };
        sink.lock().unwrap().push(item);
    }));
    (session, seen)
}

fn fast() -> AgentRetry {
    AgentRetry {
        enabled: true,
        max_retries: 3,
        base_delay_ms: 5,
    }
}

fn roles(session: &AgentSession) -> Vec<String> {
    session
        .agent()
        .messages()
        .iter()
        .map(|m| match m {
            AgentMessage::Assistant(a) => format!(
                "assistant:{}",
                serde_json::to_value(a.stop_reason).unwrap().as_str().unwrap()
            ),
            other => other.role().to_owned(),
        })
        .collect()
}

#[tokio::test]
async fn a_turn_that_fails_twice_is_retried_and_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_error("503 Service Unavailable"),
        faux_assistant_error("529 overloaded_error: Overloaded"),
        faux_assistant_text("hello"),
    ]);
    let (session, seen) = retry_session(dir.path(), &faux, fast());
    session.prompt("hi").await.unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [
            Seen::AgentStart,
            Seen::AgentEnd,
            start(1, 5, "503 Service Unavailable"),
            Seen::AgentStart,
            Seen::AgentEnd,
            start(2, 10, "529 overloaded_error: Overloaded"),
            Seen::AgentStart,
            Seen::End {
                success: true,
                attempt: 2,
                error: None
            },
            Seen::AgentEnd,
        ]
    );
    // The failed answers left the transcript the model is sent: each retry saw only the prompt.
    assert_eq!(roles(&session), ["user", "assistant:stop"]);
    assert_eq!(faux.call_count(), 3);
    assert!(!session.is_retrying());
    assert_eq!(session.retry_attempt(), 0);
}

#[tokio::test]
async fn the_attempts_run_out_with_the_last_error() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    faux.set_responses((0..4).map(|n| faux_assistant_error(format!("503 busy {n}"))));
    let (session, seen) = retry_session(dir.path(), &faux, fast());
    session.prompt("hi").await.unwrap();
    let seen = seen.lock().unwrap().clone();
    let retries: Vec<Seen> = seen
        .into_iter()
        .filter(|s| !matches!(s, Seen::AgentStart | Seen::AgentEnd))
        .collect();
    assert_eq!(
        retries,
        [
            start(1, 5, "503 busy 0"),
            start(2, 10, "503 busy 1"),
            start(3, 20, "503 busy 2"),
            Seen::End {
                success: false,
                attempt: 3,
                error: Some("503 busy 3".into())
            },
        ]
    );
    // The last failure stays, so print mode reports it.
    assert_eq!(roles(&session), ["user", "assistant:error"]);
    assert_eq!(faux.call_count(), 4);
    assert!(!session.is_retrying());
}

#[tokio::test]
async fn an_abort_during_the_wait_cancels_the_retry() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_error("503 Service Unavailable"),
        faux_assistant_text("never"),
    ]);
    let slow = AgentRetry {
        base_delay_ms: 60_000,
        ..fast()
    };
    for abort_all in [false, true] {
        let (session, seen) = retry_session(dir.path(), &faux, slow);
        let run = tokio::spawn({
            let session = session.clone();
            async move { session.prompt("hi").await }
        });
        tokio::time::timeout(Duration::from_secs(10), async {
            while !session.is_retrying() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .unwrap();
        if abort_all {
            session.abort().await;
        } else {
            session.abort_retry();
        }
        // The prompt returns at once, not after a minute.
        tokio::time::timeout(Duration::from_secs(10), run)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(
            seen.lock().unwrap().last(),
            Some(&Seen::End {
                success: false,
                attempt: 1,
                error: Some("Retry cancelled".into())
            })
        );
        assert!(!session.is_retrying());
        assert_eq!(session.retry_attempt(), 0);
        // pi has dropped the failed answer before the wait.
        assert_eq!(roles(&session), ["user"]);
        // Nothing waits any more: a second abort says nothing.
        session.abort_retry();
        assert_eq!(
            seen.lock()
                .unwrap()
                .iter()
                .filter(|s| matches!(s, Seen::End { .. }))
                .count(),
            1
        );
        faux.set_responses([
            faux_assistant_error("503 Service Unavailable"),
            faux_assistant_text("never"),
        ]);
    }
    assert_eq!(faux.pending_response_count(), 2, "the retry never ran");
}

#[tokio::test]
async fn retrying_turned_off_keeps_the_failure() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_error("503 Service Unavailable"),
        faux_assistant_text("later"),
    ]);
    let (session, seen) = retry_session(dir.path(), &faux, fast());
    session.set_auto_retry_enabled(false);
    assert!(!session.retry_settings().enabled);
    session.prompt("hi").await.unwrap();
    assert_eq!(*seen.lock().unwrap(), [Seen::AgentStart, Seen::AgentEnd]);
    assert_eq!(roles(&session), ["user", "assistant:error"]);
    assert_eq!(faux.call_count(), 1);
}

#[tokio::test]
async fn errors_that_are_not_transient_are_not_retried() {
    let dir = tempfile::tempdir().unwrap();
    for error in [
        "401 invalid x-api-key",
        "400 prompt is too long: 213462 tokens > 200000 maximum",
    ] {
        let faux = FauxModel::new();
        faux.set_responses([faux_assistant_error(error), faux_assistant_text("no")]);
        let (session, seen) = retry_session(dir.path(), &faux, fast());
        session.prompt("hi").await.unwrap();
        assert_eq!(*seen.lock().unwrap(), [Seen::AgentStart, Seen::AgentEnd], "{error}");
        assert_eq!(faux.call_count(), 1, "{error}");
    }
}

#[tokio::test]
async fn a_failure_after_a_tool_call_continues_from_the_tool_result() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call("c1", "read", json!({"path": "a.txt"}))]),
        faux_assistant_error("Connection error: connection reset"),
        faux_assistant_text("it says hello"),
    ]);
    let (session, seen) = retry_session(dir.path(), &faux, fast());
    session.prompt("read a.txt").await.unwrap();
    assert!(seen.lock().unwrap().contains(&Seen::End {
        success: true,
        attempt: 1,
        error: None
    }));
    assert_eq!(
        roles(&session),
        ["user", "assistant:toolUse", "toolResult", "assistant:stop"]
    );
    // The retried call was sent the tool result, not the failure.
    let calls = faux.calls();
    assert_eq!(calls[2].roles, ["user", "assistant", "toolResult"]);
    assert_eq!(
        session
            .agent()
            .messages()
            .last()
            .unwrap()
            .as_assistant()
            .unwrap()
            .stop_reason,
        StopReason::Stop
    );
}

/// pi decides on the retry when the run ends (its `agent_end` handler): turning retrying on
/// once `agent_end` is out — an RPC client's `set_auto_retry` answering it — does not retry
/// the run that already ended (found by the `rpc-abort-retry` conformance scenario).
#[tokio::test]
async fn the_retry_is_decided_when_the_run_ends() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_error("503 Service Unavailable"),
        faux_assistant_text("retried"),
    ]);
    let off = AgentRetry {
        enabled: false,
        ..fast()
    };
    let (session, seen) = retry_session(dir.path(), &faux, off);
    let listener = session.clone();
    std::mem::forget(session.subscribe(move |event| {
        if let SessionEvent::Agent(pi_agent_core::AgentEvent::AgentEnd { .. }) = event {
            listener.set_auto_retry_enabled(true);
        }
    }));
    session.prompt("hi").await.unwrap();
    assert_eq!(*seen.lock().unwrap(), [Seen::AgentStart, Seen::AgentEnd]);
    assert_eq!(faux.call_count(), 1, "not retried");
    assert_eq!(roles(&session), ["user", "assistant:error"]);
    assert!(session.retry_settings().enabled, "on for the next failure");
}
