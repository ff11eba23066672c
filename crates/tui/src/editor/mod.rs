//! The prompt editor: multi-line input with pi's key bindings, history and bracketed paste.
//!
//! | keys | action |
//! | --- | --- |
//! | Enter | submit (nothing happens on a blank editor) |
//! | Shift+Enter, Ctrl+J, `\` then Enter | newline |
//! | Alt+Enter, Ctrl+Enter | not handled (the app's: follow-up) |
//! | Left / Right, Ctrl+B / Ctrl+F | one character |
//! | Alt+Left / Alt+Right, Ctrl+Left / Ctrl+Right, Alt+B / Alt+F | one word |
//! | Up / Down | one row; on the first row Up recalls older history, on the last row Down newer |
//! | Home / End, Ctrl+A / Ctrl+E | start / end of the line |
//! | Ctrl+Home / Ctrl+End | start / end of the text |
//! | Backspace, Ctrl+H / Delete | delete the character before / at the cursor |
//! | Ctrl+W | delete back to the previous space (shell word) |
//! | Alt+Backspace, Ctrl+Backspace | delete the word before the cursor |
//! | Alt+D, Alt+Delete, Ctrl+Delete | delete the word after the cursor |
//! | Ctrl+U / Ctrl+K | delete to the start / end of the line (at either end, the newline) |
//! | Ctrl+Y | insert the text deleted last by a word or line deletion |
//! | Ctrl+C | clear the editor; on an empty editor report [`EditorAction::Interrupt`] |
//! | Ctrl+D | on an empty editor report [`EditorAction::Exit`], else delete at the cursor |
//!
//! A paste ([`Editor::handle_paste`]) is inserted as it is, newlines kept (CRLF and CR become LF,
//! other control characters are dropped).

mod buffer;
mod layout;
#[cfg(test)]
mod tests;

use std::cell::Cell;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

use crate::keys;
use crate::text::{ClusterKind, TAB_WIDTH, clusters};
use crate::theme::{Slot, Theme};
use crate::{Component, Line, line_width, truncate_line};
use buffer::{big_word_left, line_end, line_start, next_boundary, prev_boundary, sanitize, word_left, word_right};
use layout::{Row, cluster_width, layout, locate, position_at};

/// What a key did in the [`Editor`].
///
/// ```
/// use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
/// use pi_tui::{Editor, EditorAction, Theme};
///
/// let mut editor = Editor::new(&Theme::plain());
/// let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
/// assert_eq!(editor.handle_key(ctrl_c), EditorAction::Interrupt); // empty: the app counts these
/// assert_eq!(editor.handle_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)), EditorAction::None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum EditorAction {
    /// The key meant nothing to the editor (the app may use it).
    None,
    /// The text or the cursor changed: draw again.
    Changed,
    /// Enter: the text to send. The editor is now empty and the text is in its history.
    Submit(String),
    /// Ctrl+C on an empty editor (pi exits on the second in a row).
    Interrupt,
    /// Ctrl+D on an empty editor.
    Exit,
}

/// A multi-line text input (pi's `Editor`); its keys are listed in `docs/tui.md` ("The editor").
///
/// It renders with a prompt before the first row (continuation rows are indented to match), wraps
/// long lines at word boundaries, draws its cursor as a reverse-video cell, and tells where that
/// cell is ([`cursor_position`](Editor::cursor_position)) so the terminal's own cursor can be put
/// there (for input methods).
///
/// ```
/// use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
/// use pi_tui::{Component, Editor, EditorAction, Theme};
/// use pi_tui::testing::plain;
///
/// let mut editor = Editor::new(&Theme::dark());
/// for c in "hi".chars() {
///     editor.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
/// }
/// assert_eq!(plain(&editor.render(20)), "> hi");
/// assert_eq!(editor.cursor_position(20), (0, 4));
/// let enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE);
/// assert_eq!(editor.handle_key(enter), EditorAction::Submit("hi".into()));
/// assert!(editor.is_empty());
/// ```
#[derive(Debug, Clone)]
pub struct Editor {
    text: String,
    /// Byte offset of the cursor, on a cluster boundary.
    cursor: usize,
    prompt: Line,
    placeholder: Option<String>,
    focused: bool,
    max_rows: Option<usize>,
    /// First visible row when the text is taller than `max_rows`.
    scroll: Cell<usize>,
    /// Text width of the last render: what Up and Down move through.
    last_text_width: Cell<usize>,
    /// The column Up and Down aim for while moving vertically.
    goal_col: Option<usize>,
    history: Vec<String>,
    /// Which history entry is shown, while walking the history.
    history_index: Option<usize>,
    /// The text being written before the history walk started.
    draft: String,
    /// The text deleted last by a word or line deletion (Ctrl+Y inserts it).
    killed: String,
    theme: Theme,
}

