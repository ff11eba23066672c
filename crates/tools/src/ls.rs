//! PLACEHOLDER for the `ls` tool: replace this whole file with the real implementation.

use async_trait::async_trait;
use pi_agent_core::{AgentTool, ToolContext, ToolError, ToolParameters, ToolResult};
use serde_json::Value;

use crate::ToolEnv;

/// PLACEHOLDER.
pub struct LsTool {
    #[allow(dead_code)]
    env: ToolEnv,
    parameters: ToolParameters,
}

impl LsTool {
    /// PLACEHOLDER.
    pub fn new(env: ToolEnv) -> Self {
        LsTool { env, parameters: ToolParameters::new(serde_json::json!({"type": "object"})) }
    }
}

#[async_trait]
impl AgentTool for LsTool {
    fn name(&self) -> &str {
        "ls"
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
