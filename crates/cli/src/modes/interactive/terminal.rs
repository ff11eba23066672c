//! The terminal while the interactive mode owns it: raw mode, bracketed paste and the keyboard
//! protocols on, keys read on a thread of their own, everything put back however the mode ends
//! (return, `?`, panic, a signal that exits the process).
//!
//! Keyboard protocols, as pi-tui negotiates them: the input thread asks `ESC[?u`; a terminal that
//! answers `ESC[?<flags>u` speaks the kitty protocol and gets crossterm's
//! `PushKeyboardEnhancementFlags` with pi's flags (disambiguate escape codes, report event types,
//! report alternate keys: `ESC[>7u`). With no answer within 150 ms, xterm's `modifyOtherKeys`
//! mode 2 is switched on instead (`ESC[>4;2m`, what tmux forwards). Either way Shift+Enter
//! reaches the editor (`ESC[13;2u` or `ESC[27;2;13~`, decoded by [`pi_tui::input`]); a terminal
//! that does neither sends Enter, and Ctrl+J or `\` + Enter make the newline. [`restore`] pops
//! whatever was pushed.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, Event, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags,
    PushKeyboardEnhancementFlags,
};
use crossterm::terminal;
use tokio::sync::mpsc;

/// True while raw mode is on (so [`restore`] knows whether there is anything to undo).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// True while the kitty keyboard flags are pushed.
static KITTY: AtomicBool = AtomicBool::new(false);
/// True while modifyOtherKeys is on.
static MODIFY_OTHER_KEYS: AtomicBool = AtomicBool::new(false);

/// Raw mode and bracketed paste for as long as it lives.
#[derive(Debug)]
pub(super) struct TerminalGuard(());

impl TerminalGuard {
    /// Switches the terminal to raw mode with bracketed paste.
    pub(super) fn enter() -> std::io::Result<TerminalGuard> {
        terminal::enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        let mut out = std::io::stdout();
        crossterm::execute!(out, EnableBracketedPaste)?;
        Ok(TerminalGuard(()))
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Gives the terminal back (keyboard protocols popped, cooked mode, no bracketed paste, cursor
/// shown) if the interactive mode has it. Safe to call from anywhere, any number of times — the
/// signal handler and the panic hook call it before exiting.
pub fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let mut out = std::io::stdout();
        let pops = Negotiation::pops(
            KITTY.swap(false, Ordering::SeqCst),
            MODIFY_OTHER_KEYS.swap(false, Ordering::SeqCst),
        );
        let _ = out.write_all(pops.as_bytes());
        let _ = crossterm::execute!(out, DisableBracketedPaste, crossterm::cursor::Show);
        let _ = terminal::disable_raw_mode();
        let _ = out.flush();
    }
}

/// The terminal's size, 80 × 24 when it cannot be read.
pub(super) fn size() -> (u16, u16) {
    terminal::size().unwrap_or((80, 24))
}

/// The keyboard protocol negotiation's state (see the module docs).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Negotiation {
    kitty: bool,
    modify_other_keys: bool,
}

impl Negotiation {
    /// The kitty protocol query, written when input reading starts.
    const QUERY: &'static str = "\x1b[?u";
    /// How long the answer may take before modifyOtherKeys is used instead (pi-tui's wait).
    const FALLBACK_AFTER: Duration = Duration::from_millis(150);
    /// xterm modifyOtherKeys mode 2 on / off.
    const MODIFY_OTHER_KEYS_ON: &'static str = "\x1b[>4;2m";
    const MODIFY_OTHER_KEYS_OFF: &'static str = "\x1b[>4;0m";

    fn flags() -> KeyboardEnhancementFlags {
        KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES
            | KeyboardEnhancementFlags::REPORT_EVENT_TYPES
            | KeyboardEnhancementFlags::REPORT_ALTERNATE_KEYS
    }

    /// The terminal answered the query: what to write to push pi's flags (once).
    fn kitty_answered(&mut self) -> Option<String> {
        if self.kitty {
            return None;
        }
        self.kitty = true;
        Some(ansi(PushKeyboardEnhancementFlags(Self::flags())))
    }

    /// No answer in time: what to write to switch modifyOtherKeys on (once, and not after the
    /// kitty protocol is on).
    fn no_answer(&mut self) -> Option<&'static str> {
        if self.kitty || self.modify_other_keys {
            return None;
        }
        self.modify_other_keys = true;
        Some(Self::MODIFY_OTHER_KEYS_ON)
    }

    /// What undoes the protocols that are on.
    fn pops(kitty: bool, modify_other_keys: bool) -> String {
        let mut out = String::new();
        if kitty {
            out.push_str(&ansi(PopKeyboardEnhancementFlags));
        }
        if modify_other_keys {
            out.push_str(Self::MODIFY_OTHER_KEYS_OFF);
        }
        out
    }
}

fn ansi(command: impl crossterm::Command) -> String {
    let mut out = String::new();
    let _ = command.write_ansi(&mut out);
    out
}

/// Stops the input thread when dropped.
#[derive(Debug)]
pub(super) struct InputStop {
    #[cfg(unix)]
    wake: Option<std::os::unix::net::UnixStream>,
    #[cfg(not(unix))]
    stop: std::sync::Arc<AtomicBool>,
}

