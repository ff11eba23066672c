//! pi's theme: named colour slots (the names pi's theme files use) and the backgrounds of tool
//! blocks by state.
//!
//! ```
//! use pi_tui::{Slot, Theme};
//! let theme = Theme::dark();
//! let span = theme.fg(Slot::ToolTitle, "read");
//! assert_eq!(span.content, "read");
//! assert_eq!(Slot::from_name("toolTitle"), Some(Slot::ToolTitle));
//! ```

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;

/// A foreground colour slot of pi's theme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Slot {
    /// Tool names in tool blocks.
    ToolTitle,
    /// Highlights.
    Accent,
    /// Success marks and texts.
    Success,
    /// Errors.
    Error,
    /// Warnings.
    Warning,
    /// Secondary text.
    Muted,
    /// Tertiary text.
    Dim,
    /// A tool's output.
    ToolOutput,
}

impl Slot {
    /// Every slot, in the order of [`crate::THEME_SLOTS`].
    pub const ALL: [Slot; 8] = [
        Slot::ToolTitle,
        Slot::Accent,
        Slot::Success,
        Slot::Error,
        Slot::Warning,
        Slot::Muted,
        Slot::Dim,
        Slot::ToolOutput,
    ];

    /// The slot's name in pi's theme files (`toolTitle`, …).
    pub fn name(self) -> &'static str {
        crate::THEME_SLOTS[self as usize]
    }

    /// The slot called `name`.
    pub fn from_name(name: &str) -> Option<Slot> {
        Slot::ALL.into_iter().find(|slot| slot.name() == name)
    }
}

/// A colour slot of pi's theme for markdown and code (the `md*` and `syntax*` names of pi's theme
/// files).
///
/// ```
/// use pi_tui::{MdSlot, Theme};
/// assert_eq!(MdSlot::Heading.name(), "mdHeading");
/// assert_eq!(MdSlot::from_name("syntaxKeyword"), Some(MdSlot::SyntaxKeyword));
/// let style = Theme::dark().md(MdSlot::Link);
/// assert!(style.fg.is_some());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MdSlot {
    /// Headings.
    Heading,
    /// Link texts.
    Link,
    /// Link targets, shown after the text.
    LinkUrl,
    /// Inline code.
    Code,
    /// Code block text without highlighting.
    CodeBlock,
    /// The fences around a code block.
    CodeBlockBorder,
    /// Block quote text.
    Quote,
    /// The bar before quoted lines.
    QuoteBorder,
    /// Horizontal rules.
    Hr,
    /// List bullets and numbers.
    ListBullet,
    /// Comments in code.
    SyntaxComment,
    /// Keywords in code.
    SyntaxKeyword,
    /// Function names in code.
    SyntaxFunction,
    /// String literals in code.
    SyntaxString,
    /// Number literals in code.
    SyntaxNumber,
    /// Type names in code.
    SyntaxType,
}

impl MdSlot {
    /// Every markdown slot.
    pub const ALL: [MdSlot; 16] = [
        MdSlot::Heading,
        MdSlot::Link,
        MdSlot::LinkUrl,
        MdSlot::Code,
        MdSlot::CodeBlock,
        MdSlot::CodeBlockBorder,
        MdSlot::Quote,
        MdSlot::QuoteBorder,
        MdSlot::Hr,
        MdSlot::ListBullet,
        MdSlot::SyntaxComment,
        MdSlot::SyntaxKeyword,
        MdSlot::SyntaxFunction,
        MdSlot::SyntaxString,
        MdSlot::SyntaxNumber,
        MdSlot::SyntaxType,
    ];

    /// The slot's name in pi's theme files (`mdHeading`, `syntaxKeyword`, …).
    pub fn name(self) -> &'static str {
        match self {
            MdSlot::Heading => "mdHeading",
            MdSlot::Link => "mdLink",
            MdSlot::LinkUrl => "mdLinkUrl",
            MdSlot::Code => "mdCode",
            MdSlot::CodeBlock => "mdCodeBlock",
            MdSlot::CodeBlockBorder => "mdCodeBlockBorder",
            MdSlot::Quote => "mdQuote",
            MdSlot::QuoteBorder => "mdQuoteBorder",
            MdSlot::Hr => "mdHr",
            MdSlot::ListBullet => "mdListBullet",
            MdSlot::SyntaxComment => "syntaxComment",
            MdSlot::SyntaxKeyword => "syntaxKeyword",
            MdSlot::SyntaxFunction => "syntaxFunction",
            MdSlot::SyntaxString => "syntaxString",
            MdSlot::SyntaxNumber => "syntaxNumber",
            MdSlot::SyntaxType => "syntaxType",
        }
    }

    /// The slot called `name`.
    pub fn from_name(name: &str) -> Option<MdSlot> {
        MdSlot::ALL.into_iter().find(|slot| slot.name() == name)
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The state of a tool block, which picks its background.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockState {
    /// Running, or its arguments still streaming.
    Pending,
    /// Finished.
    Success,
    /// Failed.
    Error,
}

/// Colours for every slot and block state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    fg: [Color; 8],
    /// Markdown and syntax colours, in the order of [`MdSlot::ALL`].
    md: [Color; 16],
    /// Backgrounds of tool blocks: pending, success, error.
    block_bg: [Color; 3],
    /// Background of the user's messages.
    pub user_message_bg: Color,
}

