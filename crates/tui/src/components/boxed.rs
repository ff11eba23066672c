//! A box: padding around children, and a background across the full width (pi's `Box`, the frame of
//! a tool block).

use ratatui::style::{Color, Style};
use ratatui::text::Span;

use crate::{Component, Line, pad_line};

/// Blank space around a box's content, in columns (left, right) and rows (top, bottom).
///
/// ```
/// use pi_tui::Padding;
/// assert_eq!(Padding::symmetric(2, 1), Padding { left: 2, right: 2, top: 1, bottom: 1 });
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Padding {
    /// Columns before the content.
    pub left: u16,
    /// Columns after the content.
    pub right: u16,
    /// Rows above the content.
    pub top: u16,
    /// Rows below the content.
    pub bottom: u16,
}

impl Padding {
    /// No padding.
    pub const ZERO: Padding = Padding {
        left: 0,
        right: 0,
        top: 0,
        bottom: 0,
    };

    /// `x` columns on both sides and `y` rows above and below.
    pub const fn symmetric(x: u16, y: u16) -> Padding {
        Padding {
            left: x,
            right: x,
            top: y,
            bottom: y,
        }
    }

    /// The same padding on all four sides.
    pub const fn uniform(n: u16) -> Padding {
        Padding::symmetric(n, n)
    }
}

/// Children inside padding, optionally on a background that fills every row to the full width
/// (pi's `Box`; a tool block is one with the background of its [`BlockState`](crate::BlockState)).
///
/// Without a background the rows are not filled: only the left padding is added. Horizontal
/// padding that would leave no column for the content is dropped.
///
/// ```
/// use pi_tui::{BlockState, BoxView, Component, Text, Theme};
/// use pi_tui::Padding;
/// use pi_tui::testing::plain;
///
/// let theme = Theme::dark();
/// let block = BoxView::new()
///     .padding(Padding::symmetric(1, 0))
///     .bg(theme.block_bg(BlockState::Success))
///     .with(Text::new("$ ls"));
/// let lines = block.render(10);
/// assert_eq!(plain(&lines), " $ ls");
/// assert_eq!(pi_tui::line_width(&lines[0]), 10); // filled to the width
/// ```
pub struct BoxView {
    children: Vec<Box<dyn Component>>,
    padding: Padding,
    background: Option<Style>,
}

/// Another name for [`BoxView`].
///
/// ```
/// use pi_tui::{Boxed, Component, Text};
/// assert_eq!(Boxed::new().with(Text::new("x")).render(10).len(), 3); // a row of padding above and below
/// ```
pub type Boxed = BoxView;

impl Default for BoxView {
    fn default() -> Self {
        BoxView::new()
    }
}

impl std::fmt::Debug for BoxView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoxView")
            .field("children", &self.children.len())
            .field("padding", &self.padding)
            .field("background", &self.background)
            .finish()
    }
}

impl BoxView {
    /// An empty box with pi's default padding: one column left and right, one row above and
    /// below, no background.
    pub fn new() -> Self {
        BoxView {
            children: Vec::new(),
            padding: Padding::uniform(1),
            background: None,
        }
    }

    /// Sets the padding.
    pub fn padding(mut self, padding: Padding) -> Self {
        self.padding = padding;
        self
    }

    /// Sets a background colour filling every row.
    pub fn bg(self, color: Color) -> Self {
        self.background_style(Style::default().bg(color))
    }

    /// Sets the style every row is filled with (its background shows; a foreground becomes the
    /// default colour of the children's text).
    pub fn background_style(mut self, style: Style) -> Self {
        self.background = Some(style);
        self
    }

    /// Removes the background.
    pub fn no_background(mut self) -> Self {
        self.background = None;
        self
    }

    /// Appends a child (builder style).
    pub fn with(mut self, child: impl Component + 'static) -> Self {
        self.push(child);
        self
    }

    /// Appends a child.
    pub fn push(&mut self, child: impl Component + 'static) {
        self.children.push(Box::new(child));
    }

    /// Removes every child.
    pub fn clear(&mut self) {
        self.children.clear();
    }

    fn blank_row(&self, width: u16) -> Line {
        match self.background {
            Some(style) => pad_line(&Line::default(), width, style),
            None => Line::default(),
        }
    }
}

impl Component for BoxView {
    fn render(&self, width: u16) -> Vec<Line> {
        let width = width.max(1);
        let Padding {
            mut left,
            mut right,
            top,
            bottom,
        } = self.padding;
        if u32::from(left) + u32::from(right) >= u32::from(width) {
            left = 0;
            right = 0;
        }
        let inner = width - left - right;
        let mut out = Vec::new();
        out.extend((0..top).map(|_| self.blank_row(width)));
        for child in &self.children {
            for mut line in child.render(inner) {
                if left > 0 {
                    line.spans.insert(0, Span::raw(" ".repeat(usize::from(left))));
                }
                if let Some(style) = self.background {
                    line.style = style.patch(line.style);
                    line = pad_line(&line, width, style);
                }
                out.push(line);
            }
        }
        out.extend((0..bottom).map(|_| self.blank_row(width)));
        out
    }
}
