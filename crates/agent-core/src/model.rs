//! The model boundary: model descriptions, the request context, and the streaming trait.
//!
//! A model is reached through one trait, [`StreamFn`]: given a [`Model`], an [`LlmContext`] and
//! [`StreamOptions`], it returns a stream of [`AssistantMessageEvent`]s. The stream never fails:
//! request, network and model errors are encoded as a final [`AssistantMessageEvent::Error`]
//! whose message has `stopReason` `error` or `aborted` and an `errorMessage`.
//!
//! Provider crates implement [`StreamFn`] over HTTP; [`crate::faux::FauxModel`] implements it
//! from a script for tests, benchmarks and the offline demo.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::message::{AgentMessage, AssistantMessage, StopReason, ToolCall};
use crate::tool::AgentTool;

/// Price of a model in dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelCost {
    /// Input tokens.
    #[serde(serialize_with = "crate::message::js_number")]
    pub input: f64,
    /// Output tokens.
    #[serde(serialize_with = "crate::message::js_number")]
    pub output: f64,
    /// Cache reads.
    #[serde(serialize_with = "crate::message::js_number")]
    pub cache_read: f64,
    /// Cache writes.
    #[serde(serialize_with = "crate::message::js_number")]
    pub cache_write: f64,
}

/// A model and how to reach it, in the shape of pi's `Model` (and `models.json` entries).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    /// Model id sent to the provider.
    pub id: String,
    /// Human-readable name.
    pub name: String,
    /// Wire API (`openai-completions`, `anthropic-messages`, `openai-responses`, `faux`, …).
    pub api: String,
    /// Provider name.
    pub provider: String,
    /// Base URL of the API.
    pub base_url: String,
    /// Whether the model can reason (thinking levels apply).
    pub reasoning: bool,
    /// Accepted input kinds: `text`, `image`.
    pub input: Vec<String>,
    /// Prices per million tokens.
    pub cost: ModelCost,
    /// Context window in tokens.
    pub context_window: u64,
    /// Maximum output tokens.
    pub max_tokens: u64,
    /// Extra HTTP headers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<BTreeMap<String, String>>,
    /// Per-API compatibility overrides (pi's `compat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compat: Option<Value>,
    /// pi's `thinkingLevelMap`: level name → the value sent for it (`Some`), or `None` (JSON
    /// `null`) for a level the model does not support. A level that is not a key is supported and
    /// sent by its own name, except `xhigh`, which only a model whose map names it supports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_level_map: Option<BTreeMap<String, Option<String>>>,
}

impl Model {
    /// The placeholder model a fresh [`crate::Agent`] starts with (pi's `"unknown"`).
    pub fn unknown() -> Self {
        Model {
            id: "unknown".into(),
            name: "unknown".into(),
            api: "unknown".into(),
            provider: "unknown".into(),
            base_url: String::new(),
            reasoning: false,
            input: vec!["text".into()],
            cost: ModelCost::default(),
            context_window: 0,
            max_tokens: 0,
            headers: None,
            compat: None,
            thinking_level_map: None,
        }
    }

    /// The thinking levels this model offers, in order (pi's `getSupportedThinkingLevels`):
    /// `off` only for a model that cannot reason; otherwise `off` to `high`, plus `xhigh` when the
    /// model's `thinkingLevelMap` names it, less the levels the map sets to `null`.
    ///
    /// ```
    /// use pi_agent_core::{Model, ThinkingLevel};
    /// let mut model = Model::unknown();
    /// assert_eq!(model.thinking_levels(), [ThinkingLevel::Off]);
    /// model.reasoning = true;
    /// assert_eq!(model.thinking_levels().last(), Some(&ThinkingLevel::High));
    /// ```
    pub fn thinking_levels(&self) -> Vec<ThinkingLevel> {
        if !self.reasoning {
            return vec![ThinkingLevel::Off];
        }
        ThinkingLevel::PI_LEVELS
            .into_iter()
            .filter(|level| {
                let mapped = self.thinking_level_map.as_ref().and_then(|map| map.get(level.name()));
                match (level, mapped) {
                    (_, Some(None)) => false,
                    (ThinkingLevel::Xhigh, mapped) => mapped.is_some(),
                    _ => true,
                }
            })
            .collect()
    }

