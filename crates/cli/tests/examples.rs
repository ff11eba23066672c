//! The example custom tools (`examples/custom-tools/`) from `pi -p` with a scripted model (a mock
//! OpenAI-compatible server on 127.0.0.1), in each of their forms: native Rust (the `pi` command
//! run in-process with the example factories, exactly as `examples/pi_native_tools.rs` runs it), a
//! process speaking the stdio protocol (`tool.json`), and pi's TypeScript (`index.ts`, through the
//! Node host; skipped with a printed reason when no Node ≥ 20.6 is installed, unless
//! `PI_REQUIRE_NODE` is set — `.ci/run` installs one and sets it).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../examples/custom-tools/batch-rename-preview/native.rs"]
#[allow(dead_code)]
mod batch_rename_preview;
#[path = "../../../examples/custom-tools/hello/native.rs"]
#[allow(dead_code)]
mod hello;
#[path = "../../../examples/custom-tools/tic-tac-toe/native.rs"]
#[allow(dead_code)]
mod tic_tac_toe;
#[path = "../../../examples/custom-tools/todo/native.rs"]
#[allow(dead_code)]
mod todo;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use pi_agent_core::faux::FauxModel;
use pi_agent_core::{AgentMessage, ToolContext, ToolExecutionMode, ToolResult};
use pi_cli::modes::interactive::ToolBlock;
use pi_cli::modes::interactive::{RenderContext, Renderers, render_tool};
use pi_cli::{Args, Io, RunOptions, run_with};
use pi_coding_agent::App;
use pi_coding_agent::custom_tools::node::{NodeError, check_version, find_node, node_version};
use pi_coding_agent::custom_tools::{
    CustomTool, CustomTools, LoadedTool, NamedFactory, SessionReason, ToolApi, ToolKind,
};
use pi_coding_agent::{AgentSession, SessionOptions};
use pi_session_store::{EntryKind, SessionManager};
use pi_test_support::sandbox::{Sandbox, output, text};
use pi_test_support::{MockServer, Reply, openai, scripted, tools};
use pi_tui::Theme;
use pi_tui::testing::plain;
use serde_json::{Value, json};

/// How an example tool is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Native,
    Process,
    TypeScript,
}

const FORMS: [Form; 3] = [Form::Native, Form::Process, Form::TypeScript];

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/custom-tools")
}

/// Reads an environment variable (the process's, or a fixed map in the tests of [`skip_in`]).
type Env = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

fn system_env() -> Env {
    Arc::new(|name: &str| std::env::var(name).ok())
}

/// Whether the `node` pi would run (`PI_NODE`, else `node` on `PATH`, read through `env`) can run
/// the TypeScript examples, or why not — with the checks `pi` itself makes.
async fn node_for_typescript(env: Env) -> Result<(), NodeError> {
    let entry = examples_dir().join("hello").join("index.ts");
    let (lookup, path) = (env.clone(), entry.clone());
    let node = tokio::task::spawn_blocking(move || find_node(&*lookup, &path))
        .await
        .unwrap()?;
    let version = node_version(&node).await?;
    check_version(version, &node, &entry)
}

/// Whether to skip `form` here: the TypeScript form without a Node new enough (printing why) —
/// unless `PI_REQUIRE_NODE` is set in `env` (`.ci/run` sets it), which fails the test instead.
async fn skip_in(form: Form, env: Env) -> bool {
    if form != Form::TypeScript {
        return false;
    }
    match node_for_typescript(env.clone()).await {
        Ok(()) => false,
        Err(why) => {
            assert!(
                env("PI_REQUIRE_NODE").is_none(),
                "PI_REQUIRE_NODE is set, but the TypeScript form cannot run: {why}"
            );
            println!("skipped: TypeScript form ({why})");
            true
        }
    }
}

async fn skip(form: Form) -> bool {
    skip_in(form, system_env()).await
}

/// `env` holding `pairs` only.
fn env_of(pairs: &[(&str, &str)]) -> Env {
    let map: std::collections::HashMap<String, String> =
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    Arc::new(move |name: &str| map.get(name).cloned())
}

