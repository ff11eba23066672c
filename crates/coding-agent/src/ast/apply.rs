//! Transactional apply of an `ast_edit` preview.
//!
//! The preview keeps, per touched file, the exact bytes it read and the bytes it computed. Apply takes
//! the mutation-queue place of every touched file in one step (the `resolve` call that applies it
//! reserved them in source order already, see [`PendingAction::mutated_files`](crate::resolve::PendingAction)),
//! re-reads every file while holding them all, and writes nothing when any file differs from what the
//! preview saw (the stale error). Otherwise it writes every file or none
//! ([`pi_tools::atomic::write_all_or_nothing_with`]). Applying a second time finds the files changed by
//! the first and reports them stale, so nothing is applied twice.

use std::path::PathBuf;
use std::sync::Arc;

use pi_agent_core::lock_files;
use pi_agent_core::{ToolError, ToolResult};
use pi_tools::atomic::{BatchHooks, BatchWrite, write_all_or_nothing_with};
use serde_json::{Value, json};

use super::preview::plural;
use crate::resolve::PendingError;

/// One file the preview would change.
#[derive(Debug, Clone)]
pub(crate) struct PlannedFile {
    /// Absolute path.
    pub(crate) path: PathBuf,
    /// The path shown to the model (relative to the working directory).
    pub(crate) display: String,
    /// The bytes the preview read.
    pub(crate) original: Vec<u8>,
    /// The bytes apply writes.
    pub(crate) updated: Vec<u8>,
    /// Replacements in this file.
    pub(crate) count: usize,
}

/// Everything apply needs: the touched files in path order.
#[derive(Debug, Clone)]
pub(crate) struct EditPlan {
    pub(crate) files: Vec<PlannedFile>,
}

impl EditPlan {
    /// Total replacements.
    pub(crate) fn total(&self) -> usize {
        self.files.iter().map(|f| f.count).sum()
    }

    /// `<N> replacement[s] in <M> file[s]`.
    pub(crate) fn summary(&self) -> String {
        format!(
            "{} in {}",
            plural(self.total(), "replacement"),
            plural(self.files.len(), "file")
        )
    }

    /// The absolute paths of the touched files.
    pub(crate) fn mutated_files(&self) -> Vec<PathBuf> {
        self.files.iter().map(|f| f.path.clone()).collect()
    }

    fn file_details(&self) -> (Value, Value) {
        let files: Vec<&str> = self.files.iter().map(|f| f.display.as_str()).collect();
        let counts: Vec<Value> = self
            .files
            .iter()
            .map(|f| json!({"path": f.display, "count": f.count}))
            .collect();
        (json!(files), Value::Array(counts))
    }
}

/// How a touched file differs from the preview.
enum Staleness {
    Modified,
    Deleted,
    Unreadable(std::io::Error),
}

enum Outcome {
    Stale(Vec<(String, Staleness)>),
    WriteFailed(String),
    Written,
}

/// Checks and writes the plan while the caller holds every file's lock. Blocking.
fn check_and_write(plan: &EditPlan, hooks: &dyn BatchHooks) -> Outcome {
    let mut stale = Vec::new();
    for file in &plan.files {
        match std::fs::read(&file.path) {
            Ok(bytes) if bytes == file.original => {}
            Ok(_) => stale.push((file.display.clone(), Staleness::Modified)),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                stale.push((file.display.clone(), Staleness::Deleted));
            }
            Err(error) => stale.push((file.display.clone(), Staleness::Unreadable(error))),
        }
    }
    if !stale.is_empty() {
        return Outcome::Stale(stale);
    }
    let batch: Vec<BatchWrite<'_>> = plan
        .files
        .iter()
        .map(|file| BatchWrite {
            path: &file.path,
            contents: &file.updated,
            original: &file.original,
        })
        .collect();
    match write_all_or_nothing_with(&batch, hooks) {
        Ok(()) => Outcome::Written,
        Err(error) => {
            let shown = plan
                .files
                .iter()
                .find(|f| f.path == error.path)
                .map_or_else(|| error.path.display().to_string(), |f| f.display.clone());
            let mut message = format!("Failed to write {shown}: {}", error.error);
            for (path, why) in &error.unrestored {
                message.push_str(&format!("; could not restore {}: {why}", path.display()));
            }
            Outcome::WriteFailed(message)
        }
    }
}

