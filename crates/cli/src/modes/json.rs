//! `--mode json`: every session event as one JSON line, as pi prints them.
//!
//! Agent events keep pi 0.73.1's shapes and key order: `message_update` is
//! `{"type":"message_update","assistantMessageEvent":{…,"partial":P},"message":P}` with the
//! message so far twice, as pi writes it. The session's events `queue_update`,
//! `thinking_level_changed`, `session_info_changed`, `auto_retry_start`, `auto_retry_end`, `compaction_start` and
//! `compaction_end` are
//! pi's; `pending_action`,
//! `resolve_outcome` and `resolve_forcing_stopped` are this program's own
//! (`docs/differences-from-pi.md`).

use std::sync::Arc;

use pi_agent_core::{AgentEvent, AssistantMessage, AssistantMessageEvent};
use serde_json::{Map, Value, json};

use pi_coding_agent::SessionEvent;
use pi_coding_agent::config::thinking_level_name;
use pi_coding_agent::resolve::ResolveOutcome;

/// The JSON line of one event (without the newline).
///
/// ```
/// use pi_agent_core::AgentEvent;
/// use pi_cli::modes::json::event_line;
/// use pi_coding_agent::SessionEvent;
/// assert_eq!(event_line(&SessionEvent::Agent(AgentEvent::TurnStart)), r#"{"type":"turn_start"}"#);
/// ```
pub fn event_line(event: &SessionEvent) -> String {
    match event {
        SessionEvent::Agent(AgentEvent::MessageUpdate {
            message,
            assistant_message_event,
        }) => message_update_line(message, assistant_message_event),
        other => event_value(other).to_string(),
    }
}

