//! A scripted model for tests, benchmarks and the offline demo (pi-ai's faux provider).
//!
//! Queue responses with [`FauxModel::set_responses`]; each model call takes the next one and
//! streams it as realistic events: `start`, per block `*_start`, deltas in 3–5 character chunks
//! (tool-call arguments stream as JSON), `*_end`, then `done` — or `error` when the scripted
//! message has stop reason `error` / `aborted`. An empty queue ends the call with
//! `No more faux responses queued`; aborting ends it with `stopReason: aborted` and
//! `Request was aborted`. Usage is estimated at four characters a token with a simulated prompt
//! cache.
//!
//! ```
//! use pi_agent_core::faux::{FauxModel, faux_assistant_message, faux_text, faux_tool_call};
//! use serde_json::json;
//!
//! let faux = FauxModel::new();
//! faux.set_responses([
//!     faux_assistant_message(vec![faux_tool_call("call-1", "calculate", json!({"expression": "2+2"}))]),
//!     faux_assistant_message(vec![faux_text("4")]),
//! ]);
//! assert_eq!(faux.pending_response_count(), 2);
//! assert_eq!(faux.model().id, "faux-1");
//! ```

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::{StreamExt, stream};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::message::{
    AgentMessage, AssistantMessage, ContentBlock, Cost, StopReason, TextContent, ThinkingContent, ToolCall, Usage,
    UserContent, now_ms,
};
use crate::model::{
    AssistantMessageEvent, AssistantMessageStream, LlmContext, Model, ModelCost, StreamFn, StreamOptions,
    ThinkingLevel, ToolChoice,
};

/// Error text of a call made with an empty response queue.
pub const NO_MORE_RESPONSES: &str = "No more faux responses queued";
/// Error text of an aborted call.
pub const REQUEST_ABORTED: &str = "Request was aborted";

/// What a response factory sees.
pub struct FauxRequest<'a> {
    /// The model called.
    pub model: &'a Model,
    /// The request context.
    pub context: &'a LlmContext<'a>,
    /// The request options.
    pub options: &'a StreamOptions,
    /// Zero-based index of this call.
    pub call_index: usize,
}

