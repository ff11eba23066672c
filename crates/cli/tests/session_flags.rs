//! Session files and command-line flags as pi 0.73.1 has them: the first `model_change` /
//! `thinking_level_change` entries of a new session, `-c` bringing them back, where sessions are
//! stored (`--session-dir`, `PI_CODING_AGENT_SESSION_DIR`, `sessionDir`), `--fork`, `--models` /
//! `enabledModels`, the short flags, repeated `--append-system-prompt`, and the package
//! subcommands that must never reach the model.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use pi_test_support::sandbox::{Sandbox, text};
use pi_test_support::session_files;
use pi_test_support::{MockServer, openai};
use serde_json::{Value, json};

/// A sandbox whose `models.json` has three models at `server`: `thinker` (reasoning), `plain`
/// and `other`.
fn sandbox(server: &MockServer) -> Sandbox {
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    let models = json!({"providers": {"mock": {
        "baseUrl": server.url("/v1"), "api": "openai-completions", "apiKey": "mock-key",
        "models": [{"id": "thinker", "reasoning": true}, {"id": "plain"}, {"id": "other"}]
    }}});
    sandbox.write_models_json(&models.to_string());
    sandbox
}

fn write_settings(sandbox: &Sandbox, settings: &Value) {
    std::fs::write(sandbox.agent_dir().join("settings.json"), settings.to_string()).unwrap();
}

fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "jsonl"));
    files.sort();
    files
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_session_records_its_model_then_thinking_level_and_continue_restores_both() {
    let server = MockServer::start(vec![openai::text("First."), openai::text("Second.")]).await;
    let sandbox = sandbox(&server);
    // The default model is another one: `-c` must come back to the session's, at its level.
    write_settings(&sandbox, &json!({"defaultProvider": "mock", "defaultModel": "plain"}));
    let output = sandbox
        .run(&["-p", "--model", "mock/thinker", "--thinking", "high", "First question"])
        .await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let files = sandbox.session_files();
    assert_eq!(files.len(), 1);
    let lines = session_files::read(&files[0]);
    // pi 0.73.1 writes exactly these first entries, in this order.
    assert_eq!(lines[1]["type"], "model_change");
    assert_eq!(lines[1]["parentId"], Value::Null);
    assert_eq!(lines[1]["provider"], "mock");
    assert_eq!(lines[1]["modelId"], "thinker");
    assert_eq!(lines[2]["type"], "thinking_level_change");
    assert_eq!(lines[2]["parentId"], lines[1]["id"]);
    assert_eq!(lines[2]["thinkingLevel"], "high");
    assert_eq!(lines[3]["message"]["role"], "user");
    assert_eq!(lines[3]["parentId"], lines[2]["id"]);

    let output = sandbox.run(&["-p", "-c", "Second question"]).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let second = server.requests()[1].json();
    assert_eq!(second["model"], "thinker");
    assert_eq!(second["reasoning_effort"], "high");
    // Restored from the file, so nothing new is recorded about them.
    let lines = session_files::read(&files[0]);
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "session",
            "model_change",
            "thinking_level_change",
            "message",
            "message",
            "message",
            "message"
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_continued_session_without_a_thinking_entry_records_the_level_in_force() {
    let server = MockServer::start(vec![openai::text("Again.")]).await;
    let sandbox = sandbox(&server);
    let file = sandbox.project.join("old.jsonl");
    let lines = [
        session_files::header(
            "0e7c5a52-0000-4000-8000-000000000009",
            "2026-01-01T00:00:00.000Z",
            &sandbox.project,
        ),
        session_files::message(
            "b0000001",
            None,
            "2026-01-01T00:00:01.000Z",
            session_files::user_message("Hi", 1),
        ),
        session_files::message(
            "b0000002",
            Some("b0000001"),
            "2026-01-01T00:00:02.000Z",
            session_files::assistant_message("Hello", "openai-completions", "mock", "thinker", 2),
        ),
    ];
    std::fs::write(&file, session_files::jsonl(&lines)).unwrap();
    let path = file.to_string_lossy().into_owned();
    let output = sandbox
        .run(&["-p", "--session", &path, "--model", "mock/thinker:low", "More"])
        .await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let written = session_files::read(&file);
    assert_eq!(written[3]["type"], "thinking_level_change");
    assert_eq!(written[3]["parentId"], "b0000002");
    assert_eq!(written[3]["thinkingLevel"], "low");
    assert_eq!(written[4]["message"]["role"], "user");
}

#[tokio::test(flavor = "multi_thread")]
async fn switching_to_a_session_without_a_thinking_entry_records_one() {
    let server = MockServer::start(vec![]).await;
    let sandbox = sandbox(&server);
    let file = sandbox.project.join("older.jsonl");
    let lines = [
        session_files::header(
            "0e7c5a52-0000-4000-8000-00000000000a",
            "2026-01-01T00:00:00.000Z",
            &sandbox.project,
        ),
        session_files::message(
            "c0000001",
            None,
            "2026-01-01T00:00:01.000Z",
            session_files::user_message("Hi", 1),
        ),
        session_files::message(
            "c0000002",
            Some("c0000001"),
            "2026-01-01T00:00:02.000Z",
            session_files::assistant_message("Hello", "openai-completions", "mock", "plain", 2),
        ),
    ];
    std::fs::write(&file, session_files::jsonl(&lines)).unwrap();
    let command = json!({"type": "switch_session", "id": "sw", "sessionPath": file}).to_string() + "\n";
    let output = sandbox
        .run_with_stdin(&["--mode", "rpc", "--no-session", "--model", "mock/plain"], &command)
        .await;
    assert!(
        text(&output.stdout).contains("\"success\":true"),
        "{}",
        text(&output.stdout)
    );
    let written = session_files::read(&file);
    assert_eq!(written.len(), 4, "{written:?}");
    assert_eq!(written[3]["type"], "thinking_level_change");
    assert_eq!(written[3]["parentId"], "c0000002");
    assert_eq!(written[3]["thinkingLevel"], "off");
}

#[tokio::test(flavor = "multi_thread")]
async fn session_dir_comes_from_the_flag_then_the_environment_then_the_setting() {
    let server = MockServer::start((0..4).map(|i| openai::text(&format!("Answer {i}."))).collect()).await;
    let sandbox = sandbox(&server);
    write_settings(&sandbox, &json!({"sessionDir": "~/from-settings"}));

    // The setting, `~` expanded; the files sit directly in it.
    let output = sandbox.run(&["-p", "one"]).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let from_settings = sandbox.home.join("from-settings");
    assert_eq!(jsonl_files(&from_settings).len(), 1);
    assert!(sandbox.session_files().is_empty(), "nothing under ~/.pi/agent/sessions");

    // `-c` looks there too.
    let output = sandbox.run(&["-p", "-c", "two"]).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(jsonl_files(&from_settings).len(), 1);
    let second = server.requests()[1].json();
    assert!(second["messages"].to_string().contains("Answer 0."), "{second}");

    // The environment variable beats the setting (a relative path is the project's).
    let mut command = sandbox.command(&["-p", "three"]);
    command.env("PI_CODING_AGENT_SESSION_DIR", "env-sessions");
    let output = pi_test_support::sandbox::output(command).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(jsonl_files(&sandbox.project.join("env-sessions")).len(), 1);

    // The flag beats both.
    let mut command = sandbox.command(&["-p", "--session-dir", "flag-sessions", "four"]);
    command.env("PI_CODING_AGENT_SESSION_DIR", "env-sessions");
    let output = pi_test_support::sandbox::output(command).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(jsonl_files(&sandbox.project.join("flag-sessions")).len(), 1);
    assert_eq!(jsonl_files(&sandbox.project.join("env-sessions")).len(), 1);
    assert_eq!(jsonl_files(&from_settings).len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn fork_continues_a_copy_of_a_session_in_a_new_file() {
    let server = MockServer::start(vec![openai::text("Original."), openai::text("Forked.")]).await;
    let sandbox = sandbox(&server);
    let output = sandbox.run(&["-p", "--model", "mock/plain", "Start"]).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let original = sandbox.session_files().remove(0);
    let before = std::fs::read_to_string(&original).unwrap();
    let id = session_files::read(&original)[0]["id"].as_str().unwrap().to_owned();

    let output = sandbox.run(&["-p", "--fork", &id[..8], "Go on"]).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "Forked.\n");
    let files = sandbox.session_files();
    assert_eq!(files.len(), 2);
    let fork = files.into_iter().find(|f| *f != original).unwrap();
    assert_eq!(
        std::fs::read_to_string(&original).unwrap(),
        before,
        "the source is untouched"
    );
    let lines = session_files::read(&fork);
    assert_ne!(lines[0]["id"], id);
    assert_eq!(lines[0]["parentSession"], original.to_string_lossy().as_ref());
    let source = session_files::read(&original);
    assert_eq!(
        lines[1..source.len()],
        source[1..],
        "the entries are copied as they are"
    );
    assert_eq!(lines.len(), source.len() + 2);
    let request = server.requests()[1].json();
    assert!(request["messages"].to_string().contains("Original."), "{request}");

    let output = sandbox
        .run(&["-p", "--fork", &id[..8], "-c", "--no-session", "x"])
        .await;
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output.stderr),
        "pi: --fork cannot be combined with --continue, --no-session\n"
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn models_scope_picks_the_first_model_and_limits_cycling() {
    let server = MockServer::start(vec![openai::text("Scoped.")]).await;
    let sandbox = sandbox(&server);
    let output = sandbox
        .run(&["-p", "--no-session", "--models", "oth*,thinker:high,nothing-here", "hi"])
        .await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(server.requests()[0].json()["model"], "other");
    assert_eq!(
        text(&output.stderr),
        "pi: warning: No models match pattern \"nothing-here\"\n"
    );

    // `enabledModels` when there is no flag; RPC `cycle_model` goes through the scope only, with
    // each pattern's thinking level.
    write_settings(&sandbox, &json!({"enabledModels": ["thinker:high", "plain"]}));
    let commands = "{\"type\":\"cycle_model\",\"id\":\"1\"}\n{\"type\":\"cycle_model\",\"id\":\"2\"}\n";
    let output = sandbox
        .run_with_stdin(&["--mode", "rpc", "--no-session"], commands)
        .await;
    let replies: Vec<Value> = text(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &Value| v["type"] == "response")
        .collect();
    let cycled: Vec<(String, String, bool)> = replies
        .iter()
        .map(|r| {
            let data = &r["data"];
            (
                data["model"]["id"].as_str().unwrap().to_owned(),
                data["thinkingLevel"].as_str().unwrap().to_owned(),
                data["isScoped"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        cycled,
        [
            ("plain".to_owned(), "off".to_owned(), true),
            ("thinker".to_owned(), "high".to_owned(), true)
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn short_flags_and_repeated_append_system_prompt() {
    let server = MockServer::start(vec![openai::text("ok")]).await;
    let sandbox = sandbox(&server);
    std::fs::write(sandbox.project.join("extra.md"), "From a file.").unwrap();
    let output = sandbox
        .run(&[
            "-p",
            "-nt",
            "-nc",
            "-ne",
            "-ns",
            "-np",
            "--verbose",
            "--offline",
            "--append-system-prompt",
            "First addition.",
            "--append-system-prompt",
            "extra.md",
            "hi",
        ])
        .await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let request = server.requests()[0].json();
    assert!(
        request
            .get("tools")
            .is_none_or(|t| t.as_array().is_some_and(Vec::is_empty)),
        "{request}"
    );
    let system = request["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(system.contains("\n\nFirst addition.\n\nFrom a file."), "{system}");
}

#[tokio::test(flavor = "multi_thread")]
async fn package_subcommands_never_reach_the_model() {
    let server = MockServer::start(vec![openai::text("should not be asked")]).await;
    let sandbox = sandbox(&server);
    // Each is a package command (`tests/packages.rs`); none of these needs npm, git or a network.
    for (command, code, stream) in [
        (&["install"][..], 1, "Missing install source.\n"),
        (&["remove", "x"], 1, "No matching package found for x\n"),
        (&["uninstall", "x"], 1, "No matching package found for x\n"),
        (&["update", "x"], 1, "Error: No matching package found for x\n"),
        (&["list"], 0, "No packages installed.\n"),
        (&["config"], 0, "No package resources.\n"),
    ] {
        let output = sandbox.run(command).await;
        assert_eq!(output.status.code(), Some(code), "{command:?}");
        let shown = if code == 0 { &output.stdout } else { &output.stderr };
        assert!(text(shown).starts_with(stream), "{command:?}: {}", text(shown));
    }
    assert!(server.requests().is_empty());
    assert!(sandbox.session_files().is_empty());
}
