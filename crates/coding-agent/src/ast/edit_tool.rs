//! The `ast_edit` tool: structural rewrites previewed first, applied through `resolve`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use pi_agent_core::{Lenient, OPERATION_ABORTED, ToolContext, ToolError, ToolParameters, ToolResult};
use pi_tools::atomic::{BatchHooks, NoHooks};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::apply::{self, EditPlan, PlannedFile};
use super::engine::{self, Change, EditRun, FileEdits, Rule};
use super::files::{self, Scope};
use super::preview::{self, FileBlock, plural};
use super::{AstTool, lang, run_blocking};
use crate::resolve::{PendingAction, PendingActionStore};

/// Touched files one preview may hold when `PI_MAX_AST_FILES` is not set.
pub const DEFAULT_MAX_FILES: usize = 1000;

/// Entries of `details.changes` at most.
pub const MAX_DETAIL_CHANGES: usize = 200;

/// Bytes of change lines in the preview text at most; further changes are counted, not shown.
pub const MAX_PREVIEW_BYTES: usize = pi_tools::DEFAULT_MAX_BYTES;

const DESCRIPTION: &str = "\
Rewrite code structurally with ast-grep patterns: every node matching `pat` is replaced by `out`, in all files \
of `paths`.
- Patterns match syntax trees, not text: formatting and whitespace do not matter.
- Metavariables: `$NAME` captures one node, `$_` matches one node without capturing, `$$$NAME` captures zero or \
more nodes (lazily), `$$$` matches zero or more nodes without capturing. `$$NAME` is not valid. Names are \
UPPERCASE.
- A metavariable must stand for a whole node: `prefix$VAR` and `\"hello $NAME\"` do not work. A metavariable used \
twice in one pattern must match identical code.
- A pattern must parse as a single node; wrap a fragment in enough context to parse (e.g. `class $_ { … }`).
- `out` is a template using the pattern's metavariables; an empty `out` deletes the match. Each match is replaced \
1:1; a match nested inside another match of the same pattern is not rewritten separately.
- The language is inferred from the file extensions in `paths` and must be one for all files: when a directory \
mixes languages (e.g. `README.md` next to code), set `lang` (e.g. `ts`, `tsx`, `rust`, `python`) and only files of \
that language are searched.
- The result is a preview: nothing is written until you call `resolve` with action `apply`; `discard` drops it.
- Parse issues mean the rewrite is malformed or mis-scoped: fix the pattern or narrow `paths` before assuming a \
clean no-op.
- For one-off local text edits, prefer the `edit` tool.";

/// The `ast_edit` tool: rewrites every match of one or more ast-grep patterns in files, directories
/// or globs. A call only computes a preview (`-line:col before` / `+line:col after` per replacement,
/// grouped by file) and pushes a [`PendingAction`] onto the session's [`PendingActionStore`]; the
/// files change when that action is applied (the `resolve` tool), all or none, and only if none of
/// them changed since the preview.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use pi_agent_core::{AgentTool, ToolContext};
/// use pi_coding_agent::ast::AstEditTool;
/// use pi_coding_agent::resolve::PendingActionStore;
///
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("a.ts"), "legacyWrap(x, value);\n").unwrap();
/// let store = PendingActionStore::new();
/// let tool = AstEditTool::new(dir.path().to_path_buf(), store.clone());
/// let args = serde_json::json!({
///     "ops": [{"pat": "legacyWrap($A, $B)", "out": "modernWrap($A, $B)"}],
///     "paths": ["a.ts"],
/// });
/// let preview = tool.execute("call-1", args, ToolContext::detached()).await.unwrap();
/// assert_eq!(store.peek().unwrap().label, "AST Edit: 1 replacement in 1 file");
/// // Nothing is written until the pending action is applied.
/// let apply = store.pop().unwrap().apply;
/// apply("Looks right.".into(), None).await.unwrap();
/// let written = std::fs::read_to_string(dir.path().join("a.ts")).unwrap();
/// assert_eq!(written, "modernWrap(x, value);\n");
/// # });
/// ```
pub struct AstEditTool {
    cwd: PathBuf,
    store: PendingActionStore,
    max_files: Option<usize>,
    hooks: Arc<dyn BatchHooks + Send + Sync>,
    parameters: ToolParameters,
}

