//! Text preparation for `edit`: the UTF-8 byte-order mark, line endings, and the fuzzy
//! normalisation under which an `oldText` may still match.

use std::borrow::Cow;

use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};

/// The UTF-8 byte-order mark as a character.
pub(super) const BOM: char = '\u{FEFF}';

/// The line ending a file is written back with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LineEnding {
    /// `\n`.
    Lf,
    /// `\r\n`.
    CrLf,
}

/// Splits a leading byte-order mark off `text`: `(had_bom, rest)`.
pub(super) fn strip_bom(text: &str) -> (bool, &str) {
    match text.strip_prefix(BOM) {
        Some(rest) => (true, rest),
        None => (false, text),
    }
}

/// The file's line ending: CRLF when its first line break is a CRLF (the first CRLF comes before
/// the first bare LF), LF otherwise (also when there is no line break at all).
pub(super) fn detect_line_ending(text: &str) -> LineEnding {
    match text.find('\n') {
        Some(index) if index > 0 && text.as_bytes()[index - 1] == b'\r' => LineEnding::CrLf,
        _ => LineEnding::Lf,
    }
}

/// Turns every CRLF, and every CR left alone, into LF (as pi does).
pub(super) fn normalize_to_lf(text: &str) -> Cow<'_, str> {
    if !text.contains('\r') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(index) = rest.find('\r') {
        out.push_str(&rest[..index]);
        out.push('\n');
        rest = &rest[index + 1..];
        if let Some(after) = rest.strip_prefix('\n') {
            rest = after;
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// Writes LF-normalised `text` back with `ending`.
pub(super) fn restore_line_endings(text: &str, ending: LineEnding) -> Cow<'_, str> {
    match ending {
        LineEnding::CrLf if text.contains('\n') => Cow::Owned(text.replace('\n', "\r\n")),
        _ => Cow::Borrowed(text),
    }
}

/// The whitespace JavaScript's `trimEnd` removes (ECMAScript WhiteSpace and LineTerminator).
fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{000B}' | '\u{000C}' | '\r' | ' ' | '\u{00A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}' | '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\u{FEFF}'
    )
}

/// The ASCII stand-in of a typographic character, if it has one: smart single quotes → `'`,
/// smart double quotes → `"`, U+2010–2015 and U+2212 → `-`, NBSP, U+2002–200A, U+202F, U+205F
/// and U+3000 → space.
fn fuzzy_char(c: char) -> Option<char> {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => Some('\''),
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => Some('"'),
        '\u{2010}'..='\u{2015}' | '\u{2212}' => Some('-'),
        '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => Some(' '),
        _ => None,
    }
}

/// Whitespace `trimEnd` removes from an ASCII line.
fn is_ascii_trailing_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\u{000B}' | '\u{000C}' | '\r' | ' ')
}

/// The fuzzy form of one line (no `\n` inside); borrowed exactly when it is the line itself.
fn normalize_line(line: &str) -> Cow<'_, str> {
    if line.is_ascii() {
        let trimmed = line.trim_end_matches(is_ascii_trailing_whitespace);
        return if trimmed.len() == line.len() {
            Cow::Borrowed(line)
        } else {
            Cow::Owned(trimmed.to_owned())
        };
    }
    let composed: Cow<'_, str> = if is_nfkc_quick(line.chars()) == IsNormalized::Yes {
        Cow::Borrowed(line)
    } else {
        Cow::Owned(line.nfkc().collect())
    };
    let trimmed = composed.trim_end_matches(is_js_whitespace);
    let unchanged = matches!(composed, Cow::Borrowed(_))
        && trimmed.len() == line.len()
        && !trimmed.chars().any(|c| fuzzy_char(c).is_some());
    if unchanged {
        Cow::Borrowed(line)
    } else {
        Cow::Owned(trimmed.chars().map(|c| fuzzy_char(c).unwrap_or(c)).collect())
    }
}

/// pi's fuzzy normalisation: NFKC, trailing whitespace removed from every line, then smart
/// quotes, Unicode dashes and Unicode spaces replaced by their ASCII forms. Line breaks are kept,
/// so the result has as many lines as `text`. Borrows when nothing changes.
///
/// Works line by line in one pass, copying runs of unchanged lines in one go: NFKC never combines
/// across a `\n` (a starter that composes with nothing), so normalising each line alone gives
/// the same text.
pub fn normalize_for_fuzzy_match(text: &str) -> Cow<'_, str> {
    let mut out: Option<String> = None;
    // Start of the unchanged lines not yet copied to `out`.
    let mut pending = 0;
    let mut line_start = 0;
    for line in text.split('\n') {
        if let Cow::Owned(normalized) = normalize_line(line) {
            let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
            out.push_str(&text[pending..line_start]);
            out.push_str(&normalized);
            pending = line_start + line.len();
        }
        line_start += line.len() + 1;
    }
    match out {
        Some(mut out) => {
            out.push_str(&text[pending..]);
            Cow::Owned(out)
        }
        None => Cow::Borrowed(text),
    }
}

