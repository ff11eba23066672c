//! The model registry: pi's `models.json` format, precise errors for malformed files, API-key
//! resolution with an injected environment, built-in models, pattern lookup.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::PathBuf;

use pi_ai::{ModelRegistry, RegistryError, default_models_path, env_var_for_provider, resolve_config_value};
use serde_json::json;

fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + Send + Sync + 'static {
    let vars: HashMap<String, String> = vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    move |name| vars.get(name).cloned()
}

fn registry(json: &str) -> ModelRegistry {
    ModelRegistry::from_json(json, "models.json")
        .unwrap()
        .with_env(|_| None)
}

fn error(json: &str) -> String {
    ModelRegistry::from_json(json, "/home/me/.pi/agent/models.json")
        .unwrap_err()
        .to_string()
}

const FULL: &str = r#"{
  "providers": {
    "ollama": {
      "baseUrl": "http://localhost:11434/v1",
      "api": "openai-completions",
      "apiKey": "ollama",
      "compat": { "supportsDeveloperRole": false, "supportsReasoningEffort": false },
      "headers": { "x-provider": "p", "x-shared": "provider" },
      "models": [
        { "id": "llama3.1:8b" },
        {
          "id": "gpt-oss:20b",
          "name": "GPT-OSS 20B",
          "reasoning": true,
          "input": ["text", "image"],
          "contextWindow": 131072,
          "maxTokens": 32000,
          "cost": { "input": 0.1, "output": 0.5 },
          "headers": { "x-shared": "model" },
          "compat": { "supportsReasoningEffort": true, "maxTokensField": "max_tokens" }
        },
        { "id": "other", "api": "openai-responses" }
      ]
    }
  }
}"#;

#[test]
fn parses_models_with_pi_defaults_and_merges() {
    let registry = registry(FULL);
    let small = registry.find("ollama", "llama3.1:8b").unwrap();
    assert_eq!(small.name, "llama3.1:8b");
    assert_eq!(small.api, "openai-completions");
    assert_eq!(small.provider, "ollama");
    assert_eq!(small.base_url, "http://localhost:11434/v1");
    assert!(!small.reasoning);
    assert_eq!(small.input, ["text"]);
    assert_eq!(small.context_window, 128_000);
    assert_eq!(small.max_tokens, 16_384);
    assert_eq!(small.cost, pi_ai::ModelCost::default());
    assert_eq!(
        small.compat,
        Some(json!({"supportsDeveloperRole": false, "supportsReasoningEffort": false}))
    );

    let big = registry.find("ollama", "gpt-oss:20b").unwrap();
    assert_eq!(big.name, "GPT-OSS 20B");
    assert!(big.reasoning);
    assert_eq!(big.input, ["text", "image"]);
    assert_eq!(big.context_window, 131_072);
    assert_eq!(big.max_tokens, 32_000);
    assert_eq!(big.cost.input, 0.1);
    assert_eq!(big.cost.output, 0.5);
    assert_eq!(big.cost.cache_read, 0.0);
    let headers = big.headers.as_ref().unwrap();
    assert_eq!(headers["x-provider"], "p");
    assert_eq!(headers["x-shared"], "model");
    assert_eq!(
        big.compat,
        Some(json!({"supportsDeveloperRole": false, "supportsReasoningEffort": true, "maxTokensField": "max_tokens"}))
    );
    assert_eq!(registry.find("ollama", "other").unwrap().api, "openai-responses");
    assert_eq!(registry.api_key_for("ollama").as_deref(), Some("ollama"));
    // Built-ins are still there, first (pi-ai's catalog starts with amazon-bedrock).
    assert_eq!(registry.all()[0].provider, "amazon-bedrock");
    assert!(registry.all().len() > 969);
}

