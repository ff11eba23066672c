//! Mapping streamed `chat.completion.chunk`s onto pi's assistant-message events.
//!
//! * `choices[0].delta.reasoning_content` / `reasoning` / `reasoning_text` → the message's thinking
//!   block (the first non-empty field of a chunk counts, some servers send the same text twice);
//! * `choices[0].delta.content` → the message's text block. As in pi, a message has at most one
//!   of each: text after reasoning after text goes on in the block already open;
//! * `choices[0].delta.tool_calls[{index, id?, function:{name?, arguments?}}]` → tool calls keyed
//!   by `index` (several can stream in parallel; id and name usually come only with the first
//!   fragment); every fragment is a `toolcall_delta`, an empty one for a fragment without
//!   arguments, as pi sends it. A fragment whose id differs from the call open at its index
//!   starts a new call (ending the earlier one), for servers that number every call 0;
//! * `id` → `responseId`, `model` (when it differs from the model asked for) → `responseModel`,
//!   each from the first chunk that has one;
//! * `finish_reason` → the stop reason (`stop`, `length`, `tool_calls`/`function_call` → toolUse,
//!   `content_filter` and `error` → an error);
//! * `usage` (usually a last chunk with no choices) → token counts and cost, cached prompt tokens
//!   counted as cache reads;
//! * `data: [DONE]` ends the response; an `error` object in a chunk ends it with that error;
//!   data that is not JSON is reported as `Malformed SSE data from <provider>: … (data: <excerpt>)`.
//!
//! Blocks stay open until the response finishes and are then ended together in content order, as
//! pi 0.73.1 does: a text block's `text_end` comes after the `toolcall_start` / `toolcall_delta`
//! events of the calls that follow it, just before their `toolcall_end`s.

use std::borrow::Cow;

use pi_agent_core::{AssistantMessageEvent, Model, StopReason, Usage};
use serde::Deserialize;
use serde_json::Value;

use super::compat::Compat;
use crate::builder::MessageBuilder;
use crate::driver::{Flow, ProtocolError, WireProtocol};
use crate::sse::SseEvent;

/// Longest piece of an offending event quoted in an error.
const DATA_EXCERPT_CHARS: usize = 200;

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(default, borrow)]
    id: Option<Cow<'a, str>>,
    /// pi takes it only when it is a string, so anything else is not an error.
    #[serde(default)]
    model: Option<Value>,
    #[serde(default, borrow)]
    choices: Option<Vec<Choice<'a>>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(default, borrow)]
    delta: Option<Delta<'a>>,
    #[serde(default, borrow)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(default, borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(default)]
    reasoning_content: Option<Value>,
    #[serde(default)]
    reasoning: Option<Value>,
    #[serde(default)]
    reasoning_text: Option<Value>,
    #[serde(default, borrow)]
    tool_calls: Option<Vec<ToolCallFragment<'a>>>,
}

#[derive(Deserialize)]
struct ToolCallFragment<'a> {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default, borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    function: Option<FunctionFragment<'a>>,
}

#[derive(Deserialize)]
struct FunctionFragment<'a> {
    #[serde(default, borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    arguments: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
    /// DeepSeek reports cache hits here.
    #[serde(default)]
    prompt_cache_hit_tokens: Option<u64>,
}

#[derive(Deserialize, Default)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
    /// OpenRouter reports prompt-cache writes here.
    #[serde(default)]
    cache_write_tokens: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Thinking,
    ToolCall,
}

/// A tool call of the response.
struct Call {
    index: Option<u64>,
    key: String,
    id: String,
}

/// The [`WireProtocol`] of `openai-completions`.
pub struct CompletionsProtocol {
    provider: String,
    /// The model asked for: a chunk's `model` is recorded only when it names another.
    model_id: String,
    supports_finish_reason: bool,
    finish_reason: Option<String>,
    /// Open blocks in content order.
    open: Vec<(String, Kind)>,
    /// The key of the message's text block, once it has one.
    text: Option<String>,
    /// The key of the message's thinking block, once it has one.
    thinking: Option<String>,
    calls: Vec<Call>,
    blocks: usize,
    has_response_id: bool,
    has_response_model: bool,
}

impl CompletionsProtocol {
    /// A protocol for one response of `model`.
    pub fn new(model: &Model, compat: &Compat) -> Self {
        CompletionsProtocol {
            provider: model.provider.clone(),
            model_id: model.id.clone(),
            supports_finish_reason: compat.supports_finish_reason,
            finish_reason: None,
            open: Vec::new(),
            text: None,
            thinking: None,
            calls: Vec::new(),
            blocks: 0,
            has_response_id: false,
            has_response_model: false,
        }
    }

