//! [`App`]: a running `pi` — the [`AgentSession`] and the session file it is recorded to, with the
//! operations the modes share (model and thinking changes, new / switched / forked sessions,
//! statistics).
//!
//! Every message that ends in the agent is appended to the [`SessionManager`] as it ends (custom
//! messages as `custom_message` entries, everything else as `message` entries), so a crash loses at
//! most the message being streamed. A failed write is reported through the warning callback and the
//! run goes on.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use pi_agent_core::{
    AgentError, AgentEvent, AgentMessage, ContentBlock, CustomMessage, Model, StopReason, ThinkingLevel, UserContent,
};
use pi_ai::{ModelRegistry, ProviderConfigError, SharedRegistry};
use serde_json::{Value, json};

use crate::config::{parse_thinking_level, thinking_level_name};
use crate::custom_tools::{BranchDelta, SessionView};
use crate::session::{AgentSession, SessionEvent, SessionSubscription};
use pi_session_store::{EntryKind, SessionManager, SessionRoot, StoreError};

/// Why an [`App`] operation (new, switched, forked or moved session, listing) failed; the texts
/// are the ones pi shows.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// A run is active (or being reset): the session cannot change under it.
    #[error(transparent)]
    Busy(#[from] AgentError),
    /// The session file or directory could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// No entry of the session has this id.
    #[error("Entry {0} not found")]
    EntryNotFound(String),
    /// The entry exists but is not a user message (forking needs one).
    #[error("Entry {0} is not a user message")]
    NotUserMessage(String),
    /// The session has no entry to clone up to.
    #[error("Cannot clone session: no current entry selected")]
    NothingToClone,
    /// An extension cancelled it (`session_before_switch`, `session_before_fork`,
    /// `session_before_tree`); RPC answers `{"cancelled": true}`.
    #[error("Cancelled by an extension")]
    Cancelled,
    /// A branch summary was asked for without a model.
    #[error("No model available for summarization")]
    NoModelForSummary,
    /// The branch summary request failed (the model's error).
    #[error("{0}")]
    BranchSummary(String),
    /// Another navigation of the session tree (and its branch summary) is under way.
    #[error("Already navigating the session tree; wait for it or abort its summary")]
    Navigating,
    /// An extension's model call (`ai.complete`) named a model the registry does not know.
    #[error("Model not found: {provider}/{id}")]
    ModelNotFound {
        /// The provider asked for.
        provider: String,
        /// The model id asked for.
        id: String,
    },
    /// No model can be called (no stream function is configured).
    #[error("No model selected")]
    NoModel,
    /// Listing the sessions was interrupted (its blocking task panicked or was cancelled).
    #[error("listing sessions was interrupted: {0}")]
    Interrupted(#[from] tokio::task::JoinError),
}

/// Receives warnings that must not stop the run (a failed session write, a torn line).
pub type WarnFn = Arc<dyn Fn(String) + Send + Sync>;

struct Inner {
    session: AgentSession,
    store: Mutex<SessionManager>,
    registry: SharedRegistry,
    /// Where new and forked sessions go; `None` with `--no-session`.
    root: Option<SessionRoot>,
    warn: WarnFn,
    /// Messages added while a run streamed ([`App::add_message`]), for the next prompt.
    deferred: Mutex<Vec<AgentMessage>>,
    /// The models cycling goes through (`--models`, `enabledModels`); empty: every available one.
    scoped_models: Mutex<Vec<crate::ScopedModel>>,
    /// Where model and thinking choices are saved ([`App::save_choices_to`]).
    choices: Mutex<Option<SavedChoices>>,
    /// Compaction settings, hooks and the running compaction (`compact.rs`).
    compaction: crate::compaction::CompactionState,
    /// The extensions' compaction hook was added.
    extension_hook: std::sync::atomic::AtomicBool,
}

/// The global settings file model and thinking choices go to, pi's way.
struct SavedChoices {
    file: PathBuf,
    /// `defaultThinkingLevel` as last read or written.
    default_thinking: Option<ThinkingLevel>,
    /// Keys not yet written; a writer takes them all, so a later change is never overwritten by
    /// an earlier one.
    pending: Arc<Mutex<serde_json::Map<String, Value>>>,
    /// The writes started on the runtime and not yet awaited ([`App::wait_for_saved_choices`]).
    writes: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>,
}

/// Serialises the writes of the settings file within this process.
static SETTINGS_WRITE: Mutex<()> = Mutex::new(());

/// A running session and its file. Clones share it.
#[derive(Clone)]
pub struct App {
    inner: Arc<Inner>,
    _recorder: Arc<RecorderGuard>,
}

struct RecorderGuard(Mutex<Option<SessionSubscription>>);

impl Drop for RecorderGuard {
    fn drop(&mut self) {
        if let Some(subscription) = pi_agent_core::lock(&self.0).take() {
            subscription.unsubscribe();
        }
    }
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("session", &self.inner.session)
            .field("file", &self.session_file())
            .finish()
    }
}

