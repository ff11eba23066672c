//! Running one `resolve` call against one target: oh-my-pi's `runResolveInvocation`
//! (`reference/omp.md` §1.4), shared by pending actions and standing handlers.
//!
//! The callback's result comes back with its `details` replaced by the resolve metadata
//! (`action`, `reason`, `extra?`, `sourceToolName`, `label`) plus `sourceResultDetails` — the
//! callback's own details, when it had any — so that a UI can show what was resolved without
//! knowing the producing tool.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use pi_coding_agent::resolve::PendingAction;
//! use pi_coding_agent::resolve::{ResolveAction, ResolveParams, run_resolve_invocation};
//! use pi_agent_core::ToolResult;
//!
//! let action = PendingAction::new("Batch rename: 2 files", "batch_rename", |_reason, _extra| async {
//!     Ok(ToolResult::text("Renamed 2 files."))
//! });
//! let params = ResolveParams::new(ResolveAction::Discard, "Wrong files.");
//! let result = run_resolve_invocation(&params, &action).await.unwrap();
//! assert_eq!(result.content[0].as_text(), Some("Discarded: Batch rename: 2 files. Reason: Wrong files."));
//! assert_eq!(result.details["sourceToolName"], "batch_rename");
//! # });
//! ```

use pi_agent_core::{ToolError, ToolResult};
use serde_json::{Map, Value};

use super::{ResolveAction, ResolveParams};
use crate::resolve::{PendingAction, PendingError};

/// Prefix of the error text of an apply callback that failed with something other than a
/// [`ToolError`].
pub const APPLY_FAILED_PREFIX: &str = "Apply failed: ";

/// The resolve metadata every result carries: `action`, `reason`, `extra` (when given),
/// `sourceToolName`, `label`.
pub fn base_details(params: &ResolveParams, source_tool_name: &str, label: &str) -> Map<String, Value> {
    let mut details = Map::new();
    details.insert("action".into(), Value::from(params.action.as_str()));
    details.insert("reason".into(), Value::from(params.reason.clone()));
    if let Some(extra) = &params.extra {
        details.insert("extra".into(), Value::Object(extra.clone()));
    }
    details.insert("sourceToolName".into(), Value::from(source_tool_name));
    details.insert("label".into(), Value::from(label));
    details
}

/// `base` plus `sourceResultDetails` when `source` holds something (not null, not `{}` — the
/// details of a result built with [`ToolResult::text`]).
fn merged(mut base: Map<String, Value>, source: Option<&Value>) -> Value {
    let meaningful = |d: &&Value| !d.is_null() && d.as_object().is_none_or(|o| !o.is_empty());
    if let Some(source) = source.filter(meaningful) {
        base.insert("sourceResultDetails".into(), source.clone());
    }
    Value::Object(base)
}

/// The text of a discard without a `reject` callback (or whose callback returned nothing).
pub fn default_discard_text(label: &str, reason: &str) -> String {
    format!("Discarded: {label}. Reason: {reason}")
}

/// Applies or discards `action` as `params` ask.
///
/// * apply → `apply(reason, extra)`; its result comes back with merged details. A [`PendingError::Tool`] comes back as that error (its
///   message unchanged), any other failure as `Apply failed: <message>`. Either way the error's
///   details are the resolve metadata, with the callback's error details as
///   `sourceResultDetails`.
/// * discard → `reject(reason, extra)` when there is one and it returns a result; otherwise
///   `Discarded: <label>. Reason: <reason>`. A failing `reject` is reported without the
///   `Apply failed:` prefix.
///
/// This does not touch any store: whoever owns the action decides what a success or failure
/// means for it.
pub async fn run_resolve_invocation(params: &ResolveParams, action: &PendingAction) -> Result<ToolResult, ToolError> {
    let base = base_details(params, &action.source_tool_name, &action.label);
    let extra = params.extra.clone().map(Value::Object);
    let outcome = match params.action {
        ResolveAction::Apply => (action.apply)(params.reason.clone(), extra).await.map(Some),
        ResolveAction::Discard => match &action.reject {
            Some(reject) => reject(params.reason.clone(), extra).await,
            None => Ok(None),
        },
    };
    match outcome {
        Ok(Some(mut result)) => {
            let source = std::mem::take(&mut result.details);
            result.details = merged(base, Some(&source));
            Ok(result)
        }
        Ok(None) => {
            Ok(ToolResult::text(default_discard_text(&action.label, &params.reason)).with_details(Value::Object(base)))
        }
        Err(PendingError::Tool(error)) => {
            let details = merged(base, error.details());
            Err(ToolError::new(error.message()).with_details(details))
        }
        Err(PendingError::Other(message)) => {
            let text = match params.action {
                ResolveAction::Apply => format!("{APPLY_FAILED_PREFIX}{message}"),
                ResolveAction::Discard => message,
            };
            Err(ToolError::new(text).with_details(Value::Object(base)))
        }
    }
}
