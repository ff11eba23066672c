//! Matching crossterm key events, and the row of key hints (`Esc abort · Enter steer`).
//!
//! Terminals report keys differently: Shift+Enter is only told apart from Enter when the
//! terminal speaks the kitty keyboard protocol (`ESC[13;2u`) or xterm's modifyOtherKeys
//! (`ESC[27;2;13~`), both decoded by [`crate::input`]; Alt+key arrives as Esc then the key (folded
//! into an `ALT` modifier), Ctrl+J arrives as a line feed and Ctrl+H as a backspace byte. These
//! helpers accept every form the decoder (and crossterm) produce for a key, and ignore key
//! releases (reported under the kitty protocol).
//!
//! ```
//! use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
//! use pi_tui::keys::{is_alt_enter, is_ctrl, is_enter, is_newline};
//!
//! let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
//! assert!(is_ctrl(&ctrl_c, 'c'));
//! assert!(is_enter(&KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
//! assert!(is_alt_enter(&KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT)));
//! assert!(is_newline(&KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT)));
//! assert!(is_newline(&KeyEvent::new(KeyCode::Char('j'), KeyModifiers::CONTROL)));
//! ```

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::style::Stylize;
use ratatui::text::Span;

use crate::theme::{Slot, Theme};
use crate::{Component, Line, truncate_line};

/// Whether the event is a press (or an auto-repeat), not a release.
///
/// ```
/// use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
/// assert!(pi_tui::keys::is_press(&KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)));
/// ```
pub fn is_press(key: &KeyEvent) -> bool {
    key.kind != KeyEventKind::Release
}

/// The modifiers that change what a key means (Shift only changes which character it types).
fn meaningful(modifiers: KeyModifiers) -> KeyModifiers {
    modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SUPER)
}

/// Ctrl + `c` (a letter, either case; Shift ignored), e.g. `is_ctrl(key, 'c')`.
///
/// ```
/// use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
/// use pi_tui::keys::is_ctrl;
/// assert!(is_ctrl(&KeyEvent::new(KeyCode::Char('C'), KeyModifiers::CONTROL | KeyModifiers::SHIFT), 'c'));
/// assert!(!is_ctrl(&KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL | KeyModifiers::ALT), 'c'));
/// assert!(!is_ctrl(&KeyEvent::new(KeyCode::Char('c'), KeyModifiers::NONE), 'c'));
/// ```
pub fn is_ctrl(key: &KeyEvent, c: char) -> bool {
    is_press(key)
        && meaningful(key.modifiers) == KeyModifiers::CONTROL
        && matches!(key.code, KeyCode::Char(k) if k.eq_ignore_ascii_case(&c))
}

/// Alt + `c` (Shift ignored), e.g. `is_alt(key, 'b')`.
///
/// ```
/// use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
/// use pi_tui::keys::is_alt;
/// assert!(is_alt(&KeyEvent::new(KeyCode::Char('b'), KeyModifiers::ALT), 'b'));
/// ```
pub fn is_alt(key: &KeyEvent, c: char) -> bool {
    is_press(key)
        && meaningful(key.modifiers) == KeyModifiers::ALT
        && matches!(key.code, KeyCode::Char(k) if k.eq_ignore_ascii_case(&c))
}

/// `code` pressed with none of Ctrl, Alt or Super (Shift allowed).
///
/// ```
/// use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
/// use pi_tui::keys::is_key;
/// assert!(is_key(&KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE), KeyCode::Esc));
/// assert!(!is_key(&KeyEvent::new(KeyCode::Left, KeyModifiers::ALT), KeyCode::Left));
/// ```
pub fn is_key(key: &KeyEvent, code: KeyCode) -> bool {
    is_press(key) && key.code == code && meaningful(key.modifiers).is_empty()
}

/// `code` pressed with Alt (Shift allowed, Ctrl and Super not), e.g. Alt+Up.
///
/// ```
/// use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
/// use pi_tui::keys::is_alt_key;
/// assert!(is_alt_key(&KeyEvent::new(KeyCode::Up, KeyModifiers::ALT), KeyCode::Up));
/// assert!(!is_alt_key(&KeyEvent::new(KeyCode::Up, KeyModifiers::NONE), KeyCode::Up));
/// ```
pub fn is_alt_key(key: &KeyEvent, code: KeyCode) -> bool {
    is_press(key) && key.code == code && meaningful(key.modifiers) == KeyModifiers::ALT
}

/// Esc.
///
/// ```
/// use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
/// assert!(pi_tui::keys::is_escape(&KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)));
/// ```
pub fn is_escape(key: &KeyEvent) -> bool {
    is_key(key, KeyCode::Esc)
}

/// Enter with no modifier: submit (or steer, while the agent works).
pub fn is_enter(key: &KeyEvent) -> bool {
    is_press(key) && key.code == KeyCode::Enter && key.modifiers.is_empty()
}

/// Shift+Enter (reported by terminals with the kitty keyboard protocol or modifyOtherKeys).
pub fn is_shift_enter(key: &KeyEvent) -> bool {
    is_press(key) && key.code == KeyCode::Enter && key.modifiers == KeyModifiers::SHIFT
}

/// Alt+Enter: queue a follow-up message.
pub fn is_alt_enter(key: &KeyEvent) -> bool {
    is_press(key) && key.code == KeyCode::Enter && meaningful(key.modifiers) == KeyModifiers::ALT
}

