//! A scripted fake pi for the Node extension host: starts `node <host> --extensions <entries>`
//! (the host from `custom_tools::node::host_file`, TypeScript from `custom_tools::node::transpile`)
//! and speaks protocol version 2 over its pipes. Requests the host sends are recorded and answered
//! from a script (method → result; `null` when not scripted); notifications are recorded.
//!
//! A test that needs `node` fails when there is none and `PI_REQUIRE_NODE` is set (CI), and
//! prints `skipped: <why>` otherwise, as the host's unit tests do.

#![allow(dead_code, clippy::unwrap_used)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_coding_agent::custom_tools::node::{
    NodeVersion, ScriptKind, TS_MODULES_ENV, check_version, find_node, host_file, node_flags, node_version, transpile,
};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

/// Set (to anything): a test that needs `node` fails instead of skipping when there is none.
pub(crate) const REQUIRE_NODE: &str = "PI_REQUIRE_NODE";

/// How long one message may take (loading every example of pi included).
const MESSAGE_TIMEOUT: Duration = Duration::from_secs(60);

/// The `node` pi would use and its version, or `None` after printing why the test is skipped
/// (a failure when [`REQUIRE_NODE`] is set).
pub(crate) async fn node() -> Option<(PathBuf, NodeVersion)> {
    let env = |name: &str| std::env::var(name).ok();
    let probe = Path::new("extension.ts");
    let found = async {
        let node = find_node(&env, probe)?;
        let version = node_version(&node).await?;
        check_version(version, &node, probe)?;
        Ok::<_, pi_coding_agent::custom_tools::node::NodeError>((node, version))
    };
    match found.await {
        Ok(found) => Some(found),
        Err(why) => {
            assert!(env(REQUIRE_NODE).is_none(), "{REQUIRE_NODE} is set, but {why}");
            println!("skipped: {why}");
            None
        }
    }
}

/// Writes `source` to `dir/name` (parents created) and returns its path.
pub(crate) fn write(dir: &Path, name: &str, source: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, source).unwrap();
    path
}

/// A message the host sent pi: a request (with `id`) or a notification.
#[derive(Debug, Clone)]
pub(crate) struct Sent {
    pub method: String,
    pub params: Value,
}

/// The running host and the fake pi around it.
pub(crate) struct ExtHost {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Lines<BufReader<ChildStdout>>,
    stderr: Arc<Mutex<String>>,
    next_id: u64,
    /// What pi answers the host's requests, by method (`null` when absent).
    pub script: HashMap<String, Value>,
    /// Requests pi answers with an error, by method (the error's message).
    pub errors: HashMap<String, String>,
    /// Every request and notification the host sent, in order.
    pub sent: Vec<Sent>,
}

