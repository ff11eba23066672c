//! Parsing, matching and rewriting on ast-grep-core, over many files in parallel.
//!
//! Rules (pattern + template) are compiled once per call, sorted by pattern string. Files are read,
//! parsed and matched on the worker pool of [`super::pool`], results kept by a [`FirstByPath`], so a
//! capped result is the same on every run. A file that cannot be read, is not UTF-8 or whose syntax tree has error nodes
//! becomes a parse issue and is skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use ast_grep_core::matcher::{Matcher, Pattern, PatternNode, kind_utils};
use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::replacer::{Replacer, TemplateFix};
use ast_grep_core::tree_sitter::{StrDoc, Visitor};
use ast_grep_core::{AstGrep, NodeMatch};
use ast_grep_language::{Language, SupportLang};
use tokio_util::sync::CancellationToken;

use super::files::display;
use pi_tools::FirstByPath;

use super::pool::{Aborted, run_parallel};

/// A parsed file.
type Root = AstGrep<StrDoc<SupportLang>>;

/// One compiled rewrite: `pat` → `out`.
pub(crate) struct Rule {
    /// The pattern as the model wrote it.
    pub(crate) source: String,
    pattern: Pattern,
    fix: TemplateFix,
    /// Text every match contains (see [`required_text`]).
    required: Option<String>,
}

impl Rule {
    /// Whether a file with this content can hold a match at all.
    fn may_match(&self, source: &str) -> bool {
        self.required.as_deref().is_none_or(|text| source.contains(text))
    }
}

/// The longest text of a named leaf of the pattern, which every match must contain verbatim: with
/// ast-grep's default (smart) strictness a named leaf of the pattern only matches a node of the same
/// kind and identical text, and a node's text is a slice of the file. `None` when the pattern has no
/// named leaf (e.g. `$A + $B`).
fn required_text(node: &PatternNode) -> Option<&str> {
    match node {
        PatternNode::MetaVar { .. } => None,
        PatternNode::Terminal { text, is_named, .. } => (*is_named && !text.is_empty()).then_some(text.as_str()),
        PatternNode::Internal { children, .. } => {
            children.iter().filter_map(required_text).max_by_key(|text| text.len())
        }
    }
}

/// For grammars whose top level reads common code fragments as something else (Go: `fmt.Println($A)`
/// is a type conversion; C/C++: `printf($A)` a macro type; CSS: `color: $V` a selector), the text
/// around a pattern that makes it a statement (a declaration for CSS). The pattern itself is what gets
/// selected, so the text around it (like C's `;`) is not part of it.
fn statement_context(lang: SupportLang) -> Option<(&'static str, &'static str)> {
    match lang {
        SupportLang::Go => Some(("func _() {\n", "\n}")),
        // Without the `;`, C reads `printf(x)` in a block as a macro type too.
        SupportLang::C | SupportLang::Cpp => Some(("void _() {\n", ";\n}")),
        SupportLang::Css => Some(("_ {\n", "\n}")),
        _ => None,
    }
}

/// The pattern read inside its statement context, as ast-grep users write with `context` and
/// `selector`: the selected node is the innermost named node spanning exactly the pattern's text.
/// `None` when that reading has a syntax error, is a bare metavariable, or is ambiguous (the first
/// node of its kind is not the pattern's).
fn contextual_pattern(source: &str, lang: SupportLang, (prefix, suffix): (&str, &str)) -> Option<Pattern> {
    let trimmed = source.trim();
    let processed = lang.pre_process_pattern(trimmed);
    let context = format!("{prefix}{processed}{suffix}");
    let root = Root::try_new(&context, lang).ok()?;
    let top = root.root();
    if top.dfs().any(|node| node.is_error()) {
        return None;
    }
    let range = prefix.len()..prefix.len() + processed.len();
    let node = top
        .dfs()
        .filter(|node| node.is_named() && node.range() == range)
        .last()?;
    if lang.extract_meta_var(&node.text()).is_some() {
        return None;
    }
    let kind = node.kind().into_owned();
    let first = top.dfs().find(|candidate| candidate.kind() == kind)?;
    if first.range() != range {
        return None;
    }
    Pattern::contextual(&format!("{prefix}{trimmed}{suffix}"), &kind, lang).ok()
}

