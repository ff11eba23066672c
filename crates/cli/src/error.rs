//! What went wrong before a mode could start.

use pi_session_store::StoreError;

use crate::input::InputError;
use crate::model::no_model_help;

/// What went wrong before a mode could start; its text is what `pi` prints on stderr.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The process's working directory cannot be read.
    #[error("pi: cannot read the working directory: {0}")]
    WorkingDirectory(#[source] std::io::Error),
    /// Neither `HOME` nor `PI_CODING_AGENT_DIR` says where pi's files are.
    #[error("pi: HOME is not set (or set PI_CODING_AGENT_DIR)")]
    NoAgentDir,
    /// `settings.json` (global or project) is invalid.
    #[error("pi: {0}")]
    Settings(#[from] pi_coding_agent::config::SettingsError),
    /// `models.json` is invalid.
    #[error("pi: {0}")]
    Models(#[from] pi_ai::RegistryError),
    /// The requested model, provider or thinking level does not exist.
    #[error("pi: {0}")]
    Model(#[from] pi_coding_agent::ModelError),
    /// Nothing was asked for and no provider is configured: the help screen.
    #[error("{}", no_model_help())]
    NoModel,
    /// The prompt arguments (`@file`s, piped input) could not be read.
    #[error("pi: {0}")]
    Input(#[from] InputError),
    /// The session could not be built.
    #[error("pi: {0}")]
    Session(#[from] pi_coding_agent::BuildError),
    /// The session file could not be opened, found or created.
    #[error("pi: {0}")]
    Store(#[from] StoreError),
    /// `--fork` together with a flag that picks another session.
    #[error("pi: --fork cannot be combined with {0}")]
    ForkConflict(String),
    /// `--resume` without a terminal to pick on.
    #[error("pi: --resume needs a terminal to pick from; use --session <id> or -c")]
    ResumeNeedsTerminal,
    /// `--resume`: the number typed names no session.
    #[error("pi: no session numbered {0}")]
    NoSuchSession(String),
    /// Reading the terminal failed.
    #[error("{0}")]
    Terminal(#[from] std::io::Error),
    /// Extension flags of the command line no extension registered, or without their value
    /// (pi's `Error: Unknown option: --x` lines).
    #[error("{0}")]
    ExtensionFlags(String),
    /// A blocking start-up step panicked or was cancelled.
    #[error("{0}")]
    Interrupted(#[from] tokio::task::JoinError),
}
