//! Steering and follow-up message queues.
//!
//! Steering messages are delivered at the next turn boundary of a running agent; follow-up
//! messages only when the agent would otherwise stop. [`QueueMode`] says how many queued
//! messages one drain takes.
//!
//! ```
//! use pi_agent_core::{AgentMessage, MessageQueue, QueueMode};
//! let mut queue = MessageQueue::new(QueueMode::OneAtATime);
//! queue.push(AgentMessage::user("a"));
//! queue.push(AgentMessage::user("b"));
//! assert_eq!(queue.drain().len(), 1);
//! assert_eq!(queue.len(), 1);
//! ```

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::message::AgentMessage;

/// How many queued messages one drain point delivers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum QueueMode {
    /// Every queued message.
    #[serde(rename = "all")]
    All,
    /// Only the oldest; the rest stay queued (pi's default).
    #[default]
    #[serde(rename = "one-at-a-time")]
    OneAtATime,
}

crate::names::impl_serde_names!(QueueMode, "queue mode", [All, OneAtATime]);

/// A FIFO of messages drained according to its [`QueueMode`].
#[derive(Debug, Clone, Default)]
pub struct MessageQueue {
    mode: QueueMode,
    items: VecDeque<AgentMessage>,
}

impl MessageQueue {
    /// An empty queue.
    pub fn new(mode: QueueMode) -> Self {
        MessageQueue {
            mode,
            items: VecDeque::new(),
        }
    }

    /// The drain mode.
    pub fn mode(&self) -> QueueMode {
        self.mode
    }

    /// Changes the drain mode.
    pub fn set_mode(&mut self, mode: QueueMode) {
        self.mode = mode;
    }

    /// Enqueues a message.
    pub fn push(&mut self, message: AgentMessage) {
        self.items.push_back(message);
    }

    /// Takes the messages one drain point delivers.
    pub fn drain(&mut self) -> Vec<AgentMessage> {
        match self.mode {
            QueueMode::All => self.items.drain(..).collect(),
            QueueMode::OneAtATime => self.items.pop_front().into_iter().collect(),
        }
    }

    /// Removes every queued message and returns them, oldest first.
    pub fn clear(&mut self) -> Vec<AgentMessage> {
        self.items.drain(..).collect()
    }

    /// Number of queued messages.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The queued messages, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &AgentMessage> {
        self.items.iter()
    }
}
