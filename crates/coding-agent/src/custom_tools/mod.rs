//! Custom tools: tools the user adds to pi (`docs/custom-tools.md`).
//!
//! Four kinds, one [`ToolApi`]:
//!
//! 1. **native Rust tools**, from a [`CustomToolFactory`] a program registers when it embeds this
//!    crate (one factory may return several tools sharing state);
//! 2. **tools in any language**: a directory with a `tool.json` manifest whose process speaks
//!    JSON-RPC 2.0 over stdio (`process`);
//! 3. **pi's TypeScript / JavaScript tools** (`index.ts` / `index.js` exporting a factory), run
//!    unchanged by a small Node host that speaks the same protocol (`node`);
//! 4. **MCP servers** from `settings.json` `mcpServers` (`mcp`).
//!
//! [`discover`] finds the tool directories (`~/.pi/agent/tools/*/`, `.pi/tools/*/`, `customTools`,
//! `--tool`), [`load_all`] loads them, resolves name conflicts (later sources win, native tools
//! highest; built-in names are reserved) and collects every load error without stopping.

mod api;
mod discovery;
mod events;
mod loader;
pub mod mcp;
pub mod node;
pub mod process;
pub mod schema;

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use pi_agent_core::{AgentTool, ToolContext, ToolError, ToolExecutionMode, ToolParameters, ToolResult};
use serde_json::Value;

pub use api::{
    DEFAULT_SOURCE_TOOL, ExecOptions, ExecResult, PENDING_STORE_UNAVAILABLE, StoreUnavailable, ToolApi, UiSlot,
};
pub use discovery::{
    ClassifyError, MANIFEST, SCRIPT_ENTRIES, ToolLocation, ToolPackage, ToolSource, classify, discover,
};
pub use events::{SessionReason, ToolSessionEvent};
pub use loader::{CustomTools, LoadError, LoadedTool, ToolKind, load_all, resolve_conflicts};

/// How the interactive mode asks a custom tool to draw its result (pi's `renderResult` options).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderResultOptions {
    /// The user pressed Ctrl+O: show more.
    pub expanded: bool,
    /// A streamed partial result, not the final one.
    pub is_partial: bool,
    /// The call failed: `result` is the error the model read (pi's render context `isError`);
    /// always `false` for a partial result.
    pub is_error: bool,
}

/// A custom tool: an [`AgentTool`] that may also follow the session (pi's `onSession`) and draw
/// itself in the interactive mode (pi's `renderCall` / `renderResult`).
#[async_trait]
pub trait CustomTool: AgentTool {
    /// Called, one tool after another, when the session starts, switches, branches, is replaced,
    /// moves in its tree, or shuts down. A tool that keeps state rebuilds it here from
    /// [`ToolSessionEvent::result_details`]. The default does nothing.
    async fn on_session(&self, _event: &ToolSessionEvent) {}

    /// The call's line(s) in its block (the arguments may still be streaming). `None` (the default)
    /// — or a panic — shows the tool's name and arguments instead. (With the `tui` feature.)
    #[cfg(feature = "tui")]
    fn render_call(&self, _args: &Value, _theme: &pi_tui::Theme) -> Option<Vec<pi_tui::Line>> {
        None
    }

    /// The result's lines in its block. `None` (the default) — or a panic — shows the result's raw
    /// text instead. (With the `tui` feature.)
    #[cfg(feature = "tui")]
    fn render_result(
        &self,
        _result: &ToolResult,
        _options: RenderResultOptions,
        _theme: &pi_tui::Theme,
    ) -> Option<Vec<pi_tui::Line>> {
        None
    }
}

