//! One running tool process: spawning it, the line reader that routes every message, the writer,
//! the stderr tail, request/response matching by id, the per-call deadline, and the kill.
//!
//! A connection serves until its process fails (exits, writes a line that is not JSON, is killed
//! after a timeout) or pi stops it; then it records *why* ([`Failure`]), every request still
//! waiting ends with that failure, and it never serves again — the host starts a new one.

use std::collections::HashMap;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use pi_agent_core::{HeldMutations, MutationGuard, ToolResult, ToolUpdateSink, lock};
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::context::SentContext;
use super::protocol::{
    Failure, Incoming, MAX_LINE, RpcError, notification_line, parse_line, request_line, response_line, start_of,
};
use super::spec::ProcessSpec;
use crate::custom_tools::ToolApi;

/// What pi does with the requests and notifications of the process. The transport only routes
/// them here; the host hands in pi's handlers (`handlers::PI` for process tools, the extension
/// handlers for protocol version 2), so this module does not depend on them.
#[async_trait::async_trait]
pub(crate) trait Handler: Send + Sync {
    /// A notification of the process.
    fn notification(&self, connection: &Arc<Connection>, method: &str, params: Value);

    /// A request of the process; the answer goes back with the request's id.
    async fn request(&self, connection: &Arc<Connection>, method: &str, params: Value) -> Result<Value, RpcError>;
}

/// How many bytes of a stderr line are kept for error messages.
const MAX_STDERR_LINE: usize = 1000;

/// The line buffer is kept for the next line up to this capacity; a larger one is freed.
const KEEP_LINE_CAPACITY: usize = 1 << 20;

/// How long pi waits for an exiting process (and its stderr) before killing it.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// Why a request of pi got no result.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum CallError {
    /// The process answered with a JSON-RPC error.
    Rpc(RpcError),
    /// The process failed (or was stopped) before answering.
    Failed(Failure),
}

enum Outgoing {
    Line(String),
    Close,
}

/// An `execute` in flight: what `update`, `exec` and `pendingAction.push` need to know about it.
struct CallEntry {
    tool: String,
    updates: ToolUpdateSink,
    cancel: CancellationToken,
    /// The files the call holds in the mutation queue (those its tool declared).
    held: HeldMutations,
}

/// What pi tells the process about a request it stops waiting for before the answer came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Abandon {
    /// Nothing: a late answer is ignored (`initialize`, `session`, an `execute`, which has its
    /// own `cancel {callId}`).
    Forget,
    /// `cancel {requestId}` (protocol version 2: aborts the `ctx.signal` of an `event`,
    /// `command` or `shortcut` request).
    Cancel,
}

/// A running tool process and everything waiting on it.
pub(crate) struct Connection {
    label: String,
    name: OnceLock<String>,
    api: ToolApi,
    handler: Arc<dyn Handler>,
    timeout: Duration,
    writer: mpsc::UnboundedSender<Outgoing>,
    next_id: AtomicU64,
    pending: Mutex<HashMap<u64, oneshot::Sender<Result<Value, RpcError>>>>,
    calls: Mutex<HashMap<String, CallEntry>>,
    /// Places in the mutation queue the process took (`mutationQueue.lock`), by lock id;
    /// released by `mutationQueue.unlock` or when the connection stops.
    file_locks: Mutex<HashMap<u64, Option<MutationGuard>>>,
    next_lock: AtomicU64,
    failure: OnceLock<Failure>,
    stopping: AtomicBool,
    kill: CancellationToken,
    closed: CancellationToken,
    busy: watch::Sender<usize>,
    /// What pi has told the process of the session (`context`); its lock also orders the
    /// requests that carry a context, so the process gets them in the order they were computed.
    sent: Mutex<SentContext>,
    /// Secrets pi handed the process (`modelRegistry.getApiKey`): redacted from its stderr line
    /// and its error answers.
    secrets: Mutex<Vec<String>>,
    /// `tool_process`: the program and how many arguments it has (never their values, nor the
    /// environment's); the calls' spans are its children.
    span: tracing::Span,
}

