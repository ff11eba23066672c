//! The prompt editor: multi-line input with pi's key bindings, history, undo, a kill ring and
//! bracketed paste.
//!
//! | keys | action |
//! | --- | --- |
//! | Enter | submit (nothing happens on a blank editor) |
//! | Shift+Enter, Ctrl+J, `\` then Enter | newline |
//! | Alt+Enter, Ctrl+Enter | not handled (the app's: follow-up) |
//! | Left / Right, Ctrl+B / Ctrl+F | one grapheme (a flag, a ZWJ emoji, a letter with its accents) |
//! | Alt+Left / Alt+Right, Ctrl+Left / Ctrl+Right, Alt+B / Alt+F | one word |
//! | Up / Down | one row; on the first row Up recalls older history, on the last row Down newer |
//! | Page Up / Page Down | a page of rows (the visible rows, at least 5) |
//! | Home / End, Ctrl+A / Ctrl+E | start / end of the line |
//! | Ctrl+Home / Ctrl+End | start / end of the text |
//! | Ctrl+] / Ctrl+Alt+] then a character | jump forward / backward to that character |
//! | Backspace, Ctrl+H / Delete, Ctrl+D | delete the grapheme before / at the cursor |
//! | Ctrl+W, Alt+Backspace, Ctrl+Backspace | delete the word before the cursor |
//! | Alt+D, Alt+Delete, Ctrl+Delete | delete the word after the cursor |
//! | Ctrl+U / Ctrl+K | delete to the start / end of the line (at either end, the newline) |
//! | Ctrl+Y / Alt+Y | yank the newest deletion / right after a yank, replace it with the one before |
//! | Ctrl+- | undo |
//! | Ctrl+C | clear the editor; on an empty editor report [`EditorAction::Interrupt`] |
//! | Ctrl+D | on an empty editor report [`EditorAction::Exit`], else delete at the cursor |
//!
//! Deletions of words and lines go into a kill ring; consecutive ones join one entry. Undo
//! restores the text and cursor before each edit; a run of typed word characters is undone at
//! once (pi's coalescing).
//!
//! A paste ([`Editor::handle_paste`]) is inserted with its newlines (CRLF and CR become LF, other
//! control characters are dropped); one of more than 10 lines or 1000 characters shows as pi's
//! marker `[paste #1 +60 lines]` (or `[paste #2 1234 chars]`), which the cursor moves over as
//! one unit and which is replaced by the pasted text when the editor's text is submitted.

mod buffer;
mod edits;
mod layout;
#[cfg(test)]
mod tests;

use std::cell::Cell;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

