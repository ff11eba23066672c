//! Tools' questions in the interactive mode: [`TuiUi`] turns `select` / `confirm` / `input` into
//! requests, and [`Dialog`] shows one and sends the answer back.

use async_trait::async_trait;
use crossterm::event::KeyEvent;
use pi_tui::keys::{is_enter, is_escape, printable};
use pi_tui::{
    Component, Editor, EditorAction, Line, SelectItem, SelectList, Selection, Slot, Text, Theme, truncate_line,
    wrap_line,
};
use ratatui::style::Modifier;
use ratatui::text::Span;
use tokio::sync::{mpsc, oneshot};

use pi_coding_agent::{NotifyKind, ToolUi};

/// A question (or notice) for the screen.
#[derive(Debug)]
pub enum UiRequest {
    /// Pick one option.
    Select {
        /// The question.
        title: String,
        /// The options.
        options: Vec<String>,
        /// Where the answer goes (`None`: dismissed).
        reply: oneshot::Sender<Option<String>>,
    },
    /// Yes or no.
    Confirm {
        /// The question.
        title: String,
        /// Details.
        message: String,
        /// Where the answer goes.
        reply: oneshot::Sender<bool>,
    },
    /// A line of text.
    Input {
        /// The question.
        title: String,
        /// Shown while empty.
        placeholder: Option<String>,
        /// Where the answer goes (`None`: dismissed).
        reply: oneshot::Sender<Option<String>>,
    },
    /// A message to show.
    Notify {
        /// The message.
        message: String,
        /// How.
        kind: NotifyKind,
    },
}

/// The interactive mode as the tools' user interface.
#[derive(Debug, Clone)]
pub struct TuiUi {
    requests: mpsc::UnboundedSender<UiRequest>,
}

impl TuiUi {
    /// A UI sending its requests to `requests` (the screen's loop).
    pub fn new(requests: mpsc::UnboundedSender<UiRequest>) -> Self {
        TuiUi { requests }
    }
}

#[async_trait]
impl ToolUi for TuiUi {
    fn has_ui(&self) -> bool {
        true
    }

    async fn select(&self, title: &str, options: &[String]) -> Option<String> {
        let (reply, answer) = oneshot::channel();
        let request = UiRequest::Select {
            title: title.to_owned(),
            options: options.to_vec(),
            reply,
        };
        self.requests.send(request).ok()?;
        answer.await.ok().flatten()
    }

    async fn confirm(&self, title: &str, message: &str) -> bool {
        let (reply, answer) = oneshot::channel();
        let request = UiRequest::Confirm {
            title: title.to_owned(),
            message: message.to_owned(),
            reply,
        };
        if self.requests.send(request).is_err() {
            return false;
        }
        answer.await.unwrap_or(false)
    }

    async fn input(&self, title: &str, placeholder: Option<&str>) -> Option<String> {
        let (reply, answer) = oneshot::channel();
        let request = UiRequest::Input {
            title: title.to_owned(),
            placeholder: placeholder.map(str::to_owned),
            reply,
        };
        self.requests.send(request).ok()?;
        answer.await.ok().flatten()
    }

    fn notify(&self, message: &str, kind: NotifyKind) {
        let _ = self.requests.send(UiRequest::Notify {
            message: message.to_owned(),
            kind,
        });
    }
}

/// A question on screen, with the widget answering it.
#[derive(Debug)]
pub(super) struct Dialog {
    title: String,
    message: Option<String>,
    kind: DialogKind,
}

#[derive(Debug)]
enum DialogKind {
    Select {
        list: SelectList,
        options: Vec<String>,
        reply: Option<oneshot::Sender<Option<String>>>,
    },
    Confirm {
        list: SelectList,
        reply: Option<oneshot::Sender<bool>>,
    },
    Input {
        editor: Editor,
        reply: Option<oneshot::Sender<Option<String>>>,
    },
}

impl Dialog {
    /// The dialog for `request`; `Err` gives back a notice, which needs none.
    pub(super) fn from_request(request: UiRequest, theme: &Theme) -> Result<Dialog, (String, NotifyKind)> {
        Ok(match request {
            UiRequest::Select { title, options, reply } => Dialog {
                title,
                message: None,
                kind: DialogKind::Select {
                    list: SelectList::new(options.iter().map(|o| SelectItem::new(o.clone())).collect(), theme)
                        .with_max_visible(10),
                    options,
                    reply: Some(reply),
                },
            },
            UiRequest::Confirm { title, message, reply } => Dialog {
                title,
                message: Some(message).filter(|m| !m.is_empty()),
                kind: DialogKind::Confirm {
                    list: SelectList::new(vec![SelectItem::new("Yes"), SelectItem::new("No")], theme),
                    reply: Some(reply),
                },
            },
            UiRequest::Input {
                title,
                placeholder,
                reply,
            } => {
                let mut editor = Editor::new(theme);
                if let Some(placeholder) = placeholder {
                    editor = editor.with_placeholder(placeholder);
                }
                Dialog {
                    title,
                    message: None,
                    kind: DialogKind::Input {
                        editor,
                        reply: Some(reply),
                    },
                }
            }
            UiRequest::Notify { message, kind } => return Err((message, kind)),
        })
    }

