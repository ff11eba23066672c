//! The `ast_grep` tool: structural search, 50 matches per page.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use pi_agent_core::{Lenient, OPERATION_ABORTED, ToolContext, ToolError, ToolParameters, ToolResult, TypedTool};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::engine::{self, Match};
use super::files::{self, Scope};
use super::preview::{self, FileBlock};
use super::{AstTool, lang, run_blocking};

/// Matches shown per call; `skip` pages on.
pub const PAGE_SIZE: usize = 50;

/// Bytes of match lines in one page at most; a fuller page ends early and says where to continue.
const MAX_PAGE_BYTES: usize = pi_tools::DEFAULT_MAX_BYTES;

const DESCRIPTION: &str = "\
Search code structurally with an ast-grep pattern: lists every syntax node matching `pat` in the files of `paths`.
- Patterns match syntax trees, not text: formatting and whitespace do not matter.
- Metavariables: `$NAME` captures one node, `$_` matches one node without capturing, `$$$NAME` captures zero or \
more nodes (lazily), `$$$` matches zero or more nodes without capturing. `$$NAME` is not valid. Names are \
UPPERCASE.
- A metavariable must stand for a whole node: `prefix$VAR` and `\"hello $NAME\"` do not work. A metavariable used \
twice in one pattern must match identical code.
- A pattern must parse as a single node; wrap a fragment in enough context to parse (e.g. `class $_ { … }`).
- The language is inferred from the file extensions in `paths` and must be one for all files: when a directory \
mixes languages (e.g. `README.md` next to code), set `lang` (e.g. `ts`, `tsx`, `rust`, `python`) and only files of \
that language are searched.
- Output: per file, `*<line>|<text>` for the first line of a match, ` <line>|<text>` for the lines after it, then \
`meta:` with the captured metavariables. Up to 50 matches per call; set `skip` for the next page.
- Parse issues mean the query may be mis-scoped: narrow `paths` before concluding a pattern is absent.
- For plain text or regex search, prefer the `grep` tool.";

/// The `ast_grep` tool: lists the matches of one ast-grep pattern in files, directories or globs,
/// grouped by file, with the captured metavariables of each match; 50 matches per call, `skip`
/// pages on.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use pi_agent_core::{AgentTool, ContentBlock, ToolContext};
/// use pi_coding_agent::ast::AstGrepTool;
///
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("a.py"), "print(compute(1, 2))\n").unwrap();
/// let tool = AstGrepTool::new(dir.path().to_path_buf());
/// let args = serde_json::json!({"pat": "compute($A, $B)", "paths": ["a.py"]});
/// let result = tool.execute("call-1", args, ToolContext::detached()).await.unwrap();
/// let ContentBlock::Text(text) = &result.content[0] else { unreachable!() };
/// assert_eq!(text.text, "# a.py (1 match)\n*1|print(compute(1, 2))\n  meta: A=1, B=2");
/// # });
/// ```
pub struct AstGrepTool {
    cwd: PathBuf,
    parameters: ToolParameters,
}

impl std::fmt::Debug for AstGrepTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AstGrepTool").field("cwd", &self.cwd).finish()
    }
}

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "pat": {"type": "string", "description": "ast pattern"},
            "paths": {
                "type": "array",
                "description": "files, directories, or globs to search",
                "minItems": 1,
                "items": {"type": "string", "description": "file, directory, or glob to search"}
            },
            "lang": {
                "type": "string",
                "description": "language override (e.g. ts, tsx, rust, python); inferred from file extensions when omitted"
            },
            "skip": {"type": "number", "description": "matches to skip"}
        },
        "required": ["pat", "paths"]
    })
}

impl AstGrepTool {
    /// The tool searching relative to `cwd`.
    pub fn new(cwd: PathBuf) -> Self {
        AstGrepTool {
            cwd,
            parameters: ToolParameters::new(schema()),
        }
    }
}

/// The checked arguments of an `ast_grep` call. They deserialize from any JSON value: fields of
/// the wrong type count as absent, and the checks' errors (a blank pattern, a `skip` that is no
/// non-negative number) are the deserialization errors.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Value")]
pub struct AstGrepParams {
    /// The ast-grep pattern (not blank).
    pub pat: String,
    /// Files, directories or globs to search (strings only; others were dropped).
    pub paths: Vec<String>,
    /// Language override; `None` when absent or blank.
    pub lang: Option<String>,
    /// Matches to skip (whole, non-negative).
    pub skip: usize,
}

