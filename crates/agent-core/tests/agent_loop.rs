//! Behaviour of the agent loop, after pi's `agent-loop.test.ts` (one test per row of
//! `pi-mono.md` §5.1, named after it) plus the loop rules of §2 that pi covers elsewhere:
//! dispatch, preparation errors, hooks, abort, tool updates, queues and the loop entry points.
//!
//! Longer than 800 lines on purpose: it follows pi's `agent-loop.test.ts` test by test (named after
//! it), plus the loop rules pi tests elsewhere, so each case can be found next to pi's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use futures::future::BoxFuture;
use pi_agent_core::faux::{
    FauxModel, FauxResponse, faux_assistant_message, faux_assistant_text, faux_text, faux_tool_call,
};
use pi_agent_core::{
    AfterToolCallContext, AfterToolCallResult, Agent, AgentContext, AgentEvent, AgentLoopConfig, AgentLoopError,
    AgentMessage, AgentOptions, BeforeToolCallContext, BeforeToolCallHook, BeforeToolCallResult, ContentBlock,
    CustomMessage, FnTool, MessageQueue, NextTurn, QueueMode, StopReason, ToolChoice, ToolError, ToolExecutionMode,
    ToolResult, ToolUpdateSink, TransformContext, TurnContext, Usage, agent_loop, agent_loop_continue, run_agent_loop,
    run_agent_loop_continue, set_default_stream_fn,
};
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use common::{
    Concurrency, config, context_with, echo_tool, end_ids, end_results, kinds_without_updates, last_assistant,
    result_message_ids, result_text, roles, run, run_with_cancel, slow_tool, start_ids, tool_results, tools,
    turn_end_result_ids, user, user_text, value_schema,
};

type BeforeResult = Result<Option<BeforeToolCallResult>, ToolError>;
type AfterResult = Result<Option<AfterToolCallResult>, ToolError>;

fn counter() -> Arc<AtomicUsize> {
    Arc::new(AtomicUsize::new(0))
}

fn count(counter: &AtomicUsize) -> usize {
    counter.load(Ordering::SeqCst)
}

fn two_calls(name: &str, first: &str, second: &str) -> pi_agent_core::AssistantMessage {
    faux_assistant_message(vec![
        faux_tool_call("tool-1", name, json!({"value": first})),
        faux_tool_call("tool-2", name, json!({"value": second})),
    ])
}

fn custom(role: &str, text: &str) -> AgentMessage {
    let mut fields = serde_json::Map::new();
    fields.insert("text".into(), json!(text));
    fields.insert("timestamp".into(), json!(0));
    AgentMessage::Custom(CustomMessage {
        role: role.into(),
        fields,
    })
}

// ---------------------------------------------------------------------------------------------
// pi-mono.md §5.1 — agent-loop.test.ts
// ---------------------------------------------------------------------------------------------

/// The default stream function is process-global: this is the only test of this file that
/// installs it, it restores `None` before asserting, and no test here relies on it being unset.
/// It also covers the `Agent`'s fallback to the default (pi's agent.test.ts "default streamFn").
#[tokio::test]
async fn uses_the_configured_default_when_a_legacy_caller_omits_stream_fn() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_text("from the default"),
        faux_assistant_text("agent from the default"),
    ]);
    set_default_stream_fn(Some(faux.stream_fn()));
    let config = AgentLoopConfig::new(faux.model());
    assert!(config.stream_fn.is_none());
    let mut events = Vec::new();
    let outcome = run_agent_loop(
        vec![user("hi")],
        AgentContext::default(),
        &config,
        &CancellationToken::new(),
        &mut |event: AgentEvent| events.push(event),
    )
    .await;
    let agent = Agent::new(AgentOptions::new(faux.model()));
    let agent_outcome = agent.prompt("hello").await;
    set_default_stream_fn(None);

    let messages = outcome.unwrap();
    assert_eq!(last_assistant(&messages).text(), "from the default");
    agent_outcome.unwrap();
    assert_eq!(last_assistant(&agent.messages()).text(), "agent from the default");
    assert_eq!(faux.call_count(), 2);
}

#[tokio::test]
async fn should_emit_events_with_agent_message_types() {
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("Hi there!")]);
    let (messages, events) = run("Hello", AgentContext::default(), &config(&faux)).await;

    assert_eq!(roles(&messages), ["user", "assistant"]);
    assert_eq!(user_text(&messages[0]), "Hello");
    assert_eq!(last_assistant(&messages).text(), "Hi there!");
    let kinds = kinds_without_updates(&events);
    for kind in [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ] {
        assert!(kinds.contains(&kind), "missing {kind} in {kinds:?}");
    }
    assert_eq!(kinds.first(), Some(&"agent_start"));
    assert_eq!(kinds.last(), Some(&"agent_end"));
    let Some(AgentEvent::AgentEnd { messages: ended }) = events.last() else {
        panic!("agent_end is last");
    };
    assert_eq!(ended, &messages);
}

#[tokio::test]
async fn should_handle_custom_message_types_via_convert_to_llm() {
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("ok")]);
    let seen_by_converter = Arc::new(Mutex::new(Vec::new()));
    let mut config = config(&faux);
    let seen = seen_by_converter.clone();
    config.convert_to_llm = Some(Arc::new(move |messages: &[AgentMessage]| {
        seen.lock().unwrap().push(roles(messages));
        messages
            .iter()
            .filter(|m| m.role() != "notification")
            .cloned()
            .collect()
    }));
    let context = AgentContext {
        messages: vec![custom("notification", "build finished")],
        ..AgentContext::default()
    };
    let (messages, _) = run("hello", context, &config).await;

    assert_eq!(*seen_by_converter.lock().unwrap(), [vec!["notification", "user"]]);
    assert_eq!(faux.calls()[0].roles, ["user"]);
    assert_eq!(roles(&messages), ["user", "assistant"]);
}

struct KeepLast(usize, Arc<AtomicUsize>);

#[async_trait]
impl TransformContext for KeepLast {
    async fn transform(&self, messages: &[AgentMessage], _cancel: &CancellationToken) -> Vec<AgentMessage> {
        self.1.fetch_add(1, Ordering::SeqCst);
        messages[messages.len().saturating_sub(self.0)..].to_vec()
    }
}

#[tokio::test]
async fn should_apply_transform_context_before_convert_to_llm() {
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("ok")]);
    let transforms = counter();
    let converter_input = Arc::new(Mutex::new(Vec::new()));
    let mut config = config(&faux);
    config.transform_context = Some(Arc::new(KeepLast(2, transforms.clone())));
    let seen = converter_input.clone();
    config.convert_to_llm = Some(Arc::new(move |messages: &[AgentMessage]| {
        seen.lock().unwrap().push(messages.len());
        messages.to_vec()
    }));
    let context = AgentContext {
        messages: vec![
            user("old 1"),
            faux_assistant_text("old reply 1").into(),
            user("old 2"),
            faux_assistant_text("old reply 2").into(),
        ],
        ..AgentContext::default()
    };
    let (messages, _) = run("new prompt", context, &config).await;

    assert_eq!(count(&transforms), 1);
    assert_eq!(*converter_input.lock().unwrap(), [2]);
    assert_eq!(faux.calls()[0].roles, ["assistant", "user"]);
    assert_eq!(roles(&messages), ["user", "assistant"]);
}

