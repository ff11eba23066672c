//! The per-file mutation queue: operations that change one file run one at a time, in the order
//! they took their place, while operations on different files run in parallel.
//!
//! The queue is [`pi_agent_core`]'s ([`MutationTicket`](pi_agent_core::MutationTicket)), keyed
//! by the file's real path (or, for a file that does not exist yet, its resolved absolute path),
//! and shared by `write`, `edit`, `ast_edit`'s apply and custom tools, so parallel tool calls on
//! one file never lose a change. `write` and `edit` name their file to the agent loop
//! ([`AgentTool::mutated_files`](pi_agent_core::AgentTool::mutated_files)), which reserves its
//! place in source order before the calls of a message run in parallel; their own
//! [`with_file_mutation_queue`] then finds the file held and does not wait again. Called outside
//! the loop (directly, or by a tool that did not name the file), it queues behind everything
//! queued before.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use pi_tools::mutation_queue::with_file_mutation_queue;
//! let written = with_file_mutation_queue(std::path::Path::new("/tmp/example.txt"), async { 42 }).await;
//! assert_eq!(written, 42);
//! # });
//! ```

use std::future::Future;
use std::path::Path;

pub use pi_agent_core::mutation_key as queue_key;

/// Runs `operation` while holding `path`'s place in the queue (pi's `withFileMutationQueue`).
/// When the current call holds the file already (it named it to the loop), `operation` runs at
/// once.
pub async fn with_file_mutation_queue<T>(path: &Path, operation: impl Future<Output = T>) -> T {
    match pi_agent_core::lock_files(vec![path.to_path_buf()]).await {
        Some(guard) => guard.hold(operation).await,
        None => operation.await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
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
        assert!(pi_agent_core::MutationTicket::reserve([queue_key(&path)]).is_first());
    }

    #[tokio::test]
    async fn nested_queueing_of_the_same_file_does_not_wait_for_itself() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        let inner = with_file_mutation_queue(&path, with_file_mutation_queue(&path, async { 7 }));
        assert_eq!(tokio::time::timeout(Duration::from_secs(5), inner).await.unwrap(), 7);
    }
}
