//! Behaviour of the stateful `Agent`, after pi's `agent.test.ts` (`pi-mono.md` §5.2) and the
//! end-to-end tests with the faux provider (`e2e.test.ts`, §5.3 and §6.5).
//!
//! Longer than 800 lines on purpose: it follows pi's `agent.test.ts` and `e2e.test.ts` test by test, so
//! that each case can be found next to pi's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use pi_agent_core::faux::{
    FauxModel, FauxResponse, faux_assistant_message, faux_assistant_text, faux_text, faux_thinking, faux_tool_call,
};
use pi_agent_core::{
    Agent, AgentError, AgentEvent, AgentLoopError, AgentMessage, AgentOptions, AssistantMessageEvent,
    AssistantMessageStream, ContentBlock, FnTool, LlmContext, Model, QueueMode, StopReason, StreamFn, StreamOptions,
    ThinkingLevel, ToolError, ToolExecutionMode, ToolResult, ToolResultMessage, ToolUpdateSink, TurnContext,
};
use serde_json::json;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use common::{last_assistant, roles, tools, user, user_text};

const SHORT: Duration = Duration::from_millis(20);

fn agent_with(faux: &FauxModel) -> Agent {
    Agent::new(AgentOptions::new(faux.model()).stream_fn(faux.stream_fn()))
}

/// Records every event the agent's listeners see.
fn record(agent: &Agent) -> Arc<Mutex<Vec<AgentEvent>>> {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let _subscription = agent.subscribe(move |event, _signal| sink.lock().unwrap().push(event.clone()));
    events
}

fn kinds(events: &Mutex<Vec<AgentEvent>>) -> Vec<&'static str> {
    events.lock().unwrap().iter().map(AgentEvent::kind).collect()
}

/// Notifies once the agent emits an event matching `predicate` (checked for every event).
fn notify_on(agent: &Agent, predicate: impl Fn(&AgentEvent) -> bool + Send + Sync + 'static) -> Arc<Notify> {
    let notify = Arc::new(Notify::new());
    let signal = notify.clone();
    let _subscription = agent.subscribe(move |event, _| {
        if predicate(event) {
            signal.notify_one();
        }
    });
    notify
}

fn is_text_delta(event: &AgentEvent) -> bool {
    matches!(
        event,
        AgentEvent::MessageUpdate {
            assistant_message_event: AssistantMessageEvent::TextDelta { .. },
            ..
        }
    )
}

/// A faux model streaming 20 chunks a second, with a long answer queued: a run stays busy until
/// it is aborted.
fn slow_faux() -> FauxModel {
    let faux = FauxModel::builder().tokens_per_second(20.0).build();
    faux.set_responses([faux_assistant_text("a long and slow answer ".repeat(20))]);
    faux
}

/// Starts `prompt` on a task and waits until the assistant streams its first delta.
async fn start_streaming(agent: &Agent, prompt: &str) -> tokio::task::JoinHandle<Result<(), AgentError>> {
    let streaming = notify_on(agent, is_text_delta);
    let runner = agent.clone();
    let prompt = prompt.to_owned();
    let task = tokio::spawn(async move { runner.prompt(prompt).await });
    streaming.notified().await;
    task
}

fn tool_result(id: &str, name: &str, text: &str) -> AgentMessage {
    AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: name.into(),
        content: vec![ContentBlock::text(text)],
        details: Some(json!({})),
        usage: None,
        added_tool_names: None,
        is_error: false,
        timestamp: 0,
    })
}

fn evaluate(expression: &str) -> Option<i64> {
    let parts: Vec<&str> = expression.split_whitespace().collect();
    let [a, op, b] = parts.as_slice() else {
        return None;
    };
    let (a, b): (i64, i64) = (a.parse().ok()?, b.parse().ok()?);
    match *op {
        "+" => a.checked_add(b),
        "-" => a.checked_sub(b),
        "*" => a.checked_mul(b),
        "/" => a.checked_div(b),
        _ => None,
    }
}

fn calculate_tool() -> FnTool {
    let schema = json!({
        "type": "object",
        "properties": {"expression": {"type": "string"}},
        "required": ["expression"]
    });
    FnTool::new(
        "calculate",
        "Evaluates `a <op> b`",
        schema,
        |_id, args, _ctx| async move {
            let expression = args["expression"].as_str().unwrap_or_default().to_owned();
            let value = evaluate(&expression).ok_or_else(|| ToolError::new(format!("Cannot evaluate {expression}")))?;
            Ok(ToolResult::text(format!("{expression} = {value}")))
        },
    )
}