#[tokio::test]
async fn should_handle_tool_calls_and_results() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call("tool-1", "echo", json!({"value": "hello"}))]),
        faux_assistant_text("done"),
    ]);
    let received = Arc::new(Mutex::new(Vec::new()));
    let tool_usage = Usage {
        input: 10,
        output: 5,
        total_tokens: 15,
        ..Usage::default()
    };
    let patched_usage = Usage {
        input: 1,
        output: 2,
        total_tokens: 3,
        ..Usage::default()
    };
    let got = received.clone();
    let echo = FnTool::new("echo", "Echoes", value_schema(), move |_id, args, _ctx| {
        got.lock().unwrap().push(args["value"].clone());
        async move {
            let mut result = ToolResult::text(format!("echo: {}", args["value"].as_str().unwrap()));
            result.usage = Some(tool_usage);
            Ok(result)
        }
    });
    let hook_saw = Arc::new(Mutex::new(None));
    let saw = hook_saw.clone();
    let mut config = config(&faux);
    config.after_tool_call = Some(Arc::new(move |ctx: AfterToolCallContext<'_>| -> AfterResult {
        *saw.lock().unwrap() = ctx.result.usage;
        Ok(Some(AfterToolCallResult {
            usage: Some(patched_usage),
            ..AfterToolCallResult::default()
        }))
    }));
    let (messages, events) = run("echo hello", context_with(tools(vec![echo])), &config).await;

    assert_eq!(*received.lock().unwrap(), [json!("hello")]);
    assert_eq!(start_ids(&events), ["tool-1"]);
    assert_eq!(end_results(&events), [("tool-1".into(), "echo: hello".into(), false)]);
    assert_eq!(*hook_saw.lock().unwrap(), Some(tool_usage));
    let results = tool_results(&messages);
    assert_eq!(results.len(), 1);
    assert!(!results[0].is_error);
    assert_eq!(results[0].usage, Some(patched_usage));
    assert_eq!(roles(&messages), ["user", "assistant", "toolResult", "assistant"]);
}

#[tokio::test]
async fn should_not_execute_tool_calls_from_a_length_truncated_assistant_message() {
    let faux = FauxModel::new();
    let mut truncated = faux_assistant_message(vec![faux_tool_call("tool-1", "echo", json!({"value": "cut"}))]);
    truncated.stop_reason = StopReason::Length;
    faux.set_responses([truncated, faux_assistant_text("retried")]);
    let executions = counter();
    let context = context_with(tools(vec![echo_tool("echo", executions.clone())]));
    let (messages, events) = run("go", context, &config(&faux)).await;

    assert_eq!(count(&executions), 0);
    let ends = end_results(&events);
    assert_eq!(ends.len(), 1);
    assert!(ends[0].2);
    assert!(ends[0].1.contains("output token limit"), "{}", ends[0].1);
    assert_eq!(
        ends[0].1,
        "Tool call \"echo\" was not executed: the response hit the output token limit, so its arguments may be \
         truncated. Re-issue the tool call with complete arguments."
    );
    assert_eq!(faux.call_count(), 2);
    assert_eq!(roles(&messages), ["user", "assistant", "toolResult", "assistant"]);
}

#[tokio::test]
async fn should_execute_mutated_before_tool_call_args_without_revalidation() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call("tool-1", "echo", json!({"value": "text"}))]),
        faux_assistant_text("done"),
    ]);
    let received = Arc::new(Mutex::new(Vec::new()));
    let got = received.clone();
    let tool = FnTool::new("echo", "Echoes", value_schema(), move |_id, args, _ctx| {
        got.lock().unwrap().push(args);
        async { Ok(ToolResult::text("ok")) }
    });
    let mut config = config(&faux);
    config.before_tool_call = Some(Arc::new(|ctx: BeforeToolCallContext<'_>| -> BeforeResult {
        let args = ctx.args;
        args["value"] = json!(123);
        Ok(None)
    }));
    let (messages, _) = run("go", context_with(tools(vec![tool])), &config).await;

    assert_eq!(*received.lock().unwrap(), [json!({"value": 123})]);
    assert!(!tool_results(&messages)[0].is_error);
}

#[tokio::test]
async fn should_prepare_tool_arguments_for_validation() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call(
            "tool-1",
            "edit",
            json!({"path": "a.txt", "oldText": "before", "newText": "after"}),
        )]),
        faux_assistant_text("done"),
    ]);
    let schema = json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "edits": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
                    "required": ["oldText", "newText"]
                }
            }
        },
        "required": ["path", "edits"]
    });
    let received = Arc::new(Mutex::new(Vec::new()));
    let got = received.clone();
    let edit = FnTool::new("edit", "Edits a file", schema, move |_id, args, _ctx| {
        got.lock().unwrap().push(args);
        async { Ok(ToolResult::text("edited")) }
    })
    .with_prepare_arguments(|args: Value| {
        let (Some(old), Some(new)) = (args.get("oldText"), args.get("newText")) else {
            return args;
        };
        json!({"path": args["path"], "edits": [{"oldText": old, "newText": new}]})
    });
    let (messages, _) = run("edit", context_with(tools(vec![edit])), &config(&faux)).await;

    let received = received.lock().unwrap();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0]["edits"], json!([{"oldText": "before", "newText": "after"}]));
    assert!(!tool_results(&messages)[0].is_error);
}

#[tokio::test(start_paused = true)]
async fn should_emit_tool_execution_end_in_completion_order_but_persist_tool_results_in_source_order() {
    let faux = FauxModel::new();
    faux.set_responses([two_calls("slow", "first", "second"), faux_assistant_text("done")]);
    let concurrency = Arc::new(Concurrency::default());
    let context = context_with(tools(vec![slow_tool("slow", concurrency.clone())]));
    let (messages, events) = run("go", context, &config(&faux)).await;

    assert!(concurrency.parallel_observed());
    assert_eq!(end_ids(&events), ["tool-2", "tool-1"]);
    assert_eq!(result_message_ids(&events), ["tool-1", "tool-2"]);
    assert_eq!(turn_end_result_ids(&events)[0], ["tool-1", "tool-2"]);
    let persisted: Vec<_> = tool_results(&messages).into_iter().map(|r| r.tool_call_id).collect();
    assert_eq!(persisted, ["tool-1", "tool-2"]);
}

