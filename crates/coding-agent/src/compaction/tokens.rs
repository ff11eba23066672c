//! Token accounting as pi does it: the context size is the last valid assistant usage plus a
//! chars / 4 estimate of every message after it (pi's `estimateContextTokens`).

use pi_agent_core::{AgentMessage, AssistantMessage, ContentBlock, StopReason, Usage, UserContent};
use serde_json::Value;

/// Characters an image counts for (pi: 4 800 characters, 1 200 tokens).
const IMAGE_CHARS: usize = 4800;

/// The length of `text` as JavaScript counts it (UTF-16 code units), so that estimates match pi's.
pub(crate) fn js_len(text: &str) -> usize {
    text.encode_utf16().count()
}

fn tokens_of(chars: usize) -> u64 {
    chars.div_ceil(4) as u64
}

/// The context tokens an answer's usage reports: its `totalTokens`, or the sum of its parts when
/// the provider sent no total (pi's `calculateContextTokens`).
pub fn calculate_context_tokens(usage: &Usage) -> u64 {
    if usage.total_tokens > 0 {
        return usage.total_tokens;
    }
    usage
        .input
        .saturating_add(usage.output)
        .saturating_add(usage.cache_read)
        .saturating_add(usage.cache_write)
}

/// pi's chars / 4 estimate of one message (rounded up); conservative.
pub fn estimate_tokens(message: &AgentMessage) -> u64 {
    match message {
        AgentMessage::User(user) => tokens_of(match &user.content {
            UserContent::Text(text) => js_len(text),
            UserContent::Blocks(blocks) => blocks.iter().filter_map(ContentBlock::as_text).map(js_len).sum(),
        }),
        AgentMessage::Assistant(assistant) => tokens_of(
            assistant
                .content
                .iter()
                .map(|block| match block {
                    ContentBlock::Text(text) => js_len(&text.text),
                    ContentBlock::Thinking(thinking) => js_len(&thinking.thinking),
                    ContentBlock::ToolCall(call) => {
                        js_len(&call.name) + js_len(&serde_json::to_string(&call.arguments).unwrap_or_default())
                    }
                    ContentBlock::Image(_) => 0,
                })
                .sum(),
        ),
        AgentMessage::ToolResult(result) => tokens_of(blocks_chars(&result.content)),
        AgentMessage::Custom(custom) => {
            let field = |name: &str| custom.fields.get(name);
            let text = |name: &str| field(name).and_then(Value::as_str).map_or(0, js_len);
            match custom.role.as_str() {
                "custom" => tokens_of(match field("content") {
                    Some(Value::String(content)) => js_len(content),
                    Some(blocks @ Value::Array(_)) => {
                        serde_json::from_value::<Vec<ContentBlock>>(blocks.clone()).map_or(0, |b| blocks_chars(&b))
                    }
                    _ => 0,
                }),
                "bashExecution" => tokens_of(text("command") + text("output")),
                "branchSummary" | "compactionSummary" => tokens_of(text("summary")),
                _ => 0,
            }
        }
    }
}

fn blocks_chars(blocks: &[ContentBlock]) -> usize {
    blocks
        .iter()
        .map(|block| match block {
            ContentBlock::Text(text) => js_len(&text.text),
            ContentBlock::Image(_) => IMAGE_CHARS,
            _ => 0,
        })
        .sum()
}

/// The usage of an assistant message that has a valid one (not aborted, not failed).
pub(crate) fn assistant_usage(message: &AgentMessage) -> Option<&Usage> {
    let assistant: &AssistantMessage = message.as_assistant()?;
    (!matches!(assistant.stop_reason, StopReason::Aborted | StopReason::Error)).then_some(&assistant.usage)
}

/// What [`estimate_context_tokens`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextEstimate {
    /// The context size: `usage_tokens + trailing_tokens`.
    pub tokens: u64,
    /// The last valid assistant usage (0 without one).
    pub usage_tokens: u64,
    /// The estimate of the messages after it (of every message without one).
    pub trailing_tokens: u64,
    /// The index of the message whose usage counted.
    pub last_usage_index: Option<usize>,
}