type Factory = dyn Fn(&FauxRequest<'_>) -> AssistantMessage + Send + Sync;

/// One scripted response: a fixed message, or a function of the request.
#[derive(Clone)]
#[allow(clippy::large_enum_variant)]
pub enum FauxResponse {
    /// Stream this message.
    Message(AssistantMessage),
    /// Build the message from the request, then stream it.
    Factory(Arc<Factory>),
}

impl FauxResponse {
    /// A response computed from the request.
    pub fn factory(f: impl Fn(&FauxRequest<'_>) -> AssistantMessage + Send + Sync + 'static) -> Self {
        FauxResponse::Factory(Arc::new(f))
    }
}

impl From<AssistantMessage> for FauxResponse {
    fn from(message: AssistantMessage) -> Self {
        FauxResponse::Message(message)
    }
}

/// What the faux model recorded about one call, so tests can assert on requests.
#[derive(Debug, Clone, PartialEq)]
pub struct FauxCall {
    /// The forced tool choice of the call, if any.
    pub tool_choice: Option<ToolChoice>,
    /// Number of messages in the request.
    pub message_count: usize,
    /// Roles of the request's messages.
    pub roles: Vec<String>,
    /// The system prompt.
    pub system_prompt: String,
    /// Names of the tools offered.
    pub tool_names: Vec<String>,
    /// The API key passed.
    pub api_key: Option<String>,
    /// The reasoning level passed.
    pub reasoning: Option<ThinkingLevel>,
    /// The session id passed.
    pub session_id: Option<String>,
}

struct FauxState {
    responses: VecDeque<FauxResponse>,
    calls: Vec<FauxCall>,
    record_calls: bool,
    call_count: usize,
    cached_messages: usize,
    cached_tokens: u64,
    seed: u64,
}

struct FauxInner {
    model: Model,
    tokens_per_second: Option<f64>,
    token_size: (usize, usize),
    state: Mutex<FauxState>,
}

/// A scripted model implementing [`StreamFn`]. Clones share the queue.
#[derive(Clone)]
pub struct FauxModel {
    inner: Arc<FauxInner>,
}

impl Default for FauxModel {
    fn default() -> Self {
        FauxModel::new()
    }
}

impl FauxModel {
    /// A faux model `faux-1` ("Faux Model", provider `faux`, text+image, 128000 context, 16384 max
    /// tokens, zero cost) streaming as fast as it is polled.
    pub fn new() -> Self {
        FauxModel::builder().build()
    }

    /// A builder for rate, chunk size and model overrides.
    pub fn builder() -> FauxModelBuilder {
        FauxModelBuilder {
            model: default_model(),
            tokens_per_second: None,
            token_size: (3, 5),
            record_calls: true,
        }
    }

    /// The model description to put in a config.
    pub fn model(&self) -> Model {
        self.inner.model.clone()
    }

    /// This faux model as a shareable stream function.
    pub fn stream_fn(&self) -> Arc<dyn StreamFn> {
        Arc::new(self.clone())
    }

    fn state(&self) -> MutexGuard<'_, FauxState> {
        crate::sync::lock(&self.inner.state)
    }

    /// Replaces the response queue.
    pub fn set_responses<R: Into<FauxResponse>>(&self, responses: impl IntoIterator<Item = R>) {
        let mut state = self.state();
        state.responses = responses.into_iter().map(Into::into).collect();
    }

    /// Appends to the response queue.
    pub fn append_responses<R: Into<FauxResponse>>(&self, responses: impl IntoIterator<Item = R>) {
        let mut state = self.state();
        state.responses.extend(responses.into_iter().map(Into::into));
    }

    /// Responses still queued.
    pub fn pending_response_count(&self) -> usize {
        self.state().responses.len()
    }

    /// Calls made so far.
    pub fn call_count(&self) -> usize {
        self.state().call_count
    }

    /// What each call so far looked like (empty when recording is off).
    pub fn calls(&self) -> Vec<FauxCall> {
        self.state().calls.clone()
    }
}

/// Builds a [`FauxModel`].
#[derive(Debug, Clone)]
pub struct FauxModelBuilder {
    model: Model,
    tokens_per_second: Option<f64>,
    token_size: (usize, usize),
    record_calls: bool,
}

impl FauxModelBuilder {
    /// Limits streaming to this many chunks ("tokens") a second.
    #[must_use]
    pub fn tokens_per_second(mut self, rate: f64) -> Self {
        self.tokens_per_second = (rate > 0.0).then_some(rate);
        self
    }

    /// Sets the chunk size range in characters (default 3–5).
    #[must_use]
    pub fn token_size(mut self, min: usize, max: usize) -> Self {
        let min = min.max(1);
        self.token_size = (min, max.max(min));
        self
    }

    /// Replaces the model description (id, provider, …).
    #[must_use]
    pub fn model(mut self, model: Model) -> Self {
        self.model = model;
        self
    }

    /// Turns the per-call request log of [`FauxModel::calls`] on or off (on by default).
    #[must_use]
    pub fn record_calls(mut self, record: bool) -> Self {
        self.record_calls = record;
        self
    }

    /// Builds the model.
    pub fn build(self) -> FauxModel {
        FauxModel {
            inner: Arc::new(FauxInner {
                model: self.model,
                tokens_per_second: self.tokens_per_second,
                token_size: self.token_size,
                state: Mutex::new(FauxState {
                    responses: VecDeque::new(),
                    calls: Vec::new(),
                    record_calls: self.record_calls,
                    call_count: 0,
                    cached_messages: 0,
                    cached_tokens: 0,
                    seed: 0x9e37_79b9_7f4a_7c15,
                }),
            }),
        }
    }
}

fn default_model() -> Model {
    Model {
        id: "faux-1".into(),
        name: "Faux Model".into(),
        api: "faux".into(),
        provider: "faux".into(),
        base_url: "http://localhost:0".into(),
        reasoning: false,
        input: vec!["text".into(), "image".into()],
        cost: ModelCost::default(),
        context_window: 128_000,
        max_tokens: 16_384,
        headers: None,
        compat: None,
        thinking_level_map: None,
    }
}

/// An assistant message of these blocks; stop reason `toolUse` if it holds a tool call, else
/// `stop`.
pub fn faux_assistant_message(content: Vec<ContentBlock>) -> AssistantMessage {
    let stop_reason = if content.iter().any(|b| b.as_tool_call().is_some()) {
        StopReason::ToolUse
    } else {
        StopReason::Stop
    };
    AssistantMessage {
        content,
        stop_reason,
        ..Default::default()
    }
}

/// An assistant message with one text block.
pub fn faux_assistant_text(text: impl Into<String>) -> AssistantMessage {
    faux_assistant_message(vec![faux_text(text)])
}

/// An assistant message that ends in error with `error_message` (stop reason `error`).
pub fn faux_assistant_error(error_message: impl Into<String>) -> AssistantMessage {
    AssistantMessage {
        stop_reason: StopReason::Error,
        error_message: Some(error_message.into()),
        ..Default::default()
    }
}

/// A text block.
pub fn faux_text(text: impl Into<String>) -> ContentBlock {
    ContentBlock::text(text)
}

/// A thinking block.
pub fn faux_thinking(thinking: impl Into<String>) -> ContentBlock {
    ContentBlock::Thinking(ThinkingContent {
        thinking: thinking.into(),
        ..Default::default()
    })
}

/// A tool-call block with an explicit id.
pub fn faux_tool_call(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> ContentBlock {
    ContentBlock::ToolCall(ToolCall::new(id, name, arguments))
}

fn chars_of(message: &AgentMessage) -> usize {
    fn blocks(content: &[ContentBlock]) -> usize {
        content
            .iter()
            .map(|block| match block {
                ContentBlock::Text(t) => t.text.len(),
                ContentBlock::Thinking(t) => t.thinking.len(),
                ContentBlock::Image(_) => 4800,
                ContentBlock::ToolCall(call) => call.name.len() + call.arguments.to_string().len(),
            })
            .sum()
    }
    match message {
        AgentMessage::User(user) => match &user.content {
            UserContent::Text(text) => text.len(),
            UserContent::Blocks(content) => blocks(content),
        },
        AgentMessage::Assistant(assistant) => blocks(&assistant.content),
        AgentMessage::ToolResult(result) => blocks(&result.content),
        AgentMessage::Custom(_) => 0,
    }
}

fn tokens(chars: usize) -> u64 {
    (chars as u64).div_ceil(4)
}

impl StreamFn for FauxModel {
    fn stream(&self, model: &Model, context: &LlmContext<'_>, options: &StreamOptions) -> AssistantMessageStream {
        let (response, call_index, input, cache_read, seed) = {
            let mut state = self.state();
            let call_index = state.call_count;
            state.call_count += 1;
            if state.record_calls {
                state.calls.push(FauxCall {
                    tool_choice: options.tool_choice.clone(),
                    message_count: context.messages.len(),
                    roles: context.messages.iter().map(|m| m.role().to_owned()).collect(),
                    system_prompt: context.system_prompt.to_owned(),
                    tool_names: context.tools.iter().map(|t| t.name().to_owned()).collect(),
                    api_key: options.api_key.clone(),
                    reasoning: options.reasoning,
                    session_id: options.session_id.clone(),
                });
            }
            // Simulated prompt cache: the prefix seen by the previous call is read from cache.
            let (from, cached) = if context.messages.len() >= state.cached_messages && call_index > 0 {
                (state.cached_messages, state.cached_tokens)
            } else {
                (0, 0)
            };
            let mut fresh: u64 = context.messages[from..].iter().map(|m| tokens(chars_of(m))).sum();
            if from == 0 {
                fresh += tokens(context.system_prompt.len());
            }
            state.cached_messages = context.messages.len();
            state.cached_tokens = cached + fresh;
            state.seed = state.seed.wrapping_add(0x2545_f491_4f6c_dd1d);
            (state.responses.pop_front(), call_index, fresh, cached, state.seed)
        };
        let message = match response {
            Some(FauxResponse::Message(message)) => message,
            Some(FauxResponse::Factory(factory)) => factory(&FauxRequest {
                model,
                context,
                options,
                call_index,
            }),
            None => faux_assistant_error(NO_MORE_RESPONSES),
        };
        let final_message = finish_message(message, model, input, cache_read);
        let streamer = Streamer::new(final_message, &self.inner, options.cancel.clone(), seed);
        let events = stream::unfold(streamer, |mut streamer| async move {
            let event = streamer.next_event().await?;
            Some((event, streamer))
        });
        // pi's faux provider reports a `200` without headers to the response hook first.
        let Some(hook) = options.provider_hooks.on_response.clone() else {
            return Box::pin(events);
        };
        let model = model.clone();
        let cancel = options.cancel.clone();
        let reported = stream::once(async move {
            hook.on_response(200, &std::collections::BTreeMap::new(), &model, &cancel)
                .await;
        });
        Box::pin(reported.filter_map(|()| async { None }).chain(events))
    }
}

/// Fills the model fields, timestamp and usage of a scripted message.
fn finish_message(mut message: AssistantMessage, model: &Model, input: u64, cache_read: u64) -> AssistantMessage {
    message.api = model.api.clone();
    message.provider = model.provider.clone();
    message.model = model.id.clone();
    message.timestamp = now_ms();
    let output: u64 = message
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text(t) => tokens(t.text.len()),
            ContentBlock::Thinking(t) => tokens(t.thinking.len()),
            ContentBlock::ToolCall(c) => tokens(c.name.len() + c.arguments.to_string().len()),
            ContentBlock::Image(_) => 0,
        })
        .sum();
    let price = |tokens: u64, per_million: f64| tokens as f64 * per_million / 1_000_000.0;
    let cost = Cost {
        input: price(input, model.cost.input),
        output: price(output, model.cost.output),
        cache_read: price(cache_read, model.cost.cache_read),
        cache_write: 0.0,
        total: price(input, model.cost.input)
            + price(output, model.cost.output)
            + price(cache_read, model.cost.cache_read),
    };
    message.usage = Usage {
        input,
        output,
        cache_read,
        cache_write: 0,
        total_tokens: input + output + cache_read,
        cost,
    };
    message
}

