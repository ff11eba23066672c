//! Which model a run uses: `--provider` / `--model` (with `provider/id` and `:thinking`), else the
//! settings' defaults, else the first provider that is configured — and `--list-models`.

use pi_agent_core::{Model, ThinkingLevel};
use pi_ai::{ModelRegistry, is_local_url};

use pi_coding_agent::config::{Settings, parse_thinking_level, thinking_level_name};

/// The model each provider starts with when only the provider is known.
pub const DEFAULT_MODELS: &[(&str, &str)] = &[("anthropic", "claude-sonnet-4-5"), ("openai", "gpt-5.1")];

/// A model choice that cannot be honoured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// `--model` (or the settings' default) matches nothing.
    #[error("Unknown model: {0} (see pi --list-models)")]
    UnknownModel(String),
    /// `--provider` names a provider without models.
    #[error("Unknown provider: {0} (see pi --list-models)")]
    UnknownProvider(String),
    /// `--thinking` is not a level.
    #[error("Unknown thinking level: {0} (use off, minimal, low, medium, high, xhigh)")]
    UnknownThinkingLevel(String),
}

/// The chosen model and thinking level.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelChoice {
    /// The model.
    pub model: Model,
    /// The thinking level (off for models that do not reason).
    pub thinking: ThinkingLevel,
}

/// What the user asked for.
#[derive(Debug, Clone, Default)]
pub struct ModelRequest<'a> {
    /// `--provider`.
    pub provider: Option<&'a str>,
    /// `--model`.
    pub model: Option<&'a str>,
    /// `--thinking`.
    pub thinking: Option<&'a str>,
}

/// Splits a `:<thinking level>` suffix off a model pattern (`qwen3:8b` keeps its colon).
pub fn split_thinking(pattern: &str) -> (&str, Option<ThinkingLevel>) {
    if let Some((model, suffix)) = pattern.rsplit_once(':')
        && let Some(level) = parse_thinking_level(suffix)
    {
        return (model, Some(level));
    }
    (pattern, None)
}

/// Whether `provider` can be called: a key is configured, or its models are on this machine.
pub fn is_available(registry: &ModelRegistry, model: &Model) -> bool {
    registry.api_key_for(&model.provider).is_some() || is_local_url(&model.base_url)
}

/// Chooses the model; `Ok(None)` when nothing is asked for and no provider is configured.
///
/// ```
/// use pi_ai::ModelRegistry;
/// use pi_cli::{ModelRequest, choose_model};
/// use pi_coding_agent::config::Settings;
///
/// let registry = ModelRegistry::builtin().with_env(|_| None);
/// let request = ModelRequest { model: Some("anthropic/claude-sonnet-4-5:high"), ..Default::default() };
/// let choice = choose_model(&request, &Settings::default(), &registry).unwrap().unwrap();
/// assert_eq!(choice.model.id, "claude-sonnet-4-5");
/// assert_eq!(choice.thinking, pi_agent_core::ThinkingLevel::High);
/// // Nothing asked for and no key anywhere: no model.
/// assert!(choose_model(&ModelRequest::default(), &Settings::default(), &registry).unwrap().is_none());
/// ```
pub fn choose_model(
    request: &ModelRequest<'_>,
    settings: &Settings,
    registry: &ModelRegistry,
) -> Result<Option<ModelChoice>, ModelError> {
    let flag_thinking = match request.thinking {
        Some(text) => {
            Some(parse_thinking_level(text).ok_or_else(|| ModelError::UnknownThinkingLevel(text.to_owned()))?)
        }
        None => None,
    };
    let (model, suffix_thinking) = match (request.provider, request.model) {
        (provider, Some(pattern)) => {
            let (pattern, thinking) = split_thinking(pattern);
            (Some(find(registry, provider, pattern)?), thinking)
        }
        (Some(provider), None) => (Some(provider_default(registry, provider)?), None),
        (None, None) => (from_settings(settings, registry)?, None),
    };
    let model = match model {
        Some(model) => model,
        None => match first_available(registry) {
            Some(model) => model,
            None => return Ok(None),
        },
    };
    let thinking = flag_thinking
        .or(suffix_thinking)
        .or(settings.default_thinking_level)
        .unwrap_or(ThinkingLevel::Off);
    let thinking = if model.reasoning { thinking } else { ThinkingLevel::Off };
    Ok(Some(ModelChoice { model, thinking }))
}

