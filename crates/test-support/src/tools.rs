//! Small tools for tests that need a model to see or call one.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use pi_agent_core::ToolContext;
//! use pi_test_support::tools;
//! use serde_json::json;
//!
//! let weather = tools::weather();
//! assert_eq!(weather.name(), "get_weather");
//! let result = weather.execute("call-1", json!({"city": "Oslo"}), ToolContext::detached()).await.unwrap();
//! assert_eq!(tools::result_text(&result), "sunny in Oslo");
//! # });
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use pi_agent_core::{AgentTool, ContentBlock, FnTool, ToolResult};
use serde_json::{Value, json};

/// A tool with this name, description and parameter schema whose calls answer `unused` (for
/// tests of what is sent to the model about tools).
pub fn unused(name: &str, description: &str, schema: Value) -> Arc<dyn AgentTool> {
    FnTool::new(name, description, schema, |_id, _args, _ctx| async {
        Ok(ToolResult::text("unused"))
    })
    .into_arc()
}

/// `get_weather {city}`, "Current weather of a city": answers `sunny in <city>`.
pub fn weather() -> Arc<dyn AgentTool> {
    FnTool::new(
        "get_weather",
        "Current weather of a city",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        |_id, args, _ctx| async move {
            Ok(ToolResult::text(format!(
                "sunny in {}",
                args["city"].as_str().unwrap_or("?")
            )))
        },
    )
    .into_arc()
}

/// `read_note {name}`, "Reads a note by name": answers `buy milk`, checks (with an assertion in
/// the tool) that the note asked for is `todo`, and counts its calls in `calls`.
pub fn read_note(calls: Arc<AtomicUsize>) -> Arc<dyn AgentTool> {
    FnTool::new(
        "read_note",
        "Reads a note by name",
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
        move |_id, args, _ctx| {
            let calls = calls.clone();
            async move {
                calls.fetch_add(1, Ordering::SeqCst);
                assert_eq!(args["name"], "todo");
                Ok(ToolResult::text("buy milk"))
            }
        },
    )
    .into_arc()
}

/// The text blocks of a tool result, concatenated (images are skipped).
pub fn result_text(result: &ToolResult) -> String {
    result.content.iter().filter_map(ContentBlock::as_text).collect()
}
