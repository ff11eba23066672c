//! Prompt templates: Markdown files whose name is a command (`review.md` → `/review`). Typing
//! `/review a "b c"` sends the template's body with the arguments put in: `$1`, `$2`… positional,
//! `$@` and `$ARGUMENTS` all of them, `${@:N}` from the Nth on, `${@:N:L}` L of them from the Nth.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::frontmatter;
use super::source::SourceInfo;

/// A loaded prompt template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptTemplate {
    /// The command name: the file name without `.md`.
    pub name: String,
    /// Front matter `description`, else the body's first non-empty line (60 characters at most,
    /// then `...`).
    pub description: String,
    /// Front matter `argument-hint`, shown before the description in completion.
    pub argument_hint: Option<String>,
    /// The body, front matter removed.
    pub content: String,
    /// The file.
    pub file_path: PathBuf,
    /// Where it came from.
    pub source_info: SourceInfo,
}

/// Reads a template file; `None` when it cannot be read or its front matter does not parse (pi
/// skips such files silently).
pub(crate) fn load_template_file(path: &Path, source_info: SourceInfo) -> Option<PromptTemplate> {
    let content = std::fs::read_to_string(path).ok()?;
    let parsed = frontmatter::parse(&content).ok()?;
    let file_name = path.file_name()?.to_string_lossy();
    let name = file_name.strip_suffix(".md").unwrap_or(&file_name).to_owned();
    let mut description = parsed.string("description").unwrap_or_default();
    if description.is_empty()
        && let Some(first) = parsed.body.split('\n').find(|line| !line.trim().is_empty())
    {
        description = truncate_utf16(first, 60);
        if first.encode_utf16().count() > 60 {
            description.push_str("...");
        }
    }
    Some(PromptTemplate {
        name,
        description,
        argument_hint: parsed.string("argument-hint").filter(|h| !h.is_empty()),
        content: parsed.body,
        file_path: path.to_path_buf(),
        source_info,
    })
}

/// The first `units` UTF-16 code units of `text` (JavaScript's `slice`), never splitting a
/// character.
fn truncate_utf16(text: &str, units: usize) -> String {
    let mut count = 0;
    let mut out = String::new();
    for c in text.chars() {
        count += c.len_utf16();
        if count > units {
            break;
        }
        out.push(c);
    }
    out
}

/// Splits a command's arguments as pi does: on spaces and tabs, with `"…"` and `'…'` grouping
/// (the quotes removed, no escapes).
///
/// ```
/// use pi_coding_agent::resources::parse_command_args;
/// assert_eq!(parse_command_args(r#"Button "click handler" 'a b'c"#), ["Button", "click handler", "a bc"]);
/// ```
pub fn parse_command_args(text: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => current.push(c),
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == ' ' || c == '\t' => {
                if !current.is_empty() {
                    args.push(std::mem::take(&mut current));
                }
            }
            None => current.push(c),
        }
    }
    if !current.is_empty() {
        args.push(current);
    }
    args
}

static POSITIONAL: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\$(\d+)").expect("a constant, valid pattern"));
static SLICE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\$\{@:(\d+)(?::(\d+))?\}").expect("a constant, valid pattern"));

/// Puts the arguments into a template's text, in pi's order: positional first, then slices, then
/// `$ARGUMENTS`, then `$@` (so argument values are never substituted again… except by the later
/// steps, as in pi).
///
/// ```
/// use pi_coding_agent::resources::substitute_args;
/// let args: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
/// assert_eq!(substitute_args("$1|$3|$4|$@|${@:2}|${@:2:1}|$ARGUMENTS", &args), "a|c||a b c|b c|b|a b c");
/// ```
pub fn substitute_args(content: &str, args: &[String]) -> String {
    let result = POSITIONAL.replace_all(content, |caps: &Captures<'_>| {
        let index = caps[1].parse::<usize>().ok().and_then(|n| n.checked_sub(1));
        index.and_then(|i| args.get(i)).cloned().unwrap_or_default()
    });
    let result = SLICE.replace_all(&result, |caps: &Captures<'_>| {
        let start = caps[1].parse::<usize>().unwrap_or(usize::MAX).saturating_sub(1);
        let tail = args.get(start..).unwrap_or(&[]);
        match caps.get(2) {
            Some(length) => {
                let length = length.as_str().parse::<usize>().unwrap_or(usize::MAX);
                tail.iter().take(length).cloned().collect::<Vec<_>>().join(" ")
            }
            None => tail.join(" "),
        }
    });
    let all = args.join(" ");
    result.replace("$ARGUMENTS", &all).replace("$@", &all)
}

