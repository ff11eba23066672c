//! Fuzz targets of the partial-JSON parser: tool-call arguments as providers stream them (valid
//! objects split anywhere) and as models get them wrong (cut, garbage inserted, bytes dropped or
//! doubled).
//!
//! Asserts: no panic; every live parse of a prefix of an object is an object; the final parse is
//! exact, and an error exactly when the text is not JSON (the documented contract of
//! [`ArgumentsAccumulator::finish`]); the result is the one the simple search (cut one character
//! at a time) gives; a parse takes a bounded number of attempts, whatever the length; the result
//! is no larger than linear in the text.

use std::cell::Cell;

use pi_test_support::fuzz;
use proptest::prelude::*;
use serde_json::{Map, Value};

use super::{ArgumentsAccumulator, parse_partial_json};

thread_local! {
    static ATTEMPTS: Cell<usize> = const { Cell::new(0) };
}

/// Counts one completion tried by [`parse_partial_json`] on this thread.
pub(super) fn count_attempt() {
    ATTEMPTS.with(|attempts| attempts.set(attempts.get() + 1));
}

/// Most completions one parse may try, whatever the length of the text.
const MAX_ATTEMPTS: usize = 48;

/// [`parse_partial_json`] and the completions it tried.
fn parse_counting(text: &str) -> (Value, usize) {
    ATTEMPTS.with(|attempts| attempts.set(0));
    let value = parse_partial_json(text);
    (value, ATTEMPTS.with(Cell::get))
}

/// The simple search [`parse_partial_json`] must agree with: the completion of the longest
/// prefix that completes to valid JSON, found by cutting one character at a time (quadratic).
fn reference(text: &str) -> Value {
    fn complete(prefix: &str) -> String {
        // The completion before unfinished keys were dropped: closing the key is never valid,
        // so the search cuts it character by character instead.
        let mut stack = Vec::new();
        let (mut in_string, mut escaped) = (false, false);
        for c in prefix.chars() {
            if in_string {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == '"' {
                    in_string = false;
                }
                continue;
            }
            match c {
                '"' => in_string = true,
                '{' => stack.push('}'),
                '[' => stack.push(']'),
                '}' | ']' => {
                    stack.pop();
                }
                _ => {}
            }
        }
        let mut text = prefix.to_owned();
        if in_string {
            if escaped {
                text.pop();
            }
            if let Some(pos) = text.rfind("\\u")
                && text[pos + 2..].len() < 4
                && !text[..pos].ends_with('\\')
            {
                text.truncate(pos);
            }
            text.push('"');
        }
        text.truncate(text.trim_end().len());
        if text.ends_with(',') {
            text.pop();
        } else if text.ends_with(':') {
            text.push_str("null");
        }
        text.extend(stack.iter().rev());
        text
    }
    if text.trim().is_empty() {
        return Value::Object(Map::new());
    }
    let mut prefix = text;
    loop {
        if let Ok(value) = serde_json::from_str::<Value>(&complete(prefix)) {
            return value;
        }
        if prefix.is_empty() {
            return Value::Object(Map::new());
        }
        let cut = prefix.char_indices().last().map_or(0, |(i, _)| i);
        prefix = &prefix[..cut];
    }
}

fn object_text() -> impl Strategy<Value = (Value, String)> {
    prop::collection::vec((fuzz::awkward_string(), fuzz::json_value()), 0..5).prop_map(|pairs| {
        let value = Value::Object(pairs.into_iter().collect());
        let text = if value.as_object().is_some_and(|o| o.len() % 2 == 0) {
            serde_json::to_string(&value).unwrap_or_default()
        } else {
            serde_json::to_string_pretty(&value).unwrap_or_default()
        };
        (value, text)
    })
}

fn damaged_text() -> impl Strategy<Value = String> {
    fuzz::damaged(object_text().prop_map(|(_, text)| text.into_bytes()))
        .prop_map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
}

