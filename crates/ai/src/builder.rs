//! Building a streamed assistant message and the events that describe it.

use std::collections::HashMap;
use std::sync::Arc;

use pi_agent_core::{
    AssistantMessage, AssistantMessageEvent, ContentBlock, Model, StopReason, TextContent, ThinkingContent, ToolCall,
    Usage, now_ms,
};

use crate::partial_json::ArgumentsAccumulator;

/// Why [`MessageBuilder::tool_call_end`] could not close a tool call; [`std::fmt::Display`] is
/// the error text the failed message carries.
#[derive(Debug, thiserror::Error)]
pub enum ToolCallError {
    /// No block was opened under this key.
    #[error("Tool call {key} ended before it started")]
    NotStarted {
        /// The provider's key of the block.
        key: String,
    },
    /// The block under this key is text or thinking.
    #[error("Block {key} is not a tool call")]
    NotToolCall {
        /// The provider's key of the block.
        key: String,
    },
}

/// Builds one assistant message from streamed pieces.
///
/// Every provider turns its wire events into calls on [`MessageBuilder`]: open a text, thinking
/// or tool-call block, append deltas, close it, finish. Each call returns the
/// [`AssistantMessageEvent`] to emit, carrying the message so far as an `Arc` that is updated in
/// place when no consumer still holds the previous snapshot. Blocks are addressed by the
/// provider's own index or id, mapped to positions in `content`.
///
/// ```
/// use pi_ai::MessageBuilder;
/// use pi_agent_core::{AssistantMessageEvent, Model, StopReason};
///
/// let mut b = MessageBuilder::new(&Model::unknown());
/// let _start = b.start();
/// b.text_start("0");
/// b.text_delta("0", "Hel");
/// b.text_delta("0", "lo");
/// b.text_end("0");
/// match b.done(StopReason::Stop) {
///     AssistantMessageEvent::Done { message, .. } => assert_eq!(message.text(), "Hello"),
///     _ => unreachable!(),
/// }
/// ```
pub struct MessageBuilder {
    partial: Arc<AssistantMessage>,
    blocks: HashMap<String, usize>,
    arguments: HashMap<usize, ArgumentsAccumulator>,
    cost: pi_agent_core::ModelCost,
}

impl MessageBuilder {
    /// A builder for a response of `model`.
    pub fn new(model: &Model) -> Self {
        MessageBuilder {
            partial: Arc::new(AssistantMessage {
                api: model.api.clone(),
                provider: model.provider.clone(),
                model: model.id.clone(),
                timestamp: now_ms(),
                ..Default::default()
            }),
            blocks: HashMap::new(),
            arguments: HashMap::new(),
            cost: model.cost,
        }
    }

    fn message(&mut self) -> &mut AssistantMessage {
        Arc::make_mut(&mut self.partial)
    }

    /// The message so far.
    pub fn partial(&self) -> &AssistantMessage {
        &self.partial
    }

    /// The `start` event.
    pub fn start(&self) -> AssistantMessageEvent {
        AssistantMessageEvent::Start {
            partial: self.partial.clone(),
        }
    }

    /// Sets the provider's response id.
    pub fn set_response_id(&mut self, id: impl Into<String>) {
        self.message().response_id = Some(id.into());
    }

    /// Sets the model the provider says answered (`responseModel`).
    pub fn set_response_model(&mut self, model: impl Into<String>) {
        self.message().response_model = Some(model.into());
    }

    /// Sets token usage and fills its cost from the model's prices.
    pub fn set_usage(&mut self, mut usage: Usage) {
        usage.cost = crate::cost::cost_of(&self.cost, &usage);
        self.message().usage = usage;
    }

    /// The usage so far.
    pub fn usage(&self) -> Usage {
        self.partial.usage
    }

    fn open(&mut self, key: &str, block: ContentBlock) -> usize {
        let message = Arc::make_mut(&mut self.partial);
        message.content.push(block);
        let index = message.content.len() - 1;
        self.blocks.insert(key.to_owned(), index);
        index
    }

    /// Whether a block with this key is open or was opened.
    pub fn has_block(&self, key: &str) -> bool {
        self.blocks.contains_key(key)
    }

    /// Opens a text block under `key`.
    pub fn text_start(&mut self, key: &str) -> AssistantMessageEvent {
        let content_index = self.open(key, ContentBlock::Text(TextContent::default()));
        AssistantMessageEvent::TextStart {
            content_index,
            partial: self.partial.clone(),
        }
    }

