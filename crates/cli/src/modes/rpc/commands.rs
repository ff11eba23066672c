//! The RPC commands, one handler each.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use pi_agent_core::{
    AgentMessage, ContentBlock, ImageContent, Model, QueueMode, ThinkingLevel, ToolUpdateSink, UserContent,
    UserMessage, now_ms,
};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::state::Rpc;
use pi_coding_agent::config::{parse_thinking_level, thinking_level_name};
use pi_coding_agent::extensions::events::{InputSource, UserBashResult};
use pi_coding_agent::{ModelSelectSource, unless_cancelled};
use pi_session_store::EntryKind;

type Reply = Result<Option<Value>, String>;

fn text_field(command: &Map<String, Value>, name: &str) -> Result<String, String> {
    command
        .get(name)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("Missing \"{name}\""))
}

fn queue_mode(text: &str) -> Result<QueueMode, String> {
    text.parse().map_err(|_| format!("Unknown mode: {text}"))
}

/// A user message from `message` and optional `images` (`[{type:"image", data, mimeType}]`).
fn user_message(command: &Map<String, Value>) -> Result<AgentMessage, String> {
    let text = text_field(command, "message")?;
    let images: Vec<ContentBlock> = match command.get("images") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                serde_json::from_value::<ImageContent>(item.clone())
                    .map(ContentBlock::Image)
                    .map_err(|e| format!("Invalid image: {e}"))
            })
            .collect::<Result<_, _>>()?,
        _ => Vec::new(),
    };
    // One text block, then the images: pi's `[{type:"text",text}, …]`.
    let mut blocks = vec![ContentBlock::text(text)];
    blocks.extend(images);
    let content = UserContent::Blocks(blocks);
    Ok(AgentMessage::User(UserMessage {
        content,
        timestamp: now_ms(),
    }))
}

fn model_json(model: &Model) -> Value {
    serde_json::to_value(model).unwrap_or(Value::Null)
}

/// Runs one command and writes its response.
pub(crate) async fn dispatch(rpc: &Arc<Rpc>, command: Value) {
    let Value::Object(command) = command else {
        return;
    };
    let id = command.get("id").cloned();
    let kind = command.get("type").and_then(Value::as_str).unwrap_or("").to_owned();
    let reply = match kind.as_str() {
        "prompt" => {
            prompt(rpc, &command, id.as_ref()).await;
            return;
        }
        "steer" | "follow_up" => queue(rpc, &kind, &command).await,
        "abort" => {
            rpc.app.session().abort().await;
            Ok(None)
        }
        "new_session" => new_session(rpc, &command).await,
        "get_state" => Ok(Some(state(rpc))),
        "get_messages" => Ok(Some(json!({"messages": rpc.app.session().agent().messages()}))),
        "set_model" => set_model(rpc, &command),
        "cycle_model" => Ok(Some(cycle_model(rpc))),
        "get_available_models" => {
            let models: Vec<Value> = available_models(rpc).iter().map(model_json).collect();
            Ok(Some(json!({"models": models})))
        }
        "set_thinking_level" => set_thinking_level(rpc, &command),
        "cycle_thinking_level" => Ok(Some(cycle_thinking_level(rpc))),
        "get_available_thinking_levels" => {
            let levels: Vec<&str> = available_levels(rpc).into_iter().map(thinking_level_name).collect();
            Ok(Some(json!({"levels": levels})))
        }
        "set_steering_mode" | "set_follow_up_mode" => set_queue_mode(rpc, &kind, &command),
        "bash" => {
            bash(rpc, &command, id.clone());
            return;
        }
        "abort_bash" => {
            for (_, cancel) in rpc.bash.lock().unwrap_or_else(|p| p.into_inner()).iter() {
                cancel.cancel();
            }
            Ok(None)
        }
        "set_auto_retry" => set_auto_retry(rpc, &command),
        "abort_retry" => {
            rpc.app.session().abort_retry();
            Ok(None)
        }
        "get_session_stats" => Ok(Some(stats(rpc))),
        "switch_session" => switch_session(rpc, &command).await,
        "fork" => fork(rpc, &command).await,
        "clone" => clone(rpc).await,
        "get_fork_messages" => Ok(Some(fork_messages(rpc))),
        "get_entries" => {
            let entries: Vec<Value> = rpc.app.with_store(|store| {
                store
                    .entries()
                    .iter()
                    .map(|e| serde_json::to_value(e).unwrap_or(Value::Null))
                    .collect()
            });
            Ok(Some(json!({"entries": entries})))
        }
        "get_tree" => Ok(Some(rpc.app.tree_json())),
        "get_last_assistant_text" => Ok(Some(last_assistant_text(rpc))),
        "set_session_name" => set_session_name(rpc, &command),
        "export_html" => export_html(rpc, &command).await,
        "get_commands" => Ok(Some(commands(rpc))),
        "compact" => {
            // In the background, so that `abort_compaction` (or `abort`) can reach it.
            let (task_rpc, task_id) = (rpc.clone(), id.clone());
            let instructions = command
                .get("customInstructions")
                .and_then(Value::as_str)
                .map(str::to_owned);
            let run = tokio::spawn(async move {
                let reply = compact(&task_rpc, instructions.as_deref()).await;
                task_rpc.respond("compact", task_id.as_ref(), reply);
            });
            let mut runs = rpc.runs.lock().unwrap_or_else(|p| p.into_inner());
            runs.retain(|handle| !handle.is_finished());
            runs.push(run);
            return;
        }
        "set_auto_compaction" => match command.get("enabled").and_then(Value::as_bool) {
            Some(enabled) => {
                rpc.app.set_auto_compaction(enabled);
                Ok(None)
            }
            None => Err("Missing \"enabled\"".to_owned()),
        },
        "abort_compaction" => {
            rpc.app.abort_compaction();
            Ok(None)
        }
        "" => Err("Missing \"type\"".to_owned()),
        other => Err(format!("Unknown command: {other}")),
    };
    let name = if kind.is_empty() { "parse" } else { kind.as_str() };
    rpc.respond(name, id.as_ref(), reply);
}

