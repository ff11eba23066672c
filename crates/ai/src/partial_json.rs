//! Parsing tool-call arguments while they stream in.

use serde_json::{Map, Value};

/// The state of a scan over a JSON prefix.
struct Scan {
    stack: Vec<char>,
    in_string: bool,
    escaped: bool,
    /// Whether the innermost object expects a key next (after `{` or `,`).
    expect_key: bool,
    /// Where the open string starts when it is an object key.
    open_key: Option<usize>,
}

fn scan(text: &str) -> Scan {
    let mut scan = Scan {
        stack: Vec::new(),
        in_string: false,
        escaped: false,
        expect_key: false,
        open_key: None,
    };
    for (at, c) in text.char_indices() {
        if scan.in_string {
            if scan.escaped {
                scan.escaped = false;
            } else if c == '\\' {
                scan.escaped = true;
            } else if c == '"' {
                scan.in_string = false;
                scan.open_key = None;
            }
            continue;
        }
        match c {
            '"' => {
                scan.in_string = true;
                let in_object = scan.stack.last() == Some(&'}');
                scan.open_key = (in_object && scan.expect_key).then_some(at);
            }
            '{' => {
                scan.stack.push('}');
                scan.expect_key = true;
            }
            '[' => {
                scan.stack.push(']');
                scan.expect_key = false;
            }
            '}' | ']' => {
                scan.stack.pop();
                scan.expect_key = false;
            }
            ':' => scan.expect_key = false,
            ',' => scan.expect_key = scan.stack.last() == Some(&'}'),
            _ => {}
        }
    }
    scan
}

/// Completes a JSON prefix by closing its open string and containers. An unfinished object key
/// is dropped (no value could follow it).
fn complete(prefix: &str) -> String {
    let state = scan(prefix);
    let mut text = prefix.to_owned();
    if let (true, Some(key)) = (state.in_string, state.open_key) {
        text.truncate(key);
    } else if state.in_string {
        if state.escaped {
            text.pop();
        }
        // An unfinished \uXXXX escape cannot be closed; drop it.
        if let Some(pos) = text.rfind("\\u")
            && text[pos + 2..].len() < 4
            && !text[..pos].ends_with('\\')
        {
            text.truncate(pos);
        }
        text.push('"');
    }
    let trimmed_len = text.trim_end().len();
    text.truncate(trimmed_len);
    if text.ends_with(',') {
        text.pop();
    } else if text.ends_with(':') {
        text.push_str("null");
    }
    for closer in state.stack.iter().rev() {
        text.push(*closer);
    }
    text
}

/// How far from the end of a prefix [`complete`] may change it (a dropped escape or `\u`
/// escape, a dropped `,`), plus the byte serde may look at past the one it fails on.
const TAIL_SLACK: usize = 8;

/// After this many one-character cuts in a row, a trailing run of number or literal characters
/// is cut whole (an out-of-range number of thousands of digits would otherwise cost a parse per
/// digit).
const MAX_SINGLE_CUTS: usize = 16;

/// The byte offset in `text` just past the byte serde's error points at.
fn error_offset(text: &str, error: &serde_json::Error) -> usize {
    let line_start = match error.line() {
        0 | 1 => 0,
        line => text
            .match_indices('\n')
            .nth(line - 2)
            .map_or(text.len(), |(at, _)| at + 1),
    };
    line_start.saturating_add(error.column()).min(text.len())
}

