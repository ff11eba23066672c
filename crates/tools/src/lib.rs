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

mod args;
pub mod atomic;
pub mod bash;
pub mod collector;
pub mod edit;
mod env;
pub mod find;
pub mod grep;
pub mod ls;
pub mod mutation_queue;
pub mod node;
pub mod path;
pub mod read;
mod registry;
pub mod truncate;
pub mod write;

pub use env::ToolEnv;
pub use registry::{ALL_TOOLS, DEFAULT_TOOLS, UnknownTool, create_tool, create_tools};
pub use truncate::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, GREP_MAX_LINE_LENGTH};
