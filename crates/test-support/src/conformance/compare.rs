//! Comparing our artifacts with pi's goldens, with the differences we list.
//!
//! `differences.json` is an array of entries, each naming the scenarios (`scenario`, a glob: `*`
//! matches any text) and artifacts (`artifact`, a glob) it covers, and one of:
//! * `path`: a difference at a JSON path of the artifact (segments joined by `/`, array indexes as
//!   numbers; in the pattern `*` matches one segment or part of one, `**` any number of segments);
//! * `ours_only`: lines (elements of the artifact's array) only we write, given as a pattern
//!   (every key of the pattern, recursively, with the same value) — left out of ours;
//! * `pi_only`: lines only pi writes — left out of pi's.
//!
//! A `path` entry may also have `within: [start, end]`: then it covers a difference between two
//! texts only where the texts are the same outside the part from `start` up to `end` (both must
//! be in each text), e.g. only the documentation section of a system prompt.
//!
//! An RPC transcript (`run<N>.rpc`) is compared as two artifacts, `run<N>.rpc.responses` (the
//! `response` lines) and `run<N>.rpc.events` (the other lines received), so that a response
//! written between two events in one program and before them in the other is not a difference.
//! The sent commands are the scenario's and are not compared.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use super::record::{Artifacts, contains};
use super::scenario::ScenarioError;

/// One listed difference.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// Its name, also the key of its row in `docs/differences-from-pi.md`.
    pub id: String,
    /// The scenarios it covers (glob).
    pub scenario: String,
    /// The artifacts it covers (glob).
    pub artifact: String,
    /// A JSON path pattern, for a difference in place.
    pub path: Option<String>,
    /// For a `path` entry: the texts may differ only from the first marker up to the second.
    pub within: Option<(String, String)>,
    /// Lines only we write.
    pub ours_only: Option<Value>,
    /// Lines only pi writes.
    pub pi_only: Option<Value>,
}

/// The list of `differences.json`.
#[derive(Debug, Clone, Default)]
pub struct Differences {
    /// The entries, in file order.
    pub entries: Vec<Difference>,
}

impl Differences {
    /// Parses `differences.json`.
    ///
    /// # Errors
    /// When it is not an array of entries with an `id`, an `artifact` and one of `path`,
    /// `ours_only` and `pi_only`.
    pub fn parse(text: &str) -> Result<Differences, ScenarioError> {
        let invalid = |message: String| ScenarioError::Invalid {
            scenario: "differences.json".into(),
            message,
        };
        let value: Value = serde_json::from_str(text).map_err(|source| ScenarioError::Json {
            scenario: "differences.json".into(),
            source,
        })?;
        let mut entries = Vec::new();
        for item in value.as_array().ok_or_else(|| invalid("not an array".into()))? {
            let text = |key: &str| item.get(key).and_then(Value::as_str).map(str::to_owned);
            let id = text("id").ok_or_else(|| invalid(format!("an entry without \"id\": {item}")))?;
            let entry = Difference {
                scenario: text("scenario").unwrap_or_else(|| "*".into()),
                artifact: text("artifact").ok_or_else(|| invalid(format!("{id}: no \"artifact\"")))?,
                path: text("path"),
                within: match item.get("within") {
                    None => None,
                    Some(Value::Array(pair)) if pair.len() == 2 && pair.iter().all(Value::is_string) => Some((
                        pair[0].as_str().unwrap_or_default().to_owned(),
                        pair[1].as_str().unwrap_or_default().to_owned(),
                    )),
                    Some(other) => return Err(invalid(format!("{id}: \"within\" is not two texts: {other}"))),
                },
                ours_only: item.get("ours_only").cloned(),
                pi_only: item.get("pi_only").cloned(),
                id,
            };
            let kinds = [entry.path.is_some(), entry.ours_only.is_some(), entry.pi_only.is_some()];
            if kinds.iter().filter(|k| **k).count() != 1 {
                return Err(invalid(format!(
                    "{}: needs exactly one of \"path\", \"ours_only\", \"pi_only\"",
                    entry.id
                )));
            }
            entries.push(entry);
        }
        Ok(Differences { entries })
    }

