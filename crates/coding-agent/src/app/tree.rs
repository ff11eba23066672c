//! Moving about the session tree (pi's `navigateTree`): `/tree` and an extension's
//! `ctx.navigateTree`, with pi's optional summary of the branch being left.

use std::sync::Arc;

use pi_agent_core::{AgentError, AgentMessage, Model, lock};
use pi_session_store::{EntryKind, SessionEntry};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{App, AppError};
use crate::compaction::{
    BeforeTreeEvent, BranchSummaryError, BranchSummarySettings, TreeEvent, TreeHook, TreePreparation,
    collect_entries_for_branch_summary,
};
use crate::custom_tools::SessionReason;

/// How to navigate (pi's `navigateTree` options, same names).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NavigateOptions {
    /// Summarize the branch being left into a `branch_summary` entry.
    pub summarize: bool,
    /// Instructions for the summary (`Additional focus: …`).
    pub custom_instructions: Option<String>,
    /// The instructions replace pi's summary prompt instead of adding to it.
    pub replace_instructions: bool,
    /// A label for the summary entry (for the target when there is no summary).
    pub label: Option<String>,
}

/// How a navigation ended (pi's `navigateTree` result).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NavigateOutcome {
    /// The text of the user or custom message navigated to, for the editor.
    pub editor_text: Option<String>,
    /// Nothing moved: a hook cancelled, or the summary was aborted.
    pub cancelled: bool,
    /// The summary was aborted ([`App::abort_branch_summary`]).
    pub aborted: bool,
    /// The `branch_summary` entry written.
    pub summary_entry: Option<SessionEntry>,
}

impl App {
    /// Sets the `branchSummary` settings.
    pub fn set_branch_summary_settings(&self, settings: BranchSummarySettings) {
        *lock(&self.inner.compaction.branch_settings) = settings;
    }

    /// The `branchSummary` settings in force.
    pub fn branch_summary_settings(&self) -> BranchSummarySettings {
        lock(&self.inner.compaction.branch_settings).clone()
    }

    /// Adds a hook asked before every navigation and told after it.
    pub fn add_tree_hook(&self, hook: Arc<dyn TreeHook>) {
        self.inner
            .compaction
            .tree_hooks
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .push(hook);
    }

    /// Aborts the branch summary being asked for, if any (pi's `abortBranchSummary`): the
    /// navigation ends cancelled and aborted, nothing moved.
    pub fn abort_branch_summary(&self) {
        self.inner.compaction.branch_summary.cancel();
    }

    /// Whether a branch summary is being asked for.
    pub fn is_summarizing_branch(&self) -> bool {
        self.inner.compaction.branch_summary.is_active()
    }

    /// pi's `/tree` without a summary: see [`App::navigate_tree`]; returns the editor text.
    /// [`AppError::Cancelled`] when an extension (a [`TreeHook`]) cancelled the move.
    pub async fn navigate(&self, entry_id: &str) -> Result<Option<String>, AppError> {
        let outcome = self.navigate_tree(entry_id, NavigateOptions::default()).await?;
        if outcome.cancelled {
            return Err(AppError::Cancelled);
        }
        Ok(outcome.editor_text)
    }

    /// pi's `navigateTree`: moves the session to another point of its tree, in the same file.
    ///
    /// For a user (or custom) message the leaf goes to just before it and its text comes back for
    /// the editor; for any other entry the leaf goes to the entry itself. Navigating to the leaf
    /// does nothing. The [`TreeHook`]s are asked first (they may cancel, supply the summary, or
    /// change the instructions and label). With `summarize`, the entries from the old leaf back
    /// to the deepest shared entry are summarized and the summary is written as a
    /// `branch_summary` entry at the new position (a child of the new leaf, which it becomes);
    /// `label` goes on it (without a summary, on the target). The agent's context is rebuilt
    /// from the file; the model and thinking level stay; custom tools get `tree`. Fails while a
    /// run is active, for an unknown entry, without a model to summarize with, and when the
    /// summary request fails.
    pub async fn navigate_tree(&self, target_id: &str, options: NavigateOptions) -> Result<NavigateOutcome, AppError> {
        let old_leaf = self.with_store(|store| store.leaf_id().map(str::to_owned));
        if old_leaf.as_deref() == Some(target_id) {
            return Ok(NavigateOutcome::default());
        }
        let agent = self.inner.session.agent();
        if options.summarize && agent.model() == Model::unknown() {
            return Err(AppError::NoModelForSummary);
        }
        if agent.is_streaming() {
            return Err(AppError::Busy(AgentError::AlreadyResetting));
        }
        // One navigation at a time: a second one would take over the abort of the first.
        let Some(navigation) = self.inner.compaction.branch_summary.try_start() else {
            return Err(AppError::Navigating);
        };
        let (target, branch) = self.with_store(|store| {
            let target = store
                .entry(target_id)
                .cloned()
                .ok_or_else(|| AppError::EntryNotFound(target_id.to_owned()))?;
            let branch = collect_entries_for_branch_summary(store, old_leaf.as_deref(), target_id);
            Ok::<_, AppError>((target, branch))
        })?;
        let mut preparation = TreePreparation {
            target_id: target_id.to_owned(),
            old_leaf_id: old_leaf.clone(),
            common_ancestor_id: branch.common_ancestor_id,
            entries_to_summarize: branch.entries,
            user_wants_summary: options.summarize,
            custom_instructions: options.custom_instructions.clone(),
            replace_instructions: options.replace_instructions,
            label: options.label.clone(),
        };
        self.navigate_steps(&target, &mut preparation, navigation.token()).await
    }

