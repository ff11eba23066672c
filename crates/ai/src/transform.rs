//! Preparing the transcript for a provider request, the way pi-ai's message transform does.

use std::borrow::Cow;
use std::collections::HashSet;

use pi_agent_core::{AgentMessage, ContentBlock, StopReason, ToolResultMessage};

/// The output-token limit pi-ai sends when the caller gives none: the model's, at most 32000
/// (pi-ai's `buildBaseOptions`); `None` when the model does not say.
pub(crate) fn max_output_tokens(model: &pi_agent_core::Model, options: &pi_agent_core::StreamOptions) -> Option<u64> {
    options
        .max_tokens
        .filter(|&n| n > 0)
        .or((model.max_tokens > 0).then(|| model.max_tokens.min(32_000)))
}

/// The level a request asks for: the options' level clamped to what the model offers
/// ([`pi_agent_core::Model::clamp_thinking_level`]), `None` when that is `off`.
pub(crate) fn requested_level(
    model: &pi_agent_core::Model,
    options: &pi_agent_core::StreamOptions,
) -> Option<pi_agent_core::ThinkingLevel> {
    options
        .reasoning
        .map(|level| model.clamp_thinking_level(level))
        .filter(|level| *level != pi_agent_core::ThinkingLevel::Off)
}

/// Text of the synthetic result of an orphaned tool call.
pub const NO_RESULT_PROVIDED: &str = "No result provided";

fn synthetic_result(id: &str, name: &str, timestamp: i64) -> AgentMessage {
    AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: id.to_owned(),
        tool_name: name.to_owned(),
        content: vec![ContentBlock::text(NO_RESULT_PROVIDED)],
        details: None,
        usage: None,
        added_tool_names: None,
        is_error: true,
        timestamp,
    })
}

/// The messages to send, borrowed where unchanged.
///
/// * Custom-role messages are left out (a `convert_to_llm` should have mapped them).
/// * Assistant messages that ended in `error` or `aborted` are left out, with the tool results
///   that answer their calls.
/// * A tool call with no result before the next user or assistant message (or the end) gets a
///   synthetic error result `No result provided`, so providers never see an orphaned call.
///
/// ```
/// use pi_agent_core::{AgentMessage, AssistantMessage, ContentBlock, StopReason, ToolCall};
/// use pi_ai::prepare_messages;
///
/// let call = ContentBlock::ToolCall(ToolCall::new("c1", "read", serde_json::json!({})));
/// let assistant = AssistantMessage { content: vec![call], stop_reason: StopReason::ToolUse, ..Default::default() };
/// let messages = [AgentMessage::user("hi"), assistant.into(), AgentMessage::user("next")];
/// let prepared = prepare_messages(&messages);
/// assert_eq!(prepared.len(), 4);
/// assert_eq!(prepared[2].as_tool_result().unwrap().text(), "No result provided");
/// ```
pub fn prepare_messages(messages: &[AgentMessage]) -> Vec<Cow<'_, AgentMessage>> {
    let mut out: Vec<Cow<'_, AgentMessage>> = Vec::with_capacity(messages.len());
    let mut known_calls: HashSet<&str> = HashSet::new();
    let mut pending: Vec<(&str, &str, i64)> = Vec::new();
    let flush = |out: &mut Vec<Cow<'_, AgentMessage>>, pending: &mut Vec<(&str, &str, i64)>| {
        for (id, name, timestamp) in pending.drain(..) {
            out.push(Cow::Owned(synthetic_result(id, name, timestamp)));
        }
    };
    for message in messages {
        match message {
            AgentMessage::Custom(_) => {}
            AgentMessage::Assistant(assistant) => {
                if matches!(assistant.stop_reason, StopReason::Error | StopReason::Aborted) {
                    continue;
                }
                flush(&mut out, &mut pending);
                for call in assistant.tool_calls() {
                    known_calls.insert(&call.id);
                    pending.push((&call.id, &call.name, assistant.timestamp));
                }
                out.push(Cow::Borrowed(message));
            }
            AgentMessage::ToolResult(result) => {
                if !known_calls.contains(result.tool_call_id.as_str()) {
                    continue;
                }
                pending.retain(|(id, _, _)| *id != result.tool_call_id);
                out.push(Cow::Borrowed(message));
            }
            AgentMessage::User(_) => {
                flush(&mut out, &mut pending);
                out.push(Cow::Borrowed(message));
            }
        }
    }
    flush(&mut out, &mut pending);
    out
}

/// A tool-call id as Anthropic and Google accept it: letters, digits, `_` and `-` only (others
/// become `_`), at most 64 characters (pi's normalization of ids from other providers).
pub(crate) fn sanitized_call_id(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_agent_core::{AssistantMessage, ToolCall};

    fn assistant(calls: &[&str], stop: StopReason) -> AgentMessage {
        AgentMessage::Assistant(AssistantMessage {
            content: calls
                .iter()
                .map(|id| ContentBlock::ToolCall(ToolCall::new(*id, "t", serde_json::json!({}))))
                .collect(),
            stop_reason: stop,
            ..Default::default()
        })
    }

    fn result(id: &str) -> AgentMessage {
        AgentMessage::ToolResult(ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "t".into(),
            content: vec![ContentBlock::text("ok")],
            details: None,
            usage: None,
            added_tool_names: None,
            is_error: false,
            timestamp: 0,
        })
    }

    #[test]
    fn drops_failed_assistants_and_their_results() {
        let messages = [
            AgentMessage::user("a"),
            assistant(&["x"], StopReason::Aborted),
            result("x"),
        ];
        let prepared = prepare_messages(&messages);
        assert_eq!(prepared.len(), 1);
    }

    #[test]
    fn patches_orphans_at_the_end_and_keeps_answered_calls() {
        let messages = [
            AgentMessage::user("a"),
            assistant(&["x", "y"], StopReason::ToolUse),
            result("x"),
        ];
        let prepared = prepare_messages(&messages);
        let roles: Vec<_> = prepared.iter().map(|m| m.role().to_owned()).collect();
        assert_eq!(roles, ["user", "assistant", "toolResult", "toolResult"]);
        assert_eq!(prepared[3].as_tool_result().unwrap().tool_call_id, "y");
        assert!(prepared[3].as_tool_result().unwrap().is_error);
    }

    #[test]
    fn drops_custom_messages() {
        let custom = AgentMessage::Custom(pi_agent_core::CustomMessage {
            role: "notification".into(),
            fields: Default::default(),
        });
        assert_eq!(prepare_messages(&[custom, AgentMessage::user("a")]).len(), 1);
    }
}
