//! Decoding the bytes a terminal sends into key, paste and focus events.
//!
//! crossterm's own reader drops every sequence it does not know, and xterm's `modifyOtherKeys`
//! encoding (`ESC[27;2;13~` for Shift+Enter, what tmux and xterm send once asked with
//! `ESC[>4;2m`) is one of them. This decoder reads what pi-tui reads: legacy keys (control bytes,
//! `ESC` + key for Alt, CSI and SS3 cursor and function keys), the kitty keyboard protocol
//! (`ESC[13;2u`, event types and alternate keys), `modifyOtherKeys`, bracketed paste and focus
//! reports; terminal answers in OSC, DCS and APC strings are dropped, and the answer to the kitty
//! query (`ESC[?<flags>u`) is told to the app.
//!
//! Bytes are fed as they arrive; a sequence cut between two reads waits for the rest. A lone
//! `ESC` (or `ESC[` …) with nothing after it is ambiguous: the reader calls
//! [`InputDecoder::flush`] once [`InputDecoder::ESC_TIMEOUT`] passed without more bytes, and it
//! becomes the Esc key (pi-tui waits as long).
//!
//! ```
//! use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
//! use pi_tui::input::{Input, InputDecoder};
//!
//! let mut decoder = InputDecoder::new();
//! let shift_enter = Input::Event(Event::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT)));
//! assert_eq!(decoder.feed(b"\x1b[13;2u"), vec![shift_enter.clone()]);
//! assert_eq!(decoder.feed(b"\x1b[27;2;13~"), vec![shift_enter]);
//! assert_eq!(decoder.feed(b"\x1b[?0u"), vec![Input::KittyFlags(0)]);
//! assert!(decoder.feed(b"\x1b").is_empty());
//! assert!(decoder.has_pending());
//! let esc = Input::Event(Event::Key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)));
//! assert_eq!(decoder.flush(), vec![esc]);
//! ```

use std::time::Duration;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// What the terminal sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A key, a paste or a focus change.
    Event(Event),
    /// The answer to the kitty keyboard query `ESC[?u`: the terminal speaks the protocol, with
    /// these flags set now.
    KittyFlags(u16),
}

/// Turns terminal input bytes into [`Input`]s (see the module docs).
#[derive(Debug, Default, Clone)]
pub struct InputDecoder {
    /// Bytes of a sequence not complete yet.
    pending: Vec<u8>,
    /// Inside a bracketed paste: what was pasted so far.
    paste: Option<Vec<u8>>,
}

const ESC: u8 = 0x1b;
const PASTE_START: &[u8] = b"\x1b[200~";
const PASTE_END: &[u8] = b"\x1b[201~";

/// One step of decoding.
enum Step {
    /// `len` bytes were used, giving this (or nothing, for sequences without meaning here).
    Done(usize, Option<Input>),
    /// The bytes start a sequence that is not complete yet.
    Incomplete,
}

impl InputDecoder {
    /// How long a lone `ESC` waits for the rest of a sequence before it is the Esc key.
    pub const ESC_TIMEOUT: Duration = Duration::from_millis(10);

    /// A decoder with nothing pending.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether bytes wait for the rest of their sequence (call [`flush`](Self::flush) if nothing
    /// more comes within [`ESC_TIMEOUT`](Self::ESC_TIMEOUT)). An open paste does not count: it
    /// waits for its end however long that takes.
    pub fn has_pending(&self) -> bool {
        self.paste.is_none() && !self.pending.is_empty()
    }

