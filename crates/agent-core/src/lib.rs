//! The pi agent loop.
//!
//! `pi-agent-core` drives a language model through tools the way pi's `@earendil-works/pi-agent-core`
//! does — same messages, same events, same dispatch rules, same error texts — so that sessions,
//! RPC payloads and a model's habits carry over.
//!
//! * Messages: [`AgentMessage`] and its content blocks, with pi's JSON shapes.
//! * The model boundary: the [`StreamFn`] trait over a [`Model`] and an [`LlmContext`];
//!   [`faux`]: a scripted model for tests, benchmarks and demos.
//! * Tools: the [`AgentTool`] trait, typed tools ([`TypedTool`], [`Lenient`] parameters),
//!   [`ToolExecutionMode`]; [`ToolParameters`]: argument validation with coercion.
//! * The per-file mutation queue ([`MutationTicket`], [`lock_files`]): the files a call declares
//!   ([`AgentTool::mutated_files`]) are reserved in source order before a parallel batch runs.
//! * The loop: [`run_agent_loop`] / [`agent_loop`]; its events: [`AgentEvent`]; hooks around
//!   every tool call: [`BeforeToolCallHook`], [`AfterToolCallHook`].
//! * The stateful [`Agent`] with steering and follow-up [`MessageQueue`]s.
//! * pi's output limits: truncation ([`truncate_head`], [`truncate_tail`], [`format_size`], …), which
//!   the tools use, and [`cap_error_result`], which the loop applies to every error the model reads.
//!
//! ```
//! use pi_agent_core::faux::{FauxModel, faux_assistant_message, faux_assistant_text, faux_tool_call};
//! use pi_agent_core::{Agent, AgentOptions, FnTool, ToolResult};
//! use serde_json::json;
//!
//! # tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async {
//! let faux = FauxModel::new();
//! faux.set_responses([
//!     faux_assistant_message(vec![faux_tool_call("call-1", "greet", json!({"name": "pi"}))]),
//!     faux_assistant_text("done"),
//! ]);
//! let greet = FnTool::new(
//!     "greet",
//!     "Greets someone",
//!     json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
//!     |_id, args, _ctx| async move { Ok(ToolResult::text(format!("hello {}", args["name"].as_str().unwrap_or("")))) },
//! );
//! let agent = Agent::new(AgentOptions::new(faux.model()).stream_fn(faux.stream_fn()).tools(vec![greet.into_arc()]));
//! agent.prompt("greet pi").await.unwrap();
//! let result = agent.messages()[2].as_tool_result().unwrap().text();
//! assert_eq!(result, "hello pi");
//! # });
//! ```

mod agent;
mod agent_loop;
mod config;
mod dispatch;
mod event;
pub mod faux;
mod hooks;
mod lenient;
mod limit;
mod message;
mod model;
mod mutation;
mod names;
mod queue;
mod sync;
mod tool;
mod truncate;
mod validate;

pub use agent::{Agent, AgentError, AgentOptions, AgentState, PromptInput, Subscription};
pub use agent_loop::{
    AgentEventStream, AgentLoopError, agent_loop, agent_loop_continue, run_agent_loop, run_agent_loop_continue,
};
pub use config::{
    AgentContext, AgentLoopConfig, ConvertToLlmFn, GetApiKeyFn, MessageSourceFn, NextTurn, PrepareNextTurnFn,
    ShouldStopAfterTurnFn, ToolChoiceFn, TransformContext, TurnContext,
};
pub use dispatch::panic_text;
pub use event::{AgentEvent, EventSink};
pub use hooks::{
    AfterToolCallContext, AfterToolCallHook, AfterToolCallResult, BeforeToolCallContext, BeforeToolCallHook,
    BeforeToolCallResult, MessageEndHook,
};
pub use lenient::Lenient;
pub use limit::{
    ContentCut, ERROR_MAX_LINE_CHARS, NOTICE_ROOM_BYTES, NOTICE_ROOM_LINES, append_text, cap_error_result, cut_head,
    cut_text_content, head_notice,
};
pub use message::{
    AgentMessage, AssistantMessage, ContentBlock, Cost, CustomMessage, ImageContent, StopReason, TextContent,
    ThinkingContent, ToolCall, ToolResultMessage, Usage, UserContent, UserMessage, now_ms,
};
pub use model::{
    AssistantMessageEvent, AssistantMessageStream, LlmContext, Model, ModelCost, PayloadHook, ProviderHooks,
    ResponseHook, StreamFn, StreamOptions, ThinkingLevel, ToolChoice, default_stream_fn, set_default_stream_fn,
};
pub use mutation::{
    HeldMutations, MutationGuard, MutationTicket, carry_held_mutations, lock_files, mutation_key, mutation_keys,
};
pub use names::UnknownName;
pub use queue::{MessageQueue, QueueMode};
pub use sync::lock;
pub use tool::{
    AgentTool, FnTool, OPERATION_ABORTED, ToolContext, ToolError, ToolExecutionMode, ToolResult, ToolUpdateSink,
    TypedTool, typed_tool,
};
pub use truncate::{
    DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, GREP_MAX_LINE_LENGTH, TruncatedBy, TruncationOptions, TruncationResult,
    format_size, truncate_head, truncate_line, truncate_tail,
};
pub use validate::{ArgumentProblem, ToolParameters, ValidationError};
