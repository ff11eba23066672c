//! The opt-in sandbox of `bash` (beyond pi): a sandboxed command writes inside the project but
//! not outside it, and reaches no TCP server with the network off; without the sandbox it can do
//! both; and a sandbox the kernel cannot enforce runs nothing and says why.
//!
//! The project and the "outside" directory are both made under `CARGO_TARGET_TMPDIR`, not under
//! the temp directories the sandbox allows by design. These tests need a kernel with Landlock
//! (ABI 4); where it lacks it they fail, unless `PI_ALLOW_NO_LANDLOCK=1` says to pass them
//! (never set in CI).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pi_test_support::landlock::SandboxDirs;
use std::path::Path;

use pi_agent_core::{AgentTool, ContentBlock, ToolContext};
use pi_tools::{BashTool, Sandbox, ToolEnv};
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

async fn bash(env: ToolEnv, command: &str) -> Result<String, String> {
    let text = |content: &[ContentBlock]| content.iter().filter_map(|b| b.as_text()).collect::<String>();
    BashTool::new(env)
        .execute(
            "call",
            json!({"command": command, "timeout": 30}),
            ToolContext::detached(),
        )
        .await
        .map(|result| text(&result.content))
        .map_err(|error| error.message().to_owned())
}

fn env(project: &Path, sandbox: Option<Sandbox>) -> ToolEnv {
    let mut env = ToolEnv::new(project);
    env.sandbox = sandbox;
    env
}

#[tokio::test]
async fn sandboxed_bash_writes_inside_the_project_but_not_outside() {
    let dirs = dirs();
    if !landlock_available(&dirs.project) {
        return;
    }
    let sandboxed = env(&dirs.project, Some(Sandbox::new(&dirs.project)));
    let target = dirs.outside.join("escaped.txt");
    let error = bash(sandboxed.clone(), &format!("echo no > '{}'", target.display()))
        .await
        .unwrap_err();
    assert!(error.contains("Permission denied"), "{error}");
    assert!(error.ends_with("Command exited with code 1"), "{error}");
    assert!(!target.exists());
    // Nor may it remove, rename into or create directories outside.
    std::fs::write(dirs.outside.join("keep.txt"), "kept").unwrap();
    let outside = dirs.outside.display();
    for command in [
        format!("rm '{outside}/keep.txt'"),
        format!("mkdir '{outside}/sub'"),
        format!("truncate -s 0 '{outside}/keep.txt'"),
        format!("echo x > inside.txt && mv inside.txt '{outside}/moved.txt'"),
    ] {
        assert!(bash(sandboxed.clone(), &command).await.is_err(), "{command} succeeded");
    }
    assert_eq!(std::fs::read_to_string(dirs.outside.join("keep.txt")).unwrap(), "kept");
    assert!(!dirs.outside.join("sub").exists() && !dirs.outside.join("moved.txt").exists());

    // Inside the project, in the temp directory and on /dev/null it works.
    let temp = tempfile::tempdir().unwrap();
    let output = bash(
        sandboxed,
        &format!(
            "mkdir -p src && echo yes > src/inside.txt && echo t > '{}/t.txt' && echo quiet > /dev/null && cat src/inside.txt",
            temp.path().display()
        ),
    )
    .await
    .unwrap();
    assert_eq!(output, "yes\n");
    assert_eq!(
        std::fs::read_to_string(dirs.project.join("src/inside.txt")).unwrap(),
        "yes\n"
    );
    assert!(temp.path().join("t.txt").exists());
}

#[tokio::test]
async fn unsandboxed_bash_writes_outside_the_project() {
    let dirs = dirs();
    let target = dirs.outside.join("written.txt");
    let output = bash(
        env(&dirs.project, None),
        &format!("echo yes > '{}' && echo ok", target.display()),
    )
    .await
    .unwrap();
    assert_eq!(output, "ok\n");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "yes\n");
}

#[tokio::test]
async fn with_the_network_off_sandboxed_bash_reaches_no_tcp_server_nor_udp() {
    let dirs = dirs();
    if !landlock_available(&dirs.project) {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let udp = format!("echo datagram > /dev/udp/127.0.0.1/{port} && echo sent");

    let offline = env(&dirs.project, Some(Sandbox::new(&dirs.project).network(false)));
    let error = bash(offline.clone(), &connect).await.unwrap_err();
    assert!(!error.contains("connected"), "{error}");
    assert!(
        error.contains("Permission denied") || error.contains("Operation not permitted"),
        "{error}"
    );
    let error = bash(offline.clone(), &udp).await.unwrap_err();
    assert!(error.contains("Operation not permitted"), "{error}");
    // Unix sockets stay usable (local tools talk over them).
    let socket = dirs.project.join("s.sock");
    let unix = format!(
        "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.bind('{}'); print('unix ok')\"",
        socket.display()
    );
    assert_eq!(bash(offline, &unix).await.unwrap(), "unix ok\n");

    // With the network allowed, sandboxed or not, the same command connects.
    let online = env(&dirs.project, Some(Sandbox::new(&dirs.project)));
    assert_eq!(bash(online, &connect).await.unwrap(), "connected\n");
    assert_eq!(bash(env(&dirs.project, None), &connect).await.unwrap(), "connected\n");
}

#[tokio::test]
async fn a_sandbox_the_kernel_cannot_enforce_runs_nothing_and_says_why() {
    let dirs = dirs();
    let marker = dirs.project.join("ran.txt");
    let sandbox = Sandbox::new(&dirs.project).simulate_missing_landlock();
    let error = bash(env(&dirs.project, Some(sandbox)), "echo ran > ran.txt")
        .await
        .unwrap_err();
    assert_eq!(
        error,
        "Sandbox unavailable: this kernel does not enforce Landlock file-system rules (ABI 3, Linux 6.2 or \
newer) (simulated: the kernel does not support Landlock). Nothing was run. Start pi with --no-sandbox (or set \
\"sandbox\": {\"enabled\": false} in settings.json) to run commands without the sandbox."
    );
    assert!(!marker.exists());
}