    /// Reads and parses `path`.
    ///
    /// # Errors
    /// See [`Differences::parse`]; also when the file cannot be read.
    pub fn load(path: &Path) -> Result<Differences, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
            path: path.to_owned(),
            source,
        })?;
        Differences::parse(&text)
    }

    /// The distinct ids.
    pub fn ids(&self) -> BTreeSet<String> {
        self.entries.iter().map(|entry| entry.id.clone()).collect()
    }
}

/// What a comparison found.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Differences no entry covers: `scenario artifact path: what`.
    pub unlisted: Vec<String>,
    /// The ids of the entries that covered something.
    pub used: BTreeSet<String>,
}

/// Compares `ours` with `pi`'s goldens of `scenario`, leaving out what `differences` lists.
pub fn compare(scenario: &str, pi: &Artifacts, ours: &Artifacts, differences: &Differences) -> Report {
    let mut report = Report::default();
    let pi = split_rpc(pi);
    let ours = split_rpc(ours);
    let names: BTreeSet<&String> = pi.keys().chain(ours.keys()).collect();
    for name in names {
        let entries: Vec<&Difference> = differences
            .entries
            .iter()
            .filter(|entry| glob(&entry.scenario, scenario) && glob(&entry.artifact, name))
            .collect();
        let (mut theirs, mut mine) = (pi.get(name).cloned(), ours.get(name).cloned());
        for entry in &entries {
            if let (Some(pattern), Some(Value::Array(lines))) = (&entry.ours_only, mine.as_mut())
                && drop_lines(lines, pattern)
            {
                report.used.insert(entry.id.clone());
            }
            if let (Some(pattern), Some(Value::Array(lines))) = (&entry.pi_only, theirs.as_mut())
                && drop_lines(lines, pattern)
            {
                report.used.insert(entry.id.clone());
            }
        }
        let mut found = Vec::new();
        match (&theirs, &mine) {
            (Some(theirs), Some(mine)) => diff(theirs, mine, "", &mut found),
            (Some(_), None) => found.push((String::new(), "only pi wrote it".to_owned(), None)),
            (None, Some(_)) => found.push((String::new(), "only we wrote it".to_owned(), None)),
            (None, None) => {}
        }
        for (path, what, texts) in found {
            let covering: Vec<&&Difference> = entries
                .iter()
                .filter(|entry| {
                    entry
                        .path
                        .as_deref()
                        .is_some_and(|pattern| path_matches(pattern, &path))
                })
                .filter(|entry| match (&entry.within, &texts) {
                    (None, _) => true,
                    (Some(markers), Some((theirs, mine))) => {
                        let pi_outside = outside(theirs, markers);
                        pi_outside.is_some() && pi_outside == outside(mine, markers)
                    }
                    (Some(_), None) => false,
                })
                .collect();
            if covering.is_empty() {
                report.unlisted.push(format!("{scenario} {name} /{path}: {what}"));
            }
            for entry in covering {
                report.used.insert(entry.id.clone());
            }
        }
    }
    report
}

/// The artifacts with each `run<N>.rpc` split into `.responses` and `.events`.
fn split_rpc(artifacts: &Artifacts) -> Artifacts {
    let mut split = Artifacts::new();
    for (name, value) in artifacts {
        match (name.ends_with(".rpc"), value) {
            (true, Value::Array(lines)) => {
                let received = lines.iter().filter(|line| line.get("sent").is_none());
                let (responses, events): (Vec<&Value>, Vec<&Value>) =
                    received.partition(|line| line["type"] == "response");
                split.insert(
                    format!("{name}.responses"),
                    Value::Array(responses.into_iter().cloned().collect()),
                );
                split.insert(
                    format!("{name}.events"),
                    Value::Array(events.into_iter().cloned().collect()),
                );
            }
            _ => {
                split.insert(name.clone(), value.clone());
            }
        }
    }
    split
}

