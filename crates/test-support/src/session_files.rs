//! pi session files (JSONL, format version 3) written by hand, for tests that start from a given
//! session, and read back, for tests that check what pi wrote.
//!
//! A file is a [`header`] line then entries, each with an 8-hex-digit `id` and the `parentId` of
//! the entry before it on its branch (`null` for the first): [`message`] entries and any other
//! kind through [`entry`]. [`jsonl`] joins the lines.
//!
//! ```
//! use std::path::Path;
//!
//! use pi_test_support::session_files::{self, header, entry, message};
//! use serde_json::json;
//!
//! let lines = [
//!     header("5d1c2b3a-0000-4000-8000-000000000001", "2026-11-01T10:00:00.000Z", Path::new("/w")),
//!     entry("model_change", "a0000001", None, "2026-11-01T10:00:01.000Z",
//!           json!({"provider": "mock", "modelId": "mock-model"})),
//!     message("a0000002", Some("a0000001"), "2026-11-01T10:00:02.000Z",
//!             session_files::user_message("Hello.", 1)),
//! ];
//! let text = session_files::jsonl(&lines);
//! assert!(text.starts_with(r#"{"type":"session","version":3,"id":"5d1c2b3a-"#));
//! assert_eq!(text.lines().count(), 3);
//! assert!(text.ends_with("\n"));
//! ```

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

/// The header line: `{"type": "session", "version": 3, "id", "timestamp", "cwd"}`.
pub fn header(id: &str, timestamp: &str, cwd: &Path) -> Value {
    json!({"type": "session", "version": 3, "id": id, "timestamp": timestamp, "cwd": cwd})
}

/// An entry of `kind` (`model_change`, `thinking_level_change`, `label`, …): `type`, `id`,
/// `parentId` and `timestamp`, then the members of `fields` (an object) in their order.
pub fn entry(kind: &str, id: &str, parent_id: Option<&str>, timestamp: &str, fields: Value) -> Value {
    let mut map = Map::new();
    map.insert("type".into(), json!(kind));
    map.insert("id".into(), json!(id));
    map.insert("parentId".into(), json!(parent_id));
    map.insert("timestamp".into(), json!(timestamp));
    if let Value::Object(fields) = fields {
        map.extend(fields);
    }
    Value::Object(map)
}

/// A `message` entry holding `message` (an agent message as JSON, e.g. from [`user_message`] or
/// [`assistant_message`]).
pub fn message(id: &str, parent_id: Option<&str>, timestamp: &str, message: Value) -> Value {
    entry("message", id, parent_id, timestamp, json!({"message": message}))
}

/// A user message of plain text, as JSON.
pub fn user_message(text: &str, timestamp: u64) -> Value {
    json!({"role": "user", "content": text, "timestamp": timestamp})
}

/// An assistant message answering `text` from `provider`'s `model` over `api`, stopped normally,
/// using one input and one output token at no cost, as JSON.
pub fn assistant_message(text: &str, api: &str, provider: &str, model: &str, timestamp: u64) -> Value {
    json!({"role": "assistant", "content": [{"type": "text", "text": text}], "api": api,
        "provider": provider, "model": model, "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0,
        "totalTokens": 2, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": "stop", "timestamp": timestamp})
}

/// The lines as a file's text: one compact JSON value per line, each ending in a newline.
pub fn jsonl(lines: &[Value]) -> String {
    lines.iter().map(|line| format!("{line}\n")).collect()
}

/// Parses every line of a session file.
///
/// # Panics
///
/// When the file cannot be read or a line is not JSON.
pub fn read(path: &Path) -> Vec<Value> {
    #[allow(clippy::expect_used)]
    let text = std::fs::read_to_string(path).expect("a readable session file");
    #[allow(clippy::expect_used)]
    text.lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

/// The files one level down in `sessions_dir` (pi keeps one directory per working directory
/// there), sorted; none when it does not exist.
pub fn list(sessions_dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in std::fs::read_dir(sessions_dir).into_iter().flatten().flatten() {
        for file in std::fs::read_dir(dir.path()).into_iter().flatten().flatten() {
            files.push(file.path());
        }
    }
    files.sort();
    files
}
