//! The request of `mistral-conversations`, built from the agent transcript the way pi-ai 0.73.1's
//! Mistral provider builds it, in the wire form Mistral's SDK gives it (snake case, the SDK's
//! field order):
//!
//! * `model`, `temperature`, `max_tokens` (the call's, else the model's at most 32000),
//!   `stream: true`, `messages`, `tools`, `tool_choice`, `reasoning_effort`, `prompt_mode`;
//! * `messages`: the system prompt as a `system` message; user messages as a string or as
//!   `text` / `image_url` (a data URL) parts; assistant messages as `text` and `thinking` parts
//!   (blank ones left out) with their `tool_calls` (arguments as a JSON string, `index: 0`) and
//!   `prefix: false`; tool results as `tool` messages whose text is pi's (`[tool error] ` before a
//!   failure's, placeholders for no output or images), followed by their images.
//!   Another model's thinking goes as text; models without image input get pi's placeholders.
//! * Thinking: a reasoning model asked for a level gets `reasoning_effort` (the level's
//!   `thinkingLevelMap` value, else `high`) when it is one of the models that take an effort
//!   (`mistral-small-2603`, `mistral-small-latest`, `mistral-medium-3.5`), else
//!   `prompt_mode: "reasoning"`.

use std::borrow::Cow;
use std::collections::HashMap;

use pi_agent_core::{
    AgentMessage, AssistantMessage, ContentBlock, LlmContext, Model, StreamOptions, ToolResultMessage, UserContent,
};
use serde_json::{Map, Value, json};

use super::ids::IdNormalizer;
use crate::transform::{max_output_tokens, prepare_messages, requested_level};

/// What replaces the images of a user message for a model without image input (pi-ai's).
const USER_IMAGE_PLACEHOLDER: &str = "(image omitted: model does not support images)";

/// What replaces the images of a tool result for a model without image input (pi-ai's).
const TOOL_IMAGE_PLACEHOLDER: &str = "(tool image omitted: model does not support images)";

/// The models that take `reasoning_effort` rather than `prompt_mode`.
const EFFORT_MODELS: [&str; 3] = ["mistral-small-2603", "mistral-small-latest", "mistral-medium-3.5"];

/// The request headers: the key as a bearer token, `accept: text/event-stream`, then the model's
/// and the call's headers (a later one replaces an earlier one of the same name, ignoring case),
/// and `x-affinity: <session id>` unless one of them set it.
pub(crate) fn headers(model: &Model, options: &StreamOptions, api_key: Option<&str>) -> Vec<(String, String)> {
    let mut own = vec![("accept".to_owned(), "text/event-stream".to_owned())];
    if let Some(key) = api_key {
        own.push(("authorization".to_owned(), format!("Bearer {key}")));
    }
    let mut headers = crate::google::headers(own, model, options);
    let given = model.headers.iter().flatten().chain(&options.headers);
    let has_affinity = given
        .into_iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("x-affinity"));
    if let Some(session) = options.session_id.as_deref().filter(|id| !id.is_empty())
        && !has_affinity
    {
        headers.push(("x-affinity".to_owned(), session.to_owned()));
    }
    headers
}