/// The context size of `messages`: the last valid assistant usage plus the estimate of what came
/// after it (pi's `estimateContextTokens`).
pub fn estimate_context_tokens(messages: &[AgentMessage]) -> ContextEstimate {
    let last = messages
        .iter()
        .enumerate()
        .rev()
        .find_map(|(index, message)| assistant_usage(message).map(|usage| (index, usage)));
    let Some((index, usage)) = last else {
        let estimated = messages.iter().map(estimate_tokens).sum();
        return ContextEstimate {
            tokens: estimated,
            usage_tokens: 0,
            trailing_tokens: estimated,
            last_usage_index: None,
        };
    };
    let usage_tokens = calculate_context_tokens(usage);
    let trailing_tokens: u64 = messages[index + 1..].iter().map(estimate_tokens).sum();
    ContextEstimate {
        tokens: usage_tokens.saturating_add(trailing_tokens),
        usage_tokens,
        trailing_tokens,
        last_usage_index: Some(index),
    }
}

/// Whether a context of `context_tokens` calls for compaction: enabled, and more than the window
/// less the reserve (pi's `shouldCompact`).
pub fn should_compact(context_tokens: u64, context_window: u64, settings: &super::CompactionSettings) -> bool {
    settings.enabled && context_tokens as i128 > context_window as i128 - i128::from(settings.reserve_tokens)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_agent_core::{ToolCall, ToolResultMessage, UserMessage};
    use serde_json::json;

    fn user(text: &str) -> AgentMessage {
        AgentMessage::User(UserMessage {
            content: UserContent::Text(text.into()),
            timestamp: 0,
        })
    }

    fn assistant(text: &str, total: u64, stop: StopReason) -> AgentMessage {
        let mut message = AssistantMessage {
            content: vec![ContentBlock::text(text)],
            stop_reason: stop,
            ..AssistantMessage::default()
        };
        message.usage.total_tokens = total;
        AgentMessage::Assistant(message)
    }

    #[test]
    fn estimates_are_chars_over_four_rounded_up_in_utf16_units() {
        assert_eq!(estimate_tokens(&user("abcde")), 2);
        // "😀" is two UTF-16 units, as JavaScript counts it.
        assert_eq!(estimate_tokens(&user("😀😀😀😀")), 2);
        let call = AssistantMessage {
            content: vec![ContentBlock::ToolCall(ToolCall {
                id: "c".into(),
                name: "read".into(),
                arguments: json!({"path": "a.txt"}),
                thought_signature: None,
                namespace: None,
            })],
            ..AssistantMessage::default()
        };
        // "read" + {"path":"a.txt"} = 4 + 16.
        assert_eq!(estimate_tokens(&AgentMessage::Assistant(call)), 5);
        let result = ToolResultMessage {
            tool_call_id: "c".into(),
            tool_name: "read".into(),
            content: vec![ContentBlock::text("x"), ContentBlock::image("AAAA", "image/png")],
            details: None,
            usage: None,
            added_tool_names: None,
            is_error: false,
            timestamp: 0,
        };
        assert_eq!(estimate_tokens(&AgentMessage::ToolResult(result)), 1201);
    }

    #[test]
    fn context_is_last_valid_usage_plus_what_follows() {
        let messages = vec![
            user("hi"),
            assistant("a", 1000, StopReason::Stop),
            user("12345678"),
            assistant("", 0, StopReason::Error),
        ];
        let estimate = estimate_context_tokens(&messages);
        assert_eq!(estimate.usage_tokens, 1000);
        assert_eq!(estimate.trailing_tokens, 2);
        assert_eq!(estimate.tokens, 1002);
        assert_eq!(estimate.last_usage_index, Some(1));
        let none = estimate_context_tokens(&messages[..1]);
        assert_eq!((none.tokens, none.last_usage_index), (1, None));
    }

    #[test]
    fn threshold_is_window_less_reserve() {
        let settings = crate::compaction::CompactionSettings {
            enabled: true,
            reserve_tokens: 1000,
            keep_recent_tokens: 150,
        };
        assert!(!should_compact(1000, 2000, &settings));
        assert!(should_compact(1001, 2000, &settings));
        assert!(should_compact(1, 500, &settings));
        let off = crate::compaction::CompactionSettings {
            enabled: false,
            ..settings
        };
        assert!(!should_compact(5000, 2000, &off));
    }
}
