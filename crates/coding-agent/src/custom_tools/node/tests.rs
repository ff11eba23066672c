//! Tests of the Node host: the command construction and version logic of `node::load`, and
//! `host.mjs` itself driven over pipes with hand-written JSON-RPC lines. A test that needs `node`
//! (20.6 or newer) prints `skipped: <why>` and returns when there is none, unless
//! `PI_REQUIRE_NODE` is set: then a missing or too old `node` fails it. `.ci/run` provides one
//! (`PI_NODE`) and sets `PI_REQUIRE_NODE`, and runs these tests twice: with the newest LTS and
//! with Node.js 20.
//!
//! Longer than 800 lines on purpose: every host scenario drives the same pipe harness defined
//! here, and the tests read best beside it; `node/mod.rs` itself stays small.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use pi_test_support::json_lines::{JsonLinesChild, REQUIRE_NODE, skip_or_fail};
use serde_json::{Value, json};

use super::*;
use crate::custom_tools::{SessionReason, ToolSessionEvent};
use crate::resolve::{PendingActionStore, PendingError};
use crate::ui::{NotifyKind, ToolUi};
use pi_agent_core::{ToolContext, ToolError};

/// An environment lookup over `pairs` only.
fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let map: HashMap<String, String> = pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    move |name| map.get(name).cloned()
}

fn v(major: u32, minor: u32, patch: u32) -> NodeVersion {
    NodeVersion::new(major, minor, patch)
}

#[test]
fn versions_parse_and_compare() {
    assert_eq!(NodeVersion::parse("v22.6.0\n"), Some(v(22, 6, 0)));
    assert_eq!(NodeVersion::parse("  20.20.2 "), Some(v(20, 20, 2)));
    assert_eq!(NodeVersion::parse("v23.0.0-nightly20240101abc"), Some(v(23, 0, 0)));
    for bad in ["", "v22", "v22.6", "v22.6.0.1", "vx.y.z", "Welcome to Node"] {
        assert_eq!(NodeVersion::parse(bad), None, "{bad:?}");
    }
    assert!(v(22, 10, 0) > v(22, 6, 0));
    // pi 0.73's `engines`: Node.js 20.6 or newer, for TypeScript too (pi transpiles it).
    assert_eq!(MIN_NODE_TS.to_string(), "v20.6.0");
}

#[test]
fn script_kinds() {
    for ts in ["index.ts", "tool.mts", "tool.cts"] {
        assert_eq!(ScriptKind::of(Path::new(ts)), ScriptKind::TypeScript);
    }
    for js in ["index.js", "tool.mjs", "tool.cjs"] {
        assert_eq!(ScriptKind::of(Path::new(js)), ScriptKind::JavaScript);
    }
    assert_eq!(ScriptKind::TypeScript.min_node(), v(20, 6, 0));
    assert_eq!(ScriptKind::JavaScript.min_node(), v(20, 6, 0));
}

#[test]
fn flags_follow_the_node_version() {
    let ts = ScriptKind::TypeScript;
    let js = ScriptKind::JavaScript;
    let cases: [(NodeVersion, ScriptKind, &[&str]); 8] = [
        (v(20, 6, 0), js, &[]),
        (v(20, 10, 0), js, &["--experimental-detect-module"]),
        (
            v(20, 20, 2),
            js,
            &[
                "--disable-warning=ExperimentalWarning",
                "--disable-warning=MODULE_TYPELESS_PACKAGE_JSON",
                "--experimental-detect-module",
            ],
        ),
        (v(20, 6, 0), ts, &["--enable-source-maps"]),
        (
            v(22, 6, 0),
            ts,
            &[
                "--disable-warning=ExperimentalWarning",
                "--disable-warning=MODULE_TYPELESS_PACKAGE_JSON",
                "--enable-source-maps",
                "--experimental-detect-module",
            ],
        ),
        (
            v(22, 23, 3),
            js,
            &[
                "--disable-warning=ExperimentalWarning",
                "--disable-warning=MODULE_TYPELESS_PACKAGE_JSON",
            ],
        ),
        (
            v(26, 10, 0),
            ts,
            &[
                "--disable-warning=ExperimentalWarning",
                "--disable-warning=MODULE_TYPELESS_PACKAGE_JSON",
                "--enable-source-maps",
            ],
        ),
        (v(21, 0, 0), js, &["--experimental-detect-module"]),
    ];
    for (version, kind, expected) in cases {
        assert_eq!(node_flags(version, kind), expected, "{version} {kind:?}");
    }
}

#[test]
fn old_nodes_are_refused_with_what_is_needed() {
    let node = Path::new("/usr/bin/node");
    let ts = Path::new("/tools/todo/index.ts");
    let js = Path::new("/tools/todo/index.js");
    assert_eq!(check_version(v(20, 6, 0), node, ts).map_err(|e| e.to_string()), Ok(()));
    assert_eq!(check_version(v(20, 20, 2), node, ts).map_err(|e| e.to_string()), Ok(()));
    assert_eq!(check_version(v(20, 6, 0), node, js).map_err(|e| e.to_string()), Ok(()));
    assert_eq!(
        check_version(v(20, 5, 1), node, ts).map_err(|e| e.to_string()),
        Err(
            "/tools/todo/index.ts is TypeScript, which needs Node.js 20.6 or newer (pi transpiles it; the host needs \
             module.register); /usr/bin/node is v20.5.1. Install a newer Node.js or set PI_NODE to one"
                .to_owned()
        )
    );
    assert_eq!(
        check_version(v(18, 19, 0), node, js).map_err(|e| e.to_string()),
        Err(
            "/tools/todo/index.js needs Node.js 20.6 or newer (for module.register); /usr/bin/node is v18.19.0. \
             Install a newer Node.js or set PI_NODE to one"
                .to_owned()
        )
    );
}

/// Writes an executable file `name` in `dir` with `script`.
fn write_program(dir: &Path, name: &str, script: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, script).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}

#[test]
fn node_is_found_through_pi_node_then_path() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let node = write_program(&bin, if cfg!(windows) { "node.exe" } else { "node" }, "");
    let other = write_program(&bin, if cfg!(windows) { "mynode.exe" } else { "mynode" }, "");
    let path = bin.display().to_string();
    let entry = Path::new("/tools/hello/index.ts");

    assert_eq!(
        find_node(&env_of(&[("PATH", &path)]), entry).map_err(|e| e.to_string()),
        Ok(node.clone())
    );
    let absolute = other.display().to_string();
    assert_eq!(
        find_node(&env_of(&[("PATH", ""), ("PI_NODE", &absolute)]), entry).map_err(|e| e.to_string()),
        Ok(other.clone())
    );
    assert_eq!(
        find_node(&env_of(&[("PATH", &path), ("PI_NODE", "mynode")]), entry).map_err(|e| e.to_string()),
        Ok(other.clone())
    );
    assert_eq!(
        find_node(&env_of(&[("PATH", &path), ("PI_NODE", "")]), entry).map_err(|e| e.to_string()),
        Ok(node.clone())
    );

    let missing = dir.path().join("nope").display().to_string();
    assert_eq!(
        find_node(&env_of(&[("PATH", &path), ("PI_NODE", &missing)]), entry).map_err(|e| e.to_string()),
        Err(format!(
            "PI_NODE={missing} is not a program pi can run; Node.js is needed to run /tools/hello/index.ts \
             (install Node.js 20.6 or newer, or set PI_NODE to its path)"
        ))
    );
    assert_eq!(
        find_node(&env_of(&[]), Path::new("/tools/hello/index.js")).map_err(|e| e.to_string()),
        Err("Node.js is needed to run /tools/hello/index.js (install Node.js 20.6 or newer, or set PI_NODE to its path)"
            .to_owned())
    );
    #[cfg(unix)]
    {
        let plain = dir.path().join("plain");
        std::fs::create_dir_all(&plain).unwrap();
        std::fs::write(plain.join("node"), "").unwrap();
        let plain = plain.display().to_string();
        assert!(
            find_node(&env_of(&[("PATH", &plain)]), entry).is_err(),
            "not executable"
        );
    }
}

#[cfg(unix)]
#[test]
fn the_command_runs_the_host_on_the_entry_in_its_directory() {
    let spec = process_spec(
        Path::new("/opt/node/bin/node"),
        v(22, 23, 3),
        Path::new("/cache/host.mjs"),
        Path::new("/tools/todo/index.ts"),
    );
    assert_eq!(
        spec,
        ProcessSpec {
            program: PathBuf::from("/opt/node/bin/node"),
            args: [
                "--disable-warning=ExperimentalWarning",
                "--disable-warning=MODULE_TYPELESS_PACKAGE_JSON",
                "--enable-source-maps",
                "/cache/host.mjs",
                "/tools/todo/index.ts",
            ]
            .map(String::from)
            .to_vec(),
            env: BTreeMap::new(),
            dir: PathBuf::from("/tools/todo"),
            timeout: CALL_TIMEOUT,
            label: "node index.ts".to_owned(),
        }
    );
    let relative = process_spec(
        Path::new("/opt/node/bin/node"),
        v(20, 20, 2),
        Path::new("/cache/host.mjs"),
        Path::new("tools/hello/index.js"),
    );
    let cwd = std::env::current_dir().unwrap();
    assert_eq!(relative.dir, cwd.join("tools/hello"));
    assert_eq!(
        relative.args.last().map(PathBuf::from),
        Some(cwd.join("tools/hello/index.js"))
    );
}

