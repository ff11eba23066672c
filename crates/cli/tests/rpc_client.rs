//! pi 0.73.1's own `RpcClient` (from its npm package) drives our `pi --mode rpc` through every
//! method it has, against a scripted model on 127.0.0.1: `tests/data/rpc-client/drive.mjs` calls
//! them and reports what each returned or threw; the assertions are here.
//!
//! Needs Node.js (`$PI_NODE`, else `node` on `PATH`, as pi finds it) and the package
//! (`$PI_073_PACKAGE`, else `.ci/pi073/node_modules/@mariozechner/pi-coding-agent` where `.ci/ensure-pi073` installs it).
//! Without them the test prints `skipped: …` and passes, unless `PI_REQUIRE_PI073` is set
//! (`.ci/run` sets it and provides both), which fails it instead.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use pi_coding_agent::custom_tools::node::{check_version, find_node, node_version};
use pi_test_support::sandbox::{Sandbox, output, text};
use pi_test_support::{MockServer, openai, pi073};
use serde_json::{Value, json};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/rpc-client");

/// Reads an environment variable (the process's, or a fixed map in the test of [`reference`]).
pub(crate) type Env = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// The Node.js and the package directory of pi 0.73.1 to run the client with, or why there are
/// none.
async fn reference(env: Env) -> Result<(PathBuf, PathBuf), String> {
    let script = Path::new(DATA).join("drive.mjs");
    let (lookup, entry) = (env.clone(), script.clone());
    let node = tokio::task::spawn_blocking(move || find_node(&*lookup, &entry))
        .await
        .unwrap()
        .map_err(|e| e.to_string())?;
    let version = node_version(&node).await.map_err(|e| e.to_string())?;
    check_version(version, &node, &script).map_err(|e| e.to_string())?;
    let package = pi073::package(&*env).map_err(|e| e.to_string())?;
    let client = package.join("dist/modes/rpc/rpc-client.js");
    if !client.is_file() {
        return Err(format!("no {} (run .ci/ensure-pi073)", client.display()));
    }
    Ok((node, package))
}

/// [`reference`], or `None` after printing why the test is skipped — unless `PI_REQUIRE_PI073` is
/// set in `env`, which fails the test instead ([`pi073::or_skip`]).
pub(crate) async fn reference_or_skip(env: Env) -> Option<(PathBuf, PathBuf)> {
    pi073::or_skip("pi 0.73.1's RpcClient", reference(env.clone()).await, &*env)
}

fn env_of(pairs: &[(&str, &str)]) -> Env {
    let map: std::collections::HashMap<String, String> =
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    Arc::new(move |name: &str| map.get(name).cloned())
}

#[tokio::test(flavor = "multi_thread")]
async fn without_the_package_the_test_is_skipped_unless_it_is_required() {
    let path = std::env::var("PATH").unwrap_or_default();
    let missing = [("PATH", path.as_str()), ("PI_073_PACKAGE", "/nonexistent/package")];
    assert_eq!(reference_or_skip(env_of(&missing)).await, None);
    let required = env_of(&[missing[0], missing[1], ("PI_REQUIRE_PI073", "1")]);
    let failed = tokio::spawn(reference_or_skip(required)).await.unwrap_err();
    let message = failed.into_panic();
    let message = message.downcast_ref::<String>().unwrap();
    assert!(
        message.starts_with("PI_REQUIRE_PI073 is set, but pi 0.73.1's RpcClient cannot run: "),
        "{message}"
    );
}

/// The methods of pi 0.73.1's `RpcClient`, in its order; the script calls each. (Its private
/// `handleLine`, `send` and `getData` follow them.)
const CLIENT_METHODS: [&str; 36] = [
    "start",
    "stop",
    "onEvent",
    "getStderr",
    "prompt",
    "steer",
    "followUp",
    "abort",
    "newSession",
    "getState",
    "setModel",
    "cycleModel",
    "getAvailableModels",
    "setThinkingLevel",
    "cycleThinkingLevel",
    "setSteeringMode",
    "setFollowUpMode",
    "compact",
    "setAutoCompaction",
    "setAutoRetry",
    "abortRetry",
    "bash",
    "abortBash",
    "getSessionStats",
    "exportHtml",
    "switchSession",
    "fork",
    "clone",
    "getForkMessages",
    "getLastAssistantText",
    "setSessionName",
    "getMessages",
    "getCommands",
    "waitForIdle",
    "collectEvents",
    "promptAndWait",
];

