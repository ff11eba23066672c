//! The tools' user interface in print and JSON modes: nobody answers (`hasUI: false`, every question
//! gets its "no answer" at once, as [`NoUi`]), but warnings and errors — a custom tool whose
//! `onSession` failed, a failing `session` request of a process tool — go to stderr as `pi: <message>`,
//! like the load errors of custom tools. Information notices are dropped, as pi drops them without a UI.

use crate::io::write_redacted;
use async_trait::async_trait;
use pi_coding_agent::{NoUi, NotifyKind, ToolUi};

use super::print::Output;

/// [`NoUi`] that writes warnings and errors to stderr.
pub(crate) struct StderrUi {
    stderr: Output,
}

impl StderrUi {
    /// Writes to `stderr`.
    pub(crate) fn new(stderr: Output) -> Self {
        StderrUi { stderr }
    }
}

#[async_trait]
impl ToolUi for StderrUi {
    fn has_ui(&self) -> bool {
        NoUi.has_ui()
    }
    async fn select(&self, title: &str, options: &[String]) -> Option<String> {
        NoUi.select(title, options).await
    }
    async fn confirm(&self, title: &str, message: &str) -> bool {
        NoUi.confirm(title, message).await
    }
    async fn input(&self, title: &str, placeholder: Option<&str>) -> Option<String> {
        NoUi.input(title, placeholder).await
    }
    fn notify(&self, message: &str, kind: NotifyKind) {
        if kind == NotifyKind::Info {
            return;
        }
        write_redacted(&self.stderr, &format!("pi: {message}"), true);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    #[tokio::test]
    async fn warnings_and_errors_reach_stderr_and_nobody_answers() {
        let buffer = Arc::new(Mutex::new(Vec::<u8>::new()));
        let ui = StderrUi::new(buffer.clone());
        assert!(!ui.has_ui());
        assert_eq!(ui.select("Pick", &["a".to_owned()]).await, None);
        assert!(!ui.confirm("Sure?", "Really?").await);
        assert_eq!(ui.input("Name", None).await, None);
        ui.notify("just so you know", NotifyKind::Info);
        ui.notify("Custom tool todo: session event failed: boom", NotifyKind::Warning);
        ui.notify("it broke", NotifyKind::Error);
        let text = String::from_utf8(buffer.lock().unwrap().clone()).unwrap();
        assert_eq!(text, "pi: Custom tool todo: session event failed: boom\npi: it broke\n");
    }
}