#[test]
fn the_host_file_is_written_once_and_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("pi").join("node-host");
    let path = host_file(&cache).unwrap();
    assert!(path.starts_with(&cache));
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with(&format!("host-{}-", env!("CARGO_PKG_VERSION"))),
        "{name}"
    );
    assert!(name.ends_with(".mjs"), "{name}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), HOST_SOURCE);

    std::fs::write(&path, "tampered").unwrap();
    assert_eq!(host_file(&cache).unwrap(), path);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), HOST_SOURCE);
    let files: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(files.len(), 1, "no temporary file left: {files:?}");
}

#[test]
fn the_cache_directory_is_the_users() {
    assert_eq!(
        cache_dir(&env_of(&[("XDG_CACHE_HOME", "/xdg"), ("HOME", "/home/me")])),
        Path::new("/xdg").join("pi").join("node-host")
    );
    assert_eq!(
        cache_dir(&env_of(&[("HOME", "/home/me")])),
        Path::new("/home/me").join(".cache").join("pi").join("node-host")
    );
    assert_eq!(cache_dir(&env_of(&[])), std::env::temp_dir().join("pi-node-host"));
}

#[cfg(unix)]
#[tokio::test]
async fn prepare_asks_the_version_and_refuses_an_old_node() {
    let dir = tempfile::tempdir().unwrap();
    let old = write_program(dir.path(), "old-node", "#!/bin/sh\necho v20.5.1\n");
    let new = write_program(dir.path(), "new-node", "#!/bin/sh\necho v20.20.2\n");
    let broken = write_program(dir.path(), "broken-node", "#!/bin/sh\necho hello\n");
    let tool = dir.path().join("tool");
    std::fs::create_dir_all(&tool).unwrap();
    let entry = tool.join("index.ts");
    std::fs::write(
        &entry,
        "import { helper } from \"./helper\";\nexport default (): void => helper;\n",
    )
    .unwrap();
    std::fs::write(tool.join("helper.ts"), "export const helper: number = 1;\n").unwrap();
    let cache = dir.path().join("cache").display().to_string();
    let agent_cache = dir.path().join("agent/cache");
    let env_with = |node: &Path| -> EnvLookup {
        Arc::new(env_of(&[
            ("PI_NODE", &node.display().to_string()),
            ("XDG_CACHE_HOME", &cache),
        ]))
    };

    let error = prepare(&entry, env_with(&old), Some(&agent_cache))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("is TypeScript, which needs Node.js 20.6 or newer"),
        "{error}"
    );
    assert!(error.contains("is v20.5.1"), "{error}");
    let error = prepare(&tool.join("index.js"), env_with(&old), None).await.unwrap_err();
    assert!(error.to_string().contains("needs Node.js 20.6 or newer"), "{error}");

    let spec = prepare(&entry, env_with(&new), Some(&agent_cache)).await.unwrap();
    assert_eq!(spec.program, new);
    assert_eq!(spec.dir, tool);
    assert_eq!(spec.args.len(), 6);
    assert_eq!(spec.args[2], "--enable-source-maps");
    // The TypeScript files, transpiled into <agent dir>/cache/ts, are named to the host.
    let modules: BTreeMap<String, String> = serde_json::from_str(&spec.env[TS_MODULES_ENV]).unwrap();
    let real = |path: &Path| std::fs::canonicalize(path).unwrap().display().to_string();
    assert_eq!(
        modules.keys().cloned().collect::<Vec<_>>(),
        [real(&tool.join("helper.ts")), real(&entry)]
    );
    for output in modules.values() {
        assert!(Path::new(output).starts_with(agent_cache.join("ts")), "{output}");
        assert!(output.ends_with(".mjs"), "{output}");
    }
    let host = PathBuf::from(&spec.args[4]);
    assert!(
        host.starts_with(dir.path().join("cache/pi/node-host")),
        "{}",
        host.display()
    );
    assert_eq!(std::fs::read_to_string(host).unwrap(), HOST_SOURCE);
    assert_eq!(spec.args[5], entry.display().to_string());

    // The version is asked once per node: a changed answer is not seen.
    std::fs::write(&new, "#!/bin/sh\necho v18.0.0\n").unwrap();
    assert!(prepare(&entry, env_with(&new), Some(&agent_cache)).await.is_ok());

    // A TypeScript syntax error is reported with the file.
    std::fs::write(tool.join("helper.ts"), "export const helper: = 1;\n").unwrap();
    let error = prepare(&entry, env_with(&new), Some(&agent_cache))
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("helper.ts: "), "{error}");

    let error = prepare(&entry, env_with(&broken), None).await.unwrap_err().to_string();
    assert_eq!(
        error,
        format!(
            "{} --version printed \"hello\", not a Node.js version",
            broken.display()
        )
    );
}

// ---------------------------------------------------------------------------------------------
// host.mjs over pipes
// ---------------------------------------------------------------------------------------------

/// How long any one message may take.
const MESSAGE_TIMEOUT: Duration = Duration::from_secs(20);

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/custom_tools/node/fixtures")
        .join(name)
}

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/custom-tools")
        .join(name)
        .join("index.ts")
}

/// The `node` that runs `entry` and its version, found through `env` as pi finds it; `None` after
/// [`skip_or_fail`] when there is none or it is too old.
async fn node_for(env: &dyn Fn(&str) -> Option<String>, entry: &Path) -> Option<(PathBuf, NodeVersion)> {
    let found = async {
        let node = find_node(env, entry)?;
        let version = node_version(&node).await?;
        check_version(version, &node, entry)?;
        Ok::<_, NodeError>((node, version))
    };
    match found.await {
        Ok(found) => Some(found),
        Err(why) => {
            skip_or_fail(env, &why.to_string());
            None
        }
    }
}

#[tokio::test]
async fn without_pi_require_node_a_missing_node_skips_the_test() {
    let env = env_of(&[("PATH", ""), ("PI_NODE", "/nonexistent/node")]);
    assert_eq!(node_for(&env, &fixture("probe.mjs")).await, None);
}

#[tokio::test]
#[should_panic(expected = "PI_REQUIRE_NODE is set, but PI_NODE=/nonexistent/node is not a program pi can run")]
async fn with_pi_require_node_a_missing_node_fails_the_test() {
    let env = env_of(&[("PATH", ""), ("PI_NODE", "/nonexistent/node"), (REQUIRE_NODE, "1")]);
    node_for(&env, &fixture("probe.mjs")).await;
}

#[cfg(unix)]
#[tokio::test]
#[should_panic(expected = "PI_REQUIRE_NODE is set, but")]
async fn with_pi_require_node_a_too_old_node_fails_the_test() {
    let dir = tempfile::tempdir().unwrap();
    let old = write_program(dir.path(), "node", "#!/bin/sh\necho v20.5.1\n");
    let old = old.display().to_string();
    let env = env_of(&[("PATH", ""), ("PI_NODE", &old), (REQUIRE_NODE, "1")]);
    // TypeScript needs Node.js 20.6.
    node_for(&env, &example("hello")).await;
}

/// A running host (the JSON-lines child of pi-test-support, with the custom-tool protocol on top).
struct Host(JsonLinesChild);

impl std::ops::Deref for Host {
    type Target = JsonLinesChild;
    fn deref(&self) -> &JsonLinesChild {
        &self.0
    }
}

impl std::ops::DerefMut for Host {
    fn deref_mut(&mut self) -> &mut JsonLinesChild {
        &mut self.0
    }
}

impl Host {
    /// Starts the host on `entry` with the command `prepare` builds (the system's `node`, or
    /// `PI_NODE`), plus `env`; `None` (after [`skip_or_fail`]) when that `node` cannot run `entry`.
    async fn start(entry: &Path, env: &[(&str, &str)]) -> Option<Host> {
        let system = |name: &str| std::env::var(name).ok();
        node_for(&system, entry).await?;
        let cache = std::env::temp_dir().join("pi-node-host-tests").display().to_string();
        let lookup = move |name: &str| {
            if name == "XDG_CACHE_HOME" {
                Some(cache.clone())
            } else {
                std::env::var(name).ok()
            }
        };
        let ts_cache = std::env::temp_dir().join("pi-node-host-tests");
        let spec = prepare(entry, Arc::new(lookup), Some(&ts_cache)).await.unwrap();
        let mut command = tokio::process::Command::new(&spec.program);
        command
            .args(&spec.args)
            .envs(&spec.env)
            .envs(env.iter().copied())
            .current_dir(&spec.dir);
        Some(Host(JsonLinesChild::spawn(command, MESSAGE_TIMEOUT)))
    }

    /// The next message, which must answer request `id`.
    async fn response(&mut self, id: u64) -> Value {
        let message = self.recv().await;
        assert_eq!(message["id"], id, "expected the answer to {id}: {message}");
        assert!(message.get("method").is_none(), "{message}");
        message
    }

