//! Plain building blocks: a wrapped paragraph, blank rows, and a vertical stack.

use ratatui::style::Style;
use ratatui::text::Span;

use crate::{Component, Line, wrap_line};

/// A styled paragraph, word-wrapped to the width (pi's `Text`).
///
/// Each of its lines wraps on its own; newlines inside the text start new lines.
///
/// ```
/// use pi_tui::{Component, Text};
/// use pi_tui::testing::plain;
/// use ratatui::style::{Style, Stylize};
///
/// let text = Text::styled("error: file not found", Style::default().red());
/// assert_eq!(plain(&text.render(12)), "error: file\nnot found");
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Text {
    lines: Vec<Line>,
    padding_x: u16,
}

impl Text {
    /// Unstyled text.
    pub fn new(text: impl Into<String>) -> Self {
        Text::styled(text, Style::default())
    }

    /// Text in one style.
    pub fn styled(text: impl Into<String>, style: Style) -> Self {
        Text {
            lines: vec![Line::from(Span::styled(text.into(), style))],
            padding_x: 0,
        }
    }

    /// Already styled lines.
    pub fn from_lines(lines: Vec<Line>) -> Self {
        Text { lines, padding_x: 0 }
    }

    /// Blank columns left and right of the text (pi's `paddingX`).
    pub fn padding_x(mut self, columns: u16) -> Self {
        self.padding_x = columns;
        self
    }

    /// Appends a line.
    pub fn push(&mut self, line: Line) {
        self.lines.push(line);
    }

    /// The lines, unwrapped.
    pub fn lines(&self) -> &[Line] {
        &self.lines
    }
}

impl Component for Text {
    fn render(&self, width: u16) -> Vec<Line> {
        let width = width.max(1);
        // Padding that would leave no room for text is dropped.
        let pad = if self.padding_x.saturating_mul(2) < width {
            self.padding_x
        } else {
            0
        };
        let inner = width - 2 * pad;
        let indent = " ".repeat(usize::from(pad));
        self.lines
            .iter()
            .flat_map(|line| wrap_line(line, inner))
            .map(|mut line| {
                if pad > 0 {
                    line.spans.insert(0, Span::raw(indent.clone()));
                }
                line
            })
            .collect()
    }
}

/// Blank rows (pi's `Spacer`).
///
/// ```
/// use pi_tui::{Component, Spacer};
/// assert_eq!(Spacer(2).render(80).len(), 2);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spacer(pub u16);

impl Component for Spacer {
    fn render(&self, _width: u16) -> Vec<Line> {
        vec![Line::default(); usize::from(self.0)]
    }
}

/// Children drawn one below the other (pi's `Container`).
///
/// ```
/// use pi_tui::{Component, Container, Spacer, Text};
/// let mut column = Container::new();
/// column.push(Text::new("one"));
/// column.push(Spacer(1));
/// column.push(Text::new("two"));
/// assert_eq!(column.render(10).len(), 3);
/// ```
#[derive(Default)]
pub struct Container {
    children: Vec<Box<dyn Component>>,
}

impl Container {
    /// An empty container.
    pub fn new() -> Self {
        Container::default()
    }

    /// Appends a child.
    pub fn push(&mut self, child: impl Component + 'static) {
        self.children.push(Box::new(child));
    }

    /// Appends a child (builder style).
    pub fn with(mut self, child: impl Component + 'static) -> Self {
        self.push(child);
        self
    }

    /// How many children it has.
    pub fn len(&self) -> usize {
        self.children.len()
    }

    /// Whether it has no children.
    pub fn is_empty(&self) -> bool {
        self.children.is_empty()
    }

    /// Removes every child.
    pub fn clear(&mut self) {
        self.children.clear();
    }
}

impl std::fmt::Debug for Container {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Container")
            .field("children", &self.children.len())
            .finish()
    }
}

impl Component for Container {
    fn render(&self, width: u16) -> Vec<Line> {
        self.children.iter().flat_map(|child| child.render(width)).collect()
    }
}