fn stale_error(plan: &EditPlan, stale: &[(String, Staleness)]) -> PendingError {
    let lines: Vec<String> = stale
        .iter()
        .map(|(path, how)| match how {
            Staleness::Modified => format!("- {path} (modified)"),
            Staleness::Deleted => format!("- {path} (deleted)"),
            Staleness::Unreadable(error) => format!("- {path} (unreadable: {error})"),
        })
        .collect();
    let text = format!(
        "Preview is stale / no longer matches; no replacements were applied. Preview expected {}.\n\
         Changed since the preview:\n{}",
        plan.summary(),
        lines.join("\n")
    );
    let (files, counts) = plan.file_details();
    let stale_files: Vec<&str> = stale.iter().map(|(path, _)| path.as_str()).collect();
    PendingError::Tool(ToolError::new(text).with_details(json!({
        "totalReplacements": 0,
        "filesTouched": 0,
        "applied": false,
        "expectedReplacements": plan.total(),
        "expectedFiles": files,
        "expectedFileReplacements": counts,
        "staleFiles": stale_files,
    })))
}

/// Applies `plan` (the pending action's apply callback).
pub(crate) async fn apply(
    plan: Arc<EditPlan>,
    hooks: Arc<dyn BatchHooks + Send + Sync>,
) -> Result<ToolResult, PendingError> {
    // All files in one step; those the `resolve` call reserved (and so holds) are not waited for.
    let guard = lock_files(plan.mutated_files()).await;
    let job_plan = plan.clone();
    let outcome = tokio::task::spawn_blocking(move || check_and_write(&job_plan, hooks.as_ref()))
        .await
        .map_err(|error| PendingError::Other(format!("Failed to apply: {error}")))?;
    drop(guard);
    match outcome {
        Outcome::Stale(stale) => Err(stale_error(&plan, &stale)),
        Outcome::WriteFailed(message) => Err(PendingError::Other(message)),
        Outcome::Written => {
            let (files, counts) = plan.file_details();
            Ok(
                ToolResult::text(format!("Applied {}.", plan.summary())).with_details(json!({
                    "totalReplacements": plan.total(),
                    "filesTouched": plan.files.len(),
                    "applied": true,
                    "files": files,
                    "fileReplacements": counts,
                })),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use pi_tools::atomic::NoHooks;

    fn plan(dir: &std::path::Path, files: &[(&str, &str, &str)]) -> Arc<EditPlan> {
        let files = files
            .iter()
            .map(|(name, old, new)| {
                let path = dir.join(name);
                std::fs::write(&path, old).unwrap();
                PlannedFile {
                    path,
                    display: (*name).to_owned(),
                    original: old.as_bytes().to_vec(),
                    updated: new.as_bytes().to_vec(),
                    count: 1,
                }
            })
            .collect();
        Arc::new(EditPlan { files })
    }

    #[tokio::test]
    async fn applies_once_then_reports_stale() {
        let dir = tempfile::tempdir().unwrap();
        let plan = plan(dir.path(), &[("a.ts", "a()", "b()"), ("c.ts", "c()", "d()")]);
        let result = apply(plan.clone(), Arc::new(NoHooks)).await.unwrap();
        assert_eq!(
            pi_agent_core::ContentBlock::text("Applied 2 replacements in 2 files."),
            result.content[0]
        );
        let again = apply(plan, Arc::new(NoHooks)).await.unwrap_err();
        let PendingError::Tool(error) = again else {
            panic!("expected the stale error")
        };
        assert_eq!(
            error.message(),
            "Preview is stale / no longer matches; no replacements were applied. Preview expected 2 replacements in 2 files.\n\
             Changed since the preview:\n- a.ts (modified)\n- c.ts (modified)"
        );
        assert_eq!(error.details().unwrap()["totalReplacements"], 0);
        assert_eq!(std::fs::read_to_string(dir.path().join("a.ts")).unwrap(), "b()");
    }

    #[tokio::test]
    async fn a_deleted_file_is_stale_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let plan = plan(dir.path(), &[("a.ts", "a()", "b()"), ("c.ts", "c()", "d()")]);
        std::fs::remove_file(dir.path().join("c.ts")).unwrap();
        let error = apply(plan, Arc::new(NoHooks)).await.unwrap_err();
        assert!(error.to_string().ends_with("- c.ts (deleted)"), "{error}");
        assert_eq!(std::fs::read_to_string(dir.path().join("a.ts")).unwrap(), "a()");
    }
}
