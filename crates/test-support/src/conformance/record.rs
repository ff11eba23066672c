//! Running a scenario through a program (pi 0.73.1 under Node, or our binary) and reading and
//! writing the artifacts it produced.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::normalize::{Context, normalize};
use super::scenario::{Run, Scenario, ScenarioError, Step};
use crate::MockServer;
use crate::sandbox::Sandbox;

/// How long one run or one RPC wait may take before it counts as hung.
const PATIENCE: Duration = Duration::from_secs(30);

/// What a scenario produced, by artifact name: `requests` (the bodies the model server
/// received), `run<N>.events` (the standard output lines of a run without steps),
/// `run<N>.rpc` (an RPC run's transcript: `{"sent": command}` and the lines received),
/// `run<N>.exit` (exit code and standard error), `session<N>` (the session files' lines, the
/// files sorted by name) and `settings` (the agent directory's `settings.json` at the end, if
/// there is one). Every artifact is normalized.
pub type Artifacts = BTreeMap<String, Value>;

/// The program a scenario runs.
#[derive(Debug, Clone)]
pub struct Program {
    program: PathBuf,
    leading: Vec<String>,
}

impl Program {
    /// A binary run directly (our `pi`).
    pub fn binary(path: impl Into<PathBuf>) -> Program {
        Program {
            program: path.into(),
            leading: Vec::new(),
        }
    }

    /// A Node script: `node <script> …` (pi's `dist/cli.js`).
    pub fn node(node: impl Into<PathBuf>, script: &Path) -> Program {
        Program {
            program: node.into(),
            leading: vec![script.to_string_lossy().into_owned()],
        }
    }
}

/// The `models.json` of every scenario: provider `mock` at `base_url`, `mock-model` and the
/// reasoning model `mock-reasoner`, each with the scenario's `model_fields`.
fn models_json(base_url: &str, fields: &serde_json::Map<String, Value>) -> String {
    let mut models = [
        json!({"id": "mock-model"}),
        json!({"id": "mock-reasoner", "reasoning": true}),
    ];
    for model in &mut models {
        if let Some(model) = model.as_object_mut() {
            model.extend(fields.clone());
        }
    }
    json!({"providers": {"mock": {"baseUrl": base_url, "api": "openai-completions", "apiKey": "mock-key",
        "models": models}}})
    .to_string()
}

/// Runs `scenario` through `program` in a fresh sandbox against a fresh mock server and returns
/// its normalized artifacts.
///
/// # Errors
/// When the sandbox cannot be prepared (a project file or setting cannot be written).
///
/// # Panics
/// When no port can be bound for the server (see [`MockServer::start`]).
pub async fn run(scenario: &Scenario, program: &Program) -> Result<Artifacts, ScenarioError> {
    let server = MockServer::start(scenario.server_replies()).await;
    let sandbox = Sandbox::new(&program.program);
    let write = |path: PathBuf, text: &str| -> Result<(), ScenarioError> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| ScenarioError::Read {
                path: parent.to_owned(),
                source,
            })?;
        }
        std::fs::write(&path, text).map_err(|source| ScenarioError::Read { path, source })
    };
    write(
        sandbox.agent_dir().join("models.json"),
        &models_json(&server.url("/v1"), &scenario.model_fields),
    )?;
    if let Some(settings) = &scenario.settings {
        write(sandbox.agent_dir().join("settings.json"), &settings.to_string())?;
    }
    for (path, content) in &scenario.files {
        write(sandbox.project.join(path), content)?;
    }
    let mut artifacts = Artifacts::new();
    for (index, run) in scenario.runs.iter().enumerate() {
        let mut args = program.leading.clone();
        if !scenario.model.is_empty() {
            args.extend(["--provider", "mock", "--model", &scenario.model].map(str::to_owned));
        }
        let sessions = sandbox.session_files();
        args.extend(run.args.iter().map(|arg| session_argument(arg, &sessions)));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut command = sandbox.command(&args);
        command.env("PI_OFFLINE", "1").env("PI_SKIP_VERSION_CHECK", "1");
        let run = run.clone();
        let produced = tokio::task::spawn_blocking(move || run_one(command, &run))
            .await
            .unwrap_or_else(|error| (json!([{"panicked": error.to_string()}]), json!({})));
        let number = index + 1;
        let kind = if scenario.runs[index].steps.is_some() {
            "rpc"
        } else {
            "events"
        };
        artifacts.insert(format!("run{number}.{kind}"), produced.0);
        artifacts.insert(format!("run{number}.exit"), produced.1);
    }
    let requests: Vec<Value> = server.requests().iter().map(crate::Recorded::json).collect();
    artifacts.insert("requests".into(), Value::Array(requests));
    for (index, file) in sandbox.session_files().iter().enumerate() {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        artifacts.insert(format!("session{}", index + 1), Value::Array(json_lines(&text)));
    }
    if let Ok(text) = std::fs::read_to_string(sandbox.agent_dir().join("settings.json")) {
        let settings = serde_json::from_str(&text).unwrap_or(Value::String(text));
        artifacts.insert("settings".into(), settings);
    }
    let context = Context::new(sandbox.root(), &sandbox.home, &sandbox.project, &server.base_url());
    for artifact in artifacts.values_mut() {
        normalize(artifact, &context);
    }
    Ok(artifacts)
}

