//! Tool parameter schemas and argument validation with coercion.
//!
//! [`ToolParameters`] holds a tool's JSON Schema and compiles its validator once, on first use.
//! [`ToolParameters::validate`] follows pi's `validateToolArguments`: it works on a copy of the
//! arguments, drops `null` values of optional properties whose schema rejects null, coerces
//! values to the schema's types (`"5"` → 5, `"true"` → true, 5 → `"5"`), validates, and on failure
//! returns pi's message:
//!
//! ```text
//! Validation failed for tool "<name>":
//!   - <path>: <message>
//!
//! Received arguments:
//! <the original arguments as 2-space JSON>
//! ```
//!
//! ```
//! use pi_agent_core::ToolParameters;
//! use serde_json::json;
//!
//! let params = ToolParameters::new(json!({
//!     "type": "object",
//!     "properties": {"limit": {"type": "integer"}},
//!     "required": ["limit"]
//! }));
//! assert_eq!(params.validate("read", &json!({"limit": "5"})).unwrap(), json!({"limit": 5}));
//! let err = params.validate("read", &json!({})).unwrap_err();
//! assert_eq!(err.problems[0].path, "limit");
//! assert!(err.to_string().starts_with("Validation failed for tool \"read\":\n  - limit: "));
//! ```

use std::sync::OnceLock;

use serde_json::{Map, Value};

/// Arguments that a tool's parameter schema rejects. Its text, which the model reads as the
/// tool call's error, is pi's:
///
/// ```text
/// Validation failed for tool "<name>":
///   - <path>: <message>
///
/// Received arguments:
/// <the original arguments as 2-space JSON>
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "Validation failed for tool \"{tool_name}\":\n{}\n\nReceived arguments:\n{}",
    problem_lines(problems),
    pretty(arguments)
)]
pub struct ValidationError {
    /// The tool whose arguments they are.
    pub tool_name: String,
    /// What is wrong with them, one entry per schema violation.
    pub problems: Vec<ArgumentProblem>,
    /// The arguments as received (before coercion).
    pub arguments: Value,
}

/// One schema violation in a tool call's arguments: `  - <path>: <message>` in the error text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("  - {path}: {message}")]
pub struct ArgumentProblem {
    /// The offending value's place, dot-separated (`edits.0.oldText`); `root` for the whole
    /// arguments value.
    pub path: String,
    /// The validator's message (`"limit" is a required property`, …), or why the schema itself
    /// could not be compiled.
    pub message: String,
}

fn problem_lines(problems: &[ArgumentProblem]) -> String {
    problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")
}

fn pretty(arguments: &Value) -> String {
    serde_json::to_string_pretty(arguments).unwrap_or_else(|_| arguments.to_string())
}

/// A tool's parameter schema with its lazily compiled validator.
pub struct ToolParameters {
    schema: Value,
    validator: OnceLock<Result<jsonschema::Validator, String>>,
}

impl std::fmt::Debug for ToolParameters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolParameters").field("schema", &self.schema).finish()
    }
}

impl Clone for ToolParameters {
    fn clone(&self) -> Self {
        ToolParameters::new(self.schema.clone())
    }
}

impl ToolParameters {
    /// Parameters described by a raw JSON Schema (dynamic tools: custom, MCP).
    pub fn new(schema: Value) -> Self {
        ToolParameters {
            schema,
            validator: OnceLock::new(),
        }
    }

    /// Parameters described by a Rust type deriving [`schemars::JsonSchema`].
    ///
    /// ```
    /// #[derive(schemars::JsonSchema, serde::Deserialize)]
    /// struct Args { path: String }
    /// let params = pi_agent_core::ToolParameters::of::<Args>();
    /// assert_eq!(params.schema()["required"][0], "path");
    /// ```
    pub fn of<T: schemars::JsonSchema>() -> Self {
        let settings = schemars::generate::SchemaSettings::draft07().with(|s| {
            s.inline_subschemas = true;
        });
        let schema = settings.into_generator().into_root_schema_for::<T>();
        let mut schema = schema.to_value();
        if let Value::Object(map) = &mut schema {
            map.remove("$schema");
            map.remove("title");
        }
        ToolParameters::new(schema)
    }

