//! [`ToolApi`]: what every custom tool gets from pi — native Rust factories directly, process and
//! TypeScript tools through the protocol (`docs/custom-tools.md`).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

use super::context::{SessionView, SessionViewSlot};
use crate::resolve::{PendingAction, PendingActionStore};
use crate::ui::{NoUi, ToolUi};

/// The error of `push_pending_action` without a pending-action store.
pub const PENDING_STORE_UNAVAILABLE: &str = "Pending action store unavailable for custom tools in this runtime.";

/// The source tool name of a custom tool's pending action that names none.
pub const DEFAULT_SOURCE_TOOL: &str = "custom_tool";

/// The slot holding the current user interface; the session swaps it when a mode starts.
pub type UiSlot = Arc<RwLock<Arc<dyn ToolUi>>>;

/// Options of [`ToolApi::exec`].
#[derive(Debug, Clone, Default)]
pub struct ExecOptions {
    /// Kills the process when cancelled (pass the tool call's token).
    pub cancel: Option<CancellationToken>,
    /// Kills the process after this long.
    pub timeout: Option<Duration>,
}

/// What [`ToolApi::exec`] returns (pi's `ExecResult`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ExecResult {
    /// Standard output (lossy UTF-8).
    pub stdout: String,
    /// Standard error (lossy UTF-8).
    pub stderr: String,
    /// Exit code; `-1` when a signal ended the process.
    pub code: i32,
    /// Killed by cancellation or the timeout.
    pub killed: bool,
}

/// `push_pending_action` without a store.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{PENDING_STORE_UNAVAILABLE}")]
pub struct StoreUnavailable;

/// The API a custom tool is created with (pi's `ToolAPI`, passed to factories as `pi`). Clones
/// share it.
#[derive(Clone)]
pub struct ToolApi {
    cwd: PathBuf,
    pending: Option<PendingActionStore>,
    ui: UiSlot,
    cache_dir: Option<PathBuf>,
    session_view: SessionViewSlot,
    sandbox: Option<pi_tools::Sandbox>,
}

impl std::fmt::Debug for ToolApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolApi")
            .field("cwd", &self.cwd)
            .field("has_store", &self.pending.is_some())
            .field("has_ui", &self.has_ui())
            .field("sandbox", &self.sandbox)
            .finish()
    }
}