/// `arg`, or for `${session<N>}` the path of the N-th session file so far (sorted by name).
fn session_argument(arg: &str, sessions: &[PathBuf]) -> String {
    arg.strip_prefix("${session")
        .and_then(|rest| rest.strip_suffix('}'))
        .and_then(|number| number.parse::<usize>().ok())
        .and_then(|number| sessions.get(number.checked_sub(1)?))
        .map_or_else(|| arg.to_owned(), |path| path.to_string_lossy().into_owned())
}

/// `command` with every string `${<id>:<JSON pointer>}` replaced by that value of the response
/// to the command `<id>` seen so far (e.g. `${forks:/data/messages/0/entryId}`).
fn substitute(command: &Value, seen: &[Value]) -> Value {
    match command {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| (key.clone(), substitute(value, seen)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|item| substitute(item, seen)).collect()),
        Value::String(text) => text
            .strip_prefix("${")
            .and_then(|rest| rest.strip_suffix('}'))
            .and_then(|reference| reference.split_once(':'))
            .and_then(|(id, pointer)| {
                seen.iter()
                    .find(|line| line["type"] == "response" && line["id"] == id)
                    .and_then(|line| line.pointer(pointer))
                    .cloned()
            })
            .unwrap_or_else(|| command.clone()),
        other => other.clone(),
    }
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap_or_else(|_| json!({"unparsed": line})))
        .collect()
}

/// Runs one start of the program: the lines it wrote (with the commands sent, for RPC) and
/// `{"code", "stderr"}`.
fn run_one(mut command: Command, run: &Run) -> (Value, Value) {
    command
        .stdin(if run.steps.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => return (json!([]), json!({"spawn": error.to_string()})),
    };
    let (tx, lines) = mpsc::channel::<Value>();
    let stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let Some(stdout) = stdout else { return };
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if line.trim().is_empty() {
                continue;
            }
            let value = serde_json::from_str(&line).unwrap_or_else(|_| json!({"unparsed": line}));
            if tx.send(value).is_err() {
                break;
            }
        }
    });
    let stderr = child.stderr.take();
    let stderr_reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut stderr) = stderr {
            let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
        }
        text
    });
    let mut transcript = Transcript {
        lines,
        seen: Vec::new(),
        received: 0,
        cursor: 0,
    };
    if let Some(steps) = &run.steps {
        let mut stdin = child.stdin.take();
        for step in steps {
            if let Err(message) = transcript.step(step, &mut stdin) {
                transcript.seen.push(json!({"timeout": message}));
                break;
            }
        }
        drop(stdin);
    }
    let code = wait(&mut child);
    let _ = reader.join();
    transcript.drain();
    let stderr = stderr_reader.join().unwrap_or_default();
    (Value::Array(transcript.seen), json!({"code": code, "stderr": stderr}))
}

/// Waits for the child to exit (killing it after [`PATIENCE`]); its exit code, or `null`.
fn wait(child: &mut Child) -> Value {
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.code().map_or(Value::Null, Value::from),
            Ok(None) if start.elapsed() < PATIENCE => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return "killed".into();
            }
        }
    }
}

struct Transcript {
    lines: mpsc::Receiver<Value>,
    /// Sent commands and received lines, in order.
    seen: Vec<Value>,
    /// Received lines so far.
    received: usize,
    /// Index in `seen` after the line the last `until` matched.
    cursor: usize,
}

impl Transcript {
    fn push(&mut self, line: Value) {
        self.seen.push(line);
        self.received += 1;
    }

    fn drain(&mut self) {
        while let Ok(line) = self.lines.try_recv() {
            self.push(line);
        }
    }

