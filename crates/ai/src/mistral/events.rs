//! Mapping Mistral's streamed chat-completion chunks onto pi's assistant-message events, as
//! pi-ai 0.73.1 maps them.
//!
//! Of each chunk's first choice, the `delta`:
//!
//! * `content` — a string, or parts: `text` parts and strings continue the open text block (or
//!   open one), `thinking` parts (their `text` pieces joined; empty ones skipped) the open thinking
//!   block;
//! * `tool_calls` — each closes the open text or thinking block; a call is known by its id and
//!   `index` (an id that is missing or `"null"` becomes pi's nine-character id of
//!   `toolcall:<index>`); its `arguments` (a string, or an object) are appended and parsed as they
//!   stream. Every call ends when the stream does, after the open block.
//!
//! `finish_reason`: `stop` → stop, `length` / `model_length` → length, `tool_calls` → toolUse,
//! `error` fails the response (`An unknown error occurred`, pi's text), anything else → stop.
//! `usage` (the last one counts): `prompt_tokens` input, `completion_tokens` output, no cache
//! counts. The response id is the first chunk's `id`. `data: [DONE]` ends the response; a body
//! that ends without it ends it too, as with Mistral's SDK. A chunk that is an error object
//! (`{"object": "error", "message": …}` or `{"error": …}`) fails the response with its message.

use std::collections::HashMap;

use pi_agent_core::{AssistantMessageEvent, StopReason, Usage};
use serde_json::Value;

use super::ids;
use crate::builder::MessageBuilder;
use crate::driver::{Flow, ProtocolError, WireProtocol};
use crate::sse::SseEvent;

/// Longest excerpt of bad data quoted in an error.
const DATA_EXCERPT_CHARS: usize = 200;

/// pi's text for a response Mistral finished with `error`.
const UNKNOWN_ERROR: &str = "An unknown error occurred";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Thinking,
}

/// The [`WireProtocol`] of `mistral-conversations`.
pub struct MistralProtocol {
    provider: String,
    /// The open text or thinking block: its key and kind.
    current: Option<(String, Kind)>,
    blocks: usize,
    /// The tool calls by `<id>:<index>`, with their builder keys, in order.
    calls: HashMap<String, String>,
    call_keys: Vec<String>,
    stop: StopReason,
    failed: bool,
    has_response_id: bool,
}

fn str_field<'a>(value: &'a Value, field: &str) -> Option<&'a str> {
    value.get(field).and_then(Value::as_str)
}

fn u64_field(value: &Value, field: &str) -> u64 {
    value.get(field).and_then(Value::as_u64).unwrap_or(0)
}

impl MistralProtocol {
    /// A protocol for one response of `provider` (named in error texts).
    pub fn new(provider: impl Into<String>) -> Self {
        MistralProtocol {
            provider: provider.into(),
            current: None,
            blocks: 0,
            calls: HashMap::new(),
            call_keys: Vec::new(),
            stop: StopReason::Stop,
            failed: false,
            has_response_id: false,
        }
    }

    fn next_key(&mut self) -> String {
        self.blocks += 1;
        format!("b{}", self.blocks)
    }

    fn close_current(&mut self, builder: &mut MessageBuilder, out: &mut Vec<AssistantMessageEvent>) {
        if let Some((key, kind)) = self.current.take() {
            out.push(match kind {
                Kind::Text => builder.text_end(&key),
                Kind::Thinking => builder.thinking_end(&key),
            });
        }
    }

    fn append(&mut self, kind: Kind, delta: &str, builder: &mut MessageBuilder, out: &mut Vec<AssistantMessageEvent>) {
        if self.current.as_ref().is_none_or(|(_, current)| *current != kind) {
            self.close_current(builder, out);
            let key = self.next_key();
            out.push(match kind {
                Kind::Text => builder.text_start(&key),
                Kind::Thinking => builder.thinking_start(&key),
            });
            self.current = Some((key, kind));
        }
        if let Some((key, _)) = &self.current {
            out.push(match kind {
                Kind::Text => builder.text_delta(key, delta),
                Kind::Thinking => builder.thinking_delta(key, delta),
            });
        }
    }

