//! The `pi` binary end to end, spawned as a process against a local OpenAI-compatible mock server
//! (no network): print mode, JSON mode, configuration, and bad inputs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Stdio;

use pi_test_support::sandbox::{Sandbox, text};
use pi_test_support::session_files::{self, assistant_message, entry, header, message, user_message};
use pi_test_support::{MockServer, Reply, openai};
use serde_json::{Value, json};

/// A sandbox for the `pi` binary with a sample project (a README), its `models.json` pointing at
/// `server` when there is one.
fn sandbox_with(server: Option<&MockServer>) -> Sandbox {
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    std::fs::write(sandbox.project.join("README.md"), "# Sample\n\nA sample project.\n").unwrap();
    if let Some(server) = server {
        sandbox.use_server(server);
    }
    sandbox
}

fn tool_session(project: &Path) -> Vec<Reply> {
    vec![
        openai::tool_calls(&[
            ("call-1", "read", json!({"path": "README.md"})),
            ("call-2", "bash", json!({"command": "echo from-bash"})),
        ]),
        openai::tool_calls(&[(
            "call-3",
            "write",
            json!({"path": project.join("NOTES.md"), "content": "notes\n"}),
        )]),
        openai::text("All done."),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn print_mode_runs_a_multi_turn_tool_session() {
    let sandbox = sandbox_with(None);
    let server = MockServer::start(tool_session(&sandbox.project)).await;
    sandbox.use_server(&server);
    let output = sandbox.run(&["-p", "Read the README and take notes"]).await;
    assert_eq!(text(&output.stderr), "");
    assert!(output.status.success());
    assert_eq!(text(&output.stdout), "All done.\n");
    assert_eq!(
        std::fs::read_to_string(sandbox.project.join("NOTES.md")).unwrap(),
        "notes\n"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].line, "POST /v1/chat/completions");
    let first = requests[0].json();
    let tools = openai::tool_names(&first);
    assert_eq!(
        tools,
        ["read", "bash", "edit", "write"],
        "pi's default tools on the wire"
    );
    assert_eq!(first["model"], openai::MODEL_ID);
    let second = requests[1].json();
    let tool_messages: Vec<&Value> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert_eq!(tool_messages.len(), 2);
    assert!(
        tool_messages[0]["content"]
            .as_str()
            .unwrap()
            .contains("A sample project.")
    );
    assert!(tool_messages[1]["content"].as_str().unwrap().contains("from-bash"));
}

#[tokio::test(flavor = "multi_thread")]
async fn piped_stdin_and_files_are_merged_into_the_prompt() {
    let server = MockServer::start(vec![openai::text("ok")]).await;
    let sandbox = sandbox_with(Some(&server));
    let output = sandbox
        .run_with_stdin(&["-p", "@README.md", "Review this"], "diff --git a b\n")
        .await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let body = server.requests()[0].json();
    let user = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap();
    let content = user["content"].to_string();
    assert!(content.contains("diff --git a b"), "{content}");
    assert!(content.contains("<file name=\\\"README.md\\\">"), "{content}");
    assert!(content.contains("Review this"), "{content}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_error_final_message_goes_to_stderr_with_exit_1() {
    let server = MockServer::start(vec![Reply::json(400, r#"{"error":{"message":"bad request body"}}"#)]).await;
    let sandbox = sandbox_with(Some(&server));
    let output = sandbox.run(&["-p", "hi"]).await;
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(text(&output.stdout), "");
    let stderr = text(&output.stderr);
    assert!(stderr.contains("400"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_inputs_fail_with_one_clear_line() {
    let server = MockServer::start(vec![]).await;
    let sandbox = sandbox_with(Some(&server));
    let cases: [(&[&str], &str, i32); 5] = [
        // A long flag pi does not know may be an extension's: refused (pi's words) once the
        // extensions loaded and none registered it.
        (
            &["--frobnicate", "-p", "hi"],
            "Error: Unknown option: --frobnicate\n",
            1,
        ),
        (&["-x"], "pi: unexpected argument '-x' (see pi --help)\n", 2),
        (
            &["-p", "--model", "no-such-model", "hi"],
            "pi: Unknown model: no-such-model (see pi --list-models)\n",
            1,
        ),
        (&["-p", "@missing.md"], "pi: File not found: missing.md\n", 1),
        (
            &["-p", "--thinking", "lots", "hi"],
            "pi: Unknown thinking level: lots (use off, minimal, low, medium, high, xhigh)\n",
            1,
        ),
    ];
    for (args, stderr, code) in cases {
        let output = sandbox.run(args).await;
        assert_eq!(text(&output.stderr), stderr, "{args:?}");
        assert_eq!(output.status.code(), Some(code), "{args:?}");
    }
    assert!(server.requests().is_empty(), "nothing was sent");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreadable_models_json_is_one_line() {
    let sandbox = sandbox_with(None);
    sandbox.write_models_json("{\"providers\": {\"x\": [}}");
    let output = sandbox.run(&["-p", "hi"]).await;
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("pi: ") && stderr.contains("models.json"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_model_pi_explains_how_to_configure_one() {
    let sandbox = sandbox_with(None);
    let output = sandbox.run(&["-p", "hi"]).await;
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    for needle in ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "models.json", "pi --demo"] {
        assert!(stderr.contains(needle), "{needle}: {stderr}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn version_help_and_list_models() {
    let server = MockServer::start(vec![]).await;
    let sandbox = sandbox_with(Some(&server));
    let output = sandbox.run(&["--version"]).await;
    assert_eq!(text(&output.stdout), format!("{}\n", env!("CARGO_PKG_VERSION")));
    let output = sandbox.run(&["--help"]).await;
    assert!(output.status.success());
    assert!(text(&output.stdout).contains("--list-models"));
    // pi 0.73.1's words for the theme flags.
    for line in [
        "Load a theme file or directory (can be used multiple times)",
        "Disable theme discovery and loading",
    ] {
        assert!(text(&output.stdout).contains(line), "{line}");
    }
    assert!(text(&output.stdout).contains("--theme <path>"));
    assert!(text(&output.stdout).contains("--no-themes"));
    let output = sandbox.run(&["--list-models"]).await;
    assert_eq!(
        text(&output.stdout),
        "provider  model       context  max-out  thinking  images\nmock      mock-model  128K     16.4K    no        no    \n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_demo_runs_offline() {
    let sandbox = sandbox_with(None);
    let output = sandbox.run(&["--demo"]).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    for needle in [
        "→ read {\"path\":\"src/greet.ts\"}\n→ read {\"path\":\"src/math.ts\"}",
        "→ edit ",
        "Applied 2 replacements in 2 files.",
        "Discarded: AST Edit: 1 replacement in 1 file.",
        "test: ok (done so far: format → typecheck → test)",
    ] {
        assert!(stdout.contains(needle), "{needle}:\n{stdout}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_are_written_and_continued() {
    let server = MockServer::start(vec![openai::text("First answer."), openai::text("Second answer.")]).await;
    let sandbox = sandbox_with(Some(&server));
    let output = sandbox.run(&["-p", "First question"]).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let files = sandbox.session_files();
    assert_eq!(files.len(), 1, "{files:?}");
    let dir_name = files[0]
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(dir_name.starts_with("--") && dir_name.ends_with("--"), "{dir_name}");
    let lines = session_files::read(&files[0]);
    assert_eq!(lines[0]["type"], "session");
    assert_eq!(lines[0]["version"], 3);
    assert_eq!(lines[1]["type"], "model_change");
    assert_eq!(lines[2]["type"], "thinking_level_change");
    assert_eq!(lines[3]["message"]["role"], "user");
    assert_eq!(lines[4]["message"]["role"], "assistant");
    assert_eq!(lines[4]["parentId"], lines[3]["id"]);

    let output = sandbox.run(&["-p", "-c", "Second question"]).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "Second answer.\n");
    assert_eq!(sandbox.session_files().len(), 1, "continued in the same file");
    let second = server.requests()[1].json();
    let contents: Vec<String> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| m["content"].to_string())
        .collect();
    assert_eq!(contents.len(), 3, "{contents:?}");
    assert!(contents[0].contains("First question") && contents[1].contains("First answer."));
}

#[tokio::test(flavor = "multi_thread")]
async fn continue_names_a_newer_session_file_it_skipped_because_its_header_is_damaged() {
    let server = MockServer::start(vec![openai::text("First answer."), openai::text("Second answer.")]).await;
    let sandbox = sandbox_with(Some(&server));
    let output = sandbox.run(&["-p", "First question"]).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let files = sandbox.session_files();
    // A newer file of the same directory whose first line is not a session header.
    let damaged = files[0].with_file_name("2099-01-01T00-00-00-000Z_damaged.jsonl");
    std::fs::write(&damaged, "{torn\n").unwrap();

    let output = sandbox.run(&["-p", "-c", "Second question"]).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "Second answer.\n");
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "pi: warning: {}:1: no valid session header",
            damaged.display()
        )) && stderr.contains("skipped by --continue"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_session_path_under_home_is_created_where_it_names() {
    let server = MockServer::start(vec![openai::text("Noted.")]).await;
    let sandbox = sandbox_with(Some(&server));
    let output = sandbox.run(&["-p", "--session", "~/kept/fresh.jsonl", "hi"]).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    std::fs::create_dir_all(sandbox.home.join("kept")).unwrap();
    let file = sandbox.home.join("kept/fresh.jsonl");
    assert!(
        file.is_file(),
        "~ is the home directory, not a folder named ~ in the project"
    );
    assert!(!sandbox.project.join("~").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn no_session_writes_nothing() {
    let server = MockServer::start(vec![openai::text("ok")]).await;
    let sandbox = sandbox_with(Some(&server));
    let output = sandbox.run(&["-p", "--no-session", "hi"]).await;
    assert!(output.status.success());
    assert!(sandbox.session_files().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_file_with_garbage_lines_loads_with_warnings() {
    let server = MockServer::start(vec![openai::text("Still here.")]).await;
    let sandbox = sandbox_with(Some(&server));
    let file = sandbox.project.join("old.jsonl");
    let header = header(
        "0e7c5a52-0000-4000-8000-000000000001",
        "2026-01-01T00:00:00.000Z",
        &sandbox.project,
    );
    let user = message(
        "aaaa0001",
        None,
        "2026-01-01T00:00:01.000Z",
        user_message("Remember the word teal.", 1),
    );
    let answer = message(
        "aaaa0002",
        Some("aaaa0001"),
        "2026-01-01T00:00:02.000Z",
        assistant_message("Teal it is.", "openai-completions", "mock", "mock-model", 2),
    );
    std::fs::write(
        &file,
        format!("{header}\n{user}\nthis line is garbage\n{answer}\n{{\"type\":\"mess"),
    )
    .unwrap();
    let output = sandbox.run(&["-p", "--session", "old.jsonl", "Which word?"]).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("old.jsonl:3"), "{stderr}");
    assert!(stderr.contains("old.jsonl:5"), "{stderr}");
    let body = server.requests()[0].json().to_string();
    assert!(
        body.contains("Remember the word teal.") && body.contains("Teal it is."),
        "{body}"
    );
    let reloaded = std::fs::read_to_string(&file).unwrap();
    assert!(reloaded.contains("Still here."), "the new answer was appended");
    assert!(reloaded.contains("this line is garbage"), "nothing was thrown away");
}

/// Replaces the values that change from run to run (times, ids, paths) by placeholders.
fn normalise(value: &mut Value, project: &str) {
    match value {
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                match key.as_str() {
                    "timestamp" => *item = json!("<timestamp>"),
                    "id" | "parentId" if item.is_string() => *item = json!("<id>"),
                    "responseId" => *item = json!("<response-id>"),
                    _ => normalise(item, project),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| normalise(item, project)),
        Value::String(text) if text.contains(project) => *text = text.replace(project, "<project>"),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn json_mode_prints_the_header_then_every_event() {
    let sandbox = sandbox_with(None);
    let server = MockServer::start(vec![
        openai::tool_calls(&[("call-1", "read", json!({"path": "README.md"}))]),
        openai::text("It is a sample."),
    ])
    .await;
    sandbox.use_server(&server);
    let output = sandbox.run(&["--mode", "json", "What is this project?"]).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let project = sandbox.project.display().to_string();
    let lines: Vec<String> = text(&output.stdout)
        .lines()
        .map(|line| {
            let mut value: Value = serde_json::from_str(line).unwrap();
            normalise(&mut value, &project);
            value.to_string()
        })
        .collect();
    assert!(lines[0].starts_with("{\"type\":\"session\""), "{}", lines[0]);
    // pi 0.73.1's `message_update`: the message so far as `partial` and as `message`, no `usage`.
    for line in lines.iter().filter(|l| l.starts_with("{\"type\":\"message_update\"")) {
        let value: Value = serde_json::from_str(line).unwrap();
        assert_eq!(value["assistantMessageEvent"]["partial"], value["message"], "{line}");
        assert!(value.get("usage").is_none(), "{line}");
    }
    insta::assert_snapshot!("json_mode_events", lines.join("\n"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pi_models_json_works_unchanged_with_provider_and_model_flags() {
    let server = MockServer::start(vec![openai::text("Hello from the local server.")]).await;
    let sandbox = sandbox_with(None);
    // A models.json as pi users write it for a local OpenAI-compatible server.
    let models = json!({
        "providers": {
            "llamacpp": {
                "baseUrl": server.url("/v1"),
                "api": "openai-completions",
                "apiKey": "none",
                "models": [{"id": "qwen2.5-coder-7b", "name": "Qwen 2.5 Coder 7B", "contextWindow": 32768, "maxTokens": 8192}]
            }
        }
    });
    sandbox.write_models_json(&models.to_string());
    let output = sandbox
        .run(&[
            "-p",
            "--provider",
            "llamacpp",
            "--model",
            "qwen2.5-coder-7b",
            "--tools",
            "read,bash,edit,write,grep,find,ls",
            "Hello",
        ])
        .await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "Hello from the local server.\n");
    let body = server.requests()[0].json();
    assert_eq!(body["model"], "qwen2.5-coder-7b");
    let tools = serde_json::to_string_pretty(&body["tools"]).unwrap();
    insta::assert_snapshot!("wire_tools", tools);
    // The bytes pi 0.73.1 sent for the same `--tools` (see `crates/test-support/data/pi-0.73.1`).
    assert_eq!(
        serde_json::to_string(&body["tools"]).unwrap(),
        serde_json::to_string(&pi_test_support::pi_recorded::body("tools-all")["tools"]).unwrap()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_thinking_flag_beats_the_level_recorded_in_a_continued_session() {
    let server = MockServer::start(vec![openai::text("Thought about it.")]).await;
    let sandbox = sandbox_with(None);
    let models = json!({"providers": {"mock": {
        "baseUrl": server.url("/v1"), "api": "openai-completions", "apiKey": "mock-key",
        "models": [{"id": "thinker", "reasoning": true}]
    }}});
    sandbox.write_models_json(&models.to_string());
    let session = sandbox.project.join("earlier.jsonl");
    let lines = [
        header(
            "5d1c2b3a-0000-4000-8000-000000000001",
            "2026-11-01T10:00:00.000Z",
            &sandbox.project,
        ),
        entry(
            "model_change",
            "a0000001",
            None,
            "2026-11-01T10:00:01.000Z",
            json!({"provider": "mock", "modelId": "thinker"}),
        ),
        entry(
            "thinking_level_change",
            "a0000002",
            Some("a0000001"),
            "2026-11-01T10:00:02.000Z",
            json!({"thinkingLevel": "high"}),
        ),
    ];
    std::fs::write(&session, session_files::jsonl(&lines)).unwrap();
    let path = session.to_string_lossy().into_owned();
    let output = sandbox
        .run(&["-p", "--session", &path, "--thinking", "low", "Think a little"])
        .await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(server.requests()[0].json()["reasoning_effort"], "low");
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_stops_the_run_cleanly_and_a_second_one_or_an_idle_one_exits() {
    let slow = openai::text("A slow answer that takes its time to stream, chunk after chunk after chunk.")
        .paced(std::time::Duration::from_millis(300));
    let server = MockServer::start(vec![slow]).await;
    let sandbox = sandbox_with(Some(&server));
    let mut command = sandbox.command(&["-p", "Tell me slowly"]);
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = command.spawn().unwrap();
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    // Wait (without a time budget) until the request is being answered.
    while server.requests().is_empty() {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let output = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert_eq!(text(&output.stderr), "Request was aborted\n");
    // The session file keeps what finished: the prompt and the aborted answer.
    let files = sandbox.session_files();
    assert_eq!(files.len(), 1);
    let saved = std::fs::read_to_string(&files[0]).unwrap();
    assert!(
        saved.contains("Tell me slowly") && saved.contains("\"stopReason\":\"aborted\""),
        "{saved}"
    );

    // An idle RPC process exits on SIGTERM with 128 + 15.
    let mut command = sandbox.command(&["--mode", "rpc"]);
    command.stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    let stdin = child.stdin.take();
    {
        use std::io::{BufRead, Write};
        let mut stdin = stdin.unwrap();
        writeln!(stdin, "{{\"type\":\"get_state\",\"id\":1}}").unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.contains("\"command\":\"get_state\""), "{line}");
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
        let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
            .await
            .unwrap();
        assert_eq!(status.code(), Some(143));
        drop(stdin);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn custom_tool_load_errors_are_reported_and_pi_goes_on() {
    let server = MockServer::start(vec![openai::text("Still answering.")]).await;
    let sandbox = sandbox_with(Some(&server));
    let clash = sandbox.project.join("clash");
    std::fs::create_dir_all(&clash).unwrap();
    std::fs::write(
        clash.join("tool.json"),
        r#"{"command": "python3", "args": ["-c", "import sys, json\nfor line in sys.stdin:\n    m = json.loads(line)\n    print(json.dumps({'jsonrpc': '2.0', 'id': m.get('id'), 'result': {'tools': [{'name': 'read', 'description': 'x', 'parameters': {'type': 'object'}}]} if m['method'] == 'initialize' else None}), flush=True)"]}"#,
    )
    .unwrap();
    let output = sandbox
        .run(&["-p", "--tool", "no-such-tool", "--tool", "clash", "hi"])
        .await;
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "Still answering.\n");
    let stderr = text(&output.stderr);
    let project = sandbox.project.display().to_string();
    assert!(
        stderr.contains(&format!(
            "pi: custom tool {project}/no-such-tool: Tool path not found: {project}/no-such-tool"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "pi: custom tool {project}/clash: Tool name \"read\" conflicts with existing tool"
        )),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn pi_log_writes_a_debug_log_in_the_agent_directory_without_the_api_key() {
    const KEY: &str = "sk-pi-log-test-0123456789abcdef";
    let server = MockServer::start(vec![
        openai::text("Not logged."),
        // A retry (the body names the key, as some providers' errors do), then the answer.
        Reply::json(500, &format!(r#"{{"error":"overloaded, key {KEY}"}}"#)).header("retry-after", "0"),
        openai::text("Logged."),
    ])
    .await;
    let sandbox = sandbox_with(Some(&server));
    let models = openai::models_json(&server.url("/v1")).replace("mock-key", KEY);
    std::fs::write(sandbox.agent_dir().join("models.json"), models).unwrap();
    let log = sandbox.agent_dir().join("logs/pi.log");

    // Without PI_LOG (or RUST_LOG) nothing is written.
    let output = sandbox.run(&["-p", "hi"]).await;
    assert_eq!(text(&output.stdout), "Not logged.\n", "{}", text(&output.stderr));
    assert!(!log.exists());

    let mut command = sandbox.command(&["-p", "hi"]);
    command.env("PI_LOG", "debug");
    let output = pi_test_support::sandbox::output(command).await;
    assert_eq!(text(&output.stderr), "", "the log never goes to the terminal");
    assert_eq!(text(&output.stdout), "Logged.\n");
    let written = std::fs::read_to_string(&log).unwrap();
    assert!(
        written.lines().any(|line| line.contains("provider_request{")
            && line.contains("model=")
            && line.contains("host=127.0.0.1:")),
        "{written}"
    );
    assert!(
        written.contains("status=500") && written.contains("retrying"),
        "{written}"
    );
    assert!(!written.contains(KEY), "{written}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let authorization = requests[2].headers.iter().find(|(name, _)| name == "authorization");
    assert_eq!(
        authorization.map(|(_, value)| value.as_str()),
        Some(format!("Bearer {KEY}").as_str()),
        "the key was used"
    );
}

/// A project with `app.js` and the replies of a model that stages an `ast_edit` preview, then
/// does `after` instead of calling `resolve`.
fn unresolved_preview(sandbox: &Sandbox, after: Vec<Reply>) -> Vec<Reply> {
    std::fs::write(sandbox.project.join("app.js"), "var x = 1;\n").unwrap();
    let mut replies = vec![openai::tool_calls(&[(
        "call-1",
        "ast_edit",
        json!({"ops": [{"pat": "var $A = $B", "out": "let $A = $B"}], "paths": ["app.js"], "lang": "javascript"}),
    )])];
    replies.extend(after);
    replies
}

#[tokio::test(flavor = "multi_thread")]
async fn print_mode_says_on_stderr_that_a_preview_was_left_unapplied() {
    let sandbox = sandbox_with(None);
    // Forced to resolve, the model answers in text: the run ends with the preview pending.
    let server = MockServer::start(unresolved_preview(&sandbox, vec![openai::text("I staged it.")])).await;
    sandbox.use_server(&server);
    let output = sandbox.run(&["-p", "--tools", "ast_edit", "Use let"]).await;
    assert_eq!(text(&output.stdout), "I staged it.\n");
    assert_eq!(
        text(&output.stderr),
        "pi: not applied: AST Edit: 1 replacement in 1 file (the preview was still pending when pi exited)\n"
    );
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(
        std::fs::read_to_string(sandbox.project.join("app.js")).unwrap(),
        "var x = 1;\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn print_mode_reports_forcing_that_stopped_and_the_preview_left_unapplied() {
    let sandbox = sandbox_with(None);
    let ls = |id: &str| openai::tool_calls(&[(id, "ls", json!({}))]);
    let replies = unresolved_preview(
        &sandbox,
        vec![ls("call-2"), ls("call-3"), ls("call-4"), openai::text("Left it.")],
    );
    let server = MockServer::start(replies).await;
    sandbox.use_server(&server);
    let output = sandbox.run(&["-p", "--tools", "ast_edit,ls", "Use let"]).await;
    assert_eq!(text(&output.stdout), "Left it.\n");
    assert_eq!(
        text(&output.stderr),
        "pi: The model did not call resolve in 3 forced turns; stopped forcing it. Still pending: AST Edit: 1 \
         replacement in 1 file\n\
         pi: not applied: AST Edit: 1 replacement in 1 file (the preview was still pending when pi exited)\n"
    );
    assert_eq!(output.status.code(), Some(3));
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    let forced: Vec<bool> = requests.iter().map(|r| r.json()["tool_choice"].is_object()).collect();
    assert_eq!(forced, [false, true, true, true, false]);
}

#[tokio::test(flavor = "multi_thread")]
async fn json_mode_exits_3_with_a_preview_left_unapplied_and_keeps_stderr_clean() {
    let sandbox = sandbox_with(None);
    let server = MockServer::start(unresolved_preview(&sandbox, vec![openai::text("I staged it.")])).await;
    sandbox.use_server(&server);
    let output = sandbox.run(&["--mode", "json", "--tools", "ast_edit", "Use let"]).await;
    assert_eq!(text(&output.stderr), "");
    assert_eq!(output.status.code(), Some(3));
    let stdout = text(&output.stdout);
    assert!(stdout.contains("\"type\":\"pending_action\""), "{stdout}");
}

/// Beyond pi: with `--sandbox` the model's `bash` cannot write outside the project (a directory
/// outside the temp directories, which the sandbox lets everyone write); without it, it can.
/// Needs a kernel with Landlock.
#[tokio::test(flavor = "multi_thread")]
async fn the_sandbox_flag_keeps_bash_from_writing_outside_the_project() {
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    if !pi_test_support::landlock::available(pi_tools::Sandbox::new(outside.path()).check()) {
        return;
    }
    let target = outside.path().join("escaped.txt");
    let command = json!({"command": format!("echo x > '{}'", target.display())});
    for (flags, escapes) in [(&["--sandbox"][..], false), (&[][..], true)] {
        let server = MockServer::start(vec![
            openai::tool_calls(&[("call-1", "bash", command.clone())]),
            openai::text("Done."),
        ])
        .await;
        let sandbox = sandbox_with(Some(&server));
        let mut args = vec!["-p", "Write it"];
        args.extend_from_slice(flags);
        let output = sandbox.run(&args).await;
        assert_eq!(text(&output.stderr), "");
        assert_eq!(text(&output.stdout), "Done.\n");
        let second = server.requests()[1].json();
        let tool = second["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "tool")
            .unwrap()
            .clone();
        let result = tool["content"].as_str().unwrap();
        assert_eq!(target.exists(), escapes, "{result}");
        if escapes {
            assert_eq!(result, "(no output)");
        } else {
            assert!(result.contains("Permission denied"), "{result}");
            assert!(result.ends_with("Command exited with code 1"), "{result}");
        }
    }
}
