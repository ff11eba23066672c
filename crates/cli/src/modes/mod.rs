//! How a run talks to its caller: the interactive terminal interface, print and JSON modes, RPC mode,
//! the line-mode session for dumb terminals, the plain-text event renderer.

pub mod interactive;
pub mod json;
pub(crate) mod line;
pub mod plain_text;
pub mod print;
pub mod rpc;
pub(crate) mod stderr_ui;
