//! Fuzz target of the `models.json` reader: documents shaped like pi's (providers, models, costs,
//! overrides, headers, compat) with values of the wrong type here and there, keys with non-ASCII
//! and special characters, compact or indented, and damaged texts.
//!
//! Asserts: no panic; an error is `file:line:column: …` with the position inside the text, and
//! for a field error the position is where the value at the error's path starts (found by the
//! hand-written locator); a valid document loads into a registry.

use pi_test_support::fuzz;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::{RegistryError, parse};
use crate::registry::ModelRegistry;

/// Sometimes the right kind of value, sometimes anything.
fn or_odd(good: impl Strategy<Value = Value>) -> impl Strategy<Value = Value> {
    prop_oneof![6 => good, 1 => fuzz::json_value()]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-z][a-z0-9_-]{0,8}",
        1 => "[a-zé.\\[\\]\" 😀]{1,6}",
    ]
}

fn object(fields: Vec<(&'static str, BoxedStrategy<Value>)>) -> impl Strategy<Value = Value> {
    let strategies: Vec<_> = fields
        .into_iter()
        .map(|(name, value)| prop::option::weighted(0.6, value).prop_map(move |v| v.map(|v| (name, v))))
        .collect();
    strategies.prop_map(|fields| Value::Object(fields.into_iter().flatten().map(|(k, v)| (k.to_owned(), v)).collect()))
}

fn model() -> impl Strategy<Value = Value> {
    let text = || or_odd("[a-z0-9.-]{0,10}".prop_map(Value::from)).boxed();
    object(vec![
        ("id", text()),
        ("name", text()),
        (
            "api",
            or_odd(
                prop::sample::select(vec!["openai-completions", "anthropic-messages", "openai-responses"])
                    .prop_map(Value::from),
            )
            .boxed(),
        ),
        ("reasoning", or_odd(any::<bool>().prop_map(Value::from)).boxed()),
        ("input", or_odd(Just(json!(["text", "image"]))).boxed()),
        ("contextWindow", or_odd((0u64..1_000_000).prop_map(Value::from)).boxed()),
        ("maxTokens", or_odd((0u64..100_000).prop_map(Value::from)).boxed()),
        (
            "cost",
            or_odd(Just(
                json!({"input": 1.5, "output": 2, "cacheRead": 0, "cacheWrite": 0}),
            ))
            .boxed(),
        ),
        ("headers", or_odd(Just(json!({"x-a": "b"}))).boxed()),
        ("compat", or_odd(Just(json!({"supportsDeveloperRole": false}))).boxed()),
    ])
}

fn provider() -> impl Strategy<Value = Value> {
    object(vec![
        ("baseUrl", or_odd(Just(json!("http://127.0.0.1:9/v1"))).boxed()),
        ("api", or_odd(Just(json!("openai-completions"))).boxed()),
        ("apiKey", or_odd(Just(json!("$PI_FUZZ_NO_SUCH_VARIABLE"))).boxed()),
        (
            "headers",
            or_odd(
                prop::collection::btree_map(key(), "[a-z]{0,4}".prop_map(Value::from), 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            )
            .boxed(),
        ),
        ("authHeader", or_odd(any::<bool>().prop_map(Value::from)).boxed()),
        ("compat", or_odd(Just(json!({"maxTokensField": "max_tokens"}))).boxed()),
        (
            "models",
            or_odd(prop::collection::vec(model(), 0..3).prop_map(Value::Array)).boxed(),
        ),
        (
            "modelOverrides",
            or_odd(
                prop::collection::btree_map(key(), model(), 0..2).prop_map(|m| Value::Object(m.into_iter().collect())),
            )
            .boxed(),
        ),
    ])
}

fn document() -> impl Strategy<Value = (Value, bool)> {
    let providers = prop::collection::vec((key(), provider()), 0..4)
        .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<String, Value>>()));
    (
        prop_oneof![6 => providers.prop_map(|p| json!({"providers": p})), 1 => fuzz::json_value()],
        any::<bool>(),
    )
}