/// A user message of the session's tree (see [`App::user_messages`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserMessageEntry {
    /// The entry id.
    pub id: String,
    /// The message's text.
    pub text: String,
    /// How many forks lie above it (for indentation).
    pub level: usize,
    /// Whether it is on the current branch.
    pub on_branch: bool,
}

/// Statistics of the current session (RPC `get_session_stats`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SessionStats {
    /// User messages.
    pub user_messages: usize,
    /// Assistant messages.
    pub assistant_messages: usize,
    /// Tool calls made by the assistant.
    pub tool_calls: usize,
    /// Tool results.
    pub tool_results: usize,
    /// Every message.
    pub total_messages: usize,
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Cache-read tokens.
    pub cache_read: u64,
    /// Cache-write tokens.
    pub cache_write: u64,
    /// Dollars.
    pub cost: f64,
}

fn lock(mutex: &Mutex<SessionManager>) -> MutexGuard<'_, SessionManager> {
    pi_agent_core::lock(mutex)
}

impl App {
    /// Records `session` into `store` from now on; `root` is where new and forked sessions go
    /// (`None` keeps them in memory).
    pub fn new(
        session: AgentSession,
        store: SessionManager,
        registry: impl Into<SharedRegistry>,
        root: Option<SessionRoot>,
        warn: WarnFn,
    ) -> Self {
        let inner = Arc::new(Inner {
            session,
            store: Mutex::new(store),
            registry: registry.into(),
            root,
            warn,
            deferred: Mutex::new(Vec::new()),
            scoped_models: Mutex::new(Vec::new()),
            choices: Mutex::new(None),
            compaction: crate::compaction::CompactionState::default(),
            extension_hook: std::sync::atomic::AtomicBool::new(false),
        });
        let weak = Arc::downgrade(&inner);
        inner.session.set_session_view(Some(Arc::new(AppView(weak.clone()))));
        let subscription = inner.session.subscribe(move |event| {
            if let (Some(inner), SessionEvent::Agent(AgentEvent::MessageEnd { message })) = (weak.upgrade(), event) {
                inner.record(message);
            }
        });
        let app = App {
            inner,
            _recorder: Arc::new(RecorderGuard(Mutex::new(Some(subscription)))),
        };
        app.sync_session_id();
        app
    }

    /// Gives the model calls the session's id (pi-ai's `sessionId`: the Responses API's
    /// `prompt_cache_key`), also for a session that is not written (`--no-session`).
    fn sync_session_id(&self) {
        let id = self.with_store(|store| store.header().id.clone());
        self.inner
            .session
            .agent()
            .update_config(|config| config.session_id = Some(id));
    }

    /// The session.
    pub fn session(&self) -> &AgentSession {
        &self.inner.session
    }

    /// Sets the models cycling goes through (`--models`, the `enabledModels` setting).
    pub fn set_scoped_models(&self, scope: Vec<crate::ScopedModel>) {
        *pi_agent_core::lock(&self.inner.scoped_models) = scope;
    }

    /// The models cycling goes through; empty when every available model is in the cycle.
    pub fn scoped_models(&self) -> Vec<crate::ScopedModel> {
        pi_agent_core::lock(&self.inner.scoped_models).clone()
    }

    /// The model registry now (extensions may change it: [`App::register_provider`]).
    pub fn registry(&self) -> Arc<ModelRegistry> {
        self.inner.registry.current()
    }

    /// An extension's `pi.registerProvider(name, config)` after start-up: the registry changes at
    /// once ([`SharedRegistry::register_provider`]) and the session's model, when it is one of the
    /// provider's, is replaced by its new definition (pi's `_refreshCurrentModelFromRegistry`: no
    /// `model_select`, nothing written).
    pub fn register_provider(&self, name: &str, config: &serde_json::Value) -> Result<(), ProviderConfigError> {
        self.inner.registry.register_provider(name, config)?;
        self.refresh_model_from_registry();
        Ok(())
    }

