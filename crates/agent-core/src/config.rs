//! Configuration of one loop run ([`AgentLoopConfig`]) and the context it starts from
//! ([`AgentContext`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::hooks::{AfterToolCallHook, BeforeToolCallHook, MessageEndHook};
use crate::message::{AgentMessage, AssistantMessage, ToolResultMessage};
use crate::model::{Model, ProviderHooks, StreamFn, ThinkingLevel, ToolChoice};
use crate::tool::{AgentTool, ToolExecutionMode};

/// The snapshot a run starts from: system prompt, transcript and tools.
#[derive(Clone, Default)]
pub struct AgentContext {
    /// The system prompt.
    pub system_prompt: String,
    /// The transcript, oldest first.
    pub messages: Vec<AgentMessage>,
    /// The tools the model may call.
    pub tools: Vec<Arc<dyn AgentTool>>,
}

impl std::fmt::Debug for AgentContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentContext")
            .field("system_prompt", &self.system_prompt)
            .field("messages", &self.messages)
            .field("tools", &self.tools.iter().map(|t| t.name()).collect::<Vec<_>>())
            .finish()
    }
}

/// Maps the transcript to what the model sees (pi's `convertToLlm`); called once per model call.
pub type ConvertToLlmFn = Arc<dyn Fn(&[AgentMessage]) -> Vec<AgentMessage> + Send + Sync>;

/// Resolves the API key for a provider before every model call (pi's `getApiKey`).
pub type GetApiKeyFn = Arc<dyn Fn(&str) -> BoxFuture<'static, Option<String>> + Send + Sync>;

/// Polls queued messages (steering or follow-up).
pub type MessageSourceFn = Arc<dyn Fn() -> Vec<AgentMessage> + Send + Sync>;

/// Chooses the tool choice of the next model call from the transcript.
pub type ToolChoiceFn = Arc<dyn Fn(&[AgentMessage]) -> Option<ToolChoice> + Send + Sync>;

/// Decides after a turn whether the run stops (pi's `shouldStopAfterTurn`).
pub type ShouldStopAfterTurnFn = Arc<dyn Fn(&TurnContext<'_>) -> bool + Send + Sync>;

/// May replace context, model or thinking level after a turn (pi's `prepareNextTurn`).
pub type PrepareNextTurnFn = Arc<dyn Fn(&TurnContext<'_>) -> Option<NextTurn> + Send + Sync>;

/// Prunes or injects messages before `convert_to_llm` (pi's `transformContext`).
#[async_trait]
pub trait TransformContext: Send + Sync {
    /// Returns the messages the model call should use.
    async fn transform(&self, messages: &[AgentMessage], cancel: &CancellationToken) -> Vec<AgentMessage>;
}

/// What the after-turn callbacks see.
#[derive(Debug, Clone, Copy)]
pub struct TurnContext<'a> {
    /// The turn's assistant message.
    pub message: &'a AssistantMessage,
    /// The turn's tool results, in source order.
    pub tool_results: &'a [ToolResultMessage],
    /// The whole working transcript.
    pub messages: &'a [AgentMessage],
    /// The system prompt in use.
    pub system_prompt: &'a str,
}

/// Replacements returned by [`PrepareNextTurnFn`]; `None` keeps the current value.
#[derive(Default, Clone)]
pub struct NextTurn {
    /// New system prompt.
    pub system_prompt: Option<String>,
    /// New transcript.
    pub messages: Option<Vec<AgentMessage>>,
    /// New tool list.
    pub tools: Option<Vec<Arc<dyn AgentTool>>>,
    /// New model.
    pub model: Option<Model>,
    /// New thinking level (`Off` clears reasoning).
    pub thinking_level: Option<ThinkingLevel>,
}

/// Everything a loop run needs besides its context (pi's `AgentLoopConfig`).
#[derive(Clone)]
pub struct AgentLoopConfig {
    /// The model to call.
    pub model: Model,
    /// The model boundary; `None` uses [`crate::default_stream_fn`].
    pub stream_fn: Option<Arc<dyn StreamFn>>,
    /// Transcript → model messages; `None` passes the transcript as is (providers skip custom
    /// roles).
    pub convert_to_llm: Option<ConvertToLlmFn>,
    /// Runs before `convert_to_llm`.
    pub transform_context: Option<Arc<dyn TransformContext>>,
    /// Fallback API key.
    pub api_key: Option<String>,
    /// Per-call API key lookup; falls back to `api_key` when it returns `None`.
    pub get_api_key: Option<GetApiKeyFn>,
    /// Steering messages, polled at the start and after every turn.
    pub get_steering_messages: Option<MessageSourceFn>,
    /// Follow-up messages, polled when the run would otherwise stop.
    pub get_follow_up_messages: Option<MessageSourceFn>,
    /// Tool choice for each model call (the session forces `resolve` through this).
    pub get_tool_choice: Option<ToolChoiceFn>,
    /// Global tool execution mode (default parallel).
    pub tool_execution: ToolExecutionMode,
    /// Hook before every prepared call.
    pub before_tool_call: Option<Arc<dyn BeforeToolCallHook>>,
    /// Hook after every executed call.
    pub after_tool_call: Option<Arc<dyn AfterToolCallHook>>,
    /// Hook before every `message_end`; may replace the message.
    pub message_end: Option<Arc<dyn MessageEndHook>>,
    /// Hooks around every provider request (payload, response).
    pub provider_hooks: ProviderHooks,
    /// Stop after a turn.
    pub should_stop_after_turn: Option<ShouldStopAfterTurnFn>,
    /// Replace context/model/thinking after a turn.
    pub prepare_next_turn: Option<PrepareNextTurnFn>,
    /// Reasoning level passed to the model (`None` = off).
    pub reasoning: Option<ThinkingLevel>,
    /// Session id passed to the model.
    pub session_id: Option<String>,
    /// Maximum output tokens.
    pub max_tokens: Option<u64>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Extra HTTP headers.
    pub headers: BTreeMap<String, String>,
}

impl AgentLoopConfig {
    /// A config for `model` with pi's defaults: parallel tools, no hooks, no queues.
    pub fn new(model: Model) -> Self {
        AgentLoopConfig {
            model,
            stream_fn: None,
            convert_to_llm: None,
            transform_context: None,
            api_key: None,
            get_api_key: None,
            get_steering_messages: None,
            get_follow_up_messages: None,
            get_tool_choice: None,
            tool_execution: ToolExecutionMode::Parallel,
            before_tool_call: None,
            after_tool_call: None,
            message_end: None,
            provider_hooks: ProviderHooks::default(),
            should_stop_after_turn: None,
            prepare_next_turn: None,
            reasoning: None,
            session_id: None,
            max_tokens: None,
            temperature: None,
            headers: BTreeMap::new(),
        }
    }

    /// Sets the stream function.
    #[must_use]
    pub fn with_stream_fn(mut self, stream_fn: Arc<dyn StreamFn>) -> Self {
        self.stream_fn = Some(stream_fn);
        self
    }
}
