//! The components: each renders itself to lines for a width ([`Component`](crate::Component)).
//!
//! | component | what it is |
//! | --- | --- |
//! | [`Text`] | a styled paragraph, word-wrapped |
//! | [`Spacer`] | blank rows |
//! | [`Container`] | children one below the other |
//! | [`BoxView`] | padding and a background around children (pi's tool-block box) |
//! | [`Markdown`] | markdown with highlighted code blocks |
//! | [`SelectList`] | a filterable list to choose from |
//! | [`Loader`] | a spinner with a message and the elapsed time |
//! | [`DiffView`] | a coloured line diff with line numbers, collapsible |
//! | [`StatusLine`] | a left and a right part on one row |
//!
//! The [`Editor`](crate::Editor) lives in its own module, [`editor`](crate::editor).

mod boxed;
mod diff;
mod loader;
mod markdown;
mod paragraph;
mod select_list;
mod status_line;

pub use boxed::{BoxView, Boxed, Padding};
pub use diff::{DiffLine, DiffView};
pub use loader::Loader;
pub use markdown::Markdown;
pub use paragraph::{Container, Spacer, Text};
pub use select_list::{SelectItem, SelectList, Selection};
pub use status_line::StatusLine;