impl std::fmt::Debug for AstEditTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AstEditTool")
            .field("cwd", &self.cwd)
            .field("max_files", &self.max_files)
            .finish()
    }
}

/// The parameter schema of `ast_edit`.
fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "ops": {
                "type": "array",
                "description": "rewrite ops",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "properties": {
                        "pat": {"type": "string", "description": "ast pattern"},
                        "out": {"type": "string", "description": "replacement template"}
                    },
                    "required": ["pat", "out"]
                }
            },
            "paths": {
                "type": "array",
                "description": "files, directories, or globs to rewrite",
                "minItems": 1,
                "items": {"type": "string", "description": "file, directory, or glob to rewrite"}
            },
            "lang": {
                "type": "string",
                "description": "language override (e.g. ts, tsx, rust, python); inferred from file extensions when omitted"
            }
        },
        "required": ["ops", "paths"]
    })
}

/// `PI_MAX_AST_FILES` as a limit: a positive integer, else [`DEFAULT_MAX_FILES`].
pub(crate) fn max_files_from(value: Option<&str>) -> usize {
    value
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(DEFAULT_MAX_FILES)
}

impl AstEditTool {
    /// The tool working in `cwd`, pushing its previews onto `store`.
    pub fn new(cwd: PathBuf, store: PendingActionStore) -> Self {
        AstEditTool {
            cwd,
            store,
            max_files: None,
            hooks: Arc::new(NoHooks),
            parameters: ToolParameters::new(schema()),
        }
    }

    /// Caps the files one preview may touch (default: `PI_MAX_AST_FILES`, else
    /// [`DEFAULT_MAX_FILES`]); files beyond the cap are left out and the preview says
    /// `Limit reached; narrow paths.` A cap of 0 counts as 1.
    #[must_use]
    pub fn with_max_files(mut self, max_files: usize) -> Self {
        self.max_files = Some(max_files.max(1));
        self
    }

    /// Hooks called by the apply's batch write before each temporary-file write and each rename
    /// (see [`BatchHooks`]); a hook that fails makes the apply fail with every file restored. Tests
    /// use it to inject write failures; the default never fails.
    #[must_use]
    pub fn with_batch_hooks(mut self, hooks: Arc<dyn BatchHooks + Send + Sync>) -> Self {
        self.hooks = hooks;
        self
    }
}

/// The checked arguments of an `ast_edit` call. They deserialize from any JSON value: fields of
/// the wrong type count as absent, and the checks' errors (no ops, a blank or repeated pattern,
/// an `out` that is no string) are the deserialization errors.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Value")]
pub struct AstEditParams {
    /// The rewrite ops as `(pattern, template)`: at least one, patterns non-blank and distinct.
    pub ops: Vec<(String, String)>,
    /// Files, directories or globs to rewrite (strings only; others were dropped).
    pub paths: Vec<String>,
    /// Language override; `None` when absent or blank.
    pub lang: Option<String>,
}

/// The arguments as sent, every field lenient so that the checks below report what is wrong.
#[derive(Default, Deserialize)]
struct RawEditArgs {
    /// Each op is read on its own ([`RawOp`]), so that its index can be reported.
    #[serde(default)]
    ops: Lenient<Vec<Value>>,
    #[serde(default)]
    paths: Lenient<Vec<Lenient<String>>>,
    #[serde(default)]
    lang: Lenient<String>,
}

/// One op as sent (an op that is no object reads as one without `pat` and `out`).
#[derive(Default, Deserialize)]
struct RawOp {
    #[serde(default)]
    pat: Lenient<String>,
    #[serde(default)]
    out: Lenient<String>,
}

impl TryFrom<Value> for AstEditParams {
    type Error = ToolError;

    fn try_from(args: Value) -> Result<Self, ToolError> {
        parse_args(&args)
    }
}

