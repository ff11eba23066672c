//! One MCP tool as a pi [`CustomTool`]: its name, label, schema and execution mode, and its calls.

use std::collections::HashSet;
use std::sync::Arc;

use async_trait::async_trait;
use pi_agent_core::{
    AgentTool, OPERATION_ABORTED, ToolContext, ToolError, ToolExecutionMode, ToolParameters, ToolResult,
};
use rmcp::ServiceError;
use rmcp::model::{CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest};
use rmcp::service::PeerRequestOptions;
use serde_json::{Value, json};
use tracing::Instrument;

use super::content::convert;
use super::limits::MAX_TOOL_NAME_LENGTH;
use super::server::{Link, McpServer};
use crate::custom_tools::{CustomTool, SessionReason, ToolSessionEvent};

/// The name pi gives the tool `tool` of the server `server`: `<server>_<tool>` with every
/// character outside `[A-Za-z0-9_-]` replaced by `_`, cut to 64 characters.
///
/// Names can collide: two tools of one server that sanitise or cut to the same name are told apart
/// by a suffix on the later ones (`_2`, `_3`, …); between servers, and with other custom tools,
/// the later source wins as for every custom tool (servers load in the order of their names).
///
/// ```
/// use pi_coding_agent::custom_tools::mcp::tool_name;
/// assert_eq!(tool_name("files", "read_file"), "files_read_file");
/// assert_eq!(tool_name("my server", "get.weather/now"), "my_server_get_weather_now");
/// assert_eq!(tool_name("s", &"x".repeat(100)).len(), 64);
/// ```
pub fn tool_name(server: &str, tool: &str) -> String {
    format!("{server}_{tool}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(MAX_TOOL_NAME_LENGTH)
        .collect()
}

/// `base`, or `base` cut short enough to carry the first free `_<n>` suffix.
fn unique_name(base: String, taken: &mut HashSet<String>) -> String {
    if taken.insert(base.clone()) {
        return base;
    }
    for n in 2usize.. {
        let suffix = format!("_{n}");
        let stem: String = base.chars().take(MAX_TOOL_NAME_LENGTH - suffix.len()).collect();
        let candidate = format!("{stem}{suffix}");
        if taken.insert(candidate.clone()) {
            return candidate;
        }
    }
    base
}

/// The parameter schema pi gives the model: the tool's `inputSchema`, with `"type": "object"`
/// when it is missing, empty or untyped (model APIs want an object schema).
fn parameters(input_schema: Option<&Value>) -> Value {
    match input_schema {
        Some(Value::Object(schema)) if !schema.is_empty() => {
            let mut schema = schema.clone();
            if !schema.contains_key("type") {
                schema.insert("type".into(), json!("object"));
            }
            Value::Object(schema)
        }
        _ => json!({"type": "object"}),
    }
}

/// A non-empty string.
fn text(value: Option<&Value>) -> Option<&str> {
    value.and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// The tools of `server` from its `tools/list` entries; entries without a name are skipped.
pub(super) fn build_tools(server: &Arc<McpServer>, listed: &[Value]) -> Vec<Arc<dyn CustomTool>> {
    let mut taken = HashSet::new();
    let mut tools: Vec<Arc<dyn CustomTool>> = Vec::new();
    for entry in listed {
        let Some(remote) = entry.get("name").and_then(Value::as_str) else {
            continue;
        };
        let annotations = entry.get("annotations");
        let label = text(entry.get("title"))
            .or_else(|| text(annotations.and_then(|a| a.get("title"))))
            .unwrap_or(remote)
            .to_owned();
        let description = text(entry.get("description")).map_or_else(
            || format!("{label} (a tool of the MCP server \"{}\")", server.name()),
            str::to_owned,
        );
        let read_only = annotations.and_then(|a| a.get("readOnlyHint")).and_then(Value::as_bool) == Some(true);
        tools.push(Arc::new(McpTool {
            name: unique_name(tool_name(server.name(), remote), &mut taken),
            remote: remote.to_owned(),
            label,
            description,
            parameters: ToolParameters::new(parameters(entry.get("inputSchema"))),
            mode: if read_only {
                ToolExecutionMode::Parallel
            } else {
                ToolExecutionMode::Sequential
            },
            server: server.clone(),
        }));
    }
    tools
}

/// A tool of an MCP server.
struct McpTool {
    /// pi's name for it, `<server>_<tool>` sanitised.
    name: String,
    /// Its name on the server, used in `tools/call`.
    remote: String,
    /// Its title, or its MCP name.
    label: String,
    /// What the model reads about it.
    description: String,
    /// Its `inputSchema`, as an object schema.
    parameters: ToolParameters,
    /// Parallel when `readOnlyHint: true`, else sequential.
    mode: ToolExecutionMode,
    /// The server it belongs to, shared with the server's other tools.
    server: Arc<McpServer>,
}

impl McpTool {
    /// The error of an aborted call (`Operation aborted`).
    fn aborted() -> ToolError {
        ToolError::new(OPERATION_ABORTED)
    }

    /// Sends `tools/call` on `link` and waits for the answer or the abort.
    async fn call(&self, link: &Link, args: Value, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
        let mut params = CallToolRequestParams::new(self.remote.clone());
        params.arguments = match args {
            Value::Object(arguments) => Some(arguments),
            _ => None,
        };
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = match link
            .peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(error) => return Err(self.failure(link, error).await),
        };
        let id = handle.id.clone();
        let _progress = self
            .server
            .route_progress(handle.progress_token.clone(), ctx.updates.clone());
        let timeout = self.server.call_timeout();
        // Tells the server the call is over, without making the caller wait for it.
        let cancel_on_server = |reason: String| {
            let peer = link.peer.clone();
            let notice = CancelledNotificationParam::new(Some(id.clone()), Some(reason));
            tokio::spawn(async move {
                let _ = peer.notify_cancelled(notice).await;
            });
        };
        tokio::select! {
            biased;
            () = ctx.cancel.cancelled() => {
                cancel_on_server(OPERATION_ABORTED.to_owned());
                Err(Self::aborted())
            }
            () = tokio::time::sleep(timeout) => {
                let message = format!(
                    "MCP tool \"{}\" of server \"{}\" timed out after {} s",
                    self.remote,
                    self.server.name(),
                    crate::custom_tools::process::seconds(timeout)
                );
                cancel_on_server(message.clone());
                Err(ToolError::new(message))
            }
            response = handle.await_response() => match response {
                Ok(result) => {
                    // By value: the typed result is dropped as soon as it is converted.
                    let result = serde_json::to_value(result)
                        .map_err(|e| ToolError::new(format!("{}: {e}", self.failed())))?;
                    convert(result, &self.remote, self.server.name())
                }
                Err(error) => Err(self.failure(link, error).await),
            },
        }
    }

    /// `MCP tool "<tool>" of server "<server>" failed`.
    fn failed(&self) -> String {
        format!(
            "MCP tool \"{}\" of server \"{}\" failed",
            self.remote,
            self.server.name()
        )
    }

    /// The error a failed request becomes. A closed connection means the server stopped: it is
    /// forgotten so that the next call starts it again.
    async fn failure(&self, link: &Link, error: ServiceError) -> ToolError {
        match error {
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                self.server.discard(link.generation).await;
                let message = format!(
                    "MCP server \"{}\" stopped during a call of \"{}\"",
                    self.server.name(),
                    self.remote
                );
                ToolError::new(link.stderr.explain(message).await)
            }
            ServiceError::McpError(error) => {
                ToolError::new(format!("{}: {} (error {})", self.failed(), error.message, error.code.0))
            }
            other => ToolError::new(format!("{}: {other}", self.failed())),
        }
    }
}

