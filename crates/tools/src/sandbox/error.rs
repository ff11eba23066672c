//! Why a sandboxed process was not started.

use std::path::PathBuf;

/// How to run without the sandbox, the end of every [`SandboxError`].
const TURN_OFF: &str = "Nothing was run. Start pi with --no-sandbox (or set \"sandbox\": {\"enabled\": false} in \
settings.json) to run commands without the sandbox.";

/// Why a sandboxed process was not started. Every variant means nothing ran.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The sandbox exists on Linux only.
    #[error("Sandbox unavailable: the sandbox needs Linux (Landlock), this system is {os}. {TURN_OFF}")]
    UnsupportedPlatform {
        /// The operating system.
        os: &'static str,
    },
    /// The kernel lacks Landlock, or does not enforce every right the sandbox asks for.
    #[error("Sandbox unavailable: this kernel does not enforce Landlock {needed} ({detail}). {TURN_OFF}")]
    Landlock {
        /// What the sandbox needs.
        needed: &'static str,
        /// What the kernel or the `landlock` crate said.
        detail: String,
    },
    /// The filter that turns the network off cannot be built or installed here.
    #[error(
        "Sandbox unavailable: the filter that turns the network off does not work on {arch} ({detail}). {TURN_OFF}"
    )]
    Seccomp {
        /// The processor architecture.
        arch: &'static str,
        /// Why.
        detail: String,
    },
    /// The thread that enters the sandbox could not be started, or panicked.
    #[error("Sandbox unavailable: the thread that enters the sandbox failed ({0}). {TURN_OFF}")]
    Thread(std::io::Error),
    /// A writable path exists but could not be opened for the rules.
    #[error("Sandbox unavailable: cannot open {} for the sandbox's rules ({source}). {TURN_OFF}", path.display())]
    Path {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}