    fn on_content(&mut self, content: &Value, builder: &mut MessageBuilder, out: &mut Vec<AssistantMessageEvent>) {
        let items = match content {
            Value::Array(items) => items.as_slice(),
            other => std::slice::from_ref(other),
        };
        for item in items {
            match item {
                Value::String(text) => self.append(Kind::Text, text, builder, out),
                Value::Object(_) => match str_field(item, "type") {
                    Some("thinking") => {
                        let text: String = item
                            .get("thinking")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                            .filter_map(|part| str_field(part, "text"))
                            .collect();
                        if !text.is_empty() {
                            self.append(Kind::Thinking, &text, builder, out);
                        }
                    }
                    Some("text") => {
                        let text = str_field(item, "text").unwrap_or_default();
                        self.append(Kind::Text, text, builder, out);
                    }
                    _ => {}
                },
                _ => {}
            }
        }
    }

    fn on_tool_call(&mut self, call: &Value, builder: &mut MessageBuilder, out: &mut Vec<AssistantMessageEvent>) {
        self.close_current(builder, out);
        let index = u64_field(call, "index");
        let id = match str_field(call, "id").filter(|id| !id.is_empty() && *id != "null") {
            Some(id) => id.to_owned(),
            None => ids::derive(&format!("toolcall:{index}"), 0),
        };
        let function = call.get("function");
        let lookup = format!("{id}:{index}");
        let key = match self.calls.get(&lookup) {
            Some(key) => key.clone(),
            None => {
                let key = self.next_key();
                let name = function.and_then(|f| str_field(f, "name")).unwrap_or_default();
                out.push(builder.tool_call_start(&key, &id, name));
                self.calls.insert(lookup, key.clone());
                self.call_keys.push(key.clone());
                key
            }
        };
        let fragment = match function.and_then(|f| f.get("arguments")) {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Null) | None => "{}".to_owned(),
            Some(other) => other.to_string(),
        };
        out.push(builder.tool_call_delta(&key, &fragment));
    }

    fn on_chunk(&mut self, chunk: &Value, builder: &mut MessageBuilder, out: &mut Vec<AssistantMessageEvent>) {
        if !self.has_response_id
            && let Some(id) = str_field(chunk, "id").filter(|id| !id.is_empty())
        {
            builder.set_response_id(id);
            self.has_response_id = true;
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let input = u64_field(usage, "prompt_tokens");
            let output = u64_field(usage, "completion_tokens");
            let total = match u64_field(usage, "total_tokens") {
                0 => input + output,
                total => total,
            };
            builder.set_usage(Usage {
                input,
                output,
                total_tokens: total,
                ..Usage::default()
            });
        }
        let Some(choice) = chunk.get("choices").and_then(|c| c.get(0)) else {
            return;
        };
        if let Some(reason) = str_field(choice, "finish_reason") {
            match reason {
                "length" | "model_length" => self.stop = StopReason::Length,
                "tool_calls" => self.stop = StopReason::ToolUse,
                "error" => self.failed = true,
                _ => self.stop = StopReason::Stop,
            }
        }
        let Some(delta) = choice.get("delta") else {
            return;
        };
        if let Some(content) = delta.get("content").filter(|c| !c.is_null()) {
            self.on_content(content, builder, out);
        }
        for call in delta.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
            self.on_tool_call(call, builder, out);
        }
    }

    /// Closes the open block and every tool call: the stop reason, or the error.
    fn end(
        &mut self,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<StopReason, ProtocolError> {
        self.close_current(builder, out);
        for key in std::mem::take(&mut self.call_keys) {
            out.push(builder.tool_call_end(&key)?);
        }
        if self.failed {
            return Err(ProtocolError::Reported {
                message: UNKNOWN_ERROR.to_owned(),
            });
        }
        Ok(self.stop)
    }
}

/// The message of an error chunk, if the chunk is one.
fn error_message(chunk: &Value) -> Option<String> {
    let error = match chunk.get("error") {
        Some(error) if !error.is_null() => error,
        _ if str_field(chunk, "object") == Some("error") => chunk,
        _ => return None,
    };
    let message = match error {
        Value::String(text) => text.clone(),
        _ => str_field(error, "message").map_or_else(|| error.to_string(), str::to_owned),
    };
    Some(crate::redact::redacted_excerpt(&message, 2000, None))
}

