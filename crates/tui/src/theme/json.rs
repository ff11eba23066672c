//! pi's theme file format (`docs/themes.md`): `name`, optional `vars`, the 51 `colors` and the
//! optional `export` colours; a colour is `"#rrggbb"`, a 256-colour index, a variable's name or
//! `""` (the terminal's default). Checked the way pi checks it, with pi's messages.

use std::path::{Path, PathBuf};

use ratatui::style::Color;
use serde_json::{Map, Value};

use super::slot::{SLOT_COUNT, Slot};

/// Why a theme could not be loaded, in pi's words.
#[derive(Debug, thiserror::Error)]
pub enum ThemeError {
    /// The file could not be read.
    #[error("Failed to read theme {path}: {source}", path = .path.display())]
    Read {
        /// The theme file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The text is not JSON.
    #[error("Failed to parse theme {label}: {message}")]
    Syntax {
        /// The file's path (or the theme's name).
        label: String,
        /// The JSON parser's message.
        message: String,
    },
    /// The JSON is not a theme: pi's list of missing colour tokens and other problems.
    #[error("{}", invalid_message(.label, .missing, .other))]
    Invalid {
        /// The file's path (or the theme's name).
        label: String,
        /// Colour tokens `colors` lacks, sorted.
        missing: Vec<String>,
        /// Every other problem, as `/path: what is wrong`.
        other: Vec<String>,
    },
    /// A colour names a variable `vars` does not define.
    #[error("Variable reference not found: {0}")]
    MissingVariable(String),
    /// Variables refer to each other in a circle.
    #[error("Circular variable reference detected: {0}")]
    CircularVariable(String),
    /// A `#` colour that is not six hex digits.
    #[error("Invalid hex color: {0}")]
    InvalidHex(String),
}

fn invalid_message(label: &str, missing: &[String], other: &[String]) -> String {
    let mut message = format!("Invalid theme \"{label}\":\n");
    if !missing.is_empty() {
        message.push_str("\nMissing required color tokens:\n");
        let list: Vec<String> = missing.iter().map(|m| format!("  - {m}")).collect();
        message.push_str(&list.join("\n"));
        message.push_str("\n\nPlease add these colors to your theme's \"colors\" object.");
        message.push_str("\nSee the built-in themes (dark.json, light.json) for reference values.");
    }
    if !other.is_empty() {
        let list: Vec<String> = other.iter().map(|o| format!("  - {o}")).collect();
        message.push_str(&format!("\n\nOther errors:\n{}", list.join("\n")));
    }
    message
}

/// A theme file read and checked: its name and every token's colour, variables resolved.
pub(crate) struct ParsedTheme {
    pub(crate) name: String,
    pub(crate) colors: [Color; SLOT_COUNT],
    /// The `export` section's `pageBg`, `cardBg`, `infoBg`.
    pub(crate) export: [Option<Color>; 3],
}

/// Parses a theme file's text; `label` names it in errors (pi uses the file's path).
pub(crate) fn parse(label: &str, text: &str) -> Result<ParsedTheme, ThemeError> {
    let value: Value = serde_json::from_str(text).map_err(|error| ThemeError::Syntax {
        label: label.to_owned(),
        message: error.to_string(),
    })?;
    check(label, &value)?;
    // `check` guarantees an object with a string `name` and an object `colors`.
    let empty = Map::new();
    let object = value.as_object().unwrap_or(&empty);
    let name = object
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let vars = object.get("vars").and_then(Value::as_object).unwrap_or(&empty);
    let colors = object.get("colors").and_then(Value::as_object).unwrap_or(&empty);
    let mut resolved = [Color::Reset; SLOT_COUNT];
    // pi resolves every entry of `colors`, in the file's order (unknown tokens too).
    for (token, value) in colors {
        let color = resolve(value, vars, &mut Vec::new())?;
        if let Some(slot) = Slot::from_name(token) {
            resolved[slot as usize] = color;
        }
    }
    let mut export = [None; 3];
    if let Some(section) = object.get("export").and_then(Value::as_object) {
        for (slot, key) in export.iter_mut().zip(["pageBg", "cardBg", "infoBg"]) {
            if let Some(value) = section.get(key) {
                *slot = Some(resolve(value, vars, &mut Vec::new())?);
            }
        }
    }
    Ok(ParsedTheme {
        name,
        colors: resolved,
        export,
    })
}

/// pi's schema check: the missing colour tokens and the other problems, in the schema's order.
fn check(label: &str, value: &Value) -> Result<(), ThemeError> {
    let mut missing = Vec::new();
    let mut other = Vec::new();
    match value.as_object() {
        None => other.push("/: must be object".to_owned()),
        Some(object) => {
            let absent: Vec<&str> = ["name", "colors"]
                .into_iter()
                .filter(|key| !object.contains_key(*key))
                .collect();
            if !absent.is_empty() {
                other.push(format!("/: must have required properties {}", absent.join(", ")));
            }
            if let Some(schema) = object.get("$schema")
                && !schema.is_string()
            {
                other.push("/$schema: must be string".to_owned());
            }
            if let Some(name) = object.get("name")
                && !name.is_string()
            {
                other.push("/name: must be string".to_owned());
            }
            if let Some(vars) = object.get("vars") {
                match vars.as_object() {
                    None => other.push("/vars: must be object".to_owned()),
                    Some(vars) => {
                        for (key, value) in vars {
                            check_color(&format!("/vars/{key}"), value, &mut other);
                        }
                    }
                }
            }
            if let Some(colors) = object.get("colors") {
                match colors.as_object() {
                    None => other.push("/colors: must be object".to_owned()),
                    Some(colors) => {
                        for slot in Slot::ALL {
                            match colors.get(slot.name()) {
                                None => missing.push(slot.name().to_owned()),
                                Some(value) => check_color(&format!("/colors/{}", slot.name()), value, &mut other),
                            }
                        }
                    }
                }
            }
            if let Some(export) = object.get("export") {
                match export.as_object() {
                    None => other.push("/export: must be object".to_owned()),
                    Some(export) => {
                        for key in ["pageBg", "cardBg", "infoBg"] {
                            if let Some(value) = export.get(key) {
                                check_color(&format!("/export/{key}"), value, &mut other);
                            }
                        }
                    }
                }
            }
        }
    }
    if missing.is_empty() && other.is_empty() {
        return Ok(());
    }
    missing.sort();
    Err(ThemeError::Invalid {
        label: label.to_owned(),
        missing,
        other,
    })
}

/// A colour value is a string or an integer from 0 to 255 (pi's messages for anything else).
fn check_color(path: &str, value: &Value, errors: &mut Vec<String>) {
    let problem = match value {
        Value::String(_) => return,
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f < 0.0 => "must be >= 0",
            Some(f) if f.fract() == 0.0 && f > 255.0 => "must be <= 255",
            Some(f) if f.fract() == 0.0 => return,
            _ => "must be integer",
        },
        _ => "must be integer",
    };
    errors.push(format!("{path}: must be string"));
    errors.push(format!("{path}: {problem}"));
    errors.push(format!("{path}: must match a schema in anyOf"));
}

