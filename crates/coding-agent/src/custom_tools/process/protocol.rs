//! The wire format of the process protocol: JSON-RPC 2.0 messages, one per line; tool definitions
//! and results as the tool sends them; and the error texts the model reads when a process fails.
//!
//! Everything here is pure (no I/O), so the framing can be tested and fuzzed on its own, and it
//! uses no other module of `process`: the transport ([`super::connection`]) and the handlers
//! build on it, never the other way round.

use std::time::Duration;

use pi_agent_core::{ContentBlock, ToolError, ToolExecutionMode, ToolResult};
use serde_json::{Map, Value, json};

/// The protocol version pi speaks (`initialize.protocolVersion`).
pub(crate) const PROTOCOL_VERSION: u32 = 1;

/// JSON-RPC: the method does not exist.
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC: the params do not fit the method.
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// An error of pi's own handlers (`exec` could not start, no pending-action store).
pub(crate) const SERVER_ERROR: i64 = -32000;

/// `error.data.kind` of an answer to `execute` or `pendingAction.*` when the tool threw something
/// that is no tool error; `"tool"` (or no `kind`) is an error the tool shaped for the model.
pub(crate) const ERROR_KIND_EXCEPTION: &str = "exception";

/// The longest line pi reads from a tool process (images travel base64-encoded in results).
pub(crate) const MAX_LINE: usize = 64 << 20;

/// How many characters of a bad line the error text quotes.
const QUOTED_CHARS: usize = 80;

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RpcError {
    /// The error code.
    pub(crate) code: i64,
    /// What went wrong; for `execute`, what the model reads.
    pub(crate) message: String,
    /// Extra data; `data.details` becomes the details of an error result.
    pub(crate) data: Option<Value>,
}

impl RpcError {
    /// An error without data.
    pub(crate) fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// `-32602 Invalid params: <why>`.
    pub(crate) fn invalid_params(why: impl std::fmt::Display) -> Self {
        RpcError::new(INVALID_PARAMS, format!("Invalid params: {why}"))
    }

    /// Whether the tool marked this error `data.kind: "exception"`: something went wrong that the
    /// tool did not shape for the model (`resolve` reports such an apply as `Apply failed:
    /// <message>`). `"tool"`, no `kind` (protocol version 1 before kinds) or any other value: a
    /// tool error, reported as it is.
    pub(crate) fn is_exception(&self) -> bool {
        self.data
            .as_ref()
            .and_then(|data| data.get("kind"))
            .and_then(Value::as_str)
            == Some(ERROR_KIND_EXCEPTION)
    }

    /// The tool error this error stands for: its message, and `data.details` when present.
    pub(crate) fn into_tool_error(self) -> ToolError {
        let details = self.data.and_then(|mut data| data.get_mut("details").map(Value::take));
        let error = ToolError::new(self.message);
        match details {
            Some(details) if !details.is_null() => error.with_details(details),
            _ => error,
        }
    }

    fn to_value(&self) -> Value {
        let mut error = Map::new();
        error.insert("code".into(), Value::from(self.code));
        error.insert("message".into(), Value::from(self.message.clone()));
        if let Some(data) = &self.data {
            error.insert("data".into(), data.clone());
        }
        Value::Object(error)
    }

    fn from_value(value: &Value) -> Self {
        RpcError {
            code: value.get("code").and_then(Value::as_i64).unwrap_or(SERVER_ERROR),
            message: match value.get("message") {
                Some(Value::String(message)) => message.clone(),
                Some(other) => other.to_string(),
                None => "Unknown error".to_owned(),
            },
            data: value.get("data").cloned(),
        }
    }
}

/// One message read from the process.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Incoming {
    /// The answer to one of pi's requests.
    Response {
        /// pi's request id.
        id: u64,
        /// `result`, or `error`.
        outcome: Result<Value, RpcError>,
    },
    /// A request of the tool; pi must answer with the same `id`.
    Request {
        /// The tool's id, echoed back as it is.
        id: Value,
        /// The method.
        method: String,
        /// Its params (`null` when absent).
        params: Value,
    },
    /// A notification of the tool.
    Notification {
        /// The method.
        method: String,
        /// Its params (`null` when absent).
        params: Value,
    },
    /// A blank line, or JSON that is no message pi knows: ignored.
    Ignored,
}