    /// Appends text to the block `key` (opening it if needed, which is then not reported).
    pub fn text_delta(&mut self, key: &str, delta: &str) -> AssistantMessageEvent {
        let content_index = self.index_or_open(key, || ContentBlock::Text(TextContent::default()));
        if let Some(ContentBlock::Text(text)) = self.message().content.get_mut(content_index) {
            text.text.push_str(delta);
        }
        AssistantMessageEvent::TextDelta {
            content_index,
            delta: delta.to_owned(),
            partial: self.partial.clone(),
        }
    }

    /// Sets the provider signature of a text block.
    pub fn set_text_signature(&mut self, key: &str, signature: impl Into<String>) {
        if let Some(&index) = self.blocks.get(key)
            && let Some(ContentBlock::Text(text)) = self.message().content.get_mut(index)
        {
            text.text_signature = Some(signature.into());
        }
    }

    /// Closes the text block `key`.
    pub fn text_end(&mut self, key: &str) -> AssistantMessageEvent {
        let content_index = self.index_or_open(key, || ContentBlock::Text(TextContent::default()));
        let content = match self.partial.content.get(content_index) {
            Some(ContentBlock::Text(text)) => text.text.clone(),
            _ => String::new(),
        };
        AssistantMessageEvent::TextEnd {
            content_index,
            content,
            partial: self.partial.clone(),
        }
    }

    /// Opens a thinking block under `key`.
    pub fn thinking_start(&mut self, key: &str) -> AssistantMessageEvent {
        let content_index = self.open(key, ContentBlock::Thinking(ThinkingContent::default()));
        AssistantMessageEvent::ThinkingStart {
            content_index,
            partial: self.partial.clone(),
        }
    }

    /// Appends thinking to the block `key`.
    pub fn thinking_delta(&mut self, key: &str, delta: &str) -> AssistantMessageEvent {
        let content_index = self.index_or_open(key, || ContentBlock::Thinking(ThinkingContent::default()));
        if let Some(ContentBlock::Thinking(thinking)) = self.message().content.get_mut(content_index) {
            thinking.thinking.push_str(delta);
        }
        AssistantMessageEvent::ThinkingDelta {
            content_index,
            delta: delta.to_owned(),
            partial: self.partial.clone(),
        }
    }

    /// Sets the signature (or marks redaction) of a thinking block.
    pub fn set_thinking_signature(&mut self, key: &str, signature: impl Into<String>, redacted: bool) {
        if let Some(&index) = self.blocks.get(key)
            && let Some(ContentBlock::Thinking(thinking)) = self.message().content.get_mut(index)
        {
            thinking.thinking_signature = Some(signature.into());
            if redacted {
                thinking.redacted = Some(true);
            }
        }
    }

    /// Closes the thinking block `key`.
    pub fn thinking_end(&mut self, key: &str) -> AssistantMessageEvent {
        let content_index = self.index_or_open(key, || ContentBlock::Thinking(ThinkingContent::default()));
        let content = match self.partial.content.get(content_index) {
            Some(ContentBlock::Thinking(thinking)) => thinking.thinking.clone(),
            _ => String::new(),
        };
        AssistantMessageEvent::ThinkingEnd {
            content_index,
            content,
            partial: self.partial.clone(),
        }
    }

    /// Opens a tool call under `key`.
    pub fn tool_call_start(&mut self, key: &str, id: &str, name: &str) -> AssistantMessageEvent {
        let block = ContentBlock::ToolCall(ToolCall::new(id, name, serde_json::json!({})));
        let content_index = self.open(key, block);
        self.arguments.insert(content_index, ArgumentsAccumulator::default());
        AssistantMessageEvent::ToolCallStart {
            content_index,
            partial: self.partial.clone(),
        }
    }

    /// Whether the tool call `key` was opened.
    pub fn tool_call_index(&self, key: &str) -> Option<usize> {
        self.blocks.get(key).copied()
    }