/// `prompt`: queued (steer / follow-up) while a run is active, else answered at once and run in
/// the background, so its events follow the response.
async fn prompt(rpc: &Arc<Rpc>, command: &Map<String, Value>, id: Option<&Value>) {
    let message = match user_message(command) {
        Ok(message) => message,
        Err(error) => return rpc.respond("prompt", id, Err(error)),
    };
    // pi checks extension commands first: `/name args` runs the command (its errors are an
    // `extension_error` line), then the prompt is answered.
    if let Some(text) = command.get("message").and_then(Value::as_str)
        && rpc.extensions.is_command(text)
    {
        let (runner, text, id) = (rpc.clone(), text.to_owned(), id.cloned());
        let run = tokio::spawn(async move {
            if let Some(Err(error)) = runner.extensions.run_command(&text).await {
                runner.writer.line(&super::ui::extension_error_line(&error));
            }
            runner.respond("prompt", id.as_ref(), Ok(None));
        });
        rpc.runs.lock().unwrap_or_else(|p| p.into_inner()).push(run);
        return;
    }
    let session = rpc.app.session();
    if rpc.running.load(Ordering::SeqCst) {
        let reply = match command.get("streamingBehavior").and_then(Value::as_str) {
            Some("steer") => {
                session.steer(session.expand_message(message).await);
                Ok(None)
            }
            Some("followUp") => {
                session.follow_up(session.expand_message(message).await);
                Ok(None)
            }
            _ => Err(
                "Agent is already processing. Specify streamingBehavior (\"steer\" or \"followUp\") to queue the message."
                    .to_owned(),
            ),
        };
        return rpc.respond("prompt", id, reply);
    }
    rpc.running.store(true, Ordering::SeqCst);
    rpc.respond("prompt", id, Ok(None));
    let (session, running, writer) = (session.clone(), rpc.running.clone(), rpc.writer.clone());
    let app = rpc.app.clone();
    let run = tokio::spawn(async move {
        // The previous run has sent `agent_end` (that is what cleared `running`) and freed the
        // agent; its other `agent_end` listeners may still be running: they finish first.
        session.agent().wait_for_idle().await;
        // `bash` results that came in during the previous run go before this prompt.
        app.flush_deferred();
        match app.prompt_from(message, InputSource::Rpc).await {
            Ok(true) => {}
            // An extension handled the input: no run, no `agent_end` to clear the flag.
            Ok(false) => running.store(false, Ordering::SeqCst),
            Err(error) => {
                // No run started, so no `agent_end` will clear the flag.
                running.store(false, Ordering::SeqCst);
                writer.line(&json!({"type": "error", "error": error.to_string()}));
            }
        }
    });
    let mut runs = rpc.runs.lock().unwrap_or_else(|p| p.into_inner());
    runs.retain(|handle| !handle.is_finished());
    runs.push(run);
}

