//! A child process spoken to in JSON-RPC 2.0 over JSON lines (one object a line on stdin and
//! stdout), as pi speaks to its Node host: spawning with piped stdio, collecting stderr,
//! numbering requests, reading messages with a time limit. Panics on anything unexpected (it
//! serves tests), with the child's stderr in the message.
//!
//! [`skip_or_fail`] is how a test that needs a program (`node`) that is not there skips, or
//! fails when [`REQUIRE_NODE`] is set (CI).

#![allow(clippy::expect_used)]

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// Set (to anything): a test that needs `node` fails instead of skipping when there is none.
pub const REQUIRE_NODE: &str = "PI_REQUIRE_NODE";

/// Skips a test that needs `node` (printing `skipped: <why>`), or fails it when `env` has
/// [`REQUIRE_NODE`].
pub fn skip_or_fail(env: &dyn Fn(&str) -> Option<String>, why: &str) {
    assert!(env(REQUIRE_NODE).is_none(), "{REQUIRE_NODE} is set, but {why}");
    println!("skipped: {why}");
}

/// A running child speaking JSON lines.
pub struct JsonLinesChild {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Lines<BufReader<ChildStdout>>,
    stderr: Arc<Mutex<String>>,
    next_id: u64,
    timeout: Duration,
}

impl JsonLinesChild {
    /// Spawns `command` with piped stdio (killed when dropped); each message must come within
    /// `timeout`.
    pub fn spawn(mut command: Command, timeout: Duration) -> JsonLinesChild {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the child starts");
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().expect("stderr is piped");
        let sink = stderr.clone();
        tokio::spawn(async move {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buffer).await {
                if n == 0 {
                    break;
                }
                pi_agent_core::lock(&sink).push_str(&String::from_utf8_lossy(&buffer[..n]));
            }
        });
        JsonLinesChild {
            stdin: child.stdin.take(),
            stdout: BufReader::new(child.stdout.take().expect("stdout is piped")).lines(),
            child,
            stderr,
            next_id: 0,
            timeout,
        }
    }

    /// What the child wrote to stderr so far.
    pub fn stderr(&self) -> String {
        pi_agent_core::lock(&self.stderr).clone()
    }

    /// Writes `message` as one line.
    pub async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line.as_bytes()).await.expect("the child reads stdin");
        stdin.flush().await.expect("the child reads stdin");
    }

    /// Sends a request without waiting; returns its id (1, 2, …).
    pub async fn request(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    /// Answers the child's request `id` with `result`.
    pub async fn reply(&mut self, id: &Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": result})).await;
    }

    /// The next line as JSON: it must be one JSON-RPC 2.0 object and come within the time limit.
    pub async fn recv(&mut self) -> Value {
        let timeout = self.timeout;
        let line = tokio::time::timeout(timeout, self.stdout.next_line())
            .await
            .unwrap_or_else(|_| panic!("no message within {timeout:?}; stderr: {}", self.stderr()))
            .expect("stdout reads")
            .unwrap_or_else(|| panic!("the child closed stdout; stderr: {}", self.stderr()));
        let message: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "{message}");
        message
    }

    /// The next line, or `None` when stdout closed (within the time limit).
    pub async fn next_line(&mut self) -> Option<String> {
        let timeout = self.timeout;
        tokio::time::timeout(timeout, self.stdout.next_line())
            .await
            .unwrap_or_else(|_| panic!("no line within {timeout:?}; stderr: {}", self.stderr()))
            .expect("stdout reads")
    }

    /// Closes stdin (the child sees end of input).
    pub fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }

    /// The child itself (to wait for it, kill it, read its id).
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }
}

impl JsonLinesChild {
    /// Writes `bytes` to stdin as they are (a line that is not JSON, two messages at once).
    pub async fn write_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).await.expect("the child reads stdin");
        stdin.flush().await.expect("the child reads stdin");
    }
}
