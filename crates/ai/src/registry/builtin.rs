//! Built-in providers and models.
//!
//! Prices are dollars per million tokens as Anthropic (<https://www.anthropic.com/pricing>) and
//! OpenAI (<https://openai.com/api/pricing/>) published them at the time of writing; context
//! windows and output limits are from the providers' model pages of the same time. Override any
//! of them in `models.json` (`modelOverrides`, or a model with the same id).

use pi_agent_core::{Model, ModelCost};

/// What pi knows about a provider without configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KnownProvider {
    /// Provider name as used in `models.json` and `provider/id` patterns.
    pub name: &'static str,
    /// Environment variable holding its API key.
    pub env_var: &'static str,
    /// Default base URL, if pi can reach it without configuration.
    pub base_url: Option<&'static str>,
    /// Default wire API of its models.
    pub api: Option<&'static str>,
}

const fn provider(
    name: &'static str,
    env_var: &'static str,
    base_url: Option<&'static str>,
    api: Option<&'static str>,
) -> KnownProvider {
    KnownProvider {
        name,
        env_var,
        base_url,
        api,
    }
}

const COMPLETIONS: Option<&str> = Some("openai-completions");

/// Providers with a usual API-key variable (pi's environment key table) and, where the API is one
/// of ours, their default base URL.
pub(crate) const KNOWN_PROVIDERS: &[KnownProvider] = &[
    provider(
        "anthropic",
        "ANTHROPIC_API_KEY",
        Some("https://api.anthropic.com"),
        Some("anthropic-messages"),
    ),
    provider(
        "openai",
        "OPENAI_API_KEY",
        Some("https://api.openai.com/v1"),
        Some("openai-responses"),
    ),
    provider(
        "openrouter",
        "OPENROUTER_API_KEY",
        Some("https://openrouter.ai/api/v1"),
        COMPLETIONS,
    ),
    provider(
        "groq",
        "GROQ_API_KEY",
        Some("https://api.groq.com/openai/v1"),
        COMPLETIONS,
    ),
    provider("xai", "XAI_API_KEY", Some("https://api.x.ai/v1"), COMPLETIONS),
    provider(
        "deepseek",
        "DEEPSEEK_API_KEY",
        Some("https://api.deepseek.com/v1"),
        COMPLETIONS,
    ),
    provider(
        "mistral",
        "MISTRAL_API_KEY",
        Some("https://api.mistral.ai/v1"),
        COMPLETIONS,
    ),
    provider(
        "cerebras",
        "CEREBRAS_API_KEY",
        Some("https://api.cerebras.ai/v1"),
        COMPLETIONS,
    ),
    provider(
        "together",
        "TOGETHER_API_KEY",
        Some("https://api.together.xyz/v1"),
        COMPLETIONS,
    ),
    provider(
        "fireworks",
        "FIREWORKS_API_KEY",
        Some("https://api.fireworks.ai/inference/v1"),
        COMPLETIONS,
    ),
    provider("google", "GEMINI_API_KEY", None, None),
    provider("zai", "ZAI_API_KEY", None, None),
    provider("minimax", "MINIMAX_API_KEY", None, None),
    provider("moonshotai", "MOONSHOT_API_KEY", None, None),
    provider("huggingface", "HF_TOKEN", None, None),
    provider("vercel-ai-gateway", "AI_GATEWAY_API_KEY", None, None),
    provider("opencode", "OPENCODE_API_KEY", None, None),
];

/// The known provider called `name`.
pub(crate) fn known_provider(name: &str) -> Option<&'static KnownProvider> {
    KNOWN_PROVIDERS.iter().find(|known| known.name == name)
}

/// One catalog row: id, name, reasoning, images, context window, max output, prices
/// (input, output, cache read, cache write).
type Row = (&'static str, &'static str, bool, bool, u64, u64, [f64; 4]);

#[rustfmt::skip]
const ANTHROPIC: &[Row] = &[
    ("claude-opus-4-5",            "Claude Opus 4.5",   true,  true,  200_000,   64_000,  [5.0, 25.0, 0.5, 6.25]),
    ("claude-opus-4-5-20251101",   "Claude Opus 4.5",   true,  true,  200_000,   64_000,  [5.0, 25.0, 0.5, 6.25]),
    ("claude-opus-4-1",            "Claude Opus 4.1",   true,  true,  200_000,   32_000,  [15.0, 75.0, 1.5, 18.75]),
    ("claude-opus-4-1-20250805",   "Claude Opus 4.1",   true,  true,  200_000,   32_000,  [15.0, 75.0, 1.5, 18.75]),
    ("claude-opus-4-0",            "Claude Opus 4",     true,  true,  200_000,   32_000,  [15.0, 75.0, 1.5, 18.75]),
    ("claude-opus-4-20250514",     "Claude Opus 4",     true,  true,  200_000,   32_000,  [15.0, 75.0, 1.5, 18.75]),
    ("claude-sonnet-4-5",          "Claude Sonnet 4.5", true,  true,  200_000,   64_000,  [3.0, 15.0, 0.3, 3.75]),
    ("claude-sonnet-4-5-20250929", "Claude Sonnet 4.5", true,  true,  200_000,   64_000,  [3.0, 15.0, 0.3, 3.75]),
    ("claude-sonnet-4-0",          "Claude Sonnet 4",   true,  true,  200_000,   64_000,  [3.0, 15.0, 0.3, 3.75]),
    ("claude-sonnet-4-20250514",   "Claude Sonnet 4",   true,  true,  200_000,   64_000,  [3.0, 15.0, 0.3, 3.75]),
    ("claude-3-7-sonnet-latest",   "Claude Sonnet 3.7", true,  true,  200_000,   64_000,  [3.0, 15.0, 0.3, 3.75]),
    ("claude-3-7-sonnet-20250219", "Claude Sonnet 3.7", true,  true,  200_000,   64_000,  [3.0, 15.0, 0.3, 3.75]),
    ("claude-haiku-4-5",           "Claude Haiku 4.5",  true,  true,  200_000,   64_000,  [1.0, 5.0, 0.1, 1.25]),
    ("claude-haiku-4-5-20251001",  "Claude Haiku 4.5",  true,  true,  200_000,   64_000,  [1.0, 5.0, 0.1, 1.25]),
    ("claude-3-5-haiku-latest",    "Claude Haiku 3.5",  false, true,  200_000,   8_192,   [0.8, 4.0, 0.08, 1.0]),
    ("claude-3-5-haiku-20241022",  "Claude Haiku 3.5",  false, true,  200_000,   8_192,   [0.8, 4.0, 0.08, 1.0]),
];

