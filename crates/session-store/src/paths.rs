//! Where session files live: `~/.pi/agent/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl`.
//!
//! ```
//! use std::path::Path;
//! use pi_session_store::{SessionRoot, cwd_dir_name, session_file_name};
//!
//! assert_eq!(cwd_dir_name(Path::new("/home/ana/src/app")), "--home-ana-src-app--");
//! let root = SessionRoot::PerCwd("/sessions".into());
//! assert_eq!(root.dir_for(Path::new("/w/x")), Path::new("/sessions/--w-x--"));
//! // `--session-dir`: every file directly in that directory, whatever its working directory.
//! let flat = SessionRoot::Flat("/tmp/s".into());
//! assert_eq!(flat.dir_for(Path::new("/w/x")), Path::new("/tmp/s"));
//! assert_eq!(
//!     session_file_name("2026-11-23T15:26:59.123Z", "0b4c…"),
//!     "2026-11-23T15-26-59-123Z_0b4c….jsonl"
//! );
//! ```

use std::path::{Path, PathBuf};

/// Where the sessions of every working directory go.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SessionRoot {
    /// pi's layout: one directory per working directory, `<root>/--<cwd>--/` (the default root is
    /// `<agent dir>/sessions`).
    PerCwd(PathBuf),
    /// pi's `--session-dir <dir>`: every session file directly in `dir`; listing it lists them all,
    /// whatever their working directory.
    Flat(PathBuf),
}

impl SessionRoot {
    /// The directory that holds the sessions of `cwd`.
    pub fn dir_for(&self, cwd: &Path) -> PathBuf {
        match self {
            SessionRoot::PerCwd(root) => root.join(cwd_dir_name(cwd)),
            SessionRoot::Flat(dir) => dir.clone(),
        }
    }

    /// The root directory itself.
    pub fn path(&self) -> &Path {
        match self {
            SessionRoot::PerCwd(path) | SessionRoot::Flat(path) => path,
        }
    }
}

impl From<&Path> for SessionRoot {
    /// A sessions root with one directory per working directory.
    fn from(root: &Path) -> Self {
        SessionRoot::PerCwd(root.to_path_buf())
    }
}

impl From<PathBuf> for SessionRoot {
    /// A sessions root with one directory per working directory.
    fn from(root: PathBuf) -> Self {
        SessionRoot::PerCwd(root)
    }
}

impl From<&PathBuf> for SessionRoot {
    /// A sessions root with one directory per working directory.
    fn from(root: &PathBuf) -> Self {
        SessionRoot::PerCwd(root.clone())
    }
}

impl From<&SessionRoot> for SessionRoot {
    fn from(root: &SessionRoot) -> Self {
        root.clone()
    }
}

/// The directory name pi gives the sessions of `cwd`: `--` + the path without its leading `/` (or
/// `\`), with `/`, `\` and `:` replaced by `-`, + `--`.
pub fn cwd_dir_name(cwd: &Path) -> String {
    let text = cwd.to_string_lossy();
    let trimmed = text.strip_prefix(['/', '\\']).unwrap_or(&text);
    let safe: String = trimmed
        .chars()
        .map(|c| if matches!(c, '/' | '\\' | ':') { '-' } else { c })
        .collect();
    format!("--{safe}--")
}

/// The file name of a session created at `timestamp` (ISO 8601) with id `session_id`:
/// `:` and `.` of the timestamp become `-`.
pub fn session_file_name(timestamp: &str, session_id: &str) -> String {
    let stamp: String = timestamp
        .chars()
        .map(|c| if matches!(c, ':' | '.') { '-' } else { c })
        .collect();
    format!("{stamp}_{session_id}.jsonl")
}

/// Whether `path` names a session file (`*.jsonl`).
pub(crate) fn is_session_file(path: &Path) -> bool {
    path.extension().is_some_and(|ext| ext == "jsonl")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dir_names_match_pi() {
        assert_eq!(cwd_dir_name(Path::new("/")), "----");
        assert_eq!(cwd_dir_name(Path::new("/a/b c/d")), "--a-b c-d--");
        assert_eq!(cwd_dir_name(Path::new("C:\\Users\\ana")), "--C--Users-ana--");
        assert_eq!(cwd_dir_name(Path::new("\\\\server\\share")), "---server-share--");
    }

    #[test]
    fn file_names_match_pi() {
        assert_eq!(
            session_file_name("2026-01-02T03:04:05.678Z", "u"),
            "2026-01-02T03-04-05-678Z_u.jsonl"
        );
    }
}
