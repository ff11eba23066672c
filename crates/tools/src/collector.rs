//! [`FirstByPath`]: results found in any order by parallel workers, kept as if found in path order.
//!
//! `grep` and `find` (and `ast_grep` / `ast_edit` in pi-coding-agent) print the results that sort
//! first by path, up to a limit; workers add what they find, and skip whatever
//! [`FirstByPath::is_beyond`] says can no longer be printed, so a capped result is the same on every
//! run whichever thread found what.
//!
//! ```
//! use std::path::{Path, PathBuf};
//! use pi_tools::FirstByPath;
//!
//! let kept = FirstByPath::new(2);
//! kept.add(PathBuf::from("/r/c"), 1, "c");
//! kept.add(PathBuf::from("/r/a"), 1, "a");
//! assert!(kept.is_beyond(Path::new("/r/d")));
//! kept.add(PathBuf::from("/r/b"), 1, "b");
//! let (items, total) = kept.finish();
//! assert_eq!(items.iter().map(|(_, v)| *v).collect::<Vec<_>>(), ["a", "b"]);
//! assert_eq!(total, 2);
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Collects results from parallel workers, keeping only those that sort first by path.
///
/// Each result has a weight (grep: its file's matches, find: 1). Once the kept results weigh at least
/// `limit`, any path sorting after the last kept one can never be printed: [`FirstByPath::is_beyond`] says so
/// and the walkers skip it (and, for a directory, everything under it).
pub struct FirstByPath<T> {
    limit: usize,
    full: AtomicBool,
    state: Mutex<State<T>>,
}

struct State<T> {
    items: BTreeMap<PathBuf, (usize, T)>,
    total: usize,
}

impl<T> FirstByPath<T> {
    /// A collector keeping results up to a total weight of `limit` (at least 1).
    pub fn new(limit: usize) -> Self {
        FirstByPath {
            limit: limit.max(1),
            full: AtomicBool::new(false),
            state: Mutex::new(State {
                items: BTreeMap::new(),
                total: 0,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        pi_agent_core::lock(&self.state)
    }

    /// Whether `path` sorts after every result that can still be output.
    pub fn is_beyond(&self, path: &Path) -> bool {
        if !self.full.load(Ordering::Acquire) {
            return false;
        }
        self.lock()
            .items
            .last_key_value()
            .is_some_and(|(last, _)| path > last.as_path())
    }

    /// Adds a result of `weight` (> 0) for `path`, then drops the last results while the others still
    /// weigh at least the limit.
    pub fn add(&self, path: PathBuf, weight: usize, value: T) {
        let mut state = self.lock();
        state.total += weight;
        if let Some((old, _)) = state.items.insert(path, (weight, value)) {
            state.total -= old;
        }
        while let Some((_, (last, _))) = state.items.last_key_value() {
            let last = *last;
            if state.total - last < self.limit {
                break;
            }
            state.items.pop_last();
            state.total -= last;
        }
        if state.total >= self.limit {
            self.full.store(true, Ordering::Release);
        }
    }

    /// The kept results in path order, and their total weight (at least the limit when results were
    /// dropped).
    pub fn finish(self) -> (Vec<(PathBuf, T)>, usize) {
        let state = self.state.into_inner().unwrap_or_else(PoisonError::into_inner);
        let items = state
            .items
            .into_iter()
            .map(|(path, (_, value))| (path, value))
            .collect();
        (items, state.total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_first_paths() {
        let collector = FirstByPath::new(5);
        collector.add(PathBuf::from("/r/b"), 4, "b");
        assert!(!collector.is_beyond(Path::new("/r/z")));
        collector.add(PathBuf::from("/r/a"), 3, "a");
        assert!(collector.is_beyond(Path::new("/r/c")));
        assert!(!collector.is_beyond(Path::new("/r/b")));
        collector.add(PathBuf::from("/r/ab"), 2, "ab");
        assert!(collector.is_beyond(Path::new("/r/b")));
        collector.add(PathBuf::from("/r/c"), 9, "c");
        let (items, total) = collector.finish();
        let names: Vec<_> = items.iter().map(|(_, v)| *v).collect();
        assert_eq!(names, ["a", "ab"]);
        assert_eq!(total, 5);
    }

    #[test]
    fn orders_by_component() {
        let collector = FirstByPath::new(10);
        for path in ["/r/a-b", "/r/a/b", "/r/a.b"] {
            collector.add(PathBuf::from(path), 1, ());
        }
        let (items, total) = collector.finish();
        let paths: Vec<_> = items.iter().map(|(p, _)| p.to_string_lossy().into_owned()).collect();
        assert_eq!(paths, ["/r/a/b", "/r/a-b", "/r/a.b"]);
        assert_eq!(total, 3);
    }
}
