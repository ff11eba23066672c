//! The `grep` tool: searches file contents for a regex (or literal) and returns matching lines as
//! `path:LINE: text`, with `path-LINE- text` context lines, like pi's `rg`-based grep, without running `rg`.
//!
//! Directories are walked like `rg --hidden` (hidden files included, `.gitignore` respected also outside a
//! git repository, `.git` skipped); binary files are skipped; `glob` filters files like `rg --glob`. Results
//! are the first `limit` matching lines in path order (each followed by its own context block), paths
//! relative to the searched directory (the file name when a file was searched), cut to 50KB.
//!
//! ```no_run
//! # async fn demo() {
//! use pi_agent_core::{AgentTool, ToolContext};
//! use pi_tools::{GrepTool, ToolEnv};
//!
//! let tool = GrepTool::new(ToolEnv::new("/work/project"));
//! let args = serde_json::json!({"pattern": "fn main", "glob": "*.rs", "context": 1});
//! let result = tool.execute("call-1", args, ToolContext::detached()).await.unwrap();
//! // one text block such as "src/main.rs-1- use std::io;\nsrc/main.rs:2: fn main() {\nsrc/main.rs-3-     run();"
//! # }
//! ```

mod search;

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use pi_agent_core::{Lenient, OPERATION_ABORTED, ToolContext, ToolError, ToolParameters, ToolResult, TypedTool};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::env::ToolEnv;
use crate::find::walk::{self, NO_LINE_LIMIT};
use crate::truncate::{DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH, TruncationOptions, format_size, truncate_head};
use search::{FileMatches, Query};

/// The description pi gives the model.
const DESCRIPTION: &str = "Search file contents for a pattern. Returns matching lines with file paths and line \
numbers. Respects .gitignore. Output is truncated to 100 matches or 50KB (whichever is hit first). Long lines are \
truncated to 500 chars.";

/// Matches returned when the model gives no `limit`.
pub(crate) const DEFAULT_LIMIT: usize = 100;

/// pi's `grep` tool.
pub struct GrepTool {
    env: ToolEnv,
    parameters: ToolParameters,
}

impl GrepTool {
    /// The tool searching below `env.cwd` (or the `path` argument resolved against it).
    pub fn new(env: ToolEnv) -> Self {
        let parameters = ToolParameters::new(json!({
            "type": "object",
            "required": ["pattern"],
            "properties": {
                "pattern": {"type": "string", "description": "Search pattern (regex or literal string)"},
                "path": {
                    "type": "string",
                    "description": "Directory or file to search (default: current directory)"
                },
                "glob": {
                    "type": "string",
                    "description": "Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'"
                },
                "ignoreCase": {"type": "boolean", "description": "Case-insensitive search (default: false)"},
                "literal": {
                    "type": "boolean",
                    "description": "Treat pattern as literal string instead of regex (default: false)"
                },
                "context": {
                    "type": "number",
                    "description": "Number of lines to show before and after each match (default: 0)"
                },
                "limit": {"type": "number", "description": "Maximum number of matches to return (default: 100)"}
            }
        }));
        GrepTool { env, parameters }
    }
}

/// The arguments of a `grep` call. Like pi, every optional argument of the wrong type counts as
/// absent.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct GrepParams {
    /// Search pattern (regex or literal string).
    pub pattern: String,
    /// Directory or file to search (default: current directory).
    #[serde(default)]
    pub path: Lenient<String>,
    /// Filter files by glob pattern, e.g. `*.ts` or `**/*.spec.ts`.
    #[serde(default)]
    pub glob: Lenient<String>,
    /// Case-insensitive search (default: false).
    #[serde(default, rename = "ignoreCase")]
    pub ignore_case: Lenient<bool>,
    /// Treat pattern as literal string instead of regex (default: false).
    #[serde(default)]
    pub literal: Lenient<bool>,
    /// Number of lines to show before and after each match (default: 0).
    #[serde(default)]
    pub context: Lenient<f64>,
    /// Maximum number of matches to return (default: 100).
    #[serde(default)]
    pub limit: Lenient<f64>,
}