fn parse_args(args: &Value) -> Result<AstEditParams, ToolError> {
    let raw: RawEditArgs = super::lenient_args(args);
    let ops = raw
        .ops
        .into_inner()
        .filter(|ops| !ops.is_empty())
        .ok_or_else(|| ToolError::new("`ops` must include at least one op entry"))?;
    let mut parsed = Vec::with_capacity(ops.len());
    let mut seen = HashSet::new();
    for (index, op) in ops.into_iter().enumerate() {
        let op: RawOp = super::lenient_args(&op);
        let pat = op
            .pat
            .into_inner()
            .filter(|pat| !pat.trim().is_empty())
            .ok_or_else(|| ToolError::new(format!("`ops[{index}].pat` must be a non-empty pattern")))?;
        let out = op
            .out
            .into_inner()
            .ok_or_else(|| ToolError::new(format!("`ops[{index}].out` must be a string")))?;
        if !seen.insert(pat.clone()) {
            return Err(ToolError::new(format!("Duplicate rewrite pattern: {pat}")));
        }
        parsed.push((pat, out));
    }
    Ok(AstEditParams {
        ops: parsed,
        paths: super::string_list(raw.paths),
        lang: super::optional_string(raw.lang),
    })
}

/// A finished preview.
struct Preview {
    text: String,
    details: Value,
    plan: Option<EditPlan>,
}

/// Sorted changes must not overlap; the error names the file, both places and their patterns.
fn check_overlaps(cwd: &Path, file: &FileEdits, rules: &[Rule]) -> Result<(), ToolError> {
    let pattern = |change: &Change| rules.get(change.rule).map_or("?", |r| r.source.as_str());
    for pair in file.changes.windows(2) {
        let (first, second) = (&pair[0], &pair[1]);
        if second.start < first.end || second.start == first.start {
            return Err(ToolError::new(format!(
                "Overlapping replacements detected; refine pattern to avoid ambiguous edits ({}: {}:{} `{}` and {}:{} `{}`)",
                files::display(cwd, &file.path),
                first.line,
                first.column,
                pattern(first),
                second.line,
                second.column,
                pattern(second)
            )));
        }
    }
    Ok(())
}

/// The file's content with every change applied (changes sorted and disjoint).
fn rewrite(file: &FileEdits) -> Vec<u8> {
    let mut out = Vec::with_capacity(file.source.len());
    let mut at = 0;
    for change in &file.changes {
        out.extend_from_slice(&file.source.as_bytes()[at..change.start]);
        out.extend_from_slice(change.after.as_bytes());
        at = change.end;
    }
    out.extend_from_slice(&file.source.as_bytes()[at..]);
    out
}

/// The preview's file blocks, cut to [`MAX_PREVIEW_BYTES`] of change lines; also returns the
/// replacements and files left out.
fn blocks(cwd: &Path, scope: &Scope, run: &EditRun) -> (Vec<FileBlock>, usize, usize) {
    let mut out = Vec::new();
    let mut budget = MAX_PREVIEW_BYTES;
    let (mut hidden_changes, mut hidden_files) = (0, 0);
    for file in &run.files {
        if budget == 0 {
            hidden_changes += file.changes.len();
            hidden_files += 1;
            continue;
        }
        let mut lines = Vec::new();
        for (index, change) in file.changes.iter().enumerate() {
            let pair = preview::change_lines(change);
            let size = pair[0].len() + pair[1].len() + 2;
            if size > budget {
                budget = 0;
                hidden_changes += file.changes.len() - index;
                break;
            }
            budget -= size;
            lines.extend(pair);
        }
        let path = if scope.single_file {
            files::display(cwd, &file.path)
        } else {
            files::relative_to_base(scope, &file.path)
        };
        out.push(FileBlock {
            path,
            suffix: format!(" ({})", plural(file.changes.len(), "replacement")),
            lines,
        });
    }
    (out, hidden_changes, hidden_files)
}

fn change_details(cwd: &Path, files: &[FileEdits]) -> Vec<Value> {
    let limit = |text: &str| engine::cut(text, 1000);
    files
        .iter()
        .flat_map(|file| file.changes.iter().map(move |change| (file, change)))
        .take(MAX_DETAIL_CHANGES)
        .map(|(file, change): (&FileEdits, &Change)| {
            json!({
                "path": files::display(cwd, &file.path),
                "line": change.line,
                "column": change.column,
                "before": limit(&change.before),
                "after": limit(&change.after),
            })
        })
        .collect()
}

