//! [`AgentSession`]: the coding agent's session around [`pi_agent_core::Agent`].
//!
//! The session owns the tool registry and the active tool set, the [`PendingActionStore`] and the
//! [`ResolveRuntime`] over it, the [`ToolChoiceQueue`], and the wiring between them and the loop:
//!
//! * every model call takes its tool choice from the queue (a choice naming an inactive tool is
//!   rejected as `unavailable` and the call is not forced);
//! * at every `turn_end` the in-flight choice is settled by the assistant message's stop reason
//!   (`aborted` / `error` reject it, anything else resolves it), as oh-my-pi does;
//! * a staged preview (or a failed apply / discard) owes the model the hidden `resolve-reminder`
//!   message, steered at the next turn boundary only while something is still pending, and forces
//!   `resolve` until the stack is empty, with a circuit breaker (see `forcing.rs` and
//!   `docs/resolve.md`);
//! * a model's `resolve` acts only on a preview the model has seen: one staged in the same
//!   assistant message is refused (every model call marks the pending actions as seen);
//! * custom messages reach the model as user messages ([`crate::messages::convert_to_llm`]).
//!
//! Listeners registered with [`AgentSession::subscribe`] get every agent event and the
//! session's own events ([`SessionEvent`]).
//!
//! ```
//! # tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async {
//! use pi_agent_core::faux::{FauxModel, faux_assistant_text};
//! use pi_coding_agent::{AgentSession, SessionOptions};
//!
//! let faux = FauxModel::new();
//! faux.set_responses([faux_assistant_text("hello")]);
//! let options = SessionOptions::new(std::env::temp_dir(), faux.model())
//!     .stream_fn(faux.stream_fn())
//!     .tools(["read", "ast_edit"]);
//! let session = AgentSession::new(options).unwrap();
//! assert_eq!(session.active_tool_names(), ["read", "ast_edit", "resolve"]);
//! session.prompt("hi").await.unwrap();
//! assert_eq!(session.agent().messages().len(), 2);
//! # });
//! ```

mod event;
mod expand;
mod registry;

pub use event::SessionEvent;
pub use registry::{RegisteredTool, ToolOrigin, ToolRegistry};

mod queued;
use queued::{QueuedTexts, queued_text};

mod options;
pub use options::{SessionOptions, SessionSettings};

mod extensions;
mod retry;
use retry::RetryState;
pub use retry::is_retryable;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};

use pi_agent_core::{
    Agent, AgentError, AgentEvent, AgentMessage, AgentOptions, AgentTool, PromptInput, StopReason, ToolChoice,
    ToolError, ToolResult, lock,
};

use crate::ast::{AstEditTool, AstGrepTool};
use crate::config::AgentRetry;
use crate::custom_tools::{
    CustomTool, CustomTools, LoadError, SessionView, SessionViewSlot, ToolApi, ToolSessionEvent, UiSlot,
};
use crate::extensions::events::{AgentEvents, EventQueue, ExtensionSlot};
use crate::resolve::{
    DirectiveOptions, ForcingStopped, PendingActionStore, RejectOutcome, RejectReason, ResolveAction, ResolveForcing,
    ResolveParams, ResolveRuntime, ResolveTool, StandingHandler, ToolChoiceQueue, resolve_reminder,
};
use crate::ui::{NoUi, ToolUi};

/// Errors of the session API, with the texts users and models see.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// A requested tool name the registry does not hold.
    #[error("Unknown tool: {0}")]
    UnknownTool(String),
    /// Registering a second tool with a taken name.
    #[error("Tool name \"{0}\" conflicts with existing tool")]
    NameConflict(String),
    /// `/force` of a tool that is not active.
    #[error("Tool \"{0}\" is not currently active.")]
    ToolNotActive(String),
    /// `/force` with a model whose API has no named tool choice.
    #[error("Current model does not support forcing a specific tool.")]
    ForcingUnsupported,
}

/// Whether a wire API can force one named tool (Anthropic `{type:"tool",name}`, OpenAI and
/// Mistral `{type:"function",name}`, Gemini and Vertex `allowedFunctionNames`, the faux model).
pub fn supports_named_tool_choice(api: &str) -> bool {
    matches!(
        api,
        "anthropic-messages"
            | "google-generative-ai"
            | "google-vertex"
            | "mistral-conversations"
            | "bedrock-converse-stream"
            | "openai-completions"
            | "openai-responses"
            | "openai-codex-responses"
            | "azure-openai-responses"
            | "ollama-chat"
            | "faux"
    )
}

