//! One MCP server: its process, the rmcp client connection to it, restarts after it stopped, and
//! closing it at shutdown.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_agent_core::{ToolResult, ToolUpdateSink};
use rmcp::model::{
    ClientCapabilities, ClientConfig, ClientRequest, Implementation, ListToolsRequest, PaginatedRequestParams,
    ProgressNotificationParam, ProgressToken, ProtocolVersion,
};
use rmcp::service::{ClientInitializeError, MaybeSendFuture, NotificationContext, Peer, RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::ChildStderr;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::limits::{SHUTDOWN_TIMEOUT, STARTUP_TIMEOUT};
use crate::config::{McpServerConfig, expand_home};

/// The longest stderr line quoted in an error message, in characters.
const STDERR_QUOTE_LIMIT: usize = 300;

/// How long an error message waits for the last stderr lines of a process that stopped.
const STDERR_GRACE: Duration = Duration::from_millis(500);

/// The most pages of `tools/list` pi follows (a guard against a server that never ends the list).
const MAX_PAGES: usize = 1000;

/// How the server's process is started.
#[derive(Debug, Clone)]
struct Launch {
    program: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
    cwd: PathBuf,
}

impl Launch {
    /// Resolves `config` against the session's working directory.
    fn new(config: &McpServerConfig, session_cwd: &Path) -> Self {
        let env_var = |name: &str| std::env::var(name).ok();
        let cwd = match &config.cwd {
            Some(cwd) => session_cwd.join(expand_home(cwd, &env_var)),
            None => session_cwd.to_path_buf(),
        };
        let program = expand_home(&config.command, &env_var);
        // A bare name is looked up on PATH; a relative path is taken from the server's directory.
        let program = if program.is_relative() && program.components().count() > 1 {
            cwd.join(program)
        } else {
            program
        };
        Launch {
            program,
            args: config.args.clone(),
            env: config.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            cwd,
        }
    }

    /// The command to spawn, killed when its handle is dropped.
    fn command(&self) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.program);
        command
            .args(&self.args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&self.cwd)
            .kill_on_drop(true);
        command
    }
}

/// The last line a server's process wrote on stderr, read as it comes so the pipe never fills.
#[derive(Debug, Default)]
pub(super) struct StderrTail {
    last: Mutex<Option<String>>,
    closed: CancellationToken,
}

impl StderrTail {
    /// Reads `stderr` until it closes, keeping its last non-empty line.
    fn spawn(stderr: Option<ChildStderr>) -> Arc<Self> {
        let tail = Arc::new(StderrTail::default());
        let Some(stderr) = stderr else {
            tail.closed.cancel();
            return tail;
        };
        let writer = tail.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stderr);
            let mut line = Vec::new();
            // Bytes, not `lines()`: a line that is not UTF-8 must not stop the reading.
            while matches!(reader.read_until(b'\n', &mut line).await, Ok(n) if n > 0) {
                let text = String::from_utf8_lossy(&line);
                let text = text.trim();
                if !text.is_empty() {
                    let quoted: String = text.chars().take(STDERR_QUOTE_LIMIT).collect();
                    *writer.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(quoted);
                }
                line.clear();
            }
            writer.closed.cancel();
        });
        tail
    }

    /// The last line, after giving a process that stopped a moment to finish writing.
    pub(super) async fn last_line(&self) -> Option<String> {
        let _ = tokio::time::timeout(STDERR_GRACE, self.closed.cancelled()).await;
        self.last.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// `message`, followed by `: <last stderr line>` when there is one.
    pub(super) async fn explain(&self, message: String) -> String {
        match self.last_line().await {
            Some(line) => format!("{message}: {line}"),
            None => message,
        }
    }
}

/// Where progress notifications go: the update sink of the call that owns the token.
type ProgressSinks = Arc<Mutex<HashMap<ProgressToken, ToolUpdateSink>>>;

/// pi's side of the MCP connection: it names pi in `initialize`, forwards progress to the calls,
/// and leaves every other server request to rmcp's defaults (`ping` answered, sampling and
/// elicitation refused, no roots).
struct PiClient {
    info: ClientConfig,
    progress: ProgressSinks,
}

impl ClientHandler for PiClient {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        let sink = self
            .progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&params.progress_token)
            .cloned();
        if let Some(sink) = sink {
            sink.update(progress_update(&params));
        }
        std::future::ready(())
    }
}

/// The partial result a progress notification becomes: its message (or `progress/total`), with
/// the numbers in `details`.
fn progress_update(params: &ProgressNotificationParam) -> ToolResult {
    let number = |n: f64| {
        if n.fract() == 0.0 && n.abs() < 1e15 {
            format!("{n:.0}")
        } else {
            n.to_string()
        }
    };
    let text = match (&params.message, params.total) {
        (Some(message), _) => message.clone(),
        (None, Some(total)) => format!("{}/{}", number(params.progress), number(total)),
        (None, None) => number(params.progress),
    };
    ToolResult::text(text).with_details(json!({"progress": params.progress, "total": params.total}))
}

