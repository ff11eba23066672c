//! Where pi keeps its files: `~/.pi/agent/` (or `$PI_CODING_AGENT_DIR`) and `<project>/.pi/`.

use std::path::{Path, PathBuf};

/// The environment variable that moves pi's agent directory.
pub const AGENT_DIR_ENV: &str = "PI_CODING_AGENT_DIR";

/// pi's per-user directory and the files in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentPaths {
    /// `~/.pi/agent`, or `$PI_CODING_AGENT_DIR`.
    pub agent_dir: PathBuf,
}

impl AgentPaths {
    /// The paths under `agent_dir`.
    pub fn new(agent_dir: impl Into<PathBuf>) -> Self {
        AgentPaths {
            agent_dir: agent_dir.into(),
        }
    }

    /// The agent directory from `env` (`PI_CODING_AGENT_DIR`, else `$HOME/.pi/agent`); `None`
    /// when neither is set.
    ///
    /// ```
    /// use pi_coding_agent::config::AgentPaths;
    /// let env = |name: &str| (name == "HOME").then(|| "/home/ada".to_owned());
    /// let paths = AgentPaths::from_env(&env).unwrap();
    /// assert_eq!(paths.settings_file(), std::path::Path::new("/home/ada/.pi/agent/settings.json"));
    /// ```
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Option<Self> {
        if let Some(dir) = env(AGENT_DIR_ENV).filter(|d| !d.is_empty()) {
            return Some(AgentPaths::new(crate::config::expand_home(&dir, env)));
        }
        let home = env("HOME").or_else(|| env("USERPROFILE")).filter(|h| !h.is_empty())?;
        Some(AgentPaths::new(Path::new(&home).join(".pi").join("agent")))
    }

    /// From the process environment.
    pub fn from_process_env() -> Option<Self> {
        AgentPaths::from_env(&|name| std::env::var(name).ok())
    }

    /// `settings.json`.
    pub fn settings_file(&self) -> PathBuf {
        self.agent_dir.join("settings.json")
    }

    /// `auth.json`: API keys and subscription logins (`pi_coding_agent::auth`).
    pub fn auth_file(&self) -> PathBuf {
        self.agent_dir.join("auth.json")
    }

    /// `models.json`.
    pub fn models_file(&self) -> PathBuf {
        self.agent_dir.join("models.json")
    }

    /// The sessions root, `sessions/`.
    pub fn sessions_dir(&self) -> PathBuf {
        self.agent_dir.join("sessions")
    }

    /// The global custom-tools directory, `tools/`.
    pub fn tools_dir(&self) -> PathBuf {
        self.agent_dir.join("tools")
    }

    /// The global extensions directory, `extensions/`.
    pub fn extensions_dir(&self) -> PathBuf {
        self.agent_dir.join("extensions")
    }

    /// pi's caches, `cache/` (transpiled TypeScript of custom tools in `cache/ts/`).
    pub fn cache_dir(&self) -> PathBuf {
        self.agent_dir.join("cache")
    }

    /// The global context file, `AGENTS.md`.
    pub fn global_context_file(&self) -> PathBuf {
        self.agent_dir.join("AGENTS.md")
    }
}

/// A project's `.pi/` directory.
pub fn project_dir(cwd: &Path) -> PathBuf {
    cwd.join(".pi")
}

/// A project's `.pi/settings.json`.
pub fn project_settings_file(cwd: &Path) -> PathBuf {
    project_dir(cwd).join("settings.json")
}