type Listener = Arc<dyn Fn(&SessionEvent) + Send + Sync>;

struct Inner {
    agent: Agent,
    cwd: PathBuf,
    sandbox: Option<pi_tools::Sandbox>,
    registry: RwLock<ToolRegistry>,
    requested_tools: Mutex<Vec<String>>,
    runtime: ResolveRuntime,
    queue: ToolChoiceQueue,
    forcing: Arc<ResolveForcing>,
    listeners: Mutex<Arc<Vec<(u64, Listener)>>>,
    next_listener: AtomicU64,
    ui: UiSlot,
    /// What custom tools read of the session at every call (installed by [`crate::App`]).
    session_view: SessionViewSlot,
    custom_tools: RwLock<Vec<Arc<dyn CustomTool>>>,
    /// A reminder is owed (a preview was staged, or a resolve failed and left it pending): the
    /// source tool's name. Steered at the next turn boundary if something is still pending.
    reminder_due: Mutex<Option<String>>,
    /// Texts of the user messages queued through [`AgentSession::steer`] / `follow_up` and not
    /// delivered yet, as `queue_update` reports them.
    queued: Mutex<QueuedTexts>,
    /// The automatic retry of failed turns.
    retry: RetryState,
    /// The skills and prompt templates user messages are expanded with.
    resources: Mutex<Arc<crate::resources::Resources>>,
    /// The loaded extensions, read by the loop hooks when they run (`None`: no hooks installed).
    extensions: ExtensionSlot,
    /// Whether a runner is set (checked before anything else is done for extensions).
    has_extensions: AtomicBool,
    /// The loop hooks were installed (once, with the first runner).
    extension_hooks: AtomicBool,
    /// The agent's notification events on their way to the extensions.
    extension_queue: Arc<EventQueue>,
    /// Turns agent events into extension events (the turn index).
    extension_events: AgentEvents,
}

/// Removes its listener when passed to [`SessionSubscription::unsubscribe`].
pub struct SessionSubscription {
    id: u64,
    inner: Weak<Inner>,
}

impl SessionSubscription {
    /// Stops delivering events to the listener.
    pub fn unsubscribe(self) {
        if let Some(inner) = self.inner.upgrade() {
            let mut listeners = lock(&inner.listeners);
            let kept: Vec<_> = listeners.iter().filter(|(id, _)| *id != self.id).cloned().collect();
            *listeners = Arc::new(kept);
        }
    }
}

/// The coding agent's session. Clones share the session.
#[derive(Clone)]
pub struct AgentSession {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for AgentSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSession")
            .field("cwd", &self.inner.cwd)
            .field("active_tools", &self.active_tool_names())
            .field("pending", &self.pending_actions().labels())
            .finish()
    }
}

/// pi's default active tools.
pub const DEFAULT_ACTIVE_TOOLS: [&str; 4] = pi_tools::DEFAULT_TOOLS;

