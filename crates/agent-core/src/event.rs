//! The agent event stream: pi's `AgentEvent` names and payloads.
//!
//! A run emits `agent_start`, then per turn `turn_start`, the messages of the turn
//! (`message_start` / `message_update`… / `message_end`), the tool executions
//! (`tool_execution_start` / `_update` / `_end`) and `turn_end`, and finally `agent_end`, which is
//! always last. See `docs/agent-loop.md` for the exact orders.

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::message::{AgentMessage, AssistantMessage, ToolResultMessage};
use crate::model::AssistantMessageEvent;
use crate::tool::ToolResult;

/// One event of an agent run, serialised as pi does (`{"type":"tool_execution_end",…}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum AgentEvent {
    /// The run started.
    AgentStart,
    /// The run ended; always the last event.
    AgentEnd {
        /// The messages this run added (prompts and everything produced).
        messages: Vec<AgentMessage>,
    },
    /// A turn (one model call and its tool calls) started.
    TurnStart,
    /// A turn ended.
    TurnEnd {
        /// The turn's assistant message.
        message: AgentMessage,
        /// The turn's tool results, in source order.
        tool_results: Vec<ToolResultMessage>,
    },
    /// A message started (user, assistant, tool result or custom).
    MessageStart {
        /// The message (for the assistant, the partial at start).
        message: AgentMessage,
    },
    /// The streaming assistant message changed.
    MessageUpdate {
        /// The assistant message so far.
        message: Arc<AssistantMessage>,
        /// The model event that changed it.
        assistant_message_event: AssistantMessageEvent,
    },
    /// A message is complete.
    MessageEnd {
        /// The final message.
        message: AgentMessage,
    },
    /// A tool call started (preflight included).
    ToolExecutionStart {
        /// The call's id.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
        /// Raw arguments from the model.
        args: Value,
    },
    /// A running tool reported a partial result.
    ToolExecutionUpdate {
        /// The call's id.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
        /// Raw arguments from the model.
        args: Value,
        /// The partial result.
        partial_result: ToolResult,
    },
    /// A tool call finished.
    ToolExecutionEnd {
        /// The call's id.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
        /// The result after hooks.
        result: ToolResult,
        /// True when the call failed.
        is_error: bool,
    },
}

impl AgentEvent {
    /// The event's `type` string.
    pub fn kind(&self) -> &'static str {
        match self {
            AgentEvent::AgentStart => "agent_start",
            AgentEvent::AgentEnd { .. } => "agent_end",
            AgentEvent::TurnStart => "turn_start",
            AgentEvent::TurnEnd { .. } => "turn_end",
            AgentEvent::MessageStart { .. } => "message_start",
            AgentEvent::MessageUpdate { .. } => "message_update",
            AgentEvent::MessageEnd { .. } => "message_end",
            AgentEvent::ToolExecutionStart { .. } => "tool_execution_start",
            AgentEvent::ToolExecutionUpdate { .. } => "tool_execution_update",
            AgentEvent::ToolExecutionEnd { .. } => "tool_execution_end",
        }
    }
}

/// Where a loop sends its events; each emit is awaited before the loop goes on.
///
/// Synchronous closures are sinks:
///
/// ```
/// use pi_agent_core::{AgentEvent, EventSink};
/// let mut seen = Vec::new();
/// let mut sink = |event: AgentEvent| seen.push(event.kind());
/// fn takes(_: &mut dyn EventSink) {}
/// takes(&mut sink);
/// ```
#[async_trait]
pub trait EventSink: Send {
    /// Delivers one event.
    async fn emit(&mut self, event: AgentEvent);
}

#[async_trait]
impl<F: FnMut(AgentEvent) + Send> EventSink for F {
    async fn emit(&mut self, event: AgentEvent) {
        self(event)
    }
}