/// Number of `\n` in `text` (a vectorisable count, several times faster than iterating matches).
pub(super) fn count_newlines(text: &str) -> usize {
    text.as_bytes()
        .chunks(255)
        .map(|chunk| usize::from(chunk.iter().fold(0u8, |n, &b| n + u8::from(b == b'\n'))))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The helpers at a glance (the example the module documentation used to carry).
    #[test]
    fn module_example() {
        assert_eq!(detect_line_ending("a\r\nb\n"), LineEnding::CrLf);
        assert_eq!(normalize_to_lf("a\r\nb\rc"), "a\nb\nc");
        assert_eq!(
            normalize_for_fuzzy_match("say \u{201C}hi\u{201D}  \nx\u{00A0}\u{2014}y"),
            "say \"hi\"\nx -y"
        );
    }

    #[test]
    fn bom_is_split_off() {
        assert_eq!(strip_bom("\u{FEFF}abc"), (true, "abc"));
        assert_eq!(strip_bom("abc\u{FEFF}"), (false, "abc\u{FEFF}"));
    }

    #[test]
    fn line_ending_follows_the_first_break() {
        assert_eq!(detect_line_ending("a\r\nb\nc"), LineEnding::CrLf);
        assert_eq!(detect_line_ending("a\nb\r\nc"), LineEnding::Lf);
        assert_eq!(detect_line_ending("no break"), LineEnding::Lf);
        assert_eq!(detect_line_ending("\r\n"), LineEnding::CrLf);
        assert_eq!(detect_line_ending("\n\r\n"), LineEnding::Lf);
        assert_eq!(detect_line_ending("a\rb\r\n"), LineEnding::CrLf);
    }

    #[test]
    fn lf_normalisation_and_restoration() {
        assert!(matches!(normalize_to_lf("a\nb"), Cow::Borrowed(_)));
        assert_eq!(normalize_to_lf("a\r\n\r\nb\r"), "a\n\nb\n");
        assert_eq!(normalize_to_lf("\r\r\n"), "\n\n");
        assert_eq!(restore_line_endings("a\nb\n", LineEnding::CrLf), "a\r\nb\r\n");
        assert_eq!(restore_line_endings("a\nb\n", LineEnding::Lf), "a\nb\n");
    }

    #[test]
    fn fuzzy_normalisation_maps_typography() {
        let input = "\u{2018}a\u{2019} \u{201A}b\u{201B} \u{201C}c\u{201D} \u{201E}d\u{201F}";
        assert_eq!(normalize_for_fuzzy_match(input), "'a' 'b' \"c\" \"d\"");
        let dashes: String = ('\u{2010}'..='\u{2015}').chain(['\u{2212}']).collect();
        assert_eq!(normalize_for_fuzzy_match(&dashes), "-------");
        let spaces = "a\u{00A0}\u{2002}\u{2005}\u{200A}\u{202F}\u{205F}\u{3000}b";
        assert_eq!(normalize_for_fuzzy_match(spaces), "a       b");
    }

    #[test]
    fn fuzzy_normalisation_trims_lines_and_keeps_breaks() {
        assert_eq!(normalize_for_fuzzy_match("a  \n\tb\t\n  \nc \u{3000}"), "a\n\tb\n\nc");
        assert_eq!(normalize_for_fuzzy_match("x\u{FEFF}\ny\u{2028}"), "x\ny");
        assert_eq!(normalize_for_fuzzy_match("a\n\n").matches('\n').count(), 2);
        assert_eq!(normalize_for_fuzzy_match("ok\nok \nok"), "ok\nok\nok");
        assert_eq!(normalize_for_fuzzy_match("\u{201C}\n\nx"), "\"\n\nx");
    }

    #[test]
    fn fuzzy_normalisation_applies_nfkc() {
        assert_eq!(normalize_for_fuzzy_match("\u{FB01}le e\u{0301}"), "file \u{00E9}");
        assert_eq!(normalize_for_fuzzy_match("\u{FF21}\u{2460}"), "A1");
    }

    #[test]
    fn newlines_are_counted() {
        assert_eq!(count_newlines(""), 0);
        assert_eq!(count_newlines("a\nb\n"), 2);
        let long = "x\n".repeat(1000);
        assert_eq!(count_newlines(&long), 1000);
    }

    #[test]
    fn line_by_line_equals_whole_text_nfkc() {
        let text = "e\u{0301}\n\u{0301}a\n\u{FB01}\u{0308}\n\u{1100}\n\u{1161}x";
        let whole: String = text.nfkc().collect();
        assert_eq!(normalize_for_fuzzy_match(text), whole);
    }

    #[test]
    fn fuzzy_normalisation_borrows_clean_text_and_is_idempotent() {
        for clean in ["plain ascii\nlines", "caf\u{00E9} \u{00FC}ber\n", ""] {
            assert!(
                matches!(normalize_for_fuzzy_match(clean), Cow::Borrowed(_)),
                "{clean:?}"
            );
        }
        for dirty in ["a \n", "\u{201C}q\u{201D}", "x\u{00A0}", "e\u{0301}", "t\r"] {
            let once = normalize_for_fuzzy_match(dirty).into_owned();
            assert_ne!(once, dirty);
            assert_eq!(normalize_for_fuzzy_match(&once), once);
        }
    }
}
