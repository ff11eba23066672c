//! pi's requests to an extension process that carry a `Context` (`event`, `command`,
//! `shortcut`), the `EventListener` of one process and event type, and how their failures read.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::context::snapshot;
use super::events::{EventListener, ExtensionError};
use super::hub::Hub;
use crate::custom_tools::process::{Abandon, CallError, Failure, Host, SentContext, execute_context};

/// Sends `method` with `params` plus `context` (the branch delta and the snapshot) to the
/// process of `host`, restarting it when it failed; `what` names the handler in errors
/// (`extension`, `event`).
pub(crate) async fn call(
    hub: &Hub,
    host: &Host,
    method: &str,
    mut params: Map<String, Value>,
    extension: &str,
    event: &str,
) -> Result<Value, ExtensionError> {
    let connection = host.connection().await.map_err(|error| ExtensionError::Process {
        extension: extension.to_owned(),
        message: error.to_string(),
    })?;
    let api = connection.api().clone();
    let view = api.session_view();
    let build = |sent: &mut SentContext| {
        let mut context = match &view {
            Some(view) => match execute_context(&**view, sent) {
                Value::Object(context) => context,
                _ => Map::new(),
            },
            None => Map::new(),
        };
        context.extend(snapshot(hub, api.has_ui()));
        params.insert("context".into(), Value::Object(context));
        Value::Object(params)
    };
    let reply = connection
        .call_with_context_within(method, build, Abandon::Cancel, connection.timeout(), extension)
        .await;
    reply.map_err(|error| match error {
        CallError::Rpc(error) => ExtensionError::Handler {
            // A process hosting several extensions names the one whose handler threw (the Node
            // host: `data.extension`; `data.path` in the protocol's first wording). A command keeps
            // pi's `command:<name>`.
            extension: error
                .data
                .as_ref()
                .filter(|_| event != "command")
                .and_then(|data| data.get("extension").or_else(|| data.get("path")))
                .and_then(Value::as_str)
                .unwrap_or(extension)
                .to_owned(),
            event: event.to_owned(),
            message: error.message,
        },
        CallError::Failed(Failure::TimedOut { .. }) => ExtensionError::Timeout {
            extension: extension.to_owned(),
            event: event.to_owned(),
        },
        CallError::Failed(failure) => ExtensionError::Process {
            extension: extension.to_owned(),
            message: failure.message(extension),
        },
    })
}

/// The handlers of one event type in one process (the process chains its own).
pub(crate) struct ProcessListener {
    pub(crate) hub: Arc<Hub>,
    pub(crate) host: Arc<Host>,
    /// The first extension of the process that handles the event type.
    pub(crate) extension: String,
    pub(crate) event_type: String,
}

#[async_trait]
impl EventListener for ProcessListener {
    fn name(&self) -> &str {
        &self.extension
    }

    async fn handle(&self, event: &Value, cancel: &CancellationToken) -> Result<Option<Value>, ExtensionError> {
        let mut params = Map::new();
        params.insert("event".into(), event.clone());
        let sent = call(
            &self.hub,
            &self.host,
            "event",
            params,
            &self.extension,
            &self.event_type,
        );
        let reply = tokio::select! {
            biased;
            () = cancel.cancelled() => return Ok(None),
            reply = sent => reply?,
        };
        Ok((!reply.is_null()).then_some(reply))
    }
}

/// `{name, args}` of a `command` request.
pub(crate) fn command_params(name: &str, args: &str) -> Map<String, Value> {
    match json!({"name": name, "args": args}) {
        Value::Object(params) => params,
        _ => Map::new(),
    }
}
