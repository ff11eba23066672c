//! [`SessionView`]: what a custom tool may read of the session it runs in at the moment it reads
//! it — pi's `CustomToolContext` (pi 0.31 to 0.34): the current branch, the session file, the
//! model, the model registry. The session ([`crate::App`]) installs one in the [`SessionViewSlot`]
//! its tools' [`crate::custom_tools::ToolApi`] reads; process and Node tools get it with every
//! `execute` (`context`, `docs/custom-tools.md`).

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use pi_agent_core::Model;
use pi_ai::ModelRegistry;
use pi_session_store::SessionEntry;

/// The slot holding the session's view; empty until a session installs one.
pub type SessionViewSlot = Arc<RwLock<Option<Arc<dyn SessionView>>>>;

/// The current state of the session, read at every use.
pub trait SessionView: Send + Sync {
    /// The current branch (root to leaf) for a reader that holds the entries `known` (their ids,
    /// root first): how many of them still start the branch, and the entries after those.
    fn branch_since(&self, known: &[String]) -> BranchDelta;

    /// The session file, once it is written.
    fn session_file(&self) -> Option<PathBuf>;

    /// The current model; `None` before one is chosen.
    fn model(&self) -> Option<Model>;

    /// The model registry; `None` once the session is gone.
    fn registry(&self) -> Option<Arc<ModelRegistry>>;
}

/// The change of the current branch since what a reader holds ([`SessionView::branch_since`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BranchDelta {
    /// How many of the reader's entries still start the branch (the rest are gone).
    pub keep: usize,
    /// The branch's entries after those, in order.
    pub entries: Vec<SessionEntry>,
}

impl BranchDelta {
    /// The delta from `known` (ids, root first) to `branch` (root first).
    ///
    /// ```
    /// use pi_coding_agent::custom_tools::BranchDelta;
    /// let delta = BranchDelta::between(&["a".to_owned(), "x".to_owned()], &[]);
    /// assert_eq!((delta.keep, delta.entries.len()), (0, 0));
    /// ```
    pub fn between(known: &[String], branch: &[&SessionEntry]) -> Self {
        let keep = known
            .iter()
            .zip(branch)
            .take_while(|(id, entry)| **id == entry.id)
            .count();
        BranchDelta {
            keep,
            entries: branch[keep..].iter().map(|entry| (*entry).clone()).collect(),
        }
    }

    /// `known` after applying this delta: the ids of the whole branch.
    pub fn apply_to(&self, known: &mut Vec<String>) {
        known.truncate(self.keep);
        known.extend(self.entries.iter().map(|entry| entry.id.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_session_store::EntryKind;
    use proptest::prelude::*;

    fn entry(id: &str) -> SessionEntry {
        SessionEntry::new(id, None, "", EntryKind::SessionInfo { name: None })
    }

    proptest! {
        /// Whatever the reader held, the delta brings it to exactly the branch, keeping the
        /// longest common start.
        #[test]
        fn a_delta_brings_the_reader_to_the_branch(
            known in proptest::collection::vec("[a-d]", 0..6),
            branch in proptest::collection::vec("[a-d]", 0..6),
        ) {
            let entries: Vec<SessionEntry> = branch.iter().map(|id| entry(id)).collect();
            let refs: Vec<&SessionEntry> = entries.iter().collect();
            let delta = BranchDelta::between(&known, &refs);
            let mut held = known.clone();
            delta.apply_to(&mut held);
            prop_assert_eq!(&held, &branch);
            let common = known.iter().zip(&branch).take_while(|(a, b)| a == b).count();
            prop_assert_eq!(delta.keep, common);
        }
    }
}