impl ExtHost {
    /// Starts the host on `entries` (in order) in `cwd`; `None` when there is no usable `node`.
    pub(crate) async fn start(entries: &[PathBuf], cwd: &Path) -> Option<ExtHost> {
        let (node, version) = node().await?;
        let cache = std::env::temp_dir().join("pi-extension-host-tests");
        let host = host_file(&cache).unwrap();
        let mut modules = Vec::new();
        for entry in entries {
            if ScriptKind::of(entry) == ScriptKind::TypeScript {
                modules.extend(transpile::transpile_graph(entry, &cache.join("ts")).unwrap());
            }
        }
        let mut args = node_flags(version, ScriptKind::TypeScript);
        args.push(host.display().to_string());
        args.push("--extensions".to_owned());
        args.extend(entries.iter().map(|e| e.display().to_string()));
        let mut child = tokio::process::Command::new(&node)
            .args(&args)
            .env(TS_MODULES_ENV, transpile::module_map(&modules))
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().unwrap();
        let sink = stderr.clone();
        tokio::spawn(async move {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buffer).await {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buffer[..n]));
            }
        });
        Some(ExtHost {
            stdin: child.stdin.take(),
            stdout: BufReader::new(child.stdout.take().unwrap()).lines(),
            child,
            stderr,
            next_id: 0,
            script: HashMap::new(),
            errors: HashMap::new(),
            sent: Vec::new(),
        })
    }

    /// What the host wrote to stderr so far.
    pub(crate) fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Scripts pi's answer to the host's requests of `method`.
    pub(crate) fn answer(&mut self, method: &str, result: Value) {
        self.script.insert(method.to_owned(), result);
    }

    /// Scripts an error answer (with `message`) to the host's requests of `method`.
    pub(crate) fn answer_error(&mut self, method: &str, message: &str) {
        self.errors.insert(method.to_owned(), message.to_owned());
    }

    /// Answers the host's request `id` of `method` from the script.
    async fn answer_request(&mut self, id: Value, method: &str) {
        let reply = match self.errors.get(method) {
            Some(message) => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": message}}),
            None => {
                let result = self.script.get(method).cloned().unwrap_or(Value::Null);
                json!({"jsonrpc": "2.0", "id": id, "result": result})
            }
        };
        self.send(reply).await;
    }

    pub(crate) async fn send(&mut self, message: Value) {
        let mut line = serde_json::to_string(&message).unwrap();
        line.push('\n');
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.flush().await.unwrap();
    }

    /// Sends a request without waiting; returns its id.
    pub(crate) async fn request(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    /// Sends a notification.
    pub(crate) async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    /// The next line of the host, as JSON.
    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(MESSAGE_TIMEOUT, self.stdout.next_line())
            .await
            .unwrap_or_else(|_| panic!("no message within {MESSAGE_TIMEOUT:?}; stderr: {}", self.stderr()))
            .unwrap()
            .unwrap_or_else(|| panic!("the host closed stdout; stderr: {}", self.stderr()));
        let message: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "{message}");
        message
    }

    /// Reads the host's messages, recording and answering its requests, until the answer to
    /// request `id` (the whole response).
    pub(crate) async fn response(&mut self, id: u64) -> Value {
        loop {
            let message = self.recv().await;
            if let Some(method) = message.get("method").and_then(Value::as_str) {
                let method = method.to_owned();
                self.sent.push(Sent {
                    method: method.clone(),
                    params: message["params"].clone(),
                });
                if let Some(request_id) = message.get("id") {
                    self.answer_request(request_id.clone(), &method).await;
                }
                continue;
            }
            assert_eq!(message["id"], id, "expected the answer to {id}: {message}");
            return message;
        }
    }

    /// Reads (and records, and answers) until the host sent a message of `method`; returns it.
    pub(crate) async fn until_sent(&mut self, method: &str) -> Sent {
        loop {
            let message = self.recv().await;
            let Some(name) = message.get("method").and_then(Value::as_str) else {
                panic!("expected {method} before any answer: {message}");
            };
            let sent = Sent {
                method: name.to_owned(),
                params: message["params"].clone(),
            };
            self.sent.push(sent.clone());
            if let Some(request_id) = message.get("id") {
                self.answer_request(request_id.clone(), &sent.method).await;
            }
            if sent.method == method {
                return sent;
            }
        }
    }

    /// Sends a request and returns its `result` (panics on an error).
    pub(crate) async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params).await;
        let answer = self.response(id).await;
        assert!(answer.get("error").is_none(), "{answer}\nstderr: {}", self.stderr());
        answer["result"].clone()
    }

    /// Sends a request and returns its `error` object (panics on a result).
    pub(crate) async fn call_err(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params).await;
        let answer = self.response(id).await;
        assert!(answer.get("result").is_none(), "{answer}");
        answer["error"].clone()
    }

    /// `initialize` (protocol version 2) in `cwd`; the `InitializeResult`.
    pub(crate) async fn initialize(&mut self, cwd: &Path) -> Value {
        let params = json!({
            "protocolVersion": 2,
            "cwd": cwd,
            "hasUI": true,
            "piVersion": "0.73.1",
            "agentDir": cwd.join("agent"),
        });
        self.call("initialize", params).await
    }

    /// The messages of `method` the host sent so far.
    pub(crate) fn sent_of(&self, method: &str) -> Vec<Value> {
        self.sent
            .iter()
            .filter(|s| s.method == method)
            .map(|s| s.params.clone())
            .collect()
    }

    /// `shutdown`, then waits for the process to exit.
    pub(crate) async fn shutdown(mut self) {
        self.call("shutdown", json!({})).await;
        drop(self.stdin.take());
        let status = tokio::time::timeout(MESSAGE_TIMEOUT, self.child.wait())
            .await
            .unwrap()
            .unwrap();
        assert!(status.success(), "{status}");
    }
}

/// A `Context` snapshot as pi sends it (idle, no model), with `extra` fields merged in.
pub(crate) fn context(cwd: &Path, extra: Value) -> Value {
    let mut base = json!({
        "cwd": cwd,
        "hasUI": true,
        "model": null,
        "thinkingLevel": "off",
        "isIdle": true,
        "hasPendingMessages": false,
        "sessionName": null,
        "sessionFile": null,
        "sessionId": "s1",
        "leafId": null,
        "activeTools": ["read", "bash"],
        "allTools": [],
        "commands": [],
        "systemPrompt": "You are pi.",
        "contextUsage": null,
        "session": {"keep": 0, "entries": []},
    });
    if let (Some(base), Some(extra)) = (base.as_object_mut(), extra.as_object()) {
        for (key, value) in extra {
            base.insert(key.clone(), value.clone());
        }
    }
    base
}
