//! What a provider's stream produced, for the tests of the provider APIs: the final message, the
//! event kinds and the error text of a [`Vec<AssistantMessageEvent>`], the API key the tests
//! send and the check that it never shows up in an event.
//!
//! ```
//! use pi_agent_core::{AssistantMessage, AssistantMessageEvent, StopReason};
//! use pi_test_support::stream;
//!
//! let message = AssistantMessage { stop_reason: StopReason::Stop, ..Default::default() };
//! let events = vec![
//!     AssistantMessageEvent::Start { partial: std::sync::Arc::new(message.clone()) },
//!     AssistantMessageEvent::Done { reason: StopReason::Stop, message },
//! ];
//! assert_eq!(stream::kinds(&events), ["start", "done"]);
//! assert_eq!(stream::final_message(&events).stop_reason, StopReason::Stop);
//! assert_eq!(stream::error_message(&events), "");
//! stream::assert_no_key(&events);
//! assert_eq!(stream::options().api_key.as_deref(), Some(stream::API_KEY));
//! ```

use pi_agent_core::{AssistantMessage, AssistantMessageEvent, StreamOptions};

/// The API key the provider tests send: secret-looking, so that a leak into an error, an event
/// or a snapshot is caught ([`assert_no_key`]).
pub const API_KEY: &str = "sk-test-SECRET-123";

/// Stream options with [`API_KEY`] as the key, the rest default.
pub fn options() -> StreamOptions {
    StreamOptions {
        api_key: Some(API_KEY.into()),
        ..StreamOptions::default()
    }
}

/// The message the stream ended with: the one of `done`, or the error of `error`.
///
/// # Panics
///
/// When there are no events or the last one is neither `done` nor `error`.
pub fn final_message(events: &[AssistantMessageEvent]) -> &AssistantMessage {
    match events.last() {
        Some(AssistantMessageEvent::Done { message, .. }) => message,
        Some(AssistantMessageEvent::Error { error, .. }) => error,
        Some(other) => panic!("stream did not end with done/error: {}", other.kind()),
        None => panic!("no events"),
    }
}

/// The kind of every event (`start`, `text_delta`, …, `done`), in order.
pub fn kinds(events: &[AssistantMessageEvent]) -> Vec<&'static str> {
    events.iter().map(AssistantMessageEvent::kind).collect()
}

/// The error text of the [`final_message`] (empty when it has none).
pub fn error_message(events: &[AssistantMessageEvent]) -> String {
    final_message(events).error_message.clone().unwrap_or_default()
}

/// Checks that no event, serialised whole, contains [`API_KEY`].
///
/// # Panics
///
/// When one does (naming its kind and showing it), or an event cannot be serialised.
pub fn assert_no_key(events: &[AssistantMessageEvent]) {
    for event in events {
        #[allow(clippy::expect_used)]
        let json = serde_json::to_string(event).expect("an event serialises");
        assert!(
            !json.contains(API_KEY),
            "key leaked in a {} event: {json}",
            event.kind()
        );
    }
}
