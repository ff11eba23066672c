//! `hello` as a native Rust custom tool: the smallest factory.

use std::sync::Arc;

use pi_agent_core::{FnTool, ToolResult};
use pi_coding_agent::custom_tools::schema::Type;
use pi_coding_agent::custom_tools::{CustomTool, FactoryError, NamedFactory, ToolApi, plain};
use serde_json::json;

/// The factory: one tool greeting by name.
pub(crate) fn factory() -> NamedFactory {
    NamedFactory::new(
        "hello",
        |_api: &ToolApi| -> Result<Vec<Arc<dyn CustomTool>>, FactoryError> {
            let parameters = Type::object([("name", Type::string().description("Name to greet"))]);
            let hello = FnTool::new(
                "hello",
                "A simple greeting tool",
                parameters.to_value(),
                |_id, args, _ctx| async move {
                    let name = args["name"].as_str().unwrap_or("world").to_owned();
                    Ok(ToolResult::text(format!("Hello, {name}!")).with_details(json!({ "greeted": name })))
                },
            )
            .with_label("Hello");
            Ok(vec![plain(hello)])
        },
    )
}
