//! Property tests of the tool dispatch (SPEC §9, pi-mono §2.4–§2.7).
//!
//! Every case is one agent run whose first model response holds a batch of 1–8 tool calls and
//! whose second response is the text `done`. The calls go to `FnTool`s with random execution
//! modes, durations (0–50 ms of `tokio::time::sleep`) and outcomes (ok, error, panic,
//! `terminate`), or to an unknown tool; a `before_tool_call` hook blocks some of them; the global
//! mode is sometimes sequential; and some runs are aborted, from inside a tool, from inside the
//! hook or after a random delay. Runs use a paused current-thread runtime, so virtual time makes
//! them instant and deterministic.
//!
//! Each tool records its execution interval in virtual time and on a logical clock shared with
//! the event sink, so the suites can check: sequential batches never overlap; parallel batches
//! overlap; one start / end / result per call; results in source order; ends in completion order;
//! the terminate rule; and that an abort never duplicates results.
//!
//! Longer than 800 lines on purpose: the suites share the virtual-time tools and the logical clock
//! defined here, and each property reads best beside that harness.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::Duration;

use pi_agent_core::faux::{FauxModel, faux_assistant_message, faux_assistant_text, faux_tool_call};
use pi_agent_core::{
    AgentContext, AgentEvent, AgentLoopConfig, AgentMessage, AgentTool, BeforeToolCallContext, BeforeToolCallResult,
    ContentBlock, FnTool, StopReason, ToolContext, ToolError, ToolExecutionMode, ToolResult, run_agent_loop,
};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::json;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Name of the tool no call can find.
const UNKNOWN_TOOL: &str = "ghost";
/// Prefix of the panic messages of the tools (silenced by [`quiet_tool_panics`]).
const PANIC_PREFIX: &str = "boom call-";

