//! Tools the model can call: the [`AgentTool`] trait, its result and error types, and the
//! typed-parameter adapter [`TypedTool`].
//!
//! A tool declares a name, a label, a description, a JSON Schema for its parameters and,
//! optionally, an [`ToolExecutionMode`]. The loop validates the model's arguments against the
//! schema before calling [`AgentTool::execute`]. A tool reports failure by returning
//! [`ToolError`]; its message becomes the error result the model sees.
//!
//! Tools with Rust-typed parameters implement [`TypedTool`] and are wrapped with
//! [`typed_tool`]:
//!
//! ```
//! use pi_agent_core::{typed_tool, ToolContext, ToolError, ToolResult, TypedTool};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct EchoArgs {
//!     /// Text to echo back.
//!     text: String,
//! }
//!
//! struct Echo;
//!
//! #[async_trait::async_trait]
//! impl TypedTool for Echo {
//!     type Params = EchoArgs;
//!     fn name(&self) -> &str { "echo" }
//!     fn description(&self) -> &str { "Echo the text back" }
//!     async fn execute(&self, _id: &str, args: EchoArgs, _ctx: ToolContext) -> Result<ToolResult, ToolError> {
//!         Ok(ToolResult::text(args.text))
//!     }
//! }
//!
//! let tool = typed_tool(Echo);
//! assert_eq!(tool.name(), "echo");
//! assert_eq!(tool.parameters().schema()["required"][0], "text");
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::message::{ContentBlock, Usage};
use crate::validate::ToolParameters;

/// Whether a tool may run at the same time as other calls of the same assistant message.
///
/// The batch of calls in one assistant message runs sequentially if the loop's global mode is
/// sequential or if any call names a tool whose mode is [`ToolExecutionMode::Sequential`];
/// otherwise the calls run in parallel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolExecutionMode {
    /// May run concurrently with other calls (pi's default).
    #[default]
    Parallel,
    /// Must run one at a time; forces its whole batch to run sequentially.
    Sequential,
}

/// What a tool returns (pi's `AgentToolResult`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// Text and image blocks sent to the model.
    pub content: Vec<ContentBlock>,
    /// Structured data for UIs, logs and state reconstruction; not sent to the model.
    #[serde(default)]
    pub details: Value,
    /// Usage of a nested model call made by the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Tools that become available from this point of the transcript.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub added_tool_names: Vec<String>,
    /// Asks the loop to stop after this batch; honoured only when every result of the batch asks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminate: Option<bool>,
}

impl ToolResult {
    /// A result with one text block and empty details.
    pub fn text(text: impl Into<String>) -> Self {
        ToolResult {
            content: vec![ContentBlock::text(text)],
            details: Value::Object(Default::default()),
            ..Default::default()
        }
    }

    /// Sets `details`.
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }

    /// Sets `terminate`.
    #[must_use]
    pub fn with_terminate(mut self, terminate: bool) -> Self {
        self.terminate = Some(terminate);
        self
    }

    /// The error result pi builds from a thrown error: one text block, `details: {}`.
    pub fn error_text(message: impl Into<String>) -> Self {
        ToolResult::text(message)
    }
}

/// A failed tool call; its message is what the model reads. It may carry `details` for UIs
/// and state reconstruction, which the error result keeps (default `{}`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    message: String,
    details: Option<Value>,
}

impl ToolError {
    /// A tool error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            details: None,
        }
    }

    /// Attaches `details` to the error result.
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The details, if any.
    pub fn details(&self) -> Option<&Value> {
        self.details.as_ref()
    }

    /// The error result pi builds from this error: one text block, the details or `{}`.
    pub fn into_result(self) -> ToolResult {
        let result = ToolResult::error_text(self.message);
        match self.details {
            Some(details) => result.with_details(details),
            None => result,
        }
    }
}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError::new(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError::new(message)
    }
}

impl From<std::io::Error> for ToolError {
    fn from(error: std::io::Error) -> Self {
        ToolError::new(error.to_string())
    }
}

