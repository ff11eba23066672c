//! Positions in the editor's text: cluster boundaries, line ends, word motions.
//!
//! Every position is a byte offset on a cluster boundary (a character and the zero-width
//! characters after it, as [`crate::text`] defines), so the cursor never splits an accent from its
//! letter.

use crate::text::clusters;

/// Start of the line holding `pos`.
pub(super) fn line_start(text: &str, pos: usize) -> usize {
    text[..pos].rfind('\n').map_or(0, |i| i + 1)
}

/// End of the line holding `pos` (before its newline).
pub(super) fn line_end(text: &str, pos: usize) -> usize {
    text[pos..].find('\n').map_or(text.len(), |i| pos + i)
}

/// The boundary after the cluster at `pos`.
pub(super) fn next_boundary(text: &str, pos: usize) -> usize {
    clusters(&text[pos..]).next().map_or(text.len(), |c| pos + c.text.len())
}

/// The boundary before `pos`.
pub(super) fn prev_boundary(text: &str, pos: usize) -> usize {
    if pos == 0 {
        return 0;
    }
    let start = line_start(text, pos);
    if start == pos {
        return pos - 1; // the newline before
    }
    clusters(&text[start..pos]).last().map_or(start, |c| start + c.start)
}

/// What a character is, for word motions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Space,
    Word,
    Punctuation,
}

fn class_at(text: &str, pos: usize) -> Class {
    match text[pos..].chars().next() {
        Some(c) if c.is_whitespace() => Class::Space,
        Some(c) if c.is_alphanumeric() || c == '_' => Class::Word,
        _ => Class::Punctuation,
    }
}

/// Back over spaces, then over one run of word characters or of punctuation (Alt+B, Alt+Backspace).
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

/// Back over spaces, then over everything up to the previous space (Ctrl+W, like a shell).
pub(super) fn big_word_left(text: &str, mut pos: usize) -> usize {
    while pos > 0 && class_at(text, prev_boundary(text, pos)) == Class::Space {
        pos = prev_boundary(text, pos);
    }
    while pos > 0 && class_at(text, prev_boundary(text, pos)) != Class::Space {
        pos = prev_boundary(text, pos);
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
        assert_eq!(big_word_left(text, text.len()), 14);
        assert_eq!(big_word_left(text, 14), 12);
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
