//! pi's built-in tools.
//!
//! This crate will hold `read`, `write`, `edit`, `bash`, `grep`, `find` and `ls` with pi's exact
//! names, parameter schemas, descriptions, limits and error strings, each implementing
//! [`pi_agent_core::AgentTool`], plus the shared output truncation and the per-path file
//! mutation queue that `write`, `edit`, `ast_edit` and custom tools share.
//!
//! The output limits every tool shares are already fixed here:
//!
//! ```
//! assert_eq!(pi_tools::DEFAULT_MAX_LINES, 2000);
//! assert_eq!(pi_tools::DEFAULT_MAX_BYTES, 50 * 1024);
//! ```

/// Maximum number of lines a tool returns before it truncates its output (pi: 2000).
pub const DEFAULT_MAX_LINES: usize = 2000;

/// Maximum number of bytes a tool returns before it truncates its output (pi: 50KB).
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;
