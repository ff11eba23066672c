//! pi's built-in tools: `read`, `write`, `edit`, `bash`, `grep`, `find` and `ls`.
//!
//! Each tool implements [`pi_agent_core::TypedTool`] (and so [`pi_agent_core::AgentTool`]) with
//! pi's exact name, parameter schema, description, limits, output format and error strings,
//! because models are trained on them; its arguments arrive as a typed parameter struct
//! (`read::ReadParams`, `bash::BashParams`, …) read as leniently as pi reads them.
//! Beyond pi: `grep`, `find` and `ls` need no external programs (they are built on the ripgrep
//! libraries), and `write` / `edit` replace files atomically and share a per-file
//! [`mutation_queue`] with every other mutating tool.
//!
//! ```
//! let env = pi_tools::ToolEnv::new(std::env::temp_dir());
//! let tools = pi_tools::create_tools(pi_tools::DEFAULT_TOOLS, &env).unwrap();
//! let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
//! assert_eq!(names, ["read", "bash", "edit", "write"]);
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_agent_core::{AgentTool, ToolError};
use serde::de::DeserializeOwned;
use serde_json::Value;

pub mod atomic;
pub mod bash;
pub mod collector;
pub mod edit;
pub mod find;
pub mod grep;
pub mod ls;
pub mod mutation_queue;
pub mod node;
pub mod path;
pub mod read;
pub mod truncate;
pub mod write;

pub use truncate::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, GREP_MAX_LINE_LENGTH};

/// Every built-in tool, in pi's order.
pub const ALL_TOOLS: [&str; 7] = ["read", "bash", "edit", "write", "grep", "find", "ls"];

/// The tools active when the user selects none (pi: read, bash, edit, write).
pub const DEFAULT_TOOLS: [&str; 4] = ["read", "bash", "edit", "write"];

/// Where and how the tools run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolEnv {
    /// The session's working directory; relative paths resolve against it.
    pub cwd: PathBuf,
    /// Shell for `bash` (pi's `shellPath` setting); default `/bin/bash`, else `bash`, else `sh`.
    pub shell: Option<PathBuf>,
    /// Text prepended (with a newline) to every bash command (pi's `shellCommandPrefix`).
    pub shell_command_prefix: Option<String>,
    /// Extra environment for `bash`, e.g. `PI_SESSION_ID`, `PI_MODEL`.
    pub env: BTreeMap<String, String>,
}

impl ToolEnv {
    /// Tools working in `cwd` with default settings.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        ToolEnv {
            cwd: cwd.into(),
            shell: None,
            shell_command_prefix: None,
            env: BTreeMap::new(),
        }
    }

    /// Resolves a model-supplied path against the working directory.
    pub fn resolve(&self, input: &str) -> PathBuf {
        path::resolve_path(&self.cwd, input)
    }

    /// The working directory.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }
}

/// Reads the arguments of a tool whose one strict field is the one `error` is about (every other
/// field is lenient): any failure — also arguments that are no JSON object — is that error.
pub(crate) fn parse_or<T: DeserializeOwned>(args: Value, error: &str) -> Result<T, ToolError> {
    match args {
        Value::Object(_) => serde_json::from_value(args).map_err(|_| ToolError::new(error)),
        _ => Err(ToolError::new(error)),
    }
}

/// A tool name that is not one of [`ALL_TOOLS`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Unknown tool: {0}")]
pub struct UnknownTool(pub String);

/// Creates the built-in tool called `name`.
pub fn create_tool(name: &str, env: &ToolEnv) -> Result<Arc<dyn AgentTool>, UnknownTool> {
    let env = env.clone();
    let tool: Arc<dyn AgentTool> = match name {
        "read" => Arc::new(read::ReadTool::new(env)),
        "bash" => Arc::new(bash::BashTool::new(env)),
        "edit" => Arc::new(edit::EditTool::new(env)),
        "write" => Arc::new(write::WriteTool::new(env)),
        "grep" => Arc::new(grep::GrepTool::new(env)),
        "find" => Arc::new(find::FindTool::new(env)),
        "ls" => Arc::new(ls::LsTool::new(env)),
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
