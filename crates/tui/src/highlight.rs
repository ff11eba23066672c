//! Code highlighting with [syntect](https://docs.rs/syntect) and bat's Sublime Text syntaxes (from
//! [two-face](https://docs.rs/two-face)),
//! coloured with the theme's `syntax*` tokens, as pi colours highlight.js's classes: comments,
//! keywords, function names, variables, strings, numbers and constants, types, operators and
//! punctuation; other text keeps the terminal's colour.
//!
//! The syntaxes are loaded once, on first use or by [`preload`] on a thread of its own (the
//! interactive mode calls it at start-up so that its first frame does not wait for them). A
//! language syntect does not know comes back plain in the `mdCodeBlock` colour, as pi shows a
//! language highlight.js does not know.
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
//!     "[fg=syntaxKeyword]let[/] n [fg=syntaxOperator]=[/] [fg=syntaxNumber]42[/][fg=syntaxPunctuation];[/] [fg=syntaxComment]// answer[/]"
//! );
//! assert!(is_supported("ts") && !is_supported("cobol"));
//! ```

use std::cell::RefCell;
use std::collections::VecDeque;
use std::ops::Range;
use std::sync::OnceLock;

use ratatui::style::Style;
use ratatui::text::Span;
use syntect::easy::ScopeRangeIterator;
use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

use crate::Line;
use crate::theme::{Slot, Theme};

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(two_face::syntax::extra_newlines)
}

/// Loads the syntaxes on a thread of its own, so that the first code block does not wait for
/// them (a few tens of milliseconds). Later calls do nothing.
pub fn preload() {
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(|| {
        // A failed spawn only means the first highlight loads them itself.
        let _ = std::thread::Builder::new().name("pi-syntaxes".into()).spawn(|| {
            syntaxes();
        });
    });
}

/// highlight.js's names (pi's code-fence languages and `getLanguageFromPath`) for which the
/// syntax has another name or extension.
const ALIASES: &[(&str, &str)] = &[
    ("typescript", "ts"),
    ("javascript", "js"),
    ("bash", "sh"),
    ("shell", "sh"),
    ("zsh", "sh"),
    ("console", "sh"),
    ("csharp", "cs"),
    ("c#", "cs"),
    ("c++", "cpp"),
    ("golang", "go"),
    ("jsonc", "json"),
    ("json5", "json"),
    ("objectivec", "m"),
    ("objc", "m"),
    ("patch", "diff"),
];

/// syntect's syntax for a code fence's language or a file extension (`None`: shown plain).
fn syntax_for(lang: &str) -> Option<&'static SyntaxReference> {
    let lang = lang.trim().to_ascii_lowercase();
    if lang.is_empty() {
        return None;
    }
    let token = ALIASES
        .iter()
        .find(|(alias, _)| *alias == lang)
        .map_or(lang.as_str(), |(_, token)| token);
    let set = syntaxes();
    set.find_syntax_by_token(token)
        .filter(|syntax| syntax.name != "Plain Text")
}

/// Whether `lang` (a code fence's info string or a file extension) is highlighted, rather than
/// shown plain. Loads the syntaxes if [`preload`] has not.
pub fn is_supported(lang: &str) -> bool {
    syntax_for(lang).is_some()
}