// ---------------------------------------------------------------------------------------------
// The plan of one case
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Ok,
    Fail,
    Panic,
    Terminate,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Tool(usize),
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct BlockPlan {
    reason: bool,
    terminate: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct CallPlan {
    target: Target,
    ms: u64,
    outcome: Outcome,
    /// Ends early (with an error) when the run is aborted.
    honours_cancel: bool,
    /// Sends one partial result when it starts.
    update: bool,
    /// `before_tool_call` blocks the call.
    block: Option<BlockPlan>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Abort {
    Never,
    /// Cancelled by the tool of this call when it starts executing.
    InTool(usize),
    /// Cancelled by `before_tool_call` for this call.
    InHook(usize),
    /// Cancelled after this many virtual milliseconds.
    After(u64),
}

#[derive(Debug, Clone)]
struct Case {
    /// Execution mode of tool `t<i>`.
    modes: Vec<Option<ToolExecutionMode>>,
    calls: Vec<CallPlan>,
    global_sequential: bool,
    abort: Abort,
}

/// What the loop should report for a call when nothing is aborted.
struct Expected {
    is_error: bool,
    terminate: bool,
    text: String,
    /// `text` only has to be contained in the result (panic messages are wrapped).
    contains: bool,
}

impl Case {
    fn tool_name(&self, call: usize) -> String {
        match self.calls[call].target {
            Target::Tool(t) => format!("t{t}"),
            Target::Unknown => UNKNOWN_TOOL.to_owned(),
        }
    }

    /// The dispatch rule: global sequential, or any call names a sequential tool.
    fn sequential(&self) -> bool {
        self.global_sequential
            || self.calls.iter().any(|call| match call.target {
                Target::Tool(t) => self.modes[t] == Some(ToolExecutionMode::Sequential),
                Target::Unknown => false,
            })
    }

    /// The call gets to `execute` unless the run is aborted.
    fn runs(&self, call: usize) -> bool {
        let plan = &self.calls[call];
        matches!(plan.target, Target::Tool(_)) && plan.block.is_none()
    }

    fn expected(&self, call: usize) -> Expected {
        let plan = &self.calls[call];
        let exact = |is_error: bool, terminate: bool, text: String| Expected {
            is_error,
            terminate,
            text,
            contains: false,
        };
        match (plan.target, plan.block) {
            (Target::Unknown, _) => exact(true, false, format!("Tool {UNKNOWN_TOOL} not found")),
            (Target::Tool(_), Some(block)) => {
                let text = if block.reason {
                    format!("blocked call-{call}")
                } else {
                    "Tool execution was blocked".to_owned()
                };
                exact(true, block.terminate, text)
            }
            (Target::Tool(_), None) => match plan.outcome {
                Outcome::Ok => exact(false, false, format!("ok call-{call}")),
                Outcome::Fail => exact(true, false, format!("failed call-{call}")),
                Outcome::Terminate => exact(false, true, format!("stop call-{call}")),
                Outcome::Panic => Expected {
                    is_error: true,
                    terminate: false,
                    text: format!("{PANIC_PREFIX}{call}"),
                    contains: true,
                },
            },
        }
    }

    /// The terminate rule applied to the plan (every call is finalised when nothing aborts).
    fn expected_terminate(&self) -> bool {
        (0..self.calls.len()).all(|call| self.expected(call).terminate)
    }
}

// ---------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
enum ModeShape {
    Any,
    /// Made sequential by the global mode or by a call to a sequential tool.
    Sequential,
    /// Global parallel and no sequential tool.
    Parallel,
}

#[derive(Debug, Clone, Copy)]
enum AbortShape {
    Never,
    Maybe,
    Always,
}

#[derive(Debug, Clone, Copy)]
struct Shape {
    mode: ModeShape,
    abort: AbortShape,
    /// Mostly terminating outcomes and short batches, so that "every result terminates" is common.
    terminate_bias: bool,
}

fn tool_mode() -> impl Strategy<Value = Option<ToolExecutionMode>> {
    prop_oneof![
        2 => Just(None),
        1 => Just(Some(ToolExecutionMode::Parallel)),
        1 => Just(Some(ToolExecutionMode::Sequential)),
    ]
}

fn outcome(terminate_bias: bool) -> BoxedStrategy<Outcome> {
    if terminate_bias {
        prop_oneof![
            1 => Just(Outcome::Ok),
            1 => Just(Outcome::Fail),
            1 => Just(Outcome::Panic),
            9 => Just(Outcome::Terminate),
        ]
        .boxed()
    } else {
        prop_oneof![
            5 => Just(Outcome::Ok),
            2 => Just(Outcome::Fail),
            1 => Just(Outcome::Panic),
            2 => Just(Outcome::Terminate),
        ]
        .boxed()
    }
}

fn call_plan(tools: usize, terminate_bias: bool) -> impl Strategy<Value = CallPlan> {
    let block = (
        any::<bool>(),
        prop::bool::weighted(if terminate_bias { 0.8 } else { 0.3 }),
    )
        .prop_map(|(reason, terminate)| BlockPlan { reason, terminate });
    (
        prop_oneof![9 => (0..tools).prop_map(Target::Tool), 1 => Just(Target::Unknown)],
        0u64..=50,
        outcome(terminate_bias),
        any::<bool>(),
        prop::bool::weighted(0.3),
        prop::option::weighted(0.15, block),
    )
        .prop_map(|(target, ms, outcome, honours_cancel, update, block)| CallPlan {
            target,
            ms,
            outcome,
            honours_cancel,
            update,
            block,
        })
}

/// `(kind, call, delay)`: kind 0 = never, 1 = in a tool, 2 = in the hook, 3 = after a delay.
fn abort_seed(shape: AbortShape) -> BoxedStrategy<(u8, Index, u64)> {
    let kind = match shape {
        AbortShape::Never => Just(0u8).boxed(),
        AbortShape::Maybe => prop_oneof![3 => Just(0u8), 1 => Just(1u8), 1 => Just(2u8), 1 => Just(3u8)].boxed(),
        AbortShape::Always => (1u8..=3).boxed(),
    };
    (kind, any::<Index>(), 1u64..=60).boxed()
}

fn case(shape: Shape) -> impl Strategy<Value = Case> {
    let max_calls = if shape.terminate_bias { 4 } else { 8 };
    (1usize..=4)
        .prop_flat_map(move |tools| {
            (
                prop::collection::vec(tool_mode(), tools),
                prop::collection::vec(call_plan(tools, shape.terminate_bias), 1..=max_calls),
                prop::bool::weighted(0.25),
                (any::<bool>(), any::<Index>(), any::<Index>()),
                abort_seed(shape.abort),
            )
        })
        .prop_map(
            move |(mut modes, mut calls, mut global_sequential, forced, (kind, at, ms))| {
                match shape.mode {
                    ModeShape::Any => {}
                    ModeShape::Sequential => {
                        let (via_global, position, tool) = forced;
                        if via_global {
                            global_sequential = true;
                        } else {
                            let tool = tool.index(modes.len());
                            modes[tool] = Some(ToolExecutionMode::Sequential);
                            let position = position.index(calls.len());
                            calls[position].target = Target::Tool(tool);
                        }
                    }
                    ModeShape::Parallel => {
                        global_sequential = false;
                        for mode in &mut modes {
                            if *mode == Some(ToolExecutionMode::Sequential) {
                                *mode = Some(ToolExecutionMode::Parallel);
                            }
                        }
                    }
                }
                let abort = match kind {
                    0 => Abort::Never,
                    1 => Abort::InTool(at.index(calls.len())),
                    2 => Abort::InHook(at.index(calls.len())),
                    _ => Abort::After(ms),
                };
                Case {
                    modes,
                    calls,
                    global_sequential,
                    abort,
                }
            },
        )
}

// ---------------------------------------------------------------------------------------------
// Running a case
// ---------------------------------------------------------------------------------------------

/// One execution of a tool: virtual-time interval and logical-clock ticks.
#[derive(Debug, Clone)]
struct Exec {
    call: usize,
    start: Instant,
    start_seq: u64,
    end: Option<(Instant, u64)>,
}

impl Exec {
    fn end_instant(&self) -> Instant {
        self.end.expect("execution ended").0
    }

    fn end_seq(&self) -> u64 {
        self.end.expect("execution ended").1
    }
}

/// State shared by the tools, the hook, the aborter and the sink of one run.
struct Shared {
    case: Case,
    clock: AtomicU64,
    execs: Mutex<Vec<Exec>>,
    cancel: CancellationToken,
    abort_seq: Mutex<Option<u64>>,
}

impl Shared {
    fn tick(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::SeqCst)
    }

    fn abort_now(&self) {
        let mut slot = self.abort_seq.lock().unwrap();
        if slot.is_none() {
            *slot = Some(self.tick());
        }
        self.cancel.cancel();
    }

    async fn execute(&self, id: &str, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let call = call_index(id);
        let plan = self.case.calls[call].clone();
        let slot = {
            let mut execs = self.execs.lock().unwrap();
            execs.push(Exec {
                call,
                start: Instant::now(),
                start_seq: self.tick(),
                end: None,
            });
            execs.len() - 1
        };
        if plan.update {
            ctx.updates.update(ToolResult::text(format!("partial {id}")));
        }
        if self.case.abort == Abort::InTool(call) {
            self.abort_now();
        }
        let sleep = tokio::time::sleep(Duration::from_millis(plan.ms));
        let cut = if plan.honours_cancel {
            tokio::select! {
                () = sleep => false,
                () = ctx.cancel.cancelled() => true,
            }
        } else {
            sleep.await;
            false
        };
        {
            let mut execs = self.execs.lock().unwrap();
            execs[slot].end = Some((Instant::now(), self.tick()));
        }
        if cut {
            return Err(ToolError::new(format!("cancelled {id}")));
        }
        match plan.outcome {
            Outcome::Ok => Ok(ToolResult::text(format!("ok {id}"))),
            Outcome::Fail => Err(ToolError::new(format!("failed {id}"))),
            Outcome::Terminate => Ok(ToolResult::text(format!("stop {id}")).with_terminate(true)),
            Outcome::Panic => panic!("{PANIC_PREFIX}{call}"),
        }
    }

    fn before_tool_call(&self, call_id: &str) -> Option<BeforeToolCallResult> {
        let call = call_index(call_id);
        if self.case.abort == Abort::InHook(call) {
            self.abort_now();
        }
        self.case.calls[call].block.map(|block| BeforeToolCallResult {
            block: true,
            reason: block.reason.then(|| format!("blocked {call_id}")),
            terminate: block.terminate,
        })
    }
}

fn call_index(id: &str) -> usize {
    id.strip_prefix("call-")
        .and_then(|n| n.parse().ok())
        .expect("call ids look like call-<n>")
}

fn text_of(content: &[ContentBlock]) -> String {
    content.iter().filter_map(ContentBlock::as_text).collect()
}

/// An agent event reduced to what the properties look at.
#[derive(Debug, Clone, PartialEq)]
enum Ev {
    Start(usize),
    Update(usize),
    End {
        call: usize,
        is_error: bool,
        terminate: bool,
        text: String,
    },
    ResultStart(usize),
    ResultEnd {
        call: usize,
        is_error: bool,
        text: String,
    },
    AssistantEnd {
        stop: StopReason,
        text: String,
        error: Option<String>,
    },
    TurnEnd {
        results: Vec<usize>,
    },
    AgentStart,
    AgentEnd {
        messages: Vec<AgentMessage>,
    },
    Other,
}

impl Ev {
    fn of(event: AgentEvent) -> Ev {
        match event {
            AgentEvent::AgentStart => Ev::AgentStart,
            AgentEvent::AgentEnd { messages } => Ev::AgentEnd { messages },
            AgentEvent::ToolExecutionStart { tool_call_id, .. } => Ev::Start(call_index(&tool_call_id)),
            AgentEvent::ToolExecutionUpdate { tool_call_id, .. } => Ev::Update(call_index(&tool_call_id)),
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                result,
                is_error,
                ..
            } => Ev::End {
                call: call_index(&tool_call_id),
                is_error,
                terminate: result.terminate == Some(true),
                text: text_of(&result.content),
            },
            AgentEvent::MessageStart {
                message: AgentMessage::ToolResult(result),
            } => Ev::ResultStart(call_index(&result.tool_call_id)),
            AgentEvent::MessageEnd {
                message: AgentMessage::ToolResult(result),
            } => Ev::ResultEnd {
                call: call_index(&result.tool_call_id),
                is_error: result.is_error,
                text: result.text(),
            },
            AgentEvent::MessageEnd {
                message: AgentMessage::Assistant(assistant),
            } => Ev::AssistantEnd {
                stop: assistant.stop_reason,
                text: assistant.text(),
                error: assistant.error_message,
            },
            AgentEvent::TurnEnd { tool_results, .. } => Ev::TurnEnd {
                results: tool_results.iter().map(|r| call_index(&r.tool_call_id)).collect(),
            },
            _ => Ev::Other,
        }
    }

    fn call(&self) -> Option<usize> {
        match self {
            Ev::Start(call) | Ev::Update(call) | Ev::ResultStart(call) => Some(*call),
            Ev::End { call, .. } | Ev::ResultEnd { call, .. } => Some(*call),
            _ => None,
        }
    }
}

