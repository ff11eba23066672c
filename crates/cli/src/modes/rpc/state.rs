//! What the RPC loop and its command handlers share: the [`Rpc`] state.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use pi_coding_agent::App;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::ui::RpcUi;
use super::writer::Writer;

/// State shared by the command handlers.
pub(crate) struct Rpc {
    pub(crate) app: App,
    /// The loaded extensions: their commands run from `prompt`.
    pub(crate) extensions: Arc<pi_coding_agent::extensions::Extensions>,
    pub(crate) writer: Writer,
    pub(crate) ui: RpcUi,
    /// A prompt's run is active: set when a prompt is accepted (before its run is spawned, so two
    /// prompts in a row see it), cleared by the run's `agent_end`.
    pub(crate) running: Arc<AtomicBool>,
    pub(crate) runs: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// Cancel tokens of the running `bash` commands (`abort_bash` stops them all), by a number
    /// of their own so each removes just its token when it ends.
    pub(crate) bash: Mutex<Vec<(u64, CancellationToken)>>,
    /// The next `bash` command's number.
    pub(crate) bash_ids: std::sync::atomic::AtomicU64,
    /// Cancelled by the first response written after an extension called `ctx.shutdown()`: pi
    /// ends once it answered the command it was handling.
    pub(crate) leave: CancellationToken,
}

impl Rpc {
    /// Writes a response: `{"id"?, "type":"response", "command", "success", "data"? | "error"}`,
    /// keys in pi's order.
    pub(crate) fn respond(&self, command: &str, id: Option<&Value>, result: Result<Option<Value>, String>) {
        let mut response = serde_json::Map::new();
        if let Some(id) = id {
            response.insert("id".into(), id.clone());
        }
        let mut response = Value::Object(response);
        response["type"] = "response".into();
        response["command"] = command.into();
        match result {
            Ok(data) => {
                response["success"] = true.into();
                if let Some(data) = data {
                    response["data"] = data;
                }
            }
            Err(error) => {
                response["success"] = false.into();
                response["error"] = error.into();
            }
        }
        self.writer.line(&response);
        if self.extensions.shutdown_requested() {
            self.leave.cancel();
        }
    }
}
