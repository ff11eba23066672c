//! The built-in tools by name: [`ALL_TOOLS`], [`DEFAULT_TOOLS`], [`create_tool`].

use std::sync::Arc;

use pi_agent_core::AgentTool;

use crate::bash::BashTool;
use crate::edit::EditTool;
use crate::env::ToolEnv;
use crate::find::FindTool;
use crate::grep::GrepTool;
use crate::ls::LsTool;
use crate::read::ReadTool;
use crate::write::WriteTool;

/// Every built-in tool, in pi's order.
pub const ALL_TOOLS: [&str; 7] = ["read", "bash", "edit", "write", "grep", "find", "ls"];

/// The tools active when the user selects none (pi: read, bash, edit, write).
pub const DEFAULT_TOOLS: [&str; 4] = ["read", "bash", "edit", "write"];

/// A tool name that is not one of [`ALL_TOOLS`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Unknown tool: {0}")]
pub struct UnknownTool(pub String);

/// Creates the built-in tool called `name`.
pub fn create_tool(name: &str, env: &ToolEnv) -> Result<Arc<dyn AgentTool>, UnknownTool> {
    let env = env.clone();
    let tool: Arc<dyn AgentTool> = match name {
        "read" => Arc::new(ReadTool::new(env)),
        "bash" => Arc::new(BashTool::new(env)),
        "edit" => Arc::new(EditTool::new(env)),
        "write" => Arc::new(WriteTool::new(env)),
        "grep" => Arc::new(GrepTool::new(env)),
        "find" => Arc::new(FindTool::new(env)),
        "ls" => Arc::new(LsTool::new(env)),
        other => return Err(UnknownTool(other.to_owned())),
    };
    Ok(tool)
}

/// Creates the named built-in tools, in the order given.
pub fn create_tools<'a>(
    names: impl IntoIterator<Item = &'a str>,
    env: &ToolEnv,
) -> Result<Vec<Arc<dyn AgentTool>>, UnknownTool> {
    names.into_iter().map(|name| create_tool(name, env)).collect()
}
