//! [`ResolveRuntime`]: what `resolve` acts on — the top of the pending-action stack, else the
//! standing handler — and what happens to the stack afterwards.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use pi_agent_core::{ToolError, ToolResult, lock};
use serde_json::Value;

use super::invocation::run_resolve_invocation;
use super::{NO_PENDING_ACTION, ResolveAction, ResolveParams, unseen_preview_text};
use crate::resolve::Invoker;
use crate::resolve::PendingActionStore;

/// A long-lived resolve handler installed by a mode (e.g. a plan-approval gate). It is consulted
/// only when no action is pending and it never forces a tool choice.
pub type StandingHandler =
    Arc<dyn Fn(ResolveParams) -> BoxFuture<'static, Result<ToolResult, ToolError>> + Send + Sync>;

/// What one `resolve` call did, reported to [`ResolveRuntime::subscribe`] listeners.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolveOutcome {
    /// The requested action.
    pub action: ResolveAction,
    /// The resolved action's label (empty for a standing handler).
    pub label: String,
    /// The tool that staged it (empty for a standing handler).
    pub source_tool_name: String,
    /// `None` on success, else the error text the model received.
    pub error: Option<String>,
    /// Pending actions left afterwards.
    pub remaining: usize,
    /// True when a standing handler, not a pending action, handled the call.
    pub standing: bool,
}

impl ResolveOutcome {
    /// True when the call succeeded.
    pub fn succeeded(&self) -> bool {
        self.error.is_none()
    }
}

type OutcomeListener = Arc<dyn Fn(&ResolveOutcome) + Send + Sync>;

struct Inner {
    store: PendingActionStore,
    standing: Mutex<Option<StandingHandler>>,
    /// One invocation at a time, so that two `resolve` calls of one batch act on successive tops.
    serial: Arc<tokio::sync::Mutex<()>>,
    listeners: Mutex<Vec<OutcomeListener>>,
}

/// Resolves pending actions (SPEC §6): the top of the [`PendingActionStore`] first; the standing
/// handler only when the stack is empty; otherwise the error
/// `No pending action to resolve. Nothing to apply or discard.` for both actions.
///
/// An action leaves the stack only when its apply succeeds or its discard completes; a failed
/// apply leaves it on top. Each invocation runs as its own task, so a caller that stops waiting
/// (an aborted `resolve` call) never leaves a half-run callback behind: the invocation finishes
/// and updates the stack, and the next one waits for it. Clones share the runtime.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use pi_agent_core::ToolResult;
/// use pi_coding_agent::resolve::{PendingAction, PendingActionStore};
/// use pi_coding_agent::resolve::{ResolveAction, ResolveParams, ResolveRuntime};
///
/// let store = PendingActionStore::new();
/// let runtime = ResolveRuntime::new(store.clone());
/// store.push(PendingAction::new("First action", "demo", |_, _| async { Ok(ToolResult::text("first")) }));
/// store.push(PendingAction::new("Second action", "demo", |_, _| async { Ok(ToolResult::text("second")) }));
/// let result = runtime.resolve(ResolveParams::new(ResolveAction::Apply, "Looks right.")).await.unwrap();
/// assert_eq!(result.content[0].as_text(), Some("second"));
/// assert_eq!(store.labels(), ["First action"]);
/// # });
/// ```
#[derive(Clone)]
pub struct ResolveRuntime {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for ResolveRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResolveRuntime")
            .field("store", &self.inner.store)
            .field("standing", &self.has_standing_handler())
            .finish()
    }
}

impl ResolveRuntime {
    /// A runtime resolving the actions of `store`.
    pub fn new(store: PendingActionStore) -> Self {
        ResolveRuntime {
            inner: Arc::new(Inner {
                store,
                standing: Mutex::new(None),
                serial: Arc::new(tokio::sync::Mutex::new(())),
                listeners: Mutex::new(Vec::new()),
            }),
        }
    }

    /// The pending-action stack.
    pub fn store(&self) -> &PendingActionStore {
        &self.inner.store
    }

    /// Installs (`Some`) or clears (`None`) the standing handler.
    pub fn set_standing_handler(&self, handler: Option<StandingHandler>) {
        *lock(&self.inner.standing) = handler;
    }

    /// Whether a standing handler is installed.
    pub fn has_standing_handler(&self) -> bool {
        lock(&self.inner.standing).is_some()
    }

    /// Calls `listener` after every invocation, with what it did.
    pub fn subscribe(&self, listener: impl Fn(&ResolveOutcome) + Send + Sync + 'static) {
        lock(&self.inner.listeners).push(Arc::new(listener));
    }

