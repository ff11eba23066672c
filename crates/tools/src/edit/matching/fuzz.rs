//! Fuzz target of edit matching: files of lines with the characters fuzzy matching is about
//! (smart quotes, Unicode dashes and spaces, trailing whitespace, characters NFKC changes or
//! expands, combining marks, astral characters), and edits whose `oldText` is cut from the file,
//! sometimes in its fuzzy form, with a stretch of whitespace dropped or an extra character, or
//! made up.
//!
//! Asserts: no panic; a result differs from the file, and its size is linear in the file and the
//! new texts; an edit whose `oldText` is unique in the file and its own fuzzy form gives the plain
//! replacement; every error is the documented variant with pi's wording, and an empty `oldText`,
//! a missing one (not even in fuzzy form), a duplicate and an overlap are reported as such.

use pi_test_support::fuzz;
use proptest::prelude::*;

use super::{Edit, EditError, apply_edits};
use crate::edit::text::normalize_for_fuzzy_match;

/// NFKC expands one character to at most 18 (U+FDFA), in UTF-8 bytes at most this many times.
const MAX_EXPANSION: usize = 18;

fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "[a-z(){};=\"' ]{1,8}",
        1 => prop::sample::select(vec![
            "\u{201C}", "\u{201D}", "\u{2018}", "\u{2019}", "\u{2014}", "\u{2212}", "\u{00A0}", "\u{3000}",
            "\u{FB01}", "\u{FDFA}", "\u{FF21}", "e\u{0301}", "\u{212B}", "😀", "\t", "  ", "\u{FEFF}", "\r",
        ])
        .prop_map(str::to_owned),
    ]
}

fn content() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::collection::vec(piece(), 0..6).prop_map(|p| p.concat()), 1..12)
        .prop_map(|lines| lines.join("\n"))
}

/// A char-boundary range of `text` picked by two numbers.
fn range(text: &str, a: u32, b: u32) -> (usize, usize) {
    let snap = |point: usize| (0..=point).rev().find(|p| text.is_char_boundary(*p)).unwrap_or(0);
    let (a, b) = (snap(fuzz::position(a, text.len())), snap(fuzz::position(b, text.len())));
    (a.min(b), a.max(b))
}

#[derive(Debug, Clone)]
enum Old {
    /// A stretch of the file.
    Cut(u32, u32),
    /// A stretch of the file's fuzzy form.
    Fuzzy(u32, u32),
    /// A stretch of the file with one character more at the end.
    Extra(u32, u32, char),
    /// Made up.
    Any(String),
}

impl Old {
    fn text(&self, content: &str) -> String {
        match self {
            Old::Cut(a, b) => {
                let (start, end) = range(content, *a, *b);
                content[start..end].to_owned()
            }
            Old::Fuzzy(a, b) => {
                let fuzzy = normalize_for_fuzzy_match(content);
                let (start, end) = range(&fuzzy, *a, *b);
                fuzzy[start..end].to_owned()
            }
            Old::Extra(a, b, c) => {
                let (start, end) = range(content, *a, *b);
                format!("{}{c}", &content[start..end])
            }
            Old::Any(text) => text.clone(),
        }
    }
}

fn old() -> impl Strategy<Value = Old> {
    prop_oneof![
        4 => (any::<u32>(), any::<u32>()).prop_map(|(a, b)| Old::Cut(a, b)),
        2 => (any::<u32>(), any::<u32>()).prop_map(|(a, b)| Old::Fuzzy(a, b)),
        1 => (any::<u32>(), any::<u32>(), any::<char>()).prop_map(|(a, b, c)| Old::Extra(a, b, c)),
        1 => piece().prop_map(Old::Any),
    ]
}

fn edits() -> impl Strategy<Value = Vec<(Old, String)>> {
    prop::collection::vec(
        (old(), prop::collection::vec(piece(), 0..4).prop_map(|p| p.concat())),
        1..4,
    )
}

/// The documented text of an error.
fn check_error(error: &EditError, content: &str, edits: &[Edit]) -> Result<(), TestCaseError> {
    let text = error.to_string();
    let total = edits.len();
    let many = total > 1;
    match error {
        EditError::EmptyOldText { index, .. } => {
            prop_assert!(*index < total);
            prop_assert!(edits[*index].old_text.replace('\r', "").is_empty());
            let start = if many {
                "edits["
            } else {
                "oldText must not be empty in f.txt."
            };
            prop_assert!(text.starts_with(start), "{text}");
        }
        EditError::NotFound { index, .. } => {
            prop_assert!(*index < total);
            let old = edits[*index].old_text.replace("\r\n", "\n").replace('\r', "\n");
            let fuzzy_old = normalize_for_fuzzy_match(&old);
            prop_assert!(fuzzy_old.is_empty() || !normalize_for_fuzzy_match(content).contains(fuzzy_old.as_ref()));
            let start = if many {
                format!("Could not find edits[{index}] in f.txt. The oldText must match exactly")
            } else {
                "Could not find the exact text in f.txt. The old text must match exactly".to_owned()
            };
            prop_assert!(text.starts_with(&start), "{text}");
        }
        EditError::Duplicate { index, occurrences, .. } => {
            prop_assert!(*index < total);
            prop_assert!(*occurrences >= 2);
            prop_assert!(
                text.starts_with(&format!("Found {occurrences} occurrences of ")),
                "{text}"
            );
        }
        EditError::Overlap { first, second, .. } => {
            prop_assert!(*first < total && *second < total && first != second);
            prop_assert!(text.ends_with("overlap in f.txt. Merge them into one edit or target disjoint regions."));
        }
        EditError::NoChange { .. } => prop_assert!(text.starts_with("No changes made to f.txt.")),
    }
    Ok(())
}

proptest! {
    #![proptest_config(fuzz::config())]

    #[test]
    fn fuzz_edit_matching(content in content(), edits in edits()) {
        // `apply_edits` takes LF content, as the tool gives it.
        let content = content.replace('\r', "");
        let edits: Vec<Edit> = edits.iter().map(|(old, new)| Edit::new(old.text(&content), new.clone())).collect();
        match apply_edits(&content, &edits, "f.txt") {
            Ok(new) => {
                prop_assert_ne!(&new, &content);
                let added: usize = edits.iter().map(|e| e.new_text.len()).sum();
                prop_assert!(new.len() <= MAX_EXPANSION * content.len() + added);
                if let [edit] = edits.as_slice() {
                    let old = edit.old_text.replace('\r', "");
                    let fuzzy_old = normalize_for_fuzzy_match(&old);
                    let fuzzy_content = normalize_for_fuzzy_match(&content);
                    let plain = content.contains(&old) && fuzzy_old == old && fuzzy_content == content;
                    if plain {
                        prop_assert_eq!(&new, &content.replacen(&old, &edit.new_text.replace('\r', "\n"), 1));
                    }
                }
            }
            Err(error) => check_error(&error, &content, &edits)?,
        }
    }

    /// Two edits cut from the file: disjoint, overlapping or the same.
    #[test]
    fn fuzz_edit_matching_pairs(content in content(), a in any::<(u32, u32)>(), b in any::<(u32, u32)>()) {
        let content = content.replace('\r', "");
        let (a, b) = (range(&content, a.0, a.1), range(&content, b.0, b.1));
        let edits = [Edit::new(&content[a.0..a.1], "A"), Edit::new(&content[b.0..b.1], "B")];
        if let Err(error) = apply_edits(&content, &edits, "f.txt") {
            check_error(&error, &content, &edits)?;
        }
    }
}