fn render((document, pretty): &(Value, bool)) -> String {
    let text = if *pretty {
        serde_json::to_string_pretty(document)
    } else {
        serde_json::to_string(document)
    };
    text.unwrap_or_default()
}

/// The steps of an error's path (`providers.a.models[0].id`, `providers["a.b"]`).
fn steps(path: &str) -> Option<Vec<Result<String, usize>>> {
    let mut steps = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        rest = rest.strip_prefix('.').unwrap_or(rest);
        if rest.starts_with("[\"") {
            let mut stream = serde_json::Deserializer::from_str(&rest[1..]).into_iter::<String>();
            let key = stream.next()?.ok()?;
            rest = rest[1 + stream.byte_offset()..].strip_prefix(']')?;
            steps.push(Ok(key));
        } else if let Some(inner) = rest.strip_prefix('[') {
            let end = inner.find(']')?;
            steps.push(Err(inner[..end].parse().ok()?));
            rest = &inner[end + 1..];
        } else {
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            steps.push(Ok(rest[..end].to_owned()));
            rest = &rest[end..];
        }
    }
    Some(steps)
}

fn check_error(error: &RegistryError, text: &str, document: Option<&Value>) -> Result<(), TestCaseError> {
    let RegistryError::Invalid {
        file,
        line,
        column,
        path,
        message,
    } = error
    else {
        return Err(TestCaseError::fail(format!("not an Invalid error: {error}")));
    };
    prop_assert_eq!(file, "models.json");
    prop_assert!(!message.is_empty());
    let start = format!("models.json:{line}:{column}: ");
    prop_assert!(error.to_string().starts_with(&start));
    let lines: Vec<&str> = text.split('\n').collect();
    prop_assert!(*line >= 1 && *line <= lines.len(), "line {line} of {}", lines.len());
    let (Some(document), false) = (document, path.is_empty()) else {
        return Ok(());
    };
    // The value at the path, and the text at the position.
    let mut value = document;
    for step in steps(path).ok_or_else(|| TestCaseError::fail(format!("unreadable path {path}")))? {
        value = match step {
            Ok(key) => value.get(&key),
            Err(index) => value.get(index),
        }
        .ok_or_else(|| TestCaseError::fail(format!("no value at {path}")))?;
    }
    let before: usize = lines[..line - 1].iter().map(|l| l.len() + 1).sum();
    let offset = lines[line - 1]
        .char_indices()
        .nth(column - 1)
        .map_or(lines[line - 1].len(), |(at, _)| at);
    let at = &text[before + offset..];
    let found = serde_json::Deserializer::from_str(at)
        .into_iter::<Value>()
        .next()
        .and_then(Result::ok);
    prop_assert_eq!(found.as_ref(), Some(value), "{} at {}:{}", path, line, column);
    Ok(())
}

proptest! {
    #![proptest_config(fuzz::config())]

    #[test]
    fn fuzz_models_json(document in document()) {
        let text = render(&document);
        match parse(&text, "models.json") {
            Ok(config) => {
                let registry = ModelRegistry::from_json(&text, "models.json");
                prop_assert!(registry.is_ok());
                let models: usize = config.iter().map(|(_, p)| p.models.len()).sum();
                prop_assert!(registry.map(|r| r.all().len()).unwrap_or(0) >= models);
            }
            Err(error) => check_error(&error, &text, Some(&document.0))?,
        }
    }

    #[test]
    fn fuzz_models_json_damaged(text in fuzz::damaged(document().prop_map(|d| render(&d).into_bytes()))) {
        let text = String::from_utf8_lossy(&text).into_owned();
        if let Err(error) = parse(&text, "models.json") {
            let document = serde_json::from_str::<Value>(&text).ok();
            check_error(&error, &text, document.as_ref())?;
        }
    }
}
