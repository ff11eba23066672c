//! Terminal UI library for pi.
//!
//! The building blocks of pi's interactive mode, on ratatui's styled text and crossterm: an inline
//! renderer whose finished blocks go into the terminal's own scrollback, a multi-line editor,
//! markdown with code highlighting, select lists, a loader, a diff view, width-safe wrapping and a
//! theme with pi's colour slots. It depends on none of the other pi crates.
//!
//! Every component renders to lines for a given width ([`Component::render`]) — pi-tui's model:
//! no line is ever wider than the width it was rendered for. The [`InlineRenderer`] prints finished
//! lines once (they live in the terminal's scrollback) and redraws only a live region at the bottom.
//! `docs/tui.md` is the guide.
//!
//! ```
//! use pi_tui::{Component, Line, Text};
//! use pi_tui::testing::plain;
//!
//! let text = Text::new("finished output goes to the scrollback");
//! assert_eq!(plain(&text.render(20)), "finished output goes\nto the scrollback");
//! ```

pub mod ansi;
mod components;
mod editor;
pub mod highlight;
pub mod image;
pub mod input;
pub mod keys;
mod renderer;
pub mod testing;
mod text;
mod theme;
mod wrap;

pub use components::{
    BoxView, Boxed, Container, DiffLine, DiffView, Loader, Markdown, Padding, SelectItem, SelectList, Selection,
    Spacer, StatusLine, Text,
};
pub use editor::{Editor, EditorAction};
pub use keys::KeyHint;
pub use renderer::InlineRenderer;
pub use text::{display_width, line_text, line_width};
pub use theme::{BlockState, ColorMode, Slot, Theme, ThemeError, css_color};
pub use wrap::{pad_line, truncate_line, wrap_line, wrap_text};

/// A line of styled text.
pub type Line = ratatui::text::Line<'static>;

/// Something drawn as lines of at most `width` columns.
///
/// A component is drawn by asking it for its lines at the terminal's width; it keeps no
/// terminal state of its own. Implementations must return no line wider than `width` (the
/// [`wrap_line`] and [`wrap_text`] make that easy).
///
/// ```
/// use pi_tui::{Component, Line, wrap_text};
/// use ratatui::style::Style;
///
/// struct Greeting(String);
///
/// impl Component for Greeting {
///     fn render(&self, width: u16) -> Vec<Line> {
///         wrap_text(&format!("hello, {}", self.0), Style::default(), width)
///     }
/// }
///
/// assert_eq!(Greeting("world".into()).render(8).len(), 2);
/// ```
pub trait Component {
    /// The lines, none wider than `width` display columns.
    fn render(&self, width: u16) -> Vec<Line>;
}

impl<T: Component + ?Sized> Component for Box<T> {
    fn render(&self, width: u16) -> Vec<Line> {
        (**self).render(width)
    }
}

impl<T: Component + ?Sized> Component for &T {
    fn render(&self, width: u16) -> Vec<Line> {
        (**self).render(width)
    }
}

/// The names of pi's theme colour tokens, in the order of pi's theme schema ([`Slot::ALL`]).
pub const THEME_SLOTS: [&str; 51] = [
    "accent",
    "border",
    "borderAccent",
    "borderMuted",
    "success",
    "error",
    "warning",
    "muted",
    "dim",
    "text",
    "thinkingText",
    "selectedBg",
    "userMessageBg",
    "userMessageText",
    "customMessageBg",
    "customMessageText",
    "customMessageLabel",
    "toolPendingBg",
    "toolSuccessBg",
    "toolErrorBg",
    "toolTitle",
    "toolOutput",
    "mdHeading",
    "mdLink",
    "mdLinkUrl",
    "mdCode",
    "mdCodeBlock",
    "mdCodeBlockBorder",
    "mdQuote",
    "mdQuoteBorder",
    "mdHr",
    "mdListBullet",
    "toolDiffAdded",
    "toolDiffRemoved",
    "toolDiffContext",
    "syntaxComment",
    "syntaxKeyword",
    "syntaxFunction",
    "syntaxVariable",
    "syntaxString",
    "syntaxNumber",
    "syntaxType",
    "syntaxOperator",
    "syntaxPunctuation",
    "thinkingOff",
    "thinkingMinimal",
    "thinkingLow",
    "thinkingMedium",
    "thinkingHigh",
    "thinkingXhigh",
    "bashMode",
];
