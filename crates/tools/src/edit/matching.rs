//! Matching `edits[]` against a file and applying them (pi's `applyEditsToNormalizedContent`).
//!
//! Every edit is matched against the **original** content, never against the result of an
//! earlier edit. An `oldText` is first looked up exactly; if some edit only matches after
//! [fuzzy normalisation](super::text::normalize_for_fuzzy_match), all edits are matched in the
//! fuzzy-normalised content. Uniqueness is always counted in fuzzy space, overlapping matches are
//! rejected, and the replacements are spliced in back to front. After a fuzzy match only the
//! lines an edit really changed are written from the normalised text; every other line keeps its
//! original bytes.
//!
//! ```
//! use pi_tools::{Edit, EditError, apply_edits};
//!
//! let content = "fn main() {\n    println!(\u{201C}hi\u{201D});   \n}\n";
//! let edits = [Edit::new("println!(\"hi\");", "println!(\"hello\");")];
//! let new = apply_edits(content, &edits, "main.rs").unwrap();
//! assert_eq!(new, "fn main() {\n    println!(\"hello\");\n}\n");
//!
//! let err = apply_edits(content, &[Edit::new("missing", "x")], "main.rs").unwrap_err();
//! assert!(matches!(err, EditError::NotFound { index: 0, .. }));
//! assert!(err.to_string().starts_with("Could not find the exact text in main.rs."));
//! ```

use std::borrow::Cow;

use similar::{Algorithm, DiffOp, capture_diff_slices};

use super::text::{count_newlines, normalize_for_fuzzy_match, normalize_to_lf};

/// One targeted replacement: `old_text` (unique in the original file) becomes `new_text`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Edit {
    /// Exact text to replace.
    pub old_text: String,
    /// Replacement text.
    pub new_text: String,
}

impl Edit {
    /// An edit replacing `old_text` with `new_text`.
    pub fn new(old_text: impl Into<String>, new_text: impl Into<String>) -> Self {
        Edit {
            old_text: old_text.into(),
            new_text: new_text.into(),
        }
    }
}

/// Why [`apply_edits`] applied nothing. Its text is pi's, word for word; `index` is the
/// position in `edits[]` and `total` their number (one edit is worded without an index).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// An `oldText` is empty.
    #[error("{}", empty_old_text(path, *index, *total))]
    EmptyOldText {
        /// The file, as named in the text.
        path: String,
        /// The edit.
        index: usize,
        /// How many edits there are.
        total: usize,
    },
    /// An `oldText` is not in the file.
    #[error("{}", not_found(path, *index, *total))]
    NotFound {
        /// The file, as named in the text.
        path: String,
        /// The edit.
        index: usize,
        /// How many edits there are.
        total: usize,
    },
    /// An `oldText` is in the file more than once.
    #[error("{}", duplicate(path, *index, *total, *occurrences))]
    Duplicate {
        /// The file, as named in the text.
        path: String,
        /// The edit.
        index: usize,
        /// How many edits there are.
        total: usize,
        /// How often its text occurs.
        occurrences: usize,
    },
    /// Two edits' matches overlap.
    #[error(
        "edits[{first}] and edits[{second}] overlap in {path}. Merge them into one edit or target disjoint regions."
    )]
    Overlap {
        /// The file, as named in the text.
        path: String,
        /// The edit whose match comes first.
        first: usize,
        /// The edit whose match overlaps it.
        second: usize,
    },
    /// The replacements leave the content as it was.
    #[error("{}", no_change(path, *total))]
    NoChange {
        /// The file, as named in the text.
        path: String,
        /// How many edits there are.
        total: usize,
    },
}

fn not_found(path: &str, index: usize, total: usize) -> String {
    if total == 1 {
        format!(
            "Could not find the exact text in {path}. The old text must match exactly including all whitespace and newlines."
        )
    } else {
        format!(
            "Could not find edits[{index}] in {path}. The oldText must match exactly including all whitespace and newlines."
        )
    }
}

fn duplicate(path: &str, index: usize, total: usize, occurrences: usize) -> String {
    if total == 1 {
        format!(
            "Found {occurrences} occurrences of the text in {path}. The text must be unique. Please provide more context to make it unique."
        )
    } else {
        format!(
            "Found {occurrences} occurrences of edits[{index}] in {path}. Each oldText must be unique. Please provide more context to make it unique."
        )
    }
}

