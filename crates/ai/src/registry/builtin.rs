//! Built-in providers and models: pi-ai 0.73.1's catalog, generated into [`catalog`] by
//! `cargo xtask models` (see `docs/xtask.md`), and how each provider's key is found in the
//! environment (pi-ai's `env-api-keys`).
//!
//! The catalog is Rust data rather than embedded JSON so that nothing is parsed at start-up:
//! turning it into [`Model`]s costs the allocations only. Override any of it in `models.json`
//! (`modelOverrides`, or a model with the same id).

#[rustfmt::skip]
mod catalog;
mod types;

use std::collections::BTreeMap;

use pi_agent_core::{Model, ModelCost};

pub(crate) use types::{CatalogModel, CatalogProvider};

/// The pi-ai version the catalog was generated from.
pub(crate) const SOURCE_VERSION: &str = catalog::SOURCE_VERSION;

/// Every built-in provider, in pi-ai's order.
pub(crate) fn providers() -> &'static [CatalogProvider] {
    catalog::PROVIDERS
}

/// The built-in provider called `name`.
pub(crate) fn known_provider(name: &str) -> Option<&'static CatalogProvider> {
    catalog::PROVIDERS.iter().find(|provider| provider.name == name)
}

/// The variables `provider`'s key is read from, in pi-ai's order (`ANTHROPIC_OAUTH_TOKEN` before
/// `ANTHROPIC_API_KEY`; `COPILOT_GITHUB_TOKEN`, `GH_TOKEN`, `GITHUB_TOKEN`); empty for a provider
/// pi-ai reads no variable for (`amazon-bedrock`, `openai-codex`, custom providers).
pub(crate) fn env_keys(provider: &str) -> &'static [&'static str] {
    // github-copilot is in the catalog; its variables come from pi-ai like every other's.
    known_provider(provider).map_or(&[], |known| known.env_keys)
}

impl CatalogModel {
    fn to_model(&self, provider: &str) -> Model {
        let [input, output, cache_read, cache_write] = self.cost;
        Model {
            id: self.id.to_owned(),
            name: self.name.to_owned(),
            api: self.api.to_owned(),
            provider: provider.to_owned(),
            base_url: self.base_url.to_owned(),
            reasoning: self.reasoning,
            input: self.input.iter().map(|kind| (*kind).to_owned()).collect(),
            cost: ModelCost {
                input,
                output,
                cache_read,
                cache_write,
            },
            context_window: self.context_window,
            max_tokens: self.max_tokens,
            headers: (!self.headers.is_empty()).then(|| {
                self.headers
                    .iter()
                    .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                    .collect::<BTreeMap<_, _>>()
            }),
            // The generator wrote each `compat` from a JSON object; it parses.
            compat: self.compat.and_then(|text| serde_json::from_str(text).ok()),
            thinking_level_map: (!self.thinking_level_map.is_empty()).then(|| {
                self.thinking_level_map
                    .iter()
                    .map(|(level, value)| ((*level).to_owned(), value.map(str::to_owned)))
                    .collect()
            }),
        }
    }
}

/// The built-in models, provider by provider in pi-ai's order.
pub(crate) fn builtin_models() -> Vec<Model> {
    let count = catalog::PROVIDERS.iter().map(|provider| provider.models.len()).sum();
    let mut models = Vec::with_capacity(count);
    for provider in catalog::PROVIDERS {
        models.extend(provider.models.iter().map(|model| model.to_model(provider.name)));
    }
    models
}

