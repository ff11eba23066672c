//! What pi does for the requests and notifications of a tool process: `update`, `ui.*`, `exec`,
//! `pendingAction.push`, `mutationQueue.lock` / `unlock`, `modelRegistry.getApiKey`. Anything else gets
//! `-32601` (requests) or is ignored (notifications).

use std::sync::Arc;
use std::time::Duration;

use pi_agent_core::ToolError;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::connection::{CallError, Connection, Handler};
use super::protocol::{METHOD_NOT_FOUND, RpcError, SERVER_ERROR, parse_result};
use crate::custom_tools::{DEFAULT_SOURCE_TOOL, ExecOptions};
use crate::resolve::{PendingAction, PendingError};
use crate::ui::NotifyKind;

/// The [`Handler`] of pi for process tools: [`notification`] and [`request`].
pub(crate) struct PiHandlers;

#[async_trait::async_trait]
impl Handler for PiHandlers {
    fn notification(&self, connection: &Arc<Connection>, method: &str, params: Value) {
        notification(connection, method, params);
    }

    async fn request(&self, connection: &Arc<Connection>, method: &str, params: Value) -> Result<Value, RpcError> {
        request(connection, method, params).await
    }
}

fn params<T: DeserializeOwned>(params: Value) -> Result<T, RpcError> {
    serde_json::from_value(params).map_err(RpcError::invalid_params)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UpdateParams {
    call_id: String,
    partial: Value,
}

#[derive(Deserialize)]
struct NotifyParams {
    message: String,
    #[serde(rename = "type", default)]
    kind: Option<String>,
}

/// A notification of the process.
pub(crate) fn notification(connection: &Arc<Connection>, method: &str, value: Value) {
    match method {
        "update" => {
            if let Ok(update) = params::<UpdateParams>(value)
                && let Ok(partial) = parse_result(update.partial)
            {
                connection.update(&update.call_id, partial);
            }
        }
        "ui.notify" => {
            if let Ok(notify) = params::<NotifyParams>(value) {
                show(connection, &notify);
            }
        }
        "mutationQueue.unlock" => {
            if let Ok(unlock) = params::<UnlockParams>(value) {
                connection.release_file_lock(unlock.lock_id);
            }
        }
        _ => {}
    }
}

fn show(connection: &Connection, notify: &NotifyParams) {
    let kind = NotifyKind::parse(notify.kind.as_deref().unwrap_or("info"));
    connection.api().ui().notify(&notify.message, kind);
}

#[derive(Deserialize)]
struct SelectParams {
    title: String,
    options: Vec<String>,
}

#[derive(Deserialize)]
struct ConfirmParams {
    title: String,
    #[serde(default)]
    message: String,
}

#[derive(Deserialize)]
struct InputParams {
    title: String,
    #[serde(default)]
    placeholder: Option<String>,
}

/// A request of the process; the answer goes back with the request's id.
pub(crate) async fn request(connection: &Arc<Connection>, method: &str, value: Value) -> Result<Value, RpcError> {
    match method {
        "ui.select" => {
            let select: SelectParams = params(value)?;
            let ui = connection.api().ui();
            Ok(ui
                .select(&select.title, &select.options)
                .await
                .map_or(Value::Null, Value::from))
        }
        "ui.confirm" => {
            let confirm: ConfirmParams = params(value)?;
            let ui = connection.api().ui();
            Ok(Value::Bool(ui.confirm(&confirm.title, &confirm.message).await))
        }
        "ui.input" => {
            let input: InputParams = params(value)?;
            let ui = connection.api().ui();
            let text = ui.input(&input.title, input.placeholder.as_deref()).await;
            Ok(text.map_or(Value::Null, Value::from))
        }
        "ui.notify" => {
            show(connection, &params(value)?);
            Ok(Value::Null)
        }
        "exec" => exec(connection, params(value)?).await,
        "pendingAction.push" => push_pending_action(connection, params(value)?),
        "mutationQueue.lock" => lock_file(connection, params(value)?).await,
        "modelRegistry.getApiKey" => api_key(connection, params(value)?).await,
        _ => Err(RpcError::new(METHOD_NOT_FOUND, format!("Method not found: {method}"))),
    }
}

#[derive(Deserialize)]
struct ApiKeyParams {
    provider: String,
}

/// `modelRegistry.getApiKey`: the key pi would use for the provider (pi's
/// `ModelRegistry.getApiKey(model)`, which pi 0.31 to 0.34 gave custom tools), or `null`. The key
/// is remembered by the connection, which redacts it from the process's stderr line and error
/// answers; it is never logged.
async fn api_key(connection: &Connection, params: ApiKeyParams) -> Result<Value, RpcError> {
    let Some(registry) = connection.api().session_view().and_then(|view| view.registry()) else {
        return Ok(Value::Null);
    };
    // A `!command` key runs a program: off the runtime's threads.
    let key = tokio::task::spawn_blocking(move || registry.api_key_for(&params.provider))
        .await
        .map_err(|error| RpcError::new(SERVER_ERROR, error.to_string()))?;
    Ok(match key {
        Some(key) => {
            connection.add_secret(&key);
            Value::from(key)
        }
        None => Value::Null,
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LockParams {
    path: String,
    #[serde(default)]
    call_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UnlockParams {
    lock_id: u64,
}

/// `mutationQueue.lock {path, callId?}` → `{lockId}` once the file's turn has come (pi's
/// `withFileMutationQueue`): `path` resolves as a built-in tool's path does; a file the call
/// `callId` holds already (its tool declared it in `mutatedPaths`) is not waited for. The place
/// is kept until `mutationQueue.unlock {lockId}` or the end of the process.
async fn lock_file(connection: &Arc<Connection>, lock: LockParams) -> Result<Value, RpcError> {
    let path = pi_tools::path::resolve_path(connection.api().cwd(), &lock.path);
    let held = lock
        .call_id
        .as_deref()
        .map(|call_id| connection.call_held(call_id))
        .unwrap_or_default();
    let guard = held.scope(pi_agent_core::lock_files(vec![path])).await;
    Ok(serde_json::json!({"lockId": connection.keep_file_lock(guard)}))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecParams {
    command: String,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    timeout: Option<u64>,
    #[serde(default)]
    call_id: Option<String>,
}

/// `exec`: runs the command in pi's cwd; killed when its call is aborted or the process fails.
async fn exec(connection: &Connection, exec: ExecParams) -> Result<Value, RpcError> {
    let cancel = connection.closed().child_token();
    if let Some(call) = exec.call_id.as_deref().and_then(|id| connection.call_cancel(id)) {
        let linked = cancel.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = call.cancelled() => linked.cancel(),
                () = linked.cancelled() => {}
            }
        });
    }
    let options = ExecOptions {
        cancel: Some(cancel.clone()),
        timeout: exec.timeout.map(Duration::from_millis),
    };
    let result = connection.api().exec(&exec.command, &exec.args, options).await;
    // Ends the task linking the call's token.
    cancel.cancel();
    match result {
        Ok(result) => serde_json::to_value(result).map_err(|e| RpcError::new(SERVER_ERROR, e.to_string())),
        Err(error) => Err(RpcError::new(
            SERVER_ERROR,
            format!("Cannot run {}: {error}", exec.command),
        )),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PushParams {
    action_id: Value,
    label: String,
    #[serde(default)]
    source_tool_name: Option<String>,
    #[serde(default)]
    details: Option<Value>,
    #[serde(default)]
    has_reject: bool,
    #[serde(default)]
    call_id: Option<String>,
}

/// `pendingAction.push`: stages the action on the session's store; `resolve` later sends
/// `pendingAction.apply` / `pendingAction.reject` to this very process.
fn push_pending_action(connection: &Arc<Connection>, push: PushParams) -> Result<Value, RpcError> {
    if push.action_id.is_null() {
        return Err(RpcError::invalid_params("\"actionId\" must not be null"));
    }
    let tool = push
        .call_id
        .as_deref()
        .and_then(|id| connection.call_tool(id))
        .unwrap_or_else(|| connection.name().to_owned());
    let target = ActionTarget {
        connection: connection.clone(),
        action_id: push.action_id,
        tool,
    };
    let source = push.source_tool_name.unwrap_or_else(|| DEFAULT_SOURCE_TOOL.to_owned());
    let apply_target = target.clone();
    let mut action = PendingAction::new(push.label, source, move |reason, extra| {
        let target = apply_target.clone();
        async move { target.apply(reason, extra).await }
    });
    if push.has_reject {
        action = action.with_reject(move |reason, extra| {
            let target = target.clone();
            async move { target.reject(reason, extra).await }
        });
    }
    if let Some(details) = push.details.filter(|d| !d.is_null()) {
        action = action.with_details(details);
    }
    connection
        .api()
        .push_pending_action(action)
        .map_err(|error| RpcError::new(SERVER_ERROR, error.to_string()))?;
    Ok(Value::Null)
}

/// The process (the very connection that pushed it) and id of a pending action.
#[derive(Clone)]
struct ActionTarget {
    connection: Arc<Connection>,
    action_id: Value,
    tool: String,
}

impl ActionTarget {
    async fn send(&self, method: &str, reason: String, extra: Option<Value>) -> Result<Value, CallError> {
        let mut params = Map::new();
        params.insert("actionId".into(), self.action_id.clone());
        params.insert("reason".into(), Value::from(reason));
        if let Some(extra) = extra {
            params.insert("extra".into(), extra);
        }
        let connection = &self.connection;
        connection
            .call_within(method, &Value::Object(params), connection.timeout(), &self.tool)
            .await
    }

    /// `pendingAction.apply`: the tool's result, or its error — an error marked `kind:
    /// "exception"` as [`PendingError::Other`] (`Apply failed: <message>`), any other as the tool
    /// error it is; a failed process fails the apply (the action stays pending, so it can still
    /// be discarded).
    async fn apply(&self, reason: String, extra: Option<Value>) -> Result<pi_agent_core::ToolResult, PendingError> {
        match self.send("pendingAction.apply", reason, extra).await {
            Ok(value) => parse_result(value).map_err(|why| {
                PendingError::Tool(ToolError::new(format!(
                    "Tool \"{}\" returned an invalid result: {why}",
                    self.tool
                )))
            }),
            Err(CallError::Rpc(error)) => Err(pending_error(error)),
            Err(CallError::Failed(failure)) => Err(PendingError::Tool(ToolError::new(failure.message(&self.tool)))),
        }
    }

    /// `pendingAction.reject`: `null` → pi's default discard text. When the process is gone the
    /// discard still completes (with the default text): nothing was applied.
    async fn reject(
        &self,
        reason: String,
        extra: Option<Value>,
    ) -> Result<Option<pi_agent_core::ToolResult>, PendingError> {
        match self.send("pendingAction.reject", reason, extra).await {
            Ok(Value::Null) => Ok(None),
            Ok(value) => parse_result(value).map(Some).map_err(|why| {
                PendingError::Tool(ToolError::new(format!(
                    "Tool \"{}\" returned an invalid result: {why}",
                    self.tool
                )))
            }),
            Err(CallError::Rpc(error)) => Err(pending_error(error)),
            Err(CallError::Failed(_)) => Ok(None),
        }
    }
}

/// The error answer of a `pendingAction.*` request as the callback's error: an exception (the
/// tool threw something it did not shape for the model) or the tool error it sent.
fn pending_error(error: RpcError) -> PendingError {
    if error.is_exception() {
        PendingError::Other(error.message)
    } else {
        PendingError::Tool(error.into_tool_error())
    }
}