impl Default for Theme {
    fn default() -> Self {
        Theme::dark()
    }
}

impl Theme {
    /// pi's dark theme.
    pub fn dark() -> Self {
        Theme {
            fg: [
                Color::Rgb(0xe5, 0xc0, 0x7b), // toolTitle
                Color::Rgb(0x8a, 0xbe, 0xb7), // accent
                Color::Rgb(0xb5, 0xbd, 0x68), // success
                Color::Rgb(0xcc, 0x66, 0x66), // error
                Color::Rgb(0xff, 0xff, 0x00), // warning
                Color::Rgb(0x80, 0x80, 0x80), // muted
                Color::Rgb(0x66, 0x66, 0x66), // dim
                Color::Rgb(0xc5, 0xc8, 0xc6), // toolOutput
            ],
            md: [
                Color::Rgb(0xf0, 0xc6, 0x74), // mdHeading
                Color::Rgb(0x81, 0xa2, 0xbe), // mdLink
                Color::Rgb(0x66, 0x66, 0x66), // mdLinkUrl
                Color::Rgb(0x8a, 0xbe, 0xb7), // mdCode
                Color::Rgb(0xb5, 0xbd, 0x68), // mdCodeBlock
                Color::Rgb(0x80, 0x80, 0x80), // mdCodeBlockBorder
                Color::Rgb(0x80, 0x80, 0x80), // mdQuote
                Color::Rgb(0x80, 0x80, 0x80), // mdQuoteBorder
                Color::Rgb(0x80, 0x80, 0x80), // mdHr
                Color::Rgb(0x8a, 0xbe, 0xb7), // mdListBullet
                Color::Rgb(0x6a, 0x99, 0x55), // syntaxComment
                Color::Rgb(0x56, 0x9c, 0xd6), // syntaxKeyword
                Color::Rgb(0xdc, 0xdc, 0xaa), // syntaxFunction
                Color::Rgb(0xce, 0x91, 0x78), // syntaxString
                Color::Rgb(0xb5, 0xce, 0xa8), // syntaxNumber
                Color::Rgb(0x4e, 0xc9, 0xb0), // syntaxType
            ],
            block_bg: [
                Color::Rgb(0x28, 0x28, 0x32), // pending
                Color::Rgb(0x28, 0x32, 0x28), // success
                Color::Rgb(0x3c, 0x28, 0x28), // error
            ],
            user_message_bg: Color::Rgb(0x34, 0x35, 0x41),
        }
    }

    /// A theme without colours (for dumb terminals and plain snapshots): every slot is the
    /// terminal's default colour.
    pub fn plain() -> Self {
        Theme {
            fg: [Color::Reset; 8],
            md: [Color::Reset; 16],
            block_bg: [Color::Reset; 3],
            user_message_bg: Color::Reset,
        }
    }

    /// A theme whose every slot is a different indexed colour (foregrounds 1–8, markdown 20–35,
    /// block backgrounds 40–42, the user message background 43), so that
    /// [`testing::styled`](crate::testing::styled) can name each colour's slot unambiguously.
    /// Meant for snapshots.
    ///
    /// ```
    /// use pi_tui::{Slot, Theme};
    /// use ratatui::style::Color;
    /// assert_eq!(Theme::indexed().color(Slot::ToolTitle), Color::Indexed(1));
    /// ```
    pub fn indexed() -> Self {
        let mut fg = [Color::Reset; 8];
        for (i, color) in fg.iter_mut().enumerate() {
            *color = Color::Indexed(1 + i as u8);
        }
        let mut md = [Color::Reset; 16];
        for (i, color) in md.iter_mut().enumerate() {
            *color = Color::Indexed(20 + i as u8);
        }
        Theme {
            fg,
            md,
            block_bg: [Color::Indexed(40), Color::Indexed(41), Color::Indexed(42)],
            user_message_bg: Color::Indexed(43),
        }
    }

