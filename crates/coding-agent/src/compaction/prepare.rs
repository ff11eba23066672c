//! What a compaction summarizes and what it keeps (pi's `prepareCompaction` and `findCutPoint`),
//! and the file operations it carries over.
//!
//! Walking back from the newest entry, message estimates add up until `keepRecentTokens`; the cut
//! lands on the nearest valid cut point at or after that entry — a user, assistant or custom
//! message, never a tool result, so a tool call always stays with its results. A cut at an
//! assistant message splits its turn: the turn's beginning is summarized on its own.
//!
//! Beyond pi ([`Protected`]): the cut also never lands after an assistant message whose tool call
//! has no result yet, nor after the call that staged a preview still pending or the reminder about
//! it — those stay in the context verbatim.

use std::collections::{BTreeSet, HashSet};

use pi_agent_core::{AgentMessage, StopReason};
use pi_session_store::{EntryKind, SessionEntry, branch_summary_message, build_context, custom_message};
use serde_json::Value;

use super::CompactionSettings;
use super::tokens::{estimate_context_tokens, estimate_tokens};
use crate::resolve::RESOLVE_REMINDER_TYPE;

/// The files the summarized messages read, wrote and edited (through `read`, `write`, `edit`),
/// plus those of the previous compaction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileOps {
    /// Paths read.
    pub read: BTreeSet<String>,
    /// Paths written.
    pub written: BTreeSet<String>,
    /// Paths edited.
    pub edited: BTreeSet<String>,
}

impl FileOps {
    /// Adds the `readFiles` (read) and `modifiedFiles` (edited) lists of an earlier summary's
    /// `details`, as pi carries them from one compaction or branch summary to the next.
    pub fn add_details(&mut self, details: Option<&Value>) {
        let Some(details) = details else { return };
        let names = |key: &str| {
            details
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
        };
        self.read.extend(names("readFiles"));
        self.edited.extend(names("modifiedFiles"));
    }

    /// Adds the `path` of every `read`, `write` and `edit` call of an assistant message.
    pub fn add_message(&mut self, message: &AgentMessage) {
        let Some(assistant) = message.as_assistant() else {
            return;
        };
        for call in assistant.tool_calls() {
            let Some(path) = call.arguments.get("path").and_then(Value::as_str) else {
                continue;
            };
            let set = match call.name.as_str() {
                "read" => &mut self.read,
                "write" => &mut self.written,
                "edit" => &mut self.edited,
                _ => continue,
            };
            set.insert(path.to_owned());
        }
    }

    /// `(readFiles, modifiedFiles)`: the files only read, and those written or edited, sorted.
    pub fn file_lists(&self) -> (Vec<String>, Vec<String>) {
        let modified: BTreeSet<&String> = self.edited.iter().chain(&self.written).collect();
        let read = self.read.iter().filter(|f| !modified.contains(f)).cloned().collect();
        (read, modified.into_iter().cloned().collect())
    }
}

/// What a compaction will do, computed before the summary is asked for (pi's
/// `CompactionPreparation`); a [`CompactionHook`](super::CompactionHook) sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionPreparation {
    /// The first entry the context keeps.
    pub first_kept_entry_id: String,
    /// The messages the summary replaces (complete turns).
    pub messages_to_summarize: Vec<AgentMessage>,
    /// The beginning of a turn cut in two, summarized on its own.
    pub turn_prefix_messages: Vec<AgentMessage>,
    /// Whether the cut splits a turn.
    pub is_split_turn: bool,
    /// The context size before compaction.
    pub tokens_before: u64,
    /// The summary of the previous compaction, updated rather than replaced.
    pub previous_summary: Option<String>,
    /// The files read and modified, cumulative.
    pub file_ops: FileOps,
    /// The settings in force.
    pub settings: CompactionSettings,
}

/// What must stay in the context whatever the budget (beyond pi): one entry per pending action,
/// the name of the tool that staged it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Protected {
    /// The source tool of every pending action, newest last.
    pub pending_sources: Vec<String>,
}