impl Connection {
    /// Starts the process of `spec` (no `initialize` yet); its requests and notifications go to
    /// `handler`.
    pub(crate) fn spawn(
        spec: &ProcessSpec,
        api: &ToolApi,
        handler: Arc<dyn Handler>,
    ) -> std::io::Result<Arc<Connection>> {
        let mut command = tokio::process::Command::new(&spec.program);
        command
            .args(&spec.args)
            .envs(&spec.env)
            .current_dir(&spec.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // Its own process group: a Ctrl+C meant for pi does not kill the tool behind pi's back.
        #[cfg(unix)]
        command.process_group(0);
        let span = tracing::info_span!(
            "tool_process",
            program = %spec.program.display(),
            args = spec.args.len(),
            pid = tracing::field::Empty,
        );
        let mut child = api.spawn(&mut command).inspect_err(|error| {
            tracing::warn!(parent: &span, %error, "cannot start the tool process");
        })?;
        if let Some(pid) = child.id() {
            span.record("pid", pid);
        }
        tracing::debug!(parent: &span, env_vars = spec.env.len(), "tool process started");
        let missing = || std::io::Error::other("the process's standard streams are not piped");
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let stdout = child.stdout.take().ok_or_else(missing)?;
        let stderr = child.stderr.take().ok_or_else(missing)?;
        let (writer, outgoing) = mpsc::unbounded_channel();
        let connection = Arc::new(Connection {
            label: spec.label.clone(),
            name: OnceLock::new(),
            api: api.clone(),
            handler,
            timeout: spec.timeout,
            writer,
            next_id: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            calls: Mutex::new(HashMap::new()),
            file_locks: Mutex::new(HashMap::new()),
            next_lock: AtomicU64::new(1),
            failure: OnceLock::new(),
            stopping: AtomicBool::new(false),
            kill: CancellationToken::new(),
            closed: CancellationToken::new(),
            busy: watch::Sender::new(0),
            sent: Mutex::new(SentContext::default()),
            secrets: Mutex::new(Vec::new()),
            span: span.clone(),
        });
        tokio::spawn(write_lines(stdin, outgoing));
        let tail = Arc::new(Mutex::new(None));
        let stderr_task = tokio::spawn(keep_stderr_tail(stderr, tail.clone()));
        tokio::spawn(supervise(connection.clone(), child, stdout, stderr_task, tail).instrument(span));
        Ok(connection)
    }

    /// The process's `tool_process` span.
    pub(crate) fn span(&self) -> &tracing::Span {
        &self.span
    }

    /// The API the process's requests are served with.
    pub(crate) fn api(&self) -> &ToolApi {
        &self.api
    }

    /// The per-call time limit of the manifest.
    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Names the process in messages that belong to no call: its first tool, once initialized.
    pub(crate) fn set_name(&self, name: &str) {
        let _ = self.name.set(name.to_owned());
    }

    /// The process's first tool, or its label before `initialize` was answered.
    pub(crate) fn name(&self) -> &str {
        self.name.get().map_or(&self.label, String::as_str)
    }

    /// Whether the connection still serves requests.
    pub(crate) fn is_alive(&self) -> bool {
        self.failure.get().is_none()
    }

    /// Why the connection stopped serving, once it has.
    pub(crate) fn failure(&self) -> Option<Failure> {
        self.failure.get().cloned()
    }

    /// A token cancelled when the connection has stopped serving.
    pub(crate) fn closed(&self) -> &CancellationToken {
        &self.closed
    }

    fn send(&self, line: String) {
        let _ = self.writer.send(Outgoing::Line(line));
    }

    /// Sends a notification.
    pub(crate) fn notify(&self, method: &str, params: &Value) {
        self.send(notification_line(method, params));
    }

    /// Sends a request and waits for its answer, however long it takes. Dropping the future
    /// forgets the request: a late answer is ignored.
    pub(crate) async fn call(&self, method: &str, params: &Value) -> Result<Value, CallError> {
        self.request(|id| self.send(request_line(id, method, params)), Abandon::Forget)
            .await
    }

    /// [`Connection::call`] with `params` built from what pi has told the process so far (which
    /// `build` updates), under the lock that keeps such requests in order; `abandon` says what
    /// the process is told when the future is dropped before the answer.
    pub(crate) async fn call_with_context(
        &self,
        method: &str,
        build: impl FnOnce(&mut SentContext) -> Value,
        abandon: Abandon,
    ) -> Result<Value, CallError> {
        self.request(
            |id| {
                let mut sent = lock(&self.sent);
                let params = build(&mut sent);
                self.send(request_line(id, method, &params));
            },
            abandon,
        )
        .await
    }

    /// Registers a request under a new id, has `write` send it, and waits for its answer.
    async fn request(&self, write: impl FnOnce(u64), abandon: Abandon) -> Result<Value, CallError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, receiver) = oneshot::channel();
        {
            let mut pending = lock(&self.pending);
            // Checked under the lock that `finish` drains, so no request is left waiting forever.
            if let Some(failure) = self.failure.get() {
                return Err(CallError::Failed(failure.clone()));
            }
            pending.insert(id, sender);
        }
        let _forget = Forget {
            connection: self,
            id,
            abandon,
        };
        write(id);
        match receiver.await {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(error)) => Err(CallError::Rpc(error)),
            Err(_) => Err(CallError::Failed(self.failure().unwrap_or(Failure::Stopped))),
        }
    }

    /// [`Connection::call`] with a time limit; when it passes, the process is killed (the failure
    /// names `tool`). Time pi spends answering a request of the process does not count.
    pub(crate) async fn call_within(
        &self,
        method: &str,
        params: &Value,
        limit: Duration,
        tool: &str,
    ) -> Result<Value, CallError> {
        self.within(self.call(method, params), limit, tool).await
    }

    /// [`Connection::call_with_context`] with a time limit, as [`Connection::call_within`].
    pub(crate) async fn call_with_context_within(
        &self,
        method: &str,
        build: impl FnOnce(&mut SentContext) -> Value,
        abandon: Abandon,
        limit: Duration,
        tool: &str,
    ) -> Result<Value, CallError> {
        self.within(self.call_with_context(method, build, abandon), limit, tool)
            .await
    }

    async fn within(
        &self,
        reply: impl Future<Output = Result<Value, CallError>>,
        limit: Duration,
        tool: &str,
    ) -> Result<Value, CallError> {
        tokio::select! {
            biased;
            reply = reply => reply,
            () = self.deadline(limit) => {
                let failure = Failure::TimedOut { tool: tool.to_owned(), after: limit };
                self.terminate(failure.clone());
                Err(CallError::Failed(self.failure().unwrap_or(failure)))
            }
        }
    }

    /// Remembers a secret handed to the process, to redact it from what the process says.
    pub(crate) fn add_secret(&self, secret: &str) {
        let mut secrets = lock(&self.secrets);
        if !secrets.iter().any(|known| known == secret) {
            secrets.push(secret.to_owned());
        }
    }

    /// `text` with every secret handed to the process replaced by `[redacted]` (`pi_ai::redact`).
    fn redacted(&self, text: String) -> String {
        let secrets = lock(&self.secrets);
        secrets
            .iter()
            .fold(text, |text, secret| pi_ai::redact(&text, Some(secret)))
    }

    /// Ends once `limit` has passed while pi was not busy answering the process.
    async fn deadline(&self, limit: Duration) {
        let mut busy = self.busy.subscribe();
        let mut remaining = limit;
        loop {
            if busy.wait_for(|count| *count == 0).await.map(drop).is_err() {
                return std::future::pending().await;
            }
            let started = tokio::time::Instant::now();
            let again = async { busy.wait_for(|count| *count > 0).await.map(drop) };
            tokio::select! {
                () = tokio::time::sleep(remaining) => return,
                again = again => {
                    if again.is_err() {
                        return std::future::pending().await;
                    }
                    remaining = remaining.saturating_sub(started.elapsed());
                }
            }
        }
    }

    /// Marks pi as busy answering a request of the process until the guard drops.
    pub(crate) fn busy(&self) -> Busy<'_> {
        self.busy.send_modify(|count| *count += 1);
        Busy { connection: self }
    }

    /// Kills the process for `failure` (unless it already failed); every waiting request ends.
    pub(crate) fn terminate(&self, failure: Failure) {
        let _ = self.failure.set(failure);
        self.kill.cancel();
    }

    /// From now on, the process ending is pi's doing ([`Failure::Stopped`]), not a crash.
    pub(crate) fn begin_stop(&self) {
        self.stopping.store(true, Ordering::Release);
    }

    /// Closes the process's stdin (after pending lines are written).
    pub(crate) fn close_stdin(&self) {
        let _ = self.writer.send(Outgoing::Close);
    }

    /// Registers a running `execute` until the guard drops.
    pub(crate) fn register_call(
        &self,
        call_id: &str,
        tool: &str,
        updates: ToolUpdateSink,
        cancel: CancellationToken,
    ) -> CallGuard<'_> {
        let entry = CallEntry {
            tool: tool.to_owned(),
            updates,
            cancel,
            held: HeldMutations::current(),
        };
        lock(&self.calls).insert(call_id.to_owned(), entry);
        CallGuard {
            connection: self,
            call_id: call_id.to_owned(),
        }
    }

    /// Streams a partial result of a running call (ignored for unknown calls).
    pub(crate) fn update(&self, call_id: &str, partial: ToolResult) {
        let updates = lock(&self.calls).get(call_id).map(|call| call.updates.clone());
        if let Some(updates) = updates {
            updates.update(partial);
        }
    }

    /// The cancellation token of a running call.
    pub(crate) fn call_cancel(&self, call_id: &str) -> Option<CancellationToken> {
        lock(&self.calls).get(call_id).map(|call| call.cancel.clone())
    }

    /// The files a running call holds in the mutation queue (none for an unknown call).
    pub(crate) fn call_held(&self, call_id: &str) -> HeldMutations {
        lock(&self.calls)
            .get(call_id)
            .map(|call| call.held.clone())
            .unwrap_or_default()
    }

    /// Keeps a place the process took in the mutation queue; returns its lock id.
    pub(crate) fn keep_file_lock(&self, guard: Option<MutationGuard>) -> u64 {
        let id = self.next_lock.fetch_add(1, Ordering::Relaxed);
        if !self.closed.is_cancelled() {
            lock(&self.file_locks).insert(id, guard);
        }
        id
    }

    /// Gives up the place of lock `id` (unknown ids are ignored).
    pub(crate) fn release_file_lock(&self, id: u64) {
        let guard = lock(&self.file_locks).remove(&id);
        drop(guard);
    }

    /// The tool of a running call.
    pub(crate) fn call_tool(&self, call_id: &str) -> Option<String> {
        lock(&self.calls).get(call_id).map(|call| call.tool.clone())
    }

    /// Routes one message of the process.
    fn dispatch(self: &Arc<Self>, message: Incoming) {
        match message {
            Incoming::Response { id, outcome } => {
                if let Some(sender) = lock(&self.pending).remove(&id) {
                    let outcome = outcome.map_err(|mut error| {
                        error.message = self.redacted(error.message);
                        error
                    });
                    let _ = sender.send(outcome);
                }
            }
            Incoming::Notification { method, params } => self.handler.notification(self, &method, params),
            Incoming::Request { id, method, params } => {
                let connection = self.clone();
                tokio::spawn(async move {
                    let outcome = {
                        let _busy = connection.busy();
                        // A dialog or command for a process that is gone is dropped with it.
                        tokio::select! {
                            outcome = connection.handler.request(&connection, &method, params) => outcome,
                            () = connection.closed.cancelled() => return,
                        }
                    };
                    connection.send(response_line(&id, &outcome));
                });
            }
            Incoming::Ignored => {}
        }
    }

    /// The connection stopped serving: every waiting request ends with the failure.
    fn finish(&self) {
        let _ = self.failure.set(Failure::Stopped);
        lock(&self.pending).clear();
        self.closed.cancel();
        // A process that is gone holds no file.
        let locks = std::mem::take(&mut *lock(&self.file_locks));
        drop(locks);
    }
}

