//! MCP servers as a source of custom tools (`settings.json` `mcpServers`, `docs/custom-tools.md`).
//!
//! Each configured server is started as a child process speaking the Model Context Protocol over
//! its stdin and stdout ([`rmcp`]'s client with the legacy `initialize` handshake). pi lists the
//! server's tools once, following `nextCursor` through every page, and offers each one as a
//! [`CustomTool`]:
//!
//! * **name** `<server>_<tool>` made of `[A-Za-z0-9_-]` (anything else becomes `_`), at most 64
//!   characters ([`tool_name`]); two tools of one server that end up with the same name are told
//!   apart by a suffix (`_2`, `_3`, …) on the later ones;
//! * **label** the tool's `title`, else its annotations' `title`, else its MCP name;
//! * **parameters** its `inputSchema` (an empty or missing schema becomes `{"type":"object"}`);
//! * **execution mode** parallel when the tool is annotated `readOnlyHint: true`, sequential
//!   otherwise (a server's safety under concurrent calls is unknown).
//!
//! A call is a `tools/call` request: text content becomes text blocks, images image blocks,
//! embedded resources, resource links and audio a line of text, `structuredContent` the result's
//! `details`; `isError: true` makes the call fail with the server's text. Progress notifications
//! stream as partial results (best effort: rmcp handles notifications on tasks of their own, so
//! one that arrives together with the answer may come too late). An aborted call answers
//! `Operation aborted` at once and sends the server `notifications/cancelled`. A server that stops
//! during a call fails that call, naming the server and the tool, and is started again (and
//! initialized, without listing its tools again) by the next call. The `shutdown` session event
//! closes the connection once per server.
//!
//! Not supported: resources, prompts, sampling, elicitation, roots, tool-list change
//! notifications and the HTTP transports.

mod content;
mod error;
mod limits;
mod server;
mod tool;

use std::sync::Arc;

use super::{CustomTool, ToolApi};
use crate::config::McpServerConfig;

pub use error::McpError;
pub use limits::{MAX_TOOL_NAME_LENGTH, SHUTDOWN_TIMEOUT, STARTUP_TIMEOUT};
pub use tool::tool_name;

/// Starts the MCP server `name` described by `config`, lists its tools and returns one
/// [`CustomTool`] per tool; the tools share the server's process.
///
/// `config.command` is looked up on `PATH` when it is a bare name; a relative path with a `/`
/// is relative to the server's working directory, which is `config.cwd` (relative to the
/// session's working directory, `~` expanded) or else the session's working directory
/// ([`ToolApi::cwd`]). The process inherits pi's environment plus `config.env`; its stderr is
/// read, and its last line is quoted in error messages.
///
/// # Errors
///
/// An [`McpError`] naming the server when the process cannot be started, does not complete
/// `initialize` or list its tools within [`STARTUP_TIMEOUT`], or answers with an error; the
/// loader reports it with the origin `mcp:<name>`.
pub async fn load_server(
    name: &str,
    config: &McpServerConfig,
    api: &ToolApi,
) -> Result<Vec<Arc<dyn CustomTool>>, McpError> {
    let server = Arc::new(server::McpServer::new(name, config, api.cwd(), api.sandbox().cloned()));
    let link = server.connect().await.map_err(McpError::Start)?;
    let listed = match tokio::time::timeout(STARTUP_TIMEOUT, server::list_tools(&link)).await {
        Ok(Ok(listed)) => listed,
        Ok(Err(error)) => {
            server.shutdown().await;
            return Err(McpError::ListTools {
                server: name.to_owned(),
                message: error,
            });
        }
        Err(_) => {
            server.shutdown().await;
            return Err(McpError::ListTimeout {
                server: name.to_owned(),
                seconds: STARTUP_TIMEOUT.as_secs(),
            });
        }
    };
    Ok(tool::build_tools(&server, &listed))
}

#[cfg(test)]
mod fuzz;
