//! Reading session files (torn and garbage lines, migration of versions 1 and 2) and rendering
//! them.
//!
//! The file is read once into memory and its lines are parsed in parallel when it is large. A line
//! that is not a JSON object with a string `type` (a torn last line after a crash, garbage in the
//! middle) is skipped with a [`LoadWarning`] naming its line; every other line is kept. An older
//! file is migrated in memory and written back as version 3 in one atomic replace; the lines it
//! could not read are copied into the new file unchanged.

use std::io::{BufRead, BufReader};
use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

use super::entry::{CURRENT_VERSION, EntryError, SessionEntry, SessionHeader};
use super::error::{LoadWarning, MAX_WARNING_CHARS, StoreError, brief};
use super::ids;

/// Files smaller than this are parsed on the calling thread.
const PARALLEL_THRESHOLD: usize = 512 * 1024;

/// A loaded session file.
#[derive(Debug)]
pub(crate) struct LoadedFile {
    /// The header (already at the current version when `migrated_from` is set).
    pub(crate) header: SessionHeader,
    /// The entries in file order.
    pub(crate) entries: Vec<SessionEntry>,
    /// The 1-based line of each entry.
    pub(crate) entry_lines: Vec<usize>,
    /// Lines skipped or kept raw, and other notes about the file.
    pub(crate) warnings: Vec<LoadWarning>,
    /// False when the last line has no newline (a torn write): the next append must start with one.
    pub(crate) ends_with_newline: bool,
    /// The version the file had when it was migrated on load.
    pub(crate) migrated_from: Option<u32>,
}

/// What became of one line.
enum Outcome {
    /// A well-formed entry.
    Entry(SessionEntry),
    /// An entry kept as raw JSON, with the reason.
    Raw(SessionEntry, String),
    /// A line that is not an entry, with the reason.
    Skipped(String),
}

/// One line of an old file before migration.
enum OldLine<'a> {
    Object(Map<String, Value>),
    Garbage(&'a [u8]),
}

/// Loads a session file; see the module docs for what happens to bad lines.
pub(crate) fn load(path: &Path) -> Result<LoadedFile, StoreError> {
    let bytes = std::fs::read(path).map_err(|source| StoreError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    load_bytes(path, &bytes)
}

/// [`load`] on bytes already read (`path` names the file in messages and is rewritten on migration).
pub(crate) fn load_bytes(path: &Path, bytes: &[u8]) -> Result<LoadedFile, StoreError> {
    let invalid = |reason: String| StoreError::InvalidHeader {
        path: path.to_path_buf(),
        reason,
    };
    // A byte-order mark (some editors add one) is not part of the header.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut lines = Lines::new(bytes, 1);
    let Some((header_line, header_bytes)) = lines.next() else {
        return Err(invalid("the file is empty".into()));
    };
    let header = match serde_json::from_slice::<Value>(header_bytes) {
        Ok(Value::Object(obj)) => SessionHeader::from_object(obj).map_err(invalid)?,
        Ok(_) => return Err(invalid(format!("line {header_line} is not a JSON object"))),
        Err(e) => {
            return Err(invalid(format!(
                "line {header_line} is not valid JSON ({})",
                json_error(&e)
            )));
        }
    };
    let ends_with_newline = bytes.last().is_none_or(|b| *b == b'\n');
    let mut warnings = Vec::new();
    let loaded = if header.version >= CURRENT_VERSION {
        if header.version > CURRENT_VERSION {
            warnings.push(LoadWarning {
                path: path.to_path_buf(),
                line: header_line,
                message: format!(
                    "written by a newer format (version {}); entries of unknown types are kept as they are",
                    header.version
                ),
            });
        }
        let outcomes = parse_lines(&bytes[lines.pos.min(bytes.len())..], lines.line);
        collect(path, header, outcomes, warnings, ends_with_newline)
    } else {
        let rest: Vec<(usize, &[u8])> = lines.collect();
        migrate_and_rewrite(path, header, header_line, &rest, ends_with_newline, warnings)
    };
    Ok(loaded)
}

/// The non-blank lines of a buffer with their 1-based numbers.
struct Lines<'a> {
    bytes: &'a [u8],
    /// Where the next line starts.
    pos: usize,
    /// The number of the next line.
    line: usize,
}