    /// `level` if this model offers it, else the nearest level above it that it offers, else the
    /// nearest below (pi's `clampThinkingLevel`; `max`, which pi does not have, counts as above
    /// `xhigh`).
    ///
    /// ```
    /// use pi_agent_core::{Model, ThinkingLevel};
    /// let mut model = Model::unknown();
    /// model.reasoning = true;
    /// assert_eq!(model.clamp_thinking_level(ThinkingLevel::Xhigh), ThinkingLevel::High);
    /// model.reasoning = false;
    /// assert_eq!(model.clamp_thinking_level(ThinkingLevel::Medium), ThinkingLevel::Off);
    /// ```
    pub fn clamp_thinking_level(&self, level: ThinkingLevel) -> ThinkingLevel {
        let offered = self.thinking_levels();
        if offered.contains(&level) {
            return level;
        }
        let order = ThinkingLevel::PI_LEVELS;
        let wanted = order.iter().position(|l| *l == level).unwrap_or(order.len());
        order[wanted.min(order.len())..]
            .iter()
            .chain(order[..wanted.min(order.len())].iter().rev())
            .find(|l| offered.contains(l))
            .copied()
            .unwrap_or(ThinkingLevel::Off)
    }

    /// The value sent for `level`: the `thinkingLevelMap` entry if there is one, else the
    /// level's name.
    pub fn thinking_level_value(&self, level: ThinkingLevel) -> String {
        self.thinking_level_map
            .as_ref()
            .and_then(|map| map.get(level.name()))
            .and_then(Option::clone)
            .unwrap_or_else(|| level.name().to_owned())
    }
}

/// How hard a reasoning model thinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingLevel {
    /// No reasoning.
    #[default]
    Off,
    /// Minimal reasoning.
    Minimal,
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
    /// Extra high (some models only).
    Xhigh,
    /// Maximum (some models only).
    Max,
}

impl ThinkingLevel {
    /// pi's levels, in order (pi has no `max`).
    pub const PI_LEVELS: [ThinkingLevel; 6] = [
        ThinkingLevel::Off,
        ThinkingLevel::Minimal,
        ThinkingLevel::Low,
        ThinkingLevel::Medium,
        ThinkingLevel::High,
        ThinkingLevel::Xhigh,
    ];

    /// The level's name (`off`, `minimal`, …, `xhigh`, `max`).
    pub fn name(self) -> &'static str {
        match self {
            ThinkingLevel::Off => "off",
            ThinkingLevel::Minimal => "minimal",
            ThinkingLevel::Low => "low",
            ThinkingLevel::Medium => "medium",
            ThinkingLevel::High => "high",
            ThinkingLevel::Xhigh => "xhigh",
            ThinkingLevel::Max => "max",
        }
    }
}

crate::names::impl_serde_names!(
    ThinkingLevel,
    "thinking level",
    [Off, Minimal, Low, Medium, High, Xhigh, Max]
);

/// Which tool, if any, the model must call.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "type", content = "name")]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// No tool calls.
    None,
    /// Some tool call is required.
    Required,
    /// This named tool must be called (Anthropic `{type:"tool",name}`, OpenAI
    /// `{type:"function",name}`).
    Tool(String),
}

/// Options of one model request.
#[derive(Debug, Clone, Default)]
pub struct StreamOptions {
    /// API key, resolved before every call.
    pub api_key: Option<String>,
    /// Reasoning level; `None` when thinking is off.
    pub reasoning: Option<ThinkingLevel>,
    /// Session id for provider-side caching.
    pub session_id: Option<String>,
    /// Maximum output tokens.
    pub max_tokens: Option<u64>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Forced tool choice for this call.
    pub tool_choice: Option<ToolChoice>,
    /// Extra HTTP headers.
    pub headers: BTreeMap<String, String>,
    /// Cancels the request; the stream then ends with `stopReason: aborted`.
    pub cancel: CancellationToken,
    /// Called with the request body before it is sent and with the response's status and
    /// headers (pi-ai's `onPayload` / `onResponse`).
    pub provider_hooks: ProviderHooks,
}