    /// Whether whoever asked no longer waits for the answer (a login's paste field once the
    /// browser's redirect came): the dialog can go unanswered.
    pub(super) fn is_abandoned(&self) -> bool {
        match &self.kind {
            DialogKind::Select { reply, .. } | DialogKind::Input { reply, .. } => {
                reply.as_ref().is_some_and(oneshot::Sender::is_closed)
            }
            DialogKind::Confirm { reply, .. } => reply.as_ref().is_some_and(oneshot::Sender::is_closed),
        }
    }

    /// Handles a key; `true` when the dialog is answered (or dismissed) and can go.
    pub(super) fn handle_key(&mut self, key: KeyEvent) -> bool {
        match &mut self.kind {
            DialogKind::Select { list, options, reply } => match list.handle_key(key) {
                Selection::Chosen(index) => {
                    if let Some(reply) = reply.take() {
                        let _ = reply.send(options.get(index).cloned());
                    }
                    true
                }
                Selection::Cancelled => {
                    if let Some(reply) = reply.take() {
                        let _ = reply.send(None);
                    }
                    true
                }
                Selection::Changed | Selection::Ignored => false,
            },
            DialogKind::Confirm { list, reply } => {
                let answer = match list.handle_key(key) {
                    Selection::Chosen(index) => Some(index == 0),
                    Selection::Cancelled => Some(false),
                    Selection::Changed | Selection::Ignored => match printable(&key) {
                        Some('y' | 'Y') => Some(true),
                        Some('n' | 'N') => Some(false),
                        _ => None,
                    },
                };
                match answer {
                    Some(answer) => {
                        if let Some(reply) = reply.take() {
                            let _ = reply.send(answer);
                        }
                        true
                    }
                    None => false,
                }
            }
            DialogKind::Input { editor, reply } => {
                if is_escape(&key) {
                    if let Some(reply) = reply.take() {
                        let _ = reply.send(None);
                    }
                    return true;
                }
                if is_enter(&key) {
                    // A large paste is a marker in the editor: the answer is what was pasted.
                    let text = editor.expanded_text();
                    editor.clear();
                    if let Some(reply) = reply.take() {
                        let _ = reply.send(Some(text));
                    }
                    return true;
                }
                match editor.handle_key(key) {
                    EditorAction::Interrupt | EditorAction::Exit => {
                        if let Some(reply) = reply.take() {
                            let _ = reply.send(None);
                        }
                        true
                    }
                    _ => false,
                }
            }
        }
    }

    /// Pastes into an input dialog.
    pub(super) fn handle_paste(&mut self, text: &str) {
        if let DialogKind::Input { editor, .. } = &mut self.kind {
            editor.handle_paste(text);
        }
    }

    /// The dialog's lines and, for an input, where its cursor is.
    pub(super) fn render_with_cursor(&self, width: u16, theme: &Theme) -> (Vec<Line>, Option<(u16, u16)>) {
        let inner = width.saturating_sub(2).max(1);
        let mut lines = vec![Line::from(theme.fg(Slot::Accent, "─".repeat(usize::from(width))))];
        let title = Line::from(Span::styled(
            self.title.clone(),
            theme.style(Slot::Accent).add_modifier(Modifier::BOLD),
        ));
        lines.extend(wrap_line(&title, inner).into_iter().map(indent));
        if let Some(message) = &self.message {
            lines.extend(Text::new(message.clone()).render(inner).into_iter().map(indent));
        }
        let (hint, cursor) = match &self.kind {
            DialogKind::Select { list, .. } => {
                lines.extend(list.render(inner).into_iter().map(indent));
                ("↑↓ select · enter choose · type to filter · esc cancel", None)
            }
            DialogKind::Confirm { list, .. } => {
                lines.extend(list.render(inner).into_iter().map(indent));
                ("y yes · n no · enter choose · esc no", None)
            }
            DialogKind::Input { editor, .. } => {
                let (rows, (row, col)) = editor.render_with_cursor(inner);
                let top = lines.len() as u16;
                lines.extend(rows.into_iter().map(indent));
                ("enter submit · esc cancel", Some((top + row, col + 1)))
            }
        };
        lines.push(indent(Line::from(theme.fg(Slot::Dim, hint))));
        lines.push(Line::from(theme.fg(Slot::Accent, "─".repeat(usize::from(width)))));
        let lines = lines.into_iter().map(|l| truncate_line(&l, width, "…")).collect();
        (lines, cursor)
    }
}

impl Drop for Dialog {
    /// A dialog dropped unanswered (the session ended) answers "no" so the tool goes on.
    fn drop(&mut self) {
        match &mut self.kind {
            DialogKind::Select { reply, .. } | DialogKind::Input { reply, .. } => {
                if let Some(reply) = reply.take() {
                    let _ = reply.send(None);
                }
            }
            DialogKind::Confirm { reply, .. } => {
                if let Some(reply) = reply.take() {
                    let _ = reply.send(false);
                }
            }
        }
    }
}

fn indent(mut line: Line) -> Line {
    line.spans.insert(0, Span::raw(" "));
    line
}
