//! Snapshots of the agent event sequence for the canonical dispatch scenarios (pi-mono §2.7, §3):
//! one tool call, a parallel batch whose first call is slower, a mixed batch forced sequential
//! by one sequential tool, an abort in the middle of a tool (parallel and sequential), and a call
//! blocked by `before_tool_call`.
//!
//! Events are rendered one per line, without timestamps or random ids. Runs use a paused
//! current-thread tokio runtime, so tool durations are virtual and the order is deterministic.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use pi_agent_core::faux::{FauxModel, faux_assistant_message, faux_assistant_text, faux_text, faux_tool_call};
use pi_agent_core::{
    AgentContext, AgentEvent, AgentLoopConfig, AgentMessage, AgentTool, AssistantMessage, AssistantMessageEvent,
    BeforeToolCallContext, BeforeToolCallResult, ContentBlock, FnTool, StopReason, ToolError, ToolExecutionMode,
    ToolResult, run_agent_loop,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

// ---------------------------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------------------------

fn text_of(content: &[ContentBlock]) -> String {
    content.iter().filter_map(ContentBlock::as_text).collect()
}

fn stop_reason(reason: StopReason) -> String {
    serde_json::to_value(reason).unwrap().as_str().unwrap().to_owned()
}

fn block(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => format!("text {:?}", text.text),
        ContentBlock::Thinking(thinking) => format!("thinking {:?}", thinking.thinking),
        ContentBlock::Image(image) => format!("image {}", image.mime_type),
        ContentBlock::ToolCall(call) => format!("toolCall {} {} {}", call.id, call.name, call.arguments),
    }
}

fn assistant(message: &AssistantMessage) -> String {
    let blocks: Vec<String> = message.content.iter().map(block).collect();
    let mut line = format!("assistant {} [{}]", stop_reason(message.stop_reason), blocks.join(", "));
    if let Some(error) = &message.error_message {
        line.push_str(&format!(" error={error:?}"));
    }
    line
}

fn outcome(is_error: bool) -> &'static str {
    if is_error { "error" } else { "ok" }
}

fn message(message: &AgentMessage) -> String {
    match message {
        AgentMessage::User(user) => format!("user {:?}", user.content.text()),
        AgentMessage::Assistant(message) => assistant(message),
        AgentMessage::ToolResult(result) => format!(
            "toolResult {} {} {:?}",
            result.tool_call_id,
            outcome(result.is_error),
            result.text()
        ),
        AgentMessage::Custom(custom) => format!("custom {}", custom.role),
    }
}

/// A short name of a message, for `turn_end` / `agent_end` lists.
fn short(message: &AgentMessage) -> String {
    match message {
        AgentMessage::User(_) => "user".to_owned(),
        AgentMessage::Assistant(assistant) => format!("assistant({})", stop_reason(assistant.stop_reason)),
        AgentMessage::ToolResult(result) => format!("toolResult({})", result.tool_call_id),
        AgentMessage::Custom(custom) => custom.role.clone(),
    }
}

fn stream_event(event: &AssistantMessageEvent) -> String {
    use AssistantMessageEvent as E;
    let kind = event.kind();
    match event {
        E::Start { .. } => kind.to_owned(),
        E::TextStart { content_index, .. }
        | E::ThinkingStart { content_index, .. }
        | E::ToolCallStart { content_index, .. } => format!("{kind} {content_index}"),
        E::TextDelta {
            content_index, delta, ..
        }
        | E::ThinkingDelta {
            content_index, delta, ..
        }
        | E::ToolCallDelta {
            content_index, delta, ..
        } => format!("{kind} {content_index} {delta:?}"),
        E::TextEnd {
            content_index, content, ..
        }
        | E::ThinkingEnd {
            content_index, content, ..
        } => format!("{kind} {content_index} {content:?}"),
        E::ToolCallEnd {
            content_index,
            tool_call,
            ..
        } => format!(
            "{kind} {content_index} {} {} {}",
            tool_call.id, tool_call.name, tool_call.arguments
        ),
        E::Done { reason, .. } | E::Error { reason, .. } => format!("{kind} {}", stop_reason(*reason)),
    }
}