impl<'a> Lines<'a> {
    fn new(bytes: &'a [u8], first_line: usize) -> Self {
        Lines {
            bytes,
            pos: 0,
            line: first_line,
        }
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = (usize, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        while self.pos < self.bytes.len() {
            let rest = &self.bytes[self.pos..];
            let end = find_newline(rest).unwrap_or(rest.len());
            let number = self.line;
            self.line += 1;
            self.pos += end + 1;
            let line = &rest[..end];
            if !line.iter().all(u8::is_ascii_whitespace) {
                return Some((number, line));
            }
        }
        None
    }
}

/// The position of the first `\n`, eight bytes at a time.
fn find_newline(haystack: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    const NEWLINES: u64 = ONES * b'\n' as u64;
    let mut words = haystack.chunks_exact(8);
    let mut offset = 0;
    for word in &mut words {
        let bytes = <[u8; 8]>::try_from(word).unwrap_or_default();
        // Bytes equal to '\n' become zero; the lowest zero byte sets its high bit here.
        let x = u64::from_le_bytes(bytes) ^ NEWLINES;
        let zero = x.wrapping_sub(ONES) & !x & HIGHS;
        if zero != 0 {
            return Some(offset + (zero.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    words.remainder().iter().position(|b| *b == b'\n').map(|i| offset + i)
}

/// A serde_json error without its "line 1" (every line is parsed alone).
fn json_error(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(at) => format!("{} at column {}", &text[..at], error.column()),
        None => text,
    }
}

/// Parses one line of a current-version file.
fn parse_line(bytes: &[u8]) -> Outcome {
    if let Some(entry) = super::fast::parse_message_line(bytes) {
        return Outcome::Entry(entry);
    }
    let obj = match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(obj)) => obj,
        Ok(_) => return Outcome::Skipped("skipped a line that is not a JSON object".into()),
        Err(e) => return Outcome::Skipped(format!("skipped a line that is not valid JSON ({})", json_error(&e))),
    };
    // A known type with unreadable fields is parsed again to keep it whole (rare).
    convert_object(obj, || match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(obj)) => Some(obj),
        _ => None,
    })
}

/// Turns an entry object into an entry; `raw` gives the object again if it must be kept raw.
fn convert_object(obj: Map<String, Value>, raw: impl FnOnce() -> Option<Map<String, Value>>) -> Outcome {
    let entry_type = match obj.get("type") {
        Some(Value::String(t)) => t.clone(),
        _ => return Outcome::Skipped("skipped an object without a string \"type\"".into()),
    };
    if entry_type == "session" {
        return Outcome::Skipped("skipped a second session header".into());
    }
    match SessionEntry::from_object(obj) {
        Ok(entry) => Outcome::Entry(entry),
        Err(EntryError::NoType) => Outcome::Skipped("skipped an object without a string \"type\"".into()),
        Err(EntryError::NoId) => Outcome::Skipped(format!("skipped a {entry_type:?} entry without a string \"id\"")),
        Err(EntryError::Invalid(reason)) => match raw().and_then(SessionEntry::other) {
            Some(entry) => Outcome::Raw(entry, format!("kept a {entry_type:?} entry as raw JSON: {reason}")),
            None => Outcome::Skipped(format!("skipped a {entry_type:?} entry: {reason}")),
        },
    }
}

