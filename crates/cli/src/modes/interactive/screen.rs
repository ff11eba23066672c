//! The interactive screen: everything that is on the terminal, as state, without the terminal.
//!
//! [`Screen`] takes the session's events, the keys and the tools' questions, and answers with
//! [`Action`]s for the loop to carry out. It draws two things: lines to commit (finished items, in
//! order, printed once into the scrollback: [`Screen::take_commit`]) and the live region redrawn
//! below them ([`Screen::render_live`]): the items still changing, the loader, queued messages,
//! the pending-preview banner, a dialog or picker, the editor and the footer. Being pure, it is
//! what the snapshot tests render.

use std::collections::VecDeque;

use crossterm::event::{KeyCode, KeyEvent};
use pi_tui::keys::{is_alt, is_press};
use pi_tui::{
    Component, Editor, EditorAction, Line, Loader, SelectItem, SelectList, Selection, Slot, Theme, truncate_line,
    wrap_line,
};
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

use super::autocomplete::{CommandEntry, FileIndex, Suggestion};
use super::clipboard::Clipboard;
use super::commands::{self, SlashCommand};
use super::dialogs::{Dialog, UiRequest};
use super::footer::{self, FooterInfo};
use super::images::InlineImages;
use super::keybindings::{AppAction, DoubleEscape, Keybindings};
use super::render::{RenderContext, Renderers, render_item};
use super::transcript::{Item, NoticeKind, Transcript};
use pi_coding_agent::NotifyKind;
use pi_coding_agent::SessionEvent;
use pi_coding_agent::resolve::ResolveAction;

// The editor's completion menu and the application's keys: more methods of `Screen`.
#[path = "screen_input.rs"]
mod input;

/// The reason recorded when the user resolves a preview from the keyboard without giving one.
pub(super) const USER_REASON: &str = "Decided by the user.";

/// What the user asked for; the loop carries it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Enter while idle: send a message.
    Prompt(String),
    /// Enter while a run streams: steer it.
    Steer(String),
    /// Alt+Enter while a run streams: a follow-up for when it ends.
    FollowUp(String),
    /// Esc while a run streams.
    Abort,
    /// Alt+Up while messages are queued: take them out of the agent's steering and follow-up
    /// queues and give them to [`Screen::restore_queued`].
    RestoreQueued,
    /// Alt+Y / Alt+N, `/apply`, `/discard`: resolve the newest pending preview.
    Resolve {
        /// Apply or discard.
        action: ResolveAction,
        /// Why.
        reason: String,
    },
    /// A slash command.
    Command(SlashCommand),
    /// An item chosen in a picker.
    Pick {
        /// Which picker.
        kind: PickerKind,
        /// The chosen item's id (a model `provider/id`, a session file, an entry id).
        id: String,
    },
    /// Ctrl+D on an empty editor, Ctrl+C twice, `/quit`.
    Exit,
    /// Ctrl+V (pi's `app.clipboard.pasteImage`): paste the clipboard's image as a file path.
    PasteImage,
    /// Ctrl+P / Shift+Ctrl+P: the next / previous model (the scoped ones, else those with
    /// credentials).
    CycleModel {
        /// Forward.
        forward: bool,
    },
    /// Shift+Tab: the model's next thinking level.
    CycleThinking,
    /// `!command` / `!!command`: run it in the shell.
    Bash {
        /// The command.
        command: String,
        /// `!!`: the output stays out of the model's context.
        exclude: bool,
    },
    /// Esc while a `!command` runs.
    AbortBash,
    /// Ctrl+G: edit this text in `$VISUAL` / `$EDITOR`.
    ExternalEditor(String),
    /// Ctrl+Z: suspend to the background.
    Suspend,
    /// Tab on a path: list the directory (off the runtime) and give the result to
    /// `Screen::show_suggestions`.
    CompletePath {
        /// The path token before the cursor.
        prefix: String,
        /// The editor's text when Tab was pressed (a reply for other text is dropped).
        text: String,
    },
    /// An extension command's arguments are being typed: ask its `getArgumentCompletions` and
    /// give the result to `Screen::show_suggestions`.
    CompleteArguments {
        /// The command's invocation name.
        command: String,
        /// The text after `/command `.
        prefix: String,
        /// The editor's text then.
        text: String,
    },
}