#[async_trait]
impl AgentTool for McpTool {
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
        Some(self.mode)
    }

    async fn execute(&self, call_id: &str, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        if ctx.cancel.is_cancelled() {
            return Err(Self::aborted());
        }
        let span = tracing::info_span!(
            parent: self.server.span(),
            "mcp_call",
            tool = %self.remote,
            call_id = %call_id,
        );
        async {
            let link = tokio::select! {
                biased;
                () = ctx.cancel.cancelled() => return Err(Self::aborted()),
                link = self.server.connect() => link.map_err(ToolError::new)?,
            };
            tracing::debug!("MCP call started");
            let outcome = self.call(&link, args, &ctx).await;
            match &outcome {
                Ok(_) => tracing::debug!("MCP call finished"),
                Err(error) => tracing::debug!(error = error.message(), "MCP call failed"),
            }
            outcome
        }
        .instrument(span)
        .await
    }
}

#[async_trait]
impl CustomTool for McpTool {
    /// Closes the server's connection at `shutdown` (the first of its tools to get the event does).
    async fn on_session(&self, event: &ToolSessionEvent) {
        if event.reason == SessionReason::Shutdown {
            self.server.shutdown().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitised_cut_and_made_unique() {
        assert_eq!(tool_name("gh", "create-issue"), "gh_create-issue");
        assert_eq!(tool_name("ü", "a b"), "__a_b");
        let mut taken = HashSet::new();
        assert_eq!(unique_name(tool_name("s", "a.b"), &mut taken), "s_a_b");
        assert_eq!(unique_name(tool_name("s", "a_b"), &mut taken), "s_a_b_2");
        assert_eq!(unique_name(tool_name("s", "a/b"), &mut taken), "s_a_b_3");
        let long = tool_name("s", &"y".repeat(80));
        assert_eq!(unique_name(long.clone(), &mut taken), long);
        let second = unique_name(long.clone(), &mut taken);
        assert_eq!(second.len(), 64);
        assert!(second.ends_with("y_2"));
    }

    #[test]
    fn schemas_are_object_schemas() {
        assert_eq!(parameters(None), json!({"type": "object"}));
        assert_eq!(parameters(Some(&json!({}))), json!({"type": "object"}));
        assert_eq!(parameters(Some(&json!(true))), json!({"type": "object"}));
        assert_eq!(
            parameters(Some(&json!({"properties": {"a": {"type": "string"}}}))),
            json!({"properties": {"a": {"type": "string"}}, "type": "object"})
        );
        let schema = json!({"type": "object", "properties": {}, "required": []});
        assert_eq!(parameters(Some(&schema)), schema);
    }
}
