//! [`QueuedTexts`]: the steering and follow-up texts pi's `queue_update` event reports.

use pi_agent_core::AgentMessage;

use super::event::SessionEvent;

/// Texts of the user messages queued through `steer` / `follow_up` and not delivered yet, each
/// list oldest first.
#[derive(Debug, Default)]
pub(super) struct QueuedTexts {
    steering: Vec<String>,
    follow_up: Vec<String>,
}

/// The text pi tracks for a queued message: a user message's text blocks, joined; none for other
/// messages.
pub(super) fn queued_text(message: &AgentMessage) -> Option<String> {
    message.as_user().map(|user| user.content.text())
}

impl QueuedTexts {
    pub(super) fn push_steering(&mut self, text: String) {
        self.steering.push(text);
    }

    pub(super) fn push_follow_up(&mut self, text: String) {
        self.follow_up.push(text);
    }

    /// A queued message is being delivered: its text leaves the first list holding it (steering
    /// first, as pi looks). False when neither holds it (a prompt, or a message queued by other
    /// means).
    pub(super) fn remove_delivered(&mut self, text: &str) -> bool {
        [&mut self.steering, &mut self.follow_up]
            .into_iter()
            .any(|list| match list.iter().position(|t| t == text) {
                Some(index) => {
                    list.remove(index);
                    true
                }
                None => false,
            })
    }

    /// How many messages wait (pi's `pendingMessageCount`).
    pub(super) fn len(&self) -> usize {
        self.steering.len() + self.follow_up.len()
    }

    /// The `queue_update` event for the lists now.
    pub(super) fn event(&self) -> SessionEvent {
        SessionEvent::QueueUpdate {
            steering: self.steering.clone(),
            follow_up: self.follow_up.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lists(queued: &QueuedTexts) -> (Vec<String>, Vec<String>) {
        match queued.event() {
            SessionEvent::QueueUpdate { steering, follow_up } => (steering, follow_up),
            _ => unreachable!("event() is a queue update"),
        }
    }

    #[test]
    fn delivered_texts_leave_steering_first_then_follow_up() {
        let mut queued = QueuedTexts::default();
        queued.push_steering("same".into());
        queued.push_follow_up("same".into());
        queued.push_follow_up("later".into());
        assert_eq!(queued.len(), 3);
        assert!(queued.remove_delivered("same"));
        assert_eq!(lists(&queued), (vec![], vec!["same".to_owned(), "later".to_owned()]));
        assert!(queued.remove_delivered("same"));
        assert!(!queued.remove_delivered("a prompt"));
        assert_eq!(lists(&queued), (vec![], vec!["later".to_owned()]));
        assert_eq!(queued.len(), 1);
    }

    #[test]
    fn only_user_messages_are_tracked() {
        assert_eq!(queued_text(&AgentMessage::user("hi")).as_deref(), Some("hi"));
        let custom: AgentMessage =
            serde_json::from_value(serde_json::json!({"role": "custom", "content": "x", "timestamp": 1})).unwrap();
        assert_eq!(queued_text(&custom), None);
    }
}
