//! Parallel `edit` calls on one file through the real agent loop: a scripted assistant message
//! holds 20 `edit` tool calls on the same file, the loop dispatches them in parallel (its
//! default), and the per-file mutation queue must make every one of them land.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pi_agent_core::faux::{FauxModel, faux_assistant_message, faux_assistant_text, faux_tool_call};
use pi_agent_core::{AgentContext, AgentEvent, AgentLoopConfig, AgentMessage, ToolExecutionMode, run_agent_loop};
use pi_tools::ToolEnv;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const CALLS: usize = 20;

/// One run: 20 edits of `f.txt` in one assistant message, then a closing text answer.
async fn run_once() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let original: String = (0..CALLS).map(|i| format!("line-{i}\n")).collect();
    std::fs::write(cwd.join("f.txt"), &original).unwrap();

    let faux = FauxModel::new();
    let calls = (0..CALLS)
        .map(|i| {
            faux_tool_call(
                format!("call-{i}"),
                "edit",
                json!({"path": "f.txt", "edits": [{"oldText": format!("line-{i}\n"), "newText": format!("edited-{i}\n")}]}),
            )
        })
        .collect();
    faux.set_responses([faux_assistant_message(calls), faux_assistant_text("done")]);

    let config = AgentLoopConfig::new(faux.model()).with_stream_fn(faux.stream_fn());
    assert_eq!(config.tool_execution, ToolExecutionMode::Parallel);
    let context = AgentContext {
        tools: vec![pi_tools::create_tool("edit", &ToolEnv::new(&cwd)).unwrap()],
        ..AgentContext::default()
    };
    let mut events = Vec::new();
    let messages = run_agent_loop(
        vec![AgentMessage::user("edit every line")],
        context,
        &config,
        &CancellationToken::new(),
        &mut |event: AgentEvent| events.push(event),
    )
    .await
    .unwrap();

    let results: Vec<_> = messages.iter().filter_map(AgentMessage::as_tool_result).collect();
    assert_eq!(results.len(), CALLS);
    for (i, result) in results.iter().enumerate() {
        assert_eq!(result.tool_call_id, format!("call-{i}"), "results are in source order");
        assert!(!result.is_error, "call-{i} failed: {}", result.text());
        assert_eq!(result.text(), "Successfully replaced 1 block(s) in f.txt.");
    }
    let expected: String = (0..CALLS).map(|i| format!("edited-{i}\n")).collect();
    assert_eq!(std::fs::read_to_string(cwd.join("f.txt")).unwrap(), expected);
    let leftovers: Vec<_> = std::fs::read_dir(&cwd)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(leftovers, ["f.txt"], "no temporary files are left behind");
    assert_eq!(faux.call_count(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_parallel_edits_of_one_file_all_land() {
    // A few rounds, so that a lost update would show up even if it is rare.
    for _ in 0..5 {
        run_once().await;
    }
}
