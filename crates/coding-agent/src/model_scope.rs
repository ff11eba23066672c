//! Scoped models: the models `--models` (or the `enabledModels` setting) names, which model
//! cycling goes through instead of every available model (pi's Ctrl+P, RPC `cycle_model`).

use globset::GlobBuilder;
use pi_agent_core::{Model, ThinkingLevel};
use pi_ai::ModelRegistry;

use crate::model_choice::split_thinking;

/// One model of the scope, with the thinking level its pattern fixed (`sonnet:high`); `None`
/// keeps the session's level when cycling to it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScopedModel {
    /// The model.
    pub model: Model,
    /// The thinking level of its pattern, if it had one.
    pub thinking: Option<ThinkingLevel>,
}

/// Resolves `patterns` against the models that can be called, in order and without duplicates.
/// A pattern with `*`, `?` or `[` is a glob (case-insensitive) matched against `provider/id` and
/// against the id alone; any other pattern names one model as `--model` does. Either may end in
/// `:<thinking level>`. Returns the scope and one warning per pattern that matched nothing
/// (`No models match pattern "…"`, pi's text).
///
/// ```
/// use pi_ai::ModelRegistry;
/// use pi_coding_agent::resolve_model_scope;
/// let registry = ModelRegistry::builtin().with_env(|name| (name == "ANTHROPIC_API_KEY").then(|| "k".to_owned()));
/// let (scope, warnings) = resolve_model_scope(&["anthropic/claude-haiku-4-5:low".to_owned(), "gpt-*".to_owned()], &registry);
/// assert_eq!(scope.len(), 1);
/// assert_eq!(scope[0].model.id, "claude-haiku-4-5");
/// assert_eq!(warnings, ["No models match pattern \"gpt-*\""]);
/// ```
pub fn resolve_model_scope(patterns: &[String], registry: &ModelRegistry) -> (Vec<ScopedModel>, Vec<String>) {
    let mut scope: Vec<ScopedModel> = Vec::new();
    let mut warnings = Vec::new();
    let available: Vec<&Model> = registry.available();
    for pattern in patterns.iter().map(|p| p.trim()).filter(|p| !p.is_empty()) {
        let (body, thinking) = split_thinking(pattern);
        let matched: Vec<&Model> = if body.contains(['*', '?', '[']) {
            match GlobBuilder::new(body).case_insensitive(true).build() {
                Ok(glob) => {
                    let glob = glob.compile_matcher();
                    available
                        .iter()
                        .copied()
                        .filter(|m| glob.is_match(format!("{}/{}", m.provider, m.id)) || glob.is_match(&m.id))
                        .collect()
                }
                Err(_) => Vec::new(),
            }
        } else {
            registry
                .find_by_pattern(body)
                .filter(|m| registry.is_available(m))
                .into_iter()
                .collect()
        };
        if matched.is_empty() {
            warnings.push(format!("No models match pattern \"{pattern}\""));
        }
        for model in matched {
            if !scope
                .iter()
                .any(|s| s.model.provider == model.provider && s.model.id == model.id)
            {
                scope.push(ScopedModel {
                    model: model.clone(),
                    thinking,
                });
            }
        }
    }
    (scope, warnings)
}

/// The model a new session starts with when there is a scope and no `--model`: the settings'
/// default model if it is in the scope, else the first scoped model (pi's rule).
pub fn initial_scoped_model<'a>(
    scope: &'a [ScopedModel],
    default_provider: Option<&str>,
    default_model: Option<&str>,
) -> Option<&'a ScopedModel> {
    let saved = scope.iter().find(|s| {
        default_provider == Some(s.model.provider.as_str())
            && default_model.map(|m| split_thinking(m).0) == Some(&s.model.id)
    });
    saved.or_else(|| scope.first())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> ModelRegistry {
        let json = r#"{"providers": {"local": {"baseUrl": "http://127.0.0.1:1/v1", "api": "openai-completions",
            "apiKey": "k", "models": [{"id": "small-a"}, {"id": "small-b", "reasoning": true}, {"id": "big"}]}}}"#;
        ModelRegistry::from_json(json, "models.json")
            .unwrap()
            .with_env(|_| None)
    }

    fn ids(scope: &[ScopedModel]) -> Vec<String> {
        scope.iter().map(|s| s.model.id.clone()).collect()
    }

    #[test]
    fn globs_match_provider_slash_id_or_id_in_any_case() {
        let registry = registry();
        let (scope, warnings) = resolve_model_scope(&["local/SMALL-*".into()], &registry);
        assert_eq!(ids(&scope), ["small-a", "small-b"]);
        assert!(warnings.is_empty());
        let (scope, _) = resolve_model_scope(&["*-b:high".into(), "big".into(), "small-b".into()], &registry);
        assert_eq!(ids(&scope), ["small-b", "big"]);
        assert_eq!(scope[0].thinking, Some(ThinkingLevel::High));
        assert_eq!(scope[1].thinking, None);
    }

    #[test]
    fn unmatched_patterns_warn() {
        let (scope, warnings) = resolve_model_scope(&["nothing*".into(), "zzz".into()], &registry());
        assert!(scope.is_empty());
        assert_eq!(
            warnings,
            [
                "No models match pattern \"nothing*\"",
                "No models match pattern \"zzz\""
            ]
        );
    }

    #[test]
    fn the_saved_default_wins_when_it_is_in_scope() {
        let (scope, _) = resolve_model_scope(&["small-*".into()], &registry());
        assert_eq!(initial_scoped_model(&scope, None, None).unwrap().model.id, "small-a");
        assert_eq!(
            initial_scoped_model(&scope, Some("local"), Some("small-b"))
                .unwrap()
                .model
                .id,
            "small-b"
        );
        assert_eq!(
            initial_scoped_model(&scope, Some("local"), Some("big"))
                .unwrap()
                .model
                .id,
            "small-a"
        );
    }
}