/// Parses the lines of `bytes` (numbered from `first_line`), on several threads when there are
/// many: each thread splits and parses its own stretch of whole lines.
fn parse_lines(bytes: &[u8], first_line: usize) -> Vec<(usize, Outcome)> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
    if bytes.len() < PARALLEL_THRESHOLD || threads < 2 {
        return Lines::new(bytes, first_line)
            .map(|(n, line)| (n, parse_line(line)))
            .collect();
    }
    // Cut the buffer after a newline near each 1/threads of it.
    let mut cuts = vec![0];
    for k in 1..threads {
        let at = (bytes.len() * k / threads).max(cuts[cuts.len() - 1]);
        match find_newline(&bytes[at..]) {
            Some(newline) => cuts.push(at + newline + 1),
            None => break,
        }
    }
    cuts.push(bytes.len());
    cuts.dedup();
    std::thread::scope(|scope| {
        let workers: Vec<_> = cuts
            .windows(2)
            .map(|range| {
                let part = &bytes[range[0]..range[1]];
                scope.spawn(move || {
                    let mut lines = Lines::new(part, 0);
                    let parsed: Vec<(usize, Outcome)> = lines.by_ref().map(|(n, line)| (n, parse_line(line))).collect();
                    (parsed, lines.line)
                })
            })
            .collect();
        let mut outcomes = Vec::new();
        let mut base = first_line;
        for worker in workers {
            let (parsed, count) = worker.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            outcomes.extend(parsed.into_iter().map(|(n, outcome)| (base + n, outcome)));
            // Every stretch but the last ends with a newline, so it holds exactly `count` lines.
            base += count;
        }
        outcomes
    })
}

/// Gathers entries, their line numbers and the warnings.
fn collect(
    path: &Path,
    header: SessionHeader,
    outcomes: Vec<(usize, Outcome)>,
    mut warnings: Vec<LoadWarning>,
    ends_with_newline: bool,
) -> LoadedFile {
    let mut entries = Vec::with_capacity(outcomes.len());
    let mut entry_lines = Vec::with_capacity(outcomes.len());
    for (line, outcome) in outcomes {
        let warning = match outcome {
            Outcome::Entry(entry) => {
                entries.push(entry);
                entry_lines.push(line);
                None
            }
            Outcome::Raw(entry, message) => {
                entries.push(entry);
                entry_lines.push(line);
                Some(message)
            }
            Outcome::Skipped(message) => Some(message),
        };
        if let Some(message) = warning {
            warnings.push(LoadWarning {
                path: path.to_path_buf(),
                line,
                message: brief(&message, MAX_WARNING_CHARS).into_owned(),
            });
        }
    }
    LoadedFile {
        header,
        entries,
        entry_lines,
        warnings,
        ends_with_newline,
        migrated_from: None,
    }
}

/// Migrates a version 1 or 2 file to version 3 in memory and rewrites it atomically.
fn migrate_and_rewrite(
    path: &Path,
    mut header: SessionHeader,
    header_line: usize,
    lines: &[(usize, &[u8])],
    ends_with_newline: bool,
    mut warnings: Vec<LoadWarning>,
) -> LoadedFile {
    let from = header.version;
    let mut old: Vec<(usize, OldLine<'_>)> = lines
        .iter()
        .map(|(n, bytes)| match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Object(obj)) if obj.get("type").is_some_and(|t| t != "session") => (*n, OldLine::Object(obj)),
            _ => (*n, OldLine::Garbage(bytes)),
        })
        .collect();
    if from < 2 {
        migrate_v1(&mut old);
    }
    migrate_v2(&mut old);
    header.version = CURRENT_VERSION;

    let mut rendered = Vec::with_capacity(lines.iter().map(|(_, b)| b.len() + 1).sum::<usize>() + 256);
    let mut render_ok = push_json_line(&mut rendered, &header).is_ok();
    for (_, line) in &old {
        match line {
            OldLine::Object(obj) => render_ok &= push_json_line(&mut rendered, obj).is_ok(),
            OldLine::Garbage(bytes) => {
                rendered.extend_from_slice(bytes);
                rendered.push(b'\n');
            }
        }
    }
    let write = if render_ok {
        crate::file::replace_file(path, &rendered)
    } else {
        Err(std::io::Error::other("an entry could not be rendered as JSON"))
    };
    let mut rewritten = true;
    if let Err(error) = write {
        rewritten = false;
        warnings.push(LoadWarning {
            path: path.to_path_buf(),
            line: header_line,
            message: format!("migrated from version {from} in memory, but could not rewrite the file: {error}"),
        });
    }
    let outcomes = old
        .into_iter()
        .map(|(n, line)| {
            let outcome = match line {
                OldLine::Object(obj) => {
                    let backup = obj.clone();
                    convert_object(obj, move || Some(backup))
                }
                OldLine::Garbage(bytes) => parse_line(bytes),
            };
            (n, outcome)
        })
        .collect();
    let mut loaded = collect(path, header, outcomes, warnings, ends_with_newline || rewritten);
    loaded.migrated_from = Some(from);
    loaded
}

