//! The stateful [`Agent`]: a transcript, a model, tools and queues around the loop.
//!
//! `prompt` starts a run and resolves when it and every listener are done; `steer` and
//! `follow_up` queue messages for a running agent; `abort` cancels the active run;
//! `subscribe` registers listeners that are called in subscription order for every event, after
//! the agent's own state has been updated for it.
//!
//! ```
//! use pi_agent_core::faux::{FauxModel, faux_assistant_text};
//! use pi_agent_core::{Agent, AgentOptions};
//!
//! # tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async {
//! let faux = FauxModel::new();
//! faux.set_responses([faux_assistant_text("4")]);
//! let agent = Agent::new(AgentOptions::new(faux.model()).stream_fn(faux.stream_fn()));
//! agent.prompt("2 + 2?").await.unwrap();
//! let messages = agent.messages();
//! assert_eq!(messages.len(), 2);
//! assert_eq!(messages[1].as_assistant().unwrap().text(), "4");
//! # });
//! ```

use std::collections::HashSet;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::agent_loop::{AgentLoopError, RunStart, run_loop};
use crate::config::{AgentContext, AgentLoopConfig};
use crate::event::{AgentEvent, EventSink};
use crate::message::{AgentMessage, AssistantMessage, ContentBlock, StopReason, UserContent, UserMessage, now_ms};
use crate::model::{Model, StreamFn, ThinkingLevel};
use crate::queue::{MessageQueue, QueueMode};
use crate::sync::lock;
use crate::tool::AgentTool;

/// Errors of the [`Agent`] API, with pi's messages.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    /// `prompt` while a run is active.
    #[error(
        "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion."
    )]
    AlreadyPrompting,
    /// `continue` while a run is active.
    #[error("Agent is already processing. Wait for completion before continuing.")]
    AlreadyContinuing,
    /// `reset` while a run is active.
    #[error("Agent is already processing. Wait for completion before resetting.")]
    AlreadyResetting,
    /// `continue` with an empty transcript.
    #[error("No messages to continue from")]
    NoMessages,
    /// `continue` from an assistant tail with nothing queued.
    #[error("Cannot continue from message role: assistant")]
    ContinueFromAssistant,
    /// The loop refused to start.
    #[error(transparent)]
    Loop(#[from] AgentLoopError),
}

/// What a new [`Agent`] starts with (pi's `initialState` and options).
#[derive(Clone)]
pub struct AgentOptions {
    /// Initial system prompt (default empty).
    pub system_prompt: String,
    /// Initial thinking level (default off).
    pub thinking_level: ThinkingLevel,
    /// Initial tools.
    pub tools: Vec<Arc<dyn AgentTool>>,
    /// Initial transcript.
    pub messages: Vec<AgentMessage>,
    /// Steering drain mode (default one-at-a-time).
    pub steering_mode: QueueMode,
    /// Follow-up drain mode (default one-at-a-time).
    pub follow_up_mode: QueueMode,
    /// Everything else the loop takes (model, stream function, hooks, tool execution mode …).
    /// Its queue callbacks are replaced by the agent's own queues.
    pub config: AgentLoopConfig,
}

impl AgentOptions {
    /// Options for `model` with pi's defaults.
    pub fn new(model: Model) -> Self {
        AgentOptions {
            system_prompt: String::new(),
            thinking_level: ThinkingLevel::Off,
            tools: Vec::new(),
            messages: Vec::new(),
            steering_mode: QueueMode::OneAtATime,
            follow_up_mode: QueueMode::OneAtATime,
            config: AgentLoopConfig::new(model),
        }
    }

    /// Sets the stream function.
    #[must_use]
    pub fn stream_fn(mut self, stream_fn: Arc<dyn StreamFn>) -> Self {
        self.config.stream_fn = Some(stream_fn);
        self
    }

    /// Sets the tools.
    #[must_use]
    pub fn tools(mut self, tools: Vec<Arc<dyn AgentTool>>) -> Self {
        self.tools = tools;
        self
    }

    /// Sets the system prompt.
    #[must_use]
    pub fn system_prompt(mut self, system_prompt: impl Into<String>) -> Self {
        self.system_prompt = system_prompt.into();
        self
    }
}

