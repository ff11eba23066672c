//! The `find` tool: lists files and directories whose name (or path) matches a glob, like
//! `fd --glob --hidden`, without running `fd`.
//!
//! A pattern without `/` is matched against each entry's name at any depth (`*.rs`); a pattern with `/`
//! is matched against the entry's absolute path, prefixed with `**/` unless it starts with `/` or `**/`
//! (`src/**/*.rs`). Matching is case-insensitive unless the pattern has an upper-case letter (fd's smart
//! case) and `*` never crosses `/`. Hidden entries are included, `.gitignore` is respected (also outside a
//! git repository), `.git` is never listed. Output: paths relative to the searched directory with `/`
//! separators, directories ending in `/`, sorted by path.
//!
//! ```no_run
//! # async fn demo() {
//! use pi_agent_core::{AgentTool, ToolContext};
//! use pi_tools::{FindTool, ToolEnv};
//!
//! let tool = FindTool::new(ToolEnv::new("/work/project"));
//! let args = serde_json::json!({"pattern": "*.rs", "path": "crates"});
//! let result = tool.execute("call-1", args, ToolContext::detached()).await.unwrap();
//! // one text block such as "tools/src/find/mod.rs\ntools/src/lib.rs"
//! # }
//! ```

pub(crate) mod walk;

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkState;
use pi_agent_core::{Lenient, OPERATION_ABORTED, ToolContext, ToolError, ToolParameters, ToolResult, TypedTool};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::env::ToolEnv;
use crate::truncate::{DEFAULT_MAX_BYTES, TruncationOptions, format_size, truncate_head};
use walk::NO_LINE_LIMIT;

use crate::collector::FirstByPath;

/// The description pi gives the model.
const DESCRIPTION: &str = "Search for files by glob pattern. Returns matching file paths relative to the search \
directory. Respects .gitignore. Output is truncated to 1000 results or 50KB (whichever is hit first).";

/// Results returned when the model gives no `limit`.
pub(crate) const DEFAULT_LIMIT: usize = 1000;

/// pi's `find` tool.
pub struct FindTool {
    env: ToolEnv,
    parameters: ToolParameters,
}

impl FindTool {
    /// The tool searching below `env.cwd` (or the `path` argument resolved against it).
    pub fn new(env: ToolEnv) -> Self {
        let parameters = ToolParameters::new(json!({
            "type": "object",
            "required": ["pattern"],
            "properties": {
                "pattern": {
                    "type": "string",
                    "description": "Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'"
                },
                "path": {"type": "string", "description": "Directory to search in (default: current directory)"},
                "limit": {"type": "number", "description": "Maximum number of results (default: 1000)"}
            }
        }));
        FindTool { env, parameters }
    }
}

/// The arguments of a `find` call. Like pi, an optional argument of the wrong type counts as
/// absent.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct FindParams {
    /// Glob pattern to match files, e.g. `*.ts`, `**/*.json`, or `src/**/*.spec.ts`.
    pub pattern: String,
    /// Directory to search in (default: current directory).
    #[serde(default)]
    pub path: Lenient<String>,
    /// Maximum number of results (default: 1000).
    #[serde(default)]
    pub limit: Lenient<f64>,
}

/// How a compiled pattern is applied to an entry.
enum NameMatcher {
    /// The empty pattern: everything matches (fd's empty pattern).
    All,
    /// Against the entry's file name.
    Name(GlobMatcher),
    /// Against the entry's absolute path (fd's `--full-path`).
    FullPath(GlobMatcher),
}

impl NameMatcher {
    /// Compiles `pattern` with fd's `--glob` rules.
    fn new(pattern: &str) -> Result<Self, ToolError> {
        if pattern.is_empty() {
            return Ok(NameMatcher::All);
        }
        let full_path = pattern.contains('/');
        let effective = if full_path && !pattern.starts_with('/') && !pattern.starts_with("**/") && pattern != "**" {
            format!("**/{pattern}")
        } else {
            pattern.to_owned()
        };
        let smart_case_insensitive = !pattern.chars().any(char::is_uppercase);
        let glob = GlobBuilder::new(&effective)
            .literal_separator(true)
            .case_insensitive(smart_case_insensitive)
            .build()
            .map_err(|error| ToolError::new(format!("error parsing glob '{pattern}': {}", error.kind())))?;
        let matcher = glob.compile_matcher();
        Ok(if full_path {
            NameMatcher::FullPath(matcher)
        } else {
            NameMatcher::Name(matcher)
        })
    }