/// Removes the lines containing `pattern`; whether there were any.
fn drop_lines(lines: &mut Vec<Value>, pattern: &Value) -> bool {
    let before = lines.len();
    lines.retain(|line| !contains(line, pattern));
    lines.len() != before
}

fn join(path: &str, segment: &str) -> String {
    if path.is_empty() {
        segment.to_owned()
    } else {
        format!("{path}/{segment}")
    }
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 120 {
        format!("{}…", text.chars().take(120).collect::<String>())
    } else {
        text
    }
}

/// Every place where `ours` differs from `pi`'s: `(path, what)`.
/// A difference: its path, what it is, and the two texts when both are strings.
type Found = (String, String, Option<(String, String)>);

/// `text` without the part from `start` up to (not including) `end`; `None` when a marker is
/// missing.
fn outside(text: &str, (start, end): &(String, String)) -> Option<String> {
    let from = text.find(start.as_str())?;
    let to = from + text[from..].find(end.as_str())?;
    Some(format!("{}{}", &text[..from], &text[to..]))
}

fn diff(pi: &Value, ours: &Value, path: &str, found: &mut Vec<Found>) {
    match (pi, ours) {
        (Value::Object(theirs), Value::Object(mine)) => {
            for (key, value) in theirs {
                match mine.get(key) {
                    Some(other) => diff(value, other, &join(path, key), found),
                    None => found.push((join(path, key), format!("only pi has it: {}", short(value)), None)),
                }
            }
            for (key, value) in mine {
                if !theirs.contains_key(key) {
                    found.push((join(path, key), format!("only we have it: {}", short(value)), None));
                }
            }
            let common = |a: &serde_json::Map<String, Value>, b: &serde_json::Map<String, Value>| -> Vec<String> {
                a.keys().filter(|key| b.contains_key(*key)).cloned().collect()
            };
            let (order, our_order) = (common(theirs, mine), common(mine, theirs));
            if order != our_order {
                found.push((
                    path.to_owned(),
                    format!("key order: pi {order:?}, ours {our_order:?}"),
                    None,
                ));
            }
        }
        (Value::Array(theirs), Value::Array(mine)) => {
            for (index, value) in theirs.iter().enumerate() {
                let at = join(path, &index.to_string());
                match mine.get(index) {
                    Some(other) => diff(value, other, &at, found),
                    None => found.push((at, format!("only pi has it: {}", short(value)), None)),
                }
            }
            for (index, value) in mine.iter().enumerate().skip(theirs.len()) {
                found.push((
                    join(path, &index.to_string()),
                    format!("only we have it: {}", short(value)),
                    None,
                ));
            }
        }
        _ if pi == ours => {}
        (Value::String(theirs), Value::String(mine)) => found.push((
            path.to_owned(),
            format!("pi {}, ours {}", short(pi), short(ours)),
            Some((theirs.clone(), mine.clone())),
        )),
        _ => found.push((path.to_owned(), format!("pi {}, ours {}", short(pi), short(ours)), None)),
    }
}

/// Whether `text` matches `pattern`, where `*` matches any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, tail)) => {
            let Some(rest) = text.strip_prefix(head) else {
                return false;
            };
            (0..=rest.len())
                .filter(|at| rest.is_char_boundary(*at))
                .any(|at| glob(tail, &rest[at..]))
        }
    }
}

/// Whether the JSON path `path` matches `pattern` (see the module's documentation).
fn path_matches(pattern: &str, path: &str) -> bool {
    let split = |text: &str| -> Vec<String> {
        if text.is_empty() {
            Vec::new()
        } else {
            text.split('/').map(str::to_owned).collect()
        }
    };
    segments_match(&split(pattern), &split(path))
}

