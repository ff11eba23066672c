//! Fuzz targets of the session-file loader: files of every entry type with torn, garbage, huge,
//! blank and CRLF lines, duplicate and cyclic ids, old versions; and single lines near the
//! message shape the hand-written fast path reads.
//!
//! Asserts: no panic; every non-blank line after the header is an entry, a warning or both (kept
//! raw), and nothing else; each warning is one of the documented texts, names its line, is one
//! line and of bounded length; a torn last line is reported and remembered; the fast path reads
//! a line exactly as the general path does; opening the file and walking its tree ends (cycles in
//! damaged files included).

use std::path::Path;

use pi_test_support::fuzz;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::{Outcome, load_bytes, parse_line};
use crate::entry::SessionEntry;

/// The longest warning text: the reason is at most a parser's message about a short excerpt.
const MAX_WARNING_CHARS: usize = 600;

const WARNING_STARTS: [&str; 8] = [
    "skipped a line that is not valid JSON (",
    "skipped a line that is not a JSON object",
    "skipped an object without a string \"type\"",
    "skipped a second session header",
    "skipped a ",
    "kept a ",
    "written by a newer format (version ",
    "migrated from version ",
];

fn header(version: Value) -> String {
    json!({"type": "session", "version": version, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"})
        .to_string()
}

fn id() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["a", "b", "c", "d", "e"]).prop_map(str::to_owned)
}

fn parent() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => id().prop_map(Value::from),
        1 => Just(Value::Null),
        1 => fuzz::json_value(),
    ]
}

fn message() -> impl Strategy<Value = Value> {
    prop_oneof![
        fuzz::awkward_string().prop_map(|text| json!({"role": "user", "content": text, "timestamp": 1})),
        fuzz::awkward_string().prop_map(|text| json!({"role": "assistant", "content": [{"type": "text", "text": text}],
            "api": "a", "provider": "p", "model": "m", "usage": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0,
            "totalTokens": 3, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "stopReason": "stop", "timestamp": 2})),
        fuzz::awkward_string().prop_map(|text| json!({"role": "toolResult", "toolCallId": "c", "toolName": "ls",
            "content": [{"type": "text", "text": text}], "isError": false, "timestamp": 3})),
        fuzz::json_value().prop_map(|value| json!({"role": "user", "content": value, "timestamp": value})),
        fuzz::json_value().prop_map(|value| json!({"role": "bashExecution", "command": value})),
        fuzz::json_value(),
    ]
}

/// An entry of any type, or an object near one.
fn entry() -> impl Strategy<Value = Value> {
    let kind = prop_oneof![
        4 => message().prop_map(|message| json!({"type": "message", "message": message})),
        1 => (fuzz::awkward_string(), fuzz::awkward_string()).prop_map(|(p, m)| json!({"type": "model_change", "provider": p, "modelId": m})),
        1 => fuzz::json_value().prop_map(|level| json!({"type": "thinking_level_change", "thinkingLevel": level})),
        1 => (fuzz::awkward_string(), id(), fuzz::json_value()).prop_map(|(summary, first, tokens)| json!({"type": "compaction", "summary": summary, "firstKeptEntryId": first, "tokensBefore": tokens})),
        1 => (id(), fuzz::awkward_string()).prop_map(|(from, summary)| json!({"type": "branch_summary", "fromId": from, "summary": summary})),
        1 => fuzz::json_value().prop_map(|data| json!({"type": "custom", "customType": "x", "data": data})),
        1 => (fuzz::json_value(), fuzz::json_value()).prop_map(|(content, display)| json!({"type": "custom_message", "customType": "x", "content": content, "display": display})),
        1 => (id(), fuzz::json_value()).prop_map(|(target, label)| json!({"type": "label", "targetId": target, "label": label})),
        1 => fuzz::json_value().prop_map(|name| json!({"type": "session_info", "name": name})),
        1 => fuzz::awkward_string().prop_map(|kind| json!({"type": kind})),
        1 => Just(json!({"type": "session", "id": "again"})),
    ];
    (kind, id(), parent(), prop::option::of(fuzz::json_value())).prop_map(|(mut entry, id, parent, odd)| {
        if let Value::Object(map) = &mut entry {
            // The fast path wants `type` first; the general path takes any order.
            map.insert("id".into(), id.into());
            map.insert("parentId".into(), parent);
            map.insert("timestamp".into(), "2026-01-01T00:00:00.000Z".into());
            if let Some(odd) = odd {
                map.insert("extra".into(), odd);
            }
        }
        entry
    })
}