/// Version 1 → 2: entries without an id get one, and a parent: the entry before them. A compaction's
/// `firstKeptEntryIndex` (an index into the file's parsed lines, header = 0) becomes `firstKeptEntryId`.
fn migrate_v1(lines: &mut [(usize, OldLine<'_>)]) {
    let mut used: std::collections::HashSet<String> = lines
        .iter()
        .filter_map(|(_, line)| match line {
            OldLine::Object(obj) => obj.get("id").and_then(Value::as_str).map(str::to_owned),
            OldLine::Garbage(_) => None,
        })
        .collect();
    let mut previous: Option<String> = None;
    // The entry ids by position in the file (header = index 0), for `firstKeptEntryIndex`.
    let mut by_position: Vec<Option<String>> = vec![None];
    for (_, line) in lines.iter_mut() {
        // Lines pi could not parse have no position, as in pi.
        let OldLine::Object(obj) = line else { continue };
        let id = match obj.get("id").and_then(Value::as_str) {
            Some(id) => id.to_owned(),
            None => {
                let id = ids::new_entry_id(|candidate| used.contains(candidate));
                used.insert(id.clone());
                obj.insert("id".into(), Value::String(id.clone()));
                id
            }
        };
        if !obj.contains_key("parentId") {
            obj.insert("parentId".into(), previous.clone().map_or(Value::Null, Value::String));
        }
        by_position.push(Some(id.clone()));
        previous = Some(id);
    }
    for (_, line) in lines.iter_mut() {
        let OldLine::Object(obj) = line else { continue };
        if obj.get("type").and_then(Value::as_str) != Some("compaction") {
            continue;
        }
        let Some(index) = obj.get("firstKeptEntryIndex").and_then(Value::as_u64) else {
            continue;
        };
        obj.shift_remove("firstKeptEntryIndex");
        let target = usize::try_from(index)
            .ok()
            .and_then(|i| by_position.get(i))
            .cloned()
            .flatten();
        if let Some(target) = target {
            obj.insert("firstKeptEntryId".into(), Value::String(target));
        }
    }
}

/// Version 2 → 3: the `hookMessage` message role is now `custom`.
fn migrate_v2(lines: &mut [(usize, OldLine<'_>)]) {
    for (_, line) in lines.iter_mut() {
        let OldLine::Object(obj) = line else { continue };
        if obj.get("type").and_then(Value::as_str) != Some("message") {
            continue;
        }
        if let Some(Value::Object(message)) = obj.get_mut("message")
            && message.get("role").and_then(Value::as_str) == Some("hookMessage")
        {
            message.insert("role".into(), Value::String("custom".into()));
        }
    }
}

/// Appends `value` as one JSON line.
pub(crate) fn push_json_line<T: Serialize + ?Sized>(buf: &mut Vec<u8>, value: &T) -> std::io::Result<()> {
    serde_json::to_writer(&mut *buf, value).map_err(std::io::Error::other)?;
    buf.push(b'\n');
    Ok(())
}

/// A whole file: the header line and one line per entry.
pub(crate) fn render(header: &SessionHeader, entries: &[SessionEntry]) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    push_json_line(&mut buf, header)?;
    for entry in entries {
        push_json_line(&mut buf, entry)?;
    }
    Ok(buf)
}

/// Reads only the header of a session file (the first non-blank line).
pub(crate) fn read_header(path: &Path) -> Result<SessionHeader, StoreError> {
    let read_error = |source| StoreError::Read {
        path: path.to_path_buf(),
        source,
    };
    let invalid = |reason: String| StoreError::InvalidHeader {
        path: path.to_path_buf(),
        reason,
    };
    let file = std::fs::File::open(path).map_err(read_error)?;
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).map_err(read_error)? == 0 {
            return Err(invalid("the file is empty".into()));
        }
        if !line.iter().all(u8::is_ascii_whitespace) {
            break;
        }
    }
    match serde_json::from_slice::<Value>(&line) {
        Ok(Value::Object(obj)) => SessionHeader::from_object(obj).map_err(invalid),
        Ok(_) => Err(invalid("the first line is not a JSON object".into())),
        Err(e) => Err(invalid(format!(
            "the first line is not valid JSON ({})",
            json_error(&e)
        ))),
    }
}

/// Replaces the session file at `path` with `bytes` in one step: a temporary file beside it,
/// synced, renamed over it (readers see the old file or the new one, never a mix).
pub(crate) fn replace_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".pi-session-");
    // Mode 0666 less the umask, as a plain create gives (tempfile's default is 0600).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut temp = builder.tempfile_in(dir)?;
    // A file that is being replaced keeps its permissions.
    if let Ok(metadata) = std::fs::metadata(path) {
        temp.as_file().set_permissions(metadata.permissions())?;
    }
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod fuzz;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::EntryKind;

    const HEADER: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;

    fn line(id: &str, parent: Option<&str>, text: &str) -> String {
        let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
        )
    }

    #[test]
    fn garbage_and_torn_lines_are_skipped_with_their_line_numbers() {
        let text = format!(
            "{HEADER}\n{}\nnot json at all\n\n[1,2]\n{{\"no\":\"type\"}}\n{}\n{}",
            line("a", None, "one"),
            line("b", Some("a"), "two"),
            &line("c", Some("b"), "three")[..40]
        );
        let loaded = load_bytes(Path::new("/s.jsonl"), text.as_bytes()).unwrap();
        let ids: Vec<_> = loaded.entries.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        let lines: Vec<_> = loaded.warnings.iter().map(|w| w.line).collect();
        assert_eq!(lines, [3, 5, 6, 8]);
        assert!(!loaded.ends_with_newline);
        assert_eq!(
            loaded.warnings[0].to_string(),
            "/s.jsonl:3: skipped a line that is not valid JSON (expected ident at column 2)"
        );
        assert!(
            loaded.warnings[3]
                .message
                .starts_with("skipped a line that is not valid JSON (EOF")
        );
    }

    #[test]
    fn newlines_are_found_eight_bytes_at_a_time() {
        let text = b"0123456789abcdef\n0123\n\n  \nlast";
        for start in 0..text.len() {
            let expected = text[start..].iter().position(|b| *b == b'\n');
            assert_eq!(find_newline(&text[start..]), expected, "{start}");
        }
        let lines: Vec<_> = Lines::new(text, 1).collect();
        assert_eq!(
            lines,
            [(1, &b"0123456789abcdef"[..]), (2, &b"0123"[..]), (5, &b"last"[..])]
        );
        assert_eq!(find_newline(&[0x8a, 0x0b, 0x09, 0xff, 0x0a, 0, 0, 0, 0]), Some(4));
    }

    #[test]
    fn a_header_alone_loads_with_or_without_newline_or_byte_order_mark() {
        for text in [
            HEADER.to_owned(),
            format!("{HEADER}\n"),
            format!("\u{feff}{HEADER}\r\n\n"),
        ] {
            let loaded = load_bytes(Path::new("/h.jsonl"), text.as_bytes()).unwrap();
            assert_eq!(loaded.header.id, "s");
            assert!(loaded.entries.is_empty() && loaded.warnings.is_empty());
            assert_eq!(loaded.ends_with_newline, text.ends_with('\n'));
        }
    }

    #[test]
    fn header_problems_are_errors() {
        let path = Path::new("/x.jsonl");
        for (text, reason) in [
            ("", "the file is empty"),
            ("\n  \n", "the file is empty"),
            (
                "{\"type\":\"sess",
                "line 1 is not valid JSON (EOF while parsing a string at column 13)",
            ),
            ("[]", "line 1 is not a JSON object"),
            (
                &line("a", None, "x"),
                "line 1 is a \"message\" entry, not the session header",
            ),
        ] {
            let error = load_bytes(path, text.as_bytes()).unwrap_err();
            assert_eq!(
                error.to_string(),
                format!("session file /x.jsonl has no valid session header: {reason}")
            );
        }
    }

    #[test]
    fn large_files_parse_in_parallel_in_order() {
        let mut text = format!("{HEADER}\n");
        let mut parent: Option<String> = None;
        for n in 0..20_000 {
            let id = format!("{n:08x}");
            text.push_str(&line(&id, parent.as_deref(), &"x".repeat(40)));
            text.push('\n');
            if n == 777 {
                text.push_str("{garbage\n");
            }
            parent = Some(id);
        }
        assert!(text.len() > PARALLEL_THRESHOLD);
        let loaded = load_bytes(Path::new("/big.jsonl"), text.as_bytes()).unwrap();
        assert_eq!(loaded.entries.len(), 20_000);
        assert!(
            loaded
                .entries
                .iter()
                .enumerate()
                .all(|(n, e)| e.id == format!("{n:08x}"))
        );
        assert_eq!(loaded.warnings.len(), 1);
        assert_eq!(loaded.warnings[0].line, 780);
    }

    #[test]
    fn v1_migration_assigns_ids_parents_and_first_kept_ids() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.jsonl");
        let text = concat!(
            r#"{"type":"session","id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}"#,
            "\n",
            r#"{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"a","timestamp":1}}"#,
            "\n%%garbage%%\n",
            r#"{"type":"message","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"hookMessage","customType":"x","content":"h","display":true,"timestamp":2}}"#,
            "\n",
            r#"{"type":"compaction","timestamp":"2025-01-01T00:00:03.000Z","summary":"s","firstKeptEntryIndex":2,"tokensBefore":10}"#,
            "\n"
        );
        std::fs::write(&path, text).unwrap();
        let loaded = load(&path).unwrap();
        assert_eq!(loaded.migrated_from, Some(1));
        assert_eq!(loaded.header.version, 3);
        let [a, hook, compaction] = &loaded.entries[..] else {
            panic!("{:?}", loaded.entries)
        };
        assert!(a.id.len() == 8 && a.id.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(a.parent_id, None);
        assert_eq!(hook.parent_id.as_deref(), Some(a.id.as_str()));
        assert_eq!(hook.message().unwrap().role(), "custom");
        match &compaction.kind {
            EntryKind::Compaction(c) => assert_eq!(c.first_kept_entry_id, hook.id),
            other => panic!("{other:?}"),
        }
        // The file is now version 3, garbage line kept verbatim, and loads to the same entries.
        let rewritten = std::fs::read_to_string(&path).unwrap();
        assert!(rewritten.starts_with(r#"{"type":"session","version":3,"id":"s""#));
        assert_eq!(rewritten.lines().nth(2), Some("%%garbage%%"));
        let again = load(&path).unwrap();
        assert_eq!(again.migrated_from, None);
        assert_eq!(again.entries, loaded.entries);
    }

    #[test]
    fn read_header_reads_only_the_first_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.jsonl");
        std::fs::write(&path, format!("\n{HEADER}\n{{torn")).unwrap();
        assert_eq!(read_header(&path).unwrap().id, "s");
        std::fs::write(&path, "").unwrap();
        assert!(matches!(read_header(&path), Err(StoreError::InvalidHeader { .. })));
    }
}