/// `get_commands`: the extensions' commands, the prompt templates, then the skills as
/// `skill:<name>`, with pi's fields and in pi's order.
fn commands(rpc: &Rpc) -> Value {
    let extensions = rpc.extensions.commands_json();
    let resources = rpc.app.session().resources();
    let templates = resources.prompts.iter().map(
        |t| json!({"name": t.name, "description": t.description, "source": "prompt", "sourceInfo": t.source_info}),
    );
    let skills = resources.skills.iter().map(|s| {
        json!({"name": format!("skill:{}", s.name), "description": s.description, "source": "skill", "sourceInfo": s.source_info})
    });
    json!({"commands": extensions.into_iter().chain(templates).chain(skills).collect::<Vec<_>>()})
}

/// `set_auto_retry {enabled}`: turns the automatic retry on or off and saves it
/// (`retry.enabled`), as pi does.
fn set_auto_retry(rpc: &Rpc, command: &Map<String, Value>) -> Reply {
    let enabled = command
        .get("enabled")
        .and_then(Value::as_bool)
        .ok_or_else(|| "Missing \"enabled\"".to_owned())?;
    rpc.app.set_auto_retry_enabled(enabled);
    Ok(None)
}

/// `{"text": …}`, or `{}` when there is no text (pi leaves the undefined field out).
fn last_assistant_text(rpc: &Rpc) -> Value {
    let mut data = Map::new();
    if let Some(text) = rpc.app.last_assistant_text() {
        data.insert("text".into(), text.into());
    }
    Value::Object(data)
}

/// `set_session_name {name}`: the trimmed name; an empty one is refused, as pi does.
fn set_session_name(rpc: &Rpc, command: &Map<String, Value>) -> Reply {
    let name = text_field(command, "name")?;
    let name = name.trim();
    if name.is_empty() {
        return Err("Session name cannot be empty".to_owned());
    }
    rpc.app.set_session_name(name);
    Ok(None)
}

/// `export_html {outputPath?}`: `{path}` of the written file (pi's default name without one).
async fn export_html(rpc: &Rpc, command: &Map<String, Value>) -> Reply {
    let output = command
        .get("outputPath")
        .and_then(Value::as_str)
        .map(std::path::Path::new);
    let colors = pi_coding_agent::export::ExportColors::default();
    match rpc.app.export_html(output, &colors).await {
        Ok(path) => Ok(Some(json!({"path": path.display().to_string()}))),
        Err(error) => Err(error.to_string()),
    }
}

async fn queue(rpc: &Rpc, kind: &str, command: &Map<String, Value>) -> Reply {
    let message = rpc.app.session().expand_message(user_message(command)?).await;
    if kind == "steer" {
        rpc.app.session().steer(message);
    } else {
        rpc.app.session().follow_up(message);
    }
    Ok(None)
}

/// Fails while a prompt runs; otherwise waits until the last run has finished its clean-up (it
/// has sent `agent_end` already).
async fn not_busy(rpc: &Rpc) -> Result<(), String> {
    if rpc.running.load(Ordering::SeqCst) {
        return Err("Agent is already processing. Wait for completion or abort first.".to_owned());
    }
    rpc.app.session().agent().wait_for_idle().await;
    Ok(())
}