/// The JSON body of a streaming chat-completions request.
pub(crate) fn body(model: &Model, context: &LlmContext<'_>, options: &StreamOptions) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    if let Some(temperature) = options.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if let Some(max_tokens) = max_output_tokens(model, options) {
        body.insert("max_tokens".into(), json!(max_tokens));
    }
    body.insert("stream".into(), json!(true));
    body.insert("messages".into(), Value::Array(messages(model, context)));
    if !context.tools.is_empty() {
        let tools: Vec<Value> = context
            .tools
            .iter()
            .map(|tool| {
                json!({"type": "function", "function": {
                    "name": tool.name(),
                    "description": tool.description(),
                    "strict": false,
                    "parameters": tool.parameters().schema(),
                }})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(choice) = &options.tool_choice {
        body.insert("tool_choice".into(), crate::openai_completions::tool_choice(choice));
    }
    if model.reasoning
        && let Some(level) = requested_level(model, options)
    {
        if EFFORT_MODELS.contains(&model.id.as_str()) {
            let effort = model
                .thinking_level_map
                .as_ref()
                .and_then(|map| map.get(level.name()))
                .and_then(Option::clone)
                .unwrap_or_else(|| "high".to_owned());
            body.insert("reasoning_effort".into(), json!(effort));
        } else {
            body.insert("prompt_mode".into(), json!("reasoning"));
        }
    }
    Value::Object(body)
}

fn image_url(mime_type: &str, data: &str) -> Value {
    json!({"type": "image_url", "image_url": format!("data:{mime_type};base64,{data}")})
}

/// The `messages` array.
pub(crate) fn messages(model: &Model, context: &LlmContext<'_>) -> Vec<Value> {
    let accepts_images = model.input.iter().any(|kind| kind == "image");
    let prepared: Vec<Cow<'_, AgentMessage>> = prepare_messages(context.messages);
    let mut ids = IdNormalizer::default();
    // Ids of another model's calls, renamed to Mistral's form.
    let mut renamed: HashMap<String, String> = HashMap::new();
    let mut out = Vec::with_capacity(prepared.len() + 1);
    if !context.system_prompt.is_empty() {
        out.push(json!({"role": "system", "content": context.system_prompt}));
    }
    for message in &prepared {
        match message.as_ref() {
            AgentMessage::User(user) => {
                if let Some(content) = user_content(&user.content, accepts_images) {
                    out.push(json!({"role": "user", "content": content}));
                }
            }
            AgentMessage::Assistant(assistant) => {
                if let Some(message) = assistant_message(model, assistant, &mut ids, &mut renamed) {
                    out.push(message);
                }
            }
            AgentMessage::ToolResult(result) => out.push(tool_message(result, accepts_images, &renamed)),
            AgentMessage::Custom(_) => {}
        }
    }
    out
}

/// A user message's content: its text, or its parts; `None` for a message of blocks that leaves
/// none.
fn user_content(content: &UserContent, accepts_images: bool) -> Option<Value> {
    match content {
        UserContent::Text(text) => Some(json!(text)),
        UserContent::Blocks(blocks) => {
            let mut parts = Vec::with_capacity(blocks.len());
            let mut after_placeholder = false;
            for block in blocks {
                match block {
                    ContentBlock::Text(text) => {
                        after_placeholder = text.text == USER_IMAGE_PLACEHOLDER;
                        parts.push(json!({"type": "text", "text": text.text}));
                    }
                    ContentBlock::Image(image) if accepts_images => {
                        parts.push(image_url(&image.mime_type, &image.data));
                    }
                    ContentBlock::Image(_) => {
                        if !after_placeholder {
                            parts.push(json!({"type": "text", "text": USER_IMAGE_PLACEHOLDER}));
                        }
                        after_placeholder = true;
                    }
                    _ => {}
                }
            }
            (!parts.is_empty()).then_some(Value::Array(parts))
        }
    }
}

/// An assistant message: its non-blank text and thinking, its tool calls; `None` when it has
/// neither.
fn assistant_message(
    model: &Model,
    message: &AssistantMessage,
    ids: &mut IdNormalizer,
    renamed: &mut HashMap<String, String>,
) -> Option<Value> {
    let same_model = message.provider == model.provider && message.api == model.api && message.model == model.id;
    let mut parts = Vec::new();
    let mut calls = Vec::new();
    for block in &message.content {
        match block {
            ContentBlock::Text(text) if !text.text.trim().is_empty() => {
                parts.push(json!({"type": "text", "text": text.text}));
            }
            ContentBlock::Thinking(thinking) => {
                // Redacted thinking is only for the model that made it.
                if (thinking.redacted == Some(true) && !same_model) || thinking.thinking.trim().is_empty() {
                    continue;
                }
                if same_model {
                    parts.push(json!({"type": "thinking", "thinking": [{"type": "text", "text": thinking.thinking}]}));
                } else {
                    parts.push(json!({"type": "text", "text": thinking.thinking}));
                }
            }
            ContentBlock::ToolCall(call) => {
                let id = if same_model {
                    call.id.clone()
                } else {
                    let id = ids.normalize(&call.id);
                    if id != call.id {
                        renamed.insert(call.id.clone(), id.clone());
                    }
                    id
                };
                let arguments = if call.arguments.is_null() {
                    "{}".to_owned()
                } else {
                    call.arguments.to_string()
                };
                calls.push(json!({
                    "id": id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": arguments},
                    "index": 0,
                }));
            }
            _ => {}
        }
    }
    if parts.is_empty() && calls.is_empty() {
        return None;
    }
    let mut out = Map::new();
    out.insert("role".into(), json!("assistant"));
    if !parts.is_empty() {
        out.insert("content".into(), Value::Array(parts));
    }
    if !calls.is_empty() {
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    out.insert("prefix".into(), json!(false));
    Some(Value::Object(out))
}

/// The text of a tool result as pi-ai words it.
fn result_text(text: &str, has_images: bool, accepts_images: bool, is_error: bool) -> String {
    let prefix = if is_error { "[tool error] " } else { "" };
    let trimmed = text.trim();
    if !trimmed.is_empty() {
        return format!("{prefix}{trimmed}");
    }
    let text = match (has_images, accepts_images) {
        (true, true) => "(see attached image)",
        (true, false) => "(image omitted: model does not support images)",
        (false, _) => "(no tool output)",
    };
    format!("{prefix}{text}")
}

/// A `tool` message: the result's text, then its images for a model that takes them.
fn tool_message(result: &ToolResultMessage, accepts_images: bool, renamed: &HashMap<String, String>) -> Value {
    // A model without image input gets one placeholder for each run of images, as text.
    let mut texts: Vec<&str> = Vec::new();
    let mut images = Vec::new();
    let mut after_placeholder = false;
    for block in &result.content {
        match block {
            ContentBlock::Text(text) => {
                after_placeholder = !accepts_images && text.text == TOOL_IMAGE_PLACEHOLDER;
                texts.push(&text.text);
            }
            ContentBlock::Image(image) if accepts_images => images.push(image_url(&image.mime_type, &image.data)),
            ContentBlock::Image(_) => {
                if !after_placeholder {
                    texts.push(TOOL_IMAGE_PLACEHOLDER);
                }
                after_placeholder = true;
            }
            _ => {}
        }
    }
    let mut content = vec![json!({
        "type": "text",
        "text": result_text(&texts.join("\n"), !images.is_empty(), accepts_images, result.is_error),
    })];
    content.extend(images);
    let id = renamed.get(&result.tool_call_id).unwrap_or(&result.tool_call_id);
    json!({"role": "tool", "content": content, "tool_call_id": id, "name": result.tool_name})
}
