//! The editor's text laid out in rows of a width: word wrap that keeps every byte of the text on
//! exactly one row, so a cursor position always has one place on screen.
//!
//! The units are grapheme clusters ([`super::buffer::graphemes`]), so a row never splits one.
//! Text fills at most `width - 1` columns of a row: the last column is kept for the cursor at the
//! end of a line and for the space at which a row breaks, so a wrapped row never starts with the
//! space it broke at and the cursor after a line's last character never needs a row of its own.
//! A row breaks before the word that would overflow it, or inside a word longer than the row. A
//! tab takes [`TAB_WIDTH`] columns; a character wider than the row takes one (it is drawn as
//! `�`).

use super::buffer::graphemes as clusters;
use crate::text::{ClusterKind, TAB_WIDTH};

/// One screen row of the text: bytes `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Row {
    pub(super) start: usize,
    pub(super) end: usize,
    /// The last row of its line: the position `end` (the line's end) belongs to it.
    pub(super) last: bool,
}

/// Columns a cluster takes in a row of `width`.
pub(super) fn cluster_width(kind: ClusterKind, width: usize, row_width: usize) -> usize {
    match kind {
        ClusterKind::Tab => TAB_WIDTH.min(row_width),
        ClusterKind::Text | ClusterKind::Space => width.min(row_width),
        ClusterKind::Newline | ClusterKind::Control => 0,
    }
}

/// Columns of `text` (one row's worth).
pub(super) fn columns(text: &str, row_width: usize) -> usize {
    clusters(text).map(|c| cluster_width(c.kind, c.width, row_width)).sum()
}

/// The rows of `text` at `width` columns (at least 1).
pub(super) fn layout(text: &str, width: usize) -> Vec<Row> {
    let width = width.max(1);
    let mut rows = Vec::new();
    let mut line_start = 0;
    for line in text.split('\n') {
        wrap_line(line, line_start, width, &mut rows);
        line_start += line.len() + 1;
    }
    rows
}

fn wrap_line(line: &str, offset: usize, width: usize, rows: &mut Vec<Row>) {
    let text_limit = if width > 1 { width - 1 } else { 1 };
    let mut row_start = 0;
    let mut col = 0;
    // Where the current word began, if a space came before it in this row.
    let mut word_start: Option<usize> = None;
    let mut prev_space = false;
    for cluster in clusters(line) {
        let space = cluster.kind == ClusterKind::Space;
        let w = cluster_width(cluster.kind, cluster.width, width);
        if !space && prev_space {
            word_start = Some(cluster.start);
        }
        let limit = if space { width } else { text_limit };
        if col + w > limit && cluster.start > row_start {
            let at = match word_start {
                Some(at) if !space && at > row_start => at,
                _ => cluster.start,
            };
            rows.push(Row {
                start: offset + row_start,
                end: offset + at,
                last: false,
            });
            row_start = at;
            col = columns(&line[at..cluster.start], width);
            word_start = None;
            if col + w > limit && cluster.start > row_start {
                // The word moved down is still too long with this cluster: break inside it.
                rows.push(Row {
                    start: offset + row_start,
                    end: offset + cluster.start,
                    last: false,
                });
                row_start = cluster.start;
                col = 0;
            }
        }
        col += w;
        prev_space = space;
    }
    rows.push(Row {
        start: offset + row_start,
        end: offset + line.len(),
        last: true,
    });
}

/// The row and column of byte `pos`.
pub(super) fn locate(text: &str, rows: &[Row], pos: usize, width: usize) -> (usize, usize) {
    let index = rows
        .iter()
        .position(|row| row.start <= pos && (pos < row.end || (row.last && pos == row.end)))
        .unwrap_or(rows.len().saturating_sub(1));
    let Some(row) = rows.get(index) else { return (0, 0) };
    let end = pos.clamp(row.start, row.end);
    (index, columns(&text[row.start..end], width))
}

/// The position in `row` nearest to column `col` (not past it).
pub(super) fn position_at(text: &str, row: Row, col: usize, width: usize) -> usize {
    let mut used = 0;
    for cluster in clusters(&text[row.start..row.end]) {
        let w = cluster_width(cluster.kind, cluster.width, width);
        if used + w > col {
            return row.start + cluster.start;
        }
        used += w;
    }
    if row.last {
        return row.end;
    }
    // The end of a row that is not its line's last belongs to the next row: stop before it.
    clusters(&text[row.start..row.end])
        .last()
        .map_or(row.start, |c| row.start + c.start)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &str, width: usize) -> Vec<&str> {
        layout(text, width).iter().map(|r| &text[r.start..r.end]).collect()
    }

    #[test]
    fn words_move_to_the_next_row_whole() {
        assert_eq!(rows("hello world foo", 8), vec!["hello ", "world ", "foo"]);
        assert_eq!(rows("abcdefghij", 4), vec!["abc", "def", "ghi", "j"]);
        assert_eq!(
            rows("abcdefghij", 1),
            vec!["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]
        );
        assert_eq!(rows("ab\n\ncd", 4), vec!["ab", "", "cd"]);
    }

    #[test]
    fn the_space_at_a_break_ends_the_row_in_the_last_column() {
        assert_eq!(rows("abc efg", 4), vec!["abc ", "efg"]);
        assert_eq!(rows("abcd efg", 4), vec!["abc", "d ", "efg"]);
        assert_eq!(rows("a      b", 4), vec!["a   ", "   ", "b"]);
    }

    #[test]
    fn a_word_moved_down_breaks_again_if_still_too_long() {
        assert_eq!(rows(" ab日", 4), vec![" ", "ab", "日"]);
    }

    #[test]
    fn every_byte_is_on_exactly_one_row() {
        let text = "the quick brown fox\njumps over\n\nthe lazy dog";
        let laid = layout(text, 6);
        let joined: String = laid.iter().map(|r| &text[r.start..r.end]).collect::<Vec<_>>().join("");
        assert_eq!(joined, text.replace('\n', ""));
        for row in &laid {
            assert!(columns(&text[row.start..row.end], 6) <= 6);
        }
    }

    #[test]
    fn positions_map_to_rows_and_back() {
        let text = "hello world";
        let laid = layout(text, 8);
        assert_eq!(locate(text, &laid, 6, 8), (1, 0));
        assert_eq!(locate(text, &laid, 11, 8), (1, 5));
        assert_eq!(position_at(text, laid[0], 3, 8), 3);
        assert_eq!(position_at(text, laid[0], 20, 8), 5);
        assert_eq!(position_at(text, laid[1], 20, 8), 11);
    }
}