impl From<serde_json::Error> for ToolError {
    fn from(error: serde_json::Error) -> Self {
        ToolError::new(error.to_string())
    }
}

type UpdateFn = dyn Fn(ToolResult) + Send + Sync;

/// Streams partial results of a running call to the loop (`tool_execution_update` events).
///
/// Scoped to one [`AgentTool::execute`] call: updates sent after the call returned are dropped.
#[derive(Clone)]
pub struct ToolUpdateSink {
    send: Option<Arc<UpdateFn>>,
    settled: Arc<AtomicBool>,
}

impl std::fmt::Debug for ToolUpdateSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolUpdateSink")
            .field("settled", &self.settled.load(Ordering::Relaxed))
            .finish()
    }
}

impl ToolUpdateSink {
    /// A sink calling `send` for each update until [`ToolUpdateSink::settle`] is called.
    pub fn new(send: impl Fn(ToolResult) + Send + Sync + 'static) -> Self {
        ToolUpdateSink {
            send: Some(Arc::new(send)),
            settled: Arc::new(AtomicBool::new(false)),
        }
    }

    /// A sink that drops every update.
    pub fn discard() -> Self {
        ToolUpdateSink {
            send: None,
            settled: Arc::new(AtomicBool::new(true)),
        }
    }

    /// Sends a partial result (ignored once the call has settled).
    pub fn update(&self, partial: ToolResult) {
        if self.settled.load(Ordering::Acquire) {
            return;
        }
        if let Some(send) = &self.send {
            send(partial);
        }
    }

    /// Marks the call as settled: later updates are dropped.
    pub fn settle(&self) {
        self.settled.store(true, Ordering::Release);
    }
}

/// What a running tool call gets besides its arguments.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Cancelled when the run is aborted; long-running tools must watch it.
    pub cancel: CancellationToken,
    /// Partial-result channel.
    pub updates: ToolUpdateSink,
}

impl ToolContext {
    /// A context with a fresh token and no update channel (for calling tools directly).
    pub fn detached() -> Self {
        ToolContext {
            cancel: CancellationToken::new(),
            updates: ToolUpdateSink::discard(),
        }
    }
}

/// A tool the agent loop can call (pi's `AgentTool`).
#[async_trait]
pub trait AgentTool: Send + Sync {
    /// Name the model calls the tool by.
    fn name(&self) -> &str;

    /// Human-readable label for UIs; defaults to the name.
    fn label(&self) -> &str {
        self.name()
    }

    /// Description sent to the model.
    fn description(&self) -> &str;

    /// Parameter schema, with its cached validator.
    fn parameters(&self) -> &ToolParameters;

    /// Per-tool execution mode; `None` means the loop's default applies.
    fn execution_mode(&self) -> Option<ToolExecutionMode> {
        None
    }

    /// Compatibility shim run on the raw arguments before validation (pi's `prepareArguments`).
    fn prepare_arguments(&self, args: Value) -> Value {
        args
    }

    /// Runs the call with validated arguments.
    async fn execute(&self, call_id: &str, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError>;
}

/// A tool whose parameters are a Rust type; wrap it with [`typed_tool`] to get an [`AgentTool`].
#[async_trait]
pub trait TypedTool: Send + Sync + 'static {
    /// The parameter type; its schema is derived with schemars.
    type Params: DeserializeOwned + schemars::JsonSchema + Send;

    /// Name the model calls the tool by.
    fn name(&self) -> &str;

    /// Human-readable label; defaults to the name.
    fn label(&self) -> &str {
        self.name()
    }

    /// Description sent to the model.
    fn description(&self) -> &str;

    /// Per-tool execution mode.
    fn execution_mode(&self) -> Option<ToolExecutionMode> {
        None
    }

    /// Compatibility shim run on the raw arguments before validation.
    fn prepare_arguments(&self, args: Value) -> Value {
        args
    }

    /// Runs the call.
    async fn execute(&self, call_id: &str, args: Self::Params, ctx: ToolContext) -> Result<ToolResult, ToolError>;
}

