//! The worker pool and the bounded, path-ordered result collector used by the engine.
//!
//! [`run_parallel`] runs a job per candidate file on scoped threads (one per core) that take the
//! candidates in index (= path) order and stop between files when the call is cancelled.
//! [`FirstByPath`] keeps only the results that sort first by path up to a total weight, so a capped
//! result is the same on every run whichever thread finished first, and files that sort after a full
//! collector can be skipped without being parsed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio_util::sync::CancellationToken;

/// The call was cancelled while files were being processed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Aborted;

/// Keeps the entries that sort first by path while their total weight stays within a limit.
///
/// Each entry has a weight (matches in a file, or 1 per touched file). After every insertion the last
/// entries are dropped as long as the others still weigh at least `limit`; once that much is held, a
/// path sorting after the last kept entry can never be kept ([`FirstByPath::is_beyond`]).
pub(crate) struct FirstByPath<T> {
    limit: usize,
    full: AtomicBool,
    state: Mutex<Kept<T>>,
}

/// The kept entries (path → weight and value) and their total weight.
type Kept<T> = (BTreeMap<PathBuf, (usize, T)>, usize);

impl<T> FirstByPath<T> {
    /// An empty collector for a total weight of `limit` (at least 1).
    pub(crate) fn new(limit: usize) -> Self {
        FirstByPath {
            limit: limit.max(1),
            full: AtomicBool::new(false),
            state: Mutex::new((BTreeMap::new(), 0)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Kept<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether an entry for `path` would be dropped at once.
    pub(crate) fn is_beyond(&self, path: &Path) -> bool {
        self.full.load(Ordering::Acquire)
            && self
                .lock()
                .0
                .last_key_value()
                .is_some_and(|(last, _)| path > last.as_path())
    }

    /// Adds an entry of `weight` (> 0).
    pub(crate) fn add(&self, path: PathBuf, weight: usize, value: T) {
        let mut guard = self.lock();
        let (items, total) = &mut *guard;
        *total += weight;
        if let Some((old, _)) = items.insert(path, (weight, value)) {
            *total -= old;
        }
        while let Some((_, (last, _))) = items.last_key_value() {
            let last = *last;
            if *total - last < self.limit {
                break;
            }
            items.pop_last();
            *total -= last;
        }
        if *total >= self.limit {
            self.full.store(true, Ordering::Release);
        }
    }

    /// The kept entries in path order.
    pub(crate) fn finish(self) -> Vec<(PathBuf, T)> {
        let (items, _) = self.state.into_inner().unwrap_or_else(PoisonError::into_inner);
        items.into_iter().map(|(path, (_, value))| (path, value)).collect()
    }
}

/// Runs `work(i)` for `0..count` on one thread per core, in increasing order of `i` per thread.
/// Returns `Err(Aborted)` when `cancel` fired (the workers stop between files).
pub(crate) fn run_parallel(
    count: usize,
    cancel: &CancellationToken,
    work: impl Fn(usize) + Sync,
) -> Result<(), Aborted> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(count);
    if threads <= 1 {
        for index in 0..count {
            if cancel.is_cancelled() {
                return Err(Aborted);
            }
            work(index);
        }
    } else {
        let next = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| {
                    while !cancel.is_cancelled() {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        if index >= count {
                            break;
                        }
                        work(index);
                    }
                });
            }
        });
    }
    if cancel.is_cancelled() { Err(Aborted) } else { Ok(()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collector_keeps_the_first_paths() {
        let kept = FirstByPath::new(5);
        kept.add(PathBuf::from("/r/b"), 4, "b");
        assert!(!kept.is_beyond(Path::new("/r/z")));
        kept.add(PathBuf::from("/r/a"), 3, "a");
        assert!(kept.is_beyond(Path::new("/r/c")));
        kept.add(PathBuf::from("/r/ab"), 2, "ab");
        kept.add(PathBuf::from("/r/c"), 9, "c");
        let names: Vec<&str> = kept.finish().into_iter().map(|(_, v)| v).collect();
        assert_eq!(names, ["a", "ab"]);
    }

    #[test]
    fn every_index_runs_once() {
        let seen: Vec<AtomicUsize> = (0..100).map(|_| AtomicUsize::new(0)).collect();
        let done = run_parallel(seen.len(), &CancellationToken::new(), |i| {
            seen[i].fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(done, Ok(()));
        assert!(seen.iter().all(|n| n.load(Ordering::Relaxed) == 1));
        let cancel = CancellationToken::new();
        cancel.cancel();
        assert_eq!(run_parallel(3, &cancel, |_| {}), Err(Aborted));
    }
}