    /// Sends a request and returns its `result` (panics on an error).
    async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params).await;
        let answer = self.response(id).await;
        assert!(answer.get("error").is_none(), "{answer}");
        answer["result"].clone()
    }

    /// Sends a request and returns its error message (panics on a result).
    async fn call_err(&mut self, method: &str, params: Value) -> String {
        let id = self.request(method, params).await;
        let answer = self.response(id).await;
        assert!(answer.get("result").is_none(), "{answer}");
        answer["error"]["message"].as_str().unwrap().to_owned()
    }

    async fn initialize(&mut self, cwd: &Path, has_ui: bool) -> Value {
        let params = json!({"protocolVersion": 1, "cwd": cwd, "hasUI": has_ui, "piVersion": "0.1.0"});
        self.call("initialize", params).await
    }

    /// `execute` of `tool`; returns the request id.
    async fn execute(&mut self, call_id: &str, tool: &str, params: Value) -> u64 {
        self.request("execute", json!({"callId": call_id, "tool": tool, "params": params}))
            .await
    }

    /// `shutdown`, then the exit status.
    async fn shutdown(&mut self) -> std::process::ExitStatus {
        assert_eq!(self.call("shutdown", json!({})).await, Value::Null);
        self.close_stdin();
        tokio::time::timeout(MESSAGE_TIMEOUT, self.child().wait())
            .await
            .expect("the host exits after shutdown")
            .unwrap()
    }
}

/// The text of a result's first content block.
fn text(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {result}"))
}

#[tokio::test]
async fn initialize_converts_typebox_schemas_and_keeps_stdout_clean() {
    let Some(mut host) = Host::start(&fixture("probe.mjs"), &[]).await else {
        return;
    };
    let cwd = tempfile::tempdir().unwrap();
    let result = host.initialize(cwd.path(), true).await;
    let tools = result["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "echo",
            "wait_abort",
            "run",
            "stage",
            "ask",
            "state",
            "fail",
            "bad_session"
        ]
    );
    assert_eq!(
        tools[0],
        json!({
            "name": "echo",
            "label": "Echo",
            "description": "Echoes its text",
            "executionMode": "sequential",
            "parameters": {
                "additionalProperties": false,
                "type": "object",
                "properties": {
                    "text": {"description": "What to echo", "type": "string"},
                    "times": {"minimum": 1, "type": "integer"},
                    "mode": {"type": "string", "enum": ["loud", "quiet"], "description": "How"},
                    "tags": {"type": "array", "items": {"anyOf": [
                        {"const": "a", "type": "string"},
                        {"const": 2, "type": "number"}
                    ]}},
                    "meta": {"type": "object", "patternProperties": {"^(.*)$": {}}}
                },
                "required": ["text"]
            }
        })
    );
    assert!(tools[1].get("label").is_none() && tools[1].get("executionMode").is_none());
    assert_eq!(tools[1]["parameters"], json!({"type": "object", "properties": {}}));

    let id = host.execute("call-1", "echo", json!({"text": "hi"})).await;
    let update = host.recv().await;
    assert_eq!(
        update,
        json!({"jsonrpc": "2.0", "method": "update", "params": {
            "callId": "call-1",
            "partial": {"content": [{"type": "text", "text": "echoing"}], "details": {"step": 1}}
        }})
    );
    let answer = host.response(id).await;
    let result = &answer["result"];
    assert_eq!(text(result), "hi");
    let details = &result["details"];
    assert_eq!(details["toolCallId"], "call-1");
    assert_eq!(details["aborted"], false);
    assert_eq!(details["sameTypebox"], true);
    assert_eq!(details["hasUI"], true);
    assert_eq!(details["typeNameIsPlaceholder"], true);
    // pi-tui's `Text` pads every line to the width (80 here).
    assert_eq!(
        details["text"],
        json!([format!("a{}", " ".repeat(79)), format!("b{}", " ".repeat(79))])
    );
    assert_eq!(details["cwd"], cwd.path().display().to_string());
    let process_cwd = PathBuf::from(details["processCwd"].as_str().unwrap());
    assert_eq!(
        process_cwd.canonicalize().unwrap(),
        cwd.path().canonicalize().unwrap(),
        "the host works in pi's directory"
    );

    assert_eq!(host.shutdown().await.code(), Some(0));
    let stderr = host.stderr();
    for noise in [
        "probe: console.log while loading",
        "probe: stray console.log",
        "probe: stray process.stdout.write",
    ] {
        assert!(stderr.contains(noise), "{noise:?} goes to stderr: {stderr}");
    }
}

#[tokio::test]
async fn errors_become_json_rpc_errors() {
    let Some(mut host) = Host::start(&fixture("probe.mjs"), &[]).await else {
        return;
    };
    let cwd = tempfile::tempdir().unwrap();
    host.initialize(cwd.path(), false).await;
    let params = |tool: &str| json!({"callId": "c", "tool": tool, "params": {}});
    assert_eq!(host.call_err("execute", params("fail")).await, "it broke");
    assert_eq!(host.call_err("execute", params("nope")).await, "Unknown tool: nope");
    let result = host.call("execute", params("bad_session")).await;
    assert_eq!(
        result,
        json!({"content": [{"type": "text", "text": "plain string result"}]})
    );
    let id = host.request("no.such.method", json!({})).await;
    let answer = host.response(id).await;
    assert_eq!(answer["error"]["code"], -32601);
    assert_eq!(
        host.call_err("initialize", json!({"protocolVersion": 1, "cwd": "/"}))
            .await,
        "Already initialized"
    );
    // A line that is not JSON, and a response nobody waits for, are ignored.
    host.write_raw(b"this is not json\n").await;
    host.send(json!({"jsonrpc": "2.0", "id": 999, "result": null})).await;
    assert_eq!(
        text(&host.call("execute", params("bad_session")).await),
        "plain string result"
    );
    assert_eq!(host.shutdown().await.code(), Some(0));
}

#[tokio::test]
async fn cancel_aborts_the_call_and_its_processes() {
    let Some(mut host) = Host::start(&fixture("probe.mjs"), &[]).await else {
        return;
    };
    let cwd = tempfile::tempdir().unwrap();
    host.initialize(cwd.path(), false).await;

    let id = host.execute("w", "wait_abort", json!({})).await;
    assert_eq!(host.recv().await["method"], "update", "the call is running");
    host.send(json!({"jsonrpc": "2.0", "method": "cancel", "params": {"callId": "w"}}))
        .await;
    assert_eq!(text(&host.response(id).await["result"]), "aborted");

    // Cancelled before it starts (both lines in one write): the tool is not called.
    let execute = json!({"jsonrpc": "2.0", "id": 100, "method": "execute", "params": {"callId": "early", "tool": "wait_abort", "params": {}}});
    let cancel = json!({"jsonrpc": "2.0", "method": "cancel", "params": {"callId": "early"}});
    let both = format!("{execute}\n{cancel}\n");
    host.write_raw(both.as_bytes()).await;
    assert_eq!(host.response(100).await["error"]["message"], "Operation aborted");

    if cfg!(unix) {
        let started = std::time::Instant::now();
        let id = host
            .execute(
                "s",
                "run",
                json!({"command": "sh", "args": ["-c", "echo started; sleep 30"]}),
            )
            .await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        host.send(json!({"jsonrpc": "2.0", "method": "cancel", "params": {"callId": "s"}}))
            .await;
        let details = host.response(id).await["result"]["details"].clone();
        assert_eq!(details["killed"], true, "{details}");
        assert_eq!(details["code"], -1, "{details}");
        assert_eq!(details["stdout"], "started\n", "{details}");
        assert!(started.elapsed() < Duration::from_secs(10));

        let params = json!({"command": "sh", "args": ["-c", "echo hi; sleep 30"], "timeout": 300});
        let details = host
            .call("execute", json!({"callId": "t", "tool": "run", "params": params}))
            .await["details"]
            .clone();
        assert_eq!(details["killed"], true, "{details}");
        assert_eq!(details["stdout"], "hi\n", "{details}");

        let params = json!({"command": "sh", "args": ["-c", "echo out; echo err >&2; exit 3"]});
        let details = host
            .call("execute", json!({"callId": "e", "tool": "run", "params": params}))
            .await["details"]
            .clone();
        assert_eq!(
            details,
            json!({"stdout": "out\n", "stderr": "err\n", "code": 3, "killed": false})
        );

        let params = json!({"command": "pi-no-such-program", "args": []});
        let details = host
            .call("execute", json!({"callId": "m", "tool": "run", "params": params}))
            .await["details"]
            .clone();
        assert_eq!(details["code"], 127, "{details}");
        assert!(details["stderr"].as_str().unwrap().contains("ENOENT"), "{details}");
    }
    assert_eq!(host.shutdown().await.code(), Some(0));
}