/// The arguments as sent, every field lenient so that the checks below report what is wrong.
#[derive(Default, Deserialize)]
struct RawGrepArgs {
    #[serde(default)]
    pat: Lenient<String>,
    #[serde(default)]
    paths: Lenient<Vec<Lenient<String>>>,
    #[serde(default)]
    lang: Lenient<String>,
    /// `None` when absent or `null`; `Some(Lenient(None))` when it is no number.
    #[serde(default)]
    skip: Option<Lenient<f64>>,
}

impl TryFrom<Value> for AstGrepParams {
    type Error = ToolError;

    fn try_from(args: Value) -> Result<Self, ToolError> {
        parse_args(&args)
    }
}

fn parse_args(args: &Value) -> Result<AstGrepParams, ToolError> {
    let raw: RawGrepArgs = super::lenient_args(args);
    let pat = raw
        .pat
        .into_inner()
        .filter(|pat| !pat.trim().is_empty())
        .ok_or_else(|| ToolError::new("`pat` must be a non-empty pattern"))?;
    let skip = match raw.skip {
        None => 0,
        Some(Lenient(Some(skip))) if skip.is_finite() && skip >= 0.0 => skip.floor() as usize,
        Some(_) => return Err(ToolError::new("skip must be a non-negative number")),
    };
    Ok(AstGrepParams {
        pat,
        paths: super::string_list(raw.paths),
        lang: super::optional_string(raw.lang),
        skip,
    })
}

fn matches_word(count: usize) -> String {
    if count == 1 {
        "1 match".to_owned()
    } else {
        format!("{count} matches")
    }
}

/// One file of a page: its path and the output lines of each match shown.
type PageFile<'a> = (&'a Path, Vec<Vec<String>>);

/// The page of matches: per file, the matches from `skip` on, at most [`PAGE_SIZE`] and
/// [`MAX_PAGE_BYTES`] of lines; also returns how many were shown.
fn page(files: &[(PathBuf, Vec<Match>)], skip: usize) -> (Vec<PageFile<'_>>, usize) {
    let mut out: Vec<PageFile<'_>> = Vec::new();
    let mut seen = 0;
    let mut shown = 0;
    let mut budget = MAX_PAGE_BYTES;
    'files: for (path, matches) in files {
        for found in matches {
            seen += 1;
            if seen <= skip {
                continue;
            }
            if shown == PAGE_SIZE {
                break 'files;
            }
            let lines = preview::match_lines(found);
            let size: usize = lines.iter().map(|l| l.len() + 1).sum();
            if size > budget && shown > 0 {
                break 'files;
            }
            budget = budget.saturating_sub(size);
            shown += 1;
            match out.last_mut() {
                Some((last, group)) if *last == path.as_path() => group.push(lines),
                _ => out.push((path, vec![lines])),
            }
        }
    }
    (out, shown)
}