fn empty_old_text(path: &str, index: usize, total: usize) -> String {
    if total == 1 {
        format!("oldText must not be empty in {path}.")
    } else {
        format!("edits[{index}].oldText must not be empty in {path}.")
    }
}

fn no_change(path: &str, total: usize) -> String {
    if total == 1 {
        format!(
            "No changes made to {path}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
        )
    } else {
        format!("No changes made to {path}. The replacements produced identical content.")
    }
}

/// Where one edit matched in the base content.
#[derive(Debug, Clone, Copy)]
struct Match {
    edit_index: usize,
    start: usize,
    len: usize,
}

impl Match {
    fn end(&self) -> usize {
        self.start + self.len
    }
}

/// Applies `edits` to `content` (LF line endings, no byte-order mark) and returns the new
/// content. `path` is only used in the error texts, which are pi's, word for word.
///
/// An `oldText` made only of whitespace has an empty fuzzy form; it matches exactly or not at
/// all (pi would find its empty fuzzy form everywhere).
pub fn apply_edits(content: &str, edits: &[Edit], path: &str) -> Result<String, EditError> {
    let total = edits.len();
    let edits: Vec<(Cow<'_, str>, Cow<'_, str>)> = edits
        .iter()
        .map(|edit| (normalize_to_lf(&edit.old_text), normalize_to_lf(&edit.new_text)))
        .collect();
    if let Some(index) = edits.iter().position(|(old, _)| old.is_empty()) {
        return Err(EditError::EmptyOldText {
            path: path.to_owned(),
            index,
            total,
        });
    }
    let fuzzy_olds: Vec<Cow<'_, str>> = edits.iter().map(|(old, _)| normalize_for_fuzzy_match(old)).collect();

    let fuzzy_content = normalize_for_fuzzy_match(content);
    let exact: Vec<Option<usize>> = edits.iter().map(|(old, _)| content.find(old.as_ref())).collect();
    let used_fuzzy = exact.iter().zip(&fuzzy_olds).any(|(exact, fuzzy_old)| {
        exact.is_none() && !fuzzy_old.is_empty() && fuzzy_content.contains(fuzzy_old.as_ref())
    });
    let base: &str = if used_fuzzy { &fuzzy_content } else { content };
    // Uniqueness is counted in the fuzzy form of the base. That is `fuzzy_content` either way:
    // for fuzzy matching the base is already normalised, and normalising is idempotent.
    let fuzzy_base: &str = &fuzzy_content;

    let mut matches = Vec::with_capacity(total);
    for (edit_index, ((old, _), fuzzy_old)) in edits.iter().zip(&fuzzy_olds).enumerate() {
        let exact_in_base = if used_fuzzy {
            base.find(old.as_ref())
        } else {
            exact[edit_index]
        };
        let found = match exact_in_base {
            Some(start) => Some((start, old.len())),
            None if used_fuzzy && !fuzzy_old.is_empty() => {
                base.find(fuzzy_old.as_ref()).map(|start| (start, fuzzy_old.len()))
            }
            None => None,
        };
        let Some((start, len)) = found else {
            return Err(EditError::NotFound {
                path: path.to_owned(),
                index: edit_index,
                total,
            });
        };
        let occurrences = if fuzzy_old.is_empty() {
            base.matches(old.as_ref()).count()
        } else if matches!(fuzzy_content, Cow::Borrowed(_)) && fuzzy_old.as_ref() == old.as_ref() {
            // The file and the oldText are their own fuzzy forms: the occurrence found is the first
            // one, so only the rest needs counting.
            1 + base[start + len..].matches(old.as_ref()).count()
        } else {
            fuzzy_base.matches(fuzzy_old.as_ref()).count()
        };
        if occurrences > 1 {
            return Err(EditError::Duplicate {
                path: path.to_owned(),
                index: edit_index,
                total,
                occurrences,
            });
        }
        matches.push(Match { edit_index, start, len });
    }

    matches.sort_by_key(|m| m.start);
    for pair in matches.windows(2) {
        if pair[0].end() > pair[1].start {
            return Err(EditError::Overlap {
                path: path.to_owned(),
                first: pair[0].edit_index,
                second: pair[1].edit_index,
            });
        }
    }

    let new_texts: Vec<&str> = edits.iter().map(|(_, new)| new.as_ref()).collect();
    let new_content = if used_fuzzy {
        splice_preserving_lines(content, base, &matches, &new_texts)
    } else {
        splice(base, 0, &matches, &new_texts)
    };
    if new_content == content {
        return Err(EditError::NoChange {
            path: path.to_owned(),
            total,
        });
    }
    Ok(new_content)
}