#[tokio::test]
async fn should_inject_queued_messages_after_all_tool_calls_complete() {
    let faux = FauxModel::new();
    let second_call_context = Arc::new(Mutex::new(Vec::new()));
    let seen = second_call_context.clone();
    faux.set_responses([
        FauxResponse::from(two_calls("echo", "one", "two")),
        FauxResponse::factory(move |request| {
            *seen.lock().unwrap() = request.context.messages.to_vec();
            faux_assistant_text("done")
        }),
    ]);
    let executions = counter();
    let mut config = config(&faux);
    config.tool_execution = ToolExecutionMode::Sequential;
    let delivered = Arc::new(AtomicBool::new(false));
    let executed = executions.clone();
    config.get_steering_messages = Some(Arc::new(move || {
        if count(&executed) >= 1 && !delivered.swap(true, Ordering::SeqCst) {
            vec![user("interrupt")]
        } else {
            Vec::new()
        }
    }));
    let context = context_with(tools(vec![echo_tool("echo", executions.clone())]));
    let (_, events) = run("go", context, &config).await;

    assert_eq!(count(&executions), 2);
    let ends = end_results(&events);
    assert_eq!(ends.len(), 2);
    assert!(ends.iter().all(|(_, _, is_error)| !is_error));
    let position = |predicate: &dyn Fn(&AgentMessage) -> bool| {
        events
            .iter()
            .enumerate()
            .filter_map(|(i, event)| match event {
                AgentEvent::MessageStart { message } if predicate(message) => Some(i),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let result_starts = position(&|m| m.role() == "toolResult");
    let interrupt_starts = position(&|m| user_text(m) == "interrupt");
    assert_eq!(result_starts.len(), 2);
    assert_eq!(interrupt_starts.len(), 1);
    assert!(interrupt_starts[0] > result_starts[1]);
    let second_call = second_call_context.lock().unwrap();
    assert_eq!(
        roles(&second_call),
        ["user", "assistant", "toolResult", "toolResult", "user"]
    );
    assert_eq!(user_text(&second_call[4]), "interrupt");
}

#[tokio::test(start_paused = true)]
async fn should_force_sequential_execution_when_a_tool_has_execution_mode_sequential_even_with_default_parallel_config()
{
    let faux = FauxModel::new();
    faux.set_responses([two_calls("slow", "first", "second"), faux_assistant_text("done")]);
    let concurrency = Arc::new(Concurrency::default());
    let slow = slow_tool("slow", concurrency.clone()).with_execution_mode(ToolExecutionMode::Sequential);
    let config = config(&faux);
    assert_eq!(config.tool_execution, ToolExecutionMode::Parallel);
    let (messages, events) = run("go", context_with(tools(vec![slow])), &config).await;

    assert!(!concurrency.parallel_observed());
    assert_eq!(concurrency.order(), ["slow:first", "slow:second"]);
    let persisted: Vec<_> = tool_results(&messages).into_iter().map(|r| r.tool_call_id).collect();
    assert_eq!(persisted, ["tool-1", "tool-2"]);
    assert_eq!(end_ids(&events), ["tool-1", "tool-2"]);
}

#[tokio::test(start_paused = true)]
async fn should_force_sequential_execution_when_one_of_multiple_tools_has_execution_mode_sequential() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![
            faux_tool_call("tool-1", "slow", json!({"value": "a"})),
            faux_tool_call("tool-2", "fast", json!({"value": "b"})),
        ]),
        faux_assistant_text("done"),
    ]);
    let concurrency = Arc::new(Concurrency::default());
    let slow = slow_tool("slow", concurrency.clone()).with_execution_mode(ToolExecutionMode::Sequential);
    let fast = slow_tool("fast", concurrency.clone());
    let (_, events) = run("go", context_with(tools(vec![slow, fast])), &config(&faux)).await;

    let order = concurrency.order();
    assert_eq!(order[0], "slow:a");
    assert!(order.contains(&"fast:b".to_owned()));
    assert!(!concurrency.parallel_observed());
    assert_eq!(end_ids(&events), ["tool-1", "tool-2"]);
}

#[tokio::test(start_paused = true)]
async fn should_allow_parallel_execution_when_all_tools_have_execution_mode_parallel() {
    let faux = FauxModel::new();
    faux.set_responses([two_calls("echo", "first", "second"), faux_assistant_text("done")]);
    let concurrency = Arc::new(Concurrency::default());
    let echo = slow_tool("echo", concurrency.clone()).with_execution_mode(ToolExecutionMode::Parallel);
    let (messages, _) = run("go", context_with(tools(vec![echo])), &config(&faux)).await;

    assert!(concurrency.parallel_observed());
    assert_eq!(concurrency.order(), ["echo:second", "echo:first"]);
    let persisted: Vec<_> = tool_results(&messages).into_iter().map(|r| r.tool_call_id).collect();
    assert_eq!(persisted, ["tool-1", "tool-2"]);
}

#[tokio::test]
async fn should_use_prepare_next_turn_snapshot_before_continuing() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call("tool-1", "echo", json!({"value": "x"}))]),
        faux_assistant_text("done"),
    ]);
    let mut config = config(&faux);
    config.prepare_next_turn = Some(Arc::new(|ctx: &TurnContext<'_>| {
        (!ctx.tool_results.is_empty()).then(|| NextTurn {
            system_prompt: Some("second prompt".into()),
            ..NextTurn::default()
        })
    }));
    let context = AgentContext {
        system_prompt: "first prompt".into(),
        ..context_with(tools(vec![echo_tool("echo", counter())]))
    };
    let _ = run("go", context, &config).await;

    let calls = faux.calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].system_prompt, "first prompt");
    assert_eq!(calls[1].system_prompt, "second prompt");
}

#[tokio::test]
async fn should_stop_after_the_current_turn_when_should_stop_after_turn_returns_true() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call("tool-1", "echo", json!({"value": "x"}))]),
        faux_assistant_text("never"),
    ]);
    let executions = counter();
    let steering_polls = counter();
    let follow_up_polls = counter();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut config = config(&faux);
    let polls = steering_polls.clone();
    config.get_steering_messages = Some(Arc::new(move || {
        polls.fetch_add(1, Ordering::SeqCst);
        Vec::new()
    }));
    let polls = follow_up_polls.clone();
    config.get_follow_up_messages = Some(Arc::new(move || {
        polls.fetch_add(1, Ordering::SeqCst);
        Vec::new()
    }));
    let record = seen.clone();
    config.should_stop_after_turn = Some(Arc::new(move |ctx: &TurnContext<'_>| {
        let ids: Vec<String> = ctx.tool_results.iter().map(|r| r.tool_call_id.clone()).collect();
        record.lock().unwrap().push((ids, roles(ctx.messages)));
        true
    }));
    let context = context_with(tools(vec![echo_tool("echo", executions.clone())]));
    let (messages, events) = run("go", context, &config).await;

    assert_eq!(faux.call_count(), 1);
    assert_eq!(count(&executions), 1);
    assert_eq!(count(&steering_polls), 1);
    assert_eq!(count(&follow_up_polls), 0);
    assert_eq!(
        *seen.lock().unwrap(),
        [(
            vec!["tool-1".to_owned()],
            vec!["user".to_owned(), "assistant".into(), "toolResult".into()]
        )]
    );
    assert_eq!(
        kinds_without_updates(&events),
        [
            "agent_start",
            "turn_start",
            "message_start",
            "message_end",
            "message_start",
            "message_end",
            "tool_execution_start",
            "tool_execution_end",
            "message_start",
            "message_end",
            "turn_end",
            "agent_end",
        ]
    );
    assert_eq!(roles(&messages), ["user", "assistant", "toolResult"]);
}

#[tokio::test]
async fn should_stop_after_a_tool_batch_when_every_tool_result_sets_terminate_true() {
    let faux = FauxModel::new();
    faux.set_responses([two_calls("finish", "a", "b"), faux_assistant_text("never")]);
    let finish = FnTool::new("finish", "Finishes", value_schema(), |_id, _args, _ctx| async {
        Ok(ToolResult::text("finished").with_terminate(true))
    });
    let (messages, events) = run("go", context_with(tools(vec![finish])), &config(&faux)).await;

    assert_eq!(faux.call_count(), 1);
    assert_eq!(roles(&messages), ["user", "assistant", "toolResult", "toolResult"]);
    assert_eq!(
        kinds_without_updates(&events)
            .iter()
            .filter(|k| **k == "turn_end")
            .count(),
        1
    );
}

