//! A model registry that changes while pi runs: extensions register and unregister providers
//! (`pi.registerProvider`), and everyone holding the handle sees the change at their next look.

use std::sync::{Arc, RwLock};

use serde_json::Value;

use crate::registry::{ModelRegistry, ProviderConfigError};

/// One registry shared by the session's model boundary ([`Providers`](crate::Providers)) and the
/// program around it, which extensions may change ([`SharedRegistry::register_provider`]).
///
/// [`SharedRegistry::current`] is a snapshot: a caller keeps what it looked at while others
/// change the registry. Clones share one registry.
///
/// ```
/// use pi_ai::{ModelRegistry, SharedRegistry};
/// use serde_json::json;
///
/// let shared = SharedRegistry::new(ModelRegistry::builtin().with_env(|_| None));
/// let seen_by_providers = shared.clone();
/// let proxy = json!({"baseUrl": "http://127.0.0.1:9/v1", "apiKey": "k", "api": "openai-completions",
///     "models": [{"id": "m"}]});
/// shared.register_provider("proxy", &proxy).unwrap();
/// assert!(seen_by_providers.current().find("proxy", "m").is_some());
/// assert!(shared.unregister_provider("proxy"));
/// assert!(seen_by_providers.current().find("proxy", "m").is_none());
/// ```
#[derive(Clone, Debug)]
pub struct SharedRegistry {
    state: Arc<RwLock<State>>,
}

#[derive(Debug)]
struct State {
    /// The registry before any registration (built-ins and `models.json`).
    base: Arc<ModelRegistry>,
    /// Registered providers in order, each config merged over its earlier ones (pi's upsert).
    registered: Vec<(String, Value)>,
    current: Arc<ModelRegistry>,
}

impl SharedRegistry {
    /// Shares `registry`.
    pub fn new(registry: ModelRegistry) -> Self {
        SharedRegistry::from(Arc::new(registry))
    }

    /// The registry now.
    pub fn current(&self) -> Arc<ModelRegistry> {
        self.state
            .read()
            .unwrap_or_else(|poison| poison.into_inner())
            .current
            .clone()
    }

    /// `pi.registerProvider(name, config)`: applied at once ([`ModelRegistry::register_provider`])
    /// and remembered, so that [`SharedRegistry::unregister_provider`] of another provider keeps
    /// it. A config for a name registered before is merged over the earlier one, key by key, as pi
    /// merges them. A refused config changes nothing.
    pub fn register_provider(&self, name: &str, config: &Value) -> Result<(), ProviderConfigError> {
        let mut state = self.state.write().unwrap_or_else(|poison| poison.into_inner());
        let mut next = (*state.current).clone();
        next.register_provider(name, config)?;
        state.current = Arc::new(next);
        match state.registered.iter_mut().find(|(registered, _)| registered == name) {
            Some((_, existing)) => merge_defined(existing, config),
            None => state.registered.push((name.to_owned(), config.clone())),
        }
        Ok(())
    }

    /// `pi.unregisterProvider(name)`: the registry is rebuilt from its base with the other
    /// registered providers, so built-in models the provider had replaced come back. `false` when
    /// `name` was never registered (nothing changes, as in pi).
    pub fn unregister_provider(&self, name: &str) -> bool {
        let mut state = self.state.write().unwrap_or_else(|poison| poison.into_inner());
        let before = state.registered.len();
        state.registered.retain(|(registered, _)| registered != name);
        if state.registered.len() == before {
            return false;
        }
        let mut next = (*state.base).clone();
        for (provider, config) in &state.registered {
            // Each was accepted when registered; one that no longer applies is left out.
            let _ = next.register_provider(provider, config);
        }
        state.current = Arc::new(next);
        true
    }
}

impl From<Arc<ModelRegistry>> for SharedRegistry {
    fn from(registry: Arc<ModelRegistry>) -> Self {
        SharedRegistry {
            state: Arc::new(RwLock::new(State {
                base: registry.clone(),
                registered: Vec::new(),
                current: registry,
            })),
        }
    }
}

impl From<ModelRegistry> for SharedRegistry {
    fn from(registry: ModelRegistry) -> Self {
        SharedRegistry::new(registry)
    }
}

