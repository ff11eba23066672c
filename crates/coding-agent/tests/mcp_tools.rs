//! MCP servers as custom tools, against a small MCP server written for these tests
//! (`tests/mcp_support/server.py`, Python 3 standard library only, copied into a temp dir and
//! started by the tests over stdio): listing with pagination, names, schemas and execution modes,
//! results, progress, `isError`, cancellation, a server that stops mid-call, servers that cannot start,
//! shutdown, and a faux model calling an MCP tool through a session.

#![allow(clippy::unwrap_used)]

use crate::support::faux_session;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pi_agent_core::faux::{FauxModel, FauxResponse, faux_assistant_message, faux_assistant_text, faux_tool_call};
use pi_agent_core::{AgentMessage, ContentBlock, ToolContext, ToolError, ToolResult, ToolUpdateSink};
use pi_coding_agent::config::McpServerConfig;
use pi_coding_agent::custom_tools::load_all;
use pi_coding_agent::custom_tools::mcp::load_server;
use pi_coding_agent::custom_tools::{CustomTool, SessionReason, ToolApi, ToolSessionEvent};
use pi_test_support::wait::within;
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

const SERVER: &str = include_str!("mcp_support/server.py");

/// A temp dir holding the test server, and the settings entry that starts it in `mode`.
fn server(mode: &str) -> (TempDir, McpServerConfig) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("server.py"), SERVER).unwrap();
    let config = serde_json::from_value(json!({"command": "python3", "args": ["server.py", mode]})).unwrap();
    (dir, config)
}

/// The test server's tools, loaded in `dir`.
async fn load(dir: &Path, config: &McpServerConfig) -> Vec<Arc<dyn CustomTool>> {
    within("loading", load_server("test", config, &ToolApi::new(dir)))
        .await
        .unwrap()
}

fn find<'a>(tools: &'a [Arc<dyn CustomTool>], name: &str) -> &'a Arc<dyn CustomTool> {
    tools
        .iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

async fn call(tools: &[Arc<dyn CustomTool>], name: &str, args: Value) -> Result<ToolResult, ToolError> {
    within(name, find(tools, name).execute("call-1", args, ToolContext::detached())).await
}

async fn shutdown(tools: &[Arc<dyn CustomTool>]) {
    let event = ToolSessionEvent::empty(SessionReason::Shutdown);
    for tool in tools {
        within("shutdown", tool.on_session(&event)).await;
    }
}