/// pi's `getLanguageFromPath`: the highlight.js language of a file by its extension (`None` when
/// pi knows none).
///
/// ```
/// assert_eq!(pi_tui::highlight::language_for_path("src/main.rs"), Some("rust"));
/// assert_eq!(pi_tui::highlight::language_for_path("notes.txt"), None);
/// ```
pub fn language_for_path(path: &str) -> Option<&'static str> {
    // pi takes what follows the last dot, or the whole name (`Makefile`).
    let extension = path.rsplit('.').next()?.to_ascii_lowercase();
    const BY_EXTENSION: &[(&str, &str)] = &[
        ("ts", "typescript"),
        ("tsx", "typescript"),
        ("js", "javascript"),
        ("jsx", "javascript"),
        ("mjs", "javascript"),
        ("cjs", "javascript"),
        ("py", "python"),
        ("rb", "ruby"),
        ("rs", "rust"),
        ("go", "go"),
        ("java", "java"),
        ("kt", "kotlin"),
        ("swift", "swift"),
        ("c", "c"),
        ("h", "c"),
        ("cpp", "cpp"),
        ("cc", "cpp"),
        ("cxx", "cpp"),
        ("hpp", "cpp"),
        ("cs", "csharp"),
        ("php", "php"),
        ("sh", "bash"),
        ("bash", "bash"),
        ("zsh", "bash"),
        ("fish", "fish"),
        ("ps1", "powershell"),
        ("sql", "sql"),
        ("html", "html"),
        ("htm", "html"),
        ("css", "css"),
        ("scss", "scss"),
        ("sass", "sass"),
        ("less", "less"),
        ("json", "json"),
        ("yaml", "yaml"),
        ("yml", "yaml"),
        ("toml", "toml"),
        ("xml", "xml"),
        ("md", "markdown"),
        ("markdown", "markdown"),
        ("dockerfile", "dockerfile"),
        ("makefile", "makefile"),
        ("cmake", "cmake"),
        ("lua", "lua"),
        ("perl", "perl"),
        ("r", "r"),
        ("scala", "scala"),
        ("clj", "clojure"),
        ("ex", "elixir"),
        ("exs", "elixir"),
        ("erl", "erlang"),
        ("hs", "haskell"),
        ("ml", "ocaml"),
        ("vim", "vim"),
        ("graphql", "graphql"),
        ("proto", "protobuf"),
        ("tf", "hcl"),
        ("hcl", "hcl"),
    ];
    BY_EXTENSION
        .iter()
        .find(|(ext, _)| *ext == extension)
        .map(|(_, lang)| *lang)
}

/// What a scope prefix means for the colour.
#[derive(Clone, Copy)]
enum Rule {
    Token(Slot),
    /// Shown in the terminal's colour (plain identifiers, which highlight.js leaves alone).
    Plain,
}

/// Scope prefixes and their tokens, tried in order on the innermost scope first.
const RULES: &[(&str, Rule)] = &[
    ("keyword.operator", Rule::Token(Slot::SyntaxOperator)),
    // Python's `f` / `r` string prefixes belong to the string, as in highlight.js.
    ("storage.type.string", Rule::Token(Slot::SyntaxString)),
    ("keyword", Rule::Token(Slot::SyntaxKeyword)),
    ("storage", Rule::Token(Slot::SyntaxKeyword)),
    ("variable.language", Rule::Token(Slot::SyntaxKeyword)),
    ("constant.numeric", Rule::Token(Slot::SyntaxNumber)),
    ("constant.language", Rule::Token(Slot::SyntaxNumber)),
    ("constant.character", Rule::Token(Slot::SyntaxString)),
    // highlight.js's `built_in` (`print`, `echo`, `len`), which pi colours as a type.
    ("support.function.builtin", Rule::Token(Slot::SyntaxType)),
    ("entity.name.function", Rule::Token(Slot::SyntaxFunction)),
    ("support.function", Rule::Token(Slot::SyntaxFunction)),
    ("variable.function", Rule::Token(Slot::SyntaxFunction)),
    ("support.macro", Rule::Token(Slot::SyntaxFunction)),
    ("entity.name", Rule::Token(Slot::SyntaxType)),
    ("support.type", Rule::Token(Slot::SyntaxType)),
    ("support.class", Rule::Token(Slot::SyntaxType)),
    ("entity.other.inherited-class", Rule::Token(Slot::SyntaxType)),
    ("variable.other.readwrite", Rule::Plain),
    ("variable.other.member", Rule::Plain),
    ("variable", Rule::Token(Slot::SyntaxVariable)),
    ("entity.other.attribute-name", Rule::Token(Slot::SyntaxVariable)),
    ("punctuation", Rule::Token(Slot::SyntaxPunctuation)),
];

struct Scopes {
    comment: Scope,
    string: Scope,
    number: Scope,
    rules: Vec<(Scope, Rule)>,
}

fn scopes() -> &'static Scopes {
    static SCOPES: OnceLock<Scopes> = OnceLock::new();
    SCOPES.get_or_init(|| {
        let scope = |name: &str| Scope::new(name).unwrap_or_default();
        Scopes {
            comment: scope("comment"),
            string: scope("string"),
            number: scope("constant.numeric"),
            rules: RULES.iter().map(|(name, rule)| (scope(name), *rule)).collect(),
        }
    })
}

