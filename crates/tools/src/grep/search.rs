//! The content search behind `grep`: ripgrep's matcher and searcher over the shared walk.
//!
//! Each file is searched line by line (files with a NUL byte are skipped like rg does, unless the file was
//! named explicitly); a file contributes at most `limit` matches, each with the text of the lines within
//! `context` of it, and the [`FirstByPath`] keeps the files that sort first, so the result is the first
//! `limit` matches in path order, whichever thread found them. The walk starts in path order (so a frequent
//! pattern is done after a few files) and hands the rest of a big tree to the parallel walker.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, mpsc};

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::WalkState;
use ignore::overrides::{Override, OverrideBuilder};
use tokio_util::sync::CancellationToken;

use crate::collector::FirstByPath;
use crate::find::walk;
use crate::truncate::GREP_MAX_LINE_LENGTH;
use crate::truncate::truncate_line;

/// What the model asked to search for.
pub(crate) struct Query {
    /// The regex (or literal) pattern.
    pub(crate) pattern: String,
    /// Case-insensitive matching.
    pub(crate) ignore_case: bool,
    /// The pattern is a literal string.
    pub(crate) literal: bool,
    /// Lines of context before and after each match.
    pub(crate) context: usize,
    /// Maximum matches.
    pub(crate) limit: usize,
}

/// Builds the matcher like `rg [--ignore-case] [--fixed-strings] <pattern>`; the error text is the regex
/// engine's message, as rg prints it.
pub(crate) fn matcher(query: &Query) -> Result<RegexMatcher, String> {
    RegexMatcherBuilder::new()
        .multi_line(true)
        .line_terminator(Some(b'\n'))
        .case_insensitive(query.ignore_case)
        .fixed_strings(query.literal)
        .build(&query.pattern)
        .map_err(|error| unwrap_group(&error.to_string(), &query.pattern))
}

/// grep-regex parses `(?:<pattern>)`, so its error echoes that; show the model's pattern instead (and move
/// the caret line accordingly), as rg 13 did.
fn unwrap_group(message: &str, pattern: &str) -> String {
    let wrapped = format!("    (?:{pattern})");
    let mut lines: Vec<String> = message.split('\n').map(str::to_owned).collect();
    if pattern.contains('\n') || lines.get(1) != Some(&wrapped) {
        return message.to_owned();
    }
    lines[1] = format!("    {pattern}");
    if let Some(caret) = lines.get_mut(2)
        && let Some(marks) = caret.strip_prefix("    ")
        && marks.trim_start().starts_with('^')
    {
        let column = marks.len() - marks.trim_start().len();
        *caret = format!("    {}{}", " ".repeat(column.saturating_sub(3)), marks.trim_start());
    }
    lines.join("\n")
}

/// Builds rg's `--glob` override: a gitignore-style glob relative to `cwd` (a glob without `/` matches
/// the file name at any depth; `!glob` excludes).
pub(crate) fn glob_filter(cwd: &Path, glob: &str) -> Result<Override, String> {
    let mut builder = OverrideBuilder::new(cwd);
    builder.add(glob).map_err(|error| error.to_string())?;
    builder.build().map_err(|error| error.to_string())
}

/// One line of a file near a match: its text cut to 500 chars, and whether it was cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line {
    /// The line without its terminator and without CR characters, lossily decoded, cut to 500 chars.
    pub(crate) text: String,
    /// Whether the cut shortened it.
    pub(crate) truncated: bool,
}

/// The matches of one file.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct FileMatches {
    /// Matching line numbers (1-based, ascending), at most `limit`.
    pub(crate) matches: Vec<u64>,
    /// Every matching line and every line within `context` of a kept match.
    pub(crate) lines: BTreeMap<u64, Line>,
}

/// Collects one file's matches and the context lines they need.
struct FileSink {
    limit: usize,
    context: u64,
    found: FileMatches,
    binary: bool,
}

impl FileSink {
    fn new(limit: usize, context: usize) -> Self {
        FileSink {
            limit,
            context: context as u64,
            found: FileMatches::default(),
            binary: false,
        }
    }

    fn full(&self) -> bool {
        self.found.matches.len() >= self.limit
    }

    /// Whether line `number` is still needed as after-context of the last kept match.
    fn in_last_window(&self, number: u64) -> bool {
        self.found
            .matches
            .last()
            .is_some_and(|&last| number <= last.saturating_add(self.context))
    }

    fn store(&mut self, number: u64, bytes: &[u8]) {
        let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let decoded = String::from_utf8_lossy(bytes);
        let clean: String = decoded.chars().filter(|&c| c != '\r').collect();
        let (text, truncated) = truncate_line(&clean, GREP_MAX_LINE_LENGTH);
        self.found.lines.insert(number, Line { text, truncated });
    }
}