/// The lines of the server's `events.log`: `<pid> <event>`.
fn events(dir: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(dir.join("events.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.split_once(' '))
        .map(|(pid, event)| (pid.to_owned(), event.to_owned()))
        .collect()
}

/// Waits until `events.log` has a line for which `seen` holds.
async fn wait_for_event(dir: &Path, seen: impl Fn(&str) -> bool) {
    let start = Instant::now();
    while !events(dir).iter().any(|(_, event)| seen(event)) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "events so far: {:?}",
            events(dir)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn texts(result: &ToolResult) -> Vec<&str> {
    result.content.iter().filter_map(ContentBlock::as_text).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_page_of_tools_is_listed_with_names_schemas_and_modes() {
    let (dir, config) = server("normal");
    let tools = load(dir.path(), &config).await;
    let listing: Vec<Value> = tools
        .iter()
        .map(|tool| {
            json!({
                "name": tool.name(),
                "label": tool.label(),
                "description": tool.description(),
                "parameters": tool.parameters().schema(),
                "executionMode": tool.execution_mode(),
            })
        })
        .collect();
    insta::assert_snapshot!("mcp_tool_listing", serde_json::to_string_pretty(&listing).unwrap());
    assert!(tools.iter().all(|t| t.name().len() <= 64));
    let methods: Vec<String> = events(dir.path()).into_iter().map(|(_, e)| e).collect();
    assert_eq!(
        methods,
        [
            "start",
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/list"
        ],
        "one initialize, then both pages"
    );
    shutdown(&tools).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_returns_text_images_resources_and_structured_content() {
    let (dir, config) = server("normal");
    let tools = load(dir.path(), &config).await;

    let echoed = call(&tools, "test_echo", json!({"text": "hello"})).await.unwrap();
    assert_eq!(texts(&echoed), ["hello"]);
    assert_eq!(echoed.details, json!({}));

    let picture = call(&tools, "test_picture", json!({})).await.unwrap();
    assert_eq!(
        picture.content,
        [
            ContentBlock::text("A red dot"),
            ContentBlock::image(
                "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==",
                "image/png"
            ),
            ContentBlock::text("[resource file:///notes.txt]\nremember"),
            ContentBlock::text("[resource link big.bin: file:///big.bin]"),
        ]
    );
    assert_eq!(picture.details, json!({"color": "red", "size": 1}));
    shutdown(&tools).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_is_error_result_fails_the_call_with_the_servers_text() {
    let (dir, config) = server("normal");
    let tools = load(dir.path(), &config).await;
    let error = call(&tools, "test_fail", json!({})).await.unwrap_err();
    assert_eq!(error.message(), "it broke");
    // The server is fine afterwards.
    let echoed = call(&tools, "test_echo", json!({"text": "still here"})).await.unwrap();
    assert_eq!(texts(&echoed), ["still here"]);
    shutdown(&tools).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_without_an_answer_times_out_and_the_server_keeps_working() {
    let (dir, mut config) = server("normal");
    config.timeout = Some(300);
    let tools = load(dir.path(), &config).await;
    let error = within("the time limit", call(&tools, "test_slow", json!({})))
        .await
        .unwrap_err();
    assert_eq!(
        error.message(),
        "MCP tool \"slow\" of server \"test\" timed out after 0.3 s"
    );
    let echoed = call(&tools, "test_echo", json!({"text": "still here"})).await.unwrap();
    assert_eq!(texts(&echoed), ["still here"]);
    shutdown(&tools).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_aborted_call_answers_at_once_and_tells_the_server() {
    let (dir, config) = server("normal");
    let tools = load(dir.path(), &config).await;
    let cancel = CancellationToken::new();
    let started = CancellationToken::new();
    let updates = Arc::new(Mutex::new(Vec::new()));
    let (on_progress, sink) = (started.clone(), updates.clone());
    let ctx = ToolContext {
        cancel: cancel.clone(),
        updates: ToolUpdateSink::new(move |partial| {
            sink.lock().unwrap().push(partial);
            on_progress.cancel();
        }),
    };
    let slow = find(&tools, "test_slow").clone();
    let running = tokio::spawn(async move { slow.execute("call-3", json!({}), ctx).await });
    // The server's progress notification streams as a partial result.
    within("the call to start", started.cancelled()).await;
    let partial = updates.lock().unwrap()[0].clone();
    assert_eq!(texts(&partial), ["waiting for the cancel"]);
    assert_eq!(partial.details, json!({"progress": 0.0, "total": 1.0}));
    let aborted_at = Instant::now();
    cancel.cancel();
    let error = within("the abort", running).await.unwrap().unwrap_err();
    assert_eq!(error.message(), "Operation aborted");
    assert!(
        aborted_at.elapsed() < Duration::from_secs(2),
        "the abort does not wait for the server"
    );
    wait_for_event(dir.path(), |event| event.starts_with("cancelled ")).await;

    // A call that is aborted before it starts never reaches the server.
    let cancel = CancellationToken::new();
    cancel.cancel();
    let ctx = ToolContext {
        cancel,
        updates: ToolUpdateSink::discard(),
    };
    let error = find(&tools, "test_echo")
        .execute("call-4", json!({"text": "x"}), ctx)
        .await
        .unwrap_err();
    assert_eq!(error.message(), "Operation aborted");

    let echoed = call(&tools, "test_echo", json!({"text": "after the abort"}))
        .await
        .unwrap();
    assert_eq!(texts(&echoed), ["after the abort"]);
    let calls: Vec<String> = events(dir.path())
        .into_iter()
        .map(|(_, e)| e)
        .filter(|e| e.starts_with("tools/call"))
        .collect();
    assert_eq!(calls, ["tools/call slow", "tools/call echo"]);
    shutdown(&tools).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_stops_fails_the_call_and_is_started_again_by_the_next_one() {
    let (dir, config) = server("normal");
    let tools = load(dir.path(), &config).await;
    let error = call(&tools, "test_crash", json!({})).await.unwrap_err();
    assert_eq!(
        error.message(),
        "MCP server \"test\" stopped during a call of \"crash\": crashing on purpose"
    );
    let echoed = call(&tools, "test_echo", json!({"text": "again"})).await.unwrap();
    assert_eq!(texts(&echoed), ["again"]);

    let events = events(dir.path());
    let pids: Vec<&str> = events
        .iter()
        .filter(|(_, e)| e == "start")
        .map(|(pid, _)| pid.as_str())
        .collect();
    assert_eq!(pids.len(), 2, "started once more: {events:?}");
    let of = |pid: &str| -> Vec<&str> {
        events
            .iter()
            .filter(|(p, _)| p == pid)
            .map(|(_, e)| e.as_str())
            .collect()
    };
    assert_eq!(
        of(pids[1]),
        ["start", "initialize", "notifications/initialized", "tools/call echo"],
        "the restarted server is initialized again, its tools are not listed again"
    );

    // A server killed between two calls is started again by the next call.
    let pid: i32 = pids[1].parse().unwrap();
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL).unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let echoed = call(&tools, "test_echo", json!({"text": "once more"})).await.unwrap();
    assert_eq!(texts(&echoed), ["once more"]);
    let starts = self::events(dir.path()).iter().filter(|(_, e)| e == "start").count();
    assert_eq!(starts, 3);
    shutdown(&tools).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn servers_that_cannot_start_are_clear_load_errors_naming_their_origin() {
    let (dir, _) = server("normal");
    let missing: McpServerConfig = serde_json::from_value(json!({"command": "pi-test-no-such-mcp-server"})).unwrap();
    let (_, init_error) = server("init-error");
    let (_, exits) = server("exit-at-start");
    let servers = BTreeMap::from([
        ("missing".to_owned(), missing),
        ("refuses".to_owned(), init_error),
        ("exits".to_owned(), exits),
    ]);
    let loaded = within("loading", load_all(&[], &[], &servers, &ToolApi::new(dir.path()), &[])).await;
    assert!(loaded.tools.is_empty());
    let errors: BTreeMap<&str, &str> = loaded
        .errors
        .iter()
        .map(|e| (e.origin.as_str(), e.error.as_str()))
        .collect();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(
        errors["mcp:missing"]
            .starts_with("Failed to start MCP server \"missing\": cannot run \"pi-test-no-such-mcp-server\": "),
        "{errors:?}"
    );
    assert!(
        errors["mcp:refuses"].starts_with("MCP server \"refuses\" failed to initialize: ")
            && errors["mcp:refuses"].contains("not today"),
        "{errors:?}"
    );
    assert!(
        errors["mcp:exits"] == "MCP server \"exits\" stopped before answering initialize: missing API key",
        "{errors:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn shutdown_closes_the_server_once_for_all_of_its_tools() {
    let (dir, config) = server("normal");
    let tools = load(dir.path(), &config).await;
    assert!(tools.len() > 2);
    shutdown(&tools).await;
    let events = events(dir.path());
    let eofs = events.iter().filter(|(_, e)| e == "eof").count();
    assert_eq!(eofs, 1, "the server read the end of its input once: {events:?}");
    assert_eq!(events.iter().filter(|(_, e)| e == "start").count(), 1, "{events:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_calls_an_mcp_tool_through_the_session_and_reads_its_result() {
    let (dir, config) = server("normal");
    let faux = FauxModel::new();
    let session = faux_session(dir.path(), &faux, &["read"]);
    let reserved: Vec<String> = session.tool_registry().iter().map(|t| t.name().to_owned()).collect();
    let reserved: Vec<&str> = reserved.iter().map(String::as_str).collect();
    let servers = BTreeMap::from([("test".to_owned(), config)]);
    let loaded = within("loading", load_all(&[], &[], &servers, &session.tool_api(), &reserved)).await;
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    assert!(loaded.tools.iter().all(|t| t.origin == "mcp:test"));
    let (names, errors) = session.add_custom_tools(&loaded);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(names.contains(&"test_echo".to_owned()));
    session.set_active_tools(["read", "test_echo", "test_fail"]).unwrap();

    faux.set_responses([
        FauxResponse::from(faux_assistant_message(vec![
            faux_tool_call("c1", "test_echo", json!({"text": "from the server"})),
            faux_tool_call("c2", "test_fail", json!({})),
        ])),
        FauxResponse::factory(|request| {
            let results: Vec<(String, bool)> = request
                .context
                .messages
                .iter()
                .filter_map(AgentMessage::as_tool_result)
                .map(|r| (r.text(), r.is_error))
                .collect();
            assert_eq!(
                results,
                [("from the server".to_owned(), false), ("it broke".to_owned(), true)]
            );
            faux_assistant_text("The server said: from the server")
        }),
    ]);
    within("the prompt", session.prompt("call the MCP tools"))
        .await
        .unwrap();
    let messages = session.agent().messages();
    let last = messages.last().and_then(AgentMessage::as_assistant).unwrap();
    assert_eq!(last.text(), "The server said: from the server");
    let echo = messages
        .iter()
        .filter_map(AgentMessage::as_tool_result)
        .find(|r| r.tool_name == "test_echo")
        .unwrap();
    assert!(!echo.is_error);

    within(
        "shutdown",
        session.emit_tool_session_event(&ToolSessionEvent::empty(SessionReason::Shutdown)),
    )
    .await;
    assert_eq!(
        events(dir.path()).iter().filter(|(_, e)| e == "eof").count(),
        1,
        "the session's shutdown event closed the server"
    );
}
