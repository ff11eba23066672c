//! The app's side of extensions: the runner, the session lifecycle events (`session_start`,
//! `session_before_switch`, `session_before_fork`, `session_shutdown`, `session_before_tree`,
//! `session_tree`, `resources_discover`), the compaction hook (`session_before_compact`,
//! `session_compact`), `model_select`, `thinking_level_select` and `user_bash`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use pi_agent_core::{
    AgentError, AgentMessage, ContentBlock, ImageContent, Model, ThinkingLevel, UserContent, UserMessage,
};
use pi_session_store::SessionEntry;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::App;
use crate::compaction::{
    BeforeCompact, BeforeCompactEvent, BeforeTree, BeforeTreeEvent, CompactionHook, CompactionResult,
    SuppliedBranchSummary, TreeEvent, TreeHook,
};
use crate::config::thinking_level_name;
use crate::extensions::events::{
    ExtensionRunner, Extensions, InputOutcome, InputSource, ResourcePaths, UserBashResult,
};
use crate::session::AgentSession;

/// Why a session starts (`session_start`'s `reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionStartReason {
    /// pi started.
    Startup,
    /// The extensions were reloaded.
    Reload,
    /// A new session replaced the previous one.
    New,
    /// Another session was opened.
    Resume,
    /// A fork (or clone) replaced the session.
    Fork,
}

impl SessionStartReason {
    /// pi's name of it.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionStartReason::Startup => "startup",
            SessionStartReason::Reload => "reload",
            SessionStartReason::New => "new",
            SessionStartReason::Resume => "resume",
            SessionStartReason::Fork => "fork",
        }
    }
}

/// Why a session ends (`session_shutdown`'s `reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShutdownReason {
    /// pi exits.
    Quit,
    /// The extensions are reloaded.
    Reload,
    /// A new session replaces it.
    New,
    /// Another session is opened.
    Resume,
    /// A fork (or clone) replaces it.
    Fork,
}

impl ShutdownReason {
    /// pi's name of it.
    pub fn as_str(self) -> &'static str {
        match self {
            ShutdownReason::Quit => "quit",
            ShutdownReason::Reload => "reload",
            ShutdownReason::New => "new",
            ShutdownReason::Resume => "resume",
            ShutdownReason::Fork => "fork",
        }
    }
}

/// How a model came to be chosen (`model_select`'s `source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelSelectSource {
    /// Picked (`/model`, RPC `set_model`, an extension's `pi.setModel`).
    Set,
    /// Cycled to (Ctrl+P, RPC `cycle_model`).
    Cycle,
    /// Brought back from the session file.
    Restore,
}

impl ModelSelectSource {
    /// pi's name of it.
    pub fn as_str(self) -> &'static str {
        match self {
            ModelSelectSource::Set => "set",
            ModelSelectSource::Cycle => "cycle",
            ModelSelectSource::Restore => "restore",
        }
    }
}

fn cancelled(result: Option<Value>) -> bool {
    result.and_then(|r| r.get("cancel").and_then(Value::as_bool)) == Some(true)
}

fn with_optional(mut fields: Value, key: &str, value: Option<&Path>) -> Value {
    if let Some(value) = value {
        fields[key] = json!(value);
    }
    fields
}

impl App {
    /// Sets (or removes) the extensions that get this app's events (ext-runtime calls it when it
    /// has loaded them); see [`AgentSession::set_extension_runner`]. The compaction hook that
    /// asks them is added with the first runner.
    pub fn set_extension_runner(&self, runner: Option<Arc<dyn ExtensionRunner>>) {
        let has = runner.is_some();
        self.inner.session.set_extension_runner(runner);
        if has && !self.inner.extension_hook.swap(true, Ordering::SeqCst) {
            self.add_compaction_hook(Arc::new(ExtensionCompaction {
                session: self.inner.session.clone(),
            }));
            self.add_tree_hook(Arc::new(ExtensionTree {
                session: self.inner.session.clone(),
            }));
        }
    }

