//! The files a call declares ([`AgentTool::mutated_files`]) are reserved in source order while
//! the batch is prepared, and every way a call can end gives them up: an error, a panic, a call
//! blocked by `before_tool_call`, an abort while it runs, while it waits for its turn, or during
//! the preflight (issue 14, item 2).

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_agent_core::faux::{FauxModel, faux_assistant_message, faux_assistant_text, faux_tool_call};
use pi_agent_core::{
    AgentContext, AgentLoopConfig, AgentMessage, BeforeToolCallContext, BeforeToolCallResult, FnTool, MutationTicket,
    OPERATION_ABORTED, ToolError, ToolExecutionMode, ToolResult, mutation_key, run_agent_loop,
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

type Log = Arc<Mutex<Vec<String>>>;

fn log(log: &Log, entry: impl Into<String>) {
    log.lock().unwrap().push(entry.into());
}

/// A tool declaring `file`: it logs its start and end, sleeps `delay`, then does `finish`.
fn tool(
    name: &'static str,
    file: &Path,
    events: &Log,
    delay: Duration,
    finish: fn() -> Result<ToolResult, ToolError>,
) -> FnTool {
    let events = events.clone();
    let file = file.to_path_buf();
    FnTool::new(name, name, json!({"type": "object"}), move |id, _args, ctx| {
        let events = events.clone();
        async move {
            log(&events, format!("start {id}"));
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = ctx.cancel.cancelled() => {
                    log(&events, format!("aborted {id}"));
                    return Err(ToolError::new(OPERATION_ABORTED));
                }
            }
            log(&events, format!("end {id}"));
            finish()
        }
    })
    .with_mutated_files(move |_| vec![file.clone()])
}

fn ok() -> Result<ToolResult, ToolError> {
    Ok(ToolResult::text("ok"))
}

fn fail() -> Result<ToolResult, ToolError> {
    Err(ToolError::new("failed"))
}

fn boom() -> Result<ToolResult, ToolError> {
    panic!("boom")
}

/// Whether nothing holds or waits for `file` any more.
fn is_free(file: &Path) -> bool {
    MutationTicket::reserve([mutation_key(file)]).is_first()
}

async fn run(
    calls: &[(&str, &str)],
    tools: Vec<FnTool>,
    config: impl FnOnce(&mut AgentLoopConfig),
    cancel: &CancellationToken,
) -> Vec<(String, bool)> {
    let faux = FauxModel::new();
    let calls = calls
        .iter()
        .map(|(id, name)| faux_tool_call(*id, *name, json!({})))
        .collect();
    faux.set_responses([faux_assistant_message(calls), faux_assistant_text("done")]);
    let mut loop_config = AgentLoopConfig::new(faux.model()).with_stream_fn(faux.stream_fn());
    config(&mut loop_config);
    let context = AgentContext {
        tools: tools.into_iter().map(FnTool::into_arc).collect(),
        ..AgentContext::default()
    };
    let mut sink = |_| {};
    let run = run_agent_loop(vec![AgentMessage::user("go")], context, &loop_config, cancel, &mut sink);
    let messages = tokio::time::timeout(Duration::from_secs(20), run)
        .await
        .expect("the batch deadlocked")
        .unwrap();
    messages
        .iter()
        .filter_map(AgentMessage::as_tool_result)
        .map(|r| (r.text(), r.is_error))
        .collect()
}