fn find(registry: &ModelRegistry, provider: Option<&str>, pattern: &str) -> Result<Model, ModelError> {
    let found = match provider {
        Some(provider) => registry
            .find(provider, pattern)
            .or_else(|| registry.find_by_pattern(&format!("{provider}/{pattern}")))
            .filter(|model| model.provider == provider),
        None => registry.find_by_pattern(pattern),
    };
    found.cloned().ok_or_else(|| {
        ModelError::UnknownModel(match provider {
            Some(provider) => format!("{provider}/{pattern}"),
            None => pattern.to_owned(),
        })
    })
}

fn provider_default(registry: &ModelRegistry, provider: &str) -> Result<Model, ModelError> {
    let preferred = DEFAULT_MODELS
        .iter()
        .find(|(name, _)| *name == provider)
        .and_then(|(_, id)| registry.find(provider, id));
    preferred
        .or_else(|| registry.all().iter().find(|m| m.provider == provider))
        .cloned()
        .ok_or_else(|| ModelError::UnknownProvider(provider.to_owned()))
}

fn from_settings(settings: &Settings, registry: &ModelRegistry) -> Result<Option<Model>, ModelError> {
    match (&settings.default_provider, &settings.default_model) {
        (provider, Some(model)) => find(registry, provider.as_deref(), split_thinking(model).0).map(Some),
        (Some(provider), None) => provider_default(registry, provider).map(Some),
        (None, None) => Ok(None),
    }
}

/// The first model that can be called: configured custom providers first (a `models.json` entry is
/// an explicit choice), then the built-in providers' defaults, in [`DEFAULT_MODELS`] order.
fn first_available(registry: &ModelRegistry) -> Option<Model> {
    let builtin = |m: &Model| DEFAULT_MODELS.iter().any(|(provider, _)| *provider == m.provider);
    if let Some(model) = registry.all().iter().find(|m| !builtin(m) && is_available(registry, m)) {
        return Some(model.clone());
    }
    DEFAULT_MODELS
        .iter()
        .filter_map(|(provider, id)| registry.find(provider, id))
        .find(|m| is_available(registry, m))
        .cloned()
}