fn segments_match(pattern: &[String], path: &[String]) -> bool {
    match pattern.split_first() {
        None => path.is_empty(),
        Some((first, rest)) if first == "**" => (0..=path.len()).any(|skip| segments_match(rest, &path[skip..])),
        Some((first, rest)) => path
            .split_first()
            .is_some_and(|(segment, tail)| glob(first, segment) && segments_match(rest, tail)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn artifacts(pairs: &[(&str, Value)]) -> Artifacts {
        pairs
            .iter()
            .map(|(name, value)| ((*name).to_owned(), value.clone()))
            .collect()
    }

    #[test]
    fn paths_and_globs() {
        assert!(path_matches("**/responseModel", "3/message/responseModel"));
        assert!(path_matches("**/responseModel", "responseModel"));
        assert!(path_matches("*/message/content/*", "0/message/content/2"));
        assert!(!path_matches("*/message", "0/message/content"));
        assert!(path_matches("", ""));
        assert!(glob("run*.rpc.events", "run2.rpc.events"));
        assert!(!glob("run*.rpc.events", "run2.rpc.responses"));
        assert!(glob("*", ""));
    }

    #[test]
    fn listed_differences_are_left_out_and_marked_used() {
        let differences = Differences::parse(
            r#"[{"id": "extra", "artifact": "run*.rpc.events", "ours_only": {"type": "bash_execution_update"}},
                {"id": "model", "artifact": "*", "path": "**/responseModel"},
                {"id": "never", "scenario": "other", "artifact": "*", "path": "**"}]"#,
        )
        .unwrap();
        let pi = artifacts(&[(
            "run1.rpc",
            json!([{"sent": {"type": "bash"}}, {"type": "response", "id": "1"}, {"type": "agent_end", "responseModel": "m"}]),
        )]);
        let ours = artifacts(&[(
            "run1.rpc",
            json!([{"type": "bash_execution_update"}, {"type": "agent_end"}, {"type": "response", "id": "1"}]),
        )]);
        let report = compare("demo", &pi, &ours, &differences);
        assert_eq!(report.unlisted, Vec::<String>::new());
        assert_eq!(report.used, ["extra".to_owned(), "model".to_owned()].into());
    }

    #[test]
    fn unlisted_differences_are_reported_with_their_paths() {
        let pi = artifacts(&[("requests", json!([{"a": 1, "b": [1, 2]}])), ("session1", json!([]))]);
        let ours = artifacts(&[("requests", json!([{"b": [1, 3], "a": 1, "c": null}]))]);
        let report = compare("demo", &pi, &ours, &Differences::default());
        assert_eq!(
            report.unlisted,
            [
                "demo requests /0/b/1: pi 2, ours 3",
                "demo requests /0/c: only we have it: null",
                "demo requests /0: key order: pi [\"a\", \"b\"], ours [\"b\", \"a\"]",
                "demo session1 /: only pi wrote it",
            ]
        );
    }

    #[test]
    fn a_within_entry_covers_only_its_part_of_a_text() {
        let differences = Differences::parse(
            r#"[{"id": "docs", "artifact": "requests", "path": "*/prompt", "within": ["Docs:", "\nDate"]}]"#,
        )
        .unwrap();
        let pi = artifacts(&[(
            "requests",
            json!([{"prompt": "Tools.\nDocs: pi's\nDate"}, {"prompt": "Tools.\nDocs: pi's\nDate"}]),
        )]);
        let ours = artifacts(&[(
            "requests",
            json!([{"prompt": "Tools.\nDocs: ours\nDate"}, {"prompt": "Tools!\nDocs: ours\nDate"}]),
        )]);
        let report = compare("demo", &pi, &ours, &differences);
        assert_eq!(report.unlisted.len(), 1, "{:?}", report.unlisted);
        assert!(
            report.unlisted[0].starts_with("demo requests /1/prompt: "),
            "{:?}",
            report.unlisted
        );
        assert_eq!(report.used, ["docs".to_owned()].into());
    }

    #[test]
    fn an_entry_needs_one_kind() {
        let error = Differences::parse(r#"[{"id": "x", "artifact": "*"}]"#).unwrap_err();
        assert!(error.to_string().contains("exactly one"), "{error}");
    }
}
