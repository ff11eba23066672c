//! The host of one tool location: its current process (started again, lazily, after a failure),
//! `initialize`, session events (one `session` request per event for all the tools of the
//! process, replayed to a restarted process) and `shutdown`.
//!
//! The same host runs extension processes (protocol version 2, `crate::extensions`): they come
//! with their own [`Protocol`] — the handlers of their requests, the `initialize` params, what an
//! answer must hold, and more `context` for `execute`.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, OnceLock};

use pi_agent_core::lock;
use serde_json::{Value, json};

use super::connection::{Abandon, CallError, Connection, Handler};
use super::context::{SentContext, session_context};
use super::error::ProcessError;
use super::handlers;
use super::protocol::{Failure, PROTOCOL_VERSION, ToolDefinition, parse_definitions};
use super::spec::{INITIALIZE_TIMEOUT, ProcessSpec, SHUTDOWN_GRACE};
use crate::custom_tools::{SessionReason, ToolApi, ToolSessionEvent};
use crate::ui::NotifyKind;

/// The last session event and which tools of the process have been given it.
type Delivery = (ToolSessionEvent, BTreeSet<usize>);

/// What `context` of an `execute` holds beyond version 1's (protocol version 2's `Context`).
pub(crate) type ExtraContext = Arc<dyn Fn() -> serde_json::Map<String, Value> + Send + Sync>;

/// The protocol a host speaks with its process: version 1 (process tools, [`Protocol::tools`])
/// or an extension's version 2.
#[derive(Clone)]
pub(crate) struct Protocol {
    /// `initialize.protocolVersion`.
    pub(crate) version: u32,
    /// More `initialize` params (version 2: `agentDir`).
    pub(crate) initialize: serde_json::Map<String, Value>,
    /// Checks the `initialize` answer; its error is the `why` of the load error.
    pub(crate) check: fn(&Value) -> Result<(), String>,
    /// pi's answers to the process's requests and notifications.
    pub(crate) handler: Arc<dyn Handler>,
    /// Added to the `context` of every `execute`.
    pub(crate) extra_context: Option<ExtraContext>,
}

impl Protocol {
    /// Version 1: a process tool (at least one valid tool, pi's handlers).
    pub(crate) fn tools() -> Self {
        Protocol {
            version: PROTOCOL_VERSION,
            initialize: serde_json::Map::new(),
            check: |answer| parse_definitions(answer).map(drop),
            handler: Arc::new(handlers::PiHandlers),
            extra_context: None,
        }
    }
}

/// Shared by all the tools one process defines.
pub(crate) struct Host {
    spec: ProcessSpec,
    api: ToolApi,
    protocol: Protocol,
    /// The first tool's name (an extension's path): names the process in messages that belong
    /// to no call.
    name: OnceLock<String>,
    current: tokio::sync::Mutex<Option<Arc<Connection>>>,
    /// The last event other than `shutdown`, sent again to a restarted process.
    replay: Mutex<Option<ToolSessionEvent>>,
    /// Notifications a restarted process gets again after `initialize` (an extension's `flags`),
    /// the last of each method.
    remembered: Mutex<Vec<(String, Value)>>,
    delivered: Mutex<Option<Delivery>>,
    /// Keeps session events (and `shutdown`) in order.
    session_order: tokio::sync::Mutex<()>,
}

impl Host {
    /// Starts the process and initializes it; the host and the tools the process defines.
    pub(crate) async fn start(
        spec: ProcessSpec,
        api: ToolApi,
    ) -> Result<(Arc<Host>, Vec<ToolDefinition>), ProcessError> {
        let (host, answer) = Host::start_with(spec, api, Protocol::tools()).await?;
        let tools = parse_definitions(&answer).map_err(|why| ProcessError::InvalidAnswer {
            label: host.spec.label.clone(),
            why,
        })?;
        let name = tools
            .first()
            .map_or_else(|| host.spec.label.clone(), |tool| tool.name.clone());
        if let Some(connection) = host.current.lock().await.as_ref() {
            connection.set_name(&name);
        }
        let _ = host.name.set(name);
        Ok((host, tools))
    }

