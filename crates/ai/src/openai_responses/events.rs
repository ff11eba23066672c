//! Mapping the streamed `response.*` events onto pi's assistant-message events.
//!
//! Each SSE event's JSON carries its `type` (the SSE `event:` name is used when it lacks one):
//!
//! * `response.created` / `response.in_progress` → the response id;
//! * `response.output_item.added` opens a block for the item: `message` → text, `reasoning` →
//!   thinking, `function_call` → a tool call with id `<call_id>|<id>` and its name. Later events
//!   find their block by `item_id`, else by `output_index`; other item kinds (built-in tools)
//!   are ignored;
//! * `response.output_text.delta` and `response.refusal.delta` → text;
//!   `response.reasoning_summary_text.delta` (summary parts separated by a blank line) and
//!   `response.reasoning_text.delta` → thinking; `response.function_call_arguments.delta` → the
//!   call's arguments, parsed progressively (`.done` supplies them when no delta did);
//! * `response.output_item.done` closes the block: a message's id becomes the text signature, a
//!   reasoning item's JSON (with its encrypted content) the thinking signature, a function call's
//!   arguments are parsed in full. Content that only the finished item carries is emitted as one
//!   delta first;
//! * `response.completed` (also `response.done` / `response.incomplete`) → usage (cached input
//!   tokens counted as cache reads) and the stop reason: `completed` → stop (toolUse when there
//!   are tool calls), `incomplete` for `max_output_tokens` → length, for anything else an error;
//! * `response.failed` and `error` end the response with the server's error text; data that is
//!   not JSON is reported as `Malformed SSE data from openai: …`.
//!
//! Blocks still open when the response completes are closed in content order.

use pi_agent_core::{AssistantMessageEvent, StopReason, Usage};
use serde_json::Value;

use crate::builder::MessageBuilder;
use crate::driver::{Flow, ProtocolError, WireProtocol};
use crate::sse::SseEvent;

/// Longest excerpt of bad data quoted in an error.
const DATA_EXCERPT_CHARS: usize = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Thinking,
    ToolCall,
}

/// One output item of the response and the block it feeds.
struct Item {
    key: String,
    kind: Kind,
    item_id: Option<String>,
    output_index: Option<u64>,
    open: bool,
    /// Some content arrived as deltas (so the finished item's copy is not emitted again).
    streamed: bool,
    /// The reasoning-summary part the last delta belonged to.
    summary_index: Option<u64>,
}

/// The [`WireProtocol`] of `openai-responses`.
#[derive(Default)]
pub struct ResponsesProtocol {
    items: Vec<Item>,
    has_response_id: bool,
}

fn str_field<'a>(value: &'a Value, field: &str) -> Option<&'a str> {
    value.get(field).and_then(Value::as_str)
}

fn u64_field(value: &Value, field: &str) -> Option<u64> {
    value.get(field).and_then(Value::as_u64)
}

fn excerpt(data: &str) -> String {
    crate::redact::redacted_excerpt(data, DATA_EXCERPT_CHARS, None)
}

/// pi's tool-call id for a function-call item: `<call_id>|<id>`.
fn tool_call_id(item: &Value) -> Option<String> {
    let call_id = str_field(item, "call_id").filter(|id| !id.is_empty());
    let item_id = str_field(item, "id").filter(|id| !id.is_empty());
    match (call_id, item_id) {
        (Some(call), Some(item)) => Some(format!("{call}|{item}")),
        (Some(call), None) => Some(call.to_owned()),
        (None, Some(item)) => Some(item.to_owned()),
        (None, None) => None,
    }
}

/// The text of a finished `message` item: its `output_text` and `refusal` parts.
fn message_text(item: &Value) -> String {
    let Some(parts) = item.get("content").and_then(Value::as_array) else {
        return String::new();
    };
    parts
        .iter()
        .filter_map(|part| str_field(part, "text").or_else(|| str_field(part, "refusal")))
        .collect()
}

/// The summary of a finished `reasoning` item, parts separated by a blank line.
fn summary_text(item: &Value) -> String {
    let Some(parts) = item.get("summary").and_then(Value::as_array) else {
        return String::new();
    };
    let texts: Vec<&str> = parts.iter().filter_map(|part| str_field(part, "text")).collect();
    texts.join("\n\n")
}

