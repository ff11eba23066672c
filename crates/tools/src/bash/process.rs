//! Running one command: shell choice, spawning `<shell> -c <command>` in its own process group,
//! merging stdout and stderr in arrival order, throttled partial results, and killing the whole
//! group on timeout or abort.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use pi_agent_core::{ToolResult, ToolUpdateSink};
use serde_json::{Map, Value};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::error::CommandError;
use super::output::{FullOutputLog, OutputAccumulator, Utf8Decoder};
use crate::truncate::TruncationOptions;

/// Minimum time between two streamed partial results (pi's throttle).
pub(crate) const UPDATE_INTERVAL: Duration = Duration::from_millis(100);

/// How long pipes are still read after the shell exited or was killed; descendants that escaped
/// the process group may hold them open forever.
pub(crate) const PIPE_GRACE: Duration = Duration::from_millis(200);

/// Session variables pi sets for the command; inherited values are removed first.
const PI_VARIABLES: [&str; 5] = [
    "PI_SESSION_ID",
    "PI_SESSION_FILE",
    "PI_PROVIDER",
    "PI_MODEL",
    "PI_REASONING_LEVEL",
];

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The shell exited by itself: its code, or `None` when a signal (not ours) ended it.
    Exited(Option<i32>),
    /// `ctx.cancel` fired.
    Aborted,
    /// The timeout elapsed.
    TimedOut,
}

/// Everything a finished run produced.
#[derive(Debug)]
pub(crate) struct Run {
    /// How it ended.
    pub(crate) ending: Ending,
    /// The merged output.
    pub(crate) output: OutputAccumulator,
    /// The full-output log (opened once the output was truncated).
    pub(crate) log: FullOutputLog,
}

/// What to run and how.
#[derive(Debug)]
pub(crate) struct Spec<'a> {
    /// The shell program.
    pub(crate) shell: &'a Path,
    /// The full command text (prefix included).
    pub(crate) command: &'a str,
    /// Working directory.
    pub(crate) cwd: &'a Path,
    /// Extra environment (the `PI_*` variables).
    pub(crate) env: &'a std::collections::BTreeMap<String, String>,
    /// Time limit.
    pub(crate) timeout: Option<Duration>,
    /// The sandbox the shell starts in, if any.
    pub(crate) sandbox: Option<&'a crate::Sandbox>,
}

/// The shell: the configured one, else `/bin/bash`, else `bash` on `PATH`, else `sh`.
pub(crate) async fn resolve_shell(configured: Option<&Path>) -> PathBuf {
    if let Some(shell) = configured {
        return shell.to_path_buf();
    }
    let bin_bash = Path::new("/bin/bash");
    if tokio::fs::try_exists(bin_bash).await.unwrap_or(false) {
        return bin_bash.to_path_buf();
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join("bash");
            if let Ok(meta) = tokio::fs::metadata(&candidate).await
                && meta.is_file()
                && meta.permissions().mode() & 0o111 != 0
            {
                return candidate;
            }
        }
    }
    PathBuf::from("sh")
}

/// Kills the process group when dropped while armed (the call's future was dropped mid-run).
struct GroupGuard {
    group: Option<Pid>,
}

impl GroupGuard {
    fn kill(&mut self) {
        if let Some(group) = self.group.take() {
            // ESRCH (the group is already gone) is fine.
            let _ = killpg(group, Signal::SIGKILL);
        }
    }

