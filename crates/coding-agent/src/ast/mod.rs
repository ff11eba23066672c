//! Structural search and rewrite on ast-grep: the `ast_grep` and `ast_edit` tools.
//!
//! Both take ast-grep patterns (`$A`, `$$$ARGS`, `$_`) and `paths` (files, directories or globs,
//! resolved against the working directory), infer one language from the files (or take `lang`), and
//! parse and match the files in parallel with ast-grep-core — no external program runs.
//!
//! - [`AstGrepTool`] lists matches, 50 per page (`skip` pages on).
//! - [`AstEditTool`] computes a preview of every rewrite and pushes it onto the session's
//!   [`PendingActionStore`](crate::resolve::PendingActionStore); applying it re-reads every touched
//!   file, refuses when any changed since the preview, and writes all files or none.
//!
//! Modules: `lang` (language names, aliases, inference), `files` (the path pipeline), `engine`
//! (parsing and matching), `pool` (worker threads and the path-ordered collector), `preview` (output
//! text), `apply` (the transactional write), and one module per tool.

mod apply;
mod edit_tool;
mod engine;
mod files;
mod grep_tool;
mod lang;
mod pool;
mod preview;

use pi_agent_core::{Lenient, OPERATION_ABORTED, ToolError};
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use edit_tool::{AstEditParams, AstEditTool, DEFAULT_MAX_FILES, MAX_DETAIL_CHANGES, MAX_PREVIEW_BYTES};
pub use files::MAX_CANDIDATE_FILES;
pub use grep_tool::{AstGrepParams, AstGrepTool, PAGE_SIZE};
pub use preview::PARSE_ERRORS_LIMIT;

/// Which of the two structural tools is running, for its error texts (not to be confused with
/// [`crate::custom_tools::ToolKind`], the kind of a custom tool).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AstTool {
    Edit,
    Grep,
}

impl AstTool {
    /// The tool's name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            AstTool::Edit => "ast_edit",
            AstTool::Grep => "ast_grep",
        }
    }

    /// What the tool does to files, as in `Cannot <verb> external URL`.
    pub(crate) fn verb(self) -> &'static str {
        match self {
            AstTool::Edit => "rewrite",
            AstTool::Grep => "search",
        }
    }
}

/// Reads raw arguments into `T`, a struct of lenient fields that every JSON object fits; anything
/// else (no object) reads as `T::default()`, as if every argument were missing.
pub(crate) fn lenient_args<T: for<'de> Deserialize<'de> + Default>(args: &Value) -> T {
    if !args.is_object() {
        return T::default();
    }
    T::deserialize(args).unwrap_or_default()
}

/// The strings of an array argument (other items are ignored; no array reads as empty).
pub(crate) fn string_list(list: Lenient<Vec<Lenient<String>>>) -> Vec<String> {
    list.into_inner()
        .unwrap_or_default()
        .into_iter()
        .filter_map(Lenient::into_inner)
        .collect()
}

/// An optional string argument; blank counts as absent.
pub(crate) fn optional_string(text: Lenient<String>) -> Option<String> {
    text.into_inner().filter(|text| !text.trim().is_empty())
}

/// Runs `job` on the blocking pool; the call ends with `Operation aborted` as soon as `cancel` fires
/// (the job itself stops at its next check).
pub(crate) async fn run_blocking<T: Send + 'static>(
    tool: AstTool,
    cancel: &CancellationToken,
    job: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    let handle = tokio::task::spawn_blocking(job);
    tokio::select! {
        joined = handle => {
            if cancel.is_cancelled() {
                return Err(ToolError::new(OPERATION_ABORTED));
            }
            joined.map_err(|error| ToolError::new(format!("{} failed: {error}", tool.name())))?
        }
        () = cancel.cancelled() => Err(ToolError::new(OPERATION_ABORTED)),
    }
}