/// Runs `stage` with `params`, expects its `pendingAction.push`, answers it with `answer`
/// (`Ok(result)` or `Err(message)`), and returns the push's params and the call's answer.
async fn stage(host: &mut Host, params: Value, answer: Result<Value, &str>) -> (Value, Value) {
    let id = host.execute("stage", "stage", params).await;
    let push = host.recv().await;
    assert_eq!(push["method"], "pendingAction.push", "{push}");
    match answer {
        Ok(result) => host.reply(&push["id"], result).await,
        Err(message) => {
            let reply = json!({"jsonrpc": "2.0", "id": push["id"], "error": {"code": -32000, "message": message}});
            host.send(reply).await;
        }
    }
    (push["params"].clone(), host.response(id).await)
}

#[tokio::test]
async fn pending_actions_are_applied_and_rejected_through_their_callbacks() {
    let Some(mut host) = Host::start(&fixture("probe.mjs"), &[]).await else {
        return;
    };
    let cwd = tempfile::tempdir().unwrap();
    host.initialize(cwd.path(), false).await;

    let (push, answer) = stage(&mut host, json!({"label": "one"}), Ok(Value::Null)).await;
    let action = push["actionId"].clone();
    assert_eq!(
        push,
        json!({"actionId": action, "label": "one", "hasReject": false, "sourceToolName": "stage", "details": {"label": "one"}})
    );
    assert_eq!(text(&answer["result"]), "staged");
    let applied = host
        .call(
            "pendingAction.apply",
            json!({"actionId": action, "reason": "go", "extra": {"k": 1}}),
        )
        .await;
    assert_eq!(
        applied,
        json!({"content": [{"type": "text", "text": "applied one: go"}], "details": {"extra": {"k": 1}}})
    );
    let again = host
        .call_err("pendingAction.apply", json!({"actionId": action, "reason": "go"}))
        .await;
    assert_eq!(again, format!("Unknown pending action: {}", action.as_str().unwrap()));

    let (push, _) = stage(&mut host, json!({"label": "two", "reject": "text"}), Ok(Value::Null)).await;
    assert_eq!(push["hasReject"], true);
    let rejected = host
        .call(
            "pendingAction.reject",
            json!({"actionId": push["actionId"], "reason": "no"}),
        )
        .await;
    assert_eq!(text(&rejected), "rejected two: no");

    let (push, _) = stage(
        &mut host,
        json!({"label": "three", "reject": "default"}),
        Ok(Value::Null),
    )
    .await;
    let rejected = host
        .call(
            "pendingAction.reject",
            json!({"actionId": push["actionId"], "reason": "no"}),
        )
        .await;
    assert_eq!(rejected, Value::Null, "undefined from reject: pi's default text");

    let (push, _) = stage(&mut host, json!({"label": "four"}), Ok(Value::Null)).await;
    let rejected = host
        .call(
            "pendingAction.reject",
            json!({"actionId": push["actionId"], "reason": "no"}),
        )
        .await;
    assert_eq!(rejected, Value::Null, "no reject: pi's default text");

    // Without a store, a push the tool does not await fails the call, as pi's throw does…
    let unavailable = "Pending action store unavailable for custom tools in this runtime.";
    let (_, answer) = stage(&mut host, json!({"label": "five"}), Err(unavailable)).await;
    assert_eq!(answer["error"]["message"], unavailable, "{answer}");
    // …and one it awaits throws where it can catch it.
    let (_, answer) = stage(&mut host, json!({"label": "six", "await": true}), Err(unavailable)).await;
    assert_eq!(text(&answer["result"]), format!("caught: {unavailable}"));

    assert_eq!(host.shutdown().await.code(), Some(0));
}

/// Stages an action of the `flaky` tool of `flaky.mjs` with `params` (pi accepts the push);
/// returns its id.
async fn stage_flaky(host: &mut Host, params: Value) -> Value {
    let id = host.execute("flaky", "flaky", params).await;
    let push = host.recv().await;
    assert_eq!(push["method"], "pendingAction.push", "{push}");
    host.reply(&push["id"], Value::Null).await;
    assert_eq!(text(&host.response(id).await["result"]), "staged");
    push["params"]["actionId"].clone()
}

/// The text of the `result` of `answer`, which must not be an error.
fn result_text_of(answer: &Value) -> &str {
    assert!(answer.get("error").is_none(), "expected a result: {answer}");
    text(&answer["result"])
}

/// Sends `method` for `action` with `reason`; returns the whole answer (`result` or `error`).
async fn resolve_action(host: &mut Host, method: &str, action: &Value, reason: &str) -> Value {
    let id = host
        .request(method, json!({"actionId": action, "reason": reason}))
        .await;
    host.response(id).await
}

async fn flaky_host() -> Option<Host> {
    let mut host = Host::start(&fixture("flaky.mjs"), &[]).await?;
    let cwd = tempfile::tempdir().unwrap();
    host.initialize(cwd.path(), false).await;
    Some(host)
}

#[tokio::test]
async fn an_action_whose_apply_fails_stays_until_an_apply_or_discard_succeeds() {
    let Some(mut host) = flaky_host().await else {
        return;
    };
    let action = stage_flaky(&mut host, json!({"label": "one", "applyFailures": 1})).await;
    let failed = resolve_action(&mut host, "pendingAction.apply", &action, "go").await;
    assert_eq!(failed["error"]["message"], "apply broke", "{failed}");
    // The retry reaches the tool's apply again, which succeeds this time; then the action is gone.
    let applied = resolve_action(&mut host, "pendingAction.apply", &action, "go").await;
    assert_eq!(result_text_of(&applied), "applied one: go", "{applied}");
    let gone = resolve_action(&mut host, "pendingAction.apply", &action, "go").await;
    assert_eq!(gone["error"]["message"], "Unknown pending action: action-1", "{gone}");

    // After a failed apply, a discard reaches the tool's reject.
    let action = stage_flaky(&mut host, json!({"label": "two", "applyFailures": 1})).await;
    let failed = resolve_action(&mut host, "pendingAction.apply", &action, "go").await;
    assert_eq!(failed["error"]["message"], "apply broke", "{failed}");
    let rejected = resolve_action(&mut host, "pendingAction.reject", &action, "no").await;
    assert_eq!(result_text_of(&rejected), "rejected two: no", "{rejected}");
    let gone = resolve_action(&mut host, "pendingAction.reject", &action, "no").await;
    assert_eq!(gone["error"]["message"], "Unknown pending action: action-2", "{gone}");
    assert_eq!(host.shutdown().await.code(), Some(0));
}

#[tokio::test]
async fn an_action_whose_reject_fails_stays_until_a_discard_or_apply_succeeds() {
    let Some(mut host) = flaky_host().await else {
        return;
    };
    let action = stage_flaky(&mut host, json!({"label": "three", "rejectFailures": 1})).await;
    let failed = resolve_action(&mut host, "pendingAction.reject", &action, "no").await;
    assert_eq!(failed["error"]["message"], "reject broke", "{failed}");
    let rejected = resolve_action(&mut host, "pendingAction.reject", &action, "no").await;
    assert_eq!(result_text_of(&rejected), "rejected three: no", "{rejected}");
    let gone = resolve_action(&mut host, "pendingAction.apply", &action, "go").await;
    assert!(gone.get("error").is_some(), "{gone}");

    let action = stage_flaky(&mut host, json!({"label": "four", "rejectFailures": 1})).await;
    let failed = resolve_action(&mut host, "pendingAction.reject", &action, "no").await;
    assert_eq!(failed["error"]["message"], "reject broke", "{failed}");
    let applied = resolve_action(&mut host, "pendingAction.apply", &action, "go").await;
    assert_eq!(result_text_of(&applied), "applied four: go", "{applied}");
    assert_eq!(host.shutdown().await.code(), Some(0));
}

#[tokio::test]
async fn errors_say_whether_the_tool_shaped_them_for_the_model_or_something_threw() {
    let Some(mut host) = flaky_host().await else {
        return;
    };
    let cases = [
        (
            "error",
            json!({"code": -32000, "message": "apply broke", "data": {"kind": "exception"}}),
        ),
        (
            "string",
            json!({"code": -32000, "message": "apply threw a string", "data": {"kind": "exception"}}),
        ),
        (
            "tool",
            json!({"code": -32000, "message": "apply refused", "data": {"kind": "tool", "details": {"what": "apply"}}}),
        ),
    ];
    for (throws, error) in cases {
        let action = stage_flaky(
            &mut host,
            json!({"label": throws, "applyFailures": 1, "throws": throws}),
        )
        .await;
        let failed = resolve_action(&mut host, "pendingAction.apply", &action, "go").await;
        assert_eq!(failed["error"], error, "{throws}");
    }
    // The host's own protocol errors carry no kind (a tool error: the model reads them as they are).
    let unknown = resolve_action(&mut host, "pendingAction.apply", &json!("nope"), "go").await;
    assert_eq!(
        unknown["error"],
        json!({"code": -32602, "message": "Unknown pending action: nope"})
    );
    assert_eq!(host.shutdown().await.code(), Some(0));
}

#[tokio::test]
async fn an_on_session_that_throws_fails_the_session_request_after_every_tool_had_the_event() {
    let Some(mut host) = flaky_host().await else {
        return;
    };
    let event = json!({"reason": "start", "entries": [{"type": "x"}, {"type": "y"}], "sessionFile": null, "previousSessionFile": null});
    let message = host.call_err("session", event).await;
    assert_eq!(
        message,
        "onSession of \"bad_session\" failed: cannot rebuild from 2 entries"
    );
    let reason = host
        .call("execute", json!({"callId": "s", "tool": "good_session", "params": {}}))
        .await;
    assert_eq!(text(&reason), "start", "the tool after the failing one had the event");
    assert_eq!(host.shutdown().await.code(), Some(0));
}