    fn next_key(&mut self, prefix: &str) -> String {
        self.blocks += 1;
        format!("{prefix}{}", self.blocks)
    }

    fn close(
        &mut self,
        key: &str,
        kind: Kind,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<(), ProtocolError> {
        self.open.retain(|(open, _)| open != key);
        match kind {
            Kind::Text => out.push(builder.text_end(key)),
            Kind::Thinking => out.push(builder.thinking_end(key)),
            Kind::ToolCall => {
                if let Some(call) = self.calls.iter().find(|call| call.key == key)
                    && call.id.is_empty()
                {
                    // A server that never sent an id: make one so the result can refer to it.
                    let id = format!("call_{key}");
                    builder.set_tool_call_identity(key, Some(&id), None);
                }
                match builder.tool_call_end(key) {
                    Ok(event) => out.push(event),
                    // Arguments cut off by the token limit: keep the best-effort parse, the loop
                    // reports the truncation to the model.
                    Err(_) if self.stop_reason() == StopReason::Length => {}
                    Err(error) => return Err(error.into()),
                }
            }
        }
        Ok(())
    }

    /// Appends text or thinking to the message's block of that kind, opening it the first time;
    /// returns the key of a block it opened.
    fn stream_text(
        &mut self,
        kind: Kind,
        delta: &str,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Option<String> {
        let existing = match kind {
            Kind::Text => self.text.clone(),
            _ => self.thinking.clone(),
        };
        let mut opened = None;
        let key = match existing {
            Some(key) => key,
            None => {
                let key = self.next_key(if kind == Kind::Text { "text" } else { "thinking" });
                out.push(match kind {
                    Kind::Text => builder.text_start(&key),
                    _ => builder.thinking_start(&key),
                });
                self.open.push((key.clone(), kind));
                match kind {
                    Kind::Text => self.text = Some(key.clone()),
                    _ => self.thinking = Some(key.clone()),
                }
                opened = Some(key.clone());
                key
            }
        };
        out.push(match kind {
            Kind::Text => builder.text_delta(&key, delta),
            _ => builder.thinking_delta(&key, delta),
        });
        opened
    }

    fn tool_fragment(
        &mut self,
        fragment: &ToolCallFragment<'_>,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<(), ProtocolError> {
        let id = fragment.id.as_deref().filter(|id| !id.is_empty());
        let name = fragment
            .function
            .as_ref()
            .and_then(|function| function.name.as_deref())
            .filter(|name| !name.is_empty());
        let arguments = fragment
            .function
            .as_ref()
            .and_then(|function| function.arguments.as_deref())
            .unwrap_or("");
        let existing = match fragment.index {
            Some(index) => self.calls.iter().rposition(|call| call.index == Some(index)),
            None => self.calls.len().checked_sub(1),
        };
        // The same index with a different id is a new call.
        let existing = existing.filter(|&at| match id {
            Some(id) => self.calls[at].id.is_empty() || self.calls[at].id == id,
            None => true,
        });
        let key = match existing {
            Some(at) => {
                let call = &mut self.calls[at];
                let key = call.key.clone();
                if let Some(id) = id
                    && call.id.is_empty()
                {
                    call.id = id.to_owned();
                }
                if id.is_some() || name.is_some() {
                    builder.set_tool_call_identity(&key, id, name);
                }
                key
            }
            None => {
                if let Some(index) = fragment.index
                    && let Some(previous) = self.calls.iter().rposition(|call| call.index == Some(index))
                {
                    let key = self.calls[previous].key.clone();
                    if self.open.iter().any(|(open, _)| *open == key) {
                        self.close(&key, Kind::ToolCall, builder, out)?;
                    }
                    self.calls[previous].index = None;
                }
                let key = self.next_key("tool");
                out.push(builder.tool_call_start(&key, id.unwrap_or(""), name.unwrap_or("")));
                self.open.push((key.clone(), Kind::ToolCall));
                self.calls.push(Call {
                    index: fragment.index,
                    key: key.clone(),
                    id: id.unwrap_or("").to_owned(),
                });
                key
            }
        };
        out.push(builder.tool_call_delta(&key, arguments));
        Ok(())
    }

    fn stop_reason(&self) -> StopReason {
        match self.finish_reason.as_deref() {
            Some("length") => StopReason::Length,
            Some("tool_calls" | "function_call") => StopReason::ToolUse,
            _ => StopReason::Stop,
        }
    }

    /// Closes the open blocks in content order and returns the stop reason.
    fn finish(
        &mut self,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<StopReason, ProtocolError> {
        for (key, kind) in std::mem::take(&mut self.open) {
            self.close(&key, kind, builder, out)?;
        }
        match self.finish_reason.as_deref() {
            Some(reason @ ("content_filter" | "error")) => Err(ProtocolError::Stopped {
                provider: self.provider.clone(),
                field: "finish_reason",
                reason: reason.to_owned(),
            }),
            _ => Ok(self.stop_reason()),
        }
    }
}

/// The error text of an `error` object.
fn error_text(error: &Value) -> String {
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| error.as_str().map(str::to_owned))
        .unwrap_or_else(|| error.to_string());
    let code = error
        .get("code")
        .or_else(|| error.get("type"))
        .filter(|code| !code.is_null());
    match code {
        Some(Value::String(code)) => format!("{message} ({code})"),
        Some(code) => format!("{message} ({code})"),
        None => message,
    }
}

/// The first non-empty reasoning text of a delta, with the name of its field.
fn reasoning<'d>(delta: &'d Delta<'_>) -> Option<(&'static str, &'d str)> {
    [
        ("reasoning_content", &delta.reasoning_content),
        ("reasoning", &delta.reasoning),
        ("reasoning_text", &delta.reasoning_text),
    ]
    .into_iter()
    .filter_map(|(name, field)| Some((name, field.as_ref().and_then(Value::as_str)?)))
    .find(|(_, text)| !text.is_empty())
}

fn usage(wire: &WireUsage) -> Usage {
    let details = wire.prompt_tokens_details.as_ref();
    let cache_read = details
        .and_then(|details| details.cached_tokens)
        .or(wire.prompt_cache_hit_tokens)
        .unwrap_or(0);
    let cache_write = details.and_then(|details| details.cache_write_tokens).unwrap_or(0);
    let prompt = wire.prompt_tokens.unwrap_or(0);
    let input = prompt.saturating_sub(cache_read).saturating_sub(cache_write);
    let output = wire.completion_tokens.unwrap_or(0);
    Usage {
        input,
        output,
        cache_read,
        cache_write,
        total_tokens: input
            .saturating_add(output)
            .saturating_add(cache_read)
            .saturating_add(cache_write),
        ..Usage::default()
    }
}

impl WireProtocol for CompletionsProtocol {
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
            return self.finish(builder, out).map(Flow::Finished);
        }
        let chunk: Chunk<'_> = serde_json::from_str(data).map_err(|error| ProtocolError::Malformed {
            provider: self.provider.clone(),
            error,
            data: Some(crate::redact::redacted_excerpt(data, DATA_EXCERPT_CHARS, None)),
        })?;
        if let Some(error) = chunk.error.as_ref().filter(|error| !error.is_null()) {
            return Err(ProtocolError::Reported {
                message: error_text(error),
            });
        }
        if !self.has_response_id
            && let Some(id) = chunk.id.as_deref().filter(|id| !id.is_empty())
        {
            builder.set_response_id(id);
            self.has_response_id = true;
        }
        if !self.has_response_model
            && let Some(model) = chunk
                .model
                .as_ref()
                .and_then(Value::as_str)
                .filter(|model| !model.is_empty() && *model != self.model_id)
        {
            builder.set_response_model(model);
            self.has_response_model = true;
        }
        if let Some(wire) = &chunk.usage {
            builder.set_usage(usage(wire));
        }
        let Some(choice) = chunk.choices.as_ref().and_then(|choices| choices.first()) else {
            return Ok(Flow::Continue);
        };
        if let Some(delta) = &choice.delta {
            // pi's order within a chunk: text, reasoning, tool calls.
            if let Some(text) = delta.content.as_deref().filter(|text| !text.is_empty()) {
                self.stream_text(Kind::Text, text, builder, out);
            }
            if let Some((field, text)) = reasoning(delta) {
                let opened = self.stream_text(Kind::Thinking, text, builder, out);
                if let Some(key) = opened {
                    // Like pi, remember which field carried the reasoning.
                    builder.set_thinking_signature(&key, field, false);
                }
            }
            for fragment in delta.tool_calls.iter().flatten() {
                self.tool_fragment(fragment, builder, out)?;
            }
        }
        if let Some(reason) = choice.finish_reason.as_deref().filter(|reason| !reason.is_empty()) {
            self.finish_reason = Some(reason.to_owned());
        }
        Ok(Flow::Continue)
    }

    fn on_body_end(
        &mut self,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<StopReason, ProtocolError> {
        if self.finish_reason.is_none() && self.supports_finish_reason {
            return Err(ProtocolError::Incomplete {
                provider: self.provider.clone(),
                missing: "no finish_reason and no [DONE]",
            });
        }
        self.finish(builder, out)
    }
}

#[cfg(test)]
mod fuzz;