/// Forgets a request whose caller stopped waiting — and, for [`Abandon::Cancel`], tells a
/// still-running process the request is cancelled when no answer came.
struct Forget<'a> {
    connection: &'a Connection,
    id: u64,
    abandon: Abandon,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        let unanswered = lock(&self.connection.pending).remove(&self.id).is_some();
        if unanswered && self.abandon == Abandon::Cancel && self.connection.is_alive() {
            self.connection
                .notify("cancel", &serde_json::json!({"requestId": self.id}));
        }
    }
}

/// Unregisters a call when it ends.
pub(crate) struct CallGuard<'a> {
    connection: &'a Connection,
    call_id: String,
}

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        lock(&self.connection.calls).remove(&self.call_id);
    }
}

/// pi is answering a request of the process while this lives.
pub(crate) struct Busy<'a> {
    connection: &'a Connection,
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.connection
            .busy
            .send_modify(|count| *count = count.saturating_sub(1));
    }
}

async fn write_lines(mut stdin: ChildStdin, mut outgoing: mpsc::UnboundedReceiver<Outgoing>) {
    while let Some(Outgoing::Line(mut line)) = outgoing.recv().await {
        line.push('\n');
        if stdin.write_all(line.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
            break;
        }
    }
}

/// Keeps the last non-blank stderr line (at most [`MAX_STDERR_LINE`] bytes of it) in `tail`.
async fn keep_stderr_tail(mut stderr: ChildStderr, tail: Arc<Mutex<Option<String>>>) {
    let mut buffer = [0u8; 4096];
    let mut line = Vec::new();
    let commit = |line: &mut Vec<u8>| {
        let text = String::from_utf8_lossy(line).trim().to_owned();
        line.clear();
        if !text.is_empty() {
            *lock(&tail) = Some(text);
        }
    };
    loop {
        let read = match stderr.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        for &byte in &buffer[..read] {
            if byte == b'\n' {
                commit(&mut line);
            } else if line.len() < MAX_STDERR_LINE {
                line.push(byte);
            }
        }
    }
    commit(&mut line);
}