    /// `pi.unregisterProvider(name)`: the provider's models go, built-in ones it replaced come
    /// back; the session's model is refreshed as by [`App::register_provider`].
    pub fn unregister_provider(&self, name: &str) {
        if self.inner.registry.unregister_provider(name) {
            self.refresh_model_from_registry();
        }
    }

    fn refresh_model_from_registry(&self) {
        let agent = self.inner.session.agent();
        let current = agent.model();
        if let Some(refreshed) = self.registry().find(&current.provider, &current.id)
            && *refreshed != current
        {
            agent.set_model(refreshed.clone());
        }
    }

    /// Runs `f` with the session file's manager.
    pub fn with_store<R>(&self, f: impl FnOnce(&mut SessionManager) -> R) -> R {
        f(&mut lock(&self.inner.store))
    }

    /// The session file, once there is one.
    pub fn session_file(&self) -> Option<PathBuf> {
        self.with_store(|store| store.file().map(Path::to_path_buf))
    }

    /// The session header as JSON (the first line of `--mode json`).
    pub fn header_json(&self) -> Value {
        self.with_store(|store| serde_json::to_value(store.header()).unwrap_or(Value::Null))
    }

    /// Loads the file's context into the agent: its messages, its model unless `keep_model`, and
    /// its thinking level unless `keep_thinking` (what the user chose on the command line wins).
    /// The thinking level is clamped to the model's levels (off for a model that cannot reason),
    /// whichever way it was chosen.
    pub fn restore(&self, keep_model: bool, keep_thinking: bool) {
        let context = self.with_store(|store| store.build_context());
        let agent = self.inner.session.agent();
        agent.set_messages(context.messages);
        if !keep_model
            && let Some((provider, id)) = &context.model
            && let Some(model) = self.registry().find(provider, id).cloned()
        {
            let previous = agent.model();
            agent.set_model(model.clone());
            self.model_selected(&model, &previous, ModelSelectSource::Restore);
        }
        if !keep_thinking && let Some(level) = context.thinking_level.as_deref().and_then(parse_thinking_level) {
            agent.set_thinking_level(level);
        }
        let model = agent.model();
        agent.set_thinking_level(model.clamp_thinking_level(agent.thinking_level()));
    }

    /// Saves the model and thinking choices made from now on (not the ones of the command line)
    /// to the global settings file `file`, whose `defaultThinkingLevel` is `default_thinking`, as
    /// pi does: a model change writes `defaultProvider` and `defaultModel`; a thinking level that
    /// changes writes `defaultThinkingLevel` (unless it is `off` for a model that cannot reason).
    pub fn save_choices_to(&self, file: PathBuf, default_thinking: Option<ThinkingLevel>) {
        *pi_agent_core::lock(&self.inner.choices) = Some(SavedChoices {
            file,
            default_thinking,
            pending: Arc::default(),
            writes: Arc::default(),
        });
    }

    /// Writes `updates` to the settings file off the runtime's threads (at once without a
    /// runtime); a failure is a warning.
    fn save_choices(&self, updates: serde_json::Map<String, Value>) {
        let (file, pending, writes) = {
            let mut choices = pi_agent_core::lock(&self.inner.choices);
            let Some(choices) = choices.as_mut() else { return };
            if let Some(level) = updates.get("defaultThinkingLevel").and_then(Value::as_str) {
                choices.default_thinking = parse_thinking_level(level);
            }
            pi_agent_core::lock(&choices.pending).extend(updates);
            (choices.file.clone(), choices.pending.clone(), choices.writes.clone())
        };
        let warn = self.inner.warn.clone();
        let job = move || {
            let _one_writer = pi_agent_core::lock(&SETTINGS_WRITE);
            let updates = std::mem::take(&mut *pi_agent_core::lock(&pending));
            if updates.is_empty() {
                return;
            }
            if let Err(error) = crate::config::save_global_settings(&file, updates) {
                warn(error.to_string());
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                let write = runtime.spawn_blocking(job);
                let mut writes = pi_agent_core::lock(&writes);
                writes.retain(|write| !write.is_finished());
                writes.push(write);
            }
            Err(_) => job(),
        }
    }

