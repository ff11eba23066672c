//! The events extensions listen to (pi 0.73.1's `pi.on(...)`), the seam their processes plug
//! into ([`ExtensionRunner`], [`EventListener`]) and how each event's results are applied.
//!
//! * [`Extensions`]: the loaded extensions as the session and the app see them — one method per
//!   kind of event, each chaining the listeners' results as pi's runner does (a transform feeds
//!   the next listener; `tool_call` stops at the first block; `session_before_*` stops at the
//!   first cancel; `user_bash` at the first result).
//! * Nothing is built when nobody listens: every method asks
//!   [`ExtensionRunner::listeners`] first (one lookup) and returns at once when it is empty; without
//!   a runner the session installs no hook at all.
//! * A listener that fails (throws, times out, its process dies) is reported through
//!   [`ExtensionRunner::report`] and counts as having answered nothing — except for `tool_call`,
//!   where pi blocks the call with the error's text (a permission gate that crashes must not let
//!   the call through).
//!
//! The events and where they are emitted: `docs/extension-events.md`.

mod agent;
mod emit;
#[cfg(test)]
pub(crate) mod emit_tests;
mod error;
mod queue;

pub(crate) use agent::{AgentEvents, install_agent_hooks};
pub(crate) use emit::custom_message;
pub use emit::{
    AgentStartOutcome, Extensions, InputOutcome, InputSource, ResourcePath, ResourcePaths, ToolCallOutcome,
    ToolResultPatch, UserBashResult,
};
pub use error::ExtensionError;
pub(crate) use queue::EventQueue;

use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Who handles extension events: the loaded extensions (ext-runtime implements it over processes).
#[async_trait]
pub trait ExtensionRunner: Send + Sync {
    /// The listeners of `event_type`, in load order (empty: pi skips building the payload).
    fn listeners(&self, event_type: &str) -> Vec<Arc<dyn EventListener>>;
    /// Whether anyone listens to `event_type`: asked for every agent event (each streamed
    /// `message_update` included), so a runner answers it without building listeners.
    fn listens(&self, event_type: &str) -> bool {
        !self.listeners(event_type).is_empty()
    }
    /// Reports a listener's failure as a warning (`Extension "<path>" error in <type> handler: <message>`).
    fn report(&self, error: ExtensionError);
}

/// One extension's (or one process's) handler of one event type.
#[async_trait]
pub trait EventListener: Send + Sync {
    /// The extension (path) — for error messages.
    fn name(&self) -> &str;
    /// Handles `event` (pi's JSON, with `type`); `Ok(None)` = no result.
    async fn handle(&self, event: &Value, cancel: &CancellationToken) -> Result<Option<Value>, ExtensionError>;
}

/// Where the session keeps its runner; hooks read it when they run, so a runner set or replaced
/// later (extensions reloaded) takes effect at once.
pub(crate) type ExtensionSlot = Arc<RwLock<Option<Extensions>>>;

/// The runner in `slot`, if any.
pub(crate) fn current(slot: &ExtensionSlot) -> Option<Extensions> {
    slot.read().unwrap_or_else(|p| p.into_inner()).clone()
}
