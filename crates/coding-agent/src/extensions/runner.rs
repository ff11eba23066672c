//! The seam between the extensions and the places pi emits events: [`ExtensionRunner`] (who
//! handles an event type, and how a failure is reported) and [`EventListener`] (one process's
//! handlers of one event type), with [`ExtensionError`].
//!
//! A copy, word for word, of the traits `docs/extensions.md` ("The extension protocol", "Rust
//! seam") gives the events module; the emit points and the chaining of results live there. The
//! implementation over the loaded processes is [`super::Extensions`].

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Why an extension's handler gave no result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExtensionError {
    /// The handler threw (the process answered with an error).
    #[error("Extension \"{extension}\" error in {event} handler: {message}")]
    Handler {
        /// The extension's path.
        extension: String,
        /// The event type.
        event: String,
        /// What it threw.
        message: String,
    },
    /// The handler did not answer within the process's `timeout`; the process was restarted.
    #[error("Extension \"{extension}\" error in {event} handler: timed out")]
    Timeout {
        /// The extension's path.
        extension: String,
        /// The event type.
        event: String,
    },
    /// The process failed (exited, wrote something that is no JSON) or could not be restarted.
    #[error("Extension \"{extension}\" error: {message}")]
    Process {
        /// The extension's path.
        extension: String,
        /// What happened.
        message: String,
    },
}

impl ExtensionError {
    /// The extension's path (`command:<name>` for a command, as pi names it).
    pub fn extension(&self) -> &str {
        match self {
            ExtensionError::Handler { extension, .. }
            | ExtensionError::Timeout { extension, .. }
            | ExtensionError::Process { extension, .. } => extension,
        }
    }

    /// The event type (`command` for a command), when a handler failed.
    pub fn event(&self) -> Option<&str> {
        match self {
            ExtensionError::Handler { event, .. } | ExtensionError::Timeout { event, .. } => Some(event),
            ExtensionError::Process { .. } => None,
        }
    }

    /// What went wrong, without the extension's name.
    pub fn message(&self) -> String {
        match self {
            ExtensionError::Handler { message, .. } | ExtensionError::Process { message, .. } => message.clone(),
            ExtensionError::Timeout { .. } => "timed out".to_owned(),
        }
    }
}

/// Who handles extension events: the loaded extensions (ext-runtime implements it over processes).
#[async_trait]
pub trait ExtensionRunner: Send + Sync {
    /// The listeners of `event_type`, in load order (empty: pi skips building the payload).
    fn listeners(&self, event_type: &str) -> Vec<Arc<dyn EventListener>>;
    /// Reports a listener's failure as a warning (`Extension "<path>" error in <type> handler: <message>`).
    fn report(&self, error: ExtensionError);
}

/// One process's handlers of one event type.
#[async_trait]
pub trait EventListener: Send + Sync {
    /// The extension (path) — for error messages.
    fn name(&self) -> &str;
    /// Handles `event` (pi's JSON, with `type`); `Ok(None)` = no result.
    async fn handle(&self, event: &Value, cancel: &CancellationToken) -> Result<Option<Value>, ExtensionError>;
}
