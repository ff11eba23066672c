//! `settings.json`: the global `~/.pi/agent/settings.json` with the project's `.pi/settings.json`
//! merged over it (objects merge key by key, anything else is replaced).
//!
//! Only the keys this program uses are read; every other key is kept in [`Settings::raw`], so a
//! file written for pi (or a newer pi) loads unchanged.

use std::collections::BTreeMap;
use std::path::Path;

use pi_agent_core::{QueueMode, ThinkingLevel, ToolExecutionMode};
use serde_json::{Map, Value};

use super::error::SettingsError;

/// The merged settings.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Settings {
    /// `defaultProvider`.
    pub default_provider: Option<String>,
    /// `defaultModel` (an id or `provider/id`).
    pub default_model: Option<String>,
    /// `defaultThinkingLevel`.
    pub default_thinking_level: Option<ThinkingLevel>,
    /// `steeringMode`: `all` or `one-at-a-time`.
    pub steering_mode: Option<QueueMode>,
    /// `followUpMode`.
    pub follow_up_mode: Option<QueueMode>,
    /// `toolExecution`: `parallel` (pi's behaviour) or `sequential` for every batch.
    pub tool_execution: Option<ToolExecutionMode>,
    /// `shellPath`: the shell of `bash`.
    pub shell_path: Option<String>,
    /// `shellCommandPrefix`: prepended to every bash command.
    pub shell_command_prefix: Option<String>,
    /// `astEdit.enabled` (default true).
    pub ast_edit_enabled: Option<bool>,
    /// `astGrep.enabled` (default true).
    pub ast_grep_enabled: Option<bool>,
    /// `customTools`: paths of custom tools.
    pub custom_tools: Vec<String>,
    /// `mcpServers`: MCP servers whose tools pi offers, by name.
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    /// `retry.provider`: timeouts and retries within one request to the model.
    pub provider_retry: super::ProviderRetry,
    /// `retry.enabled`, `retry.maxRetries`, `retry.baseDelayMs`: the session's retry of a turn
    /// that failed with a transient error.
    pub retry: super::AgentRetry,
    /// `sandbox` (beyond pi): the sandbox of bash and custom-tool processes.
    pub sandbox: SandboxSettings,
    /// `sessionDir`: where session files live (absolute, relative to the working directory, or
    /// starting with `~`); `--session-dir` and `PI_CODING_AGENT_SESSION_DIR` come first.
    pub session_dir: Option<String>,
    /// `enabledModels`: the model patterns cycling goes through (as `--models` takes them).
    pub enabled_models: Option<Vec<String>>,
    /// `quietStartup`: no start-up header (`--verbose` shows it anyway).
    pub quiet_startup: Option<bool>,
    /// `images.*` and `terminal.showImages` / `terminal.imageWidthCells`, read as leniently as pi
    /// reads them (a value of the wrong type is the default).
    pub images: ImageSettings,
    /// The whole merged object, unknown keys included.
    pub raw: Map<String, Value>,
}

impl Settings {
    /// Reads the global file then the project's (either may be missing) and merges them.
    pub fn load(global: &Path, project: Option<&Path>) -> Result<Self, SettingsError> {
        let mut merged = read_object(global)?.unwrap_or_default();
        if let Some(project) = project
            && let Some(overrides) = read_object(project)?
        {
            merge(&mut merged, overrides);
        }
        Settings::from_object(merged, &global.display().to_string())
    }

    /// Settings from a JSON text; `file` names it in errors.
    ///
    /// ```
    /// use pi_coding_agent::config::Settings;
    /// let settings = Settings::from_json(r#"{"defaultModel": "anthropic/claude-sonnet-4-5", "theme": "dark"}"#, "settings.json").unwrap();
    /// assert_eq!(settings.default_model.as_deref(), Some("anthropic/claude-sonnet-4-5"));
    /// assert_eq!(settings.raw["theme"], "dark");
    /// ```
    pub fn from_json(text: &str, file: &str) -> Result<Self, SettingsError> {
        Settings::from_object(parse_object(text, file)?, file)
    }