/// Compiles a pattern, with ast-grep's error text on failure. A pattern whose syntax tree holds an
/// error node is refused too: ast-grep would let it match almost anything. For Go, C, C++ and CSS
/// the pattern is read as a statement first ([`statement_context`]).
pub(crate) fn compile_pattern(source: &str, lang: SupportLang) -> Result<Pattern, String> {
    if let Some(context) = statement_context(lang)
        && let Some(pattern) = contextual_pattern(source, lang, context)
    {
        return Ok(pattern);
    }
    let pattern = Pattern::try_new(source, lang).map_err(|error| error.to_string())?;
    if has_error_node(&pattern.node) {
        return Err(format!(
            "the pattern has a syntax error as {}; fix it or wrap the fragment in enough context to parse",
            super::lang::name(lang)
        ));
    }
    Ok(pattern)
}

fn has_error_node(node: &PatternNode) -> bool {
    match node {
        PatternNode::MetaVar { .. } => false,
        PatternNode::Terminal { kind_id, .. } => kind_utils::is_error_kind(*kind_id),
        PatternNode::Internal { kind_id, children } => {
            kind_utils::is_error_kind(*kind_id) || children.iter().any(has_error_node)
        }
    }
}

/// Compiles `(pat, out)` ops sorted by pattern string. Patterns that do not compile become parse issues
/// `<pattern>: Invalid pattern: <error>` and are left out.
pub(crate) fn compile_rules(ops: &[(String, String)], lang: SupportLang) -> (Vec<Rule>, Vec<String>) {
    let mut sorted: Vec<&(String, String)> = ops.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut rules = Vec::new();
    let mut issues = Vec::new();
    for (pat, out) in sorted {
        match compile_pattern(pat, lang) {
            Ok(pattern) => {
                let fix = match TemplateFix::try_new(out, &lang) {
                    Ok(fix) => fix,
                    Err(never) => match never {},
                };
                let required = required_text(&pattern.node).map(str::to_owned);
                rules.push(Rule {
                    source: pat.clone(),
                    pattern,
                    fix,
                    required,
                });
            }
            Err(error) => issues.push(format!("{pat}: Invalid pattern: {error}")),
        }
    }
    (rules, issues)
}

/// Reads a file as UTF-8 text; the error is the parse issue to report.
fn read_file(cwd: &Path, path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|error| format!("{}: {error}", display(cwd, path)))?;
    String::from_utf8(bytes).map_err(|_| format!("{}: not valid UTF-8 text", display(cwd, path)))
}

/// Parses a file's text; the error is the parse issue to report.
fn parse_source(cwd: &Path, path: &Path, source: &str, lang: SupportLang) -> Result<Root, String> {
    let root = Root::try_new(source, lang).map_err(|error| format!("{}: {error}", display(cwd, path)))?;
    if root.root().get_inner_node().has_error() {
        return Err(format!(
            "{}: parse error (syntax tree contains error nodes)",
            display(cwd, path)
        ));
    }
    Ok(root)
}

/// Reads and parses a file; the error is the parse issue to report.
fn parse_file(cwd: &Path, path: &Path, lang: SupportLang) -> Result<Root, String> {
    parse_source(cwd, path, &read_file(cwd, path)?, lang)
}

/// Byte offset where the line holding `offset` starts.
fn line_start(source: &str, offset: usize) -> usize {
    source[..offset].rfind('\n').map_or(0, |i| i + 1)
}

/// 1-based character column of `offset`.
fn column(source: &str, offset: usize) -> usize {
    source[line_start(source, offset)..offset].chars().count() + 1
}

/// Rewrites lone `\n` to `\r\n` (for templates inserted into a CRLF file).
fn to_crlf(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut previous = '\0';
    for c in text.chars() {
        if c == '\n' && previous != '\r' {
            out.push('\r');
        }
        out.push(c);
        previous = c;
    }
    out
}

/// One replacement in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    /// Byte range replaced.
    pub(crate) start: usize,
    /// End of the byte range (exclusive).
    pub(crate) end: usize,
    /// 1-based line of `start`.
    pub(crate) line: usize,
    /// 1-based character column of `start`.
    pub(crate) column: usize,
    /// Index of the rule (in pattern order) that made it.
    pub(crate) rule: usize,
    /// The replaced text.
    pub(crate) before: String,
    /// The text put in its place.
    pub(crate) after: String,
}