/// The error text of a `response.failed` event.
fn failure_text(response: Option<&Value>) -> String {
    let error = response.and_then(|r| r.get("error")).filter(|e| e.is_object());
    if let Some(error) = error {
        let code = str_field(error, "code").unwrap_or("unknown");
        let message = str_field(error, "message").unwrap_or("no message");
        return format!("{code}: {message}");
    }
    let reason = response
        .and_then(|r| r.get("incomplete_details"))
        .and_then(|d| str_field(d, "reason"));
    match reason {
        Some(reason) => format!("incomplete: {reason}"),
        None => "Unknown error (no error details in response)".to_owned(),
    }
}

/// The error text of an `error` event (fields at the top level or in an `error` object).
fn error_text(event: &Value) -> String {
    let source = event.get("error").filter(|e| e.is_object()).unwrap_or(event);
    let message = str_field(source, "message")
        .filter(|m| !m.is_empty())
        .unwrap_or("Unknown error");
    let code = source.get("code").and_then(|code| match code {
        Value::String(code) if !code.is_empty() => Some(code.clone()),
        Value::Number(code) => Some(code.to_string()),
        _ => None,
    });
    match code {
        Some(code) => format!("Error Code {code}: {message}"),
        None => message.to_owned(),
    }
}

impl ResponsesProtocol {
    /// A protocol for one response.
    pub fn new() -> Self {
        ResponsesProtocol::default()
    }

    /// The item an event refers to: by `item_id`, else by `output_index`, else the last open
    /// item of `kind`.
    fn find(&self, event: &Value, kind: Kind) -> Option<usize> {
        if let Some(id) = str_field(event, "item_id")
            && let Some(found) = self.items.iter().rposition(|item| item.item_id.as_deref() == Some(id))
        {
            return Some(found);
        }
        if let Some(index) = u64_field(event, "output_index")
            && let Some(found) = self.items.iter().rposition(|item| item.output_index == Some(index))
        {
            return Some(found);
        }
        self.items.iter().rposition(|item| item.open && item.kind == kind)
    }

