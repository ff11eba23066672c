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
