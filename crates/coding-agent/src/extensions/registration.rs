//! What an extension registers, as its process reports it: the `Registration` of the
//! `initialize` answer and the `register` notifications that add to it later
//! (`docs/extensions.md`, "The extension protocol").

use serde_json::Value;

use crate::custom_tools::process::{ToolDefinition, parse_definition};

/// A tool an extension registers: the process-tool definition and what pi 0.73 adds to it.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtensionTool {
    /// Name, description, parameters, `executionMode`, `mutatedPaths`.
    pub(crate) definition: ToolDefinition,
    /// One line for the system prompt's tool list (pi's `promptSnippet`).
    pub prompt_snippet: Option<String>,
    /// Lines added to the system prompt's guidelines (pi's `promptGuidelines`).
    pub prompt_guidelines: Vec<String>,
}

impl ExtensionTool {
    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.definition.name
    }

    /// What the model reads.
    pub fn description(&self) -> &str {
        &self.definition.description
    }
}

/// A command (`/name args`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandInfo {
    /// The name the extension gave it (without `/`).
    pub name: String,
    /// Its description.
    pub description: Option<String>,
    /// Whether it completes its arguments (`getArgumentCompletions`).
    pub has_completions: bool,
}

/// A flag (`registerFlag`).
#[derive(Debug, Clone, PartialEq)]
pub struct FlagInfo {
    /// The name, without `--`.
    pub name: String,
    /// Its description.
    pub description: Option<String>,
    /// `true`: `--name <value>`; `false`: a boolean `--name`.
    pub takes_value: bool,
    /// Its default.
    pub default: Option<Value>,
}

/// A keyboard shortcut (interactive mode).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShortcutInfo {
    /// The key, as pi writes it (`ctrl+shift+p`).
    pub shortcut: String,
    /// Its description.
    pub description: Option<String>,
}

/// A provider registered with `registerProvider` (its config as pi's `ProviderConfig` JSON).
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderInfo {
    /// The provider's name.
    pub name: String,
    /// Its configuration.
    pub config: Value,
}

/// Everything one extension registered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Registration {
    /// Its path, as the process reports it.
    pub path: String,
    /// Why it failed to load (nothing else is set then).
    pub error: Option<String>,
    /// Its tools.
    pub tools: Vec<ExtensionTool>,
    /// Its commands.
    pub commands: Vec<CommandInfo>,
    /// Its flags.
    pub flags: Vec<FlagInfo>,
    /// Its shortcuts.
    pub shortcuts: Vec<ShortcutInfo>,
    /// The event types it handles.
    pub events: Vec<String>,
    /// The custom message types it renders.
    pub message_renderers: Vec<String>,
    /// Providers it registered while loading.
    pub providers: Vec<ProviderInfo>,
}

/// The `extensions` of an `initialize` answer, or why it is not one.
pub(crate) fn parse_initialize(answer: &Value) -> Result<Vec<Registration>, String> {
    let Some(list) = answer.get("extensions").and_then(Value::as_array) else {
        return Err("the answer has no \"extensions\" array".to_owned());
    };
    list.iter()
        .enumerate()
        .map(|(index, value)| {
            let mut registration = Registration {
                path: value.get("path").and_then(Value::as_str).unwrap_or_default().to_owned(),
                error: value.get("error").and_then(Value::as_str).map(str::to_owned),
                ..Registration::default()
            };
            if registration.path.is_empty() {
                return Err(format!("extension #{} has no \"path\"", index + 1));
            }
            if registration.error.is_none() {
                registration.add(value)?;
            }
            Ok(registration)
        })
        .collect()
}

/// Checks an `initialize` answer (protocol version 2).
pub(crate) fn check_initialize(answer: &Value) -> Result<(), String> {
    parse_initialize(answer).map(drop)
}

