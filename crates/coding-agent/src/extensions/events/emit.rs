//! [`Extensions`]: one method per kind of event, chaining the listeners' results as pi's
//! `ExtensionRunner` does.

use std::path::PathBuf;
use std::sync::Arc;

use pi_agent_core::{AgentMessage, ContentBlock, ImageContent, now_ms};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::{EventListener, ExtensionError, ExtensionRunner};

/// The loaded extensions, as the session and the app emit events to them. Clones share the runner.
#[derive(Clone)]
pub struct Extensions {
    runner: Arc<dyn ExtensionRunner>,
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Extensions")
    }
}

/// Where a prompt's text came from (the `input` event's `source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputSource {
    /// Typed in the interactive mode, or given to `-p`.
    Interactive,
    /// An RPC `prompt` (or `steer` / `follow_up`).
    Rpc,
    /// Sent by an extension (`pi.sendUserMessage`).
    Extension,
}

impl InputSource {
    /// pi's name of it.
    pub fn as_str(self) -> &'static str {
        match self {
            InputSource::Interactive => "interactive",
            InputSource::Rpc => "rpc",
            InputSource::Extension => "extension",
        }
    }
}

/// What the `input` listeners decided.
#[derive(Debug, Clone, PartialEq)]
pub enum InputOutcome {
    /// Go on with the input as it was.
    Continue,
    /// Go on with this text and these images instead.
    Transform {
        /// The new text.
        text: String,
        /// The new images (`None`: none).
        images: Option<Vec<ImageContent>>,
    },
    /// An extension handled it: nothing is sent to the model.
    Handled,
}

/// What the `before_agent_start` listeners added to the run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AgentStartOutcome {
    /// The custom messages to send after the prompt (role `custom`, as pi stores them).
    pub messages: Vec<AgentMessage>,
    /// The system prompt of this run, when a listener changed it.
    pub system_prompt: Option<String>,
}

/// A `tool_call` listener's decision.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolCallOutcome {
    /// Don't run the call.
    pub block: bool,
    /// Why (the blocked result's text; pi's loop writes `Tool execution was blocked` without one).
    pub reason: Option<String>,
    /// The arguments as the listeners left them, when one changed them.
    pub input: Option<Value>,
}

/// The merged patch of the `tool_result` listeners; `None` keeps the executed value.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolResultPatch {
    /// The new content.
    pub content: Option<Vec<ContentBlock>>,
    /// The new details.
    pub details: Option<Value>,
    /// The new error flag.
    pub is_error: Option<bool>,
}

/// A `user_bash` listener's replacement of the command's result (pi's `BashResult`).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserBashResult {
    /// The combined output.
    #[serde(default)]
    pub output: String,
    /// The exit code (`None`: killed or cancelled).
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// Whether the command was cancelled.
    #[serde(default)]
    pub cancelled: bool,
    /// Whether the output was truncated.
    #[serde(default)]
    pub truncated: bool,
    /// Where the full output was saved.
    #[serde(default)]
    pub full_output_path: Option<PathBuf>,
}

/// A path a `resources_discover` listener added, with the extension that added it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourcePath {
    /// The path as the extension gave it.
    pub path: String,
    /// The extension's path.
    pub extension_path: String,
}

/// Everything the `resources_discover` listeners added, in load order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResourcePaths {
    /// Skill files or directories.
    pub skill_paths: Vec<ResourcePath>,
    /// Prompt-template files or directories.
    pub prompt_paths: Vec<ResourcePath>,
    /// Theme files or directories.
    pub theme_paths: Vec<ResourcePath>,
}

/// `{"type": kind, ...fields}`.
fn event(kind: &str, fields: Value) -> Value {
    let mut map = Map::new();
    map.insert("type".into(), Value::String(kind.to_owned()));
    if let Value::Object(fields) = fields {
        map.extend(fields);
    }
    Value::Object(map)
}

fn is_session_before(kind: &str) -> bool {
    matches!(
        kind,
        "session_before_switch" | "session_before_fork" | "session_before_compact" | "session_before_tree"
    )
}

impl Extensions {
    /// The extensions `runner` handles events for.
    pub fn new(runner: Arc<dyn ExtensionRunner>) -> Self {
        Extensions { runner }
    }

    /// The runner.
    pub fn runner(&self) -> &Arc<dyn ExtensionRunner> {
        &self.runner
    }

    /// Whether any extension listens to `kind`.
    pub fn has(&self, kind: &str) -> bool {
        self.runner.listens(kind)
    }

    /// One listener's answer; a failure is reported and counts as none, as does `null`.
    async fn ask(&self, listener: &Arc<dyn EventListener>, event: &Value, cancel: &CancellationToken) -> Option<Value> {
        match listener.handle(event, cancel).await {
            Ok(Some(Value::Null) | None) => None,
            Ok(Some(answer)) => Some(answer),
            Err(error) => {
                self.runner.report(error);
                None
            }
        }
    }

