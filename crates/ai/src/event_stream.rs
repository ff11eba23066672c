//! The AWS binary event stream (`application/vnd.amazon.eventstream`), decoded into the same
//! [`SseEvent`]s a server-sent event stream gives, so that one [`crate::WireProtocol`] shape serves
//! both.
//!
//! Frames are decoded by AWS's own `aws-smithy-eventstream` (prelude and message CRC32 checks,
//! typed headers). Each message becomes one event:
//!
//! * `:message-type: event` — `event` is its `:event-type` (`contentBlockDelta`, …), `data` its
//!   payload (JSON);
//! * `:message-type: exception` — `event` is its `:exception-type`
//!   (`throttlingException`, …), `data` its payload (`{"message": …}`);
//! * `:message-type: error` — `event` is its `:error-code`, `data` a JSON object whose `message` is
//!   its `:error-message`.
//!
//! `id` carries the message type.

use aws_smithy_eventstream::frame::read_message_from;
use aws_smithy_types::event_stream::{HeaderValue, Message};
use bytes::{Buf, BytesMut};

use crate::sse::SseEvent;

/// The longest message the format allows (16 MiB of payload, with its headers and prelude).
const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024 + 128 * 1024;

/// An incremental decoder of an event-stream body.
#[derive(Debug, Default)]
pub(crate) struct EventStreamDecoder {
    buffer: BytesMut,
}

fn header<'a>(message: &'a Message, name: &str) -> Option<&'a str> {
    message
        .headers()
        .iter()
        .find(|header| header.name().as_str() == name)
        .and_then(|header| match header.value() {
            HeaderValue::String(value) => Some(value.as_str()),
            _ => None,
        })
}

/// The event a decoded message stands for.
pub(crate) fn event_of(message: &Message) -> SseEvent {
    let kind = header(message, ":message-type").unwrap_or("event");
    let payload = String::from_utf8_lossy(message.payload()).into_owned();
    let (event, data) = match kind {
        "exception" => (header(message, ":exception-type"), payload),
        "error" => (
            header(message, ":error-code"),
            serde_json::json!({"message": header(message, ":error-message").unwrap_or_default()}).to_string(),
        ),
        _ => (header(message, ":event-type"), payload),
    };
    SseEvent {
        event: event.map(str::to_owned),
        data,
        id: Some(kind.to_owned()),
    }
}

impl EventStreamDecoder {
    /// Feeds a chunk of the body; returns the events of the frames it completes, or what is wrong
    /// with a frame (a CRC mismatch, a length out of bounds, a bad header).
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, String> {
        self.buffer.extend_from_slice(chunk);
        let mut events = Vec::new();
        while self.buffer.len() >= 4 {
            let total = u32::from_be_bytes([self.buffer[0], self.buffer[1], self.buffer[2], self.buffer[3]]) as usize;
            if !(16..=MAX_MESSAGE_BYTES).contains(&total) {
                return Err(format!("a frame's length ({total} bytes) is out of bounds"));
            }
            if self.buffer.len() < total {
                break;
            }
            let mut frame = self.buffer.split_to(total).freeze();
            let message = read_message_from(&mut frame).map_err(|error| error.to_string())?;
            if frame.has_remaining() {
                return Err("a frame is longer than its prelude says".to_owned());
            }
            events.push(event_of(&message));
        }
        Ok(events)
    }

    /// Whether the body so far ends in the middle of a frame.
    pub(crate) fn cut_short(&self) -> bool {
        !self.buffer.is_empty()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use aws_smithy_eventstream::frame::write_message_to;
    use aws_smithy_types::event_stream::Header;
    use proptest::prelude::*;

    /// One encoded `event` frame.
    pub(crate) fn frame(event_type: &str, payload: &str) -> Vec<u8> {
        let message = Message::new(payload.as_bytes().to_vec())
            .add_header(Header::new(":message-type", HeaderValue::String("event".into())))
            .add_header(Header::new(
                ":event-type",
                HeaderValue::String(event_type.to_owned().into()),
            ))
            .add_header(Header::new(
                ":content-type",
                HeaderValue::String("application/json".into()),
            ));
        let mut out = Vec::new();
        write_message_to(&message, &mut out).expect("encodes");
        out
    }

    #[test]
    fn events_exceptions_and_errors() {
        let mut decoder = EventStreamDecoder::default();
        let mut body = frame("messageStart", r#"{"role":"assistant"}"#);
        let exception = Message::new(br#"{"message":"slow down"}"#.to_vec())
            .add_header(Header::new(":message-type", HeaderValue::String("exception".into())))
            .add_header(Header::new(
                ":exception-type",
                HeaderValue::String("throttlingException".into()),
            ));
        write_message_to(&exception, &mut body).expect("encodes");
        let error = Message::new(Vec::new())
            .add_header(Header::new(":message-type", HeaderValue::String("error".into())))
            .add_header(Header::new(
                ":error-code",
                HeaderValue::String("InternalFailure".into()),
            ))
            .add_header(Header::new(":error-message", HeaderValue::String("boom".into())));
        write_message_to(&error, &mut body).expect("encodes");
        let events = decoder.feed(&body).expect("decodes");
        assert_eq!(events.len(), 3);
        assert_eq!(events[0].event.as_deref(), Some("messageStart"));
        assert_eq!(events[0].data, r#"{"role":"assistant"}"#);
        assert_eq!(events[1].event.as_deref(), Some("throttlingException"));
        assert_eq!(events[1].id.as_deref(), Some("exception"));
        assert_eq!(events[2].event.as_deref(), Some("InternalFailure"));
        assert_eq!(events[2].data, r#"{"message":"boom"}"#);
        assert!(!decoder.cut_short());
    }

    #[test]
    fn a_corrupt_frame_is_an_error_and_a_cut_one_is_noticed() {
        let mut body = frame("messageStop", r#"{"stopReason":"end_turn"}"#);
        let last = body.len() - 1;
        body[last] ^= 0xff;
        let error = EventStreamDecoder::default().feed(&body).expect_err("bad CRC");
        assert!(error.contains("checksum"), "{error}");

        let body = frame("messageStop", r#"{"stopReason":"end_turn"}"#);
        let mut decoder = EventStreamDecoder::default();
        assert!(decoder.feed(&body[..5]).expect("partial").is_empty());
        assert!(decoder.cut_short());
        assert!(decoder.feed(&body[5..20]).expect("partial").is_empty());
        assert!(decoder.cut_short());
        assert_eq!(decoder.feed(&body[20..]).expect("rest").len(), 1);
        assert!(!decoder.cut_short());
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

        #[test]
        fn chunking_never_changes_the_events(
            payloads in prop::collection::vec("[a-z{}\":, é]{0,30}", 1..5),
            split in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
        ) {
            let body: Vec<u8> = payloads.iter().flat_map(|p| frame("contentBlockDelta", p)).collect();
            let mut points: Vec<usize> = split.iter().map(|i| i.index(body.len() + 1)).collect();
            points.sort_unstable();
            let mut decoder = EventStreamDecoder::default();
            let mut events = Vec::new();
            let mut start = 0;
            for p in points {
                events.extend(decoder.feed(&body[start..p]).expect("decodes"));
                start = p;
            }
            events.extend(decoder.feed(&body[start..]).expect("decodes"));
            prop_assert_eq!(events.len(), payloads.len());
            for (event, payload) in events.iter().zip(&payloads) {
                prop_assert_eq!(&event.data, payload);
            }
            prop_assert!(!decoder.cut_short());
        }
    }
}