    fn is_match(&self, path: &Path) -> bool {
        match self {
            NameMatcher::All => true,
            NameMatcher::Name(glob) => path.file_name().is_some_and(|name| glob.is_match(Path::new(name))),
            NameMatcher::FullPath(glob) => glob.is_match(path),
        }
    }
}

/// Entries the sorted walk visits before the rest of the tree is handed to the parallel walk.
const SORTED_ENTRIES: usize = 8192;

/// Walks `root` and returns the first `limit` matching entries in path order (`true` for directories)
/// and how many matches were seen (at least `limit` when more exist).
///
/// The walk starts single-threaded in sorted order, which ends as soon as `limit` entries matched (the
/// common `*.ts` case). After [`SORTED_ENTRIES`] entries the parallel walk takes over for every path after
/// the last one visited, skipping whole directories that sort after the kept results.
fn search(
    root: &Path,
    matcher: &NameMatcher,
    limit: usize,
    cancel: &CancellationToken,
) -> (Vec<(PathBuf, bool)>, usize) {
    search_with(root, matcher, limit, cancel, SORTED_ENTRIES)
}

/// [`search`] with the length of the sorted phase given.
fn search_with(
    root: &Path,
    matcher: &NameMatcher,
    limit: usize,
    cancel: &CancellationToken,
    sorted_entries: usize,
) -> (Vec<(PathBuf, bool)>, usize) {
    let collector = FirstByPath::new(limit);
    let mut sorted = walk::walker(root, ".fdignore");
    sorted.sort_by_file_name(|a, b| a.cmp(b));
    let mut last: Option<PathBuf> = None;
    let mut handed_over = false;
    for (seen, entry) in sorted.build().enumerate() {
        if cancel.is_cancelled() {
            return collector.finish();
        }
        if seen == sorted_entries {
            handed_over = true;
            break;
        }
        let Ok(entry) = entry else { continue };
        let path = entry.path();
        if entry.depth() == 0 {
            continue;
        }
        if collector.is_beyond(path) {
            return collector.finish();
        }
        if matcher.is_match(path) {
            collector.add(path.to_path_buf(), 1, walk::is_dir(&entry));
        }
        last = Some(entry.into_path());
    }
    if !handed_over || cancel.is_cancelled() {
        return collector.finish();
    }
    let walk = walk::walker(root, ".fdignore").build_parallel();
    walk::run(walk, cancel, || {
        let collector = &collector;
        let last = last.as_deref();
        move |entry: &ignore::DirEntry| {
            if entry.depth() == 0 {
                return WalkState::Continue;
            }
            let path = entry.path();
            let is_dir = walk::is_dir(entry);
            if let Some(state) = walk::already_visited(path, is_dir, last) {
                return state;
            }
            if collector.is_beyond(path) {
                return if is_dir { WalkState::Skip } else { WalkState::Continue };
            }
            if matcher.is_match(path) {
                collector.add(path.to_path_buf(), 1, is_dir);
            }
            WalkState::Continue
        }
    });
    collector.finish()
}

