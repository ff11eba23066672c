//! Terminal UI library for pi.
//!
//! This crate will hold the ratatui + crossterm building blocks of pi's interactive mode: an inline
//! viewport whose finished blocks go into the terminal's own scrollback, a multi-line editor,
//! markdown with code highlighting, select lists, a loader, a diff view, width-safe wrapping and
//! a theme with pi's colour slots. It depends on none of the other pi crates.
//!
//! The colour slots are fixed already:
//!
//! ```
//! assert!(pi_tui::THEME_SLOTS.contains(&"toolTitle"));
//! ```

/// The names of pi's theme colour slots, in the order pi's theme files list them.
pub const THEME_SLOTS: [&str; 8] = [
    "toolTitle",
    "accent",
    "success",
    "error",
    "warning",
    "muted",
    "dim",
    "toolOutput",
];