/// Ctrl+Enter (only reported by terminals with the kitty keyboard protocol).
pub fn is_ctrl_enter(key: &KeyEvent) -> bool {
    is_press(key) && key.code == KeyCode::Enter && meaningful(key.modifiers) == KeyModifiers::CONTROL
}

/// A newline in the editor: Shift+Enter, or Ctrl+J (a line feed) where Shift+Enter is not
/// reported.
pub fn is_newline(key: &KeyEvent) -> bool {
    is_shift_enter(key) || is_ctrl(key, 'j')
}

/// The character a key types: a character with neither Ctrl nor Alt (Shift allowed).
///
/// ```
/// use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
/// use pi_tui::keys::printable;
/// assert_eq!(printable(&KeyEvent::new(KeyCode::Char('A'), KeyModifiers::SHIFT)), Some('A'));
/// assert_eq!(printable(&KeyEvent::new(KeyCode::Char('a'), KeyModifiers::CONTROL)), None);
/// ```
pub fn printable(key: &KeyEvent) -> Option<char> {
    match key.code {
        KeyCode::Char(c) if is_press(key) && meaningful(key.modifiers).is_empty() && !c.is_control() => Some(c),
        _ => None,
    }
}

/// A row of key hints: `Esc abort · Enter steer · Alt+Enter follow-up`, keys bright, what they do
/// dimmed, cut with `…` when it does not fit.
///
/// ```
/// use pi_tui::{Component, KeyHint, Theme};
/// use pi_tui::testing::plain;
///
/// let hints = KeyHint::new(&Theme::dark()).key("Esc", "abort").key("Enter", "steer");
/// assert_eq!(plain(&hints.render(80)), "Esc abort · Enter steer");
/// ```
#[derive(Debug, Clone)]
pub struct KeyHint {
    hints: Vec<(String, String)>,
    theme: Theme,
}

impl KeyHint {
    /// No hints yet.
    pub fn new(theme: &Theme) -> Self {
        KeyHint {
            hints: Vec::new(),
            theme: theme.clone(),
        }
    }

    /// Adds `key` doing `action`.
    pub fn key(mut self, key: impl Into<String>, action: impl Into<String>) -> Self {
        self.hints.push((key.into(), action.into()));
        self
    }

    /// The hints as one line, unwrapped.
    pub fn line(&self) -> Line {
        let mut spans = Vec::new();
        for (i, (key, action)) in self.hints.iter().enumerate() {
            if i > 0 {
                spans.push(self.theme.fg(Slot::Dim, " · "));
            }
            spans.push(self.theme.fg(Slot::Muted, key.clone()).bold());
            spans.push(Span::raw(" "));
            spans.push(self.theme.fg(Slot::Dim, action.clone()));
        }
        Line::from(spans)
    }
}

impl Component for KeyHint {
    fn render(&self, width: u16) -> Vec<Line> {
        vec![truncate_line(&self.line(), width, "…")]
    }
}

#[cfg(test)]
mod tests {
    use crossterm::event::KeyEventState;

    use super::*;

    fn release(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent {
            code,
            modifiers,
            kind: KeyEventKind::Release,
            state: KeyEventState::NONE,
        }
    }

    #[test]
    fn releases_match_nothing() {
        assert!(!is_ctrl(&release(KeyCode::Char('c'), KeyModifiers::CONTROL), 'c'));
        assert!(!is_enter(&release(KeyCode::Enter, KeyModifiers::NONE)));
        assert!(printable(&release(KeyCode::Char('a'), KeyModifiers::NONE)).is_none());
    }

    #[test]
    fn enter_variants_are_told_apart() {
        let enter = |m| KeyEvent::new(KeyCode::Enter, m);
        assert!(is_enter(&enter(KeyModifiers::NONE)));
        assert!(!is_enter(&enter(KeyModifiers::SHIFT)));
        assert!(!is_enter(&enter(KeyModifiers::ALT)));
        assert!(is_shift_enter(&enter(KeyModifiers::SHIFT)));
        assert!(is_alt_enter(&enter(KeyModifiers::ALT)));
        assert!(is_alt_enter(&enter(KeyModifiers::ALT | KeyModifiers::SHIFT)));
        assert!(is_ctrl_enter(&enter(KeyModifiers::CONTROL)));
        assert!(!is_newline(&enter(KeyModifiers::ALT)));
    }

    #[test]
    fn shift_enter_in_both_terminal_encodings_is_a_newline() {
        for bytes in [&b"\x1b[13;2u"[..], b"\x1b[27;2;13~"] {
            let decoded = crate::input::InputDecoder::new().feed(bytes);
            let [crate::input::Input::Event(crossterm::event::Event::Key(key))] = decoded.as_slice() else {
                panic!("{bytes:?} decoded as {decoded:?}");
            };
            assert!(is_shift_enter(key), "{bytes:?}");
            assert!(is_newline(key), "{bytes:?}");
            assert!(!is_enter(key), "{bytes:?}");
        }
    }

    #[test]
    fn hints_are_cut_to_the_width() {
        let hints = KeyHint::new(&Theme::plain()).key("Esc", "abort").key("Enter", "steer");
        assert_eq!(crate::testing::plain(&hints.render(12)), "Esc abort ·…");
    }
}
