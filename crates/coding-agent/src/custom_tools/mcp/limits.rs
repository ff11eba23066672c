//! The time and length limits of MCP servers and their tools.

use std::time::Duration;

/// How long a server may take to answer `initialize`, and then to list its tools.
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// How long closing a server at shutdown may take before its process is killed.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// The longest tool name pi gives an MCP tool (the limit of the model APIs).
pub const MAX_TOOL_NAME_LENGTH: usize = 64;