/// A file with at least one change.
#[derive(Debug)]
pub(crate) struct FileEdits {
    /// Absolute path.
    pub(crate) path: PathBuf,
    /// The file's content as read.
    pub(crate) source: String,
    /// Changes sorted by position.
    pub(crate) changes: Vec<Change>,
}

/// What an edit run found.
#[derive(Debug)]
pub(crate) struct EditRun {
    /// Touched files in path order, at most `max_files`.
    pub(crate) files: Vec<FileEdits>,
    /// Files read.
    pub(crate) files_searched: usize,
    /// Files parsed: those holding the text some rule's matches need.
    pub(crate) files_parsed: usize,
    /// More than `max_files` files would change.
    pub(crate) limit_reached: bool,
    /// Per-file parse issues in path order.
    pub(crate) issues: Vec<String>,
}

/// The changes of every rule in one parsed file, sorted by position. A match nested inside another
/// match of the same rule is not a change of its own (ast-grep's rewrite rule: the outer match wins).
/// Replacements equal to the text they replace are left out.
fn file_changes(root: &Root, rules: &[Rule]) -> Result<Vec<Change>, String> {
    let source = root.get_text();
    let crlf = source
        .find('\n')
        .is_some_and(|i| i > 0 && source.as_bytes()[i - 1] == b'\r');
    let mut changes = Vec::new();
    for (index, rule) in rules.iter().enumerate() {
        for found in Visitor::new(&rule.pattern).reentrant(false).visit(root.root()) {
            let range = found.range();
            let end = rule
                .pattern
                .get_match_len(found.get_node().clone())
                .map_or(range.end, |len| range.start + len);
            let bytes = rule.fix.generate_replacement(&found);
            let after = String::from_utf8(bytes).map_err(|_| "replacement text is not valid UTF-8".to_owned())?;
            let after = if crlf && after.contains('\n') {
                to_crlf(&after)
            } else {
                after
            };
            let before = &source[range.start..end];
            if before == after {
                continue;
            }
            changes.push(Change {
                start: range.start,
                end,
                line: found.start_pos().line() + 1,
                column: column(source, range.start),
                rule: index,
                before: before.to_owned(),
                after,
            });
        }
    }
    changes.sort_by_key(|c| (c.start, c.end, c.rule));
    Ok(changes)
}

/// Finds every rule's changes in `candidates`, keeping the first `max_files` touched files by path.
///
/// A file that lacks the text every match of a rule needs (for every rule) is not parsed: it cannot
/// change, and a syntax error in it cannot hide a replacement, so it reports no parse issue either.
pub(crate) fn run_edit(
    cwd: &Path,
    candidates: &[PathBuf],
    lang: SupportLang,
    rules: &[Rule],
    max_files: usize,
    cancel: &CancellationToken,
) -> Result<EditRun, Aborted> {
    let kept = FirstByPath::new(max_files.saturating_add(1));
    let issues = Mutex::new(Vec::new());
    let searched = AtomicUsize::new(0);
    let parsed = AtomicUsize::new(0);
    run_parallel(candidates.len(), cancel, |index| {
        let path = &candidates[index];
        if kept.is_beyond(path) {
            return;
        }
        searched.fetch_add(1, Ordering::Relaxed);
        let outcome = read_file(cwd, path).and_then(|source| {
            if !rules.iter().any(|rule| rule.may_match(&source)) {
                return Ok(None);
            }
            parsed.fetch_add(1, Ordering::Relaxed);
            let root = parse_source(cwd, path, &source, lang)?;
            let changes = file_changes(&root, rules).map_err(|why| format!("{}: {why}", display(cwd, path)))?;
            Ok(Some((source, changes)))
        });
        match outcome {
            Ok(None) => {}
            Ok(Some((_, changes))) if changes.is_empty() => {}
            Ok(Some((source, changes))) => kept.add(path.clone(), 1, (source, changes)),
            Err(issue) => pi_agent_core::lock(&issues).push((path.clone(), issue)),
        }
    })?;
    let mut files: Vec<FileEdits> = kept
        .finish()
        .0
        .into_iter()
        .map(|(path, (source, changes))| FileEdits { path, source, changes })
        .collect();
    let limit_reached = files.len() > max_files;
    files.truncate(max_files);
    Ok(EditRun {
        files,
        files_searched: searched.into_inner(),
        files_parsed: parsed.into_inner(),
        limit_reached,
        issues: sorted_issues(issues),
    })
}