/// Runs the whole preview: paths, language, rules, matching, overlap check, text and details.
fn build_preview(
    cwd: &Path,
    args: &AstEditParams,
    max_files: usize,
    cancel: &CancellationToken,
) -> Result<Preview, ToolError> {
    let lang_override = args.lang.as_deref().map(lang::parse).transpose()?;
    let scope = files::collect(cwd, &args.paths, lang_override, AstTool::Edit, cancel)?;
    let (rules, mut issues) = engine::compile_rules(&args.ops, scope.lang);
    let mut run = if rules.is_empty() {
        EditRun {
            files: Vec::new(),
            files_searched: 0,
            files_parsed: 0,
            limit_reached: false,
            issues: Vec::new(),
        }
    } else {
        engine::run_edit(cwd, &scope.candidates, scope.lang, &rules, max_files, cancel)
            .map_err(|_| ToolError::new(OPERATION_ABORTED))?
    };
    // The same file reached twice (a symlink named next to its target) is rewritten once.
    let mut seen = HashSet::new();
    run.files
        .retain(|file| seen.insert(std::fs::canonicalize(&file.path).unwrap_or_else(|_| file.path.clone())));
    for file in &run.files {
        check_overlaps(cwd, file, &rules)?;
    }
    issues.extend(run.issues.iter().cloned());
    let (shown_issues, issues_total) = preview::cap_issues(issues);
    let limit_reached = run.limit_reached || scope.capped;
    let total: usize = run.files.iter().map(|f| f.changes.len()).sum();

    let mut details = Map::new();
    details.insert("totalReplacements".into(), json!(total));
    details.insert("filesTouched".into(), json!(run.files.len()));
    details.insert("filesSearched".into(), json!(run.files_searched));
    details.insert("filesParsed".into(), json!(run.files_parsed));
    details.insert("applied".into(), json!(false));
    details.insert("limitReached".into(), json!(limit_reached));
    if !shown_issues.is_empty() {
        details.insert("parseErrors".into(), json!(shown_issues));
        details.insert("parseErrorsTotal".into(), json!(issues_total));
    }
    details.insert("scopePath".into(), json!(files::display(cwd, &scope.base)));
    details.insert("cwd".into(), json!(cwd.to_string_lossy()));
    let shown: Vec<String> = run.files.iter().map(|f| files::display(cwd, &f.path)).collect();
    details.insert("files".into(), json!(shown));
    let counts: Vec<Value> = run
        .files
        .iter()
        .zip(&shown)
        .map(|(file, path)| json!({"path": path, "count": file.changes.len()}))
        .collect();
    details.insert("fileReplacements".into(), Value::Array(counts));
    details.insert("changes".into(), Value::Array(change_details(cwd, &run.files)));

    let issue_lines = preview::issues_block(&shown_issues, issues_total);
    if total == 0 {
        let mut text = "No replacements made".to_owned();
        if limit_reached {
            text.push_str("\n\nLimit reached; narrow paths.");
        }
        if !issue_lines.is_empty() {
            text.push('\n');
            text.push_str(&issue_lines.join("\n"));
        }
        return Ok(Preview {
            text,
            details: Value::Object(details),
            plan: None,
        });
    }

    let (file_blocks, hidden_changes, hidden_files) = blocks(cwd, &scope, &run);
    let mut lines = preview::grouped(&file_blocks, scope.single_file);
    if hidden_changes > 0 {
        lines.push(String::new());
        let unlisted = if hidden_files > 0 {
            format!(", {} not listed", plural(hidden_files, "more file"))
        } else {
            String::new()
        };
        lines.push(format!(
            "[Preview cut at {}KB: {} not shown{unlisted}. Applying writes all {total}; narrow paths to review them.]",
            MAX_PREVIEW_BYTES / 1024,
            plural(hidden_changes, "more replacement")
        ));
    }
    if limit_reached {
        lines.push(String::new());
        lines.push("Limit reached; narrow paths.".to_owned());
    }
    if !issue_lines.is_empty() {
        lines.push(String::new());
        lines.extend(issue_lines);
    }
    let plan = EditPlan {
        files: run
            .files
            .iter()
            .zip(shown)
            .map(|(file, display)| PlannedFile {
                path: file.path.clone(),
                display,
                original: file.source.as_bytes().to_vec(),
                updated: rewrite(file),
                count: file.changes.len(),
            })
            .collect(),
    };
    Ok(Preview {
        text: lines.join("\n"),
        details: Value::Object(details),
        plan: Some(plan),
    })
}

#[async_trait]
impl pi_agent_core::TypedTool for AstEditTool {
    type Params = AstEditParams;