#[tokio::test]
async fn should_stop_after_a_blocked_tool_call_when_before_tool_call_sets_terminate_true() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call("tool-1", "echo", json!({"value": "x"}))]),
        faux_assistant_text("never"),
    ]);
    let executions = counter();
    let mut config = config(&faux);
    config.before_tool_call = Some(Arc::new(|_ctx: BeforeToolCallContext<'_>| -> BeforeResult {
        Ok(Some(BeforeToolCallResult {
            block: true,
            reason: Some("Blocked by policy".into()),
            terminate: true,
        }))
    }));
    let context = context_with(tools(vec![echo_tool("echo", executions.clone())]));
    let (messages, _) = run("go", context, &config).await;

    assert_eq!(count(&executions), 0);
    assert_eq!(faux.call_count(), 1);
    let results = tool_results(&messages);
    assert_eq!(results.len(), 1);
    assert!(results[0].is_error);
    assert_eq!(results[0].text(), "Blocked by policy");
}

#[tokio::test]
async fn should_continue_after_a_mixed_batch_with_one_terminating_blocked_call() {
    let faux = FauxModel::new();
    faux.set_responses([two_calls("echo", "block me", "run me"), faux_assistant_text("done")]);
    let executions = counter();
    let mut config = config(&faux);
    config.before_tool_call = Some(Arc::new(|ctx: BeforeToolCallContext<'_>| -> BeforeResult {
        Ok((ctx.tool_call.id == "tool-1").then(|| BeforeToolCallResult {
            block: true,
            reason: Some("Blocked".into()),
            terminate: true,
        }))
    }));
    let context = context_with(tools(vec![echo_tool("echo", executions.clone())]));
    let (messages, _) = run("go", context, &config).await;

    assert_eq!(count(&executions), 1);
    assert_eq!(faux.call_count(), 2);
    let results = tool_results(&messages);
    assert!(results[0].is_error);
    assert_eq!(results[1].text(), "echo: run me");
}

#[tokio::test]
async fn should_continue_after_parallel_tool_calls_when_not_all_tool_results_terminate() {
    let faux = FauxModel::new();
    faux.set_responses([two_calls("maybe", "first", "second"), faux_assistant_text("done")]);
    let maybe = FnTool::new(
        "maybe",
        "Terminates on first",
        value_schema(),
        |_id, args, _ctx| async move {
            let result = ToolResult::text("ok");
            Ok(if args["value"] == "first" {
                result.with_terminate(true)
            } else {
                result
            })
        },
    );
    let (messages, _) = run("go", context_with(tools(vec![maybe])), &config(&faux)).await;

    assert_eq!(faux.call_count(), 2);
    assert_eq!(last_assistant(&messages).text(), "done");
}

#[tokio::test]
async fn should_allow_after_tool_call_to_mark_a_tool_batch_as_terminating() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call("tool-1", "echo", json!({"value": "x"}))]),
        faux_assistant_text("never"),
    ]);
    let mut config = config(&faux);
    config.after_tool_call = Some(Arc::new(|_ctx: AfterToolCallContext<'_>| -> AfterResult {
        Ok(Some(AfterToolCallResult {
            terminate: Some(true),
            ..AfterToolCallResult::default()
        }))
    }));
    let (messages, _) = run("go", context_with(tools(vec![echo_tool("echo", counter())])), &config).await;

    assert_eq!(faux.call_count(), 1);
    assert_eq!(roles(&messages), ["user", "assistant", "toolResult"]);
}

#[tokio::test]
async fn agent_loop_continue_should_throw_when_context_has_no_messages() {
    let faux = FauxModel::new();
    let error = run_agent_loop_continue(
        AgentContext::default(),
        &config(&faux),
        &CancellationToken::new(),
        &mut |_event: AgentEvent| {},
    )
    .await
    .unwrap_err();
    assert_eq!(error, AgentLoopError::NoMessages);
    assert_eq!(error.to_string(), "Cannot continue: no messages in context");
    assert_eq!(faux.call_count(), 0);
}

#[tokio::test]
async fn should_continue_from_existing_context_without_emitting_user_message_events() {
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("continued")]);
    let context = AgentContext {
        messages: vec![user("earlier")],
        ..AgentContext::default()
    };
    let mut events = Vec::new();
    let messages = run_agent_loop_continue(
        context,
        &config(&faux),
        &CancellationToken::new(),
        &mut |e: AgentEvent| events.push(e),
    )
    .await
    .unwrap();

    assert_eq!(roles(&messages), ["assistant"]);
    let ends: Vec<_> = events.iter().filter(|e| e.kind() == "message_end").collect();
    assert_eq!(ends.len(), 1);
    assert_eq!(
        kinds_without_updates(&events),
        [
            "agent_start",
            "turn_start",
            "message_start",
            "message_end",
            "turn_end",
            "agent_end"
        ]
    );
    assert_eq!(faux.calls()[0].roles, ["user"]);
}

#[tokio::test]
async fn should_allow_custom_message_types_as_last_message_caller_responsibility() {
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("saw it")]);
    let mut config = config(&faux);
    config.convert_to_llm = Some(Arc::new(|messages: &[AgentMessage]| {
        messages
            .iter()
            .map(|m| match m {
                AgentMessage::Custom(c) => user(c.fields["text"].as_str().unwrap_or_default()),
                other => other.clone(),
            })
            .collect()
    }));
    let context = AgentContext {
        messages: vec![custom("hookMessage", "from a hook")],
        ..AgentContext::default()
    };
    let messages = run_agent_loop_continue(context, &config, &CancellationToken::new(), &mut |_e: AgentEvent| {})
        .await
        .unwrap();

    assert_eq!(roles(&messages), ["assistant"]);
    assert_eq!(faux.calls()[0].roles, ["user"]);
}

// ---------------------------------------------------------------------------------------------
// pi-mono.md §2 — loop rules not covered by a §5.1 row
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn unknown_tool_gives_tool_not_found_error_result() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call("tool-1", "foo", json!({}))]),
        faux_assistant_text("done"),
    ]);
    let context = context_with(tools(vec![echo_tool("echo", counter())]));
    let (messages, events) = run("go", context, &config(&faux)).await;

    assert_eq!(start_ids(&events), ["tool-1"]);
    assert_eq!(
        end_results(&events),
        [("tool-1".into(), "Tool foo not found".into(), true)]
    );
    let results = tool_results(&messages);
    assert_eq!(results[0].text(), "Tool foo not found");
    assert_eq!(results[0].tool_name, "foo");
    assert!(results[0].is_error);
    assert_eq!(faux.call_count(), 2);
}

#[tokio::test]
async fn unknown_tool_names_never_force_sequential_execution() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![
            faux_tool_call("tool-1", "slow", json!({"value": "first"})),
            faux_tool_call("tool-2", "missing", json!({})),
            faux_tool_call("tool-3", "slow", json!({"value": "second"})),
        ]),
        faux_assistant_text("done"),
    ]);
    let concurrency = Arc::new(Concurrency::default());
    let context = context_with(tools(vec![slow_tool("slow", concurrency.clone())]));
    let (_, events) = run("go", context, &config(&faux)).await;

    assert!(concurrency.parallel_observed());
    // The immediate failure ends during preflight, the executed calls in completion order.
    assert_eq!(end_ids(&events), ["tool-2", "tool-3", "tool-1"]);
    assert_eq!(result_message_ids(&events), ["tool-1", "tool-2", "tool-3"]);
}