fn sorted_issues(issues: Mutex<Vec<(PathBuf, String)>>) -> Vec<String> {
    let mut issues = issues.into_inner().unwrap_or_else(PoisonError::into_inner);
    issues.sort();
    issues.into_iter().map(|(_, issue)| issue).collect()
}

/// Lines a match shows at most.
pub(crate) const MAX_MATCH_LINES: usize = 10;

/// Characters of a source line shown at most.
pub(crate) const MAX_LINE_CHARS: usize = 500;

/// Characters of a capture value shown at most.
const MAX_CAPTURE_CHARS: usize = 100;

/// One match of `ast_grep`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Match {
    /// 1-based line where the match starts.
    pub(crate) line: usize,
    /// The source lines the match spans (at most [`MAX_MATCH_LINES`], each cut).
    pub(crate) lines: Vec<String>,
    /// Lines of the match not shown.
    pub(crate) more_lines: usize,
    /// Captured metavariables, sorted by name, each value on one line.
    pub(crate) captures: Vec<(String, String)>,
}

/// What a search run found.
#[derive(Debug)]
pub(crate) struct SearchRun {
    /// Files with matches, in path order; they hold at least `limit` matches when more exist.
    pub(crate) files: Vec<(PathBuf, Vec<Match>)>,
    /// Files read and parsed.
    pub(crate) files_searched: usize,
    /// Per-file parse issues in path order.
    pub(crate) issues: Vec<String>,
}

/// Cuts `text` to `max` characters, marking the cut with `…`.
pub(crate) fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

fn one_line(text: &str) -> String {
    cut(
        &text.split_whitespace().collect::<Vec<_>>().join(" "),
        MAX_CAPTURE_CHARS,
    )
}

fn captures(source: &str, found: &NodeMatch<'_, StrDoc<SupportLang>>) -> Vec<(String, String)> {
    let env = found.get_env();
    let mut out = BTreeMap::new();
    for variable in env.get_matched_variables() {
        match variable {
            MetaVariable::Capture(name, _) => {
                if let Some(node) = env.get_match(&name) {
                    out.insert(name, one_line(&node.text()));
                }
            }
            MetaVariable::MultiCapture(name) => {
                // The source from the first to the last named node: separators in between are kept,
                // a trailing comma is not.
                let nodes = env.get_multiple_matches(&name);
                let named: Vec<_> = nodes.iter().filter(|node| node.is_named()).collect();
                let text = match (named.first(), named.last()) {
                    (Some(first), Some(last)) => {
                        &source[first.range().start..last.range().end.max(first.range().start)]
                    }
                    _ => "",
                };
                out.insert(name, one_line(text));
            }
            MetaVariable::Dropped(_) | MetaVariable::Multiple => {}
        }
    }
    out.into_iter().collect()
}

fn describe_match(source: &str, found: &NodeMatch<'_, StrDoc<SupportLang>>) -> Match {
    let range = found.range();
    let last_byte = if range.end > range.start {
        range.end - 1
    } else {
        range.start
    };
    let first = line_start(source, range.start);
    let mut lines = Vec::new();
    let mut more_lines = 0;
    let mut offset = first;
    for text in source[first..].split('\n') {
        if offset > last_byte && offset > range.start {
            break;
        }
        if lines.len() < MAX_MATCH_LINES {
            lines.push(cut(text.strip_suffix('\r').unwrap_or(text), MAX_LINE_CHARS));
        } else {
            more_lines += 1;
        }
        offset += text.len() + 1;
    }
    Match {
        line: found.start_pos().line() + 1,
        lines,
        more_lines,
        captures: captures(source, found),
    }
}

