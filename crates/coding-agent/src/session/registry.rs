//! The session's tool registry and the rule that picks the active tools from it.

use std::path::PathBuf;
use std::sync::Arc;

use pi_agent_core::AgentTool;

use super::SessionError;
use crate::output_limit::limit_output;
use crate::resolve::RESOLVE_TOOL_NAME;

/// Where a registered tool comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolOrigin {
    /// One of pi's built-ins (`read` … `ls`, `ast_edit`, `ast_grep`, `resolve`).
    Builtin,
    /// Registered by the program embedding the session, or loaded from `path`.
    Custom {
        /// The file or directory the tool was loaded from, if any.
        path: Option<PathBuf>,
    },
}

/// One tool of the registry.
#[derive(Clone)]
pub struct RegisteredTool {
    /// The tool.
    pub tool: Arc<dyn AgentTool>,
    /// Hidden tools are never in the user's tool list; the session decides when they are active.
    pub hidden: bool,
    /// The tool can stage pending actions (so `resolve` must be available when it is active).
    pub deferrable: bool,
    /// Where it comes from.
    pub origin: ToolOrigin,
}

impl std::fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("name", &self.tool.name())
            .field("hidden", &self.hidden)
            .field("deferrable", &self.deferrable)
            .field("origin", &self.origin)
            .finish()
    }
}

impl RegisteredTool {
    /// A visible built-in tool that stages nothing.
    pub fn builtin(tool: Arc<dyn AgentTool>) -> Self {
        RegisteredTool {
            tool,
            hidden: false,
            deferrable: false,
            origin: ToolOrigin::Builtin,
        }
    }

    /// A visible custom tool, deferrable because custom tools may push pending actions. Its
    /// results are kept within pi's output limits (2000 lines / 50KB, the whole text saved to a
    /// temporary file; `docs/custom-tools.md`), which pi leaves to each tool.
    pub fn custom(tool: Arc<dyn AgentTool>, path: Option<PathBuf>) -> Self {
        RegisteredTool {
            tool: limit_output(tool),
            hidden: false,
            deferrable: true,
            origin: ToolOrigin::Custom { path },
        }
    }

    /// Marks the tool as able to stage pending actions.
    #[must_use]
    pub fn deferrable(mut self) -> Self {
        self.deferrable = true;
        self
    }

    /// Marks the tool as hidden.
    #[must_use]
    pub fn hidden(mut self) -> Self {
        self.hidden = true;
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        self.tool.name()
    }
}

/// Every tool the session knows, in registration order; names are unique.
#[derive(Debug, Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<RegisteredTool>,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        ToolRegistry::default()
    }

    /// Adds a tool; a name already taken fails with `Tool name "<name>" conflicts with existing tool`.
    pub fn register(&mut self, tool: RegisteredTool) -> Result<(), SessionError> {
        if self.get(tool.name()).is_some() {
            return Err(SessionError::NameConflict(tool.name().to_owned()));
        }
        self.tools.push(tool);
        Ok(())
    }

    /// Puts `tool` in the place of the built-in tool of the same name (an extension overriding
    /// `read`, pi's "Overriding Built-in Tools"); the built-in it replaced, or `None` (and
    /// nothing changes) when no built-in has that name.
    pub fn replace_builtin(&mut self, tool: RegisteredTool) -> Option<RegisteredTool> {
        let slot = self
            .tools
            .iter_mut()
            .find(|t| t.name() == tool.name() && t.origin == ToolOrigin::Builtin)?;
        Some(std::mem::replace(slot, tool))
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.iter().find(|t| t.name() == name)
    }

    /// Every tool, in registration order.
    pub fn iter(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.tools.iter()
    }

    /// The names of the tools a user may pick (hidden ones left out).
    pub fn visible_names(&self) -> Vec<String> {
        self.tools
            .iter()
            .filter(|t| !t.hidden)
            .map(|t| t.name().to_owned())
            .collect()
    }

    /// Whether any registered tool can stage pending actions.
    pub fn has_deferrable(&self) -> bool {
        self.tools.iter().any(|t| t.deferrable)
    }

    /// The active tools for the requested names, in the order given.
    ///
    /// `resolve` is never taken from the request: it is appended last when it is registered and
    /// some selected tool can stage pending actions, or when `standing` (a standing resolve
    /// handler is installed). A name the registry does not hold fails with `Unknown tool: <name>`.
    pub fn select_active(&self, requested: &[String], standing: bool) -> Result<Vec<Arc<dyn AgentTool>>, SessionError> {
        let mut active: Vec<&RegisteredTool> = Vec::new();
        for name in requested {
            if name == RESOLVE_TOOL_NAME || active.iter().any(|t| t.name() == name) {
                continue;
            }
            let tool = self.get(name).ok_or_else(|| SessionError::UnknownTool(name.clone()))?;
            active.push(tool);
        }
        let wants_resolve = standing || active.iter().any(|t| t.deferrable);
        if wants_resolve && let Some(resolve) = self.get(RESOLVE_TOOL_NAME) {
            active.push(resolve);
        }
        Ok(active.into_iter().map(|t| t.tool.clone()).collect())
    }
}