impl Default for AgentOptions {
    fn default() -> Self {
        AgentOptions::new(Model::unknown())
    }
}

/// A snapshot of the agent's state (pi's `agent.state`).
#[derive(Clone, Debug)]
pub struct AgentState {
    /// The system prompt.
    pub system_prompt: String,
    /// The model.
    pub model: Model,
    /// The thinking level.
    pub thinking_level: ThinkingLevel,
    /// The transcript, built from `message_end` events.
    pub messages: Vec<AgentMessage>,
    /// True from run start until its `agent_end` is delivered (its listeners already see false).
    pub is_streaming: bool,
    /// The message being streamed, if any.
    pub streaming_message: Option<AgentMessage>,
    /// Ids of tool calls between `tool_execution_start` and `_end`.
    pub pending_tool_calls: HashSet<String>,
    /// Error of the last turn whose assistant message had one; cleared at run start.
    pub error_message: Option<String>,
}

/// What can be passed to [`Agent::prompt`].
#[derive(Debug, Clone)]
pub enum PromptInput {
    /// Messages appended as they are.
    Messages(Vec<AgentMessage>),
}

impl From<&str> for PromptInput {
    fn from(text: &str) -> Self {
        PromptInput::Messages(vec![AgentMessage::user(text)])
    }
}

impl From<String> for PromptInput {
    fn from(text: String) -> Self {
        PromptInput::Messages(vec![AgentMessage::user(text)])
    }
}

impl From<AgentMessage> for PromptInput {
    fn from(message: AgentMessage) -> Self {
        PromptInput::Messages(vec![message])
    }
}

impl From<Vec<AgentMessage>> for PromptInput {
    fn from(messages: Vec<AgentMessage>) -> Self {
        PromptInput::Messages(messages)
    }
}

type SyncListener = dyn Fn(&AgentEvent, &CancellationToken) + Send + Sync;
type AsyncListener = dyn Fn(AgentEvent, CancellationToken) -> BoxFuture<'static, ()> + Send + Sync;

#[derive(Clone)]
enum Listener {
    Sync(Arc<SyncListener>),
    Async(Arc<AsyncListener>),
}

/// The run holding the agent's run slot: its number (so a finishing run frees only its own slot)
/// and its cancellation token.
struct ActiveRun {
    id: u64,
    cancel: CancellationToken,
}

struct Shared {
    state: Mutex<AgentState>,
    tools: Mutex<Vec<Arc<dyn AgentTool>>>,
    config: Mutex<AgentLoopConfig>,
    steering: Mutex<MessageQueue>,
    follow_up: Mutex<MessageQueue>,
    listeners: Mutex<Arc<Vec<(u64, Listener)>>>,
    next_listener: AtomicU64,
    run: Mutex<Option<ActiveRun>>,
    next_run: AtomicU64,
    /// Runs started and not settled yet (their `agent_end` listeners still running count): more
    /// than one when a run was started from an `agent_end` listener of the one before.
    unsettled: watch::Sender<usize>,
}

/// A handle returned by [`Agent::subscribe`]; call [`Subscription::unsubscribe`] to stop
/// receiving events.
pub struct Subscription {
    id: u64,
    shared: std::sync::Weak<Shared>,
}

impl Subscription {
    /// Removes the listener; events already being delivered may still reach it.
    pub fn unsubscribe(self) {
        if let Some(shared) = self.shared.upgrade() {
            let mut listeners = lock(&shared.listeners);
            let kept: Vec<_> = listeners.iter().filter(|(id, _)| *id != self.id).cloned().collect();
            *listeners = Arc::new(kept);
        }
    }
}

/// A stateful agent (pi's `Agent` class). Clones share the same agent.
#[derive(Clone)]
pub struct Agent {
    shared: Arc<Shared>,
}

impl Agent {
    /// A new idle agent.
    pub fn new(options: AgentOptions) -> Self {
        let (unsettled, _) = watch::channel(0);
        let state = AgentState {
            system_prompt: options.system_prompt,
            model: options.config.model.clone(),
            thinking_level: options.thinking_level,
            messages: options.messages,
            is_streaming: false,
            streaming_message: None,
            pending_tool_calls: HashSet::new(),
            error_message: None,
        };
        Agent {
            shared: Arc::new(Shared {
                state: Mutex::new(state),
                tools: Mutex::new(options.tools),
                config: Mutex::new(options.config),
                steering: Mutex::new(MessageQueue::new(options.steering_mode)),
                follow_up: Mutex::new(MessageQueue::new(options.follow_up_mode)),
                listeners: Mutex::new(Arc::new(Vec::new())),
                next_listener: AtomicU64::new(0),
                run: Mutex::new(None),
                next_run: AtomicU64::new(0),
                unsettled,
            }),
        }
    }

