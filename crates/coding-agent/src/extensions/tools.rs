//! Putting an extension's tool into the session, at load and when it registers one later.

use std::path::PathBuf;
use std::sync::Arc;

use pi_agent_core::AgentTool;

use crate::custom_tools::process::ProcessTool;
use crate::custom_tools::{CustomTool, CustomTools, LoadError, LoadedTool, ToolKind};
use crate::session::AgentSession;

/// The built-in tools an extension's tool may replace (pi's "Overriding Built-in Tools").
pub const OVERRIDABLE_TOOLS: [&str; 7] = ["read", "bash", "edit", "write", "grep", "find", "ls"];

/// Adds an extension's tool to `session`: in the place of the built-in of its name when it may
/// override one (with pi's notice), else as a custom tool. The names added, and what failed.
pub(crate) fn add_process_tool(session: &AgentSession, tool: ProcessTool, path: &str) -> (Vec<String>, Vec<LoadError>) {
    let name = tool.name().to_owned();
    let custom: Arc<dyn CustomTool> = Arc::new(tool);
    if OVERRIDABLE_TOOLS.contains(&name.as_str()) && session.override_builtin(custom.clone(), Some(PathBuf::from(path)))
    {
        session.ui().notify(
            &format!("Extension tool \"{name}\" overrides the built-in tool"),
            crate::NotifyKind::Warning,
        );
        return (Vec::new(), Vec::new());
    }
    let loaded = CustomTools {
        tools: vec![LoadedTool {
            tool: custom,
            origin: path.to_owned(),
            path: Some(PathBuf::from(path)),
            kind: ToolKind::Process,
        }],
        errors: Vec::new(),
    };
    session.add_custom_tools(&loaded)
}