async fn new_session(rpc: &Rpc, command: &Map<String, Value>) -> Reply {
    not_busy(rpc).await?;
    let parent = command.get("parentSession").and_then(Value::as_str).map(str::to_owned);
    let done = unless_cancelled(rpc.app.new_session(parent).await).map_err(|e| e.to_string())?;
    Ok(Some(json!({"cancelled": done.is_none()})))
}

fn state(rpc: &Rpc) -> Value {
    let agent = rpc.app.session().agent();
    let (file, id, name) = rpc.app.with_store(|store| {
        (
            store.file().map(|f| f.display().to_string()),
            store.id().to_owned(),
            store.name().map(str::to_owned),
        )
    });
    let mut state = json!({
        "model": model_json(&agent.model()),
        "thinkingLevel": thinking_level_name(agent.thinking_level()),
        "isStreaming": rpc.running.load(Ordering::SeqCst),
        "isCompacting": rpc.app.is_compacting(),
        "steeringMode": agent.steering_mode().as_str(),
        "followUpMode": agent.follow_up_mode().as_str(),
        "sessionFile": file,
        "sessionId": id,
    });
    // pi leaves `sessionName` out while the session has none.
    if let Some(name) = name {
        state["sessionName"] = name.into();
    }
    state["autoCompactionEnabled"] = rpc.app.auto_compaction_enabled().into();
    state["messageCount"] = agent.messages().len().into();
    state["pendingMessageCount"] = rpc.app.session().pending_message_count().into();
    state
}

fn available_models(rpc: &Rpc) -> Vec<Model> {
    let registry = rpc.app.registry();
    registry.available().into_iter().cloned().collect()
}

fn set_model(rpc: &Rpc, command: &Map<String, Value>) -> Reply {
    let provider = text_field(command, "provider")?;
    let id = text_field(command, "modelId")?;
    let model = rpc
        .app
        .registry()
        .find(&provider, &id)
        .cloned()
        .ok_or_else(|| format!("Model not found: {provider}/{id}"))?;
    rpc.app.set_model(model.clone());
    Ok(Some(model_json(&model)))
}

fn cycle_model(rpc: &Rpc) -> Value {
    // With a scope (`--models`, `enabledModels`) the cycle goes through its callable models, each
    // with the thinking level its pattern fixed (else the session's); otherwise through every
    // available model.
    let registry = rpc.app.registry();
    let scope: Vec<(Model, Option<ThinkingLevel>)> = rpc
        .app
        .scoped_models()
        .into_iter()
        .filter(|s| registry.is_available(&s.model))
        .map(|s| (s.model, s.thinking))
        .collect();
    let is_scoped = !scope.is_empty();
    let models = if is_scoped {
        scope
    } else {
        available_models(rpc).into_iter().map(|m| (m, None)).collect()
    };
    if models.len() <= 1 {
        return Value::Null;
    }
    let current = rpc.app.session().agent().model();
    let index = models
        .iter()
        .position(|(m, _)| m.provider == current.provider && m.id == current.id)
        .unwrap_or(0);
    let (model, thinking) = &models[(index + 1) % models.len()];
    // Without a level of its own the model gets the level carried over as `set_model` does (from
    // a model that cannot reason: the saved default), as pi's cycling does.
    rpc.app.select_model(model.clone(), *thinking, ModelSelectSource::Cycle);
    json!({
        "model": model_json(model),
        "thinkingLevel": thinking_level_name(rpc.app.session().agent().thinking_level()),
        "isScoped": is_scoped,
    })
}

/// The model's levels, in `cycle_thinking_level` order (pi: `off` to `high`, `xhigh` only for
/// models whose `thinkingLevelMap` names it).
fn available_levels(rpc: &Rpc) -> Vec<ThinkingLevel> {
    rpc.app.session().agent().model().thinking_levels()
}

fn set_thinking_level(rpc: &Rpc, command: &Map<String, Value>) -> Reply {
    let text = text_field(command, "level")?;
    let level = parse_thinking_level(&text).ok_or_else(|| format!("Unknown thinking level: {text}"))?;
    rpc.app.set_thinking_level(level);
    Ok(None)
}

