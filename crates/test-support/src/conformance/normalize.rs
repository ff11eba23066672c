//! The normalization that makes two programs' artifacts comparable: what differs from run to run
//! (times, generated ids, temporary paths, the server's port) becomes a placeholder.
//!
//! * the sandbox's paths: the project → `<cwd>`, the home directory → `<home>`, their temporary
//!   parent → `<tmp>`, and the project as a session directory name (`--tmp-…-project--`) →
//!   `<session-dir>`; the model server's `http://127.0.0.1:<port>` → `<base-url>`;
//! * UUIDs → `<uuid-1>`, `<uuid-2>` … and the 8-hex-digit entry ids of session files (as the values
//!   of `id`, `parentId` and other `…Id` keys) → `<entry-1>` …, numbered by first appearance in
//!   the artifact (so links between entries stay visible);
//! * the directory of pi's npm package (`/…/node_modules/@mariozechner/pi-coding-agent`) →
//!   `<pi-package>`;
//! * ISO times (`2026-11-26T16:01:02.123Z`, also with `-` for `:` and `.` as in session file
//!   names) → `<time>`; numeric `timestamp` fields → 0; `Current date: YYYY-MM-DD` → `<date>`;
//! * the `message` and `assistantMessageEvent.partial` of `message_update` events → `<partial>`:
//!   pi serializes its events asynchronously, so those show a later state of the message than
//!   the event's (the event's delta is compared).

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

/// What [`normalize`] replaces: the run's temporary paths and server address.
#[derive(Debug, Clone)]
pub struct Context {
    replacements: Vec<(String, &'static str)>,
}

impl Context {
    /// The context of a sandbox at `root` (holding `home` and `project`) and a server at
    /// `base_url` (`http://127.0.0.1:<port>`).
    pub fn new(root: &Path, home: &Path, project: &Path, base_url: &str) -> Context {
        let project_text = project.to_string_lossy().into_owned();
        let session_dir = format!("--{}--", project_text.trim_start_matches('/').replace('/', "-"));
        let mut replacements = vec![
            (session_dir, "<session-dir>"),
            (project_text, "<cwd>"),
            (home.to_string_lossy().into_owned(), "<home>"),
            (root.to_string_lossy().into_owned(), "<tmp>"),
            (base_url.to_owned(), "<base-url>"),
        ];
        // A canonical path of a symlinked temporary directory too (macOS /var → /private/var).
        for (path, placeholder) in [(project, "<cwd>"), (home, "<home>"), (root, "<tmp>")] {
            if let Ok(real) = path.canonicalize() {
                let real = real.to_string_lossy().into_owned();
                if !replacements.iter().any(|(known, _)| *known == real) {
                    replacements.push((real, placeholder));
                }
            }
        }
        Context { replacements }
    }
}

/// Normalizes one artifact in place (see the module's documentation).
pub fn normalize(value: &mut Value, context: &Context) {
    let mut ids = Ids::default();
    walk(value, context, &mut ids, None);
}

#[derive(Default)]
struct Ids {
    uuids: HashMap<String, String>,
    entries: HashMap<String, String>,
}

impl Ids {
    fn uuid(&mut self, uuid: &str) -> String {
        let next = self.uuids.len() + 1;
        self.uuids
            .entry(uuid.to_owned())
            .or_insert_with(|| format!("<uuid-{next}>"))
            .clone()
    }