impl Sink for FileSink {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, found: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let Some(number) = found.line_number() else {
            return Ok(false);
        };
        if !self.full() {
            self.found.matches.push(number);
        } else if !self.in_last_window(number) {
            return Ok(false);
        }
        self.store(number, found.bytes());
        Ok(!self.full() || self.context > 0)
    }

    fn context(&mut self, _searcher: &Searcher, line: &SinkContext<'_>) -> Result<bool, io::Error> {
        let Some(number) = line.line_number() else {
            return Ok(true);
        };
        if self.full() && !self.in_last_window(number) {
            return Ok(false);
        }
        self.store(number, line.bytes());
        Ok(true)
    }

    fn binary_data(&mut self, _searcher: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// A line-numbering searcher reporting `context` lines around matches; with `skip_binary` it gives up on a
/// file at its first NUL byte (rg's rule for files found by walking; a file named explicitly is searched
/// as text).
fn searcher(context: usize, skip_binary: bool) -> Searcher {
    let binary = if skip_binary {
        BinaryDetection::quit(b'\x00')
    } else {
        BinaryDetection::none()
    };
    SearcherBuilder::new()
        .line_number(true)
        .binary_detection(binary)
        .before_context(context)
        .after_context(context)
        .build()
}

/// Searches one file; `None` when it has no match, is binary or cannot be read.
fn search_file(searcher: &mut Searcher, matcher: &RegexMatcher, path: &Path, query: &Query) -> Option<FileMatches> {
    let mut sink = FileSink::new(query.limit, query.context);
    searcher.search_path(matcher, path, &mut sink).ok()?;
    if sink.binary || sink.found.matches.is_empty() {
        return None;
    }
    Some(sink.found)
}

/// The first `limit` matches under `root` (a directory, walked) or in `root` (a file, searched whatever its
/// ignore status and even if binary), grouped by file in path order, and how many matches were seen (at
/// least `limit` when more exist).
pub(crate) fn search(
    root: &Path,
    is_dir: bool,
    matcher: &RegexMatcher,
    filter: Option<Override>,
    query: &Query,
    cancel: &CancellationToken,
) -> (Vec<(PathBuf, FileMatches)>, usize) {
    if !is_dir {
        let found = search_file(&mut searcher(query.context, false), matcher, root, query);
        return match found {
            Some(found) => {
                let count = found.matches.len();
                (vec![(root.to_path_buf(), found)], count)
            }
            None => (Vec::new(), 0),
        };
    }
    search_tree(root, matcher, filter, query, cancel, SORTED_FILES)
}

/// Files the sorted walk hands to the searchers before the rest of the tree goes to the parallel walk.
const SORTED_FILES: usize = 2048;

/// Paths handed to a searcher thread at a time.
const BATCH: usize = 16;

/// Searches the tree under `root`: first a single-threaded walk in path order feeding searcher threads,
/// which ends as soon as `limit` matches are known to come first (the common case of a frequent pattern);
/// after `sorted_files` files the parallel walk takes over for every path after the last one visited,
/// skipping whole directories that sort after the kept results.
fn search_tree(
    root: &Path,
    matcher: &RegexMatcher,
    filter: Option<Override>,
    query: &Query,
    cancel: &CancellationToken,
    sorted_files: usize,
) -> (Vec<(PathBuf, FileMatches)>, usize) {
    let collector = FirstByPath::new(query.limit);
    let mut sorted = walk::walker(root, ".rgignore");
    sorted.sort_by_file_name(|a, b| a.cmp(b));
    if let Some(filter) = &filter {
        sorted.overrides(filter.clone());
    }
    let (sender, receiver) = mpsc::sync_channel::<Vec<PathBuf>>(64);
    let receiver = Mutex::new(receiver);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(12);
    let (last, handed_over) = std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut searcher = searcher(query.context, true);
                loop {
                    let batch = pi_agent_core::lock(&receiver).recv();
                    let Ok(batch) = batch else { break };
                    for path in batch {
                        if cancel.is_cancelled() || collector.is_beyond(&path) {
                            continue;
                        }
                        if let Some(found) = search_file(&mut searcher, matcher, &path, query) {
                            collector.add(path, found.matches.len(), found);
                        }
                    }
                }
            });
        }
        let mut last: Option<PathBuf> = None;
        let mut handed_over = false;
        let mut sent = 0;
        let mut batch = Vec::with_capacity(BATCH);
        for entry in sorted.build() {
            if cancel.is_cancelled() {
                break;
            }
            if sent == sorted_files {
                handed_over = true;
                break;
            }
            let Ok(entry) = entry else { continue };
            // Paths come in sorted order, so the first one beyond the kept results ends the search.
            if collector.is_beyond(entry.path()) {
                break;
            }
            if entry.file_type().is_some_and(|kind| kind.is_file()) {
                sent += 1;
                batch.push(entry.path().to_path_buf());
                if batch.len() == BATCH
                    && sender
                        .send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)))
                        .is_err()
                {
                    break;
                }
            }
            last = Some(entry.into_path());
        }
        if !batch.is_empty() {
            let _ = sender.send(batch);
        }
        drop(sender);
        (last, handed_over)
    });
    if !handed_over || cancel.is_cancelled() {
        return collector.finish();
    }
    let mut parallel = walk::walker(root, ".rgignore");
    if let Some(filter) = filter {
        parallel.overrides(filter);
    }
    walk::run(parallel.build_parallel(), cancel, || {
        let collector = &collector;
        let last = last.as_deref();
        let mut searcher = searcher(query.context, true);
        move |entry: &ignore::DirEntry| {
            if entry.depth() == 0 {
                return WalkState::Continue;
            }
            let path = entry.path();
            let is_dir = walk::is_dir(entry);
            if let Some(state) = walk::already_visited(path, is_dir, last) {
                return state;
            }
            if collector.is_beyond(path) {
                return if is_dir { WalkState::Skip } else { WalkState::Continue };
            }
            if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                return WalkState::Continue;
            }
            if let Some(found) = search_file(&mut searcher, matcher, path, query) {
                collector.add(path.to_path_buf(), found.matches.len(), found);
            }
            WalkState::Continue
        }
    });
    collector.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(pattern: &str, context: usize, limit: usize) -> Query {
        Query {
            pattern: pattern.to_owned(),
            ignore_case: false,
            literal: false,
            context,
            limit,
        }
    }

    fn run(text: &str, query: &Query) -> Option<FileMatches> {
        let matcher = matcher(query).ok()?;
        let mut sink = FileSink::new(query.limit, query.context);
        searcher(query.context, true)
            .search_slice(&matcher, text.as_bytes(), &mut sink)
            .ok()?;
        (!sink.binary).then_some(sink.found)
    }

    fn numbers(found: &FileMatches) -> (Vec<u64>, Vec<u64>) {
        (found.matches.clone(), found.lines.keys().copied().collect())
    }

    #[test]
    fn keeps_context_of_the_last_kept_match() {
        let text = "a\nx\nb\nx\nc\nx\nd\ne\n";
        let found = run(text, &query("x", 1, 2)).unwrap();
        assert_eq!(numbers(&found), (vec![2, 4], vec![1, 2, 3, 4, 5]));
        let found = run(text, &query("x", 0, 2)).unwrap();
        assert_eq!(numbers(&found), (vec![2, 4], vec![2, 4]));
        let found = run(text, &query("x", 3, 1)).unwrap();
        assert_eq!(numbers(&found), (vec![2], vec![1, 2, 3, 4, 5]));
    }

    #[test]
    fn lines_lose_cr_and_are_cut() {
        let long = "y".repeat(600);
        let text = format!("a\r\nx{long}\r\n");
        let found = run(&text, &query("x", 1, 10)).unwrap();
        assert_eq!(
            found.lines[&1],
            Line {
                text: "a".into(),
                truncated: false
            }
        );
        assert!(found.lines[&2].truncated);
        assert_eq!(found.lines[&2].text.chars().count(), 500 + "... [truncated]".len());
    }

    #[test]
    fn binary_data_is_flagged() {
        assert_eq!(run("x\n\0\n", &query("x", 0, 10)), None);
    }

    #[test]
    fn literal_and_case_options() {
        let mut q = query("a.c", 0, 10);
        q.literal = true;
        assert_eq!(run("abc\na.c\n", &q).unwrap().matches, vec![2]);
        let mut q = query("ABC", 0, 10);
        q.ignore_case = true;
        assert_eq!(run("abc\n", &q).unwrap().matches, vec![1]);
        assert_eq!(run("x\nab\n", &query("^ab$", 0, 10)).unwrap().matches, vec![2]);
    }

    #[test]
    fn handing_over_to_the_parallel_walk_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in 0..5 {
            for f in 0..6 {
                let path = root.join(format!("d{d}/sub{}/f{f}.txt", f % 2));
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                let text: String = (0..(d + f) % 4).map(|i| format!("x\nhit {d} {f} {i}\n")).collect();
                std::fs::write(path, text).unwrap();
            }
        }
        let cancel = CancellationToken::new();
        for limit in [1, 3, 10, 1000] {
            let q = query("hit", 1, limit);
            let matcher = matcher(&q).unwrap();
            let expected = search_tree(root, &matcher, None, &q, &cancel, usize::MAX);
            assert!(!expected.0.is_empty());
            for sorted_files in [0, 1, 2, 5, 11, 29] {
                let got = search_tree(root, &matcher, None, &q, &cancel, sorted_files);
                assert_eq!(got, expected, "limit {limit} after {sorted_files} sorted files");
            }
        }
    }

    #[test]
    fn regex_errors_read_like_rg() {
        let error = matcher(&query("(", 0, 1)).err().unwrap_or_default();
        assert_eq!(error, "regex parse error:\n    (\n    ^\nerror: unclosed group");
        let error = matcher(&query("ab[", 0, 1)).err().unwrap_or_default();
        assert_eq!(
            error,
            "regex parse error:\n    ab[\n      ^\nerror: unclosed character class"
        );
        let error = matcher(&query("a{2,1}", 0, 1)).err().unwrap_or_default();
        assert_eq!(
            error,
            "regex parse error:\n    a{2,1}\n     ^^^^^\n\
             error: invalid repetition count range, the start must be <= the end"
        );
    }
}