    /// The JSON Schema sent to the model.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    fn validator(&self) -> Result<&jsonschema::Validator, &str> {
        self.validator
            .get_or_init(|| {
                jsonschema::options()
                    .with_draft(jsonschema::Draft::Draft7)
                    .build(&self.schema)
                    .map_err(|e| format!("invalid parameter schema: {e}"))
            })
            .as_ref()
            .map_err(String::as_str)
    }

    /// Coerces and validates `args`, returning the validated copy, or what is wrong with them
    /// (whose text is pi's).
    pub fn validate(&self, tool_name: &str, args: &Value) -> Result<Value, ValidationError> {
        let failure = |problems| ValidationError {
            tool_name: tool_name.to_owned(),
            problems,
            arguments: args.clone(),
        };
        let mut value = args.clone();
        coerce(&self.schema, &mut value);
        let validator = match self.validator() {
            Ok(v) => v,
            Err(message) => {
                return Err(failure(vec![ArgumentProblem {
                    path: "root".into(),
                    message: message.to_owned(),
                }]));
            }
        };
        if validator.is_valid(&value) {
            return Ok(value);
        }
        let problems: Vec<ArgumentProblem> = validator
            .iter_errors(&value)
            .map(|error| {
                let mut path = pointer_to_dots(error.instance_path().as_str());
                if let jsonschema::error::ValidationErrorKind::Required { property } = error.kind() {
                    let name = property
                        .as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| property.to_string());
                    path = if path.is_empty() {
                        name
                    } else {
                        format!("{path}.{name}")
                    };
                }
                if path.is_empty() {
                    path = "root".into();
                }
                ArgumentProblem {
                    path,
                    message: error.to_string(),
                }
            })
            .collect();
        Err(failure(problems))
    }
}

/// `/a/0/b~1c` → `a.0.b/c`.
fn pointer_to_dots(pointer: &str) -> String {
    pointer
        .split('/')
        .skip(1)
        .map(|segment| segment.replace("~1", "/").replace("~0", "~"))
        .collect::<Vec<_>>()
        .join(".")
}

/// The `type` keyword of a schema as a list of type names.
fn schema_types(schema: &Map<String, Value>) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn accepts_null(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(map) => {
            let types = schema_types(map);
            if types.contains(&"null") {
                return true;
            }
            for key in ["anyOf", "oneOf"] {
                if let Some(Value::Array(options)) = map.get(key) {
                    return options.iter().any(accepts_null);
                }
            }
            types.is_empty() && !map.contains_key("enum") && !map.contains_key("const")
        }
        _ => true,
    }
}

