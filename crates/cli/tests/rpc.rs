//! `pi --mode rpc` spawned as a process and driven over stdin / stdout against a local mock
//! server: responses with `id` echo, events interleaved, steering while streaming, abort, session
//! commands, `bash`, and parse errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use pi_test_support::sandbox::Sandbox;
use pi_test_support::{MockServer, openai};
use serde_json::{Value, json};

/// A guard against a hung child, not a timing assertion.
const PATIENCE: Duration = Duration::from_secs(20);

pub(crate) struct Rpc {
    _sandbox: Sandbox,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    seen: Vec<Value>,
}

impl Rpc {
    fn start(server: &MockServer) -> Rpc {
        Rpc::start_with(server, &[], |_| {})
    }

    /// [`Rpc::start`] with more flags, after `setup` prepared the sandbox.
    fn start_with(server: &MockServer, flags: &[&str], setup: impl FnOnce(&Sandbox)) -> Rpc {
        let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
        sandbox.use_server(server);
        setup(&sandbox);
        let mut args = vec!["--mode", "rpc"];
        args.extend_from_slice(flags);
        Rpc::start_in(sandbox, &args)
    }

    /// `pi <args>` (which should hold `--mode rpc`) in `sandbox`.
    pub(crate) fn start_in(sandbox: Sandbox, args: &[&str]) -> Rpc {
        Rpc::start_in_with_env(sandbox, args, &[])
    }