fn search(cwd: &Path, args: &AstGrepParams, cancel: &CancellationToken) -> Result<ToolResult, ToolError> {
    let lang_override = args.lang.as_deref().map(lang::parse).transpose()?;
    let scope: Scope = files::collect(cwd, &args.paths, lang_override, AstTool::Grep, cancel)?;
    let mut issues = Vec::new();
    let run = match engine::compile_pattern(&args.pat, scope.lang) {
        Ok(pattern) => Some(
            engine::run_search(
                cwd,
                &scope.candidates,
                scope.lang,
                &pattern,
                args.skip.saturating_add(PAGE_SIZE + 1),
                cancel,
            )
            .map_err(|_| ToolError::new(OPERATION_ABORTED))?,
        ),
        Err(error) => {
            issues.push(format!("{}: Invalid pattern: {error}", args.pat));
            None
        }
    };
    let (found, searched) = match &run {
        Some(run) => {
            issues.extend(run.issues.iter().cloned());
            (run.files.as_slice(), run.files_searched)
        }
        None => (&[][..], 0),
    };
    let (shown_issues, issues_total) = preview::cap_issues(issues);
    let issue_lines = preview::issues_block(&shown_issues, issues_total);
    let total: usize = found.iter().map(|(_, m)| m.len()).sum();
    let (groups, shown) = page(found, args.skip);
    let next = args.skip + shown;
    let limit_reached = total > next || scope.capped;

    let mut details = Map::new();
    details.insert("matchCount".into(), json!(shown));
    details.insert("fileCount".into(), json!(groups.len()));
    details.insert("filesSearched".into(), json!(searched));
    details.insert("limitReached".into(), json!(limit_reached));
    if !shown_issues.is_empty() {
        details.insert("parseErrors".into(), json!(shown_issues));
        details.insert("parseErrorsTotal".into(), json!(issues_total));
    }
    details.insert("scopePath".into(), json!(files::display(cwd, &scope.base)));
    details.insert("skip".into(), json!(args.skip));
    let per_file: Vec<Value> = groups
        .iter()
        .map(|(path, group)| json!({"path": files::display(cwd, path), "count": group.len()}))
        .collect();
    details.insert("fileMatches".into(), Value::Array(per_file));

    let text = if total == 0 {
        if issue_lines.is_empty() {
            "No matches found".to_owned()
        } else {
            format!(
                "No matches found. Parse issues mean the query may be mis-scoped; narrow `paths` before concluding absence.\n{}",
                issue_lines.join("\n")
            )
        }
    } else if shown == 0 {
        format!(
            "No matches at skip {}: the search found {}.",
            args.skip,
            matches_word(total)
        )
    } else {
        let blocks: Vec<FileBlock> = groups
            .into_iter()
            .map(|(path, group)| FileBlock {
                path: if scope.single_file {
                    files::display(cwd, path)
                } else {
                    files::relative_to_base(&scope, path)
                },
                suffix: format!(" ({})", matches_word(group.len())),
                lines: group.into_iter().flatten().collect(),
            })
            .collect();
        let mut lines = preview::grouped(&blocks, scope.single_file);
        if limit_reached {
            lines.push(String::new());
            lines.push(format!(
                "Result limit reached; narrow paths or set skip to {next} for the next page."
            ));
        }
        if !issue_lines.is_empty() {
            lines.push(String::new());
            lines.extend(issue_lines);
        }
        lines.join("\n")
    };
    Ok(ToolResult::text(text).with_details(Value::Object(details)))
}

#[async_trait]
impl TypedTool for AstGrepTool {
    type Params = AstGrepParams;

    fn name(&self) -> &str {
        "ast_grep"
    }

    fn label(&self) -> &str {
        "AST Grep"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &ToolParameters {
        &self.parameters
    }

    async fn execute(&self, _call_id: &str, args: AstGrepParams, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let cwd = self.cwd.clone();
        let cancel = ctx.cancel.clone();
        run_blocking(AstTool::Grep, &ctx.cancel, move || search(&cwd, &args, &cancel)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_errors() {
        let error = |args: Value| parse_args(&args).err().map(|e| e.message().to_owned());
        assert_eq!(
            error(json!({"pat": "  ", "paths": ["."]})).as_deref(),
            Some("`pat` must be a non-empty pattern")
        );
        assert_eq!(
            error(json!({"pat": "a", "paths": ["."], "skip": -1})).as_deref(),
            Some("skip must be a non-negative number")
        );
        assert_eq!(
            error(json!({"pat": "a", "paths": ["."], "skip": "x"})).as_deref(),
            Some("skip must be a non-negative number")
        );
        assert_eq!(
            parse_args(&json!({"pat": "a", "paths": [], "skip": 2.9}))
                .map(|a| a.skip)
                .ok(),
            Some(2)
        );
    }

    #[test]
    fn pages_stop_at_the_page_size() {
        let one = |line: usize| Match {
            line,
            lines: vec![format!("call({line})")],
            more_lines: 0,
            captures: Vec::new(),
        };
        let files = vec![
            (PathBuf::from("/a"), (1..=30).map(one).collect::<Vec<_>>()),
            (PathBuf::from("/b"), (1..=30).map(one).collect::<Vec<_>>()),
        ];
        let (groups, shown) = page(&files, 0);
        assert_eq!(shown, PAGE_SIZE);
        assert_eq!(groups[1].1.len(), 20);
        let (groups, shown) = page(&files, 50);
        assert_eq!((shown, groups.len()), (10, 1));
        assert_eq!(groups[0].1[0], ["*21|call(21)"]);
    }
}
