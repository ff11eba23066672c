//! A scripted fake pi for the Node extension host: starts the command pi starts
//! (`extensions::host_spec`: `node <host> --extensions <entries>`, TypeScript transpiled) and
//! speaks protocol version 2 over its pipes (pi-test-support's JSON-lines child). Requests the host sends are recorded and answered
//! from a script (method → result; `null` when not scripted); notifications are recorded.
//!
//! A test that needs `node` fails when there is none and `PI_REQUIRE_NODE` is set (CI), and
//! prints `skipped: <why>` otherwise, as the host's unit tests do.

#![allow(dead_code, clippy::unwrap_used)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use pi_coding_agent::custom_tools::node::{EnvLookup, NodeVersion, check_version, find_node, node_version};
use pi_coding_agent::extensions::host_spec;
use pi_test_support::json_lines::{JsonLinesChild, skip_or_fail};
use serde_json::{Value, json};

/// How long one message may take (loading every example of pi included).
const MESSAGE_TIMEOUT: Duration = Duration::from_secs(60);

/// The `node` pi would use and its version, or `None` after printing why the test is skipped
/// (a failure when `PI_REQUIRE_NODE` is set).
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
            skip_or_fail(&env, &why.to_string());
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
    io: JsonLinesChild,
    /// What pi answers the host's requests, by method (`null` when absent).
    pub script: HashMap<String, Value>,
    /// Requests pi answers with an error, by method (the error's message).
    pub errors: HashMap<String, String>,
    /// Every request and notification the host sent, in order.
    pub sent: Vec<Sent>,
    /// The entries `host_spec` left out (a TypeScript file that does not transpile), with why.
    pub failed: Vec<(PathBuf, String)>,
}

impl ExtHost {
    /// Starts the host on `entries` (in order) in `cwd` with the command pi builds
    /// (`extensions::host_spec`); `None` when there is no usable `node`.
    pub(crate) async fn start(entries: &[PathBuf], cwd: &Path) -> Option<ExtHost> {
        node().await?;
        let cache = std::env::temp_dir().join("pi-extension-host-tests");
        let host_cache = cache.display().to_string();
        let env: EnvLookup = Arc::new(move |name: &str| {
            if name == "XDG_CACHE_HOME" {
                Some(host_cache.clone())
            } else {
                std::env::var(name).ok()
            }
        });
        let (spec, _loadable, failed) = host_spec(entries, cwd, env, Some(&cache)).await.unwrap();
        let mut command = tokio::process::Command::new(&spec.program);
        command.args(&spec.args).envs(&spec.env).current_dir(&spec.dir);
        Some(ExtHost {
            io: JsonLinesChild::spawn(command, MESSAGE_TIMEOUT),
            script: HashMap::new(),
            errors: HashMap::new(),
            sent: Vec::new(),
            failed,
        })
    }

    /// What the host wrote to stderr so far.
    pub(crate) fn stderr(&self) -> String {
        self.io.stderr()
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
        self.io.send(message).await;
    }

    /// Sends a request without waiting; returns its id.
    pub(crate) async fn request(&mut self, method: &str, params: Value) -> u64 {
        self.io.request(method, params).await
    }

    /// Sends a notification.
    pub(crate) async fn notify(&mut self, method: &str, params: Value) {
        self.io.notify(method, params).await;
    }

    /// The next message of the host.
    async fn recv(&mut self) -> Value {
        self.io.recv().await
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
        self.io.close_stdin();
        let status = tokio::time::timeout(MESSAGE_TIMEOUT, self.io.child().wait())
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
