//! Tools the model can call: the [`AgentTool`] trait, its result and error types, and the
//! typed-parameter adapter [`TypedTool`].
//!
//! A tool declares a name, a label, a description, a JSON Schema for its parameters and,
//! optionally, an [`ToolExecutionMode`]. The loop validates the model's arguments against the
//! schema before calling [`AgentTool::execute`]. A tool reports failure by returning
//! [`ToolError`]; its message becomes the error result the model sees.
//!
//! Tools with Rust-typed parameters implement [`TypedTool`], which makes them an [`AgentTool`]:
//!
//! ```
//! use pi_agent_core::{AgentTool, ToolContext, ToolError, ToolParameters, ToolResult, TypedTool};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct EchoArgs {
//!     /// Text to echo back.
//!     text: String,
//! }
//!
//! struct Echo {
//!     parameters: ToolParameters,
//! }
//!
//! #[async_trait::async_trait]
//! impl TypedTool for Echo {
//!     type Params = EchoArgs;
//!     fn name(&self) -> &str { "echo" }
//!     fn description(&self) -> &str { "Echo the text back" }
//!     fn parameters(&self) -> &ToolParameters { &self.parameters }
//!     async fn execute(&self, _id: &str, args: EchoArgs, _ctx: ToolContext) -> Result<ToolResult, ToolError> {
//!         Ok(ToolResult::text(args.text))
//!     }
//! }
//!
//! let tool = pi_agent_core::typed_tool(Echo { parameters: ToolParameters::of::<EchoArgs>() });
//! assert_eq!(tool.name(), "echo");
//! assert_eq!(tool.parameters().schema()["required"][0], "text");
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let result = tool.execute("call-1", serde_json::json!({"text": "hi"}), ToolContext::detached()).await;
//! assert_eq!(result.unwrap().content[0].as_text(), Some("hi"));
//! # });
//! ```

use std::path::PathBuf;
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

crate::names::impl_serde_names!(ToolExecutionMode, "tool execution mode", [Parallel, Sequential]);

/// What a tool returns (pi's `AgentToolResult`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// Text and image blocks sent to the model.
    pub content: Vec<ContentBlock>,
    /// Structured data for UIs, logs and state reconstruction; not sent to the model. Left out
    /// of the JSON when null, as pi leaves out an undefined `details`.
    #[serde(default, skip_serializing_if = "Value::is_null")]
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

/// Text of a tool call cut short, or never started, because the run was aborted.
pub const OPERATION_ABORTED: &str = "Operation aborted";

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

    /// The files a call with these validated arguments will change, as absolute paths (the same
    /// paths the call then writes; no file-system access needed). Defaults to none.
    ///
    /// The loop asks while it prepares the calls of an assistant message one after the other —
    /// after `before_tool_call`, so with the arguments the call runs with — and reserves the
    /// files' places in the per-file mutation queue ([`MutationTicket`](crate::MutationTicket)) in
    /// that source order. The call then waits for its turn before [`AgentTool::execute`] and holds
    /// the files until it returns, so the mutations of one file land in the order the model wrote
    /// them, even when the calls run in parallel. Inside the call, [`lock_files`](crate::lock_files)
    /// of these files returns at once. A tool that changes files it cannot name here can still lock
    /// them itself with [`lock_files`](crate::lock_files), but only in the order the calls get there.
    ///
    /// ```
    /// use std::path::PathBuf;
    /// use pi_agent_core::{AgentTool, FnTool, ToolResult};
    /// use serde_json::json;
    ///
    /// let touch = FnTool::new("touch", "Touches a file", json!({"type": "object"}), |_id, _args, _ctx| async {
    ///     Ok(ToolResult::text("ok"))
    /// })
    /// .with_mutated_files(|args| args["path"].as_str().map(|p| PathBuf::from("/work").join(p)).into_iter().collect());
    /// assert_eq!(touch.mutated_files(&json!({"path": "a.txt"})), [PathBuf::from("/work/a.txt")]);
    /// ```
    fn mutated_files(&self, _args: &Value) -> Vec<PathBuf> {
        Vec::new()
    }

    /// Runs the call with validated arguments. The loop never calls it once the run was aborted
    /// (such calls end as [`OPERATION_ABORTED`] without running); a long-running tool watches
    /// [`ToolContext::cancel`] while it works.
    async fn execute(&self, call_id: &str, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError>;
}