/// What a picker chooses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickerKind {
    /// `/model`.
    Model,
    /// `/resume`.
    Resume,
    /// `/tree`.
    Tree,
    /// `/fork`.
    Fork,
    /// `/tree`'s "Summarize branch?" after an entry was chosen.
    TreeSummary,
}

/// The completion menu under the editor (pi's autocomplete list).
#[derive(Debug)]
struct Menu {
    list: SelectList,
    items: Vec<Suggestion>,
    prefix: String,
}

/// What the `/` menu, `@` search and unknown-command check know.
#[derive(Debug, Default)]
struct Completion {
    commands: Vec<CommandEntry>,
    files: Option<FileIndex>,
    menu: Option<Menu>,
}

#[derive(Debug)]
struct Picker {
    kind: PickerKind,
    list: SelectList,
    ids: Vec<String>,
}

/// A message waiting to reach the model.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Queued {
    Steer(String),
    FollowUp(String),
}

impl Queued {
    fn text(&self) -> &str {
        match self {
            Queued::Steer(text) | Queued::FollowUp(text) => text,
        }
    }
}

/// The interactive screen's state: the transcript, the editor, the footer, an open dialog or
/// picker; it draws lines and nothing else (the loop in `run_with_terminal` does the I/O).
pub struct Screen {
    theme: Theme,
    transcript: Transcript,
    editor: Editor,
    dialogs: VecDeque<Dialog>,
    picker: Option<Picker>,
    footer: Option<FooterInfo>,
    pending: Option<String>,
    running: bool,
    loader: Loader,
    queued: Vec<Queued>,
    expanded: bool,
    renderers: Renderers,
    exit_armed: bool,
    /// Ctrl+O was pressed: the whole transcript is to be drawn again ([`Screen::wants_redraw`]).
    redraw: bool,
    /// A retry's wait in progress: its loader counts down instead of the working one.
    retry: Option<RetryWait>,
    /// Sequences for the terminal itself (OSC 52 from `/copy`), written before the next frame.
    terminal_output: String,
    /// How tool results' images are shown.
    images: InlineImages,
    /// Where Ctrl+V reads an image from.
    clipboard: Clipboard,
    completion: Completion,
    keybindings: Keybindings,
    double_escape: DoubleEscape,
    /// When Esc was last pressed on an empty editor (a second within 500 ms: `doubleEscapeAction`).
    last_escape: Option<std::time::Instant>,
    hide_thinking: bool,
    bash_running: bool,
}

/// The wait before an automatic retry, as pi shows it.
struct RetryWait {
    attempt: u32,
    max_attempts: u32,
    delay: std::time::Duration,
}

impl RetryWait {
    /// pi's `Retrying (1/3) in 2s... (escape to cancel)`, the seconds left rounded up.
    fn message(&self, elapsed: std::time::Duration) -> String {
        let left = self.delay.saturating_sub(elapsed).as_millis().div_ceil(1000);
        format!(
            "Retrying ({}/{}) in {left}s... (escape to cancel)",
            self.attempt, self.max_attempts
        )
    }
}

impl Screen {
    /// An empty screen.
    pub fn new(theme: Theme) -> Self {
        Screen {
            editor: Editor::new(&theme).with_max_rows(10),
            loader: Loader::new("Working…", &theme),
            theme,
            transcript: Transcript::new(),
            dialogs: VecDeque::new(),
            picker: None,
            footer: None,
            pending: None,
            running: false,
            queued: Vec::new(),
            expanded: false,
            renderers: Renderers::new(),
            exit_armed: false,
            redraw: false,
            retry: None,
            terminal_output: String::new(),
            images: InlineImages::detect(),
            clipboard: Clipboard::system(),
            completion: Completion {
                commands: commands::builtin_commands(),
                ..Completion::default()
            },
            keybindings: Keybindings::default(),
            double_escape: DoubleEscape::default(),
            last_escape: None,
            hide_thinking: false,
            bash_running: false,
        }
    }

    /// Queues a sequence for the terminal itself (not shown: e.g. OSC 52, the clipboard).
    pub fn send_to_terminal(&mut self, sequence: &str) {
        self.terminal_output.push_str(sequence);
    }

    /// The sequences queued by [`Screen::send_to_terminal`], once.
    pub fn take_terminal_output(&mut self) -> String {
        std::mem::take(&mut self.terminal_output)
    }

    /// Where Ctrl+V reads an image from.
    pub fn set_clipboard(&mut self, clipboard: Clipboard) {
        self.clipboard = clipboard;
    }

