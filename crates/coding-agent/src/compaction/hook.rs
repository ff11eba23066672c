//! The extension seam of compaction: pi's `session_before_compact` (cancel, or supply the summary)
//! and `session_compact` (told after). TypeScript extensions are wired to it by the extension
//! host; Rust programs implement [`CompactionHook`] and add it with
//! [`App::add_compaction_hook`](crate::App::add_compaction_hook).

use pi_session_store::SessionEntry;
use tokio_util::sync::CancellationToken;

use super::{CompactionPreparation, CompactionReason, CompactionResult};

/// What `session_before_compact` sees.
#[derive(Debug, Clone, Copy)]
pub struct BeforeCompactEvent<'a> {
    /// What the compaction will summarize and keep.
    pub preparation: &'a CompactionPreparation,
    /// Every entry of the current branch, root first.
    pub branch_entries: &'a [SessionEntry],
    /// The user's `/compact` instructions.
    pub custom_instructions: Option<&'a str>,
    /// Why the compaction runs.
    pub reason: CompactionReason,
    /// Cancelled when the compaction is aborted (pass it to model calls).
    pub cancel: &'a CancellationToken,
}

/// A hook's answer to `session_before_compact`.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum BeforeCompact {
    /// Go on with pi's summary.
    #[default]
    Proceed,
    /// Do not compact (`compaction_end` with `aborted: true`).
    Cancel,
    /// Use this instead of asking the model (written with `fromHook: true`).
    Supply(CompactionResult),
}

/// An extension's view of compaction. Hooks are asked in the order they were added; the first
/// that does not answer [`BeforeCompact::Proceed`] decides.
#[async_trait::async_trait]
pub trait CompactionHook: Send + Sync {
    /// pi's `session_before_compact`.
    async fn before_compact(&self, _event: BeforeCompactEvent<'_>) -> BeforeCompact {
        BeforeCompact::Proceed
    }

    /// pi's `session_compact`: the entry written, and whether a hook supplied it.
    async fn after_compact(&self, _entry: &SessionEntry, _from_hook: bool) {}
}

/// What a navigation will do, before it does it (pi's `TreePreparation`); a [`TreeHook`] sees
/// it.
#[derive(Debug, Clone, PartialEq)]
pub struct TreePreparation {
    /// Where the navigation goes.
    pub target_id: String,
    /// The leaf being left (`None` for an empty session).
    pub old_leaf_id: Option<String>,
    /// The deepest entry both branches share.
    pub common_ancestor_id: Option<String>,
    /// The entries a summary would cover, oldest first.
    pub entries_to_summarize: Vec<SessionEntry>,
    /// Whether the user asked for a summary.
    pub user_wants_summary: bool,
    /// The user's instructions for the summary.
    pub custom_instructions: Option<String>,
    /// Whether the instructions replace pi's prompt instead of adding to it.
    pub replace_instructions: bool,
    /// The label to put on the summary entry (or on the target without a summary).
    pub label: Option<String>,
}

/// What `session_before_tree` sees.
#[derive(Debug, Clone, Copy)]
pub struct BeforeTreeEvent<'a> {
    /// The navigation.
    pub preparation: &'a TreePreparation,
    /// Cancelled when the summary is aborted (pass it to model calls).
    pub cancel: &'a CancellationToken,
}

/// A summary an extension supplies instead of the model's (written with `fromHook: true`).
#[derive(Debug, Clone, PartialEq)]
pub struct SuppliedBranchSummary {
    /// The text of the `branch_summary` entry.
    pub summary: String,
    /// Its `details`.
    pub details: Option<serde_json::Value>,
}

/// A hook's answer to `session_before_tree` (pi's `SessionBeforeTreeResult`): every field
/// optional, as in pi.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BeforeTree {
    /// Do not navigate at all.
    pub cancel: bool,
    /// The summary to write instead of asking the model (used only when the user wants one).
    pub summary: Option<SuppliedBranchSummary>,
    /// Replaces the user's instructions.
    pub custom_instructions: Option<String>,
    /// Replaces whether the instructions replace pi's prompt.
    pub replace_instructions: Option<bool>,
    /// Replaces the label.
    pub label: Option<String>,
}

/// What `session_tree` sees after a navigation.
#[derive(Debug, Clone, Copy)]
pub struct TreeEvent<'a> {
    /// The leaf now.
    pub new_leaf_id: Option<&'a str>,
    /// The leaf before.
    pub old_leaf_id: Option<&'a str>,
    /// The `branch_summary` entry written, if any.
    pub summary_entry: Option<&'a SessionEntry>,
    /// With a summary: whether a hook supplied it.
    pub from_extension: Option<bool>,
}

/// An extension's view of tree navigation ([`App::navigate_tree`](crate::App::navigate_tree)):
/// pi's `session_before_tree` (always asked, summary wanted or not) and `session_tree`. Hooks
/// are asked in the order they were added; a cancel stops there, later answers override
/// earlier fields.
#[async_trait::async_trait]
pub trait TreeHook: Send + Sync {
    /// pi's `session_before_tree`.
    async fn before_tree(&self, _event: BeforeTreeEvent<'_>) -> BeforeTree {
        BeforeTree::default()
    }

    /// pi's `session_tree`.
    async fn after_tree(&self, _event: TreeEvent<'_>) {}
}