#[rustfmt::skip]
const OPENAI: &[Row] = &[
    ("gpt-4o",       "GPT-4o",       false, true,  128_000,   16_384,  [2.5, 10.0, 1.25, 0.0]),
    ("gpt-4o-mini",  "GPT-4o mini",  false, true,  128_000,   16_384,  [0.15, 0.6, 0.075, 0.0]),
    ("gpt-4.1",      "GPT-4.1",      false, true,  1_047_576, 32_768,  [2.0, 8.0, 0.5, 0.0]),
    ("gpt-4.1-mini", "GPT-4.1 mini", false, true,  1_047_576, 32_768,  [0.4, 1.6, 0.1, 0.0]),
    ("gpt-4.1-nano", "GPT-4.1 nano", false, true,  1_047_576, 32_768,  [0.1, 0.4, 0.025, 0.0]),
    ("o3",           "o3",           true,  true,  200_000,   100_000, [2.0, 8.0, 0.5, 0.0]),
    ("o3-mini",      "o3-mini",      true,  false, 200_000,   100_000, [1.1, 4.4, 0.55, 0.0]),
    ("o4-mini",      "o4-mini",      true,  true,  200_000,   100_000, [1.1, 4.4, 0.275, 0.0]),
    ("gpt-5",        "GPT-5",        true,  true,  400_000,   128_000, [1.25, 10.0, 0.125, 0.0]),
    ("gpt-5-mini",   "GPT-5 mini",   true,  true,  400_000,   128_000, [0.25, 2.0, 0.025, 0.0]),
    ("gpt-5-nano",   "GPT-5 nano",   true,  true,  400_000,   128_000, [0.05, 0.4, 0.005, 0.0]),
    ("gpt-5.1",      "GPT-5.1",      true,  true,  400_000,   128_000, [1.25, 10.0, 0.125, 0.0]),
];

fn rows(provider_name: &str, rows: &[Row]) -> impl Iterator<Item = Model> {
    let known = known_provider(provider_name);
    let base_url = known.and_then(|known| known.base_url).unwrap_or_default().to_owned();
    let api = known.and_then(|known| known.api).unwrap_or_default().to_owned();
    let provider_name = provider_name.to_owned();
    rows.iter().map(
        move |&(id, name, reasoning, images, context_window, max_tokens, [input, output, read, write])| Model {
            id: id.to_owned(),
            name: name.to_owned(),
            api: api.clone(),
            provider: provider_name.clone(),
            base_url: base_url.clone(),
            reasoning,
            input: if images {
                vec!["text".to_owned(), "image".to_owned()]
            } else {
                vec!["text".to_owned()]
            },
            cost: ModelCost {
                input,
                output,
                cache_read: read,
                cache_write: write,
            },
            context_window,
            max_tokens,
            headers: None,
            compat: None,
            thinking_level_map: None,
        },
    )
}

/// Built-in models whose thinking cannot be turned off (pi-ai's `thinkingLevelMap: {off: null}`).
const ALWAYS_THINKING: &[&str] = &["gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-5.1"];

/// The built-in models: Anthropic's over `anthropic-messages`, OpenAI's over `openai-responses`.
pub(crate) fn builtin_models() -> Vec<Model> {
    rows("anthropic", ANTHROPIC)
        .chain(rows("openai", OPENAI).map(|mut model| {
            if ALWAYS_THINKING.contains(&model.id.as_str()) {
                model.thinking_level_map = Some([("off".to_owned(), None)].into_iter().collect());
            }
            model
        }))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_agent_core::ThinkingLevel;

    #[test]
    fn the_gpt_5_family_cannot_stop_thinking() {
        let models = builtin_models();
        let find = |id: &str| models.iter().find(|m| m.id == id).unwrap();
        let gpt5 = find("gpt-5.1");
        assert_eq!(gpt5.thinking_levels().first(), Some(&ThinkingLevel::Minimal));
        assert_eq!(gpt5.clamp_thinking_level(ThinkingLevel::Off), ThinkingLevel::Minimal);
        assert_eq!(find("o3").thinking_levels().first(), Some(&ThinkingLevel::Off));
        assert_eq!(
            find("claude-sonnet-4-5").thinking_levels().last(),
            Some(&ThinkingLevel::High)
        );
    }
}