/// `text` (which starts at `offset` in the base) with every match replaced by its new text.
fn splice(text: &str, offset: usize, matches: &[Match], new_texts: &[&str]) -> String {
    let added: usize = matches.iter().map(|m| new_texts[m.edit_index].len()).sum();
    let mut out = String::with_capacity(text.len() + added);
    let mut position = 0;
    for m in matches {
        out.push_str(&text[position..m.start - offset]);
        out.push_str(new_texts[m.edit_index]);
        position = m.end() - offset;
    }
    out.push_str(&text[position..]);
    out
}

/// Start of the line holding byte `offset`.
fn line_start(text: &str, offset: usize) -> usize {
    text[..offset].rfind('\n').map_or(0, |i| i + 1)
}

/// End (the `\n` or the end of the text) of the line holding byte `offset`.
fn line_end(text: &str, offset: usize) -> usize {
    text[offset..].find('\n').map_or(text.len(), |i| offset + i)
}

/// Walks a text line by line, remembering which line a position is on.
struct LineCursor<'a> {
    text: &'a str,
    /// Start of line `line`.
    position: usize,
    line: usize,
}

impl<'a> LineCursor<'a> {
    fn new(text: &'a str) -> Self {
        LineCursor {
            text,
            position: 0,
            line: 0,
        }
    }

    /// The line holding byte `offset` (not before the cursor); a `\n` belongs to the line it
    /// ends. Moves the cursor to that line.
    fn line_of(&mut self, offset: usize) -> usize {
        let start = line_start(self.text, offset).max(self.position);
        self.line += count_newlines(&self.text[self.position..start]);
        self.position = start;
        self.line
    }

    /// Start of line `line` (not before the cursor's); moves the cursor there.
    fn start_of(&mut self, line: usize) -> usize {
        while self.line < line {
            match self.text[self.position..].find('\n') {
                Some(i) => self.position += i + 1,
                None => break,
            }
            self.line += 1;
        }
        self.position
    }
}

/// Lines touched by a run of matches (and their byte range in the base), and those matches.
struct Group {
    first_line: usize,
    last_line: usize,
    start: usize,
    end: usize,
    matches: Vec<Match>,
}

/// Applies fuzzy-space matches so that only changed lines come from the normalised `base`.
///
/// Each match is widened to the whole lines it touches (a match ending with a line break also
/// touches the next line); matches sharing a line form one group. A group's lines are rewritten
/// from `base` with its replacements, then compared line by line with the base: lines the
/// replacements left as they were are copied from `original`, as is everything outside the
/// groups.
fn splice_preserving_lines(original: &str, base: &str, matches: &[Match], new_texts: &[&str]) -> String {
    if count_newlines(original) != count_newlines(base) {
        // Normalisation keeps line breaks, so this does not happen; write the fuzzy text whole.
        return splice(base, 0, matches, new_texts);
    }

    let mut groups: Vec<Group> = Vec::new();
    let mut base_lines = LineCursor::new(base);
    for &m in matches {
        let first_line = base_lines.line_of(m.start);
        let start = base_lines.position;
        let last_line = base_lines.line_of(m.end());
        let end = line_end(base, m.end());
        match groups.last_mut() {
            Some(group) if first_line <= group.last_line => {
                group.last_line = last_line;
                group.end = end;
                group.matches.push(m);
            }
            _ => groups.push(Group {
                first_line,
                last_line,
                start,
                end,
                matches: vec![m],
            }),
        }
    }

    let mut out = String::with_capacity(original.len());
    let mut original_lines = LineCursor::new(original);
    let mut copied_to = 0;
    for group in &groups {
        let original_start = original_lines.start_of(group.first_line);
        let original_end = line_end(original, original_lines.start_of(group.last_line));
        out.push_str(&original[copied_to..original_start]);
        let old_chunk = &base[group.start..group.end];
        let rewritten = splice(old_chunk, group.start, &group.matches, new_texts);
        let kept_lines: Vec<&str> = original[original_start..original_end].split('\n').collect();
        let old_lines: Vec<&str> = old_chunk.split('\n').collect();
        let new_lines: Vec<&str> = rewritten.split('\n').collect();
        let mut lines: Vec<&str> = Vec::with_capacity(new_lines.len());
        for op in capture_diff_slices(Algorithm::Myers, &old_lines, &new_lines) {
            match op {
                DiffOp::Equal { old_index, len, .. } => {
                    lines.extend_from_slice(&kept_lines[old_index..old_index + len])
                }
                DiffOp::Delete { .. } => {}
                DiffOp::Insert { new_index, new_len, .. } | DiffOp::Replace { new_index, new_len, .. } => {
                    lines.extend_from_slice(&new_lines[new_index..new_index + new_len]);
                }
            }
        }
        out.push_str(&lines.join("\n"));
        copied_to = original_end;
    }
    out.push_str(&original[copied_to..]);
    out
}

