//! The compaction state an [`App`](crate::App) keeps: settings, hooks, the running compaction.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, RwLock};

use tokio_util::sync::CancellationToken;

use super::{BranchSummarySettings, CompactionHook, CompactionSettings, TreeHook};

/// The app's compaction state.
#[derive(Default)]
pub(crate) struct CompactionState {
    pub(crate) settings: Mutex<CompactionSettings>,
    /// Set while a compaction runs; cancelling it aborts the compaction.
    pub(crate) running: Mutex<Option<CancellationToken>>,
    /// One compact-and-retry per prompt (pi's `_overflowRecoveryAttempted`).
    pub(crate) overflow_attempted: AtomicBool,
    /// Held by [`App::prompt`](crate::App::prompt) from its first compaction check to the end of
    /// the check after its run: a prompt that comes in meanwhile (RPC answers `agent_end` before
    /// that check) starts once it is done, never beside it.
    pub(crate) prompt_turn: tokio::sync::Mutex<()>,
    pub(crate) hooks: RwLock<Vec<Arc<dyn CompactionHook>>>,
    /// `branchSummary` settings.
    pub(crate) branch_settings: Mutex<BranchSummarySettings>,
    /// Set while a branch summary is asked for; cancelling it aborts the navigation.
    pub(crate) branch_summary: Mutex<Option<CancellationToken>>,
    pub(crate) tree_hooks: RwLock<Vec<Arc<dyn TreeHook>>>,
}