    /// Waits until the model and thinking choices saved so far are in the settings file (they are
    /// written off the runtime's threads). Call it before the process exits: a choice made just
    /// before (an RPC `set_model`, then the end of input) is otherwise lost.
    pub async fn wait_for_saved_choices(&self) {
        let writes = {
            let choices = pi_agent_core::lock(&self.inner.choices);
            let Some(choices) = choices.as_ref() else { return };
            std::mem::take(&mut *pi_agent_core::lock(&choices.writes))
        };
        for write in writes {
            // A write that panicked has nothing left to wait for.
            let _ = write.await;
        }
    }

    /// Starts recording a session just opened or created, as pi 0.73 does: a session with messages
    /// gets its context back ([`restore`](Self::restore)) and, when its branch holds no
    /// `thinking_level_change`, one recording the level in force; a session without messages
    /// records the model it starts with (`model_change`), then its thinking level
    /// (`thinking_level_change`), so that `-c` brings both back. Like every entry before the first
    /// answer, they reach the file with it.
    pub fn start(&self, keep_model: bool, keep_thinking: bool) {
        let (has_messages, has_thinking) = self.with_store(|store| {
            let has_thinking = store
                .path_to_leaf()
                .iter()
                .any(|entry| matches!(entry.kind, EntryKind::ThinkingLevelChange { .. }));
            (!store.build_context().messages.is_empty(), has_thinking)
        });
        if has_messages {
            self.restore(keep_model, keep_thinking);
            if !has_thinking {
                self.record_thinking_level();
            }
        } else {
            self.record_model_and_thinking_level();
        }
    }

    /// Records the model and thinking level in force (the first entries of a new session).
    fn record_model_and_thinking_level(&self) {
        let model = self.inner.session.agent().model();
        self.write(|store| store.append_model_change(&model.provider, &model.id));
        self.record_thinking_level();
    }

    fn record_thinking_level(&self) {
        let level = self.inner.session.agent().thinking_level();
        self.write(|store| store.append_thinking_level_change(thinking_level_name(level)));
    }

    /// Switches the model, records the change and saves it as the default model; the thinking
    /// level carries over, clamped to the new model's levels (pi: from a model that cannot reason
    /// the saved default level, else `medium`).
    pub fn set_model(&self, model: Model) {
        self.set_model_and_thinking(model, None);
    }

    /// [`App::set_model`], then `thinking` when given (a scoped model's level, `--models
    /// sonnet:high`) instead of the level carried over: one `thinking_level_changed` at most, as
    /// pi's model cycling does.
    pub fn set_model_and_thinking(&self, model: Model, thinking: Option<ThinkingLevel>) {
        self.select_model(model, thinking, ModelSelectSource::Set);
    }

    /// [`App::set_model_and_thinking`], telling the extensions how the model was chosen
    /// (`model_select`'s `source`: cycling sends [`ModelSelectSource::Cycle`]).
    pub fn select_model(&self, model: Model, thinking: Option<ThinkingLevel>, source: ModelSelectSource) {
        let (provider, id) = (model.provider.clone(), model.id.clone());
        let agent = self.inner.session.agent();
        let previous = agent.model();
        let level = thinking.unwrap_or_else(|| {
            if agent.model().reasoning {
                agent.thinking_level()
            } else {
                pi_agent_core::lock(&self.inner.choices)
                    .as_ref()
                    .and_then(|choices| choices.default_thinking)
                    .unwrap_or(crate::DEFAULT_THINKING_LEVEL)
            }
        });
        agent.set_model(model.clone());
        self.model_selected(&model, &previous, source);
        self.write(|store| store.append_model_change(&provider, &id));
        let mut updates = serde_json::Map::new();
        updates.insert("defaultProvider".into(), Value::String(provider));
        updates.insert("defaultModel".into(), Value::String(id));
        self.save_choices(updates);
        self.set_thinking_level(level);
    }

    /// Sets the thinking level, clamped to the model's levels
    /// ([`Model::clamp_thinking_level`]); when that changes it, records it and saves it as the
    /// default level (pi does not save `off` for a model that cannot reason). Returns the level
    /// in force.
    pub fn set_thinking_level(&self, level: ThinkingLevel) -> ThinkingLevel {
        let agent = self.inner.session.agent();
        let model = agent.model();
        let level = model.clamp_thinking_level(level);
        let previous = agent.thinking_level();
        if level == previous {
            return level;
        }
        agent.set_thinking_level(level);
        self.thinking_level_selected(level, previous);
        self.write(|store| store.append_thinking_level_change(thinking_level_name(level)));
        self.inner.session.emit(&SessionEvent::ThinkingLevelChanged(level));
        if model.reasoning || level != ThinkingLevel::Off {
            let mut updates = serde_json::Map::new();
            updates.insert(
                "defaultThinkingLevel".into(),
                Value::String(thinking_level_name(level).into()),
            );
            self.save_choices(updates);
        }
        level
    }

