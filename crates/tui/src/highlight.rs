//! A small syntax highlighter for code blocks: keywords, strings, comments, numbers, type and
//! function names, for Rust, TypeScript / JavaScript, Python, Go, JSON and shell scripts.
//!
//! It is a per-language tokenizer, not a parser: it knows each language's keywords, comment and
//! string delimiters, and carries block comments and multi-line strings from one line to the next.
//! Code in any other language comes back in the theme's plain code-block colour.
//!
//! ```
//! use pi_tui::highlight::{highlight, is_supported};
//! use pi_tui::testing::styled;
//! use pi_tui::Theme;
//!
//! let theme = Theme::indexed();
//! let lines = highlight("let n = 42; // answer", "rust", &theme);
//! assert_eq!(
//!     styled(&lines, &theme),
//!     "[fg=syntaxKeyword]let[/] n = [fg=syntaxNumber]42[/]; [fg=syntaxComment]// answer[/]"
//! );
//! assert!(is_supported("ts") && !is_supported("cobol"));
//! ```

use ratatui::style::Style;
use ratatui::text::Span;

use crate::Line;
use crate::theme::{MdSlot, Theme};

/// What the tokenizer knows about a language.
struct Spec {
    keywords: &'static [&'static str],
    /// Constants shown like keywords (`true`, `None`, `nil`).
    literals: &'static [&'static str],
    /// Built-in type names.
    types: &'static [&'static str],
    line_comments: &'static [&'static str],
    block_comment: Option<(&'static str, &'static str)>,
    /// String delimiters, longest first (`"""` before `"`).
    quotes: &'static [&'static str],
    /// Delimiters whose strings may run over several lines.
    multiline_quotes: &'static [&'static str],
    /// Identifiers starting with a capital letter are types.
    capitalized_types: bool,
    /// `'` starts a string only when it closes within a few characters (Rust's lifetimes).
    char_literals: bool,
    /// A line comment starts only at the start of a word (shell: `a#b` is no comment).
    comment_after_space: bool,
    /// `name!` is a macro call, shown like a function (Rust).
    macros: bool,
}

const RUST: Spec = Spec {
    keywords: &[
        "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "fn", "for",
        "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self", "Self",
        "static", "struct", "super", "trait", "type", "unsafe", "use", "where", "while", "yield",
    ],
    literals: &["true", "false"],
    types: &[
        "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize", "f32", "f64", "bool",
        "char", "str",
    ],
    line_comments: &["//"],
    block_comment: Some(("/*", "*/")),
    quotes: &["\"", "'"],
    multiline_quotes: &["\""],
    capitalized_types: true,
    char_literals: true,
    comment_after_space: false,
    macros: true,
};

const TYPESCRIPT: Spec = Spec {
    keywords: &[
        "abstract",
        "as",
        "async",
        "await",
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "debugger",
        "declare",
        "default",
        "delete",
        "do",
        "else",
        "enum",
        "export",
        "extends",
        "finally",
        "for",
        "from",
        "function",
        "get",
        "if",
        "implements",
        "import",
        "in",
        "instanceof",
        "interface",
        "keyof",
        "let",
        "namespace",
        "new",
        "of",
        "private",
        "protected",
        "public",
        "readonly",
        "return",
        "set",
        "static",
        "super",
        "switch",
        "this",
        "throw",
        "try",
        "type",
        "typeof",
        "var",
        "void",
        "while",
        "with",
        "yield",
    ],
    literals: &["true", "false", "null", "undefined", "NaN", "Infinity"],
    types: &[
        "string", "number", "boolean", "any", "unknown", "never", "object", "bigint", "symbol",
    ],
    line_comments: &["//"],
    block_comment: Some(("/*", "*/")),
    quotes: &["\"", "'", "`"],
    multiline_quotes: &["`"],
    capitalized_types: true,
    char_literals: false,
    comment_after_space: false,
    macros: false,
};

const PYTHON: Spec = Spec {
    keywords: &[
        "and", "as", "assert", "async", "await", "break", "case", "class", "continue", "def", "del", "elif", "else",
        "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "match", "nonlocal", "not",
        "or", "pass", "raise", "return", "try", "while", "with", "yield",
    ],
    literals: &["True", "False", "None"],
    types: &[
        "int", "str", "float", "bool", "list", "dict", "set", "tuple", "bytes", "object",
    ],
    line_comments: &["#"],
    block_comment: None,
    quotes: &["\"\"\"", "'''", "\"", "'"],
    multiline_quotes: &["\"\"\"", "'''"],
    capitalized_types: true,
    char_literals: false,
    comment_after_space: false,
    macros: false,
};