/// The result text and details for the found entries.
fn format_result(root: &Path, found: &[(PathBuf, bool)], total: usize, limit: usize) -> ToolResult {
    if found.is_empty() {
        return ToolResult::text("No files found matching pattern").with_details(Value::Null);
    }
    let lines: Vec<String> = found
        .iter()
        .map(|(path, is_dir)| {
            let mut relative = crate::path::display_relative(root, path);
            if *is_dir {
                relative.push('/');
            }
            relative
        })
        .collect();
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
    if total >= limit {
        notices.push(format!(
            "{limit} results limit reached. Use limit={} for more, or refine pattern",
            limit.saturating_mul(2)
        ));
        details.insert("resultLimitReached".into(), json!(limit));
    }
    if truncation.truncated {
        notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
        details.insert(
            "truncation".into(),
            serde_json::to_value(&truncation).unwrap_or(Value::Null),
        );
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
impl TypedTool for FindTool {
    type Params = FindParams;

    fn name(&self) -> &str {
        "find"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &ToolParameters {
        &self.parameters
    }

    /// Only `pattern` can fail to parse (the rest is lenient), so every parse error is about it.
    fn parse_arguments(&self, args: Value) -> Result<FindParams, ToolError> {
        crate::args::parse_or(args, "Invalid arguments: pattern must be a string")
    }

    async fn execute(&self, _call_id: &str, args: FindParams, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let pattern = args.pattern;
        let path = args.path.0.as_deref().filter(|p| !p.is_empty()).unwrap_or(".");
        let limit = walk::limit_or(args.limit.into_inner(), DEFAULT_LIMIT);
        let root = self.env.resolve(path);
        match tokio::fs::metadata(&root).await {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Err(ToolError::new(format!("Not a directory: {}", root.display()))),
            Err(_) => return Err(ToolError::new(format!("Path not found: {}", root.display()))),
        }
        let matcher = NameMatcher::new(&pattern)?;

        let cancel = ctx.cancel.clone();
        let job = tokio::task::spawn_blocking(move || {
            let (found, total) = search(&root, &matcher, limit, &cancel);
            format_result(&root, &found, total, limit)
        });
        tokio::select! {
            joined = job => {
                if ctx.cancel.is_cancelled() {
                    return Err(ToolError::new(OPERATION_ABORTED));
                }
                joined.map_err(|error| ToolError::new(format!("Failed to run find: {error}")))
            }
            () = ctx.cancel.cancelled() => Err(ToolError::new(OPERATION_ABORTED)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, path: &str) -> bool {
        NameMatcher::new(pattern)
            .map(|m| m.is_match(Path::new(path)))
            .unwrap_or(false)
    }

    #[test]
    fn names_match_at_any_depth() {
        assert!(matches("*.rs", "/w/src/deep/lib.rs"));
        assert!(!matches("*.rs", "/w/src/lib.rs.bak"));
        assert!(matches("lib.rs", "/w/src/lib.rs"));
        assert!(matches("**", "/w/a/b"));
        assert!(matches("", "/w/a/b"));
    }

    #[test]
    fn paths_with_a_slash_match_the_full_path() {
        assert!(matches("src/*.rs", "/w/src/lib.rs"));
        assert!(!matches("src/*.rs", "/w/src/deep/lib.rs"));
        assert!(matches("src/**/*.rs", "/w/src/deep/lib.rs"));
        assert!(matches("**/*.json", "/w/a/b.json"));
        assert!(matches("/w/*/b.json", "/w/a/b.json"));
        assert!(!matches("/a/*.json", "/w/a/b.json"));
    }

    #[test]
    fn smart_case() {
        assert!(matches("*.md", "/w/README.MD"));
        assert!(!matches("*.MD", "/w/readme.md"));
        assert!(matches("README*", "/w/README.md"));
    }

    #[test]
    fn handing_over_to_the_parallel_walk_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in 0..6 {
            for f in 0..6 {
                let path = root.join(format!(
                    "d{d}/sub{}/f{f}.{}",
                    f % 2,
                    if f % 3 == 0 { "rs" } else { "txt" }
                ));
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, "").unwrap();
            }
        }
        let cancel = CancellationToken::new();
        for pattern in ["*.rs", "*", "sub1", "f5.txt"] {
            let matcher = NameMatcher::new(pattern).unwrap();
            for limit in [1, 5, 13, 1000] {
                let expected = search_with(root, &matcher, limit, &cancel, usize::MAX);
                for sorted_entries in [0, 1, 2, 3, 7, 20, 33, 60] {
                    let got = search_with(root, &matcher, limit, &cancel, sorted_entries);
                    assert_eq!(
                        got, expected,
                        "{pattern} limit {limit} after {sorted_entries} sorted entries"
                    );
                }
            }
        }
    }

    #[test]
    fn bad_globs_are_reported_with_the_pattern() {
        let error = NameMatcher::new("src/[a").err().map(|e| e.message().to_owned());
        assert_eq!(
            error.as_deref(),
            Some("error parsing glob 'src/[a': unclosed character class; missing ']'")
        );
    }
}
