//! What kind of terminal this run has, asked by every mode that may draw a full interface.

/// `TERM=dumb` (or unset): the line mode, not the full interface.
pub(crate) fn dumb_terminal() -> bool {
    matches!(std::env::var("TERM").as_deref(), Err(_) | Ok("dumb") | Ok(""))
}