// ---------------------------------------------------------------------------------------------
// pi-mono.md §5.2 — agent.test.ts
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn should_create_an_agent_with_default_state() {
    let agent = Agent::new(AgentOptions::default());
    let state = agent.state();

    assert_eq!(state.system_prompt, "");
    assert_eq!(state.model.id, "unknown");
    assert_eq!(state.thinking_level, ThinkingLevel::Off);
    assert!(state.messages.is_empty());
    assert!(!state.is_streaming);
    assert!(state.streaming_message.is_none());
    assert!(state.pending_tool_calls.is_empty());
    assert!(state.error_message.is_none());
    assert!(agent.tools().is_empty());
    assert_eq!(agent.steering_mode(), QueueMode::OneAtATime);
    assert_eq!(agent.follow_up_mode(), QueueMode::OneAtATime);
    assert!(!agent.has_queued_messages());
    assert!(agent.signal().is_none());
    agent.update_config(|config| {
        assert_eq!(config.tool_execution, ToolExecutionMode::Parallel);
        assert!(config.stream_fn.is_none());
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn should_create_an_agent_with_custom_initial_state() {
    let faux = FauxModel::new();
    let mut options = AgentOptions::new(faux.model())
        .system_prompt("You are a helpful assistant.")
        .tools(tools(vec![calculate_tool()]));
    options.thinking_level = ThinkingLevel::Low;
    options.messages = vec![user("earlier")];
    options.steering_mode = QueueMode::All;
    let agent = Agent::new(options);
    let state = agent.state();

    assert_eq!(state.system_prompt, "You are a helpful assistant.");
    assert_eq!(state.model, faux.model());
    assert_eq!(state.thinking_level, ThinkingLevel::Low);
    assert_eq!(roles(&state.messages), ["user"]);
    let names: Vec<_> = agent.tools().iter().map(|t| t.name().to_owned()).collect();
    assert_eq!(names, ["calculate"]);
    assert_eq!(agent.steering_mode(), QueueMode::All);
    assert_eq!(agent.follow_up_mode(), QueueMode::OneAtATime);
}

#[tokio::test(flavor = "multi_thread")]
async fn should_subscribe_to_events_without_emitting_and_unsubscribe() {
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("one"), faux_assistant_text("two")]);
    let agent = agent_with(&faux);
    let count = Arc::new(AtomicUsize::new(0));
    let counter = count.clone();
    let subscription = agent.subscribe(move |_event, _signal| {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    assert_eq!(count.load(Ordering::SeqCst), 0);

    agent.prompt("first").await.unwrap();
    let after_first = count.load(Ordering::SeqCst);
    assert!(after_first > 0);

    subscription.unsubscribe();
    agent.prompt("second").await.unwrap();
    assert_eq!(count.load(Ordering::SeqCst), after_first);
    assert_eq!(agent.messages().len(), 4);
}

#[tokio::test(flavor = "multi_thread")]
async fn emits_full_lifecycle_events_for_thrown_run_failures() {
    let exploding = |_model: &Model, _context: &LlmContext<'_>, _options: &StreamOptions| -> AssistantMessageStream {
        panic!("provider exploded")
    };
    let agent = Agent::new(AgentOptions::default().stream_fn(Arc::new(exploding)));
    let events = record(&agent);
    agent.prompt("hello").await.unwrap();

    assert_eq!(
        kinds(&events),
        [
            "agent_start",
            "turn_start",
            "message_start",
            "message_end",
            "message_start",
            "message_end",
            "turn_end",
            "agent_end",
        ]
    );
    let events = events.lock().unwrap();
    let AgentEvent::MessageEnd { message: prompt } = &events[3] else {
        panic!("user message_end");
    };
    assert_eq!(user_text(prompt), "hello");
    let AgentEvent::MessageEnd { message: failure } = &events[5] else {
        panic!("failure message_end");
    };
    let assistant = failure.as_assistant().expect("an assistant failure message");
    assert_eq!(assistant.content, [ContentBlock::text("")]);
    assert_eq!(assistant.stop_reason, StopReason::Error);
    assert_eq!(assistant.error_message.as_deref(), Some("provider exploded"));
    assert_eq!(assistant.usage, Default::default());
    let AgentEvent::TurnEnd { message, tool_results } = &events[6] else {
        panic!("turn_end");
    };
    assert_eq!(message, failure);
    assert!(tool_results.is_empty());
    let AgentEvent::AgentEnd { messages } = &events[7] else {
        panic!("agent_end");
    };
    assert_eq!(messages, std::slice::from_ref(failure));

    assert_eq!(roles(&agent.messages()), ["user", "assistant"]);
    assert_eq!(agent.error_message().as_deref(), Some("provider exploded"));
    assert!(!agent.is_streaming());
    assert!(agent.signal().is_none());
}

/// An async listener that, on `agent_end`, says it entered and waits to be released.
fn hold_agent_end(agent: &Agent) -> (Arc<Notify>, Arc<Notify>, Arc<AtomicBool>) {
    let entered = Arc::new(Notify::new());
    let release = Arc::new(Notify::new());
    let finished = Arc::new(AtomicBool::new(false));
    let (entered_tx, release_rx, finished_tx) = (entered.clone(), release.clone(), finished.clone());
    let _subscription = agent.subscribe_async(move |event, _signal| -> BoxFuture<'static, ()> {
        let (entered, release, finished) = (entered_tx.clone(), release_rx.clone(), finished_tx.clone());
        Box::pin(async move {
            if matches!(event, AgentEvent::AgentEnd { .. }) {
                entered.notify_one();
                release.notified().await;
                finished.store(true, Ordering::SeqCst);
            }
        })
    });
    (entered, release, finished)
}

#[tokio::test(flavor = "multi_thread")]
async fn async_agent_end_subscriber_delays_prompt_resolution_but_sees_the_run_finished() {
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("done")]);
    let agent = agent_with(&faux);
    let (entered, release, finished) = hold_agent_end(&agent);
    let runner = agent.clone();
    let task = tokio::spawn(async move { runner.prompt("hi").await });

    entered.notified().await;
    tokio::time::sleep(SHORT).await;
    assert!(!task.is_finished());
    // pi keeps `isStreaming` true here; ours is already false so the listener may start the next
    // run (docs/differences-from-pi.md).
    assert!(!agent.is_streaming());
    assert!(agent.signal().is_none());
    assert_eq!(roles(&agent.messages()), ["user", "assistant"]);

    release.notify_one();
    task.await.unwrap().unwrap();
    assert!(finished.load(Ordering::SeqCst));
    assert!(!agent.is_streaming());
}

