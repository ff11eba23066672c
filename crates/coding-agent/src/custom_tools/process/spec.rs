//! How to run a process that speaks the protocol ([`ProcessSpec`]) and its time limits. Every other
//! module of `process` may use this one; it uses none of them.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// How long a process may take to answer `initialize`.
pub const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(10);

/// A call's time limit when the manifest sets none (`timeout`, in milliseconds, 300000).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// How long pi waits for the answer to `shutdown`, then for the process to exit once its stdin
/// is closed, before killing it.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// How to run a process that speaks the protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessSpec {
    /// The program: a path, or a bare name looked up on `PATH`.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Environment variables added to pi's.
    pub env: BTreeMap<String, String>,
    /// The directory it runs in.
    pub dir: PathBuf,
    /// How long a call (`execute`, `pendingAction.*`, `session`) may go unanswered before the
    /// process is killed.
    pub timeout: Duration,
    /// How load errors name the process, e.g. its command line (`python3 tool.py`).
    pub label: String,
}