/// A live connection and the process behind it.
struct Live {
    service: RunningService<RoleClient, PiClient>,
    stderr: Arc<StderrTail>,
    generation: u64,
}

/// The server's connection, if it is running, and how many times it was started.
#[derive(Default)]
struct State {
    live: Option<Live>,
    generation: u64,
}

/// What a call needs of a connection, taken without holding the server's lock during the call.
#[derive(Clone)]
pub(super) struct Link {
    /// Sends requests to the server.
    pub(super) peer: Peer<RoleClient>,
    /// The process's stderr.
    pub(super) stderr: Arc<StderrTail>,
    /// Which start of the server this connection belongs to.
    pub(super) generation: u64,
}

/// One configured MCP server, shared by all of its tools.
pub(super) struct McpServer {
    name: String,
    launch: Launch,
    /// The sandbox the server's process starts in (beyond pi).
    sandbox: Option<pi_tools::Sandbox>,
    call_timeout: std::time::Duration,
    state: tokio::sync::Mutex<State>,
    progress: ProgressSinks,
    /// `mcp_server`: its name, program and how many arguments it has (never their values, nor the
    /// environment's); the calls' spans are its children.
    span: tracing::Span,
}

impl McpServer {
    /// A server called `name`, not started yet.
    pub(super) fn new(
        name: &str,
        config: &McpServerConfig,
        session_cwd: &Path,
        sandbox: Option<pi_tools::Sandbox>,
    ) -> Self {
        let launch = Launch::new(config, session_cwd);
        let span = tracing::info_span!(
            "mcp_server",
            server = %name,
            program = %launch.program.display(),
            args = launch.args.len(),
        );
        McpServer {
            name: name.to_owned(),
            launch,
            sandbox,
            call_timeout: config.timeout.map_or(
                crate::custom_tools::process::DEFAULT_TIMEOUT,
                std::time::Duration::from_millis,
            ),
            state: tokio::sync::Mutex::new(State::default()),
            progress: Arc::default(),
            span,
        }
    }

    /// The server's `mcp_server` span.
    pub(super) fn span(&self) -> &tracing::Span {
        &self.span
    }

    /// The server's name in `settings.json`.
    pub(super) fn name(&self) -> &str {
        &self.name
    }

    /// How long one tool call may wait for its answer.
    pub(super) fn call_timeout(&self) -> std::time::Duration {
        self.call_timeout
    }

    /// The live connection, starting (or restarting) the server when it has none or its
    /// connection closed.
    pub(super) async fn connect(&self) -> Result<Link, String> {
        let mut state = self.state.lock().await;
        if let Some(live) = &state.live
            && !live.service.is_transport_closed()
        {
            return Ok(Link {
                peer: live.service.peer().clone(),
                stderr: live.stderr.clone(),
                generation: live.generation,
            });
        }
        // Dropping a dead connection cancels its task, which reaps the process.
        state.live = None;
        let (service, stderr) = self.start().await?;
        state.generation += 1;
        let link = Link {
            peer: service.peer().clone(),
            stderr: stderr.clone(),
            generation: state.generation,
        };
        state.live = Some(Live {
            service,
            stderr,
            generation: state.generation,
        });
        Ok(link)
    }

    /// Forgets the connection of `generation` (its server stopped during a call), so that the next
    /// call starts the server again.
    pub(super) async fn discard(&self, generation: u64) {
        let mut state = self.state.lock().await;
        if state.live.as_ref().is_some_and(|live| live.generation == generation) {
            state.live = None;
        }
    }

    /// Closes the connection, if there is one: stdin is closed, then the process is given
    /// [`SHUTDOWN_TIMEOUT`] to exit before it is terminated. Calling it again does nothing.
    pub(super) async fn shutdown(&self) {
        let live = self.state.lock().await.live.take();
        if let Some(mut live) = live {
            tracing::debug!(parent: &self.span, "closing the MCP server");
            let _ = live.service.close_with_timeout(SHUTDOWN_TIMEOUT).await;
        }
    }

    /// Sends progress notifications with `token` to `sink` until the returned guard is dropped.
    pub(super) fn route_progress(&self, token: ProgressToken, sink: ToolUpdateSink) -> ProgressRoute {
        self.progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(token.clone(), sink);
        ProgressRoute {
            sinks: self.progress.clone(),
            token,
        }
    }

    /// Spawns the process and completes `initialize` within [`STARTUP_TIMEOUT`].
    async fn start(&self) -> Result<(RunningService<RoleClient, PiClient>, Arc<StderrTail>), String> {
        let started = self.start_unlogged().instrument(self.span.clone()).await;
        match &started {
            Ok(_) => tracing::info!(parent: &self.span, "MCP server initialized"),
            Err(error) => tracing::warn!(parent: &self.span, %error, "MCP server failed to start"),
        }
        started
    }