#[tokio::test]
async fn a_sequential_tool_forces_the_batch_sequential_even_when_it_fails_validation() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![
            faux_tool_call("tool-1", "fast", json!({"value": "first"})),
            faux_tool_call("tool-2", "fast", json!({"value": "second"})),
            faux_tool_call("tool-3", "strict", json!({})),
        ]),
        faux_assistant_text("done"),
    ]);
    let concurrency = Arc::new(Concurrency::default());
    let strict = echo_tool("strict", counter()).with_execution_mode(ToolExecutionMode::Sequential);
    let context = context_with(tools(vec![slow_tool("fast", concurrency.clone()), strict]));
    let (_, events) = run("go", context, &config(&faux)).await;

    assert!(!concurrency.parallel_observed());
    assert_eq!(end_ids(&events), ["tool-1", "tool-2", "tool-3"]);
    assert!(
        end_results(&events)[2]
            .1
            .starts_with("Validation failed for tool \"strict\":")
    );
}

#[tokio::test]
async fn validation_coerces_arguments_and_reports_failures_with_pi_text() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![
            faux_tool_call("tool-1", "count", json!({"n": "5"})),
            faux_tool_call("tool-2", "count", json!({"n": "many"})),
        ]),
        faux_assistant_text("done"),
    ]);
    let received = Arc::new(Mutex::new(Vec::new()));
    let got = received.clone();
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
    let tool = FnTool::new("count", "Counts", schema, move |_id, args, _ctx| {
        got.lock().unwrap().push(args);
        async { Ok(ToolResult::text("counted")) }
    });
    let (messages, _) = run("go", context_with(tools(vec![tool])), &config(&faux)).await;

    assert_eq!(*received.lock().unwrap(), [json!({"n": 5})]);
    let results = tool_results(&messages);
    assert!(!results[0].is_error);
    assert!(results[1].is_error);
    let text = results[1].text();
    assert!(
        text.starts_with("Validation failed for tool \"count\":\n  - n: "),
        "{text}"
    );
    assert!(
        text.ends_with("\n\nReceived arguments:\n{\n  \"n\": \"many\"\n}"),
        "{text}"
    );
}

#[tokio::test]
async fn blocked_without_reason_gives_tool_execution_was_blocked() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call("tool-1", "echo", json!({"value": "x"}))]),
        faux_assistant_text("done"),
    ]);
    let executions = counter();
    let mut config = config(&faux);
    config.before_tool_call = Some(Arc::new(|_ctx: BeforeToolCallContext<'_>| -> BeforeResult {
        Ok(Some(BeforeToolCallResult {
            block: true,
            ..BeforeToolCallResult::default()
        }))
    }));
    let context = context_with(tools(vec![echo_tool("echo", executions.clone())]));
    let (messages, events) = run("go", context, &config).await;

    assert_eq!(count(&executions), 0);
    assert_eq!(
        end_results(&events),
        [("tool-1".into(), "Tool execution was blocked".into(), true)]
    );
    assert_eq!(tool_results(&messages)[0].text(), "Tool execution was blocked");
    // A blocked call without terminate does not stop the run.
    assert_eq!(faux.call_count(), 2);
}

#[tokio::test]
async fn before_tool_call_error_becomes_an_error_result() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call("tool-1", "echo", json!({"value": "x"}))]),
        faux_assistant_text("done"),
    ]);
    let executions = counter();
    let mut config = config(&faux);
    config.before_tool_call = Some(Arc::new(|_ctx: BeforeToolCallContext<'_>| -> BeforeResult {
        Err(ToolError::new("policy service down"))
    }));
    let context = context_with(tools(vec![echo_tool("echo", executions.clone())]));
    let (messages, _) = run("go", context, &config).await;

    assert_eq!(count(&executions), 0);
    let results = tool_results(&messages);
    assert!(results[0].is_error);
    assert_eq!(results[0].text(), "policy service down");
}

#[tokio::test]
async fn a_failing_tool_gives_its_message_as_an_error_result() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call("tool-1", "fail", json!({}))]),
        faux_assistant_text("done"),
    ]);
    let fail = FnTool::new("fail", "Fails", json!({"type": "object"}), |_id, _args, _ctx| async {
        Err(ToolError::new("Command exited with code 2"))
    });
    let (messages, events) = run("go", context_with(tools(vec![fail])), &config(&faux)).await;

    assert_eq!(
        end_results(&events),
        [("tool-1".into(), "Command exited with code 2".into(), true)]
    );
    let result = &tool_results(&messages)[0];
    assert!(result.is_error);
    assert_eq!(result.text(), "Command exited with code 2");
    assert_eq!(result.details, Some(json!({})));
    assert_eq!(faux.call_count(), 2);
}

#[tokio::test]
async fn a_panicking_tool_gives_an_error_result_and_the_loop_goes_on() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![
            faux_tool_call("tool-1", "explode", json!({})),
            faux_tool_call("tool-2", "echo", json!({"value": "still runs"})),
        ]),
        faux_assistant_text("recovered"),
    ]);
    let explode = FnTool::new(
        "explode",
        "Panics",
        json!({"type": "object"}),
        |_id, _args, _ctx| async {
            if true {
                panic!("kaboom");
            }
            Ok(ToolResult::text("unreachable"))
        },
    );
    let context = context_with(tools(vec![explode, echo_tool("echo", counter())]));
    let (messages, _) = run("go", context, &config(&faux)).await;

    let results = tool_results(&messages);
    assert!(results[0].is_error);
    assert!(results[0].text().contains("kaboom"), "{}", results[0].text());
    assert!(!results[1].is_error);
    assert_eq!(faux.call_count(), 2);
    assert_eq!(last_assistant(&messages).text(), "recovered");
}

#[tokio::test]
async fn after_tool_call_error_replaces_the_result_with_an_error_result() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call("tool-1", "echo", json!({"value": "x"}))]),
        faux_assistant_text("done"),
    ]);
    let executions = counter();
    let mut config = config(&faux);
    config.after_tool_call = Some(Arc::new(|_ctx: AfterToolCallContext<'_>| -> AfterResult {
        Err(ToolError::new("audit failed"))
    }));
    let context = context_with(tools(vec![echo_tool("echo", executions.clone())]));
    let (messages, events) = run("go", context, &config).await;

    assert_eq!(count(&executions), 1);
    assert_eq!(end_results(&events), [("tool-1".into(), "audit failed".into(), true)]);
    let result = &tool_results(&messages)[0];
    assert!(result.is_error);
    assert_eq!(result.text(), "audit failed");
    assert_eq!(faux.call_count(), 2);
}