    fn entry(&mut self, id: &str) -> String {
        let next = self.entries.len() + 1;
        self.entries
            .entry(id.to_owned())
            .or_insert_with(|| format!("<entry-{next}>"))
            .clone()
    }
}

fn is_id_key(key: &str) -> bool {
    key == "id" || key.ends_with("Id") || key == "leaf"
}

fn walk(value: &mut Value, context: &Context, ids: &mut Ids, key: Option<&str>) {
    match value {
        Value::Object(map) => {
            if map.get("type").and_then(Value::as_str) == Some("message_update") {
                if map.contains_key("message") {
                    map.insert("message".into(), "<partial>".into());
                }
                if let Some(partial) = map
                    .get_mut("assistantMessageEvent")
                    .and_then(Value::as_object_mut)
                    .and_then(|event| event.get_mut("partial"))
                {
                    *partial = "<partial>".into();
                }
            }
            for (key, field) in map.iter_mut() {
                if key == "timestamp" && field.is_number() {
                    *field = 0.into();
                } else {
                    walk(field, context, ids, Some(key));
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| walk(item, context, ids, key)),
        Value::String(text) => {
            if key.is_some_and(is_id_key) && is_entry_id(text) {
                *text = ids.entry(text);
            } else {
                *text = normalize_text(text, context, ids);
            }
        }
        _ => {}
    }
}

fn is_entry_id(text: &str) -> bool {
    text.len() == 8 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A string with the paths, address, UUIDs, times and date replaced.
fn normalize_text(text: &str, context: &Context, ids: &mut Ids) -> String {
    let mut text = text.to_owned();
    for (from, to) in &context.replacements {
        if !from.is_empty() && text.contains(from.as_str()) {
            text = text.replace(from.as_str(), to);
        }
    }
    let text = replace_pi_package(&text);
    let text = replace_spans(&text, 36, is_uuid, |uuid| ids.uuid(uuid));
    let text = replace_spans(&text, 24, is_iso_time, |_| "<time>".to_owned());
    let text = replace_spans(&text, 20, is_iso_time_no_millis, |_| "<time>".to_owned());
    match text.find("Current date: ") {
        Some(at) if text.len() >= at + 24 && is_date(&text[at + 14..at + 24]) => {
            format!("{}<date>{}", &text[..at + 14], &text[at + 24..])
        }
        _ => text,
    }
}

/// The directory of pi's npm package (in its system prompt's documentation section), wherever it
/// was installed: every absolute path ending in `node_modules/@mariozechner/pi-coding-agent`.
fn replace_pi_package(text: &str) -> String {
    const PACKAGE: &str = "node_modules/@mariozechner/pi-coding-agent";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(PACKAGE) {
        let start = rest[..at]
            .rfind(|c: char| c.is_whitespace() || c == '"' || c == '\'')
            .map_or(0, |space| space + 1);
        out.push_str(&rest[..start]);
        out.push_str("<pi-package>");
        rest = &rest[at + PACKAGE.len()..];
    }
    out.push_str(rest);
    out
}

/// Replaces every `width`-byte span of `text` that `matches` by `replace(span)`.
fn replace_spans(
    text: &str,
    width: usize,
    matches: fn(&[u8]) -> bool,
    mut replace: impl FnMut(&str) -> String,
) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let mut copied = 0;
    while at + width <= bytes.len() {
        if text.is_char_boundary(at) && text.is_char_boundary(at + width) && matches(&bytes[at..at + width]) {
            out.push_str(&text[copied..at]);
            out.push_str(&replace(&text[at..at + width]));
            at += width;
            copied = at;
        } else {
            at += 1;
        }
    }
    out.push_str(&text[copied..]);
    out
}

fn shape(bytes: &[u8], pattern: &[u8]) -> bool {
    bytes.len() == pattern.len()
        && bytes.iter().zip(pattern).all(|(b, p)| match p {
            b'h' => b.is_ascii_hexdigit(),
            b'd' => b.is_ascii_digit(),
            b'?' => matches!(b, b':' | b'-'),
            b'.' => matches!(b, b'.' | b'-'),
            other => b == other,
        })
}

fn is_uuid(bytes: &[u8]) -> bool {
    shape(bytes, b"hhhhhhhh-hhhh-hhhh-hhhh-hhhhhhhhhhhh")
}

fn is_iso_time(bytes: &[u8]) -> bool {
    shape(bytes, b"dddd-dd-ddTdd?dd?dd.dddZ")
}

fn is_iso_time_no_millis(bytes: &[u8]) -> bool {
    shape(bytes, b"dddd-dd-ddTdd?dd?ddZ")
}

fn is_date(text: &str) -> bool {
    shape(text.as_bytes(), b"dddd-dd-dd")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn context() -> Context {
        Context::new(
            Path::new("/tmp/.tmpAB"),
            Path::new("/tmp/.tmpAB/home"),
            Path::new("/tmp/.tmpAB/project"),
            "http://127.0.0.1:4242",
        )
    }

    #[test]
    fn paths_ids_and_times_become_placeholders() {
        let mut session = json!([
            {"type": "session", "id": "0b5e4c1e-5b7a-4c36-9a55-0a1f1f2b3c4d", "timestamp": "2026-11-26T16:01:02.123Z",
             "cwd": "/tmp/.tmpAB/project"},
            {"type": "message", "id": "a1b2c3d4", "parentId": null, "timestamp": "2026-11-26T16:01:02.200Z",
             "message": {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1764172862123_u64}},
            {"type": "message", "id": "0000beef", "parentId": "a1b2c3d4"},
            {"sessionFile": "/tmp/.tmpAB/home/.pi/agent/sessions/--tmp-.tmpAB-project--/2026-11-26T16-01-02-123Z_0b5e4c1e-5b7a-4c36-9a55-0a1f1f2b3c4d.jsonl"},
            {"baseUrl": "http://127.0.0.1:4242/v1", "text": "Current date: 2026-11-26\nCurrent working directory: /tmp/.tmpAB/project"}
        ]);
        normalize(&mut session, &context());
        assert_eq!(
            session,
            json!([
                {"type": "session", "id": "<uuid-1>", "timestamp": "<time>", "cwd": "<cwd>"},
                {"type": "message", "id": "<entry-1>", "parentId": null, "timestamp": "<time>",
                 "message": {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 0}},
                {"type": "message", "id": "<entry-2>", "parentId": "<entry-1>"},
                {"sessionFile": "<home>/.pi/agent/sessions/<session-dir>/<time>_<uuid-1>.jsonl"},
                {"baseUrl": "<base-url>/v1", "text": "Current date: <date>\nCurrent working directory: <cwd>"}
            ])
        );
    }

    #[test]
    fn message_update_partials_are_masked_and_scripted_ids_kept() {
        let mut line = json!({"type": "message_update", "message": {"content": []},
            "assistantMessageEvent": {"type": "text_delta", "delta": "x", "partial": {"content": []}},
            "toolCallId": "call_1"});
        normalize(&mut line, &context());
        assert_eq!(
            line,
            json!({"type": "message_update", "message": "<partial>",
                "assistantMessageEvent": {"type": "text_delta", "delta": "x", "partial": "<partial>"},
                "toolCallId": "call_1"})
        );
    }

    #[test]
    fn pi_package_paths_are_placeholders() {
        let mut value = json!(
            "- Main documentation: /opt/x/node_modules/@mariozechner/pi-coding-agent/README.md\n- Docs: /y/node_modules/@mariozechner/pi-coding-agent/docs"
        );
        normalize(&mut value, &context());
        assert_eq!(
            value,
            json!("- Main documentation: <pi-package>/README.md\n- Docs: <pi-package>/docs")
        );
    }

    #[test]
    fn multibyte_text_is_left_whole() {
        let mut value = json!("ä 2026-11-26T16:01:02.123Z ö");
        normalize(&mut value, &context());
        assert_eq!(value, json!("ä <time> ö"));
    }
}
