//! Messages and content blocks, serialised exactly as pi writes them.
//!
//! pi's transcript is a list of [`AgentMessage`]s: `user`, `assistant` and `toolResult` messages
//! that go to the model, plus app-defined custom messages (any other `role`) that a
//! `convert_to_llm` function maps or drops. Field names are camelCase and content blocks are
//! tagged by `type`, so sessions and RPC payloads written by pi load here unchanged.
//!
//! ```
//! use pi_agent_core::{AgentMessage, ContentBlock};
//!
//! let json = r#"{"role":"user","content":"hi","timestamp":1}"#;
//! let message: AgentMessage = serde_json::from_str(json).unwrap();
//! assert_eq!(serde_json::to_string(&message).unwrap(), json);
//! ```

use std::time::{SystemTime, UNIX_EPOCH};

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// Milliseconds since the Unix epoch, the unit of every `timestamp` field.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// One block of message content: text, an image, model thinking or a tool call.
///
/// User and tool-result messages carry only [`ContentBlock::Text`] and [`ContentBlock::Image`];
/// assistant messages carry text, thinking and tool calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ContentBlock {
    /// Plain text.
    Text(TextContent),
    /// A base64-encoded image.
    Image(ImageContent),
    /// Model reasoning.
    Thinking(ThinkingContent),
    /// A request from the model to run a tool.
    ToolCall(ToolCall),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent::new(text))
    }

    /// An image block from base64 `data` and its MIME type.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image(ImageContent {
            data: data.into(),
            mime_type: mime_type.into(),
        })
    }

    /// The text of a text block, `None` for every other kind.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }

    /// The tool call of a tool-call block, `None` for every other kind.
    pub fn as_tool_call(&self) -> Option<&ToolCall> {
        match self {
            ContentBlock::ToolCall(call) => Some(call),
            _ => None,
        }
    }
}

/// A text content block (`{"type":"text","text":…}`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Provider signature of the text (OpenAI Responses message id), kept for replay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_signature: Option<String>,
}

impl TextContent {
    /// A text block without a signature.
    pub fn new(text: impl Into<String>) -> Self {
        TextContent {
            text: text.into(),
            text_signature: None,
        }
    }
}

/// An image content block (`{"type":"image","data":…,"mimeType":…}`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Base64-encoded image bytes.
    pub data: String,
    /// MIME type such as `image/png`.
    pub mime_type: String,
}

/// A thinking content block (`{"type":"thinking","thinking":…}`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingContent {
    /// The reasoning text.
    pub thinking: String,
    /// Provider signature that must be sent back with the thinking (Anthropic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_signature: Option<String>,
    /// True when the provider redacted the reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redacted: Option<bool>,
}

/// A tool call requested by the model (`{"type":"toolCall","id","name","arguments"}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// Provider-assigned call id; the matching tool result carries it as `toolCallId`.
    pub id: String,
    /// Name of the tool to run.
    pub name: String,
    /// Arguments as the model sent them (an object).
    pub arguments: Value,
    /// Google thought signature, kept for replay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
    /// Tool namespace, for providers that group tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

impl ToolCall {
    /// A tool call with the given id, name and arguments.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
            thought_signature: None,
            namespace: None,
        }
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    /// The model finished its answer.
    #[default]
    Stop,
    /// The output-token limit cut the answer off.
    Length,
    /// The model asked for tool calls.
    ToolUse,
    /// The request failed; `errorMessage` says why.
    Error,
    /// The request was aborted.
    Aborted,
    /// A partial message still streaming (pi writes it for in-progress snapshots).
    Pending,
    /// The provider deferred the answer (newest pi).
    Deferred,
}

/// Token cost in dollars, split like [`Usage`].
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    /// Cost of input tokens.
    #[serde(serialize_with = "js_number")]
    pub input: f64,
    /// Cost of output tokens.
    #[serde(serialize_with = "js_number")]
    pub output: f64,
    /// Cost of cache reads.
    #[serde(serialize_with = "js_number")]
    pub cache_read: f64,
    /// Cost of cache writes.
    #[serde(serialize_with = "js_number")]
    pub cache_write: f64,
    /// Sum of the above.
    #[serde(serialize_with = "js_number")]
    pub total: f64,
}

