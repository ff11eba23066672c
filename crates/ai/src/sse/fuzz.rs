//! Fuzz target of the SSE parser: near-valid streams (known and unknown fields, comments, all three
//! line ends, awkward values), damaged and split into arbitrary chunks.
//!
//! Asserts: no panic; the events do not depend on the chunking; no event field holds a line
//! break (only `data` joins its lines with `\n`); the parser holds memory linear in what it was
//! fed since the last event.

use pi_test_support::fuzz;
use proptest::prelude::*;

use super::{SseEvent, SseParser};

/// Linear-memory bound: heap bytes held per byte fed (lossy UTF-8 triples an invalid byte, and a
/// `data:` line costs a `String` header), plus a constant.
const HELD_PER_BYTE: usize = 16;
const HELD_SLACK: usize = 1024;

fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => fuzz::awkward_string().prop_map(|d| format!("data: {d}")),
        1 => fuzz::awkward_string().prop_map(|d| format!("data:{d}")),
        2 => "[a-z_.]{0,20}".prop_map(|e| format!("event: {e}")),
        1 => "[a-z0-9]{0,6}".prop_map(|i| format!("id: {i}")),
        1 => ".{0,10}".prop_map(|c| format!(":{c}")),
        1 => Just("retry: 100".to_owned()),
        1 => Just("data".to_owned()),
        1 => "[a-z]{1,6}".prop_map(|f| format!("{f}: x")),
        3 => Just(String::new()),
    ]
}

fn stream() -> impl Strategy<Value = Vec<u8>> {
    let ending = prop::sample::select(vec!["\n", "\r\n", "\r"]);
    prop::collection::vec((line(), ending), 0..24).prop_map(|lines| {
        lines
            .into_iter()
            .flat_map(|(line, ending)| [line, ending.to_owned()])
            .collect::<String>()
            .into_bytes()
    })
}

/// Feeds `chunks`, checking the memory bound after each, and finishes.
fn parse(chunks: &[&[u8]]) -> Result<Vec<SseEvent>, TestCaseError> {
    let mut parser = SseParser::default();
    let mut events = Vec::new();
    let mut since_event = 0;
    for chunk in chunks {
        since_event += chunk.len();
        let new = parser.feed(chunk);
        if !new.is_empty() {
            since_event = 0;
        }
        events.extend(new);
        let held = parser.held_bytes();
        prop_assert!(
            held <= since_event.max(chunk.len()) * HELD_PER_BYTE + HELD_SLACK,
            "holds {held} bytes after {since_event} bytes"
        );
    }
    events.extend(parser.finish());
    prop_assert_eq!(parser.held_bytes(), 0, "finish leaves nothing behind");
    Ok(events)
}

proptest! {
    #![proptest_config(fuzz::config())]

    #[test]
    fn fuzz_sse_parser(bytes in fuzz::damaged(stream()), cuts in fuzz::cuts()) {
        let whole = parse(&[&bytes])?;
        let chunked = parse(&fuzz::chunks(&bytes, &cuts))?;
        let bytewise: Vec<&[u8]> = bytes.chunks(1).collect();
        prop_assert_eq!(&whole, &chunked);
        prop_assert_eq!(&whole, &parse(&bytewise)?);
        for event in &whole {
            prop_assert!(!event.data.contains('\r'));
            for field in [&event.event, &event.id].into_iter().flatten() {
                prop_assert!(!field.contains(['\r', '\n']), "{field:?}");
            }
        }
    }

    #[test]
    fn fuzz_sse_parser_random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512), cuts in fuzz::cuts()) {
        prop_assert_eq!(parse(&[&bytes])?, parse(&fuzz::chunks(&bytes, &cuts))?);
    }
}

/// A huge line without an end is held once, not copied per chunk, and gives one event.
#[test]
fn fuzz_sse_parser_huge_line() {
    let mut parser = SseParser::default();
    let chunk = [b'x'; 4096];
    parser.feed(b"data: ");
    for _ in 0..1024 {
        assert!(parser.feed(&chunk).is_empty());
    }
    assert!(parser.held_bytes() <= 2 * (4096 * 1024 + 6) + HELD_SLACK);
    let event = parser.finish();
    assert_eq!(event.map(|e| e.data.len()), Some(4096 * 1024));
}
