//! The `Context` snapshot pi sends with every `event`, `command`, `shortcut` and `execute` of an
//! extension process (pi's `ExtensionContext` getters, answered by the process from it): cwd,
//! model, thinking level, idle state, session name / file / id / leaf, tools, commands, the
//! system prompt and the context usage. The branch (`session: {keep, entries}`) and the model come
//! from the process-tool context, which tracks what the process already holds.

use serde_json::{Map, Value, json};

use super::hub::Hub;
use crate::App;
use crate::config::thinking_level_name;

/// The snapshot without `session` (the process-tool context adds it); `null` fields before the
/// app exists.
pub(crate) fn snapshot(hub: &Hub, has_ui: bool) -> Map<String, Value> {
    let mut context = Map::new();
    let Some(app) = hub.app() else {
        context.insert("hasUI".into(), Value::Bool(has_ui));
        return context;
    };
    let session = app.session();
    let agent = session.agent();
    let state = agent.state();
    let (name, file, id, leaf) = app.with_store(|store| {
        (
            store.name().map(str::to_owned),
            store.file().map(|f| f.display().to_string()),
            store.id().to_owned(),
            store.leaf_id().map(str::to_owned),
        )
    });
    let all_tools: Vec<Value> = session
        .tool_registry()
        .iter()
        .filter(|tool| !tool.hidden)
        .map(|tool| {
            json!({
                "name": tool.tool.name(),
                "description": tool.tool.description(),
                "parameters": tool.tool.parameters().schema(),
            })
        })
        .collect();
    let fields = [
        ("cwd", json!(session.cwd())),
        ("hasUI", Value::Bool(has_ui)),
        ("model", serde_json::to_value(&state.model).unwrap_or(Value::Null)),
        ("thinkingLevel", json!(thinking_level_name(state.thinking_level))),
        ("isIdle", Value::Bool(!state.is_streaming)),
        ("hasPendingMessages", Value::Bool(session.pending_message_count() > 0)),
        ("sessionName", json!(name)),
        ("sessionFile", json!(file)),
        ("sessionId", json!(id)),
        ("leafId", json!(leaf)),
        ("activeTools", json!(session.active_tool_names())),
        ("allTools", Value::Array(all_tools)),
        ("commands", Value::Array(commands(hub))),
        ("systemPrompt", json!(state.system_prompt)),
        ("contextUsage", context_usage(&app)),
    ];
    context.extend(fields.into_iter().map(|(key, value)| (key.to_owned(), value)));
    context
}

fn context_usage(app: &App) -> Value {
    app.context_usage().map_or(Value::Null, |usage| usage.to_json())
}

/// `pi.getCommands()`: the extension commands (prompt templates and skills are not supported
/// yet), by invocation name.
fn commands(hub: &Hub) -> Vec<Value> {
    super::commands::resolve(hub)
        .into_iter()
        .map(|command| {
            json!({"name": command.invocation_name, "description": command.description,
                   "source": "extension", "path": command.path})
        })
        .collect()
}
