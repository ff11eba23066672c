//! Where and how the tools run: [`ToolEnv`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::path::resolve_path;

/// Where and how the tools run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolEnv {
    /// The session's working directory; relative paths resolve against it.
    pub cwd: PathBuf,
    /// Shell for `bash` (pi's `shellPath` setting); default `/bin/bash`, else `bash`, else `sh`.
    pub shell: Option<PathBuf>,
    /// Text prepended (with a newline) to every bash command (pi's `shellCommandPrefix`).
    pub shell_command_prefix: Option<String>,
    /// Extra environment for `bash`, e.g. `PI_SESSION_ID`, `PI_MODEL`.
    pub env: BTreeMap<String, String>,
    /// The sandbox `bash` runs its commands in (beyond pi; `None`: the user's full rights). The
    /// file tools are not affected.
    pub sandbox: Option<crate::Sandbox>,
    /// `read` resizes images as pi does (pi's `images.autoResize` setting, default true).
    pub auto_resize_images: bool,
}

impl ToolEnv {
    /// Tools working in `cwd` with default settings.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        ToolEnv {
            cwd: cwd.into(),
            shell: None,
            shell_command_prefix: None,
            env: BTreeMap::new(),
            sandbox: None,
            auto_resize_images: true,
        }
    }

    /// Resolves a model-supplied path against the working directory.
    pub fn resolve(&self, input: &str) -> PathBuf {
        resolve_path(&self.cwd, input)
    }

    /// The working directory.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }
}
