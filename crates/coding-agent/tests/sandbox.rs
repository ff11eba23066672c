//! The opt-in sandbox (beyond pi) around custom-tool processes: a process tool, what it has pi
//! `exec`, and an MCP server write inside the project but not outside it, and reach no TCP server
//! with the network off; unsandboxed they can; a sandbox the kernel cannot enforce starts nothing.
//! And a session whose settings turn the sandbox on runs its `bash` in it.
//!
//! The project and the "outside" directory are made under `CARGO_TARGET_TMPDIR`, not below the
//! temp directories the sandbox allows by design. These tests need a kernel with Landlock (ABI 4);
//! where it lacks it they fail, unless `PI_ALLOW_NO_LANDLOCK=1` says to pass them (never in CI).

#![allow(clippy::unwrap_used)]

use crate::process_support::{Tools, probe_spec};
use pi_test_support::landlock::SandboxDirs;

use std::path::Path;
use std::time::Duration;

use pi_agent_core::ToolContext;
use pi_coding_agent::SessionBuilder;
use pi_coding_agent::config::{McpServerConfig, Settings};
use pi_coding_agent::custom_tools::ToolApi;
use pi_coding_agent::custom_tools::mcp::load_server;
use pi_coding_agent::custom_tools::process::load_spec;
use pi_test_support::tools::result_text;
use pi_tools::Sandbox;
use serde_json::json;

fn dirs() -> SandboxDirs {
    SandboxDirs::new(env!("CARGO_TARGET_TMPDIR"), |project| {
        Sandbox::new(project).writable_paths()
    })
}

/// Whether the kernel enforces the sandbox (with the network off, the most it asks); fails the
/// test when it does not, unless `PI_ALLOW_NO_LANDLOCK=1`.
fn landlock_available(project: &Path) -> bool {
    pi_test_support::landlock::available(Sandbox::new(project).network(false).check())
}

async fn probe_in(project: &Path, sandbox: Option<Sandbox>) -> Tools {
    let api = ToolApi::new(project).with_sandbox(sandbox);
    Tools(load_spec(probe_spec(Duration::from_secs(60), &[]), &api).await.unwrap())
}

async fn text(tools: &Tools, name: &str, args: serde_json::Value) -> String {
    result_text(&tools.call(name, args).await.unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sandboxed_process_tool_writes_only_inside_the_project() {
    let dirs = dirs();
    if !landlock_available(&dirs.project) {
        return;
    }
    let tools = probe_in(&dirs.project, Some(Sandbox::new(&dirs.project))).await;
    let inside = dirs.project.join("inside.txt");
    let outside = dirs.outside.join("escaped.txt");
    assert_eq!(text(&tools, "write_file", json!({"path": inside})).await, "written");
    assert!(inside.exists());
    assert_eq!(
        text(&tools, "write_file", json!({"path": outside})).await,
        "refused: Permission denied"
    );
    assert!(!outside.exists());
    // What the tool has pi run for it is sandboxed too.
    let exec = tools.call("exec_write", json!({"path": outside})).await.unwrap();
    assert_ne!(exec.details["code"], json!(0), "{}", exec.details);
    assert!(
        exec.details["stderr"].as_str().unwrap().contains("Permission denied"),
        "{}",
        exec.details
    );
    assert!(!outside.exists());

    let unsandboxed = probe_in(&dirs.project, None).await;
    assert_eq!(
        text(&unsandboxed, "write_file", json!({"path": outside})).await,
        "written"
    );
    assert!(outside.exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn with_the_network_off_a_process_tool_reaches_no_tcp_server() {
    let dirs = dirs();
    if !landlock_available(&dirs.project) {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let offline = probe_in(&dirs.project, Some(Sandbox::new(&dirs.project).network(false))).await;
    assert_eq!(
        text(&offline, "connect", json!({"port": port})).await,
        "refused: Operation not permitted"
    );
    let online = probe_in(&dirs.project, Some(Sandbox::new(&dirs.project))).await;
    assert_eq!(text(&online, "connect", json!({"port": port})).await, "connected");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sandboxed_mcp_server_cannot_write_outside_the_project() {
    let dirs = dirs();
    if !landlock_available(&dirs.project) {
        return;
    }
    // The test server appends to ./events.log from its first line on.
    let server = include_str!("mcp_support/server.py");
    for dir in [&dirs.project, &dirs.outside] {
        std::fs::write(dir.join("server.py"), server).unwrap();
    }
    let config = |cwd: &Path| -> McpServerConfig {
        serde_json::from_value(json!({"command": "python3", "args": ["server.py", "normal"], "cwd": cwd})).unwrap()
    };
    let sandboxed = ToolApi::new(&dirs.project).with_sandbox(Some(Sandbox::new(&dirs.project)));
    let tools = load_server("test", &config(&dirs.project), &sandboxed).await.unwrap();
    assert!(!tools.is_empty());
    assert!(dirs.project.join("events.log").exists());
    let error = load_server("test", &config(&dirs.outside), &sandboxed)
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains("Permission denied"), "{error}");
    assert!(!dirs.outside.join("events.log").exists());
    load_server("test", &config(&dirs.outside), &ToolApi::new(&dirs.project))
        .await
        .unwrap();
    assert!(dirs.outside.join("events.log").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sandbox_the_kernel_cannot_enforce_starts_no_tool_process() {
    let dirs = dirs();
    let api = ToolApi::new(&dirs.project).with_sandbox(Some(Sandbox::new(&dirs.project).simulate_missing_landlock()));
    let error = load_spec(probe_spec(Duration::from_secs(60), &[]), &api)
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(
        error.starts_with(
            "Cannot start python3 probe/tool.py: Sandbox unavailable: this kernel does not enforce Landlock"
        ),
        "{error}"
    );
    assert!(error.contains("Nothing was run."), "{error}");
    let marker = dirs.project.join("ran");
    let error = api
        .exec(
            "sh",
            &["-c".into(), format!("touch '{}'", marker.display())],
            Default::default(),
        )
        .await
        .unwrap_err();
    assert!(error.to_string().starts_with("Sandbox unavailable: "), "{error}");
    assert!(!marker.exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sandbox_setting_puts_the_sessions_bash_in_the_sandbox() {
    let dirs = dirs();
    if !landlock_available(&dirs.project) {
        return;
    }
    let faux = pi_agent_core::faux::FauxModel::new();
    let settings = |enabled: bool| {
        Settings::from_json(
            &json!({"sandbox": {"enabled": enabled, "network": false}}).to_string(),
            "settings.json",
        )
        .unwrap()
    };
    let target = dirs.outside.join("escaped.txt");
    let command = json!({"command": format!("echo x > '{}'", target.display())});
    for (enabled, escapes) in [(true, false), (false, true)] {
        let built = SessionBuilder::new(&dirs.project, faux.model())
            .stream_fn(std::sync::Arc::new(faux.clone()))
            .settings(settings(enabled))
            .context_files(false)
            .build()
            .await
            .unwrap();
        assert_eq!(built.session.sandbox().is_some(), enabled);
        assert_eq!(built.session.tool_api().sandbox().is_some(), enabled);
        let bash = built
            .session
            .agent()
            .tools()
            .into_iter()
            .find(|tool| tool.name() == "bash")
            .unwrap();
        let outcome = bash.execute("call-1", command.clone(), ToolContext::detached()).await;
        assert_eq!(outcome.is_ok(), escapes, "{outcome:?}");
        assert_eq!(target.exists(), escapes);
    }
}