#[cfg(test)]
mod fuzz;

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(content: &str, edits: &[(&str, &str)]) -> Result<String, String> {
        let edits: Vec<Edit> = edits.iter().map(|(old, new)| Edit::new(*old, *new)).collect();
        apply_edits(content, &edits, "f.txt").map_err(|error| error.to_string())
    }

    #[test]
    fn exact_single_and_multiple() {
        assert_eq!(apply("a\nb\nc\n", &[("b", "B")]).unwrap(), "a\nB\nc\n");
        assert_eq!(apply("a\nb\nc\n", &[("c", "C"), ("a", "A")]).unwrap(), "A\nb\nC\n");
        assert_eq!(apply("abc", &[("a", ""), ("b", "bb"), ("c", "")]).unwrap(), "bb");
    }

    #[test]
    fn edits_match_the_original_not_each_other() {
        // The second edit's oldText only exists before the first is applied.
        assert_eq!(apply("x y", &[("x", "y"), ("y", "z")]).unwrap(), "y z");
    }

    #[test]
    fn crlf_in_edit_text_is_normalised() {
        assert_eq!(apply("a\nb\n", &[("a\r\nb", "c\r\nd")]).unwrap(), "c\nd\n");
    }

    #[test]
    fn error_variants() {
        assert_eq!(
            apply("a", &[("", "x")]).unwrap_err(),
            "oldText must not be empty in f.txt."
        );
        assert_eq!(
            apply("a", &[("a", "x"), ("", "x")]).unwrap_err(),
            "edits[1].oldText must not be empty in f.txt."
        );
        assert!(
            apply("a", &[("q", "x")])
                .unwrap_err()
                .starts_with("Could not find the exact text in f.txt.")
        );
        assert!(
            apply("a", &[("a", "x"), ("q", "x")])
                .unwrap_err()
                .starts_with("Could not find edits[1] in f.txt.")
        );
        assert!(
            apply("a a", &[("a", "x")])
                .unwrap_err()
                .starts_with("Found 2 occurrences of the text in f.txt.")
        );
        assert!(
            apply("b a a a", &[("b", "x"), ("a", "y")])
                .unwrap_err()
                .starts_with("Found 3 occurrences of edits[1] in f.txt.")
        );
        assert_eq!(
            apply("abcd", &[("cd", "x"), ("abc", "y")]).unwrap_err(),
            "edits[1] and edits[0] overlap in f.txt. Merge them into one edit or target disjoint regions."
        );
        assert!(
            apply("a", &[("a", "a")])
                .unwrap_err()
                .contains("The replacement produced identical content. This")
        );
        assert!(
            apply("ab", &[("a", "a"), ("b", "b")])
                .unwrap_err()
                .ends_with("The replacements produced identical content.")
        );
    }

    #[test]
    fn adjacent_edits_do_not_overlap() {
        assert_eq!(apply("abcd", &[("ab", "1"), ("cd", "2")]).unwrap(), "12");
    }

    #[test]
    fn uniqueness_is_counted_in_fuzzy_space() {
        // Exactly one "a b" but, with the NBSP normalised, two.
        let err = apply("a b\na\u{00A0}b\n", &[("a b", "x")]).unwrap_err();
        assert!(err.starts_with("Found 2 occurrences of the text"), "{err}");
    }

    #[test]
    fn fuzzy_match_rewrites_only_changed_lines() {
        let content = "keep \u{201C}this\u{201D}  \nsay(\u{2018}hi\u{2019})   \nand\u{00A0}this\n";
        let new = apply(content, &[("say('hi')", "say('hello')")]).unwrap();
        assert_eq!(new, "keep \u{201C}this\u{201D}  \nsay('hello')\nand\u{00A0}this\n");
    }

    #[test]
    fn fuzzy_multi_line_match_keeps_untouched_lines_of_the_block() {
        let content = "a \u{2014} 1  \nb \u{2014} 2  \nc \u{2014} 3  \n";
        let new = apply(content, &[("a - 1\nb - 2\nc - 3", "a - 1\nB\nc - 3")]).unwrap();
        assert_eq!(new, "a \u{2014} 1  \nB\nc \u{2014} 3  \n");
    }

    #[test]
    fn one_fuzzy_edit_moves_all_edits_to_fuzzy_space() {
        let content = "x = \u{201C}a\u{201D}\ny = 1   \nz = 2\n";
        let new = apply(content, &[("x = \"a\"", "x = \"b\""), ("z = 2", "z = 3")]).unwrap();
        assert_eq!(new, "x = \"b\"\ny = 1   \nz = 3\n");
    }

    #[test]
    fn fuzzy_edits_sharing_a_line_form_one_group() {
        let content = "f(\u{201C}a\u{201D}, \u{201C}b\u{201D})  \nrest  \n";
        let new = apply(content, &[("\"a\"", "\"A\""), ("\"b\"", "\"B\"")]).unwrap();
        assert_eq!(new, "f(\"A\", \"B\")\nrest  \n");
    }

    #[test]
    fn fuzzy_match_ending_with_a_newline() {
        let content = "one\u{00A0}\ntwo \nthree\n";
        let new = apply(content, &[("one\n", "ONE\n")]).unwrap();
        assert_eq!(new, "ONE\ntwo \nthree\n");
    }

    #[test]
    fn fuzzy_no_op_is_reported_as_no_change() {
        let content = "it\u{2019}s\n";
        let err = apply(content, &[("it's", "it's")]).unwrap_err();
        assert!(err.starts_with("No changes made to f.txt."), "{err}");
    }

    #[test]
    fn whitespace_only_old_text_matches_exactly_or_not_at_all() {
        assert_eq!(apply("a  b", &[("  ", " ")]).unwrap(), "a b");
        assert!(apply("ab", &[("  ", " ")]).unwrap_err().starts_with("Could not find"));
        assert!(
            apply("a  b  ", &[("  ", " ")])
                .unwrap_err()
                .starts_with("Found 2 occurrences")
        );
    }

    #[test]
    fn line_cursor() {
        let text = "ab\ncd\n\nef";
        let mut cursor = LineCursor::new(text);
        assert_eq!(cursor.line_of(0), 0);
        assert_eq!(cursor.line_of(2), 0);
        assert_eq!(cursor.line_of(3), 1);
        assert_eq!(cursor.line_of(7), 3);
        assert_eq!(cursor.position, 7);
        let mut cursor = LineCursor::new(text);
        assert_eq!(cursor.start_of(2), 6);
        assert_eq!(cursor.start_of(3), 7);
        assert_eq!(line_end(text, 3), 5);
        assert_eq!(line_end(text, 8), 9);
        assert_eq!(line_start(text, 5), 3);
    }

    #[test]
    fn fuzzy_groups_far_apart_in_a_long_file() {
        let mut content: String = (0..50).map(|i| format!("row {i}  \n")).collect();
        content = content
            .replace("row 10  \n", "row \u{201C}10\u{201D}  \n")
            .replace("row 40  \n", "row \u{2018}40\u{2019}\n");
        let new = apply(&content, &[("row \"10\"", "ten"), ("row '40'\n", "forty\n")]).unwrap();
        let expected = content
            .replace("row \u{201C}10\u{201D}  \n", "ten\n")
            .replace("row \u{2018}40\u{2019}\n", "forty\n");
        assert_eq!(new, expected);
    }
}
