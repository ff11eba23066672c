//! Where a resource came from ([`SourceInfo`]) and what went wrong loading it ([`Diagnostic`]).

use std::path::{Path, PathBuf};

use serde::Serialize;

/// Where a resource came from, as pi's RPC `get_commands` reports it (`sourceInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceInfo {
    /// The resource's file.
    pub path: PathBuf,
    /// How it was found.
    #[serde(flatten)]
    pub metadata: Metadata,
}

/// How a resource was found: `source` `auto` (a default directory), `local` (a settings entry or
/// a path), or a package's; `scope` `user`, `project` or `temporary` (the command line); `origin`
/// `top-level` or `package`; `baseDir` the directory it belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Metadata {
    /// `auto`, `local`, …
    pub source: String,
    /// `user`, `project`, `temporary`.
    pub scope: String,
    /// `top-level` or `package`.
    pub origin: String,
    /// The directory paths are relative to.
    #[serde(rename = "baseDir", skip_serializing_if = "Option::is_none")]
    pub base_dir: Option<PathBuf>,
}

impl Metadata {
    pub(crate) fn new(source: &str, scope: &str, base_dir: Option<PathBuf>) -> Self {
        Metadata {
            source: source.to_owned(),
            scope: scope.to_owned(),
            origin: "top-level".to_owned(),
            base_dir,
        }
    }
}

impl SourceInfo {
    /// A resource given by path (`--skill`, `--prompt-template`): `local`, `temporary`, its
    /// directory as base.
    pub fn path(path: &Path) -> Self {
        SourceInfo {
            path: path.to_path_buf(),
            metadata: Metadata::new("local", "temporary", path.parent().map(Path::to_path_buf)),
        }
    }
}

/// What kind of problem a [`Diagnostic`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiagnosticKind {
    /// A problem the resource still loads with (or a path that is not there).
    Warning,
    /// A resource that could not load.
    Error,
    /// Two resources with one name: the first found wins.
    Collision,
}

/// Two resources with one name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collision {
    /// `skill`, `prompt` or `theme`.
    pub resource_type: &'static str,
    /// The name.
    pub name: String,
    /// The one kept.
    pub winner_path: PathBuf,
    /// The one skipped.
    pub loser_path: PathBuf,
}

/// A problem found while loading resources, in pi's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Its kind.
    pub kind: DiagnosticKind,
    /// pi's message (`description is required`, `name "x" collision`, …).
    pub message: String,
    /// The file or path concerned.
    pub path: Option<PathBuf>,
    /// For a collision, both sides.
    pub collision: Option<Collision>,
}

impl Diagnostic {
    /// A warning about `path`.
    pub fn warning(message: impl Into<String>, path: &Path) -> Self {
        Diagnostic {
            kind: DiagnosticKind::Warning,
            message: message.into(),
            path: Some(path.to_path_buf()),
            collision: None,
        }
    }

    /// Two resources called `name`: `winner` is kept, `loser` skipped.
    pub fn collision(resource_type: &'static str, name: &str, message: String, winner: &Path, loser: &Path) -> Self {
        Diagnostic {
            kind: DiagnosticKind::Collision,
            message,
            path: Some(loser.to_path_buf()),
            collision: Some(Collision {
                resource_type,
                name: name.to_owned(),
                winner_path: winner.to_path_buf(),
                loser_path: loser.to_path_buf(),
            }),
        }
    }
}