impl Drop for InputStop {
    fn drop(&mut self) {
        #[cfg(unix)]
        {
            use std::io::Write as _;
            if let Some(wake) = self.wake.as_mut() {
                let _ = wake.write_all(b"x");
            }
        }
        #[cfg(not(unix))]
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// Reads terminal events on a thread until the receiver or the [`InputStop`] is dropped; resize
/// events come from SIGWINCH.
#[cfg(unix)]
pub(super) fn spawn_input() -> (mpsc::UnboundedReceiver<Event>, InputStop) {
    use std::io::IsTerminal;
    use std::os::fd::AsFd;

    let (tx, rx) = mpsc::unbounded_channel();
    let (wake, woken) = match std::os::unix::net::UnixStream::pair() {
        Ok(pair) => pair,
        // Without an input thread the receiver reports the end of input at once and the mode ends.
        Err(_) => return (rx, InputStop { wake: None }),
    };
    let stdin = std::io::stdin();
    let tty = if stdin.is_terminal() {
        stdin.as_fd().try_clone_to_owned().map(std::fs::File::from)
    } else {
        std::fs::File::open("/dev/tty")
    };
    if let Ok(handle) = tokio::runtime::Handle::try_current() {
        let tx = tx.clone();
        handle.spawn(async move {
            use tokio::signal::unix::{SignalKind, signal};
            let Ok(mut winch) = signal(SignalKind::window_change()) else {
                return;
            };
            while winch.recv().await.is_some() {
                let (width, height) = size();
                if tx.send(Event::Resize(width, height)).is_err() {
                    break;
                }
            }
        });
    }
    if let Ok(tty) = tty {
        let _ = std::thread::Builder::new()
            .name("pi-input".to_owned())
            .spawn(move || read_loop(tty, &woken, &tx, StdoutSink));
    }
    (rx, InputStop { wake: Some(wake) })
}

/// Where the negotiation's sequences go; the real one also records what is on for [`restore`].
trait Sink {
    fn write(&mut self, sequence: &str, negotiation: &Negotiation);
}

struct StdoutSink;

impl Sink for StdoutSink {
    fn write(&mut self, sequence: &str, negotiation: &Negotiation) {
        if !ACTIVE.load(Ordering::SeqCst) {
            return;
        }
        KITTY.store(negotiation.kitty, Ordering::SeqCst);
        MODIFY_OTHER_KEYS.store(negotiation.modify_other_keys, Ordering::SeqCst);
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(sequence.as_bytes());
        let _ = out.flush();
    }
}

/// Reads `tty` until end of input, an error, a byte on `woken` or the receiver going away: blocks
/// in `poll` (no periodic wake-ups), except for the short waits of the kitty query and of a lone
/// `ESC`.
#[cfg(unix)]
fn read_loop(
    mut tty: impl std::io::Read + std::os::fd::AsFd,
    woken: &impl std::os::fd::AsFd,
    tx: &mpsc::UnboundedSender<Event>,
    mut sink: impl Sink,
) {
    use nix::errno::Errno;
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use pi_tui::input::{Input, InputDecoder};
    use std::time::Instant;

    let mut decoder = InputDecoder::new();
    let mut negotiation = Negotiation::default();
    sink.write(Negotiation::QUERY, &negotiation);
    let deadline = Instant::now() + Negotiation::FALLBACK_AFTER;
    let mut settled = false;
    let mut buf = [0u8; 4096];
    let deliver = |inputs: Vec<Input>, negotiation: &mut Negotiation, sink: &mut dyn FnMut(&str, &Negotiation)| {
        for input in inputs {
            match input {
                Input::Event(event) => {
                    if tx.send(event).is_err() {
                        return false;
                    }
                }
                Input::KittyFlags(_) => {
                    if let Some(push) = negotiation.kitty_answered() {
                        sink(&push, negotiation);
                    }
                }
            }
        }
        true
    };
    let mut write = |sequence: &str, negotiation: &Negotiation| sink.write(sequence, negotiation);
    loop {
        if tx.is_closed() {
            break;
        }
        let now = Instant::now();
        if !settled && now >= deadline {
            settled = true;
            if let Some(on) = negotiation.no_answer() {
                write(on, &negotiation);
            }
        }
        let wait = if decoder.has_pending() {
            Some(InputDecoder::ESC_TIMEOUT)
        } else if !settled {
            Some(deadline.saturating_duration_since(now))
        } else {
            None
        };
        let timeout = wait.map_or(PollTimeout::NONE, |w| {
            PollTimeout::try_from(w.max(Duration::from_millis(1))).unwrap_or(PollTimeout::MAX)
        });
        let mut fds = [
            PollFd::new(tty.as_fd(), PollFlags::POLLIN),
            PollFd::new(woken.as_fd(), PollFlags::POLLIN),
        ];
        match poll(&mut fds, timeout) {
            Err(Errno::EINTR) => continue,
            Err(_) => break,
            Ok(0) => {
                if decoder.has_pending() && !deliver(decoder.flush(), &mut negotiation, &mut write) {
                    break;
                }
                continue;
            }
            Ok(_) => {}
        }
        if fds[1].revents().is_some_and(|r| !r.is_empty()) {
            break;
        }
        if fds[0].revents().is_some_and(|r| !r.is_empty()) {
            match tty.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    if !deliver(decoder.feed(&buf[..n]), &mut negotiation, &mut write) {
                        break;
                    }
                }
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
    }
}

/// Reads terminal events with crossterm where there is no `poll` (not unix).
#[cfg(not(unix))]
pub(super) fn spawn_input() -> (mpsc::UnboundedReceiver<Event>, InputStop) {
    let (tx, rx) = mpsc::unbounded_channel();
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let _ = std::thread::Builder::new().name("pi-input".to_owned()).spawn(move || {
        while !flag.load(Ordering::SeqCst) && !tx.is_closed() {
            match crossterm::event::poll(Duration::from_millis(50)) {
                Ok(true) => match crossterm::event::read() {
                    Ok(event) => {
                        if tx.send(event).is_err() {
                            break;
                        }
                    }
                    Err(_) => break,
                },
                Ok(false) => {}
                Err(_) => break,
            }
        }
    });
    (rx, InputStop { stop })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kitty_answer_pushes_pis_flags_and_pops_them() {
        let mut negotiation = Negotiation::default();
        assert_eq!(negotiation.kitty_answered().as_deref(), Some("\x1b[>7u"));
        assert_eq!(negotiation.kitty_answered(), None);
        assert_eq!(negotiation.no_answer(), None);
        assert_eq!(Negotiation::pops(true, false), "\x1b[<1u");
    }

    #[test]
    fn no_answer_falls_back_to_modify_other_keys() {
        let mut negotiation = Negotiation::default();
        assert_eq!(negotiation.no_answer(), Some("\x1b[>4;2m"));
        assert_eq!(negotiation.no_answer(), None);
        assert_eq!(Negotiation::pops(false, true), "\x1b[>4;0m");
        assert_eq!(Negotiation::pops(false, false), "");
    }

    #[cfg(unix)]
    mod reader {
        use std::io::Write as _;
        use std::os::unix::net::UnixStream;
        use std::sync::{Arc, Mutex};

        use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

        use super::super::*;

        #[derive(Clone, Default)]
        struct Recorder(Arc<Mutex<String>>);

        impl Sink for Recorder {
            fn write(&mut self, sequence: &str, _: &Negotiation) {
                self.0.lock().unwrap_or_else(|p| p.into_inner()).push_str(sequence);
            }
        }

        fn start() -> (UnixStream, UnixStream, mpsc::UnboundedReceiver<Event>, Recorder) {
            let (tty, mut keyboard) = UnixStream::pair().expect("pair");
            let (wake, woken) = UnixStream::pair().expect("pair");
            let (tx, rx) = mpsc::unbounded_channel();
            let recorder = Recorder::default();
            let sink = recorder.clone();
            std::thread::spawn(move || read_loop(tty, &woken, &tx, sink));
            keyboard.flush().expect("flush");
            (keyboard, wake, rx, recorder)
        }

        fn written(recorder: &Recorder) -> String {
            recorder.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
        }

        fn next(rx: &mut mpsc::UnboundedReceiver<Event>) -> Event {
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            loop {
                if let Ok(event) = rx.try_recv() {
                    return event;
                }
                assert!(std::time::Instant::now() < deadline, "no event");
                std::thread::sleep(Duration::from_millis(5));
            }
        }

        #[test]
        fn a_kitty_terminal_gets_the_flags_and_shift_enter_arrives() {
            let (mut keyboard, _wake, mut rx, recorder) = start();
            keyboard.write_all(b"\x1b[?0u\x1b[13;2u").expect("write");
            let shift_enter = Event::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT));
            assert_eq!(next(&mut rx), shift_enter);
            std::thread::sleep(Negotiation::FALLBACK_AFTER + Duration::from_millis(100));
            assert_eq!(written(&recorder), "\x1b[?u\x1b[>7u");
        }

        #[test]
        fn a_silent_terminal_gets_modify_other_keys_and_its_shift_enter_arrives() {
            let (mut keyboard, wake, mut rx, recorder) = start();
            // The fallback comes once the reader's wait has passed (later on a busy machine).
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while written(&recorder) != "\x1b[?u\x1b[>4;2m" && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            assert_eq!(written(&recorder), "\x1b[?u\x1b[>4;2m");
            keyboard.write_all(b"a\x1b[27;2;13~b\x1b").expect("write");
            let keys: Vec<Event> = (0..4).map(|_| next(&mut rx)).collect();
            assert_eq!(
                keys,
                vec![
                    Event::Key(KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE)),
                    Event::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT)),
                    Event::Key(KeyEvent::new(KeyCode::Char('b'), KeyModifiers::NONE)),
                    // The lone ESC, after its timeout.
                    Event::Key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)),
                ]
            );
            drop(InputStop { wake: Some(wake) });
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while !rx.is_closed() {
                assert!(std::time::Instant::now() < deadline, "the reader did not stop");
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
}