/// The message an entry gives the summarizer (compactions give none).
pub(super) fn entry_message(entry: &SessionEntry) -> Option<AgentMessage> {
    match &entry.kind {
        EntryKind::Message(message) => Some(message.clone()),
        EntryKind::CustomMessage(custom) => Some(custom_message(custom, &entry.timestamp)),
        EntryKind::BranchSummary(b) => Some(branch_summary_message(&b.summary, &b.from_id, &entry.timestamp)),
        _ => None,
    }
}

fn is_cut_point(entry: &SessionEntry) -> bool {
    match &entry.kind {
        EntryKind::Message(AgentMessage::ToolResult(_)) => false,
        EntryKind::Message(_) | EntryKind::BranchSummary(_) | EntryKind::CustomMessage(_) => true,
        _ => false,
    }
}

/// The entry that starts the turn holding `index` (a user or `bashExecution` message, a branch
/// summary or custom message), searching back to `start`.
fn turn_start(path: &[&SessionEntry], index: usize, start: usize) -> Option<usize> {
    (start..=index).rev().find(|&i| match &path[i].kind {
        EntryKind::BranchSummary(_) | EntryKind::CustomMessage(_) => true,
        EntryKind::Message(AgentMessage::User(_)) => true,
        EntryKind::Message(AgentMessage::Custom(custom)) => custom.role == "bashExecution",
        _ => false,
    })
}

/// Where the kept part starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CutPoint {
    pub(crate) first_kept: usize,
    pub(crate) turn_start: Option<usize>,
}

impl CutPoint {
    fn split(&self) -> bool {
        self.turn_start.is_some()
    }
}

/// pi's `findCutPoint` over `path[start..end]`, then moved back to `limit` (beyond pi) when it
/// would summarize a protected entry.
pub(crate) fn find_cut_point(
    path: &[&SessionEntry],
    start: usize,
    end: usize,
    keep_recent_tokens: u64,
    limit: Option<usize>,
) -> CutPoint {
    let cut_points: Vec<usize> = (start..end).filter(|&i| is_cut_point(path[i])).collect();
    let Some(&first) = cut_points.first() else {
        return CutPoint {
            first_kept: start,
            turn_start: None,
        };
    };
    let mut cut = first;
    let mut accumulated = 0u64;
    for i in (start..end).rev() {
        let EntryKind::Message(message) = &path[i].kind else {
            continue;
        };
        accumulated += estimate_tokens(message);
        if accumulated >= keep_recent_tokens {
            if let Some(&c) = cut_points.iter().find(|&&c| c >= i) {
                cut = c;
            }
            break;
        }
    }
    if let Some(limit) = limit
        && cut > limit
    {
        cut = cut_points.iter().rev().copied().find(|&c| c <= limit).unwrap_or(start);
    }
    // Non-message entries just before the cut (model changes, labels …) stay with it.
    while cut > start {
        match &path[cut - 1].kind {
            EntryKind::Compaction(_) | EntryKind::Message(_) => break,
            _ => cut -= 1,
        }
    }
    let is_user = matches!(&path[cut].kind, EntryKind::Message(AgentMessage::User(_)));
    CutPoint {
        first_kept: cut,
        turn_start: if is_user { None } else { turn_start(path, cut, start) },
    }
}

