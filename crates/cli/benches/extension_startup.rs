//! Start-up with an extension (issue 16): how long a user waits from starting
//! `pi -e hello.ts --mode rpc` until pi answers its first command (`get_commands`, answered only
//! once the extensions are loaded, by ours as by pi), ours (the release binary) side by side with
//! pi 0.73.1 (`node <package>/dist/cli.js`) on the same machine, and the same without the
//! extension for reference. The extension is pi 0.73.1's own `examples/extensions/hello.ts`
//! (one tool, `hello`), taken from the installed package.
//!
//! Each program first answers a `-p` run in which a local mock model calls `hello` and the result
//! must come back as "Hello, bench!" (the extension really loaded and ran; this run also warms the
//! caches, as a user's earlier runs would); then each configuration starts `PI_BENCH_RUNS` times
//! (default 15) and the median and the fastest run are printed.
//!
//! pi is measured when Node.js and a runnable pi 0.73.1 package are found (`$PI_073_PACKAGE`,
//! else `.ci/pi073/node_modules/@mariozechner/pi-coding-agent`, as the tests find it); otherwise
//! its last recorded figures are printed, labelled as such. `cargo test --benches` (no `--bench`
//! argument) is the smoke test: one start-up of ours with and without the extension. Without the
//! package, ours loads an equivalent `hello` extension written here. Without Node.js the smoke
//! test skips the extension with `skipped: …` (a failure under `PI_REQUIRE_NODE`), the full bench
//! fails.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pi_coding_agent::custom_tools::node::{check_version, find_node, node_version};
use pi_test_support::sandbox::{Sandbox, text};
use pi_test_support::{MockServer, openai, pi073};
use serde_json::{Value, json};

/// pi 0.73.1's figures, measured with this bench on 2026-11-26 (Node v20.20.2, 15 runs, a 2-core
/// machine at load 1.6, beside a release build of ours); printed when pi cannot be run.
const PI_RECORDED: &[&str] = &[
    "pi 0.73.1, no extension (recorded 2026-11-26, not measured now): 1553.8 ms median, 1385.1 ms min of 15 runs",
    "pi 0.73.1, -e hello.ts (recorded 2026-11-26, not measured now): 1628.3 ms median, 1530.2 ms min of 15 runs",
];

/// An extension equivalent to pi's `hello.ts`, for ours when pi's package is not installed.
const HELLO_EQUIVALENT: &str = r#"import { Type } from "@mariozechner/pi-ai";
import { defineTool, type ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.registerTool(
		defineTool({
			name: "hello",
			label: "Hello",
			description: "Greets someone",
			parameters: Type.Object({ name: Type.String({ description: "Who to greet" }) }),
			async execute(_id, params) {
				return { content: [{ type: "text", text: `Hello, ${params.name}!` }], details: {} };
			},
		}),
	);
}
"#;

/// A program to start: `program leading…` (ours: the binary; pi: node and its `cli.js`).
struct Program {
    who: &'static str,
    program: PathBuf,
    leading: Vec<String>,
    node: Option<PathBuf>,
}

impl Program {
    fn command(&self, sandbox: &Sandbox, args: &[&str]) -> Command {
        let mut all: Vec<&str> = self.leading.iter().map(String::as_str).collect();
        all.extend(args);
        let mut command = sandbox.command(&all);
        command.env("PI_OFFLINE", "1").env("PI_SKIP_VERSION_CHECK", "1");
        if let Some(node) = &self.node {
            command.env("PI_NODE", node);
        }
        command
    }
}

/// Node.js when it is there and new enough for a TypeScript extension, found and checked as pi
/// finds it (`pi_coding_agent::custom_tools::node`).
fn node(runtime: &tokio::runtime::Runtime) -> Option<PathBuf> {
    let entry = Path::new("hello.ts");
    let node = find_node(&pi073::process_env, entry).ok()?;
    let version = runtime.block_on(node_version(&node)).ok()?;
    check_version(version, &node, entry).ok().map(|()| node)
}

/// pi 0.73.1's package directory ([`pi073::package`]) when its `cli.js` runs under `node` and says
/// 0.73.1.
fn pi_073(node: &Path) -> Option<PathBuf> {
    let package = pi073::package(&pi073::process_env).ok()?;
    let version = Command::new(node)
        .arg(package.join("dist/cli.js"))
        .arg("--version")
        .env("PI_OFFLINE", "1")
        .env("PI_SKIP_VERSION_CHECK", "1")
        .output()
        .ok()?;
    let printed = format!("{}{}", text(&version.stdout), text(&version.stderr));
    (version.status.success() && printed.contains("0.73.1")).then_some(package)
}