#[tokio::test]
async fn after_tool_call_overrides_only_the_fields_it_returns() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![
            faux_tool_call("tool-1", "rich", json!({"value": "details"})),
            faux_tool_call("tool-2", "rich", json!({"value": "flag"})),
            faux_tool_call("tool-3", "rich", json!({"value": "content"})),
        ]),
        faux_assistant_text("done"),
    ]);
    let rich = FnTool::new("rich", "Returns details", value_schema(), |_id, _args, _ctx| async {
        Ok(ToolResult::text("original").with_details(json!({"lines": 3})))
    });
    let hook_saw = Arc::new(Mutex::new(Vec::new()));
    let saw = hook_saw.clone();
    let mut config = config(&faux);
    config.after_tool_call = Some(Arc::new(move |ctx: AfterToolCallContext<'_>| -> AfterResult {
        saw.lock()
            .unwrap()
            .push((result_text(ctx.result), ctx.is_error, ctx.args.clone()));
        let overrides = match ctx.args["value"].as_str() {
            Some("details") => AfterToolCallResult {
                details: Some(json!({"lines": 99})),
                ..AfterToolCallResult::default()
            },
            Some("flag") => AfterToolCallResult {
                is_error: Some(true),
                ..AfterToolCallResult::default()
            },
            _ => AfterToolCallResult {
                content: Some(vec![ContentBlock::text("replaced")]),
                ..AfterToolCallResult::default()
            },
        };
        Ok(Some(overrides))
    }));
    let (messages, events) = run("go", context_with(tools(vec![rich])), &config).await;

    let results = tool_results(&messages);
    assert_eq!(
        (results[0].text(), results[0].details.clone(), results[0].is_error),
        ("original".into(), Some(json!({"lines": 99})), false)
    );
    assert_eq!(
        (results[1].text(), results[1].details.clone(), results[1].is_error),
        ("original".into(), Some(json!({"lines": 3})), true)
    );
    assert_eq!(
        (results[2].text(), results[2].details.clone(), results[2].is_error),
        ("replaced".into(), Some(json!({"lines": 3})), false)
    );
    assert!(
        hook_saw
            .lock()
            .unwrap()
            .iter()
            .all(|(text, is_error, _)| text == "original" && !is_error)
    );
    let ends = end_results(&events);
    assert!(ends.contains(&("tool-2".into(), "original".into(), true)));
}

/// A tool that announces it started and then waits for the run's cancellation, returning
/// `Operation aborted` like pi's tools do.
fn waiting_tool(started: Arc<AtomicUsize>, all_started: Arc<Notify>, expected: usize) -> FnTool {
    FnTool::new(
        "wait",
        "Waits for abort",
        json!({"type": "object"}),
        move |_id, _args, ctx| {
            if started.fetch_add(1, Ordering::SeqCst) + 1 == expected {
                all_started.notify_one();
            }
            async move {
                tokio::select! {
                    () = ctx.cancel.cancelled() => Err(ToolError::new("Operation aborted")),
                    () = tokio::time::sleep(Duration::from_secs(5)) => Ok(ToolResult::text("not aborted")),
                }
            }
        },
    )
}

fn cancel_when_notified(notify: Arc<Notify>, cancel: CancellationToken) {
    tokio::spawn(async move {
        notify.notified().await;
        cancel.cancel();
    });
}

#[tokio::test]
async fn abort_during_a_parallel_batch_ends_running_calls_as_aborted_and_the_run_stops() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![
            faux_tool_call("tool-1", "wait", json!({})),
            faux_tool_call("tool-2", "wait", json!({})),
        ]),
        faux_assistant_text("never"),
    ]);
    let started = counter();
    let all_started = Arc::new(Notify::new());
    let cancel = CancellationToken::new();
    cancel_when_notified(all_started.clone(), cancel.clone());
    let context = context_with(tools(vec![waiting_tool(started.clone(), all_started, 2)]));
    let (messages, events) = run_with_cancel("go", context, &config(&faux), &cancel).await;

    assert_eq!(count(&started), 2);
    let results = tool_results(&messages);
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r.is_error && r.text() == "Operation aborted"));
    assert_eq!(result_message_ids(&events), ["tool-1", "tool-2"]);
    // The next model call sees the aborted signal and the run ends there.
    assert_eq!(faux.call_count(), 2);
    let last = last_assistant(&messages);
    assert_eq!(last.stop_reason, StopReason::Aborted);
    assert_eq!(last.error_message.as_deref(), Some("Request was aborted"));
    assert_eq!(events.last().map(AgentEvent::kind), Some("agent_end"));
}

#[tokio::test]
async fn abort_during_a_sequential_batch_gives_remaining_calls_no_events() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![
            faux_tool_call("tool-1", "wait", json!({})),
            faux_tool_call("tool-2", "wait", json!({})),
            faux_tool_call("tool-3", "wait", json!({})),
        ]),
        faux_assistant_text("never"),
    ]);
    let started = counter();
    let first_started = Arc::new(Notify::new());
    let cancel = CancellationToken::new();
    cancel_when_notified(first_started.clone(), cancel.clone());
    let mut config = config(&faux);
    config.tool_execution = ToolExecutionMode::Sequential;
    let context = context_with(tools(vec![waiting_tool(started.clone(), first_started, 1)]));
    let (messages, events) = run_with_cancel("go", context, &config, &cancel).await;

    assert_eq!(count(&started), 1);
    assert_eq!(start_ids(&events), ["tool-1"]);
    assert_eq!(
        end_results(&events),
        [("tool-1".into(), "Operation aborted".into(), true)]
    );
    assert_eq!(result_message_ids(&events), ["tool-1"]);
    assert_eq!(turn_end_result_ids(&events), [vec!["tool-1".to_owned()], vec![]]);
    assert_eq!(roles(&messages), ["user", "assistant", "toolResult", "assistant"]);
    assert_eq!(last_assistant(&messages).stop_reason, StopReason::Aborted);
}

/// Cancels the run when it sees the call with id `at`, like a user pressing Esc mid-preflight.
struct AbortAt(&'static str);

#[async_trait]
impl BeforeToolCallHook for AbortAt {
    async fn before_tool_call(&self, ctx: BeforeToolCallContext<'_>, cancel: &CancellationToken) -> BeforeResult {
        if ctx.tool_call.id == self.0 {
            cancel.cancel();
        }
        Ok(None)
    }
}

#[tokio::test]
async fn abort_during_parallel_preflight_finishes_prepared_calls_as_operation_aborted_without_executing() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![
            faux_tool_call("tool-1", "echo", json!({"value": "a"})),
            faux_tool_call("tool-2", "echo", json!({"value": "b"})),
            faux_tool_call("tool-3", "echo", json!({"value": "c"})),
        ]),
        faux_assistant_text("never"),
    ]);
    let executions = counter();
    let after_calls = counter();
    let mut config = config(&faux);
    config.before_tool_call = Some(Arc::new(AbortAt("tool-2")));
    let after = after_calls.clone();
    config.after_tool_call = Some(Arc::new(move |_ctx: AfterToolCallContext<'_>| -> AfterResult {
        after.fetch_add(1, Ordering::SeqCst);
        Ok(None)
    }));
    let context = context_with(tools(vec![echo_tool("echo", executions.clone())]));
    let (messages, events) = run("go", context, &config).await;

    assert_eq!(count(&executions), 0);
    assert_eq!(count(&after_calls), 0);
    assert_eq!(start_ids(&events), ["tool-1", "tool-2"]);
    assert_eq!(end_ids(&events), ["tool-2", "tool-1"]);
    assert_eq!(result_message_ids(&events), ["tool-1", "tool-2"]);
    let results = tool_results(&messages);
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r.is_error && r.text() == "Operation aborted"));
    assert_eq!(last_assistant(&messages).stop_reason, StopReason::Aborted);
}

#[tokio::test]
async fn abort_in_before_tool_call_during_a_sequential_batch_gives_operation_aborted_and_stops() {
    let faux = FauxModel::new();
    faux.set_responses([two_calls("echo", "a", "b"), faux_assistant_text("never")]);
    let executions = counter();
    let mut config = config(&faux);
    config.tool_execution = ToolExecutionMode::Sequential;
    config.before_tool_call = Some(Arc::new(AbortAt("tool-1")));
    let context = context_with(tools(vec![echo_tool("echo", executions.clone())]));
    let (messages, events) = run("go", context, &config).await;

    assert_eq!(count(&executions), 0);
    assert_eq!(start_ids(&events), ["tool-1"]);
    assert_eq!(
        end_results(&events),
        [("tool-1".into(), "Operation aborted".into(), true)]
    );
    assert_eq!(roles(&messages), ["user", "assistant", "toolResult", "assistant"]);
}

