//! The session's automatic retry of a turn that failed with a transient error (pi 0.73.1's
//! agent-level retry, `retry.enabled` / `maxRetries` / `baseDelayMs`).
//!
//! After a run whose last assistant message failed with a retryable error (see
//! [`is_retryable`]), the session announces `auto_retry_start`, drops that message from the
//! transcript the model sees (the session file keeps it, its `message_end` was recorded),
//! waits `baseDelayMs * 2^(attempt-1)` — abortable — and continues the run. The first assistant
//! message that does not fail ends the retry with `auto_retry_end {success: true}`; running out
//! of attempts ends it with `{success: false, finalError}`, an abort during the wait with
//! `finalError: "Retry cancelled"`. The retries within one request (`retry.provider`) happen
//! below this, in the HTTP client: see `docs/retry.md`.

use std::sync::LazyLock;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use pi_agent_core::{Agent, AgentMessage, AssistantMessage, StopReason, lock};
use regex::Regex;
use tokio_util::sync::CancellationToken;

use super::event::SessionEvent;
use crate::config::AgentRetry;

/// The errors pi retries, its own pattern (`_isRetryableError`), case-insensitive.
static RETRYABLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)overloaded|provider.?returned.?error|rate.?limit|too many requests|429|500|502|503|504|service.?unavailable|server.?error|internal.?error|network.?error|connection.?error|connection.?refused|connection.?lost|websocket.?closed|websocket.?error|other side closed|fetch failed|upstream.?connect|reset before headers|socket hang up|ended without|http2 request did not get a response|timed? out|timeout|terminated|retry delay",
    )
    .expect("a constant, valid pattern")
});

/// Whether the session retries after `message`, as pi decides: it failed (`stopReason` `error`
/// with an error text), not by overflowing the context window, and its text names a transient
/// failure (overloaded, rate limit, 429, 5xx, connection and network errors, time-outs, …).
///
/// ```
/// use pi_agent_core::{AssistantMessage, StopReason};
/// use pi_coding_agent::is_retryable;
/// let failed = |text: &str| AssistantMessage {
///     stop_reason: StopReason::Error,
///     error_message: Some(text.into()),
///     ..AssistantMessage::default()
/// };
/// assert!(is_retryable(&failed("503 Service Unavailable")));
/// assert!(is_retryable(&failed("429 rate_limit_error: slow down")));
/// assert!(!is_retryable(&failed("401 invalid x-api-key")));
/// assert!(!is_retryable(&failed("prompt is too long: 213462 tokens > 200000 maximum")));
/// ```
pub fn is_retryable(message: &AssistantMessage) -> bool {
    if message.stop_reason != StopReason::Error {
        return false;
    }
    match message.error_message.as_deref() {
        None | Some("") => false,
        Some(text) => !pi_ai::is_overflow_error_text(text) && RETRYABLE.is_match(text),
    }
}

/// An event of the retry, for the session to send to its listeners.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum RetryEvent {
    Start {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        error_message: String,
    },
    End {
        success: bool,
        attempt: u32,
        final_error: Option<String>,
    },
}

impl From<RetryEvent> for SessionEvent {
    fn from(event: RetryEvent) -> Self {
        match event {
            RetryEvent::Start {
                attempt,
                max_attempts,
                delay_ms,
                error_message,
            } => SessionEvent::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                error_message,
            },
            RetryEvent::End {
                success,
                attempt,
                final_error,
            } => SessionEvent::AutoRetryEnd {
                success,
                attempt,
                final_error,
            },
        }
    }
}

impl RetryState {
    /// After a run: while its last assistant message failed with a retryable error and attempts
    /// remain, announce (through `emit`), drop that message from the transcript, wait and
    /// continue the run.
    pub(super) async fn retry_failed_runs(&self, agent: &Agent, emit: impl Fn(&SessionEvent)) {
        loop {
            let (next, event) = self.after_run();
            // The failed answer leaves the transcript before anyone hears of the retry (pi does
            // both at once), so a `get_state` after `auto_retry_start` counts without it.
            if matches!(next, Next::Wait(..))
                && let Some(messages) = without_failed_tail(agent.messages())
            {
                agent.set_messages(messages);
            }
            if let Some(event) = event {
                emit(&event.into());
            }
            let Next::Wait(delay, cancel) = next else {
                return;
            };
            // An `abort_retry` ends the retry and says so itself.
            let waited = tokio::select! {
                () = cancel.cancelled() => false,
                () = tokio::time::sleep(delay) => self.after_wait(),
            };
            if !waited {
                return;
            }
            if agent.continue_run().await.is_err() {
                self.stop();
                return;
            }
        }
    }
}

/// What the session does after a run that failed.
#[derive(Debug)]
pub(super) enum Next {
    /// Nothing to retry (or retrying is off).
    Done,
    /// Retry after this wait; the failed message leaves the transcript first.
    Wait(Duration, CancellationToken),
}

