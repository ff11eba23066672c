//! Hooks around every tool call: `before_tool_call` may block it or change its arguments,
//! `after_tool_call` may override fields of its result.
//!
//! Both receive the run's [`CancellationToken`] and are responsible for honouring it. A hook that
//! returns an error (or panics) turns the call into an error result with that message.

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::message::{AgentMessage, AssistantMessage, ContentBlock, ToolCall, Usage};
use crate::tool::{ToolError, ToolResult};

/// What `before_tool_call` sees. `args` are the validated arguments; changes to them reach
/// `execute` without being validated again.
#[derive(Debug)]
pub struct BeforeToolCallContext<'a> {
    /// The assistant message holding the call.
    pub assistant_message: &'a AssistantMessage,
    /// The raw call block.
    pub tool_call: &'a ToolCall,
    /// The validated arguments, mutable.
    pub args: &'a mut Value,
    /// The conversation so far (the assistant message included).
    pub messages: &'a [AgentMessage],
}

/// Outcome of `before_tool_call`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BeforeToolCallResult {
    /// Don't execute the call; it becomes an error result.
    pub block: bool,
    /// Text of that error result (default `Tool execution was blocked`).
    pub reason: Option<String>,
    /// With `block`: the blocked result asks the loop to stop after the batch.
    pub terminate: bool,
}

impl BeforeToolCallResult {
    /// Blocks the call with `reason`.
    pub fn block(reason: impl Into<String>) -> Self {
        BeforeToolCallResult {
            block: true,
            reason: Some(reason.into()),
            terminate: false,
        }
    }
}

/// What `after_tool_call` sees.
#[derive(Debug)]
pub struct AfterToolCallContext<'a> {
    /// The assistant message holding the call.
    pub assistant_message: &'a AssistantMessage,
    /// The raw call block.
    pub tool_call: &'a ToolCall,
    /// The arguments `execute` received.
    pub args: &'a Value,
    /// The executed result, before any override.
    pub result: &'a ToolResult,
    /// Whether execution failed.
    pub is_error: bool,
    /// The conversation so far.
    pub messages: &'a [AgentMessage],
}

/// Field-wise overrides from `after_tool_call`; `None` keeps the executed value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AfterToolCallResult {
    /// Replaces `content`.
    pub content: Option<Vec<ContentBlock>>,
    /// Replaces `details`.
    pub details: Option<Value>,
    /// Replaces the error flag.
    pub is_error: Option<bool>,
    /// Replaces `usage`.
    pub usage: Option<Usage>,
    /// Replaces `terminate`.
    pub terminate: Option<bool>,
}

/// Runs before every prepared tool call.
///
/// Synchronous closures taking the context are hooks:
///
/// ```
/// use pi_agent_core::{BeforeToolCallContext, BeforeToolCallHook, BeforeToolCallResult, ToolError};
/// let hook = |ctx: BeforeToolCallContext<'_>| -> Result<Option<BeforeToolCallResult>, ToolError> {
///     Ok((ctx.tool_call.name == "bash").then(|| BeforeToolCallResult::block("no shell")))
/// };
/// let _: &dyn BeforeToolCallHook = &hook;
/// ```
#[async_trait]
pub trait BeforeToolCallHook: Send + Sync {
    /// Inspects (and may change) a call before it runs.
    async fn before_tool_call(
        &self,
        ctx: BeforeToolCallContext<'_>,
        cancel: &CancellationToken,
    ) -> Result<Option<BeforeToolCallResult>, ToolError>;
}

#[async_trait]
impl<F> BeforeToolCallHook for F
where
    F: for<'a> Fn(BeforeToolCallContext<'a>) -> Result<Option<BeforeToolCallResult>, ToolError> + Send + Sync,
{
    async fn before_tool_call(
        &self,
        ctx: BeforeToolCallContext<'_>,
        _cancel: &CancellationToken,
    ) -> Result<Option<BeforeToolCallResult>, ToolError> {
        self(ctx)
    }
}

/// Runs after every executed tool call.
#[async_trait]
pub trait AfterToolCallHook: Send + Sync {
    /// Inspects a result and may override its fields.
    async fn after_tool_call(
        &self,
        ctx: AfterToolCallContext<'_>,
        cancel: &CancellationToken,
    ) -> Result<Option<AfterToolCallResult>, ToolError>;
}

#[async_trait]
impl<F> AfterToolCallHook for F
where
    F: for<'a> Fn(AfterToolCallContext<'a>) -> Result<Option<AfterToolCallResult>, ToolError> + Send + Sync,
{
    async fn after_tool_call(
        &self,
        ctx: AfterToolCallContext<'_>,
        _cancel: &CancellationToken,
    ) -> Result<Option<AfterToolCallResult>, ToolError> {
        self(ctx)
    }
}

/// Runs before every `message_end` (prompts, steering and follow-up messages, the assistant's
/// answer, tool results): may replace the finished message. The replacement is what the event
/// carries, what the transcript keeps and what the rest of the run sees (pi's extensions'
/// `message_end` result). A replacement of an assistant message by another role is ignored.
#[async_trait]
pub trait MessageEndHook: Send + Sync {
    /// Returns the message to finish with instead of `message`; `None` keeps it.
    async fn message_end(&self, message: &AgentMessage, cancel: &CancellationToken) -> Option<AgentMessage>;
}
