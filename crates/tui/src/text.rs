//! Measuring text: how many terminal columns a string or a styled line takes.
//!
//! Widths come from `unicode-width`, one *cluster* at a time. A cluster is a character together with
//! the zero-width characters that follow it (combining marks, zero-width joiners, variation selectors),
//! so a combining accent never ends up alone at the start of a wrapped row. A cluster whose base is one
//! column wide and directly followed by the emoji presentation selector (U+FE0F) counts as two
//! columns, as most terminals draw it (a selector with no character before it is dropped); emoji joined by U+200D count as the sum of their parts. Both rules err on the
//! wide side, so a line measured here never overflows the terminal.
//!
//! Control characters take no room and are never printed by this crate (they are dropped when text is
//! wrapped, truncated or padded), with two exceptions: a tab advances to the next multiple of
//! [`TAB_WIDTH`] columns, and a newline ends a row when wrapping.
//!
//! ```
//! use pi_tui::{display_width, line_width};
//! use pi_tui::Line;
//!
//! assert_eq!(display_width("abc"), 3);
//! assert_eq!(display_width("日本"), 4); // wide characters take two columns
//! assert_eq!(display_width("e\u{301}"), 1); // a combining accent takes none
//! assert_eq!(display_width("a\tb"), 5); // the tab runs to column 4
//! assert_eq!(line_width(&Line::from(vec!["ab".into(), "\tc".into()])), 5);
//! ```

use unicode_width::UnicodeWidthChar;

use crate::Line;

/// Tab stops are every `TAB_WIDTH` columns.
pub(crate) const TAB_WIDTH: usize = 4;

/// The emoji presentation selector: makes a one-column symbol an emoji of two.
const EMOJI_PRESENTATION: char = '\u{FE0F}';

/// What a cluster of a string is, for layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClusterKind {
    /// Printable text.
    Text,
    /// A plain space (a break opportunity).
    Space,
    /// A tab: expands to spaces up to the next tab stop.
    Tab,
    /// A line feed: ends a row.
    Newline,
    /// Any other control character: takes no room and is never printed.
    Control,
}

/// A character and the zero-width characters that follow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cluster<'a> {
    /// The cluster's text.
    pub(crate) text: &'a str,
    /// Byte offset of the cluster in the string it came from.
    pub(crate) start: usize,
    /// Columns it takes (0 for tabs, newlines and controls: tabs depend on the column).
    pub(crate) width: usize,
    /// What it is.
    pub(crate) kind: ClusterKind,
}

/// The width of one character, `None` for control characters.
pub(crate) fn char_width(c: char) -> Option<usize> {
    if c.is_control() {
        return None;
    }
    Some(c.width().unwrap_or(0))
}

/// Whether `c` joins the cluster before it.
fn is_zero_width(c: char) -> bool {
    char_width(c) == Some(0)
}

/// Splits `s` into clusters.
pub(crate) fn clusters(s: &str) -> Clusters<'_> {
    Clusters { s, pos: 0 }
}

/// Iterator of [`Cluster`]s, from [`clusters`].
pub(crate) struct Clusters<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Iterator for Clusters<'a> {
    type Item = Cluster<'a>;

    fn next(&mut self) -> Option<Cluster<'a>> {
        let rest = &self.s[self.pos..];
        let mut chars = rest.char_indices();
        let (_, first) = chars.next()?;
        let start = self.pos;
        let (kind, mut width) = match first {
            ' ' => (ClusterKind::Space, 1),
            '\t' => (ClusterKind::Tab, 0),
            '\n' => (ClusterKind::Newline, 0),
            // A presentation selector with no character before it means nothing; were it kept, it
            // could join whatever ends up printed before it and change that character's width.
            EMOJI_PRESENTATION => (ClusterKind::Control, 0),
            c => match char_width(c) {
                None => (ClusterKind::Control, 0),
                Some(w) => (ClusterKind::Text, w),
            },
        };
        let mut end = first.len_utf8();
        if matches!(kind, ClusterKind::Text | ClusterKind::Space) {
            for (index, c) in chars {
                if !is_zero_width(c) {
                    break;
                }
                if c == EMOJI_PRESENTATION && width == 1 && index == first.len_utf8() {
                    width = 2;
                }
                end = index + c.len_utf8();
            }
        }
        // A space carrying a combining mark is something to see, not a break opportunity.
        let kind = if kind == ClusterKind::Space && end > 1 {
            ClusterKind::Text
        } else {
            kind
        };
        self.pos += end;
        Some(Cluster {
            text: &rest[..end],
            start,
            width,
            kind,
        })
    }
}