    fn report(&self, listener: &Arc<dyn EventListener>, kind: &str, message: &str) {
        self.runner.report(ExtensionError::Handler {
            extension: listener.name().to_owned(),
            event: kind.to_owned(),
            message: message.to_owned(),
        });
    }

    /// Sends the event `fields()` builds (only when someone listens) to every listener of `kind`
    /// in turn (pi's `emit`). For the `session_before_*` events the last result is returned, and
    /// the first with `cancel: true` ends the round; other events' results are ignored.
    pub async fn emit(&self, kind: &str, fields: impl FnOnce() -> Value, cancel: &CancellationToken) -> Option<Value> {
        let listeners = self.runner.listeners(kind);
        if listeners.is_empty() {
            return None;
        }
        let payload = event(kind, fields());
        let before = is_session_before(kind);
        let mut result = None;
        for listener in &listeners {
            let answer = self.ask(listener, &payload, cancel).await;
            if before && let Some(answer) = answer {
                let cancelled = answer.get("cancel").and_then(Value::as_bool) == Some(true);
                result = Some(answer);
                if cancelled {
                    break;
                }
            }
        }
        result
    }

    /// `tool_call`: each listener sees the input as the previous ones left it; the first that
    /// blocks ends the round. A listener that fails blocks the call with its error's text (pi's
    /// runner lets the error through to the loop, which blocks).
    pub async fn tool_call(
        &self,
        tool_call_id: &str,
        tool_name: &str,
        input: &Value,
        cancel: &CancellationToken,
    ) -> Result<Option<ToolCallOutcome>, ExtensionError> {
        let listeners = self.runner.listeners("tool_call");
        if listeners.is_empty() {
            return Ok(None);
        }
        let mut current = input.clone();
        let mut changed = false;
        let mut outcome = None;
        for listener in &listeners {
            let payload = event(
                "tool_call",
                json!({"toolCallId": tool_call_id, "toolName": tool_name, "input": current}),
            );
            let Some(answer) = listener.handle(&payload, cancel).await?.filter(|a| !a.is_null()) else {
                continue;
            };
            if let Some(new_input) = answer.get("input").filter(|i| !i.is_null()) {
                current = new_input.clone();
                changed = true;
            }
            let block = answer.get("block").and_then(Value::as_bool) == Some(true);
            let reason = answer.get("reason").and_then(Value::as_str).map(str::to_owned);
            outcome = Some(ToolCallOutcome {
                block,
                reason,
                input: None,
            });
            if block {
                break;
            }
        }
        if changed {
            outcome.get_or_insert_with(ToolCallOutcome::default).input = Some(current);
        }
        Ok(outcome)
    }

    /// `tool_result`: each listener sees the result as patched so far; the merged patch, or
    /// `None` when no listener changed anything.
    pub async fn tool_result(
        &self,
        fields: impl FnOnce() -> (String, String, Value, Vec<ContentBlock>, Value, bool),
        cancel: &CancellationToken,
    ) -> Option<ToolResultPatch> {
        let listeners = self.runner.listeners("tool_result");
        if listeners.is_empty() {
            return None;
        }
        let (tool_call_id, tool_name, input, content, details, is_error) = fields();
        let mut current = event(
            "tool_result",
            json!({"toolCallId": tool_call_id, "toolName": tool_name, "input": input,
                   "content": content, "details": details, "isError": is_error}),
        );
        let mut patch = ToolResultPatch::default();
        let mut modified = false;
        for listener in &listeners {
            let Some(answer) = self.ask(listener, &current, cancel).await else {
                continue;
            };
            if let Some(content) = answer.get("content").filter(|v| !v.is_null()) {
                match serde_json::from_value::<Vec<ContentBlock>>(content.clone()) {
                    Ok(blocks) => {
                        current["content"] = content.clone();
                        patch.content = Some(blocks);
                        modified = true;
                    }
                    Err(error) => self.report(listener, "tool_result", &format!("invalid content: {error}")),
                }
            }
            if let Some(details) = answer.get("details").filter(|v| !v.is_null()) {
                current["details"] = details.clone();
                patch.details = Some(details.clone());
                modified = true;
            }
            if let Some(flag) = answer.get("isError").and_then(Value::as_bool) {
                current["isError"] = Value::Bool(flag);
                patch.is_error = Some(flag);
                modified = true;
            }
        }
        modified.then_some(patch)
    }

