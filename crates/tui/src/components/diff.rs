//! A line diff, coloured, with line numbers, collapsible (the preview of `edit` and `ast_edit`).

use ratatui::style::Style;
use ratatui::text::Span;
use similar::{ChangeTag, TextDiff};

use crate::theme::{Slot, Theme};
use crate::{Component, Line, truncate_line, wrap_line};

/// One line of a diff.
///
/// ```
/// use pi_tui::{DiffLine, DiffView, Theme};
/// let diff = DiffView::from_unified("-old\n+new", &Theme::plain());
/// assert_eq!(diff.lines()[1], DiffLine::Added { new: 1, text: "new".into() });
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DiffLine {
    /// Unchanged, with its numbers in the old and the new text (1-based).
    Context {
        /// Number in the old text.
        old: usize,
        /// Number in the new text.
        new: usize,
        /// The line.
        text: String,
    },
    /// Only in the old text.
    Removed {
        /// Number in the old text.
        old: usize,
        /// The line.
        text: String,
    },
    /// Only in the new text.
    Added {
        /// Number in the new text.
        new: usize,
        /// The line.
        text: String,
    },
    /// Unchanged lines left out between hunks (0 when the count is unknown).
    Skipped(usize),
    /// Anything else a unified diff carries: file headers, `\ No newline at end of file`.
    Note(String),
}

/// A line diff: removed lines in the theme's error colour with `-`, added ones in its success colour
/// with `+`, unchanged ones dimmed, each with its line number (the new one, or the old one for a
/// removed line). Long lines wrap under their text.
///
/// Collapsed ([`with_max_lines`](DiffView::with_max_lines)), it shows the first lines and
/// `… N more lines`; [`set_expanded`](DiffView::set_expanded) shows everything (pi's Ctrl+O).
///
/// ```
/// use pi_tui::{Component, DiffView, Theme};
/// use pi_tui::testing::plain;
///
/// let diff = DiffView::from_texts("a\nb\nc\n", "a\nB\nc\n", &Theme::dark());
/// assert_eq!(plain(&diff.render(40)), "1   a\n2 - b\n2 + B\n3   c");
/// assert_eq!((diff.added(), diff.removed()), (1, 1));
/// ```
#[derive(Debug, Clone)]
pub struct DiffView {
    lines: Vec<DiffLine>,
    max_lines: Option<usize>,
    expanded: bool,
    theme: Theme,
}