impl Registration {
    /// Adds what `value` (a `Registration` or a `register` notification's params) lists.
    pub(crate) fn add(&mut self, value: &Value) -> Result<(), String> {
        for tool in array(value, "tools") {
            let definition = parse_definition(tool).map_err(|why| match tool.get("name").and_then(Value::as_str) {
                Some(name) => format!("tool \"{name}\": {why}"),
                None => format!("a tool: {why}"),
            })?;
            self.tools.push(ExtensionTool {
                definition,
                prompt_snippet: string(tool, "promptSnippet"),
                prompt_guidelines: array(tool, "promptGuidelines")
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
            });
        }
        for command in array(value, "commands") {
            let name = string(command, "name").ok_or("a command has no \"name\"")?;
            self.commands.push(CommandInfo {
                name,
                description: string(command, "description"),
                has_completions: command.get("hasCompletions").and_then(Value::as_bool) == Some(true),
            });
        }
        for flag in array(value, "flags") {
            let name = string(flag, "name").ok_or("a flag has no \"name\"")?;
            self.flags.push(FlagInfo {
                name,
                description: string(flag, "description"),
                takes_value: flag.get("type").and_then(Value::as_str) == Some("string"),
                default: flag.get("default").filter(|d| !d.is_null()).cloned(),
            });
        }
        for shortcut in array(value, "shortcuts") {
            let key = string(shortcut, "shortcut").ok_or("a shortcut has no \"shortcut\"")?;
            self.shortcuts.push(ShortcutInfo {
                shortcut: key,
                description: string(shortcut, "description"),
            });
        }
        for event in array(value, "events").filter_map(Value::as_str) {
            if !self.events.iter().any(|known| known == event) {
                self.events.push(event.to_owned());
            }
        }
        self.message_renderers.extend(
            array(value, "messageRenderers")
                .filter_map(Value::as_str)
                .map(str::to_owned),
        );
        for provider in array(value, "providers") {
            let name = string(provider, "name").ok_or("a provider has no \"name\"")?;
            self.providers.push(ProviderInfo {
                name,
                config: provider.get("config").cloned().unwrap_or(Value::Null),
            });
        }
        Ok(())
    }
}

fn array<'a>(value: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    value.get(key).and_then(Value::as_array).into_iter().flatten()
}

fn string(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_initialize_answer_lists_what_each_extension_registered() {
        let answer = json!({"extensions": [
            {"path": "/x/a.ts", "tools": [{"name": "t", "description": "T", "parameters": {"type": "object"},
              "promptSnippet": "Do t", "promptGuidelines": ["Use t first"], "executionMode": "sequential"}],
             "commands": [{"name": "hello", "description": "Say hello", "hasCompletions": true}],
             "flags": [{"name": "plan", "type": "boolean", "default": false}, {"name": "level", "type": "string"}],
             "shortcuts": [{"shortcut": "ctrl+p"}], "events": ["input", "input", "tool_call"],
             "messageRenderers": ["note"], "providers": [{"name": "p", "config": {"baseUrl": "http://x"}}]},
            {"path": "/x/b.ts", "error": "Failed to load extension: boom", "tools": [{"bad": 1}]}
        ]});
        let list = parse_initialize(&answer).unwrap();
        assert_eq!(list.len(), 2);
        let a = &list[0];
        assert_eq!(a.tools[0].name(), "t");
        assert_eq!(a.tools[0].prompt_snippet.as_deref(), Some("Do t"));
        assert_eq!(a.tools[0].prompt_guidelines, ["Use t first"]);
        assert!(a.commands[0].has_completions);
        assert!(!a.flags[0].takes_value && a.flags[1].takes_value);
        assert_eq!(a.flags[0].default, Some(json!(false)));
        assert_eq!(a.events, ["input", "tool_call"]);
        assert_eq!(a.providers[0].name, "p");
        assert_eq!(list[1].error.as_deref(), Some("Failed to load extension: boom"));
        assert!(list[1].tools.is_empty(), "a failed extension registers nothing");

        assert_eq!(
            parse_initialize(&json!({"tools": []})).unwrap_err(),
            "the answer has no \"extensions\" array"
        );
        let bad_tool = json!({"extensions": [{"path": "p", "tools": [{"name": "t"}]}]});
        assert_eq!(
            parse_initialize(&bad_tool).unwrap_err(),
            "tool \"t\": \"description\" must be a string"
        );
    }
}