/// Parses one line (without its `\n`). `Err` means the line is not JSON — a protocol failure.
pub(crate) fn parse_line(line: &[u8]) -> Result<Incoming, ()> {
    let line = line.trim_ascii();
    if line.is_empty() {
        return Ok(Incoming::Ignored);
    }
    let value: Value = serde_json::from_slice(line).map_err(|_| ())?;
    let Value::Object(mut object) = value else {
        return Ok(Incoming::Ignored);
    };
    let params = object.remove("params").unwrap_or(Value::Null);
    if let Some(Value::String(method)) = object.remove("method") {
        return Ok(match object.remove("id") {
            Some(id) if !id.is_null() => Incoming::Request { id, method, params },
            _ => Incoming::Notification { method, params },
        });
    }
    let Some(id) = object.get("id").and_then(Value::as_u64) else {
        return Ok(Incoming::Ignored);
    };
    if let Some(error) = object.get("error").filter(|e| e.is_object()) {
        return Ok(Incoming::Response {
            id,
            outcome: Err(RpcError::from_value(error)),
        });
    }
    match object.remove("result") {
        Some(result) => Ok(Incoming::Response {
            id,
            outcome: Ok(result),
        }),
        None => Ok(Incoming::Ignored),
    }
}

/// The start of a line that is not JSON, as the error text quotes it.
pub(crate) fn start_of(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let text = text.trim();
    let mut start: String = text.chars().take(QUOTED_CHARS).collect();
    if text.chars().nth(QUOTED_CHARS).is_some() {
        start.push('…');
    }
    start
}

/// A request line of pi.
pub(crate) fn request_line(id: u64, method: &str, params: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// A notification line of pi.
pub(crate) fn notification_line(method: &str, params: &Value) -> String {
    json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string()
}

/// pi's answer to a request of the tool.
pub(crate) fn response_line(id: &Value, outcome: &Result<Value, RpcError>) -> String {
    match outcome {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
        Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error.to_value()}).to_string(),
    }
}

/// One tool of the `initialize` answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolDefinition {
    /// The name the model calls it by.
    pub(crate) name: String,
    /// The label for UIs.
    pub(crate) label: Option<String>,
    /// What the model reads.
    pub(crate) description: String,
    /// The JSON Schema of its parameters.
    pub(crate) parameters: Value,
    /// `executionMode`.
    pub(crate) execution_mode: Option<ToolExecutionMode>,
    /// `mutatedPaths`: the parameters whose values name files a call changes.
    pub(crate) mutated_paths: Vec<String>,
}

/// The tools of an `initialize` answer, or why it is not one.
pub(crate) fn parse_definitions(result: &Value) -> Result<Vec<ToolDefinition>, String> {
    let Some(tools) = result.get("tools").and_then(Value::as_array) else {
        return Err("the answer has no \"tools\" array".to_owned());
    };
    if tools.is_empty() {
        return Err("the answer defines no tools".to_owned());
    }
    let mut definitions: Vec<ToolDefinition> = Vec::with_capacity(tools.len());
    for (index, tool) in tools.iter().enumerate() {
        let definition = parse_definition(tool).map_err(|why| match tool.get("name").and_then(Value::as_str) {
            Some(name) => format!("tool \"{name}\": {why}"),
            None => format!("tool #{}: {why}", index + 1),
        })?;
        if definitions.iter().any(|d| d.name == definition.name) {
            return Err(format!("tool \"{}\" is defined twice", definition.name));
        }
        definitions.push(definition);
    }
    Ok(definitions)
}

pub(crate) fn parse_definition(tool: &Value) -> Result<ToolDefinition, String> {
    let name = match tool.get("name") {
        Some(Value::String(name)) => name.clone(),
        _ => return Err("\"name\" must be a string".to_owned()),
    };
    let valid =
        (1..=64).contains(&name.len()) && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid {
        return Err("\"name\" must be 1 to 64 letters, digits, \"_\" or \"-\"".to_owned());
    }
    let label = match tool.get("label") {
        None | Some(Value::Null) => None,
        Some(Value::String(label)) => Some(label.clone()),
        Some(_) => return Err("\"label\" must be a string".to_owned()),
    };
    let description = match tool.get("description") {
        Some(Value::String(description)) => description.clone(),
        _ => return Err("\"description\" must be a string".to_owned()),
    };
    let parameters = match tool.get("parameters") {
        Some(schema @ Value::Object(_)) => schema.clone(),
        _ => return Err("\"parameters\" must be a JSON Schema object".to_owned()),
    };
    let execution_mode = match tool.get("executionMode") {
        None | Some(Value::Null) => None,
        Some(mode) => match mode.as_str().map(str::parse::<ToolExecutionMode>) {
            Some(Ok(mode)) => Some(mode),
            _ => return Err("\"executionMode\" must be \"parallel\" or \"sequential\"".to_owned()),
        },
    };
    let mutated_paths = match tool.get("mutatedPaths") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(names)) if names.iter().all(|n| n.as_str().is_some_and(|n| !n.is_empty())) => {
            names.iter().filter_map(Value::as_str).map(str::to_owned).collect()
        }
        Some(_) => return Err("\"mutatedPaths\" must be an array of parameter names".to_owned()),
    };
    Ok(ToolDefinition {
        name,
        label,
        description,
        parameters,
        execution_mode,
        mutated_paths,
    })
}