    /// Appends an argument fragment to the tool call `key`; `arguments` is re-parsed best-effort.
    pub fn tool_call_delta(&mut self, key: &str, fragment: &str) -> AssistantMessageEvent {
        let content_index = self.index_or_open(key, || {
            ContentBlock::ToolCall(ToolCall::new(String::new(), String::new(), serde_json::json!({})))
        });
        let accumulator = self.arguments.entry(content_index).or_default();
        // A fragment without arguments (the first of a call, usually) changes nothing.
        if !fragment.is_empty()
            && let Some(parsed) = accumulator.push(fragment)
            && let Some(ContentBlock::ToolCall(call)) = self.message().content.get_mut(content_index)
        {
            call.arguments = parsed;
        }
        AssistantMessageEvent::ToolCallDelta {
            content_index,
            delta: fragment.to_owned(),
            partial: self.partial.clone(),
        }
    }

    /// Sets id or name of a tool call learned after it opened (some APIs send them late).
    pub fn set_tool_call_identity(&mut self, key: &str, id: Option<&str>, name: Option<&str>) {
        if let Some(&index) = self.blocks.get(key)
            && let Some(ContentBlock::ToolCall(call)) = self.message().content.get_mut(index)
        {
            if let Some(id) = id {
                call.id = id.to_owned();
            }
            if let Some(name) = name {
                call.name = name.to_owned();
            }
        }
    }

    /// Sets the Google thought signature of a tool call (kept for replay to the same model).
    pub fn set_tool_call_thought_signature(&mut self, key: &str, signature: impl Into<String>) {
        if let Some(&index) = self.blocks.get(key)
            && let Some(ContentBlock::ToolCall(call)) = self.message().content.get_mut(index)
        {
            call.thought_signature = Some(signature.into());
        }
    }

    /// Closes the tool call `key`, parsing its complete arguments. Arguments that are not valid
    /// JSON (a model's `{not json`, trailing text, a cut-off object) do not fail the message: as
    /// pi does, they are repaired as far as they can be (the best-effort parse of the text, which
    /// keeps a complete leading object and closes an unfinished one) or become `{}`, so the tool
    /// call runs and its result — usually a validation error — tells the model what to fix.
    pub fn tool_call_end(&mut self, key: &str) -> Result<AssistantMessageEvent, ToolCallError> {
        let content_index = self
            .blocks
            .get(key)
            .copied()
            .ok_or_else(|| ToolCallError::NotStarted { key: key.to_owned() })?;
        let arguments = match self.arguments.get(&content_index) {
            Some(accumulator) => match accumulator.finish() {
                Ok(arguments) => arguments,
                Err(error) => {
                    let name = match self.partial.content.get(content_index) {
                        Some(ContentBlock::ToolCall(call)) => call.name.as_str(),
                        _ => "",
                    };
                    tracing::debug!(tool = name, %error, "tool call arguments are not valid JSON; repaired");
                    accumulator.current()
                }
            },
            None => serde_json::json!({}),
        };
        let message = self.message();
        let Some(ContentBlock::ToolCall(call)) = message.content.get_mut(content_index) else {
            return Err(ToolCallError::NotToolCall { key: key.to_owned() });
        };
        call.arguments = arguments;
        let tool_call = call.clone();
        Ok(AssistantMessageEvent::ToolCallEnd {
            content_index,
            tool_call,
            partial: self.partial.clone(),
        })
    }

    fn index_or_open(&mut self, key: &str, block: impl FnOnce() -> ContentBlock) -> usize {
        match self.blocks.get(key) {
            Some(&index) => index,
            None => self.open(key, block()),
        }
    }

    /// The terminal `done` event. A message with tool calls that stopped normally reports
    /// `toolUse`.
    pub fn done(mut self, reason: StopReason) -> AssistantMessageEvent {
        let message = self.message();
        let reason = if reason == StopReason::Stop && message.tool_calls().next().is_some() {
            StopReason::ToolUse
        } else {
            reason
        };
        message.stop_reason = reason;
        AssistantMessageEvent::Done {
            reason,
            message: Arc::unwrap_or_clone(self.partial),
        }
    }

    /// The terminal `error` event (`stopReason: error`, or `aborted` when `aborted`).
    pub fn error(mut self, message: impl Into<String>, aborted: bool) -> AssistantMessageEvent {
        let reason = if aborted {
            StopReason::Aborted
        } else {
            StopReason::Error
        };
        let partial = self.message();
        partial.stop_reason = reason;
        partial.error_message = Some(message.into());
        AssistantMessageEvent::Error {
            reason,
            error: Arc::unwrap_or_clone(self.partial),
        }
    }
}