/// Columns a tab at column `col` advances.
pub(crate) fn tab_advance(col: usize) -> usize {
    TAB_WIDTH - col % TAB_WIDTH
}

/// Display columns of `s`, measured as one row starting at column 0.
///
/// Wide characters count two, combining marks none, a tab runs to the next multiple of
/// 4 columns, control characters (and newlines) count nothing.
///
/// ```
/// use pi_tui::display_width;
/// assert_eq!(display_width("hello"), 5);
/// assert_eq!(display_width("😀!"), 3);
/// assert_eq!(display_width("\x1b[31m"), 4); // ESC counts nothing, "[31m" four
/// ```
pub fn display_width(s: &str) -> usize {
    advance(0, s)
}

/// The column reached after printing `s` from column `col`.
pub(crate) fn advance(mut col: usize, s: &str) -> usize {
    for cluster in clusters(s) {
        col += match cluster.kind {
            ClusterKind::Tab => tab_advance(col),
            _ => cluster.width,
        };
    }
    col
}

/// Display columns of a styled line: the sum over its spans, tabs expanded across span boundaries.
///
/// ```
/// use pi_tui::{line_width, Line};
/// use ratatui::text::Span;
/// let line = Line::from(vec![Span::raw("ab"), Span::raw("日")]);
/// assert_eq!(line_width(&line), 4);
/// ```
pub fn line_width(line: &Line) -> usize {
    line.spans.iter().fold(0, |col, span| advance(col, &span.content))
}

/// The plain text of a line (its spans' contents, concatenated).
///
/// ```
/// use pi_tui::line_text;
/// use pi_tui::Line;
/// assert_eq!(line_text(&Line::from(vec!["a".into(), "b".into()])), "ab");
/// ```
pub fn line_text(line: &Line) -> String {
    line.spans.iter().map(|span| span.content.as_ref()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clusters_keep_combining_marks_with_their_base() {
        let parts: Vec<_> = clusters("e\u{301}x").map(|c| (c.text, c.width)).collect();
        assert_eq!(parts, vec![("e\u{301}", 1), ("x", 1)]);
    }

    #[test]
    fn a_lone_combining_mark_is_a_cluster_of_width_zero() {
        let parts: Vec<_> = clusters("\u{301}a").map(|c| (c.text, c.width)).collect();
        assert_eq!(parts, vec![("\u{301}", 0), ("a", 1)]);
    }

    #[test]
    fn emoji_presentation_makes_two_columns() {
        assert_eq!(display_width("\u{2601}"), 1);
        assert_eq!(display_width("\u{2601}\u{FE0F}"), 2);
    }

    #[test]
    fn controls_and_newlines_count_nothing() {
        assert_eq!(display_width("a\u{7}\u{1b}\r\n\u{9b}b"), 2);
    }

    #[test]
    fn tabs_run_to_the_next_stop() {
        assert_eq!(display_width("\t"), 4);
        assert_eq!(display_width("abc\t"), 4);
        assert_eq!(display_width("abcd\t"), 8);
    }

    #[test]
    fn zero_width_joiner_sequences_count_their_parts() {
        // man, ZWJ, woman: each emoji two columns, the joiner none.
        assert_eq!(display_width("\u{1F468}\u{200D}\u{1F469}"), 4);
    }
}