use crate::keys;
use crate::text::{ClusterKind, TAB_WIDTH};
use crate::theme::{Slot, Theme};
use crate::{Component, Line, line_width, truncate_line};
use buffer::{
    graphemes as clusters, line_end, line_start, next_boundary, prev_boundary, sanitize, settle, word_left, word_right,
};
use edits::{KillRing, LastAction, Pastes};
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
    /// Texts deleted by word and line deletions (Ctrl+Y inserts the newest).
    kill_ring: KillRing,
    /// (text, cursor) before each undoable edit, newest last.
    undo: Vec<(String, usize)>,
    last_action: Option<LastAction>,
    /// Ctrl+] (forward) or Ctrl+Alt+] (backward) was pressed: the next character is the target.
    jump: Option<bool>,
    /// Large pastes behind their markers.
    pastes: Pastes,
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
            kill_ring: KillRing::default(),
            undo: Vec::new(),
            last_action: None,
            jump: None,
            pastes: Pastes::default(),
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

    /// Replaces the text (undoably); the cursor goes to its end.
    pub fn set_text(&mut self, text: &str) {
        let text = sanitize(text);
        if text != self.text {
            self.push_undo();
        }
        self.text = text;
        self.cursor = self.text.len();
        self.goal_col = None;
        self.last_action = None;
    }

    /// Empties the editor.
    pub fn clear(&mut self) {
        self.set_text("");
        self.history_index = None;
    }

    /// The text with every paste marker replaced by what was pasted (what a submit sends).
    pub fn expanded_text(&self) -> String {
        self.pastes.expand(&self.text)
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
        self.cursor = settle(&self.text, self.cursor + text.len());
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

    /// Takes the text as Enter does: `None` for a blank editor, else the text with its paste
    /// markers expanded; the text as shown goes into the history while the editor empties (and
    /// forgets its pastes and undo steps). For apps that submit on other keys (Alt+Enter).
    pub fn submit(&mut self) -> Option<String> {
        if self.text.trim().is_empty() {
            return None;
        }
        let expanded = self.pastes.expand(&self.text);
        let text = std::mem::take(&mut self.text);
        self.add_history(text);
        self.clear();
        self.pastes.clear();
        self.undo.clear();
        Some(expanded)
    }

    /// Inserts a bracketed paste with its newlines; a large one as pi's `[paste #N …]` marker.
    /// A path pasted right after a word character gets a space before it (pi).
    pub fn handle_paste(&mut self, text: &str) -> EditorAction {
        let mut text = sanitize(&csi_u_controls(text));
        if text.is_empty() {
            return EditorAction::None;
        }
        if text.starts_with(['/', '~', '.'])
            && self.text[..self.cursor]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            text.insert(0, ' ');
        }
        self.goal_col = None;
        self.push_undo();
        self.last_action = None;
        match self.pastes.marker_for(&text) {
            Some(marker) => self.insert_str(&marker),
            None => self.insert_str(&text),
        }
        EditorAction::Changed
    }

    fn push_undo(&mut self) {
        self.undo.push((self.text.clone(), self.cursor));
    }

    /// Ctrl+-: back to the text and cursor before the last edit.
    fn undo(&mut self) {
        if let Some((text, cursor)) = self.undo.pop() {
            self.text = text;
            self.cursor = cursor;
            self.history_index = None;
        }
        self.last_action = None;
    }

    /// The boundary after `pos`, over a paste marker whole.
    fn next(&self, pos: usize) -> usize {
        self.snap(next_boundary(&self.text, pos), true)
    }

    /// The boundary before `pos`, over a paste marker whole.
    fn prev(&self, pos: usize) -> usize {
        self.snap(prev_boundary(&self.text, pos), false)
    }

    /// `pos`, or the end (`forward`) or start of the paste marker it falls inside.
    fn snap(&self, pos: usize, forward: bool) -> usize {
        self.pastes
            .markers(&self.text)
            .into_iter()
            .find(|&(start, end)| start < pos && pos < end)
            .map_or(pos, |(start, end)| if forward { end } else { start })
    }

    /// Ctrl+Y: the kill ring's newest entry at the cursor.
    fn yank(&mut self) {
        let Some(text) = self.kill_ring.peek().map(str::to_owned) else {
            return;
        };
        let start = self.cursor;
        self.insert_str(&text);
        self.last_action = Some(LastAction::Yank {
            start,
            end: self.cursor,
        });
    }

    /// Alt+Y right after a yank: the yanked text replaced by the entry before it.
    fn yank_pop(&mut self) -> bool {
        let Some(LastAction::Yank { start, end }) = self.last_action else {
            return false;
        };
        if self.kill_ring.len() < 2 || end > self.text.len() {
            return false;
        }
        self.push_undo();
        self.text.replace_range(start..end, "");
        self.cursor = start;
        self.kill_ring.rotate();
        self.yank();
        true
    }

    /// Ctrl+] / Ctrl+Alt+] then `target`: the cursor to its next occurrence after the cursor, or
    /// its previous one before it.
    fn jump_to(&mut self, target: char, forward: bool) {
        let found = if forward {
            let from = next_boundary(&self.text, self.cursor);
            self.text[from..].find(target).map(|i| from + i)
        } else {
            self.text[..self.cursor].rfind(target)
        };
        if let Some(pos) = found {
            self.cursor = self.snap(pos, false);
        }
    }

    /// Handles a key (the bindings are listed in `docs/tui.md`, "The editor").
    pub fn handle_key(&mut self, key: KeyEvent) -> EditorAction {
        if !keys::is_press(&key) {
            return EditorAction::None;
        }
        let vertical = matches!(
            key.code,
            KeyCode::Up | KeyCode::Down | KeyCode::PageUp | KeyCode::PageDown
        );
        if !vertical {
            self.goal_col = None;
        }
        let mods = key.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SUPER);
        let ctrl = mods == KeyModifiers::CONTROL;
        let alt = mods == KeyModifiers::ALT;
        let plain = mods.is_empty();
        if let Some(forward) = self.jump.take()
            && let (KeyCode::Char(c), true) = (key.code, plain)
        {
            self.last_action = None;
            self.jump_to(c, forward);
            self.cursor = settle(&self.text, self.cursor);
            return EditorAction::Changed;
        }
        let before = (self.text.clone(), self.cursor);
        let last = self.last_action.take();
        // What this key did, for the next key (kills accumulate, yank-pop, typing coalesces).
        let mut did: Option<LastAction> = None;
        let mut undoable = true;
        match key.code {
            KeyCode::Enter if keys::is_newline(&key) => self.insert_str("\n"),
            KeyCode::Enter if keys::is_enter(&key) => {
                if self.text[..self.cursor].ends_with('\\') {
                    self.push_undo();
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
                'd' => self.delete(self.cursor, self.next(self.cursor)),
                'a' => self.cursor = line_start(&self.text, self.cursor),
                'e' => self.cursor = line_end(&self.text, self.cursor),
                'b' => self.cursor = self.prev(self.cursor),
                'f' => self.cursor = self.next(self.cursor),
                'h' => self.delete(self.prev(self.cursor), self.cursor),
                'w' => did = self.kill(self.snap(word_left(&self.text, self.cursor), false), true, last),
                'u' => {
                    let start = line_start(&self.text, self.cursor);
                    let start = if start == self.cursor {
                        start.saturating_sub(1)
                    } else {
                        start
                    };
                    did = self.kill(start, true, last);
                }
                'k' => {
                    let end = line_end(&self.text, self.cursor);
                    let end = if end == self.cursor {
                        (end + 1).min(self.text.len())
                    } else {
                        end
                    };
                    did = self.kill(end, false, last);
                }
                'y' => {
                    self.push_undo();
                    undoable = false;
                    self.yank();
                    did = self.last_action;
                }
                // Ctrl+- (Ctrl+_ and Ctrl+7 are the same key in a terminal's legacy encoding).
                '-' | '_' | '7' => {
                    self.undo();
                    return EditorAction::Changed;
                }
                ']' => {
                    self.jump = Some(true);
                    return EditorAction::None;
                }
                _ => return EditorAction::None,
            },
            KeyCode::Char(']') if mods == KeyModifiers::CONTROL | KeyModifiers::ALT => {
                self.jump = Some(false);
                return EditorAction::None;
            }
            KeyCode::Char(c) if alt => match c.to_ascii_lowercase() {
                'b' => self.cursor = self.snap(word_left(&self.text, self.cursor), false),
                'f' => self.cursor = self.snap(word_right(&self.text, self.cursor), true),
                'd' => did = self.kill(self.snap(word_right(&self.text, self.cursor), true), false, last),
                'y' => {
                    self.last_action = last;
                    if !self.yank_pop() {
                        self.last_action = None;
                        return EditorAction::None;
                    }
                    return EditorAction::Changed;
                }
                _ => return EditorAction::None,
            },
            // Ctrl+Alt with a symbol is AltGr on some keyboards (`@` on a German one under Windows).
            KeyCode::Char(c)
                if plain || (mods == KeyModifiers::CONTROL | KeyModifiers::ALT && !c.is_alphanumeric()) =>
            {
                // Typing is undone a word at a time: a space starts a new step (with the word
                // after it), other characters join the step of the typing before them.
                if c.is_whitespace() || last != Some(LastAction::TypeWord) {
                    self.push_undo();
                }
                undoable = false;
                did = Some(LastAction::TypeWord);
                let mut buf = [0; 4];
                self.insert_str(c.encode_utf8(&mut buf));
            }
            KeyCode::Backspace if plain => self.delete(self.prev(self.cursor), self.cursor),
            KeyCode::Backspace if ctrl || alt => {
                did = self.kill(self.snap(word_left(&self.text, self.cursor), false), true, last);
            }
            KeyCode::Delete if plain => self.delete(self.cursor, self.next(self.cursor)),
            KeyCode::Delete if ctrl || alt => {
                did = self.kill(self.snap(word_right(&self.text, self.cursor), true), false, last);
            }
            KeyCode::Left if plain => self.cursor = self.prev(self.cursor),
            KeyCode::Right if plain => self.cursor = self.next(self.cursor),
            KeyCode::Left if ctrl || alt => self.cursor = self.snap(word_left(&self.text, self.cursor), false),
            KeyCode::Right if ctrl || alt => self.cursor = self.snap(word_right(&self.text, self.cursor), true),
            KeyCode::Home if ctrl => self.cursor = 0,
            KeyCode::End if ctrl => self.cursor = self.text.len(),
            KeyCode::Home if plain => self.cursor = line_start(&self.text, self.cursor),
            KeyCode::End if plain => self.cursor = line_end(&self.text, self.cursor),
            KeyCode::PageUp if plain => self.page(-1),
            KeyCode::PageDown if plain => self.page(1),
            KeyCode::Up if plain => return self.vertical(-1),
            KeyCode::Down if plain => return self.vertical(1),
            _ => {
                self.last_action = last;
                return EditorAction::None;
            }
        }
        self.last_action = did;
        self.cursor = self.snap(settle(&self.text, self.cursor), true);
        if self.text != before.0 && undoable {
            self.undo.push(before.clone());
        }
        if (self.text.as_str(), self.cursor) == (before.0.as_str(), before.1) {
            EditorAction::None
        } else {
            EditorAction::Changed
        }
    }

    /// Deletes `start..end` (not into the kill ring).
    fn delete(&mut self, start: usize, end: usize) {
        if start >= end {
            return;
        }
        self.text.replace_range(start..end, "");
        self.cursor = start;
        self.history_index = None;
    }

    /// Deletes from the cursor back to `to` (`backward`) or forward to it, into the kill ring
    /// (joining the previous kill's entry when `last` was a kill).
    fn kill(&mut self, to: usize, backward: bool, last: Option<LastAction>) -> Option<LastAction> {
        let (start, end) = if backward { (to, self.cursor) } else { (self.cursor, to) };
        if start >= end {
            return last.filter(|l| *l == LastAction::Kill);
        }
        let removed = self.text[start..end].to_owned();
        self.kill_ring.push(&removed, backward, last == Some(LastAction::Kill));
        self.delete(start, end);
        Some(LastAction::Kill)
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
        self.cursor = self.snap(position_at(&self.text, *target_row, goal, width), false);
        EditorAction::Changed
    }

    /// Page Up (`-1`) or Page Down (`1`): a page of rows (pi's: at least 5), within the text.
    fn page(&mut self, direction: isize) {
        let width = self.last_text_width.get();
        let rows = layout(&self.text, width);
        let (row, col) = locate(&self.text, &rows, self.cursor, width);
        let goal = *self.goal_col.get_or_insert(col);
        let page = self.max_rows.unwrap_or(5).max(5) as isize;
        let target = (row as isize + direction * page).clamp(0, rows.len() as isize - 1);
        if let Some(target_row) = rows.get(target as usize) {
            self.cursor = self.snap(position_at(&self.text, *target_row, goal, width), false);
        }
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
        self.last_action = None;
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

/// `text` with kitty-encoded Ctrl+letters (`ESC[106;5u`) turned back into their control bytes:
/// some terminals (tmux popups with `extended-keys-format csi-u`) re-encode a paste's line feeds
/// that way (pi does the same).
fn csi_u_controls(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("\x1b[") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\x1b[") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let control = after[..digits]
            .parse::<u32>()
            .ok()
            .filter(|_| after[digits..].starts_with(";5u"))
            .and_then(|code| match code {
                97..=122 => char::from_u32(code - 96),
                65..=90 => char::from_u32(code - 64),
                _ => None,
            });
        match control {
            Some(c) => {
                out.push(c);
                rest = &after[digits + 3..];
            }
            None => {
                out.push('\x1b');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

impl Component for Editor {
    fn render(&self, width: u16) -> Vec<Line> {
        self.view(width).0
    }
}
