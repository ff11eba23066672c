//! Listing and finding session files (`/resume`, `-r`, `-c`, `--session <path|id>`).
//!
//! Listing reads each file with a light parser (it never migrates or rewrites anything) and skips
//! files without a valid header, as pi does.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Deserialize;
use serde_json::Value;

use super::error::{LoadWarning, StoreError};
use super::file::read_header;
use super::paths::{SessionRoot, is_session_file};
use super::time::{ms_to_system_time, parse_iso_ms};

/// A summary of one session file.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    /// The session file.
    pub path: PathBuf,
    /// The session id (header `id`).
    pub id: String,
    /// The working directory of the session (empty in very old files).
    pub cwd: String,
    /// The latest non-empty `session_info` name, trimmed.
    pub name: Option<String>,
    /// The header's `parentSession`.
    pub parent_session: Option<String>,
    /// The header's timestamp (the file's modification time if it does not parse).
    pub created: SystemTime,
    /// The last activity: the newest user or assistant message, else the header's timestamp,
    /// else the file's modification time (pi's rule).
    pub modified: SystemTime,
    /// Number of `message` entries, on every branch.
    pub message_count: usize,
    /// Text of the first user message (text blocks joined with a space); pi shows
    /// `(no messages)` when there is none.
    pub first_message: Option<String>,
}

/// The fields of a line that a listing needs.
#[derive(Deserialize)]
struct LightLine {
    #[serde(rename = "type")]
    kind: Option<Value>,
    timestamp: Option<Value>,
    message: Option<LightMessage>,
    name: Option<Value>,
}

#[derive(Deserialize)]
struct LightMessage {
    role: Option<Value>,
    content: Option<Value>,
    timestamp: Option<Value>,
}

/// The text of a message's content: a string, or its text blocks joined with a space.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// Summarises one session file; `None` when it cannot be read or has no valid header.
pub(crate) fn session_info(path: &Path) -> Option<SessionInfo> {
    let bytes = std::fs::read(path).ok()?;
    let mtime = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
    let mut lines = bytes
        .split(|b| *b == b'\n')
        .filter(|line| !line.iter().all(u8::is_ascii_whitespace));
    let header = match serde_json::from_slice::<Value>(lines.next()?) {
        Ok(Value::Object(obj)) => super::entry::SessionHeader::from_object(obj).ok()?,
        _ => return None,
    };
    let mut info = SessionInfo {
        path: path.to_path_buf(),
        id: header.id,
        cwd: header.cwd,
        name: None,
        parent_session: header.parent_session,
        created: parse_iso_ms(&header.timestamp).map_or(mtime, ms_to_system_time),
        modified: mtime,
        message_count: 0,
        first_message: None,
    };
    let mut last_activity: Option<i64> = None;
    for line in lines {
        let Ok(line) = serde_json::from_slice::<LightLine>(line) else {
            continue;
        };
        match line.kind.as_ref().and_then(Value::as_str) {
            Some("session_info") => {
                if let Some(name) = line.name.as_ref().and_then(Value::as_str).filter(|n| !n.is_empty()) {
                    info.name = Some(name.trim().to_owned());
                }
            }
            Some("message") => {
                info.message_count += 1;
                let Some(message) = line.message else { continue };
                let role = message.role.as_ref().and_then(Value::as_str);
                if !matches!(role, Some("user" | "assistant")) {
                    continue;
                }
                let time = match message.timestamp.as_ref().and_then(Value::as_f64) {
                    Some(ms) => Some(ms as i64),
                    None => line.timestamp.as_ref().and_then(Value::as_str).and_then(parse_iso_ms),
                };
                if let Some(time) = time {
                    last_activity = Some(last_activity.map_or(time, |t| t.max(time)));
                }
                if info.first_message.is_none()
                    && role == Some("user")
                    && let Some(content) = &message.content
                {
                    let text = content_text(content);
                    if !text.is_empty() {
                        info.first_message = Some(text);
                    }
                }
            }
            _ => {}
        }
    }
    info.modified = match last_activity.filter(|t| *t > 0) {
        Some(ms) => ms_to_system_time(ms),
        None => parse_iso_ms(&header.timestamp).map_or(mtime, ms_to_system_time),
    };
    Some(info)
}

/// The session files (`*.jsonl`) directly in `dir`; a missing directory has none.
fn session_files(dir: &Path) -> Result<Vec<PathBuf>, StoreError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(StoreError::Directory {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| is_session_file(path) && path.is_file())
        .collect();
    files.sort();
    Ok(files)
}

