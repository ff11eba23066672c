//! The hidden `resolve` tool and the runtime behind it.
//!
//! A preview-capable tool (`ast_edit`, a custom tool) stages its change as a
//! [`PendingAction`] instead of writing it. The model then calls
//! `resolve` with `action: "apply"` or `"discard"` and a `reason`; `resolve` runs the top action's
//! callback through [`run_resolve_invocation`] and returns its result with the resolve metadata
//! merged into `details`. The session forces the next model call to `resolve` while something is
//! pending and steers [`RESOLVE_REMINDER`] (see [`AgentSession`](crate::AgentSession)); the full runtime is described
//! in `docs/resolve.md`.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use pi_agent_core::{AgentTool, ToolContext};
//! use pi_coding_agent::resolve::PendingActionStore;
//! use pi_coding_agent::resolve::{NO_PENDING_ACTION, ResolveRuntime, ResolveTool};
//! use serde_json::json;
//!
//! let tool = ResolveTool::new(ResolveRuntime::new(PendingActionStore::new()), None);
//! let args = json!({"action": "apply", "reason": "Looks correct."});
//! let error = tool.execute("call-1", args, ToolContext::detached()).await.unwrap_err();
//! assert_eq!(error.message(), NO_PENDING_ACTION);
//! # });
//! ```

mod forcing;
mod invocation;
mod pending;
mod runtime;
mod tool_choice_queue;

pub(crate) use forcing::ResolveForcing;
pub use forcing::{DEFAULT_FORCE_LIMIT, ForcingStopped, PENDING_ACTION_LABEL_PREFIX, is_pending_action_label};
pub use pending::{ApplyFn, PendingAction, PendingActionId, PendingActionStore, PendingError, RejectFn};
pub use tool_choice_queue::{
    DirectiveOptions, Invoker, OnRejected, OnResolved, RejectOutcome, RejectReason, ToolChoiceQueue,
};

pub use invocation::{APPLY_FAILED_PREFIX, base_details, default_discard_text, run_resolve_invocation};
pub use runtime::{ResolveOutcome, ResolveRuntime, StandingHandler};

use std::path::PathBuf;

use async_trait::async_trait;
use pi_agent_core::{
    AgentMessage, CustomMessage, OPERATION_ABORTED, ToolContext, ToolError, ToolParameters, ToolResult, TypedTool,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The tool's name.
pub const RESOLVE_TOOL_NAME: &str = "resolve";

/// The error of a `resolve` call with nothing pending and no standing handler, for both actions.
pub const NO_PENDING_ACTION: &str = "No pending action to resolve. Nothing to apply or discard.";

/// The error of a model's `resolve` whose top action was staged in the same assistant message:
/// the model has not seen that preview yet, so it may not apply or discard it. The action stays
/// pending.
pub fn unseen_preview_text(label: &str) -> String {
    format!(
        "Cannot resolve \"{label}\" in the message that staged it: the preview has not been shown to you yet. \
         Read it, then call resolve in your next message."
    )
}

/// `customType` of the hidden reminder message.
pub const RESOLVE_REMINDER_TYPE: &str = "resolve-reminder";

/// The reminder steered after a preview is staged and after a failed apply or discard, delivered
/// at the next turn boundary only while something is pending.
pub const RESOLVE_REMINDER: &str = "<system-reminder>\nThis is a preview. Call the `resolve` tool to apply or discard these changes.\n</system-reminder>";

/// The description the model reads.
pub const RESOLVE_DESCRIPTION: &str = "Resolves a pending action by either applying or discarding it.
- `action` is required:
  - `\"apply\"` persists / submits the pending action.
  - `\"discard\"` rejects the pending action.
- `reason` is required: one short complete sentence explaining why, starting with a capital letter and ending with a period.
- `extra` (optional) is free-form metadata passed to the resolving tool. For preview-style pending actions (e.g. `ast_edit`), `extra` is unused.

Valid whenever a pending action exists — either a preview-style staging (e.g. `ast_edit`) or a long-lived approval gate.
Call fails with an error when no pending action exists.";

/// `apply` or `discard`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResolveAction {
    /// Run the pending action's `apply`.
    Apply,
    /// Run its `reject`, or drop it.
    Discard,
}

impl ResolveAction {
    /// `apply` / `discard`.
    pub fn as_str(self) -> &'static str {
        match self {
            ResolveAction::Apply => "apply",
            ResolveAction::Discard => "discard",
        }
    }
}

/// The arguments of a `resolve` call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResolveParams {
    /// Apply or discard.
    pub action: ResolveAction,
    /// Why; passed to the callback, shown to the user.
    pub reason: String,
    /// Free-form metadata passed to the callback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Map<String, Value>>,
}