impl WireProtocol for MistralProtocol {
    fn on_event(
        &mut self,
        event: SseEvent,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<Flow, ProtocolError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(Flow::Continue);
        }
        if data == "[DONE]" {
            return self.end(builder, out).map(Flow::Finished);
        }
        let chunk: Value = serde_json::from_str(data).map_err(|error| ProtocolError::Malformed {
            provider: self.provider.clone(),
            error,
            data: Some(crate::redact::redacted_excerpt(data, DATA_EXCERPT_CHARS, None)),
        })?;
        if let Some(message) = error_message(&chunk) {
            return Err(ProtocolError::Reported { message });
        }
        self.on_chunk(&chunk, builder, out);
        Ok(Flow::Continue)
    }

    fn on_body_end(
        &mut self,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<StopReason, ProtocolError> {
        self.end(builder, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_agent_core::{ContentBlock, Model};
    use serde_json::json;

    fn run(chunks: &[Value]) -> (Vec<AssistantMessageEvent>, Result<StopReason, String>, MessageBuilder) {
        let model = Model {
            api: super::super::API.into(),
            ..Model::unknown()
        };
        let mut builder = MessageBuilder::new(&model);
        let mut protocol = MistralProtocol::new("mistral");
        let mut out = Vec::new();
        for chunk in chunks {
            let sse = SseEvent {
                event: None,
                data: chunk.to_string(),
                id: None,
            };
            match protocol.on_event(sse, &mut builder, &mut out) {
                Ok(Flow::Continue) => {}
                Ok(Flow::Finished(reason)) => return (out, Ok(reason), builder),
                Err(error) => return (out, Err(error.to_string()), builder),
            }
        }
        let end = protocol.on_body_end(&mut builder, &mut out).map_err(|e| e.to_string());
        (out, end, builder)
    }

    fn delta(delta: Value) -> Value {
        json!({"id": "r1", "choices": [{"index": 0, "delta": delta}]})
    }

    #[test]
    fn thinking_parts_then_text_parts() {
        let (out, end, builder) = run(&[
            delta(json!({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Hm"}]}]})),
            delta(json!({"content": [{"type": "thinking", "thinking": []}]})),
            delta(json!({"content": [{"type": "text", "text": "A"}]})),
            delta(json!({"content": "B"})),
        ]);
        assert_eq!(end, Ok(StopReason::Stop));
        let kinds: Vec<&str> = out.iter().map(AssistantMessageEvent::kind).collect();
        assert_eq!(
            kinds,
            [
                "thinking_start",
                "thinking_delta",
                "thinking_end",
                "text_start",
                "text_delta",
                "text_delta",
                "text_end"
            ]
        );
        let message = builder.partial();
        assert!(matches!(&message.content[0], ContentBlock::Thinking(t) if t.thinking == "Hm"));
        assert_eq!(message.text(), "AB");
    }

    #[test]
    fn a_call_without_an_id_gets_pis_id_of_its_index() {
        let (_, end, builder) = run(&[
            delta(
                json!({"tool_calls": [{"id": "null", "index": 0, "function": {"name": "f", "arguments": "{\"a\":"}}]}),
            ),
            delta(json!({"tool_calls": [{"id": "null", "index": 0, "function": {"name": "f", "arguments": "1}"}}]})),
            json!({"id": "r1", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        ]);
        assert_eq!(end, Ok(StopReason::ToolUse));
        let calls: Vec<_> = builder.partial().tool_calls().collect();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].id, "toolcall0");
        assert_eq!(calls[0].arguments, json!({"a": 1}));
    }

    #[test]
    fn an_error_finish_and_an_error_chunk_fail() {
        let (_, end, _) =
            run(&[json!({"id": "r", "choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": "error"}]})]);
        assert_eq!(end, Err(UNKNOWN_ERROR.to_owned()));
        let (_, end, _) = run(&[json!({"object": "error", "message": "Service unavailable", "type": "internal"})]);
        assert_eq!(end, Err("Service unavailable".to_owned()));
    }
}
