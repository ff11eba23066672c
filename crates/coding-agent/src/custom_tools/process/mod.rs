//! Process tools: tools in any language, run as a child process that speaks JSON-RPC 2.0 over
//! stdio, one message per line (`docs/custom-tools.md`, "Process tools: the protocol").
//!
//! One process per tool location, shared by every tool it defines; several calls may be in
//! flight at once (answers are matched by id). A process that exits, hangs past its time limit
//! or writes a line that is not JSON fails the calls in flight with an error result naming the
//! tool, is killed, and is started (and initialized) again on the next call — a tool never takes
//! the session down.
//!
//! [`load`] reads a `tool.json`; [`load_spec`] runs any command that speaks the protocol (the
//! Node host of pi's TypeScript tools is one).
//!
//! ```no_run
//! # async fn demo() -> Result<(), String> {
//! use std::path::Path;
//! use pi_coding_agent::custom_tools::ToolApi;
//! use pi_coding_agent::custom_tools::process::load;
//!
//! let dir = Path::new("examples/custom-tools/hello");
//! let tools = load(dir, &dir.join("tool.json"), &ToolApi::new(".")).await?;
//! assert_eq!(tools[0].name(), "hello");
//! # Ok(()) }
//! ```

mod connection;
mod handlers;
mod host;
mod manifest;
mod protocol;

pub(crate) use protocol::seconds;
mod tool;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub use manifest::parse_manifest;

use super::{CustomTool, ToolApi};

/// How long a process may take to answer `initialize`.
pub const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(10);

/// A call's time limit when the manifest sets none (`timeout`, in milliseconds, 300000).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// How long pi waits for the answer to `shutdown`, then for the process to exit once its stdin
/// is closed, before killing it.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// How to run a process that speaks the protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessSpec {
    /// The program: a path, or a bare name looked up on `PATH`.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Environment variables added to pi's.
    pub env: BTreeMap<String, String>,
    /// The directory it runs in.
    pub dir: PathBuf,
    /// How long a call (`execute`, `pendingAction.*`, `session`) may go unanswered before the
    /// process is killed.
    pub timeout: Duration,
    /// How load errors name the process, e.g. its command line (`python3 tool.py`).
    pub label: String,
}

/// Loads the process tool whose manifest is `manifest` (the `tool.json` in `dir`): starts the
/// process, initializes it, and returns the tools it defines. Errors name the manifest when it
/// cannot be read or is invalid, and the command otherwise.
pub async fn load(dir: &Path, manifest: &Path, api: &ToolApi) -> Result<Vec<Arc<dyn CustomTool>>, String> {
    let text = tokio::fs::read_to_string(manifest)
        .await
        .map_err(|error| format!("Cannot read {}: {error}", manifest.display()))?;
    load_spec(parse_manifest(dir, manifest, &text)?, api).await
}

/// Starts the process of `spec`, initializes it (within [`INITIALIZE_TIMEOUT`]) and returns the
/// tools it defines, all served by that one process.
pub async fn load_spec(spec: ProcessSpec, api: &ToolApi) -> Result<Vec<Arc<dyn CustomTool>>, String> {
    let (host, definitions) = host::Host::start(spec, api.clone()).await?;
    Ok(definitions
        .into_iter()
        .enumerate()
        .map(|(index, definition)| {
            Arc::new(tool::ProcessTool::new(host.clone(), index, definition)) as Arc<dyn CustomTool>
        })
        .collect())
}