impl Editor {
    /// An empty editor with the prompt `> `.
    pub fn new(theme: &Theme) -> Self {
        Editor {
            text: String::new(),
            cursor: 0,
            prompt: Line::from(theme.fg(Slot::Accent, "> ")),
            placeholder: None,
            focused: true,
            max_rows: None,
            scroll: Cell::new(0),
            last_text_width: Cell::new(78),
            goal_col: None,
            history: Vec::new(),
            history_index: None,
            draft: String::new(),
            killed: String::new(),
            theme: theme.clone(),
        }
    }

    /// Replaces the prompt (an empty line for none).
    pub fn with_prompt(mut self, prompt: impl Into<Line>) -> Self {
        self.prompt = prompt.into();
        self
    }

    /// Draws with `theme` from now on (a theme reloaded while pi runs); the default prompt takes
    /// the new accent colour, a prompt set with [`Editor::with_prompt`] keeps its own.
    pub fn set_theme(&mut self, theme: &Theme) {
        if self.prompt == Line::from(self.theme.fg(Slot::Accent, "> ")) {
            self.prompt = Line::from(theme.fg(Slot::Accent, "> "));
        }
        self.theme = theme.clone();
    }

    /// Dimmed text shown while the editor is empty.
    pub fn with_placeholder(mut self, placeholder: impl Into<String>) -> Self {
        self.placeholder = Some(placeholder.into());
        self
    }

    /// Shows at most `rows` rows, scrolling to keep the cursor visible.
    pub fn with_max_rows(mut self, rows: usize) -> Self {
        self.max_rows = Some(rows.max(1));
        self
    }

    /// Whether the cursor cell is drawn (an editor behind a dialog is not focused).
    pub fn set_focused(&mut self, focused: bool) {
        self.focused = focused;
    }

    /// The text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Replaces the text; the cursor goes to its end.
    pub fn set_text(&mut self, text: &str) {
        self.text = sanitize(text);
        self.cursor = self.text.len();
        self.goal_col = None;
    }

    /// Empties the editor.
    pub fn clear(&mut self) {
        self.set_text("");
        self.history_index = None;
    }

    /// The cursor's byte offset in the text.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Moves the cursor to byte `offset` (clamped to the text, moved back to a character
    /// boundary): where a completion put into the text leaves it.
    pub fn set_cursor(&mut self, offset: usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        self.cursor = offset;
        self.goal_col = None;
    }

    /// Inserts text at the cursor (control characters other than newline and tab dropped).
    pub fn insert_str(&mut self, text: &str) {
        let text = sanitize(text);
        self.text.insert_str(self.cursor, &text);
        self.cursor += text.len();
        self.history_index = None;
    }