    fn inner(&self) -> &Shared {
        &self.shared
    }

    /// A snapshot of the whole state.
    pub fn state(&self) -> AgentState {
        lock(&self.inner().state).clone()
    }

    /// A copy of the transcript.
    pub fn messages(&self) -> Vec<AgentMessage> {
        lock(&self.inner().state).messages.clone()
    }

    /// Replaces the transcript (copies the list).
    pub fn set_messages(&self, messages: Vec<AgentMessage>) {
        lock(&self.inner().state).messages = messages;
    }

    /// Appends one message to the transcript.
    pub fn append_message(&self, message: AgentMessage) {
        lock(&self.inner().state).messages.push(message);
    }

    /// True while a run is active: from its start until its `agent_end` is delivered (the
    /// `agent_end` listeners already see false, so they may start the next run).
    pub fn is_streaming(&self) -> bool {
        lock(&self.inner().state).is_streaming
    }

    /// The error of the last failed turn, if any.
    pub fn error_message(&self) -> Option<String> {
        lock(&self.inner().state).error_message.clone()
    }

    /// Sets the system prompt.
    pub fn set_system_prompt(&self, system_prompt: impl Into<String>) {
        lock(&self.inner().state).system_prompt = system_prompt.into();
    }

    /// The model (a copy; cheaper than [`Agent::state`], which copies the transcript too).
    pub fn model(&self) -> Model {
        lock(&self.inner().state).model.clone()
    }

    /// The thinking level.
    pub fn thinking_level(&self) -> ThinkingLevel {
        lock(&self.inner().state).thinking_level
    }

    /// Sets the model.
    pub fn set_model(&self, model: Model) {
        lock(&self.inner().state).model = model;
    }

    /// Sets the thinking level.
    pub fn set_thinking_level(&self, level: ThinkingLevel) {
        lock(&self.inner().state).thinking_level = level;
    }

    /// The tools.
    pub fn tools(&self) -> Vec<Arc<dyn AgentTool>> {
        lock(&self.inner().tools).clone()
    }

    /// Replaces the tools (takes effect at the next run).
    pub fn set_tools(&self, tools: Vec<Arc<dyn AgentTool>>) {
        *lock(&self.inner().tools) = tools;
    }

    /// Changes the loop configuration (hooks, stream function, tool execution mode …); takes
    /// effect at the next run.
    pub fn update_config(&self, update: impl FnOnce(&mut AgentLoopConfig)) {
        update(&mut lock(&self.inner().config));
    }

    /// Queues a steering message, delivered at the next turn boundary.
    pub fn steer(&self, message: impl Into<AgentMessage>) {
        lock(&self.inner().steering).push(message.into());
    }

    /// Queues a follow-up message, delivered when the agent would otherwise stop.
    pub fn follow_up(&self, message: impl Into<AgentMessage>) {
        lock(&self.inner().follow_up).push(message.into());
    }

    /// Removes the queued steering messages and returns them, oldest first.
    pub fn clear_steering_queue(&self) -> Vec<AgentMessage> {
        lock(&self.inner().steering).clear()
    }

    /// Removes the queued follow-up messages and returns them, oldest first.
    pub fn clear_follow_up_queue(&self) -> Vec<AgentMessage> {
        lock(&self.inner().follow_up).clear()
    }

    /// Removes every queued message and returns them: the steering messages, then the follow-ups
    /// (each oldest first), so a UI can give back exactly what was never delivered.
    pub fn clear_all_queues(&self) -> Vec<AgentMessage> {
        let mut messages = self.clear_steering_queue();
        messages.extend(self.clear_follow_up_queue());
        messages
    }

    /// True when a steering or follow-up message is queued.
    pub fn has_queued_messages(&self) -> bool {
        !lock(&self.inner().steering).is_empty() || !lock(&self.inner().follow_up).is_empty()
    }