async fn assert_failed_message_runs_no_tools(stop_reason: StopReason) {
    let faux = FauxModel::new();
    let mut failed = faux_assistant_message(vec![
        faux_text("partial"),
        faux_tool_call("tool-1", "echo", json!({"value": "x"})),
    ]);
    failed.stop_reason = stop_reason;
    failed.error_message = Some("upstream failure".into());
    faux.set_responses([failed, faux_assistant_text("never")]);
    let executions = counter();
    let polls = counter();
    let mut config = config(&faux);
    let counted = polls.clone();
    config.get_follow_up_messages = Some(Arc::new(move || {
        counted.fetch_add(1, Ordering::SeqCst);
        vec![user("follow up")]
    }));
    let context = context_with(tools(vec![echo_tool("echo", executions.clone())]));
    let (messages, events) = run("go", context, &config).await;

    assert_eq!(count(&executions), 0);
    assert!(start_ids(&events).is_empty());
    assert_eq!(turn_end_result_ids(&events), [Vec::<String>::new()]);
    assert_eq!(faux.call_count(), 1);
    assert_eq!(count(&polls), 0);
    assert_eq!(roles(&messages), ["user", "assistant"]);
    let last = last_assistant(&messages);
    assert_eq!(last.stop_reason, stop_reason);
    assert_eq!(last.error_message.as_deref(), Some("upstream failure"));
    let kinds = kinds_without_updates(&events);
    assert_eq!(kinds[kinds.len() - 2..], ["turn_end", "agent_end"]);
}

#[tokio::test]
async fn an_assistant_message_with_stop_reason_error_never_executes_its_tool_calls() {
    assert_failed_message_runs_no_tools(StopReason::Error).await;
}

#[tokio::test]
async fn an_assistant_message_with_stop_reason_aborted_never_executes_its_tool_calls() {
    assert_failed_message_runs_no_tools(StopReason::Aborted).await;
}

#[tokio::test]
async fn tool_updates_become_events_before_the_tool_end_and_late_updates_are_dropped() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![
            faux_tool_call("tool-1", "progress", json!({"step": 1})),
            faux_tool_call("tool-2", "straggler", json!({})),
        ]),
        faux_assistant_text("done"),
    ]);
    let stashed: Arc<Mutex<Option<ToolUpdateSink>>> = Arc::new(Mutex::new(None));
    let stash = stashed.clone();
    let progress = FnTool::new(
        "progress",
        "Reports progress",
        json!({"type": "object"}),
        move |_id, _args, ctx| {
            ctx.updates.update(ToolResult::text("half"));
            ctx.updates.update(ToolResult::text("almost"));
            *stash.lock().unwrap() = Some(ctx.updates.clone());
            async { Ok(ToolResult::text("complete")) }
        },
    );
    let progress_ended = Arc::new(Notify::new());
    let ended = progress_ended.clone();
    let late = stashed.clone();
    let straggler = FnTool::new(
        "straggler",
        "Outlives its sibling",
        json!({"type": "object"}),
        move |_id, _a, _c| {
            let ended = ended.clone();
            let late = late.clone();
            async move {
                ended.notified().await;
                let sink = late.lock().unwrap().clone().expect("progress ran first");
                sink.update(ToolResult::text("too late"));
                Ok(ToolResult::text("straggled"))
            }
        },
    );
    let mut events = Vec::new();
    let notify = progress_ended.clone();
    run_agent_loop(
        vec![user("go")],
        context_with(tools(vec![progress, straggler])),
        &config(&faux),
        &CancellationToken::new(),
        &mut |event: AgentEvent| {
            if matches!(&event, AgentEvent::ToolExecutionEnd { tool_call_id, .. } if tool_call_id == "tool-1") {
                notify.notify_one();
            }
            events.push(event);
        },
    )
    .await
    .unwrap();

    let updates: Vec<(usize, String, Value, String)> = events
        .iter()
        .enumerate()
        .filter_map(|(i, event)| match event {
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                args,
                partial_result,
                ..
            } => Some((i, tool_call_id.clone(), args.clone(), result_text(partial_result))),
            _ => None,
        })
        .collect();
    let progress_end = events
        .iter()
        .position(|e| matches!(e, AgentEvent::ToolExecutionEnd { tool_call_id, .. } if tool_call_id == "tool-1"))
        .unwrap();
    assert_eq!(updates.len(), 2, "{updates:?}");
    assert!(
        updates
            .iter()
            .all(|(i, id, args, _)| *i < progress_end && id == "tool-1" && *args == json!({"step": 1}))
    );
    assert_eq!(updates[0].3, "half");
    assert_eq!(updates[1].3, "almost");
    assert_eq!(end_ids(&events), ["tool-1", "tool-2"]);
}

async fn run_with_queued_steering(mode: QueueMode) -> (FauxModel, Vec<AgentMessage>) {
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("one"), faux_assistant_text("two")]);
    let mut queue = MessageQueue::new(mode);
    queue.push(user("steer 1"));
    queue.push(user("steer 2"));
    let queue = Arc::new(Mutex::new(queue));
    let mut config = config(&faux);
    config.get_steering_messages = Some(Arc::new(move || queue.lock().unwrap().drain()));
    let (messages, _) = run("go", AgentContext::default(), &config).await;
    (faux, messages)
}

#[tokio::test]
async fn steering_one_at_a_time_delivers_one_message_per_turn() {
    let (faux, messages) = run_with_queued_steering(QueueMode::OneAtATime).await;

    let calls = faux.calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].roles, ["user", "user"]);
    assert_eq!(calls[1].roles, ["user", "user", "assistant", "user"]);
    let texts: Vec<_> = messages.iter().map(user_text).filter(|t| !t.is_empty()).collect();
    assert_eq!(texts, ["go", "steer 1", "steer 2"]);
    assert_eq!(roles(&messages), ["user", "user", "assistant", "user", "assistant"]);
}

#[tokio::test]
async fn steering_all_delivers_every_queued_message_at_once() {
    let (faux, messages) = run_with_queued_steering(QueueMode::All).await;

    let calls = faux.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].roles, ["user", "user", "user"]);
    assert_eq!(roles(&messages), ["user", "user", "user", "assistant"]);
    assert_eq!(faux.pending_response_count(), 1);
}

#[tokio::test]
async fn follow_up_messages_are_polled_only_when_the_agent_would_stop() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call("tool-1", "echo", json!({"value": "x"}))]),
        faux_assistant_text("first answer"),
        faux_assistant_text("second answer"),
    ]);
    let polled_at = Arc::new(Mutex::new(Vec::new()));
    let mut config = config(&faux);
    let record = polled_at.clone();
    let model = faux.clone();
    config.get_follow_up_messages = Some(Arc::new(move || {
        let mut polls = record.lock().unwrap();
        polls.push(model.call_count());
        if polls.len() == 1 {
            vec![user("and then?")]
        } else {
            Vec::new()
        }
    }));
    let context = context_with(tools(vec![echo_tool("echo", counter())]));
    let (messages, events) = run("go", context, &config).await;

    assert_eq!(*polled_at.lock().unwrap(), [2, 3]);
    assert_eq!(
        roles(&messages),
        ["user", "assistant", "toolResult", "assistant", "user", "assistant"]
    );
    assert_eq!(user_text(&messages[4]), "and then?");
    assert_eq!(last_assistant(&messages).text(), "second answer");
    let kinds = kinds_without_updates(&events);
    assert_eq!(kinds.iter().filter(|k| **k == "turn_start").count(), 3);
    // The follow-up is delivered at the start of a new turn.
    let follow_up_start = events
        .iter()
        .position(|e| matches!(e, AgentEvent::MessageStart { message } if user_text(message) == "and then?"))
        .unwrap();
    assert_eq!(events[follow_up_start - 1].kind(), "turn_start");
    assert_eq!(events[follow_up_start - 2].kind(), "turn_end");
}

