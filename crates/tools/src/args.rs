//! Reading a tool call's arguments into its parameter struct.

use pi_agent_core::ToolError;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Reads the arguments of a tool whose one strict field is the one `error` is about (every other
/// field is lenient): any failure — also arguments that are no JSON object — is that error.
pub(crate) fn parse_or<T: DeserializeOwned>(args: Value, error: &str) -> Result<T, ToolError> {
    match args {
        Value::Object(_) => serde_json::from_value(args).map_err(|_| ToolError::new(error)),
        _ => Err(ToolError::new(error)),
    }
}