/// One start-up: spawn, ask `get_commands` at once, and time until its answer.
fn startup(program: &Program, sandbox: &Sandbox, extension: Option<&Path>) -> Duration {
    let extension = extension.map(|path| path.display().to_string());
    let mut args = Vec::new();
    if let Some(path) = &extension {
        args.extend(["-e", path.as_str()]);
    }
    args.extend(["--no-session", "--mode", "rpc"]);
    let mut command = program.command(sandbox, &args);
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let started = Instant::now();
    let mut child = command.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{}", json!({"id": "bench", "type": "get_commands"})).unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Ok(value) = serde_json::from_str::<Value>(&line)
                && tx.send(value).is_err()
            {
                break;
            }
        }
    });
    let elapsed = loop {
        let line = lines
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("{}: no answer to get_commands within 60 s", program.who));
        if line["type"] == "response" && line["command"] == "get_commands" {
            assert_eq!(line["success"], true, "{}: {line}", program.who);
            break started.elapsed();
        }
    };
    drop(stdin);
    let _ = child.wait();
    elapsed
}

/// A `-p` run in which the model calls `hello`: the extension loaded and its tool answered.
fn check_hello(runtime: &tokio::runtime::Runtime, program: &Program, sandbox: &Sandbox, extension: &Path) {
    let server = runtime.block_on(MockServer::start(vec![
        openai::tool_calls(&[("call_1", "hello", json!({"name": "bench"}))]),
        openai::text("Done."),
    ]));
    sandbox.use_server(&server);
    let path = extension.display().to_string();
    let output = program
        .command(sandbox, &["-e", &path, "--no-session", "-p", "Greet the bench"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}: {}", program.who, text(&output.stderr));
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{}: {}", program.who, text(&output.stderr));
    let sent = requests[1].json()["messages"].to_string();
    assert!(
        sent.contains("Hello, bench!"),
        "{}: the hello tool did not answer: {sent}",
        program.who
    );
}

/// `runs` start-ups of each configuration in `sandbox`, printed as median and minimum.
fn measure(
    runtime: &tokio::runtime::Runtime,
    program: &Program,
    sandbox: &Sandbox,
    extension: Option<&Path>,
    runs: usize,
) {
    if let Some(extension) = extension {
        check_hello(runtime, program, sandbox, extension);
    }
    // A configured model, as a user has (never called: nothing is prompted).
    let idle = runtime.block_on(MockServer::start(Vec::new()));
    sandbox.use_server(&idle);
    let configurations: Vec<(&str, Option<&Path>)> = match extension {
        Some(path) => vec![("no extension", None), ("-e hello.ts", Some(path))],
        None => vec![("no extension", None)],
    };
    for (label, extension) in configurations {
        // Not counted: the first start-up of a configuration (files and caches cold).
        startup(program, sandbox, extension);
        let mut times: Vec<Duration> = (0..runs).map(|_| startup(program, sandbox, extension)).collect();
        times.sort();
        println!(
            "{}, {label}: {:.1} ms median, {:.1} ms min of {runs} runs",
            program.who,
            times[times.len() / 2].as_secs_f64() * 1000.0,
            times[0].as_secs_f64() * 1000.0,
        );
    }
}

fn main() {
    let full = std::env::args().any(|arg| arg == "--bench");
    let runs = match std::env::var("PI_BENCH_RUNS").ok().and_then(|n| n.parse().ok()) {
        Some(n) if n > 0 => n,
        _ if full => 15,
        _ => 1,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let node = node(&runtime);
    let package = node.as_deref().and_then(pi_073);
    let ours_sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    let extension = match (&node, &package) {
        (None, _) if full || std::env::var_os("PI_REQUIRE_NODE").is_some() => {
            panic!("the start-up benchmark needs Node.js 20.6 or newer (`$PI_NODE`, else `node` on PATH)")
        }
        (None, _) => {
            println!("skipped: -e hello.ts (no Node.js 20.6 or newer: `$PI_NODE`, else `node` on PATH)");
            None
        }
        (Some(_), Some(package)) => Some(package.join("examples/extensions/hello.ts")),
        (Some(_), None) => {
            let path = ours_sandbox.root().join("hello.ts");
            std::fs::write(&path, HELLO_EQUIVALENT).unwrap();
            println!("pi 0.73.1's package not found: ours loads an equivalent hello.ts written by this bench");
            Some(path)
        }
    };
    println!("start-up until the answer to RPC get_commands (after one uncounted start-up):");
    let ours = Program {
        who: "ours",
        program: PathBuf::from(env!("CARGO_BIN_EXE_pi")),
        leading: Vec::new(),
        node: node.clone(),
    };
    measure(&runtime, &ours, &ours_sandbox, extension.as_deref(), runs);
    if !full {
        return;
    }
    match (node, package) {
        (Some(node), Some(package)) => {
            let pi = Program {
                who: "pi 0.73.1",
                program: node,
                leading: vec![package.join("dist/cli.js").display().to_string()],
                node: None,
            };
            let sandbox = Sandbox::new(&pi.program);
            measure(&runtime, &pi, &sandbox, extension.as_deref(), runs);
        }
        _ => {
            for line in PI_RECORDED {
                println!("{line}");
            }
        }
    }
}
