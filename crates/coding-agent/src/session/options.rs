//! [`SessionOptions`] and [`SessionSettings`]: what a new [`super::AgentSession`] starts with.

use std::path::PathBuf;
use std::sync::Arc;

use pi_agent_core::{AgentMessage, Model, StreamFn, ThinkingLevel, ToolExecutionMode};

use super::registry::RegisteredTool;
use crate::config::AgentRetry;
use crate::resolve::DEFAULT_FORCE_LIMIT;

/// Session settings (the parts of pi's settings this session uses).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSettings {
    /// Register `ast_edit` (default true).
    pub ast_edit: bool,
    /// Register `ast_grep` (default true).
    pub ast_grep: bool,
    /// The loop's global tool execution mode (default parallel).
    pub tool_execution: ToolExecutionMode,
    /// Consecutive failed forced `resolve` calls before forcing stops (default 3).
    pub resolve_force_limit: u32,
    /// The shell of `bash` (pi's `shellPath`); default `/bin/bash`, else `bash`, else `sh`.
    pub shell: Option<PathBuf>,
    /// Text prepended to every bash command (pi's `shellCommandPrefix`).
    pub shell_command_prefix: Option<String>,
    /// The sandbox of `bash` and custom-tool processes (beyond pi; the `sandbox` setting).
    pub sandbox: Option<pi_tools::Sandbox>,
    /// The retry of a turn that failed with a transient error (`retry.enabled`, `maxRetries`,
    /// `baseDelayMs`).
    pub retry: AgentRetry,
    /// `read` resizes images as pi does (`images.autoResize`, default true).
    pub auto_resize_images: bool,
    /// No image reaches the model: each becomes "Image reading is disabled." (`images.blockImages`).
    pub block_images: bool,
}

impl Default for SessionSettings {
    fn default() -> Self {
        SessionSettings {
            ast_edit: true,
            ast_grep: true,
            tool_execution: ToolExecutionMode::Parallel,
            resolve_force_limit: DEFAULT_FORCE_LIMIT,
            shell: None,
            shell_command_prefix: None,
            sandbox: None,
            retry: AgentRetry::default(),
            auto_resize_images: true,
            block_images: false,
        }
    }
}

/// What a new [`AgentSession`](super::AgentSession) starts with.
#[derive(Clone)]
pub struct SessionOptions {
    /// Working directory of the tools.
    pub cwd: PathBuf,
    /// The model.
    pub model: Model,
    /// The model boundary; `None` uses [`pi_agent_core::default_stream_fn`].
    pub stream_fn: Option<Arc<dyn StreamFn>>,
    /// The system prompt.
    pub system_prompt: String,
    /// The thinking level.
    pub thinking_level: ThinkingLevel,
    /// Active tool names; `None` = pi's default set (`read`, `bash`, `edit`, `write`).
    pub tools: Option<Vec<String>>,
    /// Tools registered after the built-ins (a program embedding the session, custom tools).
    pub extra_tools: Vec<RegisteredTool>,
    /// A transcript to start from.
    pub messages: Vec<AgentMessage>,
    /// Settings.
    pub settings: SessionSettings,
}

impl SessionOptions {
    /// Options for `model` working in `cwd`, with pi's defaults.
    pub fn new(cwd: impl Into<PathBuf>, model: Model) -> Self {
        SessionOptions {
            cwd: cwd.into(),
            model,
            stream_fn: None,
            system_prompt: String::new(),
            thinking_level: ThinkingLevel::Off,
            tools: None,
            extra_tools: Vec::new(),
            messages: Vec::new(),
            settings: SessionSettings::default(),
        }
    }

    /// Sets the stream function.
    #[must_use]
    pub fn stream_fn(mut self, stream_fn: Arc<dyn StreamFn>) -> Self {
        self.stream_fn = Some(stream_fn);
        self
    }

    /// Sets the active tool names.
    #[must_use]
    pub fn tools<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.tools = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Registers one more tool.
    #[must_use]
    pub fn extra_tool(mut self, tool: RegisteredTool) -> Self {
        self.extra_tools.push(tool);
        self
    }

    /// Sets the system prompt.
    #[must_use]
    pub fn system_prompt(mut self, system_prompt: impl Into<String>) -> Self {
        self.system_prompt = system_prompt.into();
        self
    }

    /// Sets the settings.
    #[must_use]
    pub fn settings(mut self, settings: SessionSettings) -> Self {
        self.settings = settings;
        self
    }
}
