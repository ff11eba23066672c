//! Helpers shared by the `agent_loop` and `agent` integration tests.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use pi_agent_core::faux::FauxModel;
use pi_agent_core::{
    AgentContext, AgentEvent, AgentLoopConfig, AgentMessage, AgentTool, AssistantMessage, ContentBlock, FnTool,
    ToolResult, run_agent_loop,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A user message with one text block.
pub(crate) fn user(text: &str) -> AgentMessage {
    AgentMessage::user(text)
}

/// The roles of a list of messages.
pub(crate) fn roles(messages: &[AgentMessage]) -> Vec<String> {
    messages.iter().map(|m| m.role().to_owned()).collect()
}

/// The text of a user message (blocks or bare string); empty for other roles.
pub(crate) fn user_text(message: &AgentMessage) -> String {
    match message {
        AgentMessage::User(user) => user.content.text(),
        _ => String::new(),
    }
}

/// The concatenated text blocks of a tool result.
pub(crate) fn result_text(result: &ToolResult) -> String {
    result.content.iter().filter_map(ContentBlock::as_text).collect()
}

/// The last message, which must be an assistant message.
pub(crate) fn last_assistant(messages: &[AgentMessage]) -> AssistantMessage {
    messages
        .last()
        .and_then(AgentMessage::as_assistant)
        .cloned()
        .expect("the last message is an assistant message")
}

/// `{"type":"object","properties":{"value":{"type":"string"}},"required":["value"]}`.
pub(crate) fn value_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"value": {"type": "string"}},
        "required": ["value"]
    })
}

/// An `echo` tool returning `echo: <value>` and counting its executions.
pub(crate) fn echo_tool(name: &str, executions: Arc<AtomicUsize>) -> FnTool {
    FnTool::new(name, "Echoes its value", value_schema(), move |_id, args, _ctx| {
        executions.fetch_add(1, Ordering::SeqCst);
        async move {
            Ok(ToolResult::text(format!(
                "echo: {}",
                args["value"].as_str().unwrap_or_default()
            )))
        }
    })
}

/// Tracks how many tool executions overlap.
#[derive(Default)]
pub(crate) struct Concurrency {
    running: AtomicUsize,
    max: AtomicUsize,
    order: Mutex<Vec<String>>,
}

impl Concurrency {
    /// Marks an execution as started.
    pub(crate) fn enter(&self) {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.max.fetch_max(now, Ordering::SeqCst);
    }

    /// Marks an execution as finished.
    pub(crate) fn leave(&self) {
        self.running.fetch_sub(1, Ordering::SeqCst);
    }

    /// True when two executions ever ran at the same time.
    pub(crate) fn parallel_observed(&self) -> bool {
        self.max.load(Ordering::SeqCst) >= 2
    }

    /// Appends a label to the execution log.
    pub(crate) fn log(&self, label: impl Into<String>) {
        self.order.lock().unwrap().push(label.into());
    }

    /// The execution log.
    pub(crate) fn order(&self) -> Vec<String> {
        self.order.lock().unwrap().clone()
    }
}

/// A tool whose call with value `first` (or `a`) takes 20 ms; records overlap and the finishing
/// order as `<name>:<value>`.
pub(crate) fn slow_tool(name: &str, concurrency: Arc<Concurrency>) -> FnTool {
    let tool_name = name.to_owned();
    FnTool::new(
        name,
        "Sleeps for the first value",
        value_schema(),
        move |_id, args, _ctx| {
            let concurrency = concurrency.clone();
            let tool_name = tool_name.clone();
            async move {
                let value = args["value"].as_str().unwrap_or_default().to_owned();
                concurrency.enter();
                if value == "first" || value == "a" {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
                concurrency.log(format!("{tool_name}:{value}"));
                concurrency.leave();
                Ok(ToolResult::text(value))
            }
        },
    )
}

/// Wraps tools for a context.
pub(crate) fn tools(list: Vec<FnTool>) -> Vec<Arc<dyn AgentTool>> {
    list.into_iter().map(FnTool::into_arc).collect()
}

/// A loop config driven by `faux`.
pub(crate) fn config(faux: &FauxModel) -> AgentLoopConfig {
    AgentLoopConfig::new(faux.model()).with_stream_fn(faux.stream_fn())
}

/// A context with these tools and nothing else.
pub(crate) fn context_with(tools: Vec<Arc<dyn AgentTool>>) -> AgentContext {
    AgentContext {
        tools,
        ..AgentContext::default()
    }
}

/// Runs the loop with one text prompt and returns the new messages and every event.
pub(crate) async fn run(
    prompt: &str,
    context: AgentContext,
    config: &AgentLoopConfig,
) -> (Vec<AgentMessage>, Vec<AgentEvent>) {
    run_with_cancel(prompt, context, config, &CancellationToken::new()).await
}

/// Like [`run`], with a caller-owned cancellation token.
pub(crate) async fn run_with_cancel(
    prompt: &str,
    context: AgentContext,
    config: &AgentLoopConfig,
    cancel: &CancellationToken,
) -> (Vec<AgentMessage>, Vec<AgentEvent>) {
    let mut events = Vec::new();
    let messages = run_agent_loop(vec![user(prompt)], context, config, cancel, &mut |event: AgentEvent| {
        events.push(event)
    })
    .await
    .expect("the loop starts");
    (messages, events)
}

/// The `type` strings of the events, without `message_update` (whose count depends on chunking).
pub(crate) fn kinds_without_updates(events: &[AgentEvent]) -> Vec<&'static str> {
    events
        .iter()
        .map(AgentEvent::kind)
        .filter(|kind| *kind != "message_update")
        .collect()
}

/// Ids of `tool_execution_start` events, in order.
pub(crate) fn start_ids(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolExecutionStart { tool_call_id, .. } => Some(tool_call_id.clone()),
            _ => None,
        })
        .collect()
}

/// Ids of `tool_execution_end` events, in order.
pub(crate) fn end_ids(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolExecutionEnd { tool_call_id, .. } => Some(tool_call_id.clone()),
            _ => None,
        })
        .collect()
}

/// `(result text, is_error)` of every `tool_execution_end`, in order.
pub(crate) fn end_results(events: &[AgentEvent]) -> Vec<(String, String, bool)> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                result,
                is_error,
                ..
            } => Some((tool_call_id.clone(), result_text(result), *is_error)),
            _ => None,
        })
        .collect()
}

/// Tool-call ids of the tool-result `message_end` events, in order.
pub(crate) fn result_message_ids(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::MessageEnd {
                message: AgentMessage::ToolResult(result),
            } => Some(result.tool_call_id.clone()),
            _ => None,
        })
        .collect()
}

/// Tool-call ids of every `turn_end.toolResults`, one list per turn.
pub(crate) fn turn_end_result_ids(events: &[AgentEvent]) -> Vec<Vec<String>> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::TurnEnd { tool_results, .. } => {
                Some(tool_results.iter().map(|r| r.tool_call_id.clone()).collect())
            }
            _ => None,
        })
        .collect()
}

/// The tool-result messages among `messages`.
pub(crate) fn tool_results(messages: &[AgentMessage]) -> Vec<pi_agent_core::ToolResultMessage> {
    messages
        .iter()
        .filter_map(AgentMessage::as_tool_result)
        .cloned()
        .collect()
}
