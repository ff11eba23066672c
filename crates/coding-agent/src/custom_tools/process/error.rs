//! Why a process tool could not be loaded: [`ProcessError`]. Its texts are the load errors pi
//! reports with the tool's origin.

use std::path::PathBuf;
use std::time::Duration;

use super::manifest::ManifestError;
use super::protocol::{MAX_LINE, seconds};

/// Why a process tool could not be loaded: its manifest could not be read or is invalid, its
/// process could not be started, or it did not complete `initialize`. (A process that fails
/// later fails the calls in flight instead; see the module documentation.)
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProcessError {
    /// The `tool.json` could not be read.
    #[error("Cannot read {}: {source}", .manifest.display())]
    ReadManifest {
        /// The manifest's path.
        manifest: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The `tool.json` is not a valid manifest.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// The process could not be started.
    #[error("Cannot start {label}: {source}")]
    Spawn {
        /// The process's label (its command line).
        label: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The process answered `initialize` with a JSON-RPC error.
    #[error("{label} answered initialize with an error: {message}")]
    InitializeRefused {
        /// The process's label.
        label: String,
        /// The error's code.
        code: i64,
        /// The error's message.
        message: String,
    },
    /// The process did not answer `initialize` in time; it was killed.
    #[error("{label} did not answer initialize within {} s", secs(.after))]
    InitializeTimedOut {
        /// The process's label.
        label: String,
        /// The time limit.
        after: Duration,
    },
    /// The process exited before answering `initialize`.
    #[error("{label} exited before answering initialize ({status}){}", stderr_suffix(.stderr))]
    ExitedBeforeInitialize {
        /// The process's label.
        label: String,
        /// `exit code <n>` or `signal <n>`.
        status: String,
        /// Its last non-blank stderr line.
        stderr: Option<String>,
    },
    /// The process wrote a line that is not JSON; it was killed.
    #[error("{label} wrote invalid JSON: {start}")]
    InvalidJson {
        /// The process's label.
        label: String,
        /// The start of the line.
        start: String,
    },
    /// The process wrote a line longer than pi accepts; it was killed.
    #[error("Tool \"{label}\" wrote a line longer than {} MiB", MAX_LINE >> 20)]
    LineTooLong {
        /// The process's label.
        label: String,
    },
    /// pi stopped the process before it answered `initialize`.
    #[error("Tool \"{label}\" process was stopped")]
    Stopped {
        /// The process's label.
        label: String,
    },
    /// The `initialize` answer does not define valid tools.
    #[error("Invalid initialize answer from {label}: {why}")]
    InvalidAnswer {
        /// The process's label.
        label: String,
        /// What is wrong with it.
        why: String,
    },
}

fn secs(duration: &Duration) -> String {
    seconds(*duration)
}

fn stderr_suffix(stderr: &Option<String>) -> String {
    stderr.as_ref().map_or_else(String::new, |line| format!(": {line}"))
}