    fn from_object(raw: Map<String, Value>, file: &str) -> Result<Self, SettingsError> {
        let reader = Reader { raw: &raw, file };
        Ok(Settings {
            default_provider: reader.string("defaultProvider")?,
            default_model: reader.string("defaultModel")?,
            default_thinking_level: reader.parsed("defaultThinkingLevel", parse_thinking_level)?,
            steering_mode: reader.parsed("steeringMode", parse_queue_mode)?,
            follow_up_mode: reader.parsed("followUpMode", parse_queue_mode)?,
            tool_execution: reader.parsed("toolExecution", parse_execution_mode)?,
            shell_path: reader.string("shellPath")?,
            shell_command_prefix: reader.string("shellCommandPrefix")?,
            ast_edit_enabled: reader.enabled("astEdit")?,
            ast_grep_enabled: reader.enabled("astGrep")?,
            custom_tools: reader.strings("customTools")?,
            mcp_servers: reader.mcp_servers()?,
            provider_retry: super::provider_retry::read(&raw, file)?,
            retry: super::provider_retry::read_agent(&raw, file)?,
            sandbox: reader.sandbox()?,
            session_dir: reader.string("sessionDir")?,
            enabled_models: match raw.get("enabledModels") {
                None | Some(Value::Null) => None,
                Some(_) => Some(reader.strings("enabledModels")?),
            },
            quiet_startup: reader.boolean("quietStartup")?,
            images: ImageSettings::read(&raw),
            raw: raw.clone(),
        })
    }
}

/// pi's image settings, with pi's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageSettings {
    /// `images.autoResize` (default true): `read` and `@file` arguments resize images to 2000×2000
    /// and 4.5 MB of base64.
    pub auto_resize: bool,
    /// `images.blockImages` (default false): no image is sent to the model.
    pub block_images: bool,
    /// `terminal.showImages` (default true): the interactive mode draws images where the terminal can.
    pub show_images: bool,
    /// `terminal.imageWidthCells` (default 60, at least 1): how wide an inline image is drawn.
    pub image_width_cells: u16,
}

impl Default for ImageSettings {
    fn default() -> Self {
        ImageSettings {
            auto_resize: true,
            block_images: false,
            show_images: true,
            image_width_cells: 60,
        }
    }
}

impl ImageSettings {
    /// pi's getters: `images?.autoResize ?? true`, `images?.blockImages ?? false`,
    /// `terminal?.showImages ?? true`, and a finite `terminal.imageWidthCells` or 60.
    ///
    /// ```
    /// use pi_coding_agent::config::Settings;
    /// let settings = Settings::from_json(r#"{"images": {"blockImages": true}, "terminal": {"imageWidthCells": 40.7}}"#, "s.json").unwrap();
    /// assert!(settings.images.block_images && settings.images.auto_resize);
    /// assert_eq!(settings.images.image_width_cells, 40);
    /// ```
    fn read(raw: &Map<String, Value>) -> Self {
        let defaults = ImageSettings::default();
        let flag = |section: &str, key: &str, default: bool| {
            raw.get(section)
                .and_then(|s| s.get(key))
                .and_then(Value::as_bool)
                .unwrap_or(default)
        };
        let width = raw
            .get("terminal")
            .and_then(|t| t.get("imageWidthCells"))
            .and_then(Value::as_f64)
            .filter(|w| w.is_finite())
            // pi floors the width and keeps it at least 1 when it is set.
            .map_or(defaults.image_width_cells, |w| {
                w.floor().clamp(1.0, f64::from(u16::MAX)) as u16
            });
        ImageSettings {
            auto_resize: flag("images", "autoResize", defaults.auto_resize),
            block_images: flag("images", "blockImages", defaults.block_images),
            show_images: flag("terminal", "showImages", defaults.show_images),
            image_width_cells: width,
        }
    }
}

/// One entry of `mcpServers`: a server started as a process speaking MCP over stdio.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Deserialize)]
pub struct McpServerConfig {
    /// The program.
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment variables.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Working directory (default: the session's).
    #[serde(default)]
    pub cwd: Option<String>,
    /// How long one tool call may wait for its answer, in milliseconds (default 300000, as for
    /// process tools); the call then fails and the server is told it was cancelled.
    #[serde(default)]
    pub timeout: Option<u64>,
}

/// `sandbox` (beyond pi): `{"enabled": bool, "network": bool, "writablePaths": [string]}`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SandboxSettings {
    /// `enabled` (default false): bash and custom-tool processes may write only inside the
    /// project, the temp directories and `writable_paths`.
    pub enabled: Option<bool>,
    /// `network` (default true): false forbids them the network (TCP, UDP, any non-Unix socket).
    pub network: Option<bool>,
    /// `writablePaths`: more directories they may write (`~` expanded, relative to the project).
    pub writable_paths: Vec<String>,
}

/// A thinking level by pi's name (`off`, `minimal`, `low`, `medium`, `high`, `xhigh`, `max`).
pub fn parse_thinking_level(text: &str) -> Option<ThinkingLevel> {
    text.parse().ok()
}

/// pi's name of a thinking level.
pub fn thinking_level_name(level: ThinkingLevel) -> &'static str {
    level.as_str()
}

fn parse_queue_mode(text: &str) -> Option<QueueMode> {
    text.parse().ok()
}

fn parse_execution_mode(text: &str) -> Option<ToolExecutionMode> {
    text.parse().ok()
}

