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
    pub(crate) hooks: RwLock<Vec<Arc<dyn CompactionHook>>>,
    /// `branchSummary` settings.
    pub(crate) branch_settings: Mutex<BranchSummarySettings>,
    /// Set while a branch summary is asked for; cancelling it aborts the navigation.
    pub(crate) branch_summary: Mutex<Option<CancellationToken>>,
    pub(crate) tree_hooks: RwLock<Vec<Arc<dyn TreeHook>>>,
}