impl ResolveParams {
    /// Parameters without `extra`.
    pub fn new(action: ResolveAction, reason: impl Into<String>) -> Self {
        ResolveParams {
            action,
            reason: reason.into(),
            extra: None,
        }
    }

    /// Sets `extra`.
    #[must_use]
    pub fn with_extra(mut self, extra: Map<String, Value>) -> Self {
        self.extra = Some(extra);
        self
    }
}

/// The JSON Schema of `resolve`'s parameters (required: exactly `action` and `reason`).
pub fn resolve_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["apply", "discard"]},
            "reason": {"type": "string", "description": "reason for action"},
            "extra": {"type": "object", "description": "free-form metadata"}
        },
        "required": ["action", "reason"]
    })
}

/// The hidden reminder the session steers after a preview is staged (`customType`
/// `resolve-reminder`, `display: false`, `details.toolName` = the staging tool).
pub fn resolve_reminder(source_tool_name: &str) -> AgentMessage {
    let mut fields = Map::new();
    fields.insert("customType".into(), Value::from(RESOLVE_REMINDER_TYPE));
    fields.insert("content".into(), Value::from(RESOLVE_REMINDER));
    fields.insert("display".into(), Value::Bool(false));
    fields.insert("details".into(), json!({"toolName": source_tool_name}));
    fields.insert("timestamp".into(), Value::from(pi_agent_core::now_ms()));
    AgentMessage::Custom(CustomMessage {
        role: "custom".into(),
        fields,
    })
}

/// The `resolve` tool.
///
/// It first asks the session's [`ToolChoiceQueue`] for the in-flight directive's invoker (which
/// marks a forced `resolve` as honoured) and otherwise calls the [`ResolveRuntime`] directly —
/// in a session as the model ([`ResolveTool::requiring_seen`]): a preview staged in the same
/// message is refused.
/// An abort returns at once with `Operation aborted`; the invocation itself still finishes in the
/// background, so the stack is never left half-updated.
pub struct ResolveTool {
    runtime: ResolveRuntime,
    queue: Option<ToolChoiceQueue>,
    require_seen: bool,
    parameters: ToolParameters,
}

impl ResolveTool {
    /// The tool over `runtime`, consulting `queue` for a forced choice's invoker when given.
    pub fn new(runtime: ResolveRuntime, queue: Option<ToolChoiceQueue>) -> Self {
        ResolveTool {
            runtime,
            queue,
            require_seen: false,
            parameters: ToolParameters::new(resolve_schema()),
        }
    }

    /// Refuses a top action the model has not seen yet ([`ResolveRuntime::resolve_for_model`]).
    /// The session sets it, as it marks the pending actions seen before every model call; a
    /// tool used without a session acts on any top.
    #[must_use]
    pub fn requiring_seen(mut self) -> Self {
        self.require_seen = true;
        self
    }
}

#[async_trait]
impl TypedTool for ResolveTool {
    type Params = ResolveParams;

    fn name(&self) -> &str {
        RESOLVE_TOOL_NAME
    }

    fn label(&self) -> &str {
        "Resolve"
    }

    fn description(&self) -> &str {
        RESOLVE_DESCRIPTION
    }

    fn parameters(&self) -> &ToolParameters {
        &self.parameters
    }

    /// For `apply`: the files of every pending action ([`PendingAction::mutated_files`]). The
    /// call applies the top one (a second `resolve` of the same message the next one), so its
    /// place in their mutation queues is reserved in source order, and the apply — run as its
    /// own task, which carries the reservation along — does not wait for it again.
    fn mutated_files(&self, args: &Value) -> Vec<PathBuf> {
        if args.get("action").and_then(Value::as_str) == Some(ResolveAction::Apply.as_str()) {
            self.runtime.store().mutated_files()
        } else {
            Vec::new()
        }
    }

    async fn execute(&self, _call_id: &str, params: ResolveParams, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let invocation = match self.queue.as_ref().and_then(ToolChoiceQueue::peek_in_flight_invoker) {
            // An invoker takes the arguments as JSON and reads them back as `ResolveParams`.
            Some(invoker) => invoker(serde_json::to_value(&params)?),
            None => {
                let runtime = self.runtime.clone();
                let require_seen = self.require_seen;
                Box::pin(async move {
                    if require_seen {
                        runtime.resolve_for_model(params).await
                    } else {
                        runtime.resolve(params).await
                    }
                })
            }
        };
        let mut result = tokio::select! {
            biased;
            () = ctx.cancel.cancelled() => Err(ToolError::new(OPERATION_ABORTED)),
            result = invocation => result,
        }?;
        // What an apply returns is a custom tool's result: kept within pi's output limits.
        crate::output_limit::limit_result(&mut result).await;
        Ok(result)
    }
}