    /// Starts the process and initializes it with `protocol`; the host and the `initialize`
    /// answer (which `protocol.check` accepted).
    pub(crate) async fn start_with(
        spec: ProcessSpec,
        api: ToolApi,
        protocol: Protocol,
    ) -> Result<(Arc<Host>, Value), ProcessError> {
        let connection = spawn(&spec, &api, &protocol)?;
        let answer = initialize(&connection, &spec, &api, &protocol).await?;
        tracing::info!(parent: connection.span(), version = protocol.version, "tool process initialized");
        let host = Host {
            spec,
            api,
            protocol,
            name: OnceLock::new(),
            current: tokio::sync::Mutex::new(Some(connection)),
            replay: Mutex::new(None),
            remembered: Mutex::new(Vec::new()),
            delivered: Mutex::new(None),
            session_order: tokio::sync::Mutex::new(()),
        };
        Ok((Arc::new(host), answer))
    }

    /// Names the process in messages that belong to no call (the first tool of a process tool;
    /// an extension's path); its label until then.
    pub(crate) fn set_name(&self, name: &str) {
        let _ = self.name.set(name.to_owned());
    }

    fn name(&self) -> &str {
        self.name.get().map_or(&self.spec.label, String::as_str)
    }

    /// More `context` for an `execute` (protocol version 2), if any.
    pub(crate) fn extra_context(&self) -> Option<serde_json::Map<String, Value>> {
        self.protocol.extra_context.as_ref().map(|extra| extra())
    }

    /// The live connection, if the process runs now (no restart).
    pub(crate) async fn live(&self) -> Option<Arc<Connection>> {
        self.current.lock().await.clone().filter(|c| c.is_alive())
    }

    /// The session's working directory, which the paths of calls are relative to.
    pub(crate) fn cwd(&self) -> &std::path::Path {
        self.api.cwd()
    }

    /// The per-call time limit.
    pub(crate) fn timeout(&self) -> std::time::Duration {
        self.spec.timeout
    }

    /// The live connection; after a failure, a new process, initialized and given the last
    /// session event again.
    pub(crate) async fn connection(&self) -> Result<Arc<Connection>, ProcessError> {
        let mut current = self.current.lock().await;
        if let Some(connection) = current.as_ref().filter(|c| c.is_alive()) {
            return Ok(connection.clone());
        }
        *current = None;
        tracing::info!(tool = %self.name(), "restarting the tool process");
        let connection = spawn(&self.spec, &self.api, &self.protocol)?;
        initialize(&connection, &self.spec, &self.api, &self.protocol).await?;
        connection.set_name(self.name());
        let remembered = lock(&self.remembered).clone();
        for (method, params) in &remembered {
            connection.notify(method, params);
        }
        let replay = lock(&self.replay).clone();
        if let Some(event) = replay {
            self.send_session(&connection, &event).await;
        }
        *current = Some(connection.clone());
        Ok(connection)
    }

    /// Sends the notification `method` now (when the process runs) and again to every process
    /// restarted later, after its `initialize`: an extension's `flags`, which a restarted process
    /// would otherwise not have.
    pub(crate) async fn notify_remembered(&self, method: &str, params: Value) {
        {
            let mut remembered = lock(&self.remembered);
            remembered.retain(|(known, _)| known != method);
            remembered.push((method.to_owned(), params.clone()));
        }
        if let Some(connection) = self.live().await {
            connection.notify(method, &params);
        }
    }

    /// `on_session` of tool `index` of this process: the first tool given an event sends it, the
    /// others (given the same event) do not.
    pub(crate) async fn on_session(&self, index: usize, event: &ToolSessionEvent) {
        let _order = self.session_order.lock().await;
        if !self.first_delivery(index, event) {
            return;
        }
        if event.reason == SessionReason::Shutdown {
            self.shutdown().await;
            return;
        }
        *lock(&self.replay) = Some(event.clone());
        // A process that is down gets the event when it is restarted.
        let live = self.current.lock().await.clone().filter(|c| c.is_alive());
        if let Some(connection) = live {
            self.send_session(&connection, event).await;
        }
    }

    /// True when `event` has not been sent yet: a new event, or the same one given again to a
    /// tool that already had it (the session emitted it twice).
    fn first_delivery(&self, index: usize, event: &ToolSessionEvent) -> bool {
        let mut delivered = lock(&self.delivered);
        if let Some((last, tools)) = delivered.as_mut()
            && same_event(last, event)
            && tools.insert(index)
        {
            return false;
        }
        *delivered = Some((event.clone(), BTreeSet::from([index])));
        true
    }

