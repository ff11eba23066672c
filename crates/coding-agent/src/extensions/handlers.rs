//! pi's side of the extension → pi methods of protocol version 2 (`docs/extensions.md`, "The
//! extension protocol"): `register`, `pi.*`, `ctx.*`, the `ui.*` methods version 1 lacks,
//! `tools.execute` and `pi.events.emit`. Everything of version 1 (`update`, `ui.select` …,
//! `exec`, `pendingAction.push`, `mutationQueue.*`, `modelRegistry.getApiKey`) is answered by the
//! process-tool handlers.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use pi_agent_core::{AgentMessage, AgentTool, ToolContext, ToolUpdateSink, lock};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::hub::Hub;
use crate::app::unless_cancelled;
use crate::config::parse_thinking_level;
use crate::custom_tools::process::{
    Connection, Handler, METHOD_NOT_FOUND, RpcError, SERVER_ERROR, tool_notification, tool_request,
};

/// The handlers of one extension process.
pub(crate) struct ExtensionHandlers {
    hub: Arc<Hub>,
    /// The process's index in the hub, once it started.
    process: OnceLock<usize>,
    /// pi's built-in tools as they were before an extension overrode one (`tools.execute`).
    builtins: Arc<Mutex<HashMap<String, Arc<dyn AgentTool>>>>,
}

impl ExtensionHandlers {
    pub(crate) fn new(hub: Arc<Hub>, builtins: Arc<Mutex<HashMap<String, Arc<dyn AgentTool>>>>) -> Self {
        ExtensionHandlers {
            hub,
            process: OnceLock::new(),
            builtins,
        }
    }

    pub(crate) fn set_process(&self, index: usize) {
        let _ = self.process.set(index);
    }
}

fn params<T: DeserializeOwned>(params: Value) -> Result<T, RpcError> {
    serde_json::from_value(params).map_err(RpcError::invalid_params)
}

fn failed(error: impl std::fmt::Display) -> RpcError {
    RpcError::new(SERVER_ERROR, error.to_string())
}