    /// Waits until a line at or after `from` satisfies `found`; its index.
    fn wait_for(&mut self, from: usize, found: impl Fn(&Value) -> bool) -> Option<usize> {
        let deadline = Instant::now() + PATIENCE;
        let mut at = from;
        loop {
            while at < self.seen.len() {
                if self.seen[at].get("sent").is_none() && found(&self.seen[at]) {
                    return Some(at);
                }
                at += 1;
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            match self.lines.recv_timeout(left) {
                Ok(line) => self.push(line),
                Err(_) => return None,
            }
        }
    }

    fn step(&mut self, step: &Step, stdin: &mut Option<std::process::ChildStdin>) -> Result<(), String> {
        match step {
            Step::Sleep(pause) => {
                std::thread::sleep(*pause);
                self.drain();
            }
            Step::Until(pattern) => {
                let at = self
                    .wait_for(self.cursor, |line| contains(line, pattern))
                    .ok_or_else(|| format!("no line like {pattern}"))?;
                self.cursor = at + 1;
            }
            Step::Send { command, wait } => {
                self.drain();
                let command = &substitute(command, &self.seen);
                self.seen.push(json!({"sent": command}));
                let sent = stdin
                    .as_mut()
                    .is_some_and(|stdin| writeln!(stdin, "{command}").and_then(|()| stdin.flush()).is_ok());
                if !sent {
                    return Err(format!("could not send {command}"));
                }
                if let (true, Some(id)) = (*wait, command.get("id")) {
                    self.wait_for(0, |line| line["type"] == "response" && line.get("id") == Some(id))
                        .ok_or_else(|| format!("no response to {command}"))?;
                }
            }
        }
        Ok(())
    }
}

/// Whether `value` has every key of `pattern` with the same value (recursively for objects).
pub(super) fn contains(value: &Value, pattern: &Value) -> bool {
    match (value, pattern) {
        (Value::Object(value), Value::Object(pattern)) => pattern
            .iter()
            .all(|(key, want)| value.get(key).is_some_and(|got| contains(got, want))),
        _ => value == pattern,
    }
}

/// Writes `artifacts` into `dir`: arrays as `<name>.jsonl` (one element a line), the rest as
/// indented `<name>.json`. Earlier goldens of other names are removed first.
///
/// # Errors
/// When the directory cannot be read or a file written.
pub fn write_goldens(dir: &Path, artifacts: &Artifacts) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name != "scenario.json" && (name.ends_with(".json") || name.ends_with(".jsonl")) {
            std::fs::remove_file(&path)?;
        }
    }
    for (name, value) in artifacts {
        let (file, text) = match value {
            Value::Array(items) => (
                format!("{name}.jsonl"),
                items.iter().map(|item| format!("{item}\n")).collect::<String>(),
            ),
            other => (
                format!("{name}.json"),
                format!("{}\n", serde_json::to_string_pretty(other).unwrap_or_default()),
            ),
        };
        std::fs::write(dir.join(file), text)?;
    }
    Ok(())
}

/// Reads the goldens [`write_goldens`] wrote into `dir`.
///
/// # Errors
/// When the directory or a file cannot be read, or a file is not JSON.
pub fn read_goldens(dir: &Path) -> Result<Artifacts, ScenarioError> {
    let read_error = |path: &Path, source| ScenarioError::Read {
        path: path.to_owned(),
        source,
    };
    let mut artifacts = Artifacts::new();
    for entry in std::fs::read_dir(dir).map_err(|e| read_error(dir, e))? {
        let path = entry.map_err(|e| read_error(dir, e))?.path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name == "scenario.json" {
            continue;
        }
        let text = || std::fs::read_to_string(&path).map_err(|e| read_error(&path, e));
        if let Some(stem) = name.strip_suffix(".jsonl") {
            artifacts.insert(stem.to_owned(), Value::Array(json_lines(&text()?)));
        } else if let Some(stem) = name.strip_suffix(".json") {
            let value = serde_json::from_str(&text()?).map_err(|source| ScenarioError::Json {
                scenario: path.to_string_lossy().into_owned(),
                source,
            })?;
            artifacts.insert(stem.to_owned(), value);
        }
    }
    Ok(artifacts)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn goldens_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("scenario.json"), "{}").unwrap();
        std::fs::write(dir.path().join("stale.jsonl"), "{}\n").unwrap();
        let mut artifacts = Artifacts::new();
        artifacts.insert(
            "run1.events".into(),
            json!([{"type": "agent_start"}, {"type": "agent_end"}]),
        );
        artifacts.insert("run1.exit".into(), json!({"code": 0, "stderr": ""}));
        write_goldens(dir.path(), &artifacts).unwrap();
        assert!(!dir.path().join("stale.jsonl").exists());
        assert!(dir.path().join("scenario.json").exists());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("run1.events.jsonl")).unwrap(),
            "{\"type\":\"agent_start\"}\n{\"type\":\"agent_end\"}\n"
        );
        assert_eq!(read_goldens(dir.path()).unwrap(), artifacts);
    }

    #[test]
    fn references_to_earlier_responses_and_sessions_are_filled_in() {
        let seen = [json!({"type": "response", "id": "forks", "data": {"messages": [{"entryId": "ab12cd34"}]}})];
        let command = json!({"type": "fork", "entryId": "${forks:/data/messages/0/entryId}", "keep": "${x}"});
        assert_eq!(
            substitute(&command, &seen),
            json!({"type": "fork", "entryId": "ab12cd34", "keep": "${x}"})
        );
        let sessions = [PathBuf::from("/s/one.jsonl")];
        assert_eq!(session_argument("${session1}", &sessions), "/s/one.jsonl");
        assert_eq!(session_argument("${session2}", &sessions), "${session2}");
        assert_eq!(session_argument("-c", &sessions), "-c");
    }

    #[test]
    fn patterns_match_subsets() {
        let line = json!({"type": "message_end", "message": {"role": "user", "content": []}});
        assert!(contains(
            &line,
            &json!({"type": "message_end", "message": {"role": "user"}})
        ));
        assert!(!contains(&line, &json!({"message": {"role": "assistant"}})));
    }
}
