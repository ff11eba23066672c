//! pi's built-in tools: `read`, `write`, `edit`, `bash`, `grep`, `find` and `ls`.
//!
//! Each tool implements [`pi_agent_core::TypedTool`] (and so [`pi_agent_core::AgentTool`]) with
//! pi's exact name, parameter schema, description, limits, output format and error strings,
//! because models are trained on them; its arguments arrive as a typed parameter struct
//! ([`ReadParams`], [`BashParams`], …) read as leniently as pi reads them.
//! Beyond pi: `grep`, `find` and `ls` need no external programs (they are built on the ripgrep
//! libraries), and `write` / `edit` replace files atomically and share a per-file
//! [`mutation_queue`] with every other mutating tool.
//!
//! * The tools by name: [`create_tool`], [`create_tools`], [`ALL_TOOLS`], [`DEFAULT_TOOLS`], all
//!   working in a [`ToolEnv`]; or each tool's own type ([`ReadTool`], [`BashTool`], …).
//! * The pieces other tools reuse: [`run_command`] (what `bash` runs), [`apply_edits`] (how
//!   `edit` matches), pi's truncation ([`truncate_head`], [`truncate_tail`], [`format_size`], …),
//!   [`sniff_image`], and [`FirstByPath`] for parallel searches with a stable result.
//! * Beyond pi: the opt-in [`Sandbox`] (Landlock and seccomp on Linux) that `bash` — and, through
//!   pi-coding-agent, custom-tool processes — start in when [`ToolEnv::sandbox`] is set.
//! * Modules: [`path`] (how model-supplied paths resolve and display), [`atomic`] (atomic
//!   replacement of one or many files), [`mutation_queue`] (per-file locking) and [`images`]
//!   (pi's image resizing for the model, used by `read`, `@file` arguments and the clipboard).
//!
//! ```
//! let env = pi_tools::ToolEnv::new(std::env::temp_dir());
//! let tools = pi_tools::create_tools(pi_tools::DEFAULT_TOOLS, &env).unwrap();
//! let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
//! assert_eq!(names, ["read", "bash", "edit", "write"]);
//! ```

mod args;
pub mod atomic;
mod bash;
mod collation;
mod collector;
mod edit;
mod env;
mod find;
mod grep;
pub mod images;
mod ls;
pub mod mutation_queue;
mod node;
pub mod path;
mod read;
mod registry;
mod sandbox;
mod truncate;
mod write;

pub use bash::{BashParams, BashTool, CommandError, CommandOutput, run_command};
pub use collation::{CaseTieBreak, CollationKey, collation_key};
pub use collector::FirstByPath;
pub use edit::{Edit, EditError, EditParams, EditTool, apply_edits, normalize_for_fuzzy_match};
pub use env::ToolEnv;
pub use find::{FindParams, FindTool};
pub use grep::{GrepParams, GrepTool};
pub use ls::{LsParams, LsTool};
pub use pi_agent_core::{
    DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, GREP_MAX_LINE_LENGTH, TruncatedBy, TruncationOptions, TruncationResult,
    format_size, truncate_head, truncate_line, truncate_tail,
};
pub use read::{ReadParams, ReadTool, sniff_image};
pub use registry::{ALL_TOOLS, DEFAULT_TOOLS, UnknownTool, create_tool, create_tools};
pub use sandbox::{Sandbox, SandboxError};
pub use write::{WriteParams, WriteTool};