/// Everything one run showed.
struct Observed {
    /// Events with their logical-clock tick.
    evs: Vec<(u64, Ev)>,
    execs: Vec<Exec>,
    /// The token was cancelled at some point of the run.
    aborted: bool,
    abort_seq: Option<u64>,
    /// Whether the token was cancelled when the first `turn_end` was emitted.
    cancelled_at_first_turn_end: Option<bool>,
    model_calls: usize,
    pending_responses: usize,
    new_messages: Vec<AgentMessage>,
}

fn quiet_tool_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let message = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("");
            if !message.starts_with(PANIC_PREFIX) {
                default(info);
            }
        }));
    });
}

fn run_case(case: &Case) -> Observed {
    quiet_tool_panics();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(run_case_async(case))
}

async fn run_case_async(case: &Case) -> Observed {
    let shared = Arc::new(Shared {
        case: case.clone(),
        clock: AtomicU64::new(0),
        execs: Mutex::new(Vec::new()),
        cancel: CancellationToken::new(),
        abort_seq: Mutex::new(None),
    });

    let faux = FauxModel::new();
    let calls = (0..case.calls.len())
        .map(|call| faux_tool_call(format!("call-{call}"), case.tool_name(call), json!({})))
        .collect();
    faux.set_responses([faux_assistant_message(calls), faux_assistant_text("done")]);

    let tools: Vec<Arc<dyn AgentTool>> = case
        .modes
        .iter()
        .enumerate()
        .map(|(t, mode)| {
            let state = shared.clone();
            let mut tool = FnTool::new(
                format!("t{t}"),
                "test tool",
                json!({"type": "object"}),
                move |id, _args, ctx| {
                    let state = state.clone();
                    async move { state.execute(&id, ctx).await }
                },
            );
            if let Some(mode) = mode {
                tool = tool.with_execution_mode(*mode);
            }
            tool.into_arc()
        })
        .collect();

    let mut config = AgentLoopConfig::new(faux.model()).with_stream_fn(faux.stream_fn());
    config.tool_execution = if case.global_sequential {
        ToolExecutionMode::Sequential
    } else {
        ToolExecutionMode::Parallel
    };
    let state = shared.clone();
    let hook = move |ctx: BeforeToolCallContext<'_>| -> Result<Option<BeforeToolCallResult>, ToolError> {
        Ok(state.before_tool_call(&ctx.tool_call.id))
    };
    config.before_tool_call = Some(Arc::new(hook));

    if let Abort::After(ms) = case.abort {
        let state = shared.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            state.abort_now();
        });
    }

    let mut evs = Vec::new();
    let mut cancelled_at_first_turn_end = None;
    let context = AgentContext {
        tools,
        ..Default::default()
    };
    let cancel = shared.cancel.clone();
    let new_messages = {
        let state = shared.clone();
        let mut sink = |event: AgentEvent| {
            if matches!(event, AgentEvent::TurnEnd { .. }) && cancelled_at_first_turn_end.is_none() {
                cancelled_at_first_turn_end = Some(state.cancel.is_cancelled());
            }
            evs.push((state.tick(), Ev::of(event)));
        };
        run_agent_loop(vec![AgentMessage::user("go")], context, &config, &cancel, &mut sink)
            .await
            .expect("the run starts")
    };
    let aborted = shared.cancel.is_cancelled();
    let abort_seq = *shared.abort_seq.lock().unwrap();
    let execs = shared.execs.lock().unwrap().clone();
    Observed {
        evs,
        execs,
        aborted,
        abort_seq,
        cancelled_at_first_turn_end,
        model_calls: faux.call_count(),
        pending_responses: faux.pending_response_count(),
        new_messages,
    }
}

