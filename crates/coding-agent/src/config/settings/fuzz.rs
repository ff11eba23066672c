//! Fuzz target of the `settings.json` reader: objects with the keys pi knows (right and wrong
//! kinds of values, unknown enum values, MCP servers with odd fields) and unknown keys, compact
//! or indented, and damaged texts; and the merge of the project file over the global one.
//!
//! Asserts: no panic; an error is the documented variant (`Invalid settings in <file>:<line>:
//! <column>: …` with a 1-based position inside the text, or `Invalid settings in <file>:
//! "<key>" …` naming a key pi reads); settings that load keep every key in `raw` and read the
//! known ones from it; merging is idempotent and keeps what the override does not mention.

use pi_test_support::fuzz;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::{Settings, SettingsError, merge};

/// Keys read but not generated here (their own tests cover their values).
const OTHER_KEYS: [&str; 5] = ["sessionDir", "enabledModels", "quietStartup", "sandbox", "retry"];

const KNOWN_KEYS: [&str; 12] = [
    "defaultProvider",
    "defaultModel",
    "defaultThinkingLevel",
    "steeringMode",
    "followUpMode",
    "toolExecution",
    "shellPath",
    "shellCommandPrefix",
    "astEdit",
    "astGrep",
    "customTools",
    "mcpServers",
];

fn or_odd(good: impl Strategy<Value = Value>) -> impl Strategy<Value = Value> {
    prop_oneof![5 => good, 1 => fuzz::json_value()]
}

fn settings() -> impl Strategy<Value = Value> {
    let value_for = |key: &'static str| -> BoxedStrategy<Value> {
        match key {
            "defaultThinkingLevel" => or_odd(
                prop::sample::select(vec!["off", "minimal", "low", "medium", "high", "xhigh", "max"])
                    .prop_map(Value::from),
            )
            .boxed(),
            "steeringMode" | "followUpMode" => {
                or_odd(prop::sample::select(vec!["all", "one-at-a-time", "some"]).prop_map(Value::from)).boxed()
            }
            "toolExecution" => {
                or_odd(prop::sample::select(vec!["parallel", "sequential", "random"]).prop_map(Value::from)).boxed()
            }
            "astEdit" | "astGrep" => or_odd(any::<bool>().prop_map(|b| json!({"enabled": b}))).boxed(),
            "customTools" => {
                or_odd(prop::collection::vec(fuzz::awkward_string().prop_map(Value::from), 0..3).prop_map(Value::Array))
                    .boxed()
            }
            "mcpServers" => or_odd(
                prop::collection::btree_map(
                    fuzz::awkward_string(),
                    or_odd(Just(json!({"command": "srv", "args": ["-x"], "timeout": 5}))),
                    0..3,
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            )
            .boxed(),
            _ => or_odd(fuzz::awkward_string().prop_map(Value::from)).boxed(),
        }
    };
    let known: Vec<BoxedStrategy<Option<(String, Value)>>> = KNOWN_KEYS
        .iter()
        .map(|key| {
            prop::option::weighted(0.4, value_for(key))
                .prop_map(move |v| v.map(|v| ((*key).to_owned(), v)))
                .boxed()
        })
        .collect();
    (
        known,
        prop::collection::vec((fuzz::awkward_string(), fuzz::json_value()), 0..3),
    )
        .prop_map(|(known, unknown)| {
            Value::Object(
                known
                    .into_iter()
                    .flatten()
                    .chain(unknown)
                    .collect::<Map<String, Value>>(),
            )
        })
}

fn render(value: &Value, pretty: bool) -> String {
    let text = if pretty {
        serde_json::to_string_pretty(value)
    } else {
        serde_json::to_string(value)
    };
    text.unwrap_or_default()
}

fn check(text: &str) -> Result<(), TestCaseError> {
    match Settings::from_json(text, "settings.json") {
        Ok(settings) => {
            let raw =
                serde_json::from_str::<Map<String, Value>>(text).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(&settings.raw, &raw);
            prop_assert_eq!(
                settings.default_model.as_deref(),
                raw.get("defaultModel").and_then(Value::as_str)
            );
            prop_assert_eq!(
                settings.shell_path.as_deref(),
                raw.get("shellPath").and_then(Value::as_str)
            );
            prop_assert_eq!(
                settings.mcp_servers.len(),
                raw.get("mcpServers").and_then(Value::as_object).map_or(0, Map::len)
            );
        }
        Err(error) => {
            let display = error.to_string();
            match &error {
                SettingsError::Parse {
                    file,
                    line,
                    column,
                    message,
                } => {
                    prop_assert_eq!(file, "settings.json");
                    prop_assert!(!message.is_empty());
                    prop_assert!(*line >= 1 && *line <= text.split('\n').count(), "line {}", line);
                    prop_assert!(*column >= 1, "column {} in {:?}", column, display);
                    let start = format!("Invalid settings in settings.json:{line}:{column}: ");
                    prop_assert!(display.starts_with(&start), "{}", display);
                }
                SettingsError::Value { key, .. } => {
                    prop_assert!(
                        KNOWN_KEYS.contains(&key.as_str())
                            || OTHER_KEYS.contains(&key.as_str())
                            || ["mcpServers.", "sandbox.", "retry."]
                                .iter()
                                .any(|prefix| key.starts_with(prefix)),
                        "{}",
                        key
                    );
                    let start = format!("Invalid settings in settings.json: \"{key}\" ");
                    prop_assert!(display.starts_with(&start), "{}", display);
                }
                SettingsError::Read { .. } => return Err(TestCaseError::fail("a text cannot fail to be read")),
                SettingsError::Write { .. } => return Err(TestCaseError::fail("reading never writes")),
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(fuzz::config())]

    #[test]
    fn fuzz_settings_json(value in settings(), pretty in any::<bool>()) {
        check(&render(&value, pretty))?;
    }

    #[test]
    fn fuzz_settings_json_damaged(text in fuzz::damaged((settings(), any::<bool>()).prop_map(|(v, p)| render(&v, p).into_bytes()))) {
        check(&String::from_utf8_lossy(&text))?;
    }

    #[test]
    fn fuzz_settings_merge(global in settings(), project in settings()) {
        let (Value::Object(global), Value::Object(project)) = (global, project) else {
            return Err(TestCaseError::fail("settings() makes objects"));
        };
        let mut merged = global.clone();
        merge(&mut merged, project.clone());
        let mut twice = merged.clone();
        merge(&mut twice, project.clone());
        prop_assert_eq!(&twice, &merged, "merging is idempotent");
        for (key, value) in &global {
            if !project.contains_key(key) {
                prop_assert_eq!(merged.get(key), Some(value));
            }
        }
        for (key, value) in &project {
            if !value.is_object() || !global.get(key).is_some_and(Value::is_object) {
                prop_assert_eq!(merged.get(key), Some(value));
            }
        }
    }
}

/// Found while fuzzing: an error at a line break (here a raw line break inside a string) was
/// reported at column 0, though the column is 1-based.
#[test]
fn fuzz_settings_json_error_at_a_line_break_is_column_1() {
    let error = Settings::from_json("{\n  \"a\": \"x\n\"}", "s.json")
        .map(|_| ())
        .unwrap_err();
    assert!(
        matches!(error, SettingsError::Parse { line: 3, column: 1, .. }),
        "{error:?}"
    );
    assert!(
        error.to_string().starts_with("Invalid settings in s.json:3:1: "),
        "{error}"
    );
}
