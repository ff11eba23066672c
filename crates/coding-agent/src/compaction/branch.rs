//! Branch summaries, as pi 0.73.1 writes them when `/tree` moves to another branch
//! (`docs/compaction.md`, "Branch Summarization"): the entries from the old leaf back to the
//! deepest entry both branches share are summarized — newest first, within `contextWindow −
//! branchSummary.reserveTokens` — with pi's branch prompt, and the summary goes into a
//! `branch_summary` entry at the navigation target.

use pi_agent_core::{AgentMessage, ContentBlock, StopReason};
use pi_session_store::{EntryKind, SessionEntry, SessionManager, compaction_summary_message};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::prepare::{FileOps, entry_message};
use super::summary::{Summarizer, conversation_block, format_file_operations, with_focus};
use super::tokens::estimate_tokens;

/// Put before the model's answer in a branch summary.
pub const BRANCH_SUMMARY_PREAMBLE: &str =
    "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n";

/// The instructions of a branch summary.
pub const BRANCH_SUMMARY_PROMPT: &str = r#"Create a structured summary of this conversation branch for context when returning later.

Use this EXACT format:

## Goal
[What was the user trying to accomplish in this branch?]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Work that was started but not finished]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [What should happen next to continue this work]

Keep each section concise. Preserve exact file paths, function names, and error messages."#;

/// The output limit of a branch summary request (pi's).
pub const BRANCH_SUMMARY_MAX_TOKENS: u64 = 2048;

/// The context window pi assumes for a model that gives none.
const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;

/// pi's `branchSummary` settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchSummarySettings {
    /// `branchSummary.reserveTokens` (default 16 384): the part of the context window left out
    /// of the summarized conversation.
    pub reserve_tokens: u64,
    /// `branchSummary.skipPrompt` (default false): `/tree` does not ask "Summarize branch?" and
    /// navigates without a summary.
    pub skip_prompt: bool,
}

impl Default for BranchSummarySettings {
    fn default() -> Self {
        BranchSummarySettings {
            reserve_tokens: 16384,
            skip_prompt: false,
        }
    }
}

impl BranchSummarySettings {
    /// The `branchSummary` object of merged settings (pi's defaults for what is missing or not of
    /// the right type).
    ///
    /// ```
    /// use pi_coding_agent::compaction::BranchSummarySettings;
    /// let raw = serde_json::json!({"branchSummary": {"skipPrompt": true}});
    /// let settings = BranchSummarySettings::from_settings(raw.as_object().unwrap());
    /// assert_eq!((settings.reserve_tokens, settings.skip_prompt), (16384, true));
    /// ```
    pub fn from_settings(raw: &Map<String, Value>) -> Self {
        let defaults = BranchSummarySettings::default();
        let section = raw.get("branchSummary").and_then(Value::as_object);
        let field = |name: &str| section.and_then(|s| s.get(name));
        BranchSummarySettings {
            reserve_tokens: field("reserveTokens")
                .and_then(Value::as_u64)
                .unwrap_or(defaults.reserve_tokens),
            skip_prompt: field("skipPrompt")
                .and_then(Value::as_bool)
                .unwrap_or(defaults.skip_prompt),
        }
    }
}

/// The entries a navigation leaves behind (pi's `collectEntriesForBranchSummary`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct BranchEntries {
    /// From the entry after the common ancestor to the old leaf, oldest first.
    pub entries: Vec<SessionEntry>,
    /// The deepest entry on both the old and the target branch; `None` when they share none.
    pub common_ancestor_id: Option<String>,
}

/// The entries from `old_leaf` back to the deepest entry it shares with the branch of
/// `target_id` (not included), oldest first. Compactions and earlier branch summaries on the way
/// are included (their summaries become context). Nothing without an old leaf.
pub(crate) fn collect_entries_for_branch_summary(
    store: &SessionManager,
    old_leaf: Option<&str>,
    target_id: &str,
) -> BranchEntries {
    let Some(old_leaf) = old_leaf else {
        return BranchEntries::default();
    };
    // The store's walk is cycle-safe (a damaged file may close a loop of parent ids): keep its
    // path and clone what lies below the common ancestor, never walking parent ids by hand.
    let old_path = store.branch_path(old_leaf).unwrap_or_default();
    let on_old_path: std::collections::HashSet<&str> = old_path.iter().map(|e| e.id.as_str()).collect();
    let common_ancestor_id = store.branch_path(target_id).ok().and_then(|path| {
        path.iter()
            .rev()
            .find(|e| on_old_path.contains(e.id.as_str()))
            .map(|e| e.id.clone())
    });
    let start = common_ancestor_id
        .as_deref()
        .and_then(|ancestor| old_path.iter().position(|e| e.id == ancestor))
        .map_or(0, |position| position + 1);
    let entries = old_path[start..].iter().map(|e| (*e).clone()).collect();
    BranchEntries {
        entries,
        common_ancestor_id,
    }
}

