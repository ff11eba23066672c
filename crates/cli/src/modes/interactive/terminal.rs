//! The terminal while the interactive mode owns it: raw mode and bracketed paste on, keys read on
//! a thread of their own, everything put back however the mode ends (return, `?`, panic, a
//! signal that exits the process).

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crossterm::event::{self, DisableBracketedPaste, EnableBracketedPaste, Event};
use crossterm::terminal;
use tokio::sync::mpsc;

/// True while raw mode is on (so [`restore`] knows whether there is anything to undo).
static ACTIVE: AtomicBool = AtomicBool::new(false);

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

/// Gives the terminal back (cooked mode, no bracketed paste, cursor shown) if the interactive
/// mode has it. Safe to call from anywhere, any number of times — the signal handler calls it
/// before exiting.
pub fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let mut out = std::io::stdout();
        let _ = crossterm::execute!(out, DisableBracketedPaste, crossterm::cursor::Show);
        let _ = terminal::disable_raw_mode();
        let _ = out.flush();
    }
}

/// The terminal's size, 80 × 24 when it cannot be read.
pub(super) fn size() -> (u16, u16) {
    terminal::size().unwrap_or((80, 24))
}

/// Reads terminal events on a thread until the receiver is dropped or `stop` is set.
pub(super) fn spawn_input(stop: Arc<AtomicBool>) -> mpsc::UnboundedReceiver<Event> {
    let (tx, rx) = mpsc::unbounded_channel();
    // Without an input thread the receiver reports the end of input at once and the mode ends.
    let _ = std::thread::Builder::new().name("pi-input".to_owned()).spawn(move || {
        while !stop.load(Ordering::SeqCst) && !tx.is_closed() {
            match event::poll(Duration::from_millis(50)) {
                Ok(true) => match event::read() {
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
    rx
}