/// pi's upsert: every key `update` defines (not `undefined`, which JSON cannot carry) replaces
/// the stored one.
fn merge_defined(existing: &mut Value, update: &Value) {
    match (existing, update) {
        (Value::Object(existing), Value::Object(update)) => {
            for (key, value) in update {
                existing.insert(key.clone(), value.clone());
            }
        }
        (existing, update) => *existing = update.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shared() -> SharedRegistry {
        SharedRegistry::new(ModelRegistry::builtin().with_env(|_| None))
    }

    #[test]
    fn unregistering_restores_the_builtin_models_a_provider_replaced() {
        let shared = shared();
        let builtin = shared
            .current()
            .all()
            .iter()
            .filter(|m| m.provider == "anthropic")
            .count();
        let config = json!({"baseUrl": "https://proxy.example", "apiKey": "K", "api": "anthropic-messages",
            "models": [{"id": "only"}]});
        shared.register_provider("anthropic", &config).unwrap();
        let now: Vec<_> = shared
            .current()
            .all()
            .iter()
            .filter(|m| m.provider == "anthropic")
            .map(|m| m.id.clone())
            .collect();
        assert_eq!(now, ["only"]);
        assert!(shared.unregister_provider("anthropic"));
        assert_eq!(
            shared
                .current()
                .all()
                .iter()
                .filter(|m| m.provider == "anthropic")
                .count(),
            builtin
        );
        assert!(
            !shared.unregister_provider("anthropic"),
            "a second time: nothing registered"
        );
    }

    #[test]
    fn another_providers_unregistration_keeps_a_registration_merged_over_its_earlier_one() {
        let shared = shared();
        shared
            .register_provider("anthropic", &json!({"baseUrl": "https://first.example"}))
            .unwrap();
        shared
            .register_provider("openai", &json!({"baseUrl": "https://openai-proxy.example"}))
            .unwrap();
        shared
            .register_provider("anthropic", &json!({"headers": {"x-team": "a"}}))
            .unwrap();
        assert!(shared.unregister_provider("openai"));
        let registry = shared.current();
        let model = registry.find("anthropic", "claude-sonnet-4-5").unwrap();
        assert_eq!(
            model.base_url, "https://first.example",
            "the merged config kept its baseUrl"
        );
        assert_eq!(model.headers.as_ref().unwrap()["x-team"], "a");
        assert_ne!(
            registry.find("openai", "gpt-5.1").unwrap().base_url,
            "https://openai-proxy.example"
        );
    }

    #[test]
    fn a_refused_config_changes_nothing() {
        let shared = shared();
        let before = shared.current();
        let error = shared
            .register_provider("p", &json!({"baseUrl": "http://x", "models": [{"id": "m"}]}))
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            r#"Provider p: "apiKey" or "oauth" is required when defining models."#
        );
        let error = shared
            .register_provider(
                "p",
                &json!({"baseUrl": "http://x", "apiKey": "k", "models": [{"id": "m"}]}),
            )
            .unwrap_err();
        assert_eq!(error.to_string(), r#"Provider p, model m: no "api" specified."#);
        let error = shared
            .register_provider(
                "p",
                &json!({"baseUrl": "http://x", "apiKey": "k", "api": "openai-completions",
                    "models": [{"id": "m", "contextWindow": "big"}]}),
            )
            .unwrap_err();
        assert!(
            matches!(&error, ProviderConfigError::Invalid { field, .. } if field == "models[0].contextWindow"),
            "{error:?}"
        );
        assert!(Arc::ptr_eq(&before, &shared.current()));
        assert!(!shared.unregister_provider("p"));
    }

    #[test]
    fn a_model_may_set_its_own_base_url_and_the_api_key_is_the_providers() {
        let shared = shared();
        let config = json!({"baseUrl": "http://a/v1", "apiKey": "literal-key", "api": "openai-completions",
            "authHeader": true, "models": [{"id": "one"}, {"id": "two", "baseUrl": "http://b/v1"}]});
        shared.register_provider("corp", &config).unwrap();
        let registry = shared.current();
        assert_eq!(registry.find("corp", "one").unwrap().base_url, "http://a/v1");
        assert_eq!(registry.find("corp", "two").unwrap().base_url, "http://b/v1");
        assert_eq!(registry.api_key_for("corp").as_deref(), Some("literal-key"));
        assert!(registry.uses_auth_header("corp"));
    }
}
