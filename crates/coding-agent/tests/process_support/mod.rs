//! Shared pieces of the process-tool tests: the `probe` tool process, the examples, a scripted
//! user interface, and calling a tool directly. (Waiting is `pi_test_support::wait`; the test of
//! its time limit stays here.)

#![allow(dead_code, clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use pi_agent_core::{ToolContext, ToolError, ToolResult, ToolUpdateSink};
use pi_coding_agent::custom_tools::process::{ProcessSpec, load, load_spec};
use pi_coding_agent::custom_tools::{CustomTool, CustomTools, LoadedTool, ToolApi, ToolKind};
use pi_coding_agent::{NotifyKind, ToolUi};
use pi_test_support::wait::{UNTIL_LIMIT, until};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// `examples/custom-tools/<name>`.
pub(crate) fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/custom-tools")
        .join(name)
}

/// The probe tool's directory.
pub(crate) fn probe_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/process_support/probe")
}

/// The probe, with a per-call `timeout` and extra environment variables.
pub(crate) fn probe_spec(timeout: Duration, env: &[(&str, &str)]) -> ProcessSpec {
    ProcessSpec {
        program: PathBuf::from("python3"),
        args: vec![probe_dir().join("tool.py").display().to_string()],
        env: env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
        dir: probe_dir(),
        timeout,
        label: "python3 probe/tool.py".to_owned(),
    }
}

/// The probe's tools, by name.
pub(crate) async fn probe(api: &ToolApi) -> Tools {
    probe_with(api, Duration::from_secs(60), &[]).await
}

/// [`probe`] with a timeout and environment.
pub(crate) async fn probe_with(api: &ToolApi, timeout: Duration, env: &[(&str, &str)]) -> Tools {
    Tools(load_spec(probe_spec(timeout, env), api).await.unwrap())
}

/// An example loaded through its `tool.json`.
pub(crate) async fn load_example(name: &str, api: &ToolApi) -> Tools {
    let dir = example(name);
    Tools(load(&dir, &dir.join("tool.json"), api).await.unwrap())
}

/// A shell script speaking (or not speaking) the protocol, for the load failures.
pub(crate) fn script(label: &str, script: &str) -> ProcessSpec {
    ProcessSpec {
        program: PathBuf::from("sh"),
        args: vec!["-c".to_owned(), script.to_owned()],
        env: BTreeMap::new(),
        dir: std::env::temp_dir(),
        timeout: Duration::from_secs(60),
        label: label.to_owned(),
    }
}

/// The tools of one location.
pub(crate) struct Tools(pub(crate) Vec<Arc<dyn CustomTool>>);

impl Tools {
    /// The tool called `name`.
    pub(crate) fn get(&self, name: &str) -> Arc<dyn CustomTool> {
        self.0
            .iter()
            .find(|t| t.name() == name)
            .unwrap_or_else(|| panic!("no tool {name}"))
            .clone()
    }

    /// Calls `name` with `args` and no cancellation or updates.
    pub(crate) async fn call(&self, name: &str, args: Value) -> Result<ToolResult, ToolError> {
        self.get(name)
            .execute(&format!("call-{name}"), args, ToolContext::detached())
            .await
    }

    /// The tools as the loader hands them to a session.
    pub(crate) fn loaded(&self) -> CustomTools {
        CustomTools {
            tools: self
                .0
                .iter()
                .map(|tool| LoadedTool {
                    tool: tool.clone(),
                    origin: "test".to_owned(),
                    path: None,
                    kind: ToolKind::Process,
                })
                .collect(),
            errors: Vec::new(),
        }
    }

    /// The names, in definition order.
    pub(crate) fn names(&self) -> Vec<String> {
        self.0.iter().map(|t| t.name().to_owned()).collect()
    }
}

/// A context whose updates are collected, with its cancellation token.
pub(crate) fn context() -> (ToolContext, Arc<Mutex<Vec<ToolResult>>>, CancellationToken) {
    let updates = Arc::new(Mutex::new(Vec::new()));
    let sink = updates.clone();
    let cancel = CancellationToken::new();
    let ctx = ToolContext {
        cancel: cancel.clone(),
        updates: ToolUpdateSink::new(move |partial| sink.lock().unwrap().push(partial)),
    };
    (ctx, updates, cancel)
}

// The clock is paused: the 10 s pass at once.
#[tokio::test(start_paused = true)]
async fn until_fails_after_its_time_limit_instead_of_hanging() {
    let start = tokio::time::Instant::now();
    let waiting = tokio::spawn(until("nothing", || false));
    let outcome = tokio::time::timeout(Duration::from_secs(60), waiting)
        .await
        .expect("until still waiting after 60 s");
    let panic = outcome.unwrap_err().into_panic();
    assert_eq!(
        panic.downcast_ref::<String>().map(String::as_str),
        Some("timed out after 10 s waiting for nothing")
    );
    assert!(start.elapsed() >= UNTIL_LIMIT);
}

/// A user interface with fixed answers that records notifications.
#[derive(Default)]
pub(crate) struct ScriptedUi {
    pub(crate) notes: Mutex<Vec<(String, NotifyKind)>>,
}

#[async_trait]
impl ToolUi for ScriptedUi {
    fn has_ui(&self) -> bool {
        true
    }
    async fn select(&self, _title: &str, options: &[String]) -> Option<String> {
        options.last().cloned()
    }
    async fn confirm(&self, _title: &str, _message: &str) -> bool {
        true
    }
    async fn input(&self, _title: &str, placeholder: Option<&str>) -> Option<String> {
        Some(format!("typed over {}", placeholder.unwrap_or("nothing")))
    }
    fn notify(&self, message: &str, kind: NotifyKind) {
        self.notes.lock().unwrap().push((message.to_owned(), kind));
    }
}
