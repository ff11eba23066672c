//! Configuration on disk: where pi's files live ([`AgentPaths`]) and `settings.json`
//! ([`Settings`]). `models.json` is read by [`pi_ai::ModelRegistry`].

mod error;
mod paths;
mod provider_retry;
mod save;
mod settings;

pub use error::SettingsError;
pub use paths::{AGENT_DIR_ENV, AgentPaths, project_dir, project_settings_file};
pub use provider_retry::{AgentRetry, ProviderRetry};
pub use save::save_global_settings;
pub(crate) use settings::read_object;
pub use settings::{
    ImageSettings, McpServerConfig, SandboxSettings, Settings, merge, parse_thinking_level, thinking_level_name,
};

/// Expands a leading `~` or `~/` with `$HOME` from `env`.
pub fn expand_home(path: &str, env: &dyn Fn(&str) -> Option<String>) -> std::path::PathBuf {
    let home = || env("HOME").filter(|h| !h.is_empty());
    if path == "~" {
        if let Some(home) = home() {
            return home.into();
        }
    } else if let Some(rest) = path.strip_prefix("~/")
        && let Some(home) = home()
    {
        return std::path::Path::new(&home).join(rest);
    }
    path.into()
}