/// What `drive.mjs` printed.
struct Report {
    methods: Vec<String>,
    steps: Vec<Value>,
}

impl Report {
    fn record(&self, name: &str) -> &Value {
        self.steps
            .iter()
            .find(|s| s["step"] == name)
            .unwrap_or_else(|| panic!("no step {name}"))
    }

    /// What the step's method returned (`Null` for `undefined`); the step must have succeeded.
    fn value(&self, name: &str) -> &Value {
        let record = self.record(name);
        assert_eq!(record["ok"], true, "{name} failed: {record}");
        record.get("value").unwrap_or(&Value::Null)
    }

    /// The message the step's method threw.
    fn error(&self, name: &str) -> &str {
        let record = self.record(name);
        assert_eq!(record["ok"], false, "{name} did not fail: {record}");
        record["error"].as_str().unwrap()
    }

    /// The raw responses to the commands the step sent.
    fn responses(&self, name: &str) -> Vec<&Value> {
        let exchanges = self.record(name)["exchanges"].as_array().unwrap();
        exchanges.iter().map(|e| &e["response"]).collect()
    }

    /// The event types the step saw (`message_update` left out).
    fn events(&self, name: &str) -> Vec<&str> {
        let events = self.record(name)["events"].as_array().unwrap();
        events.iter().map(|e| e.as_str().unwrap()).collect()
    }