    /// `context`: the messages of the next model call, each listener's replacement feeding the
    /// next; `None` when nobody listens.
    pub async fn context(&self, messages: &[AgentMessage], cancel: &CancellationToken) -> Option<Vec<AgentMessage>> {
        let listeners = self.runner.listeners("context");
        if listeners.is_empty() {
            return None;
        }
        let mut current = messages.to_vec();
        for listener in &listeners {
            let payload = event("context", json!({ "messages": current }));
            let Some(answer) = self.ask(listener, &payload, cancel).await else {
                continue;
            };
            let Some(replacement) = answer.get("messages").filter(|v| !v.is_null()) else {
                continue;
            };
            match serde_json::from_value::<Vec<AgentMessage>>(replacement.clone()) {
                Ok(messages) => current = messages,
                Err(error) => self.report(listener, "context", &format!("invalid messages: {error}")),
            }
        }
        Some(current)
    }

    /// `before_provider_request`: the body to send, each listener's replacement feeding the next;
    /// `None` when nobody replaced it.
    pub async fn before_provider_request(&self, payload: &Value, cancel: &CancellationToken) -> Option<Value> {
        let listeners = self.runner.listeners("before_provider_request");
        if listeners.is_empty() {
            return None;
        }
        let mut current: Option<Value> = None;
        for listener in &listeners {
            let body = current.as_ref().unwrap_or(payload);
            let request = event("before_provider_request", json!({ "payload": body }));
            if let Some(answer) = self.ask(listener, &request, cancel).await {
                // The contract's `{payload}` wrapper; a bare body is taken as the body.
                let replaced = match answer {
                    Value::Object(mut map) if map.len() == 1 && map.contains_key("payload") => {
                        map.remove("payload").unwrap_or(Value::Null)
                    }
                    other => other,
                };
                current = Some(replaced);
            }
        }
        current
    }

    /// `message_end`: a listener's replacement of the same role feeds the next; another role is
    /// reported (pi's text) and ignored. `None` when nothing was replaced.
    pub async fn message_end(&self, message: &AgentMessage, cancel: &CancellationToken) -> Option<AgentMessage> {
        let listeners = self.runner.listeners("message_end");
        if listeners.is_empty() {
            return None;
        }
        let mut current: Option<AgentMessage> = None;
        for listener in &listeners {
            let shown = current.as_ref().unwrap_or(message);
            let payload = event("message_end", json!({ "message": shown }));
            let Some(answer) = self.ask(listener, &payload, cancel).await else {
                continue;
            };
            let Some(replacement) = answer.get("message").filter(|v| !v.is_null()) else {
                continue;
            };
            match serde_json::from_value::<AgentMessage>(replacement.clone()) {
                Ok(replacement) if replacement.role() == shown.role() => current = Some(replacement),
                Ok(_) => self.report(
                    listener,
                    "message_end",
                    "message_end handlers must return a message with the same role",
                ),
                Err(error) => self.report(listener, "message_end", &format!("invalid message: {error}")),
            }
        }
        current
    }

    /// `input`: transforms chain, the first `handled` ends the round (pi's `emitInput`).
    pub async fn input(
        &self,
        text: &str,
        images: Option<&[ImageContent]>,
        source: InputSource,
        cancel: &CancellationToken,
    ) -> InputOutcome {
        let listeners = self.runner.listeners("input");
        if listeners.is_empty() {
            return InputOutcome::Continue;
        }
        let mut current_text = text.to_owned();
        let mut current_images: Option<Vec<ImageContent>> = images.map(<[ImageContent]>::to_vec);
        let mut changed = false;
        for listener in &listeners {
            let mut fields = json!({"text": current_text, "source": source.as_str()});
            if let Some(images) = &current_images {
                fields["images"] = json!(images.iter().cloned().map(ContentBlock::Image).collect::<Vec<_>>());
            }
            let payload = event("input", fields);
            let Some(answer) = self.ask(listener, &payload, cancel).await else {
                continue;
            };
            match answer.get("action").and_then(Value::as_str) {
                Some("handled") => return InputOutcome::Handled,
                Some("transform") => {
                    current_text = answer
                        .get("text")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned();
                    if let Some(images) = answer.get("images").filter(|v| !v.is_null()) {
                        match serde_json::from_value::<Vec<ContentBlock>>(images.clone()) {
                            Ok(blocks) => {
                                current_images = Some(
                                    blocks
                                        .into_iter()
                                        .filter_map(|block| match block {
                                            ContentBlock::Image(image) => Some(image),
                                            _ => None,
                                        })
                                        .collect(),
                                );
                            }
                            Err(error) => self.report(listener, "input", &format!("invalid images: {error}")),
                        }
                    }
                    changed = true;
                }
                _ => {}
            }
        }
        if changed && (current_text != text || current_images.as_deref() != images) {
            InputOutcome::Transform {
                text: current_text,
                images: current_images,
            }
        } else {
            InputOutcome::Continue
        }
    }