/// Converts `value` in place towards the types `schema` asks for, like TypeBox's `Value.Convert`.
fn coerce(schema: &Value, value: &mut Value) {
    let Value::Object(schema) = schema else { return };
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(options)) = schema.get(key) {
            // Leave the value alone if some option already takes its JSON type.
            if options.iter().any(|o| type_matches(o, value)) {
                if let Some(option) = options.iter().find(|o| type_matches(o, value)) {
                    coerce(option, value);
                }
                return;
            }
            if let Some(option) = options.first() {
                coerce(option, value);
            }
            return;
        }
    }
    let types = schema_types(schema);
    match value {
        Value::Object(object) => {
            if let Some(Value::Object(properties)) = schema.get("properties") {
                let required: Vec<&str> = schema
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                object.retain(|key, v| {
                    !(v.is_null()
                        && !required.contains(&key.as_str())
                        && properties.get(key).is_some_and(|p| !accepts_null(p)))
                });
                for (key, property_schema) in properties {
                    if let Some(v) = object.get_mut(key) {
                        coerce(property_schema, v);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for item in items {
                    coerce(item_schema, item);
                }
            }
        }
        _ => {
            let candidates: Vec<&str> = types.iter().copied().filter(|t| *t != "null").collect();
            if candidates.len() == 1
                && !(value.is_null() && types.contains(&"null"))
                && let Some(converted) = convert_scalar(candidates[0], value)
            {
                *value = converted;
            }
        }
    }
}

fn type_matches(schema: &Value, value: &Value) -> bool {
    let Value::Object(map) = schema else { return true };
    let types = schema_types(map);
    if types.is_empty() {
        return true;
    }
    types.iter().any(|t| match (*t, value) {
        ("string", Value::String(_))
        | ("boolean", Value::Bool(_))
        | ("null", Value::Null)
        | ("object", Value::Object(_))
        | ("array", Value::Array(_))
        | ("number", Value::Number(_)) => true,
        ("integer", Value::Number(n)) => n.is_i64() || n.is_u64(),
        _ => false,
    })
}

fn convert_scalar(target: &str, value: &Value) -> Option<Value> {
    match (target, value) {
        ("number", Value::String(s)) => {
            let n: f64 = s.trim().parse().ok()?;
            serde_json::Number::from_f64(n).map(|n| {
                if n.as_f64().is_some_and(|f| f.fract() == 0.0 && f.abs() < 9.0e15) {
                    Value::from(n.as_f64().map(|f| f as i64).unwrap_or_default())
                } else {
                    Value::Number(n)
                }
            })
        }
        ("integer", Value::String(s)) => {
            let s = s.trim();
            if let Ok(i) = s.parse::<i64>() {
                return Some(Value::from(i));
            }
            let f: f64 = s.parse().ok()?;
            (f.fract() == 0.0 && f.abs() < 9.0e15).then(|| Value::from(f as i64))
        }
        ("integer", Value::Number(n)) => {
            let f = n.as_f64()?;
            (!n.is_i64() && !n.is_u64() && f.fract() == 0.0 && f.abs() < 9.0e15).then(|| Value::from(f as i64))
        }
        ("number" | "integer", Value::Bool(b)) => Some(Value::from(i64::from(*b))),
        ("boolean", Value::String(s)) => match s.trim() {
            "true" | "1" => Some(Value::Bool(true)),
            "false" | "0" => Some(Value::Bool(false)),
            _ => None,
        },
        ("boolean", Value::Number(n)) => match n.as_i64() {
            Some(1) => Some(Value::Bool(true)),
            Some(0) => Some(Value::Bool(false)),
            _ => None,
        },
        ("string", Value::Number(n)) => Some(Value::String(n.to_string())),
        ("string", Value::Bool(b)) => Some(Value::String(b.to_string())),
        ("null", Value::String(s)) if s == "null" => Some(Value::Null),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params() -> ToolParameters {
        ToolParameters::new(json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "offset": {"type": "number"},
                "limit": {"type": "integer"},
                "all": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "nested": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
            },
            "required": ["path"]
        }))
    }

    #[test]
    fn coerces_strings_to_numbers_and_booleans() {
        let out = params()
            .validate(
                "t",
                &json!({"path": 5, "offset": "1.5", "limit": "5", "all": "true", "tags": [1, true]}),
            )
            .unwrap();
        assert_eq!(
            out,
            json!({"path": "5", "offset": 1.5, "limit": 5, "all": true, "tags": ["1", "true"]})
        );
    }

    #[test]
    fn drops_null_optional_properties() {
        let out = params().validate("t", &json!({"path": "a", "limit": null})).unwrap();
        assert_eq!(out, json!({"path": "a"}));
    }

    #[test]
    fn failure_text_matches_pi() {
        let err = params()
            .validate("read", &json!({"limit": "x", "nested": {}}))
            .unwrap_err()
            .to_string();
        let expected_head = "Validation failed for tool \"read\":\n";
        assert!(err.starts_with(expected_head), "{err}");
        assert!(err.contains("\n  - path: "), "{err}");
        assert!(err.contains("\n  - limit: "), "{err}");
        assert!(err.contains("\n  - nested.n: "), "{err}");
        assert!(
            err.ends_with("\n\nReceived arguments:\n{\n  \"limit\": \"x\",\n  \"nested\": {}\n}"),
            "{err}"
        );
    }

    #[test]
    fn root_errors_say_root() {
        let err = params().validate("t", &json!("nope")).unwrap_err().to_string();
        assert!(err.contains("\n  - root: "), "{err}");
    }

    #[test]
    fn typed_schema_from_schemars() {
        #[derive(schemars::JsonSchema, serde::Deserialize)]
        #[allow(dead_code)]
        struct Args {
            /// The file.
            path: String,
            limit: Option<u32>,
        }
        let p = ToolParameters::of::<Args>();
        assert_eq!(p.schema()["type"], "object");
        assert_eq!(p.schema()["required"], json!(["path"]));
        assert_eq!(
            p.validate("t", &json!({"path": "a", "limit": "3"})).unwrap(),
            json!({"path": "a", "limit": 3})
        );
    }
}