// ---------------------------------------------------------------------------------------------
// Views of a run
// ---------------------------------------------------------------------------------------------

impl Observed {
    fn exec_of(&self, call: usize) -> Option<&Exec> {
        self.execs.iter().find(|exec| exec.call == call)
    }

    fn executed(&self, call: usize) -> bool {
        self.exec_of(call).is_some()
    }

    /// Tool events (start, update, end, result start/end) as `(tick, event)`.
    fn tool_evs(&self) -> Vec<(u64, &Ev)> {
        self.evs
            .iter()
            .filter(|(_, ev)| ev.call().is_some())
            .map(|(seq, ev)| (*seq, ev))
            .collect()
    }

    fn count(&self, pred: impl Fn(&Ev) -> bool) -> usize {
        self.evs.iter().filter(|(_, ev)| pred(ev)).count()
    }

    fn seq_of(&self, pred: impl Fn(&Ev) -> bool) -> Option<u64> {
        self.evs.iter().find(|(_, ev)| pred(ev)).map(|(seq, _)| *seq)
    }

    fn start_seq(&self, call: usize) -> Option<u64> {
        self.seq_of(|ev| *ev == Ev::Start(call))
    }

    fn end_seq(&self, call: usize) -> Option<u64> {
        self.seq_of(|ev| matches!(ev, Ev::End { call: c, .. } if *c == call))
    }

    fn result_end_seq(&self, call: usize) -> Option<u64> {
        self.seq_of(|ev| matches!(ev, Ev::ResultEnd { call: c, .. } if *c == call))
    }

    /// `tool_execution_end` events in emission order: `(tick, call, terminate)`.
    fn ends(&self) -> Vec<(u64, usize, bool)> {
        self.evs
            .iter()
            .filter_map(|(seq, ev)| match ev {
                Ev::End { call, terminate, .. } => Some((*seq, *call, *terminate)),
                _ => None,
            })
            .collect()
    }

