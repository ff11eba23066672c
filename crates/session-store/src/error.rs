//! Errors and load warnings of the session store.

use std::fmt;
use std::path::PathBuf;

/// Why a session operation failed. Every message is one line and names the file (or the session)
/// it is about.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file could not be read.
    #[error("cannot read session file {}: {source}", path.display())]
    Read {
        /// The session file.
        path: PathBuf,
        /// The I/O failure.
        #[source]
        source: std::io::Error,
    },
    /// Appending to (or creating) the file failed; the file holds what it held before.
    #[error("cannot write session file {}: {source}", path.display())]
    Write {
        /// The session file.
        path: PathBuf,
        /// The I/O failure.
        #[source]
        source: std::io::Error,
    },
    /// A directory of sessions could not be created or listed.
    #[error("cannot access session directory {}: {source}", path.display())]
    Directory {
        /// The directory.
        path: PathBuf,
        /// The I/O failure.
        #[source]
        source: std::io::Error,
    },
    /// The first line of the file is not a session header.
    #[error("session file {} has no valid session header: {reason}", path.display())]
    InvalidHeader {
        /// The session file.
        path: PathBuf,
        /// What is wrong with the first line.
        reason: String,
    },
    /// No entry of the session has this id.
    #[error("entry {id} not found in session {session}")]
    EntryNotFound {
        /// The id that was asked for.
        id: String,
        /// The session file, or `(in memory)`.
        session: String,
    },
    /// No session file matches a path or id prefix.
    #[error("no session matches {query:?} in {}", dir.display())]
    NoMatch {
        /// The path or id prefix that was asked for.
        query: String,
        /// Where the sessions were searched.
        dir: PathBuf,
    },
    /// An id prefix matches more than one session.
    #[error("{query:?} matches {} sessions: {}", paths.len(), join_paths(paths))]
    Ambiguous {
        /// The id prefix that was asked for.
        query: String,
        /// The matching session files.
        paths: Vec<PathBuf>,
    },
    /// Neither `PI_CODING_AGENT_DIR` nor `HOME` is set, so there is no default sessions directory.
    #[error("no sessions directory: neither PI_CODING_AGENT_DIR nor HOME is set")]
    NoHome,
}

fn join_paths(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A line of a session file that was skipped or kept only as raw JSON while loading. Everything
/// before and after it is loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadWarning {
    /// The session file.
    pub path: PathBuf,
    /// 1-based line number.
    pub line: usize,
    /// What was wrong and what was done about it.
    pub message: String,
}

impl fmt::Display for LoadWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.path.display(), self.line, self.message)
    }
}

/// Longest text of a [`LoadWarning`] about a line: enough for the reason, never the line's
/// content whole (a parser's message can quote a value of the line, which may be megabytes).
pub(crate) const MAX_WARNING_CHARS: usize = 500;

/// `text` cut to `max` characters, with `…` when something was cut.
pub(crate) fn brief(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]).into(),
        None => text.into(),
    }
}