    fn disarm(&mut self) {
        self.group = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Throttles partial results to one per [`UPDATE_INTERVAL`].
struct Throttle {
    sink: ToolUpdateSink,
    last: Option<Instant>,
    dirty: bool,
}

impl Throttle {
    /// When the pending update may go out.
    fn due(&self) -> Option<Instant> {
        match (self.dirty, self.last) {
            (false, _) => None,
            (true, None) => Some(Instant::now()),
            (true, Some(last)) => Some(last + UPDATE_INTERVAL),
        }
    }

    /// Marks new output; sends at once when the interval allows.
    fn touch(&mut self, output: &OutputAccumulator, log: &FullOutputLog) {
        self.dirty = true;
        if self.due().is_some_and(|due| due <= Instant::now()) {
            self.send(output, log);
        }
    }

    fn send(&mut self, output: &OutputAccumulator, log: &FullOutputLog) {
        self.dirty = false;
        self.last = Some(Instant::now());
        let snapshot = output.snapshot();
        let mut details = Map::new();
        if snapshot.truncated {
            details.insert(
                "truncation".into(),
                serde_json::to_value(&snapshot).unwrap_or(Value::Null),
            );
            if let Some(path) = log.path() {
                details.insert("fullOutputPath".into(), Value::String(path.display().to_string()));
            }
        }
        self.sink
            .update(ToolResult::text(snapshot.content).with_details(Value::Object(details)));
    }
}

/// Reads from an optional pipe; pending forever once it is closed.
async fn read_some<R: AsyncRead + Unpin>(pipe: &mut Option<R>, buffer: &mut [u8]) -> std::io::Result<usize> {
    match pipe {
        Some(reader) => reader.read(buffer).await,
        None => std::future::pending().await,
    }
}

/// Sleeps until `at`, or forever when there is no deadline.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// One pipe's reader and decoder.
struct Pipe<R> {
    reader: Option<R>,
    decoder: Utf8Decoder,
    buffer: Vec<u8>,
}

impl<R> Pipe<R> {
    fn new(reader: Option<R>) -> Self {
        Pipe {
            reader,
            decoder: Utf8Decoder::default(),
            buffer: vec![0; 64 * 1024],
        }
    }
}

/// Output sinks shared by both pipes.
struct Sinks {
    output: OutputAccumulator,
    log: FullOutputLog,
    updates: Throttle,
}

impl Sinks {
    async fn accept(&mut self, raw: &[u8], text: &str) {
        self.log.write(raw).await;
        if self.output.push(text) {
            self.log.open().await;
        }
        if !text.is_empty() {
            self.updates.touch(&self.output, &self.log);
        }
    }

    /// Handles one read result: data, or end of stream (closing the pipe).
    async fn handle<R>(&mut self, pipe: &mut Pipe<R>, read: std::io::Result<usize>) {
        match read {
            Ok(n) if n > 0 => {
                let text = pipe.decoder.decode(&pipe.buffer[..n]);
                let raw = std::mem::take(&mut pipe.buffer);
                self.accept(&raw[..n], &text).await;
                pipe.buffer = raw;
            }
            _ => {
                pipe.reader = None;
                let rest = pipe.decoder.finish();
                self.accept(&[], &rest).await;
            }
        }
    }
}

/// Spawns the command (in the sandbox, if there is one) and drives it to its end.
pub(crate) async fn run(
    spec: Spec<'_>,
    cancel: &CancellationToken,
    updates: ToolUpdateSink,
) -> Result<Run, CommandError> {
    let mut command = tokio::process::Command::new(spec.shell);
    command
        .arg("-c")
        .arg(spec.command)
        .current_dir(spec.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for name in PI_VARIABLES {
        command.env_remove(name);
    }
    command.envs(spec.env);
    let spawned = match spec.sandbox {
        Some(sandbox) => sandbox.spawn_with(|| command.spawn())?,
        None => command.spawn(),
    };
    let mut child = spawned.map_err(|source| CommandError::Spawn {
        shell: spec.shell.to_path_buf(),
        source,
    })?;
    let mut guard = GroupGuard {
        group: child.id().and_then(|id| i32::try_from(id).ok()).map(Pid::from_raw),
    };
    let mut stdout = Pipe::new(child.stdout.take());
    let mut stderr = Pipe::new(child.stderr.take());
    let mut sinks = Sinks {
        output: OutputAccumulator::new(TruncationOptions::default()),
        log: FullOutputLog::default(),
        updates: Throttle {
            sink: updates,
            last: None,
            dirty: false,
        },
    };

    let timeout_at = spec.timeout.map(|limit| Instant::now() + limit);
    let mut exited: Option<Option<i32>> = None;
    let mut stopped: Option<Ending> = None;
    let mut grace_until: Option<Instant> = None;
    loop {
        let pipes_open = stdout.reader.is_some() || stderr.reader.is_some();
        if !pipes_open && exited.is_some() {
            break;
        }
        let running = exited.is_none() && stopped.is_none();
        tokio::select! {
            () = cancel.cancelled(), if stopped.is_none() => {
                guard.kill();
                stopped = Some(Ending::Aborted);
                grace_until = Some(Instant::now() + PIPE_GRACE);
            }
            () = sleep_until(timeout_at), if running => {
                guard.kill();
                stopped = Some(Ending::TimedOut);
                grace_until = Some(Instant::now() + PIPE_GRACE);
            }
            () = sleep_until(grace_until) => break,
            status = child.wait(), if exited.is_none() => {
                exited = Some(status.ok().and_then(|status| status.code()));
                grace_until.get_or_insert_with(|| Instant::now() + PIPE_GRACE);
            }
            () = sleep_until(sinks.updates.due()) => {
                sinks.updates.send(&sinks.output, &sinks.log);
            }
            read = read_some(&mut stdout.reader, &mut stdout.buffer) => sinks.handle(&mut stdout, read).await,
            read = read_some(&mut stderr.reader, &mut stderr.buffer) => sinks.handle(&mut stderr, read).await,
        }
    }
    guard.disarm();
    for pipe in [stdout.decoder.finish(), stderr.decoder.finish()] {
        sinks.accept(&[], &pipe).await;
    }
    let ending = match (stopped, exited) {
        (Some(ending), _) => ending,
        (None, Some(code)) => Ending::Exited(code),
        (None, None) => Ending::Exited(None),
    };
    Ok(Run {
        ending,
        output: sinks.output,
        log: sinks.log,
    })
}