    fn name(&self) -> &str {
        "ast_edit"
    }

    fn label(&self) -> &str {
        "AST Edit"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &ToolParameters {
        &self.parameters
    }

    async fn execute(&self, _call_id: &str, args: AstEditParams, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let max_files = self
            .max_files
            .unwrap_or_else(|| max_files_from(std::env::var("PI_MAX_AST_FILES").ok().as_deref()));
        let cwd = self.cwd.clone();
        let cancel = ctx.cancel.clone();
        let preview = run_blocking(AstTool::Edit, &ctx.cancel, move || {
            build_preview(&cwd, &args, max_files, &cancel)
        })
        .await?;
        if let Some(plan) = preview.plan {
            let plan = Arc::new(plan);
            let label = format!("AST Edit: {}", plan.summary());
            let hooks = self.hooks.clone();
            let files = plan.mutated_files();
            let action = PendingAction::new(label, "ast_edit", move |_reason, _extra| {
                apply::apply(plan.clone(), hooks.clone())
            })
            .with_details(preview.details.clone())
            .with_mutated_files(files);
            self.store.push(action);
        }
        Ok(ToolResult::text(preview.text).with_details(preview.details))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::resolve::PendingError;
    use pi_agent_core::{AgentTool, ContentBlock};

    fn text(result: &ToolResult) -> String {
        match &result.content[0] {
            ContentBlock::Text(t) => t.text.clone(),
            other => format!("{other:?}"),
        }
    }

    #[test]
    fn max_files_env_values() {
        assert_eq!(max_files_from(None), DEFAULT_MAX_FILES);
        assert_eq!(max_files_from(Some("25")), 25);
        assert_eq!(max_files_from(Some(" 7 ")), 7);
        assert_eq!(max_files_from(Some("0")), DEFAULT_MAX_FILES);
        assert_eq!(max_files_from(Some("-3")), DEFAULT_MAX_FILES);
        assert_eq!(max_files_from(Some("many")), DEFAULT_MAX_FILES);
    }

    #[test]
    fn argument_errors() {
        let error = |args: Value| parse_args(&args).err().map(|e| e.message().to_owned());
        assert_eq!(
            error(json!({"ops": [], "paths": ["."]})).as_deref(),
            Some("`ops` must include at least one op entry")
        );
        assert_eq!(
            error(json!({"ops": [{"pat": "a", "out": ""}, {"pat": " ", "out": "b"}], "paths": ["."]})).as_deref(),
            Some("`ops[1].pat` must be a non-empty pattern")
        );
        assert_eq!(
            error(json!({"ops": [{"pat": "a($X)", "out": ""}, {"pat": "a($X)", "out": "b"}], "paths": ["."]}))
                .as_deref(),
            Some("Duplicate rewrite pattern: a($X)")
        );
    }

    /// Fails the rename of the second file of the batch.
    struct FailSecondRename;

    impl BatchHooks for FailSecondRename {
        fn before_rename(&self, index: usize, _path: &Path) -> std::io::Result<()> {
            if index == 1 {
                return Err(std::io::Error::other("disk full (injected)"));
            }
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_failed_write_during_apply_leaves_every_file_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for name in ["a.ts", "b.ts", "c.ts"] {
            std::fs::write(root.join(name), format!("oldCall({name:?});\n")).unwrap();
        }
        let store = PendingActionStore::new();
        let tool = AstEditTool::new(root.clone(), store.clone()).with_batch_hooks(Arc::new(FailSecondRename));
        let args = json!({"ops": [{"pat": "oldCall($A)", "out": "newCall($A)"}], "paths": ["."]});
        let preview = tool.execute("c", args, ToolContext::detached()).await.unwrap();
        assert!(text(&preview).contains("## ") || text(&preview).contains("# a.ts"));
        let action = store.peek().unwrap();
        let error = (action.apply)("go".into(), None).await.unwrap_err();
        assert_eq!(
            error,
            PendingError::Other("Failed to write b.ts: disk full (injected)".into())
        );
        let mut names: Vec<String> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["a.ts", "b.ts", "c.ts"], "no temp file left behind");
        for name in ["a.ts", "b.ts", "c.ts"] {
            assert_eq!(
                std::fs::read_to_string(root.join(name)).unwrap(),
                format!("oldCall({name:?});\n")
            );
        }
    }
}