/// The retry's state, one per session.
pub(super) struct RetryState {
    settings: Mutex<AgentRetry>,
    /// Retries made since the last success (pi's `retryAttempt`).
    attempt: AtomicU32,
    /// Between the failed run and the end of the retry (pi's `isRetrying`).
    retrying: AtomicBool,
    /// The wait's cancel token while one waits.
    wait: Mutex<Option<CancellationToken>>,
    /// The last assistant message of the current run.
    last_assistant: Mutex<Option<AssistantMessage>>,
    /// `retry.enabled` when the run ended ([`RetryState::on_agent_end`]).
    enabled_at_end: Mutex<Option<bool>>,
}

impl RetryState {
    pub(super) fn new(settings: AgentRetry) -> Self {
        RetryState {
            settings: Mutex::new(settings),
            attempt: AtomicU32::new(0),
            retrying: AtomicBool::new(false),
            wait: Mutex::new(None),
            last_assistant: Mutex::new(None),
            enabled_at_end: Mutex::new(None),
        }
    }

    pub(super) fn settings(&self) -> AgentRetry {
        *lock(&self.settings)
    }

    pub(super) fn set_enabled(&self, enabled: bool) {
        lock(&self.settings).enabled = enabled;
    }

    pub(super) fn set_settings(&self, settings: AgentRetry) {
        *lock(&self.settings) = settings;
    }

    pub(super) fn attempt(&self) -> u32 {
        self.attempt.load(Ordering::SeqCst)
    }

    pub(super) fn is_retrying(&self) -> bool {
        self.retrying.load(Ordering::SeqCst)
    }

    /// An assistant message ended: remembered for the end of the run; one that did not fail
    /// ends a retry in progress with success (pi checks at `message_end`, so an error later in
    /// the same run starts counting again from 1).
    pub(super) fn on_assistant_end(&self, message: &AssistantMessage) -> Option<RetryEvent> {
        *lock(&self.last_assistant) = Some(message.clone());
        if message.stop_reason == StopReason::Error {
            return None;
        }
        let attempt = self.attempt.swap(0, Ordering::SeqCst);
        (attempt > 0).then_some(RetryEvent::End {
            success: true,
            attempt,
            final_error: None,
        })
    }

    /// The run ended (`agent_end`, before anyone hears of it): whether retrying is on is taken
    /// now, as pi takes it.
    pub(super) fn on_agent_end(&self) {
        *lock(&self.enabled_at_end) = Some(self.settings().enabled);
    }

    /// After a run: whether to retry, and the event to send first.
    pub(super) fn after_run(&self) -> (Next, Option<RetryEvent>) {
        let enabled_at_end = lock(&self.enabled_at_end).take();
        let Some(last) = lock(&self.last_assistant).take() else {
            return self.finish(None);
        };
        let settings = self.settings();
        if !enabled_at_end.unwrap_or(settings.enabled) || !is_retryable(&last) {
            return self.finish(None);
        }
        self.retrying.store(true, Ordering::SeqCst);
        let error = last.error_message.clone().unwrap_or_default();
        let attempt = self.attempt.fetch_add(1, Ordering::SeqCst).saturating_add(1);
        if attempt > settings.max_retries {
            self.attempt.store(0, Ordering::SeqCst);
            return self.finish(Some(RetryEvent::End {
                success: false,
                attempt: attempt - 1,
                final_error: Some(error),
            }));
        }
        let delay_ms = settings.delay_ms(attempt);
        let token = CancellationToken::new();
        *lock(&self.wait) = Some(token.clone());
        let error_message = if error.is_empty() {
            "Unknown error".to_owned()
        } else {
            error
        };
        (
            Next::Wait(Duration::from_millis(delay_ms), token),
            Some(RetryEvent::Start {
                attempt,
                max_attempts: settings.max_retries,
                delay_ms,
                error_message,
            }),
        )
    }

    /// The wait ran out: the retry goes on, unless [`RetryState::abort`] came first (false).
    pub(super) fn after_wait(&self) -> bool {
        lock(&self.wait).take().is_some()
    }

    /// The continued run could not start (another run took its place): the retry ends quietly,
    /// as pi's does.
    pub(super) fn stop(&self) {
        self.retrying.store(false, Ordering::SeqCst);
    }

    /// Cancels a retry's wait (pi's `abortRetry`), which ends the retry: the event to send at
    /// once, before whoever aborted goes on (pi sends it before the `abort_retry` response).
    /// `None` when no retry waits.
    pub(super) fn abort(&self) -> Option<RetryEvent> {
        let token = lock(&self.wait).take()?;
        token.cancel();
        let attempt = self.attempt.swap(0, Ordering::SeqCst);
        self.finish(Some(RetryEvent::End {
            success: false,
            attempt,
            final_error: Some("Retry cancelled".to_owned()),
        }))
        .1
    }