/// A tool whose arguments arrive as a Rust value: the loop validates the model's JSON against
/// [`TypedTool::parameters`], [`TypedTool::parse_arguments`] turns it into
/// [`TypedTool::Params`], and [`TypedTool::execute`] gets the typed value.
///
/// Every `TypedTool` is an [`AgentTool`] (a blanket implementation), so a typed tool goes into a
/// tool list as `Arc::new(tool)` (or [`typed_tool`]) and can still be called with raw JSON through
/// [`AgentTool::execute`]. That adapter does what every tool would otherwise repeat: it returns
/// [`TypedTool::aborted`] without running anything when the run was already aborted (the loop
/// itself never calls a tool after an abort; this covers direct callers), and it reports
/// arguments that do not parse as the tool's error.
///
/// The schema is the tool's own [`ToolParameters`]: derived from the parameter type with
/// [`ToolParameters::of`], or written by hand with [`ToolParameters::new`] when the schema the
/// model sees must be exactly some text (pi's built-ins). Loosely typed fields that must not fail
/// the call can use [`Lenient`](crate::Lenient).
#[async_trait]
pub trait TypedTool: Send + Sync + 'static {
    /// The parameter type the validated arguments deserialize into.
    type Params: DeserializeOwned + Send;

    /// Name the model calls the tool by.
    fn name(&self) -> &str;

    /// Human-readable label; defaults to the name.
    fn label(&self) -> &str {
        self.name()
    }

    /// Description sent to the model.
    fn description(&self) -> &str;

    /// Parameter schema sent to the model, with its cached validator.
    fn parameters(&self) -> &ToolParameters;

    /// Per-tool execution mode.
    fn execution_mode(&self) -> Option<ToolExecutionMode> {
        None
    }

    /// Compatibility shim run on the raw arguments before validation (pi's `prepareArguments`).
    fn prepare_arguments(&self, args: Value) -> Value {
        args
    }

    /// The files a call will change, from its validated arguments, as absolute paths
    /// ([`AgentTool::mutated_files`], whose example shows the idea). Defaults to none. `write`
    /// and `edit` return their `path` argument here, resolved exactly as their `execute` resolves
    /// it, so that the place the loop reserves is the one `execute` queues for.
    fn mutated_files(&self, _args: &Value) -> Vec<PathBuf> {
        Vec::new()
    }

    /// Turns the validated arguments into [`TypedTool::Params`]; the error is the call's result.
    /// Defaults to `serde_json::from_value`; override it for tool-specific error texts or checks
    /// that span several fields.
    fn parse_arguments(&self, args: Value) -> Result<Self::Params, ToolError> {
        serde_json::from_value(args).map_err(ToolError::from)
    }

    /// The error of a call made after the run was aborted; defaults to [`OPERATION_ABORTED`].
    fn aborted(&self) -> ToolError {
        ToolError::new(OPERATION_ABORTED)
    }

    /// Runs the call.
    async fn execute(&self, call_id: &str, params: Self::Params, ctx: ToolContext) -> Result<ToolResult, ToolError>;
}

/// Wraps a [`TypedTool`] as a shareable [`AgentTool`] (the same as `Arc::new(tool)`).
pub fn typed_tool<T: TypedTool>(tool: T) -> Arc<dyn AgentTool> {
    Arc::new(tool)
}

#[async_trait]
impl<T: TypedTool> AgentTool for T {
    fn name(&self) -> &str {
        TypedTool::name(self)
    }
    fn label(&self) -> &str {
        TypedTool::label(self)
    }
    fn description(&self) -> &str {
        TypedTool::description(self)
    }
    fn parameters(&self) -> &ToolParameters {
        TypedTool::parameters(self)
    }
    fn execution_mode(&self) -> Option<ToolExecutionMode> {
        TypedTool::execution_mode(self)
    }
    fn prepare_arguments(&self, args: Value) -> Value {
        TypedTool::prepare_arguments(self, args)
    }
    fn mutated_files(&self, args: &Value) -> Vec<PathBuf> {
        TypedTool::mutated_files(self, args)
    }
    async fn execute(&self, call_id: &str, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        if ctx.cancel.is_cancelled() {
            return Err(TypedTool::aborted(self));
        }
        let params = self.parse_arguments(args)?;
        TypedTool::execute(self, call_id, params, ctx).await
    }
}

