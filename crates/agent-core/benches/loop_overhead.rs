//! Loop overhead per tool call (SPEC §8: ≤ 10 µs per call at every shape, growing linearly with
//! turns).
//!
//! The faux model (call recording off) has every response queued up front: `T` turns, each an
//! assistant message with `C` `toolCall` blocks calling a no-op tool with `{}` arguments, then a
//! final text answer. [`run_agent_loop`] drives it on a tokio current-thread runtime with an event
//! sink that drops every event. Building the script is not timed; the run is.
//!
//! Run with `cargo bench -p pi-agent-core`. Before criterion's own report, the bench prints one
//! line per shape,
//!
//! ```text
//! loop_overhead 100x10: 3.2 µs per tool call (median of 15 runs …)
//! ```
//!
//! (whole-run time divided by `T × C`), and the same figure for 250×1, 500×1 and 1000×1, which
//! must stay flat: a loop doing work proportional to the transcript on every turn would show it
//! growing with the number of turns.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};
use pi_agent_core::faux::{FauxModel, faux_assistant_message, faux_assistant_text, faux_tool_call};
use pi_agent_core::{
    AgentContext, AgentEvent, AgentLoopConfig, AgentMessage, AgentTool, FnTool, ToolResult, run_agent_loop,
};
use serde_json::json;
use tokio::runtime::Runtime;
use tokio_util::sync::CancellationToken;

/// SPEC §8 budget, per tool call.
const BUDGET_US: f64 = 10.0;

/// Runs per shape for the printed median (after the warm-up runs).
const PRINTED_RUNS: usize = 15;
const WARM_UP_RUNS: usize = 3;

/// A benchmark shape: `turns` assistant messages of `calls` tool calls each.
#[derive(Debug, Clone, Copy)]
struct Shape {
    turns: usize,
    calls: usize,
}

impl Shape {
    const fn new(turns: usize, calls: usize) -> Self {
        Shape { turns, calls }
    }

    fn tool_calls(self) -> usize {
        self.turns * self.calls
    }

    fn label(self) -> String {
        format!("{}x{}", self.turns, self.calls)
    }
}

/// The SPEC §8 shapes.
const SHAPES: [Shape; 3] = [Shape::new(100, 10), Shape::new(20, 100), Shape::new(1000, 1)];

/// One-call-per-turn shapes of growing length, to show the per-call cost stays flat.
const SCALING: [Shape; 3] = [Shape::new(250, 1), Shape::new(500, 1), Shape::new(1000, 1)];

/// The no-op tool every call names.
fn noop_tool() -> Arc<dyn AgentTool> {
    FnTool::new(
        "noop",
        "Does nothing",
        json!({"type": "object", "properties": {}}),
        |_id, _args, _ctx| async { Ok(ToolResult::default()) },
    )
    .into_arc()
}

/// Everything one run needs, built before the clock starts.
struct Prepared {
    config: AgentLoopConfig,
    context: AgentContext,
    prompts: Vec<AgentMessage>,
}

fn prepare(shape: Shape, tool: &Arc<dyn AgentTool>) -> Prepared {
    let faux = FauxModel::builder().record_calls(false).build();
    let mut responses = Vec::with_capacity(shape.turns + 1);
    for turn in 0..shape.turns {
        let blocks = (0..shape.calls)
            .map(|call| faux_tool_call(format!("call_{turn}_{call}"), "noop", json!({})))
            .collect();
        responses.push(faux_assistant_message(blocks));
    }
    responses.push(faux_assistant_text("done"));
    faux.set_responses(responses);
    Prepared {
        config: AgentLoopConfig::new(faux.model()).with_stream_fn(faux.stream_fn()),
        context: AgentContext {
            system_prompt: "You are a benchmark.".into(),
            messages: Vec::new(),
            tools: vec![tool.clone()],
        },
        prompts: vec![AgentMessage::user("go")],
    }
}

/// Runs the loop once and returns the time it took and the messages it added.
fn run_once(rt: &Runtime, prepared: Prepared) -> (Duration, Vec<AgentMessage>) {
    let Prepared {
        config,
        context,
        prompts,
    } = prepared;
    let cancel = CancellationToken::new();
    let mut sink = |event: AgentEvent| drop(black_box(event));
    let start = Instant::now();
    let messages = rt
        .block_on(run_agent_loop(prompts, context, &config, &cancel, &mut sink))
        .expect("the loop runs");
    (start.elapsed(), messages)
}