#[test]
fn overrides_built_in_providers() {
    let registry = registry(
        r#"{"providers": {
            "anthropic": {"baseUrl": "https://proxy.example.com", "headers": {"x-proxy": "1"}},
            "openai": {
                "modelOverrides": {"gpt-4o": {"contextWindow": 64000, "cost": {"input": 9}}, "no-such-model": {"name": "x"}},
                "models": [{"id": "gpt-4.1", "name": "Mine"}, {"id": "gpt-brand-new"}]
            }
        }}"#,
    );
    for model in registry.all().iter().filter(|model| model.provider == "anthropic") {
        assert_eq!(model.base_url, "https://proxy.example.com");
        assert_eq!(model.headers.as_ref().unwrap()["x-proxy"], "1");
    }
    let gpt4o = registry.find("openai", "gpt-4o").unwrap();
    assert_eq!(gpt4o.context_window, 64_000);
    assert_eq!(gpt4o.cost.input, 9.0);
    assert_eq!(gpt4o.cost.output, 10.0, "a partial cost keeps the other prices");
    // Same id: replaced, with the provider's defaults (base URL and api of the built-in provider).
    let replaced = registry.find("openai", "gpt-4.1").unwrap();
    assert_eq!(replaced.name, "Mine");
    assert_eq!(replaced.context_window, 128_000);
    assert_eq!(replaced.base_url, "https://api.openai.com/v1");
    assert_eq!(replaced.api, "openai-responses");
    let openai_gpt41 = |m: &&pi_ai::Model| m.provider == "openai" && m.id == "gpt-4.1";
    assert_eq!(registry.all().iter().filter(openai_gpt41).count(), 1);
    let added = registry.find("openai", "gpt-brand-new").unwrap();
    assert_eq!(added.api, "openai-responses");
}

#[test]
fn known_providers_need_no_base_url() {
    let registry = registry(r#"{"providers": {"groq": {"models": [{"id": "llama-3.3-70b-versatile"}]}}}"#);
    let model = registry.find("groq", "llama-3.3-70b-versatile").unwrap();
    assert_eq!(model.base_url, "https://api.groq.com/openai/v1");
    assert_eq!(model.api, "openai-completions");
}

#[test]
fn empty_and_minimal_files() {
    assert_eq!(registry("{}").all().len(), ModelRegistry::builtin().all().len());
    assert_eq!(
        registry(r#"{"providers": {}}"#).all().len(),
        ModelRegistry::builtin().all().len()
    );
    // Fields of newer pi versions are ignored.
    let registry = registry(
        r#"{"providers": {"x": {"baseUrl": "http://h/v1", "api": "openai-completions", "oauth": "radius",
            "models": [{"id": "m", "thinkingLevelMap": {"off": null}, "samplingParams": {"top_k": 5}}]}}}"#,
    );
    assert!(registry.find("x", "m").is_some());
}

#[test]
fn syntax_errors_name_file_line_and_column() {
    let text = "{\n  \"providers\": {\n    \"ollama\": {\n      \"baseUrl\": \"http://x\",,\n    }\n  }\n}\n";
    let serde = serde_json::from_str::<serde_json::Value>(text).unwrap_err();
    let full = serde.to_string();
    let message = &full[..full.find(" at line ").unwrap()];
    assert_eq!(serde.line(), 4);
    assert_eq!(
        error(text),
        format!(
            "/home/me/.pi/agent/models.json:4:{}: invalid JSON: {message}",
            serde.column()
        )
    );

    let truncated = error("{\"providers\": {");
    assert!(
        truncated.starts_with("/home/me/.pi/agent/models.json:1:"),
        "{truncated}"
    );
    assert!(
        truncated.contains("invalid JSON: EOF while parsing an object"),
        "{truncated}"
    );
}

#[test]
fn field_errors_point_at_the_value() {
    let text = r#"{
  "providers": {
    "ollama": {
      "baseUrl": "http://localhost:11434/v1",
      "api": "openai-completions",
      "models": [
        { "id": "a" },
        { "id": "b", "contextWindow": "128k" }
      ]
    }
  }
}"#;
    assert_eq!(
        error(text),
        "/home/me/.pi/agent/models.json:8:39: providers.ollama.models[1].contextWindow: expected a positive integer"
    );
}

