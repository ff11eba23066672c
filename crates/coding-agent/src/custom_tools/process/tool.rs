//! [`ProcessTool`]: one tool a process defines, as a [`CustomTool`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use pi_agent_core::{
    AgentTool, OPERATION_ABORTED, ToolContext, ToolError, ToolExecutionMode, ToolParameters, ToolResult,
};
use pi_tools::path::resolve_path;
use serde_json::{Value, json};
use tracing::Instrument;

use super::connection::{Abandon, CallError, Connection};
use super::context::{SentContext, execute_context};
use super::host::Host;
use super::protocol::{ToolDefinition, parse_result};
use crate::custom_tools::{CustomTool, ToolSessionEvent};

/// One tool of a tool process; its calls go to the process its [`Host`] keeps running.
pub(crate) struct ProcessTool {
    host: Arc<Host>,
    index: usize,
    name: String,
    label: String,
    description: String,
    parameters: ToolParameters,
    execution_mode: Option<ToolExecutionMode>,
    mutated_paths: Vec<String>,
}

impl ProcessTool {
    /// Tool number `index` of the process `host` runs.
    pub(crate) fn new(host: Arc<Host>, index: usize, definition: ToolDefinition) -> Self {
        ProcessTool {
            host,
            index,
            label: definition.label.unwrap_or_else(|| definition.name.clone()),
            name: definition.name,
            description: definition.description,
            parameters: ToolParameters::new(definition.parameters),
            execution_mode: definition.execution_mode,
            mutated_paths: definition.mutated_paths,
        }
    }
}

#[async_trait]
impl AgentTool for ProcessTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn label(&self) -> &str {
        &self.label
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &ToolParameters {
        &self.parameters
    }

    fn execution_mode(&self) -> Option<ToolExecutionMode> {
        self.execution_mode
    }

    /// The files named by the parameters the definition lists in `mutatedPaths`
    /// ([`mutated_files_of`]).
    fn mutated_files(&self, args: &Value) -> Vec<PathBuf> {
        mutated_files_of(&self.mutated_paths, args, self.host.cwd())
    }

    async fn execute(&self, call_id: &str, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let aborted = || ToolError::new(OPERATION_ABORTED);
        if ctx.cancel.is_cancelled() {
            return Err(aborted());
        }
        let connection = tokio::select! {
            biased;
            () = ctx.cancel.cancelled() => return Err(aborted()),
            connection = self.host.connection() => connection.map_err(|error| {
                tracing::warn!(tool = %self.name, %error, "tool process could not be restarted");
                ToolError::new(format!("Tool \"{}\" could not be restarted: {error}", self.name))
            })?,
        };
        let span = tracing::info_span!(parent: connection.span(), "tool_call", tool = %self.name, call_id = %call_id);
        self.call(&connection, call_id, args, &ctx).instrument(span).await
    }
}

impl ProcessTool {
    /// One `execute` on `connection`.
    async fn call(
        &self,
        connection: &Connection,
        call_id: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolResult, ToolError> {
        let aborted = || ToolError::new(OPERATION_ABORTED);
        tracing::debug!("tool call started");
        let _call = connection.register_call(call_id, &self.name, ctx.updates.clone(), ctx.cancel.clone());
        let mut params = json!({"callId": call_id, "tool": self.name, "params": args});
        // pi's `CustomToolContext`, current at this call (none outside a session).
        let view = connection.api().session_view();
        let extra = self.host.extra_context();
        let build = |sent: &mut SentContext| {
            if let Some(view) = &view {
                params["context"] = execute_context(&**view, sent);
            }
            // Protocol version 2: the extension's `Context` snapshot, beside version 1's fields.
            if let Some(extra) = extra {
                match &mut params["context"] {
                    Value::Object(context) => context.extend(extra),
                    slot => *slot = Value::Object(extra),
                }
            }
            params
        };
        let reply = tokio::select! {
            biased;
            () = ctx.cancel.cancelled() => {
                tracing::debug!("tool call aborted");
                connection.notify("cancel", &json!({"callId": call_id}));
                return Err(aborted());
            }
            reply = connection.call_with_context_within("execute", build, Abandon::Forget, self.host.timeout(), &self.name) => reply,
        };
        let outcome = match reply {
            Ok(result) => parse_result(result)
                .map_err(|why| ToolError::new(format!("Tool \"{}\" returned an invalid result: {why}", self.name))),
            Err(CallError::Rpc(error)) => Err(error.into_tool_error()),
            Err(CallError::Failed(failure)) => Err(ToolError::new(failure.message(&self.name))),
        };
        match &outcome {
            Ok(_) => tracing::debug!("tool call finished"),
            Err(error) => tracing::debug!(error = error.message(), "tool call failed"),
        }
        outcome
    }
}

/// The files a custom tool's call changes, by the rule of `docs/custom-tools.md`: the value of
/// each parameter named in `mutatedPaths` — a string, or an array whose strings count (other
/// values are ignored) — resolved the way the built-in tools resolve a path (a leading `@`
/// stripped, `~` expanded, relative to the session's working directory).
pub(crate) fn mutated_files_of(names: &[String], args: &Value, cwd: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for name in names {
        match args.get(name) {
            Some(Value::String(path)) => files.push(resolve_path(cwd, path)),
            Some(Value::Array(paths)) => {
                files.extend(paths.iter().filter_map(Value::as_str).map(|p| resolve_path(cwd, p)))
            }
            _ => {}
        }
    }
    files
}

#[async_trait]
impl CustomTool for ProcessTool {
    async fn on_session(&self, event: &ToolSessionEvent) {
        self.host.on_session(self.index, event).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutated_files_come_from_the_declared_parameters() {
        let names = vec!["path".to_owned(), "targets".to_owned()];
        let cwd = Path::new("/work");
        let args = json!({"path": "@a.txt", "targets": ["b.txt", 3, "/etc/c"], "other": "d.txt"});
        assert_eq!(
            mutated_files_of(&names, &args, cwd),
            [
                PathBuf::from("/work/a.txt"),
                PathBuf::from("/work/b.txt"),
                PathBuf::from("/etc/c")
            ]
        );
        assert!(mutated_files_of(&names, &json!({"path": 1}), cwd).is_empty());
        assert!(mutated_files_of(&[], &args, cwd).is_empty());
    }
}