/// What of the abandoned entries the summary request holds (pi's `prepareBranchEntries`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct PreparedBranch {
    /// The messages summarized, oldest first.
    pub messages: Vec<AgentMessage>,
    /// The files read and modified: the messages' `read`, `write`, `edit` calls and the lists of
    /// the branch summaries among the entries (cumulative).
    pub file_ops: FileOps,
}

/// The message an abandoned entry gives the summary: tool results give none (the call says
/// enough), compactions and branch summaries their summary.
fn branch_entry_message(entry: &SessionEntry) -> Option<AgentMessage> {
    match &entry.kind {
        EntryKind::Message(AgentMessage::ToolResult(_)) => None,
        EntryKind::Compaction(c) => Some(compaction_summary_message(
            &c.summary,
            c.tokens_before,
            &entry.timestamp,
        )),
        _ => entry_message(entry),
    }
}

/// Walks `entries` newest first, keeping messages while their estimates fit `token_budget` (0: no
/// limit); a compaction or branch summary that does not fit is still kept while less than 90 % of
/// the budget is used. File operations come from every entry, kept or not.
pub(crate) fn prepare_branch_entries(entries: &[SessionEntry], token_budget: u64) -> PreparedBranch {
    let mut file_ops = FileOps::default();
    for entry in entries {
        if let EntryKind::BranchSummary(summary) = &entry.kind
            && summary.from_hook != Some(true)
        {
            file_ops.add_details(summary.details.as_ref());
        }
    }
    let mut messages = Vec::new();
    let mut total_tokens = 0u64;
    for entry in entries.iter().rev() {
        let Some(message) = branch_entry_message(entry) else {
            continue;
        };
        file_ops.add_message(&message);
        let tokens = estimate_tokens(&message);
        if token_budget > 0 && total_tokens + tokens > token_budget {
            let is_summary = matches!(entry.kind, EntryKind::Compaction(_) | EntryKind::BranchSummary(_));
            if is_summary && (total_tokens as f64) < token_budget as f64 * 0.9 {
                messages.push(message);
            }
            break;
        }
        messages.push(message);
        total_tokens += tokens;
    }
    messages.reverse();
    PreparedBranch { messages, file_ops }
}

/// A branch summary (pi's `generateBranchSummary` result).
#[derive(Debug, Clone, PartialEq)]
pub struct BranchSummaryResult {
    /// The text of the `branch_summary` entry: the preamble, the model's summary, the file lists.
    pub summary: String,
    /// Files only read.
    pub read_files: Vec<String>,
    /// Files written or edited.
    pub modified_files: Vec<String>,
}

/// Why a branch summary was not made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BranchSummaryError {
    /// The request was aborted.
    #[error("Branch summarization cancelled")]
    Aborted,
    /// The model answered with an error (its text, or `Summarization failed`).
    #[error("{0}")]
    Failed(String),
}

impl Summarizer {
    /// pi's `generateBranchSummary` of the abandoned `entries`: one request with pi's system
    /// prompt and the serialized conversation, then [`BRANCH_SUMMARY_PROMPT`] (`Additional
    /// focus: <instructions>` after it, or the instructions alone when `replace_instructions`);
    /// at most 2 048 tokens back, no reasoning. Without any message: `No content to summarize`.
    pub async fn summarize_branch(
        &self,
        entries: &[SessionEntry],
        custom_instructions: Option<&str>,
        replace_instructions: bool,
        reserve_tokens: u64,
        cancel: &CancellationToken,
    ) -> Result<BranchSummaryResult, BranchSummaryError> {
        let context_window = match self.model.context_window {
            0 => DEFAULT_CONTEXT_WINDOW,
            window => window,
        };
        let budget = context_window.saturating_sub(reserve_tokens);
        let prepared = prepare_branch_entries(entries, budget);
        if prepared.messages.is_empty() {
            return Ok(BranchSummaryResult {
                summary: "No content to summarize".to_owned(),
                read_files: Vec::new(),
                modified_files: Vec::new(),
            });
        }
        let instructions = match custom_instructions.filter(|i| !i.is_empty()) {
            Some(custom) if replace_instructions => custom.to_owned(),
            Some(custom) => with_focus(BRANCH_SUMMARY_PROMPT, custom),
            None => BRANCH_SUMMARY_PROMPT.to_owned(),
        };
        let prompt = conversation_block(&prepared.messages) + &instructions;
        let response = self.complete(prompt, BRANCH_SUMMARY_MAX_TOKENS, false, cancel).await;
        if cancel.is_cancelled() || response.stop_reason == StopReason::Aborted {
            return Err(BranchSummaryError::Aborted);
        }
        if response.stop_reason == StopReason::Error {
            let message = response
                .error_message
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| "Summarization failed".to_owned());
            return Err(BranchSummaryError::Failed(message));
        }
        let text = response
            .content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect::<Vec<_>>()
            .join("\n");
        let (read_files, modified_files) = prepared.file_ops.file_lists();
        let summary = format!(
            "{BRANCH_SUMMARY_PREAMBLE}{text}{}",
            format_file_operations(&read_files, &modified_files)
        );
        Ok(BranchSummaryResult {
            summary,
            read_files,
            modified_files,
        })
    }
}