enum Phase {
    Start,
    BlockStart,
    Delta,
    BlockEnd,
    Finish,
    Ended,
}

/// Turns a final message into its event sequence, one event per call.
struct Streamer {
    message: AssistantMessage,
    partial: Arc<AssistantMessage>,
    phase: Phase,
    block: usize,
    source: String,
    offset: usize,
    rng: u64,
    token_size: (usize, usize),
    delay: Option<Duration>,
    cancel: CancellationToken,
}

impl Streamer {
    fn new(message: AssistantMessage, inner: &FauxInner, cancel: CancellationToken, seed: u64) -> Self {
        let partial = AssistantMessage {
            content: Vec::with_capacity(message.content.len()),
            api: message.api.clone(),
            provider: message.provider.clone(),
            model: message.model.clone(),
            usage: Usage::default(),
            stop_reason: StopReason::Stop,
            timestamp: message.timestamp,
            ..Default::default()
        };
        Streamer {
            message,
            partial: Arc::new(partial),
            phase: Phase::Start,
            block: 0,
            source: String::new(),
            offset: 0,
            rng: seed | 1,
            token_size: inner.token_size,
            delay: inner.tokens_per_second.map(|rate| Duration::from_secs_f64(1.0 / rate)),
            cancel,
        }
    }

    fn chunk_len(&mut self) -> usize {
        // xorshift64: deterministic, cheap chunk sizes in [min, max].
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let (min, max) = self.token_size;
        min + (self.rng % (max - min + 1) as u64) as usize
    }