/// Writes a float the way JavaScript's `JSON.stringify` does: whole numbers without `.0`.
pub(crate) fn js_number<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    const MAX_SAFE: f64 = 9_007_199_254_740_991.0;
    if value.fract() == 0.0 && value.abs() <= MAX_SAFE {
        serializer.serialize_i64(*value as i64)
    } else {
        serializer.serialize_f64(*value)
    }
}

/// Token usage of one model response, with its cost.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Input tokens not read from cache.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write: u64,
    /// All tokens of the exchange.
    pub total_tokens: u64,
    /// Cost of those tokens.
    pub cost: Cost,
}

/// Content of a user message: pi accepts a bare string or a list of blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum UserContent {
    /// `"content": "text"`.
    Text(String),
    /// `"content": [{"type":"text",…}, {"type":"image",…}]`.
    Blocks(Vec<ContentBlock>),
}

impl UserContent {
    /// The concatenated text of the content (image blocks are skipped).
    pub fn text(&self) -> String {
        match self {
            UserContent::Text(text) => text.clone(),
            UserContent::Blocks(blocks) => blocks.iter().filter_map(ContentBlock::as_text).collect(),
        }
    }

    /// The image blocks of the content, in order.
    ///
    /// ```
    /// use pi_agent_core::{ContentBlock, ImageContent, UserContent};
    /// let image = ImageContent { data: "aGk=".into(), mime_type: "image/png".into() };
    /// let content = UserContent::Blocks(vec![ContentBlock::text("look"), ContentBlock::Image(image.clone())]);
    /// assert_eq!(content.images(), [image]);
    /// assert!(UserContent::Text("no images".into()).images().is_empty());
    /// ```
    pub fn images(&self) -> Vec<ImageContent> {
        match self {
            UserContent::Text(_) => Vec::new(),
            UserContent::Blocks(blocks) => blocks
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::Image(image) => Some(image.clone()),
                    _ => None,
                })
                .collect(),
        }
    }
}

/// A message from the user (`role: "user"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename = "user", rename_all = "camelCase")]
pub struct UserMessage {
    /// Text or blocks.
    pub content: UserContent,
    /// Creation time, milliseconds since the epoch.
    pub timestamp: i64,
}

impl UserMessage {
    /// A user message with one text block, stamped now (pi's `prompt(text)`).
    pub fn text(text: impl Into<String>) -> Self {
        UserMessage {
            content: UserContent::Blocks(vec![ContentBlock::text(text)]),
            timestamp: now_ms(),
        }
    }
}

/// A response from the model (`role: "assistant"`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "role", rename = "assistant", rename_all = "camelCase")]
pub struct AssistantMessage {
    /// Text, thinking and tool-call blocks in the order the model produced them.
    pub content: Vec<ContentBlock>,
    /// Wire API that produced the message (`openai-completions`, `anthropic-messages`, …).
    pub api: String,
    /// Provider name (`anthropic`, `openai`, `faux`, …).
    pub provider: String,
    /// Model id.
    pub model: String,
    /// Tokens and cost.
    pub usage: Usage,
    /// Why the model stopped.
    pub stop_reason: StopReason,
    /// Creation time, milliseconds since the epoch.
    pub timestamp: i64,
    /// Provider response id, when it sends one (written after `timestamp`, where pi has it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    /// The model the provider says answered, when it names one other than [`model`](Self::model)
    /// (pi 0.73.1 records it for `openai-completions`, from the chunks' `model`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_model: Option<String>,
    /// Why the request failed, for `error` and `aborted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
}

impl AssistantMessage {
    /// The tool calls of the message, in source order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(ContentBlock::as_tool_call)
    }

    /// The concatenated text blocks of the message.
    pub fn text(&self) -> String {
        self.content.iter().filter_map(ContentBlock::as_text).collect()
    }
}

/// The result of one tool call (`role: "toolResult"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename = "toolResult", rename_all = "camelCase")]
pub struct ToolResultMessage {
    /// Id of the tool call this answers.
    pub tool_call_id: String,
    /// Name of the tool that ran.
    pub tool_name: String,
    /// What the model sees.
    pub content: Vec<ContentBlock>,
    /// Structured data for UIs, logs and state reconstruction; never sent to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// Usage of a nested model call the tool made, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Tools that become available from this point of the transcript.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_tool_names: Option<Vec<String>>,
    /// True when the call failed.
    pub is_error: bool,
    /// Creation time, milliseconds since the epoch.
    pub timestamp: i64,
}