/// Why a [`CustomToolFactory`] created no tools. pi reports it as
/// `native:<name>: Failed to load tool: <message>`.
///
/// Made from any text (`FactoryError::new`, or `?` / `.into()` on a `String` or `&str`),
/// optionally with the error that caused it ([`FactoryError::with_source`]).
///
/// ```
/// use pi_coding_agent::custom_tools::FactoryError;
///
/// let error = FactoryError::new(format_args!("no config in {}", "/work"));
/// assert_eq!(error.to_string(), "no config in /work");
/// let io = std::io::Error::other("denied");
/// let error = FactoryError::from("cannot read the config").with_source(io);
/// assert_eq!(std::error::Error::source(&error).map(ToString::to_string).as_deref(), Some("denied"));
/// ```
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct FactoryError {
    message: String,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

impl FactoryError {
    /// An error with this message.
    pub fn new(message: impl std::fmt::Display) -> Self {
        FactoryError {
            message: message.to_string(),
            source: None,
        }
    }

    /// The same error, caused by `source` (kept as [`std::error::Error::source`], not added to the
    /// message).
    #[must_use]
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Box::new(source));
        self
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl From<String> for FactoryError {
    fn from(message: String) -> Self {
        FactoryError { message, source: None }
    }
}

impl From<&str> for FactoryError {
    fn from(message: &str) -> Self {
        FactoryError::new(message)
    }
}

/// Creates custom tools from the [`ToolApi`] (pi's `CustomToolFactory`); one factory may return
/// several tools that share state. Closures `Fn(&ToolApi) -> Result<Vec<Arc<dyn CustomTool>>, E>`
/// are factories, for any error `E` that converts into a [`FactoryError`] (`FactoryError` itself,
/// `String`, `&str`).
///
/// ```
/// use std::sync::Arc;
/// use pi_agent_core::{FnTool, ToolResult};
/// use pi_coding_agent::custom_tools::{CustomTool, CustomToolFactory, FactoryError, ToolApi, plain};
///
/// let factory = |api: &ToolApi| -> Result<Vec<Arc<dyn CustomTool>>, FactoryError> {
///     let cwd = api.cwd().display().to_string();
///     let hello = FnTool::new("hello", "Say hello", serde_json::json!({"type": "object"}), move |_, _, _| {
///         let cwd = cwd.clone();
///         async move { Ok(ToolResult::text(format!("Hello from {cwd}"))) }
///     });
///     Ok(vec![plain(hello)])
/// };
/// let tools = factory.create(&ToolApi::new("/work")).unwrap();
/// assert_eq!(tools[0].name(), "hello");
/// ```
pub trait CustomToolFactory: Send + Sync {
    /// The tools.
    fn create(&self, api: &ToolApi) -> Result<Vec<Arc<dyn CustomTool>>, FactoryError>;
}

impl<F, E> CustomToolFactory for F
where
    F: Fn(&ToolApi) -> Result<Vec<Arc<dyn CustomTool>>, E> + Send + Sync,
    E: Into<FactoryError>,
{
    fn create(&self, api: &ToolApi) -> Result<Vec<Arc<dyn CustomTool>>, FactoryError> {
        self(api).map_err(Into::into)
    }
}

/// A native factory with a name for error messages (`native:<name>`).
#[derive(Clone)]
pub struct NamedFactory {
    /// Shown as the tool's origin.
    pub name: String,
    /// The factory.
    pub factory: Arc<dyn CustomToolFactory>,
}

impl std::fmt::Debug for NamedFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NamedFactory").field("name", &self.name).finish()
    }
}

impl NamedFactory {
    /// `factory` called `name`.
    pub fn new(name: impl Into<String>, factory: impl CustomToolFactory + 'static) -> Self {
        NamedFactory {
            name: name.into(),
            factory: Arc::new(factory),
        }
    }
}

/// A custom tool that does not follow the session.
struct Plain<T>(T);

#[async_trait]
impl<T: AgentTool> AgentTool for Plain<T> {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn label(&self) -> &str {
        self.0.label()
    }
    fn description(&self) -> &str {
        self.0.description()
    }
    fn parameters(&self) -> &ToolParameters {
        self.0.parameters()
    }
    fn execution_mode(&self) -> Option<ToolExecutionMode> {
        self.0.execution_mode()
    }
    fn prepare_arguments(&self, args: Value) -> Value {
        self.0.prepare_arguments(args)
    }
    async fn execute(&self, call_id: &str, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        self.0.execute(call_id, args, ctx).await
    }
}

impl<T: AgentTool> CustomTool for Plain<T> {}

/// Wraps a tool that needs no session events as a [`CustomTool`].
pub fn plain(tool: impl AgentTool + 'static) -> Arc<dyn CustomTool> {
    Arc::new(Plain(tool))
}

/// Where a custom tool was loaded from, for messages: a path, or `native:<name>`.
pub fn origin(path: Option<&PathBuf>, fallback: &str) -> String {
    path.map_or_else(|| fallback.to_owned(), |p| p.display().to_string())
}
