//! [`BuildError`]: why a session could not be built.

use crate::session::SessionError;

/// Why [`SessionBuilder::build`](crate::SessionBuilder::build) failed.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The session refused the configuration (an unknown active tool, a name conflict).
    #[error(transparent)]
    Session(#[from] SessionError),
    /// A blocking step (reading context files, discovering custom tools) panicked or was cancelled.
    #[error("session set-up was interrupted: {0}")]
    Interrupted(#[from] tokio::task::JoinError),
    /// A settings file named in the resource options could not be read (`skills` / `prompts`).
    #[error(transparent)]
    Settings(#[from] crate::config::SettingsError),
    /// The `sandbox` setting is on but the platform or the kernel cannot enforce it (beyond pi):
    /// no session starts rather than one whose commands all fail.
    #[error(transparent)]
    Sandbox(#[from] pi_tools::SandboxError),
}
