//! The harness the fuzz targets of the wire APIs share: a body goes through the SSE parser and a
//! [`WireProtocol`] the way [`super::drive`] sends it (events handed on and dropped one by one),
//! checking what every API must hold whatever the body.
//!
//! Asserts: no panic; an error is one of the documented [`ProtocolError`] texts, one line when it
//! quotes the body, and of bounded length; the message built holds memory linear in the body.

use pi_agent_core::{AssistantMessageEvent, Model, StopReason};
use proptest::prelude::*;
use serde_json::Value;

use super::{Flow, ProtocolError, WireProtocol};
use crate::builder::MessageBuilder;
use crate::sse::SseParser;

/// Longest error text from a body, before the body's own `Reported` texts: the excerpt of the
/// offending data (200 characters) with serde's message about it.
pub(crate) const MAX_ERROR_CHARS: usize = 1024;

/// The message built, per byte of body (a delta's text is kept once in the message; its tool
/// call arguments are also kept as parsed JSON), plus a constant per SSE event (a block opened
/// by an event with no text, a placeholder like `[Reasoning redacted]`).
const MESSAGE_BYTES_PER_BODY_BYTE: usize = 4;
const MESSAGE_BYTES_PER_EVENT: usize = 256;

/// Frames `(event name, data)` pairs as an SSE body.
pub(crate) fn sse_body(events: &[(Option<String>, String)]) -> Vec<u8> {
    let mut body = String::new();
    for (name, data) in events {
        if let Some(name) = name {
            body.push_str(&format!("event: {name}\n"));
        }
        for line in data.split('\n') {
            body.push_str(&format!("data: {line}\n"));
        }
        body.push('\n');
    }
    body.into_bytes()
}

/// Feeds `chunks` of a body to `protocol` and ends it as the driver does; returns the stop reason
/// or the error text.
pub(crate) fn run(
    protocol: &mut impl WireProtocol,
    chunks: &[&[u8]],
) -> Result<Result<StopReason, String>, TestCaseError> {
    let mut builder = MessageBuilder::new(&Model::unknown());
    let mut parser = SseParser::default();
    let mut out: Vec<AssistantMessageEvent> = Vec::new();
    let mut fed = 0;
    let mut events = 0;
    let mut result = None;
    'body: for chunk in chunks {
        fed += chunk.len();
        for event in parser.feed(chunk) {
            events += 1;
            let flow = protocol.on_event(event, &mut builder, &mut out);
            // The consumer takes each event and drops it, so the message is updated in place.
            out.clear();
            check_size(&builder, fed, events)?;
            match flow {
                Ok(Flow::Continue) => {}
                Ok(Flow::Finished(reason)) => {
                    result = Some(Ok(reason));
                    break 'body;
                }
                Err(error) => {
                    result = Some(Err(error));
                    break 'body;
                }
            }
        }
    }
    let result = match result {
        Some(result) => result,
        None => match parser
            .finish()
            .map(|event| protocol.on_event(event, &mut builder, &mut out))
        {
            Some(Ok(Flow::Finished(reason))) => Ok(reason),
            Some(Err(error)) => Err(error),
            Some(Ok(Flow::Continue)) | None => protocol.on_body_end(&mut builder, &mut out),
        },
    };
    out.clear();
    check_size(&builder, fed, events + 1)?;
    Ok(match result {
        Ok(reason) => Ok(reason),
        Err(error) => Err(check_error(&error)?),
    })
}

fn check_size(builder: &MessageBuilder, fed: usize, events: usize) -> Result<(), TestCaseError> {
    let size = serde_json::to_string(builder.partial()).map_or(0, |text| text.len());
    let limit = fed * MESSAGE_BYTES_PER_BODY_BYTE + events * MESSAGE_BYTES_PER_EVENT + 1024;
    prop_assert!(
        size <= limit,
        "a message of {size} bytes from {fed} bytes in {events} events"
    );
    Ok(())
}

/// The documented texts of each error; returns the text.
fn check_error(error: &ProtocolError) -> Result<String, TestCaseError> {
    let text = error.to_string();
    prop_assert!(!text.is_empty());
    match error {
        ProtocolError::Malformed { provider, data, .. } => {
            prop_assert!(
                text.starts_with(&format!("Malformed SSE data from {provider}: ")),
                "{text}"
            );
            if let Some(data) = data {
                prop_assert!(
                    data.chars().count() <= 201,
                    "an excerpt of {} characters",
                    data.chars().count()
                );
            }
            prop_assert!(
                text.chars().count() <= MAX_ERROR_CHARS,
                "{} characters: {text}",
                text.chars().count()
            );
        }
        ProtocolError::MalformedFrame { provider, .. } => {
            prop_assert!(
                text.starts_with(&format!("Malformed event stream from {provider}: ")),
                "{text}"
            );
        }
        ProtocolError::Unauthorized(_) => {}
        ProtocolError::Stopped { provider, .. } => {
            prop_assert!(
                text.starts_with(&format!("{provider} stopped the response (")),
                "{text}"
            );
        }
        ProtocolError::Incomplete { provider, .. } => {
            prop_assert!(
                text.starts_with(&format!("The response from {provider} ended before it was complete (")),
                "{text}"
            );
        }
        ProtocolError::Refused { .. } => prop_assert!(text.starts_with("The model stopped with stop reason ")),
        ProtocolError::NoMessageStop => prop_assert_eq!(&text, "Anthropic stream ended before message_stop"),
        ProtocolError::ToolCall(_) => {
            prop_assert!(text.starts_with("Tool call ") || text.starts_with("Block "), "{text}");
        }
        ProtocolError::Reported { .. } => {}
        ProtocolError::NotAnEventStream { provider, excerpt, .. } => {
            prop_assert!(
                text.starts_with(&format!("The response from {provider} is not an event stream")),
                "{text}"
            );
            prop_assert!(
                excerpt.chars().count() <= 501,
                "an excerpt of {} characters",
                excerpt.chars().count()
            );
            prop_assert!(
                text.chars().count() <= MAX_ERROR_CHARS + provider.chars().count(),
                "{} characters: {text}",
                text.chars().count()
            );
        }
    }
    Ok(text)
}

/// Strings for text deltas, ids and names: short, awkward, sometimes empty.
pub(crate) fn text() -> impl Strategy<Value = String> {
    pi_test_support::fuzz::awkward_string()
}

/// A JSON value in place of a field (the wrong type, a missing value).
pub(crate) fn odd_value() -> impl Strategy<Value = Value> {
    pi_test_support::fuzz::json_value()
}

/// Tool-call arguments split into fragments (sometimes cut or with garbage).
pub(crate) fn argument_fragments() -> impl Strategy<Value = Vec<String>> {
    (
        pi_test_support::fuzz::damaged(
            prop::collection::btree_map("[a-z]{1,6}", odd_value(), 0..3)
                .prop_map(|map| serde_json::to_vec(&map).unwrap_or_default()),
        ),
        pi_test_support::fuzz::cuts(),
    )
        .prop_map(|(bytes, cuts)| {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            pi_test_support::fuzz::str_chunks(&text, &cuts)
                .into_iter()
                .map(str::to_owned)
                .collect()
        })
}
