//! PLACEHOLDER for the `grep` tool: replace this whole file with the real implementation.

use async_trait::async_trait;
use pi_agent_core::{AgentTool, ToolContext, ToolError, ToolParameters, ToolResult};
use serde_json::Value;

use crate::ToolEnv;

/// PLACEHOLDER.
pub struct GrepTool {
    #[allow(dead_code)]
    env: ToolEnv,
    parameters: ToolParameters,
}

impl GrepTool {
    /// PLACEHOLDER.
    pub fn new(env: ToolEnv) -> Self {
        GrepTool { env, parameters: ToolParameters::new(serde_json::json!({"type": "object"})) }
    }
}

#[async_trait]
impl AgentTool for GrepTool {
    fn name(&self) -> &str {
        "grep"
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