#[test]
fn field_error_catalogue() {
    let cases: &[(&str, &str)] = &[
        ("[]", r#"models.json:1:1: expected an object with "providers""#),
        (
            r#"{"providers": []}"#,
            "models.json:1:15: providers: expected an object",
        ),
        (
            r#"{"providers": {"p": 5}}"#,
            "models.json:1:21: providers.p: expected an object",
        ),
        (
            r#"{"providers": {"p": {"baseUrl": 5}}}"#,
            "models.json:1:33: providers.p.baseUrl: expected a string",
        ),
        (
            r#"{"providers": {"p": {"baseUrl": "http://h", "api": "openai-completions", "models": {}}}}"#,
            "models.json:1:84: providers.p.models: expected an array of models",
        ),
        (
            r#"{"providers": {"p": {"baseUrl": "http://h", "api": "openai-completions", "models": [{"name": "x"}]}}}"#,
            r#"models.json:1:85: providers.p.models[0]: missing required field "id""#,
        ),
        (
            r#"{"providers": {"p": {"api": "openai-completions", "models": [{"id": "x"}]}}}"#,
            r#"models.json:1:21: providers.p: "baseUrl" is required when defining custom models"#,
        ),
        (
            r#"{"providers": {"p": {"baseUrl": "http://h", "models": [{"id": "x"}]}}}"#,
            r#"models.json:1:56: providers.p.models[0]: no "api" specified; set "api" on the provider or the model"#,
        ),
        (
            r#"{"providers": {"p": {"baseUrl": "http://h", "api": "a", "models": [{"id": "x", "input": ["text", "video"]}]}}}"#,
            r#"models.json:1:98: providers.p.models[0].input[1]: expected "text" or "image""#,
        ),
        (
            r#"{"providers": {"p": {"baseUrl": "http://h", "api": "a", "models": [{"id": "x", "cost": {"input": -1}}]}}}"#,
            "models.json:1:98: providers.p.models[0].cost.input: expected a number (zero or more)",
        ),
        (
            r#"{"providers": {"p": {"baseUrl": "http://h", "api": "a", "models": [{"id": "x", "reasoning": "yes"}]}}}"#,
            "models.json:1:93: providers.p.models[0].reasoning: expected true or false",
        ),
        (
            r#"{"providers": {"p": {"headers": {"x-a": 1}}}}"#,
            "models.json:1:41: providers.p.headers.x-a: expected a string",
        ),
        (
            r#"{"providers": {"my.proxy": {"apiKey": true}}}"#,
            r#"models.json:1:39: providers["my.proxy"].apiKey: expected a string"#,
        ),
        (
            r#"{"providers": {"openai": {"modelOverrides": {"gpt-4o": {"maxTokens": 0}}}}}"#,
            "models.json:1:70: providers.openai.modelOverrides.gpt-4o.maxTokens: expected a positive integer",
        ),
    ];
    for (text, expected) in cases {
        let got = ModelRegistry::from_json(text, "models.json").unwrap_err().to_string();
        assert_eq!(&got, expected, "for {text}");
    }
}

#[test]
fn columns_count_characters_and_repeated_keys_use_the_last() {
    let text = "{\"providers\": {\"é\": {\"baseUrl\": 1, \"baseUrl\": 2}}}";
    // Column of the second `2`, counted in characters (é is one).
    assert_eq!(
        ModelRegistry::from_json(text, "m.json").unwrap_err().to_string(),
        "m.json:1:47: providers.é.baseUrl: expected a string"
    );
    match ModelRegistry::from_json(text, "m.json").unwrap_err() {
        RegistryError::Invalid { line, column, path, .. } => {
            assert_eq!((line, column), (1, 47));
            assert_eq!(path, "providers.é.baseUrl");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn load_from_files() {
    let dir = std::env::temp_dir().join(format!("pi-ai-registry-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let missing = ModelRegistry::load(&dir.join("absent.json")).unwrap();
    assert_eq!(missing.all().len(), ModelRegistry::builtin().all().len());

    let path = dir.join("models.json");
    std::fs::write(&path, "{\"providers\": {\"p\": {\"baseUrl\": false}}}").unwrap();
    let message = ModelRegistry::load(&path).unwrap_err().to_string();
    assert_eq!(
        message,
        format!("{}:1:33: providers.p.baseUrl: expected a string", path.display())
    );

    std::fs::write(&path, FULL).unwrap();
    assert!(
        ModelRegistry::load(&path)
            .unwrap()
            .find("ollama", "gpt-oss:20b")
            .is_some()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn default_path_follows_pi() {
    assert_eq!(
        default_models_path(&env(&[("HOME", "/home/me")])),
        Some(PathBuf::from("/home/me/.pi/agent/models.json"))
    );
    assert_eq!(
        default_models_path(&env(&[("HOME", "/home/me"), ("PI_CODING_AGENT_DIR", "/etc/pi")])),
        Some(PathBuf::from("/etc/pi/models.json"))
    );
    assert_eq!(default_models_path(&env(&[])), None);
}

#[test]
fn config_value_resolution() {
    let vars = env(&[
        ("MY_KEY", "sk-from-env"),
        ("PREFIX", "ab"),
        ("SUFFIX", "cd"),
        ("EMPTY", ""),
    ]);
    let resolve = |value: &str| resolve_config_value(value, &vars);
    assert_eq!(resolve("sk-literal").as_deref(), Some("sk-literal"));
    assert_eq!(resolve("$MY_KEY").as_deref(), Some("sk-from-env"));
    assert_eq!(resolve("${MY_KEY}").as_deref(), Some("sk-from-env"));
    // pi's older rule: a value naming a set variable is that variable.
    assert_eq!(resolve("MY_KEY").as_deref(), Some("sk-from-env"));
    assert_eq!(resolve("UNSET_NAME").as_deref(), Some("UNSET_NAME"));
    assert_eq!(resolve("${PREFIX}_${SUFFIX}").as_deref(), Some("ab_cd"));
    assert_eq!(resolve("Bearer $MY_KEY!").as_deref(), Some("Bearer sk-from-env!"));
    assert_eq!(resolve("$$literal").as_deref(), Some("$literal"));
    assert_eq!(resolve("$!bang").as_deref(), Some("!bang"));
    assert_eq!(resolve("cost: 5$").as_deref(), Some("cost: 5$"));
    assert_eq!(resolve("$UNSET"), None);
    assert_eq!(resolve("x-${UNSET}"), None);
    if cfg!(unix) {
        assert_eq!(resolve("!printf ' sk-from-cmd\\n'").as_deref(), Some("sk-from-cmd"));
        assert_eq!(resolve("!exit 3"), None);
    }
}

#[test]
fn api_keys_from_config_then_usual_variables() {
    let json = r#"{"providers": {
        "a": {"baseUrl": "http://h/v1", "api": "openai-completions", "apiKey": "$A_KEY", "models": [{"id": "m"}]},
        "b": {"baseUrl": "http://h/v1", "api": "openai-completions", "apiKey": "literal-b", "models": [{"id": "m"}]},
        "openai": {"apiKey": "$MISSING"},
        "groq": {"apiKey": "$EMPTY"}
    }}"#;
    let registry = ModelRegistry::from_json(json, "models.json").unwrap().with_env(env(&[
        ("A_KEY", "key-a"),
        ("OPENAI_API_KEY", "sk-openai"),
        ("ANTHROPIC_API_KEY", "sk-ant"),
        ("GROQ_API_KEY", "gsk"),
        ("EMPTY", ""),
    ]));
    assert_eq!(registry.api_key_for("a").as_deref(), Some("key-a"));
    assert_eq!(registry.api_key_for("b").as_deref(), Some("literal-b"));
    // Unresolved or empty configured keys fall back to the usual variable.
    assert_eq!(registry.api_key_for("openai").as_deref(), Some("sk-openai"));
    assert_eq!(registry.api_key_for("groq").as_deref(), Some("gsk"));
    assert_eq!(registry.api_key_for("anthropic").as_deref(), Some("sk-ant"));
    assert_eq!(registry.api_key_for("xai"), None);
    assert_eq!(registry.api_key_for("unknown"), None);
}

#[test]
fn usual_variables() {
    for (provider, var) in [
        ("anthropic", "ANTHROPIC_API_KEY"),
        ("openai", "OPENAI_API_KEY"),
        ("openrouter", "OPENROUTER_API_KEY"),
        ("groq", "GROQ_API_KEY"),
        ("google", "GEMINI_API_KEY"),
        ("xai", "XAI_API_KEY"),
        ("deepseek", "DEEPSEEK_API_KEY"),
        ("mistral", "MISTRAL_API_KEY"),
        ("cerebras", "CEREBRAS_API_KEY"),
    ] {
        assert_eq!(env_var_for_provider(provider), Some(var));
    }
    assert_eq!(env_var_for_provider("ollama"), None);
}

#[test]
fn header_values_resolve() {
    let registry = ModelRegistry::builtin().with_env(env(&[("TOKEN", "t0k")]));
    let headers = [
        ("x-literal".to_owned(), "plain".to_owned()),
        ("x-var".to_owned(), "Bearer $TOKEN".to_owned()),
        ("x-missing".to_owned(), "$NOPE".to_owned()),
    ]
    .into();
    let resolved = registry.resolve_headers(&headers);
    assert_eq!(resolved.len(), 2);
    assert_eq!(resolved["x-literal"], "plain");
    assert_eq!(resolved["x-var"], "Bearer t0k");
}

#[test]
fn built_in_models() {
    let registry = ModelRegistry::builtin();
    let expect = |provider: &str, id: &str, context: u64, max: u64, input: f64, output: f64| {
        let model = registry.find(provider, id).unwrap_or_else(|| panic!("{provider}/{id}"));
        assert_eq!((model.context_window, model.max_tokens), (context, max), "{id}");
        assert_eq!((model.cost.input, model.cost.output), (input, output), "{id}");
    };
    expect("anthropic", "claude-opus-4-1", 200_000, 32_000, 15.0, 75.0);
    expect("anthropic", "claude-opus-4-20250514", 200_000, 32_000, 15.0, 75.0);
    expect("anthropic", "claude-sonnet-4-20250514", 200_000, 64_000, 3.0, 15.0);
    expect("anthropic", "claude-sonnet-4-5", 200_000, 64_000, 3.0, 15.0);
    expect("anthropic", "claude-3-5-haiku-20241022", 200_000, 8_192, 0.8, 4.0);
    expect("openai", "gpt-4o", 128_000, 16_384, 2.5, 10.0);
    expect("openai", "gpt-4.1", 1_047_576, 32_768, 2.0, 8.0);
    expect("openai", "o3", 200_000, 100_000, 2.0, 8.0);
    expect("openai", "o4-mini", 200_000, 100_000, 1.1, 4.4);
    expect("openai", "gpt-5", 400_000, 128_000, 1.25, 10.0);
    for model in registry.all() {
        // Azure's base URL is the user's resource; everything else is reachable as listed.
        assert!(
            !model.api.is_empty()
                && (model.base_url.starts_with("https://") || model.provider == "azure-openai-responses"),
            "{}",
            model.id
        );
        assert!(model.input.contains(&"text".to_owned()));
        match model.provider.as_str() {
            "anthropic" => assert_eq!(model.api, "anthropic-messages"),
            "openai" => assert_eq!(model.api, "openai-responses"),
            _ => {}
        }
    }
    assert!(registry.find("anthropic", "claude-sonnet-4-5").unwrap().reasoning);
    assert!(!registry.find("openai", "gpt-4o").unwrap().reasoning);
}

#[test]
fn patterns() {
    let registry = registry(
        r#"{"providers": {"openrouter": {"models": [{"id": "anthropic/claude-sonnet-4", "name": "OR Sonnet"}]}}}"#,
    );
    let find = |pattern: &str| {
        registry
            .find_by_pattern(pattern)
            .map(|m| format!("{}/{}", m.provider, m.id))
    };
    assert_eq!(
        find("anthropic/claude-sonnet-4-5").as_deref(),
        Some("anthropic/claude-sonnet-4-5")
    );
    // A bare id is the first model with it in pi-ai's order, as pi 0.73.1 resolves `--model gpt-4o`.
    assert_eq!(find("gpt-4o").as_deref(), Some("azure-openai-responses/gpt-4o"));
    assert_eq!(find("openai/GPT-4O").as_deref(), Some("openai/gpt-4o"));
    // A name: the first model with it, in pi-ai's order (Bedrock's comes before Anthropic's).
    assert_eq!(
        find("Claude Haiku 4.5").as_deref(),
        Some("amazon-bedrock/anthropic.claude-haiku-4-5-20251001-v1:0")
    );
    // Ids with slashes under their provider.
    assert_eq!(
        find("openrouter/anthropic/claude-sonnet-4").as_deref(),
        Some("openrouter/anthropic/claude-sonnet-4")
    );
    // A part of an id: the alias wins over the dated snapshot.
    assert_eq!(find("anthropic/opus-4-1").as_deref(), Some("anthropic/claude-opus-4-1"));
    assert_eq!(
        find("anthropic/sonnet-4-5").as_deref(),
        Some("anthropic/claude-sonnet-4-5")
    );
    assert_eq!(find("no-such-model"), None);
    assert_eq!(find(""), None);
}

#[test]
fn resolved_keys_and_credential_headers_are_registered_with_the_redactor() {
    let json = r#"{"providers": {"p": {"baseUrl": "http://h/v1", "api": "openai-completions",
        "apiKey": "$REG_KEY",
        "headers": {"x-deployment": "$REG_DEPLOYMENT", "x-api-token": "literal-token-0123",
            "x-title": "literal-title-0123", "x-cmd": "!echo from-a-command-0123"},
        "models": [{"id": "m"}]}}}"#;
    let registry = ModelRegistry::from_json(json, "models.json").unwrap().with_env(env(&[
        ("REG_KEY", "registered-key-0123"),
        ("REG_DEPLOYMENT", "deployment-value-0123"),
    ]));
    let model = registry.find("p", "m").unwrap();
    let headers = registry.resolve_headers(model.headers.as_ref().unwrap());
    assert_eq!(headers["x-cmd"], "from-a-command-0123");
    assert_eq!(registry.api_key_for("p").as_deref(), Some("registered-key-0123"));
    let text = "registered-key-0123 deployment-value-0123 literal-token-0123 from-a-command-0123 literal-title-0123";
    assert_eq!(
        pi_ai::redact(text, None),
        "[redacted] [redacted] [redacted] [redacted] literal-title-0123",
        "a variable, a command or a credential header's name makes a secret; a plain literal does not"
    );
}

#[test]
fn every_providers_variables_in_pi_ais_order() {
    let registry = |vars: &[(&str, &str)]| ModelRegistry::builtin().with_env(env(vars));
    let both = registry(&[
        ("ANTHROPIC_OAUTH_TOKEN", "oauth-token-1234"),
        ("ANTHROPIC_API_KEY", "sk-ant-5678"),
    ]);
    assert_eq!(both.api_key_for("anthropic").as_deref(), Some("oauth-token-1234"));
    let empty_first = registry(&[("ANTHROPIC_OAUTH_TOKEN", ""), ("ANTHROPIC_API_KEY", "sk-ant-5678")]);
    assert_eq!(empty_first.api_key_for("anthropic").as_deref(), Some("sk-ant-5678"));
    let copilot = registry(&[("GH_TOKEN", "gho_1234"), ("GITHUB_TOKEN", "ghp_5678")]);
    assert_eq!(copilot.api_key_for("github-copilot").as_deref(), Some("gho_1234"));
    let moonshot = registry(&[("MOONSHOT_API_KEY", "sk-moon-1234")]);
    assert_eq!(moonshot.api_key_for("moonshotai").as_deref(), Some("sk-moon-1234"));
    assert_eq!(moonshot.api_key_for("moonshotai-cn").as_deref(), Some("sk-moon-1234"));
    let xiaomi = registry(&[("XIAOMI_TOKEN_PLAN_AMS_API_KEY", "xm-ams-1234")]);
    assert_eq!(
        xiaomi.api_key_for("xiaomi-token-plan-ams").as_deref(),
        Some("xm-ams-1234")
    );
    assert_eq!(xiaomi.api_key_for("xiaomi"), None);
    assert_eq!(
        pi_ai::env_vars_for_provider("github-copilot"),
        ["COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"]
    );
    assert_eq!(env_var_for_provider("anthropic"), Some("ANTHROPIC_API_KEY"));
    assert_eq!(pi_ai::builtin_providers().count(), 31);
    assert_eq!(pi_ai::CATALOG_SOURCE_VERSION, "0.73.1");
}

#[test]
fn keys_from_any_providers_variable_are_redacted() {
    let registry = ModelRegistry::builtin().with_env(env(&[("XIAOMI_API_KEY", "xiaomi-secret-key-4242")]));
    let key = registry.api_key_for("xiaomi").unwrap();
    assert_eq!(
        pi_ai::redact(&format!("bad key {key}"), None),
        format!("bad key {}", pi_ai::REDACTED)
    );
}

#[test]
fn aws_and_google_cloud_credentials_count_as_auth_without_a_key() {
    let bedrock = ModelRegistry::builtin().with_env(env(&[("AWS_PROFILE", "dev")]));
    let nova = bedrock.find("amazon-bedrock", "amazon.nova-pro-v1:0").unwrap();
    assert!(bedrock.has_auth(nova));
    assert!(bedrock.is_available(nova));
    assert_eq!(bedrock.api_key_for("amazon-bedrock"), None, "no key is made up");
    let none = ModelRegistry::builtin().with_env(env(&[("AWS_ACCESS_KEY_ID", "AKIA")]));
    assert!(!none.is_available(nova));

    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    let adc = home.join(".config/gcloud/application_default_credentials.json");
    std::fs::create_dir_all(adc.parent().unwrap()).unwrap();
    std::fs::write(&adc, "{}").unwrap();
    let home_text = home.display().to_string();
    let vertex = ModelRegistry::builtin().with_env(move |name| match name {
        "HOME" => Some(home_text.clone()),
        "GOOGLE_CLOUD_PROJECT" => Some("p".to_owned()),
        "GOOGLE_CLOUD_LOCATION" => Some("us-central1".to_owned()),
        _ => None,
    });
    let gemini = vertex.find("google-vertex", "gemini-2.5-pro").unwrap();
    assert!(vertex.is_available(gemini));
    std::fs::remove_file(&adc).unwrap();
    assert!(!vertex.is_available(gemini), "without the ADC file");
}

#[test]
fn available_is_every_model_is_available_accepts() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    let adc = home.join(".config/gcloud/application_default_credentials.json");
    std::fs::create_dir_all(adc.parent().unwrap()).unwrap();
    std::fs::write(&adc, "{}").unwrap();
    let home_text = home.display().to_string();
    let json = r#"{"providers": {"local": {"baseUrl": "http://127.0.0.1:8080/v1", "api": "openai-completions",
        "models": [{"id": "llama"}]}, "corp": {"baseUrl": "https://llm.example", "api": "openai-completions",
        "apiKey": "CORP_KEY", "models": [{"id": "m"}]}}}"#;
    let cases: [&[(&str, &str)]; 4] = [
        &[("AWS_PROFILE", "dev")],
        &[("GOOGLE_CLOUD_PROJECT", "p"), ("GOOGLE_CLOUD_LOCATION", "us-central1")],
        &[("GROQ_API_KEY", "k"), ("CORP_KEY", "c")],
        &[],
    ];
    let mut providers_seen = std::collections::BTreeSet::new();
    for vars in cases {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .chain([("HOME".to_owned(), home_text.clone())])
            .collect();
        let registry = ModelRegistry::from_json(json, "models.json")
            .unwrap()
            .with_env(move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()));
        let available: Vec<&pi_ai::Model> = registry.available();
        let filtered: Vec<&pi_ai::Model> = registry.all().iter().filter(|m| registry.is_available(m)).collect();
        assert_eq!(available, filtered);
        providers_seen.extend(available.iter().map(|m| m.provider.clone()));
    }
    for provider in ["amazon-bedrock", "google-vertex", "groq", "corp", "local"] {
        assert!(providers_seen.contains(provider), "{provider} was never available");
    }
}