    /// The extensions getting this app's events, if any.
    pub fn extensions(&self) -> Option<Extensions> {
        self.inner.session.extensions()
    }

    /// pi's `input` for a prompt's text.
    pub async fn emit_input(&self, text: &str, images: &[ImageContent], source: InputSource) -> InputOutcome {
        self.inner.session.emit_input(text, images, source).await
    }

    /// Sends a prompt a user (or an RPC client, or an extension) gave, as pi's session does:
    /// the extensions' `input` first — they may change a user message's text and images, or
    /// handle it — then [`App::prompt`]. `Ok(false)` when an extension handled it (nothing ran).
    pub async fn prompt_from(&self, message: AgentMessage, source: InputSource) -> Result<bool, AgentError> {
        let Some(message) = self.apply_input(message, source).await else {
            return Ok(false);
        };
        self.prompt(message).await.map(|()| true)
    }

    async fn apply_input(&self, message: AgentMessage, source: InputSource) -> Option<AgentMessage> {
        if !self.extensions().is_some_and(|e| e.has("input")) {
            return Some(message);
        }
        let AgentMessage::User(user) = &message else {
            return Some(message);
        };
        match self
            .emit_input(&user.content.text(), &user.content.images(), source)
            .await
        {
            InputOutcome::Continue => Some(message),
            InputOutcome::Handled => None,
            InputOutcome::Transform { text, images } => {
                let mut blocks = vec![ContentBlock::text(text)];
                blocks.extend(images.unwrap_or_default().into_iter().map(ContentBlock::Image));
                Some(AgentMessage::User(UserMessage {
                    content: UserContent::Blocks(blocks),
                    timestamp: user.timestamp,
                }))
            }
        }
    }

    /// `session_start` (`previousSessionFile` when another session was replaced).
    pub async fn emit_session_start(&self, reason: SessionStartReason, previous: Option<&Path>) {
        let Some(extensions) = self.extensions() else {
            return;
        };
        let fields = || with_optional(json!({"reason": reason.as_str()}), "previousSessionFile", previous);
        extensions
            .emit("session_start", fields, &CancellationToken::new())
            .await;
    }

    /// `resources_discover`: the skill, prompt and theme paths the extensions add.
    pub async fn emit_resources_discover(&self, reason: SessionStartReason) -> ResourcePaths {
        let Some(extensions) = self.extensions() else {
            return ResourcePaths::default();
        };
        let cwd = self.inner.session.cwd().to_path_buf();
        extensions
            .resources_discover(&cwd, reason.as_str(), &CancellationToken::new())
            .await
    }

    /// `session_shutdown` (`targetSessionFile`: the session replacing this one). The modes send
    /// `Quit` when pi exits.
    pub async fn emit_session_shutdown(&self, reason: ShutdownReason, target: Option<&Path>) {
        let Some(extensions) = self.extensions() else {
            return;
        };
        self.inner.session.extension_events_drained().await;
        let fields = || with_optional(json!({"reason": reason.as_str()}), "targetSessionFile", target);
        extensions
            .emit("session_shutdown", fields, &CancellationToken::new())
            .await;
    }

    /// `user_bash` for the user's `!command` / `!!command` (RPC `bash`): an extension's result
    /// replaces running it.
    pub async fn emit_user_bash(&self, command: &str, exclude_from_context: bool) -> Option<UserBashResult> {
        let extensions = self.extensions()?;
        let cwd = self.inner.session.cwd().to_path_buf();
        extensions
            .user_bash(command, exclude_from_context, &cwd, &CancellationToken::new())
            .await
    }

    /// `session_before_switch`; true when an extension cancelled.
    pub(super) async fn before_switch(&self, reason: &str, target: Option<&Path>) -> bool {
        let Some(extensions) = self.extensions() else {
            return false;
        };
        let fields = || with_optional(json!({ "reason": reason }), "targetSessionFile", target);
        cancelled(
            extensions
                .emit("session_before_switch", fields, &CancellationToken::new())
                .await,
        )
    }