fn line(event: &AgentEvent) -> String {
    match event {
        AgentEvent::AgentStart => "agent_start".to_owned(),
        AgentEvent::AgentEnd { messages } => {
            let names: Vec<String> = messages.iter().map(short).collect();
            format!("agent_end [{}]", names.join(", "))
        }
        AgentEvent::TurnStart => "turn_start".to_owned(),
        AgentEvent::TurnEnd { message, tool_results } => {
            let ids: Vec<&str> = tool_results.iter().map(|r| r.tool_call_id.as_str()).collect();
            format!("turn_end {} toolResults=[{}]", short(message), ids.join(", "))
        }
        AgentEvent::MessageStart { message: m } => format!("message_start {}", message(m)),
        AgentEvent::MessageUpdate {
            assistant_message_event,
            ..
        } => format!("message_update {}", stream_event(assistant_message_event)),
        AgentEvent::MessageEnd { message: m } => format!("message_end {}", message(m)),
        AgentEvent::ToolExecutionStart {
            tool_call_id,
            tool_name,
            args,
        } => format!("tool_execution_start {tool_call_id} {tool_name} {args}"),
        AgentEvent::ToolExecutionUpdate {
            tool_call_id,
            partial_result,
            ..
        } => format!(
            "tool_execution_update {tool_call_id} {:?}",
            text_of(&partial_result.content)
        ),
        AgentEvent::ToolExecutionEnd {
            tool_call_id,
            result,
            is_error,
            ..
        } => {
            let terminate = if result.terminate == Some(true) {
                " terminate"
            } else {
                ""
            };
            format!(
                "tool_execution_end {tool_call_id} {} {:?}{terminate}",
                outcome(*is_error),
                text_of(&result.content)
            )
        }
    }
}

fn render(events: &[AgentEvent]) -> String {
    let lines: Vec<String> = events.iter().map(line).collect();
    lines.join("\n")
}

// ---------------------------------------------------------------------------------------------
// Tools and runs
// ---------------------------------------------------------------------------------------------

/// A tool that sleeps `ms` virtual milliseconds and returns `text`.
fn sleeper(name: &str, ms: u64, text: &'static str) -> FnTool {
    FnTool::new(
        name,
        "sleeps, then answers",
        json!({"type": "object"}),
        move |_id, _args, _ctx| async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(ToolResult::text(text))
        },
    )
}

/// `echo`: reports progress, takes 10 ms and echoes its `text` argument.
fn echo() -> FnTool {
    let schema = json!({
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"]
    });
    FnTool::new("echo", "echoes text", schema, |_id, args: Value, ctx| async move {
        ctx.updates.update(ToolResult::text("echoing"));
        tokio::time::sleep(Duration::from_millis(10)).await;
        Ok(ToolResult::text(format!(
            "echo: {}",
            args["text"].as_str().unwrap_or_default()
        )))
    })
}

/// `wait`: waits up to a virtual second, fails as soon as the run is aborted.
fn wait() -> FnTool {
    FnTool::new(
        "wait",
        "waits for a second",
        json!({"type": "object"}),
        |_id, _args, ctx| async move {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_secs(1)) => Ok(ToolResult::text("waited")),
                () = ctx.cancel.cancelled() => Err(ToolError::new("wait was cancelled")),
            }
        },
    )
}

struct Scenario {
    responses: Vec<AssistantMessage>,
    tools: Vec<FnTool>,
    blocked: Option<(&'static str, &'static str)>,
    abort_after: Option<Duration>,
}

impl Scenario {
    fn new(responses: Vec<AssistantMessage>, tools: Vec<FnTool>) -> Self {
        Scenario {
            responses,
            tools,
            blocked: None,
            abort_after: None,
        }
    }

    /// Runs the scenario with the prompt `hi` and renders its events.
    fn render(self) -> String {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        runtime.block_on(self.run())
    }