struct Reader<'a> {
    raw: &'a Map<String, Value>,
    file: &'a str,
}

impl Reader<'_> {
    fn error(&self, key: &str, message: &str) -> SettingsError {
        SettingsError::Value {
            file: self.file.to_owned(),
            key: key.to_owned(),
            message: message.to_owned(),
        }
    }

    fn string(&self, key: &str) -> Result<Option<String>, SettingsError> {
        match self.raw.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(_) => Err(self.error(key, "must be a string")),
        }
    }

    fn boolean(&self, key: &str) -> Result<Option<bool>, SettingsError> {
        match self.raw.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(value)) => Ok(Some(*value)),
            Some(_) => Err(self.error(key, "must be a boolean")),
        }
    }

    fn parsed<T>(&self, key: &str, parse: fn(&str) -> Option<T>) -> Result<Option<T>, SettingsError> {
        match self.string(key)? {
            None => Ok(None),
            Some(text) => parse(&text)
                .map(Some)
                .ok_or_else(|| self.error(key, &format!("has an unknown value \"{text}\""))),
        }
    }

    fn strings(&self, key: &str) -> Result<Vec<String>, SettingsError> {
        match self.raw.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| {
                    item.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| self.error(key, "must be a list of strings"))
                })
                .collect(),
            Some(_) => Err(self.error(key, "must be a list of strings")),
        }
    }

    fn mcp_servers(&self) -> Result<BTreeMap<String, McpServerConfig>, SettingsError> {
        match self.raw.get("mcpServers") {
            None | Some(Value::Null) => Ok(BTreeMap::new()),
            Some(Value::Object(servers)) => servers
                .iter()
                .map(|(name, config)| {
                    serde_json::from_value::<McpServerConfig>(config.clone())
                        .map(|config| (name.clone(), config))
                        .map_err(|e| self.error(&format!("mcpServers.{name}"), &format!("is invalid: {e}")))
                })
                .collect(),
            Some(_) => Err(self.error("mcpServers", "must be an object")),
        }
    }

    /// `sandbox`: an object whose known keys have the right kinds.
    fn sandbox(&self) -> Result<SandboxSettings, SettingsError> {
        let object = match self.raw.get("sandbox") {
            None | Some(Value::Null) => return Ok(SandboxSettings::default()),
            Some(Value::Object(object)) => object,
            Some(_) => return Err(self.error("sandbox", "must be an object")),
        };
        let flag = |key: &str| match object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(value)) => Ok(Some(*value)),
            Some(_) => Err(self.error(&format!("sandbox.{key}"), "must be a boolean")),
        };
        let writable_paths = match object.get("writablePaths") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| self.error("sandbox.writablePaths", "must be a list of strings"))?,
            Some(_) => return Err(self.error("sandbox.writablePaths", "must be a list of strings")),
        };
        Ok(SandboxSettings {
            enabled: flag("enabled")?,
            network: flag("network")?,
            writable_paths,
        })
    }

    /// `{"<key>": {"enabled": bool}}`.
    fn enabled(&self, key: &str) -> Result<Option<bool>, SettingsError> {
        match self.raw.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(object)) => match object.get("enabled") {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Bool(enabled)) => Ok(Some(*enabled)),
                Some(_) => Err(self.error(key, "must have a boolean \"enabled\"")),
            },
            Some(_) => Err(self.error(key, "must be an object")),
        }
    }
}

pub(crate) fn read_object(path: &Path) -> Result<Option<Map<String, Value>>, SettingsError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => {
            return Err(SettingsError::Read {
                file: path.display().to_string(),
                message: error.to_string(),
            });
        }
    };
    if text.trim().is_empty() {
        return Ok(Some(Map::new()));
    }
    parse_object(&text, &path.display().to_string()).map(Some)
}

fn parse_object(text: &str, file: &str) -> Result<Map<String, Value>, SettingsError> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err(SettingsError::Parse {
            file: file.to_owned(),
            line: 1,
            column: 1,
            message: "expected a JSON object".to_owned(),
        }),
        Err(error) => Err(SettingsError::Parse {
            file: file.to_owned(),
            line: error.line(),
            // serde counts the column from 0 when the error is at a line break.
            column: error.column().max(1),
            message: error.to_string(),
        }),
    }
}