/// The earliest path index that must stay in the context (beyond pi): assistant messages with a
/// tool call that has no result, and — while previews are pending — the calls that staged them
/// and the latest `resolve` reminder.
fn protected_from(path: &[&SessionEntry], protected: &Protected) -> Option<usize> {
    let answered: HashSet<&str> = path
        .iter()
        .filter_map(|entry| match &entry.kind {
            EntryKind::Message(AgentMessage::ToolResult(result)) => Some(result.tool_call_id.as_str()),
            _ => None,
        })
        .collect();
    let mut earliest: Option<usize> = None;
    let mut keep = |index: usize| earliest = Some(earliest.map_or(index, |e| e.min(index)));
    for (index, entry) in path.iter().enumerate() {
        if let EntryKind::Message(AgentMessage::Assistant(assistant)) = &entry.kind
            && !matches!(assistant.stop_reason, StopReason::Aborted | StopReason::Error)
            && assistant.tool_calls().any(|call| !answered.contains(call.id.as_str()))
        {
            keep(index);
        }
    }
    if protected.pending_sources.is_empty() {
        return earliest;
    }
    if let Some(reminder) = path.iter().rposition(|entry| match &entry.kind {
        EntryKind::CustomMessage(custom) => custom.custom_type == RESOLVE_REMINDER_TYPE,
        EntryKind::Message(AgentMessage::Custom(custom)) => {
            custom.fields.get("customType").and_then(Value::as_str) == Some(RESOLVE_REMINDER_TYPE)
        }
        _ => false,
    }) {
        keep(reminder);
    }
    // The calls that staged the pending previews: as many successful results of their tools,
    // newest first, as there are pending actions.
    let sources: HashSet<&str> = protected.pending_sources.iter().map(String::as_str).collect();
    let mut staging = path
        .iter()
        .enumerate()
        .rev()
        .filter_map(|(index, entry)| match &entry.kind {
            EntryKind::Message(AgentMessage::ToolResult(result))
                if !result.is_error && sources.contains(result.tool_name.as_str()) =>
            {
                Some((index, result.tool_call_id.as_str()))
            }
            _ => None,
        });
    for _ in 0..protected.pending_sources.len() {
        let Some((result_index, call_id)) = staging.next() else {
            break;
        };
        let call_index = path[..result_index].iter().rposition(|entry| match &entry.kind {
            EntryKind::Message(AgentMessage::Assistant(a)) => a.tool_calls().any(|c| c.id == call_id),
            _ => false,
        });
        keep(call_index.unwrap_or(result_index));
    }
    earliest
}

/// pi's `prepareCompaction` of the branch `path` (root first): `None` when the branch ends with a
/// compaction, when the first kept entry has no id, or (beyond pi) when protected entries leave
/// nothing to summarize.
pub fn prepare_compaction(
    path: &[&SessionEntry],
    settings: &CompactionSettings,
    protected: &Protected,
) -> Option<CompactionPreparation> {
    if matches!(path.last().map(|e| &e.kind), Some(EntryKind::Compaction(_))) {
        return None;
    }
    let previous = path
        .iter()
        .enumerate()
        .rev()
        .find_map(|(index, entry)| match &entry.kind {
            EntryKind::Compaction(c) => Some((index, c)),
            _ => None,
        });
    let boundary_start = previous.map_or(0, |(index, c)| {
        path.iter()
            .position(|e| e.id == c.first_kept_entry_id)
            .unwrap_or(index + 1)
    });
    let end = path.len();
    let tokens_before = estimate_context_tokens(&build_context(path).messages).tokens;
    let limit = protected_from(path, protected);
    let cut = find_cut_point(path, boundary_start, end, settings.keep_recent_tokens, limit);
    let first_kept = path.get(cut.first_kept)?;
    if first_kept.id.is_empty() {
        return None;
    }
    let history_end = cut.turn_start.unwrap_or(cut.first_kept);
    let collect = |range: std::ops::Range<usize>| -> Vec<AgentMessage> {
        path[range].iter().filter_map(|e| entry_message(e)).collect()
    };
    let messages_to_summarize = collect(boundary_start..history_end);
    let turn_prefix_messages = match cut.turn_start {
        Some(turn) => collect(turn..cut.first_kept),
        None => Vec::new(),
    };
    if limit.is_some() && messages_to_summarize.is_empty() && turn_prefix_messages.is_empty() {
        return None;
    }
    let mut file_ops = FileOps::default();
    if let Some((_, c)) = previous
        && c.from_hook != Some(true)
    {
        file_ops.add_details(c.details.as_ref());
    }
    for message in messages_to_summarize.iter().chain(&turn_prefix_messages) {
        file_ops.add_message(message);
    }
    Some(CompactionPreparation {
        first_kept_entry_id: first_kept.id.clone(),
        messages_to_summarize,
        is_split_turn: cut.split(),
        turn_prefix_messages,
        tokens_before,
        previous_summary: previous.map(|(_, c)| c.summary.clone()),
        file_ops,
        settings: settings.clone(),
    })
}
