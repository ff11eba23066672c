//! [`EventQueue`]: the agent's notification events on their way to the extensions, one at a
//! time and in order, without holding the run up (pi queues them on `_agentEventQueue` and its
//! loop does not wait for them; only `tool_call`, `message_end` and the end of a prompt wait for
//! the queue to drain).

use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::Extensions;

struct Job {
    extensions: Extensions,
    kind: &'static str,
    event: Value,
}

/// Delivers events to the extensions in order on a task of its own.
pub(crate) struct EventQueue {
    sender: Mutex<Option<mpsc::UnboundedSender<Job>>>,
    /// Events sent and not handled yet.
    pending: Arc<watch::Sender<u64>>,
    /// Cancelled when the queue is dropped (the listeners' token).
    cancel: CancellationToken,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            sender: Mutex::new(None),
            pending: Arc::new(watch::Sender::new(0)),
            cancel: CancellationToken::new(),
        }
    }
}

impl Drop for EventQueue {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

impl EventQueue {
    /// Queues `event` (of type `kind`) for the listeners of `extensions`. Outside a tokio runtime
    /// nothing can run it and it is dropped.
    pub(crate) fn push(&self, extensions: Extensions, kind: &'static str, event: Value) {
        let mut sender = pi_agent_core::lock(&self.sender);
        if sender.is_none() {
            let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                return;
            };
            let (tx, rx) = mpsc::unbounded_channel();
            runtime.spawn(worker(rx, self.pending.clone(), self.cancel.clone()));
            *sender = Some(tx);
        }
        self.pending.send_modify(|n| *n += 1);
        let job = Job {
            extensions,
            kind,
            event,
        };
        if sender.as_ref().is_some_and(|tx| tx.send(job).is_err()) {
            self.pending.send_modify(|n| *n = n.saturating_sub(1));
        }
    }

    /// Waits until every queued event has been handled.
    pub(crate) async fn drained(&self) {
        let mut pending = self.pending.subscribe();
        let _ = pending.wait_for(|n| *n == 0).await;
    }
}

async fn worker(mut jobs: mpsc::UnboundedReceiver<Job>, pending: Arc<watch::Sender<u64>>, cancel: CancellationToken) {
    use futures::FutureExt;
    while let Some(job) = jobs.recv().await {
        // A listener is anyone's code (the runner is a public trait): one that panics loses its
        // event, never the queue — `drained` would otherwise wait forever.
        let emitted = std::panic::AssertUnwindSafe(job.extensions.emit(job.kind, || job.event, &cancel));
        if emitted.catch_unwind().await.is_err() {
            tracing::warn!(event = job.kind, "an extension event listener panicked");
        }
        pending.send_modify(|n| *n = n.saturating_sub(1));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex as StdMutex;
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::extensions::events::emit_tests::{Recording, runner_with};

    #[tokio::test]
    async fn events_are_handled_in_order_and_drained_waits_for_them() {
        let seen = Arc::new(StdMutex::new(Vec::new()));
        let log = seen.clone();
        let runner = runner_with(vec![Recording::new("turn_start", move |event| {
            let log = log.clone();
            let index = event["turnIndex"].clone();
            async move {
                tokio::time::sleep(Duration::from_millis(5)).await;
                log.lock().unwrap().push(index);
                Ok(None)
            }
        })]);
        let queue = EventQueue::default();
        for index in 0..5 {
            queue.push(
                runner.clone(),
                "turn_start",
                json!({"type": "turn_start", "turnIndex": index}),
            );
        }
        // Pushing does not wait for the listener.
        assert!(seen.lock().unwrap().len() < 5);
        queue.drained().await;
        assert_eq!(
            *seen.lock().unwrap(),
            [json!(0), json!(1), json!(2), json!(3), json!(4)]
        );
    }

    #[tokio::test]
    async fn drained_returns_at_once_when_nothing_was_queued() {
        tokio::time::timeout(Duration::from_secs(1), EventQueue::default().drained())
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn a_listener_that_panics_loses_its_event_not_the_queue() {
        let seen = Arc::new(StdMutex::new(Vec::new()));
        let log = seen.clone();
        let runner = runner_with(vec![Recording::new("turn_start", move |event| {
            let log = log.clone();
            let index = event["turnIndex"].as_u64();
            async move {
                assert_ne!(index, Some(0), "the first event's listener panics");
                log.lock().unwrap().push(index);
                Ok(None)
            }
        })]);
        let queue = EventQueue::default();
        for index in 0..2 {
            queue.push(
                runner.clone(),
                "turn_start",
                json!({"type": "turn_start", "turnIndex": index}),
            );
        }
        tokio::time::timeout(Duration::from_secs(5), queue.drained())
            .await
            .expect("drained after a panicking listener");
        assert_eq!(*seen.lock().unwrap(), [Some(1)]);
    }
}
