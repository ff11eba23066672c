//! Terminal input for the interactive mode: crossterm's [`EventStream`] read on the runtime and
//! forwarded into a channel. Nothing polls on a timer: the stream's reader blocks in the kernel
//! (mio, on the terminal and the resize signal) until a key, a paste or a resize arrives, so an
//! idle pi does not wake up at all (pi sleeps the same way, on Node's event loop). Dropping the
//! [`Input`] stops the reader (crossterm wakes its blocked thread), so the terminal's input is
//! free again for whatever runs next.

use std::io;

use crossterm::event::{Event, EventStream};
use futures::{Stream, StreamExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The task reading the terminal; stops reading when dropped.
#[derive(Debug)]
pub(super) struct Input {
    task: JoinHandle<()>,
}

impl Drop for Input {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts reading the terminal's events (on the current runtime) into the returned channel.
pub(super) fn spawn_input() -> (mpsc::UnboundedReceiver<Event>, Input) {
    let (tx, rx) = mpsc::unbounded_channel();
    let task = tokio::spawn(forward(EventStream::new(), tx));
    (rx, Input { task })
}

/// Sends each event of `events` into `tx` until either ends (or reading fails); each event is one
/// wake-up, and there are no others.
async fn forward<S>(mut events: S, tx: mpsc::UnboundedSender<Event>)
where
    S: Stream<Item = io::Result<Event>> + Unpin,
{
    loop {
        tokio::select! {
            event = events.next() => match event {
                Some(Ok(event)) => {
                    if tx.send(event).is_err() {
                        break;
                    }
                }
                Some(Err(_)) | None => break,
            },
            () = tx.closed() => break,
        }
    }
}

#[cfg(test)]
mod tests {
    use crossterm::event::{KeyCode, KeyEvent};

    use super::*;

    #[tokio::test]
    async fn events_are_forwarded_in_order_until_the_stream_ends() {
        let keys = [KeyCode::Char('a'), KeyCode::Enter].map(|code| Ok(Event::Key(KeyEvent::from(code))));
        let (tx, mut rx) = mpsc::unbounded_channel();
        forward(futures::stream::iter(keys), tx).await;
        assert_eq!(rx.recv().await, Some(Event::Key(KeyEvent::from(KeyCode::Char('a')))));
        assert_eq!(rx.recv().await, Some(Event::Key(KeyEvent::from(KeyCode::Enter))));
        // The stream ended: so does the channel (and with it the interactive mode).
        assert_eq!(rx.recv().await, None);
    }

    #[tokio::test]
    async fn reading_stops_when_the_receiver_is_gone() {
        let (tx, rx) = mpsc::unbounded_channel();
        drop(rx);
        // A stream that never yields: only the closed channel can end the task.
        forward(futures::stream::pending(), tx).await;
    }

    #[tokio::test]
    async fn a_read_error_ends_the_input() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let failing = futures::stream::iter([Err(io::Error::other("tty gone"))]).chain(futures::stream::pending());
        forward(failing, tx).await;
        assert_eq!(rx.recv().await, None);
    }
}
