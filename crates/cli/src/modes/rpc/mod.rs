//! RPC mode (`--mode rpc`): pi's JSONL command protocol on stdin / stdout, for IDEs and other
//! programs (`docs/rpc.md`).
//!
//! Each stdin line is one command `{"type": "<command>", "id"?: …, …}` (LF-terminated; a trailing
//! CR is dropped). Each command gets one response line
//! `{"type":"response","command":…,"success":…,"data"?:…,"error"?:…,"id"?:…}` echoing its `id`;
//! a line that is not JSON gets `{"type":"response","command":"parse","success":false,"error":
//! "Failed to parse command: …"}`. The session's events go out as they happen, interleaved with
//! responses. Tools' questions use the extension-UI sub-protocol ([`ui`]). When stdin ends, the
//! running prompt is finished and the process exits.

mod commands;
mod state;
pub mod ui;
mod writer;

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::print::Output;
use pi_coding_agent::App;
use pi_coding_agent::SessionEvent;
use pi_coding_agent::extensions::Extensions;

pub use ui::{RpcUi, extension_error_line};
pub use writer::Writer;

use state::Rpc;

/// The JSON line of an event in RPC mode: the same line as in JSON mode (pi writes its events
/// the same way in both).
pub fn event_line(event: &SessionEvent) -> String {
    super::json::event_line(event)
}

/// Reads stdin lines on a blocking thread.
fn stdin_lines() -> mpsc::UnboundedReceiver<String> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        let stdin = std::io::stdin();
        let mut reader = stdin.lock();
        let mut line = Vec::new();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let text = String::from_utf8_lossy(&line);
                    let text = text.strip_suffix('\n').unwrap_or(&text);
                    let text = text.strip_suffix('\r').unwrap_or(text);
                    if tx.send(text.to_owned()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    rx
}

/// Runs the protocol on the process's stdin until it ends, writing through `ui`'s writer (see
/// [`install_ui`]); returns the exit code.
pub async fn run_rpc(app: App, ui: RpcUi) -> i32 {
    run_rpc_with(app, ui, stdin_lines()).await
}

/// [`run_rpc`] with extensions: `prompt` runs their commands (`/name args`), `get_commands`
/// lists them.
pub async fn run_rpc_extended(app: App, ui: RpcUi, extensions: Arc<Extensions>) -> i32 {
    run_rpc_lines(app, ui, extensions, stdin_lines()).await
}

/// Installs the RPC client as the session's user interface, before custom tools load (so they see
/// `hasUI: true`); the returned UI is the one [`run_rpc_with`] answers.
pub fn install_ui(app: &App, stdout: Output) -> RpcUi {
    install_session_ui(app.session(), stdout)
}

/// [`install_ui`] for a session without its [`App`] yet.
pub fn install_session_ui(session: &pi_coding_agent::AgentSession, stdout: Output) -> RpcUi {
    let ui = RpcUi::for_stdout(stdout);
    session.set_ui(Arc::new(ui.clone()));
    ui
}

impl RpcUi {
    /// A user interface that asks its questions as RPC lines on `stdout`.
    pub fn for_stdout(stdout: Output) -> Self {
        RpcUi::new(Writer::new(stdout))
    }
}

/// Runs the protocol with `ui` (from [`install_ui`]) reading commands from `lines`.
pub async fn run_rpc_with(app: App, ui: RpcUi, lines: mpsc::UnboundedReceiver<String>) -> i32 {
    run_rpc_lines(app, ui, Arc::new(Extensions::none()), lines).await
}

