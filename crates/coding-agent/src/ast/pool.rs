//! The worker pool used by the engine.
//!
//! [`run_parallel`] runs a job per candidate file on scoped threads (one per core) that take the
//! candidates in index (= path) order and stop between files when the call is cancelled; the engine
//! keeps results in pi-tools' [`FirstByPath`](pi_tools::FirstByPath), so a capped result is
//! the same on every run whichever thread finished first.

use std::sync::atomic::{AtomicUsize, Ordering};

use tokio_util::sync::CancellationToken;

/// The call was cancelled while files were being processed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Aborted;

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