    /// `session_before_fork`; true when an extension cancelled.
    pub(super) async fn before_fork(&self, entry_id: &str, position: &str) -> bool {
        let Some(extensions) = self.extensions() else {
            return false;
        };
        let fields = || json!({"entryId": entry_id, "position": position});
        cancelled(
            extensions
                .emit("session_before_fork", fields, &CancellationToken::new())
                .await,
        )
    }

    /// The session was replaced: `session_shutdown` for the old one, then `session_start`.
    pub(super) async fn replaced(
        &self,
        shutdown: ShutdownReason,
        start: SessionStartReason,
        previous: Option<PathBuf>,
    ) {
        if self.extensions().is_none() {
            return;
        }
        let target = self.session_file();
        self.emit_session_shutdown(shutdown, target.as_deref()).await;
        self.emit_session_start(start, previous.as_deref()).await;
    }

    /// `model_select` when the model changed (queued with the run's events; pi awaits it, but
    /// our model changes are synchronous).
    pub(super) fn model_selected(&self, model: &Model, previous: &Model, source: ModelSelectSource) {
        if model.provider == previous.provider && model.id == previous.id {
            return;
        }
        self.inner.session.queue_extension_event(
            "model_select",
            || json!({"model": model, "previousModel": previous, "source": source.as_str()}),
        );
    }

    /// `thinking_level_select` (pi does not wait for it either).
    pub(super) fn thinking_level_selected(&self, level: ThinkingLevel, previous: ThinkingLevel) {
        self.inner.session.queue_extension_event(
            "thinking_level_select",
            || json!({"level": thinking_level_name(level), "previousLevel": thinking_level_name(previous)}),
        );
    }
}

/// `session_before_tree` / `session_tree` through the navigation seam ([`TreeHook`]).
struct ExtensionTree {
    session: AgentSession,
}

#[async_trait::async_trait]
impl TreeHook for ExtensionTree {
    async fn before_tree(&self, event: BeforeTreeEvent<'_>) -> BeforeTree {
        let Some(extensions) = self.session.extensions() else {
            return BeforeTree::default();
        };
        let fields = || {
            let p = event.preparation;
            let mut preparation = json!({
                "targetId": p.target_id,
                "oldLeafId": p.old_leaf_id,
                "commonAncestorId": p.common_ancestor_id,
                "entriesToSummarize": p.entries_to_summarize,
                "userWantsSummary": p.user_wants_summary,
            });
            if let Some(instructions) = &p.custom_instructions {
                preparation["customInstructions"] = json!(instructions);
            }
            if p.replace_instructions {
                preparation["replaceInstructions"] = json!(true);
            }
            if let Some(label) = &p.label {
                preparation["label"] = json!(label);
            }
            json!({ "preparation": preparation })
        };
        let Some(result) = extensions.emit("session_before_tree", fields, event.cancel).await else {
            return BeforeTree::default();
        };
        let text = |key: &str| result.get(key).and_then(Value::as_str).map(str::to_owned);
        BeforeTree {
            cancel: result.get("cancel").and_then(Value::as_bool) == Some(true),
            summary: result.get("summary").and_then(|summary| {
                Some(SuppliedBranchSummary {
                    summary: summary.get("summary")?.as_str()?.to_owned(),
                    details: summary.get("details").filter(|d| !d.is_null()).cloned(),
                })
            }),
            custom_instructions: text("customInstructions"),
            replace_instructions: result.get("replaceInstructions").and_then(Value::as_bool),
            label: text("label"),
        }
    }

