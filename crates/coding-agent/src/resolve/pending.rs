//! Pending actions: previews waiting for the model (or the user) to apply or discard them.
//!
//! A preview-capable tool (`ast_edit`, a custom tool) computes its change without touching disk
//! and pushes a [`PendingAction`] onto the session's [`PendingActionStore`], a LIFO stack: the
//! `resolve` tool always acts on the newest action. An action leaves the stack only when its apply
//! succeeds or its discard completes (SPEC §6); a failed apply leaves it on top.
//!
//! ```
//! use pi_coding_agent::resolve::{PendingAction, PendingActionStore};
//! use pi_agent_core::ToolResult;
//!
//! let store = PendingActionStore::new();
//! store.push(PendingAction::new("AST Edit: 1 replacement in 1 file", "ast_edit", |_reason, _extra| async {
//!     Ok(ToolResult::text("Applied 1 replacement in 1 file."))
//! }));
//! assert!(store.has_pending());
//! assert_eq!(store.peek().unwrap().label, "AST Edit: 1 replacement in 1 file");
//! ```

use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use futures::future::BoxFuture;
use pi_agent_core::{ToolError, ToolResult};
use serde_json::Value;

/// Why an apply or discard callback failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PendingError {
    /// A tool-level failure, reported to the model as it is (its details kept).
    #[error(transparent)]
    Tool(#[from] ToolError),
    /// Any other failure; `resolve` reports it as `Apply failed: <message>`.
    #[error("{0}")]
    Other(String),
}

/// `apply(reason, extra)` / `reject(reason, extra)` callbacks.
pub type ApplyFn =
    Arc<dyn Fn(String, Option<Value>) -> BoxFuture<'static, Result<ToolResult, PendingError>> + Send + Sync>;
/// `reject(reason, extra)`; `Ok(None)` means "use the default discard text".
pub type RejectFn =
    Arc<dyn Fn(String, Option<Value>) -> BoxFuture<'static, Result<Option<ToolResult>, PendingError>> + Send + Sync>;

/// A staged change waiting for `resolve`.
#[derive(Clone)]
pub struct PendingAction {
    /// Shown to the user and in `resolve` details, e.g. `AST Edit: 2 replacements in 1 file`.
    pub label: String,
    /// The tool that staged it (`custom_tool` for custom tools that name none).
    pub source_tool_name: String,
    /// Writes the change.
    pub apply: ApplyFn,
    /// Cleans up on discard; `None` → `Discarded: <label>. Reason: <reason>`.
    pub reject: Option<RejectFn>,
    /// Extra data about the preview.
    pub details: Option<Value>,
    /// The absolute paths of the files `apply` changes (empty: none named). A model's `resolve`
    /// call with action `apply` reserves their places in the per-file mutation queue in source
    /// order ([`AgentTool::mutated_files`](pi_agent_core::AgentTool::mutated_files)), so that the
    /// apply lands in the order of the calls around it.
    pub mutated_files: Vec<PathBuf>,
}

impl std::fmt::Debug for PendingAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingAction")
            .field("label", &self.label)
            .field("source_tool_name", &self.source_tool_name)
            .field("has_reject", &self.reject.is_some())
            .field("details", &self.details)
            .field("mutated_files", &self.mutated_files)
            .finish()
    }
}

impl PendingAction {
    /// An action with an async `apply` and no `reject`.
    pub fn new<F, Fut>(label: impl Into<String>, source_tool_name: impl Into<String>, apply: F) -> Self
    where
        F: Fn(String, Option<Value>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolResult, PendingError>> + Send + 'static,
    {
        PendingAction {
            label: label.into(),
            source_tool_name: source_tool_name.into(),
            apply: Arc::new(move |reason, extra| Box::pin(apply(reason, extra))),
            reject: None,
            details: None,
            mutated_files: Vec::new(),
        }
    }

    /// Sets the discard callback.
    #[must_use]
    pub fn with_reject<F, Fut>(mut self, reject: F) -> Self
    where
        F: Fn(String, Option<Value>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Option<ToolResult>, PendingError>> + Send + 'static,
    {
        self.reject = Some(Arc::new(move |reason, extra| Box::pin(reject(reason, extra))));
        self
    }

    /// Sets the details.
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// Names the files `apply` changes ([`PendingAction::mutated_files`]).
    ///
    /// ```
    /// use pi_agent_core::ToolResult;
    /// use pi_coding_agent::resolve::{PendingAction, PendingActionStore};
    ///
    /// let store = PendingActionStore::new();
    /// let action = PendingAction::new("Rename", "batch_rename", |_, _| async { Ok(ToolResult::text("done")) })
    ///     .with_mutated_files(["/work/a.txt".into(), "/work/b.txt".into()]);
    /// store.push(action);
    /// assert_eq!(store.mutated_files().len(), 2);
    /// ```
    #[must_use]
    pub fn with_mutated_files(mut self, files: impl IntoIterator<Item = PathBuf>) -> Self {
        self.mutated_files = files.into_iter().collect();
        self
    }
}

type PushListener = Arc<dyn Fn(&PendingAction, usize) + Send + Sync>;

/// Identifies one pushed action for as long as it is pending, so that an apply finishing after
/// other pushes removes exactly the action it applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PendingActionId(u64);

/// One pending action: its id, the action, and whether a model call has happened since it was
/// pushed (the model has seen its preview).
#[derive(Clone)]
struct Entry {
    id: PendingActionId,
    action: PendingAction,
    seen: bool,
}

#[derive(Default)]
struct Inner {
    stack: Vec<Entry>,
    next_id: u64,
    listeners: Vec<(u64, PushListener)>,
    next_listener: u64,
}

/// The session's LIFO stack of pending actions. Clones share the stack.
#[derive(Clone, Default)]
pub struct PendingActionStore {
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for PendingActionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingActionStore").field("len", &self.len()).finish()
    }
}

impl PendingActionStore {
    /// An empty store.
    pub fn new() -> Self {
        PendingActionStore::default()
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        pi_agent_core::lock(&self.inner)
    }

