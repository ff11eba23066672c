//! Extension flags (`registerFlag`): the command line's unknown `--name [value]` arguments, kept
//! until the extensions loaded, then read by the registered flags' types as pi 0.73.1 reads them,
//! and the "Extension CLI Flags:" section of `--help`.

use serde_json::{Map, Value};

use super::registration::FlagInfo;

/// An argument `--name`, `--name value` or `--name=value` the command line did not know, as pi
/// splits it: the next argument is the value unless it starts with `-` or `@`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GivenFlag {
    /// Without `--`.
    pub name: String,
    /// The value, if one followed.
    pub value: Option<String>,
}

/// Why the extension flags of the command line cannot be used (pi's texts).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FlagError {
    /// No extension registered these flags.
    #[error("Unknown option{}: {}", if .names.len() == 1 { "" } else { "s" }, .names.iter().map(|n| format!("--{n}")).collect::<Vec<_>>().join(", "))]
    Unknown {
        /// Their names.
        names: Vec<String>,
    },
    /// A string flag without a value.
    #[error("Extension flag \"--{name}\" requires a value")]
    RequiresValue {
        /// Its name.
        name: String,
    },
}

/// The values of the `flags` notification: each registered flag's default, then what the command
/// line gave (a boolean flag given is `true`, whatever followed it; a string flag takes its
/// value). Every error, in pi's order (values first, then the unknown flags).
pub(crate) fn values(
    registered: &[(String, FlagInfo)],
    given: &[GivenFlag],
) -> Result<Map<String, Value>, Vec<FlagError>> {
    let mut values = Map::new();
    for (_, flag) in registered {
        if let Some(default) = &flag.default {
            values.insert(flag.name.clone(), default.clone());
        }
    }
    let mut errors = Vec::new();
    let mut unknown = Vec::new();
    for flag in given {
        let Some((_, info)) = registered.iter().find(|(_, info)| info.name == flag.name) else {
            unknown.push(flag.name.clone());
            continue;
        };
        if !info.takes_value {
            values.insert(flag.name.clone(), Value::Bool(true));
            continue;
        }
        match &flag.value {
            Some(value) => {
                values.insert(flag.name.clone(), Value::from(value.clone()));
            }
            None => errors.push(FlagError::RequiresValue {
                name: flag.name.clone(),
            }),
        }
    }
    if !unknown.is_empty() {
        errors.push(FlagError::Unknown { names: unknown });
    }
    if errors.is_empty() { Ok(values) } else { Err(errors) }
}

/// `--help`'s section of the registered flags, as pi 0.73.1 prints it (empty without flags):
///
/// ```text
/// Extension CLI Flags:
///   --plan                      Start in plan mode
///   --level <value>             A level
/// ```
pub fn help_section(flags: &[(String, FlagInfo)]) -> String {
    if flags.is_empty() {
        return String::new();
    }
    let lines: Vec<String> = flags
        .iter()
        .map(|(path, flag)| {
            let value = if flag.takes_value { " <value>" } else { "" };
            let description = flag
                .description
                .clone()
                .unwrap_or_else(|| format!("Registered by {path}"));
            format!("{:<30}{description}", format!("  --{}{value}", flag.name))
        })
        .collect();
    format!("Extension CLI Flags:\n{}\n", lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn flag(name: &str, takes_value: bool, default: Option<Value>) -> (String, FlagInfo) {
        let info = FlagInfo {
            name: name.into(),
            description: (name == "plan").then(|| "Start in plan mode".to_owned()),
            takes_value,
            default,
        };
        ("/x/ext.ts".into(), info)
    }

    fn given(name: &str, value: Option<&str>) -> GivenFlag {
        GivenFlag {
            name: name.into(),
            value: value.map(str::to_owned),
        }
    }

    #[test]
    fn flags_are_read_by_their_registered_type() {
        let registered = [flag("plan", false, Some(json!(false))), flag("level", true, None)];
        let values = values(
            &registered,
            &[given("plan", Some("ignored")), given("level", Some("3"))],
        )
        .unwrap();
        assert_eq!(Value::Object(values), json!({"plan": true, "level": "3"}));
        let defaults = super::values(&registered, &[]).unwrap();
        assert_eq!(Value::Object(defaults), json!({"plan": false}));
        let errors = super::values(
            &registered,
            &[given("level", None), given("x", None), given("y", Some("1"))],
        )
        .unwrap_err();
        let texts: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            texts,
            [
                "Extension flag \"--level\" requires a value",
                "Unknown options: --x, --y"
            ]
        );
        assert_eq!(
            super::values(&registered, &[given("x", None)]).unwrap_err()[0].to_string(),
            "Unknown option: --x"
        );
    }

    #[test]
    fn the_help_section_is_pis() {
        let registered = [flag("plan", false, None), flag("level", true, None)];
        assert_eq!(
            help_section(&registered),
            "Extension CLI Flags:\n  --plan                      Start in plan mode\n  --level <value>             Registered by /x/ext.ts\n"
        );
        assert_eq!(help_section(&[]), "");
    }
}