fn cycle_thinking_level(rpc: &Rpc) -> Value {
    // pi answers `null` for a model that cannot reason.
    if !rpc.app.session().agent().model().reasoning {
        return Value::Null;
    }
    let levels = available_levels(rpc);
    let current = rpc.app.session().agent().thinking_level();
    let next = levels
        .iter()
        .position(|l| *l == current)
        .map_or(levels[0], |index| levels[(index + 1) % levels.len()]);
    let level = rpc.app.set_thinking_level(next);
    json!({"level": thinking_level_name(level)})
}

fn set_queue_mode(rpc: &Rpc, kind: &str, command: &Map<String, Value>) -> Reply {
    let mode = queue_mode(&text_field(command, "mode")?)?;
    let agent = rpc.app.session().agent();
    if kind == "set_steering_mode" {
        agent.set_steering_mode(mode);
    } else {
        agent.set_follow_up_mode(mode);
    }
    Ok(None)
}

/// `bash {command}`: runs in the background (so `abort_bash` can stop it), streams
/// `bash_execution_update` lines, answers with the result, and records a `bashExecution` message
/// that enters the model's context with the next prompt.
fn bash(rpc: &Arc<Rpc>, command: &Map<String, Value>, id: Option<Value>) {
    let text = match text_field(command, "command") {
        Ok(text) => text,
        Err(error) => return rpc.respond("bash", id.as_ref(), Err(error)),
    };
    let cancel = CancellationToken::new();
    let slot = rpc.bash_ids.fetch_add(1, Ordering::Relaxed);
    rpc.bash
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push((slot, cancel.clone()));
    let task_rpc = rpc.clone();
    let task = tokio::spawn(async move {
        let rpc = task_rpc;
        let session = rpc.app.session();
        let mut env = pi_tools::ToolEnv::new(session.cwd().to_path_buf());
        env.sandbox = session.sandbox().cloned();
        let writer = rpc.writer.clone();
        let update_id = id.clone();
        let updates = ToolUpdateSink::new(move |partial| {
            let output: String = partial.content.iter().filter_map(|b| b.as_text()).collect();
            writer.line(&json!({"type": "bash_execution_update", "id": update_id, "output": output}));
        });
        // An extension's `user_bash` result replaces running the command.
        let result = match rpc.app.emit_user_bash(&text, false).await {
            Some(replaced) => Ok(replaced),
            None => pi_tools::run_command(&env, &text, None, &cancel, updates)
                .await
                .map(|run| UserBashResult {
                    output: run.output,
                    exit_code: run.exit_code,
                    cancelled: run.cancelled,
                    truncated: run.truncation.is_some(),
                    full_output_path: run.full_output_path,
                }),
        };
        rpc.bash
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|(running, _)| *running != slot);
        let reply = result.map_err(|error| error.to_string()).map(|run| {
            // pi's keys, in its order; a command stopped by `abort_bash` has no exit code, and
            // pi leaves the field out then.
            let mut data = Map::new();
            data.insert("output".into(), run.output.into());
            if let Some(code) = run.exit_code {
                data.insert("exitCode".into(), code.into());
            }
            data.insert("cancelled".into(), run.cancelled.into());
            data.insert("truncated".into(), run.truncated.into());
            if let Some(path) = &run.full_output_path {
                data.insert("fullOutputPath".into(), path.display().to_string().into());
            }
            // pi's key order: command, the result's fields, timestamp.
            let mut fields = Map::new();
            fields.insert("command".into(), text.clone().into());
            fields.extend(data.clone());
            fields.insert("timestamp".into(), now_ms().into());
            rpc.app.add_message(AgentMessage::Custom(pi_agent_core::CustomMessage {
                role: "bashExecution".into(),
                fields,
            }));
            Some(Value::Object(data))
        });
        rpc.respond("bash", id.as_ref(), reply);
    });
    rpc.runs.lock().unwrap_or_else(|p| p.into_inner()).push(task);
}