    async fn run(self) -> String {
        let faux = FauxModel::new();
        faux.set_responses(self.responses);
        let mut config = AgentLoopConfig::new(faux.model()).with_stream_fn(faux.stream_fn());
        if let Some((tool, reason)) = self.blocked {
            let hook = move |ctx: BeforeToolCallContext<'_>| -> Result<Option<BeforeToolCallResult>, ToolError> {
                Ok((ctx.tool_call.name == tool).then(|| BeforeToolCallResult::block(reason)))
            };
            config.before_tool_call = Some(Arc::new(hook));
        }
        let cancel = CancellationToken::new();
        if let Some(delay) = self.abort_after {
            let cancel = cancel.clone();
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                cancel.cancel();
            });
        }
        let context = AgentContext {
            tools: self
                .tools
                .into_iter()
                .map(FnTool::into_arc)
                .collect::<Vec<Arc<dyn AgentTool>>>(),
            ..Default::default()
        };
        let mut events = Vec::new();
        let mut sink = |event: AgentEvent| events.push(event);
        run_agent_loop(vec![AgentMessage::user("hi")], context, &config, &cancel, &mut sink)
            .await
            .expect("the run starts");
        render(&events)
    }
}

// ---------------------------------------------------------------------------------------------
// Scenarios
// ---------------------------------------------------------------------------------------------

#[test]
fn one_tool_call() {
    let rendered = Scenario::new(
        vec![
            faux_assistant_message(vec![
                faux_text("Hello, echoing."),
                faux_tool_call("call-1", "echo", json!({"text": "hello"})),
            ]),
            faux_assistant_text("Echoed hello."),
        ],
        vec![echo()],
    )
    .render();
    insta::assert_snapshot!("one_tool_call", rendered);
}

#[test]
fn parallel_batch_ends_in_completion_order() {
    let rendered = Scenario::new(
        vec![
            faux_assistant_message(vec![
                faux_tool_call("call-1", "slow", json!({})),
                faux_tool_call("call-2", "fast", json!({})),
            ]),
            faux_assistant_text("ok"),
        ],
        vec![sleeper("slow", 30, "first"), sleeper("fast", 10, "second")],
    )
    .render();
    insta::assert_snapshot!("parallel_batch", rendered);
}

#[test]
fn mixed_batch_runs_sequentially() {
    let rendered = Scenario::new(
        vec![
            faux_assistant_message(vec![
                faux_tool_call("call-1", "slow", json!({})),
                faux_tool_call("call-2", "lock", json!({})),
                faux_tool_call("call-3", "fast", json!({})),
            ]),
            faux_assistant_text("ok"),
        ],
        vec![
            sleeper("slow", 30, "first").with_execution_mode(ToolExecutionMode::Parallel),
            sleeper("lock", 5, "second").with_execution_mode(ToolExecutionMode::Sequential),
            sleeper("fast", 10, "third"),
        ],
    )
    .render();
    insta::assert_snapshot!("mixed_batch", rendered);
}

#[test]
fn abort_mid_tool_in_parallel_batch() {
    let mut scenario = Scenario::new(
        vec![
            faux_assistant_message(vec![
                faux_tool_call("call-1", "wait", json!({})),
                faux_tool_call("call-2", "fast", json!({})),
            ]),
            faux_assistant_text("never streamed"),
        ],
        vec![wait(), sleeper("fast", 10, "second")],
    );
    scenario.abort_after = Some(Duration::from_millis(20));
    insta::assert_snapshot!("abort_mid_tool_parallel", scenario.render());
}

#[test]
fn abort_mid_tool_in_sequential_batch() {
    let mut scenario = Scenario::new(
        vec![
            faux_assistant_message(vec![
                faux_tool_call("call-1", "wait", json!({})),
                faux_tool_call("call-2", "lock", json!({})),
            ]),
            faux_assistant_text("never streamed"),
        ],
        vec![
            wait(),
            sleeper("lock", 5, "second").with_execution_mode(ToolExecutionMode::Sequential),
        ],
    );
    scenario.abort_after = Some(Duration::from_millis(20));
    insta::assert_snapshot!("abort_mid_tool_sequential", scenario.render());
}

#[test]
fn blocked_call() {
    let mut scenario = Scenario::new(
        vec![
            faux_assistant_message(vec![
                faux_tool_call("call-1", "echo", json!({"text": "hello"})),
                faux_tool_call("call-2", "rm", json!({})),
            ]),
            faux_assistant_text("rm was blocked."),
        ],
        vec![echo(), sleeper("rm", 0, "removed")],
    );
    scenario.blocked = Some(("rm", "rm is not allowed"));
    insta::assert_snapshot!("blocked_call", scenario.render());
}
