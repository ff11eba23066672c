//! Names of the unit enums that travel as strings (`ThinkingLevel`, `ToolExecutionMode`,
//! `QueueMode`): one spelling, their serde one, also for `as_str`, `FromStr` and `Display`.

use serde::Serialize;
use serde::de::{DeserializeOwned, IntoDeserializer};

/// A name that is no value of the enum it was parsed as.
///
/// ```
/// let error = "extreme".parse::<pi_agent_core::ThinkingLevel>().unwrap_err();
/// assert_eq!(error.to_string(), "unknown thinking level: extreme");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind}: {name}")]
pub struct UnknownName {
    /// What was parsed, e.g. `thinking level`.
    pub kind: &'static str,
    /// The text that named nothing.
    pub name: String,
}

/// Every value of `all` with its serde name (values that do not serialize as a string are left out).
pub(crate) fn serde_names<T: Serialize + Copy>(all: &[T]) -> Vec<(T, String)> {
    all.iter()
        .filter_map(|value| match serde_json::to_value(value) {
            Ok(serde_json::Value::String(name)) => Some((*value, name)),
            _ => None,
        })
        .collect()
}

/// The value whose serde name is `name`.
pub(crate) fn from_serde_name<T: DeserializeOwned>(name: &str, kind: &'static str) -> Result<T, UnknownName> {
    let deserializer = IntoDeserializer::<serde::de::value::Error>::into_deserializer(name);
    T::deserialize(deserializer).map_err(|_| UnknownName {
        kind,
        name: name.to_owned(),
    })
}

/// `ALL`, `as_str`, `names`, `FromStr` and `Display` for a unit enum, from its serde names.
macro_rules! impl_serde_names {
    ($ty:ident, $kind:literal, [$($variant:ident),+ $(,)?]) => {
        impl $ty {
            /// Every value, in declaration order.
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];

            /// The name pi uses (the serde name).
            pub fn as_str(self) -> &'static str {
                static NAMES: std::sync::OnceLock<Vec<($ty, String)>> = std::sync::OnceLock::new();
                NAMES
                    .get_or_init(|| $crate::names::serde_names($ty::ALL))
                    .iter()
                    .find(|(value, _)| *value == self)
                    .map_or("", |(_, name)| name.as_str())
            }

            /// Every name, in declaration order.
            pub fn names() -> impl Iterator<Item = &'static str> {
                $ty::ALL.iter().map(|value| value.as_str())
            }
        }

        impl std::str::FromStr for $ty {
            type Err = $crate::names::UnknownName;

            fn from_str(name: &str) -> Result<Self, Self::Err> {
                $crate::names::from_serde_name(name, $kind)
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

pub(crate) use impl_serde_names;

#[cfg(test)]
mod tests {
    use crate::{QueueMode, ThinkingLevel, ToolExecutionMode};

    #[test]
    fn names_are_the_serde_names_and_parse_back() {
        fn check<T>(all: &[T], as_str: fn(T) -> &'static str)
        where
            T: Copy + PartialEq + std::fmt::Debug + serde::Serialize + std::str::FromStr,
        {
            for &value in all {
                let name = as_str(value);
                assert_eq!(serde_json::to_value(value).ok(), Some(serde_json::Value::from(name)));
                assert_eq!(name.parse::<T>().ok(), Some(value), "{name}");
            }
        }
        check(ThinkingLevel::ALL, ThinkingLevel::as_str);
        check(ToolExecutionMode::ALL, ToolExecutionMode::as_str);
        check(QueueMode::ALL, QueueMode::as_str);
        assert_eq!(
            ThinkingLevel::names().collect::<Vec<_>>(),
            ["off", "minimal", "low", "medium", "high", "xhigh", "max"]
        );
        assert_eq!(
            ToolExecutionMode::names().collect::<Vec<_>>(),
            ["parallel", "sequential"]
        );
        assert_eq!(QueueMode::names().collect::<Vec<_>>(), ["all", "one-at-a-time"]);
        assert_eq!(QueueMode::OneAtATime.to_string(), "one-at-a-time");
        assert!("High".parse::<ThinkingLevel>().is_err());
        assert!("".parse::<ToolExecutionMode>().is_err());
    }
}