/// The lines of context asked for: `context > 0 ? context : 0`, rounded down.
fn context_lines(context: Option<f64>) -> usize {
    match context {
        Some(context) if context.is_finite() && context >= 1.0 => context.floor() as usize,
        _ => 0,
    }
}

/// [`context_lines`] on a raw `context` argument.
#[cfg(test)]
fn parse_context(value: Option<&Value>) -> usize {
    context_lines(value.and_then(Value::as_f64))
}

/// The output lines for the first `limit` matches: each match is a block of its context lines
/// (`path-N- text`) around the match line (`path:N: text`), as pi prints them (overlapping blocks repeat
/// lines). Also returns whether any printed line was cut to 500 chars.
fn format_blocks(root: &Path, is_dir: bool, files: &[(PathBuf, FileMatches)], query: &Query) -> (Vec<String>, bool) {
    let context = query.context as u64;
    let mut out = Vec::new();
    let mut truncated = false;
    let mut emitted = 0;
    'files: for (path, found) in files {
        let name = display_path(root, is_dir, path);
        for &number in &found.matches {
            if emitted == query.limit {
                break 'files;
            }
            emitted += 1;
            let first = number.saturating_sub(context).max(1);
            for (&current, line) in found.lines.range(first..=number.saturating_add(context)) {
                truncated |= line.truncated;
                let separator = if current == number { ':' } else { '-' };
                out.push(format!("{name}{separator}{current}{separator} {}", line.text));
            }
        }
    }
    (out, truncated)
}