/// What one model call sees: the system prompt, the messages and the tools.
///
/// It borrows from the loop's working context so that building it costs nothing; providers
/// serialise what they need before returning their stream. Messages with a custom role that
/// reach a provider are skipped by it.
#[derive(Clone, Copy)]
pub struct LlmContext<'a> {
    /// The system prompt.
    pub system_prompt: &'a str,
    /// The conversation, oldest first.
    pub messages: &'a [AgentMessage],
    /// The tools the model may call.
    pub tools: &'a [Arc<dyn AgentTool>],
}

impl std::fmt::Debug for LlmContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmContext")
            .field("system_prompt", &self.system_prompt)
            .field("messages", &self.messages.len())
            .field("tools", &self.tools.iter().map(|t| t.name()).collect::<Vec<_>>())
            .finish()
    }
}

/// One event of a streaming assistant response (pi-ai's `AssistantMessageEvent`).
///
/// Every event but the terminal ones carries `partial`, the message as built so far. It is an
/// [`Arc`] so that events are cheap to pass around; producers update it with
/// [`Arc::make_mut`], which copies only when a consumer still holds the previous snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum AssistantMessageEvent {
    /// The response started.
    Start {
        /// The (empty) message so far.
        partial: Arc<AssistantMessage>,
    },
    /// A text block started at `content_index`.
    TextStart {
        /// Index of the block in `content`.
        content_index: usize,
        /// The message so far.
        partial: Arc<AssistantMessage>,
    },
    /// More text.
    TextDelta {
        /// Index of the block in `content`.
        content_index: usize,
        /// The new text.
        delta: String,
        /// The message so far.
        partial: Arc<AssistantMessage>,
    },
    /// A text block finished.
    TextEnd {
        /// Index of the block in `content`.
        content_index: usize,
        /// The whole text of the block.
        content: String,
        /// The message so far.
        partial: Arc<AssistantMessage>,
    },
    /// A thinking block started.
    ThinkingStart {
        /// Index of the block in `content`.
        content_index: usize,
        /// The message so far.
        partial: Arc<AssistantMessage>,
    },
    /// More thinking.
    ThinkingDelta {
        /// Index of the block in `content`.
        content_index: usize,
        /// The new thinking text.
        delta: String,
        /// The message so far.
        partial: Arc<AssistantMessage>,
    },
    /// A thinking block finished.
    ThinkingEnd {
        /// Index of the block in `content`.
        content_index: usize,
        /// The whole thinking text of the block.
        content: String,
        /// The message so far.
        partial: Arc<AssistantMessage>,
    },
    /// A tool call started.
    #[serde(rename = "toolcall_start")]
    ToolCallStart {
        /// Index of the block in `content`.
        content_index: usize,
        /// The message so far.
        partial: Arc<AssistantMessage>,
    },
    /// More tool-call argument JSON (a raw fragment; `partial` holds the arguments parsed so far).
    #[serde(rename = "toolcall_delta")]
    ToolCallDelta {
        /// Index of the block in `content`.
        content_index: usize,
        /// Raw JSON fragment.
        delta: String,
        /// The message so far.
        partial: Arc<AssistantMessage>,
    },
    /// A tool call finished.
    #[serde(rename = "toolcall_end")]
    ToolCallEnd {
        /// Index of the block in `content`.
        content_index: usize,
        /// The complete call, written as a content block (`{"type":"toolCall",…}`) as pi does.
        #[serde(serialize_with = "tool_call_block")]
        tool_call: ToolCall,
        /// The message so far.
        partial: Arc<AssistantMessage>,
    },
    /// The response finished (`reason` is stop, length or toolUse).
    Done {
        /// Why it stopped.
        reason: StopReason,
        /// The final message.
        message: AssistantMessage,
    },
    /// The response failed (`reason` is error or aborted).
    Error {
        /// `error` or `aborted`.
        reason: StopReason,
        /// The final message, with `errorMessage`.
        error: AssistantMessage,
    },
}