/// A user interface that records notifications.
#[derive(Default)]
struct Notes(Mutex<Vec<(String, NotifyKind)>>);

#[async_trait::async_trait]
impl ToolUi for Notes {
    fn has_ui(&self) -> bool {
        true
    }
    async fn select(&self, _title: &str, _options: &[String]) -> Option<String> {
        None
    }
    async fn confirm(&self, _title: &str, _message: &str) -> bool {
        false
    }
    async fn input(&self, _title: &str, _placeholder: Option<&str>) -> Option<String> {
        None
    }
    fn notify(&self, message: &str, kind: NotifyKind) {
        self.0.lock().unwrap().push((message.to_owned(), kind));
    }
}

/// `flaky.mjs` loaded as pi loads it, with a pending-action store and a recording UI.
async fn load_flaky(cwd: &Path) -> Option<(Vec<Arc<dyn CustomTool>>, PendingActionStore, Arc<Notes>)> {
    let entry = fixture("flaky.mjs");
    let system = |name: &str| std::env::var(name).ok();
    node_for(&system, &entry).await?;
    let cache = std::env::temp_dir().join("pi-node-host-tests").display().to_string();
    let lookup = move |name: &str| {
        if name == "XDG_CACHE_HOME" {
            Some(cache.clone())
        } else {
            std::env::var(name).ok()
        }
    };
    let spec = prepare(&entry, Arc::new(lookup), None).await.unwrap();
    let notes = Arc::new(Notes::default());
    let ui: Arc<dyn ToolUi> = notes.clone();
    let store = PendingActionStore::new();
    let api = ToolApi::new(cwd)
        .with_pending_store(store.clone())
        .with_ui_slot(Arc::new(std::sync::RwLock::new(ui)));
    let tools = crate::custom_tools::process::load_spec(spec, &api).await.unwrap();
    Some((tools, store, notes))
}

/// Fixture `name` loaded as pi loads it, working in `cwd`.
async fn load_fixture(name: &str, cwd: &Path) -> Option<Vec<Arc<dyn CustomTool>>> {
    let entry = fixture(name);
    let system = |name: &str| std::env::var(name).ok();
    node_for(&system, &entry).await?;
    let cache = std::env::temp_dir().join("pi-node-host-tests").display().to_string();
    let lookup = move |name: &str| {
        if name == "XDG_CACHE_HOME" {
            Some(cache.clone())
        } else {
            std::env::var(name).ok()
        }
    };
    let spec = prepare(&entry, Arc::new(lookup), None).await.unwrap();
    Some(
        crate::custom_tools::process::load_spec(spec, &ToolApi::new(cwd))
            .await
            .unwrap(),
    )
}

/// A tool declaring `mutatedPaths: ["path"]` gets its place in source order: a slow append, a
/// `write` and a second append of one file in one message land in that order, and its own
/// `withFileMutationQueue` of the file does not wait for itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_node_tool_declaring_mutated_paths_lands_in_source_order() {
    use pi_agent_core::faux::{FauxModel, faux_assistant_message, faux_assistant_text, faux_tool_call};
    use pi_agent_core::{AgentContext, AgentLoopConfig, AgentMessage, run_agent_loop};

    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let Some(tools) = load_fixture("mutating.mjs", &cwd).await else {
        return;
    };
    let append = tools.iter().find(|t| t.name() == "append_declared").unwrap().clone();
    assert_eq!(
        append.mutated_files(&json!({"path": "n.txt", "text": ""})),
        [cwd.join("n.txt")]
    );
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![
            faux_tool_call(
                "c1",
                "append_declared",
                json!({"path": "n.txt", "text": "1", "delayMs": 150}),
            ),
            faux_tool_call("c2", "write", json!({"path": "n.txt", "content": "2"})),
            faux_tool_call("c3", "append_declared", json!({"path": "n.txt", "text": "3"})),
        ]),
        faux_assistant_text("done"),
    ]);
    let config = AgentLoopConfig::new(faux.model()).with_stream_fn(faux.stream_fn());
    let write = pi_tools::create_tool("write", &pi_tools::ToolEnv::new(&cwd)).unwrap();
    let context = AgentContext {
        tools: vec![append as Arc<dyn pi_agent_core::AgentTool>, write],
        ..AgentContext::default()
    };
    let (mut sink, cancel) = (|_| {}, tokio_util::sync::CancellationToken::new());
    let run = run_agent_loop(vec![AgentMessage::user("go")], context, &config, &cancel, &mut sink);
    let messages = tokio::time::timeout(MESSAGE_TIMEOUT, run).await.unwrap().unwrap();
    let results: Vec<_> = messages
        .iter()
        .filter_map(AgentMessage::as_tool_result)
        .map(|r| (r.text(), r.is_error))
        .collect();
    assert!(results.iter().all(|(_, is_error)| !is_error), "{results:?}");
    assert_eq!(std::fs::read_to_string(cwd.join("n.txt")).unwrap(), "23");
}

/// `withFileMutationQueue` of a tool that declared nothing queues in pi's own queue: it waits
/// while pi holds the file, and gives its place up when `fn` is done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_file_mutation_queue_waits_for_the_file_in_pis_queue() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let Some(tools) = load_fixture("mutating.mjs", &cwd).await else {
        return;
    };
    let queued = tools.iter().find(|t| t.name() == "append_queued").unwrap().clone();
    let file = cwd.join("q.txt");
    let held = pi_agent_core::lock_files(vec![file.clone()]).await.unwrap();
    let call = tokio::spawn(async move {
        let args = json!({"path": "q.txt", "text": "x"});
        queued.execute("c1", args, ToolContext::detached()).await
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!file.exists(), "the tool waited for pi's hold of the file");
    drop(held);
    let result = tokio::time::timeout(MESSAGE_TIMEOUT, call)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(result.content[0].as_text(), Some("appended"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    // The tool's place was given up.
    let again = tokio::time::timeout(MESSAGE_TIMEOUT, pi_agent_core::lock_files(vec![file])).await;
    assert!(again.unwrap().is_some());
}

#[tokio::test]
async fn through_pi_a_thrown_apply_reads_apply_failed_and_a_failing_on_session_warns_the_user() {
    let cwd = tempfile::tempdir().unwrap();
    let Some((tools, store, notes)) = load_flaky(cwd.path()).await else {
        return;
    };
    let flaky = tools.iter().find(|t| t.name() == "flaky").unwrap();
    let args = json!({"label": "one", "applyFailures": 2, "throws": "error"});
    flaky.execute("c1", args, ToolContext::detached()).await.unwrap();
    let action = store.peek().unwrap();
    assert_eq!(
        (action.apply)("go".into(), None).await.unwrap_err(),
        PendingError::Other("apply broke".into())
    );
    let args = json!({"label": "two", "applyFailures": 1, "throws": "tool"});
    flaky.execute("c2", args, ToolContext::detached()).await.unwrap();
    let action = store.peek().unwrap();
    let refused = ToolError::new("apply refused").with_details(json!({"what": "apply"}));
    assert_eq!(
        (action.apply)("go".into(), None).await.unwrap_err(),
        PendingError::Tool(refused)
    );

    tools[0]
        .on_session(&ToolSessionEvent::empty(SessionReason::Start))
        .await;
    let notes = notes.0.lock().unwrap().clone();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0].1, NotifyKind::Warning);
    assert!(
        notes[0]
            .0
            .ends_with(": session event failed: onSession of \"bad_session\" failed: cannot rebuild from 0 entries"),
        "{notes:?}"
    );
}

#[tokio::test]
async fn ui_calls_are_requests_to_pi() {
    let Some(mut host) = Host::start(&fixture("probe.mjs"), &[]).await else {
        return;
    };
    let cwd = tempfile::tempdir().unwrap();
    host.initialize(cwd.path(), true).await;
    let id = host.execute("a", "ask", json!({})).await;

    let select = host.recv().await;
    assert_eq!(select["method"], "ui.select");
    assert_eq!(select["params"], json!({"title": "Pick", "options": ["a", "b"]}));
    host.reply(&select["id"], json!("b")).await;
    let confirm = host.recv().await;
    assert_eq!(confirm["method"], "ui.confirm");
    assert_eq!(confirm["params"], json!({"title": "Sure?", "message": "Really?"}));
    host.reply(&confirm["id"], json!(true)).await;
    let input = host.recv().await;
    assert_eq!(input["method"], "ui.input");
    assert_eq!(input["params"], json!({"title": "Name", "placeholder": "your name"}));
    host.reply(&input["id"], Value::Null).await;
    let notify = host.recv().await;
    assert_eq!(
        notify,
        json!({"jsonrpc": "2.0", "method": "ui.notify", "params": {"message": "done", "type": "info"}})
    );
    let answer = host.response(id).await;
    assert_eq!(
        text(&answer["result"]),
        r#"{"choice":"b","ok":true,"text":"undefined"}"#
    );
    assert_eq!(host.shutdown().await.code(), Some(0));
    assert!(host.stderr().contains("ui.custom is not supported"));
}

