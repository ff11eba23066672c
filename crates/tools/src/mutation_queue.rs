//! The per-file mutation queue: operations that change one file run one at a time, in the order
//! they asked, while operations on different files run in parallel.
//!
//! `write`, `edit`, `ast_edit` and custom tools all take the same lock, keyed by the file's real
//! path (or, for a file that does not exist yet, its resolved absolute path), so parallel tool
//! calls on one file never lose a change.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use pi_tools::mutation_queue::with_file_mutation_queue;
//! let written = with_file_mutation_queue(std::path::Path::new("/tmp/example.txt"), async { 42 }).await;
//! assert_eq!(written, 42);
//! # });
//! ```

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::OwnedMutexGuard;

type Locks = Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>;

fn locks() -> &'static Locks {
    static LOCKS: OnceLock<Locks> = OnceLock::new();
    LOCKS.get_or_init(Default::default)
}

/// The key a path is queued under: its real path, or for a new file the real path of its
/// nearest existing ancestor joined with the rest.
pub fn queue_key(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    let mut missing = Vec::new();
    let mut current = path;
    while let Some(parent) = current.parent() {
        if let Some(name) = current.file_name() {
            missing.push(name.to_owned());
        }
        if let Ok(real) = std::fs::canonicalize(parent) {
            return missing.iter().rev().fold(real, |acc, part| acc.join(part));
        }
        current = parent;
    }
    path.to_path_buf()
}

/// Holds a file's place in the queue; the next waiting operation runs when it is dropped.
pub struct FileMutationGuard {
    key: PathBuf,
    guard: Option<OwnedMutexGuard<()>>,
}

impl std::fmt::Debug for FileMutationGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileMutationGuard").field("key", &self.key).finish()
    }
}

impl Drop for FileMutationGuard {
    fn drop(&mut self) {
        drop(self.guard.take());
        let mut map = pi_agent_core::lock(locks());
        // Forget the lock once nobody holds or waits for it, so the map does not grow forever.
        if map.get(&self.key).is_some_and(|lock| Arc::strong_count(lock) == 1) {
            map.remove(&self.key);
        }
    }
}

/// Waits for `path`'s turn in the queue (FIFO) and returns the guard that holds it.
pub async fn lock_file(path: &Path) -> FileMutationGuard {
    let owned = path.to_path_buf();
    let key = tokio::task::spawn_blocking(move || queue_key(&owned))
        .await
        .unwrap_or_else(|_| path.to_path_buf());
    let lock = {
        let mut map = pi_agent_core::lock(locks());
        map.entry(key.clone()).or_default().clone()
    };
    let guard = lock.lock_owned().await;
    FileMutationGuard {
        key,
        guard: Some(guard),
    }
}

/// Runs `operation` while holding `path`'s place in the queue (pi's `withFileMutationQueue`).
pub async fn with_file_mutation_queue<T>(path: &Path, operation: impl Future<Output = T>) -> T {
    let _guard = lock_file(path).await;
    operation.await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn same_file_operations_never_overlap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        let active = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..10 {
            let (path, active) = (path.clone(), active.clone());
            tasks.push(tokio::spawn(async move {
                with_file_mutation_queue(&path, async {
                    assert_eq!(active.fetch_add(1, Ordering::SeqCst), 0);
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    active.fetch_sub(1, Ordering::SeqCst);
                })
                .await;
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        assert!(!locks().lock().unwrap().contains_key(&queue_key(&path)));
    }

    #[test]
    fn new_files_key_under_the_real_parent() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(queue_key(&dir.path().join("a/b.txt")), real.join("a/b.txt"));
    }
}
