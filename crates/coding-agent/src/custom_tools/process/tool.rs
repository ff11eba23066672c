//! [`ProcessTool`]: one tool a process defines, as a [`CustomTool`].

use std::sync::Arc;

use async_trait::async_trait;
use pi_agent_core::{
    AgentTool, OPERATION_ABORTED, ToolContext, ToolError, ToolExecutionMode, ToolParameters, ToolResult,
};
use serde_json::{Value, json};
use tracing::Instrument;

use super::connection::{CallError, Connection};
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
        let build = |sent: &mut SentContext| {
            if let Some(view) = &view {
                params["context"] = execute_context(&**view, sent);
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
            reply = connection.call_with_context_within("execute", build, self.host.timeout(), &self.name) => reply,
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

#[async_trait]
impl CustomTool for ProcessTool {
    async fn on_session(&self, event: &ToolSessionEvent) {
        self.host.on_session(self.index, event).await;
    }
}
