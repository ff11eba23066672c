//! The pi coding agent as a library: pi's session, its tools and the `resolve` runtime, for Rust
//! programs that drive a model through tools. It has no terminal or command-line code (the `pi`
//! binary is the `pi-cli` crate); with the `tui` feature, custom tools can draw themselves with
//! `pi-tui`'s styled lines.
//!
//! * [`SessionBuilder`] builds an [`AgentSession`] the way `pi` does — settings, model, API key,
//!   the active tools, custom tools, the user interface tools may ask ([`ToolUi`]), queue modes
//!   and the system prompt; [`choose_model`] picks the model from flags and settings.
//! * [`AgentSession`] wraps [`pi_agent_core::Agent`]: the tool registry and active set, the
//!   pending previews, and the loop hooks that force `resolve` while a preview is pending.
//!   [`App`] is a running session recorded to its session file (`pi-session-store`).
//! * [`compaction`]: pi's compaction of long sessions (context usage, cut points, summaries, the
//!   hook extensions use); [`App`] runs it on `/compact`, on threshold and on overflow.
//! * [`export`]: a session as one self-contained HTML file (`/export`, `pi --export`).
//! * [`resolve`]: the LIFO pending-action store, the hidden `resolve` tool, the tool-choice queue
//!   and the forcing policy. [`ast`]: the structural `ast_grep` and transactional `ast_edit`.
//! * [`custom_tools`]: tools users add (native factories, any language over stdio, pi's
//!   TypeScript tools on Node, MCP servers). [`config`]: where pi's files live, `settings.json`.
//! * [`packages`]: pi packages — installing them with npm and git where pi does, and the
//!   extensions, skills, prompt templates and themes they provide ([`packages::resources`]).
//! * [`convert_to_llm`]: what the model sees of the transcript; [`build_system_prompt`]: the
//!   system prompt. [`resources`]: pi's skills, prompt templates and `SYSTEM.md` /
//!   `APPEND_SYSTEM.md`, found where pi finds them ([`SessionBuilder::resources`]).
//!
//! A first program — build a session, add a native tool, run one prompt, print the events — is
//! `examples/embed.rs` (`cargo run -p pi-coding-agent --example embed`):
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use std::sync::Arc;
//! use pi_agent_core::faux::{FauxModel, faux_assistant_text};
//! use pi_coding_agent::{SessionBuilder, SessionEvent};
//!
//! let faux = FauxModel::new();
//! faux.append_responses([faux_assistant_text("Done.")]);
//! let built = SessionBuilder::new(std::env::temp_dir(), faux.model())
//!     .stream_fn(Arc::new(faux.clone()))
//!     .context_files(false)
//!     .build()
//!     .await
//!     .unwrap();
//! let subscription = built.session.subscribe(|event| {
//!     if let SessionEvent::Agent(event) = event {
//!         println!("{}", event.kind());
//!     }
//! });
//! built.session.prompt("Hello").await.unwrap();
//! subscription.unsubscribe();
//! # });
//! ```

mod app;
pub mod ast;
pub mod auth;
mod build_error;
mod builder;
pub mod compaction;
pub mod config;
pub mod custom_tools;
pub mod export;
pub mod extensions;
mod messages;
mod model_choice;
mod model_scope;
mod numbers;
mod output_limit;
pub mod packages;
mod paths;
mod prompt_recipe;
pub mod resolve;
pub mod resources;
mod session;
mod system_prompt;
mod ui;

pub use app::{
    App, AppError, ModelSelectSource, NavigateOptions, NavigateOutcome, SessionStartReason, SessionStats,
    ShutdownReason, UserMessageEntry, WarnFn, unless_cancelled,
};
pub use builder::{BuildError, BuiltSession, ExtensionSetup, SessionBuilder, ToolSelection};
pub use messages::{IMAGE_BLOCKED, bash_execution_text, block_images, convert_to_llm};
pub use model_choice::{
    DEFAULT_MODELS, DEFAULT_THINKING_LEVEL, ModelChoice, ModelError, ModelRequest, choose_model, split_thinking,
};
pub use model_scope::{ScopedModel, initial_scoped_model, resolve_model_scope};
pub use numbers::grouped;
pub use prompt_recipe::PromptRecipe;
pub use session::{
    AgentSession, DEFAULT_ACTIVE_TOOLS, RegisteredTool, SessionError, SessionEvent, SessionOptions, SessionSettings,
    SessionSubscription, ToolOrigin, ToolRegistry, is_retryable, supports_named_tool_choice,
};
pub use system_prompt::{
    CONTEXT_FILE_NAMES, ContextFile, DocsLocation, PromptParts, build_system_prompt, find_context_files, now_text,
    text_or_file, tool_guidelines, tool_snippet,
};
pub use ui::{NoUi, NotifyKind, ToolUi};
