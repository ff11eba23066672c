//! `SYSTEM.md` (replaces pi's default system prompt) and `APPEND_SYSTEM.md` (appended to it), in
//! the project's `.pi/` or, when the project has none, in the agent directory. `--system-prompt`
//! wins over `SYSTEM.md` and `--append-system-prompt` over `APPEND_SYSTEM.md`.

use std::path::{Path, PathBuf};

/// The system-prompt files found for a project.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SystemPromptFiles {
    /// `.pi/SYSTEM.md`, else `<agent dir>/SYSTEM.md`.
    pub system: Option<PathBuf>,
    /// `.pi/APPEND_SYSTEM.md`, else `<agent dir>/APPEND_SYSTEM.md`.
    pub append: Option<PathBuf>,
}

impl SystemPromptFiles {
    /// Looks for the files (blocking).
    ///
    /// ```
    /// use pi_coding_agent::resources::SystemPromptFiles;
    /// let dir = tempfile::tempdir().unwrap();
    /// let (project, agent) = (dir.path().join("p"), dir.path().join("agent"));
    /// std::fs::create_dir_all(project.join(".pi")).unwrap();
    /// std::fs::create_dir_all(&agent).unwrap();
    /// std::fs::write(agent.join("SYSTEM.md"), "global").unwrap();
    /// std::fs::write(agent.join("APPEND_SYSTEM.md"), "global").unwrap();
    /// std::fs::write(project.join(".pi/APPEND_SYSTEM.md"), "project").unwrap();
    /// let files = SystemPromptFiles::discover(&project, Some(&agent));
    /// assert_eq!(files.system, Some(agent.join("SYSTEM.md")));
    /// assert_eq!(files.append, Some(project.join(".pi/APPEND_SYSTEM.md")));
    /// ```
    pub fn discover(cwd: &Path, agent_dir: Option<&Path>) -> Self {
        let find = |name: &str| {
            let project = cwd.join(".pi").join(name);
            if project.exists() {
                return Some(project);
            }
            agent_dir.map(|dir| dir.join(name)).filter(|global| global.exists())
        };
        SystemPromptFiles {
            system: find("SYSTEM.md"),
            append: find("APPEND_SYSTEM.md"),
        }
    }
}