/// One line of a file body (without its line end).
fn line() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => entry().prop_map(|entry| entry.to_string().into_bytes()),
        2 => fuzz::damaged(entry().prop_map(|entry| entry.to_string().into_bytes()))
            .prop_map(|bytes| bytes.into_iter().filter(|b| *b != b'\n').collect()),
        1 => Just(Vec::new()),
        1 => Just(b"   \t".to_vec()),
        1 => fuzz::garbage(),
        1 => fuzz::json_value().prop_map(|value| value.to_string().into_bytes()),
    ]
}

fn file() -> impl Strategy<Value = (Vec<u8>, usize)> {
    (
        prop_oneof![4 => Just(json!(3)), 1 => Just(json!(4))],
        prop::collection::vec((line(), any::<bool>()), 0..20),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(version, lines, bom, torn)| {
            let mut bytes = if bom { b"\xEF\xBB\xBF".to_vec() } else { Vec::new() };
            bytes.extend(header(version).into_bytes());
            bytes.push(b'\n');
            let count = lines.len();
            for (line, crlf) in lines {
                bytes.extend(line);
                bytes.extend(if crlf { &b"\r\n"[..] } else { b"\n" });
            }
            if torn && count > 0 {
                // A torn write: the last line loses its end.
                let keep = bytes.len() - 1 - bytes.len() % 7;
                bytes.truncate(keep.max(1));
            }
            (bytes, count)
        })
}

fn check_warning_text(message: &str) -> Result<(), TestCaseError> {
    prop_assert!(
        WARNING_STARTS.iter().any(|start| message.starts_with(start)),
        "{message}"
    );
    prop_assert!(!message.contains('\n'), "{message}");
    prop_assert!(
        message.chars().count() <= MAX_WARNING_CHARS,
        "a warning of {} characters",
        message.chars().count()
    );
    Ok(())
}

/// The numbers of the non-blank lines after the header of a current-version file.
fn body_lines(bytes: &[u8]) -> Vec<usize> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    bytes
        .split(|b| *b == b'\n')
        .enumerate()
        .skip(1)
        .filter(|(_, line)| !line.iter().all(u8::is_ascii_whitespace))
        .map(|(n, _)| n + 1)
        .collect()
}