/// Summaries of `files`, read on a few threads, newest first.
fn summarise(files: Vec<PathBuf>) -> Vec<SessionInfo> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8);
    let mut infos: Vec<SessionInfo> = if files.len() < 4 || threads == 1 {
        files.iter().filter_map(|path| session_info(path)).collect()
    } else {
        let chunk = files.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let workers: Vec<_> = files
                .chunks(chunk)
                .map(|part| scope.spawn(move || part.iter().filter_map(|p| session_info(p)).collect::<Vec<_>>()))
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
                .collect()
        })
    };
    infos.sort_by(|a, b| b.modified.cmp(&a.modified).then_with(|| a.path.cmp(&b.path)));
    infos
}

/// The sessions of `cwd`, newest first. With [`SessionRoot::Flat`] every session of that
/// directory is listed, as pi does with `--session-dir`.
pub(crate) fn list(cwd: &Path, root: &SessionRoot) -> Result<Vec<SessionInfo>, StoreError> {
    Ok(summarise(session_files(&root.dir_for(cwd))?))
}

/// Every session under `root`, newest first.
pub(crate) fn list_all(root: &SessionRoot) -> Result<Vec<SessionInfo>, StoreError> {
    Ok(summarise(list_all_files(root)?))
}

/// The session file of `cwd` modified last (by file time), among files with a valid header.
pub(crate) fn most_recent(cwd: &Path, root: &SessionRoot) -> Result<(Option<PathBuf>, Vec<LoadWarning>), StoreError> {
    let mut valid = Vec::new();
    let mut damaged = Vec::new();
    for path in session_files(&root.dir_for(cwd))? {
        let Some(modified) = std::fs::metadata(&path).ok().and_then(|m| m.modified().ok()) else {
            continue;
        };
        let why = match read_header(&path) {
            Ok(_) => {
                valid.push((modified, path));
                continue;
            }
            Err(StoreError::InvalidHeader { reason, .. }) => format!("no valid session header ({reason})"),
            Err(error) => format!("cannot be read ({error})"),
        };
        damaged.push((modified, path, why));
    }
    let newest = valid
        .into_iter()
        .max_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
    // Only the damaged files that would have been chosen are worth a word.
    let skipped = damaged
        .into_iter()
        .filter(|(modified, _, _)| newest.as_ref().is_none_or(|(chosen, _)| modified >= chosen))
        .map(|(_, path, why)| LoadWarning {
            path,
            line: 1,
            message: format!("{why}; skipped by --continue"),
        })
        .collect();
    Ok((newest.map(|(_, path)| path), skipped))
}

/// Whether `query` names a session file (it has a path separator or ends in `.jsonl`) rather than
/// an id prefix.
pub fn looks_like_path(query: &str) -> bool {
    query.contains('/') || query.contains('\\') || query.ends_with(".jsonl")
}

/// A session by path or id prefix; see [`super::SessionManager::find`].
pub(crate) fn find(root: &SessionRoot, cwd: &Path, query: &str) -> Result<PathBuf, StoreError> {
    if looks_like_path(query) {
        // The caller has expanded `~` (pi-cli does, with pi-tools' path rules); a relative path is
        // taken from `cwd`.
        let path = cwd.join(query);
        if path.is_file() {
            return Ok(path);
        }
        return Err(StoreError::NoMatch {
            query: query.to_owned(),
            dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        });
    }
    let by_prefix = |files: Vec<PathBuf>| -> Vec<PathBuf> {
        files
            .into_iter()
            .filter(|path| read_header(path).is_ok_and(|h| !query.is_empty() && h.id.starts_with(query)))
            .collect()
    };
    let mut matches = by_prefix(session_files(&root.dir_for(cwd))?);
    if matches.is_empty() {
        matches = by_prefix(list_all_files(root)?);
    }
    match matches.len() {
        0 => Err(StoreError::NoMatch {
            query: query.to_owned(),
            dir: root.path().to_path_buf(),
        }),
        1 => Ok(matches.remove(0)),
        _ => Err(StoreError::Ambiguous {
            query: query.to_owned(),
            paths: matches,
        }),
    }
}

/// Every session file under `root`, without reading them.
fn list_all_files(root: &SessionRoot) -> Result<Vec<PathBuf>, StoreError> {
    let dir = match root {
        SessionRoot::Flat(dir) => return session_files(dir),
        SessionRoot::PerCwd(dir) => dir,
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(StoreError::Directory {
                path: dir.clone(),
                source,
            });
        }
    };
    let mut files = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            files.extend(session_files(&path)?);
        }
    }
    Ok(files)
}