#[tokio::test(flavor = "multi_thread")]
async fn wait_for_idle_waits_for_async_subscribers() {
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("done")]);
    let agent = agent_with(&faux);
    let (entered, release, finished) = hold_agent_end(&agent);
    let runner = agent.clone();
    let task = tokio::spawn(async move { runner.prompt("hi").await });

    entered.notified().await;
    assert!(tokio::time::timeout(SHORT, agent.wait_for_idle()).await.is_err());
    release.notify_one();
    agent.wait_for_idle().await;
    assert!(finished.load(Ordering::SeqCst));
    assert!(!agent.is_streaming());
    task.await.unwrap().unwrap();
    // Idle: resolves at once.
    tokio::time::timeout(SHORT, agent.wait_for_idle()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn subscribers_receive_the_active_signal_which_is_aborted_after_abort() {
    let faux = slow_faux();
    let agent = agent_with(&faux);
    let signals = Arc::new(Mutex::new(Vec::<CancellationToken>::new()));
    let seen = signals.clone();
    let _subscription = agent.subscribe(move |event, signal| {
        if matches!(event, AgentEvent::AgentStart) {
            seen.lock().unwrap().push(signal.clone());
        }
    });
    let task = start_streaming(&agent, "hi").await;

    let signal = signals.lock().unwrap()[0].clone();
    assert!(!signal.is_cancelled());
    assert!(agent.signal().is_some_and(|active| !active.is_cancelled()));
    agent.abort();
    assert!(signal.is_cancelled());
    task.await.unwrap().unwrap();
    assert_eq!(last_assistant(&agent.messages()).stop_reason, StopReason::Aborted);
    assert!(agent.signal().is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_update_after_settlement_produces_no_event() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call("tool-1", "quick", json!({}))]),
        faux_assistant_text("done"),
    ]);
    let stashed: Arc<Mutex<Option<ToolUpdateSink>>> = Arc::new(Mutex::new(None));
    let stash = stashed.clone();
    let quick = FnTool::new(
        "quick",
        "Returns at once",
        json!({"type": "object"}),
        move |_id, _args, ctx| {
            *stash.lock().unwrap() = Some(ctx.updates.clone());
            async { Ok(ToolResult::text("done")) }
        },
    );
    let agent = Agent::new(
        AgentOptions::new(faux.model())
            .stream_fn(faux.stream_fn())
            .tools(tools(vec![quick])),
    );
    let events = record(&agent);
    agent.prompt("go").await.unwrap();
    let before = events.lock().unwrap().len();

    let late = stashed.lock().unwrap().clone().expect("the tool ran");
    late.update(ToolResult::text("late"));
    tokio::time::sleep(SHORT).await;

    assert_eq!(events.lock().unwrap().len(), before);
    assert!(!kinds(&events).contains(&"tool_execution_update"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_settled_tools_late_update_while_a_parallel_sibling_still_runs_is_ignored() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![
            faux_tool_call("tool-1", "quick", json!({})),
            faux_tool_call("tool-2", "sibling", json!({})),
        ]),
        faux_assistant_text("done"),
    ]);
    let stashed: Arc<Mutex<Option<ToolUpdateSink>>> = Arc::new(Mutex::new(None));
    let stash = stashed.clone();
    let quick = FnTool::new(
        "quick",
        "Returns at once",
        json!({"type": "object"}),
        move |_id, _args, ctx| {
            *stash.lock().unwrap() = Some(ctx.updates.clone());
            async { Ok(ToolResult::text("quick done")) }
        },
    );
    let quick_ended = Arc::new(Notify::new());
    let (ended, late) = (quick_ended.clone(), stashed.clone());
    let sibling = FnTool::new(
        "sibling",
        "Outlives quick",
        json!({"type": "object"}),
        move |_id, _args, _ctx| {
            let (ended, late) = (ended.clone(), late.clone());
            async move {
                ended.notified().await;
                let sink = late.lock().unwrap().clone().expect("quick ran first");
                sink.update(ToolResult::text("late"));
                tokio::time::sleep(SHORT).await;
                Ok(ToolResult::text("sibling done"))
            }
        },
    );
    let agent = Agent::new(
        AgentOptions::new(faux.model())
            .stream_fn(faux.stream_fn())
            .tools(tools(vec![quick, sibling])),
    );
    let events = record(&agent);
    let signal = quick_ended.clone();
    let _subscription = agent.subscribe(move |event, _| {
        if matches!(event, AgentEvent::ToolExecutionEnd { tool_call_id, .. } if tool_call_id == "tool-1") {
            signal.notify_one();
        }
    });
    agent.prompt("go").await.unwrap();

    let kinds = kinds(&events);
    assert_eq!(kinds.iter().filter(|k| **k == "tool_execution_update").count(), 0);
    assert_eq!(kinds.iter().filter(|k| **k == "tool_execution_end").count(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn state_mutators_copy_the_lists() {
    let agent = Agent::new(AgentOptions::default());
    let mut messages = vec![user("one")];
    agent.set_messages(messages.clone());
    messages.push(user("two"));
    assert_eq!(agent.messages().len(), 1);

    let mut copy = agent.messages();
    copy.clear();
    assert_eq!(agent.messages().len(), 1);

    agent.append_message(user("two"));
    assert_eq!(agent.messages().len(), 2);
    agent.set_system_prompt("new prompt");
    agent.set_thinking_level(ThinkingLevel::High);
    let state = agent.state();
    assert_eq!(state.system_prompt, "new prompt");
    assert_eq!(state.thinking_level, ThinkingLevel::High);
}

#[tokio::test(flavor = "multi_thread")]
async fn steer_and_follow_up_do_not_touch_the_transcript() {
    // Each message is made once: `user` stamps the time, so two made apart can differ by a tick.
    let [hello, steer, later, then, again] = ["hello", "steer", "later", "then", "again"].map(user);
    let agent = Agent::new(AgentOptions::default());
    agent.set_messages(vec![hello]);
    agent.steer(steer.clone());
    agent.follow_up(later.clone());

    assert_eq!(agent.messages().len(), 1);
    assert!(agent.has_queued_messages());
    assert_eq!(agent.clear_steering_queue(), vec![steer]);
    assert!(agent.has_queued_messages());
    assert_eq!(agent.clear_follow_up_queue(), vec![later]);
    assert!(!agent.has_queued_messages());
    agent.follow_up(then.clone());
    agent.steer(again.clone());
    assert_eq!(agent.clear_all_queues(), vec![again, then], "steering first");
    assert!(agent.clear_all_queues().is_empty());
    assert!(!agent.has_queued_messages());
    assert_eq!(agent.messages().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn abort_when_idle_does_not_panic() {
    let agent = Agent::new(AgentOptions::default());
    agent.abort();
    agent.abort();
    assert!(agent.signal().is_none());
    assert!(!agent.is_streaming());
}

#[tokio::test(flavor = "multi_thread")]
async fn reset_during_a_run_fails_and_leaves_the_transcript() {
    let faux = slow_faux();
    let agent = agent_with(&faux);
    let task = start_streaming(&agent, "hi").await;

    let error = agent.reset().unwrap_err();
    assert_eq!(error, AgentError::AlreadyResetting);
    assert_eq!(
        error.to_string(),
        "Agent is already processing. Wait for completion before resetting."
    );
    assert_eq!(roles(&agent.messages()), ["user"]);

    agent.abort();
    task.await.unwrap().unwrap();
    agent.steer(user("queued"));
    agent.reset().unwrap();
    assert!(agent.messages().is_empty());
    assert!(agent.error_message().is_none());
    assert!(!agent.has_queued_messages());
}

#[tokio::test(flavor = "multi_thread")]
async fn prompt_and_continue_while_streaming_fail_with_pi_messages() {
    let faux = slow_faux();
    let agent = agent_with(&faux);
    let task = start_streaming(&agent, "hi").await;

    let error = agent.prompt("again").await.unwrap_err();
    assert_eq!(error, AgentError::AlreadyPrompting);
    assert_eq!(
        error.to_string(),
        "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion."
    );
    let error = agent.continue_run().await.unwrap_err();
    assert_eq!(error, AgentError::AlreadyContinuing);
    assert_eq!(
        error.to_string(),
        "Agent is already processing. Wait for completion before continuing."
    );

    agent.abort();
    task.await.unwrap().unwrap();
    assert_eq!(roles(&agent.messages()), ["user", "assistant"]);
    assert_eq!(faux.call_count(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn continue_from_an_assistant_tail_processes_a_queued_follow_up() {
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("Processed")]);
    let agent = agent_with(&faux);
    agent.set_messages(vec![user("Initial"), faux_assistant_text("Initial response").into()]);
    agent.follow_up(user("Follow-up"));
    agent.continue_run().await.unwrap();

    let messages = agent.messages();
    assert_eq!(roles(&messages), ["user", "assistant", "user", "assistant"]);
    assert_eq!(user_text(&messages[2]), "Follow-up");
    assert_eq!(last_assistant(&messages).text(), "Processed");
    assert_eq!(faux.call_count(), 1);
    assert!(!agent.has_queued_messages());
}

#[tokio::test(flavor = "multi_thread")]
async fn continue_keeps_one_at_a_time_steering_semantics_from_an_assistant_tail() {
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("Processed 1"), faux_assistant_text("Processed 2")]);
    let agent = agent_with(&faux);
    agent.set_messages(vec![user("Initial"), faux_assistant_text("Initial response").into()]);
    agent.steer(user("Steering 1"));
    agent.steer(user("Steering 2"));
    agent.continue_run().await.unwrap();

    let messages = agent.messages();
    assert_eq!(
        roles(&messages[messages.len() - 4..]),
        ["user", "assistant", "user", "assistant"]
    );
    assert_eq!(
        roles(&messages),
        ["user", "assistant", "user", "assistant", "user", "assistant"]
    );
    assert_eq!(user_text(&messages[2]), "Steering 1");
    assert_eq!(user_text(&messages[4]), "Steering 2");
    assert_eq!(faux.call_count(), 2);
    // One steering message per model call.
    assert_eq!(faux.calls()[0].roles, ["user", "assistant", "user"]);
    assert!(!agent.has_queued_messages());
}

#[tokio::test(flavor = "multi_thread")]
async fn continue_from_an_assistant_tail_with_nothing_queued_fails() {
    let faux = FauxModel::new();
    let agent = agent_with(&faux);
    agent.set_messages(vec![user("hi"), faux_assistant_text("hello").into()]);

    let error = agent.continue_run().await.unwrap_err();
    assert_eq!(error, AgentError::ContinueFromAssistant);
    assert_eq!(error.to_string(), "Cannot continue from message role: assistant");
    assert_eq!(faux.call_count(), 0);
    assert!(!agent.is_streaming());
}

#[tokio::test(flavor = "multi_thread")]
async fn thinking_level_session_id_and_should_stop_after_turn_are_forwarded() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call(
            "calc-1",
            "calculate",
            json!({"expression": "1 + 1"}),
        )]),
        faux_assistant_text("never"),
    ]);
    let agent = Agent::new(
        AgentOptions::new(faux.model())
            .stream_fn(faux.stream_fn())
            .tools(tools(vec![calculate_tool()])),
    );
    agent.set_thinking_level(ThinkingLevel::High);
    let stops = Arc::new(AtomicUsize::new(0));
    let counted = stops.clone();
    agent.update_config(move |config| {
        config.session_id = Some("session-42".into());
        config.should_stop_after_turn = Some(Arc::new(move |_ctx: &TurnContext<'_>| {
            counted.fetch_add(1, Ordering::SeqCst);
            true
        }));
    });
    agent.prompt("1 + 1?").await.unwrap();

    let calls = faux.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].reasoning, Some(ThinkingLevel::High));
    assert_eq!(calls[0].session_id.as_deref(), Some("session-42"));
    assert_eq!(stops.load(Ordering::SeqCst), 1);
    assert_eq!(roles(&agent.messages()), ["user", "assistant", "toolResult"]);

    agent.set_thinking_level(ThinkingLevel::Off);
    agent.update_config(|config| config.should_stop_after_turn = None);
    faux.set_responses([faux_assistant_text("ok")]);
    agent.prompt("again").await.unwrap();
    assert_eq!(faux.calls()[1].reasoning, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn prompt_with_images_builds_one_user_message_with_text_and_image_blocks() {
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("a cat")]);
    let agent = agent_with(&faux);
    agent
        .prompt_with_images("what is this?", vec![ContentBlock::image("aGVsbG8=", "image/png")])
        .await
        .unwrap();

    let AgentMessage::User(prompt) = &agent.messages()[0] else {
        panic!("a user message first");
    };
    assert_eq!(
        prompt.content,
        pi_agent_core::UserContent::Blocks(vec![
            ContentBlock::text("what is this?"),
            ContentBlock::image("aGVsbG8=", "image/png"),
        ])
    );
}