enum Read {
    Line,
    TooLong,
    End,
}

/// Reads one line (without `\n`) into `line`; a last line without `\n` counts as a line. Generic
/// over the reader so the framing can be fuzzed without a process.
async fn read_line<R: AsyncBufRead + Unpin>(reader: &mut R, line: &mut Vec<u8>) -> std::io::Result<Read> {
    line.clear();
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if line.is_empty() { Read::End } else { Read::Line });
        }
        if let Some(end) = available.iter().position(|&byte| byte == b'\n') {
            line.extend_from_slice(&available[..end]);
            reader.consume(end + 1);
            return Ok(Read::Line);
        }
        let taken = available.len();
        line.extend_from_slice(available);
        reader.consume(taken);
        if line.len() > MAX_LINE {
            return Ok(Read::TooLong);
        }
    }
}

/// `exit code <n>` or `signal <n>`.
fn describe(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit code {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("signal {signal}");
        }
    }
    status.to_string()
}

/// Reads the process's stdout until it fails or pi kills it, then reaps it and fails the
/// connection.
async fn supervise(
    connection: Arc<Connection>,
    mut child: Child,
    stdout: ChildStdout,
    stderr_task: JoinHandle<()>,
    tail: Arc<Mutex<Option<String>>>,
) {
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::new();
    let failure = loop {
        tokio::select! {
            biased;
            () = connection.kill.cancelled() => break None,
            read = read_line(&mut reader, &mut line) => match read {
                Ok(Read::Line) => {
                    let parsed = parse_line(&line).map_err(|()| start_of(&line));
                    // A huge line (a result of many MB) is not kept for the next one: it is freed
                    // before its message is handled, so the two never live side by side for long.
                    if line.capacity() > KEEP_LINE_CAPACITY {
                        line = Vec::new();
                    }
                    match parsed {
                        Ok(message) => connection.dispatch(message),
                        Err(start) => break Some(Failure::InvalidJson { start }),
                    }
                }
                Ok(Read::TooLong) => break Some(Failure::LineTooLong),
                Ok(Read::End) | Err(_) => {
                    let status = match tokio::time::timeout(EXIT_GRACE, child.wait()).await {
                        Ok(Ok(status)) => describe(status),
                        _ => {
                            let _ = child.start_kill();
                            match child.wait().await {
                                Ok(status) => describe(status),
                                Err(error) => error.to_string(),
                            }
                        }
                    };
                    let _ = tokio::time::timeout(EXIT_GRACE, stderr_task).await;
                    let stderr = lock(&tail).clone().map(|line| connection.redacted(line));
                    break Some(if connection.stopping.load(Ordering::Acquire) {
                        Failure::Stopped
                    } else {
                        Failure::Exited { status, stderr }
                    });
                }
            }
        }
    };
    if let Some(failure) = failure {
        let _ = connection.failure.set(failure);
    }
    let _ = child.start_kill();
    let _ = tokio::time::timeout(EXIT_GRACE, child.wait()).await;
    match connection.failure.get() {
        Some(Failure::Exited { status, .. }) => tracing::warn!(%status, "tool process exited unexpectedly"),
        Some(Failure::TimedOut { tool, after }) => {
            tracing::warn!(%tool, ?after, "tool call timed out; process killed");
        }
        Some(Failure::InvalidJson { .. }) => tracing::warn!("tool process wrote a line that is not JSON; killed"),
        Some(Failure::LineTooLong) => tracing::warn!(limit = MAX_LINE, "tool process wrote too long a line; killed"),
        Some(Failure::Stopped) | None => tracing::debug!("tool process stopped"),
    }
    connection.finish();
}

#[cfg(test)]
mod fuzz;