proptest! {
    #![proptest_config(fuzz::config())]

    #[test]
    fn fuzz_session_loader((bytes, _) in file()) {
        let path = Path::new("/nonexistent-pi-fuzz/s.jsonl");
        let loaded = match load_bytes(path, &bytes) {
            Ok(loaded) => loaded,
            Err(error) => {
                // Only a header cut by the torn write can fail.
                let text = error.to_string();
                prop_assert!(text.starts_with("session file /nonexistent-pi-fuzz/s.jsonl has no valid session header: "), "{text}");
                return Ok(());
            }
        };
        let lines = body_lines(&bytes);
        let mut seen: Vec<usize> = loaded.entry_lines.clone();
        for warning in &loaded.warnings {
            check_warning_text(&warning.message)?;
            prop_assert_eq!(warning.path.as_path(), path);
            prop_assert!(warning.line >= 1);
            if warning.message.starts_with("skipped") {
                prop_assert!(!loaded.entry_lines.contains(&warning.line));
                seen.push(warning.line);
            } else if warning.message.starts_with("kept") {
                prop_assert!(loaded.entry_lines.contains(&warning.line));
            }
        }
        seen.sort_unstable();
        prop_assert_eq!(seen, lines, "every line is an entry or a skipped line");
        prop_assert_eq!(loaded.ends_with_newline, bytes.last() == Some(&b'\n'));
        let held: usize = loaded.entries.iter().map(|e| serde_json::to_string(e).map_or(0, |t| t.len())).sum();
        prop_assert!(held <= 2 * bytes.len() + 64 * loaded.entries.len(), "{held} bytes of entries from {}", bytes.len());
    }

    /// Files of versions 1 and 2 are migrated in memory; the rewrite fails (no such directory)
    /// and says so.
    #[test]
    fn fuzz_session_loader_old_versions(lines in prop::collection::vec(line(), 0..12), version in 1u32..3) {
        let mut bytes = header(json!(version)).into_bytes();
        for line in lines {
            bytes.push(b'\n');
            bytes.extend(line);
        }
        let loaded = load_bytes(Path::new("/nonexistent-pi-fuzz/s.jsonl"), &bytes);
        let Ok(loaded) = loaded else {
            return Err(TestCaseError::fail(format!("{:?}", loaded.err())));
        };
        prop_assert_eq!(loaded.migrated_from, Some(version));
        let rewrite = format!("migrated from version {version} in memory, but could not rewrite the file: ");
        let reported = loaded.warnings.iter().any(|w| w.message.starts_with(&rewrite));
        prop_assert!(reported);
        for warning in &loaded.warnings {
            check_warning_text(&warning.message)?;
        }
    }

    /// A line near the fast path's shape reads the same on both paths.
    #[test]
    fn fuzz_session_fast_path_agrees(line in fuzz::damaged(entry().prop_map(|e| e.to_string().into_bytes()))) {
        if let Some(fast) = crate::fast::parse_message_line(&line) {
            let general = serde_json::from_slice::<serde_json::Map<String, Value>>(&line)
                .ok()
                .and_then(|obj| SessionEntry::from_object(obj).ok());
            prop_assert_eq!(Some(fast), general);
        }
        match parse_line(&line) {
            Outcome::Entry(_) => {}
            Outcome::Raw(_, message) | Outcome::Skipped(message) => check_warning_text(&message)?,
        }
    }

    /// The whole store on a damaged file: open, walk the tree, build the context.
    #[test]
    fn fuzz_session_open((bytes, _) in file()) {
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, &bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let Ok((manager, warnings)) = crate::SessionManager::open(&path) else {
            return Ok(());
        };
        let entries = manager.entries().len();
        let tree = manager.tree();
        prop_assert_eq!(tree.depth_first().count(), entries, "every entry once, cycles broken");
        let path = manager.path_to_leaf();
        let mut ids: Vec<&str> = path.iter().map(|e| e.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        prop_assert_eq!(ids.len(), path.len(), "an entry twice on the path to the leaf");
        let _ = manager.build_context();
        for warning in &warnings {
            prop_assert!(!warning.to_string().contains('\n'));
        }
    }
}

/// A huge line (a 4 MB tool output) loads; a huge garbage line is skipped with a short warning.
///
/// Found while fuzzing: a value of the wrong type in a huge line (here a 4 MB `timestamp`) made a
/// warning quoting the whole value (serde: `invalid type: string "…"`), printed to stderr; so did
/// a huge entry id used twice and a huge `type` on the header line. Each is now cut.
#[test]
fn fuzz_session_loader_huge_lines() {
    let big = "x".repeat(4 << 20);
    let entry = json!({"type": "message", "id": "a", "parentId": null, "timestamp": "t",
        "message": {"role": "user", "content": big, "timestamp": 1}});
    let wrong = json!({"type": "message", "id": "b", "parentId": "a", "timestamp": "t",
        "message": {"role": "user", "content": "hi", "timestamp": big}});
    let text = format!("{}\n{entry}\n{big}\n{wrong}\n", header(json!(3)));
    let loaded = load_bytes(Path::new("/s.jsonl"), text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    // Line 4 is kept raw (its message cannot be read), with a warning.
    assert_eq!(loaded.entry_lines, [2, 4]);
    let lines: Vec<usize> = loaded.warnings.iter().map(|w| w.line).collect();
    assert_eq!(lines, [3, 4]);
    for warning in &loaded.warnings {
        assert!(
            warning.message.chars().count() <= MAX_WARNING_CHARS + 1,
            "{} bytes",
            warning.message.len()
        );
    }

    let twice = json!({"type": "custom", "customType": "x", "id": big, "parentId": null, "timestamp": "t"});
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, format!("{}\n{twice}\n{twice}\n", header(json!(3)))).unwrap_or_else(|e| panic!("{e}"));
    let (_, warnings) = crate::SessionManager::open(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].message.len() < 200, "{} bytes", warnings[0].message.len());

    let header_line = json!({"type": big, "id": "s"}).to_string();
    let error = load_bytes(Path::new("/s.jsonl"), header_line.as_bytes())
        .map(|_| ())
        .unwrap_err();
    assert!(error.to_string().len() < 300, "{} bytes", error.to_string().len());
}

/// Found while fuzzing: in a damaged file whose parent ids form a cycle, the path to the leaf
/// went round the cycle (one entry more than the file had), so the model's context held a
/// message twice.
#[test]
fn fuzz_session_cycle_path_has_each_entry_once() {
    let line = |id: &str, parent: &str| {
        json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": id, "timestamp": 1}})
    };
    let text = format!("{}\n{}\n{}\n", header(json!(3)), line("a", "b"), line("b", "a"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
    let (manager, _) = crate::SessionManager::open(&path).unwrap_or_else(|e| panic!("{e}"));
    let ids: Vec<&str> = manager.path_to_leaf().iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["a", "b"]);
    assert_eq!(manager.build_context().messages.len(), 2);
}