/// No test of this file installs a default stream function, so none is set here.
#[tokio::test(flavor = "multi_thread")]
async fn prompt_without_any_stream_fn_fails_and_leaves_the_agent_idle() {
    let agent = Agent::new(AgentOptions::default());
    let error = agent.prompt("hi").await.unwrap_err();

    assert_eq!(error, AgentError::Loop(AgentLoopError::NoStreamFn));
    assert_eq!(
        error.to_string(),
        "No default stream function configured. Pass streamFn explicitly or call setDefaultStreamFn()."
    );
    assert!(agent.messages().is_empty());
    assert!(!agent.is_streaming());
    assert!(agent.signal().is_none());
}

// ---------------------------------------------------------------------------------------------
// pi-mono.md §5.3 — e2e.test.ts with the faux provider
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn e2e_should_handle_a_basic_text_prompt() {
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("4")]);
    let agent = agent_with(&faux);
    agent
        .prompt("What is 2 + 2? Answer with just the number.")
        .await
        .unwrap();

    let messages = agent.messages();
    assert_eq!(roles(&messages), ["user", "assistant"]);
    let answer = last_assistant(&messages);
    assert_eq!(answer.text(), "4");
    assert_eq!(answer.stop_reason, StopReason::Stop);
    assert_eq!(answer.model, "faux-1");
    assert_eq!(answer.provider, "faux");
    assert!(!agent.is_streaming());
    assert!(agent.error_message().is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_should_execute_tools_correctly() {
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call(
            "calc-1",
            "calculate",
            json!({"expression": "123 * 456"}),
        )]),
        faux_assistant_text("123 * 456 = 56088"),
    ]);
    let agent = Agent::new(
        AgentOptions::new(faux.model())
            .stream_fn(faux.stream_fn())
            .tools(tools(vec![calculate_tool()])),
    );
    let pending = Arc::new(Mutex::new(Vec::new()));
    let (seen, observed) = (pending.clone(), agent.clone());
    let _subscription = agent.subscribe(move |event, _| {
        if matches!(event.kind(), "tool_execution_start" | "tool_execution_end") {
            let mut ids: Vec<String> = observed.state().pending_tool_calls.into_iter().collect();
            ids.sort();
            seen.lock().unwrap().push((event.kind(), ids));
        }
    });
    agent
        .prompt("Calculate 123 * 456 using the calculator tool.")
        .await
        .unwrap();

    assert_eq!(
        *pending.lock().unwrap(),
        [
            ("tool_execution_start", vec!["calc-1".to_owned()]),
            ("tool_execution_end", vec![])
        ]
    );
    let messages = agent.messages();
    assert_eq!(roles(&messages), ["user", "assistant", "toolResult", "assistant"]);
    let result = messages[2].as_tool_result().unwrap();
    assert_eq!(result.tool_call_id, "calc-1");
    assert_eq!(result.text(), "123 * 456 = 56088");
    assert!(!result.is_error);
    assert!(last_assistant(&messages).text().contains("56088"));
    assert!(agent.state().pending_tool_calls.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_should_handle_abort_during_streaming() {
    let faux = slow_faux();
    let agent = agent_with(&faux);
    let task = start_streaming(&agent, "Tell me a long story.").await;
    agent.abort();
    task.await.unwrap().unwrap();

    let messages = agent.messages();
    let last = last_assistant(&messages);
    assert_eq!(last.stop_reason, StopReason::Aborted);
    assert_eq!(last.error_message.as_deref(), Some("Request was aborted"));
    assert_eq!(agent.error_message().as_deref(), Some("Request was aborted"));
    assert!(
        !last.text().is_empty(),
        "the partial text streamed before the abort is kept"
    );
    assert!(!agent.is_streaming());
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_should_emit_message_update_events_while_streaming() {
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("Streaming works one chunk at a time.")]);
    let agent = agent_with(&faux);
    let streaming_seen = Arc::new(AtomicBool::new(false));
    let (seen, observed) = (streaming_seen.clone(), agent.clone());
    let _subscription = agent.subscribe(move |event, _| {
        if event.kind() == "message_update" && observed.state().streaming_message.is_some() {
            seen.store(true, Ordering::SeqCst);
        }
    });
    let events = record(&agent);
    agent.prompt("stream please").await.unwrap();

    let kinds = kinds(&events);
    let updates = kinds.iter().filter(|k| **k == "message_update").count();
    assert!(updates >= 3, "{kinds:?}");
    let first_update = kinds.iter().position(|k| *k == "message_update").unwrap();
    let last_update = kinds.iter().rposition(|k| *k == "message_update").unwrap();
    assert_eq!(kinds[first_update - 1], "message_start");
    assert_eq!(kinds[last_update + 1], "message_end");
    assert!(streaming_seen.load(Ordering::SeqCst));
    assert!(agent.state().streaming_message.is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_should_maintain_context_across_multiple_turns() {
    let faux = FauxModel::new();
    faux.set_responses([
        FauxResponse::from(faux_assistant_text("Nice to meet you, Ada.")),
        FauxResponse::factory(|request| {
            let knows = request.context.messages.iter().any(|m| user_text(m).contains("Ada"));
            faux_assistant_text(if knows { "Your name is Ada." } else { "I don't know." })
        }),
    ]);
    let agent = agent_with(&faux);
    agent.prompt("My name is Ada.").await.unwrap();
    agent.prompt("What is my name?").await.unwrap();

    let messages = agent.messages();
    assert_eq!(roles(&messages), ["user", "assistant", "user", "assistant"]);
    assert_eq!(last_assistant(&messages).text(), "Your name is Ada.");
    let calls = faux.calls();
    assert_eq!(calls[0].roles, ["user"]);
    assert_eq!(calls[1].roles, ["user", "assistant", "user"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_should_preserve_thinking_blocks() {
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_message(vec![
        faux_thinking("The user wants 6 * 7; that is 42."),
        faux_text("42"),
    ])]);
    let agent = agent_with(&faux);
    agent.set_thinking_level(ThinkingLevel::Medium);
    let events = record(&agent);
    agent.prompt("What is 6 * 7?").await.unwrap();

    let answer = last_assistant(&agent.messages());
    let ContentBlock::Thinking(thinking) = &answer.content[0] else {
        panic!("the thinking block comes first: {:?}", answer.content);
    };
    assert_eq!(thinking.thinking, "The user wants 6 * 7; that is 42.");
    assert_eq!(answer.content[1], ContentBlock::text("42"));
    let thinking_deltas = events
        .lock()
        .unwrap()
        .iter()
        .filter(|event| {
            matches!(
                event,
                AgentEvent::MessageUpdate {
                    assistant_message_event: AssistantMessageEvent::ThinkingDelta { .. },
                    ..
                }
            )
        })
        .count();
    assert!(thinking_deltas > 0);
    assert_eq!(faux.calls()[0].reasoning, Some(ThinkingLevel::Medium));
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_continue_should_fail_without_messages_or_from_an_assistant_tail() {
    let faux = FauxModel::new();
    let agent = agent_with(&faux);
    let error = agent.continue_run().await.unwrap_err();
    assert_eq!(error, AgentError::NoMessages);
    assert_eq!(error.to_string(), "No messages to continue from");

    agent.set_messages(vec![user("hi"), faux_assistant_text("hello").into()]);
    assert_eq!(
        agent.continue_run().await.unwrap_err(),
        AgentError::ContinueFromAssistant
    );
    assert_eq!(faux.call_count(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_continue_should_answer_a_trailing_user_message() {
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("HELLO WORLD")]);
    let agent = agent_with(&faux);
    agent.set_messages(vec![user("Say HELLO WORLD")]);
    let events = record(&agent);
    agent.continue_run().await.unwrap();

    let messages = agent.messages();
    assert_eq!(roles(&messages), ["user", "assistant"]);
    assert_eq!(last_assistant(&messages).text(), "HELLO WORLD");
    // No new user message is emitted.
    let ends: Vec<String> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MessageEnd { message } => Some(message.role().to_owned()),
            _ => None,
        })
        .collect();
    assert_eq!(ends, ["assistant"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_continue_should_answer_a_trailing_tool_result() {
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("The answer is 8.")]);
    let agent = Agent::new(
        AgentOptions::new(faux.model())
            .stream_fn(faux.stream_fn())
            .tools(tools(vec![calculate_tool()])),
    );
    agent.set_messages(vec![
        user("What is 5 + 3?"),
        faux_assistant_message(vec![faux_tool_call(
            "calc-1",
            "calculate",
            json!({"expression": "5 + 3"}),
        )])
        .into(),
        tool_result("calc-1", "calculate", "5 + 3 = 8"),
    ]);
    agent.continue_run().await.unwrap();

    let messages = agent.messages();
    assert_eq!(roles(&messages), ["user", "assistant", "toolResult", "assistant"]);
    assert_eq!(last_assistant(&messages).text(), "The answer is 8.");
    assert_eq!(faux.calls()[0].roles, ["user", "assistant", "toolResult"]);
}

// ---------------------------------------------------------------------------------------------
// pi-mono.md §6.5 — the faux provider
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn faux_with_an_empty_queue_ends_with_no_more_faux_responses_queued() {
    let faux = FauxModel::new();
    let agent = agent_with(&faux);
    agent.prompt("anyone there?").await.unwrap();

    let messages = agent.messages();
    assert_eq!(roles(&messages), ["user", "assistant"]);
    let last = last_assistant(&messages);
    assert_eq!(last.stop_reason, StopReason::Error);
    assert_eq!(last.error_message.as_deref(), Some("No more faux responses queued"));
    assert_eq!(agent.error_message().as_deref(), Some("No more faux responses queued"));
    assert_eq!(faux.call_count(), 1);
}

async fn stream_events(faux: &FauxModel) -> Vec<AssistantMessageEvent> {
    let messages = [user("hi")];
    let context = LlmContext {
        system_prompt: "",
        messages: &messages,
        tools: &[],
    };
    faux.stream(&faux.model(), &context, &StreamOptions::default())
        .collect()
        .await
}

#[tokio::test(flavor = "multi_thread")]
async fn faux_streams_text_in_3_to_5_char_chunks_and_tool_calls_as_json() {
    let text = "The quick brown fox jumps over the lazy dog, twice over.";
    let arguments = json!({"expression": "123 * 456", "precision": 2});
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_message(vec![
        faux_text(text),
        faux_tool_call("calc-1", "calculate", arguments.clone()),
    ])]);
    let events = stream_events(&faux).await;

    let text_deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AssistantMessageEvent::TextDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text_deltas.concat(), text);
    let (last, rest) = text_deltas.split_last().unwrap();
    assert!(
        rest.iter().all(|d| (3..=5).contains(&d.chars().count())),
        "{text_deltas:?}"
    );
    assert!((1..=5).contains(&last.chars().count()));

    let json_deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AssistantMessageEvent::ToolCallDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert!(json_deltas.len() > 1);
    let streamed: serde_json::Value = serde_json::from_str(&json_deltas.concat()).unwrap();
    assert_eq!(streamed, arguments);
    let Some(AssistantMessageEvent::ToolCallEnd { tool_call, .. }) = events.iter().find(|e| e.kind() == "toolcall_end")
    else {
        panic!("a toolcall_end event");
    };
    assert_eq!(
        (tool_call.id.as_str(), tool_call.name.as_str()),
        ("calc-1", "calculate")
    );
    assert_eq!(tool_call.arguments, arguments);

    let kinds: Vec<_> = events.iter().map(AssistantMessageEvent::kind).collect();
    assert_eq!(kinds.first(), Some(&"start"));
    assert_eq!(kinds[1], "text_start");
    assert!(kinds.contains(&"text_end"));
    assert!(kinds.contains(&"toolcall_start"));
    let Some(AssistantMessageEvent::Done { reason, message }) = events.last() else {
        panic!("the stream ends with done");
    };
    assert_eq!(*reason, StopReason::ToolUse);
    assert_eq!(message.text(), text);
}