#[tokio::test]
async fn session_events_reach_every_tool_and_shutdown_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    let marker_text = marker.display().to_string();
    let Some(mut host) = Host::start(&fixture("probe.mjs"), &[("PROBE_MARKER", &marker_text)]).await else {
        return;
    };
    host.initialize(dir.path(), false).await;
    let event = json!({"reason": "start", "entries": [{"type": "x"}, {"type": "y"}], "sessionFile": "/s.jsonl", "previousSessionFile": null});
    // `bad_session` throws: the request fails (pi warns the user), the other tools had the event.
    assert_eq!(
        host.call_err("session", event).await,
        "onSession of \"bad_session\" failed: session boom"
    );
    let state = host
        .call("execute", json!({"callId": "s", "tool": "state", "params": {}}))
        .await;
    assert_eq!(
        serde_json::from_str::<Value>(text(&state)).unwrap(),
        json!({"reason": "start", "entries": 2, "sessionFile": "/s.jsonl", "previousSessionFile": "undefined"})
    );
    assert!(!marker.exists());
    assert_eq!(host.shutdown().await.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "shutdown");
    let stderr = host.stderr();
    assert!(stderr.contains("onSession of \"bad_session\" failed"), "{stderr}");
    assert!(stderr.contains("session boom"), "{stderr}");
}

#[tokio::test]
async fn closing_stdin_without_shutdown_still_shuts_the_tools_down() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    let marker_text = marker.display().to_string();
    let Some(mut host) = Host::start(&fixture("probe.mjs"), &[("PROBE_MARKER", &marker_text)]).await else {
        return;
    };
    host.initialize(dir.path(), false).await;
    host.close_stdin();
    let status = tokio::time::timeout(MESSAGE_TIMEOUT, host.child().wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "shutdown");
}

#[tokio::test]
async fn modules_that_do_not_load_answer_initialize_with_the_reason() {
    let cwd = tempfile::tempdir().unwrap();
    let cases: [(&str, &str); 4] = [
        ("syntax-error.mjs", "Failed to load tool: "),
        ("no-default.mjs", "Tool must export a default function"),
        ("factory-throws.mjs", "Failed to load tool: factory boom"),
        ("missing-import.mjs", "Failed to load tool: Cannot find module"),
    ];
    for (name, expected) in cases {
        let Some(mut host) = Host::start(&fixture(name), &[]).await else {
            return;
        };
        let params = json!({"protocolVersion": 1, "cwd": cwd.path(), "hasUI": false, "piVersion": "0.1.0"});
        let error = host.call_err("initialize", params).await;
        assert!(error.starts_with(expected), "{name}: {error}");
        if name == "no-default.mjs" {
            assert_eq!(error, expected);
        }
        assert_eq!(host.shutdown().await.code(), Some(0));
    }
}

/// Initializes the host of fixture `name` and runs its only tool with `params`; the text of the
/// result, or `None` when skipped.
async fn run_fixture(name: &str, params: Value) -> Option<String> {
    let mut host = Host::start(&fixture(name), &[]).await?;
    let cwd = tempfile::tempdir().unwrap();
    let tools = host.initialize(cwd.path(), false).await;
    let tool = tools["tools"][0]["name"].clone();
    let result = host
        .call("execute", json!({"callId": "c", "tool": tool, "params": params}))
        .await;
    assert_eq!(host.shutdown().await.code(), Some(0));
    Some(text(&result).to_owned())
}

#[tokio::test]
async fn javascript_modules_of_every_kind_load() {
    if let Some(text) = run_fixture("commonjs.cjs", json!({})).await {
        assert_eq!(text, "from commonjs", "module.exports is the factory");
    }
    if let Some(text) = run_fixture("plain-esm.js", json!({})).await {
        assert_eq!(text, "from esm, hasUI false", "an ES module in a .js file");
    }
}

#[tokio::test]
async fn commonjs_require_of_pi_packages_needs_register_hooks() {
    let system = |name: &str| std::env::var(name).ok();
    let entry = fixture("commonjs-require.cjs");
    let Some((node, version)) = node_for(&system, &entry).await else {
        return;
    };
    // Beyond what PI_REQUIRE_NODE asks for (the 20.6 of all tools): a skip even then.
    if version < NodeVersion::new(22, 15, 0) {
        println!(
            "skipped: require() of pi's packages needs Node.js 22.15 or newer (module.registerHooks); {} is {version}",
            node.display()
        );
        return;
    }
    let text = run_fixture("commonjs-require.cjs", json!({"mode": "b"})).await;
    assert_eq!(text.as_deref(), Some("mode b"));
}

/// Runs the `typed` tool of `entry` (fixtures/typed.ts or a copy) and checks its answer.
async fn run_typed(entry: &Path) {
    let Some(mut host) = Host::start(entry, &[]).await else {
        return;
    };
    let cwd = tempfile::tempdir().unwrap();
    let tools = host.initialize(cwd.path(), false).await;
    assert_eq!(
        tools["tools"][0]["parameters"],
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
    );
    let result = host
        .call(
            "execute",
            json!({"callId": "c", "tool": "typed", "params": {"name": "pi"}}),
        )
        .await;
    assert_eq!(result["details"], json!({"greeting": "HELLO, PI"}));
    assert_eq!(host.shutdown().await.code(), Some(0));
    assert!(
        !host.stderr().contains("Warning"),
        "the module-hook and module-detection warnings are suppressed: {}",
        host.stderr()
    );
}

#[tokio::test]
async fn typescript_modules_run_transpiled_on_every_supported_node() {
    // Node.js 20 included: pi transpiles, Node runs JavaScript.
    run_typed(&fixture("typed.ts")).await;
}

#[tokio::test]
async fn typescript_runs_in_a_commonjs_project() {
    // What `npm init -y` writes: the transpiled modules are ES modules all the same.
    let project = tempfile::tempdir().unwrap();
    std::fs::write(
        project.path().join("package.json"),
        r#"{"name": "tool", "version": "1.0.0", "type": "commonjs"}"#,
    )
    .unwrap();
    for name in ["typed.ts", "typed-helper.ts", "typed-shout.ts"] {
        std::fs::copy(fixture(name), project.path().join(name)).unwrap();
    }
    run_typed(&project.path().join("typed.ts")).await;
}

#[tokio::test]
async fn a_stack_trace_names_the_typescript_lines() {
    let Some(text) = run_fixture("throws.ts", json!({"what": "kaboom"})).await else {
        return;
    };
    let real = |name: &str| std::fs::canonicalize(fixture(name)).unwrap().display().to_string();
    assert!(text.starts_with("Error: kaboom\n"), "{text}");
    // `throw` is on line 14 of throws-helper.ts, the call on line 15 of throws.ts.
    assert!(text.contains(&format!("{}:14:", real("throws-helper.ts"))), "{text}");
    assert!(text.contains(&format!("{}:15:", real("throws.ts"))), "{text}");
}

// ---------------------------------------------------------------------------------------------
// The TypeScript examples (examples/custom-tools/*/index.ts)
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn example_hello() {
    let Some(mut host) = Host::start(&example("hello"), &[]).await else {
        return;
    };
    let cwd = tempfile::tempdir().unwrap();
    let tools = host.initialize(cwd.path(), false).await;
    assert_eq!(
        tools,
        json!({"tools": [{
            "name": "hello",
            "label": "Hello",
            "description": "A simple greeting tool",
            "parameters": {"type": "object", "properties": {"name": {"description": "Name to greet", "type": "string"}}, "required": ["name"]}
        }]})
    );
    let result = host
        .call(
            "execute",
            json!({"callId": "c", "tool": "hello", "params": {"name": "pi"}}),
        )
        .await;
    assert_eq!(
        result,
        json!({"content": [{"type": "text", "text": "Hello, pi!"}], "details": {"greeted": "pi"}})
    );
    assert_eq!(host.shutdown().await.code(), Some(0));
}