    /// How tool results' images are shown (the terminal's protocol, `terminal.showImages`,
    /// `terminal.imageWidthCells`).
    pub fn set_images(&mut self, images: InlineImages) {
        self.images = images;
    }

    /// The theme.
    pub fn theme(&self) -> &Theme {
        &self.theme
    }

    /// Draws with `theme` from the next frame on (the active theme's file changed): the live
    /// region, the editor and what is committed from now on take its colours; lines already in
    /// the terminal's scrollback keep theirs.
    pub fn set_theme(&mut self, theme: Theme) {
        self.editor.set_theme(&theme);
        self.loader.set_theme(&theme);
        self.theme = theme;
    }

    /// The transcript.
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    /// The transcript, to add to it.
    pub fn transcript_mut(&mut self) -> &mut Transcript {
        &mut self.transcript
    }

    /// The editor.
    pub fn editor_mut(&mut self) -> &mut Editor {
        &mut self.editor
    }

    /// Whether tool blocks are expanded (Ctrl+O).
    pub fn is_expanded(&self) -> bool {
        self.expanded
    }

    /// Whether a run is streaming.
    pub fn is_running(&self) -> bool {
        self.running
    }

    /// Whether a dialog or picker has the keyboard.
    pub fn has_overlay(&self) -> bool {
        !self.dialogs.is_empty() || self.picker.is_some()
    }