#[tokio::test]
async fn get_tool_choice_reaches_the_model_for_every_call() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call("tool-1", "echo", json!({"value": "x"}))]),
        faux_assistant_text("done"),
    ]);
    let mut config = config(&faux);
    config.get_tool_choice = Some(Arc::new(|messages: &[AgentMessage]| {
        (messages.len() == 1).then(|| ToolChoice::Tool("echo".into()))
    }));
    let _ = run("go", context_with(tools(vec![echo_tool("echo", counter())])), &config).await;

    let choices: Vec<_> = faux.calls().into_iter().map(|c| c.tool_choice).collect();
    assert_eq!(choices, [Some(ToolChoice::Tool("echo".into())), None]);
}

fn api_key_config(faux: &FauxModel, keys: Vec<Option<String>>) -> (AgentLoopConfig, Arc<Mutex<Vec<String>>>) {
    let providers = Arc::new(Mutex::new(Vec::new()));
    let seen = providers.clone();
    let keys = Arc::new(Mutex::new(keys.into_iter()));
    let mut config = config(faux);
    config.api_key = Some("static-key".into());
    config.get_api_key = Some(Arc::new(move |provider: &str| -> BoxFuture<'static, Option<String>> {
        seen.lock().unwrap().push(provider.to_owned());
        let key = keys.lock().unwrap().next().flatten();
        Box::pin(async move { key })
    }));
    (config, providers)
}

#[tokio::test]
async fn get_api_key_is_resolved_before_every_call_and_falls_back_to_api_key() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call("tool-1", "echo", json!({"value": "x"}))]),
        faux_assistant_text("done"),
    ]);
    let (config, providers) = api_key_config(&faux, vec![None, Some("fresh-token".into())]);
    let _ = run("go", context_with(tools(vec![echo_tool("echo", counter())])), &config).await;

    assert_eq!(*providers.lock().unwrap(), ["faux", "faux"]);
    let keys: Vec<_> = faux.calls().into_iter().map(|c| c.api_key).collect();
    assert_eq!(keys, [Some("static-key".to_owned()), Some("fresh-token".to_owned())]);
}

#[tokio::test]
async fn get_api_key_returning_an_empty_key_falls_back_to_api_key() {
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("done")]);
    let (config, _) = api_key_config(&faux, vec![Some(String::new())]);
    let _ = run("go", AgentContext::default(), &config).await;

    assert_eq!(faux.calls()[0].api_key.as_deref(), Some("static-key"));
}

#[tokio::test]
async fn turn_end_is_emitted_before_prepare_next_turn_should_stop_after_turn_and_the_steering_poll() {
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("done")]);
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut config = config(&faux);
    let entry = log.clone();
    config.prepare_next_turn = Some(Arc::new(move |_ctx: &TurnContext<'_>| {
        entry.lock().unwrap().push("prepare_next_turn".into());
        None
    }));
    let entry = log.clone();
    config.should_stop_after_turn = Some(Arc::new(move |_ctx: &TurnContext<'_>| {
        entry.lock().unwrap().push("should_stop_after_turn".into());
        false
    }));
    let entry = log.clone();
    config.get_steering_messages = Some(Arc::new(move || {
        entry.lock().unwrap().push("poll_steering".into());
        Vec::new()
    }));
    let entry = log.clone();
    config.get_follow_up_messages = Some(Arc::new(move || {
        entry.lock().unwrap().push("poll_follow_up".into());
        Vec::new()
    }));
    let sink_log = log.clone();
    run_agent_loop(
        vec![user("go")],
        AgentContext::default(),
        &config,
        &CancellationToken::new(),
        &mut |event: AgentEvent| {
            if event.kind() != "message_update" {
                sink_log.lock().unwrap().push(event.kind().into());
            }
        },
    )
    .await
    .unwrap();

    assert_eq!(
        *log.lock().unwrap(),
        [
            "agent_start",
            "turn_start",
            "message_start",
            "message_end",
            "poll_steering",
            "message_start",
            "message_end",
            "turn_end",
            "prepare_next_turn",
            "should_stop_after_turn",
            "poll_steering",
            "poll_follow_up",
            "agent_end",
        ]
    );
}

#[tokio::test]
async fn agent_loop_streams_events_and_result_returns_the_new_messages() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call("tool-1", "echo", json!({"value": "x"}))]),
        faux_assistant_text("done"),
    ]);
    let context = context_with(tools(vec![echo_tool("echo", counter())]));
    let mut stream = agent_loop(vec![user("go")], context, config(&faux), CancellationToken::new());
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        events.push(event);
    }
    let messages = stream.result().await.unwrap();

    assert_eq!(events.first().map(AgentEvent::kind), Some("agent_start"));
    let Some(AgentEvent::AgentEnd { messages: ended }) = events.last() else {
        panic!("the stream ends with agent_end");
    };
    assert_eq!(ended, &messages);
    assert_eq!(roles(&messages), ["user", "assistant", "toolResult", "assistant"]);
    assert!(events.iter().any(|e| e.kind() == "message_update"));
}

#[tokio::test]
async fn agent_loop_continue_fails_synchronously_on_an_empty_or_assistant_tail_context() {
    let faux = FauxModel::new();
    let empty = agent_loop_continue(AgentContext::default(), config(&faux), CancellationToken::new());
    assert!(matches!(empty, Err(AgentLoopError::NoMessages)));
    let assistant_tail = AgentContext {
        messages: vec![user("hi"), faux_assistant_text("hello").into()],
        ..AgentContext::default()
    };
    let error = agent_loop_continue(assistant_tail, config(&faux), CancellationToken::new()).err();
    assert_eq!(error, Some(AgentLoopError::ContinueFromAssistant));
    assert_eq!(
        error.unwrap().to_string(),
        "Cannot continue from message role: assistant"
    );
    assert_eq!(faux.call_count(), 0);

    let tool_result_tail = AgentContext {
        messages: vec![
            user("hi"),
            faux_assistant_message(vec![faux_tool_call("tool-1", "echo", json!({"value": "x"}))]).into(),
            AgentMessage::ToolResult(pi_agent_core::ToolResultMessage {
                tool_call_id: "tool-1".into(),
                tool_name: "echo".into(),
                content: vec![ContentBlock::text("echo: x")],
                details: None,
                usage: None,
                added_tool_names: None,
                is_error: false,
                timestamp: 0,
            }),
        ],
        ..AgentContext::default()
    };
    faux.set_responses([faux_assistant_text("after the tool")]);
    let Ok(stream) = agent_loop_continue(tool_result_tail, config(&faux), CancellationToken::new()) else {
        panic!("a tool-result tail can be continued");
    };
    let messages = stream.result().await.unwrap();
    assert_eq!(roles(&messages), ["assistant"]);
    assert_eq!(faux.calls()[0].roles, ["user", "assistant", "toolResult"]);
}