/// Whether `provider` has credentials in the environment that are not a key pi-ai reads itself
/// (pi-ai answers `"<authenticated>"` for them without calling out):
///
/// * `google-vertex`: Application Default Credentials (the file `GOOGLE_APPLICATION_CREDENTIALS`
///   names, else `~/.config/gcloud/application_default_credentials.json`, exists), with
///   `GOOGLE_CLOUD_PROJECT` or `GCLOUD_PROJECT`, and `GOOGLE_CLOUD_LOCATION`;
/// * `amazon-bedrock`: `AWS_PROFILE`, `AWS_ACCESS_KEY_ID` with `AWS_SECRET_ACCESS_KEY`,
///   `AWS_BEARER_TOKEN_BEDROCK`, `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`,
///   `AWS_CONTAINER_CREDENTIALS_FULL_URI` or `AWS_WEB_IDENTITY_TOKEN_FILE`.
///
/// `file_exists` is asked about the ADC file only when the project and location are set.
pub(crate) fn has_ambient_credentials(
    provider: &str,
    env: &dyn Fn(&str) -> Option<String>,
    file_exists: &dyn Fn(&std::path::Path) -> bool,
) -> bool {
    let set = |name: &str| env(name).is_some_and(|value| !value.is_empty());
    match provider {
        "google-vertex" => {
            let project = set("GOOGLE_CLOUD_PROJECT") || set("GCLOUD_PROJECT");
            if !(project && set("GOOGLE_CLOUD_LOCATION")) {
                return false;
            }
            let file = match env("GOOGLE_APPLICATION_CREDENTIALS").filter(|path| !path.is_empty()) {
                Some(path) => std::path::PathBuf::from(path),
                None => match env("HOME").filter(|home| !home.is_empty()) {
                    Some(home) => std::path::Path::new(&home)
                        .join(".config")
                        .join("gcloud")
                        .join("application_default_credentials.json"),
                    None => return false,
                },
            };
            file_exists(&file)
        }
        "amazon-bedrock" => {
            set("AWS_PROFILE")
                || (set("AWS_ACCESS_KEY_ID") && set("AWS_SECRET_ACCESS_KEY"))
                || set("AWS_BEARER_TOKEN_BEDROCK")
                || set("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
                || set("AWS_CONTAINER_CREDENTIALS_FULL_URI")
                || set("AWS_WEB_IDENTITY_TOKEN_FILE")
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_agent_core::ThinkingLevel;
    use std::collections::BTreeSet;

    #[test]
    fn the_catalog_is_pi_ai_0_73_1s() {
        // The generated file's header is checked by xtask (`models::tests`), which writes it.
        assert_eq!(SOURCE_VERSION, "0.73.1");
        assert_eq!(providers().len(), 31);
        let models = builtin_models();
        assert_eq!(models.len(), 969);
        let apis: BTreeSet<&str> = models.iter().map(|m| m.api.as_str()).collect();
        assert_eq!(
            apis.into_iter().collect::<Vec<_>>(),
            [
                "anthropic-messages",
                "azure-openai-responses",
                "bedrock-converse-stream",
                "google-generative-ai",
                "google-vertex",
                "mistral-conversations",
                "openai-codex-responses",
                "openai-completions",
                "openai-responses"
            ]
        );
        let mut seen = BTreeSet::new();
        for model in &models {
            assert!(
                seen.insert((&model.provider, &model.id)),
                "{}/{} twice",
                model.provider,
                model.id
            );
            assert!(!model.name.is_empty() && model.context_window > 0 && model.max_tokens > 0);
        }
        // Every compat text parses (`to_model` would drop one that did not).
        for provider in providers() {
            for model in provider.models {
                if let Some(text) = model.compat {
                    let value: serde_json::Value = serde_json::from_str(text).unwrap();
                    assert!(value.is_object(), "{}/{}", provider.name, model.id);
                }
            }
        }
    }

    #[test]
    fn every_field_pi_has_comes_through() {
        let models = builtin_models();
        let find = |provider: &str, id: &str| {
            models
                .iter()
                .find(|m| m.provider == provider && m.id == id)
                .unwrap_or_else(|| panic!("{provider}/{id}"))
        };
        let gpt5 = find("openai", "gpt-5.1");
        assert_eq!(gpt5.api, "openai-responses");
        assert_eq!(gpt5.base_url, "https://api.openai.com/v1");
        assert_eq!(gpt5.thinking_levels().first(), Some(&ThinkingLevel::Minimal));
        assert_eq!(gpt5.clamp_thinking_level(ThinkingLevel::Off), ThinkingLevel::Minimal);
        let copilot = find("github-copilot", "gpt-4.1");
        assert_eq!(
            copilot
                .headers
                .as_ref()
                .and_then(|h| h.get("Editor-Version"))
                .map(String::as_str),
            Some("vscode/1.107.0")
        );
        let sonnet = find("anthropic", "claude-sonnet-4-5");
        assert_eq!(sonnet.cost.input, 3.0);
        assert_eq!(sonnet.cost.cache_write, 3.75);
        assert_eq!(sonnet.input, ["text", "image"]);
        let with_compat = models.iter().filter(|m| m.compat.is_some()).count();
        let with_map = models.iter().filter(|m| m.thinking_level_map.is_some()).count();
        let with_headers = models.iter().filter(|m| m.headers.is_some()).count();
        assert_eq!((with_compat, with_map, with_headers), (71, 157, 28));
    }

    #[test]
    fn providers_default_to_their_first_models_api_and_base_url() {
        let groq = known_provider("groq").unwrap();
        assert_eq!(
            (groq.api, groq.base_url),
            ("openai-completions", "https://api.groq.com/openai/v1")
        );
        assert_eq!(env_keys("anthropic"), ["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"]);
        assert_eq!(
            env_keys("github-copilot"),
            ["COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"]
        );
        assert_eq!(env_keys("moonshotai-cn"), ["MOONSHOT_API_KEY"]);
        assert!(env_keys("amazon-bedrock").is_empty());
        assert!(env_keys("openai-codex").is_empty());
        assert!(env_keys("ollama").is_empty());
    }

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned())
    }

    #[test]
    fn bedrock_credentials_as_pi_ai_sees_them() {
        let never = |_: &std::path::Path| -> bool { panic!("bedrock reads no file") };
        for vars in [
            &[("AWS_PROFILE", "dev")][..],
            &[("AWS_ACCESS_KEY_ID", "AKIA"), ("AWS_SECRET_ACCESS_KEY", "s")],
            &[("AWS_BEARER_TOKEN_BEDROCK", "t")],
            &[("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/creds")],
            &[("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://169.254.170.2/creds")],
            &[("AWS_WEB_IDENTITY_TOKEN_FILE", "/var/run/token")],
        ] {
            let vars: &'static [(&str, &str)] = vars;
            assert!(
                has_ambient_credentials("amazon-bedrock", &env(vars), &never),
                "{vars:?}"
            );
        }
        for vars in [
            &[][..],
            &[("AWS_ACCESS_KEY_ID", "AKIA")],
            &[("AWS_PROFILE", "")],
            &[("AWS_REGION", "us-east-1")],
        ] {
            let vars: &'static [(&str, &str)] = vars;
            assert!(
                !has_ambient_credentials("amazon-bedrock", &env(vars), &never),
                "{vars:?}"
            );
        }
        assert!(!has_ambient_credentials(
            "openai",
            &env(&[("AWS_PROFILE", "dev")]),
            &never
        ));
    }

    #[test]
    fn vertex_application_default_credentials_as_pi_ai_sees_them() {
        let all = &[
            ("GOOGLE_CLOUD_PROJECT", "p"),
            ("GOOGLE_CLOUD_LOCATION", "us-central1"),
            ("HOME", "/home/u"),
        ];
        let adc = |path: &std::path::Path| {
            path == std::path::Path::new("/home/u/.config/gcloud/application_default_credentials.json")
        };
        assert!(has_ambient_credentials("google-vertex", &env(all), &adc));
        assert!(!has_ambient_credentials("google-vertex", &env(all), &|_| false));
        let gcloud = &[
            ("GCLOUD_PROJECT", "p"),
            ("GOOGLE_CLOUD_LOCATION", "l"),
            ("HOME", "/home/u"),
        ];
        assert!(has_ambient_credentials("google-vertex", &env(gcloud), &adc));
        let named = &[
            ("GOOGLE_CLOUD_PROJECT", "p"),
            ("GOOGLE_CLOUD_LOCATION", "l"),
            ("GOOGLE_APPLICATION_CREDENTIALS", "/keys/sa.json"),
            ("HOME", "/home/u"),
        ];
        // The named file replaces the default one.
        assert!(!has_ambient_credentials("google-vertex", &env(named), &adc));
        assert!(has_ambient_credentials("google-vertex", &env(named), &|p| p
            == std::path::Path::new("/keys/sa.json")));
        let no_location = &[("GOOGLE_CLOUD_PROJECT", "p"), ("HOME", "/home/u")];
        assert!(!has_ambient_credentials("google-vertex", &env(no_location), &adc));
    }
}
