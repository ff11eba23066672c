//! Mapping the Messages API's SSE events onto a [`MessageBuilder`].

use std::collections::BTreeMap;

use pi_agent_core::{AssistantMessageEvent, StopReason, Usage};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::builder::MessageBuilder;
use crate::driver::{Flow, ProtocolError, WireProtocol};
use crate::sse::SseEvent;

/// Thinking text shown for a `redacted_thinking` block (its content is encrypted).
pub const REDACTED_THINKING_TEXT: &str = "[Reasoning redacted]";

/// Longest piece of an offending event quoted in an error.
const DATA_EXCERPT_CHARS: usize = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    Text,
    Thinking,
    Tool,
    /// `redacted_thinking`: closes as thinking, takes no deltas.
    Redacted,
    /// A block type we do not map (server tools, citations …); its deltas are skipped.
    Ignored,
}

/// How the response ends, from `message_delta.delta.stop_reason`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stop {
    Reason(StopReason),
    /// A stop reason that is an error (`refusal`, `sensitive`).
    Failed(String),
}

fn map_stop_reason(reason: &str) -> Stop {
    match reason {
        "end_turn" | "stop_sequence" | "pause_turn" => Stop::Reason(StopReason::Stop),
        "max_tokens" | "model_context_window_exceeded" => Stop::Reason(StopReason::Length),
        "tool_use" => Stop::Reason(StopReason::ToolUse),
        "refusal" | "sensitive" => Stop::Failed(reason.to_owned()),
        // New reasons appear over time; finishing normally loses nothing.
        _ => Stop::Reason(StopReason::Stop),
    }
}

/// The `anthropic-messages` stream state.
#[derive(Debug, Default)]
pub(crate) struct AnthropicEvents {
    /// Open blocks by Anthropic's index.
    open: BTreeMap<u64, Block>,
    /// Thinking signatures as they accumulate, by index.
    signatures: BTreeMap<u64, String>,
    usage: Usage,
    stop: Option<Stop>,
}

#[derive(Debug, Default, Deserialize)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct MessageStart {
    message: StartedMessage,
}