/// Parses a possibly unfinished JSON text; returns `{}` when nothing usable was received.
///
/// The result is the completion of the longest prefix of `text` that completes to valid JSON.
/// Cutting one character at a time would cost a parse per character of a text that goes wrong
/// early (a stray escape at the start of a long `content`); instead, when the parse fails well
/// before the end of the prefix, every longer prefix fails there too, so the search jumps back
/// to just past the failure.
pub fn parse_partial_json(text: &str) -> Value {
    if text.trim().is_empty() {
        return Value::Object(Map::new());
    }
    if let Ok(value) = serde_json::from_str(text) {
        return value;
    }
    let mut prefix = text;
    let mut single_cuts = 0;
    while !prefix.is_empty() {
        #[cfg(test)]
        fuzz::count_attempt();
        let completed = complete(prefix);
        let error = match serde_json::from_str::<Value>(&completed) {
            Ok(value) => return value,
            Err(error) => error,
        };
        let failed_at = error_offset(&completed, &error);
        let last_char = prefix.char_indices().last().map_or(0, |(i, _)| i);
        let cut = if failed_at + TAIL_SLACK < prefix.len() {
            // The bytes serde read before failing are the same in every longer prefix.
            single_cuts = 0;
            (failed_at + 2..prefix.len())
                .find(|at| prefix.is_char_boundary(*at))
                .unwrap_or(last_char)
        } else if single_cuts >= MAX_SINGLE_CUTS {
            single_cuts = 0;
            let run = prefix.trim_end_matches(|c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-'));
            run.len().min(last_char)
        } else {
            // Drop the last character (a partial number, literal or key) and try again.
            single_cuts += 1;
            last_char
        };
        prefix = &prefix[..cut];
    }
    Value::Object(Map::new())
}

/// Below this size the arguments are re-parsed after every fragment.
const ALWAYS_REPARSE_BYTES: usize = 1024;

/// Collects a tool call's argument fragments.
///
/// Providers send a tool call's arguments as raw JSON fragments. [`ArgumentsAccumulator`] keeps
/// the text received so far and parses it best-effort after every fragment: an unfinished string
/// is closed, a dangling key, `:` or `,` is dropped and open objects and arrays are closed, so
/// the UI sees `{"path": "src/ma` as `{"path": "src/ma"}`. The final parse of the complete text
/// is exact.
///
/// ```
/// use pi_ai::{ArgumentsAccumulator, parse_partial_json};
/// use serde_json::json;
///
/// assert_eq!(parse_partial_json(r#"{"path": "src/ma"#), json!({"path": "src/ma"}));
/// let mut args = ArgumentsAccumulator::default();
/// assert_eq!(args.push(r#"{"a": [1, 2"#), Some(json!({"a": [1, 2]})));
/// args.push("]}");
/// assert_eq!(args.finish().unwrap(), json!({"a": [1, 2]}));
/// ```
///
/// Re-parsing the whole text after every fragment would cost time quadratic in the argument
/// size (a `write` call can carry hundreds of kilobytes), so past 1 KiB the best-effort parse is
/// refreshed only when the text has grown by an eighth since the last one: the live view lags a
/// little on huge arguments and the total work stays linear. [`ArgumentsAccumulator::finish`] is
/// always exact.
#[derive(Debug, Clone, Default)]
pub struct ArgumentsAccumulator {
    text: String,
    parsed_len: usize,
}

impl ArgumentsAccumulator {
    /// Appends a fragment; returns the refreshed best-effort arguments when they were re-parsed.
    pub fn push(&mut self, fragment: &str) -> Option<Value> {
        self.text.push_str(fragment);
        let grown = self.text.len() - self.parsed_len;
        if self.text.len() <= ALWAYS_REPARSE_BYTES || grown >= self.parsed_len / 8 {
            self.parsed_len = self.text.len();
            Some(parse_partial_json(&self.text))
        } else {
            None
        }
    }

    /// The raw text so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The arguments parsed best-effort from the whole text so far.
    pub fn current(&self) -> Value {
        parse_partial_json(&self.text)
    }

    /// The final arguments; an empty text is `{}`. Invalid JSON is an error naming the problem.
    pub fn finish(&self) -> Result<Value, serde_json::Error> {
        if self.text.trim().is_empty() {
            return Ok(Value::Object(Map::new()));
        }
        serde_json::from_str(&self.text)
    }
}

#[cfg(test)]
mod fuzz;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn completes_common_prefixes() {
        assert_eq!(parse_partial_json(""), json!({}));
        assert_eq!(parse_partial_json("{"), json!({}));
        assert_eq!(parse_partial_json(r#"{"a"#), json!({}));
        assert_eq!(parse_partial_json(r#"{"a":"#), json!({"a": null}));
        assert_eq!(parse_partial_json(r#"{"a": 1,"#), json!({"a": 1}));
        assert_eq!(parse_partial_json(r#"{"a": tr"#), json!({"a": null}));
        assert_eq!(parse_partial_json(r#"{"a": "x\"#), json!({"a": "x"}));
        assert_eq!(parse_partial_json(r#"{"a": "\u00"#), json!({"a": ""}));
        assert_eq!(
            parse_partial_json(r#"{"a": {"b": [1, {"c": "d"#),
            json!({"a": {"b": [1, {"c": "d"}]}})
        );
    }

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i32>().prop_map(Value::from),
            "[a-z \\\\\"é\\n]{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map("[a-z]{1,5}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// However the text is split, the final arguments equal a one-shot parse, and no
        /// intermediate parse panics.
        #[test]
        fn chunking_never_changes_the_final_arguments(
            object in prop::collection::btree_map("[a-z]{1,6}", arb_json(), 0..5),
            cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
        ) {
            let value = Value::Object(object.into_iter().collect());
            let text = serde_json::to_string(&value).unwrap();
            let mut points: Vec<usize> = cuts.iter().map(|i| i.index(text.len() + 1)).collect();
            points.push(0);
            points.push(text.len());
            points.sort_unstable();
            points.dedup();
            let mut acc = ArgumentsAccumulator::default();
            let mut start = 0;
            for point in points {
                let end = point.max(start);
                if !text.is_char_boundary(end) { continue; }
                let _ = acc.push(&text[start..end]);
                start = end;
                let _ = acc.current();
            }
            let _ = acc.push(&text[start..]);
            prop_assert_eq!(acc.finish().unwrap(), value);
        }
    }
}
