//! Sorting names as JavaScript's `localeCompare` does in Node (ICU's root collation), for the
//! listings that must come out in pi's order: `ls`'s entries and `pi --list-models`'s rows.

use std::cmp::Ordering;

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::canonical_combining_class;

/// Whether case breaks ties between names that are otherwise equal ([`collation_key`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaseTieBreak {
    /// Case is ignored, as in pi's `a.toLowerCase().localeCompare(b.toLowerCase())` (`ls`).
    Ignore,
    /// Lower case before upper case at the first difference, as in `a.localeCompare(b)`.
    LowerFirst,
}

/// A sort key approximating ICU's root order ([`collation_key`]). Keys compare by primary
/// weights (whitespace, then ASCII punctuation and symbols in ICU's order, then digits, then
/// letters without case or accents, then anything else), then accents, then case (with
/// [`CaseTieBreak::LowerFirst`]), then the text's bytes, for a stable order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollationKey {
    primary: Vec<u32>,
    secondary: Vec<u32>,
    tertiary: Vec<bool>,
    text: String,
}

impl CollationKey {
    /// The text the key was made from.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The text the key was made from, taken out.
    pub fn into_text(self) -> String {
        self.text
    }
}

/// ASCII punctuation and symbols in ICU root collation order (after whitespace, before digits).
const ICU_PUNCTUATION: &str = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";

/// The sort key of `text` under JavaScript's `localeCompare`, with `case` deciding whether upper
/// and lower case break ties.
///
/// ```
/// use pi_tools::{CaseTieBreak, collation_key};
/// let mut ids = ["ab", "Ab", "a-b", "a10", "a9"];
/// ids.sort_by_cached_key(|id| collation_key(id, CaseTieBreak::LowerFirst));
/// assert_eq!(ids, ["a-b", "a10", "a9", "ab", "Ab"]);
/// ```
pub fn collation_key(text: &str, case: CaseTieBreak) -> CollationKey {
    let mut primary = Vec::new();
    let mut secondary = Vec::new();
    for c in text.to_lowercase().nfd() {
        if canonical_combining_class(c) != 0 {
            secondary.push(c as u32);
            continue;
        }
        primary.push(primary_weight(c));
        secondary.push(0);
    }
    let tertiary = match case {
        CaseTieBreak::Ignore => Vec::new(),
        CaseTieBreak::LowerFirst => text
            .nfd()
            .filter(|c| canonical_combining_class(*c) == 0)
            .map(char::is_uppercase)
            .collect(),
    };
    CollationKey {
        primary,
        secondary,
        tertiary,
        text: text.to_owned(),
    }
}

fn primary_weight(c: char) -> u32 {
    const PUNCTUATION_BASE: u32 = 0x100;
    const DIGIT_BASE: u32 = 0x200;
    const LETTER_BASE: u32 = 0x300;
    const OTHER_BASE: u32 = 0x400;
    match c {
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' => c as u32,
        ' ' | '\u{A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => 0x20,
        '0'..='9' => DIGIT_BASE + (c as u32 - '0' as u32),
        'a'..='z' => LETTER_BASE + (c as u32 - 'a' as u32),
        _ => match ICU_PUNCTUATION.find(c) {
            // The table is ASCII: byte offsets are positions.
            Some(index) => PUNCTUATION_BASE + index as u32,
            None if (c as u32) < 0x20 => 0,
            None => OTHER_BASE + c as u32,
        },
    }
}

impl Ord for CollationKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.primary
            .cmp(&other.primary)
            .then_with(|| self.secondary.cmp(&other.secondary))
            .then_with(|| self.tertiary.cmp(&other.tertiary))
            .then_with(|| self.text.cmp(&other.text))
    }
}

impl PartialOrd for CollationKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(names: &[&str], case: CaseTieBreak) -> Vec<String> {
        let mut keys: Vec<CollationKey> = names.iter().map(|n| collation_key(n, case)).collect();
        keys.sort();
        keys.into_iter().map(CollationKey::into_text).collect()
    }

    #[test]
    fn order_matches_node_locale_compare_of_lower_cased_names() {
        // Expected orders produced by Node 20 (ICU, en-US) with
        // `a.toLowerCase().localeCompare(b.toLowerCase())`.
        assert_eq!(
            sorted(
                &[
                    "a.txt", "a_b", "a-b", "ab", "a", "é", "e", "f", "_x", "1x", "~x", "zed", "ä", "a b", "a.b.c", "a."
                ],
                CaseTieBreak::Ignore
            ),
            [
                "_x", "~x", "1x", "a", "ä", "a b", "a_b", "a-b", "a.", "a.b.c", "a.txt", "ab", "e", "é", "f", "zed"
            ]
        );
        assert_eq!(
            sorted(&["resume", "résumé", "Resume"], CaseTieBreak::Ignore),
            ["Resume", "resume", "résumé"]
        );
        assert_eq!(sorted(&["B", "a", "C"], CaseTieBreak::Ignore), ["a", "B", "C"]);
    }

    #[test]
    fn order_matches_node_locale_compare_with_case() {
        // Node: ["a-b","ab","aB","Ab","a_b","a.b","a10","a9","A-b"].sort((a, b) => a.localeCompare(b))
        assert_eq!(
            sorted(
                &["a-b", "ab", "aB", "Ab", "a_b", "a.b", "a10", "a9", "A-b"],
                CaseTieBreak::LowerFirst
            ),
            ["a_b", "a-b", "A-b", "a.b", "a10", "a9", "ab", "aB", "Ab"]
        );
        assert_eq!(
            sorted(
                &["~openai/gpt-latest", "ai21/jamba", "01-ai/yi"],
                CaseTieBreak::LowerFirst
            ),
            ["~openai/gpt-latest", "01-ai/yi", "ai21/jamba"]
        );
        assert_eq!(
            sorted(&["Resume", "résumé", "resume"], CaseTieBreak::LowerFirst),
            ["resume", "Resume", "résumé"]
        );
    }

    #[test]
    fn every_ascii_symbol_has_its_icu_place() {
        let mut unique = Vec::new();
        for c in (0x20u8..0x7f).map(|b| (b as char).to_ascii_lowercase()) {
            if !unique.contains(&c) {
                unique.push(c);
            }
        }
        let names: Vec<String> = unique.iter().map(|c| c.to_string()).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let expected = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz";
        assert_eq!(sorted(&refs, CaseTieBreak::Ignore).concat(), expected);
        assert_eq!(sorted(&refs, CaseTieBreak::LowerFirst).concat(), expected);
    }
}