#[derive(Deserialize)]
struct StartedMessage {
    id: Option<String>,
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct BlockStart {
    index: u64,
    content_block: StartedBlock,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StartedBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: String,
    },
    RedactedThinking {
        #[serde(default)]
        data: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct BlockDelta {
    index: u64,
    delta: Delta,
}

#[derive(Deserialize)]
#[serde(tag = "type")]
enum Delta {
    #[serde(rename = "text_delta")]
    Text { text: String },
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: String },
    #[serde(rename = "signature_delta")]
    Signature { signature: String },
    #[serde(rename = "input_json_delta")]
    InputJson { partial_json: String },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct BlockStop {
    index: u64,
}

#[derive(Deserialize)]
struct MessageDelta {
    delta: Option<MessageDeltaBody>,
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct MessageDeltaBody {
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct ErrorEvent {
    error: Option<ErrorBody>,
}

#[derive(Deserialize)]
struct ErrorBody {
    #[serde(rename = "type")]
    kind: Option<String>,
    message: Option<String>,
}

fn excerpt(data: &str) -> String {
    crate::redact::redacted_excerpt(data, DATA_EXCERPT_CHARS, None)
}

fn malformed(error: serde_json::Error, data: &str) -> ProtocolError {
    ProtocolError::Malformed {
        provider: "anthropic".to_owned(),
        error,
        data: Some(excerpt(data)),
    }
}

fn parse<T: DeserializeOwned>(value: Value, data: &str) -> Result<T, ProtocolError> {
    serde_json::from_value(value).map_err(|error| malformed(error, data))
}

fn key(index: u64) -> String {
    index.to_string()
}

impl AnthropicEvents {
    fn apply_usage(&mut self, usage: &WireUsage, builder: &mut MessageBuilder) {
        let total = &mut self.usage;
        if let Some(n) = usage.input_tokens {
            total.input = n;
        }
        if let Some(n) = usage.output_tokens {
            total.output = n;
        }
        if let Some(n) = usage.cache_read_input_tokens {
            total.cache_read = n;
        }
        if let Some(n) = usage.cache_creation_input_tokens {
            total.cache_write = n;
        }
        // A server's counts are not trusted to be small: saturate rather than overflow.
        total.total_tokens = total
            .input
            .saturating_add(total.output)
            .saturating_add(total.cache_read)
            .saturating_add(total.cache_write);
        builder.set_usage(self.usage);
    }

    fn start_block(&mut self, start: BlockStart, builder: &mut MessageBuilder, out: &mut Vec<AssistantMessageEvent>) {
        let index = start.index;
        let key = key(index);
        let block = match start.content_block {
            StartedBlock::Text { text } => {
                out.push(builder.text_start(&key));
                if !text.is_empty() {
                    out.push(builder.text_delta(&key, &text));
                }
                Block::Text
            }
            StartedBlock::Thinking { thinking, signature } => {
                out.push(builder.thinking_start(&key));
                if !thinking.is_empty() {
                    out.push(builder.thinking_delta(&key, &thinking));
                }
                if !signature.is_empty() {
                    builder.set_thinking_signature(&key, signature.clone(), false);
                    self.signatures.insert(index, signature);
                }
                Block::Thinking
            }
            StartedBlock::RedactedThinking { data } => {
                out.push(builder.thinking_start(&key));
                out.push(builder.thinking_delta(&key, REDACTED_THINKING_TEXT));
                builder.set_thinking_signature(&key, data, true);
                Block::Redacted
            }
            StartedBlock::ToolUse { id, name, input } => {
                out.push(builder.tool_call_start(&key, &id, &name));
                // Streaming sends `{}` and then the JSON in deltas; a proxy may send it whole.
                if matches!(&input, Value::Object(map) if !map.is_empty()) {
                    out.push(builder.tool_call_delta(&key, &input.to_string()));
                }
                Block::Tool
            }
            StartedBlock::Other => Block::Ignored,
        };
        self.open.insert(index, block);
    }

    fn delta(&mut self, delta: BlockDelta, builder: &mut MessageBuilder, out: &mut Vec<AssistantMessageEvent>) {
        let index = delta.index;
        let key = key(index);
        match (self.open.get(&index), delta.delta) {
            (Some(Block::Text), Delta::Text { text }) => out.push(builder.text_delta(&key, &text)),
            (Some(Block::Thinking), Delta::Thinking { thinking }) => {
                out.push(builder.thinking_delta(&key, &thinking));
            }
            (Some(Block::Thinking), Delta::Signature { signature }) => {
                let full = self.signatures.entry(index).or_default();
                full.push_str(&signature);
                builder.set_thinking_signature(&key, full.clone(), false);
            }
            (Some(Block::Tool), Delta::InputJson { partial_json }) => {
                out.push(builder.tool_call_delta(&key, &partial_json));
            }
            // Deltas of unknown or ignored blocks, or of a kind the block does not take.
            _ => {}
        }
    }

    fn stop_block(
        &mut self,
        index: u64,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<(), ProtocolError> {
        let key = key(index);
        match self.open.remove(&index) {
            Some(Block::Text) => out.push(builder.text_end(&key)),
            Some(Block::Thinking | Block::Redacted) => out.push(builder.thinking_end(&key)),
            Some(Block::Tool) => out.push(builder.tool_call_end(&key)?),
            Some(Block::Ignored) | None => {}
        }
        Ok(())
    }

    /// Closes blocks left open, in index order, and returns how the response ends.
    fn finish(
        &mut self,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<StopReason, ProtocolError> {
        let open: Vec<u64> = self.open.keys().copied().collect();
        for index in open {
            self.stop_block(index, builder, out)?;
        }
        match self.stop.take() {
            None => Ok(StopReason::Stop),
            Some(Stop::Reason(reason)) => Ok(reason),
            Some(Stop::Failed(reason)) => Err(ProtocolError::Refused { reason }),
        }
    }
}

impl WireProtocol for AnthropicEvents {
    fn on_event(
        &mut self,
        event: SseEvent,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<Flow, ProtocolError> {
        let data = event.data.trim();
        let named = event.event.as_deref().filter(|name| !name.is_empty());
        if data.is_empty() {
            return Ok(Flow::Continue);
        }
        if data == "[DONE]" {
            return self.finish(builder, out).map(Flow::Finished);
        }
        let value: Value = serde_json::from_str(data).map_err(|error| malformed(error, data))?;
        let typed = value.get("type").and_then(Value::as_str).map(str::to_owned);
        let kind = match named {
            Some(name) if name != "message" => name.to_owned(),
            _ => typed.unwrap_or_default(),
        };
        match kind.as_str() {
            "message_start" => {
                let start: MessageStart = parse(value, data)?;
                if let Some(id) = start.message.id {
                    builder.set_response_id(id);
                }
                if let Some(usage) = start.message.usage {
                    self.apply_usage(&usage, builder);
                }
            }
            "content_block_start" => self.start_block(parse(value, data)?, builder, out),
            "content_block_delta" => self.delta(parse(value, data)?, builder, out),
            "content_block_stop" => {
                let stop: BlockStop = parse(value, data)?;
                self.stop_block(stop.index, builder, out)?;
            }
            "message_delta" => {
                let delta: MessageDelta = parse(value, data)?;
                if let Some(reason) = delta.delta.and_then(|d| d.stop_reason) {
                    self.stop = Some(map_stop_reason(&reason));
                }
                if let Some(usage) = delta.usage {
                    self.apply_usage(&usage, builder);
                }
            }
            "message_stop" => return self.finish(builder, out).map(Flow::Finished),
            "error" => {
                let error: ErrorEvent = parse(value, data)?;
                let message = match error.error {
                    Some(ErrorBody {
                        kind: Some(kind),
                        message: Some(message),
                    }) => format!("{kind}: {message}"),
                    Some(ErrorBody {
                        kind: None,
                        message: Some(message),
                    }) => message,
                    _ => format!("Anthropic stream error: {}", excerpt(data)),
                };
                return Err(ProtocolError::Reported { message });
            }
            // `ping` and event types added later.
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn on_body_end(
        &mut self,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<StopReason, ProtocolError> {
        if self.stop.is_none() {
            return Err(ProtocolError::NoMessageStop);
        }
        self.finish(builder, out)
    }
}

#[cfg(test)]
mod fuzz;

#[cfg(test)]
mod tests {
    use super::*;
    use pi_agent_core::{ContentBlock, Model};

    fn feed(events: &[(&str, &str)]) -> (Vec<AssistantMessageEvent>, Result<Flow, String>, MessageBuilder) {
        let mut protocol = AnthropicEvents::default();
        let mut builder = MessageBuilder::new(&Model::unknown());
        let mut out = Vec::new();
        let mut last = Ok(Flow::Continue);
        for (name, data) in events {
            let event = SseEvent {
                event: Some((*name).to_owned()),
                data: (*data).to_owned(),
                id: None,
            };
            last = protocol.on_event(event, &mut builder, &mut out);
            if !matches!(last, Ok(Flow::Continue)) {
                break;
            }
        }
        (out, last.map_err(|error| error.to_string()), builder)
    }

    #[test]
    fn stop_reasons() {
        assert_eq!(map_stop_reason("end_turn"), Stop::Reason(StopReason::Stop));
        assert_eq!(map_stop_reason("stop_sequence"), Stop::Reason(StopReason::Stop));
        assert_eq!(map_stop_reason("max_tokens"), Stop::Reason(StopReason::Length));
        assert_eq!(map_stop_reason("tool_use"), Stop::Reason(StopReason::ToolUse));
        assert!(matches!(map_stop_reason("refusal"), Stop::Failed(_)));
        assert_eq!(map_stop_reason("something_new"), Stop::Reason(StopReason::Stop));
    }

    #[test]
    fn max_tokens_finishes_with_length() {
        let (_, last, _) = feed(&[
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":5}}"#,
            ),
            ("message_stop", r#"{"type":"message_stop"}"#),
        ]);
        assert_eq!(last, Ok(Flow::Finished(StopReason::Length)));
    }

    #[test]
    fn refusal_is_an_error() {
        let (_, last, _) = feed(&[
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"refusal"}}"#,
            ),
            ("message_stop", r#"{"type":"message_stop"}"#),
        ]);
        assert!(last.unwrap_err().contains("refusal"));
    }

    #[test]
    fn error_event_text() {
        let (_, last, _) = feed(&[(
            "error",
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        )]);
        assert_eq!(last, Err("overloaded_error: Overloaded".to_owned()));
    }

    #[test]
    fn whole_input_at_block_start_and_unclosed_blocks() {
        let (out, last, builder) = feed(&[
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"read","input":{"path":"a"}}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"s","name":"web_search"}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{}"}}"#,
            ),
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"}}"#,
            ),
            ("message_stop", r#"{"type":"message_stop"}"#),
        ]);
        assert_eq!(last, Ok(Flow::Finished(StopReason::ToolUse)));
        assert_eq!(out.last().map(AssistantMessageEvent::kind), Some("toolcall_end"));
        let ContentBlock::ToolCall(call) = &builder.partial().content[0] else {
            panic!("not a tool call");
        };
        assert_eq!(call.arguments, serde_json::json!({"path": "a"}));
        assert_eq!(builder.partial().content.len(), 1);
    }

    #[test]
    fn malformed_and_misshapen_events_are_errors() {
        let (_, last, _) = feed(&[("content_block_delta", "{nope")]);
        assert!(last.unwrap_err().starts_with("Malformed SSE data from anthropic: "));
        let (_, last, _) = feed(&[("content_block_stop", r#"{"type":"content_block_stop","index":"x"}"#)]);
        assert!(last.unwrap_err().starts_with("Malformed SSE data from anthropic: "));
    }

    #[test]
    fn body_end_without_stop_is_an_error() {
        let mut protocol = AnthropicEvents::default();
        let mut builder = MessageBuilder::new(&Model::unknown());
        let result = protocol.on_body_end(&mut builder, &mut Vec::new());
        assert!(result.unwrap_err().to_string().contains("message_stop"));
    }
}