    /// Applies one session event.
    pub fn apply(&mut self, event: &SessionEvent) {
        if let SessionEvent::Agent(pi_agent_core::AgentEvent::MessageStart {
            message: pi_agent_core::AgentMessage::User(user),
        }) = event
        {
            let text = user.content.text();
            if let Some(index) = self.queued.iter().position(|q| q.text() == text) {
                self.queued.remove(index);
            }
        }
        match event {
            SessionEvent::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                ..
            } => {
                let wait = RetryWait {
                    attempt: *attempt,
                    max_attempts: *max_attempts,
                    delay: std::time::Duration::from_millis(*delay_ms),
                };
                self.loader = Loader::new(wait.message(std::time::Duration::ZERO), &self.theme).without_elapsed();
                self.retry = Some(wait);
            }
            // The continued run (or the end of the retry) brings the working loader back.
            SessionEvent::Agent(pi_agent_core::AgentEvent::AgentStart) | SessionEvent::AutoRetryEnd { .. }
                if self.retry.is_some() =>
            {
                self.retry = None;
                self.loader = working_loader(&self.theme);
            }
            _ => {}
        }
        self.transcript.apply(event);
    }

    /// A run started or ended. When it ends, messages still queued are dropped from the display
    /// (the agent has them, or they were cleared by an abort).
    pub fn set_running(&mut self, running: bool) {
        if running && !self.running {
            self.loader = working_loader(&self.theme);
        }
        if !running {
            self.queued.clear();
            self.retry = None;
        }
        self.running = running;
    }

    /// Something other than a run keeps the screen busy (a branch summary): the loader shows
    /// `message`, Esc aborts.
    pub fn set_busy_with(&mut self, message: &str) {
        self.loader = Loader::new(message, &self.theme);
        self.running = true;
    }

    /// Advances the loader's spinner and clock.
    pub fn tick(&mut self) {
        self.loader.tick();
        self.count_down();
    }

    /// Sets the loader's elapsed time (tests).
    pub fn tick_at(&mut self, elapsed: std::time::Duration) {
        self.loader.tick_at(elapsed);
        self.count_down();
    }

    /// A retry's loader shows the seconds left.
    fn count_down(&mut self) {
        if let Some(wait) = &self.retry {
            self.loader.set_message(wait.message(self.loader.elapsed()));
        }
    }

    /// The newest pending preview's label, `None` when nothing is pending.
    pub fn set_pending(&mut self, label: Option<String>) {
        self.pending = label;
    }

    /// The footer.
    pub fn set_footer(&mut self, info: FooterInfo) {
        self.footer = Some(info);
    }

    /// Custom tools whose renderers draw their blocks.
    pub fn set_renderers(&mut self, renderers: Renderers) {
        self.renderers = renderers;
    }

    /// Adds a notice.
    pub fn notice(&mut self, text: impl Into<String>, kind: NoticeKind) {
        self.transcript.notice(text, kind);
    }

    /// A tool's question becomes a dialog (shown after those already waiting); a notification
    /// becomes a notice.
    pub fn push_request(&mut self, request: UiRequest) {
        self.dialogs.retain(|dialog| !dialog.is_abandoned());
        match Dialog::from_request(request, &self.theme) {
            Ok(dialog) => self.dialogs.push_back(dialog),
            Err((message, kind)) => {
                let kind = match kind {
                    NotifyKind::Info => NoticeKind::Info,
                    NotifyKind::Warning => NoticeKind::Warning,
                    NotifyKind::Error => NoticeKind::Error,
                };
                self.notice(message, kind);
            }
        }
    }

    /// Opens a picker: `items` are `(id, item)`; the chosen id comes back as [`Action::Pick`].
    pub fn open_picker(&mut self, kind: PickerKind, title: &str, items: Vec<(String, SelectItem)>, selected: usize) {
        let (ids, items): (Vec<String>, Vec<SelectItem>) = items.into_iter().unzip();
        let mut list = SelectList::new(items, &self.theme)
            .with_title(title)
            .with_max_visible(10);
        list.set_selected(selected);
        self.picker = Some(Picker { kind, list, ids });
    }

    /// Filters the open picker as if `filter` had been typed (`/model <search>`).
    pub fn filter_picker(&mut self, filter: &str) {
        if let Some(picker) = &mut self.picker {
            picker.list.set_filter(filter);
        }
    }

    /// Ctrl+O: expands or collapses every tool block, earlier turns included: the next
    /// [`Screen::take_commit`] gives the whole transcript again, for the loop to redraw the
    /// terminal with (pi redraws everything too).
    pub fn toggle_expanded(&mut self) {
        self.expanded = !self.expanded;
        self.redraw = true;
    }

    /// Whether the next [`Screen::take_commit`] gives the whole transcript: the loop clears the
    /// terminal (screen and scrollback) before printing it.
    pub fn wants_redraw(&self) -> bool {
        self.redraw
    }

    /// Inserts a bracketed paste where the keyboard is.
    pub fn handle_paste(&mut self, text: &str) {
        if let Some(dialog) = self.dialogs.front_mut() {
            dialog.handle_paste(text);
        } else if self.picker.is_none() {
            self.exit_armed = false;
            self.completion.menu = None;
            self.editor.handle_paste(text);
        }
    }

    /// Handles a key; returns what the loop should do, if anything.
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<Action> {
        if !is_press(&key) {
            return None;
        }
        if let Some(dialog) = self.dialogs.front_mut() {
            if dialog.handle_key(key) {
                self.dialogs.pop_front();
            }
            return None;
        }
        if let Some(picker) = &mut self.picker {
            match picker.list.handle_key(key) {
                Selection::Chosen(index) => {
                    let kind = picker.kind;
                    let id = picker.ids.get(index).cloned();
                    self.picker = None;
                    return id.map(|id| Action::Pick { kind, id });
                }
                Selection::Cancelled => self.picker = None,
                Selection::Changed | Selection::Ignored => {}
            }
            return None;
        }
        if let Some(action) = self.menu_key(&key) {
            return action;
        }
        let armed = std::mem::replace(&mut self.exit_armed, false);
        let escape_at = self.last_escape.take();
        if let Some(action) = self.app_key(&key, armed, escape_at) {
            return action;
        }
        if self.pending.is_some() && (is_alt(&key, 'y') || is_alt(&key, 'n')) {
            let action = if is_alt(&key, 'y') {
                ResolveAction::Apply
            } else {
                ResolveAction::Discard
            };
            return Some(Action::Resolve {
                action,
                reason: USER_REASON.to_owned(),
            });
        }
        if key.code == KeyCode::Tab && key.modifiers.is_empty() {
            return self.tab();
        }
        if self.keybindings.matches(AppAction::FollowUp, &key) {
            let text = self.editor.submit()?;
            self.completion.menu = None;
            if self.running && commands::parse_slash_command(&text).is_none() {
                if let Some(unknown) = self.unknown_command(&text) {
                    return unknown;
                }
                self.queued.push(Queued::FollowUp(text.clone()));
                return Some(Action::FollowUp(text));
            }
            return self.submitted(text);
        }
        match self.editor.handle_key(key) {
            EditorAction::Submit(text) => {
                self.completion.menu = None;
                self.submitted(text)
            }
            EditorAction::Changed => self.update_completion(),
            // Ctrl+C and Ctrl+D when `app.clear` / `app.exit` were moved to other keys.
            EditorAction::Interrupt | EditorAction::Exit | EditorAction::None => None,
        }
    }

    /// Inserts `text` into the editor at the cursor (a pasted image's path).
    pub fn insert_text(&mut self, text: &str) {
        self.editor.insert_str(text);
    }

    /// pi's Ctrl+V: the clipboard's image is saved to a file whose path goes into the editor at
    /// the cursor (the model reads it with `read`). A clipboard without an image, or one that
    /// cannot be read, changes nothing, as in pi.
    pub async fn paste_image(&mut self) {
        let clipboard = self.clipboard.clone();
        if let Ok(Some(path)) = tokio::task::spawn_blocking(move || clipboard.paste_image_to_file()).await {
            self.insert_text(&path.display().to_string());
        }
    }

    /// pi's Alt+Up (and Esc while streaming): `texts`, the messages taken back from the agent's
    /// queues (so none of them reaches the model), steering first, go into the editor above what
    /// it holds, separated by blank lines.
    pub fn restore_queued(&mut self, texts: Vec<String>) {
        self.queued.clear();
        let mut texts = vec![texts.join("\n\n"), self.editor.text().to_owned()];
        texts.retain(|text| !text.trim().is_empty());
        self.editor.set_text(&texts.join("\n\n"));
    }

    fn submitted(&mut self, text: String) -> Option<Action> {
        // `!command` runs it (its output goes into the context), `!!command` too, kept out of it.
        let trimmed = text.trim();
        if let Some(rest) = trimmed.strip_prefix('!') {
            let (exclude, command) = match rest.strip_prefix('!') {
                Some(command) => (true, command.trim()),
                None => (false, rest.trim()),
            };
            if !command.is_empty() {
                if self.bash_running {
                    self.notice(
                        "A bash command is already running. Press Esc to cancel it first.",
                        NoticeKind::Warning,
                    );
                    self.editor.set_text(&text);
                    return None;
                }
                self.bash_running = true;
                return Some(Action::Bash {
                    command: command.to_owned(),
                    exclude,
                });
            }
        }
        if commands::parse_slash_command(&text).is_none()
            && let Some(unknown) = self.unknown_command(&text)
        {
            return unknown;
        }
        Some(match commands::parse_slash_command(&text) {
            Some(SlashCommand::Quit) => Action::Exit,
            Some(SlashCommand::Apply(reason)) => Action::Resolve {
                action: ResolveAction::Apply,
                reason: if reason.is_empty() {
                    USER_REASON.to_owned()
                } else {
                    reason
                },
            },
            Some(SlashCommand::Discard(reason)) => Action::Resolve {
                action: ResolveAction::Discard,
                reason: if reason.is_empty() {
                    USER_REASON.to_owned()
                } else {
                    reason
                },
            },
            Some(command) => Action::Command(command),
            None if self.running => {
                self.queued.push(Queued::Steer(text.clone()));
                Action::Steer(text)
            }
            None => Action::Prompt(text),
        })
    }

    /// `item` as drawn: with thinking blocks collapsed (Ctrl+T), an answer's thinking is pi's
    /// `Thinking...` label.
    fn shown<'a>(&self, item: &'a Item) -> std::borrow::Cow<'a, Item> {
        match item {
            Item::Assistant { thinking, .. } if self.hide_thinking && !thinking.trim().is_empty() => {
                let mut collapsed = item.clone();
                if let Item::Assistant { thinking, .. } = &mut collapsed {
                    *thinking = "Thinking...".to_owned();
                }
                std::borrow::Cow::Owned(collapsed)
            }
            _ => std::borrow::Cow::Borrowed(item),
        }
    }

    fn context(&self) -> RenderContext<'_> {
        RenderContext {
            theme: &self.theme,
            expanded: self.expanded,
            renderers: &self.renderers,
            images: self.images,
        }
    }

    /// The lines to print into the scrollback now: the finished items not printed yet, in order;
    /// after Ctrl+O every finished item ([`Screen::wants_redraw`]).
    pub fn take_commit(&mut self, width: u16) -> Vec<Line> {
        let range = self.transcript.take_finished();
        let start = if std::mem::take(&mut self.redraw) {
            0
        } else {
            range.start
        };
        let context = self.context();
        let mut lines = Vec::new();
        for item in &self.transcript.items()[start..range.end] {
            lines.extend(render_item(&self.shown(item), context, width));
        }
        lines
    }

    /// The live region at `width` and where the terminal cursor goes in it.
    pub fn render_live(&self, width: u16) -> (Vec<Line>, Option<(u16, u16)>) {
        let theme = &self.theme;
        let context = self.context();
        let mut lines: Vec<Line> = Vec::new();
        for item in self.transcript.live() {
            lines.extend(render_item(&self.shown(item), context, width));
        }
        if self.running {
            lines.push(Line::from(""));
            lines.extend(self.loader.render(width).into_iter().map(indent));
        }
        for queued in &self.queued {
            let label = match queued {
                Queued::Steer(_) => "Steering: ",
                Queued::FollowUp(_) => "Follow-up: ",
            };
            let line = Line::from(vec![
                theme.fg(Slot::Dim, label),
                theme.fg(Slot::Dim, queued.text().replace('\n', " ")),
            ]);
            lines.push(indent(truncate_line(&line, width.saturating_sub(1).max(1), "…")));
        }
        if !self.queued.is_empty() {
            let hint = Line::from(theme.fg(Slot::Dim, "↳ alt+up to edit all queued messages"));
            lines.push(indent(truncate_line(&hint, width.saturating_sub(1).max(1), "…")));
        }
        if let Some(label) = &self.pending {
            lines.push(Line::from(""));
            lines.extend(pending_banner(label, theme, width));
        }
        lines.push(Line::from(""));
        let mut cursor = None;
        if let Some(dialog) = self.dialogs.front() {
            let top = lines.len() as u16;
            let (rows, at) = dialog.render_with_cursor(width, theme);
            lines.extend(rows);
            cursor = at.map(|(row, col)| (top + row, col));
        } else if let Some(picker) = &self.picker {
            lines.push(Line::from(theme.fg(Slot::Accent, "─".repeat(usize::from(width)))));
            lines.extend(
                picker
                    .list
                    .render(width.saturating_sub(1).max(1))
                    .into_iter()
                    .map(indent),
            );
            lines.push(indent(Line::from(
                theme.fg(Slot::Dim, "↑↓ select · enter choose · type to filter · esc cancel"),
            )));
        } else {
            let border = Line::from(theme.fg(Slot::Dim, "─".repeat(usize::from(width))));
            lines.push(border.clone());
            let top = lines.len() as u16;
            let (rows, (row, col)) = self.editor.render_with_cursor(width);
            lines.extend(rows);
            cursor = Some((top + row, col));
            lines.push(border);
            if let Some(menu) = &self.completion.menu {
                lines.extend(menu.list.render(width.saturating_sub(1).max(1)).into_iter().map(indent));
            }
        }
        if self.exit_armed {
            lines.push(indent(Line::from(theme.fg(Slot::Dim, "Press Ctrl+C again to exit"))));
        }
        if let Some(info) = &self.footer {
            lines.extend(footer::footer_lines(info, theme, width));
        }
        let lines = lines.into_iter().map(|l| truncate_line(&l, width, "")).collect();
        (lines, cursor)
    }
}