    /// Opens a block for an item and returns its position.
    fn open(
        &mut self,
        kind: Kind,
        item_id: Option<&str>,
        output_index: Option<u64>,
        call: Option<(&str, &str)>,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> usize {
        let key = format!("item{}", self.items.len());
        out.push(match kind {
            Kind::Text => builder.text_start(&key),
            Kind::Thinking => builder.thinking_start(&key),
            Kind::ToolCall => {
                let (id, name) = call.unwrap_or(("", ""));
                builder.tool_call_start(&key, id, name)
            }
        });
        self.items.push(Item {
            key,
            kind,
            item_id: item_id.filter(|id| !id.is_empty()).map(str::to_owned),
            output_index,
            open: true,
            streamed: false,
            summary_index: None,
        });
        self.items.len() - 1
    }

    /// The item `event` refers to, opened now if the server skipped `output_item.added`.
    fn find_or_open(
        &mut self,
        event: &Value,
        kind: Kind,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Option<usize> {
        match self.find(event, kind) {
            Some(found) if self.items[found].kind == kind => Some(found),
            Some(_) => None,
            None => Some(self.open(
                kind,
                str_field(event, "item_id"),
                u64_field(event, "output_index"),
                None,
                builder,
                out,
            )),
        }
    }

    fn on_item_added(&mut self, event: &Value, builder: &mut MessageBuilder, out: &mut Vec<AssistantMessageEvent>) {
        let Some(item) = event.get("item") else {
            return;
        };
        let output_index = u64_field(event, "output_index");
        let item_id = str_field(item, "id");
        match str_field(item, "type") {
            Some("message") => {
                self.open(Kind::Text, item_id, output_index, None, builder, out);
            }
            Some("reasoning") => {
                self.open(Kind::Thinking, item_id, output_index, None, builder, out);
            }
            Some("function_call") => {
                let id = tool_call_id(item).unwrap_or_default();
                let name = str_field(item, "name").unwrap_or_default();
                let found = self.open(Kind::ToolCall, item_id, output_index, Some((&id, name)), builder, out);
                if let Some(arguments) = str_field(item, "arguments").filter(|a| !a.is_empty()) {
                    self.items[found].streamed = true;
                    out.push(builder.tool_call_delta(&self.items[found].key, arguments));
                }
            }
            _ => {}
        }
    }

    fn on_text_delta(&mut self, event: &Value, builder: &mut MessageBuilder, out: &mut Vec<AssistantMessageEvent>) {
        let delta = str_field(event, "delta").unwrap_or_default();
        if let Some(found) = self.find_or_open(event, Kind::Text, builder, out) {
            self.items[found].streamed = true;
            out.push(builder.text_delta(&self.items[found].key, delta));
        }
    }

    /// A reasoning-summary delta (or a new summary part, with an empty `delta`): a blank line
    /// separates the parts.
    fn on_summary(&mut self, event: &Value, builder: &mut MessageBuilder, out: &mut Vec<AssistantMessageEvent>) {
        let Some(found) = self.find_or_open(event, Kind::Thinking, builder, out) else {
            return;
        };
        let item = &mut self.items[found];
        if let Some(part) = u64_field(event, "summary_index") {
            let new_part = item.summary_index.is_some_and(|last| last != part);
            item.summary_index = Some(part);
            if new_part && item.streamed {
                out.push(builder.thinking_delta(&item.key, "\n\n"));
            }
        }
        let delta = str_field(event, "delta").unwrap_or_default();
        if !delta.is_empty() {
            item.streamed = true;
            out.push(builder.thinking_delta(&item.key, delta));
        }
    }

    fn on_arguments_delta(
        &mut self,
        event: &Value,
        done: bool,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) {
        let Some(found) = self.find_or_open(event, Kind::ToolCall, builder, out) else {
            return;
        };
        let item = &mut self.items[found];
        let fragment = if done {
            // The complete arguments: needed only when no delta brought them.
            match str_field(event, "arguments") {
                Some(arguments) if !item.streamed && !arguments.is_empty() => arguments,
                _ => return,
            }
        } else {
            str_field(event, "delta").unwrap_or_default()
        };
        item.streamed = true;
        out.push(builder.tool_call_delta(&item.key, fragment));
    }

    fn on_item_done(
        &mut self,
        event: &Value,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<(), ProtocolError> {
        let Some(item) = event.get("item") else {
            return Ok(());
        };
        let kind = match str_field(item, "type") {
            Some("message") => Kind::Text,
            Some("reasoning") => Kind::Thinking,
            Some("function_call") => Kind::ToolCall,
            _ => return Ok(()),
        };
        let item_id = str_field(item, "id");
        let output_index = u64_field(event, "output_index");
        let by_id = item_id.and_then(|id| self.items.iter().rposition(|i| i.item_id.as_deref() == Some(id)));
        let by_index = output_index.and_then(|index| self.items.iter().rposition(|i| i.output_index == Some(index)));
        let found = match by_id.or(by_index).filter(|&found| self.items[found].kind == kind) {
            Some(found) if self.items[found].open => found,
            // Finished twice: the first one counts.
            Some(_) => return Ok(()),
            None => {
                let call_id = tool_call_id(item).unwrap_or_default();
                let name = str_field(item, "name").unwrap_or_default();
                self.open(kind, item_id, output_index, Some((&call_id, name)), builder, out)
            }
        };
        let key = self.items[found].key.clone();
        let streamed = self.items[found].streamed;
        self.items[found].open = false;
        match kind {
            Kind::Text => {
                let text = message_text(item);
                if !streamed && !text.is_empty() {
                    out.push(builder.text_delta(&key, &text));
                }
                if let Some(id) = item_id.filter(|id| !id.is_empty()) {
                    builder.set_text_signature(&key, id);
                }
                out.push(builder.text_end(&key));
            }
            Kind::Thinking => {
                let summary = summary_text(item);
                if !streamed && !summary.is_empty() {
                    out.push(builder.thinking_delta(&key, &summary));
                }
                builder.set_thinking_signature(&key, item.to_string(), false);
                out.push(builder.thinking_end(&key));
            }
            Kind::ToolCall => {
                if let Some(arguments) = str_field(item, "arguments").filter(|a| !streamed && !a.is_empty()) {
                    out.push(builder.tool_call_delta(&key, arguments));
                }
                let name = str_field(item, "name").filter(|name| !name.is_empty());
                builder.set_tool_call_identity(&key, tool_call_id(item).as_deref(), name);
                out.push(builder.tool_call_end(&key)?);
            }
        }
        Ok(())
    }

    /// Closes the blocks still open, in content order. Tool-call arguments cut off by the
    /// output limit keep their best-effort parse.
    fn close_open(
        &mut self,
        reason: StopReason,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<(), ProtocolError> {
        for item in self.items.iter_mut().filter(|item| item.open) {
            item.open = false;
            match item.kind {
                Kind::Text => out.push(builder.text_end(&item.key)),
                Kind::Thinking => out.push(builder.thinking_end(&item.key)),
                Kind::ToolCall => match builder.tool_call_end(&item.key) {
                    Ok(event) => out.push(event),
                    Err(_) if reason == StopReason::Length => {}
                    Err(error) => return Err(error.into()),
                },
            }
        }
        Ok(())
    }

    fn set_response_id(&mut self, response: Option<&Value>, builder: &mut MessageBuilder) {
        if self.has_response_id {
            return;
        }
        if let Some(id) = response.and_then(|r| str_field(r, "id")).filter(|id| !id.is_empty()) {
            builder.set_response_id(id);
            self.has_response_id = true;
        }
    }

    fn on_completed(
        &mut self,
        event: &Value,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<StopReason, ProtocolError> {
        let response = event.get("response");
        self.set_response_id(response, builder);
        if let Some(usage) = response.and_then(|r| r.get("usage")).filter(|u| u.is_object()) {
            let input = u64_field(usage, "input_tokens").unwrap_or(0);
            let output = u64_field(usage, "output_tokens").unwrap_or(0);
            let cached = usage
                .get("input_tokens_details")
                .and_then(|d| u64_field(d, "cached_tokens"))
                .unwrap_or(0)
                .min(input);
            builder.set_usage(Usage {
                input: input - cached,
                output,
                cache_read: cached,
                cache_write: 0,
                total_tokens: u64_field(usage, "total_tokens").unwrap_or(input.saturating_add(output)),
                ..Usage::default()
            });
        }
        let status = response.and_then(|r| str_field(r, "status"));
        let reason = match status {
            Some("incomplete") => {
                let why = response
                    .and_then(|r| r.get("incomplete_details"))
                    .and_then(|d| str_field(d, "reason"));
                match why {
                    None | Some("max_output_tokens") => StopReason::Length,
                    Some(other) => {
                        return Err(ProtocolError::Stopped {
                            provider: "openai".to_owned(),
                            field: "incomplete",
                            reason: other.to_owned(),
                        });
                    }
                }
            }
            Some("failed" | "cancelled") => {
                return Err(ProtocolError::Reported {
                    message: failure_text(response),
                });
            }
            _ => StopReason::Stop,
        };
        self.close_open(reason, builder, out)?;
        Ok(reason)
    }
}

impl WireProtocol for ResponsesProtocol {
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
            return self.on_body_end(builder, out).map(Flow::Finished);
        }
        let value: Value = serde_json::from_str(data).map_err(|error| ProtocolError::Malformed {
            provider: "openai".to_owned(),
            error,
            data: Some(excerpt(data)),
        })?;
        let kind = str_field(&value, "type").or(event.event.as_deref()).unwrap_or_default();
        match kind {
            "response.created" | "response.in_progress" => self.set_response_id(value.get("response"), builder),
            "response.output_item.added" => self.on_item_added(&value, builder, out),
            "response.output_text.delta" | "response.refusal.delta" => self.on_text_delta(&value, builder, out),
            "response.reasoning_summary_part.added"
            | "response.reasoning_summary_text.delta"
            | "response.reasoning_text.delta" => self.on_summary(&value, builder, out),
            "response.function_call_arguments.delta" => self.on_arguments_delta(&value, false, builder, out),
            "response.function_call_arguments.done" => self.on_arguments_delta(&value, true, builder, out),
            "response.output_item.done" => self.on_item_done(&value, builder, out)?,
            "response.completed" | "response.done" | "response.incomplete" => {
                return self.on_completed(&value, builder, out).map(Flow::Finished);
            }
            "response.failed" => {
                return Err(ProtocolError::Reported {
                    message: failure_text(value.get("response")),
                });
            }
            "error" => {
                return Err(ProtocolError::Reported {
                    message: error_text(&value),
                });
            }
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn on_body_end(
        &mut self,
        _builder: &mut MessageBuilder,
        _out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<StopReason, ProtocolError> {
        Err(ProtocolError::Incomplete {
            provider: "openai".to_owned(),
            missing: "no response.completed event",
        })
    }
}

#[cfg(test)]
mod fuzz;

#[cfg(test)]
mod tests {
    use super::*;
    use pi_agent_core::ContentBlock;
    use pi_agent_core::Model;
    use serde_json::json;

    fn block_text(builder: &MessageBuilder, index: usize) -> String {
        match builder.partial().content.get(index) {
            Some(ContentBlock::Text(text)) => text.text.clone(),
            Some(ContentBlock::Thinking(thinking)) => thinking.thinking.clone(),
            _ => String::new(),
        }
    }

    fn feed(protocol: &mut ResponsesProtocol, builder: &mut MessageBuilder, events: &[Value]) -> Result<Flow, String> {
        let mut out = Vec::new();
        let mut flow = Flow::Continue;
        for event in events {
            let sse = SseEvent {
                event: None,
                data: event.to_string(),
                id: None,
            };
            flow = protocol
                .on_event(sse, builder, &mut out)
                .map_err(|error| error.to_string())?;
        }
        Ok(flow)
    }

    #[test]
    fn summary_parts_are_separated_and_items_found_by_index() {
        let mut builder = MessageBuilder::new(&Model::unknown());
        let mut protocol = ResponsesProtocol::new();
        let flow = feed(
            &mut protocol,
            &mut builder,
            &[
                json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
                json!({"type": "response.reasoning_summary_text.delta", "output_index": 0, "summary_index": 0, "delta": "One."}),
                json!({"type": "response.reasoning_summary_part.added", "output_index": 0, "summary_index": 1, "part": {"type": "summary_text", "text": ""}}),
                json!({"type": "response.reasoning_summary_text.delta", "output_index": 0, "summary_index": 1, "delta": "Two."}),
                json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed"}}),
            ],
        )
        .unwrap();
        assert_eq!(flow, Flow::Finished(StopReason::Stop));
        assert_eq!(block_text(&builder, 0), "One.\n\nTwo.");
        assert_eq!(builder.partial().response_id.as_deref(), Some("resp_1"));
    }

    #[test]
    fn items_only_finished_still_produce_content() {
        let mut builder = MessageBuilder::new(&Model::unknown());
        let mut protocol = ResponsesProtocol::new();
        feed(
            &mut protocol,
            &mut builder,
            &[
                json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "message", "id": "msg_1", "content": [{"type": "output_text", "text": "Hi"}]}}),
                json!({"type": "response.output_item.done", "output_index": 1, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "t", "arguments": "{\"a\":1}"}}),
            ],
        )
        .unwrap();
        let message = builder.partial();
        assert_eq!(message.text(), "Hi");
        let call = message.tool_calls().next().unwrap();
        assert_eq!(call.id, "call_1|fc_1");
        assert_eq!(call.arguments, json!({"a": 1}));
    }

    #[test]
    fn errors() {
        let mut builder = MessageBuilder::new(&Model::unknown());
        let mut protocol = ResponsesProtocol::new();
        let error = feed(
            &mut protocol,
            &mut builder,
            &[json!({"type": "error", "code": "server_error", "message": "boom"})],
        )
        .unwrap_err();
        assert_eq!(error, "Error Code server_error: boom");
        let failed = json!({"type": "response.failed", "response": {"status": "failed", "error": {"code": "rate_limit_exceeded", "message": "slow down"}}});
        let error = feed(&mut protocol, &mut builder, &[failed]).unwrap_err();
        assert_eq!(error, "rate_limit_exceeded: slow down");
        let incomplete = json!({"type": "response.incomplete", "response": {"status": "incomplete", "incomplete_details": {"reason": "content_filter"}}});
        let error = feed(&mut protocol, &mut builder, &[incomplete]).unwrap_err();
        assert_eq!(error, "openai stopped the response (incomplete: content_filter)");
        let mut out = Vec::new();
        let bad = SseEvent {
            event: Some("response.output_text.delta".into()),
            data: "{\"delta\": oops".into(),
            id: None,
        };
        let error = protocol.on_event(bad, &mut builder, &mut out).unwrap_err().to_string();
        assert!(error.starts_with("Malformed SSE data from openai: "), "{error}");
    }
}