    /// Pushes an action on top, then tells every push listener `(action, new_len)` (outside the
    /// store's lock, so a listener may use the store). Returns the action's id.
    pub fn push(&self, action: PendingAction) -> PendingActionId {
        let (id, listeners, len) = {
            let mut inner = self.lock();
            let id = PendingActionId(inner.next_id);
            inner.next_id += 1;
            inner.stack.push(Entry {
                id,
                action: action.clone(),
                seen: false,
            });
            let listeners: Vec<PushListener> = inner.listeners.iter().map(|(_, l)| l.clone()).collect();
            (id, listeners, inner.stack.len())
        };
        for listener in listeners {
            listener(&action, len);
        }
        id
    }

    /// The top action, without removing it.
    pub fn peek(&self) -> Option<PendingAction> {
        self.lock().stack.last().map(|entry| entry.action.clone())
    }

    /// The top action and its id, without removing it.
    pub fn peek_entry(&self) -> Option<(PendingActionId, PendingAction)> {
        self.lock().stack.last().map(|entry| (entry.id, entry.action.clone()))
    }

    /// Removes and returns the top action.
    pub fn pop(&self) -> Option<PendingAction> {
        self.lock().stack.pop().map(|entry| entry.action)
    }

    /// Removes the action with this id wherever it is in the stack; `None` when it is no longer
    /// pending.
    pub fn remove(&self, id: PendingActionId) -> Option<PendingAction> {
        let mut inner = self.lock();
        let index = inner.stack.iter().position(|entry| entry.id == id)?;
        Some(inner.stack.remove(index).action)
    }

    /// Removes every action and returns them, top first (the order `resolve` would take them).
    pub fn take_all(&self) -> Vec<PendingAction> {
        let stack = std::mem::take(&mut self.lock().stack);
        stack.into_iter().rev().map(|entry| entry.action).collect()
    }

    /// Whether the action with this id is still pending.
    pub fn contains(&self, id: PendingActionId) -> bool {
        self.lock().stack.iter().any(|entry| entry.id == id)
    }

    /// Marks every pending action as seen by the model. The session calls it before each model
    /// call: a preview pushed before the call is in the context the model reads.
    pub fn mark_seen(&self) {
        for entry in &mut self.lock().stack {
            entry.seen = true;
        }
    }

    /// Whether the action with this id is pending and the model has seen it (a model call
    /// happened since it was pushed). A `resolve` from the model acts only on a seen top.
    pub fn is_seen(&self, id: PendingActionId) -> bool {
        self.lock().stack.iter().any(|entry| entry.id == id && entry.seen)
    }

    /// The files every pending action names ([`PendingAction::mutated_files`]), top last.
    pub fn mutated_files(&self) -> Vec<PathBuf> {
        self.lock()
            .stack
            .iter()
            .flat_map(|entry| entry.action.mutated_files.iter().cloned())
            .collect()
    }

    /// Whether anything is pending.
    pub fn has_pending(&self) -> bool {
        !self.lock().stack.is_empty()
    }

    /// Number of pending actions.
    pub fn len(&self) -> usize {
        self.lock().stack.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.lock().stack.is_empty()
    }

    /// Drops every pending action.
    pub fn clear(&self) {
        self.lock().stack.clear();
    }

    /// The names of the tools that staged the pending actions, bottom to top.
    pub fn source_tool_names(&self) -> Vec<String> {
        self.lock()
            .stack
            .iter()
            .map(|entry| entry.action.source_tool_name.clone())
            .collect()
    }

    /// The labels from bottom to top.
    pub fn labels(&self) -> Vec<String> {
        self.lock()
            .stack
            .iter()
            .map(|entry| entry.action.label.clone())
            .collect()
    }

    /// Registers a listener called after every push; returns its id for
    /// [`PendingActionStore::unsubscribe_push`].
    pub fn subscribe_push(&self, listener: impl Fn(&PendingAction, usize) + Send + Sync + 'static) -> u64 {
        let mut inner = self.lock();
        let id = inner.next_listener;
        inner.next_listener += 1;
        inner.listeners.push((id, Arc::new(listener)));
        id
    }

    /// Removes a push listener.
    pub fn unsubscribe_push(&self, id: u64) {
        self.lock().listeners.retain(|(listener, _)| *listener != id);
    }
}
