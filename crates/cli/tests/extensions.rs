//! Extensions through the real `pi` binary (`docs/extensions.md`): the Python example
//! (`examples/extensions/python-guard`) and small Python extensions written here, in print and
//! RPC mode against a mock OpenAI-compatible server on 127.0.0.1 — loading, registration, tools,
//! commands, flags, UI requests, and everything that goes wrong (an extension that fails to
//! load, throws, hangs, or registers a name twice) reported while pi goes on.
//!
//! They need `python3` on `PATH` (as the process-tool tests do) and fail without it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pi_test_support::extensions::{examples_dir, python_extension};
use pi_test_support::sandbox::{Sandbox, text};
use pi_test_support::{MockServer, openai};
use serde_json::{Value, json};

use crate::rpc::Rpc;

fn python_guard() -> String {
    examples_dir().join("python-guard").display().to_string()
}

fn lines(bytes: &[u8]) -> Vec<String> {
    text(bytes).lines().map(str::to_owned).collect()
}

/// The entries of the session file pi wrote (one session), as JSON.
fn session_entries(sandbox: &Sandbox) -> Vec<Value> {
    let files = sandbox.session_files();
    assert_eq!(files.len(), 1, "{files:?}");
    std::fs::read_to_string(&files[0])
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_example_s_tool_runs_and_its_prompt_metadata_reaches_the_system_prompt() {
    let server = MockServer::start(vec![
        openai::tool_calls(&[("call_1", "word_count", json!({"text": "one two three"}))]),
        openai::text("Three words."),
    ])
    .await;
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    sandbox.use_server(&server);
    let out = sandbox.run(&["-e", &python_guard(), "-p", "How many words?"]).await;
    assert_eq!(text(&out.stderr), "");
    assert_eq!(text(&out.stdout), "Three words.\n");
    assert!(out.status.success());
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = requests[0].json();
    let system = first["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(system.contains("- word_count: Count the words of a text"), "{system}");
    assert!(
        system.contains("- Use word_count to count words instead of counting them yourself."),
        "{system}"
    );
    let tools = openai::tool_names(&first);
    assert!(tools.iter().any(|t| t == "word_count"), "{tools:?}");
    let second = requests[1].json();
    let result = second["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(result["role"], "tool");
    assert_eq!(result["content"], "3 words");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_runs_instead_of_reaching_the_model_and_a_flag_reaches_the_extension() {
    let server = MockServer::start(vec![openai::text("Hello.")]).await;
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    sandbox.use_server(&server);
    // The session file is written once the model answered (as pi does): a prompt follows.
    let out = sandbox.run(&["-e", &python_guard(), "-p", "/greet Ada", "Hi"]).await;
    assert_eq!(text(&out.stderr), "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "a command never reaches the model");
    assert!(!requests[0].body.contains("/greet"), "{}", requests[0].body);
    let custom: Vec<Value> = session_entries(&sandbox)
        .into_iter()
        .filter(|entry| entry["type"] == "custom")
        .collect();
    assert_eq!(custom.len(), 1, "{custom:?}");
    assert_eq!(custom[0]["customType"], "python-guard.greeting");
    assert_eq!(custom[0]["data"], json!({"name": "Ada"}));

    // A registered flag is accepted and its value reaches the extension (`--guard-quiet`
    // silences the notice, which RPC mode would show).
    let quiet = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    quiet.use_server(&server);
    let mut rpc = Rpc::start_in(quiet, &["--mode", "rpc", "-e", &python_guard(), "--guard-quiet"]);
    rpc.send(json!({"id": "1", "type": "prompt", "message": "/greet Quiet"}));
    rpc.response("1");
    let seen = rpc.close();
    assert!(
        !seen.iter().any(|line| line["type"] == "extension_ui_request"),
        "{seen:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_flags_are_refused_once_the_extensions_loaded() {
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    let server = MockServer::start(vec![]).await;
    sandbox.use_server(&server);
    let dir = sandbox.root().join("exts");
    let level = python_extension(
        &dir,
        "level",
        "ext.flag('level', type='string', description='A level')\n",
        None,
    );
    let level = level.display().to_string();
    let out = sandbox.run(&["-e", &level, "--bogus", "--level", "-p", "hi"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        lines(&out.stderr),
        [
            "Error: Extension flag \"--level\" requires a value",
            "Error: Unknown option: --bogus"
        ]
    );
    assert!(server.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn rpc_lists_extension_commands_as_pi_does_and_forwards_ui_requests() {
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    let server = MockServer::start(vec![]).await;
    sandbox.use_server(&server);
    let dir = sandbox.project.join(".pi/extensions");
    let body = r#"
@ext.command("ui", description="Every UI call")
def ui(args, ctx):
    ctx.ui.set_status("demo", "working")
    ctx.ui.set_status("demo")
    ctx.ui.set_widget("demo", ["line 1", "line 2"], placement="belowEditor")
    ctx.ui.set_title("pi - demo")
    ctx.ui.set_editor_text("prefilled")
    edited = ctx.ui.editor("Edit", prefill="draft")
    picked = ctx.ui.select("Pick", ["a", "b"], timeout=0.2)
    ctx.ui.notify(f"edited: {edited}; picked: {picked}; model: {ctx.model['id']}; has_ui: {ctx.has_ui}", "info")
"#;
    python_extension(&dir, "ui-demo", body, None);
    let mut rpc = Rpc::start_in(sandbox, &["--mode", "rpc"]);
    rpc.send(json!({"id": "1", "type": "get_commands"}));
    let commands = rpc.response("1");
    let project = dir.parent().unwrap().canonicalize().unwrap();
    assert_eq!(
        commands["data"]["commands"],
        json!([{
            "name": "ui",
            "description": "Every UI call",
            "source": "extension",
            "sourceInfo": {
                "path": project.join("extensions/ui-demo"),
                "source": "auto",
                "scope": "project",
                "origin": "top-level",
                "baseDir": project,
            }
        }])
    );
    rpc.send(json!({"id": "2", "type": "prompt", "message": "/ui"}));
    let mut requests = Vec::new();
    loop {
        let line = rpc.until("a UI request", |v| v["type"] == "extension_ui_request");
        let method = line["method"].as_str().unwrap().to_owned();
        let mut shown = line.clone();
        shown.as_object_mut().unwrap().remove("id");
        requests.push(shown);
        if method == "editor" {
            rpc.send(json!({"type": "extension_ui_response", "id": line["id"], "value": "final text"}));
        }
        if method == "notify" {
            break;
        }
    }
    rpc.response("2");
    rpc.close();
    assert_eq!(
        requests,
        [
            json!({"type": "extension_ui_request", "method": "setStatus", "statusKey": "demo", "statusText": "working"}),
            json!({"type": "extension_ui_request", "method": "setStatus", "statusKey": "demo"}),
            json!({"type": "extension_ui_request", "method": "setWidget", "widgetKey": "demo",
                   "widgetLines": ["line 1", "line 2"], "widgetPlacement": "belowEditor"}),
            json!({"type": "extension_ui_request", "method": "setTitle", "title": "pi - demo"}),
            json!({"type": "extension_ui_request", "method": "set_editor_text", "text": "prefilled"}),
            json!({"type": "extension_ui_request", "method": "editor", "title": "Edit", "prefill": "draft"}),
            // Unanswered: pi answers with the default once the time is up.
            json!({"type": "extension_ui_request", "method": "select", "title": "Pick", "options": ["a", "b"],
                   "timeout": 200}),
            json!({"type": "extension_ui_request", "method": "notify",
                   "message": format!("edited: final text; picked: None; model: {}; has_ui: True", openai::MODEL_ID),
                   "notifyType": "info"}),
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn extensions_that_fail_throw_hang_or_take_a_name_twice_are_reported_and_pi_goes_on() {
    let server = MockServer::start(vec![openai::text("Still here.")]).await;
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    sandbox.use_server(&server);
    let dir = sandbox.project.join(".pi/extensions");
    let broken = python_extension(&dir, "a-broken", "raise RuntimeError('boom at load')\n", None);
    let tool = r#"
@ext.tool(name="dup", description="A tool two extensions register")
def dup(call, params):
    return "dup"
"#;
    let first = python_extension(&dir, "b-dup", tool, None);
    let second = python_extension(&dir, "c-dup", tool, None);
    let body = r#"
import time

@ext.command("boom")
def boom(args, ctx):
    raise RuntimeError("cmd failed")

@ext.command("hang")
def hang(args, ctx):
    time.sleep(3600)

@ext.command("after")
def after(args, ctx):
    ext.append_entry("after", {"ok": True})
"#;
    python_extension(&dir, "d-trouble", body, Some(1000));
    let missing = sandbox.root().join("nowhere.ts");
    let missing = missing.display().to_string();
    let out = sandbox
        .run(&["-e", &missing, "-p", "/boom", "/hang", "/after", "Are you there?"])
        .await;
    let stderr = lines(&out.stderr);
    assert_eq!(
        stderr,
        [
            format!(
                "Error: Failed to load extension \"{}\": python3 extension.py exited before answering initialize (exit code 1): RuntimeError: boom at load",
                broken.canonicalize().unwrap().display()
            ),
            format!(
                "Error: Failed to load extension \"{}\": Tool \"dup\" conflicts with {}",
                second.canonicalize().unwrap().display(),
                first.canonicalize().unwrap().display()
            ),
            format!("Error: Failed to load extension \"{missing}\": Extension path does not exist: {missing}"),
            "Extension error (command:boom): cmd failed".to_owned(),
            "Extension error (command:hang): timed out".to_owned(),
        ]
    );
    assert_eq!(text(&out.stdout), "Still here.\n");
    assert!(out.status.success());
    // The hung process was restarted: the next command of the same extension ran.
    assert!(
        session_entries(&sandbox)
            .iter()
            .any(|entry| entry["type"] == "custom" && entry["customType"] == "after"),
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn no_extensions_skips_the_discovered_ones_but_not_e() {
    let server = MockServer::start(vec![openai::text("From the model.")]).await;
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    sandbox.use_server(&server);
    let dir = sandbox.project.join(".pi/extensions");
    let body = r#"
@ext.command("mark")
def mark(args, ctx):
    ext.append_entry("marked", None)
"#;
    python_extension(&dir, "marker", body, None);
    let out = sandbox
        .run(&["-ne", "-e", &python_guard(), "-p", "/mark", "/greet Ada"])
        .await;
    assert_eq!(text(&out.stderr), "");
    assert_eq!(text(&out.stdout), "From the model.\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "/mark went to the model, /greet did not");
    let entries = session_entries(&sandbox);
    assert!(!entries.iter().any(|e| e["customType"] == "marked"));
    assert!(entries.iter().any(|e| e["customType"] == "python-guard.greeting"));
}

#[tokio::test(flavor = "multi_thread")]
async fn help_lists_the_flags_extensions_register_as_pi_does() {
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    let dir = sandbox.root().join("exts");
    let body = "ext.flag('plan', description='Start in plan mode')\next.flag('level', type='string')\n";
    let level = python_extension(&dir, "flags", body, None);
    let out = sandbox.run(&["-e", &level.display().to_string(), "--help"]).await;
    assert!(out.status.success());
    let help = text(&out.stdout);
    let expected = format!(
        "\nExtension CLI Flags:\n  --plan                      Start in plan mode\n  --level <value>             Registered by {}\n",
        level.display()
    );
    assert!(help.ends_with(&expected), "{help}");
    let plain = sandbox.run(&["--help"]).await;
    assert!(!text(&plain.stdout).contains("Extension CLI Flags:"));
}

/// pi 0.73.1's shipped example extensions, unchanged, through our binary in print mode: the Node
/// host runs them and the events reach them — `permission-gate` blocks `rm -rf` (no UI: pi's
/// "Dangerous command blocked (no UI for confirmation)"), `protected-paths` refuses a write to
/// `.env`, `input-transform` rewrites `?quick …` before the model sees it. Needs Node.js and pi
/// 0.73.1's package (`.ci/ensure-pi073`; required under `PI_REQUIRE_PI073`).
#[tokio::test(flavor = "multi_thread")]
async fn pi_0_73_1s_example_extensions_work_through_the_binary() {
    let env: crate::rpc_client::Env = std::sync::Arc::new(|name: &str| std::env::var(name).ok());
    let Some((node, package)) = crate::rpc_client::reference_or_skip(env).await else {
        return;
    };
    let examples = package.join("examples/extensions");
    let run = |sandbox: &Sandbox, args: &[&str]| {
        let mut command = sandbox.command(args);
        command.env("PI_NODE", &node);
        pi_test_support::sandbox::output(command)
    };
    let example = |name: &str| examples.join(name).display().to_string();

    // permission-gate: the call is blocked with the extension's reason; nothing is deleted.
    let server = MockServer::start(vec![
        openai::tool_calls(&[("call_1", "bash", json!({"command": "rm -rf build"}))]),
        openai::text("Not allowed."),
    ])
    .await;
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    sandbox.use_server(&server);
    std::fs::create_dir_all(sandbox.project.join("build")).unwrap();
    let out = run(&sandbox, &["-e", &example("permission-gate.ts"), "-p", "Clean up"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Not allowed.\n");
    assert!(sandbox.project.join("build").is_dir(), "the command ran");
    let result = server.requests()[1].json()["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(result["role"], "tool");
    assert_eq!(result["content"], "Dangerous command blocked (no UI for confirmation)");

    // protected-paths: a write to .env is refused.
    let server = MockServer::start(vec![
        openai::tool_calls(&[("call_1", "write", json!({"path": ".env", "content": "KEY=1"}))]),
        openai::text("Refused."),
    ])
    .await;
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    sandbox.use_server(&server);
    let out = run(&sandbox, &["-e", &example("protected-paths.ts"), "-p", "Write the env"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!sandbox.project.join(".env").exists(), "the write happened");
    let result = server.requests()[1].json()["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(result["content"], "Path \".env\" is protected");

    // input-transform: the model sees the rewritten prompt.
    let server = MockServer::start(vec![openai::text("Short.")]).await;
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    sandbox.use_server(&server);
    let out = run(
        &sandbox,
        &["-e", &example("input-transform.ts"), "-p", "?quick what is rust"],
    )
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let request = server.requests()[0].json();
    let user = request["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        user["content"],
        json!([{"type": "text", "text": "Respond briefly in 1-2 sentences: what is rust"}])
    );
}

/// A TypeScript handler that throws in an event the host goes on with (here `input`) is reported on
/// stderr as pi reports it, and the prompt still reaches the model unchanged (the host's
/// `extension.error` notification). Needs Node.js (found with pi 0.73.1's package, as above).
#[tokio::test(flavor = "multi_thread")]
async fn a_typescript_handler_that_throws_is_reported_and_the_run_goes_on() {
    let env: crate::rpc_client::Env = std::sync::Arc::new(|name: &str| std::env::var(name).ok());
    let Some((node, _)) = crate::rpc_client::reference_or_skip(env).await else {
        return;
    };
    let server = MockServer::start(vec![openai::text("Fine.")]).await;
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    sandbox.use_server(&server);
    let extension = sandbox.project.join("broken.ts");
    std::fs::write(
        &extension,
        "export default function (pi: any) {\n  pi.on(\"input\", () => { throw new Error(\"input broke\"); });\n}\n",
    )
    .unwrap();
    let mut command = sandbox.command(&["-e", "broken.ts", "-p", "hi"]);
    command.env("PI_NODE", &node);
    let out = pi_test_support::sandbox::output(command).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Fine.\n");
    assert_eq!(
        text(&out.stderr),
        format!("Extension error ({}): input broke\n", extension.display())
    );
    let request = server.requests()[0].json();
    let user = request["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(user["content"], json!([{"type": "text", "text": "hi"}]));
}

/// An extension answering `resources_discover` with a skill directory and a prompt-template
/// directory (relative: taken from the working directory): pi loads them after every other, the
/// skill is listed in the first request's system prompt, and RPC `get_commands` lists both with
/// pi's `extension:<name>` source.
#[tokio::test(flavor = "multi_thread")]
async fn paths_from_resources_discover_become_skills_and_prompt_templates() {
    let server = MockServer::start(vec![openai::text("Found it.")]).await;
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    sandbox.use_server(&server);
    let skills = sandbox.project.join("extra/skills");
    std::fs::create_dir_all(skills.join("greeter")).unwrap();
    std::fs::write(
        skills.join("greeter/SKILL.md"),
        "---\nname: greeter\ndescription: Greets people warmly\n---\nSay hello.\n",
    )
    .unwrap();
    std::fs::create_dir_all(sandbox.project.join("extra/prompts")).unwrap();
    std::fs::write(
        sandbox.project.join("extra/prompts/wave.md"),
        "---\ndescription: Wave at someone\n---\nWave at $1.\n",
    )
    .unwrap();
    let body = format!(
        r#"
@ext.on("resources_discover")
def discover(event, ctx):
    return {{"skillPaths": [{skills:?}], "promptPaths": ["extra/prompts"]}}
"#,
        skills = skills.display().to_string()
    );
    let dir = sandbox.project.join(".pi/extensions");
    let extension = python_extension(&dir, "finder", &body, None);

    let out = sandbox.run(&["-p", "Anything to greet with?"]).await;
    assert_eq!(text(&out.stderr), "");
    assert!(out.status.success());
    let requests = server.requests();
    let system = requests[0].json()["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(system.contains("<available_skills>"), "{system}");
    assert!(system.contains("<name>greeter</name>"), "{system}");
    assert!(
        system.contains("<description>Greets people warmly</description>"),
        "{system}"
    );

    let mut rpc = Rpc::start_in(sandbox, &["--mode", "rpc"]);
    rpc.send(json!({"id": "1", "type": "get_commands"}));
    let commands = rpc.response("1")["data"]["commands"].clone();
    rpc.close();
    let source = |path: std::path::PathBuf| {
        json!({
            "path": path,
            "source": "extension:finder",
            "scope": "temporary",
            "origin": "top-level",
            "baseDir": extension.parent().unwrap(),
        })
    };
    let project = dir.parent().unwrap().parent().unwrap().to_path_buf();
    assert_eq!(
        commands,
        json!([
            {"name": "wave", "description": "Wave at someone", "source": "prompt",
             "sourceInfo": source(project.join("extra/prompts/wave.md"))},
            {"name": "skill:greeter", "description": "Greets people warmly", "source": "skill",
             "sourceInfo": source(skills.join("greeter/SKILL.md"))},
        ])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn ctx_shutdown_ends_rpc_mode_after_the_response_to_the_command() {
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    let server = MockServer::start(vec![]).await;
    sandbox.use_server(&server);
    let dir = sandbox.root().join("exts");
    let bye = python_extension(
        &dir,
        "bye",
        "@ext.command('bye', description='Leave')\ndef bye(args, ctx):\n    ctx.shutdown()\n",
        None,
    );
    let mut rpc = Rpc::start_in(sandbox, &["--mode", "rpc", "-e", &bye.display().to_string()]);
    rpc.send(json!({"id": "1", "type": "prompt", "message": "/bye"}));
    assert_eq!(rpc.response("1")["success"], true);
    // stdin stays open: pi ends on its own.
    let status = rpc.exit_status();
    assert!(status.success(), "{status:?}");
    assert!(server.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restarted_extension_process_gets_the_flag_values_again() {
    let server = MockServer::start(vec![openai::text("Still here.")]).await;
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    sandbox.use_server(&server);
    let dir = sandbox.root().join("exts");
    let body = r#"
import time

ext.flag("level", type="string", description="A level")

@ext.command("hang")
def hang(args, ctx):
    time.sleep(3600)

@ext.command("show")
def show(args, ctx):
    ext.append_entry("show", {"level": ext.get_flag("level")})
"#;
    let flagged = python_extension(&dir, "flagged", body, Some(1000));
    let flagged = flagged.display().to_string();
    let out = sandbox
        .run(&[
            "-e",
            &flagged,
            "--level",
            "high",
            "-p",
            "/hang",
            "/show",
            "Are you there?",
        ])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(lines(&out.stderr), ["Extension error (command:hang): timed out"]);
    // `/show` ran in the process started again after `/hang` timed out.
    let shown: Vec<Value> = session_entries(&sandbox)
        .into_iter()
        .filter(|entry| entry["customType"] == "show")
        .map(|entry| entry["data"].clone())
        .collect();
    assert_eq!(shown, [json!({"level": "high"})]);
}