    /// Calls of the toolResult `message_end` events, in emission order.
    fn result_calls(&self) -> Vec<usize> {
        self.evs
            .iter()
            .filter_map(|(_, ev)| match ev {
                Ev::ResultEnd { call, .. } => Some(*call),
                _ => None,
            })
            .collect()
    }

    /// Calls with a `tool_execution_start`, in emission order.
    fn started(&self) -> Vec<usize> {
        self.evs
            .iter()
            .filter_map(|(_, ev)| match ev {
                Ev::Start(call) => Some(*call),
                _ => None,
            })
            .collect()
    }

    fn turn_ends(&self) -> Vec<&Vec<usize>> {
        self.evs
            .iter()
            .filter_map(|(_, ev)| match ev {
                Ev::TurnEnd { results } => Some(results),
                _ => None,
            })
            .collect()
    }

    fn assistant_ends(&self) -> Vec<(u64, &Ev)> {
        self.evs
            .iter()
            .filter(|(_, ev)| matches!(ev, Ev::AssistantEnd { .. }))
            .map(|(seq, ev)| (*seq, ev))
            .collect()
    }
}

fn is_increasing(values: &[usize]) -> bool {
    values.windows(2).all(|w| w[0] < w[1])
}

// ---------------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------------

/// Invariants every run must keep.
fn check_basic(case: &Case, obs: &Observed) -> Result<(), TestCaseError> {
    prop_assert_eq!(obs.evs.first().map(|(_, ev)| ev), Some(&Ev::AgentStart));
    prop_assert!(
        matches!(obs.evs.last(), Some((_, Ev::AgentEnd { .. }))),
        "agent_end is last"
    );
    prop_assert_eq!(obs.count(|ev| matches!(ev, Ev::AgentEnd { .. })), 1);
    if let Some((_, Ev::AgentEnd { messages })) = obs.evs.last() {
        prop_assert_eq!(messages, &obs.new_messages);
    }

    // The assistant message with the calls ends before the first tool event.
    let first_assistant_end = obs.assistant_ends().first().map(|(seq, _)| *seq);
    prop_assert!(first_assistant_end.is_some());
    if let Some((first_tool, _)) = obs.tool_evs().first() {
        prop_assert!(
            first_assistant_end < Some(*first_tool),
            "assistant message_end precedes tool events"
        );
    }

    for exec in &obs.execs {
        prop_assert!(exec.end.is_some(), "execution of call-{} never ended", exec.call);
        prop_assert!(
            case.runs(exec.call),
            "call-{} executed but is unknown or blocked",
            exec.call
        );
        prop_assert_eq!(obs.execs.iter().filter(|e| e.call == exec.call).count(), 1);
        let start = obs.start_seq(exec.call);
        let end = obs.end_seq(exec.call);
        prop_assert!(
            start.is_some_and(|s| s < exec.start_seq),
            "call-{} ran before its start event",
            exec.call
        );
        prop_assert!(
            end.is_some_and(|e| exec.end_seq() < e),
            "call-{} ended after its end event",
            exec.call
        );
        prop_assert!(exec.start <= exec.end_instant());
        if !obs.aborted {
            prop_assert_eq!(
                exec.end_instant() - exec.start,
                Duration::from_millis(case.calls[exec.call].ms)
            );
        }
    }
    if !obs.aborted {
        for call in 0..case.calls.len() {
            prop_assert_eq!(obs.executed(call), case.runs(call), "call-{} executed", call);
        }
    }

    // One update per executed call that sends one, between its start and end events.
    for call in 0..case.calls.len() {
        let updates: Vec<u64> = obs
            .evs
            .iter()
            .filter(|(_, ev)| *ev == Ev::Update(call))
            .map(|(seq, _)| *seq)
            .collect();
        let want = usize::from(obs.executed(call) && case.calls[call].update);
        prop_assert_eq!(updates.len(), want, "updates of call-{}", call);
        for seq in updates {
            prop_assert!(obs.start_seq(call) < Some(seq) && Some(seq) < obs.end_seq(call));
        }
    }
    Ok(())
}

/// (a) A sequential batch runs one call at a time, start→run→end→result per call, in source order.
fn check_sequential(case: &Case, obs: &Observed) -> Result<(), TestCaseError> {
    if !case.sequential() {
        return Ok(());
    }
    let mut execs = obs.execs.clone();
    execs.sort_by_key(|exec| exec.start_seq);
    for pair in execs.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        prop_assert!(a.call < b.call, "call-{} ran before call-{}", a.call, b.call);
        prop_assert!(a.end_seq() < b.start_seq, "call-{} and call-{} overlap", a.call, b.call);
        prop_assert!(
            a.end_instant() <= b.start,
            "call-{} and call-{} overlap in time",
            a.call,
            b.call
        );
    }

    // The tool events are the per-call blocks of a prefix of the calls.
    let started = obs.started();
    let mut expected = Vec::new();
    for call in 0..started.len() {
        expected.push(Ev::Start(call));
        if obs.executed(call) && case.calls[call].update {
            expected.push(Ev::Update(call));
        }
        expected.push(Ev::End {
            call,
            is_error: false,
            terminate: false,
            text: String::new(),
        });
        expected.push(Ev::ResultStart(call));
        expected.push(Ev::ResultEnd {
            call,
            is_error: false,
            text: String::new(),
        });
    }
    let shape = |ev: &Ev| match ev {
        Ev::End { call, .. } => (3, *call),
        Ev::ResultEnd { call, .. } => (5, *call),
        Ev::Start(call) => (1, *call),
        Ev::Update(call) => (2, *call),
        Ev::ResultStart(call) => (4, *call),
        _ => (0, usize::MAX),
    };
    let actual: Vec<(u8, usize)> = obs.tool_evs().iter().map(|(_, ev)| shape(ev)).collect();
    let expected: Vec<(u8, usize)> = expected.iter().map(shape).collect();
    prop_assert_eq!(actual, expected, "sequential event blocks");
    if !obs.aborted {
        prop_assert_eq!(started.len(), case.calls.len());
    }
    Ok(())
}

