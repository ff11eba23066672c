//! Which model a session uses: the requested provider / model (with `provider/id` and `:thinking`,
//! pi's `--provider` / `--model` / `--thinking`), else the settings' defaults, else the first
//! provider that is configured.

use pi_agent_core::{Model, ThinkingLevel};
use pi_ai::ModelRegistry;

use crate::config::{Settings, parse_thinking_level, thinking_level_name};

/// The model each built-in provider starts with when only the provider is known, in the order
/// pi 0.73.1 tries them for the first available model (its `defaultModelPerProvider`).
pub const DEFAULT_MODELS: &[(&str, &str)] = &[
    ("amazon-bedrock", "us.anthropic.claude-opus-4-6-v1"),
    ("anthropic", "claude-opus-4-7"),
    ("openai", "gpt-5.4"),
    ("azure-openai-responses", "gpt-5.4"),
    ("openai-codex", "gpt-5.5"),
    ("deepseek", "deepseek-v4-pro"),
    ("google", "gemini-3.1-pro-preview"),
    ("google-vertex", "gemini-3.1-pro-preview"),
    ("github-copilot", "gpt-5.4"),
    ("openrouter", "moonshotai/kimi-k2.6"),
    ("vercel-ai-gateway", "zai/glm-5.1"),
    ("xai", "grok-4.20-0309-reasoning"),
    ("groq", "openai/gpt-oss-120b"),
    ("cerebras", "zai-glm-4.7"),
    ("zai", "glm-5.1"),
    ("mistral", "devstral-medium-latest"),
    ("minimax", "MiniMax-M2.7"),
    ("minimax-cn", "MiniMax-M2.7"),
    ("moonshotai", "kimi-k2.6"),
    ("moonshotai-cn", "kimi-k2.6"),
    ("huggingface", "moonshotai/Kimi-K2.6"),
    ("fireworks", "accounts/fireworks/models/kimi-k2p6"),
    ("opencode", "kimi-k2.6"),
    ("opencode-go", "kimi-k2.6"),
    ("kimi-coding", "kimi-for-coding"),
    ("cloudflare-workers-ai", "@cf/moonshotai/kimi-k2.6"),
    ("cloudflare-ai-gateway", "workers-ai/@cf/moonshotai/kimi-k2.6"),
    ("xiaomi", "mimo-v2.5-pro"),
    ("xiaomi-token-plan-cn", "mimo-v2.5-pro"),
    ("xiaomi-token-plan-ams", "mimo-v2.5-pro"),
    ("xiaomi-token-plan-sgp", "mimo-v2.5-pro"),
];

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

/// The thinking level when neither the command line nor the settings give one (pi's `medium`).
pub const DEFAULT_THINKING_LEVEL: ThinkingLevel = ThinkingLevel::Medium;

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

/// Chooses the model; `Ok(None)` when nothing is asked for and no provider is configured.
///
/// ```
/// use pi_ai::ModelRegistry;
/// use pi_coding_agent::config::Settings;
/// use pi_coding_agent::{ModelRequest, choose_model};
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
        .unwrap_or(DEFAULT_THINKING_LEVEL);
    let thinking = model.clamp_thinking_level(thinking);
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
    let builtin = |m: &Model| pi_ai::builtin_providers().any(|provider| provider.name == m.provider);
    let available = registry.available();
    if let Some(model) = available.iter().find(|m| !builtin(m)) {
        return Some((*model).clone());
    }
    DEFAULT_MODELS
        .iter()
        .find_map(|(provider, id)| available.iter().find(|m| m.provider == *provider && m.id == *id))
        .or_else(|| available.first())
        .map(|model| (*model).clone())
}

/// `provider/id` of the model, with `:<level>` when thinking is on (as `--model` takes it).
impl std::fmt::Display for ModelChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.thinking {
            ThinkingLevel::Off => write!(f, "{}/{}", self.model.provider, self.model.id),
            level => write!(
                f,
                "{}/{}:{}",
                self.model.provider,
                self.model.id,
                thinking_level_name(level)
            ),
        }
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
            choice.to_string(),
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
        assert_eq!(choice.model.id, "claude-opus-4-7", "pi 0.73.1's default for anthropic");
        let request = ModelRequest {
            provider: Some("openrouter"),
            ..Default::default()
        };
        let choice = choose_model(&request, &Settings::default(), &registry)
            .unwrap()
            .unwrap();
        assert_eq!(choice.model.id, "moonshotai/kimi-k2.6");
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
    fn every_built_in_provider_has_a_default_model_in_the_catalog() {
        let registry = ModelRegistry::builtin();
        for (provider, id) in DEFAULT_MODELS {
            assert!(registry.find(provider, id).is_some(), "{provider}/{id}");
        }
        for provider in pi_ai::builtin_providers() {
            assert!(
                DEFAULT_MODELS.iter().any(|(name, _)| *name == provider.name),
                "{}",
                provider.name
            );
        }
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
        assert_eq!(
            choice.to_string(),
            "openai/gpt-5.4:medium",
            "pi's default model and level"
        );
        // A provider's default model, as pi 0.73.1 picks it for an OpenRouter-only user.
        let keys = ModelRegistry::builtin().with_env(|name| (name == "OPENROUTER_API_KEY").then(|| "k".to_owned()));
        let choice = choose_model(&ModelRequest::default(), &Settings::default(), &keys)
            .unwrap()
            .unwrap();
        assert_eq!(
            (choice.model.provider.as_str(), choice.model.id.as_str()),
            ("openrouter", "moonshotai/kimi-k2.6")
        );
    }

    #[test]
    fn reasoning_models_start_at_medium_and_levels_are_clamped() {
        let json = r#"{"providers": {"local": {"baseUrl": "http://localhost:1/v1", "api": "openai-completions",
            "models": [{"id": "plain"}, {"id": "think", "reasoning": true},
                       {"id": "max", "reasoning": true, "thinkingLevelMap": {"xhigh": "max", "minimal": null}}]}}}"#;
        let registry = ModelRegistry::from_json(json, "models.json").unwrap();
        let choose = |model: &'static str, thinking: Option<&'static str>| {
            let request = ModelRequest {
                provider: Some("local"),
                model: Some(model),
                thinking,
            };
            choose_model(&request, &Settings::default(), &registry)
                .unwrap()
                .unwrap()
                .thinking
        };
        assert_eq!(choose("think", None), ThinkingLevel::Medium);
        assert_eq!(choose("plain", None), ThinkingLevel::Off);
        // Without a `thinkingLevelMap` naming it, `xhigh` is not offered: pi clamps it to high.
        assert_eq!(choose("think", Some("xhigh")), ThinkingLevel::High);
        assert_eq!(choose("max", Some("xhigh")), ThinkingLevel::Xhigh);
        // A level the map sets to null goes to the next one up.
        assert_eq!(choose("max", Some("minimal")), ThinkingLevel::Low);
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
        assert_eq!(choice.to_string(), "anthropic/claude-haiku-4-5:low");
    }
}
