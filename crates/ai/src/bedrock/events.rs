//! Mapping the Converse stream's events onto pi's assistant-message events, as pi-ai 0.73.1 maps
//! them.
//!
//! * `messageStart` must be the assistant's (pi's text otherwise).
//! * `contentBlockStart` with `start.toolUse` opens a tool call (`toolUseId`, `name`).
//! * `contentBlockDelta` by `contentBlockIndex`: `text` continues (or opens) a text block,
//!   `toolUse.input` the tool call's arguments, `reasoningContent` a thinking block — its `text`
//!   streams, its `signature` pieces are joined and kept for replay, `redactedContent` marks it
//!   redacted.
//! * `contentBlockStop` closes the block (a later delta of the same index opens a new one).
//! * `messageStop.stopReason`: `end_turn` / `stop_sequence` → stop, `max_tokens` /
//!   `model_context_window_exceeded` → length, `tool_use` → toolUse; any other reason
//!   (`guardrail_intervened`, `content_filtered`, …) fails the response with pi's
//!   `An unknown error occurred`.
//! * `metadata.usage`: `inputTokens`, `outputTokens`, `cacheReadInputTokens`,
//!   `cacheWriteInputTokens`, `totalTokens`; the cost from the model's prices.
//! * Exceptions in the stream fail the response as pi words them: `Internal server error: …`,
//!   `Model stream error: …`, `Validation error: …`, `Throttling error: …`,
//!   `Service unavailable: …`, else `<exceptionName>: …`.
//!
//! The response ends with the body (the metadata follows `messageStop`).

use std::collections::HashMap;

use pi_agent_core::{AssistantMessageEvent, StopReason, Usage};
use serde_json::Value;

use crate::builder::MessageBuilder;
use crate::driver::{Flow, ProtocolError};
use crate::http::HttpError;
use crate::sse::SseEvent;

/// pi's text for a response that stopped for a reason that is an error.
const UNKNOWN_ERROR: &str = "An unknown error occurred";

/// pi's text for a stream that starts a message of the user's.
const NOT_ASSISTANT: &str = "Unexpected assistant message start but got user message start instead";

/// pi's prefix for an exception of the Bedrock runtime, by its name (or event name).
pub(crate) fn exception_prefix(name: &str) -> String {
    let name = match name {
        "internalServerException" => "InternalServerException",
        "modelStreamErrorException" => "ModelStreamErrorException",
        "validationException" => "ValidationException",
        "throttlingException" => "ThrottlingException",
        "serviceUnavailableException" => "ServiceUnavailableException",
        other => other,
    };
    match name {
        "InternalServerException" => "Internal server error",
        "ModelStreamErrorException" => "Model stream error",
        "ValidationException" => "Validation error",
        "ThrottlingException" => "Throttling error",
        "ServiceUnavailableException" => "Service unavailable",
        other => other,
    }
    .to_owned()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Thinking,
    ToolCall,
}

/// The stream's side of the Bedrock protocol: the open blocks and the stop reason.
#[derive(Debug, Default)]
pub(crate) struct Events {
    /// Open blocks by `contentBlockIndex`: their builder key and kind.
    open: HashMap<u64, (String, Kind)>,
    /// Signatures so far, by builder key.
    signatures: HashMap<String, String>,
    opened: usize,
    stop: Option<Result<StopReason, ()>>,
}

fn u64_field(value: &Value, field: &str) -> u64 {
    value.get(field).and_then(Value::as_u64).unwrap_or(0)
}

impl Events {
    fn key(&mut self) -> String {
        self.opened += 1;
        format!("b{}", self.opened)
    }

