//! [`McpError`]: why an MCP server's tools could not be loaded.

/// Why [`load_server`](super::load_server) failed; the loader reports it with the origin
/// `mcp:<name>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    /// The process could not be started, or did not complete `initialize` in time; the text names
    /// the server and quotes the last line it wrote to stderr, if any.
    #[error("{0}")]
    Start(String),
    /// `tools/list` failed.
    #[error("MCP server \"{server}\" failed to list its tools: {message}")]
    ListTools {
        /// The server's name in `mcpServers`.
        server: String,
        /// What went wrong.
        message: String,
    },
    /// `tools/list` did not finish within the start-up time limit.
    #[error("MCP server \"{server}\" did not list its tools within {seconds} s")]
    ListTimeout {
        /// The server's name in `mcpServers`.
        server: String,
        /// The limit, in seconds.
        seconds: u64,
    },
}