/// `/name args` → the template `name` with the arguments put in; `None` when `text` is no
/// template command.
///
/// ```
/// use pi_coding_agent::resources::{PromptTemplate, SourceInfo, expand_prompt_template};
/// let review = PromptTemplate {
///     name: "review".into(),
///     description: String::new(),
///     argument_hint: None,
///     content: "Review $1 for $@".into(),
///     file_path: "/t/review.md".into(),
///     source_info: SourceInfo::path(std::path::Path::new("/t/review.md")),
/// };
/// assert_eq!(expand_prompt_template("/review src/main.rs", &[review.clone()]).as_deref(), Some("Review src/main.rs for src/main.rs"));
/// assert_eq!(expand_prompt_template("/other x", &[review]), None);
/// ```
pub fn expand_prompt_template(text: &str, templates: &[PromptTemplate]) -> Option<String> {
    let rest = text.strip_prefix('/')?;
    let (name, args) = rest.split_once(' ').unwrap_or((rest, ""));
    let template = templates.iter().find(|t| t.name == name)?;
    Some(substitute_args(&template.content, &parse_command_args(args)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    /// The cases of pi's docs/prompt-templates.md, with the values pi 0.73.1's `substituteArgs`
    /// gives for them (run with Node on the installed package).
    #[test]
    fn substitution_cases_from_pis_docs() {
        let parsed = parse_command_args(r#"Button "onClick handler" "disabled support""#);
        assert_eq!(parsed, ["Button", "onClick handler", "disabled support"]);
        assert_eq!(
            substitute_args("Create a React component named $1 with features: $@", &parsed),
            "Create a React component named Button with features: Button onClick handler disabled support"
        );
        let five = args(&["a", "b", "c", "d", "e"]);
        assert_eq!(substitute_args("${@:3}", &five), "c d e");
        assert_eq!(substitute_args("${@:2:2}", &five), "b c");
        assert_eq!(substitute_args("${@:0}", &five), "a b c d e");
        assert_eq!(substitute_args("${@:9}", &five), "");
        assert_eq!(substitute_args("$0 $10 $2", &five), "  b");
        assert_eq!(substitute_args("$ARGUMENTS.", &[]), ".");
        // Values are not substituted again by the positional step.
        assert_eq!(substitute_args("$1 $2", &args(&["$2", "x"])), "$2 x");
        // … but a value holding `$@` is, by the later `$@` step (pi's order).
        assert_eq!(substitute_args("$ARGUMENTS", &args(&["$@"])), "$@");
        assert_eq!(substitute_args("$1 $@", &args(&["$@"])), "$@ $@");
    }

    #[test]
    fn descriptions_from_front_matter_or_the_first_line() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            load_template_file(&path, SourceInfo::path(&path)).unwrap()
        };
        let t = write(
            "pr.md",
            "---\ndescription: Review PRs\nargument-hint: \"<PR-URL>\"\n---\nReview $1\n",
        );
        assert_eq!(
            (
                t.name.as_str(),
                t.description.as_str(),
                t.argument_hint.as_deref(),
                t.content.as_str()
            ),
            ("pr", "Review PRs", Some("<PR-URL>"), "Review $1")
        );
        let t = write("plain.md", "\n\n  First line here\nsecond");
        assert_eq!(t.description, "  First line here");
        let long = "x".repeat(70);
        let t = write("long.md", &long);
        assert_eq!(t.description, format!("{}...", "x".repeat(60)));
        assert!(load_template_file(&dir.path().join("missing.md"), SourceInfo::path(dir.path())).is_none());
    }

    proptest! {
        /// Text without `$` comes back unchanged, whatever the arguments.
        #[test]
        fn text_without_dollars_is_unchanged(text in "[^$]{0,40}", list in proptest::collection::vec("[a-z$@0-9]{0,5}", 0..4)) {
            prop_assert_eq!(substitute_args(&text, &list), text);
        }

        /// Splitting words without quotes is splitting on blanks.
        #[test]
        fn unquoted_arguments_split_on_blanks(words in proptest::collection::vec("[a-z0-9]{1,6}", 0..6)) {
            prop_assert_eq!(parse_command_args(&words.join(" \t ")), words);
        }
    }
}