/// Merges `overrides` into `base`: nested objects key by key, anything else replaced.
pub fn merge(base: &mut Map<String, Value>, overrides: Map<String, Value>) {
    for (key, value) in overrides {
        match (base.get_mut(&key), value) {
            (Some(Value::Object(existing)), Value::Object(incoming)) => merge(existing, incoming),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod fuzz;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn project_settings_merge_over_global() {
        let dir = tempfile::tempdir().unwrap();
        let global = dir.path().join("global.json");
        let project = dir.path().join("project.json");
        std::fs::write(
            &global,
            r#"{"defaultModel": "a", "astEdit": {"enabled": true, "x": 1}, "customTools": ["g"]}"#,
        )
        .unwrap();
        std::fs::write(&project, r#"{"astEdit": {"enabled": false}, "customTools": ["p"]}"#).unwrap();
        let settings = Settings::load(&global, Some(&project)).unwrap();
        assert_eq!(settings.default_model.as_deref(), Some("a"));
        assert_eq!(settings.ast_edit_enabled, Some(false));
        assert_eq!(settings.raw["astEdit"], json!({"enabled": false, "x": 1}));
        assert_eq!(settings.custom_tools, ["p"]);
    }

    #[test]
    fn missing_files_are_empty_settings() {
        let dir = tempfile::tempdir().unwrap();
        let settings = Settings::load(&dir.path().join("none.json"), Some(&dir.path().join("nope.json"))).unwrap();
        assert_eq!(settings, Settings::default());
    }

    #[test]
    fn errors_name_the_file_and_place() {
        let error = Settings::from_json("{\n  \"defaultModel\": 3,\n}", "s.json").unwrap_err();
        assert!(
            error.to_string().starts_with("Invalid settings in s.json:3:1: "),
            "{error}"
        );
        let error = Settings::from_json(r#"{"defaultModel": 3}"#, "s.json").unwrap_err();
        assert_eq!(
            error.to_string(),
            "Invalid settings in s.json: \"defaultModel\" must be a string"
        );
        let error = Settings::from_json(r#"{"steeringMode": "sometimes"}"#, "s.json").unwrap_err();
        assert_eq!(
            error.to_string(),
            "Invalid settings in s.json: \"steeringMode\" has an unknown value \"sometimes\""
        );
        let error = Settings::from_json("[]", "s.json").unwrap_err();
        assert_eq!(
            error.to_string(),
            "Invalid settings in s.json:1:1: expected a JSON object"
        );
    }

    #[test]
    fn known_values_parse() {
        let settings = Settings::from_json(
            r#"{"defaultThinkingLevel": "high", "followUpMode": "all", "toolExecution": "sequential",
                "shellPath": "/bin/zsh", "astGrep": {"enabled": false}}"#,
            "s.json",
        )
        .unwrap();
        assert_eq!(settings.default_thinking_level, Some(ThinkingLevel::High));
        assert_eq!(settings.follow_up_mode, Some(QueueMode::All));
        assert_eq!(settings.tool_execution, Some(ToolExecutionMode::Sequential));
        assert_eq!(settings.shell_path.as_deref(), Some("/bin/zsh"));
        assert_eq!(settings.ast_grep_enabled, Some(false));
    }

    #[test]
    fn the_sandbox_reads_enabled_network_and_writable_paths() {
        assert_eq!(Settings::default().sandbox, SandboxSettings::default());
        let settings = Settings::from_json(
            r#"{"sandbox": {"enabled": true, "network": false, "writablePaths": ["~/.cache"]}}"#,
            "s.json",
        )
        .unwrap();
        assert_eq!(
            settings.sandbox,
            SandboxSettings {
                enabled: Some(true),
                network: Some(false),
                writable_paths: vec!["~/.cache".to_owned()],
            }
        );
        let error = |json: &str| Settings::from_json(json, "s.json").unwrap_err().to_string();
        assert_eq!(
            error(r#"{"sandbox": true}"#),
            "Invalid settings in s.json: \"sandbox\" must be an object"
        );
        assert_eq!(
            error(r#"{"sandbox": {"network": "off"}}"#),
            "Invalid settings in s.json: \"sandbox.network\" must be a boolean"
        );
        assert_eq!(
            error(r#"{"sandbox": {"writablePaths": [1]}}"#),
            "Invalid settings in s.json: \"sandbox.writablePaths\" must be a list of strings"
        );
    }

    #[test]
    fn session_dir_enabled_models_and_quiet_startup() {
        let settings = Settings::from_json(
            r#"{"sessionDir": "~/s", "enabledModels": ["claude-*", "gpt-4o:high"], "quietStartup": true}"#,
            "s.json",
        )
        .unwrap();
        assert_eq!(settings.session_dir.as_deref(), Some("~/s"));
        assert_eq!(
            settings.enabled_models.as_deref(),
            Some(&["claude-*".to_owned(), "gpt-4o:high".to_owned()][..])
        );
        assert_eq!(settings.quiet_startup, Some(true));
        let error = Settings::from_json(r#"{"quietStartup": "yes"}"#, "s.json").unwrap_err();
        assert_eq!(
            error.to_string(),
            "Invalid settings in s.json: \"quietStartup\" must be a boolean"
        );
    }
}