impl std::fmt::Debug for Screen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Screen")
            .field("items", &self.transcript.items().len())
            .field("running", &self.running)
            .field("pending", &self.pending)
            .field("expanded", &self.expanded)
            .field("dialogs", &self.dialogs.len())
            .finish_non_exhaustive()
    }
}

/// The loader of a run: pi's `Working…` with the Esc hint.
fn working_loader(theme: &Theme) -> Loader {
    Loader::new("Working…", theme).with_hint("esc to interrupt")
}

fn indent(mut line: Line) -> Line {
    line.spans.insert(0, Span::raw(" "));
    line
}

/// ` pending  AST Edit: 1 replacement in 1 file · alt+y apply · alt+n discard`, wrapped.
fn pending_banner(label: &str, theme: &Theme, width: u16) -> Vec<Line> {
    let badge = Style::default()
        .fg(theme.color(Slot::Warning))
        .add_modifier(Modifier::REVERSED | Modifier::BOLD);
    let line = Line::from(vec![
        Span::styled(" pending ".to_owned(), badge),
        Span::raw(" "),
        theme.fg(Slot::Warning, label.to_owned()),
        theme.fg(Slot::Dim, " · alt+y apply · alt+n discard"),
    ]);
    wrap_line(&line, width.saturating_sub(1).max(1))
        .into_iter()
        .map(indent)
        .collect()
}
