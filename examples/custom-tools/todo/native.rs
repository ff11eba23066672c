//! `todo` as a native Rust custom tool: its state lives in the `details` of its results and is
//! rebuilt from the session on every session event, so branching gives the list of that point.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use pi_agent_core::{AgentTool, ToolContext, ToolError, ToolParameters, ToolResult};
use pi_coding_agent::custom_tools::schema::Type;
use pi_coding_agent::custom_tools::{CustomTool, FactoryError, NamedFactory, ToolApi, ToolSessionEvent};
use serde_json::{Value, json};

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Item {
    id: u64,
    text: String,
    done: bool,
}

#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct State {
    todos: Vec<Item>,
    next_id: u64,
}

struct Todo {
    state: Mutex<State>,
    parameters: ToolParameters,
}

/// The factory.
pub(crate) fn factory() -> NamedFactory {
    NamedFactory::new(
        "todo",
        |_api: &ToolApi| -> Result<Vec<Arc<dyn CustomTool>>, FactoryError> {
            let parameters = Type::object([
                ("action", Type::string_enum(["list", "add", "toggle", "clear"])),
                (
                    "text",
                    Type::optional(Type::string().description("Text of the item to add")),
                ),
                (
                    "id",
                    Type::optional(Type::integer().description("Id of the item to toggle")),
                ),
            ]);
            Ok(vec![Arc::new(Todo {
                state: Mutex::new(State {
                    todos: Vec::new(),
                    next_id: 1,
                }),
                parameters: ToolParameters::new(parameters.to_value()),
            })])
        },
    )
}

fn listing(items: &[Item]) -> String {
    if items.is_empty() {
        return "No todos".to_owned();
    }
    items
        .iter()
        .map(|item| format!("[{}] #{}: {}", if item.done { "x" } else { " " }, item.id, item.text))
        .collect::<Vec<_>>()
        .join("\n")
}

#[async_trait]
impl AgentTool for Todo {
    fn name(&self) -> &str {
        "todo"
    }
    fn label(&self) -> &str {
        "Todo"
    }
    fn description(&self) -> &str {
        "Manage a todo list: list, add <text>, toggle <id>, clear."
    }
    fn parameters(&self) -> &ToolParameters {
        &self.parameters
    }
    async fn execute(&self, _id: &str, args: Value, _ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let action = args["action"].as_str().unwrap_or("list").to_owned();
        let text = match action.as_str() {
            "add" => {
                let text = args["text"]
                    .as_str()
                    .filter(|t| !t.is_empty())
                    .ok_or("text required for add")?;
                let id = state.next_id;
                state.next_id += 1;
                state.todos.push(Item {
                    id,
                    text: text.to_owned(),
                    done: false,
                });
                format!("Added todo #{id}: {text}")
            }
            "toggle" => {
                let id = args["id"].as_u64().ok_or("id required for toggle")?;
                let item = state
                    .todos
                    .iter_mut()
                    .find(|i| i.id == id)
                    .ok_or_else(|| format!("Todo #{id} not found"))?;
                item.done = !item.done;
                format!("Todo #{id} {}", if item.done { "completed" } else { "uncompleted" })
            }
            "clear" => {
                let count = state.todos.len();
                *state = State {
                    todos: Vec::new(),
                    next_id: 1,
                };
                format!("Cleared {count} todos")
            }
            _ => listing(&state.todos),
        };
        let details = json!({"action": action, "todos": state.todos, "nextId": state.next_id});
        Ok(ToolResult::text(text).with_details(details))
    }
}

#[async_trait]
impl CustomTool for Todo {
    async fn on_session(&self, event: &ToolSessionEvent) {
        let latest = event
            .result_details("todo")
            .filter_map(|details| serde_json::from_value::<State>(details.clone()).ok())
            .last()
            .unwrap_or(State {
                todos: Vec::new(),
                next_id: 1,
            });
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = latest;
    }
}
