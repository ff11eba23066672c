//! `--list-models` and the screen shown when no model is configured.

use pi_agent_core::Model;
use pi_ai::ModelRegistry;

/// The `--list-models` table: every callable model matching `search` (case-insensitive, in
/// provider, id or name), or a hint when none can be called.
pub fn list_models(registry: &ModelRegistry, search: &str) -> String {
    let search = search.trim().to_lowercase();
    let models: Vec<&Model> = registry
        .all()
        .iter()
        .filter(|m| registry.is_available(m))
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
             anthropic  claude-haiku-4-5           200K     64K      yes       yes\n\
             anthropic  claude-haiku-4-5-20251001  200K     64K      yes       yes\n"
        );
        assert!(list_models(&ModelRegistry::builtin().with_env(|_| None), "").starts_with("No models available"));
    }
}
