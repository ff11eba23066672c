//! [`ExtensionError`]: why a listener gave no answer.

/// Why an extension's listener gave no answer. The event goes on as if it had answered nothing
/// (but `tool_call`, which pi blocks); the error is reported through
/// [`ExtensionRunner::report`](super::ExtensionRunner::report) as pi words it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExtensionError {
    /// The handler threw (the process answered the `event` with an error).
    #[error("Extension \"{extension}\" error in {event} handler: {message}")]
    Handler {
        /// The extension's path.
        extension: String,
        /// The event type.
        event: String,
        /// What the handler threw.
        message: String,
    },
    /// The handler did not answer within the process's timeout.
    #[error("Extension \"{extension}\" error in {event} handler: timed out")]
    Timeout {
        /// The extension's path.
        extension: String,
        /// The event type.
        event: String,
    },
    /// The extension's process failed (exited, closed its pipes, broke the protocol).
    #[error("Extension \"{extension}\" error: {message}")]
    Process {
        /// The extension's path.
        extension: String,
        /// What went wrong.
        message: String,
    },
}

impl ExtensionError {
    /// What the handler said, without the extension and the event (pi's `err.message`: the text a
    /// blocked tool call's result carries).
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