#[tokio::test]
async fn example_todo_rebuilds_its_list_from_the_session() {
    let Some(mut host) = Host::start(&example("todo"), &[]).await else {
        return;
    };
    let cwd = tempfile::tempdir().unwrap();
    let tools = host.initialize(cwd.path(), false).await;
    assert_eq!(
        tools["tools"][0]["parameters"]["properties"]["action"],
        json!({"type": "string", "enum": ["list", "add", "toggle", "clear"]})
    );
    let run = |params: Value| json!({"callId": "c", "tool": "todo", "params": params});
    let added = host
        .call("execute", run(json!({"action": "add", "text": "milk"})))
        .await;
    assert_eq!(text(&added), "Added todo #1: milk");
    let toggled = host.call("execute", run(json!({"action": "toggle", "id": 1}))).await;
    assert_eq!(text(&toggled), "Todo #1 completed");
    assert_eq!(
        host.call_err("execute", run(json!({"action": "toggle", "id": 7})))
            .await,
        "Todo #7 not found"
    );

    // A branch whose history has another list.
    let entry = |details: Value| {
        json!({"type": "message", "id": "a1", "parentId": null, "timestamp": "2025-01-01T00:00:00Z",
               "message": {"role": "toolResult", "toolCallId": "t", "toolName": "todo", "content": [], "details": details, "isError": false, "timestamp": 0}})
    };
    let entries = json!([
        entry(json!({"action": "add", "todos": [{"id": 1, "text": "eggs", "done": false}], "nextId": 2})),
        entry(
            json!({"action": "add", "todos": [{"id": 1, "text": "eggs", "done": false}, {"id": 2, "text": "tea", "done": true}], "nextId": 3})
        ),
    ]);
    let event =
        json!({"reason": "branch", "entries": entries, "sessionFile": "/b.jsonl", "previousSessionFile": "/a.jsonl"});
    host.call("session", event).await;
    let listed = host.call("execute", run(json!({"action": "list"}))).await;
    assert_eq!(text(&listed), "[ ] #1: eggs\n[x] #2: tea");

    let event = json!({"reason": "new", "entries": [], "sessionFile": null, "previousSessionFile": "/b.jsonl"});
    host.call("session", event).await;
    assert_eq!(
        text(&host.call("execute", run(json!({"action": "list"}))).await),
        "No todos"
    );
    assert_eq!(host.shutdown().await.code(), Some(0));
}

#[tokio::test]
async fn example_tic_tac_toe_is_sequential_unless_told_otherwise() {
    let Some(mut host) = Host::start(&example("tic-tac-toe"), &[]).await else {
        return;
    };
    let cwd = tempfile::tempdir().unwrap();
    let tools = host.initialize(cwd.path(), false).await;
    assert_eq!(tools["tools"][0]["name"], "tic_tac_toe");
    assert_eq!(tools["tools"][0]["executionMode"], "sequential");
    assert_eq!(tools["tools"][1]["name"], "tic_tac_toe_see_board");
    assert_eq!(
        tools["tools"][0]["parameters"]["properties"]["action"]["enum"],
        json!(["move_up", "move_down", "move_left", "move_right", "play"])
    );
    let play = |action: &str| json!({"callId": action, "tool": "tic_tac_toe", "params": {"action": action}});
    let board = host
        .call(
            "execute",
            json!({"callId": "b", "tool": "tic_tac_toe_see_board", "params": {}}),
        )
        .await;
    assert_eq!(
        text(&board),
        "<.>| . | . \n . | . | . \n . | . | . \nCursor: (0, 0). Status: playing."
    );
    // One call after the other (what pi does for a sequential tool): the play lands on (1, 1).
    host.call("execute", play("move_down")).await;
    host.call("execute", play("move_right")).await;
    let played = host.call("execute", play("play")).await;
    assert_eq!(
        text(&played),
        "Placed O at (1, 1). Cursor reset to (0, 0). X played (0, 0). Status: playing."
    );
    assert_eq!(
        host.call_err("execute", play("play")).await,
        "Cell (0, 0) is already X. Your cursor is still at (0, 0). Move to an empty cell and retry play."
    );
    // Sent together (a parallel batch), the play overtakes the 300 ms move.
    let moved = host.execute("m", "tic_tac_toe", json!({"action": "move_down"})).await;
    let placed = host.execute("p", "tic_tac_toe", json!({"action": "play"})).await;
    let first = host.recv().await;
    assert_eq!(first["id"], placed, "{first}");
    assert!(
        first["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Cell (0, 0) is already X"),
        "{first}"
    );
    assert_eq!(host.recv().await["id"], moved);
    assert_eq!(host.shutdown().await.code(), Some(0));

    let Some(mut host) = Host::start(&example("tic-tac-toe"), &[("TIC_TAC_TOE_MODE", "parallel")]).await else {
        return;
    };
    let tools = host.initialize(cwd.path(), false).await;
    assert_eq!(tools["tools"][0]["executionMode"], "parallel");
    assert_eq!(host.shutdown().await.code(), Some(0));
}

#[tokio::test]
async fn example_batch_rename_preview_applies_or_discards() {
    let Some(mut host) = Host::start(&example("batch-rename-preview"), &[]).await else {
        return;
    };
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(cwd.path().join("a.txt"), "a").unwrap();
    std::fs::write(cwd.path().join("c.txt"), "c").unwrap();
    host.initialize(cwd.path(), false).await;

    let params = json!({"renames": [{"from": "a.txt", "to": "sub/b.txt"}]});
    let (push, answer) = {
        let id = host.execute("r1", "batch_rename_preview", params).await;
        let push = host.recv().await;
        assert_eq!(push["method"], "pendingAction.push");
        host.reply(&push["id"], Value::Null).await;
        (push["params"].clone(), host.response(id).await)
    };
    assert_eq!(push["label"], "Batch rename: 1 file");
    assert_eq!(push["sourceToolName"], "batch_rename_preview");
    assert_eq!(push["hasReject"], true);
    let staging = PathBuf::from(push["details"]["staging"].as_str().unwrap());
    assert!(staging.join("plan.json").is_file());
    assert!(text(&answer["result"]).starts_with("Prepared rename plan for 1 files:"));
    assert!(cwd.path().join("a.txt").exists(), "nothing moves before resolve");

    let applied = host
        .call(
            "pendingAction.apply",
            json!({"actionId": push["actionId"], "reason": "looks right"}),
        )
        .await;
    assert_eq!(text(&applied), "Applied batch rename. Reason: looks right");
    assert!(!cwd.path().join("a.txt").exists());
    assert_eq!(std::fs::read_to_string(cwd.path().join("sub/b.txt")).unwrap(), "a");
    assert!(!staging.exists());

    let id = host
        .execute(
            "r2",
            "batch_rename_preview",
            json!({"renames": [{"from": "c.txt", "to": "d.txt"}]}),
        )
        .await;
    let push = host.recv().await;
    host.reply(&push["id"], Value::Null).await;
    host.response(id).await;
    let staging = PathBuf::from(push["params"]["details"]["staging"].as_str().unwrap());
    let rejected = host
        .call(
            "pendingAction.reject",
            json!({"actionId": push["params"]["actionId"], "reason": "not now"}),
        )
        .await;
    assert_eq!(text(&rejected), "Discarded batch rename. Reason: not now");
    assert!(cwd.path().join("c.txt").exists() && !cwd.path().join("d.txt").exists());
    assert!(!staging.exists(), "discarding cleans the staged plan up");

    let missing = json!({"renames": [{"from": "zzz.txt", "to": "y.txt"}]});
    let error = host
        .call_err(
            "execute",
            json!({"callId": "r3", "tool": "batch_rename_preview", "params": missing}),
        )
        .await;
    assert!(error.starts_with("Not found: "), "{error}");
    assert_eq!(host.shutdown().await.code(), Some(0));
}

// ---------------------------------------------------------------------------------------------
// pi's two custom-tool signatures, and pi-mono's own examples (fixtures/pi-mono/<release>/)
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn execute_gets_the_arguments_of_the_signature_the_tool_declares() {
    let Some(mut host) = Host::start(&fixture("signatures.mjs"), &[]).await else {
        return;
    };
    let cwd = tempfile::tempdir().unwrap();
    host.initialize(cwd.path(), false).await;
    // The 3rd, 4th and 5th argument each tool received.
    let seed = "signal onUpdate ctx";
    let later = "onUpdate ctx signal";
    for (tool, expected) in [
        ("seed", seed),
        ("later", later),
        ("later_four", later),
        ("seed_three", seed),
        ("by_on_session", later),
        ("unknown", seed),
        ("bound", seed),
    ] {
        let result = host
            .call("execute", json!({"callId": tool, "tool": tool, "params": {}}))
            .await;
        assert_eq!(text(&result), expected, "{tool}");
    }
    assert_eq!(host.shutdown().await.code(), Some(0));
}

/// The pi-mono releases whose examples are fixtures: the seed's signature, then the later one.
const PI_MONO_RELEASES: [&str; 2] = ["v0.30.2", "v0.34.2"];

/// pi-mono's example `tool` of `release` (fixtures/pi-mono/README.md).
fn pi_mono(release: &str, tool: &str) -> PathBuf {
    fixture("pi-mono").join(release).join(tool).join("index.ts")
}

#[tokio::test]
async fn pi_mono_hello_runs_at_both_releases() {
    for release in PI_MONO_RELEASES {
        let Some(mut host) = Host::start(&pi_mono(release, "hello"), &[]).await else {
            return;
        };
        let cwd = tempfile::tempdir().unwrap();
        let tools = host.initialize(cwd.path(), false).await;
        assert_eq!(tools["tools"][0]["name"], "hello", "{release}");
        let result = host
            .call(
                "execute",
                json!({"callId": "c", "tool": "hello", "params": {"name": "pi"}}),
            )
            .await;
        assert_eq!(
            result,
            json!({"content": [{"type": "text", "text": "Hello, pi!"}], "details": {"greeted": "pi"}}),
            "{release}"
        );
        assert_eq!(host.shutdown().await.code(), Some(0), "{release}");
    }
}

