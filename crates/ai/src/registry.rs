//! The model registry: built-in models plus pi's `~/.pi/agent/models.json`, and API keys.

mod builtin;
mod config;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_agent_core::Model;

pub use config::RegistryError;

/// Looks an environment variable up.
pub(crate) type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

fn process_env() -> EnvLookup {
    Arc::new(|name: &str| std::env::var(name).ok())
}

/// Per-provider settings from `models.json` that apply at request time.
#[derive(Debug, Clone, Default)]
struct ProviderSettings {
    api_key: Option<String>,
    auth_header: bool,
}

/// Built-in models plus those of a `models.json`, and API-key resolution.
///
/// `models.json` has pi's format:
///
/// ```json
/// {
///   "providers": {
///     "ollama": {
///       "baseUrl": "http://localhost:11434/v1",
///       "api": "openai-completions",
///       "apiKey": "ollama",
///       "compat": { "supportsDeveloperRole": false },
///       "models": [
///         { "id": "llama3.1:8b", "name": "Llama 3.1 8B", "contextWindow": 128000, "maxTokens": 32000,
///           "cost": { "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0 } }
///       ]
///     },
///     "anthropic": { "baseUrl": "https://proxy.example.com" }
///   }
/// }
/// ```
///
/// Model fields default as in pi: `name` = `id`, `reasoning` false, `input` `["text"]`,
/// `contextWindow` 128000, `maxTokens` 16384, `cost` zero, `api` the provider's; `headers` and
/// `compat` merge over the provider's. A provider without `models` overrides `baseUrl`,
/// `headers` and `compat` of the built-in models of that name; models with a built-in id
/// replace it, others are added; `modelOverrides` changes single built-in models. A custom
/// provider needs `baseUrl` and an `api`. Unknown fields are ignored, so files written for newer
/// pi versions load. Errors name the file, line, column and field (see [`RegistryError`]).
///
/// API keys ([`ModelRegistry::api_key_for`]): the provider's `apiKey` resolved by
/// [`resolve_config_value`] (`!command`, `$VAR` / `${VAR}`, the name of a set environment
/// variable, or a literal), else the provider's usual variable (`ANTHROPIC_API_KEY`,
/// `OPENAI_API_KEY`, …; see [`env_var_for_provider`]). The environment is injectable for
/// tests ([`ModelRegistry::with_env`]).
///
/// ```
/// use pi_ai::ModelRegistry;
///
/// let json = r#"{"providers": {"ollama": {"baseUrl": "http://localhost:11434/v1",
///     "api": "openai-completions", "apiKey": "ollama", "models": [{"id": "qwen3:8b"}]}}}"#;
/// let registry = ModelRegistry::from_json(json, "models.json").unwrap().with_env(|_| None);
/// let model = registry.find_by_pattern("ollama/qwen3:8b").unwrap();
/// assert_eq!(model.context_window, 128_000);
/// assert_eq!(registry.api_key_for("ollama").as_deref(), Some("ollama"));
/// assert!(registry.find("anthropic", "claude-sonnet-4-5").is_some());
/// ```
#[derive(Clone)]
pub struct ModelRegistry {
    models: Vec<Model>,
    providers: BTreeMap<String, ProviderSettings>,
    env: EnvLookup,
}

impl std::fmt::Debug for ModelRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelRegistry")
            .field("models", &self.models.len())
            .field("providers", &self.providers.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Default for ModelRegistry {
    fn default() -> Self {
        ModelRegistry::builtin()
    }
}

/// The usual API-key variable of a provider (`OPENAI_API_KEY` for `openai`, …).
pub fn env_var_for_provider(provider: &str) -> Option<&'static str> {
    builtin::known_provider(provider).map(|known| known.env_var)
}

/// Whether `base_url` points at this machine (such servers need no API key).
pub fn is_local_url(base_url: &str) -> bool {
    let rest = base_url.split_once("://").map_or(base_url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let host = if let Some(bracketed) = host_port.strip_prefix('[') {
        bracketed.split(']').next().unwrap_or("")
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    let host = host.to_ascii_lowercase();
    host == "localhost"
        || host.ends_with(".localhost")
        || host == "::1"
        || host == "0.0.0.0"
        || host
            .strip_prefix("127.")
            .is_some_and(|rest| rest.split('.').count() == 3 && rest.split('.').all(|part| part.parse::<u8>().is_ok()))
}

/// Where pi keeps `models.json`: `$PI_CODING_AGENT_DIR/models.json`, else
/// `~/.pi/agent/models.json`.
pub fn default_models_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(dir) = env("PI_CODING_AGENT_DIR").filter(|dir| !dir.is_empty()) {
        return Some(PathBuf::from(dir).join("models.json"));
    }
    let home = env("HOME")
        .or_else(|| env("USERPROFILE"))
        .filter(|home| !home.is_empty())?;
    Some(PathBuf::from(home).join(".pi").join("agent").join("models.json"))
}

/// Resolves an `apiKey` or header value of `models.json` the way pi does:
///
/// * `!command` runs the command with the shell and uses its trimmed output;
/// * `$VAR` and `${VAR}` are replaced by the variable, also inside longer text (`$$` is a
///   literal `$`, `$!` a literal `!`); a missing variable leaves the value unresolved (`None`);
/// * a value without `$` that names a set environment variable is that variable's value;
/// * anything else is used literally.
pub fn resolve_config_value(value: &str, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    if let Some(command) = value.strip_prefix('!') {
        return run_command(command);
    }
    if !value.contains('$') {
        return Some(env(value).unwrap_or_else(|| value.to_owned()));
    }
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(tail) = after.strip_prefix('!') {
            out.push('!');
            rest = tail;
        } else if let Some(braced) = after.strip_prefix('{')
            && let Some(end) = braced.find('}')
        {
            out.push_str(&env(&braced[..end])?);
            rest = &braced[end + 1..];
        } else {
            let end = after
                .char_indices()
                .find(|(i, c)| !(c.is_ascii_alphanumeric() || *c == '_') || (*i == 0 && c.is_ascii_digit()))
                .map_or(after.len(), |(i, _)| i);
            if end == 0 {
                out.push('$');
            } else {
                out.push_str(&env(&after[..end])?);
            }
            rest = &after[end..];
        }
    }
    out.push_str(rest);
    Some(out)
}