async fn run_rpc_lines(
    app: App,
    ui: RpcUi,
    extensions: Arc<Extensions>,
    mut lines: mpsc::UnboundedReceiver<String>,
) -> i32 {
    let writer = ui.writer().clone();
    let events = writer.clone();
    let running = Arc::new(AtomicBool::new(false));
    let ended = running.clone();
    let subscription = app.session().subscribe(move |event| {
        // Cleared before the line goes out: a client answers `agent_end` with its next prompt at
        // once, and that prompt must find the run over.
        match event {
            SessionEvent::Agent(pi_agent_core::AgentEvent::AgentEnd { .. }) => {
                ended.store(false, std::sync::atomic::Ordering::SeqCst);
            }
            // A run the session starts itself (a retry, or the retry after an overflow
            // compaction) streams again (pi's `isStreaming`).
            SessionEvent::Agent(pi_agent_core::AgentEvent::AgentStart) => {
                ended.store(true, std::sync::atomic::Ordering::SeqCst);
            }
            _ => {}
        }
        events.text(&event_line(event));
    });
    let rpc = Arc::new(Rpc {
        app,
        extensions,
        writer,
        ui,
        running,
        runs: Mutex::new(Vec::new()),
        bash: Mutex::new(Vec::new()),
        bash_ids: std::sync::atomic::AtomicU64::new(0),
        leave: CancellationToken::new(),
    });
    loop {
        let line = tokio::select! {
            line = lines.recv() => line,
            // `ctx.shutdown()`, then a response (`Rpc::respond`): pi exits, a prompt's run
            // included.
            () = rpc.leave.cancelled() => {
                rpc.app.session().abort().await;
                None
            }
        };
        let Some(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(&line) {
            Ok(value) if value.get("type").and_then(Value::as_str) == Some("extension_ui_response") => {
                rpc.ui.answer(&value);
            }
            Ok(Value::Object(command)) => commands::dispatch(&rpc, Value::Object(command)).await,
            Ok(_) => rpc.respond(
                "parse",
                None,
                Err("Failed to parse command: expected a JSON object".to_owned()),
            ),
            Err(error) => rpc.respond("parse", None, Err(format!("Failed to parse command: {error}"))),
        }
    }
    // stdin ended: nobody can answer a dialog any more; let the prompts that were sent finish,
    // then leave.
    rpc.ui.close();
    let runs: Vec<_> = std::mem::take(&mut *rpc.runs.lock().unwrap_or_else(|p| p.into_inner()));
    for run in runs {
        let _ = run.await;
    }
    rpc.app.session().agent().wait_for_idle().await;
    subscription.unsubscribe();
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_agent_core::faux::{FauxModel, faux_assistant_text};
    use std::io::Write;

    /// Stdout of a client that sends its next prompt the moment it reads `agent_end`, and a slow
    /// pipe: the write of that line takes a while.
    struct EagerClient {
        out: Arc<Mutex<Vec<u8>>>,
        /// Dropped once the prompt is sent, so that the command stream can end.
        commands: Option<mpsc::UnboundedSender<String>>,
    }

    impl Write for EagerClient {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.out.lock().unwrap().extend_from_slice(bytes);
            let text = String::from_utf8_lossy(bytes);
            if text.contains(r#""type":"agent_end""#)
                && let Some(commands) = self.commands.take()
            {
                let _ = commands.send(r#"{"id":"2","type":"prompt","message":"next"}"#.to_owned());
                std::thread::sleep(std::time::Duration::from_millis(300));
            }
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_prompt_sent_as_soon_as_agent_end_is_read_is_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let faux = FauxModel::new();
        faux.set_responses([faux_assistant_text("first"), faux_assistant_text("second")]);
        let options = pi_coding_agent::SessionOptions::new(dir.path(), faux.model()).stream_fn(faux.stream_fn());
        let app = App::new(
            pi_coding_agent::AgentSession::new(options).unwrap(),
            pi_session_store::SessionManager::in_memory(dir.path()),
            Arc::new(pi_ai::ModelRegistry::builtin()),
            None,
            Arc::new(|warning| panic!("{warning}")),
        );
        let (tx, rx) = mpsc::unbounded_channel();
        let out: Arc<Mutex<Vec<u8>>> = Arc::default();
        let stdout: Output = Arc::new(Mutex::new(EagerClient {
            out: out.clone(),
            commands: Some(tx.clone()),
        }));
        let ui = install_ui(&app, stdout);
        tx.send(r#"{"id":"1","type":"prompt","message":"first"}"#.to_owned())
            .unwrap();
        let closer = tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_secs(2)).await;
            drop(tx);
        });
        assert_eq!(run_rpc_with(app, ui, rx).await, 0);
        closer.await.unwrap();
        let text = String::from_utf8(out.lock().unwrap().clone()).unwrap();
        assert!(
            text.contains(r#"{"id":"2","type":"response","command":"prompt","success":true}"#),
            "{text}"
        );
        assert_eq!(faux.call_count(), 2, "{text}");
    }
}
