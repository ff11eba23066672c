//! `--mode json`: every session event as one JSON line, as pi prints them.
//!
//! Agent events keep pi's shapes, except that `message_update` is delta-only —
//! `{"type":"message_update","usage":…,"assistantMessageEvent":…}` without the event's `partial`
//! and without the cumulative `message` (`message_end` carries the whole message). The session's
//! own events are `pending_action`, `resolve_outcome` and `resolve_forcing_stopped`.

use std::sync::Arc;

use pi_agent_core::AgentEvent;
use serde_json::{Map, Value, json};

use pi_coding_agent::SessionEvent;
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
    event_value(event).to_string()
}

/// The JSON value of one event.
pub fn event_value(event: &SessionEvent) -> Value {
    match event {
        SessionEvent::Agent(AgentEvent::MessageUpdate {
            message,
            assistant_message_event,
        }) => {
            // The cumulative `partial` is left out: swapped for an empty message before
            // serializing, so a long answer is not serialized again with every token.
            let mut event = assistant_message_event.clone();
            if let Some(partial) = event.partial_mut() {
                *partial = Arc::default();
            }
            let mut delta = serde_json::to_value(&event).unwrap_or(Value::Null);
            if let Value::Object(map) = &mut delta {
                map.remove("partial");
            }
            json!({
                "type": "message_update",
                "usage": message.usage,
                "assistantMessageEvent": delta,
            })
        }
        SessionEvent::Agent(event) => serde_json::to_value(event).unwrap_or(Value::Null),
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