#[tokio::test]
async fn pi_mono_question_asks_the_user_through_pi_at_both_releases() {
    for release in PI_MONO_RELEASES {
        let Some(mut host) = Host::start(&pi_mono(release, "question"), &[]).await else {
            return;
        };
        let cwd = tempfile::tempdir().unwrap();
        host.initialize(cwd.path(), true).await;
        let id = host
            .execute("c", "question", json!({"question": "Tea?", "options": ["yes", "no"]}))
            .await;
        let select = host.recv().await;
        assert_eq!(select["method"], "ui.select", "{release}");
        assert_eq!(select["params"], json!({"title": "Tea?", "options": ["yes", "no"]}));
        host.reply(&select["id"], json!("yes")).await;
        let answer = host.response(id).await;
        assert_eq!(text(&answer["result"]), "User selected: yes", "{release}");
        assert_eq!(
            answer["result"]["details"],
            json!({"question": "Tea?", "options": ["yes", "no"], "answer": "yes"})
        );
        assert_eq!(host.shutdown().await.code(), Some(0), "{release}");
    }
}

#[tokio::test]
async fn pi_mono_todo_rebuilds_its_list_from_the_branch_at_both_releases() {
    // v0.30.2 reads `event.entries`; v0.34.2 `ctx.sessionManager.getBranch()` (before, its
    // `onSession(event, ctx)` threw on the missing ctx and the list stayed empty).
    let entry = |id: &str, parent: Value, details: Value| {
        json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2025-01-01T00:00:00Z",
               "message": {"role": "toolResult", "toolCallId": "t", "toolName": "todo", "content": [], "details": details, "isError": false, "timestamp": 0}})
    };
    let entries = json!([
        entry(
            "a1",
            Value::Null,
            json!({"action": "add", "todos": [{"id": 1, "text": "eggs", "done": false}], "nextId": 2})
        ),
        entry(
            "a2",
            json!("a1"),
            json!({"action": "add", "todos": [{"id": 1, "text": "eggs", "done": false}, {"id": 2, "text": "tea", "done": true}], "nextId": 3})
        ),
    ]);
    for release in PI_MONO_RELEASES {
        let Some(mut host) = Host::start(&pi_mono(release, "todo"), &[]).await else {
            return;
        };
        let cwd = tempfile::tempdir().unwrap();
        host.initialize(cwd.path(), false).await;
        let run = |params: Value| json!({"callId": "c", "tool": "todo", "params": params});
        let event =
            json!({"reason": "start", "entries": entries, "sessionFile": "/s/a.jsonl", "previousSessionFile": null});
        assert_eq!(host.call("session", event).await, Value::Null, "{release}");
        let listed = host.call("execute", run(json!({"action": "list"}))).await;
        assert_eq!(text(&listed), "[ ] #1: eggs\n[x] #2: tea", "{release}");
        let added = host
            .call("execute", run(json!({"action": "add", "text": "milk"})))
            .await;
        assert_eq!(text(&added), "Added todo #3: milk", "{release}");

        // A new session: nothing on its branch.
        let event =
            json!({"reason": "new", "entries": [], "sessionFile": "/s/b.jsonl", "previousSessionFile": "/s/a.jsonl"});
        assert_eq!(host.call("session", event).await, Value::Null, "{release}");
        let listed = host.call("execute", run(json!({"action": "list"}))).await;
        assert_eq!(text(&listed), "No todos", "{release}");
        assert_eq!(host.shutdown().await.code(), Some(0), "{release}");
        assert!(!host.stderr().contains("failed"), "{release}: {}", host.stderr());
    }
}

#[tokio::test]
async fn pi_mono_subagent_loads_and_answers_at_both_releases() {
    // Its agents come from ~/.pi/agent/agents: an empty home has none.
    let home = tempfile::tempdir().unwrap();
    let home_text = home.path().display().to_string();
    let env = [("HOME", home_text.as_str()), ("USERPROFILE", home_text.as_str())];
    for release in PI_MONO_RELEASES {
        let Some(mut host) = Host::start(&pi_mono(release, "subagent"), &env).await else {
            return;
        };
        let cwd = tempfile::tempdir().unwrap();
        let tools = host.initialize(cwd.path(), false).await;
        assert_eq!(tools["tools"][0]["name"], "subagent", "{release}");
        let result = host
            .call("execute", json!({"callId": "c", "tool": "subagent", "params": {}}))
            .await;
        assert_eq!(
            text(&result),
            "Invalid parameters. Provide exactly one mode.\nAvailable agents: none",
            "{release}"
        );
        assert_eq!(host.shutdown().await.code(), Some(0), "{release}");
    }
}

/// A `message` entry of the session file, as pi sends it.
fn message_entry(id: &str, parent: Option<&str>, message: Value) -> Value {
    json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2026-11-26T00:00:00.000Z", "message": message})
}

/// The JSON report of `ctx_probe` (fixtures/context.mjs).
async fn probe_context(host: &mut Host, call_id: &str, context: Option<Value>) -> Value {
    let mut params = json!({"callId": call_id, "tool": "ctx_probe", "params": {}});
    if let Some(context) = context {
        params["context"] = context;
    }
    let result = host.call("execute", params).await;
    serde_json::from_str(text(&result)).unwrap()
}

#[tokio::test]
async fn ctx_is_current_at_every_execute_from_the_context_pi_sends() {
    let Some(mut host) = Host::start(&fixture("context.mjs"), &[]).await else {
        return;
    };
    let cwd = tempfile::tempdir().unwrap();
    host.initialize(cwd.path(), false).await;
    // Without a context (no session, or an older pi) ctx is empty, as before.
    let empty = probe_context(&mut host, "c0", None).await;
    assert_eq!(
        (&empty["entries"], &empty["model"], &empty["all"]),
        (&json!(0), &Value::Null, &json!(0))
    );

    let model = json!({"id": "m1", "name": "Model One", "api": "openai-completions", "provider": "p",
        "baseUrl": "http://127.0.0.1:1/v1", "reasoning": false, "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}, "contextWindow": 1000, "maxTokens": 100});
    let other = json!({"id": "m2", "name": "Model Two", "provider": "q"});
    let user = message_entry("e1", None, json!({"role": "user", "content": "hi", "timestamp": 0}));
    let event = json!({"reason": "start", "entries": [user], "sessionFile": "/s/one.jsonl",
        "previousSessionFile": null, "hasUI": false,
        "context": {"model": model, "modelRegistry": {"models": [model, other], "available": [0]}}});
    host.call("session", event).await;
    let result = message_entry(
        "e2",
        Some("e1"),
        json!({"role": "toolResult", "toolCallId": "c1", "toolName": "ctx_probe", "content": [], "isError": false, "timestamp": 0}),
    );
    // The entries appended since the event (an earlier call's result) come with the execute.
    let context = json!({"session": {"keep": 1, "entries": [result], "sessionFile": "/s/one.jsonl"}, "model": model});
    let report = probe_context(&mut host, "c2", Some(context)).await;
    assert_eq!(
        report,
        json!({"entries": 2, "results": ["c1"], "leafIsLast": true, "sameEntries": true,
            "sessionFile": "/s/one.jsonl", "model": "p/m1", "found": "Model One", "available": true, "all": 2,
            "oauth": false})
    );
    // The branch moved back (`keep` 1, nothing new): the result is gone.
    let context = json!({"session": {"keep": 1, "entries": [], "sessionFile": "/s/one.jsonl"}, "model": other});
    let report = probe_context(&mut host, "c3", Some(context)).await;
    assert_eq!(
        (
            &report["entries"],
            &report["results"],
            &report["model"],
            &report["available"]
        ),
        (&json!(1), &json!([]), &json!("q/m2"), &json!(false))
    );

    // getApiKey asks pi at each call.
    let id = host
        .request(
            "execute",
            json!({"callId": "c4", "tool": "ctx_probe", "params": {"apiKey": true}}),
        )
        .await;
    let ask = host.recv().await;
    assert_eq!(ask["method"], "modelRegistry.getApiKey");
    assert_eq!(ask["params"], json!({"provider": "q", "id": "m2"}));
    host.reply(&ask["id"], json!("k-123")).await;
    let answer = host.response(id).await;
    let report: Value = serde_json::from_str(text(&answer["result"])).unwrap();
    assert_eq!(report["key"], "k-123");
    assert_eq!(host.shutdown().await.code(), Some(0));
}

#[tokio::test]
async fn ui_custom_shows_nothing_and_answers_undefined_in_both_forms() {
    let Some(mut host) = Host::start(&fixture("context.mjs"), &[]).await else {
        return;
    };
    let cwd = tempfile::tempdir().unwrap();
    host.initialize(cwd.path(), true).await;
    let result = host
        .call("execute", json!({"callId": "u", "tool": "custom_ui", "params": {}}))
        .await;
    assert_eq!(text(&result), r#"{"value":"undefined","factoryCalled":false}"#);
    assert_eq!(host.shutdown().await.code(), Some(0));
    let stderr = host.stderr();
    assert_eq!(
        stderr
            .matches("pi tool host: ui.custom is not supported for Node tools yet; the component is not shown")
            .count(),
        1,
        "{stderr}"
    );
}
