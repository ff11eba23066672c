//! `--list-models` and the screen shown when no model is configured.

use pi_agent_core::Model;
use pi_ai::ModelRegistry;
use pi_tools::{CaseTieBreak, collation_key};

/// The `--list-models` table as pi 0.73.1 prints it: every callable model matching `search`
/// (case-insensitive, in provider, id or name), sorted by provider then id the way JavaScript's
/// `localeCompare` sorts them, every column padded (so lines end in spaces, as pi's do); or a hint
/// when none can be called.
pub fn list_models(registry: &ModelRegistry, search: &str) -> String {
    let search = search.trim().to_lowercase();
    let mut models: Vec<&Model> = registry
        .available()
        .into_iter()
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
    // As pi: `a.provider.localeCompare(b.provider)`, then the same of the ids.
    models.sort_by_cached_key(|m| {
        (
            collation_key(&m.provider, CaseTieBreak::LowerFirst),
            collation_key(&m.id, CaseTieBreak::LowerFirst),
        )
    });
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
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let cells: Vec<String> = row.iter().zip(widths).map(|(cell, w)| format!("{cell:<w$}")).collect();
        out.push_str(&cells.join("  "));
        out.push('\n');
    }
    out
}

/// pi's `formatTokenCount`: `200K`, `1M`, `65.5K`, `1.0M` (one decimal as JavaScript's `toFixed(1)`,
/// which rounds an exact half up).
fn tokens(n: u64) -> String {
    if n >= 1_000_000 {
        scaled(n, 1_000_000, "M")
    } else if n >= 1000 {
        scaled(n, 1000, "K")
    } else {
        n.to_string()
    }
}

fn scaled(n: u64, unit: u64, suffix: &str) -> String {
    if n.is_multiple_of(unit) {
        return format!("{}{suffix}", n / unit);
    }
    // A quotient that is exactly half a tenth (an odd number of quarters) is a tie, which
    // `toFixed` rounds up and Rust's formatting to even; every other quotient is formatted from
    // the same double by both.
    let quarter = unit / 4;
    if n.is_multiple_of(quarter) && (n / quarter) % 2 == 1 {
        let tenths = (n * 10).div_ceil(unit);
        return format!("{}.{}{suffix}", tenths / 10, tenths % 10);
    }
    #[allow(clippy::cast_precision_loss)] // token counts are far below 2^53
    let value = n as f64 / unit as f64;
    format!("{value:.1}{suffix}")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_models_shows_callable_models() {
        let registry = ModelRegistry::builtin().with_env(|name| (name == "ANTHROPIC_API_KEY").then(|| "k".to_owned()));
        let table = list_models(&registry, "haiku-4-5");
        assert_eq!(
            table,
            "provider   model                      context  max-out  thinking  images\n\
             anthropic  claude-haiku-4-5           200K     64K      yes       yes   \n\
             anthropic  claude-haiku-4-5-20251001  200K     64K      yes       yes   \n"
        );
        assert!(list_models(&ModelRegistry::builtin().with_env(|_| None), "").starts_with("No models available"));
    }

    #[test]
    fn token_counts_as_pi_formats_them() {
        for (n, text) in [
            (999, "999"),
            (4096, "4.1K"),
            (65_536, "65.5K"),
            (16_384, "16.4K"),
            (200_000, "200K"),
            (1_250, "1.3K"),
            (1_150, "1.1K"),
            (1_048_576, "1.0M"),
            (2_000_000, "2M"),
            (1_750_000, "1.8M"),
            (262_144, "262.1K"),
        ] {
            assert_eq!(tokens(n), text, "{n}");
        }
    }
}
