//! Why `run_command` could not run a command.

use std::path::PathBuf;

/// Why [`run_command`](crate::run_command) could not run a command; the texts are pi's.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The working directory is gone.
    #[error("Working directory does not exist: {}\nCannot execute bash commands.", cwd.display())]
    MissingCwd {
        /// The working directory.
        cwd: PathBuf,
    },
    /// The shell could not be started.
    #[error("Failed to run {}: {source}", shell.display())]
    Spawn {
        /// The shell.
        shell: PathBuf,
        /// Why it did not start.
        source: std::io::Error,
    },
    /// The sandbox is on but cannot be entered here (beyond pi); nothing was run.
    #[error(transparent)]
    Sandbox(#[from] crate::SandboxError),
}
