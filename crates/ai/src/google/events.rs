//! Mapping the streamed `GenerateContentResponse` chunks onto pi's assistant-message events.
//!
//! Each SSE event's data is one `GenerateContentResponse`. Of its first candidate:
//!
//! * each part with `text` continues the current block, or opens a new one when the kind changes:
//!   thinking for `thought: true`, text otherwise. A part's non-empty `thoughtSignature` becomes
//!   the block's signature (thinking signature or text signature; later parts without one keep it);
//! * each `functionCall` part closes the current block and is a whole tool call at once (start,
//!   its `args` as one delta, end), with the API's id — or, when it gives none or repeats one,
//!   pi's `<name>_<milliseconds>_<counter>` — and its own `thoughtSignature`;
//! * `finishReason`: `STOP` → stop, `MAX_TOKENS` → length, any other (`SAFETY`, `RECITATION`,
//!   `MALFORMED_FUNCTION_CALL`, …) fails the response, unless it holds tool calls: then, as with
//!   every response holding tool calls, the stop reason is toolUse.
//!
//! `usageMetadata` (the last one counts) gives the usage: input is `promptTokenCount` less
//! `cachedContentTokenCount` (counted as cache reads), output is `candidatesTokenCount` plus
//! `thoughtsTokenCount`. `responseId` is the first non-empty one. The stream has no end marker:
//! the response is complete when the body ends. A chunk that is an `error` object fails the
//! response with its status and JSON, as Google's SDK reports it.

use std::sync::atomic::{AtomicU64, Ordering};

use pi_agent_core::{AssistantMessageEvent, StopReason, Usage, now_ms};
use serde_json::Value;

use crate::builder::MessageBuilder;
use crate::driver::{Flow, ProtocolError, WireProtocol};
use crate::sse::SseEvent;

/// Longest excerpt of bad data quoted in an error.
const DATA_EXCERPT_CHARS: usize = 200;

/// The counter of pi's generated tool-call ids, shared by every response of the process.
static TOOL_CALL_COUNTER: AtomicU64 = AtomicU64::new(0);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Thinking,
}

/// How the candidate finished.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Finish {
    Stop,
    Length,
    /// A finish reason that is an error.
    Failed(String),
}

/// The [`WireProtocol`] of `google-generative-ai` and `google-vertex`.
pub struct GoogleProtocol {
    provider: String,
    /// The open text or thinking block: its key and kind.
    current: Option<(String, Kind)>,
    blocks: usize,
    tool_call_ids: Vec<String>,
    finish: Option<Finish>,
    has_response_id: bool,
}

fn str_field<'a>(value: &'a Value, field: &str) -> Option<&'a str> {
    value.get(field).and_then(Value::as_str)
}

fn u64_field(value: &Value, field: &str) -> u64 {
    value.get(field).and_then(Value::as_u64).unwrap_or(0)
}

