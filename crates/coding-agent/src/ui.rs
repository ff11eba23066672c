//! What a tool may ask the person at the keyboard: pick one of several options, confirm, type a
//! line, or just be told something. The interactive mode answers with dialogs, the RPC mode
//! forwards the questions to its client (`extension_ui_request`), and print / JSON modes have no
//! one to ask ([`NoUi`]: `has_ui` is false and every question gets its "no answer").

use async_trait::async_trait;

/// How a notification is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NotifyKind {
    /// Plain information.
    #[default]
    Info,
    /// Something to look at.
    Warning,
    /// Something went wrong.
    Error,
}

impl NotifyKind {
    /// `info`, `warning` or `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            NotifyKind::Info => "info",
            NotifyKind::Warning => "warning",
            NotifyKind::Error => "error",
        }
    }

    /// Parses pi's names; anything else is `info`.
    pub fn parse(text: &str) -> Self {
        match text {
            "warning" => NotifyKind::Warning,
            "error" => NotifyKind::Error,
            _ => NotifyKind::Info,
        }
    }
}

/// The user interface a tool can use (pi's `ToolUIContext`).
#[async_trait]
pub trait ToolUi: Send + Sync {
    /// Whether anyone answers (false in `-p` and `--mode json`).
    fn has_ui(&self) -> bool;
    /// One of `options`, or `None` when dismissed.
    async fn select(&self, title: &str, options: &[String]) -> Option<String>;
    /// Yes or no; `false` when dismissed.
    async fn confirm(&self, title: &str, message: &str) -> bool;
    /// A line of text, or `None` when dismissed.
    async fn input(&self, title: &str, placeholder: Option<&str>) -> Option<String>;
    /// Shows a message; nothing to answer.
    fn notify(&self, message: &str, kind: NotifyKind);

    /// [`ToolUi::select`] that pi answers with `None` once `timeout` passed (an extension's
    /// dialog `timeout`); a user interface that shows the time left (RPC mode forwards it)
    /// overrides it. The default asks without saying so.
    async fn select_within(&self, title: &str, options: &[String], _timeout: std::time::Duration) -> Option<String> {
        self.select(title, options).await
    }

    /// [`ToolUi::confirm`] with a `timeout` (see [`ToolUi::select_within`]).
    async fn confirm_within(&self, title: &str, message: &str, _timeout: std::time::Duration) -> bool {
        self.confirm(title, message).await
    }

    /// [`ToolUi::input`] with a `timeout` (see [`ToolUi::select_within`]).
    async fn input_within(
        &self,
        title: &str,
        placeholder: Option<&str>,
        _timeout: std::time::Duration,
    ) -> Option<String> {
        self.input(title, placeholder).await
    }

    /// A multi-line text to edit (an extension's `ctx.ui.editor`), or `None` when dismissed.
    /// The default has no editor: `None`.
    async fn editor(&self, _title: &str, _prefill: Option<&str>) -> Option<String> {
        None
    }

    /// Sets (`Some`) or clears (`None`) an extension's status entry `key` (`ctx.ui.setStatus`).
    /// The default shows nothing.
    fn set_status(&self, _key: &str, _text: Option<&str>) {}

    /// Sets or clears an extension's widget `key`: lines shown above (`aboveEditor`, the default
    /// placement) or below (`belowEditor`) the editor (`ctx.ui.setWidget`). The default shows
    /// nothing.
    fn set_widget(&self, _key: &str, _lines: Option<&[String]>, _placement: Option<&str>) {}

    /// Sets the terminal's title (`ctx.ui.setTitle`). The default does nothing.
    fn set_title(&self, _title: &str) {}

    /// Puts `text` into the input editor (`ctx.ui.setEditorText`). The default does nothing.
    fn set_editor_text(&self, _text: &str) {}

    /// Sets (`Some`) or restores (`None`) the message shown while the agent works
    /// (`ctx.ui.setWorkingMessage`). The default does nothing.
    fn set_working_message(&self, _message: Option<&str>) {}
}

/// No one to ask: every question gets its "no answer" at once.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use pi_coding_agent::{NoUi, ToolUi};
/// assert!(!NoUi.has_ui());
/// assert_eq!(NoUi.select("Pick", &["a".into()]).await, None);
/// assert!(!NoUi.confirm("Sure?", "Delete it").await);
/// # });
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct NoUi;

#[async_trait]
impl ToolUi for NoUi {
    fn has_ui(&self) -> bool {
        false
    }
    async fn select(&self, _title: &str, _options: &[String]) -> Option<String> {
        None
    }
    async fn confirm(&self, _title: &str, _message: &str) -> bool {
        false
    }
    async fn input(&self, _title: &str, _placeholder: Option<&str>) -> Option<String> {
        None
    }
    fn notify(&self, _message: &str, _kind: NotifyKind) {}
}