#[tokio::test(flavor = "multi_thread")]
async fn without_node_the_typescript_form_is_skipped_unless_node_is_required() {
    let missing = [("PATH", ""), ("PI_NODE", "/nonexistent/node")];
    assert!(!skip_in(Form::Native, env_of(&missing)).await);
    assert!(skip_in(Form::TypeScript, env_of(&missing)).await);
    let required = env_of(&[missing[0], missing[1], ("PI_REQUIRE_NODE", "1")]);
    let failed = tokio::spawn(skip_in(Form::TypeScript, required)).await.unwrap_err();
    let message = failed.into_panic();
    let message = message.downcast_ref::<String>().unwrap();
    assert!(
        message.starts_with("PI_REQUIRE_NODE is set, but the TypeScript form cannot run: PI_NODE=/nonexistent/node"),
        "{message}"
    );
}

struct Run {
    stdout: String,
    stderr: String,
    code: i32,
    requests: Vec<Value>,
}

#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Buffer {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

/// Runs `pi -p <prompt>` in the sandbox's project with the example `name` in `form`, the model
/// scripted by `replies`; `env` goes to the tool (process and TypeScript forms).
async fn run_example(
    form: Form,
    name: &str,
    factory: NamedFactory,
    sandbox: &Sandbox,
    replies: Vec<Reply>,
    env: &[(&str, &str)],
) -> Run {
    let server = MockServer::start(replies).await;
    sandbox.use_server(&server);
    let prompt = "Use the tool.";
    let (stdout, stderr, code) = match form {
        Form::Native => {
            let (out, err) = (Buffer::default(), Buffer::default());
            let io = Io {
                stdout: Arc::new(Mutex::new(out.clone())),
                stderr: Arc::new(Mutex::new(err.clone())),
                stdin: None,
                interactive: false,
            };
            let args = Args::parse_from_argv(["pi", "-p", "--no-session", prompt]).unwrap();
            let options = RunOptions {
                factories: vec![factory],
                cwd: Some(sandbox.project.clone()),
                agent_dir: Some(sandbox.agent_dir()),
            };
            let code = run_with(args, io, options).await;
            (out.text(), err.text(), code)
        }
        Form::Process | Form::TypeScript => {
            let entry = match form {
                Form::Process => examples_dir().join(name).join("tool.json"),
                _ => examples_dir().join(name).join("index.ts"),
            };
            let mut command = sandbox.command(&["-p", "--no-session", "--tool"]);
            command.arg(&entry).arg(prompt);
            if let Ok(node) = std::env::var("PI_NODE") {
                command.env("PI_NODE", node);
            }
            for (key, value) in env {
                command.env(key, value);
            }
            let output = output(command).await;
            (
                text(&output.stdout),
                text(&output.stderr),
                output.status.code().unwrap_or(-1),
            )
        }
    };
    let requests = server.requests().iter().map(|r| r.json()).collect();
    Run {
        stdout,
        stderr,
        code,
        requests,
    }
}