/// The text of a line without its line ending.
fn strip_eol(line: &str) -> String {
    line.strip_suffix('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .unwrap_or(line)
        .to_owned()
}

/// `(start, count)` of one side of a hunk header (`-12,3` or `+4`).
fn hunk_range(part: &str) -> Option<usize> {
    part.get(1..)?.split(',').next()?.parse().ok()
}

impl DiffView {
    /// Unchanged lines shown around each change by [`from_texts`](DiffView::from_texts).
    pub const CONTEXT: usize = 3;

    /// A diff of already classified lines.
    pub fn new(lines: Vec<DiffLine>, theme: &Theme) -> Self {
        DiffView {
            lines,
            max_lines: None,
            expanded: false,
            theme: theme.clone(),
        }
    }

    /// The diff of two texts, with [`CONTEXT`](DiffView::CONTEXT) unchanged lines around each
    /// change and the unchanged runs between them shown as skipped.
    pub fn from_texts(old: &str, new: &str, theme: &Theme) -> Self {
        let diff = TextDiff::from_lines(old, new);
        let mut lines = Vec::new();
        let mut shown_old = 0;
        for group in diff.grouped_ops(Self::CONTEXT) {
            let Some(first) = group.first() else { continue };
            let start = first.old_range().start;
            if start == shown_old + 1 && shown_old > 0 {
                // A single unchanged line between hunks: show it rather than say it is skipped.
                let offset = first.new_range().start as isize - start as isize;
                let text = diff
                    .old_slices()
                    .get(shown_old)
                    .map(|s| strip_eol(s))
                    .unwrap_or_default();
                let new = (shown_old as isize + offset + 1) as usize;
                lines.push(DiffLine::Context {
                    old: shown_old + 1,
                    new,
                    text,
                });
            } else if start > shown_old {
                lines.push(DiffLine::Skipped(start - shown_old));
            }
            for op in &group {
                for change in diff.iter_changes(op) {
                    let text = strip_eol(change.value());
                    let old = change.old_index().map_or(0, |i| i + 1);
                    let new = change.new_index().map_or(0, |i| i + 1);
                    lines.push(match change.tag() {
                        ChangeTag::Equal => DiffLine::Context { old, new, text },
                        ChangeTag::Delete => DiffLine::Removed { old, text },
                        ChangeTag::Insert => DiffLine::Added { new, text },
                    });
                }
                shown_old = op.old_range().end;
            }
        }
        let old_len = diff.old_slices().len();
        if !lines.is_empty() && old_len > shown_old {
            lines.push(DiffLine::Skipped(old_len - shown_old));
        }
        DiffView::new(lines, theme)
    }

    /// Parses a unified diff, or bare `-` / `+` / ` ` lines (numbered from 1). `@@ -a,b +c,d @@`
    /// headers set the line numbers; a gap between hunks shows as skipped lines.
    pub fn from_unified(diff: &str, theme: &Theme) -> Self {
        let mut lines = Vec::new();
        let (mut old, mut new) = (1, 1);
        let mut in_hunk = false;
        for raw in diff.lines() {
            if let Some(header) = raw.strip_prefix("@@ ") {
                let mut parts = header.split_whitespace();
                let old_start = parts.next().and_then(hunk_range);
                let new_start = parts.next().and_then(hunk_range);
                if let (Some(old_start), Some(new_start)) = (old_start, new_start) {
                    if in_hunk && new_start > new {
                        lines.push(DiffLine::Skipped(new_start - new));
                    }
                    old = old_start;
                    new = new_start;
                    in_hunk = true;
                    continue;
                }
            }
            let is_header = ["--- ", "+++ ", "diff ", "index "].iter().any(|p| raw.starts_with(p));
            if !in_hunk && is_header {
                lines.push(DiffLine::Note(raw.to_owned()));
            } else if let Some(text) = raw.strip_prefix('-') {
                lines.push(DiffLine::Removed {
                    old,
                    text: text.to_owned(),
                });
                old += 1;
            } else if let Some(text) = raw.strip_prefix('+') {
                lines.push(DiffLine::Added {
                    new,
                    text: text.to_owned(),
                });
                new += 1;
            } else if raw.starts_with('\\') {
                lines.push(DiffLine::Note(raw.to_owned()));
            } else {
                let text = raw.strip_prefix(' ').unwrap_or(raw);
                lines.push(DiffLine::Context {
                    old,
                    new,
                    text: text.to_owned(),
                });
                old += 1;
                new += 1;
            }
        }
        DiffView::new(lines, theme)
    }

    /// Collapses the diff to its first `lines` lines (until expanded).
    pub fn with_max_lines(mut self, lines: usize) -> Self {
        self.max_lines = Some(lines);
        self
    }

    /// Shows every line (`true`) or the collapsed view (`false`).
    pub fn set_expanded(&mut self, expanded: bool) {
        self.expanded = expanded;
    }

    /// Flips between collapsed and expanded.
    pub fn toggle_expanded(&mut self) {
        self.expanded = !self.expanded;
    }

    /// Whether every line is shown.
    pub fn is_expanded(&self) -> bool {
        self.expanded
    }

    /// The lines of the diff.
    pub fn lines(&self) -> &[DiffLine] {
        &self.lines
    }

    /// How many lines were added.
    pub fn added(&self) -> usize {
        self.lines
            .iter()
            .filter(|l| matches!(l, DiffLine::Added { .. }))
            .count()
    }

    /// How many lines were removed.
    pub fn removed(&self) -> usize {
        self.lines
            .iter()
            .filter(|l| matches!(l, DiffLine::Removed { .. }))
            .count()
    }

    /// The number shown for a line.
    fn number(line: &DiffLine) -> Option<usize> {
        match line {
            DiffLine::Context { new, .. } | DiffLine::Added { new, .. } => Some(*new),
            DiffLine::Removed { old, .. } => Some(*old),
            DiffLine::Skipped(_) | DiffLine::Note(_) => None,
        }
    }

    /// The rows of one diff line: gutter (number and sign) then the text, wrapped under itself.
    fn rows(&self, line: &DiffLine, number_w: usize, width: u16) -> Vec<Line> {
        let theme = &self.theme;
        let (sign, text, style) = match line {
            DiffLine::Context { text, .. } => (" ", text.clone(), theme.style(Slot::Dim)),
            DiffLine::Removed { text, .. } => ("-", text.clone(), theme.style(Slot::Error)),
            DiffLine::Added { text, .. } => ("+", text.clone(), theme.style(Slot::Success)),
            DiffLine::Skipped(0) => (" ", "⋯".to_owned(), theme.style(Slot::Muted)),
            DiffLine::Skipped(n) => {
                let noun = if *n == 1 { "line" } else { "lines" };
                (" ", format!("⋯ {n} unchanged {noun}"), theme.style(Slot::Muted))
            }
            DiffLine::Note(text) => {
                return vec![truncate_line(
                    &Line::from(theme.fg(Slot::Dim, text.clone())),
                    width,
                    "…",
                )];
            }
        };
        let number = Self::number(line).map(|n| n.to_string()).unwrap_or_default();
        let gutter = format!("{number:>number_w$} {sign} ");
        let gutter_w = number_w + 3;
        if gutter_w + 1 > usize::from(width) {
            // No room for a gutter: the text alone.
            let row = Line::from(Span::styled(format!("{sign}{text}"), style));
            return wrap_line(&row, width);
        }
        let text_w = usize::from(width) - gutter_w;
        // Rows a long line wraps into stay under its own indentation.
        let body = text.trim_start_matches([' ', '\t']);
        let indent = crate::display_width(&text[..text.len() - body.len()]);
        let (indent, body) = if indent <= text_w / 2 {
            (indent, body)
        } else {
            (0, text.as_str())
        };
        wrap_line(
            &Line::from(Span::styled(body.to_owned(), style)),
            (text_w - indent) as u16,
        )
        .into_iter()
        .enumerate()
        .map(|(i, mut row)| {
            let lead = if i == 0 { gutter.clone() } else { " ".repeat(gutter_w) };
            row.spans
                .insert(0, Span::styled(format!("{lead}{}", " ".repeat(indent)), style));
            row
        })
        .collect()
    }
}

impl Component for DiffView {
    fn render(&self, width: u16) -> Vec<Line> {
        let width = width.max(1);
        let number_w = self
            .lines
            .iter()
            .filter_map(Self::number)
            .max()
            .unwrap_or(0)
            .to_string()
            .len();
        let shown = match self.max_lines {
            Some(max) if !self.expanded => max.min(self.lines.len()),
            _ => self.lines.len(),
        };
        let mut out: Vec<Line> = self.lines[..shown]
            .iter()
            .flat_map(|line| self.rows(line, number_w, width))
            .collect();
        let hidden = self.lines.len() - shown;
        if hidden > 0 {
            let noun = if hidden == 1 { "line" } else { "lines" };
            let more = Line::from(Span::styled(
                format!("… {hidden} more {noun}"),
                self.theme.style(Slot::Muted),
            ));
            out.push(truncate_line(&more, width, "…"));
        }
        out.into_iter().map(|line| line.style(Style::default())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::plain;

    #[test]
    fn unchanged_runs_between_changes_are_skipped() {
        let old: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 2\n", "line two\n")
            .replace("line 18\n", "line eighteen\n");
        let diff = DiffView::from_texts(&old, &new, &Theme::plain());
        let text = plain(&diff.render(60));
        assert!(text.contains("⋯ 9 unchanged lines"), "{text}");
        assert!(text.starts_with(" 1   line 1\n 2 - line 2\n 2 + line two"), "{text}");
        assert!(text.ends_with("20   line 20"), "{text}");
    }

    #[test]
    fn identical_texts_give_an_empty_diff() {
        assert!(DiffView::from_texts("a\n", "a\n", &Theme::plain()).lines().is_empty());
    }

    #[test]
    fn unified_hunk_headers_set_the_numbers() {
        let unified = "--- a/f.rs\n+++ b/f.rs\n@@ -10,2 +10,2 @@\n keep\n-old\n+new\n@@ -40 +40 @@\n-x\n\\ No newline at end of file\n";
        let diff = DiffView::from_unified(unified, &Theme::plain());
        assert_eq!(
            plain(&diff.render(40)),
            "--- a/f.rs\n+++ b/f.rs\n10   keep\n11 - old\n11 + new\n     ⋯ 28 unchanged lines\n40 - x\n\\ No newline at end of file"
        );
    }

    #[test]
    fn bare_lines_are_numbered_from_one() {
        let diff = DiffView::from_unified("-a\n+b\n c", &Theme::plain());
        assert_eq!(plain(&diff.render(20)), "1 - a\n1 + b\n2   c");
    }

    #[test]
    fn collapsed_shows_the_rest_as_a_count() {
        let mut diff = DiffView::from_unified("+1\n+2\n+3\n+4", &Theme::plain()).with_max_lines(2);
        assert_eq!(plain(&diff.render(20)), "1 + 1\n2 + 2\n… 2 more lines");
        diff.toggle_expanded();
        assert_eq!(diff.render(20).len(), 4);
    }

    #[test]
    fn tiny_widths_drop_the_gutter() {
        let diff = DiffView::from_unified("+abc", &Theme::plain());
        assert_eq!(plain(&diff.render(3)), "+ab\nc");
    }
}