    /// `before_agent_start`: every listener's injected messages, in order, and the system prompt as
    /// the last listener to change it left it (each sees the previous one's). `None` when nobody
    /// listens or nothing was added.
    pub async fn before_agent_start(
        &self,
        prompt: &str,
        images: Option<&[ImageContent]>,
        system_prompt: &str,
        system_prompt_options: impl FnOnce() -> Value,
        cancel: &CancellationToken,
    ) -> Option<AgentStartOutcome> {
        let listeners = self.runner.listeners("before_agent_start");
        if listeners.is_empty() {
            return None;
        }
        let options = system_prompt_options();
        let mut outcome = AgentStartOutcome::default();
        let mut current = system_prompt.to_owned();
        for listener in &listeners {
            let mut fields = json!({"prompt": prompt, "systemPrompt": current, "systemPromptOptions": options});
            if let Some(images) = images {
                fields["images"] = json!(images.iter().cloned().map(ContentBlock::Image).collect::<Vec<_>>());
            }
            let payload = event("before_agent_start", fields);
            let Some(answer) = self.ask(listener, &payload, cancel).await else {
                continue;
            };
            let injected = answer
                .get("message")
                .filter(|m| !m.is_null())
                .into_iter()
                .chain(answer.get("messages").and_then(Value::as_array).into_iter().flatten());
            for message in injected {
                match custom_message(message) {
                    Some(message) => outcome.messages.push(message),
                    None => self.report(
                        listener,
                        "before_agent_start",
                        "invalid message: expected {customType, content, display}",
                    ),
                }
            }
            if let Some(prompt) = answer.get("systemPrompt").and_then(Value::as_str) {
                current = prompt.to_owned();
                outcome.system_prompt = Some(current.clone());
            }
        }
        (!outcome.messages.is_empty() || outcome.system_prompt.is_some()).then_some(outcome)
    }

    /// `user_bash`: the first listener that answers with a result decides (pi's `emitUserBash`).
    pub async fn user_bash(
        &self,
        command: &str,
        exclude_from_context: bool,
        cwd: &std::path::Path,
        cancel: &CancellationToken,
    ) -> Option<UserBashResult> {
        let listeners = self.runner.listeners("user_bash");
        if listeners.is_empty() {
            return None;
        }
        let payload = event(
            "user_bash",
            json!({"command": command, "excludeFromContext": exclude_from_context, "cwd": cwd}),
        );
        for listener in &listeners {
            let Some(answer) = self.ask(listener, &payload, cancel).await else {
                continue;
            };
            let Some(result) = answer.get("result").filter(|v| !v.is_null()) else {
                continue;
            };
            match serde_json::from_value::<UserBashResult>(result.clone()) {
                Ok(result) => return Some(result),
                Err(error) => self.report(listener, "user_bash", &format!("invalid result: {error}")),
            }
        }
        None
    }

    /// `resources_discover`: every listener's paths, with the extension that gave them.
    pub async fn resources_discover(
        &self,
        cwd: &std::path::Path,
        reason: &str,
        cancel: &CancellationToken,
    ) -> ResourcePaths {
        let mut paths = ResourcePaths::default();
        let listeners = self.runner.listeners("resources_discover");
        if listeners.is_empty() {
            return paths;
        }
        let payload = event("resources_discover", json!({"cwd": cwd, "reason": reason}));
        for listener in &listeners {
            let Some(answer) = self.ask(listener, &payload, cancel).await else {
                continue;
            };
            for (key, list) in [
                ("skillPaths", &mut paths.skill_paths),
                ("promptPaths", &mut paths.prompt_paths),
                ("themePaths", &mut paths.theme_paths),
            ] {
                let given = answer.get(key).and_then(Value::as_array).into_iter().flatten();
                list.extend(given.filter_map(Value::as_str).map(|path| ResourcePath {
                    path: path.to_owned(),
                    extension_path: listener.name().to_owned(),
                }));
            }
        }
        paths
    }
}

/// An injected `{customType, content, display, details?}` as the custom message pi sends and
/// stores (`role: "custom"`, stamped now).
/// pi's custom message from an extension's `{customType, content, display?, details?}` (the
/// `before_agent_start` messages, `pi.sendMessage`); `None` without a `customType`.
pub(crate) fn custom_message(message: &Value) -> Option<AgentMessage> {
    let custom_type = message.get("customType")?.as_str()?;
    let mut fields = json!({
        "role": "custom",
        "customType": custom_type,
        "content": message.get("content").cloned().unwrap_or(Value::String(String::new())),
        "display": message.get("display").and_then(Value::as_bool).unwrap_or(false),
        "timestamp": now_ms(),
    });
    if let Some(details) = message.get("details").filter(|d| !d.is_null()) {
        fields["details"] = details.clone();
    }
    serde_json::from_value(fields).ok()
}
