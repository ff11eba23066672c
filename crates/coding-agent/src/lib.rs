//! The pi coding agent.
//!
//! * [`session`]: [`session::AgentSession`] around [`pi_agent_core::Agent`] — the tool registry
//!   and active set, the pending-action store, the tool-choice queue and the loop hooks that force
//!   `resolve` while a preview is pending.
//! * [`pending`]: the LIFO [`pending::PendingActionStore`]; [`resolve`]: the hidden `resolve`
//!   tool and its runtime; [`tool_choice_queue`]: per-call tool-choice directives.
//! * [`ast`]: the structural `ast_grep` and transactional `ast_edit` tools.
//! * [`messages`]: what the model sees of the transcript; [`system_prompt`]: the system prompt.
//! * [`config`]: where pi's files live and `settings.json`; [`session_store`]: sessions on disk
//!   (pi's JSONL v3 tree).
//! * [`ui`]: what a tool may ask the user; [`custom_tools`]: tools users add (native, any language
//!   over stdio, pi's TypeScript tools, MCP servers).
//! * [`cli`]: the `pi` command; [`modes`]: print, JSON and line-mode interactive output;
//!   [`demo`]: the offline demo.

mod app;
pub mod ast;
mod builder;
pub mod config;
pub mod custom_tools;
mod messages;
mod model_choice;
pub mod resolve;
mod session;
mod system_prompt;
mod ui;

pub use app::{App, AppError, SessionStats, UserMessageEntry, WarnFn};
pub use builder::{BuildError, BuiltSession, SessionBuilder, ToolSelection};
pub use messages::{bash_execution_text, convert_to_llm};
pub use model_choice::{DEFAULT_MODELS, ModelChoice, ModelError, ModelRequest, choose_model, split_thinking};
pub use session::{
    AgentSession, DEFAULT_ACTIVE_TOOLS, RegisteredTool, SessionError, SessionEvent, SessionOptions, SessionSettings,
    SessionSubscription, ToolOrigin, ToolRegistry, supports_named_tool_choice,
};
pub use system_prompt::{
    CONTEXT_FILE_NAMES, ContextFile, PromptParts, build_system_prompt, find_context_files, now_text, text_or_file,
    tool_snippet,
};
pub use ui::{NoUi, NotifyKind, ToolUi};