    fn aborted(&mut self) -> AssistantMessageEvent {
        self.phase = Phase::Ended;
        let mut error = (*self.partial).clone();
        error.usage = self.message.usage;
        error.stop_reason = StopReason::Aborted;
        error.error_message = Some(REQUEST_ABORTED.to_owned());
        AssistantMessageEvent::Error {
            reason: StopReason::Aborted,
            error,
        }
    }

    async fn next_event(&mut self) -> Option<AssistantMessageEvent> {
        if matches!(self.phase, Phase::Ended) {
            return None;
        }
        if self.cancel.is_cancelled() {
            return Some(self.aborted());
        }
        if let (Phase::Delta, Some(delay)) = (&self.phase, self.delay) {
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = self.cancel.cancelled() => return Some(self.aborted()),
            }
        }
        Some(self.step())
    }

    fn step(&mut self) -> AssistantMessageEvent {
        use AssistantMessageEvent as E;
        match self.phase {
            Phase::Start => {
                self.phase = Phase::BlockStart;
                E::Start {
                    partial: self.partial.clone(),
                }
            }
            Phase::BlockStart => {
                let Some(block) = self.message.content.get(self.block) else {
                    self.phase = Phase::Finish;
                    return self.step();
                };
                let (empty, source) = match block {
                    ContentBlock::Text(t) => (ContentBlock::Text(TextContent::default()), t.text.clone()),
                    ContentBlock::Thinking(t) => (
                        ContentBlock::Thinking(ThinkingContent {
                            thinking_signature: t.thinking_signature.clone(),
                            redacted: t.redacted,
                            thinking: String::new(),
                        }),
                        t.thinking.clone(),
                    ),
                    ContentBlock::ToolCall(c) => (
                        ContentBlock::ToolCall(ToolCall::new(
                            c.id.clone(),
                            c.name.clone(),
                            Value::Object(Default::default()),
                        )),
                        c.arguments.to_string(),
                    ),
                    ContentBlock::Image(_) => (block.clone(), String::new()),
                };
                Arc::make_mut(&mut self.partial).content.push(empty.clone());
                self.source = source;
                self.offset = 0;
                self.phase = if self.source.is_empty() {
                    Phase::BlockEnd
                } else {
                    Phase::Delta
                };
                let content_index = self.block;
                let partial = self.partial.clone();
                match empty {
                    ContentBlock::Thinking(_) => E::ThinkingStart { content_index, partial },
                    ContentBlock::ToolCall(_) => E::ToolCallStart { content_index, partial },
                    _ => E::TextStart { content_index, partial },
                }
            }
            Phase::Delta => {
                let want = self.chunk_len();
                let rest = &self.source[self.offset..];
                let end = rest.char_indices().nth(want).map_or(rest.len(), |(i, _)| i);
                let delta = rest[..end].to_owned();
                self.offset += end;
                if self.offset >= self.source.len() {
                    self.phase = Phase::BlockEnd;
                }
                let content_index = self.block;
                let parsed = match &self.message.content[self.block] {
                    ContentBlock::ToolCall(_) => serde_json::from_str::<Value>(&self.source[..self.offset]).ok(),
                    _ => None,
                };
                let partial = Arc::make_mut(&mut self.partial);
                match partial.content.get_mut(content_index) {
                    Some(ContentBlock::Text(t)) => t.text.push_str(&delta),
                    Some(ContentBlock::Thinking(t)) => t.thinking.push_str(&delta),
                    Some(ContentBlock::ToolCall(c)) => {
                        if let Some(parsed) = parsed {
                            c.arguments = parsed;
                        }
                    }
                    _ => {}
                }
                let partial = self.partial.clone();
                match &self.message.content[content_index] {
                    ContentBlock::Thinking(_) => E::ThinkingDelta {
                        content_index,
                        delta,
                        partial,
                    },
                    ContentBlock::ToolCall(_) => E::ToolCallDelta {
                        content_index,
                        delta,
                        partial,
                    },
                    _ => E::TextDelta {
                        content_index,
                        delta,
                        partial,
                    },
                }
            }
            Phase::BlockEnd => {
                let content_index = self.block;
                let block = self.message.content[content_index].clone();
                if let Some(slot) = Arc::make_mut(&mut self.partial).content.get_mut(content_index) {
                    *slot = block.clone();
                }
                self.block += 1;
                self.phase = Phase::BlockStart;
                let partial = self.partial.clone();
                match block {
                    ContentBlock::Thinking(t) => E::ThinkingEnd {
                        content_index,
                        content: t.thinking,
                        partial,
                    },
                    ContentBlock::ToolCall(tool_call) => E::ToolCallEnd {
                        content_index,
                        tool_call,
                        partial,
                    },
                    ContentBlock::Text(t) => E::TextEnd {
                        content_index,
                        content: t.text,
                        partial,
                    },
                    ContentBlock::Image(_) => E::TextEnd {
                        content_index,
                        content: String::new(),
                        partial,
                    },
                }
            }
            Phase::Finish | Phase::Ended => {
                self.phase = Phase::Ended;
                let message = std::mem::take(&mut self.message);
                match message.stop_reason {
                    StopReason::Error | StopReason::Aborted => E::Error {
                        reason: message.stop_reason,
                        error: message,
                    },
                    reason => E::Done { reason, message },
                }
            }
        }
    }
}
