//! `scenario.json`: what a conformance scenario sets up, scripts and runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::{Reply, openai};

/// A scenario file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file or directory could not be read.
    #[error("{path}: {source}")]
    Read {
        /// What was read.
        path: PathBuf,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("scenario {scenario}: {source}")]
    Json {
        /// The scenario's name.
        scenario: String,
        /// The parse error.
        source: serde_json::Error,
    },
    /// The JSON does not describe a scenario.
    #[error("scenario {scenario}: {message}")]
    Invalid {
        /// The scenario's name.
        scenario: String,
        /// What is wrong.
        message: String,
    },
}

/// One step of an RPC run.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Writes `command` as a line; when `wait` and the command has an `id`, waits for its response.
    Send {
        /// The command.
        command: Value,
        /// Whether to wait for the response.
        wait: bool,
    },
    /// Waits for a line (after the one the previous `until` matched) containing `pattern`: every
    /// key of the pattern, recursively, with the same value.
    Until(Value),
    /// Waits this long.
    Sleep(Duration),
}

/// One start of the program.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// Its arguments, after `--provider mock --model <model>` unless the scenario's model is "".
    pub args: Vec<String>,
    /// RPC steps; `None` for a run that reads nothing (print and JSON modes).
    pub steps: Option<Vec<Step>>,
}

/// A conformance scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Its directory's name.
    pub name: String,
    /// What it checks.
    pub description: String,
    /// The model of `--model` (`mock-model`, `mock-reasoner` with `reasoning: true`; "" for none).
    pub model: String,
    /// Files of the project, relative path → content.
    pub files: BTreeMap<String, String>,
    /// The agent directory's `settings.json`, if any.
    pub settings: Option<Value>,
    /// Fields added to every model of `models.json` (e.g. `{"contextWindow": 2000}` for the
    /// compaction scenarios); empty: the registry's defaults.
    pub model_fields: serde_json::Map<String, Value>,
    /// The model server's replies, in the order requests arrive.
    pub replies: Vec<Value>,
    /// The runs, in order, in one sandbox (so `-c` continues the first run's session).
    pub runs: Vec<Run>,
}

impl Scenario {
    /// Parses the text of `scenario.json` of the scenario `name`.
    ///
    /// # Errors
    /// When the text is not JSON or not a scenario.
    pub fn parse(name: &str, text: &str) -> Result<Scenario, ScenarioError> {
        let value: Value = serde_json::from_str(text).map_err(|source| ScenarioError::Json {
            scenario: name.to_owned(),
            source,
        })?;
        let invalid = |message: String| ScenarioError::Invalid {
            scenario: name.to_owned(),
            message,
        };
        let strings = |value: &Value, what: &str| -> Result<Vec<String>, ScenarioError> {
            value
                .as_array()
                .ok_or_else(|| invalid(format!("{what} is not an array")))?
                .iter()
                .map(|item| {
                    item.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| invalid(format!("{what} holds a non-string")))
                })
                .collect()
        };
        let mut runs = Vec::new();
        for (index, run) in value["runs"]
            .as_array()
            .ok_or_else(|| invalid("no \"runs\" array".into()))?
            .iter()
            .enumerate()
        {
            let args = strings(&run["args"], &format!("runs[{index}].args"))?;
            let steps = match run.get("steps") {
                None => None,
                Some(steps) => Some(
                    steps
                        .as_array()
                        .ok_or_else(|| invalid(format!("runs[{index}].steps is not an array")))?
                        .iter()
                        .map(|step| parse_step(step).ok_or_else(|| invalid(format!("unknown step {step}"))))
                        .collect::<Result<Vec<_>, _>>()?,
                ),
            };
            runs.push(Run { args, steps });
        }
        let mut files = BTreeMap::new();
        if let Some(map) = value.get("files").and_then(Value::as_object) {
            for (path, content) in map {
                let content = content
                    .as_str()
                    .ok_or_else(|| invalid(format!("files.{path} is not a string")))?;
                files.insert(path.clone(), content.to_owned());
            }
        }
        let replies = value
            .get("replies")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for reply in &replies {
            server_reply(reply).ok_or_else(|| invalid(format!("unknown reply {reply}")))?;
        }
        Ok(Scenario {
            name: name.to_owned(),
            description: value["description"].as_str().unwrap_or_default().to_owned(),
            model: value
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or("mock-model")
                .to_owned(),
            files,
            settings: value.get("settings").cloned(),
            model_fields: value
                .get("model_fields")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            replies,
            runs,
        })
    }

    /// Reads `<dir>/scenario.json`; the scenario is named after `dir`.
    ///
    /// # Errors
    /// When the file cannot be read or parsed.
    pub fn load(dir: &Path) -> Result<Scenario, ScenarioError> {
        let path = dir.join("scenario.json");
        let text = std::fs::read_to_string(&path).map_err(|source| ScenarioError::Read { path, source })?;
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Scenario::parse(&name, &text)
    }

    /// The server's replies.
    pub fn server_replies(&self) -> Vec<Reply> {
        self.replies.iter().filter_map(server_reply).collect()
    }
}