/// Finds the matches of `pattern` in `candidates`, keeping the files that sort first by path and hold
/// at least `limit` matches (all of them when there are fewer).
pub(crate) fn run_search(
    cwd: &Path,
    candidates: &[PathBuf],
    lang: SupportLang,
    pattern: &Pattern,
    limit: usize,
    cancel: &CancellationToken,
) -> Result<SearchRun, Aborted> {
    let kept = FirstByPath::new(limit);
    let issues = Mutex::new(Vec::new());
    let searched = AtomicUsize::new(0);
    run_parallel(candidates.len(), cancel, |index| {
        let path = &candidates[index];
        if kept.is_beyond(path) {
            return;
        }
        searched.fetch_add(1, Ordering::Relaxed);
        match parse_file(cwd, path, lang) {
            Ok(root) => {
                let source = root.get_text();
                let node = root.root();
                let matches: Vec<Match> = node.find_all(pattern).map(|m| describe_match(source, &m)).collect();
                if !matches.is_empty() {
                    kept.add(path.clone(), matches.len(), matches);
                }
            }
            Err(issue) => pi_agent_core::lock(&issues).push((path.clone(), issue)),
        }
    })?;
    Ok(SearchRun {
        files: kept.finish().0,
        files_searched: searched.into_inner(),
        issues: sorted_issues(issues),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn parse(source: &str, lang: SupportLang) -> Root {
        Root::try_new(source, lang).unwrap()
    }

    fn rules(ops: &[(&str, &str)], lang: SupportLang) -> Vec<Rule> {
        let ops: Vec<(String, String)> = ops.iter().map(|(p, o)| ((*p).to_owned(), (*o).to_owned())).collect();
        let (rules, issues) = compile_rules(&ops, lang);
        assert!(issues.is_empty(), "{issues:?}");
        rules
    }

    #[test]
    fn rules_are_sorted_and_bad_patterns_reported() {
        let ops = vec![
            ("foo($A)".to_owned(), "bar($A)".to_owned()),
            ("a b c )(".to_owned(), "x".to_owned()),
            ("bar($A)".to_owned(), "baz($A)".to_owned()),
        ];
        let (rules, issues) = compile_rules(&ops, SupportLang::TypeScript);
        let order: Vec<&str> = rules.iter().map(|r| r.source.as_str()).collect();
        assert_eq!(order, ["bar($A)", "foo($A)"]);
        assert_eq!(
            issues,
            [
                "a b c )(: Invalid pattern: the pattern has a syntax error as typescript; fix it or wrap the fragment in enough context to parse"
            ]
        );
        let multiple = compile_pattern("foo(); bar()", SupportLang::TypeScript).unwrap_err();
        assert!(multiple.starts_with("Multiple AST nodes are detected"), "{multiple}");
        // A missing `;` is no error: ast-grep patterns may leave out trailing punctuation.
        assert!(compile_pattern("let $A = $B", SupportLang::Rust).is_ok());
    }

    fn count(lang: SupportLang, pattern: &str, source: &str) -> usize {
        let pattern = compile_pattern(pattern, lang).unwrap();
        let root = parse(source, lang);
        let node = root.root();
        node.find_all(&pattern).count()
    }

    #[test]
    fn statement_context_for_go_c_and_css() {
        let go = "package main\n\nfunc main() {\n\tfmt.Println(\"hi\")\n\tif err != nil {\n\t\treturn err\n\t}\n}\n";
        assert_eq!(count(SupportLang::Go, "fmt.Println($A)", go), 1);
        assert_eq!(count(SupportLang::Go, "if err != nil { return $E }", go), 1);
        assert_eq!(
            count(SupportLang::Go, "func $F() { $$$ }", go),
            1,
            "top-level declarations still work"
        );
        assert!(count(SupportLang::Go, "$A", "package main\nvar x = 1\n") > 0);
        let c = "int main() {\n  printf(\"hi\");\n  return 0;\n}\n";
        assert_eq!(count(SupportLang::C, "printf($A)", c), 1);
        assert_eq!(count(SupportLang::C, "int main() { $$$ }", c), 1);
        assert_eq!(count(SupportLang::Cpp, "printf($A)", c), 1);
        assert_eq!(
            count(SupportLang::Css, "color: $V", "a { color: red; }\nb { color: blue; }\n"),
            2
        );
        assert_eq!(count(SupportLang::Css, "a { $$$ }", "a { color: red; }\n"), 1);
    }

    #[test]
    fn required_text_is_the_longest_named_leaf() {
        let required = |pat: &str, lang| rules(&[(pat, "")], lang)[0].required.clone();
        assert_eq!(
            required("console.log($$$ARGS)", SupportLang::TypeScript).as_deref(),
            Some("console")
        );
        assert_eq!(required("$A + $B", SupportLang::TypeScript), None);
        assert_eq!(
            required("legacyWrap($A, $B)", SupportLang::TypeScript).as_deref(),
            Some("legacyWrap")
        );
        assert_eq!(required("fn $F() { $$$ }", SupportLang::Rust), None);
        let rule = &rules(&[("console.log($A)", "")], SupportLang::TypeScript)[0];
        assert!(rule.may_match("x; console.log(1)"));
        assert!(!rule.may_match("logger.info(1)"));
    }

    #[test]
    fn changes_carry_positions_and_keep_trailing_punctuation() {
        let root = parse("let a = 1;\n  const value = 42;\n", SupportLang::TypeScript);
        let changes = file_changes(
            &root,
            &rules(&[("const $A = $B", "let $A = $B")], SupportLang::TypeScript),
        )
        .unwrap();
        assert_eq!(changes.len(), 1);
        let change = &changes[0];
        assert_eq!((change.line, change.column), (2, 3));
        assert_eq!(change.before, "const value = 42");
        assert_eq!(change.after, "let value = 42");
    }

    #[test]
    fn nested_matches_of_one_rule_are_not_separate_changes() {
        let root = parse("foo(foo(1));\n", SupportLang::TypeScript);
        let changes = file_changes(&root, &rules(&[("foo($A)", "bar($A)")], SupportLang::TypeScript)).unwrap();
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].after, "bar(foo(1))");
    }

    #[test]
    fn identical_replacements_are_not_changes() {
        let root = parse("foo(1);\n", SupportLang::TypeScript);
        let changes = file_changes(&root, &rules(&[("foo($A)", "foo($A)")], SupportLang::TypeScript)).unwrap();
        assert!(changes.is_empty());
    }

    #[test]
    fn crlf_files_get_crlf_templates() {
        let root = parse("if (a) {\r\n  go();\r\n}\r\n", SupportLang::TypeScript);
        let changes = file_changes(&root, &rules(&[("go()", "one();\ntwo()")], SupportLang::TypeScript)).unwrap();
        assert_eq!(changes[0].after, "one();\r\n  two()");
    }

    #[test]
    fn matches_show_their_lines_and_captures() {
        let source = "const x = call(a,\n  b, c);\nother();\n";
        let root = parse(source, SupportLang::TypeScript);
        let pattern = compile_pattern("call($FIRST, $$$REST)", SupportLang::TypeScript).unwrap();
        let node = root.root();
        let found: Vec<Match> = node.find_all(&pattern).map(|m| describe_match(source, &m)).collect();
        assert_eq!(
            found,
            [Match {
                line: 1,
                lines: vec!["const x = call(a,".into(), "  b, c);".into()],
                more_lines: 0,
                captures: vec![("FIRST".into(), "a".into()), ("REST".into(), "b, c".into())],
            }]
        );
    }

    #[test]
    fn long_matches_are_cut() {
        let body: String = (0..30).map(|i| format!("  step{i}();\n")).collect();
        let source = format!("function f() {{\n{body}}}\n");
        let root = parse(&source, SupportLang::JavaScript);
        let pattern = compile_pattern("function $F() { $$$ }", SupportLang::JavaScript).unwrap();
        let node = root.root();
        let found: Vec<Match> = node.find_all(&pattern).map(|m| describe_match(&source, &m)).collect();
        assert_eq!(found[0].lines.len(), MAX_MATCH_LINES);
        assert_eq!(found[0].more_lines, 32 - MAX_MATCH_LINES);
    }

    #[test]
    fn cuts_count_characters() {
        assert_eq!(cut("héllo", 3), "hél…");
        assert_eq!(cut("abc", 3), "abc");
        assert_eq!(column("ab\nçd", 5), 2);
    }
}