    async fn after_tree(&self, event: TreeEvent<'_>) {
        let Some(extensions) = self.session.extensions() else {
            return;
        };
        let fields = || {
            let mut fields = json!({"newLeafId": event.new_leaf_id, "oldLeafId": event.old_leaf_id});
            if let Some(entry) = event.summary_entry {
                fields["summaryEntry"] = json!(entry);
            }
            if let Some(from_extension) = event.from_extension {
                fields["fromExtension"] = json!(from_extension);
            }
            fields
        };
        extensions.emit("session_tree", fields, &CancellationToken::new()).await;
    }
}

/// `session_before_compact` / `session_compact` through the compaction seam.
struct ExtensionCompaction {
    session: AgentSession,
}

#[async_trait::async_trait]
impl CompactionHook for ExtensionCompaction {
    async fn before_compact(&self, event: BeforeCompactEvent<'_>) -> BeforeCompact {
        let Some(extensions) = self.session.extensions() else {
            return BeforeCompact::Proceed;
        };
        let fields = || {
            let p = event.preparation;
            let mut preparation = json!({
                "firstKeptEntryId": p.first_kept_entry_id,
                "messagesToSummarize": p.messages_to_summarize,
                "turnPrefixMessages": p.turn_prefix_messages,
                "isSplitTurn": p.is_split_turn,
                "tokensBefore": p.tokens_before,
                "fileOps": {"read": p.file_ops.read, "written": p.file_ops.written, "edited": p.file_ops.edited},
                "settings": {"enabled": p.settings.enabled, "reserveTokens": p.settings.reserve_tokens,
                             "keepRecentTokens": p.settings.keep_recent_tokens},
            });
            if let Some(summary) = &p.previous_summary {
                preparation["previousSummary"] = json!(summary);
            }
            let mut fields = json!({"preparation": preparation, "branchEntries": event.branch_entries});
            if let Some(instructions) = event.custom_instructions {
                fields["customInstructions"] = json!(instructions);
            }
            fields
        };
        let Some(result) = extensions.emit("session_before_compact", fields, event.cancel).await else {
            return BeforeCompact::Proceed;
        };
        if result.get("cancel").and_then(Value::as_bool) == Some(true) {
            return BeforeCompact::Cancel;
        }
        let Some(compaction) = result.get("compaction").filter(|c| c.is_object()) else {
            return BeforeCompact::Proceed;
        };
        let summary = compaction.get("summary").and_then(Value::as_str);
        let first_kept = compaction.get("firstKeptEntryId").and_then(Value::as_str);
        match (summary, first_kept) {
            (Some(summary), Some(first_kept)) => BeforeCompact::Supply(CompactionResult {
                summary: summary.to_owned(),
                first_kept_entry_id: first_kept.to_owned(),
                tokens_before: compaction
                    .get("tokensBefore")
                    .and_then(Value::as_u64)
                    .unwrap_or(event.preparation.tokens_before),
                details: compaction.get("details").filter(|d| !d.is_null()).cloned(),
            }),
            _ => BeforeCompact::Proceed,
        }
    }

    async fn after_compact(&self, entry: &SessionEntry, from_hook: bool) {
        let Some(extensions) = self.session.extensions() else {
            return;
        };
        extensions
            .emit(
                "session_compact",
                || json!({"compactionEntry": entry, "fromExtension": from_hook}),
                &CancellationToken::new(),
            )
            .await;
    }
}

/// A session change an extension may cancel (`session_before_switch`, `session_before_fork`,
/// `session_before_tree`), as pi's callers see it: `Ok(None)` when an extension cancelled it
/// (RPC and `ctx.*` answer `{"cancelled": true}`), the other errors as they are.
///
/// ```
/// use pi_coding_agent::{AppError, unless_cancelled};
/// assert_eq!(unless_cancelled(Ok::<_, AppError>(3)).unwrap(), Some(3));
/// assert_eq!(unless_cancelled::<u8>(Err(AppError::Cancelled)).unwrap(), None);
/// ```
pub fn unless_cancelled<T>(result: Result<T, super::AppError>) -> Result<Option<T>, super::AppError> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(super::AppError::Cancelled) => Ok(None),
        Err(error) => Err(error),
    }
}
