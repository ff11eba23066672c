//! A TypeBox-like builder for JSON Schemas, so a Rust custom tool can write its parameters the way
//! a pi TypeScript tool does (`Type.Object({ name: Type.String({ description }) })`).
//!
//! ```
//! use pi_coding_agent::custom_tools::schema::Type;
//!
//! let schema = Type::object([
//!     ("action", Type::string_enum(["list", "add"]).description("What to do")),
//!     ("text", Type::optional(Type::string())),
//! ]);
//! assert_eq!(schema.to_value()["required"], serde_json::json!(["action"]));
//! assert_eq!(schema.to_value()["properties"]["action"]["enum"], serde_json::json!(["list", "add"]));
//! ```

use serde_json::{Map, Value, json};

/// A schema under construction; [`Type::to_value`] gives the JSON Schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Type {
    schema: Map<String, Value>,
    optional: bool,
}

impl Type {
    fn of(schema: Value) -> Self {
        Type {
            schema: match schema {
                Value::Object(map) => map,
                _ => Map::new(),
            },
            optional: false,
        }
    }

    /// `{"type": "string"}`.
    pub fn string() -> Self {
        Type::of(json!({"type": "string"}))
    }

    /// `{"type": "number"}`.
    pub fn number() -> Self {
        Type::of(json!({"type": "number"}))
    }

    /// `{"type": "integer"}`.
    pub fn integer() -> Self {
        Type::of(json!({"type": "integer"}))
    }

    /// `{"type": "boolean"}`.
    pub fn boolean() -> Self {
        Type::of(json!({"type": "boolean"}))
    }

    /// `{"type": "array", "items": …}`.
    pub fn array(items: Type) -> Self {
        Type::of(json!({"type": "array", "items": items.to_value()}))
    }

    /// A string that is one of `values` (pi's `StringEnum`, which every provider accepts).
    pub fn string_enum<S: Into<String>>(values: impl IntoIterator<Item = S>) -> Self {
        let values: Vec<String> = values.into_iter().map(Into::into).collect();
        Type::of(json!({"type": "string", "enum": values}))
    }

    /// `{"type": "object", "properties": …, "required": […]}`; properties wrapped in
    /// [`Type::optional`] are left out of `required`.
    pub fn object<K: Into<String>>(properties: impl IntoIterator<Item = (K, Type)>) -> Self {
        let mut props = Map::new();
        let mut required = Vec::new();
        for (name, property) in properties {
            let name = name.into();
            if !property.optional {
                required.push(Value::String(name.clone()));
            }
            props.insert(name, property.to_value());
        }
        let mut schema = json!({"type": "object", "properties": props});
        if !required.is_empty() {
            schema["required"] = Value::Array(required);
        }
        Type::of(schema)
    }

    /// A property that may be left out of its object.
    pub fn optional(mut inner: Type) -> Self {
        inner.optional = true;
        inner
    }

    /// A raw JSON Schema.
    pub fn raw(schema: Value) -> Self {
        Type::of(schema)
    }

    /// Sets `description`.
    #[must_use]
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.schema.insert("description".into(), Value::String(text.into()));
        self
    }

    /// Sets any other keyword (`minimum`, `default`, …).
    #[must_use]
    pub fn with(mut self, keyword: &str, value: Value) -> Self {
        self.schema.insert(keyword.into(), value);
        self
    }

    /// The JSON Schema.
    pub fn to_value(&self) -> Value {
        Value::Object(self.schema.clone())
    }
}