    /// Whether `resolve` would find something to act on.
    pub fn has_target(&self) -> bool {
        self.inner.store.has_pending() || self.has_standing_handler()
    }

    /// Applies or discards the top pending action (or calls the standing handler) for the user:
    /// the user sees a preview as soon as it is staged, so any top may be resolved.
    pub async fn resolve(&self, params: ResolveParams) -> Result<ToolResult, ToolError> {
        self.spawn_invocation(params, false).await
    }

    /// [`ResolveRuntime::resolve`] for a `resolve` call of the model: a top action the model has
    /// not seen yet (staged in the same assistant message, see
    /// [`PendingActionStore::mark_seen`]) is refused with [`unseen_preview_text`] and stays
    /// pending.
    pub async fn resolve_for_model(&self, params: ResolveParams) -> Result<ToolResult, ToolError> {
        self.spawn_invocation(params, true).await
    }

    async fn spawn_invocation(&self, params: ResolveParams, require_seen: bool) -> Result<ToolResult, ToolError> {
        let runtime = self.clone();
        let action = params.action;
        // The files the calling `resolve` holds stay held in the task (see `ResolveTool`).
        let task = tokio::spawn(pi_agent_core::carry_held_mutations(async move {
            runtime.invoke(params, require_seen).await
        }));
        match task.await {
            Ok(result) => result,
            Err(error) => Err(ToolError::new(join_error_text(action, error))),
        }
    }

    /// [`ResolveRuntime::resolve_for_model`] taking the raw `resolve` arguments, as a
    /// tool-choice [`Invoker`].
    pub fn invoker(&self) -> Invoker {
        let runtime = self.clone();
        Arc::new(move |args: Value| {
            let runtime = runtime.clone();
            Box::pin(async move {
                let params: ResolveParams = serde_json::from_value(args)?;
                runtime.resolve_for_model(params).await
            })
        })
    }

    /// Removes every pending action, calling each one's `reject(reason)` (top first, one after
    /// the other, after any invocation in progress finished). Returns the label and error text
    /// of every `reject` that failed; the action is gone either way.
    pub async fn drop_all(&self, reason: &str) -> Vec<(String, String)> {
        let _serial = self.inner.serial.clone().lock_owned().await;
        let mut failures = Vec::new();
        for action in self.inner.store.take_all() {
            let Some(reject) = &action.reject else { continue };
            if let Err(error) = reject(reason.to_owned(), None).await {
                failures.push((action.label.clone(), error.to_string()));
            }
        }
        failures
    }

    async fn invoke(&self, params: ResolveParams, require_seen: bool) -> Result<ToolResult, ToolError> {
        let _serial = self.inner.serial.clone().lock_owned().await;
        let store = &self.inner.store;
        if let Some((id, action)) = store.peek_entry() {
            let result = if require_seen && !store.is_seen(id) {
                let details = super::base_details(&params, &action.source_tool_name, &action.label);
                Err(ToolError::new(unseen_preview_text(&action.label)).with_details(Value::Object(details)))
            } else {
                run_resolve_invocation(&params, &action).await
            };
            if result.is_ok() {
                store.remove(id);
            }
            self.report(ResolveOutcome {
                action: params.action,
                label: action.label.clone(),
                source_tool_name: action.source_tool_name.clone(),
                error: result.as_ref().err().map(|e| e.message().to_owned()),
                remaining: store.len(),
                standing: false,
            });
            return result;
        }
        let standing = lock(&self.inner.standing).clone();
        let Some(handler) = standing else {
            return Err(ToolError::new(NO_PENDING_ACTION));
        };
        let action = params.action;
        let result = handler(params).await;
        self.report(ResolveOutcome {
            action,
            label: String::new(),
            source_tool_name: String::new(),
            error: result.as_ref().err().map(|e| e.message().to_owned()),
            remaining: store.len(),
            standing: true,
        });
        result
    }

    fn report(&self, outcome: ResolveOutcome) {
        let listeners = lock(&self.inner.listeners).clone();
        for listener in listeners {
            listener(&outcome);
        }
    }
}

/// The message of a panicked (or cancelled) invocation task; `Apply failed: <panic>` for apply.
fn join_error_text(action: ResolveAction, error: tokio::task::JoinError) -> String {
    let message = if error.is_panic() {
        pi_agent_core::panic_text(error.into_panic().as_ref())
    } else {
        error.to_string()
    };
    match action {
        ResolveAction::Apply => format!("{}{message}", super::invocation::APPLY_FAILED_PREFIX),
        ResolveAction::Discard => message,
    }
}