/// Checks the properties every parse has.
fn check_parse(text: &str) -> Result<Value, TestCaseError> {
    let (value, attempts) = parse_counting(text);
    prop_assert!(attempts <= MAX_ATTEMPTS, "{attempts} attempts for {} bytes", text.len());
    let size = value.to_string().len();
    prop_assert!(size <= 2 * text.len() + 2, "{size} bytes from {} bytes", text.len());
    Ok(value)
}

proptest! {
    #![proptest_config(fuzz::config())]

    /// Valid arguments streamed in arbitrary fragments.
    #[test]
    fn fuzz_partial_json_streaming((value, text) in object_text(), cuts in fuzz::cuts()) {
        let mut accumulator = ArgumentsAccumulator::default();
        for fragment in fuzz::str_chunks(&text, &cuts) {
            if let Some(live) = accumulator.push(fragment) {
                prop_assert!(live.is_object(), "{live} from {:?}", accumulator.text());
            }
            let current = check_parse(accumulator.text())?;
            prop_assert!(current.is_object());
        }
        prop_assert_eq!(accumulator.text(), &text);
        prop_assert_eq!(accumulator.finish().ok(), Some(value.clone()));
        prop_assert_eq!(parse_partial_json(&text), value);
    }

    /// Arguments a model got wrong.
    #[test]
    fn fuzz_partial_json_damaged(text in damaged_text()) {
        let mut accumulator = ArgumentsAccumulator::default();
        accumulator.push(&text);
        let exact = serde_json::from_str::<Value>(&text);
        match accumulator.finish() {
            Ok(value) if text.trim().is_empty() => prop_assert_eq!(value, Value::Object(Map::new())),
            Ok(value) => prop_assert_eq!(Some(value), exact.ok()),
            Err(error) => {
                prop_assert!(exact.is_err());
                prop_assert!(!error.to_string().is_empty());
            }
        }
        let best_effort = check_parse(&text)?;
        prop_assert_eq!(best_effort, reference(&text), "{:?}", text);
    }

    /// Any bytes, as text.
    #[test]
    fn fuzz_partial_json_garbage(text in "[\\[\\]{}\":,\\\\ \n0-9a-z.eE+-]{0,64}") {
        prop_assert_eq!(check_parse(&text)?, reference(&text), "{:?}", text);
    }
}

/// Found while fuzzing: a text that goes wrong early (here a stray `\q` escape at the start of a
/// long `content`, or text after a complete object) cost one parse per character after the
/// mistake, quadratic in the length: 16 KB took 6 s and 200 KB minutes, at every refresh of the
/// live view and again when the call ended. Now a parse tries a bounded number of completions.
#[test]
fn fuzz_partial_json_long_text_after_an_early_mistake() {
    let long = "y".repeat(200_000);
    let cases = [
        (
            format!(r#"{{"path":"a","content":"x\q{long}"#),
            serde_json::json!({"path": "a", "content": "x"}),
        ),
        (
            format!(r#"{{"path":"a"}}{}"#, " x".repeat(100_000)),
            serde_json::json!({"path": "a"}),
        ),
        (format!(r#"{{"path":"a","{long}"#), serde_json::json!({"path": "a"})),
        (
            format!(r#"{{"n":1{}"#, "0".repeat(200_000)),
            serde_json::json!({"n": null}),
        ),
        (format!("{}{}", "[".repeat(100_000), "1"), Value::Null),
    ];
    for (text, expected) in cases {
        let (value, attempts) = parse_counting(&text);
        assert!(attempts <= MAX_ATTEMPTS, "{attempts} attempts");
        if !expected.is_null() {
            assert_eq!(value, expected);
        }
    }
}

/// Found while fuzzing: the completion of a prefix ending in an unfinished key.
#[test]
fn fuzz_partial_json_unfinished_keys_are_dropped() {
    assert_eq!(parse_partial_json(r#"{"a":1,"bc"#), serde_json::json!({"a": 1}));
    assert_eq!(parse_partial_json(r#"{"a":{"b"#), serde_json::json!({"a": {}}));
    assert_eq!(parse_partial_json(r#"[{"a\"b"#), serde_json::json!([{}]));
    assert_eq!(parse_partial_json(r#"{"a":"b"#), serde_json::json!({"a": "b"}));
}
