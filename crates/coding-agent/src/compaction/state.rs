//! The compaction state an [`App`](crate::App) keeps: settings, hooks, the running compaction.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, RwLock};

use pi_agent_core::lock;
use tokio_util::sync::CancellationToken;

use super::{BranchSummarySettings, CompactionHook, CompactionSettings, TreeHook};

/// The app's compaction state.
#[derive(Default)]
pub(crate) struct CompactionState {
    pub(crate) settings: Mutex<CompactionSettings>,
    /// Set while a compaction runs; cancelling it aborts the compaction.
    pub(crate) running: CancelSlot,
    /// One compact-and-retry per prompt (pi's `_overflowRecoveryAttempted`).
    pub(crate) overflow_attempted: AtomicBool,
    /// Held by [`App::prompt`](crate::App::prompt) from its first compaction check to the end of
    /// the check after its run: a prompt that comes in meanwhile (RPC answers `agent_end` before
    /// that check) starts once it is done, never beside it.
    pub(crate) prompt_turn: tokio::sync::Mutex<()>,
    pub(crate) hooks: RwLock<Vec<Arc<dyn CompactionHook>>>,
    /// `branchSummary` settings.
    pub(crate) branch_settings: Mutex<BranchSummarySettings>,
    /// Set while a navigation (and its branch summary) runs; cancelling it aborts the navigation.
    pub(crate) branch_summary: CancelSlot,
    pub(crate) tree_hooks: RwLock<Vec<Arc<dyn TreeHook>>>,
}

/// One operation at a time that can be cancelled from elsewhere: [`CancelSlot::try_start`] holds
/// the slot until its guard is dropped — when the operation ends, fails, or its future is dropped.
#[derive(Default)]
pub(crate) struct CancelSlot(Mutex<Option<CancellationToken>>);

impl CancelSlot {
    /// Takes the slot with a fresh token; `None` while another operation holds it.
    pub(crate) fn try_start(&self) -> Option<CancelGuard<'_>> {
        let mut slot = lock(&self.0);
        if slot.is_some() {
            return None;
        }
        let token = CancellationToken::new();
        *slot = Some(token.clone());
        Some(CancelGuard { slot: self, token })
    }

    /// Cancels the operation holding the slot, if any.
    pub(crate) fn cancel(&self) {
        if let Some(token) = lock(&self.0).as_ref() {
            token.cancel();
        }
    }

    /// Whether an operation holds the slot.
    pub(crate) fn is_active(&self) -> bool {
        lock(&self.0).is_some()
    }
}

/// The hold on a [`CancelSlot`]; frees it when dropped.
pub(crate) struct CancelGuard<'a> {
    slot: &'a CancelSlot,
    token: CancellationToken,
}

impl CancelGuard<'_> {
    /// The token [`CancelSlot::cancel`] cancels.
    pub(crate) fn token(&self) -> &CancellationToken {
        &self.token
    }
}

impl Drop for CancelGuard<'_> {
    fn drop(&mut self) {
        *lock(&self.slot.0) = None;
    }
}

#[cfg(test)]
mod tests {
    use super::CancelSlot;

    #[test]
    fn a_slot_is_held_once_and_freed_when_its_guard_drops() {
        let slot = CancelSlot::default();
        let guard = slot.try_start();
        assert!(guard.is_some() && slot.is_active());
        assert!(slot.try_start().is_none(), "a second start while held");
        slot.cancel();
        assert!(guard.as_ref().is_some_and(|g| g.token().is_cancelled()));
        drop(guard);
        assert!(!slot.is_active());
        assert!(slot.try_start().is_some_and(|g| !g.token().is_cancelled()));
    }
}