/// A checked colour value as a terminal colour, following variables.
fn resolve(value: &Value, vars: &Map<String, Value>, visited: &mut Vec<String>) -> Result<Color, ThemeError> {
    match value {
        Value::Number(n) => Ok(n
            .as_f64()
            .filter(|f| (0.0..=255.0).contains(f))
            .map_or(Color::Reset, |f| Color::Indexed(f as u8))),
        Value::String(s) if s.is_empty() => Ok(Color::Reset),
        Value::String(s) if s.starts_with('#') => hex(s),
        Value::String(s) => {
            if visited.contains(s) {
                return Err(ThemeError::CircularVariable(s.clone()));
            }
            let Some(next) = vars.get(s) else {
                return Err(ThemeError::MissingVariable(s.clone()));
            };
            visited.push(s.clone());
            resolve(next, vars, visited)
        }
        _ => Ok(Color::Reset),
    }
}

/// `#rrggbb` as a 24-bit colour.
fn hex(text: &str) -> Result<Color, ThemeError> {
    let digits = text.replacen('#', "", 1);
    let channel = |i: usize| {
        digits
            .get(i..i + 2)
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|d| u8::from_str_radix(d, 16).ok())
    };
    match (digits.len(), channel(0), channel(2), channel(4)) {
        (6, Some(r), Some(g), Some(b)) => Ok(Color::Rgb(r, g, b)),
        _ => Err(ThemeError::InvalidHex(text.to_owned())),
    }
}

/// Reads and parses the theme file at `path` (blocking); errors name the file by its path.
pub(crate) fn load(path: &Path) -> Result<ParsedTheme, ThemeError> {
    let text = std::fs::read_to_string(path).map_err(|source| ThemeError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&path.display().to_string(), &text)
}