    async fn navigate_steps(
        &self,
        target: &SessionEntry,
        preparation: &mut TreePreparation,
        cancel: &CancellationToken,
    ) -> Result<NavigateOutcome, AppError> {
        let hooks = self
            .inner
            .compaction
            .tree_hooks
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let (mut instructions, mut replace, mut label) = (
            preparation.custom_instructions.clone(),
            preparation.replace_instructions,
            preparation.label.clone(),
        );
        let mut supplied = None;
        for hook in &hooks {
            let answer = hook.before_tree(BeforeTreeEvent { preparation, cancel }).await;
            if answer.cancel {
                return Ok(NavigateOutcome {
                    cancelled: true,
                    ..NavigateOutcome::default()
                });
            }
            if let Some(summary) = answer.summary.filter(|_| preparation.user_wants_summary) {
                supplied = Some(summary);
            }
            if let Some(value) = answer.custom_instructions {
                instructions = Some(value);
            }
            if let Some(value) = answer.replace_instructions {
                replace = value;
            }
            if let Some(value) = answer.label {
                label = Some(value);
            }
        }
        let from_extension = supplied.is_some();
        let summary = match supplied {
            Some(supplied) => Some((supplied.summary, supplied.details)),
            None if preparation.user_wants_summary && !preparation.entries_to_summarize.is_empty() => {
                let summarizer = self.summarizer().await.map_err(|_| AppError::NoModelForSummary)?;
                let reserve = self.branch_summary_settings().reserve_tokens;
                match summarizer
                    .summarize_branch(
                        &preparation.entries_to_summarize,
                        instructions.as_deref(),
                        replace,
                        reserve,
                        cancel,
                    )
                    .await
                {
                    Ok(result) => Some((
                        result.summary,
                        Some(json!({"readFiles": result.read_files, "modifiedFiles": result.modified_files})),
                    )),
                    Err(BranchSummaryError::Aborted) => {
                        return Ok(NavigateOutcome {
                            cancelled: true,
                            aborted: true,
                            ..NavigateOutcome::default()
                        });
                    }
                    Err(BranchSummaryError::Failed(message)) => return Err(AppError::BranchSummary(message)),
                }
            }
            None => None,
        };
        let (new_leaf, editor_text) = match &target.kind {
            EntryKind::Message(AgentMessage::User(user)) => (target.parent_id.clone(), Some(user.content.text())),
            EntryKind::CustomMessage(custom) => (target.parent_id.clone(), Some(custom.content.text())),
            _ => (Some(target.id.clone()), None),
        };
        self.inner.session.agent().reset()?;
        self.drop_pending("Moved to another point of the session tree.").await;
        let summary_entry = self.with_store(|store| {
            let entry = match &summary {
                Some((text, details)) => {
                    let id =
                        store.branch_with_summary(new_leaf.as_deref(), text, details.clone(), Some(from_extension))?;
                    if let Some(label) = &label {
                        store.append_label(&id, Some(label))?;
                    }
                    store.entry(&id).cloned()
                }
                None => {
                    match &new_leaf {
                        Some(id) => store.branch(id)?,
                        None => store.reset_leaf(),
                    }
                    if let Some(label) = &label {
                        store.append_label(&target.id, Some(label))?;
                    }
                    None
                }
            };
            Ok::<_, AppError>(entry)
        })?;
        self.restore(true, true);
        let new_leaf_id = self.with_store(|store| store.leaf_id().map(str::to_owned));
        for hook in &hooks {
            hook.after_tree(TreeEvent {
                new_leaf_id: new_leaf_id.as_deref(),
                old_leaf_id: preparation.old_leaf_id.as_deref(),
                summary_entry: summary_entry.as_ref(),
                from_extension: summary.as_ref().map(|_| from_extension),
            })
            .await;
        }
        self.notify_tools(SessionReason::Tree, None).await;
        Ok(NavigateOutcome {
            editor_text,
            cancelled: false,
            aborted: false,
            summary_entry,
        })
    }
}