/// (b) A parallel batch preflights every call, then runs the prepared calls together.
fn check_parallel(case: &Case, obs: &Observed) -> Result<(), TestCaseError> {
    if case.sequential() || obs.aborted {
        return Ok(());
    }
    let n = case.calls.len();
    let tool_evs = obs.tool_evs();

    // Preflight: start (and immediate end) per call in source order, before anything runs.
    let mut preflight = Vec::new();
    for call in 0..n {
        preflight.push((true, call));
        if !case.runs(call) {
            preflight.push((false, call));
        }
    }
    let head: Vec<(bool, usize)> = tool_evs
        .iter()
        .take(preflight.len())
        .map(|(_, ev)| (matches!(ev, Ev::Start(_)), ev.call().unwrap_or(usize::MAX)))
        .collect();
    prop_assert_eq!(head, preflight, "preflight events");
    let last_preflight = tool_evs
        .get(n + (0..n).filter(|c| !case.runs(*c)).count() - 1)
        .map(|(seq, _)| *seq);
    for exec in &obs.execs {
        prop_assert!(
            last_preflight < Some(exec.start_seq),
            "call-{} ran during preflight",
            exec.call
        );
    }

    // Result messages come last, in source order, after every end.
    let tail: Vec<usize> = tool_evs[tool_evs.len().saturating_sub(2 * n)..]
        .chunks(2)
        .map(|pair| match (pair[0].1, pair[1].1) {
            (Ev::ResultStart(a), Ev::ResultEnd { call, .. }) if a == call => *a,
            _ => usize::MAX,
        })
        .collect();
    prop_assert_eq!(
        tail,
        (0..n).collect::<Vec<_>>(),
        "result messages after all ends, in source order"
    );

    // Overlap: everything starts at the same instant, before any call with a duration ends.
    if let Some(first) = obs.execs.first() {
        prop_assert!(
            obs.execs.iter().all(|exec| exec.start == first.start),
            "all calls start together"
        );
    }
    let positive: Vec<&Exec> = obs.execs.iter().filter(|exec| case.calls[exec.call].ms > 0).collect();
    if positive.len() >= 2 {
        let last_start_seq = obs.execs.iter().map(|exec| exec.start_seq).max();
        let first_end_seq = positive.iter().map(|exec| exec.end_seq()).min();
        prop_assert!(last_start_seq < first_end_seq, "every call started before any ended");
        let last_start = obs.execs.iter().map(|exec| exec.start).max();
        let first_end = positive.iter().map(|exec| exec.end_instant()).min();
        prop_assert!(last_start < first_end, "executions overlap in virtual time");
    }
    Ok(())
}

/// (c) One start, one end and one result message per call (at most one each under abort).
fn check_one_each(case: &Case, obs: &Observed) -> Result<(), TestCaseError> {
    let n = case.calls.len();
    for call in 0..n {
        let starts = obs.count(|ev| *ev == Ev::Start(call));
        let ends = obs.count(|ev| matches!(ev, Ev::End { call: c, .. } if *c == call));
        let result_starts = obs.count(|ev| *ev == Ev::ResultStart(call));
        let result_ends = obs.count(|ev| matches!(ev, Ev::ResultEnd { call: c, .. } if *c == call));
        if obs.aborted {
            prop_assert!(
                starts <= 1 && ends <= 1 && result_starts <= 1 && result_ends <= 1,
                "call-{}",
                call
            );
            prop_assert_eq!(
                ends,
                result_ends,
                "call-{} has an end but no result (or the reverse)",
                call
            );
            prop_assert_eq!(starts, ends, "call-{} started without ending (or the reverse)", call);
            prop_assert_eq!(result_starts, result_ends, "call-{}", call);
        } else {
            prop_assert_eq!(
                (starts, ends, result_starts, result_ends),
                (1, 1, 1, 1),
                "call-{}",
                call
            );
        }
        if let (Some(end), Some(result)) = (obs.end_seq(call), obs.result_end_seq(call)) {
            prop_assert!(end < result, "call-{}: result message before tool_execution_end", call);
        }
    }
    // Each result message_start is directly followed by its message_end.
    let tool_evs = obs.tool_evs();
    for (i, (_, ev)) in tool_evs.iter().enumerate() {
        if let Ev::ResultStart(call) = ev {
            let next = tool_evs.get(i + 1).map(|(_, ev)| *ev);
            prop_assert!(
                matches!(next, Some(Ev::ResultEnd { call: c, .. }) if c == call),
                "message_start of call-{} not followed by its message_end",
                call
            );
        }
    }
    // Started calls are a prefix of the batch.
    let mut started = obs.started();
    prop_assert!(is_increasing(&started), "starts in source order: {:?}", started);
    started.sort_unstable();
    prop_assert_eq!(started.clone(), (0..started.len()).collect::<Vec<_>>());
    Ok(())
}