/// A file's path as printed: relative to the searched directory with `/` separators, or its file name
/// when a single file was searched.
fn display_path(root: &Path, is_dir: bool, path: &Path) -> String {
    if is_dir {
        let relative = crate::path::display_relative(root, path);
        if !relative.is_empty() && !relative.starts_with("..") && path.starts_with(root) {
            return relative;
        }
    }
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The result text and details for the found matches.
fn format_result(
    root: &Path,
    is_dir: bool,
    files: &[(PathBuf, FileMatches)],
    total: usize,
    query: &Query,
) -> ToolResult {
    if files.is_empty() {
        return ToolResult::text("No matches found").with_details(Value::Null);
    }
    let (lines, lines_truncated) = format_blocks(root, is_dir, files, query);
    let truncation = truncate_head(
        &lines.join("\n"),
        TruncationOptions {
            max_lines: NO_LINE_LIMIT,
            max_bytes: DEFAULT_MAX_BYTES,
        },
    );
    let mut text = truncation.content.clone();
    let mut details = Map::new();
    let mut notices = Vec::new();
    let limit = query.limit;
    if total >= limit {
        notices.push(format!(
            "{limit} matches limit reached. Use limit={} for more, or refine pattern",
            limit.saturating_mul(2)
        ));
        details.insert("matchLimitReached".into(), json!(limit));
    }
    if truncation.truncated {
        notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
        details.insert(
            "truncation".into(),
            serde_json::to_value(&truncation).unwrap_or(Value::Null),
        );
    }
    if lines_truncated {
        notices.push(format!(
            "Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines"
        ));
        details.insert("linesTruncated".into(), Value::Bool(true));
    }
    if !notices.is_empty() {
        text.push_str(&format!("\n\n[{}]", notices.join(". ")));
    }
    let details = if details.is_empty() {
        Value::Null
    } else {
        Value::Object(details)
    };
    ToolResult::text(text).with_details(details)
}

#[async_trait]
impl TypedTool for GrepTool {
    type Params = GrepParams;

    fn name(&self) -> &str {
        "grep"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &ToolParameters {
        &self.parameters
    }

    /// Only `pattern` can fail to parse (the rest is lenient), so every parse error is about it.
    fn parse_arguments(&self, args: Value) -> Result<GrepParams, ToolError> {
        crate::args::parse_or(args, "Invalid arguments: pattern must be a string")
    }

    async fn execute(&self, _call_id: &str, args: GrepParams, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let query = Query {
            pattern: args.pattern,
            ignore_case: args.ignore_case.into_inner().unwrap_or(false),
            literal: args.literal.into_inner().unwrap_or(false),
            context: context_lines(args.context.into_inner()),
            limit: walk::limit_or(args.limit.into_inner(), DEFAULT_LIMIT),
        };
        let path = args.path.0.as_deref().filter(|p| !p.is_empty()).unwrap_or(".");
        let root = self.env.resolve(path);
        let is_dir = match tokio::fs::metadata(&root).await {
            Ok(meta) => meta.is_dir(),
            Err(_) => return Err(ToolError::new(format!("Path not found: {}", root.display()))),
        };
        let matcher = search::matcher(&query).map_err(ToolError::new)?;
        let glob = args.glob.0.as_deref().filter(|g| !g.is_empty());
        let filter = match glob {
            Some(glob) => {
                let cwd = crate::node::normalize_path(self.env.cwd());
                Some(search::glob_filter(&cwd, glob).map_err(ToolError::new)?)
            }
            None => None,
        };

        let cancel = ctx.cancel.clone();
        let job = tokio::task::spawn_blocking(move || {
            let (files, total) = search::search(&root, is_dir, &matcher, filter, &query, &cancel);
            format_result(&root, is_dir, &files, total, &query)
        });
        tokio::select! {
            joined = job => {
                if ctx.cancel.is_cancelled() {
                    return Err(ToolError::new(OPERATION_ABORTED));
                }
                joined.map_err(|error| ToolError::new(format!("Failed to run grep: {error}")))
            }
            () = ctx.cancel.cancelled() => Err(ToolError::new(OPERATION_ABORTED)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use search::Line;

    fn line(text: &str) -> Line {
        Line {
            text: text.to_owned(),
            truncated: false,
        }
    }

    fn query(context: usize, limit: usize) -> Query {
        Query {
            pattern: String::new(),
            ignore_case: false,
            literal: false,
            context,
            limit,
        }
    }

    #[test]
    fn context_is_a_whole_non_negative_number() {
        assert_eq!(parse_context(None), 0);
        assert_eq!(parse_context(Some(&json!(-2))), 0);
        assert_eq!(parse_context(Some(&json!(0.5))), 0);
        assert_eq!(parse_context(Some(&json!(2.9))), 2);
    }

    #[test]
    fn overlapping_blocks_repeat_lines_like_pi() {
        let found = FileMatches {
            matches: vec![2, 3],
            lines: [(1, line("a")), (2, line("m1")), (3, line("m2")), (4, line("b"))]
                .into_iter()
                .collect(),
        };
        let files = vec![(PathBuf::from("/r/f.txt"), found)];
        let (lines, cut) = format_blocks(Path::new("/r"), true, &files, &query(1, 10));
        assert_eq!(
            lines,
            [
                "f.txt-1- a",
                "f.txt:2: m1",
                "f.txt-3- m2",
                "f.txt-2- m1",
                "f.txt:3: m2",
                "f.txt-4- b"
            ]
        );
        assert!(!cut);
        let (lines, _) = format_blocks(Path::new("/r"), true, &files, &query(1, 1));
        assert_eq!(lines, ["f.txt-1- a", "f.txt:2: m1", "f.txt-3- m2"]);
    }

    #[test]
    fn paths_are_relative_or_the_file_name() {
        assert_eq!(display_path(Path::new("/r"), true, Path::new("/r/a/b.rs")), "a/b.rs");
        assert_eq!(
            display_path(Path::new("/r/a/b.rs"), false, Path::new("/r/a/b.rs")),
            "b.rs"
        );
        assert_eq!(display_path(Path::new("/r"), true, Path::new("/x/b.rs")), "b.rs");
    }
}