/// `null` / an absent key, as `None`.
fn text_of(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

#[async_trait::async_trait]
impl Handler for ExtensionHandlers {
    fn notification(&self, connection: &Arc<Connection>, method: &str, params: Value) {
        let ui = connection.api().ui();
        match method {
            "register" => {
                let Some(&process) = self.process.get() else { return };
                match self.hub.register(process, &params) {
                    Ok(()) => self.add_late_tools(process, &params),
                    Err(why) => self.hub.report(&super::events::ExtensionError::Process {
                        extension: text_of(&params, "path").unwrap_or_default(),
                        message: format!("register failed: {why}"),
                    }),
                }
            }
            "ui.setStatus" => {
                let key = text_of(&params, "key").unwrap_or_default();
                ui.set_status(&key, text_of(&params, "text").as_deref());
            }
            "ui.setWidget" => {
                let key = text_of(&params, "key").unwrap_or_default();
                let lines: Option<Vec<String>> = params.get("lines").and_then(|lines| {
                    lines
                        .as_array()
                        .map(|lines| lines.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                });
                ui.set_widget(&key, lines.as_deref(), text_of(&params, "placement").as_deref());
            }
            "ui.setTitle" => ui.set_title(&text_of(&params, "title").unwrap_or_default()),
            "ui.setEditorText" => ui.set_editor_text(&text_of(&params, "text").unwrap_or_default()),
            "ui.setWorkingMessage" => ui.set_working_message(text_of(&params, "message").as_deref()),
            "pi.events.emit" => self.forward_event(connection, &params),
            "ctx.abort" => {
                if let Some(app) = self.hub.app() {
                    let session = app.session().clone();
                    tokio::spawn(async move { session.abort().await });
                }
            }
            "ctx.shutdown" => self.hub.request_shutdown(),
            // A handler threw in an event the host went on with (every event but `tool_call`):
            // reported as pi reports it, the other extensions' results kept.
            "extension.error" => self.hub.report(&super::events::ExtensionError::Handler {
                extension: text_of(&params, "extension").unwrap_or_default(),
                event: text_of(&params, "event").unwrap_or_default(),
                message: text_of(&params, "message").unwrap_or_default(),
            }),
            _ => tool_notification(connection, method, params),
        }
    }

    async fn request(&self, connection: &Arc<Connection>, method: &str, params: Value) -> Result<Value, RpcError> {
        match method {
            "ui.select" | "ui.confirm" | "ui.input" => match params.get("timeout").and_then(Value::as_u64) {
                // pi answers a dialog whose time is up with its default.
                Some(millis) => {
                    let limit = Duration::from_millis(millis);
                    let ui = connection.api().ui();
                    let answer = dialog_within(&ui, method, params, limit);
                    Ok(tokio::time::timeout(limit, answer)
                        .await
                        .unwrap_or(if method == "ui.confirm" {
                            Value::Bool(false)
                        } else {
                            Value::Null
                        }))
                }
                None => tool_request(connection, method, params).await,
            },
            "ui.editor" => {
                let title = text_of(&params, "title").unwrap_or_default();
                let prefill = text_of(&params, "prefill");
                let text = connection.api().ui().editor(&title, prefill.as_deref()).await;
                Ok(text.map_or(Value::Null, Value::from))
            }
            "tools.execute" => self.execute_builtin(connection, params).await,
            method if method.starts_with("pi.") || method.starts_with("ctx.") => {
                self.session_call(method, params).await
            }
            "ai.complete" => {
                let app = self
                    .hub
                    .app()
                    .ok_or_else(|| failed("ai.complete is not available before the session starts"))?;
                let request: crate::app::CompleteRequest = self::params(params)?;
                // The extension stops waiting on its own `signal`; the call itself ends with its
                // process (the connection's requests are dropped when it closes).
                let message = app
                    .complete(request, &CancellationToken::new())
                    .await
                    .map_err(|error| failed(error.to_string()))?;
                serde_json::to_value(AgentMessage::Assistant(message)).map_err(|error| failed(error.to_string()))
            }
            _ => tool_request(connection, method, params).await,
        }
    }
}

/// A dialog with a time limit, asked so that the user interface can show it.
async fn dialog_within(ui: &Arc<dyn crate::ToolUi>, method: &str, params: Value, limit: Duration) -> Value {
    let title = text_of(&params, "title").unwrap_or_default();
    match method {
        "ui.confirm" => {
            let message = text_of(&params, "message").unwrap_or_default();
            Value::Bool(ui.confirm_within(&title, &message, limit).await)
        }
        "ui.select" => {
            let options: Vec<String> = params
                .get("options")
                .and_then(Value::as_array)
                .map(|options| options.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                .unwrap_or_default();
            ui.select_within(&title, &options, limit)
                .await
                .map_or(Value::Null, Value::from)
        }
        _ => {
            let placeholder = text_of(&params, "placeholder");
            ui.input_within(&title, placeholder.as_deref(), limit)
                .await
                .map_or(Value::Null, Value::from)
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecuteParams {
    tool: String,
    #[serde(default)]
    params: Value,
    #[serde(default)]
    call_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SendMessage {
    message: Map<String, Value>,
    #[serde(default)]
    options: Option<SendOptions>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct SendOptions {
    #[serde(default)]
    trigger_turn: bool,
    #[serde(default)]
    deliver_as: Option<String>,
}

impl ExtensionHandlers {
    /// Tools a `register` notification added after `initialize` join the running session and
    /// become active (a name the session knows already is reported, as at load time).
    fn add_late_tools(&self, process: usize, params: &Value) {
        let (Some(app), Some(host)) = (self.hub.app(), self.hub.process(process)) else {
            return;
        };
        let mut late = super::registration::Registration::default();
        if late
            .add(&json!({"tools": params.get("tools").cloned().unwrap_or(Value::Null)}))
            .is_err()
        {
            return;
        }
        let path = text_of(params, "path").unwrap_or_default();
        let session = app.session();
        for tool in late.tools {
            // Far from the indexes given at load, and distinct per tool of the session.
            let index = usize::MAX - session.tool_registry().iter().count();
            let tool = crate::custom_tools::process::ProcessTool::new(host.clone(), index, tool.definition);
            let (added, failed) = super::tools::add_process_tool(session, tool, &path);
            for error in failed {
                self.hub.report(&super::events::ExtensionError::Process {
                    extension: path.clone(),
                    message: error.error,
                });
            }
            if !added.is_empty() {
                let mut active = session.active_tool_names();
                active.extend(added);
                if let Err(error) = session.set_active_tools(active) {
                    tracing::warn!(%error, "a late extension tool could not be activated");
                }
            }
        }
    }

    /// `pi.events.emit`: every other process gets `events.emit`.
    fn forward_event(&self, from: &Arc<Connection>, params: &Value) {
        let hub = self.hub.clone();
        let from = from.clone();
        let params = params.clone();
        tokio::spawn(async move {
            for host in hub.processes() {
                if let Some(connection) = host.live().await
                    && !Arc::ptr_eq(&connection, &from)
                {
                    connection.notify("events.emit", &params);
                }
            }
        });
    }

    /// `tools.execute {tool, params, callId?}`: pi's built-in tool `tool`, run in pi's cwd;
    /// `callId` ties it to a running call (its abort, the files it holds).
    async fn execute_builtin(&self, connection: &Arc<Connection>, params: Value) -> Result<Value, RpcError> {
        let call: ExecuteParams = serde_json::from_value(params).map_err(RpcError::invalid_params)?;
        let tool = lock(&self.builtins).get(&call.tool).cloned();
        let tool = match tool {
            Some(tool) => tool,
            None => self
                .hub
                .app()
                .and_then(|app| app.session().tool_registry().get(&call.tool).map(|t| t.tool.clone()))
                .ok_or_else(|| failed(format!("Unknown tool: {}", call.tool)))?,
        };
        let cancel = call
            .call_id
            .as_deref()
            .and_then(|id| connection.call_cancel(id))
            .map_or_else(|| connection.closed().child_token(), |token| token.child_token());
        let held = call
            .call_id
            .as_deref()
            .map(|id| connection.call_held(id))
            .unwrap_or_default();
        let ctx = ToolContext {
            cancel,
            updates: ToolUpdateSink::discard(),
        };
        let id = call.call_id.unwrap_or_else(|| "extension".to_owned());
        let args = tool.prepare_arguments(call.params);
        let outcome = held.scope(tool.execute(&id, args, ctx)).await;
        match outcome {
            Ok(result) => serde_json::to_value(result).map_err(failed),
            Err(error) => Err(RpcError {
                code: SERVER_ERROR,
                message: error.message().to_owned(),
                data: Some(json!({"kind": "tool"})),
            }),
        }
    }

    /// `pi.*` and `ctx.*`: what an extension asks of the session.
    async fn session_call(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let app = self
            .hub
            .app()
            .ok_or_else(|| failed(format!("{method} is not available before the session starts")))?;
        let text = |key: &str| text_of(&params, key);
        match method {
            "pi.sendMessage" => {
                let send: SendMessage = self::params(params)?;
                let message = super::events::custom_message(&Value::Object(send.message))
                    .ok_or_else(|| RpcError::invalid_params("sendMessage: the message needs a customType"))?;
                deliver(&app, message, send.options.unwrap_or_default());
                Ok(Value::Null)
            }
            "pi.sendUserMessage" => {
                let content = params.get("content").cloned().unwrap_or(Value::Null);
                let message = json!({"role": "user", "content": content, "timestamp": pi_agent_core::now_ms()});
                let message: AgentMessage = serde_json::from_value(message).map_err(RpcError::invalid_params)?;
                let options = SendOptions {
                    trigger_turn: true,
                    deliver_as: params
                        .pointer("/options/deliverAs")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                };
                deliver(&app, message, options);
                Ok(Value::Null)
            }
            "pi.appendEntry" => {
                let custom_type = text("customType").unwrap_or_default();
                let data = params.get("data").cloned().filter(|d| !d.is_null());
                app.with_store(|store| store.append_custom(&custom_type, data))
                    .map_err(failed)?;
                Ok(Value::Null)
            }
            "pi.setSessionName" => {
                app.set_session_name(&text("name").unwrap_or_default());
                Ok(Value::Null)
            }
            "pi.setLabel" => {
                let target = text("entryId").unwrap_or_default();
                let label = text("label");
                app.with_store(|store| store.append_label(&target, label.as_deref()))
                    .map_err(failed)?;
                Ok(Value::Null)
            }
            "pi.setActiveTools" => {
                let names: Vec<String> = params
                    .get("names")
                    .and_then(Value::as_array)
                    .map(|names| names.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                    .unwrap_or_default();
                app.session().set_active_tools(names).map_err(failed)?;
                Ok(Value::Null)
            }
            "pi.setModel" => {
                let (provider, id) = (text("provider").unwrap_or_default(), text("id").unwrap_or_default());
                let Some(model) = app.registry().find(&provider, &id).cloned() else {
                    return Ok(Value::Bool(false));
                };
                if !app.registry().has_auth(&model) {
                    return Ok(Value::Bool(false));
                }
                app.set_model(model);
                Ok(Value::Bool(true))
            }
            "pi.setThinkingLevel" => {
                let level = text("level").unwrap_or_default();
                let level = parse_thinking_level(&level)
                    .ok_or_else(|| RpcError::invalid_params(format!("unknown thinking level \"{level}\"")))?;
                app.set_thinking_level(level);
                Ok(Value::Null)
            }
            // After loading (the host keeps earlier ones in the registration, which the program
            // applies once every extension has loaded): at once, as in pi.
            "pi.registerProvider" => {
                let name = text("name").unwrap_or_default();
                let config = params.get("config").cloned().unwrap_or_else(|| json!({}));
                app.register_provider(&name, &config).map_err(failed)?;
                Ok(Value::Null)
            }
            "pi.unregisterProvider" => {
                app.unregister_provider(&text("name").unwrap_or_default());
                Ok(Value::Null)
            }
            "ctx.compact" => {
                let instructions = text("customInstructions");
                app.compact(instructions.as_deref()).await.map_err(failed)?;
                Ok(Value::Null)
            }
            "ctx.waitForIdle" => {
                app.session().agent().wait_for_idle().await;
                Ok(Value::Null)
            }
            "ctx.newSession" => {
                let done = unless_cancelled(app.new_session(text("parentSession")).await).map_err(failed)?;
                Ok(json!({"cancelled": done.is_none()}))
            }
            "ctx.fork" => {
                let done = unless_cancelled(app.fork(&text("entryId").unwrap_or_default()).await).map_err(failed)?;
                Ok(json!({"cancelled": done.is_none()}))
            }
            "ctx.navigateTree" => {
                let options = crate::app::NavigateOptions {
                    summarize: params.get("summarize").and_then(Value::as_bool).unwrap_or(false),
                    custom_instructions: text("customInstructions"),
                    replace_instructions: params
                        .get("replaceInstructions")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                    label: text("label"),
                };
                let outcome = app
                    .navigate_tree(&text("targetId").unwrap_or_default(), options)
                    .await
                    .map_err(failed)?;
                Ok(json!({"cancelled": outcome.cancelled}))
            }
            "ctx.switchSession" => {
                let path = text("sessionPath").unwrap_or_default();
                let done = unless_cancelled(app.switch_session(std::path::Path::new(&path)).await).map_err(failed)?;
                Ok(json!({"cancelled": done.is_none()}))
            }
            _ => Err(RpcError::new(METHOD_NOT_FOUND, format!("Method not found: {method}"))),
        }
    }
}

/// Puts `message` into the conversation as `options` say: steered into the running turn, queued
/// as a follow-up, or added now — starting a turn when asked to and pi is idle.
fn deliver(app: &crate::App, message: AgentMessage, options: SendOptions) {
    let session = app.session();
    let streaming = session.agent().is_streaming();
    match options.deliver_as.as_deref() {
        Some("steer") if streaming => session.steer(message),
        Some("followUp") if streaming => session.follow_up(message),
        _ if streaming => session.follow_up(message),
        // Idle: a turn goes the way a prompt does (pi's `prompt` with source "extension"): the
        // `input` event and expansion for a user message, one prompt at a time, the compaction
        // check after the run.
        _ if options.trigger_turn => {
            let app = app.clone();
            tokio::spawn(async move {
                let outcome = match &message {
                    AgentMessage::User(_) => app
                        .prompt_from(message, crate::extensions::events::InputSource::Extension)
                        .await
                        .map(drop),
                    _ => app.prompt(message).await,
                };
                if let Err(error) = outcome {
                    tracing::warn!(%error, "the turn an extension started failed");
                }
            });
        }
        _ => app.add_message(message),
    }
}
