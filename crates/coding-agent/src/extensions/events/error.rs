//! [`ExtensionError`]: why a listener gave no answer.

/// Why an extension's listener gave no answer. The event goes on as if it had answered nothing
/// (but `tool_call`, which pi blocks); the error is reported through
/// [`ExtensionRunner::report`](super::ExtensionRunner::report) as pi words it.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_pis() {
        let error = ExtensionError::Handler {
            extension: "/x/gate.ts".into(),
            event: "tool_call".into(),
            message: "boom".into(),
        };
        assert_eq!(
            error.to_string(),
            "Extension \"/x/gate.ts\" error in tool_call handler: boom"
        );
        assert_eq!(error.message(), "boom");
        let timeout = ExtensionError::Timeout {
            extension: "/x/a.ts".into(),
            event: "context".into(),
        };
        assert_eq!(
            timeout.to_string(),
            "Extension \"/x/a.ts\" error in context handler: timed out"
        );
    }
}