type ExecuteFn = dyn Fn(String, Value, ToolContext) -> futures::future::BoxFuture<'static, Result<ToolResult, ToolError>>
    + Send
    + Sync;

type MutatedFn = dyn Fn(&Value) -> Vec<PathBuf> + Send + Sync;

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
    mutated: Option<Box<MutatedFn>>,
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
            mutated: None,
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

    /// Sets [`AgentTool::mutated_files`]: the absolute paths of the files a call with these
    /// arguments changes (see the example there).
    #[must_use]
    pub fn with_mutated_files(mut self, files: impl Fn(&Value) -> Vec<PathBuf> + Send + Sync + 'static) -> Self {
        self.mutated = Some(Box::new(files));
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
    fn mutated_files(&self, args: &Value) -> Vec<PathBuf> {
        self.mutated.as_ref().map_or_else(Vec::new, |files| files(args))
    }
    async fn execute(&self, call_id: &str, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        (self.execute)(call_id.to_owned(), args, ctx).await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    #[test]
    fn a_result_without_details_leaves_the_field_out() {
        let result = ToolResult {
            content: vec![ContentBlock::text("hello\n")],
            ..ToolResult::default()
        };
        assert_eq!(
            serde_json::to_string(&result).unwrap(),
            r#"{"content":[{"type":"text","text":"hello\n"}]}"#
        );
        let with = ToolResult {
            details: serde_json::json!({}),
            ..result
        };
        assert_eq!(
            serde_json::to_string(&with).unwrap(),
            r#"{"content":[{"type":"text","text":"hello\n"}],"details":{}}"#
        );
    }

    #[derive(Deserialize)]
    struct Args {
        n: u32,
    }

    struct Counting {
        parameters: ToolParameters,
        runs: AtomicUsize,
        aborted_text: Option<&'static str>,
    }

    impl Counting {
        fn new(aborted_text: Option<&'static str>) -> Self {
            Counting {
                parameters: ToolParameters::new(serde_json::json!({"type": "object"})),
                runs: AtomicUsize::new(0),
                aborted_text,
            }
        }
    }

    #[async_trait]
    impl TypedTool for Counting {
        type Params = Args;
        fn name(&self) -> &str {
            "count"
        }
        fn description(&self) -> &str {
            "Counts its runs"
        }
        fn parameters(&self) -> &ToolParameters {
            &self.parameters
        }
        fn aborted(&self) -> ToolError {
            self.aborted_text
                .map_or_else(|| ToolError::new(OPERATION_ABORTED), ToolError::new)
        }
        async fn execute(&self, _id: &str, args: Args, _ctx: ToolContext) -> Result<ToolResult, ToolError> {
            self.runs.fetch_add(1, Ordering::SeqCst);
            Ok(ToolResult::text(args.n.to_string()))
        }
    }

    fn run<T: AgentTool>(tool: &T, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let runtime = tokio::runtime::Builder::new_current_thread().build();
        let runtime = runtime.map_err(ToolError::from)?;
        runtime.block_on(tool.execute("call-1", args, ctx))
    }

    #[test]
    fn typed_tools_get_typed_arguments() {
        let tool = Counting::new(None);
        let result = run(&tool, serde_json::json!({"n": 3}), ToolContext::detached());
        assert_eq!(
            result
                .ok()
                .and_then(|r| r.content[0].as_text().map(str::to_owned))
                .as_deref(),
            Some("3")
        );
        let error = run(&tool, serde_json::json!({"n": "x"}), ToolContext::detached()).err();
        assert_eq!(
            error.map(|e| e.message().to_owned()).as_deref(),
            Some("invalid type: string \"x\", expected u32")
        );
        assert_eq!(tool.runs.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn an_aborted_run_never_starts_a_typed_tool() {
        for (text, expected) in [(None, OPERATION_ABORTED), (Some("Command aborted"), "Command aborted")] {
            let tool = Counting::new(text);
            let ctx = ToolContext::detached();
            ctx.cancel.cancel();
            let error = run(&tool, serde_json::json!({"n": 3}), ctx).err();
            assert_eq!(error.map(|e| e.message().to_owned()).as_deref(), Some(expected));
            assert_eq!(tool.runs.load(Ordering::SeqCst), 0);
        }
    }
}