/// Adapts a [`TypedTool`] to [`AgentTool`]; built by [`typed_tool`].
pub struct Typed<T: TypedTool> {
    tool: T,
    parameters: ToolParameters,
}

/// Wraps a [`TypedTool`] as a shareable [`AgentTool`].
pub fn typed_tool<T: TypedTool>(tool: T) -> Arc<dyn AgentTool> {
    Arc::new(Typed {
        parameters: ToolParameters::of::<T::Params>(),
        tool,
    })
}

#[async_trait]
impl<T: TypedTool> AgentTool for Typed<T> {
    fn name(&self) -> &str {
        self.tool.name()
    }
    fn label(&self) -> &str {
        self.tool.label()
    }
    fn description(&self) -> &str {
        self.tool.description()
    }
    fn parameters(&self) -> &ToolParameters {
        &self.parameters
    }
    fn execution_mode(&self) -> Option<ToolExecutionMode> {
        self.tool.execution_mode()
    }
    fn prepare_arguments(&self, args: Value) -> Value {
        self.tool.prepare_arguments(args)
    }
    async fn execute(&self, call_id: &str, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let params: T::Params = serde_json::from_value(args)?;
        self.tool.execute(call_id, params, ctx).await
    }
}

type ExecuteFn = dyn Fn(String, Value, ToolContext) -> futures::future::BoxFuture<'static, Result<ToolResult, ToolError>>
    + Send
    + Sync;

/// A tool with a raw JSON Schema whose body is a closure — the shape dynamic tools (custom
/// tools, MCP servers) and tests use.
///
/// ```
/// use pi_agent_core::{FnTool, ToolResult};
/// use serde_json::json;
///
/// let tool = FnTool::new("noop", "Does nothing", json!({"type": "object"}), |_id, _args, _ctx| async {
///     Ok(ToolResult::text("ok"))
/// });
/// assert_eq!(pi_agent_core::AgentTool::name(&tool), "noop");
/// ```
pub struct FnTool {
    name: String,
    label: String,
    description: String,
    parameters: ToolParameters,
    mode: Option<ToolExecutionMode>,
    prepare: Option<Box<dyn Fn(Value) -> Value + Send + Sync>>,
    execute: Box<ExecuteFn>,
}

impl FnTool {
    /// A tool named `name` whose calls run `execute(call_id, args, ctx)`.
    pub fn new<F, Fut>(name: impl Into<String>, description: impl Into<String>, schema: Value, execute: F) -> Self
    where
        F: Fn(String, Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<ToolResult, ToolError>> + Send + 'static,
    {
        let name = name.into();
        FnTool {
            label: name.clone(),
            name,
            description: description.into(),
            parameters: ToolParameters::new(schema),
            mode: None,
            prepare: None,
            execute: Box::new(move |id, args, ctx| Box::pin(execute(id, args, ctx))),
        }
    }

    /// Sets the UI label.
    #[must_use]
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// Sets the execution mode.
    #[must_use]
    pub fn with_execution_mode(mut self, mode: ToolExecutionMode) -> Self {
        self.mode = Some(mode);
        self
    }

    /// Sets the `prepare_arguments` shim.
    #[must_use]
    pub fn with_prepare_arguments(mut self, prepare: impl Fn(Value) -> Value + Send + Sync + 'static) -> Self {
        self.prepare = Some(Box::new(prepare));
        self
    }

    /// Wraps the tool in an [`Arc`] for a tool list.
    pub fn into_arc(self) -> Arc<dyn AgentTool> {
        Arc::new(self)
    }
}

#[async_trait]
impl AgentTool for FnTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn label(&self) -> &str {
        &self.label
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters(&self) -> &ToolParameters {
        &self.parameters
    }
    fn execution_mode(&self) -> Option<ToolExecutionMode> {
        self.mode
    }
    fn prepare_arguments(&self, args: Value) -> Value {
        match &self.prepare {
            Some(prepare) => prepare(args),
            None => args,
        }
    }
    async fn execute(&self, call_id: &str, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        (self.execute)(call_id.to_owned(), args, ctx).await
    }
}