/// (d) Result messages and `turn_end.toolResults` in source order, with the expected payloads.
fn check_source_order(case: &Case, obs: &Observed) -> Result<(), TestCaseError> {
    let results = obs.result_calls();
    prop_assert!(is_increasing(&results), "toolResult message_end order {:?}", results);
    let turn_ends = obs.turn_ends();
    prop_assert!(!turn_ends.is_empty());
    prop_assert_eq!(turn_ends[0], &results, "turn_end.toolResults");
    for later in &turn_ends[1..] {
        prop_assert!(later.is_empty());
    }
    let persisted: Vec<usize> = obs
        .new_messages
        .iter()
        .filter_map(|m| m.as_tool_result().map(|r| call_index(&r.tool_call_id)))
        .collect();
    prop_assert_eq!(&persisted, &results, "transcript order");

    if !obs.aborted {
        for (_, ev) in &obs.evs {
            let (call, is_error, text, terminate) = match ev {
                Ev::End {
                    call,
                    is_error,
                    text,
                    terminate,
                } => (*call, *is_error, text, Some(*terminate)),
                Ev::ResultEnd { call, is_error, text } => (*call, *is_error, text, None),
                _ => continue,
            };
            let want = case.expected(call);
            prop_assert_eq!(is_error, want.is_error, "is_error of call-{}", call);
            if want.contains {
                prop_assert!(
                    text.contains(&want.text),
                    "call-{}: {:?} lacks {:?}",
                    call,
                    text,
                    want.text
                );
            } else {
                prop_assert_eq!(text, &want.text, "text of call-{}", call);
            }
            if let Some(terminate) = terminate {
                prop_assert_eq!(terminate, want.terminate, "terminate of call-{}", call);
            }
        }
    }
    Ok(())
}

/// (e) Ends of executed calls in completion order (parallel), all ends in source order (sequential).
fn check_completion_order(case: &Case, obs: &Observed) -> Result<(), TestCaseError> {
    let ends = obs.ends();
    if case.sequential() {
        let calls: Vec<usize> = ends.iter().map(|(_, call, _)| *call).collect();
        prop_assert!(is_increasing(&calls), "sequential ends in source order: {:?}", calls);
        return Ok(());
    }
    let executed: Vec<&Exec> = ends.iter().filter_map(|(_, call, _)| obs.exec_of(*call)).collect();
    for pair in executed.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        prop_assert!(
            a.end_instant() <= b.end_instant(),
            "call-{} ended after call-{} but its end event came first",
            a.call,
            b.call
        );
        prop_assert!(
            a.end_seq() < b.end_seq(),
            "end events of call-{} / call-{} out of completion order",
            a.call,
            b.call
        );
    }
    // Immediate (and aborted-before-running) ends come during preflight, before any executed end.
    let last_immediate = ends
        .iter()
        .filter(|(_, call, _)| !obs.executed(*call))
        .map(|(seq, _, _)| *seq)
        .max();
    let first_executed = ends
        .iter()
        .filter(|(_, call, _)| obs.executed(*call))
        .map(|(seq, _, _)| *seq)
        .min();
    if let (Some(immediate), Some(executed)) = (last_immediate, first_executed) {
        prop_assert!(immediate < executed, "an immediate end came after an executed one");
    }
    Ok(())
}

/// (f) The loop calls the model again iff not (some result was finalised and all terminate).
fn check_terminate(case: &Case, obs: &Observed) -> Result<(), TestCaseError> {
    let ends = obs.ends();
    let terminate = !ends.is_empty() && ends.iter().all(|(_, _, terminate)| *terminate);
    if !obs.aborted {
        prop_assert_eq!(terminate, case.expected_terminate(), "terminate rule over the plan");
    }
    let second_call = !terminate;
    prop_assert_eq!(obs.model_calls, 1 + usize::from(second_call), "model calls");
    prop_assert_eq!(obs.pending_responses, usize::from(!second_call), "unconsumed responses");
    prop_assert_eq!(obs.turn_ends().len(), 1 + usize::from(second_call), "turns");
    let assistants = obs.assistant_ends();
    prop_assert_eq!(assistants.len(), 1 + usize::from(second_call));
    let roles: Vec<&str> = obs.new_messages.iter().map(AgentMessage::role).collect();
    let mut want_roles = vec!["user", "assistant"];
    want_roles.extend(std::iter::repeat_n("toolResult", ends.len()));
    if second_call {
        want_roles.push("assistant");
    }
    prop_assert_eq!(roles, want_roles);
    if second_call {
        let (_, last) = assistants[1];
        if obs.cancelled_at_first_turn_end == Some(true) {
            prop_assert_eq!(
                last,
                &Ev::AssistantEnd {
                    stop: StopReason::Aborted,
                    text: String::new(),
                    error: Some("Request was aborted".to_owned()),
                }
            );
        } else {
            prop_assert_eq!(
                last,
                &Ev::AssistantEnd {
                    stop: StopReason::Stop,
                    text: "done".to_owned(),
                    error: None,
                }
            );
        }
    }
    Ok(())
}