/// A tool call with its `"type":"toolCall"` tag, as `toolcall_end` carries it.
fn tool_call_block<S: serde::Serializer>(call: &ToolCall, serializer: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Tagged<'a> {
        #[serde(rename = "type")]
        kind: &'static str,
        #[serde(flatten)]
        call: &'a ToolCall,
    }
    Tagged { kind: "toolCall", call }.serialize(serializer)
}

impl AssistantMessageEvent {
    /// The message so far, for every non-terminal event.
    pub fn partial(&self) -> Option<&Arc<AssistantMessage>> {
        use AssistantMessageEvent as E;
        match self {
            E::Start { partial }
            | E::TextStart { partial, .. }
            | E::TextDelta { partial, .. }
            | E::TextEnd { partial, .. }
            | E::ThinkingStart { partial, .. }
            | E::ThinkingDelta { partial, .. }
            | E::ThinkingEnd { partial, .. }
            | E::ToolCallStart { partial, .. }
            | E::ToolCallDelta { partial, .. }
            | E::ToolCallEnd { partial, .. } => Some(partial),
            E::Done { .. } | E::Error { .. } => None,
        }
    }

    /// [`partial`](Self::partial), mutable: e.g. to swap in an empty message before serializing
    /// an event for a consumer that wants only the delta.
    pub fn partial_mut(&mut self) -> Option<&mut Arc<AssistantMessage>> {
        use AssistantMessageEvent as E;
        match self {
            E::Start { partial }
            | E::TextStart { partial, .. }
            | E::TextDelta { partial, .. }
            | E::TextEnd { partial, .. }
            | E::ThinkingStart { partial, .. }
            | E::ThinkingDelta { partial, .. }
            | E::ThinkingEnd { partial, .. }
            | E::ToolCallStart { partial, .. }
            | E::ToolCallDelta { partial, .. }
            | E::ToolCallEnd { partial, .. } => Some(partial),
            E::Done { .. } | E::Error { .. } => None,
        }
    }

    /// The `type` string of the event (`text_delta`, `toolcall_end`, …).
    pub fn kind(&self) -> &'static str {
        use AssistantMessageEvent as E;
        match self {
            E::Start { .. } => "start",
            E::TextStart { .. } => "text_start",
            E::TextDelta { .. } => "text_delta",
            E::TextEnd { .. } => "text_end",
            E::ThinkingStart { .. } => "thinking_start",
            E::ThinkingDelta { .. } => "thinking_delta",
            E::ThinkingEnd { .. } => "thinking_end",
            E::ToolCallStart { .. } => "toolcall_start",
            E::ToolCallDelta { .. } => "toolcall_delta",
            E::ToolCallEnd { .. } => "toolcall_end",
            E::Done { .. } => "done",
            E::Error { .. } => "error",
        }
    }
}

/// A stream of assistant-message events, ended by `done` or `error`.
pub type AssistantMessageStream = BoxStream<'static, AssistantMessageEvent>;