impl ToolApi {
    /// An API working in `cwd` with no pending-action store and no user interface.
    ///
    /// ```
    /// use pi_coding_agent::custom_tools::ToolApi;
    /// use pi_coding_agent::resolve::PendingAction;
    /// use pi_agent_core::ToolResult;
    ///
    /// let api = ToolApi::new("/tmp");
    /// assert!(!api.has_ui());
    /// let action = PendingAction::new("x", "demo", |_, _| async { Ok(ToolResult::text("ok")) });
    /// let error = api.push_pending_action(action).unwrap_err();
    /// assert_eq!(error.to_string(), "Pending action store unavailable for custom tools in this runtime.");
    /// ```
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        ToolApi {
            cwd: cwd.into(),
            pending: None,
            ui: Arc::new(RwLock::new(Arc::new(NoUi))),
            cache_dir: None,
            session_view: SessionViewSlot::default(),
            sandbox: None,
        }
    }

    /// Starts every tool process, and what [`ToolApi::exec`] runs, in `sandbox` (beyond pi; `None`:
    /// with the user's full rights).
    #[must_use]
    pub fn with_sandbox(mut self, sandbox: Option<pi_tools::Sandbox>) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// The sandbox tool processes start in, if any.
    pub fn sandbox(&self) -> Option<&pi_tools::Sandbox> {
        self.sandbox.as_ref()
    }

    /// Spawns `command` in the sandbox when there is one; a sandbox that cannot be entered is
    /// the error (nothing was started).
    pub(crate) fn spawn(&self, command: &mut tokio::process::Command) -> std::io::Result<tokio::process::Child> {
        match &self.sandbox {
            Some(sandbox) => sandbox.spawn_with(|| command.spawn()).map_err(std::io::Error::other)?,
            None => command.spawn(),
        }
    }

    /// Reads the session's current state (branch, model, registry) from `slot` at every use.
    #[must_use]
    pub fn with_session_view_slot(mut self, slot: SessionViewSlot) -> Self {
        self.session_view = slot;
        self
    }

    /// The session's current state, once a session installed its view (pi's
    /// `CustomToolContext`); `None` for tools used outside a session.
    pub fn session_view(&self) -> Option<Arc<dyn SessionView>> {
        self.session_view.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Keeps what loading tools produces (pi's transpiled TypeScript, in `ts/`) under `dir`: pi
    /// uses `<agent dir>/cache`. Without it, a directory in the OS temp directory.
    #[must_use]
    pub fn with_cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }

    /// The cache directory set with [`ToolApi::with_cache_dir`].
    pub fn cache_dir(&self) -> Option<&Path> {
        self.cache_dir.as_deref()
    }

    /// Pushes pending actions onto `store`.
    #[must_use]
    pub fn with_pending_store(mut self, store: PendingActionStore) -> Self {
        self.pending = Some(store);
        self
    }

    /// Reads the user interface from `slot` at every use.
    #[must_use]
    pub fn with_ui_slot(mut self, slot: UiSlot) -> Self {
        self.ui = slot;
        self
    }

    /// The session's working directory.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The current user interface.
    pub fn ui(&self) -> Arc<dyn ToolUi> {
        self.ui.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Whether anyone answers UI calls (false in `-p` and `--mode json`).
    pub fn has_ui(&self) -> bool {
        self.ui().has_ui()
    }

    /// Stages a change for `resolve`: the session forces `resolve` and steers the reminder, exactly
    /// as for `ast_edit`. Without a store it fails with
    /// `Pending action store unavailable for custom tools in this runtime.`
    pub fn push_pending_action(&self, action: PendingAction) -> Result<(), StoreUnavailable> {
        let store = self.pending.as_ref().ok_or(StoreUnavailable)?;
        store.push(action);
        Ok(())
    }

    /// Runs `command` with `args` in the working directory, capturing its output (pi's
    /// `pi.exec`), in the sandbox when there is one. Cancellation and the timeout kill it
    /// (`killed: true`).
    pub async fn exec(&self, command: &str, args: &[String], options: ExecOptions) -> std::io::Result<ExecResult> {
        let mut command_line = tokio::process::Command::new(command);
        command_line
            .args(args)
            .current_dir(&self.cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = self.spawn(&mut command_line)?;
        let mut stdout = child.stdout.take();
        let mut stderr = child.stderr.take();
        let read_out = async {
            let mut buffer = Vec::new();
            if let Some(pipe) = stdout.as_mut() {
                let _ = pipe.read_to_end(&mut buffer).await;
            }
            buffer
        };
        let read_err = async {
            let mut buffer = Vec::new();
            if let Some(pipe) = stderr.as_mut() {
                let _ = pipe.read_to_end(&mut buffer).await;
            }
            buffer
        };
        let cancel = options.cancel.unwrap_or_default();
        let deadline = async {
            match options.timeout {
                Some(limit) => tokio::time::sleep(limit).await,
                None => std::future::pending().await,
            }
        };
        let finished = async { tokio::join!(child.wait(), read_out, read_err) };
        tokio::select! {
            (status, out, err) = finished => {
                let code = status?.code().unwrap_or(-1);
                Ok(ExecResult {
                    stdout: String::from_utf8_lossy(&out).into_owned(),
                    stderr: String::from_utf8_lossy(&err).into_owned(),
                    code,
                    killed: false,
                })
            }
            () = cancel.cancelled() => Ok(killed()),
            () = deadline => Ok(killed()),
        }
    }
}

fn killed() -> ExecResult {
    ExecResult {
        stdout: String::new(),
        stderr: String::new(),
        code: -1,
        killed: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn exec_captures_output_and_kills_on_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let api = ToolApi::new(dir.path());
        let args = vec!["-c".to_owned(), "echo out; echo err >&2; exit 3".to_owned()];
        let result = api.exec("sh", &args, ExecOptions::default()).await.unwrap();
        assert_eq!(
            result,
            ExecResult {
                stdout: "out\n".into(),
                stderr: "err\n".into(),
                code: 3,
                killed: false
            }
        );
        let slow = vec!["-c".to_owned(), "sleep 5".to_owned()];
        let options = ExecOptions {
            cancel: None,
            timeout: Some(Duration::from_millis(50)),
        };
        assert!(api.exec("sh", &slow, options).await.unwrap().killed);
    }
}