    /// The steering drain mode.
    pub fn steering_mode(&self) -> QueueMode {
        lock(&self.inner().steering).mode()
    }

    /// Sets the steering drain mode.
    pub fn set_steering_mode(&self, mode: QueueMode) {
        lock(&self.inner().steering).set_mode(mode);
    }

    /// The follow-up drain mode.
    pub fn follow_up_mode(&self) -> QueueMode {
        lock(&self.inner().follow_up).mode()
    }

    /// Sets the follow-up drain mode.
    pub fn set_follow_up_mode(&self, mode: QueueMode) {
        lock(&self.inner().follow_up).set_mode(mode);
    }

    /// Registers a listener called for every event with the active run's cancellation token.
    /// Subscribing emits nothing.
    pub fn subscribe(
        &self,
        listener: impl Fn(&AgentEvent, &CancellationToken) + Send + Sync + 'static,
    ) -> Subscription {
        self.add_listener(Listener::Sync(Arc::new(listener)))
    }

    /// Registers an async listener; the run waits for each returned future before going on.
    pub fn subscribe_async(
        &self,
        listener: impl Fn(AgentEvent, CancellationToken) -> BoxFuture<'static, ()> + Send + Sync + 'static,
    ) -> Subscription {
        self.add_listener(Listener::Async(Arc::new(listener)))
    }

    fn add_listener(&self, listener: Listener) -> Subscription {
        let id = self.inner().next_listener.fetch_add(1, Ordering::Relaxed);
        let mut listeners = lock(&self.inner().listeners);
        let mut next: Vec<_> = listeners.iter().cloned().collect();
        next.push((id, listener));
        *listeners = Arc::new(next);
        Subscription {
            id,
            shared: Arc::downgrade(&self.shared),
        }
    }

    /// The active run's cancellation token, if a run is active (none once its `agent_end` is
    /// delivered; the listeners get the token as their argument).
    pub fn signal(&self) -> Option<CancellationToken> {
        lock(&self.inner().run).as_ref().map(|run| run.cancel.clone())
    }

    /// Aborts the active run; does nothing when idle.
    pub fn abort(&self) {
        if let Some(run) = lock(&self.inner().run).as_ref() {
            run.cancel.cancel();
        }
    }

    /// Resolves when no run is active and every run's `agent_end` listeners have finished (at
    /// once when idle). A run started from an `agent_end` listener is waited for too; awaiting
    /// this inside an `agent_end` listener therefore never resolves.
    pub async fn wait_for_idle(&self) {
        let mut unsettled = self.inner().unsettled.subscribe();
        // The sender lives as long as `self`, so this only ends when idle.
        let _ = unsettled.wait_for(|count| *count == 0).await;
    }

    /// Clears the transcript, runtime state and queues.
    pub fn reset(&self) -> Result<(), AgentError> {
        let run = lock(&self.inner().run);
        if run.is_some() {
            return Err(AgentError::AlreadyResetting);
        }
        {
            let mut state = lock(&self.inner().state);
            state.messages.clear();
            state.streaming_message = None;
            state.pending_tool_calls.clear();
            state.error_message = None;
        }
        self.clear_all_queues();
        drop(run);
        Ok(())
    }

    /// Starts a run with new messages and waits until it and its listeners finished.
    ///
    /// The run is spawned on the current tokio runtime, so dropping this future does not stop
    /// it: use [`Agent::abort`] and [`Agent::wait_for_idle`] for that.
    pub async fn prompt(&self, input: impl Into<PromptInput>) -> Result<(), AgentError> {
        let PromptInput::Messages(prompts) = input.into();
        let handle = self.start(
            RunStart {
                prompts,
                poll_initial_steering: true,
            },
            AgentError::AlreadyPrompting,
        )?;
        handle.await;
        Ok(())
    }

    /// Starts a run with a text prompt and image blocks.
    pub async fn prompt_with_images(&self, text: &str, images: Vec<ContentBlock>) -> Result<(), AgentError> {
        let mut content = vec![ContentBlock::text(text)];
        content.extend(images);
        let message = UserMessage {
            content: UserContent::Blocks(content),
            timestamp: now_ms(),
        };
        self.prompt(AgentMessage::User(message)).await
    }