impl ToolResultMessage {
    /// The concatenated text blocks of the result.
    pub fn text(&self) -> String {
        self.content.iter().filter_map(ContentBlock::as_text).collect()
    }
}

/// An app-defined message with a `role` other than user / assistant / toolResult.
///
/// Its fields are kept as they were written so that custom messages round-trip untouched.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomMessage {
    /// The message's role, e.g. `notification` or `bashExecution`.
    pub role: String,
    /// Every other field of the message.
    pub fields: Map<String, Value>,
}

/// Any message of the transcript.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentMessage {
    /// `role: "user"`.
    User(UserMessage),
    /// `role: "assistant"`.
    Assistant(AssistantMessage),
    /// `role: "toolResult"`.
    ToolResult(ToolResultMessage),
    /// Any other role.
    Custom(CustomMessage),
}

impl AgentMessage {
    /// The `role` string of the message.
    pub fn role(&self) -> &str {
        match self {
            AgentMessage::User(_) => "user",
            AgentMessage::Assistant(_) => "assistant",
            AgentMessage::ToolResult(_) => "toolResult",
            AgentMessage::Custom(custom) => &custom.role,
        }
    }

    /// The user message inside, if this is one.
    pub fn as_user(&self) -> Option<&UserMessage> {
        match self {
            AgentMessage::User(message) => Some(message),
            _ => None,
        }
    }

    /// The assistant message inside, if this is one.
    pub fn as_assistant(&self) -> Option<&AssistantMessage> {
        match self {
            AgentMessage::Assistant(message) => Some(message),
            _ => None,
        }
    }

    /// The tool result inside, if this is one.
    pub fn as_tool_result(&self) -> Option<&ToolResultMessage> {
        match self {
            AgentMessage::ToolResult(message) => Some(message),
            _ => None,
        }
    }

    /// A user message with one text block, stamped now.
    pub fn user(text: impl Into<String>) -> Self {
        AgentMessage::User(UserMessage::text(text))
    }
}

impl From<UserMessage> for AgentMessage {
    fn from(message: UserMessage) -> Self {
        AgentMessage::User(message)
    }
}

impl From<AssistantMessage> for AgentMessage {
    fn from(message: AssistantMessage) -> Self {
        AgentMessage::Assistant(message)
    }
}

impl From<ToolResultMessage> for AgentMessage {
    fn from(message: ToolResultMessage) -> Self {
        AgentMessage::ToolResult(message)
    }
}

impl From<CustomMessage> for AgentMessage {
    fn from(message: CustomMessage) -> Self {
        AgentMessage::Custom(message)
    }
}

impl Serialize for AgentMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            AgentMessage::User(m) => m.serialize(serializer),
            AgentMessage::Assistant(m) => m.serialize(serializer),
            AgentMessage::ToolResult(m) => m.serialize(serializer),
            AgentMessage::Custom(m) => {
                let mut map = serializer.serialize_map(Some(m.fields.len() + 1))?;
                map.serialize_entry("role", &m.role)?;
                for (key, value) in &m.fields {
                    if key != "role" {
                        map.serialize_entry(key, value)?;
                    }
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for AgentMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut fields = Map::<String, Value>::deserialize(deserializer)?;
        let role = match fields.get("role") {
            Some(Value::String(role)) => role.clone(),
            Some(_) => return Err(D::Error::custom("message `role` must be a string")),
            None => return Err(D::Error::missing_field("role")),
        };
        let message = match role.as_str() {
            "user" => AgentMessage::User(serde_json::from_value(Value::Object(fields)).map_err(D::Error::custom)?),
            "assistant" => {
                AgentMessage::Assistant(serde_json::from_value(Value::Object(fields)).map_err(D::Error::custom)?)
            }
            "toolResult" => {
                AgentMessage::ToolResult(serde_json::from_value(Value::Object(fields)).map_err(D::Error::custom)?)
            }
            _ => {
                fields.shift_remove("role");
                AgentMessage::Custom(CustomMessage { role, fields })
            }
        };
        Ok(message)
    }
}
