//! pi's output truncation lives in `pi-agent-core` (the loop caps every error text with it); the
//! tools use it from there, and the crate root re-exports it as before.

pub(crate) use pi_agent_core::{
    DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH, TruncatedBy, TruncationOptions, TruncationResult, format_size,
    truncate_head, truncate_line, truncate_tail,
};