    fn finish(&self, event: Option<RetryEvent>) -> (Next, Option<RetryEvent>) {
        self.retrying.store(false, Ordering::SeqCst);
        (Next::Done, event)
    }
}

/// Drops the failed assistant message at the end of the transcript before the retry (pi keeps
/// it in the session file for history, not in what the model is sent).
pub(super) fn without_failed_tail(mut messages: Vec<AgentMessage>) -> Option<Vec<AgentMessage>> {
    matches!(messages.last(), Some(AgentMessage::Assistant(_))).then(|| {
        messages.pop();
        messages
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(text: &str) -> AssistantMessage {
        AssistantMessage {
            stop_reason: StopReason::Error,
            error_message: Some(text.into()),
            ..AssistantMessage::default()
        }
    }

    #[test]
    fn pis_retryable_errors() {
        for text in [
            "529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
            "Provider returned error",
            "Rate limit reached",
            "Too Many Requests",
            "500 status code: boom",
            "502 Bad Gateway",
            "504 Gateway Timeout",
            "Service Unavailable",
            "Internal error",
            "Connection error: tcp connect error: Connection refused (os error 111)",
            "connection lost",
            "WebSocket closed 1006",
            "other side closed",
            "fetch failed",
            "upstream connect error or disconnect/reset before headers",
            "socket hang up",
            "Request ended without sending any chunks",
            "http2 request did not get a response",
            "Request timed out: no response within 300 s (retry.provider.timeoutMs)",
            "terminated",
            "Server requested a retry delay longer than allowed",
            "429 status code: quota (the server asks to retry after 18000 s, longer than the 60 s allowed by \
             retry.provider.maxRetryDelayMs)",
        ] {
            assert!(is_retryable(&failed(text)), "{text}");
        }
        for text in [
            "401 invalid x-api-key",
            "400 status code: bad request",
            "Request was aborted",
            "",
            // Context overflow is compaction's, even with a retryable word in it.
            "413 request_too_large: 500 internal",
            "Your input exceeds the context window of this model",
        ] {
            assert!(!is_retryable(&failed(text)), "{text}");
        }
        // Throttling that says "too many tokens" is not an overflow, so it is retried.
        assert!(is_retryable(&failed("Too many tokens, rate limit: please wait")));
        // Only failed messages.
        let mut aborted = failed("503");
        aborted.stop_reason = StopReason::Aborted;
        assert!(!is_retryable(&aborted));
    }

    #[test]
    fn attempts_count_up_then_give_up_with_the_last_error() {
        let state = RetryState::new(AgentRetry {
            enabled: true,
            max_retries: 2,
            base_delay_ms: 10,
        });
        let mut delays = Vec::new();
        for _ in 0..2 {
            state.on_assistant_end(&failed("503"));
            let (next, event) = state.after_run();
            let Next::Wait(delay, _) = next else { panic!("no retry") };
            delays.push(delay.as_millis());
            assert!(matches!(event, Some(RetryEvent::Start { .. })));
            assert!(state.is_retrying());
            assert!(state.after_wait());
        }
        assert_eq!(delays, [10, 20]);
        state.on_assistant_end(&failed("503 last"));
        let (next, event) = state.after_run();
        assert!(matches!(next, Next::Done));
        assert_eq!(
            event,
            Some(RetryEvent::End {
                success: false,
                attempt: 2,
                final_error: Some("503 last".into())
            })
        );
        assert!(!state.is_retrying());
        assert_eq!(state.attempt(), 0);
    }

    #[test]
    fn a_success_ends_the_retry_and_a_cancelled_wait_ends_it_too() {
        let state = RetryState::new(AgentRetry::default());
        state.on_assistant_end(&failed("overloaded"));
        let (Next::Wait(_, token), _) = state.after_run() else {
            panic!("no retry")
        };
        assert_eq!(
            state.abort(),
            Some(RetryEvent::End {
                success: false,
                attempt: 1,
                final_error: Some("Retry cancelled".into())
            })
        );
        assert!(token.is_cancelled());
        assert!(!state.is_retrying());
        assert_eq!(state.abort(), None, "nothing waits any more");
        state.on_assistant_end(&failed("overloaded"));
        let _ = state.after_run();
        assert!(state.after_wait());
        let ok = AssistantMessage::default();
        assert_eq!(
            state.on_assistant_end(&ok),
            Some(RetryEvent::End {
                success: true,
                attempt: 1,
                final_error: None
            })
        );
        assert_eq!(state.on_assistant_end(&ok), None, "only once");
    }

    #[test]
    fn disabled_retries_nothing() {
        let state = RetryState::new(AgentRetry {
            enabled: false,
            ..AgentRetry::default()
        });
        state.on_assistant_end(&failed("503"));
        let (next, event) = state.after_run();
        assert!(matches!(next, Next::Done));
        assert_eq!(event, None);
    }
}