/// A path no other test uses (the file itself is never created: only its queue matters).
fn temp_file(name: &str) -> PathBuf {
    std::env::temp_dir()
        .join(format!("pi-mutation-queue-{}", std::process::id()))
        .join(name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_panicking_and_blocked_calls_give_their_file_up_in_source_order() {
    let file = temp_file("blocked.txt");
    let events = Log::default();
    let slow = Duration::from_millis(30);
    let tools = vec![
        tool("fail", &file, &events, slow, fail),
        tool("boom", &file, &events, slow, boom),
        tool("blocked", &file, &events, Duration::ZERO, ok),
        tool("fine", &file, &events, Duration::ZERO, ok),
    ];
    let calls = [("c1", "fail"), ("c2", "boom"), ("c3", "blocked"), ("c4", "fine")];
    let results = run(
        &calls,
        tools,
        |config| {
            config.before_tool_call = Some(Arc::new(
                |ctx: BeforeToolCallContext<'_>| -> Result<Option<BeforeToolCallResult>, ToolError> {
                    Ok((ctx.tool_call.name == "blocked").then(|| BeforeToolCallResult::block("not this one")))
                },
            ));
        },
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(
        results,
        [
            ("failed".to_owned(), true),
            ("Tool boom panicked: boom".to_owned(), true),
            ("not this one".to_owned(), true),
            ("ok".to_owned(), false),
        ]
    );
    // Each call waited for the one before it, although the first two are slow.
    assert_eq!(
        *events.lock().unwrap(),
        ["start c1", "end c1", "start c2", "end c2", "start c4", "end c4"]
    );
    assert!(is_free(&file));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_of_different_files_still_run_together() {
    let a = temp_file("a.txt");
    let b = a.with_file_name("b.txt");
    let events = Log::default();
    let slow = Duration::from_millis(50);
    let tools = vec![tool("one", &a, &events, slow, ok), tool("two", &b, &events, slow, ok)];
    run(
        &[("c1", "one"), ("c2", "two")],
        tools,
        |_| {},
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(events.lock().unwrap()[..2], ["start c1", "start c2"]);
    assert!(is_free(&a) && is_free(&b));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abort_ends_the_running_call_and_the_waiting_one_without_running_it() {
    let file = temp_file("abort.txt");
    let events = Log::default();
    let tools = vec![
        tool("hang", &file, &events, Duration::from_secs(3600), ok),
        tool("next", &file, &events, Duration::ZERO, ok),
    ];
    let cancel = CancellationToken::new();
    let aborter = {
        let (cancel, events) = (cancel.clone(), events.clone());
        tokio::spawn(async move {
            while !events.lock().unwrap().iter().any(|e| e == "start c1") {
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            cancel.cancel();
        })
    };
    let results = run(&[("c1", "hang"), ("c2", "next")], tools, |_| {}, &cancel).await;
    aborter.await.unwrap();
    assert_eq!(
        results,
        [
            (OPERATION_ABORTED.to_owned(), true),
            (OPERATION_ABORTED.to_owned(), true)
        ]
    );
    assert_eq!(*events.lock().unwrap(), ["start c1", "aborted c1"], "c2 never ran");
    assert!(is_free(&file));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abort_during_the_preflight_gives_the_reserved_files_up() {
    let file = temp_file("preflight.txt");
    let events = Log::default();
    let tools = vec![
        tool("first", &file, &events, Duration::ZERO, ok),
        tool("second", &file, &events, Duration::ZERO, ok),
    ];
    let cancel = CancellationToken::new();
    let in_hook = cancel.clone();
    let results = run(
        &[("c1", "first"), ("c2", "second")],
        tools,
        move |config| {
            config.before_tool_call = Some(Arc::new(
                move |ctx: BeforeToolCallContext<'_>| -> Result<Option<BeforeToolCallResult>, ToolError> {
                    // The first call is prepared (its file reserved) when the second is aborted.
                    if ctx.tool_call.id == "c2" {
                        in_hook.cancel();
                    }
                    Ok(None)
                },
            ));
        },
        &cancel,
    )
    .await;
    assert!(
        results
            .iter()
            .all(|(text, is_error)| text == OPERATION_ABORTED && *is_error)
    );
    assert!(events.lock().unwrap().is_empty(), "nothing ran");
    assert!(is_free(&file));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sequential_batches_run_as_before() {
    let file = temp_file("sequential.txt");
    let events = Log::default();
    let slow = Duration::from_millis(20);
    let tools = vec![
        tool("one", &file, &events, slow, ok),
        tool("two", &file.with_file_name("other.txt"), &events, Duration::ZERO, ok)
            .with_execution_mode(ToolExecutionMode::Sequential),
    ];
    let results = run(
        &[("c1", "one"), ("c2", "two")],
        tools,
        |_| {},
        &CancellationToken::new(),
    )
    .await;
    assert!(results.iter().all(|(_, is_error)| !is_error));
    assert_eq!(*events.lock().unwrap(), ["start c1", "end c1", "start c2", "end c2"]);
    assert!(is_free(&file));
}