/// The model boundary: start one streaming model call.
///
/// Implementations must not fail: every failure is a final [`AssistantMessageEvent::Error`].
/// They read what they need from `context` before returning (it borrows the loop's state).
///
/// Closures of the right shape implement it:
///
/// ```
/// use pi_agent_core::{AssistantMessage, AssistantMessageEvent, StopReason, StreamFn};
///
/// let echo = |_model: &pi_agent_core::Model,
///             _context: &pi_agent_core::LlmContext<'_>,
///             _options: &pi_agent_core::StreamOptions| {
///     let message = AssistantMessage { stop_reason: StopReason::Stop, ..Default::default() };
///     let done = AssistantMessageEvent::Done { reason: StopReason::Stop, message };
///     Box::pin(futures::stream::iter([done])) as pi_agent_core::AssistantMessageStream
/// };
/// let _stream_fn: &dyn StreamFn = &echo;
/// ```
pub trait StreamFn: Send + Sync {
    /// Starts a model call and returns its event stream.
    fn stream(&self, model: &Model, context: &LlmContext<'_>, options: &StreamOptions) -> AssistantMessageStream;
}

impl<F> StreamFn for F
where
    F: Fn(&Model, &LlmContext<'_>, &StreamOptions) -> AssistantMessageStream + Send + Sync,
{
    fn stream(&self, model: &Model, context: &LlmContext<'_>, options: &StreamOptions) -> AssistantMessageStream {
        self(model, context, options)
    }
}

static DEFAULT_STREAM_FN: RwLock<Option<Arc<dyn StreamFn>>> = RwLock::new(None);

/// Installs the stream function used by loops and agents that were given none
/// (pi's `setDefaultStreamFn`). `None` removes it.
pub fn set_default_stream_fn(stream_fn: Option<Arc<dyn StreamFn>>) {
    let mut slot = DEFAULT_STREAM_FN
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    *slot = stream_fn;
}

/// The stream function installed with [`set_default_stream_fn`], if any.
pub fn default_stream_fn() -> Option<Arc<dyn StreamFn>> {
    DEFAULT_STREAM_FN
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .clone()
}

// Hooks around one provider request (pi-ai's `onPayload` / `onResponse`): every wire API calls
// [`PayloadHook`] with the JSON body it is about to send (the hook may replace it) and
// [`ResponseHook`] with the status and headers of the response it streams.

/// Sees (and may replace) the JSON body of a provider request before it is sent.
#[async_trait]
pub trait PayloadHook: Send + Sync {
    /// Returns the body to send instead of `payload`; `None` sends it unchanged. `cancel` is the
    /// request's: cancelled when the run is aborted.
    async fn on_payload(&self, payload: &Value, model: &Model, cancel: &CancellationToken) -> Option<Value>;
}

/// Told the status and headers (names lowercase) of a provider's successful response, before its
/// body is read.
#[async_trait]
pub trait ResponseHook: Send + Sync {
    /// Called once per request that got a response to stream; `cancel` is the request's.
    async fn on_response(
        &self,
        status: u16,
        headers: &BTreeMap<String, String>,
        model: &Model,
        cancel: &CancellationToken,
    );
}

/// The hooks of a provider request; both empty by default (nothing is called).
#[derive(Clone, Default)]
pub struct ProviderHooks {
    /// pi-ai's `onPayload`.
    pub on_payload: Option<Arc<dyn PayloadHook>>,
    /// pi-ai's `onResponse`.
    pub on_response: Option<Arc<dyn ResponseHook>>,
}

impl std::fmt::Debug for ProviderHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderHooks")
            .field("on_payload", &self.on_payload.is_some())
            .field("on_response", &self.on_response.is_some())
            .finish()
    }
}

impl ProviderHooks {
    /// Whether neither hook is set.
    pub fn is_empty(&self) -> bool {
        self.on_payload.is_none() && self.on_response.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolCall;

    #[test]
    fn toolcall_end_writes_its_call_as_a_content_block() {
        let event = AssistantMessageEvent::ToolCallEnd {
            content_index: 1,
            tool_call: ToolCall::new("call_1", "read", serde_json::json!({"path": "a.txt"})),
            partial: Arc::default(),
        };
        let value = serde_json::to_value(&event).unwrap();
        assert_eq!(
            value["toolCall"].to_string(),
            r#"{"type":"toolCall","id":"call_1","name":"read","arguments":{"path":"a.txt"}}"#
        );
        // Read back, tag and all.
        let back: AssistantMessageEvent = serde_json::from_value(value).unwrap();
        assert_eq!(back, event);
    }
}