    /// Turns the automatic retry of failed turns on or off and saves it as `retry.enabled` in the
    /// global settings file, as pi's `setAutoRetryEnabled` does (RPC `set_auto_retry`).
    pub fn set_auto_retry_enabled(&self, enabled: bool) {
        self.inner.session.set_auto_retry_enabled(enabled);
        let mut updates = serde_json::Map::new();
        updates.insert("retry".into(), serde_json::json!({ "enabled": enabled }));
        self.save_choices(updates);
    }

    /// Names the session and announces it with `session_info_changed`.
    pub fn set_session_name(&self, name: &str) {
        self.write(|store| store.append_session_info(name));
        let name = self.with_store(|store| store.name().map(str::to_owned));
        self.inner.session.emit(&SessionEvent::SessionInfoChanged { name });
    }

    /// Adds a message that did not come from a run (e.g. a `bashExecution` the user ran) to the
    /// transcript and the session file; the model sees it with the next prompt. While a run
    /// streams it is held back until [`App::flush_deferred`] (as pi does): appended mid-run it
    /// would land between a tool call and its result.
    pub fn add_message(&self, message: AgentMessage) {
        if self.inner.session.agent().is_streaming() {
            self.inner
                .deferred
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(message);
            return;
        }
        self.inner.session.agent().append_message(message.clone());
        self.inner.record(&message);
    }

    /// Adds the messages [`App::add_message`] held back during a run; call it before a prompt.
    pub fn flush_deferred(&self) {
        let deferred = std::mem::take(&mut *self.inner.deferred.lock().unwrap_or_else(|p| p.into_inner()));
        for message in deferred {
            self.inner.session.agent().append_message(message.clone());
            self.inner.record(&message);
        }
    }

    /// The trimmed text of the last assistant message, skipping aborted ones without content (pi's
    /// `getLastAssistantText`); none when that text is empty.
    pub fn last_assistant_text(&self) -> Option<String> {
        let messages = self.inner.session.agent().messages();
        let last = messages
            .iter()
            .rev()
            .filter_map(AgentMessage::as_assistant)
            .find(|m| !(m.stop_reason == StopReason::Aborted && m.content.is_empty()))?;
        let text = last.text();
        let text = text.trim();
        (!text.is_empty()).then(|| text.to_owned())
    }

    /// Counts and usage of the current transcript.
    pub fn stats(&self) -> SessionStats {
        let mut stats = SessionStats::default();
        for message in self.inner.session.agent().messages() {
            stats.total_messages += 1;
            match &message {
                AgentMessage::User(_) => stats.user_messages += 1,
                AgentMessage::Assistant(assistant) => {
                    stats.assistant_messages += 1;
                    stats.tool_calls += assistant.tool_calls().count();
                    stats.input += assistant.usage.input;
                    stats.output += assistant.usage.output;
                    stats.cache_read += assistant.usage.cache_read;
                    stats.cache_write += assistant.usage.cache_write;
                    stats.cost += assistant.usage.cost.total;
                }
                AgentMessage::ToolResult(_) => stats.tool_results += 1,
                AgentMessage::Custom(_) => {}
            }
        }
        stats
    }

    /// The session tree as JSON (RPC `get_tree`): `{nodes, roots, leafId}`, where `nodes` lists
    /// every entry in file order as `{id, type, parentId, timestamp, label?, role?, text?,
    /// children: [ids]}` and `roots` the ids without a parent. Flat, so that a session of any
    /// length serialises without deep nesting.
    pub fn tree_json(&self) -> Value {
        self.with_store(|store| {
            let tree = store.tree();
            let id_of = |index: usize| tree.node(index).map(|n| n.entry.id.clone());
            let nodes: Vec<Value> = tree.nodes().iter().map(|node| node_json(node, &id_of)).collect();
            let roots: Vec<String> = tree.roots().iter().filter_map(|&i| id_of(i)).collect();
            json!({"nodes": nodes, "roots": roots, "leafId": store.leaf_id()})
        })
    }

