//! `batch_rename_preview` as a native Rust custom tool: it validates a batch of renames and stages
//! them as a pending action; nothing moves until `resolve` applies it.

use std::path::PathBuf;
use std::sync::Arc;

use pi_agent_core::{FnTool, ToolError, ToolResult};
use pi_coding_agent::custom_tools::schema::Type;
use pi_coding_agent::custom_tools::{CustomTool, FactoryError, NamedFactory, ToolApi, plain};
use pi_coding_agent::resolve::{PendingAction, PendingError};
use serde_json::json;

/// The factory.
pub(crate) fn factory() -> NamedFactory {
    NamedFactory::new(
        "batch-rename-preview",
        |api: &ToolApi| -> Result<Vec<Arc<dyn CustomTool>>, FactoryError> {
            let api = api.clone();
            let rename = Type::object([("from", Type::string()), ("to", Type::string())]);
            let parameters = Type::object([("renames", Type::array(rename).description("Files to rename"))]);
            let tool = FnTool::new(
                "batch_rename_preview",
                "Previews renames and defers the commit to resolve",
                parameters.to_value(),
                move |_id, args, _ctx| {
                    let api = api.clone();
                    async move {
                        let mut pairs: Vec<(PathBuf, PathBuf)> = Vec::new();
                        for item in args["renames"].as_array().cloned().unwrap_or_default() {
                            let (Some(from), Some(to)) = (item["from"].as_str(), item["to"].as_str()) else {
                                return Err(ToolError::new("Each rename needs from and to"));
                            };
                            let (from, to) = (api.cwd().join(from), api.cwd().join(to));
                            if !from.exists() {
                                return Err(ToolError::new(format!("Not found: {}", from.display())));
                            }
                            if to.exists() {
                                return Err(ToolError::new(format!("Already exists: {}", to.display())));
                            }
                            pairs.push((from, to));
                        }
                        let count = pairs.len();
                        let plan: Vec<String> = pairs
                            .iter()
                            .map(|(from, to)| format!("{} -> {}", from.display(), to.display()))
                            .collect();
                        let apply_pairs = pairs.clone();
                        let files = if count == 1 {
                            "1 file".to_owned()
                        } else {
                            format!("{count} files")
                        };
                        let action = PendingAction::new(
                            format!("Batch rename: {files}"),
                            "batch_rename_preview",
                            move |reason, _| {
                                let pairs = apply_pairs.clone();
                                async move {
                                    for (from, to) in &pairs {
                                        tokio::fs::rename(from, to)
                                            .await
                                            .map_err(|e| PendingError::Other(format!("{}: {e}", from.display())))?;
                                    }
                                    Ok(ToolResult::text(format!("Applied batch rename. Reason: {reason}")))
                                }
                            },
                        )
                        .with_reject(|reason, _| async move {
                            Ok(Some(ToolResult::text(format!(
                                "Discarded batch rename. Reason: {reason}"
                            ))))
                        })
                        .with_details(json!({ "plan": plan }));
                        api.push_pending_action(action)
                            .map_err(|e| ToolError::new(e.to_string()))?;
                        Ok(ToolResult::text(format!(
                            "Prepared rename plan for {count} files:\n{}\nCall resolve to apply or discard.",
                            plan.join("\n")
                        ))
                        .with_details(json!({ "plan": plan })))
                    }
                },
            )
            .with_label("Batch Rename Preview");
            Ok(vec![plain(tool)])
        },
    )
}