impl AgentSession {
    /// Builds the registry (the built-ins, `ast_edit` / `ast_grep` unless disabled, `resolve`
    /// when a registered tool can stage previews, then `extra_tools`), selects the active tools
    /// and wires the agent.
    pub fn new(options: SessionOptions) -> Result<Self, SessionError> {
        let store = PendingActionStore::new();
        let runtime = ResolveRuntime::new(store.clone());
        let queue = ToolChoiceQueue::new();
        let registry = build_registry(&options, &runtime, &queue)?;
        let requested: Vec<String> = match &options.tools {
            Some(names) => names.clone(),
            None => DEFAULT_ACTIVE_TOOLS.iter().map(|s| (*s).to_owned()).collect(),
        };
        let active = registry.select_active(&requested, false)?;

        let mut agent_options = AgentOptions::new(options.model.clone()).tools(active);
        agent_options.system_prompt = options.system_prompt.clone();
        agent_options.thinking_level = options.thinking_level;
        agent_options.messages = options.messages.clone();
        agent_options.config.stream_fn = options.stream_fn.clone();
        agent_options.config.tool_execution = options.settings.tool_execution;
        agent_options.config.convert_to_llm = Some(if options.settings.block_images {
            // pi's defence in depth: whatever added an image, none reaches the provider.
            Arc::new(|messages: &[AgentMessage]| {
                crate::messages::block_images(crate::messages::convert_to_llm(messages))
            })
        } else {
            Arc::new(crate::messages::convert_to_llm)
        });
        let agent = Agent::new(agent_options);

        let inner = Arc::new_cyclic(|weak: &Weak<Inner>| {
            let supports = {
                let agent = agent.clone();
                Arc::new(move || supports_named_tool_choice(&agent.model().api))
            };
            let stopped = {
                let weak = weak.clone();
                Arc::new(move |stopped: ForcingStopped| {
                    if let Some(inner) = weak.upgrade() {
                        inner.emit(&SessionEvent::ResolveForcingStopped(stopped));
                    }
                })
            };
            let forcing = ResolveForcing::new(
                runtime.clone(),
                queue.clone(),
                options.settings.resolve_force_limit,
                supports,
                stopped,
            );
            Inner {
                agent,
                cwd: options.cwd.clone(),
                sandbox: options.settings.sandbox.clone(),
                registry: RwLock::new(registry),
                requested_tools: Mutex::new(requested),
                runtime,
                queue,
                forcing,
                listeners: Mutex::new(Arc::new(Vec::new())),
                next_listener: AtomicU64::new(0),
                ui: Arc::new(RwLock::new(Arc::new(NoUi))),
                session_view: SessionViewSlot::default(),
                custom_tools: RwLock::new(Vec::new()),
                reminder_due: Mutex::new(None),
                queued: Mutex::new(QueuedTexts::default()),
                retry: RetryState::new(options.settings.retry),
                resources: Mutex::new(Arc::default()),
                extensions: ExtensionSlot::default(),
                has_extensions: AtomicBool::new(false),
                extension_hooks: AtomicBool::new(false),
                extension_queue: Arc::new(EventQueue::default()),
                extension_events: AgentEvents::default(),
            }
        });
        wire(&inner);
        Ok(AgentSession { inner })
    }

    /// The agent.
    pub fn agent(&self) -> &Agent {
        &self.inner.agent
    }

    /// The tools' working directory.
    pub fn cwd(&self) -> &Path {
        &self.inner.cwd
    }