    /// [`Rpc::start_in`] with more variables in pi's environment.
    pub(crate) fn start_in_with_env(sandbox: Sandbox, args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> Rpc {
        let mut command = sandbox.command(args);
        command.envs(env.iter().copied());
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value = serde_json::from_str(&line).unwrap_or_else(|_| json!({"unparsed": line}));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Rpc {
            _sandbox: sandbox,
            child,
            stdin,
            lines,
            seen: Vec::new(),
        }
    }

    /// [`Rpc::send`], and notes the command among the lines seen as `{"sent": command}`.
    pub(crate) fn send_noted(&mut self, command: Value) {
        self.seen.push(json!({"sent": command}));
        self.send(command);
    }

    pub(crate) fn send(&mut self, command: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{command}").unwrap();
        stdin.flush().unwrap();
    }

    fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Reads lines until one matches; returns it.
    pub(crate) fn until(&mut self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        loop {
            let line = self.lines.recv_timeout(PATIENCE).unwrap_or_else(|_| {
                let kinds: Vec<String> = self.seen.iter().map(|v| format!("{} {}", v["type"], v["id"])).collect();
                panic!("no line matching {what}; seen: {kinds:?}")
            });
            self.seen.push(line.clone());
            if matches(&line) {
                return line;
            }
        }
    }

    pub(crate) fn response(&mut self, id: &str) -> Value {
        self.until(&format!("response {id}"), |v| v["type"] == "response" && v["id"] == id)
    }

    /// The response `id` if a wait for another line already read it, else the next one.
    pub(crate) fn response_read_or_next(&mut self, id: &str) -> Value {
        let read = self.seen.iter().find(|v| v["type"] == "response" && v["id"] == id);
        match read {
            Some(response) => response.clone(),
            None => self.response(id),
        }
    }

    pub(crate) fn event(&mut self, kind: &str) -> Value {
        self.until(kind, |v| v["type"] == kind)
    }

    /// Waits (stdin still open) for pi to end on its own; its exit status.
    pub(crate) fn exit_status(mut self) -> std::process::ExitStatus {
        let deadline = std::time::Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "pi did not end with its stdin open"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    pub(crate) fn close(mut self) -> Vec<Value> {
        drop(self.stdin.take());
        while let Ok(line) = self.lines.recv_timeout(PATIENCE) {
            self.seen.push(line);
        }
        let status = self.child.wait().unwrap();
        assert!(status.success());
        self.seen
    }
}

async fn on_blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_conversation_with_tools_state_and_session_commands() {
    let server = MockServer::start(vec![
        openai::tool_calls(&[("call-1", "bash", json!({"command": "echo tool-ran"}))]),
        openai::text("The command printed tool-ran."),
    ])
    .await;
    let requests = server.requests();
    assert!(requests.is_empty());
    let mut rpc = Rpc::start(&server);
    on_blocking(move || {
        rpc.send(json!({"type": "prompt", "id": "p1", "message": "Run something"}));
        let response = rpc.response("p1");
        assert_eq!(
            response,
            json!({"type": "response", "command": "prompt", "success": true, "id": "p1"})
        );
        let end = rpc.event("tool_execution_end");
        assert_eq!(end["toolName"], "bash");
        assert!(
            end["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("tool-ran")
        );
        rpc.event("agent_end");

        rpc.send(json!({"type": "get_last_assistant_text", "id": 2}));
        let text = rpc.until("text", |v| v["id"] == 2);
        assert_eq!(text["data"]["text"], "The command printed tool-ran.");

        rpc.send(json!({"type": "get_state", "id": "s"}));
        let state = rpc.response("s");
        assert_eq!(state["data"]["isStreaming"], false);
        assert_eq!(state["data"]["messageCount"], 4);
        assert_eq!(state["data"]["model"]["id"], openai::MODEL_ID);
        let file = PathBuf::from(state["data"]["sessionFile"].as_str().unwrap());
        assert!(file.exists(), "the session was written once the assistant answered");

        rpc.send(json!({"type": "get_session_stats", "id": "st"}));
        let stats = rpc.response("st");
        assert_eq!(stats["data"]["toolCalls"], 1);
        assert_eq!(stats["data"]["userMessages"], 1);

        rpc.send(json!({"type": "set_session_name", "id": "n", "name": "rpc test"}));
        rpc.response("n");
        rpc.send(json!({"type": "get_tree", "id": "t"}));
        let tree = rpc.response("t");
        // A new session starts with its model and thinking level, as in pi 0.73.
        let nodes = tree["data"]["nodes"].as_array().unwrap();
        assert_eq!(nodes[0]["type"], "model_change", "{nodes:?}");
        assert_eq!(nodes[1]["type"], "thinking_level_change", "{nodes:?}");
        assert_eq!(nodes[2]["role"], "user", "{nodes:?}");
        assert_eq!(tree["data"]["roots"][0], nodes[0]["id"]);

        rpc.send(json!({"type": "get_fork_messages", "id": "fm"}));
        let forkable = rpc.response("fm");
        let entry = forkable["data"]["messages"][0]["entryId"].as_str().unwrap().to_owned();
        rpc.send(json!({"type": "fork", "id": "f", "entryId": entry}));
        let fork = rpc.response("f");
        assert_eq!(fork["data"]["text"], "Run something");
        rpc.send(json!({"type": "get_messages", "id": "m"}));
        assert_eq!(rpc.response("m")["data"]["messages"], json!([]));
        // Forked before its first message, the new session is still saved (and names its parent).
        rpc.send(json!({"type": "get_state", "id": "fs"}));
        let forked_file = rpc.response("fs")["data"]["sessionFile"].clone();
        assert!(forked_file.is_string(), "{forked_file}");
        assert_ne!(forked_file.as_str().map(PathBuf::from), Some(file.clone()));

        rpc.send(json!({"type": "switch_session", "id": "sw", "sessionPath": file}));
        assert_eq!(rpc.response("sw")["success"], true);
        rpc.send(json!({"type": "get_messages", "id": "m2"}));
        assert_eq!(rpc.response("m2")["data"]["messages"].as_array().unwrap().len(), 4);

        rpc.send(json!({"type": "new_session", "id": "new"}));
        assert_eq!(rpc.response("new")["data"], json!({"cancelled": false}));
        rpc.close();
    })
    .await;
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn steering_while_streaming_and_abort() {
    let slow = |text: &str| openai::text(text).paced(Duration::from_millis(150));
    let server = MockServer::start(vec![
        slow("A long answer that streams slowly, piece by piece, long enough to be steered."),
        openai::text("Steered answer."),
        slow("Another long answer that will be aborted before it finishes streaming at all."),
    ])
    .await;
    let mut rpc = Rpc::start(&server);
    let seen = on_blocking(move || {
        // Both steered messages below go in one turn.
        rpc.send(json!({"type": "set_steering_mode", "id": "m", "mode": "all"}));
        rpc.response("m");
        rpc.send(json!({"type": "prompt", "id": "p1", "message": "Talk"}));
        rpc.response("p1");
        rpc.event("message_update");
        // A plain prompt while streaming is refused; with streamingBehavior it is queued.
        rpc.send(json!({"type": "prompt", "id": "p2", "message": "Busy?"}));
        let refused = rpc.response("p2");
        assert_eq!(refused["success"], false);
        assert!(refused["error"].as_str().unwrap().contains("streamingBehavior"));
        rpc.send(json!({"type": "prompt", "id": "p3", "message": "Be brief", "streamingBehavior": "steer"}));
        assert_eq!(rpc.response("p3")["success"], true);
        rpc.send(json!({"type": "steer", "id": "p3b", "message": "And polite"}));
        rpc.response("p3b");
        // The slow answer is still streaming: both steered messages wait, and pi counts them.
        rpc.send(json!({"type": "get_state", "id": "s"}));
        assert_eq!(rpc.response("s")["data"]["pendingMessageCount"], 2);
        rpc.event("agent_end");

        // Right after `agent_end` a new prompt is accepted.
        rpc.send(json!({"type": "prompt", "id": "p4", "message": "Go on"}));
        assert_eq!(rpc.response("p4")["success"], true);
        rpc.event("message_update");
        rpc.send(json!({"type": "abort", "id": "a"}));
        // `abort` answers once the run has stopped, so its `agent_end` comes first.
        let end = rpc.event("agent_end");
        rpc.response("a");
        let last = end["messages"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(last["stopReason"], "aborted");
        rpc.close()
    })
    .await;
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let steered = requests[1].json();
    let users: Vec<String> = steered["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .collect();
    let [.., brief, polite] = users.as_slice() else {
        panic!("{users:?}")
    };
    assert!(brief.contains("Be brief") && polite.contains("And polite"), "{users:?}");
    assert!(seen.iter().any(|v| v["type"] == "message_end"));
}

#[tokio::test(flavor = "multi_thread")]
async fn bash_during_a_run_reaches_the_model_after_the_run_not_inside_it() {
    let slow = openai::text("An answer streaming slowly, piece by piece, while the user runs bash.")
        .paced(Duration::from_millis(150));
    let server = MockServer::start(vec![slow, openai::text("Seen it.")]).await;
    let mut rpc = Rpc::start(&server);
    on_blocking(move || {
        rpc.send(json!({"type": "prompt", "id": "p1", "message": "Talk"}));
        rpc.response("p1");
        rpc.event("message_update");
        rpc.send(json!({"type": "bash", "id": "b", "command": "echo hi-from-bash"}));
        assert_eq!(rpc.response("b")["success"], true);
        rpc.event("agent_end");
        rpc.send(json!({"type": "prompt", "id": "p2", "message": "And now?"}));
        rpc.response("p2");
        rpc.event("agent_end");
        // The recorded message has pi's keys, in pi's order.
        rpc.send(json!({"type": "get_messages", "id": "m"}));
        let messages = rpc.response("m")["data"]["messages"].clone();
        let bash = messages
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "bashExecution")
            .unwrap();
        let keys: Vec<&str> = bash.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "role",
                "command",
                "output",
                "exitCode",
                "cancelled",
                "truncated",
                "timestamp"
            ]
        );
        rpc.close()
    })
    .await;
    let second = server.requests()[1].json();
    let roles: Vec<String> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| {
            let content = m["content"].to_string();
            let tag = if content.contains("hi-from-bash") { "+bash" } else { "" };
            format!("{}{tag}", m["role"].as_str().unwrap())
        })
        .collect();
    assert_eq!(roles, ["user", "assistant", "user+bash", "user"]);
}

/// pi's `RpcClient` prompts again as soon as it reads `agent_end` (its `waitForIdle` resolves
/// there): that prompt is accepted every time, never refused as "already processing".
#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_sent_the_moment_agent_end_is_read_is_never_refused() {
    const ROUNDS: usize = 50;
    let replies = (0..ROUNDS).map(|i| openai::text(&format!("answer {i}"))).collect();
    let server = MockServer::start(replies).await;
    let mut rpc = Rpc::start(&server);
    on_blocking(move || {
        for round in 0..ROUNDS {
            let id = format!("p{round}");
            rpc.send(json!({"type": "prompt", "id": id, "message": format!("question {round}")}));
            let mut accepted = false;
            // Up to this round's `agent_end`, then at once the next prompt.
            loop {
                let line = rpc.until("a response, an error or agent_end", |v| {
                    v["type"] == "response" || v["type"] == "error" || v["type"] == "agent_end"
                });
                assert_ne!(line["type"], "error", "round {round}: {line}");
                if line["type"] == "response" {
                    assert_eq!(line["id"], id.as_str(), "round {round}: {line}");
                    assert_eq!(line["success"], true, "round {round} was refused: {line}");
                    accepted = true;
                    continue;
                }
                assert!(accepted, "round {round}: agent_end before the prompt's response");
                let last = line["messages"].as_array().unwrap().last().unwrap().clone();
                assert_eq!(last["content"][0]["text"], format!("answer {round}"), "round {round}");
                break;
            }
        }
        let seen = rpc.close();
        assert!(!seen.iter().any(|v| v["type"] == "error"), "{seen:#?}");
    })
    .await;
    assert_eq!(server.requests().len(), ROUNDS);
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_lines_bash_and_models() {
    let server = MockServer::start(vec![openai::text("ok")]).await;
    let mut rpc = Rpc::start(&server);
    on_blocking(move || {
        rpc.send_raw("this is not json");
        let parse = rpc.event("response");
        assert_eq!(parse["command"], "parse");
        assert_eq!(parse["success"], false);
        assert!(
            parse["error"]
                .as_str()
                .unwrap()
                .starts_with("Failed to parse command: ")
        );

        rpc.send(json!({"type": "frobnicate", "id": 9}));
        assert_eq!(rpc.response_number(9)["error"], "Unknown command: frobnicate");

        rpc.send(json!({"type": "bash", "id": "b", "command": "echo from-user-bash"}));
        let bash = rpc.response("b");
        assert_eq!(bash["data"]["exitCode"], 0);
        assert_eq!(bash["data"]["output"], "from-user-bash\n");

        rpc.send(json!({"type": "get_available_models", "id": "models"}));
        let models = rpc.response("models");
        assert_eq!(models["data"]["models"][0]["id"], openai::MODEL_ID);
        rpc.send(json!({"type": "set_model", "id": "sm", "provider": "mock", "modelId": "nope"}));
        assert_eq!(rpc.response("sm")["error"], "Model not found: mock/nope");
        rpc.send(json!({"type": "get_commands", "id": "c"}));
        assert_eq!(rpc.response("c")["data"], json!({"commands": []}));

        // The user's command reaches the model with the next prompt.
        rpc.send(json!({"type": "prompt", "id": "p", "message": "What did I run?"}));
        rpc.response("p");
        rpc.event("agent_end");
        rpc.close();
    })
    .await;
    let body = server.requests()[0].json();
    let text = body["messages"].to_string();
    assert!(text.contains("Ran `echo from-user-bash`"), "{text}");
}

impl Rpc {
    fn response_number(&mut self, id: i64) -> Value {
        self.until(&format!("response {id}"), |v| v["type"] == "response" && v["id"] == id)
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn stdin_ending_lets_the_prompt_finish() {
    let server = MockServer::start(vec![openai::text("finished")]).await;
    let mut rpc = Rpc::start(&server);
    let seen = on_blocking(move || {
        rpc.send(json!({"type": "prompt", "id": "p", "message": "hi"}));
        rpc.close()
    })
    .await;
    assert!(seen.iter().any(|v| v["type"] == "agent_end"), "{seen:#?}");
}

/// Beyond pi: the RPC `bash` command follows the `sandbox` setting (here with the network off)
/// and `--no-sandbox` overrides it. Needs a kernel with Landlock (ABI 4).
#[tokio::test(flavor = "multi_thread")]
async fn rpc_bash_follows_the_sandbox_setting() {
    let project = tempfile::tempdir().unwrap();
    if !pi_test_support::landlock::available(pi_tools::Sandbox::new(project.path()).network(false).check()) {
        return;
    }
    let server = MockServer::start(vec![]).await;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let settings = |sandbox: &Sandbox| {
        let settings = json!({"sandbox": {"enabled": true, "network": false}});
        std::fs::write(sandbox.agent_dir().join("settings.json"), settings.to_string()).unwrap();
    };
    for (flags, connects) in [(&[][..], false), (&["--no-sandbox"][..], true)] {
        let mut rpc = Rpc::start_with(&server, flags, settings);
        let command = connect.clone();
        let bash = on_blocking(move || {
            rpc.send(json!({"type": "bash", "id": "b", "command": command}));
            let bash = rpc.response("b");
            rpc.close();
            bash
        })
        .await;
        let output = bash["data"]["output"].as_str().unwrap_or_default();
        if connects {
            assert_eq!(bash["data"]["exitCode"], 0, "{bash}");
            assert_eq!(output, "connected\n");
        } else {
            assert_eq!(bash["data"]["exitCode"], 1, "{bash}");
            // The seccomp filter refuses the socket before Landlock would refuse the connection.
            assert!(output.contains("socket: Operation not permitted"), "{bash}");
        }
    }
}

/// The agent directory's `settings.json` once `check` holds for it (the file is written off the
/// runtime's threads).
fn settings_when(path: &std::path::Path, check: impl Fn(&Value) -> bool) -> Value {
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        let value = std::fs::read_to_string(path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or(Value::Null);
        if check(&value) {
            return value;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "settings.json never matched: {value}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn model_and_thinking_choices_are_saved_and_the_command_lines_are_not() {
    let server = MockServer::start(vec![]).await;
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    sandbox.write_models_json(
        &json!({"providers": {"mock": {"baseUrl": server.url("/v1"), "api": "openai-completions", "apiKey": "k",
            "models": [{"id": "plain"}, {"id": "think", "reasoning": true}]}}})
        .to_string(),
    );
    let settings = sandbox.agent_dir().join("settings.json");
    std::fs::write(&settings, r#"{"someFutureKey": {"kept": true}}"#).unwrap();
    let mut rpc = Rpc::start_in(
        sandbox,
        &["--mode", "rpc", "--model", "mock/think", "--thinking", "low"],
    );
    on_blocking(move || {
        rpc.send(json!({"type": "get_state", "id": "s"}));
        assert_eq!(rpc.response("s")["data"]["thinkingLevel"], "low");
        assert_eq!(
            std::fs::read_to_string(&settings).unwrap(),
            r#"{"someFutureKey": {"kept": true}}"#,
            "the command line's choices are not saved"
        );
        // pi's levels for a reasoning model without a `thinkingLevelMap`: no `xhigh`.
        rpc.send(json!({"type": "get_available_thinking_levels", "id": "l"}));
        assert_eq!(
            rpc.response("l")["data"]["levels"],
            json!(["off", "minimal", "low", "medium", "high"])
        );
        rpc.send(json!({"type": "set_thinking_level", "id": "x", "level": "xhigh"}));
        rpc.response("x");
        rpc.send(json!({"type": "get_state", "id": "s2"}));
        assert_eq!(
            rpc.response("s2")["data"]["thinkingLevel"],
            "high",
            "clamped as pi does"
        );
        settings_when(&settings, |s| s["defaultThinkingLevel"] == "high");
        rpc.send(json!({"type": "cycle_thinking_level", "id": "c"}));
        assert_eq!(rpc.response("c")["data"], json!({"level": "off"}), "high wraps to off");
        rpc.send(json!({"type": "set_model", "id": "m", "provider": "mock", "modelId": "plain"}));
        rpc.response("m");
        let saved = settings_when(&settings, |s| s["defaultModel"] == "plain");
        assert_eq!(
            saved,
            json!({"someFutureKey": {"kept": true}, "defaultThinkingLevel": "off", "defaultProvider": "mock",
                "defaultModel": "plain"})
        );
        rpc.send(json!({"type": "cycle_thinking_level", "id": "c2"}));
        assert_eq!(rpc.response("c2")["data"], Value::Null, "a model that cannot reason");
        rpc.close();
    })
    .await;
}

/// `cycle_model` onto a reasoning model from one that cannot reason gives it the saved default
/// level (else pi's `medium`), as `set_model` does and pi's cycling does: not the `off` of the
/// model left, and one `thinking_level_changed`.
#[tokio::test(flavor = "multi_thread")]
async fn cycle_model_onto_a_reasoning_model_restores_its_thinking_level() {
    let server = MockServer::start(vec![]).await;
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    sandbox.write_models_json(
        &json!({"providers": {"mock": {"baseUrl": server.url("/v1"), "api": "openai-completions", "apiKey": "k",
            "models": [{"id": "think", "reasoning": true}, {"id": "plain"}]}}})
        .to_string(),
    );
    let mut rpc = Rpc::start_in(sandbox, &["--mode", "rpc", "--model", "mock/think"]);
    on_blocking(move || {
        rpc.send(json!({"type": "set_thinking_level", "id": "l", "level": "high"}));
        rpc.response("l");
        rpc.send(json!({"type": "set_model", "id": "m", "provider": "mock", "modelId": "plain"}));
        rpc.response("m");
        rpc.send(json!({"type": "get_state", "id": "s"}));
        assert_eq!(rpc.response("s")["data"]["thinkingLevel"], "off");
        let before = rpc.seen.len();
        rpc.send(json!({"type": "cycle_model", "id": "c"}));
        let cycled = rpc.response("c");
        assert_eq!(cycled["data"]["model"]["id"], "think");
        assert_eq!(cycled["data"]["thinkingLevel"], "high", "{cycled}");
        let changes: Vec<&Value> = rpc.seen[before..]
            .iter()
            .filter(|v| v["type"] == "thinking_level_changed")
            .collect();
        assert_eq!(changes, [&json!({"type": "thinking_level_changed", "level": "high"})]);
        rpc.close();
    })
    .await;
}

/// A command stopped by `abort_bash` has no exit code: pi leaves `exitCode` out of the response
/// and of the `bashExecution` message (not `null`).
#[tokio::test(flavor = "multi_thread")]
async fn abort_bash_leaves_the_exit_code_out() {
    let server = MockServer::start(vec![]).await;
    let mut rpc = Rpc::start(&server);
    on_blocking(move || {
        rpc.send(json!({"type": "bash", "id": "b", "command": "echo started; sleep 30"}));
        rpc.event("bash_execution_update");
        rpc.send(json!({"type": "abort_bash", "id": "a"}));
        // The stopped command may answer before `abort_bash` does.
        let (mut bash, mut aborted) = (Value::Null, false);
        while bash.is_null() || !aborted {
            let response = rpc.until("a response", |v| v["type"] == "response");
            match response["id"].as_str() {
                Some("b") => bash = response,
                Some("a") => aborted = true,
                _ => panic!("{response}"),
            }
        }
        assert_eq!(
            bash["data"],
            json!({"output": "started\n", "cancelled": true, "truncated": false})
        );
        let keys = |v: &Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
        assert_eq!(keys(&bash["data"]), ["output", "cancelled", "truncated"]);
        rpc.send(json!({"type": "get_messages", "id": "m"}));
        let messages = rpc.response("m")["data"]["messages"].clone();
        assert_eq!(
            keys(&messages[0]),
            ["role", "command", "output", "cancelled", "truncated", "timestamp"]
        );
        rpc.close();
    })
    .await;
}

/// The lines of a session file: its header, parsed, and the entries' lines as written.
fn session_lines(file: &std::path::Path) -> (Value, Vec<String>) {
    let text = std::fs::read_to_string(file).unwrap();
    let mut lines = text.lines().map(str::to_owned);
    let header = serde_json::from_str(&lines.next().unwrap()).unwrap();
    (header, lines.collect())
}

/// RPC `clone` as pi 0.73.1 answers it (recorded from pi with the same commands): before the
/// session file is written there is nothing to clone from (pi reports the leaf as not found);
/// afterwards `{"cancelled": false}`, no event, and the new session holds the branch's entries
/// line for line under a header naming the old file as `parentSession`; the model and the name
/// stay, the next prompt goes to the new file and the old one is left as it was.
#[tokio::test(flavor = "multi_thread")]
async fn clone_copies_the_branch_into_a_new_session_as_pi_does() {
    let server = MockServer::start(vec![openai::text("First"), openai::text("Second")]).await;
    let mut rpc = Rpc::start(&server);
    on_blocking(move || {
        rpc.send(json!({"id": "e", "type": "get_entries"}));
        let entries = rpc.response("e");
        let leaf = entries["data"]["entries"].as_array().unwrap().last().unwrap()["id"].clone();
        assert_eq!(entries["data"]["entries"][1]["type"], "thinking_level_change");
        rpc.send(json!({"id": "1", "type": "clone"}));
        assert_eq!(
            rpc.response("1").to_string(),
            format!(
                r#"{{"id":"1","type":"response","command":"clone","success":false,"error":"Entry {} not found"}}"#,
                leaf.as_str().unwrap()
            )
        );

        rpc.send(json!({"id": "2", "type": "prompt", "message": "hi"}));
        rpc.response("2");
        rpc.event("agent_end");
        rpc.send(json!({"id": "n", "type": "set_session_name", "name": "demo"}));
        rpc.response("n");
        rpc.send(json!({"id": "3", "type": "get_state"}));
        let before = rpc.response("3")["data"].clone();
        let original = PathBuf::from(before["sessionFile"].as_str().unwrap());
        let original_bytes = std::fs::read(&original).unwrap();

        rpc.send(json!({"id": "4", "type": "clone"}));
        assert_eq!(
            rpc.response("4").to_string(),
            r#"{"id":"4","type":"response","command":"clone","success":true,"data":{"cancelled":false}}"#
        );
        rpc.send(json!({"id": "5", "type": "get_state"}));
        // No event between the two responses.
        let next = rpc.until("a line", |_| true);
        assert_eq!(
            (&next["type"], &next["id"]),
            (&json!("response"), &json!("5")),
            "{next}"
        );
        let after = next["data"].clone();
        let cloned = PathBuf::from(after["sessionFile"].as_str().unwrap());
        assert_ne!(cloned, original);
        assert_eq!(cloned.parent(), original.parent());
        assert_ne!(after["sessionId"], before["sessionId"]);
        for key in ["model", "thinkingLevel", "sessionName", "messageCount"] {
            assert_eq!(after[key], before[key], "{key}");
        }

        // Written at once: the same entries, line for line, under a new header.
        let (old_header, old_entries) = session_lines(&original);
        let (header, entries) = session_lines(&cloned);
        assert_eq!(entries, old_entries);
        let keys: Vec<&String> = header.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["type", "version", "id", "timestamp", "cwd", "parentSession"]);
        assert_eq!(header["id"], after["sessionId"]);
        assert_eq!(header["cwd"], old_header["cwd"]);
        assert_eq!(header["parentSession"], original.to_str().unwrap());

        rpc.send(json!({"id": "6", "type": "get_messages"}));
        assert_eq!(rpc.response("6")["data"]["messages"].as_array().unwrap().len(), 2);
        rpc.send(json!({"id": "7", "type": "prompt", "message": "more"}));
        rpc.response("7");
        rpc.event("agent_end");
        let (_, entries) = session_lines(&cloned);
        assert_eq!(entries.len(), old_entries.len() + 2);
        assert_eq!(entries[..old_entries.len()], old_entries[..]);
        assert_eq!(std::fs::read(&original).unwrap(), original_bytes);
        rpc.close();
    })
    .await;
    // The second prompt went on from the cloned conversation.
    let requests = server.requests();
    let messages = requests[1].json()["messages"].clone();
    let roles: Vec<&Value> = messages.as_array().unwrap()[1..].iter().map(|m| &m["role"]).collect();
    assert_eq!(roles, ["user", "assistant", "user"], "{messages}");
}

#[tokio::test(flavor = "multi_thread")]
async fn export_html_writes_the_session_where_pi_writes_it() {
    let server = MockServer::start(vec![openai::text("The **answer**.")]).await;
    let mut rpc = Rpc::start(&server);
    let root = rpc._sandbox.root().to_path_buf();
    on_blocking(move || {
        // Before the first answer there is no session file yet (pi's message).
        rpc.send(json!({"id": "0", "type": "export_html"}));
        assert_eq!(
            rpc.response("0").to_string(),
            r#"{"id":"0","type":"response","command":"export_html","success":false,"error":"Nothing to export yet - start a conversation first"}"#
        );
        rpc.send(json!({"id": "1", "type": "prompt", "message": "hi"}));
        rpc.response("1");
        rpc.event("agent_end");
        rpc.send(json!({"id": "s", "type": "get_state"}));
        let file = PathBuf::from(rpc.response("s")["data"]["sessionFile"].as_str().unwrap());
        let stem = file.file_stem().unwrap().to_str().unwrap().to_owned();

        // Without a path: pi's file name, in the current directory.
        rpc.send(json!({"id": "2", "type": "export_html"}));
        let default_name = format!("pi-session-{stem}.html");
        assert_eq!(rpc.response("2")["data"], json!({"path": default_name}));
        let html = std::fs::read_to_string(root.join("project").join(&default_name)).unwrap();
        for needle in ["<strong>answer</strong>", "System Prompt", "Available Tools", "tool-item-name\">read<"] {
            assert!(html.contains(needle), "{needle} missing");
        }

        let out = root.join("out.html");
        rpc.send(json!({"id": "3", "type": "export_html", "outputPath": out}));
        assert_eq!(rpc.response("3")["data"], json!({"path": out}));
        assert!(std::fs::read_to_string(&out).unwrap().contains("<strong>answer</strong>"));
        rpc.close();
    })
    .await;

    let server = MockServer::start(vec![]).await;
    let mut rpc = Rpc::start_with(&server, &["--no-session"], |_| {});
    on_blocking(move || {
        rpc.send(json!({"id": "1", "type": "export_html"}));
        assert_eq!(rpc.response("1")["error"], "Cannot export in-memory session to HTML");
        rpc.close();
    })
    .await;
}
