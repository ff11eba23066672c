//! The terminal while the interactive mode owns it: raw mode and bracketed paste on (keys are read
//! by `input.rs`), everything put back however the mode ends (return, `?`, panic, a
//! signal that exits the process).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{DisableBracketedPaste, EnableBracketedPaste};
use crossterm::terminal;

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