    /// Decodes `bytes` after what was pending; an incomplete sequence at the end stays pending.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Input> {
        self.pending.extend_from_slice(bytes);
        self.decode(false)
    }

    /// Decodes what is pending as it is: a lone `ESC` is the Esc key, `ESC[` is Alt+`[`.
    pub fn flush(&mut self) -> Vec<Input> {
        self.decode(true)
    }

    fn decode(&mut self, flush: bool) -> Vec<Input> {
        let mut out = Vec::new();
        let mut at = 0;
        while at < self.pending.len() {
            if let Some(paste) = self.paste.as_mut() {
                let rest = &self.pending[at..];
                match find(rest, PASTE_END) {
                    Some(end) => {
                        paste.extend_from_slice(&rest[..end]);
                        let text = String::from_utf8_lossy(paste).into_owned();
                        self.paste = None;
                        out.push(Input::Event(Event::Paste(text)));
                        at += end + PASTE_END.len();
                    }
                    None => {
                        // Keep a tail that may be the start of the end marker.
                        let keep = partial_suffix(rest, PASTE_END);
                        paste.extend_from_slice(&rest[..rest.len() - keep]);
                        at = self.pending.len() - keep;
                        break;
                    }
                }
                continue;
            }
            let rest = &self.pending[at..];
            if rest.starts_with(PASTE_START) {
                self.paste = Some(Vec::new());
                at += PASTE_START.len();
                continue;
            }
            match step(rest, flush) {
                Step::Done(len, input) => {
                    out.extend(input);
                    at += len.max(1);
                }
                Step::Incomplete => break,
            }
        }
        self.pending.drain(..at.min(self.pending.len()));
        out
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// How many bytes at the end of `bytes` are a proper start of `marker`.
fn partial_suffix(bytes: &[u8], marker: &[u8]) -> usize {
    (1..marker.len())
        .rev()
        .find(|&n| bytes.len() >= n && bytes.ends_with(&marker[..n]))
        .unwrap_or(0)
}

fn key(code: KeyCode, modifiers: KeyModifiers) -> Option<Input> {
    Some(Input::Event(Event::Key(KeyEvent::new(code, modifiers))))
}

fn key_kind(code: KeyCode, modifiers: KeyModifiers, kind: KeyEventKind) -> Option<Input> {
    Some(Input::Event(Event::Key(KeyEvent::new_with_kind(code, modifiers, kind))))
}

/// Decodes the sequence at the start of `bytes` (not empty).
fn step(bytes: &[u8], flush: bool) -> Step {
    if bytes[0] != ESC {
        return plain(bytes, flush);
    }
    let Some(&next) = bytes.get(1) else {
        return if flush {
            Step::Done(1, key(KeyCode::Esc, KeyModifiers::NONE))
        } else {
            Step::Incomplete
        };
    };
    match next {
        b'[' => match csi(bytes, flush) {
            Step::Incomplete if flush => Step::Done(2, key(KeyCode::Char('['), KeyModifiers::ALT)),
            other => other,
        },
        b'O' => match bytes.get(2) {
            None if flush => Step::Done(2, key(KeyCode::Char('O'), KeyModifiers::ALT)),
            None => Step::Incomplete,
            Some(&c) => Step::Done(3, ss3(c)),
        },
        // OSC, DCS, APC, PM, SOS: a terminal's answer (a kitty graphics reply, a colour), up to
        // BEL or ST; never keys. Unterminated after the timeout, it was Alt + that key.
        b']' | b'P' | b'_' | b'^' | b'X' => match string_end(&bytes[2..]) {
            Some(len) => Step::Done(2 + len, None),
            None if flush => Step::Done(2, key(KeyCode::Char(char::from(next)), KeyModifiers::ALT)),
            None => Step::Incomplete,
        },
        // Esc Esc: the first is the Esc key (pi's ctrl+alt+[ is not bound by anything).
        ESC => Step::Done(1, key(KeyCode::Esc, KeyModifiers::NONE)),
        _ => match plain(&bytes[1..], flush) {
            Step::Done(len, Some(Input::Event(Event::Key(mut event)))) => {
                event.modifiers |= KeyModifiers::ALT;
                Step::Done(len + 1, Some(Input::Event(Event::Key(event))))
            }
            Step::Done(len, other) => Step::Done(len + 1, other),
            Step::Incomplete => Step::Incomplete,
        },
    }
}

/// Length of a control string's body with its terminator (BEL or `ESC \\`), if it is all there.
fn string_end(body: &[u8]) -> Option<usize> {
    body.iter().enumerate().find_map(|(i, &b)| match b {
        0x07 => Some(i + 1),
        ESC if body.get(i + 1) == Some(&b'\\') => Some(i + 2),
        _ => None,
    })
}

/// A byte or UTF-8 character that is not an escape sequence.
fn plain(bytes: &[u8], flush: bool) -> Step {
    let b = bytes[0];
    let none = KeyModifiers::NONE;
    let ctrl = KeyModifiers::CONTROL;
    let input = match b {
        b'\r' => key(KeyCode::Enter, none),
        b'\t' => key(KeyCode::Tab, none),
        0x7f => key(KeyCode::Backspace, none),
        0x00 => key(KeyCode::Char(' '), ctrl),
        0x01..=0x1a => key(KeyCode::Char(char::from(b'a' + b - 1)), ctrl),
        0x1b => key(KeyCode::Esc, none),
        0x1c => key(KeyCode::Char('\\'), ctrl),
        0x1d => key(KeyCode::Char(']'), ctrl),
        0x1e => key(KeyCode::Char('^'), ctrl),
        // Ctrl+- (and Ctrl+_ , Ctrl+/ on many keyboards): pi's undo.
        0x1f => key(KeyCode::Char('-'), ctrl),
        0x20..=0x7e => key(KeyCode::Char(char::from(b)), none),
        _ => {
            let len = match b {
                0xc0..=0xdf => 2,
                0xe0..=0xef => 3,
                0xf0..=0xf7 => 4,
                _ => return Step::Done(1, None),
            };
            if bytes.len() < len {
                return if flush {
                    Step::Done(bytes.len(), None)
                } else {
                    Step::Incomplete
                };
            }
            return match std::str::from_utf8(&bytes[..len]).ok().and_then(|s| s.chars().next()) {
                Some(c) => Step::Done(len, key(KeyCode::Char(c), none)),
                None => Step::Done(1, None),
            };
        }
    };
    Step::Done(1, input)
}

/// `ESC O x`: cursor keys in application mode, F1–F4, keypad Enter.
fn ss3(c: u8) -> Option<Input> {
    let code = match c {
        b'A' => KeyCode::Up,
        b'B' => KeyCode::Down,
        b'C' => KeyCode::Right,
        b'D' => KeyCode::Left,
        b'H' => KeyCode::Home,
        b'F' => KeyCode::End,
        b'M' => KeyCode::Enter,
        b'P' => KeyCode::F(1),
        b'Q' => KeyCode::F(2),
        b'R' => KeyCode::F(3),
        b'S' => KeyCode::F(4),
        _ => return None,
    };
    key(code, KeyModifiers::NONE)
}

/// `ESC [` parameters, intermediates, final byte.
fn csi(bytes: &[u8], flush: bool) -> Step {
    let body = &bytes[2..];
    let Some(end) = body.iter().position(|b| !(0x20..=0x3f).contains(b)) else {
        return Step::Incomplete;
    };
    let final_byte = body[end];
    if !(0x40..=0x7e).contains(&final_byte) {
        // Not a sequence after all: drop the `ESC [` and what came before the odd byte.
        return Step::Done(2 + end, None);
    }
    let params = std::str::from_utf8(&body[..end]).unwrap_or("");
    let len = 2 + end + 1;
    if final_byte == b'M' && params.is_empty() {
        // X10 mouse report: three raw bytes follow.
        return if bytes.len() >= len + 3 || flush {
            Step::Done((len + 3).min(bytes.len()), None)
        } else {
            Step::Incomplete
        };
    }
    Step::Done(len, csi_input(params, final_byte))
}

/// Modifiers of a `1 + bits` parameter (Caps Lock and Num Lock ignored).
fn modifiers(param: u16) -> KeyModifiers {
    let bits = param.saturating_sub(1);
    let mut mods = KeyModifiers::NONE;
    for (bit, modifier) in [
        (1, KeyModifiers::SHIFT),
        (2, KeyModifiers::ALT),
        (4, KeyModifiers::CONTROL),
        (8, KeyModifiers::SUPER),
        (16, KeyModifiers::HYPER),
        (32, KeyModifiers::META),
    ] {
        if bits & bit != 0 {
            mods |= modifier;
        }
    }
    mods
}

fn event_kind(param: Option<&str>) -> KeyEventKind {
    match param.and_then(|p| p.parse::<u8>().ok()) {
        Some(2) => KeyEventKind::Repeat,
        Some(3) => KeyEventKind::Release,
        _ => KeyEventKind::Press,
    }
}

/// `mods[:kind]` as modifiers and event kind (absent: none, press).
fn mods_and_kind(field: Option<&str>) -> (KeyModifiers, KeyEventKind) {
    let Some(field) = field else {
        return (KeyModifiers::NONE, KeyEventKind::Press);
    };
    let mut parts = field.split(':');
    let mods = parts.next().and_then(|m| m.parse::<u16>().ok()).unwrap_or(1);
    (modifiers(mods), event_kind(parts.next()))
}

fn csi_input(params: &str, final_byte: u8) -> Option<Input> {
    let fields: Vec<&str> = params.split(';').collect();
    let (mods, kind) = mods_and_kind(fields.get(1).copied());
    let code = match final_byte {
        b'A' => KeyCode::Up,
        b'B' => KeyCode::Down,
        b'C' => KeyCode::Right,
        b'D' => KeyCode::Left,
        b'H' => KeyCode::Home,
        b'F' => KeyCode::End,
        b'E' => KeyCode::KeypadBegin,
        b'P' => KeyCode::F(1),
        b'Q' => KeyCode::F(2),
        b'S' => KeyCode::F(4),
        // `ESC[1;<m>R` is F3; anything else ending in R is a cursor position report.
        b'R' if fields.first() == Some(&"1") => KeyCode::F(3),
        b'Z' => return key_kind(KeyCode::BackTab, mods | KeyModifiers::SHIFT, kind),
        b'I' if params.is_empty() => return Some(Input::Event(Event::FocusGained)),
        b'O' if params.is_empty() => return Some(Input::Event(Event::FocusLost)),
        b'u' => return kitty(params),
        b'~' => return tilde(&fields),
        _ => return None,
    };
    key_kind(code, mods, kind)
}

/// `ESC [ n ; m ~`: editing and function keys, and `modifyOtherKeys` (`27;m;code`).
fn tilde(fields: &[&str]) -> Option<Input> {
    let first = fields.first()?.parse::<u16>().ok()?;
    if first == 27 {
        // xterm modifyOtherKeys: ESC [ 27 ; mods ; code ~
        let mods = fields.get(1)?.parse::<u16>().ok()?;
        let code = fields.get(2)?.parse::<u32>().ok()?;
        return codepoint_key(code, None, modifiers(mods), KeyEventKind::Press);
    }
    let (mods, kind) = mods_and_kind(fields.get(1).copied());
    let code = match first {
        1 | 7 => KeyCode::Home,
        2 => KeyCode::Insert,
        3 => KeyCode::Delete,
        4 | 8 => KeyCode::End,
        5 => KeyCode::PageUp,
        6 => KeyCode::PageDown,
        11..=15 => KeyCode::F((first - 10) as u8),
        17..=21 => KeyCode::F((first - 11) as u8),
        23..=26 => KeyCode::F((first - 12) as u8),
        28 | 29 => KeyCode::F((first - 15) as u8),
        31..=34 => KeyCode::F((first - 17) as u8),
        _ => return None,
    };
    key_kind(code, mods, kind)
}

/// `ESC [ code[:shifted[:base]] ; mods[:kind] [; text] u`, or the query answer `ESC [ ? flags u`.
fn kitty(params: &str) -> Option<Input> {
    if let Some(flags) = params.strip_prefix('?') {
        return Some(Input::KittyFlags(flags.parse().unwrap_or(0)));
    }
    let mut fields = params.split(';');
    let mut codes = fields.next()?.split(':');
    let code = codes.next()?.parse::<u32>().ok()?;
    let shifted = codes
        .next()
        .and_then(|s| s.parse::<u32>().ok())
        .and_then(char::from_u32);
    let (mods, kind) = mods_and_kind(fields.next());
    codepoint_key(code, shifted, mods, kind)
}

/// The key of a Unicode code point or kitty functional key number.
fn codepoint_key(code: u32, shifted: Option<char>, mods: KeyModifiers, kind: KeyEventKind) -> Option<Input> {
    let key_code = match code {
        13 | 57414 => KeyCode::Enter,
        9 => KeyCode::Tab,
        27 => KeyCode::Esc,
        8 | 127 => KeyCode::Backspace,
        57399..=57408 => KeyCode::Char(char::from_digit(code - 57399, 10)?),
        57409 => KeyCode::Char('.'),
        57410 => KeyCode::Char('/'),
        57411 => KeyCode::Char('*'),
        57412 => KeyCode::Char('-'),
        57413 => KeyCode::Char('+'),
        57415 => KeyCode::Char('='),
        57417 => KeyCode::Left,
        57418 => KeyCode::Right,
        57419 => KeyCode::Up,
        57420 => KeyCode::Down,
        57421 => KeyCode::PageUp,
        57422 => KeyCode::PageDown,
        57423 => KeyCode::Home,
        57424 => KeyCode::End,
        57425 => KeyCode::Insert,
        57426 => KeyCode::Delete,
        // Other private-use numbers: modifier keys alone, media keys — nothing pi binds.
        57344..=63743 => return None,
        _ => {
            let c = char::from_u32(code)?;
            let c = match shifted {
                Some(s) if mods.contains(KeyModifiers::SHIFT) => s,
                _ if mods.contains(KeyModifiers::SHIFT) && c.is_ascii_lowercase() => c.to_ascii_uppercase(),
                _ => c,
            };
            KeyCode::Char(c)
        }
    };
    let (key_code, mods) = match key_code {
        KeyCode::Tab if mods.contains(KeyModifiers::SHIFT) => (KeyCode::BackTab, mods),
        other => (other, mods),
    };
    key_kind(key_code, mods, kind)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const NONE: KeyModifiers = KeyModifiers::NONE;
    const SHIFT: KeyModifiers = KeyModifiers::SHIFT;
    const CTRL: KeyModifiers = KeyModifiers::CONTROL;
    const ALT: KeyModifiers = KeyModifiers::ALT;

    fn keys(bytes: &[u8]) -> Vec<(KeyCode, KeyModifiers)> {
        let mut decoder = InputDecoder::new();
        let mut out = decoder.feed(bytes);
        out.extend(decoder.flush());
        out.into_iter()
            .filter_map(|input| match input {
                Input::Event(Event::Key(k)) if k.kind != KeyEventKind::Release => Some((k.code, k.modifiers)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn shift_enter_in_both_encodings() {
        assert_eq!(keys(b"\x1b[13;2u"), vec![(KeyCode::Enter, SHIFT)]);
        assert_eq!(keys(b"\x1b[27;2;13~"), vec![(KeyCode::Enter, SHIFT)]);
        assert_eq!(keys(b"\r"), vec![(KeyCode::Enter, NONE)]);
        assert_eq!(keys(b"\x1b[13;3u"), vec![(KeyCode::Enter, ALT)]);
        assert_eq!(keys(b"\x1b[27;5;13~"), vec![(KeyCode::Enter, CTRL)]);
    }

    #[test]
    fn modify_other_keys_control_letters() {
        assert_eq!(keys(b"\x1b[27;5;99~"), vec![(KeyCode::Char('c'), CTRL)]);
        assert_eq!(keys(b"\x1b[27;6;112~"), vec![(KeyCode::Char('P'), CTRL | SHIFT)]);
        assert_eq!(keys(b"\x1b[27;2;9~"), vec![(KeyCode::BackTab, SHIFT)]);
    }

    #[test]
    fn legacy_keys() {
        assert_eq!(
            keys(b"a\x03\x7f\t\n"),
            vec![
                (KeyCode::Char('a'), NONE),
                (KeyCode::Char('c'), CTRL),
                (KeyCode::Backspace, NONE),
                (KeyCode::Tab, NONE),
                (KeyCode::Char('j'), CTRL),
            ]
        );
        assert_eq!(keys(b"\x1f"), vec![(KeyCode::Char('-'), CTRL)]);
        assert_eq!(keys("日".as_bytes()), vec![(KeyCode::Char('日'), NONE)]);
        assert_eq!(
            keys(b"\x1bb\x1b\r\x1b\x7f"),
            vec![
                (KeyCode::Char('b'), ALT),
                (KeyCode::Enter, ALT),
                (KeyCode::Backspace, ALT)
            ]
        );
        assert_eq!(
            keys(b"\x1b[A\x1b[1;5D\x1bOB\x1b[3~\x1b[Z"),
            vec![
                (KeyCode::Up, NONE),
                (KeyCode::Left, CTRL),
                (KeyCode::Down, NONE),
                (KeyCode::Delete, NONE),
                (KeyCode::BackTab, SHIFT),
            ]
        );
    }

    #[test]
    fn kitty_keys_with_event_types_and_alternates() {
        assert_eq!(keys(b"\x1b[99;5u"), vec![(KeyCode::Char('c'), CTRL)]);
        assert_eq!(keys(b"\x1b[112:80;6u"), vec![(KeyCode::Char('P'), CTRL | SHIFT)]);
        assert_eq!(keys(b"\x1b[45;5u"), vec![(KeyCode::Char('-'), CTRL)]);
        assert_eq!(keys(b"\x1b[27u"), vec![(KeyCode::Esc, NONE)]);
        // A release is decoded as one (the editor ignores it).
        let mut decoder = InputDecoder::new();
        let out = decoder.feed(b"\x1b[97;1:3u");
        assert!(matches!(&out[..], [Input::Event(Event::Key(k))] if k.kind == KeyEventKind::Release));
        assert_eq!(keys(b"\x1b[57441;2u"), vec![]); // Shift alone
    }

    #[test]
    fn sequences_split_across_reads_wait_for_the_rest() {
        let mut decoder = InputDecoder::new();
        assert!(decoder.feed(b"\x1b[13").is_empty());
        assert!(decoder.has_pending());
        assert_eq!(decoder.feed(b";2u").len(), 1);
        assert!(!decoder.has_pending());
        assert!(decoder.feed(&"é".as_bytes()[..1]).is_empty());
        assert_eq!(
            decoder.feed(&"é".as_bytes()[1..]),
            vec![Input::Event(Event::Key(KeyEvent::new(KeyCode::Char('é'), NONE)))]
        );
    }

    #[test]
    fn a_lone_escape_is_the_esc_key_after_the_timeout() {
        let mut decoder = InputDecoder::new();
        assert!(decoder.feed(b"\x1b").is_empty());
        assert_eq!(
            decoder.flush(),
            vec![Input::Event(Event::Key(KeyEvent::new(KeyCode::Esc, NONE)))]
        );
        assert!(!decoder.has_pending());
        assert_eq!(keys(b"\x1b\x1b"), vec![(KeyCode::Esc, NONE), (KeyCode::Esc, NONE)]);
    }

    #[test]
    fn bracketed_paste_is_one_event_even_when_split() {
        let mut decoder = InputDecoder::new();
        assert!(decoder.feed(b"\x1b[200~line 1\r\nline").is_empty());
        assert!(!decoder.has_pending());
        assert!(decoder.feed(b" 2\x1b[20").is_empty());
        assert_eq!(
            decoder.feed(b"1~x"),
            vec![
                Input::Event(Event::Paste("line 1\r\nline 2".into())),
                Input::Event(Event::Key(KeyEvent::new(KeyCode::Char('x'), NONE))),
            ]
        );
    }

    #[test]
    fn terminal_answers_in_control_strings_are_not_keys() {
        assert_eq!(
            keys(b"\x1b_Gi=31;OK\x1b\\a\x1b]11;rgb:0000/0000/0000\x07b"),
            vec![(KeyCode::Char('a'), NONE), (KeyCode::Char('b'), NONE)]
        );
        // Alt+] typed alone.
        assert_eq!(keys(b"\x1b]"), vec![(KeyCode::Char(']'), ALT)]);
    }

    #[test]
    fn kitty_query_answer_and_focus() {
        let mut decoder = InputDecoder::new();
        assert_eq!(
            decoder.feed(b"\x1b[?7u\x1b[I"),
            vec![Input::KittyFlags(7), Input::Event(Event::FocusGained)]
        );
    }

    proptest! {
        #[test]
        fn any_bytes_decode_without_panic_and_nothing_stays_after_flush(
            chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..12), 0..8)
        ) {
            let mut decoder = InputDecoder::new();
            for chunk in &chunks {
                decoder.feed(chunk);
            }
            decoder.flush();
            prop_assert!(!decoder.has_pending());
        }
    }
}