    /// Drops the pending previews of the session being left, calling each one's `reject(reason)`
    /// so that tools with side state hear that their preview is gone; a failing `reject` is a
    /// warning.
    async fn drop_pending(&self, reason: &str) {
        for (label, error) in self.inner.session.drop_pending_actions(reason).await {
            (self.inner.warn)(format!(
                "pi: discarding the pending preview \"{label}\" failed: {error}"
            ));
        }
    }

    fn write(&self, append: impl FnOnce(&mut SessionManager) -> Result<String, StoreError>) {
        self.inner.write(append);
    }
}

/// What custom tools read of the app's session at every call ([`SessionView`]); weak, so that the
/// session (which holds it) does not keep the app alive.
struct AppView(std::sync::Weak<Inner>);

impl SessionView for AppView {
    fn branch_since(&self, known: &[String]) -> BranchDelta {
        match self.0.upgrade() {
            Some(inner) => BranchDelta::between(known, &lock(&inner.store).path_to_leaf()),
            None => BranchDelta::default(),
        }
    }

    fn session_file(&self) -> Option<PathBuf> {
        let inner = self.0.upgrade()?;
        let store = lock(&inner.store);
        store.file().filter(|_| store.is_written()).map(Path::to_path_buf)
    }

    fn model(&self) -> Option<Model> {
        let model = self.0.upgrade()?.session.agent().model();
        (model != Model::unknown()).then_some(model)
    }

    fn registry(&self) -> Option<Arc<ModelRegistry>> {
        Some(self.0.upgrade()?.registry.current())
    }
}

impl Inner {
    fn write(&self, append: impl FnOnce(&mut SessionManager) -> Result<String, StoreError>) {
        if let Err(error) = append(&mut lock(&self.store)) {
            (self.warn)(format!("pi: {error}"));
        }
    }

    /// Appends one finished message.
    fn record(&self, message: &AgentMessage) {
        match message {
            AgentMessage::Custom(custom) if custom.role == "custom" => {
                let (custom_type, content, display, details) = custom_parts(custom);
                self.write(|store| store.append_custom_message(&custom_type, content, display, details));
            }
            other => self.write(|store| store.append_message(other.clone())),
        }
    }
}

/// One node of the tree JSON.
fn node_json(node: &pi_session_store::TreeNode<'_>, id_of: &dyn Fn(usize) -> Option<String>) -> Value {
    let entry = node.entry;
    let mut value = json!({
        "id": entry.id,
        "type": entry.entry_type(),
        "parentId": entry.parent_id,
        "timestamp": entry.timestamp,
    });
    if let Some(label) = node.label {
        value["label"] = label.into();
    }
    if let Some(message) = entry.message() {
        value["role"] = message.role().into();
        let text = match message {
            AgentMessage::User(user) => user.content.text(),
            AgentMessage::Assistant(assistant) => assistant.text(),
            _ => String::new(),
        };
        if !text.is_empty() {
            value["text"] = text.chars().take(200).collect::<String>().into();
        }
    }
    value["children"] = node.children.iter().filter_map(|&child| id_of(child)).collect();
    value
}

/// `customType`, `content`, `display`, `details` of a `custom` message.
fn custom_parts(custom: &CustomMessage) -> (String, UserContent, bool, Option<Value>) {
    let field = |name: &str| custom.fields.get(name);
    let custom_type = field("customType")
        .and_then(Value::as_str)
        .unwrap_or("custom")
        .to_owned();
    let content = match field("content") {
        Some(Value::String(text)) => UserContent::Text(text.clone()),
        Some(blocks @ Value::Array(_)) => serde_json::from_value::<Vec<ContentBlock>>(blocks.clone())
            .map(UserContent::Blocks)
            .unwrap_or_else(|_| UserContent::Text(String::new())),
        _ => UserContent::Text(String::new()),
    };
    let display = field("display").and_then(Value::as_bool).unwrap_or(true);
    let details = field("details").cloned().filter(|d| !d.is_null());
    (custom_type, content, display, details)
}

mod compact;
mod complete;
pub(crate) use complete::CompleteRequest;
mod export;
mod extensions;
mod switching;
pub use extensions::{ModelSelectSource, SessionStartReason, ShutdownReason, unless_cancelled};
mod tree;

pub use tree::{NavigateOptions, NavigateOutcome};
#[cfg(test)]
mod tests;
