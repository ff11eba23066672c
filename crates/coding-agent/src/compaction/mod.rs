//! Compaction of long sessions, as pi 0.73.1 does it (`docs/compaction.md`).
//!
//! * [`estimate_context_tokens`], [`ContextUsage`]: how full the context is — the last assistant
//!   usage plus a chars / 4 estimate of what came after.
//! * [`prepare_compaction`]: where to cut (never between a tool call and its result; beyond pi,
//!   never before a pending preview, its reminder or an unanswered tool call — [`Protected`]) and
//!   what to summarize.
//! * [`Summarizer`]: pi's summary prompts and structured format, the file lists appended.
//! * `collect_entries_for_branch_summary`, [`Summarizer::summarize_branch`]: pi's summary of
//!   the branch `/tree` leaves (`branch_summary` entries); [`TreeHook`] is its extension seam
//!   (`session_before_tree`, `session_tree`).
//! * [`CompactionHook`]: the seam through which extensions (`session_before_compact`,
//!   `session_compact`) cancel a compaction, supply their own summary, or hear about it.
//!
//! [`App`](crate::App) runs it: on `/compact`, when the context passes `contextWindow −
//! reserveTokens` after a run, and when the provider refuses a request as too long (then it
//! compacts and retries once).

mod branch;
mod hook;
mod prepare;
mod state;
mod summary;
mod tokens;

pub(crate) use branch::collect_entries_for_branch_summary;
pub use branch::{
    BRANCH_SUMMARY_MAX_TOKENS, BRANCH_SUMMARY_PREAMBLE, BRANCH_SUMMARY_PROMPT, BranchSummaryError, BranchSummaryResult,
    BranchSummarySettings,
};
#[cfg(test)]
pub(crate) use branch::{BranchEntries, prepare_branch_entries};
pub use hook::{
    BeforeCompact, BeforeCompactEvent, BeforeTree, BeforeTreeEvent, CompactionHook, SuppliedBranchSummary, TreeEvent,
    TreeHook, TreePreparation,
};
pub use prepare::{CompactionPreparation, FileOps, Protected, prepare_compaction};
pub(crate) use state::CompactionState;
pub(crate) use summary::final_message;
pub use summary::{
    SUMMARIZATION_PROMPT, SUMMARIZATION_SYSTEM_PROMPT, Summarizer, TURN_PREFIX_SUMMARIZATION_PROMPT,
    UPDATE_SUMMARIZATION_PROMPT, format_file_operations, serialize_conversation,
};
pub use tokens::{ContextEstimate, calculate_context_tokens, estimate_context_tokens, estimate_tokens, should_compact};

use serde_json::{Map, Value, json};

/// pi's `compaction` settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionSettings {
    /// `compaction.enabled` (default true): compact automatically.
    pub enabled: bool,
    /// `compaction.reserveTokens` (default 16 384): room left for the answer.
    pub reserve_tokens: u64,
    /// `compaction.keepRecentTokens` (default 20 000): recent tokens kept verbatim.
    pub keep_recent_tokens: u64,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        CompactionSettings {
            enabled: true,
            reserve_tokens: 16384,
            keep_recent_tokens: 20000,
        }
    }
}

impl CompactionSettings {
    /// The `compaction` object of merged settings (pi's defaults for what is missing or not of
    /// the right type).
    ///
    /// ```
    /// use pi_coding_agent::compaction::CompactionSettings;
    /// let raw = serde_json::json!({"compaction": {"reserveTokens": 1000}});
    /// let settings = CompactionSettings::from_settings(raw.as_object().unwrap());
    /// assert_eq!((settings.enabled, settings.reserve_tokens, settings.keep_recent_tokens), (true, 1000, 20000));
    /// ```
    pub fn from_settings(raw: &Map<String, Value>) -> Self {
        let defaults = CompactionSettings::default();
        let section = raw.get("compaction").and_then(Value::as_object);
        let field = |name: &str| section.and_then(|s| s.get(name));
        CompactionSettings {
            enabled: field("enabled").and_then(Value::as_bool).unwrap_or(defaults.enabled),
            reserve_tokens: field("reserveTokens")
                .and_then(Value::as_u64)
                .unwrap_or(defaults.reserve_tokens),
            keep_recent_tokens: field("keepRecentTokens")
                .and_then(Value::as_u64)
                .unwrap_or(defaults.keep_recent_tokens),
        }
    }
}

/// Why a compaction runs (the `reason` of `compaction_start` / `compaction_end`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionReason {
    /// `/compact`, RPC `compact`.
    Manual,
    /// The context passed `contextWindow − reserveTokens`.
    Threshold,
    /// The provider refused the request as too long; the run is retried after.
    Overflow,
}

impl CompactionReason {
    /// `manual`, `threshold` or `overflow`.
    pub fn as_str(self) -> &'static str {
        match self {
            CompactionReason::Manual => "manual",
            CompactionReason::Threshold => "threshold",
            CompactionReason::Overflow => "overflow",
        }
    }
}

/// What a compaction wrote (pi's `CompactionResult`): the `compaction` entry's fields.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionResult {
    /// The summary that replaces the history.
    pub summary: String,
    /// The first entry kept.
    pub first_kept_entry_id: String,
    /// The context size before.
    pub tokens_before: u64,
    /// `{readFiles, modifiedFiles}` for pi's own summaries; whatever a hook gave for its own.
    pub details: Option<Value>,
}

impl CompactionResult {
    /// `{summary, firstKeptEntryId, tokensBefore, details?}` as pi writes it in events and RPC.
    pub fn to_json(&self) -> Value {
        let mut value = json!({
            "summary": self.summary,
            "firstKeptEntryId": self.first_kept_entry_id,
            "tokensBefore": self.tokens_before,
        });
        if let Some(details) = &self.details {
            value["details"] = details.clone();
        }
        value
    }
}

/// Why a compaction did not happen; the texts are pi's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompactionError {
    /// The branch already ends with a compaction.
    #[error("Already compacted")]
    AlreadyCompacted,
    /// Nothing can be summarized.
    #[error("Nothing to compact (session too small)")]
    NothingToCompact,
    /// Aborted, or cancelled by a hook.
    #[error("Compaction cancelled")]
    Cancelled,
    /// Another compaction is running.
    #[error("Compaction already in progress")]
    Busy,
    /// The summary request failed (`Summarization failed: …`), or the entry could not be written.
    #[error("{0}")]
    Failed(String),
}

/// How full the context is (pi's `getContextUsage`, RPC `get_session_stats.contextUsage`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContextUsage {
    /// The estimate; `None` right after a compaction, until an answer reports usage again.
    pub tokens: Option<u64>,
    /// The model's context window.
    pub context_window: u64,
    /// `tokens / context_window × 100`.
    pub percent: Option<f64>,
}

impl ContextUsage {
    /// `{tokens, contextWindow, percent}`, numbers as JavaScript writes them (`30`, not `30.0`).
    pub fn to_json(&self) -> Value {
        let percent = match self.percent {
            Some(p) if p.is_finite() && p.fract() == 0.0 && p.abs() < 1e15 => Value::from(p as i64),
            Some(p) => Value::from(p),
            None => Value::Null,
        };
        json!({"tokens": self.tokens, "contextWindow": self.context_window, "percent": percent})
    }
}

#[cfg(test)]
mod tests;