/// The scenarios under `root` (each directory holding a `scenario.json`), by name.
///
/// # Errors
/// When `root` or a scenario cannot be read.
pub fn scenarios(root: &Path) -> Result<Vec<Scenario>, ScenarioError> {
    let entries = std::fs::read_dir(root).map_err(|source| ScenarioError::Read {
        path: root.to_owned(),
        source,
    })?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.join("scenario.json").is_file())
        .collect();
    dirs.sort();
    dirs.iter().map(|dir| Scenario::load(dir)).collect()
}

fn parse_step(step: &Value) -> Option<Step> {
    if let Some(command) = step.get("send") {
        let wait = step.get("wait").and_then(Value::as_bool).unwrap_or(true);
        return Some(Step::Send {
            command: command.clone(),
            wait,
        });
    }
    if let Some(pattern) = step.get("until") {
        return Some(Step::Until(pattern.clone()));
    }
    step.get("sleep")
        .and_then(Value::as_f64)
        .map(|seconds| Step::Sleep(Duration::from_secs_f64(seconds)))
}

/// A chunk of the scripted stream (`chatcmpl-1`, model `mock`).
fn chunk(delta: Value, finish: Value) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "mock",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

/// The reply a scenario's reply describes (`None` for a description it does not know):
/// * `{"text": "…"}`: the text in pieces of 8 characters, then `stop`;
/// * `{"thinking": "…", "text": "…"}`: `reasoning_content` deltas first;
/// * `{"tool_calls": [{"id", "name", "arguments"}]}` (optional `text` before), then `tool_calls`;
/// * `{"deltas": […], "finish": "stop"}`: these deltas as they are;
/// * `{"status": 500, "body": "…", "headers": {"retry-after": "0"}}`: an error response with
///   this JSON body (and these headers);
///
/// `"pace": seconds` pauses before every chunk (an SSE comment opens the stream), and `"usage":
/// [prompt, completion]` replaces the usage the last chunk reports (10 / 5).
pub fn server_reply(spec: &Value) -> Option<Reply> {
    if let Some(status) = spec.get("status").and_then(Value::as_u64) {
        let body = spec.get("body").and_then(Value::as_str).unwrap_or("{}");
        let mut reply = Reply::json(u16::try_from(status).ok()?, body);
        if let Some(headers) = spec.get("headers").and_then(Value::as_object) {
            for (name, value) in headers {
                reply = reply.header(name, value.as_str()?);
            }
        }
        return Some(reply);
    }
    let mut deltas: Vec<Value> = Vec::new();
    let mut finish = "stop";
    if let Some(raw) = spec.get("deltas").and_then(Value::as_array) {
        deltas.extend(raw.iter().cloned());
        finish = spec.get("finish").and_then(Value::as_str).unwrap_or("stop");
    } else {
        let pieces = |text: &str| -> Vec<String> {
            let chars: Vec<char> = text.chars().collect();
            chars.chunks(8).map(|piece| piece.iter().collect()).collect()
        };
        if let Some(thinking) = spec.get("thinking").and_then(Value::as_str) {
            for piece in pieces(thinking) {
                deltas.push(json!({"reasoning_content": piece}));
            }
        }
        if let Some(text) = spec.get("text").and_then(Value::as_str) {
            for piece in pieces(text) {
                deltas.push(json!({"content": piece}));
            }
        }
        if let Some(calls) = spec.get("tool_calls").and_then(Value::as_array) {
            for (index, call) in calls.iter().enumerate() {
                let arguments = call.get("arguments")?.to_string();
                let (head, tail) = arguments.split_at(arguments.len() / 2);
                deltas.push(
                    json!({"tool_calls": [{"index": index, "id": call.get("id")?, "type": "function",
                    "function": {"name": call.get("name")?, "arguments": head}}]}),
                );
                deltas.push(json!({"tool_calls": [{"index": index, "function": {"arguments": tail}}]}));
            }
            finish = "tool_calls";
        }
        if deltas.is_empty() {
            return None;
        }
        if let Some(first) = deltas.first_mut().and_then(Value::as_object_mut) {
            first.insert("role".into(), "assistant".into());
        }
    }
    let mut chunks: Vec<String> = deltas
        .into_iter()
        .map(|delta| openai::data(&chunk(delta, Value::Null)))
        .collect();
    let mut last = chunk(json!({}), finish.into());
    let (prompt, completion) = match spec.get("usage").and_then(Value::as_array).map(Vec::as_slice) {
        Some([prompt, completion]) => (prompt.as_u64()?, completion.as_u64()?),
        Some(_) => return None,
        None => (10, 5),
    };
    last["usage"] = json!({"prompt_tokens": prompt, "completion_tokens": completion,
                           "total_tokens": prompt + completion});
    chunks.push(openai::data(&last));
    chunks.push(openai::DONE.to_owned());
    match spec.get("pace").and_then(Value::as_f64) {
        Some(pace) if pace > 0.0 => {
            chunks.insert(0, ": scripted\n\n".to_owned());
            Some(Reply::events(&chunks).paced(Duration::from_secs_f64(pace)))
        }
        _ => Some(Reply::events(&chunks)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn body(reply: &Reply) -> String {
        reply
            .chunks
            .iter()
            .map(|(_, bytes)| String::from_utf8_lossy(bytes).into_owned())
            .collect()
    }

    #[test]
    fn replies_and_steps_parse() {
        let scenario = Scenario::parse(
            "s",
            r#"{"model": "", "files": {"a.txt": "x"}, "replies": [
                {"text": "Hello there, friend"},
                {"tool_calls": [{"id": "c1", "name": "read", "arguments": {"path": "a.txt"}}], "pace": 0.1},
                {"status": 500, "body": "{\"error\": {\"message\": \"boom\"}}"}
              ],
              "runs": [{"args": ["--mode", "rpc"], "steps": [
                {"send": {"id": "1", "type": "prompt", "message": "hi"}},
                {"until": {"type": "agent_end"}}, {"sleep": 0.5},
                {"send": {"type": "abort"}, "wait": false}]}]}"#,
        )
        .unwrap();
        assert_eq!(scenario.model, "");
        let replies = scenario.server_replies();
        assert_eq!(replies.len(), 3);
        let text = body(&replies[0]);
        assert!(
            text.contains(r#""delta":{"content":"Hello th","role":"assistant"}"#),
            "{text}"
        );
        assert!(text.contains(r#""finish_reason":"stop""#));
        let calls = body(&replies[1]);
        assert!(calls.starts_with(": scripted"));
        assert!(calls.contains(r#""finish_reason":"tool_calls""#));
        assert_eq!(replies[1].chunks[1].0, Duration::from_millis(100));
        assert_eq!(replies[2].status, 500);
        let steps = scenario.runs[0].steps.as_ref().unwrap();
        assert_eq!(steps.len(), 4);
        assert_eq!(steps[2], Step::Sleep(Duration::from_millis(500)));
        assert!(matches!(&steps[3], Step::Send { wait: false, .. }));
    }

    #[test]
    fn a_bad_reply_or_step_is_refused() {
        let error = Scenario::parse("s", r#"{"replies": [{"nothing": 1}], "runs": []}"#).unwrap_err();
        assert!(error.to_string().contains("unknown reply"), "{error}");
        let error = Scenario::parse("s", r#"{"runs": [{"args": [], "steps": [{"jump": 1}]}]}"#).unwrap_err();
        assert!(error.to_string().contains("unknown step"), "{error}");
    }
}
