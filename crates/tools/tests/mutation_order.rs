//! Mutations of one file in one assistant message land in source order (issue 14, item 2).
//!
//! The loop runs the calls of a message in parallel (its default); `write` and `edit` name their
//! file to it, so their places in the file's mutation queue are taken in source order while the
//! calls are prepared, not when each task happens to get there. The property test wraps the tools
//! in a random delay before they start, which is what reordered them before.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use pi_agent_core::faux::{FauxModel, faux_assistant_message, faux_assistant_text, faux_tool_call};
use pi_agent_core::{
    AgentContext, AgentLoopConfig, AgentMessage, AgentTool, ContentBlock, ToolContext, ToolError, ToolExecutionMode,
    ToolParameters, ToolResult, run_agent_loop,
};
use pi_tools::ToolEnv;
use proptest::prelude::*;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A built-in tool that first sleeps for the time its call id asks (the loop holds the call's
/// files by then, so the sleep only changes when the old code entered the queue).
struct Delayed {
    inner: Arc<dyn AgentTool>,
    delays: HashMap<String, u64>,
}

#[async_trait]
impl AgentTool for Delayed {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn description(&self) -> &str {
        self.inner.description()
    }
    fn parameters(&self) -> &ToolParameters {
        self.inner.parameters()
    }
    fn prepare_arguments(&self, args: Value) -> Value {
        self.inner.prepare_arguments(args)
    }
    fn mutated_files(&self, args: &Value) -> Vec<PathBuf> {
        self.inner.mutated_files(args)
    }
    async fn execute(&self, call_id: &str, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        if let Some(ms) = self.delays.get(call_id) {
            tokio::time::sleep(Duration::from_millis(*ms)).await;
        }
        self.inner.execute(call_id, args, ctx).await
    }
}

/// One mutation of file `file`: a write of fresh content, or an edit of the content the
/// previous mutation (in source order) left.
#[derive(Debug, Clone, Copy)]
struct Op {
    file: usize,
    write: bool,
    delay_ms: u64,
}

const FILES: [&str; 3] = ["a.txt", "b.txt", "c.txt"];

/// Runs `ops` as one assistant message and returns the tool results and the files' contents.
async fn run(ops: &[Op], mode: ToolExecutionMode) -> (Vec<(String, bool)>, Vec<String>, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let mut expected: Vec<String> = FILES.iter().map(|f| format!("initial {f}\n")).collect();
    for (file, content) in FILES.iter().zip(&expected) {
        std::fs::write(cwd.join(file), content).unwrap();
    }
    let mut calls = Vec::new();
    let mut delays = HashMap::new();
    for (i, op) in ops.iter().enumerate() {
        let id = format!("call-{i}");
        delays.insert(id.clone(), op.delay_ms);
        let path = FILES[op.file];
        let next = format!("step {i} of {path}\n");
        let call = if op.write {
            faux_tool_call(&id, "write", json!({"path": path, "content": next}))
        } else {
            let old = &expected[op.file];
            faux_tool_call(
                &id,
                "edit",
                json!({"path": path, "edits": [{"oldText": old, "newText": next}]}),
            )
        };
        expected[op.file] = next;
        calls.push(call);
    }
    let results = run_calls(&cwd, calls, delays, mode).await;
    let contents = FILES
        .iter()
        .map(|f| std::fs::read_to_string(cwd.join(f)).unwrap())
        .collect();
    (results, contents, expected)
}

async fn run_calls(
    cwd: &Path,
    calls: Vec<ContentBlock>,
    delays: HashMap<String, u64>,
    mode: ToolExecutionMode,
) -> Vec<(String, bool)> {
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_message(calls), faux_assistant_text("done")]);
    let mut config = AgentLoopConfig::new(faux.model()).with_stream_fn(faux.stream_fn());
    config.tool_execution = mode;
    let env = ToolEnv::new(cwd);
    let tools = ["write", "edit"]
        .into_iter()
        .map(|name| {
            Arc::new(Delayed {
                inner: pi_tools::create_tool(name, &env).unwrap(),
                delays: delays.clone(),
            }) as Arc<dyn AgentTool>
        })
        .collect();
    let context = AgentContext {
        tools,
        ..AgentContext::default()
    };
    let messages = run_agent_loop(
        vec![AgentMessage::user("change the files")],
        context,
        &config,
        &CancellationToken::new(),
        &mut |_| {},
    )
    .await
    .unwrap();
    messages
        .iter()
        .filter_map(AgentMessage::as_tool_result)
        .map(|r| (r.text(), r.is_error))
        .collect()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap()
}

/// The case of the issue, without any delay: write, edit, write, edit of one file, 50 times.
#[test]
fn write_edit_write_edit_of_one_file_ends_in_source_order_every_time() {
    let ops: Vec<Op> = [true, false, true, false]
        .into_iter()
        .map(|write| Op {
            file: 0,
            write,
            delay_ms: 0,
        })
        .collect();
    let runtime = runtime();
    for round in 0..50 {
        let (results, contents, expected) = runtime.block_on(run(&ops, ToolExecutionMode::Parallel));
        for (i, (text, is_error)) in results.iter().enumerate() {
            assert!(!is_error, "round {round}: call-{i} failed: {text}");
        }
        assert_eq!(contents[0], expected[0], "round {round}");
        assert_eq!(contents[0], "step 3 of a.txt\n");
    }
}

/// The first call is the slowest to start; the file still ends as the source order says.
#[test]
fn a_slow_first_call_still_lands_first() {
    let ops = [(true, 30), (false, 0), (true, 10), (false, 0)].map(|(write, delay_ms)| Op {
        file: 0,
        write,
        delay_ms,
    });
    let (results, contents, expected) = runtime().block_on(run(&ops, ToolExecutionMode::Parallel));
    assert!(results.iter().all(|(_, is_error)| !is_error), "{results:?}");
    assert_eq!(contents, expected);
}

fn op() -> impl Strategy<Value = Op> {
    (0..FILES.len(), any::<bool>(), 0u64..4).prop_map(|(file, write, delay_ms)| Op { file, write, delay_ms })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Random interleavings of `write` and `edit` on one to three files, with random delays
    /// before each tool starts, in both dispatch modes: every call succeeds (each edit finds the
    /// text the previous mutation of its file wrote) and every file ends as in source order.
    #[test]
    fn mutations_of_each_file_land_in_source_order(
        ops in prop::collection::vec(op(), 1..9),
        sequential in prop::bool::weighted(0.2),
    ) {
        let mode = if sequential { ToolExecutionMode::Sequential } else { ToolExecutionMode::Parallel };
        let (results, contents, expected) = runtime().block_on(run(&ops, mode));
        prop_assert_eq!(results.len(), ops.len());
        for (i, (text, is_error)) in results.iter().enumerate() {
            prop_assert!(!is_error, "call-{} failed: {}", i, text);
        }
        prop_assert_eq!(contents, expected);
    }
}
