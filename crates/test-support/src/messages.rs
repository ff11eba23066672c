//! Transcript messages for request-body tests: what a provider is given as history. The
//! timestamps are fixed (they are never sent), and tool results carry details that must never be
//! sent either (`{"never": "sent"}`), so a test can check that they are left out.
//!
//! ```
//! use pi_agent_core::{ContentBlock, StopReason};
//! use pi_test_support::{messages, openai};
//!
//! let model = openai::model("http://127.0.0.1:1/v1");
//! let history = [
//!     messages::user("What is in a.txt?"),
//!     messages::assistant(&model, vec![ContentBlock::text("Let me look.")], StopReason::Stop),
//!     messages::tool_result("call-1", "read", vec![ContentBlock::text("hello")], false),
//! ];
//! assert_eq!(history[1].as_assistant().unwrap().provider, openai::PROVIDER);
//! ```

use pi_agent_core::{
    AgentMessage, AssistantMessage, ContentBlock, Model, StopReason, ToolResultMessage, UserContent, UserMessage,
};
use serde_json::json;

/// A user message of plain text (timestamp 1).
pub fn user(text: &str) -> AgentMessage {
    AgentMessage::User(UserMessage {
        content: UserContent::Text(text.into()),
        timestamp: 1,
    })
}

/// An assistant message of `model` (its API, provider and id) with this content and stop reason
/// (timestamp 2).
pub fn assistant(model: &Model, content: Vec<ContentBlock>, stop_reason: StopReason) -> AgentMessage {
    AgentMessage::Assistant(AssistantMessage {
        content,
        stop_reason,
        api: model.api.clone(),
        provider: model.provider.clone(),
        model: model.id.clone(),
        timestamp: 2,
        ..AssistantMessage::default()
    })
}

/// The result of call `id` to tool `name` (timestamp 3), with details `{"never": "sent"}`.
pub fn tool_result(id: &str, name: &str, content: Vec<ContentBlock>, is_error: bool) -> AgentMessage {
    AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: name.into(),
        content,
        details: Some(json!({"never": "sent"})),
        usage: None,
        added_tool_names: None,
        is_error,
        timestamp: 3,
    })
}