    async fn send_session(&self, connection: &Connection, event: &ToolSessionEvent) {
        let mut params = match serde_json::to_value(event) {
            Ok(params) => params,
            Err(error) => return self.warn(&format!("cannot send the session event: {error}")),
        };
        if let Value::Object(fields) = &mut params {
            fields.insert("hasUI".into(), Value::Bool(self.api.has_ui()));
        }
        let view = self.api.session_view();
        let build = |sent: &mut SentContext| {
            if let Some(view) = &view {
                params["context"] = session_context(&**view, sent, event);
            }
            params
        };
        match connection
            .call_with_context_within("session", build, Abandon::Forget, self.spec.timeout, self.name())
            .await
        {
            Ok(_) => {}
            Err(CallError::Rpc(error)) => self.warn(&format!("session event failed: {}", error.message)),
            Err(CallError::Failed(failure)) => self.warn(&failure.message(self.name())),
        }
    }

    fn warn(&self, message: &str) {
        let text = format!("Custom tool {}: {message}", self.spec.label);
        self.api.ui().notify(&text, NotifyKind::Warning);
    }

    /// `shutdown`, then stdin closed; killed when it does not exit within [`SHUTDOWN_GRACE`].
    pub(crate) async fn shutdown(&self) {
        let Some(connection) = self.current.lock().await.take() else {
            return;
        };
        if !connection.is_alive() {
            return;
        }
        tracing::debug!(parent: connection.span(), "shutting the tool process down");
        connection.begin_stop();
        let _ = tokio::time::timeout(SHUTDOWN_GRACE, connection.call("shutdown", &json!({}))).await;
        connection.close_stdin();
        if tokio::time::timeout(SHUTDOWN_GRACE, connection.closed().cancelled())
            .await
            .is_err()
        {
            connection.terminate(Failure::Stopped);
            let _ = tokio::time::timeout(SHUTDOWN_GRACE, connection.closed().cancelled()).await;
        }
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        if let Some(connection) = self.current.get_mut().take() {
            connection.terminate(Failure::Stopped);
        }
    }
}

fn same_event(a: &ToolSessionEvent, b: &ToolSessionEvent) -> bool {
    // `a` keeps its entries alive, so no other event can have them at the same address.
    Arc::ptr_eq(&a.entries, &b.entries)
        && a.reason == b.reason
        && a.session_file == b.session_file
        && a.previous_session_file == b.previous_session_file
}

/// Starts the process of `spec`, served by the protocol's handlers.
fn spawn(spec: &ProcessSpec, api: &ToolApi, protocol: &Protocol) -> Result<Arc<Connection>, ProcessError> {
    Connection::spawn(spec, api, protocol.handler.clone()).map_err(|source| ProcessError::Spawn {
        label: spec.label.clone(),
        source,
    })
}

/// `initialize`: its answer, checked by the protocol. On failure the process is killed.
async fn initialize(
    connection: &Connection,
    spec: &ProcessSpec,
    api: &ToolApi,
    protocol: &Protocol,
) -> Result<Value, ProcessError> {
    let mut params = json!({
        "protocolVersion": protocol.version,
        "cwd": api.cwd(),
        "hasUI": api.has_ui(),
        "piVersion": env!("CARGO_PKG_VERSION"),
    });
    if let Value::Object(fields) = &mut params {
        fields.extend(protocol.initialize.clone());
    }
    let label = &spec.label;
    let outcome = connection
        .call_within("initialize", &params, INITIALIZE_TIMEOUT, label)
        .await;
    let label = label.clone();
    let answer = outcome.map_err(|error| match error {
        CallError::Rpc(error) => ProcessError::InitializeRefused {
            label,
            code: error.code,
            message: error.message,
        },
        CallError::Failed(Failure::TimedOut { .. }) => ProcessError::InitializeTimedOut {
            label,
            after: INITIALIZE_TIMEOUT,
        },
        CallError::Failed(Failure::Exited { status, stderr }) => {
            ProcessError::ExitedBeforeInitialize { label, status, stderr }
        }
        CallError::Failed(Failure::InvalidJson { start }) => ProcessError::InvalidJson { label, start },
        CallError::Failed(Failure::LineTooLong) => ProcessError::LineTooLong { label },
        CallError::Failed(Failure::Stopped) => ProcessError::Stopped { label },
    });
    let checked = answer.and_then(|answer| {
        (protocol.check)(&answer)
            .map(|()| answer)
            .map_err(|why| ProcessError::InvalidAnswer {
                label: spec.label.clone(),
                why,
            })
    });
    if let Err(error) = &checked {
        tracing::warn!(parent: connection.span(), %error, "tool process failed to initialize");
        connection.terminate(Failure::Stopped);
    }
    checked
}