/// The token of text under `stack`: a comment, a string or a number anywhere on the stack wins
/// (their delimiters, escapes and `0x` prefixes too), then the innermost scope a rule knows.
fn token(stack: &ScopeStack) -> Option<Slot> {
    let scopes = scopes();
    let on_stack = |prefix: Scope| stack.as_slice().iter().any(|s| prefix.is_prefix_of(*s));
    if on_stack(scopes.comment) {
        return Some(Slot::SyntaxComment);
    }
    if on_stack(scopes.string) {
        return Some(Slot::SyntaxString);
    }
    if on_stack(scopes.number) {
        return Some(Slot::SyntaxNumber);
    }
    for scope in stack.as_slice().iter().rev() {
        if let Some((_, rule)) = scopes.rules.iter().find(|(prefix, _)| prefix.is_prefix_of(*scope)) {
            return match rule {
                Rule::Token(slot) => Some(*slot),
                Rule::Plain => None,
            };
        }
    }
    None
}

/// `code` as one line per source line, coloured for `lang` (a code fence's language or a file
/// extension; see the module docs); tabs and other characters are kept as they are, for the
/// caller to wrap.
pub fn highlight(code: &str, lang: &str, theme: &Theme) -> Vec<Line> {
    let code = code.strip_suffix('\n').unwrap_or(code);
    match syntax_for(lang) {
        Some(syntax) => highlight_with(code, syntax, theme).unwrap_or_else(|| plain(code, theme)),
        None => plain(code, theme),
    }
}

fn plain(code: &str, theme: &Theme) -> Vec<Line> {
    let style = theme.style(Slot::MdCodeBlock);
    code.split('\n')
        .map(|line| Line::from(Span::styled(line.to_owned(), style)))
        .collect()
}

/// A line's runs: byte ranges of its text and their token (`None`: the terminal's colour).
type Runs = Vec<(Range<usize>, Option<Slot>)>;

/// A highlight to build on: the complete lines of some code (each ending with `\n`), their runs,
/// and the parser after the last of them. A streamed code block grows line by line; its next
/// frame parses only what was added.
#[derive(Clone)]
struct Parsed {
    syntax: String,
    prefix: String,
    runs: Vec<Runs>,
    state: ParseState,
    stack: ScopeStack,
}

/// How many highlights each thread keeps (most recent first).
const KEPT: usize = 16;

thread_local! {
    /// Per thread: a parser state holds the regex engine's buffers, which stay on their thread.
    static KEPT_PARSES: RefCell<VecDeque<Parsed>> = const { RefCell::new(VecDeque::new()) };
}

/// `None` if syntect fails on a line (then the caller shows the code plain, as pi does when
/// highlight.js throws).
fn highlight_with(code: &str, syntax: &SyntaxReference, theme: &Theme) -> Option<Vec<Line>> {
    let runs = tokenize(code, syntax)?;
    let lines = code
        .split('\n')
        .zip(runs.iter().map(Some).chain(std::iter::repeat(None)));
    Some(
        lines
            .map(|(text, runs)| {
                let spans = runs.into_iter().flatten().filter_map(|(range, slot)| {
                    let style = slot.map_or(Style::default(), |slot| theme.style(slot));
                    text.get(range.clone())
                        .map(|piece| Span::styled(piece.to_owned(), style))
                });
                Line::from(spans.collect::<Vec<_>>())
            })
            .collect(),
    )
}

/// The runs of every line of `code`, resuming from the longest kept highlight it extends.
fn tokenize(code: &str, syntax: &SyntaxReference) -> Option<Vec<Runs>> {
    let start = KEPT_PARSES.with_borrow(|kept| {
        kept.iter()
            .filter(|p| p.syntax == syntax.name && code.starts_with(&p.prefix))
            .max_by_key(|p| p.prefix.len())
            .cloned()
    });
    let mut parsed = start.unwrap_or_else(|| Parsed {
        syntax: syntax.name.clone(),
        prefix: String::new(),
        runs: Vec::new(),
        state: ParseState::new(syntax),
        stack: ScopeStack::new(),
    });
    let rest = &code[parsed.prefix.len()..];
    let mut tail = None;
    for source in LinesWithEndings::from(rest) {
        if source.ends_with('\n') {
            let runs = parse_line(&mut parsed.state, &mut parsed.stack, source)?;
            parsed.prefix.push_str(source);
            parsed.runs.push(runs);
        } else {
            // The last line may still grow: the kept parser stays before it.
            let (mut state, mut stack) = (parsed.state.clone(), parsed.stack.clone());
            tail = Some(parse_line(&mut state, &mut stack, source)?);
        }
    }
    let mut runs = parsed.runs.clone();
    runs.extend(tail);
    KEPT_PARSES.with_borrow_mut(|kept| {
        kept.retain(|p| !(p.syntax == parsed.syntax && p.prefix == parsed.prefix));
        kept.push_front(parsed);
        kept.truncate(KEPT);
    });
    Some(runs)
}