    /// Continues from the current transcript (pi's `continue()`): from an assistant tail it
    /// delivers queued steering, else queued follow-ups.
    pub async fn continue_run(&self) -> Result<(), AgentError> {
        let start = {
            let run = lock(&self.inner().run);
            if run.is_some() {
                return Err(AgentError::AlreadyContinuing);
            }
            let state = lock(&self.inner().state);
            match state.messages.last() {
                None => return Err(AgentError::NoMessages),
                Some(AgentMessage::Assistant(_)) => {
                    let steering = lock(&self.inner().steering).drain();
                    if !steering.is_empty() {
                        RunStart {
                            prompts: steering,
                            poll_initial_steering: false,
                        }
                    } else {
                        let follow_ups = lock(&self.inner().follow_up).drain();
                        if follow_ups.is_empty() {
                            return Err(AgentError::ContinueFromAssistant);
                        }
                        RunStart {
                            prompts: follow_ups,
                            poll_initial_steering: true,
                        }
                    }
                }
                Some(_) => RunStart {
                    prompts: Vec::new(),
                    poll_initial_steering: true,
                },
            }
        };
        let handle = self.start(start, AgentError::AlreadyContinuing)?;
        handle.await;
        Ok(())
    }

    /// Claims the run slot and spawns the run; the returned future resolves when it finished.
    fn start(&self, start: RunStart, busy: AgentError) -> Result<BoxFuture<'static, ()>, AgentError> {
        let cancel = CancellationToken::new();
        let (id, context, config) = {
            let mut run = lock(&self.inner().run);
            if run.is_some() {
                return Err(busy);
            }
            let config = self.loop_config();
            if config.stream_fn.is_none() && crate::model::default_stream_fn().is_none() {
                return Err(AgentLoopError::NoStreamFn.into());
            }
            let id = self.inner().next_run.fetch_add(1, Ordering::Relaxed);
            *run = Some(ActiveRun {
                id,
                cancel: cancel.clone(),
            });
            // Counted before the slot is released, so `wait_for_idle` never sees a gap.
            self.inner().unsettled.send_modify(|count| *count += 1);
            let mut state = lock(&self.inner().state);
            state.is_streaming = true;
            state.error_message = None;
            let context = AgentContext {
                system_prompt: state.system_prompt.clone(),
                messages: state.messages.clone(),
                tools: lock(&self.inner().tools).clone(),
            };
            (id, context, config)
        };
        let shared = self.shared.clone();
        let task = tokio::spawn(async move {
            let mut sink = AgentSink {
                shared: shared.clone(),
                run: id,
                cancel: cancel.clone(),
                ended: false,
            };
            let outcome = AssertUnwindSafe(run_loop(start, context, &config, &cancel, &mut sink))
                .catch_unwind()
                .await;
            let failure = match outcome {
                Ok(Ok(_)) => None,
                Ok(Err(error)) => Some(error.to_string()),
                Err(payload) => Some(crate::dispatch::panic_text(payload.as_ref())),
            };
            match failure {
                // pi's failure sequence, ending in the run's `agent_end`.
                Some(error) if !sink.ended => sink.emit_failure(&config.model, error).await,
                // An `agent_end` listener failed: the run has ended and its slot may already hold
                // the next run, so nothing more is emitted for it.
                _ => {}
            }
            // Frees the slot if `agent_end` never got to (it always does, but a slot must never
            // stay claimed), and only if it is still this run's.
            finish_run(&shared, id);
            shared.unsettled.send_modify(|count| *count = count.saturating_sub(1));
        });
        Ok(Box::pin(async move {
            // A panic escaping the task was already turned into failure events inside it.
            let _ = task.await;
        }))
    }

    fn loop_config(&self) -> AgentLoopConfig {
        let mut config = lock(&self.inner().config).clone();
        let state = lock(&self.inner().state);
        config.model = state.model.clone();
        config.reasoning = (state.thinking_level != ThinkingLevel::Off).then_some(state.thinking_level);
        drop(state);
        let steering = Arc::downgrade(&self.shared);
        config.get_steering_messages = Some(Arc::new(move || {
            steering
                .upgrade()
                .map(|shared| lock(&shared.steering).drain())
                .unwrap_or_default()
        }));
        let follow_up = Arc::downgrade(&self.shared);
        config.get_follow_up_messages = Some(Arc::new(move || {
            follow_up
                .upgrade()
                .map(|shared| lock(&shared.follow_up).drain())
                .unwrap_or_default()
        }));
        config
    }
}