/// The `message_update` line, serializing the message so far once and writing those bytes both
/// as the event's `partial` and as `message`: the shape needs them twice per token, but nothing
/// else of the message is serialized again.
fn message_update_line(message: &AssistantMessage, event: &AssistantMessageEvent) -> String {
    let partial = serde_json::to_string(message).unwrap_or_else(|_| "null".to_owned());
    // The event without its partial (swapped for an empty message, then dropped from the map).
    let mut delta = event.clone();
    let has_partial = match delta.partial_mut() {
        Some(slot) => {
            *slot = Arc::default();
            true
        }
        None => false,
    };
    let mut delta = serde_json::to_value(&delta).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut delta {
        map.remove("partial");
    }
    let delta = delta.to_string();
    let mut line = String::with_capacity(delta.len() + 2 * partial.len() + 64);
    line.push_str(r#"{"type":"message_update","assistantMessageEvent":"#);
    match delta.strip_suffix('}').filter(|_| has_partial) {
        Some(open) => {
            line.push_str(open);
            // `{}` would need no comma; an event always has at least its `type`.
            line.push_str(r#","partial":"#);
            line.push_str(&partial);
            line.push('}');
        }
        None => line.push_str(&delta),
    }
    line.push_str(r#","message":"#);
    line.push_str(&partial);
    line.push('}');
    line
}

/// The JSON value of one event (for `message_update` the same object [`event_line`] writes).
pub fn event_value(event: &SessionEvent) -> Value {
    match event {
        SessionEvent::Agent(AgentEvent::MessageUpdate {
            message,
            assistant_message_event,
        }) => json!({
            "type": "message_update",
            "assistantMessageEvent": assistant_message_event,
            "message": message,
        }),
        SessionEvent::Agent(event) => serde_json::to_value(event).unwrap_or(Value::Null),
        SessionEvent::QueueUpdate { steering, follow_up } => json!({
            "type": "queue_update",
            "steering": steering,
            "followUp": follow_up,
        }),
        SessionEvent::ThinkingLevelChanged(level) => json!({
            "type": "thinking_level_changed",
            "level": thinking_level_name(*level),
        }),
        SessionEvent::SessionInfoChanged { name } => {
            let mut map = Map::new();
            map.insert("type".into(), "session_info_changed".into());
            if let Some(name) = name {
                map.insert("name".into(), name.clone().into());
            }
            Value::Object(map)
        }
        SessionEvent::PendingActionPushed {
            label,
            source_tool_name,
            pending,
        } => json!({
            "type": "pending_action",
            "label": label,
            "sourceToolName": source_tool_name,
            "pending": pending,
        }),
        SessionEvent::AutoRetryStart {
            attempt,
            max_attempts,
            delay_ms,
            error_message,
        } => json!({
            "type": "auto_retry_start",
            "attempt": attempt,
            "maxAttempts": max_attempts,
            "delayMs": delay_ms,
            "errorMessage": error_message,
        }),
        SessionEvent::AutoRetryEnd {
            success,
            attempt,
            final_error,
        } => {
            let mut map = Map::new();
            map.insert("type".into(), "auto_retry_end".into());
            map.insert("success".into(), (*success).into());
            map.insert("attempt".into(), (*attempt).into());
            // pi leaves `finalError` out on success.
            if let Some(error) = final_error {
                map.insert("finalError".into(), error.clone().into());
            }
            Value::Object(map)
        }
        SessionEvent::CompactionStart { reason } => json!({"type": "compaction_start", "reason": reason.as_str()}),
        SessionEvent::CompactionEnd {
            reason,
            result,
            aborted,
            will_retry,
            error_message,
        } => {
            // pi's key order; `result` and `errorMessage` left out when undefined, as
            // JSON.stringify does.
            let mut map = Map::new();
            map.insert("type".into(), "compaction_end".into());
            map.insert("reason".into(), reason.as_str().into());
            if let Some(result) = result {
                map.insert("result".into(), result.to_json());
            }
            map.insert("aborted".into(), (*aborted).into());
            map.insert("willRetry".into(), (*will_retry).into());
            if let Some(message) = error_message {
                map.insert("errorMessage".into(), message.clone().into());
            }
            Value::Object(map)
        }
        SessionEvent::Resolved(outcome) => outcome_value(outcome),
        SessionEvent::ResolveForcingStopped(stopped) => json!({
            "type": "resolve_forcing_stopped",
            "label": stopped.label,
            "sourceToolName": stopped.source_tool_name,
            "attempts": stopped.attempts,
            "notice": event.notice(),
        }),
    }
}

fn outcome_value(outcome: &ResolveOutcome) -> Value {
    let mut map = Map::new();
    map.insert("type".into(), "resolve_outcome".into());
    map.insert("action".into(), outcome.action.as_str().into());
    map.insert("label".into(), outcome.label.clone().into());
    map.insert("sourceToolName".into(), outcome.source_tool_name.clone().into());
    if let Some(error) = &outcome.error {
        map.insert("error".into(), error.clone().into());
    }
    map.insert("remaining".into(), outcome.remaining.into());
    map.insert("standing".into(), outcome.standing.into());
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use pi_agent_core::{ContentBlock, ThinkingLevel};

    use super::*;

    fn partial(text: &str) -> Arc<AssistantMessage> {
        Arc::new(AssistantMessage {
            content: vec![ContentBlock::text(text)],
            api: "openai-completions".into(),
            provider: "mock".into(),
            model: "m".into(),
            timestamp: 7,
            ..AssistantMessage::default()
        })
    }

    #[test]
    fn message_update_carries_the_message_twice_in_pis_order_and_no_usage() {
        let message = partial("Hello");
        let event = SessionEvent::Agent(AgentEvent::MessageUpdate {
            message: message.clone(),
            assistant_message_event: AssistantMessageEvent::TextDelta {
                content_index: 0,
                delta: "lo".into(),
                partial: message.clone(),
            },
        });
        let message_json = serde_json::to_string(&*message).unwrap();
        assert_eq!(
            event_line(&event),
            format!(
                r#"{{"type":"message_update","assistantMessageEvent":{{"type":"text_delta","contentIndex":0,"delta":"lo","partial":{message_json}}},"message":{message_json}}}"#
            )
        );
        // The line and the value agree.
        assert_eq!(
            serde_json::from_str::<Value>(&event_line(&event)).unwrap(),
            event_value(&event)
        );
    }

    #[test]
    fn retry_events_in_pis_shape() {
        let line = |event: SessionEvent| event_line(&event);
        assert_eq!(
            line(SessionEvent::AutoRetryStart {
                attempt: 1,
                max_attempts: 3,
                delay_ms: 2000,
                error_message: "503 Service Unavailable".into()
            }),
            r#"{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"503 Service Unavailable"}"#
        );
        assert_eq!(
            line(SessionEvent::AutoRetryEnd {
                success: true,
                attempt: 2,
                final_error: None
            }),
            r#"{"type":"auto_retry_end","success":true,"attempt":2}"#
        );
        assert_eq!(
            line(SessionEvent::AutoRetryEnd {
                success: false,
                attempt: 3,
                final_error: Some("Retry cancelled".into())
            }),
            r#"{"type":"auto_retry_end","success":false,"attempt":3,"finalError":"Retry cancelled"}"#
        );
    }

    #[test]
    fn pis_session_events() {
        let line = |event: SessionEvent| event_line(&event);
        assert_eq!(
            line(SessionEvent::QueueUpdate {
                steering: vec!["a".into()],
                follow_up: vec![]
            }),
            r#"{"type":"queue_update","steering":["a"],"followUp":[]}"#
        );
        assert_eq!(
            line(SessionEvent::ThinkingLevelChanged(ThinkingLevel::High)),
            r#"{"type":"thinking_level_changed","level":"high"}"#
        );
        assert_eq!(
            line(SessionEvent::SessionInfoChanged {
                name: Some("demo".into())
            }),
            r#"{"type":"session_info_changed","name":"demo"}"#
        );
    }
}