/// The `--list-models` table: every callable model matching `search` (case-insensitive, in
/// provider, id or name), or a hint when none can be called.
pub fn list_models(registry: &ModelRegistry, search: &str) -> String {
    let search = search.trim().to_lowercase();
    let models: Vec<&Model> = registry
        .all()
        .iter()
        .filter(|m| is_available(registry, m))
        .filter(|m| {
            search.is_empty()
                || m.provider.to_lowercase().contains(&search)
                || m.id.to_lowercase().contains(&search)
                || m.name.to_lowercase().contains(&search)
        })
        .collect();
    if models.is_empty() {
        return if search.is_empty() {
            "No models available: set an API key (e.g. ANTHROPIC_API_KEY or OPENAI_API_KEY) or add a provider to \
             ~/.pi/agent/models.json.\n"
                .to_owned()
        } else {
            format!("No available model matches \"{search}\".\n")
        };
    }
    let rows: Vec<[String; 6]> = models
        .iter()
        .map(|m| {
            [
                m.provider.clone(),
                m.id.clone(),
                tokens(m.context_window),
                tokens(m.max_tokens),
                yes_no(m.reasoning),
                yes_no(m.input.iter().any(|i| i == "image")),
            ]
        })
        .collect();
    let header = ["provider", "model", "context", "max-out", "thinking", "images"].map(str::to_owned);
    let mut widths = header.clone().map(|h| h.len());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let cells: Vec<String> = row.iter().zip(widths).map(|(cell, w)| format!("{cell:<w$}")).collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

fn tokens(n: u64) -> String {
    if n >= 1_000_000 && n.is_multiple_of(1_000_000) {
        format!("{}M", n / 1_000_000)
    } else if n >= 1000 {
        format!("{}K", n / 1000)
    } else {
        n.to_string()
    }
}

fn yes_no(value: bool) -> String {
    if value { "yes" } else { "no" }.to_owned()
}

/// The one screen shown when no model is configured: how to configure Anthropic, OpenAI or a local
/// OpenAI-compatible server, and how to run the offline demo.
pub fn no_model_help() -> String {
    "pi: no model is configured.\n\
     \n\
     Use one of these, then run pi again:\n\
     \n\
     \x20 Anthropic    export ANTHROPIC_API_KEY=sk-ant-...\n\
     \x20 OpenAI       export OPENAI_API_KEY=sk-...\n\
     \x20 Local server (Ollama, llama.cpp, LM Studio, vLLM): add it to ~/.pi/agent/models.json\n\
     \n\
     \x20   {\n\
     \x20     \"providers\": {\n\
     \x20       \"ollama\": {\n\
     \x20         \"baseUrl\": \"http://localhost:11434/v1\",\n\
     \x20         \"api\": \"openai-completions\",\n\
     \x20         \"apiKey\": \"ollama\",\n\
     \x20         \"models\": [{ \"id\": \"qwen3:8b\" }]\n\
     \x20       }\n\
     \x20     }\n\
     \x20   }\n\
     \n\
     \x20 and pick it with: pi --provider ollama --model qwen3:8b\n\
     \n\
     To see pi work without any of this: pi --demo\n"
        .to_owned()
}

/// `provider/id` of a model, with `:<level>` when thinking is on.
pub fn describe(choice: &ModelChoice) -> String {
    match choice.thinking {
        ThinkingLevel::Off => format!("{}/{}", choice.model.provider, choice.model.id),
        level => format!(
            "{}/{}:{}",
            choice.model.provider,
            choice.model.id,
            thinking_level_name(level)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry(env: &'static [(&'static str, &'static str)]) -> ModelRegistry {
        let json = r#"{"providers": {"ollama": {"baseUrl": "http://localhost:11434/v1", "api": "openai-completions",
            "models": [{"id": "qwen3:8b"}]}}}"#;
        ModelRegistry::from_json(json, "models.json")
            .unwrap()
            .with_env(move |name| env.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned()))
    }

    #[test]
    fn colons_in_ids_are_not_thinking_levels() {
        assert_eq!(split_thinking("qwen3:8b"), ("qwen3:8b", None));
        assert_eq!(split_thinking("gpt-5:high"), ("gpt-5", Some(ThinkingLevel::High)));
    }

    #[test]
    fn provider_and_model_flags() {
        let registry = registry(&[]);
        let request = ModelRequest {
            provider: Some("ollama"),
            model: Some("qwen3:8b"),
            thinking: Some("high"),
        };
        let choice = choose_model(&request, &Settings::default(), &registry)
            .unwrap()
            .unwrap();
        assert_eq!(
            describe(&choice),
            "ollama/qwen3:8b",
            "no thinking for a model that cannot reason"
        );
        let request = ModelRequest {
            provider: Some("anthropic"),
            ..Default::default()
        };
        let choice = choose_model(&request, &Settings::default(), &registry)
            .unwrap()
            .unwrap();
        assert_eq!(choice.model.id, "claude-sonnet-4-5");
    }

    #[test]
    fn errors() {
        let registry = registry(&[]);
        let unknown = ModelRequest {
            model: Some("nope-9000"),
            ..Default::default()
        };
        assert_eq!(
            choose_model(&unknown, &Settings::default(), &registry)
                .unwrap_err()
                .to_string(),
            "Unknown model: nope-9000 (see pi --list-models)"
        );
        let bad = ModelRequest {
            model: Some("gpt-5"),
            thinking: Some("lots"),
            ..Default::default()
        };
        assert!(matches!(
            choose_model(&bad, &Settings::default(), &registry),
            Err(ModelError::UnknownThinkingLevel(_))
        ));
    }

    #[test]
    fn the_first_available_model_wins_when_nothing_is_asked() {
        // The local ollama provider needs no key and was configured explicitly.
        let choice = choose_model(&ModelRequest::default(), &Settings::default(), &registry(&[]))
            .unwrap()
            .unwrap();
        assert_eq!(choice.model.provider, "ollama");
        let keys = ModelRegistry::builtin().with_env(|name| (name == "OPENAI_API_KEY").then(|| "k".to_owned()));
        let choice = choose_model(&ModelRequest::default(), &Settings::default(), &keys)
            .unwrap()
            .unwrap();
        assert_eq!(describe(&choice), "openai/gpt-5.1");
    }

    #[test]
    fn settings_defaults() {
        let settings = Settings::from_json(
            r#"{"defaultProvider": "anthropic", "defaultModel": "claude-haiku-4-5", "defaultThinkingLevel": "low"}"#,
            "s.json",
        )
        .unwrap();
        let choice = choose_model(&ModelRequest::default(), &settings, &registry(&[]))
            .unwrap()
            .unwrap();
        assert_eq!(describe(&choice), "anthropic/claude-haiku-4-5:low");
    }

    #[test]
    fn list_models_shows_callable_models() {
        let table = list_models(&registry(&[("ANTHROPIC_API_KEY", "k")]), "haiku-4-5");
        assert_eq!(
            table,
            "provider   model                      context  max-out  thinking  images\n\
             anthropic  claude-haiku-4-5           200K     64K      yes       yes\n\
             anthropic  claude-haiku-4-5-20251001  200K     64K      yes       yes\n"
        );
        assert!(list_models(&ModelRegistry::builtin().with_env(|_| None), "").starts_with("No models available"));
    }
}
