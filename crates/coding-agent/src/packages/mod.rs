//! pi packages: bundles of extensions, skills, prompt templates and themes shared through npm, git
//! or a local directory, listed in the `packages` array of `~/.pi/agent/settings.json` (global
//! scope) or `.pi/settings.json` (project scope), installed where pi 0.73.1 installs them so that
//! pi and this program share installs:
//!
//! * `npm:<name>[@version]`: `npm install -g` (global), `.pi/npm/` (project);
//! * git (`git:host/user/repo[@ref]`, `https://…`, `ssh://…`, `git@host:path`): cloned to
//!   `~/.pi/agent/git/<host>/<path>` or `.pi/git/<host>/<path>`, then `npm install` when it has a
//!   `package.json`;
//! * a local path: recorded in settings, never copied.
//!
//! [`PackageManager`] installs, removes, updates and lists them (the `pi install|remove|update|list`
//! commands); [`resources`] is what the rest of pi loads from them: every enabled extension,
//! skill, prompt template and theme of every package of both scopes, with the package each came
//! from. [`PackageManager::resolve_extension_sources`] resolves `-e npm:…` / `-e git:…` for one
//! run (installed under the temporary directory, as pi does).

mod collect;
mod commands;
mod manager;
mod source;

pub use collect::ResourceKind;
pub use commands::ChildOutput;
pub use manager::{
    ConfiguredPackage, PackageManager, PackageOrigin, PackageResource, PackageResources, ProgressFn, Scope, resources,
};
pub use source::{GitSource, NpmSource, PackageSource};

/// Why a package operation failed; the texts are pi's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PackageError {
    /// A local source that does not exist.
    #[error("Path does not exist: {0}")]
    PathDoesNotExist(String),
    /// `pi update <source>` with no such package in settings (with pi's suggestion).
    #[error("{0}")]
    NoMatchingPackage(String),
    /// `npm` or `git` could not start or failed.
    #[error("{message}")]
    Command {
        /// pi's text (`npm install -g x failed with code 1`, `spawn git ENOENT`, …).
        message: String,
    },
    /// `npmCommand` in settings is not a usable command.
    #[error("Invalid npmCommand: first array entry must be a non-empty command")]
    InvalidNpmCommand,
    /// A settings file could not be read or written.
    #[error(transparent)]
    Settings(#[from] crate::config::SettingsError),
    /// A file or directory of pi's could not be written.
    #[error("{path}: {message}")]
    Io {
        /// The path.
        path: String,
        /// Why.
        message: String,
    },
}
