//! The compaction state an [`App`](crate::App) keeps: settings, hooks, the running compaction.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, RwLock};

use tokio_util::sync::CancellationToken;

use super::{CompactionHook, CompactionSettings};

/// The app's compaction state.
#[derive(Default)]
pub(crate) struct CompactionState {
    pub(crate) settings: Mutex<CompactionSettings>,
    /// Set while a compaction runs; cancelling it aborts the compaction.
    pub(crate) running: Mutex<Option<CancellationToken>>,
    /// One compact-and-retry per prompt (pi's `_overflowRecoveryAttempted`).
    pub(crate) overflow_attempted: AtomicBool,
    pub(crate) hooks: RwLock<Vec<Arc<dyn CompactionHook>>>,
}