/// A `ToolResult` as the tool sends it: `{content: [text | image blocks], details?}`.
pub(crate) fn parse_result(value: Value) -> Result<ToolResult, String> {
    let Value::Object(mut object) = value else {
        return Err("a result must be an object with \"content\"".to_owned());
    };
    let Some(Value::Array(blocks)) = object.remove("content") else {
        return Err("\"content\" must be an array".to_owned());
    };
    let mut content = Vec::with_capacity(blocks.len());
    for block in blocks {
        let kind = block.get("type").and_then(Value::as_str).unwrap_or_default().to_owned();
        match serde_json::from_value::<ContentBlock>(block) {
            Ok(block @ (ContentBlock::Text(_) | ContentBlock::Image(_))) => content.push(block),
            _ if kind == "text" => return Err("a text block needs \"text\"".to_owned()),
            _ if kind == "image" => return Err("an image block needs \"data\" and \"mimeType\"".to_owned()),
            _ => return Err(format!("unknown content block type \"{kind}\"")),
        }
    }
    Ok(ToolResult {
        content,
        details: object.remove("details").unwrap_or(Value::Null),
        ..ToolResult::default()
    })
}

/// Why a process stopped serving calls; formatted per call by [`Failure::message`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Failure {
    /// The process exited (or closed its stdout) on its own.
    Exited {
        /// `exit code <n>` or `signal <n>`.
        status: String,
        /// Its last non-blank stderr line.
        stderr: Option<String>,
    },
    /// A call got no answer within the time limit; the process was killed.
    TimedOut {
        /// The tool whose call timed out.
        tool: String,
        /// The limit.
        after: Duration,
    },
    /// The process wrote a line that is not JSON; it was killed.
    InvalidJson {
        /// The start of the line.
        start: String,
    },
    /// The process wrote a line longer than pi accepts; it was killed.
    LineTooLong,
    /// pi stopped the process (session shutdown, tools dropped).
    Stopped,
}

impl Failure {
    /// The error text of a call of `tool` that this failure ended.
    pub(crate) fn message(&self, tool: &str) -> String {
        match self {
            Failure::Exited { status, stderr: None } => {
                format!("Tool \"{tool}\" process exited unexpectedly ({status})")
            }
            Failure::Exited {
                status,
                stderr: Some(line),
            } => format!("Tool \"{tool}\" process exited unexpectedly ({status}): {line}"),
            Failure::TimedOut { tool, after } => format!("Tool \"{tool}\" timed out after {} s", seconds(*after)),
            Failure::InvalidJson { start } => format!("Tool \"{tool}\" wrote invalid JSON: {start}"),
            Failure::LineTooLong => format!("Tool \"{tool}\" wrote a line longer than {} MiB", MAX_LINE >> 20),
            Failure::Stopped => format!("Tool \"{tool}\" process was stopped"),
        }
    }
}