const GO: Spec = Spec {
    keywords: &[
        "break",
        "case",
        "chan",
        "const",
        "continue",
        "default",
        "defer",
        "else",
        "fallthrough",
        "for",
        "func",
        "go",
        "goto",
        "if",
        "import",
        "interface",
        "map",
        "package",
        "range",
        "return",
        "select",
        "struct",
        "switch",
        "type",
        "var",
    ],
    literals: &["true", "false", "nil", "iota"],
    types: &[
        "int",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "uintptr",
        "float32",
        "float64",
        "complex64",
        "complex128",
        "string",
        "bool",
        "byte",
        "rune",
        "error",
        "any",
    ],
    line_comments: &["//"],
    block_comment: Some(("/*", "*/")),
    quotes: &["\"", "'", "`"],
    multiline_quotes: &["`"],
    capitalized_types: false,
    char_literals: false,
    comment_after_space: false,
    macros: false,
};

const JSON: Spec = Spec {
    keywords: &[],
    literals: &["true", "false", "null"],
    types: &[],
    line_comments: &[],
    block_comment: None,
    quotes: &["\""],
    multiline_quotes: &[],
    capitalized_types: false,
    char_literals: false,
    comment_after_space: false,
    macros: false,
};

const SHELL: Spec = Spec {
    keywords: &[
        "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac", "function", "in",
        "return", "export", "local", "readonly", "declare", "set", "unset", "shift", "exit", "select", "time",
    ],
    literals: &["true", "false"],
    types: &[],
    line_comments: &["#"],
    block_comment: None,
    quotes: &["\"", "'"],
    multiline_quotes: &["\"", "'"],
    capitalized_types: false,
    char_literals: false,
    comment_after_space: true,
    macros: false,
};

/// The language named by a code fence's info string (`rust`, `rs`, `ts`, `py`, `sh`, …).
fn spec(lang: &str) -> Option<&'static Spec> {
    let name = lang
        .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
        .next()
        .unwrap_or("");
    match name.to_ascii_lowercase().as_str() {
        "rust" | "rs" => Some(&RUST),
        "typescript" | "ts" | "tsx" | "javascript" | "js" | "jsx" | "mjs" | "cjs" => Some(&TYPESCRIPT),
        "python" | "py" | "python3" => Some(&PYTHON),
        "go" | "golang" => Some(&GO),
        "json" | "jsonc" | "json5" => Some(&JSON),
        "bash" | "sh" | "shell" | "zsh" | "console" | "shellscript" => Some(&SHELL),
        _ => None,
    }
}

/// Whether `lang` (a code fence's info string) is highlighted, rather than shown plain.
pub fn is_supported(lang: &str) -> bool {
    spec(lang).is_some()
}

/// Where the tokenizer is between lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Normal,
    BlockComment,
    /// Inside a string closed by this delimiter.
    Str(&'static str),
}

/// `code` as one line per source line, coloured for `lang` (see the module docs); tabs and other
/// characters are kept as they are, for the caller to wrap.
pub fn highlight(code: &str, lang: &str, theme: &Theme) -> Vec<Line> {
    let code = code.strip_suffix('\n').unwrap_or(code);
    let Some(spec) = spec(lang) else {
        let style = theme.md(MdSlot::CodeBlock);
        return code
            .split('\n')
            .map(|line| Line::from(Span::styled(line.to_owned(), style)))
            .collect();
    };
    let mut state = State::Normal;
    code.split('\n')
        .map(|line| {
            Tokenizer {
                spec,
                theme,
                line,
                spans: Vec::new(),
            }
            .run(&mut state)
        })
        .collect()
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

struct Tokenizer<'a> {
    spec: &'static Spec,
    theme: &'a Theme,
    line: &'a str,
    spans: Vec<Span<'static>>,
}