fn parse_line(state: &mut ParseState, stack: &mut ScopeStack, source: &str) -> Option<Runs> {
    let ops = state.parse_line(source, syntaxes()).ok()?;
    let text_len = source.strip_suffix('\n').unwrap_or(source).len();
    let mut runs: Runs = Vec::new();
    for (range, op) in ScopeRangeIterator::new(&ops, source) {
        stack.apply(op).ok()?;
        let end = range.end.min(text_len);
        if range.start >= end {
            continue;
        }
        let slot = token(stack);
        match runs.last_mut() {
            Some((last, last_slot)) if *last_slot == slot && last.end == range.start => last.end = end,
            _ => runs.push((range.start..end, slot)),
        }
    }
    Some(runs)
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
    fn comments_strings_and_numbers_take_their_tokens() {
        let shown = show("x = \"a\\\"b\" # note\ny = 0x1F", "python");
        assert!(shown.contains("[fg=syntaxString]\"a\\\"b\"[/]"), "{shown}");
        assert!(shown.contains("[fg=syntaxComment]# note[/]"), "{shown}");
        assert!(shown.contains("[fg=syntaxNumber]0x1F[/]"), "{shown}");
    }

    #[test]
    fn block_comments_carry_over_lines() {
        let shown = show("a /* one\ntwo */ b", "go");
        assert_eq!(shown.lines().count(), 2);
        assert!(
            shown.contains("[fg=syntaxComment]/* one[/]\n[fg=syntaxComment]two */[/]"),
            "{shown}"
        );
    }

    #[test]
    fn functions_and_types_take_their_tokens() {
        let shown = show("fn main() -> Option<u8> { None }", "rs");
        assert!(shown.contains("[fg=syntaxFunction]main[/]"), "{shown}");
        assert!(shown.contains("[fg=syntaxKeyword]fn[/]"), "{shown}");
    }

    #[test]
    fn typescript_and_shell_names_are_known() {
        for lang in [
            "typescript",
            "ts",
            "tsx",
            "javascript",
            "bash",
            "sh",
            "json",
            "yaml",
            "toml",
            "PYTHON",
        ] {
            assert!(is_supported(lang), "{lang}");
        }
        assert!(!is_supported(""));
        assert!(!is_supported("txt"));
    }

    #[test]
    fn unknown_languages_are_plain() {
        assert_eq!(
            show("IDENTIFICATION DIVISION.", "cobol"),
            "[fg=mdCodeBlock]IDENTIFICATION DIVISION.[/]"
        );
        assert_eq!(show("a\nb", ""), "[fg=mdCodeBlock]a[/]\n[fg=mdCodeBlock]b[/]");
    }

    #[test]
    fn lines_keep_their_text_and_count() {
        let code = "let a = 1;\n\n\tlet b = \"x\";";
        let lines = highlight(code, "rust", &Theme::indexed());
        let texts: Vec<String> = lines.iter().map(crate::line_text).collect();
        assert_eq!(texts, ["let a = 1;", "", "\tlet b = \"x\";"]);
    }

    #[test]
    fn a_growing_block_is_highlighted_as_a_whole_one_is() {
        let whole = "let s = \"a\nb\";\n/* one\ntwo */ fn f() {}\nlet n = 1;\n";
        let mut grown = String::new();
        for c in whole.chars() {
            grown.push(c);
            // Resumed from the highlight of the text one character shorter…
            let resumed = show(&grown, "rust");
            // …and parsed from the start, with nothing kept.
            let kept_now = KEPT_PARSES.take();
            let fresh = show(&grown, "rust");
            KEPT_PARSES.set(kept_now);
            assert_eq!(resumed, fresh, "{grown:?}");
        }
        let shown = show(whole, "rust");
        assert!(shown.contains("[fg=syntaxComment]two */[/]"), "{shown}");
        assert!(shown.contains("[fg=syntaxString]b\"[/]"), "{shown}");
    }
}