/// `300`, `1.5`, `0.2`: a duration in seconds, without trailing zeros.
pub(crate) fn seconds(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis.is_multiple_of(1000) {
        return (millis / 1000).to_string();
    }
    let text = format!("{}.{:03}", millis / 1000, millis % 1000);
    text.trim_end_matches('0').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_classified() {
        assert_eq!(parse_line(b"  \r"), Ok(Incoming::Ignored));
        assert_eq!(parse_line(b"not json"), Err(()));
        assert_eq!(parse_line(b"[1, 2]"), Ok(Incoming::Ignored));
        assert_eq!(
            parse_line(br#"{"jsonrpc":"2.0","id":7,"result":null}"#),
            Ok(Incoming::Response {
                id: 7,
                outcome: Ok(Value::Null)
            })
        );
        assert_eq!(
            parse_line(br#"{"id":3,"error":{"code":-32000,"message":"no"}}"#),
            Ok(Incoming::Response {
                id: 3,
                outcome: Err(RpcError::new(-32000, "no"))
            })
        );
        assert_eq!(
            parse_line(br#"{"id":"a","method":"ui.confirm","params":{"title":"t"}}"#),
            Ok(Incoming::Request {
                id: json!("a"),
                method: "ui.confirm".into(),
                params: json!({"title": "t"})
            })
        );
        assert_eq!(
            parse_line(br#"{"method":"update"}"#),
            Ok(Incoming::Notification {
                method: "update".into(),
                params: Value::Null
            })
        );
        // A response to an id pi never used (not an unsigned integer) is ignored.
        assert_eq!(parse_line(br#"{"id":"x","result":1}"#), Ok(Incoming::Ignored));
    }

    #[test]
    fn bad_lines_are_quoted_briefly() {
        assert_eq!(start_of(b"  oops \n"), "oops");
        let long = "x".repeat(100);
        assert_eq!(start_of(long.as_bytes()), format!("{}…", "x".repeat(80)));
    }

    #[test]
    fn definitions_are_checked() {
        let ok = json!({"tools": [{"name": "a", "description": "d", "parameters": {"type": "object"},
            "executionMode": "sequential", "mutatedPaths": ["path", "targets"]}]});
        let tools = parse_definitions(&ok).unwrap();
        assert_eq!(tools[0].execution_mode, Some(ToolExecutionMode::Sequential));
        assert_eq!(tools[0].mutated_paths, ["path", "targets"]);
        let cases = [
            (json!({}), "the answer has no \"tools\" array"),
            (json!({"tools": []}), "the answer defines no tools"),
            (json!({"tools": [{}]}), "tool #1: \"name\" must be a string"),
            (
                json!({"tools": [{"name": "a b", "description": "d", "parameters": {}}]}),
                "tool \"a b\": \"name\" must be 1 to 64 letters, digits, \"_\" or \"-\"",
            ),
            (
                json!({"tools": [{"name": "a", "description": "d"}]}),
                "tool \"a\": \"parameters\" must be a JSON Schema object",
            ),
            (
                json!({"tools": [{"name": "a", "description": "d", "parameters": {}, "executionMode": "x"}]}),
                "tool \"a\": \"executionMode\" must be \"parallel\" or \"sequential\"",
            ),
            (
                json!({"tools": [{"name": "a", "description": "d", "parameters": {}, "mutatedPaths": "path"}]}),
                "tool \"a\": \"mutatedPaths\" must be an array of parameter names",
            ),
            (
                json!({"tools": [{"name": "a", "description": "d", "parameters": {}, "mutatedPaths": [""]}]}),
                "tool \"a\": \"mutatedPaths\" must be an array of parameter names",
            ),
            (
                json!({"tools": [{"name": "a", "description": "d", "parameters": {}},
                    {"name": "a", "description": "d", "parameters": {}}]}),
                "tool \"a\" is defined twice",
            ),
        ];
        for (answer, error) in cases {
            assert_eq!(parse_definitions(&answer).unwrap_err(), error);
        }
    }

    #[test]
    fn results_are_checked() {
        let result = parse_result(json!({"content": [{"type": "text", "text": "hi"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"}], "details": {"n": 1}}))
        .unwrap();
        assert_eq!(result.content.len(), 2);
        assert_eq!(result.details, json!({"n": 1}));
        assert_eq!(parse_result(json!({"content": []})).unwrap().details, Value::Null);
        assert_eq!(
            parse_result(json!("hi")).unwrap_err(),
            "a result must be an object with \"content\""
        );
        assert_eq!(
            parse_result(json!({"content": [{"type": "toolCall"}]})).unwrap_err(),
            "unknown content block type \"toolCall\""
        );
        assert_eq!(
            parse_result(json!({"content": [{"type": "text"}]})).unwrap_err(),
            "a text block needs \"text\""
        );
    }

    #[test]
    fn failure_texts() {
        let exited = Failure::Exited {
            status: "exit code 3".into(),
            stderr: Some("boom".into()),
        };
        assert_eq!(
            exited.message("hello"),
            "Tool \"hello\" process exited unexpectedly (exit code 3): boom"
        );
        let timed_out = Failure::TimedOut {
            tool: "slow".into(),
            after: Duration::from_millis(1500),
        };
        assert_eq!(timed_out.message("other"), "Tool \"slow\" timed out after 1.5 s");
        assert_eq!(seconds(Duration::from_secs(300)), "300");
        assert_eq!(seconds(Duration::from_millis(200)), "0.2");
    }

    #[test]
    fn errors_are_tool_errors_unless_marked_as_exceptions() {
        let with_data = |data: Value| RpcError {
            data: Some(data),
            ..RpcError::new(SERVER_ERROR, "x")
        };
        assert!(
            !RpcError::new(SERVER_ERROR, "x").is_exception(),
            "no data: a tool error"
        );
        assert!(
            !with_data(json!({"details": 1})).is_exception(),
            "no kind: a tool error"
        );
        assert!(!with_data(json!({"kind": "tool"})).is_exception());
        assert!(!with_data(json!({"kind": "other"})).is_exception());
        assert!(!with_data(json!({"kind": true})).is_exception());
        assert!(with_data(json!({"kind": ERROR_KIND_EXCEPTION})).is_exception());
    }

    #[test]
    fn error_details_reach_the_tool_error() {
        let mut error = RpcError::new(SERVER_ERROR, "Cell taken");
        error.data = Some(json!({"details": {"board": []}}));
        let error = error.into_tool_error();
        assert_eq!(error.message(), "Cell taken");
        assert_eq!(error.details(), Some(&json!({"board": []})));
    }
}
