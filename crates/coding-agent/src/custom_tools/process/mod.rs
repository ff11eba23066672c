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
//! # async fn demo() -> Result<(), pi_coding_agent::custom_tools::process::ProcessError> {
//! use std::path::Path;
//! use pi_coding_agent::custom_tools::ToolApi;
//! use pi_coding_agent::custom_tools::process::load;
//!
//! let dir = Path::new("examples/custom-tools/hello");
//! let tools = load(dir, &dir.join("tool.json"), &ToolApi::new(".")).await?;
//! assert_eq!(tools[0].name(), "hello");
//! # Ok(()) }
//! ```

//!
//! The modules depend on each other one way only: `spec` and `protocol` (the wire format) use
//! none of the others; `manifest` uses `spec`; `connection` (the transport) uses `protocol` and
//! `spec`; `handlers` (pi's answers to the process) use `connection` and `protocol`; `host` puts
//! a connection and the handlers together; `tool` calls through the host.

mod connection;
mod context;
mod error;
mod handlers;
mod host;
mod manifest;
mod protocol;
mod spec;
mod tool;

pub(crate) use connection::{Abandon, CallError, Connection, Handler};
pub(crate) use context::{SentContext, execute_context};
pub(crate) use handlers::{notification as tool_notification, request as tool_request};
pub(crate) use host::{Host, Protocol};
pub(crate) use protocol::{
    Failure, METHOD_NOT_FOUND, RpcError, SERVER_ERROR, ToolDefinition, parse_definition, seconds,
};
pub(crate) use tool::ProcessTool;

use std::path::Path;
use std::sync::Arc;

pub use error::ProcessError;
pub use manifest::{ManifestError, parse_manifest};
pub use spec::{DEFAULT_TIMEOUT, INITIALIZE_TIMEOUT, ProcessSpec, SHUTDOWN_GRACE};

use super::{CustomTool, ToolApi};

/// Loads the process tool whose manifest is `manifest` (the `tool.json` in `dir`): starts the
/// process, initializes it, and returns the tools it defines. Errors name the manifest when it
/// cannot be read or is invalid, and the command otherwise.
pub async fn load(dir: &Path, manifest: &Path, api: &ToolApi) -> Result<Vec<Arc<dyn CustomTool>>, ProcessError> {
    let text = tokio::fs::read_to_string(manifest)
        .await
        .map_err(|source| ProcessError::ReadManifest {
            manifest: manifest.to_path_buf(),
            source,
        })?;
    load_spec(parse_manifest(dir, manifest, &text)?, api).await
}

/// Starts the process of `spec`, initializes it (within [`INITIALIZE_TIMEOUT`]) and returns the
/// tools it defines, all served by that one process.
pub async fn load_spec(spec: ProcessSpec, api: &ToolApi) -> Result<Vec<Arc<dyn CustomTool>>, ProcessError> {
    let (host, definitions) = host::Host::start(spec, api.clone()).await?;
    Ok(definitions
        .into_iter()
        .enumerate()
        .map(|(index, definition)| {
            Arc::new(tool::ProcessTool::new(host.clone(), index, definition)) as Arc<dyn CustomTool>
        })
        .collect())
}
