//! [`Lenient`]: a tool parameter read as loosely as pi reads it.

use std::borrow::Cow;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// A parameter that never fails to deserialize: `Lenient(Some(value))` when the JSON has the
/// expected type, `Lenient(None)` when it has another.
///
/// pi's tools read many optional arguments with `typeof x === "number" ? … : default`; a field of
/// type `Lenient<T>` (with `#[serde(default)]` when it may be absent) keeps that behaviour in a
/// typed parameter struct. Wrap it in an `Option` to tell an absent or `null` value (`None`)
/// apart from one of the wrong type (`Some(Lenient(None))`). Its JSON Schema is `T`'s.
///
/// ```
/// use pi_agent_core::Lenient;
///
/// #[derive(serde::Deserialize)]
/// struct Args {
///     #[serde(default)]
///     limit: Lenient<f64>,
///     skip: Option<Lenient<f64>>,
/// }
///
/// let args: Args = serde_json::from_value(serde_json::json!({"limit": 5, "skip": "x"})).unwrap();
/// assert_eq!(args.limit.into_inner(), Some(5.0));
/// assert_eq!(args.skip, Some(Lenient(None)));
/// let args: Args = serde_json::from_value(serde_json::json!({"limit": "5"})).unwrap();
/// assert_eq!((args.limit.into_inner(), args.skip), (None, None));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lenient<T>(pub Option<T>);

impl<T> Lenient<T> {
    /// The value, if it had the expected type.
    pub fn into_inner(self) -> Option<T> {
        self.0
    }

    /// A reference to the value, if it had the expected type.
    pub fn as_ref(&self) -> Option<&T> {
        self.0.as_ref()
    }
}

impl<T> Default for Lenient<T> {
    fn default() -> Self {
        Lenient(None)
    }
}

impl<T> From<Lenient<T>> for Option<T> {
    fn from(value: Lenient<T>) -> Self {
        value.0
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Ok(Lenient(T::deserialize(value).ok()))
    }
}

impl<T: schemars::JsonSchema> schemars::JsonSchema for Lenient<T> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        format!("Lenient<{}>", T::schema_id()).into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<T>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_of_another_type_become_none() {
        let parse = |value: Value| serde_json::from_value::<Lenient<String>>(value).map(Lenient::into_inner);
        assert_eq!(parse(json!("a")).ok(), Some(Some("a".to_owned())));
        assert_eq!(parse(json!(1)).ok(), Some(None));
        assert_eq!(parse(json!(null)).ok(), Some(None));
        let list = serde_json::from_value::<Vec<Lenient<String>>>(json!(["a", 1, null, "b"])).ok();
        let strings: Vec<String> = list.into_iter().flatten().filter_map(Lenient::into_inner).collect();
        assert_eq!(strings, ["a", "b"]);
    }

    #[test]
    fn schema_is_the_inner_type() {
        #[derive(schemars::JsonSchema, Deserialize)]
        #[allow(dead_code)]
        struct Args {
            #[serde(default)]
            limit: Lenient<f64>,
        }
        let params = crate::ToolParameters::of::<Args>();
        assert_eq!(
            params.schema()["properties"]["limit"],
            json!({"type": "number", "format": "double"})
        );
        assert!(params.schema().get("required").is_none());
    }
}