/// Ends run `id`'s bookkeeping if it still holds the run slot: the slot is freed and the state
/// is no longer streaming. A run started meanwhile (from an `agent_end` listener) is left alone.
fn finish_run(shared: &Shared, id: u64) {
    let mut run = lock(&shared.run);
    if run.as_ref().is_none_or(|active| active.id != id) {
        return;
    }
    *run = None;
    let mut state = lock(&shared.state);
    state.is_streaming = false;
    state.streaming_message = None;
    state.pending_tool_calls.clear();
}

/// Updates the agent's state for each event, then calls the listeners in order.
struct AgentSink {
    shared: Arc<Shared>,
    /// The run's number in the run slot.
    run: u64,
    cancel: CancellationToken,
    /// `agent_end` was delivered: the run's bookkeeping is done.
    ended: bool,
}

impl AgentSink {
    fn reduce(&self, event: &AgentEvent) {
        let mut state = lock(&self.shared.state);
        match event {
            AgentEvent::MessageStart { message } => state.streaming_message = Some(message.clone()),
            AgentEvent::MessageUpdate { message, .. } => {
                state.streaming_message = Some(AgentMessage::Assistant((**message).clone()));
            }
            AgentEvent::MessageEnd { message } => {
                state.streaming_message = None;
                state.messages.push(message.clone());
            }
            AgentEvent::ToolExecutionStart { tool_call_id, .. } => {
                state.pending_tool_calls.insert(tool_call_id.clone());
            }
            AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
                state.pending_tool_calls.remove(tool_call_id);
            }
            AgentEvent::TurnEnd { message, .. } => {
                if let Some(error) = message.as_assistant().and_then(|m| m.error_message.clone()) {
                    state.error_message = Some(error);
                }
            }
            AgentEvent::AgentEnd { .. } => state.streaming_message = None,
            AgentEvent::AgentStart | AgentEvent::TurnStart | AgentEvent::ToolExecutionUpdate { .. } => {}
        }
    }

    async fn deliver(&mut self, event: AgentEvent) {
        self.reduce(&event);
        if matches!(event, AgentEvent::AgentEnd { .. }) {
            // Nothing of the run comes after `agent_end`: its listeners see an idle agent and may
            // start the next run.
            finish_run(&self.shared, self.run);
            self.ended = true;
        }
        let listeners = lock(&self.shared.listeners).clone();
        for (_, listener) in listeners.iter() {
            match listener {
                Listener::Sync(listener) => listener(&event, &self.cancel),
                Listener::Async(listener) => listener(event.clone(), self.cancel.clone()).await,
            }
        }
    }

    /// pi's synthetic failure sequence after the run itself failed.
    async fn emit_failure(&mut self, model: &Model, error: String) {
        let aborted = self.cancel.is_cancelled();
        let message = AgentMessage::Assistant(AssistantMessage {
            content: vec![ContentBlock::text("")],
            api: model.api.clone(),
            provider: model.provider.clone(),
            model: model.id.clone(),
            stop_reason: if aborted {
                StopReason::Aborted
            } else {
                StopReason::Error
            },
            error_message: Some(error),
            timestamp: now_ms(),
            ..Default::default()
        });
        for event in [
            AgentEvent::MessageStart {
                message: message.clone(),
            },
            AgentEvent::MessageEnd {
                message: message.clone(),
            },
            AgentEvent::TurnEnd {
                message: message.clone(),
                tool_results: Vec::new(),
            },
            AgentEvent::AgentEnd {
                messages: vec![message.clone()],
            },
        ] {
            // A listener that panics again must not take the cleanup down with it.
            let _ = AssertUnwindSafe(self.deliver(event)).catch_unwind().await;
        }
    }
}

#[async_trait]
impl EventSink for AgentSink {
    async fn emit(&mut self, event: AgentEvent) {
        self.deliver(event).await;
    }
}

#[cfg(test)]
mod tests;