/// Checks that a run really executed every call (and did not, say, fail them all as unknown).
fn check_run(shape: Shape, messages: &[AgentMessage]) {
    // The prompt, then per turn the assistant message and its results, then the final answer.
    assert_eq!(
        messages.len(),
        1 + shape.turns * (1 + shape.calls) + 1,
        "{}",
        shape.label()
    );
    let results: Vec<_> = messages.iter().filter_map(AgentMessage::as_tool_result).collect();
    assert_eq!(results.len(), shape.tool_calls());
    assert!(
        results.iter().all(|r| !r.is_error),
        "a tool call failed: {:?}",
        results.iter().find(|r| r.is_error)
    );
    let last = messages
        .last()
        .and_then(AgentMessage::as_assistant)
        .expect("ends with the answer");
    assert_eq!(last.text(), "done");
}

/// Per-call times in µs of `PRINTED_RUNS` runs, after warm-up; checks the first run.
fn per_call_samples(rt: &Runtime, shape: Shape, tool: &Arc<dyn AgentTool>) -> Vec<f64> {
    for run in 0..WARM_UP_RUNS {
        let (_, messages) = run_once(rt, prepare(shape, tool));
        if run == 0 {
            check_run(shape, &messages);
        }
    }
    let mut samples: Vec<f64> = (0..PRINTED_RUNS)
        .map(|_| {
            let (elapsed, messages) = run_once(rt, prepare(shape, tool));
            drop(messages);
            elapsed.as_secs_f64() * 1e6 / shape.tool_calls() as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples
}

fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Prints the per-call figure of one shape and returns its median.
fn print_shape(rt: &Runtime, prefix: &str, shape: Shape, tool: &Arc<dyn AgentTool>) -> f64 {
    let samples = per_call_samples(rt, shape, tool);
    let median = median(&samples);
    let verdict = if median <= BUDGET_US { "within" } else { "OVER" };
    println!(
        "{prefix} {}: {median:.2} µs per tool call (median of {} runs; min {:.2}, max {:.2}; {:.2} ms per run; {verdict} the {BUDGET_US} µs budget)",
        shape.label(),
        samples.len(),
        samples[0],
        samples[samples.len() - 1],
        median * shape.tool_calls() as f64 / 1000.0,
    );
    median
}

/// The figures the SPEC asks the bench to print.
fn print_figures(rt: &Runtime, tool: &Arc<dyn AgentTool>) {
    for shape in SHAPES {
        print_shape(rt, "loop_overhead", shape, tool);
    }
    let scaling: Vec<f64> = SCALING
        .iter()
        .map(|&shape| print_shape(rt, "loop_overhead scaling", shape, tool))
        .collect();
    let (first, last) = (SCALING[0], SCALING[SCALING.len() - 1]);
    let ratio = scaling[scaling.len() - 1] / scaling[0];
    let turns_ratio = last.turns as f64 / first.turns as f64;
    println!(
        "loop_overhead scaling {} vs {}: per-call ratio {ratio:.2}, {} (≈ 1 when flat, ≈ {turns_ratio:.0} if each turn's cost grew with the transcript)",
        last.label(),
        first.label(),
        if ratio < 1.5 { "flat" } else { "NOT FLAT" },
    );
}

/// Registers the criterion benchmarks: whole runs, with throughput in tool calls.
fn register(c: &mut Criterion, rt: &Runtime, tool: &Arc<dyn AgentTool>) {
    let mut group = c.benchmark_group("loop_overhead");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    let mut shapes = SHAPES.to_vec();
    shapes.extend(
        SCALING
            .iter()
            .copied()
            .filter(|s| !SHAPES.iter().any(|m| m.label() == s.label())),
    );
    for shape in shapes {
        group.throughput(Throughput::Elements(shape.tool_calls() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(shape.label()), &shape, |b, &shape| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let (elapsed, messages) = run_once(rt, prepare(shape, tool));
                    total += elapsed;
                    drop(black_box(messages));
                }
                total
            });
        });
    }
    group.finish();
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let tool = noop_tool();
    // `cargo bench` passes `--bench`; `cargo test --benches` does not, and then criterion runs each
    // benchmark once as a smoke test, so the printed figures are skipped.
    let benching = std::env::args().any(|arg| arg == "--bench");
    let listing = std::env::args().any(|arg| arg == "--list");
    if benching && !listing {
        print_figures(&rt, &tool);
    }
    let mut criterion = Criterion::default().configure_from_args();
    register(&mut criterion, &rt, &tool);
    criterion.final_summary();
}
