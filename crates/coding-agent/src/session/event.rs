//! [`SessionEvent`]: what a session tells its listeners.

use pi_agent_core::{AgentEvent, ThinkingLevel};

use crate::compaction::{CompactionReason, CompactionResult};
use crate::resolve::{ForcingStopped, ResolveAction, ResolveOutcome};

/// An event of the session: every agent event, pi's session events (`queue_update`,
/// `thinking_level_changed`, `session_info_changed`), plus what the resolve runtime does.
// Events are handed to listeners by reference and never stored in bulk, so the size difference
// between the agent-event variant and the others costs nothing worth a box per event.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum SessionEvent {
    /// An event of the agent loop.
    Agent(AgentEvent),
    /// A preview was staged.
    PendingActionPushed {
        /// Its label.
        label: String,
        /// The tool that staged it.
        source_tool_name: String,
        /// Pending actions now.
        pending: usize,
    },
    /// A `resolve` invocation finished (by the model or the user).
    Resolved(ResolveOutcome),
    /// The model did not resolve the pending action in `attempts` forced calls in a row, so
    /// the session stopped forcing; the action stays pending for the user.
    ResolveForcingStopped(ForcingStopped),
    /// The steering or follow-up queue changed (pi's `queue_update`): the texts of the user
    /// messages still waiting in each, oldest first.
    QueueUpdate {
        /// Steering messages not delivered yet.
        steering: Vec<String>,
        /// Follow-up messages not delivered yet.
        follow_up: Vec<String>,
    },
    /// The thinking level changed (pi's `thinking_level_changed`), to this level.
    ThinkingLevelChanged(ThinkingLevel),
    /// The session was named (pi's `session_info_changed`): the name now.
    SessionInfoChanged {
        /// The session's name.
        name: Option<String>,
    },
    /// A turn failed with a transient error and will be sent again after `delay_ms` (pi's
    /// `auto_retry_start`).
    AutoRetryStart {
        /// This retry's number, from 1.
        attempt: u32,
        /// `retry.maxRetries`.
        max_attempts: u32,
        /// The wait before it.
        delay_ms: u64,
        /// The error of the failed turn.
        error_message: String,
    },
    /// The retry ended (pi's `auto_retry_end`): an answer came, the attempts ran out
    /// (`final_error` is the last error), or the wait was aborted (`Retry cancelled`).
    AutoRetryEnd {
        /// Whether an answer came.
        success: bool,
        /// The retries made.
        attempt: u32,
        /// Why it failed.
        final_error: Option<String>,
    },
    /// A compaction started (pi's `compaction_start`).
    CompactionStart {
        /// Why.
        reason: CompactionReason,
    },
    /// A compaction ended (pi's `compaction_end`).
    CompactionEnd {
        /// Why it ran.
        reason: CompactionReason,
        /// What it wrote; `None` when it failed, was aborted or had nothing to do.
        result: Option<CompactionResult>,
        /// Aborted, or cancelled by a hook.
        aborted: bool,
        /// The run is retried (after an overflow).
        will_retry: bool,
        /// Why it failed.
        error_message: Option<String>,
    },
}

impl SessionEvent {
    /// A one-line notice a UI can show for the session's own events.
    pub fn notice(&self) -> Option<String> {
        match self {
            SessionEvent::Agent(_)
            | SessionEvent::QueueUpdate { .. }
            | SessionEvent::ThinkingLevelChanged(_)
            | SessionEvent::SessionInfoChanged { .. }
            | SessionEvent::AutoRetryStart { .. }
            | SessionEvent::AutoRetryEnd { .. } => None,
            // pi's interactive texts.
            SessionEvent::CompactionStart { reason } => Some(match reason {
                CompactionReason::Manual => "Compacting context...".to_owned(),
                CompactionReason::Threshold => "Auto-compacting...".to_owned(),
                CompactionReason::Overflow => "Context overflow detected, Auto-compacting...".to_owned(),
            }),
            SessionEvent::CompactionEnd {
                reason,
                result,
                aborted,
                error_message,
                ..
            } => match (aborted, result, error_message) {
                (true, _, _) if *reason == CompactionReason::Manual => Some("Compaction cancelled".to_owned()),
                (true, _, _) => Some("Auto-compaction cancelled".to_owned()),
                (false, Some(result), _) => Some(format!(
                    "Compacted from {} tokens",
                    crate::grouped(result.tokens_before)
                )),
                (false, None, message) => message.clone(),
            },
            SessionEvent::PendingActionPushed { label, .. } => Some(format!("Pending: {label}")),
            SessionEvent::Resolved(outcome) => Some(match (&outcome.error, outcome.action) {
                (Some(error), _) => format!("Resolve failed: {error}"),
                (None, ResolveAction::Apply) => format!("Applied: {}", outcome.label),
                (None, ResolveAction::Discard) => format!("Discarded: {}", outcome.label),
            }),
            SessionEvent::ResolveForcingStopped(stopped) => Some(format!(
                "The model did not call resolve in {} forced turns; stopped forcing it. Still pending: {}",
                stopped.attempts, stopped.label
            )),
        }
    }
}