/// The `tool` messages of a request body.
fn tool_results(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn hello_in_every_form() {
    for form in FORMS {
        if skip(form).await {
            continue;
        }
        let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
        let replies = vec![
            openai::tool_calls(&[("c1", "hello", json!({"name": "pi"}))]),
            openai::text("Greeted."),
        ];
        let run = run_example(form, "hello", hello::factory(), &sandbox, replies, &[]).await;
        assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{form:?}");
        assert_eq!(run.stdout, "Greeted.\n", "{form:?}");
        let tools = openai::tool_names(&run.requests[0]);
        assert!(tools.iter().any(|t| t == "hello"), "{form:?}: {tools:?}");
        assert_eq!(tool_results(&run.requests[1]), ["Hello, pi!"], "{form:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn todo_in_every_form() {
    for form in FORMS {
        if skip(form).await {
            continue;
        }
        let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
        let replies = vec![
            openai::tool_calls(&[("c1", "todo", json!({"action": "add", "text": "buy milk"}))]),
            openai::tool_calls(&[("c2", "todo", json!({"action": "add", "text": "write tests"}))]),
            openai::tool_calls(&[("c3", "todo", json!({"action": "toggle", "id": 1}))]),
            openai::tool_calls(&[("c4", "todo", json!({"action": "list"}))]),
            openai::text("Listed."),
        ];
        let run = run_example(form, "todo", todo::factory(), &sandbox, replies, &[]).await;
        assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{form:?}");
        assert_eq!(
            tool_results(&run.requests[4]),
            [
                "Added todo #1: buy milk",
                "Added todo #2: write tests",
                "Todo #1 completed",
                "[x] #1: buy milk\n[ ] #2: write tests"
            ],
            "{form:?}"
        );
    }
}

/// The native todo in an [`App`] on the faux model, with the tool itself (to ask for its list).
async fn native_todo_app(dir: &Path, faux: &FauxModel) -> (App, Arc<dyn CustomTool>) {
    let options = SessionOptions::new(dir, faux.model())
        .stream_fn(faux.stream_fn())
        .tools(Vec::<String>::new());
    let session = AgentSession::new(options).unwrap();
    let tools = todo::factory().factory.create(&session.tool_api()).unwrap();
    let loaded = CustomTools {
        tools: tools
            .iter()
            .map(|tool| LoadedTool {
                tool: tool.clone(),
                origin: "native:todo".to_owned(),
                path: None,
                kind: ToolKind::Native,
            })
            .collect(),
        errors: Vec::new(),
    };
    let (names, errors) = session.add_custom_tools(&loaded);
    assert!(errors.is_empty(), "{errors:?}");
    session.set_active_tools(names).unwrap();
    let app = App::new(
        session,
        SessionManager::in_memory(dir),
        Arc::new(pi_ai::ModelRegistry::builtin()),
        None,
        Arc::new(|_| {}),
    );
    app.notify_tools(SessionReason::Start, None).await;
    (app, tools[0].clone())
}

async fn todo_list(tool: &Arc<dyn CustomTool>) -> String {
    let result = tool
        .execute("list", json!({"action": "list"}), ToolContext::detached())
        .await
        .unwrap();
    tools::result_text(&result)
}

/// The id of the first entry of the session file (branches left behind included) matching `find`.
fn entry_id(app: &App, find: impl Fn(&AgentMessage) -> bool) -> String {
    app.with_store(|store| {
        store
            .entries()
            .iter()
            .find(|e| matches!(&e.kind, EntryKind::Message(m) if find(m)))
            .map(|e| e.id.clone())
            .unwrap()
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn native_todo_rebuilds_its_list_from_the_branch_tree_navigation_moves_to() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let (app, tool) = native_todo_app(dir.path(), &faux).await;
    faux.set_responses([
        scripted::tool_call("t1", "todo", json!({"action": "add", "text": "milk"})),
        scripted::text("added"),
        scripted::tool_call("t2", "todo", json!({"action": "add", "text": "eggs"})),
        scripted::tool_call("t3", "todo", json!({"action": "toggle", "id": 1})),
        scripted::text("added"),
    ]);
    app.session().prompt("add milk").await.unwrap();
    app.session().prompt("add eggs, milk is done").await.unwrap();
    assert_eq!(todo_list(&tool).await, "[x] #1: milk\n[ ] #2: eggs");

    // `/tree` to the second prompt: the leaf goes back to just before it, in the same file, which
    // still holds the results of `t2` and `t3`; the list is the one of that point.
    let second_prompt = app.with_store(|store| {
        let mut users = store
            .entries()
            .iter()
            .filter(|e| matches!(e.kind, EntryKind::Message(AgentMessage::User(_))));
        users.nth(1).map(|e| e.id.clone()).unwrap()
    });
    app.navigate(&second_prompt).await.unwrap();
    assert_eq!(todo_list(&tool).await, "[ ] #1: milk");
    let event = app.tool_session_event(SessionReason::Tree, None);
    assert_eq!(event.result_details("todo").count(), 1, "only t1 is on the branch");

    // A new branch from there, then `/tree` back onto the first branch's last result: the newest
    // result in the file (`bread`) is on the branch left behind and plays no part.
    faux.set_responses([
        scripted::tool_call("t4", "todo", json!({"action": "add", "text": "bread"})),
        scripted::text("added"),
    ]);
    app.session().prompt("add bread").await.unwrap();
    assert_eq!(todo_list(&tool).await, "[ ] #1: milk\n[ ] #2: bread");
    let toggle = entry_id(
        &app,
        |m| matches!(m, AgentMessage::ToolResult(r) if r.tool_call_id == "t3"),
    );
    app.navigate(&toggle).await.unwrap();
    assert_eq!(todo_list(&tool).await, "[x] #1: milk\n[ ] #2: eggs");
}

fn three_moves_then_play() -> Reply {
    openai::tool_calls(&[
        ("m1", "tic_tac_toe", json!({"action": "move_down"})),
        ("m2", "tic_tac_toe", json!({"action": "move_right"})),
        ("m3", "tic_tac_toe", json!({"action": "move_right"})),
        ("p1", "tic_tac_toe", json!({"action": "play"})),
    ])
}

#[tokio::test(flavor = "multi_thread")]
async fn tic_tac_toe_plays_on_the_intended_cell_only_when_sequential() {
    for form in FORMS {
        if skip(form).await {
            continue;
        }
        for (mode, expected) in [
            ("sequential", "Placed O at (1, 2)."),
            ("parallel", "Placed O at (0, 0)."),
        ] {
            let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
            let factory = tic_tac_toe::factory_with_mode(if mode == "parallel" {
                ToolExecutionMode::Parallel
            } else {
                ToolExecutionMode::Sequential
            });
            let replies = vec![three_moves_then_play(), openai::text("Played.")];
            let env = [("TIC_TAC_TOE_MODE", mode)];
            let run = run_example(form, "tic-tac-toe", factory, &sandbox, replies, &env).await;
            assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{form:?} {mode}");
            let results = tool_results(&run.requests[1]);
            assert_eq!(results.len(), 4, "{form:?} {mode}: {results:?}");
            assert!(results[3].starts_with(expected), "{form:?} {mode}: {results:?}");
        }
    }
}

/// The native tic-tac-toe's block for `result` (an error or not) in the interactive mode, as text.
fn tic_tac_toe_block(result: ToolResult, is_error: bool) -> String {
    let dir = tempfile::tempdir().unwrap();
    let tools = tic_tac_toe::factory()
        .factory
        .create(&ToolApi::new(dir.path()))
        .unwrap();
    let renderers: Renderers = tools.into_iter().map(|t| (t.name().to_owned(), t)).collect();
    let block = ToolBlock {
        call_id: "p1".into(),
        name: "tic_tac_toe".into(),
        args: json!({"action": "play"}),
        partial: None,
        result: Some(result),
        is_error,
        started: None,
        elapsed: None,
    };
    let theme = Theme::indexed();
    let context = RenderContext {
        theme: &theme,
        expanded: false,
        renderers: &renderers,
        images: pi_cli::modes::interactive::InlineImages {
            protocol: None,
            show: true,
            width_cells: 60,
        },
    };
    plain(&render_tool(&block, context, 100))
}

#[test]
fn native_tic_tac_toe_draws_a_cross_for_an_error_and_a_tick_for_a_success() {
    let error = tic_tac_toe_block(
        ToolResult::text("Cell (0, 0) is already X. Move to an empty cell and retry play."),
        true,
    );
    assert!(error.contains("✗ Cell (0, 0) is already X."), "{error}");
    assert!(!error.contains('✓'), "{error}");
    let success = tic_tac_toe_block(ToolResult::text("Placed O at (1, 1)."), false);
    assert!(success.contains("✓ Placed O at (1, 1)."), "{success}");
    assert!(!success.contains('✗'), "{success}");
}

#[tokio::test(flavor = "multi_thread")]
async fn batch_rename_preview_applies_only_through_resolve_in_every_form() {
    for form in FORMS {
        if skip(form).await {
            continue;
        }
        for action in ["apply", "discard"] {
            let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
            std::fs::write(sandbox.project.join("a.txt"), "a").unwrap();
            let replies = vec![
                openai::tool_calls(&[(
                    "c1",
                    "batch_rename_preview",
                    json!({"renames": [{"from": "a.txt", "to": "b.txt"}]}),
                )]),
                openai::tool_calls(&[(
                    "c2",
                    "resolve",
                    json!({"action": action, "reason": "Checked the plan."}),
                )]),
                openai::text("Done."),
            ];
            let run = run_example(
                form,
                "batch-rename-preview",
                batch_rename_preview::factory(),
                &sandbox,
                replies,
                &[],
            )
            .await;
            assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{form:?} {action}");
            // The model was forced to resolve the preview.
            assert_eq!(
                run.requests[1]["tool_choice"],
                json!({"type": "function", "function": {"name": "resolve"}}),
                "{form:?}"
            );
            let renamed = sandbox.project.join("b.txt").exists();
            assert_eq!(renamed, action == "apply", "{form:?} {action}");
            assert_eq!(
                sandbox.project.join("a.txt").exists(),
                action == "discard",
                "{form:?} {action}"
            );
            let resolve = tool_results(&run.requests[2]);
            let expected = if action == "apply" {
                "Applied batch rename. Reason: Checked the plan."
            } else {
                "Discarded batch rename. Reason: Checked the plan."
            };
            assert_eq!(resolve.last().map(String::as_str), Some(expected), "{form:?} {action}");
        }
    }
}

/// A JavaScript tool for the Node host that stages a preview whose `reject` writes its reason to
/// `rejected.txt` in the project.
const REJECT_MARKER_TOOL: &str = r#"import { writeFileSync } from "node:fs";
import { join } from "node:path";
export default (pi) => ({
  name: "stage_change",
  description: "Stages a change for resolve",
  parameters: { type: "object", properties: {} },
  async execute() {
    pi.pushPendingAction({
      label: "Staged change",
      apply: async () => "Applied.",
      reject: async (reason) => {
        writeFileSync(join(pi.cwd, "rejected.txt"), reason);
        return "Discarded.";
      },
    });
    return "Staged; call resolve.";
  },
});
"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_preview_still_pending_when_print_or_json_mode_exits_is_rejected_after_the_report() {
    if skip(Form::TypeScript).await {
        return;
    }
    for mode in ["-p", "--mode=json"] {
        let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
        let tool = sandbox.project.join("stage.mjs");
        std::fs::write(&tool, REJECT_MARKER_TOOL).unwrap();
        // Forced to resolve, the model answers in text: the run ends with the preview pending.
        let replies = vec![
            openai::tool_calls(&[("c1", "stage_change", json!({}))]),
            openai::text("I staged it."),
        ];
        let server = MockServer::start(replies).await;
        sandbox.use_server(&server);
        let mut command = sandbox.command(&[mode, "--no-session", "--tool"]);
        command.arg(&tool).arg("Stage it.");
        if let Ok(node) = std::env::var("PI_NODE") {
            command.env("PI_NODE", node);
        }
        let output = output(command).await;
        let stderr = text(&output.stderr);
        let expected = if mode == "-p" {
            "pi: not applied: Staged change (the preview was still pending when pi exited)\n"
        } else {
            ""
        };
        assert_eq!(stderr, expected, "{mode}");
        assert_eq!(output.status.code(), Some(3), "{mode}");
        let marker = std::fs::read_to_string(sandbox.project.join("rejected.txt"));
        assert_eq!(
            marker.ok().as_deref(),
            Some(pi_cli::modes::print::EXIT_REJECT_REASON),
            "{mode}: reject was not called"
        );
    }
}

/// The reports of `ctx_probe` (the Node host's `fixtures/context.mjs`) in a request body.
fn probe_reports(request: &Value) -> Vec<Value> {
    tool_results(request)
        .iter()
        .filter_map(|text| serde_json::from_str(text).ok())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn ctx_of_a_node_tool_is_current_at_every_call_and_its_api_key_is_redacted() {
    if skip(Form::TypeScript).await {
        return;
    }
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    let tool = Path::new(env!("CARGO_MANIFEST_DIR")).join("../coding-agent/src/custom_tools/node/fixtures/context.mjs");
    let replies = vec![
        openai::tool_calls(&[("c1", "ctx_probe", json!({}))]),
        openai::tool_calls(&[("c2", "ctx_probe", json!({"apiKey": true}))]),
        openai::tool_calls(&[("c3", "ctx_probe", json!({"leak": true}))]),
        openai::text("Done."),
    ];
    let server = MockServer::start(replies).await;
    sandbox.use_server(&server);
    let mut command = sandbox.command(&["-p", "--tool"]);
    command.arg(&tool).arg("Probe.");
    if let Ok(node) = std::env::var("PI_NODE") {
        command.env("PI_NODE", node);
    }
    let output = output(command).await;
    assert_eq!((output.status.code(), text(&output.stderr)), (Some(0), String::new()));
    let requests: Vec<Value> = server.requests().iter().map(|r| r.json()).collect();
    let model = format!("{}/{}", openai::PROVIDER, openai::MODEL_ID);
    let first = &probe_reports(&requests[1])[0];
    assert_eq!(first["results"], json!([]));
    assert_eq!(first["model"], model.as_str());
    assert_eq!(
        (&first["found"], &first["available"]),
        (&json!("Mock Model"), &json!(true))
    );
    // The second call sees the first call's result, appended during this run.
    let second = &probe_reports(&requests[2])[1];
    assert_eq!(second["results"], json!(["c1"]), "{second}");
    assert_eq!(
        (&second["leafIsLast"], &second["sameEntries"]),
        (&json!(true), &json!(true))
    );
    assert!(second["entries"].as_u64().unwrap() > first["entries"].as_u64().unwrap());
    assert!(
        second["sessionFile"].as_str().is_some_and(|f| f.ends_with(".jsonl")),
        "{second}"
    );
    assert_eq!(second["model"], model.as_str());
    assert_eq!(second["key"], "mock-key");
    // A key the tool leaks into its error reaches the model redacted.
    let leaked = tool_results(&requests[3]).pop().unwrap();
    assert_eq!(leaked, "the key is [redacted]");
}