    /// [`McpServer::start`] without its log events.
    async fn start_unlogged(&self) -> Result<(RunningService<RoleClient, PiClient>, Arc<StderrTail>), String> {
        tracing::debug!("starting the MCP server");
        let name = &self.name;
        let builder = TokioChildProcess::builder(self.launch.command()).stderr(Stdio::piped());
        let spawned = match &self.sandbox {
            Some(sandbox) => sandbox
                .spawn_with(|| builder.spawn())
                .map_err(|error| format!("Failed to start MCP server \"{name}\": {error}"))?,
            None => builder.spawn(),
        };
        let (transport, stderr) = spawned.map_err(|error| {
            format!(
                "Failed to start MCP server \"{name}\": cannot run \"{}\": {error}",
                self.launch.program.display()
            )
        })?;
        let stderr = StderrTail::spawn(stderr);
        let client = PiClient {
            info: client_info(),
            progress: self.progress.clone(),
        };
        match tokio::time::timeout(STARTUP_TIMEOUT, client.serve(transport)).await {
            Ok(Ok(service)) => Ok((service, stderr)),
            Ok(Err(ClientInitializeError::ConnectionClosed(_))) => Err(stderr
                .explain(format!("MCP server \"{name}\" stopped before answering initialize"))
                .await),
            Ok(Err(error)) => Err(stderr
                .explain(format!("MCP server \"{name}\" failed to initialize: {error}"))
                .await),
            Err(_) => Err(stderr
                .explain(format!(
                    "MCP server \"{name}\" did not answer initialize within {} s",
                    STARTUP_TIMEOUT.as_secs()
                ))
                .await),
        }
    }
}

/// Removes a call's progress route when the call ends.
pub(super) struct ProgressRoute {
    sinks: ProgressSinks,
    token: ProgressToken,
}

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        self.sinks.lock().unwrap_or_else(|p| p.into_inner()).remove(&self.token);
    }
}

/// What pi says about itself in `initialize`: no capabilities, the newest protocol version that
/// still has the `initialize` handshake.
fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("pi", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

/// Every tool the server lists, following `nextCursor`, as raw JSON objects: read leniently, so
/// that one tool rmcp's types would refuse (a missing `inputSchema`) does not hide the others.
pub(super) async fn list_tools(link: &Link) -> Result<Vec<Value>, String> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    for _ in 0..MAX_PAGES {
        let params = PaginatedRequestParams::default().with_cursor(cursor.take());
        let request = ClientRequest::ListToolsRequest(ListToolsRequest::with_param(params));
        let result = link.peer.send_request(request).await.map_err(|e| e.to_string())?;
        let mut page = serde_json::to_value(&result).map_err(|e| e.to_string())?;
        match page.get_mut("tools").map(Value::take) {
            Some(Value::Array(listed)) => tools.extend(listed),
            _ => return Err("the answer to tools/list has no list of tools".to_owned()),
        }
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) if !next.is_empty() => {
                if !seen.insert(next.to_owned()) {
                    return Err(format!("tools/list returned the cursor \"{next}\" twice"));
                }
                cursor = Some(next.to_owned());
            }
            _ => return Ok(tools),
        }
    }
    Err(format!("tools/list did not end after {MAX_PAGES} pages"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(config: serde_json::Value) -> Launch {
        let config: McpServerConfig = serde_json::from_value(config).unwrap();
        Launch::new(&config, Path::new("/work/project"))
    }

    #[test]
    fn commands_and_directories_resolve_against_the_session() {
        let bare = launch(json!({"command": "npx", "args": ["-y", "server"]}));
        assert_eq!(bare.program, PathBuf::from("npx"), "a bare name is looked up on PATH");
        assert_eq!(bare.cwd, PathBuf::from("/work/project"));
        let relative = launch(json!({"command": "./bin/server", "cwd": "tools"}));
        assert_eq!(relative.program, PathBuf::from("/work/project/tools/./bin/server"));
        assert_eq!(relative.cwd, PathBuf::from("/work/project/tools"));
        let absolute = launch(json!({"command": "/usr/bin/server", "cwd": "/srv"}));
        assert_eq!(absolute.program, PathBuf::from("/usr/bin/server"));
        assert_eq!(absolute.cwd, PathBuf::from("/srv"));
    }

    #[test]
    fn progress_reads_as_its_message_or_its_numbers() {
        let param = |message: Option<&str>, total: Option<f64>| {
            serde_json::from_value::<ProgressNotificationParam>(json!({
                "progressToken": 1, "progress": 3, "total": total, "message": message
            }))
            .unwrap()
        };
        let text = |p: &ProgressNotificationParam| progress_update(p).content[0].as_text().unwrap().to_owned();
        assert_eq!(text(&param(Some("indexing"), Some(10.0))), "indexing");
        assert_eq!(text(&param(None, Some(10.0))), "3/10");
        assert_eq!(text(&param(None, None)), "3");
    }
}