    /// The colour of `slot`.
    pub fn color(&self, slot: Slot) -> Color {
        self.fg[slot as usize]
    }

    /// Sets the colour of `slot`.
    pub fn set(&mut self, slot: Slot, color: Color) {
        self.fg[slot as usize] = color;
    }

    /// The style of `slot`.
    pub fn style(&self, slot: Slot) -> Style {
        Style::default().fg(self.color(slot))
    }

    /// `text` in `slot`'s colour (pi's `theme.fg(slot, text)`).
    pub fn fg(&self, slot: Slot, text: impl Into<String>) -> Span<'static> {
        Span::styled(text.into(), self.style(slot))
    }

    /// `text` in bold (pi's `theme.bold`).
    pub fn bold(&self, text: impl Into<String>) -> Span<'static> {
        Span::styled(text.into(), Style::default().add_modifier(Modifier::BOLD))
    }

    /// `text` in italics (pi's `theme.italic`).
    pub fn italic(&self, text: impl Into<String>) -> Span<'static> {
        Span::styled(text.into(), Style::default().add_modifier(Modifier::ITALIC))
    }

    /// The colour of a markdown slot.
    pub fn md_color(&self, slot: MdSlot) -> Color {
        self.md[slot.index()]
    }

    /// Sets the colour of a markdown slot.
    pub fn set_md(&mut self, slot: MdSlot, color: Color) {
        self.md[slot.index()] = color;
    }

    /// The style of a markdown slot (its colour as foreground).
    pub fn md(&self, slot: MdSlot) -> Style {
        Style::default().fg(self.md_color(slot))
    }

    /// Sets the background of tool blocks in `state`.
    pub fn set_block_bg(&mut self, state: BlockState, color: Color) {
        self.block_bg[state as usize] = color;
    }

    /// The name of the slot whose colour is `color`, looking at foreground slots first (then
    /// markdown slots) or, with `background`, at backgrounds first: `toolPendingBg`,
    /// `toolSuccessBg`, `toolErrorBg`, `userMessageBg`. `None` if no slot has that colour.
    ///
    /// ```
    /// use pi_tui::{BlockState, Theme};
    /// let theme = Theme::indexed();
    /// assert_eq!(theme.slot_name(theme.block_bg(BlockState::Error), true), Some("toolErrorBg"));
    /// ```
    pub fn slot_name(&self, color: Color, background: bool) -> Option<&'static str> {
        let fg = || {
            Slot::ALL
                .into_iter()
                .find(|slot| self.color(*slot) == color)
                .map(Slot::name)
                .or_else(|| {
                    MdSlot::ALL
                        .into_iter()
                        .find(|slot| self.md_color(*slot) == color)
                        .map(MdSlot::name)
                })
        };
        let bg = || {
            const NAMES: [&str; 3] = ["toolPendingBg", "toolSuccessBg", "toolErrorBg"];
            NAMES
                .iter()
                .zip(self.block_bg)
                .find(|(_, c)| *c == color)
                .map(|(name, _)| *name)
                .or_else(|| (self.user_message_bg == color).then_some("userMessageBg"))
        };
        if color == Color::Reset {
            return None;
        }
        if background { bg().or_else(fg) } else { fg().or_else(bg) }
    }

    /// The background of a tool block in `state`.
    pub fn block_bg(&self, state: BlockState) -> Color {
        self.block_bg[state as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Colours are stored by a slot's discriminant; `ALL` must list the slots in declaration order.
    #[test]
    fn slot_lists_follow_the_declaration_order() {
        for (i, slot) in Slot::ALL.into_iter().enumerate() {
            assert_eq!(slot as usize, i);
            assert_eq!(Slot::from_name(slot.name()), Some(slot));
        }
        for (i, slot) in MdSlot::ALL.into_iter().enumerate() {
            assert_eq!(slot as usize, i);
            assert_eq!(MdSlot::from_name(slot.name()), Some(slot));
        }
        let mut theme = Theme::plain();
        for (state, color) in [
            (BlockState::Pending, Color::Indexed(1)),
            (BlockState::Success, Color::Indexed(2)),
            (BlockState::Error, Color::Indexed(3)),
        ] {
            theme.set_block_bg(state, color);
            assert_eq!(theme.block_bg(state), color);
        }
        theme.set(Slot::Dim, Color::Indexed(9));
        assert_eq!(theme.color(Slot::Dim), Color::Indexed(9));
        assert_ne!(theme.color(Slot::Muted), Color::Indexed(9));
    }
}
