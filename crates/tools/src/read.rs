//! PLACEHOLDER for the `read` tool: replace this whole file with the real implementation.

use async_trait::async_trait;
use pi_agent_core::{AgentTool, ToolContext, ToolError, ToolParameters, ToolResult};
use serde_json::Value;

use crate::ToolEnv;

/// PLACEHOLDER.
pub struct ReadTool {
    #[allow(dead_code)]
    env: ToolEnv,
    parameters: ToolParameters,
}

impl ReadTool {
    /// PLACEHOLDER.
    pub fn new(env: ToolEnv) -> Self {
        ReadTool { env, parameters: ToolParameters::new(serde_json::json!({"type": "object"})) }
    }
}

#[async_trait]
impl AgentTool for ReadTool {
    fn name(&self) -> &str {
        "read"
    }
    fn description(&self) -> &str {
        "PLACEHOLDER"
    }
    fn parameters(&self) -> &ToolParameters {
        &self.parameters
    }
    async fn execute(&self, _id: &str, _args: Value, _ctx: ToolContext) -> Result<ToolResult, ToolError> {
        Err(ToolError::new("PLACEHOLDER"))
    }
}
