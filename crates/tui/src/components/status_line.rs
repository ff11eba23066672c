//! A footer row: a left part and a right part, the right one flush with the right edge.

use ratatui::text::Span;

use crate::{Component, Line, line_width, truncate_line};

/// One row with a left and a right part (the rows of pi's footer: path and git branch, tokens
/// and cost on the left, the model on the right).
///
/// When both do not fit with one column between them, the right part keeps at most half the
/// width and the left part is cut with `…`; at widths below 3 only the left part is shown.
///
/// ```
/// use pi_tui::{Component, Line, StatusLine};
/// use pi_tui::testing::plain;
///
/// let status = StatusLine::new(Line::from("↑1.2k ↓300 $0.012"), Line::from("gpt-5"));
/// assert_eq!(plain(&status.render(30)), "↑1.2k ↓300 $0.012        gpt-5");
/// assert_eq!(plain(&status.render(16)), "↑1.2k ↓30… gpt-5");
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatusLine {
    left: Line,
    right: Line,
}

impl StatusLine {
    /// A row with `left` and `right`.
    pub fn new(left: impl Into<Line>, right: impl Into<Line>) -> Self {
        StatusLine {
            left: left.into(),
            right: right.into(),
        }
    }

    /// The left part.
    pub fn left(&self) -> &Line {
        &self.left
    }

    /// The right part.
    pub fn right(&self) -> &Line {
        &self.right
    }
}

impl Component for StatusLine {
    fn render(&self, width: u16) -> Vec<Line> {
        let width = width.max(1);
        let cols = usize::from(width);
        let left_w = line_width(&self.left);
        let right_w = line_width(&self.right);
        if right_w == 0 || cols < 3 {
            return vec![truncate_line(&self.left, width, "…")];
        }
        let (left, right) = if left_w + 1 + right_w <= cols {
            (
                truncate_line(&self.left, width, ""),
                truncate_line(&self.right, width, ""),
            )
        } else {
            let right_room = right_w.min(cols / 2).max(1);
            let left_room = cols - right_room - 1;
            let right = truncate_line(&self.right, right_room as u16, "…");
            let left = if left_room == 0 {
                Line::default()
            } else {
                truncate_line(&self.left, left_room as u16, "…")
            };
            (left, right)
        };
        let gap = cols.saturating_sub(line_width(&left) + line_width(&right));
        let own_style = |line: Line| {
            let base = line.style;
            line.spans
                .into_iter()
                .map(move |span| Span::styled(span.content, base.patch(span.style)))
        };
        let mut spans: Vec<Span<'static>> = own_style(left).collect();
        spans.push(Span::raw(" ".repeat(gap)));
        spans.extend(own_style(right));
        vec![Line::from(spans)]
    }
}