    pub(crate) fn on_event(
        &mut self,
        provider: &str,
        event: SseEvent,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<Flow, ProtocolError> {
        let name = event.event.unwrap_or_default();
        let data: Value = serde_json::from_str(&event.data).map_err(|error| ProtocolError::Malformed {
            provider: provider.to_owned(),
            error,
            data: None,
        })?;
        if matches!(event.id.as_deref(), Some("exception" | "error")) {
            let message = data
                .get("message")
                .or_else(|| data.get("Message"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            let message = match event.id.as_deref() {
                Some("exception") => format!("{}: {message}", exception_prefix(&name)),
                _ => message.to_owned(),
            };
            return Err(ProtocolError::Reported { message });
        }
        let index = u64_field(&data, "contentBlockIndex");
        match name.as_str() {
            "messageStart" if data.get("role").and_then(Value::as_str) != Some("assistant") => {
                return Err(ProtocolError::Reported {
                    message: NOT_ASSISTANT.to_owned(),
                });
            }
            "contentBlockStart" => {
                if let Some(tool) = data.pointer("/start/toolUse") {
                    let key = self.key();
                    let id = tool.get("toolUseId").and_then(Value::as_str).unwrap_or_default();
                    let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
                    out.push(builder.tool_call_start(&key, id, name));
                    self.open.insert(index, (key, Kind::ToolCall));
                }
            }
            "contentBlockDelta" => self.on_delta(index, data.get("delta").unwrap_or(&Value::Null), builder, out),
            "contentBlockStop" => {
                if let Some((key, kind)) = self.open.remove(&index) {
                    match kind {
                        Kind::Text => out.push(builder.text_end(&key)),
                        Kind::Thinking => out.push(builder.thinking_end(&key)),
                        Kind::ToolCall => out.push(builder.tool_call_end(&key)?),
                    }
                }
            }
            "messageStop" => {
                self.stop = Some(match data.get("stopReason").and_then(Value::as_str) {
                    Some("end_turn" | "stop_sequence") => Ok(StopReason::Stop),
                    Some("max_tokens" | "model_context_window_exceeded") => Ok(StopReason::Length),
                    Some("tool_use") => Ok(StopReason::ToolUse),
                    _ => Err(()),
                });
            }
            "metadata" => {
                if let Some(usage) = data.get("usage").filter(|usage| usage.is_object()) {
                    let input = u64_field(usage, "inputTokens");
                    let output = u64_field(usage, "outputTokens");
                    let total = match u64_field(usage, "totalTokens") {
                        0 => input + output,
                        total => total,
                    };
                    builder.set_usage(Usage {
                        input,
                        output,
                        cache_read: u64_field(usage, "cacheReadInputTokens"),
                        cache_write: u64_field(usage, "cacheWriteInputTokens"),
                        total_tokens: total,
                        ..Usage::default()
                    });
                }
            }
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn on_delta(
        &mut self,
        index: u64,
        delta: &Value,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) {
        let open = self.open.get(&index).cloned();
        if let Some(text) = delta.get("text").and_then(Value::as_str) {
            let key = match open {
                Some((key, Kind::Text)) => key,
                Some(_) => return,
                None => {
                    let key = self.key();
                    out.push(builder.text_start(&key));
                    self.open.insert(index, (key.clone(), Kind::Text));
                    key
                }
            };
            out.push(builder.text_delta(&key, text));
        } else if let Some(tool) = delta.get("toolUse") {
            if let Some((key, Kind::ToolCall)) = open {
                let input = tool.get("input").and_then(Value::as_str).unwrap_or_default();
                out.push(builder.tool_call_delta(&key, input));
            }
        } else if let Some(reasoning) = delta.get("reasoningContent") {
            let key = match open {
                Some((key, Kind::Thinking)) => key,
                Some(_) => return,
                None => {
                    let key = self.key();
                    out.push(builder.thinking_start(&key));
                    self.open.insert(index, (key.clone(), Kind::Thinking));
                    key
                }
            };
            if let Some(text) = reasoning.get("text").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                out.push(builder.thinking_delta(&key, text));
            }
            if let Some(piece) = reasoning
                .get("signature")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            {
                let signature = self.signatures.entry(key.clone()).or_default();
                signature.push_str(piece);
                builder.set_thinking_signature(&key, signature.clone(), false);
            }
            if let Some(data) = reasoning.get("redactedContent").and_then(Value::as_str) {
                builder.set_thinking_signature(&key, data, true);
            }
        }
    }

    pub(crate) fn on_body_end(&mut self) -> Result<StopReason, ProtocolError> {
        match self.stop {
            None => Ok(StopReason::Stop),
            Some(Ok(reason)) => Ok(reason),
            Some(Err(())) => Err(ProtocolError::Reported {
                message: UNKNOWN_ERROR.to_owned(),
            }),
        }
    }
}

/// pi's text of an HTTP error, by the exception its status stands for (see the module docs of `crate::bedrock`).
pub(crate) fn http_error_text(error: &HttpError) -> Option<String> {
    let HttpError::Status { status, body } = error else {
        return None;
    };
    let exception = match status {
        400 => "ValidationException",
        403 => "AccessDeniedException",
        404 => "ResourceNotFoundException",
        408 => "ModelTimeoutException",
        424 => "ModelErrorException",
        429 => "ThrottlingException",
        500 => "InternalServerException",
        503 => "ServiceUnavailableException",
        _ => return None,
    };
    let message = serde_json::from_str::<Value>(body).ok().and_then(|value| {
        value
            .get("message")
            .or_else(|| value.get("Message"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    })?;
    Some(format!("{}: {message}", exception_prefix(exception)))
}