/// An abort stops the batch at the right place and never duplicates a result.
fn check_abort(case: &Case, obs: &Observed) -> Result<(), TestCaseError> {
    let Some(abort_seq) = obs.abort_seq else {
        return Ok(());
    };
    prop_assert!(obs.aborted);
    let n = case.calls.len();
    for (seq, call) in obs.evs.iter().filter_map(|(seq, ev)| match ev {
        Ev::Start(call) => Some((*seq, *call)),
        _ => None,
    }) {
        prop_assert!(seq < abort_seq, "call-{} started after the abort", call);
    }
    let started = obs.started();
    if let Some(&last) = started.last()
        && started.len() < n
    {
        // The batch stopped early: only because of the abort, right after the current call.
        let stop_point = if case.sequential() {
            obs.result_end_seq(last)
        } else {
            obs.end_seq(last)
        };
        prop_assert!(
            Some(abort_seq) < stop_point,
            "batch stopped after call-{} without an abort",
            last
        );
    }
    if case.sequential() {
        for exec in &obs.execs {
            prop_assert!(exec.start_seq < abort_seq, "call-{} ran after the abort", exec.call);
        }
    }
    if let Abort::InHook(at) = case.abort {
        // Aborted while preparing `at`: it ends as aborted and nothing after it starts.
        prop_assert_eq!(started.len(), at + 1);
        for call in 0..at {
            if !case.sequential() && case.runs(call) {
                // Prepared in parallel preflight, finished as aborted without running (pi PR #8936).
                prop_assert!(!obs.executed(call), "call-{} ran after a preflight abort", call);
                prop_assert!(
                    obs.evs.iter().any(|(_, ev)| matches!(
                        ev,
                        Ev::End { call: c, is_error: true, text, .. } if *c == call && text == "Operation aborted"
                    )),
                    "prepared call-{} did not end as aborted",
                    call
                );
            }
        }
        prop_assert!(
            obs.evs.iter().any(|(_, ev)| matches!(
                ev,
                Ev::End { call: c, is_error: true, text, terminate: false } if *c == at && text == "Operation aborted"
            )),
            "call-{} aborted in its hook did not end as aborted",
            at
        );
        prop_assert!(!obs.executed(at));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Suites
// ---------------------------------------------------------------------------------------------

const ANY: Shape = Shape {
    mode: ModeShape::Any,
    abort: AbortShape::Maybe,
    terminate_bias: false,
};

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// (a) Sequential batches (global mode, or any call to a sequential tool) never overlap.
    #[test]
    fn sequential_batches_never_overlap(
        case in case(Shape { mode: ModeShape::Sequential, ..ANY }),
    ) {
        let obs = run_case(&case);
        check_basic(&case, &obs)?;
        prop_assert!(case.sequential());
        check_sequential(&case, &obs)?;
        check_completion_order(&case, &obs)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// (b) All-parallel batches preflight in source order, then run every prepared call together.
    #[test]
    fn parallel_batches_overlap(
        case in case(Shape { mode: ModeShape::Parallel, abort: AbortShape::Never, ..ANY }),
    ) {
        let obs = run_case(&case);
        check_basic(&case, &obs)?;
        prop_assert!(!case.sequential());
        prop_assert!(!obs.aborted);
        check_parallel(&case, &obs)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// (c)+(d) Without abort: one start, end and result per call; results in source order.
    #[test]
    fn one_result_per_call_in_source_order(
        case in case(Shape { abort: AbortShape::Never, ..ANY }),
    ) {
        let obs = run_case(&case);
        check_basic(&case, &obs)?;
        check_one_each(&case, &obs)?;
        check_source_order(&case, &obs)?;
        check_sequential(&case, &obs)?;
        check_parallel(&case, &obs)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// (e) Executed calls end in completion order in parallel and in source order sequentially.
    #[test]
    fn ends_in_completion_order(case in case(ANY)) {
        let obs = run_case(&case);
        check_basic(&case, &obs)?;
        check_completion_order(&case, &obs)?;
        check_source_order(&case, &obs)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// (f) A second model call happens iff not every finalised result terminates.
    #[test]
    fn terminate_iff_every_result_terminates(
        case in case(Shape { terminate_bias: true, ..ANY }),
    ) {
        let obs = run_case(&case);
        check_basic(&case, &obs)?;
        check_terminate(&case, &obs)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// (c) under abort: at most one start / end / result per call, every end has its result, the
    /// batch stops where the abort happened, and the next model call reports the abort.
    #[test]
    fn abort_never_duplicates_results(
        case in case(Shape { abort: AbortShape::Always, ..ANY }),
    ) {
        let obs = run_case(&case);
        check_basic(&case, &obs)?;
        check_one_each(&case, &obs)?;
        check_source_order(&case, &obs)?;
        check_abort(&case, &obs)?;
        check_terminate(&case, &obs)?;
        check_sequential(&case, &obs)?;
        check_completion_order(&case, &obs)?;
    }
}
