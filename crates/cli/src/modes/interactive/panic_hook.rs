//! Panics while the terminal belongs to the interactive mode.
//!
//! The default hook prints to stderr, which would tear through the live region. While the mode
//! runs, [`install`] routes panic messages instead: a panic on the screen's own thread restores
//! the terminal first and is then printed as usual (pi is going down); a panic in a custom
//! renderer called through [`quietly`] is silent (the block falls back to its plain view); any
//! other panic — a tool's, caught at the loop boundary and reported to the model — is kept for the
//! screen to show as an error notice ([`take_reported`]).

use std::cell::Cell;
use std::panic::PanicHookInfo;
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

thread_local! {
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

type Hook = Box<dyn Fn(&PanicHookInfo<'_>) + Sync + Send + 'static>;

static REPORTED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Runs `f` with panic messages of this thread silenced (for `catch_unwind` around renderers).
pub(super) fn quietly<T>(f: impl FnOnce() -> T) -> T {
    let before = QUIET.with(|q| q.replace(true));
    let out = f();
    QUIET.with(|q| q.set(before));
    out
}

/// The panic messages of other threads since the last call.
pub(super) fn take_reported() -> Vec<String> {
    std::mem::take(&mut *REPORTED.lock().unwrap_or_else(|p| p.into_inner()))
}

/// Puts the previous hook back when dropped.
pub(super) struct HookGuard {
    previous: Option<Arc<Hook>>,
}

impl std::fmt::Debug for HookGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookGuard").finish_non_exhaustive()
    }
}

impl Drop for HookGuard {
    fn drop(&mut self) {
        if let Some(previous) = self.previous.take() {
            // Not while panicking: `set_hook` itself panics then.
            if !std::thread::panicking() {
                std::panic::set_hook(Box::new(move |info| previous(info)));
            }
        }
    }
}

/// Installs the hook for the screen running on thread `ui`; `restore` gives the terminal back.
pub(super) fn install(ui: ThreadId, restore: fn()) -> HookGuard {
    let previous: Arc<Hook> = Arc::new(std::panic::take_hook());
    let chained = previous.clone();
    std::panic::set_hook(Box::new(move |info| {
        if QUIET.with(Cell::get) {
            return;
        }
        if std::thread::current().id() == ui {
            restore();
            chained(info);
            return;
        }
        let message = pi_agent_core::panic_text(info.payload());
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        REPORTED
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(format!("panic{place}: {message}"));
    }));
    HookGuard {
        previous: Some(previous),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_panics_are_caught_without_a_message_and_the_flag_is_restored() {
        let caught = quietly(|| std::panic::catch_unwind(|| panic!("renderer bug")).is_err());
        assert!(caught);
        assert!(!QUIET.with(Cell::get));
    }
}