fn stats(rpc: &Rpc) -> Value {
    let stats = rpc.app.stats();
    let (file, id) = rpc
        .app
        .with_store(|store| (store.file().map(|f| f.display().to_string()), store.id().to_owned()));
    let mut data = json!({
        "sessionFile": file,
        "sessionId": id,
        "userMessages": stats.user_messages,
        "assistantMessages": stats.assistant_messages,
        "toolCalls": stats.tool_calls,
        "toolResults": stats.tool_results,
        "totalMessages": stats.total_messages,
        "tokens": {
            "input": stats.input,
            "output": stats.output,
            "cacheRead": stats.cache_read,
            "cacheWrite": stats.cache_write,
            "total": stats.input + stats.output + stats.cache_read + stats.cache_write,
        },
        "cost": js_number(stats.cost),
    });
    // pi leaves `contextUsage` out without a context window.
    if let Some(usage) = rpc.app.context_usage() {
        data["contextUsage"] = usage.to_json();
    }
    data
}

/// `compact {customInstructions?}`: aborts a run, compacts, answers with the result
/// (`{summary, firstKeptEntryId, tokensBefore, details}`) or pi's error text.
async fn compact(rpc: &Rpc, instructions: Option<&str>) -> Reply {
    match rpc.app.compact(instructions).await {
        Ok(result) => Ok(Some(result.to_json())),
        Err(error) => Err(error.to_string()),
    }
}

/// A float as JavaScript's `JSON.stringify` writes it: a whole number without `.0` (pi's `cost`
/// of a free model is `0`).
fn js_number(value: f64) -> Value {
    const MAX_SAFE: f64 = 9_007_199_254_740_991.0;
    if value.fract() == 0.0 && value.abs() <= MAX_SAFE {
        #[allow(clippy::cast_possible_truncation)]
        Value::from(value as i64)
    } else {
        Value::from(value)
    }
}

async fn switch_session(rpc: &Rpc, command: &Map<String, Value>) -> Reply {
    not_busy(rpc).await?;
    let path = PathBuf::from(text_field(command, "sessionPath")?);
    let path = if path.is_relative() {
        rpc.app.session().cwd().join(path)
    } else {
        path
    };
    let Some(warnings) = unless_cancelled(rpc.app.switch_session(&path).await).map_err(|e| e.to_string())? else {
        return Ok(Some(json!({"cancelled": true})));
    };
    let warnings: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    Ok(Some(json!({"cancelled": false, "warnings": warnings})))
}

async fn fork(rpc: &Rpc, command: &Map<String, Value>) -> Reply {
    not_busy(rpc).await?;
    let entry = text_field(command, "entryId")?;
    let Some(text) = unless_cancelled(rpc.app.fork(&entry).await).map_err(|e| e.to_string())? else {
        return Ok(Some(json!({"cancelled": true})));
    };
    Ok(Some(json!({"text": text, "cancelled": false})))
}

/// `clone`: the current branch into a new session (`{"cancelled": false}`, as pi answers; no
/// event).
async fn clone(rpc: &Rpc) -> Reply {
    not_busy(rpc).await?;
    let done = unless_cancelled(rpc.app.clone_session().await).map_err(|e| e.to_string())?;
    Ok(Some(json!({"cancelled": done.is_none()})))
}

fn fork_messages(rpc: &Rpc) -> Value {
    let messages: Vec<Value> = rpc.app.with_store(|store| {
        store
            .path_to_leaf()
            .iter()
            .filter_map(|entry| match &entry.kind {
                EntryKind::Message(AgentMessage::User(user)) => {
                    Some(json!({"entryId": entry.id, "text": user.content.text()}))
                }
                _ => None,
            })
            .collect()
    });
    json!({"messages": messages})
}

#[cfg(test)]
mod tests {
    use super::js_number;

    #[test]
    fn whole_costs_are_written_as_javascript_does() {
        assert_eq!(js_number(0.0).to_string(), "0");
        assert_eq!(js_number(3.0).to_string(), "3");
        assert_eq!(js_number(0.45).to_string(), "0.45");
    }
}