    /// What tools may ask the user ([`NoUi`] until a mode installs its own).
    pub fn ui(&self) -> Arc<dyn ToolUi> {
        self.inner.ui.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Installs the mode's user interface for tools.
    pub fn set_ui(&self, ui: Arc<dyn ToolUi>) {
        *self.inner.ui.write().unwrap_or_else(|p| p.into_inner()) = ui;
    }

    /// The slot holding the user interface, for custom tools that read it at every use.
    pub fn ui_slot(&self) -> UiSlot {
        self.inner.ui.clone()
    }

    /// The API custom tools of this session are created with: its cwd, its pending-action store,
    /// its user interface, its sandbox.
    pub fn tool_api(&self) -> ToolApi {
        ToolApi::new(self.inner.cwd.clone())
            .with_pending_store(self.pending_actions().clone())
            .with_ui_slot(self.ui_slot())
            .with_session_view_slot(self.inner.session_view.clone())
            .with_sandbox(self.inner.sandbox.clone())
    }

    /// The sandbox of `bash` and custom-tool processes, when it is on.
    pub fn sandbox(&self) -> Option<&pi_tools::Sandbox> {
        self.inner.sandbox.as_ref()
    }

    /// Installs (or removes) what custom tools read of the session at every call: its branch,
    /// session file, model and registry (pi's `CustomToolContext`). [`crate::App`] installs itself.
    pub fn set_session_view(&self, view: Option<Arc<dyn SessionView>>) {
        *self.inner.session_view.write().unwrap_or_else(|p| p.into_inner()) = view;
    }

    /// Registers loaded custom tools (they may stage pending actions, so they count as
    /// preview-capable) and keeps them for session events. Returns the names registered; a name
    /// the registry already holds is reported in the errors instead.
    pub fn add_custom_tools(&self, tools: &CustomTools) -> (Vec<String>, Vec<LoadError>) {
        let mut names = Vec::new();
        let mut errors = Vec::new();
        for loaded in &tools.tools {
            let tool: Arc<dyn AgentTool> = loaded.tool.clone();
            match self.register_tool(RegisteredTool::custom(tool, loaded.path.clone())) {
                Ok(()) => {
                    names.push(loaded.tool.name().to_owned());
                    self.inner
                        .custom_tools
                        .write()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(loaded.tool.clone());
                }
                Err(error) => errors.push(LoadError {
                    origin: loaded.origin.clone(),
                    error: error.to_string(),
                }),
            }
        }
        (names, errors)
    }

    /// Registers `tool` in the place of the built-in tool of its name (an extension's override,
    /// pi's "Overriding Built-in Tools") and keeps it for session events; `false` (nothing
    /// changed) when no built-in has that name.
    pub fn override_builtin(&self, tool: Arc<dyn CustomTool>, path: Option<PathBuf>) -> bool {
        let registered = RegisteredTool::custom(tool.clone(), path);
        let replaced = self
            .inner
            .registry
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .replace_builtin(registered)
            .is_some();
        if replaced {
            self.inner
                .custom_tools
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .push(tool);
        }
        replaced
    }

    /// The custom tool called `name`, for its renderers.
    pub fn custom_tool(&self, name: &str) -> Option<Arc<dyn CustomTool>> {
        self.inner
            .custom_tools
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .find(|tool| tool.name() == name)
            .cloned()
    }

    /// Sends `event` to every custom tool's `on_session`, one after another.
    pub async fn emit_tool_session_event(&self, event: &ToolSessionEvent) {
        let tools = self
            .inner
            .custom_tools
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        for tool in tools {
            tool.on_session(event).await;
        }
    }

    /// The pending-action stack.
    pub fn pending_actions(&self) -> &PendingActionStore {
        self.inner.runtime.store()
    }

    /// The resolve runtime.
    pub fn resolve_runtime(&self) -> &ResolveRuntime {
        &self.inner.runtime
    }

    /// The tool-choice queue.
    pub fn tool_choice_queue(&self) -> &ToolChoiceQueue {
        &self.inner.queue
    }

    /// True after the session stopped forcing `resolve` for the current pending actions.
    pub fn resolve_forcing_stopped(&self) -> bool {
        self.inner.forcing.stopped()
    }

    /// Sends a prompt (a text, a message, messages) and waits until the run ends — with its
    /// automatic retries when it failed with a transient error (`retry.*`, see `retry.rs`).
    ///
    /// A user message starting with `/skill:name` or `/template` is expanded first
    /// ([`Self::expand_message`]). With extensions, `before_agent_start` goes next: the custom
    /// messages they inject follow the prompt, and the system prompt they chain is the one of this
    /// run only. The prompt returns once the extensions have handled the run's events (`agent_end`
    /// included).
    pub async fn prompt(&self, input: impl Into<PromptInput>) -> Result<(), AgentError> {
        let PromptInput::Messages(mut messages) = input.into();
        if let Some(first) = messages.first_mut() {
            let message = std::mem::replace(first, AgentMessage::user(""));
            *first = self.expand_message(message).await;
        }
        let mut input = PromptInput::Messages(messages);
        let base_prompt = self.before_agent_start(&mut input).await;
        let result = self.inner.agent.prompt(input).await;
        if result.is_ok() {
            let inner = &self.inner;
            inner
                .retry
                .retry_failed_runs(&inner.agent, |event| inner.emit(event))
                .await;
        }
        self.extension_events_drained().await;
        if let Some(base) = base_prompt {
            self.inner.agent.set_system_prompt(base);
        }
        result
    }

    /// Runs the agent on from its transcript (pi's `continue`, as after an overflow compaction)
    /// and waits until the run ends, with the same automatic retries as [`Self::prompt`].
    pub async fn continue_run(&self) -> Result<(), AgentError> {
        self.inner.agent.continue_run().await?;
        let inner = &self.inner;
        inner
            .retry
            .retry_failed_runs(&inner.agent, |event| inner.emit(event))
            .await;
        self.extension_events_drained().await;
        Ok(())
    }

    /// Cancels the wait of a retry in progress and ends it (pi's `abortRetry`; RPC
    /// `abort_retry`); does nothing when no retry waits.
    pub fn abort_retry(&self) {
        if let Some(end) = self.inner.retry.abort() {
            self.inner.emit(&end.into());
        }
    }

    /// Whether a retry is in progress: from the failed run until the retry ends (pi's
    /// `isRetrying`).
    pub fn is_retrying(&self) -> bool {
        self.inner.retry.is_retrying()
    }

    /// Retries made since the last answer that did not fail (pi's `retryAttempt`; 0 when none).
    pub fn retry_attempt(&self) -> u32 {
        self.inner.retry.attempt()
    }

    /// The retry settings in force.
    pub fn retry_settings(&self) -> AgentRetry {
        self.inner.retry.settings()
    }

    /// Replaces the retry settings.
    pub fn set_retry_settings(&self, settings: AgentRetry) {
        self.inner.retry.set_settings(settings);
    }

    /// Turns the automatic retry on or off (pi's `setAutoRetryEnabled`; [`crate::App`] also
    /// saves it as `retry.enabled`).
    pub fn set_auto_retry_enabled(&self, enabled: bool) {
        self.inner.retry.set_enabled(enabled);
    }

    /// Queues a steering message; a user message's text joins the `queue_update` lists. Expand
    /// a typed message first with [`Self::expand_message`] (pi's `steer` does).
    pub fn steer(&self, message: impl Into<AgentMessage>) {
        let message = message.into();
        if let Some(text) = queued_text(&message) {
            lock(&self.inner.queued).push_steering(text);
            self.inner.emit_queue_update();
        }
        self.inner.agent.steer(message);
    }

    /// Queues a follow-up message; a user message's text joins the `queue_update` lists. Expand
    /// a typed message first with [`Self::expand_message`] (pi's `followUp` does).
    pub fn follow_up(&self, message: impl Into<AgentMessage>) {
        let message = message.into();
        if let Some(text) = queued_text(&message) {
            lock(&self.inner.queued).push_follow_up(text);
            self.inner.emit_queue_update();
        }
        self.inner.agent.follow_up(message);
    }

    /// Removes every steering and follow-up message not delivered yet and returns them (steering
    /// first, each oldest first); sends `queue_update` with both lists empty, as pi does.
    pub fn clear_queues(&self) -> Vec<AgentMessage> {
        let cleared = self.inner.agent.clear_all_queues();
        *lock(&self.inner.queued) = QueuedTexts::default();
        self.inner.emit_queue_update();
        cleared
    }

    /// How many steering and follow-up messages wait (pi's `pendingMessageCount`).
    pub fn pending_message_count(&self) -> usize {
        lock(&self.inner.queued).len()
    }

    /// Sends `event` to every listener (for the session events the app layer raises).
    pub(crate) fn emit(&self, event: &SessionEvent) {
        self.inner.emit(event);
    }

    /// Aborts a retry's wait and the run, waits until the agent is idle, then rejects any choice
    /// still in flight as `aborted` (a pending `resolve` is forced again on the next prompt).
    pub async fn abort(&self) {
        self.abort_retry();
        self.inner.agent.abort();
        self.inner.agent.wait_for_idle().await;
        if self.inner.queue.has_in_flight() {
            self.inner.queue.reject(RejectReason::Aborted);
        }
    }

    /// Drops every pending action, telling each through its `reject(reason)` callback (top first),
    /// and forgets the forcing directive and any reminder owed. Whatever ends the previews' life —
    /// a new, switched or forked session, a move in the tree — calls this. Returns the label and
    /// error text of every `reject` that failed (the action is dropped anyway).
    pub async fn drop_pending_actions(&self, reason: &str) -> Vec<(String, String)> {
        let failures = self.inner.runtime.drop_all(reason).await;
        self.inner.queue.clear();
        *lock(&self.inner.reminder_due) = None;
        self.inner.forcing.reset();
        failures
    }

    /// Applies or discards the top pending action for the user (the keyboard in the TUI), exactly
    /// as a model's `resolve` call would.
    pub async fn resolve_pending(&self, action: ResolveAction, reason: &str) -> Result<ToolResult, ToolError> {
        self.inner.runtime.resolve(ResolveParams::new(action, reason)).await
    }

    /// Installs or clears the standing resolve handler; `resolve` becomes active while one is
    /// installed.
    pub fn set_standing_resolve_handler(&self, handler: Option<StandingHandler>) {
        self.inner.runtime.set_standing_handler(handler);
        let requested = lock(&self.inner.requested_tools).clone();
        // The names were valid when they were set, so selecting them again cannot fail.
        let _ = self.set_active_tools(requested);
    }

    /// Forces the next model call to `name`, then `none` (the user's `/force <tool>`).
    pub fn set_forced_tool_choice(&self, name: &str) -> Result<(), SessionError> {
        if !self.is_active(name) {
            return Err(SessionError::ToolNotActive(name.to_owned()));
        }
        if !supports_named_tool_choice(&self.inner.agent.model().api) {
            return Err(SessionError::ForcingUnsupported);
        }
        self.inner.queue.push_sequence(
            [ToolChoice::Tool(name.to_owned()), ToolChoice::None],
            DirectiveOptions::new()
                .label("user-force")
                .on_rejected(|_, _| RejectOutcome::Requeue),
        );
        Ok(())
    }

    /// The tool choice for the next model call (what the agent asks before every call).
    pub fn next_tool_choice(&self) -> Option<ToolChoice> {
        self.inner.next_tool_choice()
    }

    /// A copy of the registry.
    pub fn tool_registry(&self) -> ToolRegistry {
        self.inner.registry.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Registers one more tool; it becomes active when its name is in the active set.
    pub fn register_tool(&self, tool: RegisteredTool) -> Result<(), SessionError> {
        self.inner
            .registry
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .register(tool)
    }

    /// The names of the active tools, in the order the model sees them.
    pub fn active_tool_names(&self) -> Vec<String> {
        self.inner.agent.tools().iter().map(|t| t.name().to_owned()).collect()
    }

    /// Selects the active tools by name (`resolve` is added by the session's rule); takes effect
    /// at the next run.
    pub fn set_active_tools<S: Into<String>>(&self, names: impl IntoIterator<Item = S>) -> Result<(), SessionError> {
        let names: Vec<String> = names.into_iter().map(Into::into).collect();
        let standing = self.inner.runtime.has_standing_handler();
        let active = self
            .inner
            .registry
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .select_active(&names, standing)?;
        *lock(&self.inner.requested_tools) = names;
        self.inner.agent.set_tools(active);
        Ok(())
    }

    fn is_active(&self, name: &str) -> bool {
        self.inner.is_active(name)
    }

    /// Calls `listener` with every session event until the subscription is dropped through
    /// [`SessionSubscription::unsubscribe`].
    pub fn subscribe(&self, listener: impl Fn(&SessionEvent) + Send + Sync + 'static) -> SessionSubscription {
        let id = self.inner.next_listener.fetch_add(1, Ordering::Relaxed);
        let mut listeners = lock(&self.inner.listeners);
        let mut next: Vec<_> = listeners.iter().cloned().collect();
        next.push((id, Arc::new(listener) as Listener));
        *listeners = Arc::new(next);
        SessionSubscription {
            id,
            inner: Arc::downgrade(&self.inner),
        }
    }
}

impl Inner {
    fn emit(&self, event: &SessionEvent) {
        let listeners = lock(&self.listeners).clone();
        for (_, listener) in listeners.iter() {
            listener(event);
        }
    }

    fn emit_queue_update(&self) {
        let event = lock(&self.queued).event();
        self.emit(&event);
    }

    /// A queued user message is being delivered: it leaves its list (steering first, as pi
    /// looks), and `queue_update` goes out before its `message_start`.
    fn dequeue_delivered(&self, message: &AgentMessage) {
        let Some(text) = queued_text(message) else {
            return;
        };
        let removed = lock(&self.queued).remove_delivered(&text);
        if removed {
            self.emit_queue_update();
        }
    }

    fn is_active(&self, name: &str) -> bool {
        self.agent.tools().iter().any(|t| t.name() == name)
    }

    fn next_tool_choice(&self) -> Option<ToolChoice> {
        self.forcing.next_tool_choice(|name| self.is_active(name))
    }

    /// At a turn boundary (the start of a run, the end of a turn that goes on): steers the
    /// reminder if one is owed and something is still pending. An owed reminder whose actions
    /// were resolved meanwhile is dropped — the reminder is sent only while something is pending.
    fn deliver_reminder(&self) {
        let Some(tool_name) = lock(&self.reminder_due).take() else {
            return;
        };
        if self.runtime.store().has_pending() {
            self.agent.steer(resolve_reminder(&tool_name));
        }
    }
}

fn build_registry(
    options: &SessionOptions,
    runtime: &ResolveRuntime,
    queue: &ToolChoiceQueue,
) -> Result<ToolRegistry, SessionError> {
    let mut registry = ToolRegistry::new();
    let mut env = pi_tools::ToolEnv::new(options.cwd.clone());
    env.shell = options.settings.shell.clone();
    env.shell_command_prefix = options.settings.shell_command_prefix.clone();
    env.sandbox = options.settings.sandbox.clone();
    env.auto_resize_images = options.settings.auto_resize_images;
    for name in pi_tools::ALL_TOOLS {
        let tool = pi_tools::create_tool(name, &env).map_err(|e| SessionError::UnknownTool(e.0))?;
        registry.register(RegisteredTool::builtin(tool))?;
    }
    if options.settings.ast_edit {
        let tool = AstEditTool::new(options.cwd.clone(), runtime.store().clone());
        registry.register(RegisteredTool::builtin(Arc::new(tool)).deferrable())?;
    }
    if options.settings.ast_grep {
        registry.register(RegisteredTool::builtin(Arc::new(AstGrepTool::new(options.cwd.clone()))))?;
    }
    let resolve = ResolveTool::new(runtime.clone(), Some(queue.clone())).requiring_seen();
    registry.register(RegisteredTool::builtin(Arc::new(resolve)).hidden())?;
    for tool in &options.extra_tools {
        registry.register(tool.clone())?;
    }
    Ok(registry)
}

/// Connects the agent, the store and the runtime to the session.
fn wire(inner: &Arc<Inner>) {
    let weak = Arc::downgrade(inner);
    inner.agent.update_config(|config| {
        config.get_tool_choice = Some(Arc::new(move |_messages: &[AgentMessage]| {
            weak.upgrade().and_then(|inner| inner.next_tool_choice())
        }));
    });

    let weak = Arc::downgrade(inner);
    inner.agent.subscribe(move |event, _cancel| {
        let Some(inner) = weak.upgrade() else {
            return;
        };
        // The extensions first, as pi does (queued: the run does not wait for them).
        if inner.has_extensions.load(Ordering::SeqCst) {
            inner
                .extension_events
                .on_agent_event(&inner.extensions, &inner.extension_queue, event);
        }
        match event {
            AgentEvent::AgentStart => inner.deliver_reminder(),
            // The retry is decided now, as pi decides it in its `agent_end` handler: a change of
            // the setting by whoever hears `agent_end` is for the next failure.
            AgentEvent::AgentEnd { .. } => inner.retry.on_agent_end(),
            AgentEvent::MessageStart { message } => inner.dequeue_delivered(message),
            AgentEvent::TurnEnd { message, .. } => {
                if let Some(assistant) = message.as_assistant() {
                    inner.forcing.finish_turn(assistant.stop_reason);
                    // A failed or aborted turn ends the run: the reminder waits for the next one.
                    if !matches!(assistant.stop_reason, StopReason::Aborted | StopReason::Error) {
                        inner.deliver_reminder();
                    }
                }
            }
            _ => {}
        }
        inner.emit(&SessionEvent::Agent(event.clone()));
        // After the `message_end` it ends, as pi sends it.
        if let AgentEvent::MessageEnd { message } = event
            && let Some(assistant) = message.as_assistant()
            && let Some(end) = inner.retry.on_assistant_end(assistant)
        {
            inner.emit(&end.into());
        }
    });

    let weak = Arc::downgrade(inner);
    inner.runtime.store().subscribe_push(move |action, pending| {
        let Some(inner) = weak.upgrade() else {
            return;
        };
        *lock(&inner.reminder_due) = Some(action.source_tool_name.clone());
        inner.forcing.on_push();
        inner.emit(&SessionEvent::PendingActionPushed {
            label: action.label.clone(),
            source_tool_name: action.source_tool_name.clone(),
            pending,
        });
    });

    let weak = Arc::downgrade(inner);
    inner.runtime.subscribe(move |outcome| {
        let Some(inner) = weak.upgrade() else {
            return;
        };
        inner.forcing.on_outcome(outcome);
        if !outcome.standing && !outcome.succeeded() {
            // A failed apply or discard leaves the action on top: remind the model that it still
            // has to decide.
            *lock(&inner.reminder_due) = Some(outcome.source_tool_name.clone());
        }
        inner.emit(&SessionEvent::Resolved(outcome.clone()));
    });
}