fn run_command(command: &str) -> Option<String> {
    let mut process = if cfg!(windows) {
        let mut process = std::process::Command::new("cmd");
        process.arg("/C");
        process
    } else {
        let mut process = std::process::Command::new("sh");
        process.arg("-c");
        process
    };
    let output = process
        .arg(command)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// Whether a model id ends in a `-YYYYMMDD` date (a pinned snapshot rather than an alias).
fn is_dated(id: &str) -> bool {
    id.rsplit_once('-')
        .is_some_and(|(_, tail)| tail.len() == 8 && tail.bytes().all(|b| b.is_ascii_digit()))
}

impl ModelRegistry {
    /// The built-in models only, with the process environment.
    pub fn builtin() -> Self {
        ModelRegistry {
            models: builtin::builtin_models(),
            providers: BTreeMap::new(),
            env: process_env(),
        }
    }

    /// Built-ins plus a `models.json` text; `source` names it in errors.
    pub fn from_json(text: &str, source: &str) -> Result<Self, RegistryError> {
        let mut registry = ModelRegistry::builtin();
        registry.apply(config::parse(text, source)?);
        Ok(registry)
    }

    /// Built-ins plus the `models.json` at `path`; a missing file adds nothing.
    pub fn load(path: &Path) -> Result<Self, RegistryError> {
        match std::fs::read_to_string(path) {
            Ok(text) => ModelRegistry::from_json(&text, &path.display().to_string()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(ModelRegistry::builtin()),
            Err(error) => Err(RegistryError::Io {
                file: path.display().to_string(),
                message: error.to_string(),
            }),
        }
    }

    /// Built-ins plus pi's `models.json` at its usual place ([`default_models_path`]).
    pub fn load_default() -> Result<Self, RegistryError> {
        let env = process_env();
        match default_models_path(&*env) {
            Some(path) => ModelRegistry::load(&path),
            None => Ok(ModelRegistry::builtin()),
        }
    }

    /// Uses `env` instead of the process environment to resolve keys and header values.
    #[must_use]
    pub fn with_env(mut self, env: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        self.env = Arc::new(env);
        self
    }

    fn apply(&mut self, config: config::Config) {
        for (name, provider) in config {
            for model in self.models.iter_mut().filter(|model| model.provider == name) {
                if let Some(url) = &provider.base_url {
                    model.base_url = url.clone();
                }
                if let Some(headers) = &provider.headers {
                    model.headers.get_or_insert_with(BTreeMap::new).extend(headers.clone());
                }
                if let Some(compat) = &provider.compat {
                    config::merge_compat(&mut model.compat, compat);
                }
                for (id, fields) in &provider.model_overrides {
                    if *id == model.id {
                        config::apply_override(model, fields);
                    }
                }
            }
            for model in provider.models {
                match self
                    .models
                    .iter_mut()
                    .find(|existing| existing.provider == name && existing.id == model.id)
                {
                    Some(existing) => *existing = model,
                    None => self.models.push(model),
                }
            }
            self.providers.insert(
                name,
                ProviderSettings {
                    api_key: provider.api_key,
                    auth_header: provider.auth_header,
                },
            );
        }
    }

    /// Every model, built-ins first.
    pub fn all(&self) -> &[Model] {
        &self.models
    }

    /// The model `id` of `provider`.
    pub fn find(&self, provider: &str, id: &str) -> Option<&Model> {
        self.models
            .iter()
            .find(|model| model.provider == provider && model.id == id)
    }

    /// Finds a model from a user's pattern: `provider/id`, an exact id, an id or name in any
    /// case, or a unique-enough part of an id (aliases are preferred over dated snapshots).
    pub fn find_by_pattern(&self, pattern: &str) -> Option<&Model> {
        let pattern = pattern.trim();
        if pattern.is_empty() {
            return None;
        }
        if let Some((provider, id)) = pattern.split_once('/')
            && let Some(model) = self.find(provider, id)
        {
            return Some(model);
        }
        if let Some(model) = self.models.iter().find(|model| model.id == pattern) {
            return Some(model);
        }
        let lower = pattern.to_lowercase();
        if let Some(model) = self
            .models
            .iter()
            .find(|model| model.id.to_lowercase() == lower || model.name.to_lowercase() == lower)
        {
            return Some(model);
        }
        let (provider, part) = match pattern.split_once('/') {
            Some((provider, part)) if self.models.iter().any(|model| model.provider == provider) => {
                (Some(provider), part.to_lowercase())
            }
            _ => (None, lower),
        };
        let candidates = self.models.iter().filter(|model| {
            provider.is_none_or(|provider| model.provider == provider) && model.id.to_lowercase().contains(&part)
        });
        // The first match, unless it is a dated snapshot and an alias matches too.
        let mut best: Option<&Model> = None;
        for model in candidates {
            let better = match best {
                None => true,
                Some(current) => is_dated(&current.id) && !is_dated(&model.id),
            };
            if better {
                best = Some(model);
            }
        }
        best
    }

    /// Whether `model` can be called: a key is configured for its provider, or it runs on this
    /// machine (a local base URL needs no key).
    ///
    /// ```
    /// use pi_ai::ModelRegistry;
    /// let registry = ModelRegistry::builtin().with_env(|name| (name == "OPENAI_API_KEY").then(|| "k".into()));
    /// assert!(registry.is_available(registry.find("openai", "gpt-5.1").unwrap()));
    /// assert!(!registry.is_available(registry.find("anthropic", "claude-sonnet-4-5").unwrap()));
    /// ```
    pub fn is_available(&self, model: &Model) -> bool {
        self.api_key_for(&model.provider).is_some() || is_local_url(&model.base_url)
    }

    /// Whether `model` has a key configured or needs none — [`ModelRegistry::is_available`]
    /// without resolving anything: a `models.json` `apiKey` counts as configured without running
    /// its `!command` or reading its variables (pi's fast `getAvailable` check).
    ///
    /// ```
    /// use pi_ai::ModelRegistry;
    /// let json = r#"{"providers": {"corp": {"baseUrl": "https://llm.example", "api": "openai-completions",
    ///     "apiKey": "!exit 1", "models": [{"id": "m"}]}}}"#;
    /// let registry = ModelRegistry::from_json(json, "models.json").unwrap().with_env(|_| None);
    /// assert!(registry.has_auth(registry.find("corp", "m").unwrap()));
    /// assert!(!registry.is_available(registry.find("corp", "m").unwrap()));
    /// assert!(!registry.has_auth(registry.find("openai", "gpt-5.1").unwrap()));
    /// ```
    pub fn has_auth(&self, model: &Model) -> bool {
        let configured = self
            .providers
            .get(&model.provider)
            .and_then(|settings| settings.api_key.as_deref())
            .is_some_and(|value| !value.is_empty());
        configured
            || env_var_for_provider(&model.provider).is_some_and(|var| (self.env)(var).is_some_and(|k| !k.is_empty()))
            || is_local_url(&model.base_url)
    }

    /// The API key for `provider`: its `apiKey` from `models.json` (resolved), else its usual
    /// environment variable. Empty values count as missing.
    pub fn api_key_for(&self, provider: &str) -> Option<String> {
        let configured = self
            .providers
            .get(provider)
            .and_then(|settings| settings.api_key.as_deref())
            .and_then(|value| resolve_config_value(value, &*self.env))
            .filter(|key| !key.is_empty());
        let key = configured.or_else(|| {
            let var = env_var_for_provider(provider)?;
            (self.env)(var).filter(|key| !key.is_empty())
        })?;
        crate::redact::register_secret(&key);
        Some(key)
    }

    /// Whether `models.json` asks for `Authorization: Bearer <key>` on this provider
    /// (`authHeader: true`).
    pub fn uses_auth_header(&self, provider: &str) -> bool {
        self.providers
            .get(provider)
            .is_some_and(|settings| settings.auth_header)
    }

    /// Header values resolved like `apiKey` values; headers that do not resolve are left out.
    ///
    /// Every value that came from a command or a variable, and every value of a header whose
    /// name names a credential ([`names_a_credential`](crate::names_a_credential): `api-key`,
    /// `authorization`, …), is registered with the redactor ([`register_secret`](crate::register_secret)).
    pub fn resolve_headers(&self, headers: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        headers
            .iter()
            .filter_map(|(name, value)| {
                let resolved = self.resolve_header_value(value)?;
                if resolved != *value || crate::redact::names_a_credential(name) {
                    crate::redact::register_secret(&resolved);
                }
                Some((name.clone(), resolved))
            })
            .collect()
    }

    fn resolve_header_value(&self, value: &str) -> Option<String> {
        // Header values are literal unless they ask for a command or a variable.
        if value.starts_with('!') || value.contains('$') {
            resolve_config_value(value, &*self.env)
        } else {
            Some(value.to_owned())
        }
    }

    /// The registry's environment lookup.
    pub fn env(&self, name: &str) -> Option<String> {
        (self.env)(name)
    }
}