    /// The client methods a step name says it exercises: the words before any `:`.
    fn exercised(&self) -> std::collections::BTreeSet<String> {
        self.steps
            .iter()
            .flat_map(|s| {
                let name = s["step"].as_str().unwrap();
                let methods = name.split(':').next().unwrap_or_default();
                methods
                    .split([' ', '+', ','])
                    .filter(|w| !w.is_empty())
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .collect()
    }
}

/// The messages each request added to the previous one's (the system prompt left out), one
/// compact JSON line each, under a line naming the request and its model.
fn conversation(requests: &[Value]) -> String {
    let mut out = String::new();
    let mut previous: &[Value] = &[];
    for (index, request) in requests.iter().enumerate() {
        let messages = &request["messages"].as_array().unwrap()[1..];
        assert!(
            messages.starts_with(previous),
            "request {} does not continue the one before",
            index + 1
        );
        out.push_str(&format!(
            "request {} ({}, reasoning_effort {}):\n",
            index + 1,
            request["model"],
            request["reasoning_effort"]
        ));
        for message in &messages[previous.len()..] {
            out.push_str(&format!("  {message}\n"));
        }
        previous = messages;
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn pi_073_rpc_client_drives_every_method() {
    let Some((node, package)) = reference_or_skip(Arc::new(|name: &str| std::env::var(name).ok())).await else {
        return;
    };
    let slow = |text: &str| openai::text(text).paced(Duration::from_millis(100));
    let server = MockServer::start(vec![
        openai::tool_calls(&[("call-1", "bash", json!({"command": "echo tool-ran"}))]),
        openai::text("The command printed tool-ran."),
        slow("A long answer that streams slowly, piece by piece, long enough to be steered twice over."),
        openai::text("Brief."),
        openai::text("In summary: brief."),
        slow(ABORTED),
        openai::text("You ran echo."),
        // The summary `compact` asks for (of the empty new session: pi 0.73.1 asks too).
        openai::text("## Goal\nNothing yet."),
    ])
    .await;
    let sandbox = Sandbox::new(&node);
    sandbox.write_models_json(
        &json!({"providers": {"mock": {"baseUrl": server.url("/v1"), "api": "openai-completions",
            "apiKey": "mock-key", "models": [
                {"id": "mock-model", "name": "Mock Model", "reasoning": true},
                {"id": "mock-other", "name": "Other Model"}]}}})
        .to_string(),
    );
    // A template and a skill for `getCommands` (pi's fields, recorded in the conformance scenario
    // `rpc-skills-templates`).
    let project = sandbox.root().join("project");
    std::fs::create_dir_all(project.join(".pi/prompts")).unwrap();
    std::fs::create_dir_all(project.join(".pi/skills/hello")).unwrap();
    std::fs::write(
        project.join(".pi/prompts/review.md"),
        "---\ndescription: Review\n---\nReview $1",
    )
    .unwrap();
    std::fs::write(
        project.join(".pi/skills/hello/SKILL.md"),
        "---\nname: hello\ndescription: Greets.\n---\nHi.",
    )
    .unwrap();
    // RpcClient starts `node` from PATH: the one this test runs.
    let mut path = std::ffi::OsString::from(node.parent().unwrap());
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    let mut command = sandbox.command(&[&format!("{DATA}/drive.mjs")]);
    command
        .env("PATH", path)
        .env("PI_073_PACKAGE", &package)
        .env("PI_RPC_CLIENT_COMMAND", json!([env!("CARGO_BIN_EXE_pi")]).to_string());
    let run = output(command).await;
    let stderr = text(&run.stderr);
    assert!(run.status.success(), "drive.mjs failed: {stderr}");
    let printed: Value = serde_json::from_str(text(&run.stdout).trim()).unwrap();
    let report = Report {
        methods: serde_json::from_value(printed["methods"].clone()).unwrap(),
        steps: printed["steps"].as_array().unwrap().clone(),
    };
    check_steps(&report, &project);

    // The model saw what the client asked for: the tool call and its result, the steered and
    // followed-up messages in their own turns, no aborted answer, and the user's two `bash`
    // commands before the next prompt. (Checked once against pi 0.73.1 itself, the same script
    // with pi-shim.mjs running the package's dist/cli.js: the same seven requests.)
    let requests: Vec<Value> = server.requests().iter().map(|r| r.json()).collect();
    assert_eq!(requests.len(), 8, "{requests:#?}");
    insta::assert_snapshot!("rpc_client_requests", conversation(&requests[..7]));
    // The eighth asked for the summary, with the client's instructions.
    let summary_request = requests[7].to_string();
    assert!(summary_request.contains("Keep the decisions"), "{summary_request}");
}

/// The answer the client aborts once its first piece arrived.
const ABORTED: &str = "Another long answer that is aborted long before it finishes streaming, piece by piece.";

fn check_steps(report: &Report, project: &std::path::Path) {
    let mut expected: Vec<&str> = CLIENT_METHODS.to_vec();
    expected.extend(["handleLine", "send", "getData"]);
    assert_eq!(report.methods, expected, "pi 0.73.1's RpcClient has other methods");
    let exercised = report.exercised();
    let missing: Vec<&str> = CLIENT_METHODS.into_iter().filter(|m| !exercised.contains(*m)).collect();
    assert!(missing.is_empty(), "methods drive.mjs does not call: {missing:?}");
    // Every step succeeded but the ones meant to fail.
    let meant = ["setModel: unknown", "exportHtml"];
    let unexpected: Vec<String> = report
        .steps
        .iter()
        .filter(|s| (s["ok"] == true) == meant.contains(&s["step"].as_str().unwrap()))
        .map(|s| {
            format!(
                "{} (error {}; events {}; responses {})",
                s["step"], s["error"], s["events"], s["exchanges"]
            )
        })
        .collect();
    assert!(
        unexpected.is_empty(),
        "steps that did not do as meant:\n{}",
        unexpected.join("\n")
    );

    // `exportHtml` comes last, in the new session that has no answer and so no file yet: pi's
    // `exportSessionToHtml` refuses it with this message (the export itself: tests/rpc.rs).
    assert_eq!(
        report.error("exportHtml"),
        "Nothing to export yet - start a conversation first"
    );
    assert!(!project.join("session.html").exists());

    // Every other command succeeded.
    for step in &report.steps {
        let name = step["step"].as_str().unwrap();
        if name == "setModel: unknown" || name == "exportHtml" {
            continue;
        }
        for response in report.responses(name) {
            assert_eq!(response["success"], true, "{name}: {response}");
        }
    }

    check_state_and_models(report, project);
    check_runs(report);
    check_sessions(report);
    assert_eq!(report.value("getStderr"), "", "nothing on stderr");
    // RpcClient.stop sends SIGTERM; idle, pi exits with 128 + 15.
    assert_eq!(report.value("stop"), &json!({"exitCode": 143, "signalCode": null}));
}

fn check_state_and_models(report: &Report, project: &std::path::Path) {
    let fresh = report.value("getState: fresh");
    assert_eq!(fresh["model"]["provider"], "mock");
    assert_eq!(fresh["model"]["id"], "mock-model");
    for (key, value) in [
        ("thinkingLevel", json!("medium")),
        ("isStreaming", json!(false)),
        ("isCompacting", json!(false)),
        ("steeringMode", json!("one-at-a-time")),
        ("followUpMode", json!("one-at-a-time")),
        ("messageCount", json!(0)),
        ("pendingMessageCount", json!(0)),
    ] {
        assert_eq!(fresh[key], value, "{key}: {fresh}");
    }
    assert!(fresh.get("sessionName").is_none(), "{fresh}");
    let base = project.join(".pi");
    assert_eq!(
        report.value("getCommands"),
        &json!([
            {"name": "review", "description": "Review", "source": "prompt", "sourceInfo": {
                "path": project.join(".pi/prompts/review.md"), "source": "auto", "scope": "project",
                "origin": "top-level", "baseDir": base}},
            {"name": "skill:hello", "description": "Greets.", "source": "skill", "sourceInfo": {
                "path": project.join(".pi/skills/hello/SKILL.md"), "source": "auto", "scope": "project",
                "origin": "top-level", "baseDir": base}},
        ])
    );
    let models: Vec<&Value> = report
        .value("getAvailableModels")
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["id"])
        .collect();
    assert_eq!(models, ["mock-model", "mock-other"]);

    for name in [
        "setSteeringMode",
        "setFollowUpMode",
        "setThinkingLevel",
        "setSessionName",
    ] {
        assert_eq!(report.value(name), &Value::Null, "{name} resolves to nothing");
    }
    let set = report.value("getState: modes and level");
    assert_eq!(
        (&set["steeringMode"], &set["followUpMode"], &set["thinkingLevel"]),
        (&json!("all"), &json!("all"), &json!("low"))
    );
    assert_eq!(report.value("cycleThinkingLevel"), &json!({"level": "medium"}));
    assert_eq!(report.value("setModel")["id"], "mock-other");
    assert_eq!(report.value("setModel")["reasoning"], false);
    assert_eq!(
        report.value("cycleThinkingLevel: a model that cannot reason"),
        &Value::Null
    );
    // Back on the reasoning model, the level saved before (`medium`) comes back, with one event.
    let cycled = report.value("cycleModel");
    assert_eq!(cycled["model"]["id"], "mock-model");
    assert_eq!(
        (&cycled["thinkingLevel"], &cycled["isScoped"]),
        (&json!("medium"), &json!(false)),
        "{cycled}"
    );
    assert_eq!(report.events("cycleModel"), ["thinking_level_changed"]);
    assert_eq!(report.error("setModel: unknown"), "Model not found: mock/nope");
    assert_eq!(report.value("getState: named")["sessionName"], "client session");
    assert_eq!(report.events("setSessionName"), ["session_info_changed"]);
}

fn check_runs(report: &Report) {
    let tool_run = report.value("promptAndWait: a tool call").as_array().unwrap();
    assert_eq!(tool_run.first().unwrap(), "agent_start");
    assert_eq!(tool_run.last().unwrap(), "agent_end");
    for kind in ["tool_execution_start", "tool_execution_end"] {
        assert_eq!(
            tool_run.iter().filter(|k| *k == kind).count(),
            1,
            "{kind}: {tool_run:?}"
        );
    }
    assert_eq!(report.value("getLastAssistantText"), "The command printed tool-ran.");

    // One run of three turns: the slow answer, the steered one, the follow-up.
    let steered = report
        .value("collectEvents + prompt, steer, followUp")
        .as_array()
        .unwrap();
    let count = |kind: &str| steered.iter().filter(|k| *k == kind).count();
    assert_eq!(
        (count("agent_start"), count("turn_end"), count("agent_end")),
        (1, 3, 1),
        "{steered:?}"
    );
    assert_eq!(steered.last().unwrap(), "agent_end");
    assert!(count("queue_update") >= 2, "{steered:?}");

    assert_eq!(report.value("waitForIdle + prompt, abort"), "aborted");
    assert_eq!(report.value("abort: while idle"), &Value::Null);
    // The aborted answer's text so far: at least its first piece.
    let partial = report.value("getLastAssistantText: after the abort").as_str().unwrap();
    assert!(partial.len() >= 16 && ABORTED.starts_with(partial), "{partial:?}");

    assert_eq!(
        report.value("bash"),
        &json!({"output": "from-bash\n", "exitCode": 0, "cancelled": false, "truncated": false})
    );
    assert_eq!(
        report.value("abortBash"),
        &json!({"output": "started\n", "cancelled": true, "truncated": false})
    );
    let after = report.events("prompt: after bash");
    assert_eq!(after.last(), Some(&"agent_end"), "{after:?}");
}

fn check_sessions(report: &Report) {
    let stats = report.value("getSessionStats");
    for (key, value) in [
        ("userMessages", 6),
        ("assistantMessages", 7),
        ("toolCalls", 1),
        ("toolResults", 1),
        ("totalMessages", 16),
    ] {
        assert_eq!(stats[key], value, "{key}: {stats}");
    }
    assert_eq!(
        stats["tokens"],
        json!({"input": 600, "output": 120, "cacheRead": 0, "cacheWrite": 0, "total": 720})
    );
    let named = report.value("getState: named");
    assert_eq!(stats["sessionFile"], named["sessionFile"]);
    assert_eq!(stats["sessionId"], named["sessionId"]);

    let roles = |name: &str| -> Vec<String> {
        report
            .value(name)
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        roles("getMessages"),
        [
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant",
            "bashExecution",
            "bashExecution",
            "user",
            "assistant"
        ]
    );
    let forkable: Vec<&Value> = report
        .value("getForkMessages")
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["text"])
        .collect();
    assert_eq!(
        forkable,
        [
            "Run the echo command",
            "Talk slowly",
            "Be brief",
            "Then summarize",
            "Another slow one",
            "What did I run?"
        ]
    );
    assert_eq!(
        report.value("fork"),
        &json!({"text": "Talk slowly", "cancelled": false})
    );
    assert_eq!(
        roles("getMessages: forked"),
        ["user", "assistant", "toolResult", "assistant"]
    );
    // Our `warnings` (the torn lines of the file) is an addition to pi's answer.
    assert_eq!(report.value("switchSession")["cancelled"], false);
    let back = report.value("getState: switched back");
    assert_eq!(back["sessionFile"], named["sessionFile"]);
    assert_eq!(back["messageCount"], 16);
    assert_eq!(back["sessionName"], "client session");
    // Compaction (issue 17): the summary the model wrote, then auto-compaction turned off.
    assert_eq!(report.value("compact")["summary"], "## Goal\nNothing yet.");
    assert_eq!(report.value("setAutoCompaction"), &Value::Null);
    // Automatic retry (issue 17): turned off and saved; nothing is waiting, so there is nothing to abort.
    assert_eq!(report.value("setAutoRetry"), &Value::Null);
    assert_eq!(report.value("abortRetry"), &Value::Null);
    // `clone` copies that branch into a new session file, name and messages kept.
    assert_eq!(report.value("clone"), &json!({"cancelled": false}));
    let cloned = report.value("getState: cloned");
    assert_ne!(cloned["sessionFile"], named["sessionFile"]);
    assert_ne!(cloned["sessionId"], named["sessionId"]);
    assert_eq!(cloned["messageCount"], 16);
    assert_eq!(cloned["sessionName"], "client session");
    assert_eq!(report.value("newSession"), &json!({"cancelled": false}));
    assert_eq!(report.value("newSession: with a parent"), &json!({"cancelled": false}));
    let new = report.value("getState: new");
    assert_eq!(new["messageCount"], 0);
    assert_ne!(new["sessionId"], named["sessionId"]);
    assert!(new.get("sessionName").is_none(), "{new}");
}