impl GoogleProtocol {
    /// A protocol for one response of `provider` (named in error texts).
    pub fn new(provider: impl Into<String>) -> Self {
        GoogleProtocol {
            provider: provider.into(),
            current: None,
            blocks: 0,
            tool_call_ids: Vec::new(),
            finish: None,
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

    fn on_text(
        &mut self,
        part: &Value,
        text: &str,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) {
        let kind = if part.get("thought").and_then(Value::as_bool) == Some(true) {
            Kind::Thinking
        } else {
            Kind::Text
        };
        if self.current.as_ref().is_none_or(|(_, current)| *current != kind) {
            self.close_current(builder, out);
            let key = self.next_key();
            out.push(match kind {
                Kind::Text => builder.text_start(&key),
                Kind::Thinking => builder.thinking_start(&key),
            });
            self.current = Some((key, kind));
        }
        let Some((key, _)) = &self.current else {
            return;
        };
        let signature = str_field(part, "thoughtSignature").filter(|s| !s.is_empty());
        match kind {
            Kind::Thinking => {
                if let Some(signature) = signature {
                    builder.set_thinking_signature(key, signature, false);
                }
                out.push(builder.thinking_delta(key, text));
            }
            Kind::Text => {
                if let Some(signature) = signature {
                    builder.set_text_signature(key, signature);
                }
                out.push(builder.text_delta(key, text));
            }
        }
    }

    fn on_function_call(
        &mut self,
        part: &Value,
        call: &Value,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<(), ProtocolError> {
        self.close_current(builder, out);
        let name = str_field(call, "name").unwrap_or_default();
        let id = match str_field(call, "id").filter(|id| !id.is_empty()) {
            Some(id) if !self.tool_call_ids.iter().any(|seen| seen == id) => id.to_owned(),
            _ => {
                let counter = TOOL_CALL_COUNTER.fetch_add(1, Ordering::Relaxed) + 1;
                format!("{name}_{}_{counter}", now_ms())
            }
        };
        self.tool_call_ids.push(id.clone());
        let arguments = match call.get("args") {
            Some(args) if !args.is_null() => args.to_string(),
            _ => "{}".to_owned(),
        };
        let key = self.next_key();
        out.push(builder.tool_call_start(&key, &id, name));
        if let Some(signature) = str_field(part, "thoughtSignature").filter(|s| !s.is_empty()) {
            builder.set_tool_call_thought_signature(&key, signature);
        }
        out.push(builder.tool_call_delta(&key, &arguments));
        out.push(builder.tool_call_end(&key)?);
        Ok(())
    }

    fn on_chunk(
        &mut self,
        chunk: &Value,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<(), ProtocolError> {
        if !self.has_response_id
            && let Some(id) = str_field(chunk, "responseId").filter(|id| !id.is_empty())
        {
            builder.set_response_id(id);
            self.has_response_id = true;
        }
        let candidate = chunk.get("candidates").and_then(|c| c.get(0));
        let parts = candidate
            .and_then(|c| c.get("content"))
            .and_then(|c| c.get("parts"))
            .and_then(Value::as_array);
        for part in parts.into_iter().flatten() {
            if let Some(text) = str_field(part, "text") {
                self.on_text(part, text, builder, out);
            }
            if let Some(call) = part.get("functionCall").filter(|call| call.is_object()) {
                self.on_function_call(part, call, builder, out)?;
            }
        }
        if let Some(reason) = candidate.and_then(|c| str_field(c, "finishReason")) {
            self.finish = Some(match reason {
                "STOP" => Finish::Stop,
                "MAX_TOKENS" => Finish::Length,
                other => Finish::Failed(other.to_owned()),
            });
        }
        if let Some(usage) = chunk.get("usageMetadata").filter(|u| u.is_object()) {
            let prompt = u64_field(usage, "promptTokenCount");
            let cached = u64_field(usage, "cachedContentTokenCount").min(prompt);
            builder.set_usage(Usage {
                input: prompt - cached,
                output: u64_field(usage, "candidatesTokenCount").saturating_add(u64_field(usage, "thoughtsTokenCount")),
                cache_read: cached,
                cache_write: 0,
                total_tokens: u64_field(usage, "totalTokenCount"),
                ..Usage::default()
            });
        }
        Ok(())
    }
}

/// The text of an `error` chunk, as Google's SDK words it: `got status: <status>. <the chunk>`.
fn error_text(chunk: &Value, error: &Value) -> String {
    let status = match error.get("status") {
        Some(Value::String(status)) => status.clone(),
        Some(other) if !other.is_null() => other.to_string(),
        _ => "undefined".to_owned(),
    };
    let json = crate::redact::redacted_excerpt(&chunk.to_string(), 2000, None);
    format!("got status: {status}. {json}")
}

impl WireProtocol for GoogleProtocol {
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
        let chunk: Value = serde_json::from_str(data).map_err(|error| ProtocolError::Malformed {
            provider: self.provider.clone(),
            error,
            data: Some(crate::redact::redacted_excerpt(data, DATA_EXCERPT_CHARS, None)),
        })?;
        if let Some(error) = chunk.get("error").filter(|e| e.is_object()) {
            return Err(ProtocolError::Reported {
                message: error_text(&chunk, error),
            });
        }
        self.on_chunk(&chunk, builder, out)?;
        Ok(Flow::Continue)
    }

    fn on_body_end(
        &mut self,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<StopReason, ProtocolError> {
        self.close_current(builder, out);
        if !self.tool_call_ids.is_empty() {
            return Ok(StopReason::ToolUse);
        }
        match self.finish.take() {
            None | Some(Finish::Stop) => Ok(StopReason::Stop),
            Some(Finish::Length) => Ok(StopReason::Length),
            Some(Finish::Failed(reason)) => Err(ProtocolError::Stopped {
                provider: self.provider.clone(),
                field: "finishReason",
                reason,
            }),
        }
    }
}

#[cfg(test)]
mod fuzz;

#[cfg(test)]
mod tests {
    use super::*;
    use pi_agent_core::{ContentBlock, Model};
    use serde_json::json;

    fn feed(protocol: &mut GoogleProtocol, builder: &mut MessageBuilder, chunks: &[Value]) -> Result<(), String> {
        let mut out = Vec::new();
        for chunk in chunks {
            let sse = SseEvent {
                event: None,
                data: chunk.to_string(),
                id: None,
            };
            protocol
                .on_event(sse, builder, &mut out)
                .map_err(|error| error.to_string())?;
        }
        Ok(())
    }

    fn parts(parts: Value) -> Value {
        json!({"candidates": [{"content": {"parts": parts, "role": "model"}, "index": 0}]})
    }

    #[test]
    fn signatures_stay_with_their_block_and_later_parts_keep_them() {
        let mut builder = MessageBuilder::new(&Model::unknown());
        let mut protocol = GoogleProtocol::new("google");
        feed(
            &mut protocol,
            &mut builder,
            &[
                parts(json!([{"text": "Think", "thought": true, "thoughtSignature": "c2lnMQ=="}])),
                parts(json!([{"text": "ing", "thought": true}])),
                parts(json!([{"text": "Answer"}, {"text": "", "thoughtSignature": "c2lnMw=="}])),
            ],
        )
        .unwrap();
        let mut out = Vec::new();
        assert_eq!(protocol.on_body_end(&mut builder, &mut out).unwrap(), StopReason::Stop);
        let message = builder.partial();
        match &message.content[..] {
            [ContentBlock::Thinking(thinking), ContentBlock::Text(text)] => {
                assert_eq!(thinking.thinking, "Thinking");
                assert_eq!(thinking.thinking_signature.as_deref(), Some("c2lnMQ=="));
                assert_eq!(text.text, "Answer");
                assert_eq!(text.text_signature.as_deref(), Some("c2lnMw=="));
            }
            other => panic!("unexpected content {other:?}"),
        }
    }

    #[test]
    fn repeated_or_missing_call_ids_are_generated() {
        let mut builder = MessageBuilder::new(&Model::unknown());
        let mut protocol = GoogleProtocol::new("google");
        feed(
            &mut protocol,
            &mut builder,
            &[parts(json!([
                {"functionCall": {"id": "c1", "name": "read", "args": {"path": "a"}}},
                {"functionCall": {"id": "c1", "name": "read", "args": {"path": "b"}}},
                {"functionCall": {"name": "ls"}},
            ]))],
        )
        .unwrap();
        let ids: Vec<String> = builder.partial().tool_calls().map(|call| call.id.clone()).collect();
        assert_eq!(ids[0], "c1");
        assert!(ids[1].starts_with("read_") && ids[1] != "c1", "{ids:?}");
        assert!(ids[2].starts_with("ls_"), "{ids:?}");
        assert_ne!(ids[1], ids[2]);
        let arguments: Vec<Value> = builder.partial().tool_calls().map(|c| c.arguments.clone()).collect();
        assert_eq!(arguments, [json!({"path": "a"}), json!({"path": "b"}), json!({})]);
    }

    #[test]
    fn finish_reasons() {
        let finish = |reason: &str, with_call: bool| {
            let mut builder = MessageBuilder::new(&Model::unknown());
            let mut protocol = GoogleProtocol::new("google");
            let mut part = vec![json!({"text": "x"})];
            if with_call {
                part.push(json!({"functionCall": {"name": "t", "args": {}}}));
            }
            let chunk = json!({"candidates": [{"content": {"parts": part}, "finishReason": reason}]});
            feed(&mut protocol, &mut builder, &[chunk]).unwrap();
            protocol
                .on_body_end(&mut builder, &mut Vec::new())
                .map_err(|e| e.to_string())
        };
        assert_eq!(finish("STOP", false), Ok(StopReason::Stop));
        assert_eq!(finish("MAX_TOKENS", false), Ok(StopReason::Length));
        assert_eq!(
            finish("SAFETY", false),
            Err("google stopped the response (finishReason: SAFETY)".to_owned())
        );
        assert_eq!(finish("MALFORMED_FUNCTION_CALL", true), Ok(StopReason::ToolUse));
        assert_eq!(finish("STOP", true), Ok(StopReason::ToolUse));
    }

    #[test]
    fn error_chunks_and_bad_data() {
        let mut builder = MessageBuilder::new(&Model::unknown());
        let mut protocol = GoogleProtocol::new("google");
        let error = json!({"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}});
        let text = feed(&mut protocol, &mut builder, &[error]).unwrap_err();
        assert_eq!(
            text,
            r#"got status: UNAVAILABLE. {"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}"#
        );
        let mut out = Vec::new();
        let bad = SseEvent {
            event: None,
            data: "{\"candidates\": [".into(),
            id: None,
        };
        let text = protocol.on_event(bad, &mut builder, &mut out).unwrap_err().to_string();
        assert!(text.starts_with("Malformed SSE data from google: "), "{text}");
    }
}
