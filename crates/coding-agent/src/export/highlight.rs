//! Code highlighting for the export with syntect: Sublime Text grammars, emitted as `<span>`s with
//! `hl-` scope classes that the page's style sheet colors with the theme's `syntax*` tokens.

use std::sync::OnceLock;

use syntect::html::{ClassStyle, ClassedHTMLGenerator};
use syntect::parsing::{SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

use super::html::escape;

/// Code longer than this is shown without colors: highlighting it would make the export slow.
const MAX_HIGHLIGHTED_BYTES: usize = 256 * 1024;

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(two_face::syntax::extra_newlines)
}

/// The grammar for a language name or file extension (`rust`, `rs`, `python`, `ts`, …), from the
/// syntaxes of two-face (bat's set, which the terminal's highlighting uses too).
fn syntax_for(language: &str) -> Option<&'static SyntaxReference> {
    let set = syntaxes();
    let language = language.trim().to_ascii_lowercase();
    let language = match language.as_str() {
        "typescript" | "ts" | "mts" | "cts" => "ts",
        "tsx" => "tsx",
        "jsx" | "mjs" | "cjs" | "javascript" => "js",
        "bash" | "zsh" | "shell" | "sh" | "console" => "sh",
        "py" | "python3" => "python",
        "yml" => "yaml",
        "dockerfile" => "Dockerfile",
        "cpp" | "c++" => "cpp",
        other => other,
    };
    if language.is_empty() {
        return None;
    }
    set.find_syntax_by_token(language)
        .or_else(|| set.find_syntax_by_extension(language))
        .filter(|syntax| syntax.name != "Plain Text")
}

/// The language of a file path by its extension (for `read` and `write`).
pub(crate) fn language_of_path(path: &str) -> Option<&str> {
    let name = path.rsplit(['/', '\\']).next()?;
    if name.eq_ignore_ascii_case("dockerfile") {
        return Some("dockerfile");
    }
    let (_, extension) = name.rsplit_once('.')?;
    Some(extension).filter(|e| !e.is_empty())
}

/// `code` as HTML: highlighted spans when `language` is known, else escaped text.
pub(crate) fn highlight(code: &str, language: Option<&str>) -> String {
    let Some(syntax) = language.and_then(syntax_for) else {
        return escape(code);
    };
    if code.len() > MAX_HIGHLIGHTED_BYTES {
        return escape(code);
    }
    let mut generator =
        ClassedHTMLGenerator::new_with_class_style(syntax, syntaxes(), ClassStyle::SpacedPrefixed { prefix: "hl-" });
    for line in LinesWithEndings::from(code) {
        if generator.parse_html_for_line_which_includes_newline(line).is_err() {
            return escape(code);
        }
    }
    generator.finalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_gets_keyword_and_string_classes() {
        let html = highlight("fn main() { let s = \"hi\"; }\n", Some("rust"));
        assert!(html.contains("hl-keyword") || html.contains("hl-storage"), "{html}");
        assert!(html.contains("hl-string"), "{html}");
        assert!(html.contains(">hi<"), "{html}");
    }

    #[test]
    fn typescript_falls_back_to_javascript_and_unknown_languages_are_escaped() {
        assert!(highlight("const x = 1;\n", Some("ts")).contains("hl-"));
        assert_eq!(highlight("<b>", Some("no-such-language")), "&lt;b&gt;");
        assert_eq!(highlight("<b>", None), "&lt;b&gt;");
    }

    #[test]
    fn markup_in_code_is_escaped() {
        let html = highlight("let x = \"</code><script>\";\n", Some("rust"));
        assert!(!html.contains("<script>"), "{html}");
    }

    #[test]
    fn languages_of_paths() {
        assert_eq!(language_of_path("/a/b/main.rs"), Some("rs"));
        assert_eq!(language_of_path("Dockerfile"), Some("dockerfile"));
        assert_eq!(language_of_path("Makefile"), None);
    }
}