impl Tokenizer<'_> {
    fn push(&mut self, text: &str, style: Style) {
        if text.is_empty() {
            return;
        }
        match self.spans.last_mut() {
            Some(last) if last.style == style => last.content.to_mut().push_str(text),
            _ => self.spans.push(Span::styled(text.to_owned(), style)),
        }
    }

    fn run(mut self, state: &mut State) -> Line {
        let line = self.line;
        let theme = self.theme;
        let spec = self.spec;
        let mut i = 0;
        while i < line.len() {
            let rest = &line[i..];
            match *state {
                State::BlockComment => {
                    let (_, close) = spec.block_comment.unwrap_or(("", "*/"));
                    let end = match rest.find(close) {
                        Some(at) => {
                            *state = State::Normal;
                            at + close.len()
                        }
                        None => rest.len(),
                    };
                    self.push(&rest[..end], theme.md(MdSlot::SyntaxComment));
                    i += end;
                }
                State::Str(close) => {
                    let end = string_end(rest, close);
                    match end {
                        Some(end) => {
                            *state = State::Normal;
                            self.push(&rest[..end], theme.md(MdSlot::SyntaxString));
                            i += end;
                        }
                        None => {
                            if !spec.multiline_quotes.contains(&close) {
                                *state = State::Normal;
                            }
                            self.push(rest, theme.md(MdSlot::SyntaxString));
                            i = line.len();
                        }
                    }
                }
                State::Normal => i += self.normal(rest, i, state),
            }
        }
        Line::from(self.spans)
    }

    /// Reads one token at `rest` (byte `at` of the line) and returns its length.
    fn normal(&mut self, rest: &str, at: usize, state: &mut State) -> usize {
        let spec = self.spec;
        let theme = self.theme;
        let before = self.line[..at].chars().next_back();
        let word_start = before.is_none_or(|c| c.is_whitespace() || matches!(c, ';' | '(' | '|' | '&'));
        if spec.line_comments.iter().any(|p| rest.starts_with(p)) && (!spec.comment_after_space || word_start) {
            self.push(rest, theme.md(MdSlot::SyntaxComment));
            return rest.len();
        }
        if let Some((open, _)) = spec.block_comment.filter(|(open, _)| rest.starts_with(open)) {
            *state = State::BlockComment;
            self.push(open, theme.md(MdSlot::SyntaxComment));
            return open.len();
        }
        if let Some(quote) = spec.quotes.iter().find(|q| rest.starts_with(**q)) {
            if *quote == "'" && spec.char_literals && !is_char_literal(rest) {
                self.push("'", Style::default());
                return 1;
            }
            *state = State::Str(quote);
            self.push(quote, theme.md(MdSlot::SyntaxString));
            return quote.len();
        }
        let Some(first) = rest.chars().next() else { return 0 };
        let after_ident = before.is_some_and(is_ident_char);
        if first.is_ascii_digit() && !after_ident {
            let len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                .unwrap_or(rest.len());
            self.push(&rest[..len], theme.md(MdSlot::SyntaxNumber));
            return len;
        }
        if is_ident_char(first) {
            let len = rest.find(|c: char| !is_ident_char(c)).unwrap_or(rest.len());
            let word = &rest[..len];
            let next = rest[len..].chars().next();
            let slot = if spec.keywords.contains(&word) || spec.literals.contains(&word) {
                Some(MdSlot::SyntaxKeyword)
            } else if spec.types.contains(&word)
                || (spec.capitalized_types && word.starts_with(|c: char| c.is_uppercase()))
            {
                Some(MdSlot::SyntaxType)
            } else if !after_ident && (next == Some('(') || (next == Some('!') && spec.macros)) {
                Some(MdSlot::SyntaxFunction)
            } else {
                None
            };
            self.push(word, slot.map(|s| theme.md(s)).unwrap_or_default());
            return len;
        }
        let len = first.len_utf8();
        self.push(&rest[..len], Style::default());
        len
    }
}

/// Where the string closed by `close` ends in `rest` (after the delimiter), skipping escapes.
fn string_end(rest: &str, close: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in rest.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if rest[i..].starts_with(close) {
            return Some(i + close.len());
        }
    }
    None
}

/// Whether `'` at the start of `rest` opens a character literal (`'a'`, `'\n'`, `'\u{1F600}'`)
/// rather than a lifetime (`'a`).
fn is_char_literal(rest: &str) -> bool {
    let body = &rest[1..];
    if body.starts_with('\\') {
        return string_end(body, "'").is_some_and(|end| end <= 12);
    }
    let mut chars = body.chars();
    chars.next().is_some() && chars.next() == Some('\'')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::styled;

    fn show(code: &str, lang: &str) -> String {
        let theme = Theme::indexed();
        styled(&highlight(code, lang, &theme), &theme)
    }

    #[test]
    fn rust_lifetimes_are_not_strings() {
        assert_eq!(
            show("fn f<'a>(x: &'a str) -> char { 'x' }", "rs"),
            "[fg=syntaxKeyword]fn[/] f<'a>(x: &'a [fg=syntaxType]str[/]) -> [fg=syntaxType]char[/] { [fg=syntaxString]'x'[/] }"
        );
    }

    #[test]
    fn block_comments_and_multiline_strings_carry_over() {
        assert_eq!(
            show("a /* one\ntwo */ b", "go"),
            "a [fg=syntaxComment]/* one[/]\n[fg=syntaxComment]two */[/] b"
        );
        assert_eq!(
            show("x = \"\"\"doc\nmore\"\"\" + 1", "python"),
            "x = [fg=syntaxString]\"\"\"doc[/]\n[fg=syntaxString]more\"\"\"[/] + [fg=syntaxNumber]1[/]"
        );
    }

    #[test]
    fn plain_quotes_end_at_the_end_of_the_line() {
        assert_eq!(show("\"open\nnext", "json"), "[fg=syntaxString]\"open[/]\nnext");
    }

    #[test]
    fn escaped_quotes_stay_inside_the_string() {
        assert_eq!(show(r#"s = "a\"b" + c"#, "js"), r#"s = [fg=syntaxString]"a\"b"[/] + c"#);
    }

    #[test]
    fn shell_comments_start_at_a_word() {
        assert_eq!(show("echo a#b # note", "bash"), "echo a#b [fg=syntaxComment]# note[/]");
    }

    #[test]
    fn numbers_inside_identifiers_are_not_numbers() {
        assert_eq!(show("x1 = 0x1F", "py"), "x1 = [fg=syntaxNumber]0x1F[/]");
    }

    #[test]
    fn unknown_languages_are_plain() {
        assert_eq!(
            show("IDENTIFICATION DIVISION.", "cobol"),
            "[fg=mdCodeBlock]IDENTIFICATION DIVISION.[/]"
        );
    }
}