    /// Adds a previously submitted text to the history (oldest first), unless it repeats the
    /// newest entry or is blank.
    pub fn add_history(&mut self, text: impl Into<String>) {
        let text = text.into();
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            self.history.push(text);
        }
    }

    /// The history, oldest first.
    pub fn history(&self) -> &[String] {
        &self.history
    }

    /// Takes the text as Enter does: `None` for a blank editor, else the text, which goes into
    /// the history while the editor empties. For apps that submit on other keys (Alt+Enter).
    pub fn submit(&mut self) -> Option<String> {
        if self.text.trim().is_empty() {
            return None;
        }
        let text = std::mem::take(&mut self.text);
        self.add_history(text.clone());
        self.clear();
        Some(text)
    }

    /// Inserts a bracketed paste as it is, newlines kept.
    pub fn handle_paste(&mut self, text: &str) -> EditorAction {
        if text.is_empty() {
            return EditorAction::None;
        }
        self.goal_col = None;
        self.insert_str(text);
        EditorAction::Changed
    }

    /// Handles a key (the bindings are listed in `docs/tui.md`, "The editor").
    pub fn handle_key(&mut self, key: KeyEvent) -> EditorAction {
        if !keys::is_press(&key) {
            return EditorAction::None;
        }
        let vertical = matches!(key.code, KeyCode::Up | KeyCode::Down);
        if !vertical {
            self.goal_col = None;
        }
        let mods = key.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SUPER);
        let ctrl = mods == KeyModifiers::CONTROL;
        let alt = mods == KeyModifiers::ALT;
        let plain = mods.is_empty();
        let before = (self.text.len(), self.cursor);
        match key.code {
            KeyCode::Enter if keys::is_newline(&key) => self.insert_str("\n"),
            KeyCode::Enter if keys::is_enter(&key) => {
                if self.text[..self.cursor].ends_with('\\') {
                    self.text.replace_range(self.cursor - 1..self.cursor, "\n");
                    self.history_index = None;
                    return EditorAction::Changed;
                }
                return self.submit().map_or(EditorAction::None, EditorAction::Submit);
            }
            KeyCode::Char(c) if ctrl => match c.to_ascii_lowercase() {
                'j' => self.insert_str("\n"),
                'c' => {
                    if self.text.is_empty() {
                        return EditorAction::Interrupt;
                    }
                    self.clear();
                    return EditorAction::Changed;
                }
                'd' if self.text.is_empty() => return EditorAction::Exit,
                'd' => self.delete(self.cursor, next_boundary(&self.text, self.cursor), false),
                'a' => self.cursor = line_start(&self.text, self.cursor),
                'e' => self.cursor = line_end(&self.text, self.cursor),
                'b' => self.cursor = prev_boundary(&self.text, self.cursor),
                'f' => self.cursor = next_boundary(&self.text, self.cursor),
                'h' => self.delete(prev_boundary(&self.text, self.cursor), self.cursor, false),
                'w' => self.delete(big_word_left(&self.text, self.cursor), self.cursor, true),
                'u' => {
                    let start = line_start(&self.text, self.cursor);
                    let start = if start == self.cursor {
                        start.saturating_sub(1)
                    } else {
                        start
                    };
                    self.delete(start, self.cursor, true);
                }
                'k' => {
                    let end = line_end(&self.text, self.cursor);
                    let end = if end == self.cursor {
                        (end + 1).min(self.text.len())
                    } else {
                        end
                    };
                    self.delete(self.cursor, end, true);
                }
                'y' => {
                    let killed = self.killed.clone();
                    self.insert_str(&killed);
                }
                _ => return EditorAction::None,
            },
            KeyCode::Char(c) if alt => match c.to_ascii_lowercase() {
                'b' => self.cursor = word_left(&self.text, self.cursor),
                'f' => self.cursor = word_right(&self.text, self.cursor),
                'd' => self.delete(self.cursor, word_right(&self.text, self.cursor), true),
                _ => return EditorAction::None,
            },
            // Ctrl+Alt with a symbol is AltGr on some keyboards (`@` on a German one under Windows).
            KeyCode::Char(c)
                if plain || (mods == KeyModifiers::CONTROL | KeyModifiers::ALT && !c.is_alphanumeric()) =>
            {
                let mut buf = [0; 4];
                self.insert_str(c.encode_utf8(&mut buf));
            }
            KeyCode::Backspace if plain => self.delete(prev_boundary(&self.text, self.cursor), self.cursor, false),
            KeyCode::Backspace if ctrl || alt => self.delete(word_left(&self.text, self.cursor), self.cursor, true),
            KeyCode::Delete if plain => self.delete(self.cursor, next_boundary(&self.text, self.cursor), false),
            KeyCode::Delete if ctrl || alt => self.delete(self.cursor, word_right(&self.text, self.cursor), true),
            KeyCode::Left if plain => self.cursor = prev_boundary(&self.text, self.cursor),
            KeyCode::Right if plain => self.cursor = next_boundary(&self.text, self.cursor),
            KeyCode::Left if ctrl || alt => self.cursor = word_left(&self.text, self.cursor),
            KeyCode::Right if ctrl || alt => self.cursor = word_right(&self.text, self.cursor),
            KeyCode::Home if ctrl => self.cursor = 0,
            KeyCode::End if ctrl => self.cursor = self.text.len(),
            KeyCode::Home if plain => self.cursor = line_start(&self.text, self.cursor),
            KeyCode::End if plain => self.cursor = line_end(&self.text, self.cursor),
            KeyCode::Up if plain => return self.vertical(-1),
            KeyCode::Down if plain => return self.vertical(1),
            _ => return EditorAction::None,
        }
        if (self.text.len(), self.cursor) == before {
            EditorAction::None
        } else {
            EditorAction::Changed
        }
    }

    /// Deletes `start..end`, keeping it for Ctrl+Y when `kill`.
    fn delete(&mut self, start: usize, end: usize, kill: bool) {
        if start >= end {
            return;
        }
        let removed: String = self.text.drain(start..end).collect();
        if kill {
            self.killed = removed;
        }
        self.cursor = start;
        self.history_index = None;
    }

    /// Up (`-1`) or Down (`1`): one row, or through the history at the first / last row.
    fn vertical(&mut self, direction: isize) -> EditorAction {
        let width = self.last_text_width.get();
        let rows = layout(&self.text, width);
        let (row, col) = locate(&self.text, &rows, self.cursor, width);
        let goal = *self.goal_col.get_or_insert(col);
        let target = row as isize + direction;
        if target < 0 {
            return self.history_step(-1);
        }
        let Some(target_row) = rows.get(target as usize) else {
            return self.history_step(1);
        };
        self.cursor = position_at(&self.text, *target_row, goal, width);
        EditorAction::Changed
    }

    /// Shows an older (`-1`) or newer (`1`) history entry; past the newest, the draft again.
    fn history_step(&mut self, direction: isize) -> EditorAction {
        let next = match (self.history_index, direction < 0) {
            (None, true) if !self.history.is_empty() => {
                self.draft = self.text.clone();
                Some(self.history.len() - 1)
            }
            (Some(i), true) if i > 0 => Some(i - 1),
            (Some(i), false) if i + 1 < self.history.len() => Some(i + 1),
            (Some(_), false) => None,
            _ => return EditorAction::None,
        };
        let text = match next {
            Some(i) => self.history[i].clone(),
            None => std::mem::take(&mut self.draft),
        };
        self.text = text;
        self.cursor = self.text.len();
        self.goal_col = None;
        self.history_index = next;
        EditorAction::Changed
    }

    /// Where the cursor cell is in the lines rendered at `width`: (row, column).
    pub fn cursor_position(&self, width: u16) -> (u16, u16) {
        self.view(width).1
    }

    /// The lines at `width` and where the cursor cell is in them.
    pub fn render_with_cursor(&self, width: u16) -> (Vec<Line>, (u16, u16)) {
        self.view(width)
    }

    fn view(&self, width: u16) -> (Vec<Line>, (u16, u16)) {
        let width = usize::from(width.max(1));
        let prompt_w = line_width(&self.prompt);
        let (prompt_w, text_w) = if prompt_w < width {
            (prompt_w, width - prompt_w)
        } else {
            (0, width)
        };
        self.last_text_width.set(text_w);
        let rows = layout(&self.text, text_w);
        let (cursor_row, cursor_col) = locate(&self.text, &rows, self.cursor, text_w);
        let mut lines: Vec<Line> = Vec::with_capacity(rows.len() + 1);
        let mut cursor = (cursor_row, cursor_col);
        for (index, row) in rows.iter().enumerate() {
            let at = (self.focused && index == cursor_row).then_some(self.cursor);
            lines.push(self.row_line(*row, at, text_w));
        }
        if cursor_col >= text_w {
            // The cursor after a full last row: its cell goes on a row of its own.
            cursor = (cursor_row + 1, 0);
            let mut row = self.row_line(
                Row {
                    start: self.cursor,
                    end: self.cursor,
                    last: true,
                },
                None,
                text_w,
            );
            if self.focused {
                row.spans
                    .push(Span::styled(" ", Style::default().add_modifier(Modifier::REVERSED)));
            }
            lines.insert(cursor_row + 1, row);
        }
        if self.text.is_empty()
            && let (Some(placeholder), Some(first)) = (&self.placeholder, lines.first_mut())
        {
            let room = text_w.saturating_sub(line_width(first)) as u16;
            if room > 0 {
                let hint = truncate_line(&Line::from(self.theme.fg(Slot::Dim, placeholder.clone())), room, "…");
                first.spans.extend(hint.spans);
            }
        }
        let (first_shown, lines) = self.scrolled(lines, cursor.0);
        let lines = lines
            .into_iter()
            .enumerate()
            .map(|(i, mut line)| {
                let lead = if first_shown + i == 0 {
                    self.prompt.clone()
                } else {
                    Line::from(" ".repeat(prompt_w))
                };
                if prompt_w > 0 {
                    let mut spans: Vec<Span<'static>> = lead
                        .spans
                        .into_iter()
                        .map(|s| Span::styled(s.content, lead.style.patch(s.style)))
                        .collect();
                    spans.append(&mut line.spans);
                    line.spans = spans;
                }
                line
            })
            .collect();
        let row = cursor.0.saturating_sub(first_shown);
        (lines, (row as u16, (cursor.1 + prompt_w) as u16))
    }

    /// The rows to show: all of them, or a window of `max_rows` that keeps the cursor's row.
    fn scrolled(&self, lines: Vec<Line>, cursor_row: usize) -> (usize, Vec<Line>) {
        let Some(max) = self.max_rows.filter(|max| lines.len() > *max) else {
            self.scroll.set(0);
            return (0, lines);
        };
        let mut first = self.scroll.get().min(lines.len() - max);
        if cursor_row < first {
            first = cursor_row;
        } else if cursor_row >= first + max {
            first = cursor_row + 1 - max;
        }
        self.scroll.set(first);
        (first, lines.into_iter().skip(first).take(max).collect())
    }

    /// One row of text, with the cursor cell at byte `cursor` if given.
    fn row_line(&self, row: Row, cursor: Option<usize>, text_w: usize) -> Line {
        let reversed = Style::default().add_modifier(Modifier::REVERSED);
        let mut spans: Vec<Span<'static>> = Vec::new();
        let mut plain = String::new();
        let flush = |plain: &mut String, spans: &mut Vec<Span<'static>>| {
            if !plain.is_empty() {
                spans.push(Span::raw(std::mem::take(plain)));
            }
        };
        for cluster in clusters(&self.text[row.start..row.end]) {
            let shown = match cluster.kind {
                ClusterKind::Tab => " ".repeat(TAB_WIDTH.min(text_w)),
                _ if cluster.width > text_w => "\u{FFFD}".to_owned(),
                ClusterKind::Text | ClusterKind::Space => cluster.text.to_owned(),
                ClusterKind::Newline | ClusterKind::Control => continue,
            };
            if cursor == Some(row.start + cluster.start) {
                flush(&mut plain, &mut spans);
                spans.push(Span::styled(shown, reversed));
            } else {
                plain.push_str(&shown);
            }
        }
        flush(&mut plain, &mut spans);
        let used = clusters(&self.text[row.start..row.end])
            .map(|c| cluster_width(c.kind, c.width, text_w))
            .sum::<usize>();
        if cursor == Some(row.end) && row.last && used < text_w {
            spans.push(Span::styled(" ", reversed));
        }
        Line::from(spans)
    }
}

impl Component for Editor {
    fn render(&self, width: u16) -> Vec<Line> {
        self.view(width).0
    }
}
