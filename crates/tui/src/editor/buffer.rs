//! Positions in the editor's text: grapheme boundaries, line ends, word motions.
//!
//! Every position is a byte offset on an extended grapheme cluster boundary (Unicode's
//! segmentation, from `unicode-segmentation`): an accent stays with its letter, a flag's two
//! regional indicators and a ZWJ emoji sequence are one unit, so the cursor never lands inside
//! one and Backspace removes it whole.

use unicode_segmentation::UnicodeSegmentation;

use crate::text::{Cluster, ClusterKind, display_width};

/// Splits `text` into grapheme clusters, measured for layout.
pub(super) fn graphemes(text: &str) -> impl Iterator<Item = Cluster<'_>> {
    text.grapheme_indices(true).map(|(start, g)| {
        let (kind, width) = match g {
            " " => (ClusterKind::Space, 1),
            "\t" => (ClusterKind::Tab, 0),
            "\n" => (ClusterKind::Newline, 0),
            _ if g.chars().all(char::is_control) => (ClusterKind::Control, 0),
            _ => (ClusterKind::Text, display_width(g)),
        };
        Cluster {
            text: g,
            start,
            width,
            kind,
        }
    })
}

/// Start of the line holding `pos`.
pub(super) fn line_start(text: &str, pos: usize) -> usize {
    text[..pos].rfind('\n').map_or(0, |i| i + 1)
}

/// End of the line holding `pos` (before its newline).
pub(super) fn line_end(text: &str, pos: usize) -> usize {
    text[pos..].find('\n').map_or(text.len(), |i| pos + i)
}

/// The boundary after the grapheme at `pos`.
pub(super) fn next_boundary(text: &str, pos: usize) -> usize {
    text[pos..].graphemes(true).next().map_or(text.len(), |g| pos + g.len())
}

/// The boundary before `pos`.
pub(super) fn prev_boundary(text: &str, pos: usize) -> usize {
    text[..pos].graphemes(true).next_back().map_or(0, |g| pos - g.len())
}

/// `pos`, or the end of the grapheme it falls inside (an edit may join graphemes around the
/// cursor: a zero-width joiner typed between two emoji makes them one).
pub(super) fn settle(text: &str, pos: usize) -> usize {
    let start = line_start(text, pos);
    text[start..]
        .grapheme_indices(true)
        .map(|(i, g)| (start + i, start + i + g.len()))
        .take_while(|&(s, _)| s < pos)
        .find(|&(s, e)| s < pos && pos < e)
        .map_or(pos, |(_, e)| e)
}

/// What a character is, for word motions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Space,
    Word,
    Punctuation,
}

/// pi's punctuation: ASCII symbols; everything else that is not whitespace is a word character
/// (letters, digits, `_`, CJK, emoji).
fn class_at(text: &str, pos: usize) -> Class {
    match text[pos..].chars().next() {
        Some(c) if c.is_whitespace() => Class::Space,
        Some(c) if "(){}[]<>.,;:'\"!?+-=*/\\|&%^$#@~`".contains(c) => Class::Punctuation,
        _ => Class::Word,
    }
}

/// Back over spaces, then over one run of word characters or of punctuation (Alt+B, Ctrl+W,
/// Alt+Backspace).
pub(super) fn word_left(text: &str, mut pos: usize) -> usize {
    while pos > 0 && class_at(text, prev_boundary(text, pos)) == Class::Space {
        pos = prev_boundary(text, pos);
    }
    if pos == 0 {
        return 0;
    }
    let class = class_at(text, prev_boundary(text, pos));
    while pos > 0 && class_at(text, prev_boundary(text, pos)) == class {
        pos = prev_boundary(text, pos);
    }
    pos
}

/// Forward over spaces, then over one run of word characters or of punctuation (Alt+F, Alt+D).
pub(super) fn word_right(text: &str, mut pos: usize) -> usize {
    while pos < text.len() && class_at(text, pos) == Class::Space {
        pos = next_boundary(text, pos);
    }
    if pos == text.len() {
        return pos;
    }
    let class = class_at(text, pos);
    while pos < text.len() && class_at(text, pos) == class {
        pos = next_boundary(text, pos);
    }
    pos
}

/// `text` as the editor keeps it: CRLF and CR become LF, control characters other than newline
/// and tab are dropped.
pub(super) fn sanitize(text: &str) -> String {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    text.chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_keep_accents_with_their_letter() {
        let text = "ae\u{301}b\nc";
        assert_eq!(next_boundary(text, 1), 4);
        assert_eq!(prev_boundary(text, 4), 1);
        assert_eq!(prev_boundary(text, 6), 5); // over the newline
        assert_eq!(next_boundary(text, 5), 6);
        assert_eq!(prev_boundary(text, 0), 0);
        assert_eq!(next_boundary(text, text.len()), text.len());
    }

    #[test]
    fn word_motions_stop_at_punctuation_and_spaces() {
        let text = "let foo_bar = baz.qux();";
        assert_eq!(word_left(text, text.len()), 21);
        assert_eq!(word_left(text, 21), 18);
        assert_eq!(word_left(text, 18), 17);
        assert_eq!(word_left(text, 17), 14);
        assert_eq!(word_right(text, 0), 3);
        assert_eq!(word_right(text, 3), 11);
    }

    #[test]
    fn graphemes_are_units_flags_zwj_emoji_and_accents() {
        let text = "a🇫🇷👩\u{200d}💻e\u{301}";
        let flag = 1;
        let coder = flag + "🇫🇷".len();
        let accent = coder + "👩\u{200d}💻".len();
        assert_eq!(next_boundary(text, 0), flag);
        assert_eq!(next_boundary(text, flag), coder);
        assert_eq!(next_boundary(text, coder), accent);
        assert_eq!(prev_boundary(text, text.len()), accent);
        assert_eq!(prev_boundary(text, accent), coder);
        assert_eq!(prev_boundary(text, coder), flag);
        let widths: Vec<usize> = graphemes(text).map(|g| g.width).collect();
        assert_eq!(widths.len(), 4);
        assert_eq!(widths[1], 2);
    }

    #[test]
    fn word_motions_cross_lines() {
        let text = "one\ntwo";
        assert_eq!(word_left(text, 4), 0);
        assert_eq!(word_right(text, 3), 7);
    }

    #[test]
    fn sanitize_normalises_line_ends_and_drops_controls() {
        assert_eq!(sanitize("a\r\nb\rc\x1b[0m\td\x07"), "a\nb\nc[0m\td");
    }
}
