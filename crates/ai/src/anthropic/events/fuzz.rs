//! Fuzz target of the `anthropic-messages` event mapping: streams of Messages API events in any
//! order (blocks of every type at a few indexes, deltas of the right and the wrong kind, stops,
//! errors, fields of the wrong type, unknown events), framed as SSE, damaged and split anywhere.
//! The checks are the shared ones of [`crate::driver::fuzz`].

use pi_test_support::fuzz;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::AnthropicEvents;
use crate::driver::fuzz::{argument_fragments, odd_value, run, sse_body, text};

fn index() -> impl Strategy<Value = Value> {
    prop_oneof![
        8 => (0u64..3).prop_map(Value::from),
        1 => odd_value(),
    ]
}

fn block() -> impl Strategy<Value = Value> {
    prop_oneof![
        (text()).prop_map(|text| json!({"type": "text", "text": text})),
        (text(), text()).prop_map(
            |(thinking, signature)| json!({"type": "thinking", "thinking": thinking, "signature": signature})
        ),
        text().prop_map(|data| json!({"type": "redacted_thinking", "data": data})),
        (text(), text(), odd_value())
            .prop_map(|(id, name, input)| json!({"type": "tool_use", "id": id, "name": name, "input": input})),
        Just(json!({"type": "server_tool_use", "id": "s", "name": "web_search"})),
        odd_value(),
    ]
}

fn delta() -> impl Strategy<Value = Vec<Value>> {
    prop_oneof![
        text().prop_map(|text| vec![json!({"type": "text_delta", "text": text})]),
        text().prop_map(|thinking| vec![json!({"type": "thinking_delta", "thinking": thinking})]),
        text().prop_map(|signature| vec![json!({"type": "signature_delta", "signature": signature})]),
        argument_fragments().prop_map(|fragments| fragments
            .into_iter()
            .map(|partial_json| json!({"type": "input_json_delta", "partial_json": partial_json}))
            .collect()),
        odd_value().prop_map(|value| vec![value]),
    ]
}

/// One or more events (a tool call's argument fragments come in a row).
fn events() -> impl Strategy<Value = Vec<(Option<String>, Value)>> {
    let usage = || {
        prop_oneof![
            (0u64..1_000_000, 0u64..1_000_000)
                .prop_map(|(i, o)| json!({"input_tokens": i, "output_tokens": o, "cache_read_input_tokens": 1})),
            odd_value(),
        ]
    };
    let stop_reason = prop::sample::select(vec![
        "end_turn",
        "max_tokens",
        "tool_use",
        "refusal",
        "pause_turn",
        "new_reason",
    ]);
    let one = |name: &str, data: Value| vec![(Some(name.to_owned()), data)];
    prop_oneof![
        (text(), usage()).prop_map(move |(id, usage)| one(
            "message_start",
            json!({"type": "message_start", "message": {"id": id, "usage": usage}})
        )),
        (index(), block()).prop_map(move |(index, block)| one(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": block})
        )),
        (index(), delta()).prop_map(|(index, deltas)| deltas
            .into_iter()
            .map(|delta| (
                Some("content_block_delta".to_owned()),
                json!({"type": "content_block_delta", "index": index, "delta": delta})
            ))
            .collect()),
        index().prop_map(move |index| one(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index})
        )),
        (stop_reason, usage()).prop_map(move |(reason, usage)| one(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": reason}, "usage": usage})
        )),
        Just(one("message_stop", json!({"type": "message_stop"}))),
        Just(one("ping", json!({"type": "ping"}))),
        (text(), text()).prop_map(move |(kind, message)| one(
            "error",
            json!({"type": "error", "error": {"type": kind, "message": message}})
        )),
        odd_value().prop_map(move |value| one("content_block_delta", value)),
        (text(), odd_value()).prop_map(|(name, value)| vec![(Some(name), value)]),
    ]
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(events(), 0..16).prop_map(|events| {
        let framed: Vec<(Option<String>, String)> = events
            .into_iter()
            .flatten()
            .map(|(name, data)| (name, data.to_string()))
            .collect();
        sse_body(&framed)
    })
}

proptest! {
    #![proptest_config(fuzz::config())]

    #[test]
    fn fuzz_anthropic_events(body in fuzz::damaged(body()), cuts in fuzz::cuts()) {
        let _ = run(&mut AnthropicEvents::default(), &fuzz::chunks(&body, &cuts))?;
    }
}

/// Found while fuzzing: a field of the wrong type holding a long string made an error text as long
/// as the string (serde quotes the value: `invalid type: string "…", expected u64`), which went
/// whole into the message, stderr and the session file. The error now quotes 200 characters of
/// serde's message and 200 of the data.
#[test]
fn fuzz_anthropic_events_long_wrong_typed_field() {
    let long = "x".repeat(100_000);
    for (name, data) in [
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": long}),
        ),
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": [long]}}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "usage": {"input_tokens": long}}),
        ),
    ] {
        let body = sse_body(&[(Some(name.to_owned()), data.to_string())]);
        let result = run(&mut AnthropicEvents::default(), &[&body]).map_err(|error| error.to_string());
        let Ok(Err(text)) = result else {
            panic!("{name}: {result:?}");
        };
        assert!(
            text.starts_with("Malformed SSE data from anthropic: invalid type: "),
            "{name}"
        );
        assert!(
            text.chars().count() < 500,
            "{name}: {} characters",
            text.chars().count()
        );
    }
}

/// Found while fuzzing: usage counts near `u64::MAX` overflowed the sum of `total_tokens` (a
/// panic in debug builds); the sum now saturates.
#[test]
fn fuzz_anthropic_events_huge_usage_counts_saturate() {
    let max = u64::MAX;
    let body = sse_body(&[
        (
            Some("message_start".to_owned()),
            json!({"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": max, "output_tokens": max}}})
                .to_string(),
        ),
        (
            Some("message_delta".to_owned()),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                "usage": {"cache_read_input_tokens": max, "cache_creation_input_tokens": max}})
            .to_string(),
        ),
    ]);
    let result = run(&mut AnthropicEvents::default(), &[&body]);
    assert!(result.is_ok(), "{result:?}");
}
