//! The request body of `POST {baseUrl}/responses`, built from the agent transcript.
//!
//! * The system prompt is the first `input` item, `{role: "developer"}` for reasoning models and
//!   `{role: "system"}` otherwise (what pi-ai's provider sends; `instructions` is not used).
//! * User messages become `{role: "user", content: [input_text | input_image]}`; images are left
//!   out for text-only models and a message left empty is skipped.
//! * Assistant messages become a sequence of items: each replayable thinking block its stored
//!   `reasoning` item, each text block an output `message` (with its id when the text signature
//!   holds one), each tool call a `function_call` (`call_id` and `id` split from pi's
//!   `call_id|item_id`). Thinking without a stored reasoning item that carries
//!   `encrypted_content` (another provider's or model's, a redacted one, or reasoning produced
//!   without `include`) is left out, and so are the `fc_…` item ids of calls that followed it, which
//!   the API would otherwise try to pair with the missing reasoning item.
//! * Tool results become `function_call_output` items with their text (`(see attached image)`
//!   when they hold only images), followed by a user message carrying the images for models that
//!   accept them.
//! * [`prepare_messages`] runs first: failed and aborted responses are left out and orphaned
//!   tool calls get the synthetic `No result provided` result.
//!
//! The body also carries `stream: true`, `store: false`, `prompt_cache_key` (the session id),
//! `max_output_tokens`, `temperature`, `tools` (`strict: false`), `tool_choice`, and — for a
//! reasoning model with a thinking level — `reasoning: {effort, summary: "auto"}` with
//! `include: ["reasoning.encrypted_content"]` so the reasoning can be replayed statelessly.

use std::borrow::Cow;

use pi_agent_core::{
    AgentMessage, AssistantMessage, ContentBlock, LlmContext, Model, StreamOptions, ThinkingContent, ThinkingLevel,
    ToolChoice, ToolResultMessage, UserContent,
};
use serde_json::{Map, Value, json};

use crate::transform::{max_output_tokens, prepare_messages, requested_level};

/// Text sent as the output of a tool result that holds only images.
const IMAGE_ONLY_RESULT: &str = "(see attached image)";

/// Text introducing the images of a tool result, sent as a user message.
const TOOL_IMAGES_INTRO: &str = "Attached image(s) from tool result:";

/// Longest item id the API accepts.
const MAX_ID_CHARS: usize = 64;

/// The request headers: `authorization: Bearer <key>` when there is a key, then the model's and
/// the call's headers (later ones replace earlier ones of the same name, ignoring case).
pub(crate) fn headers(model: &Model, options: &StreamOptions, api_key: Option<&str>) -> Vec<(String, String)> {
    let mut headers: Vec<(String, String)> = Vec::new();
    let mut set = |name: &str, value: &str| {
        headers.retain(|(existing, _)| !existing.eq_ignore_ascii_case(name));
        headers.push((name.to_owned(), value.to_owned()));
    };
    if let Some(key) = api_key {
        set("authorization", &format!("Bearer {key}"));
    }
    for (name, value) in model.headers.iter().flatten() {
        set(name, value);
    }
    for (name, value) in &options.headers {
        set(name, value);
    }
    headers
}

/// The JSON body of a streaming Responses request.
pub(crate) fn body(model: &Model, context: &LlmContext<'_>, options: &StreamOptions) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), Value::String(model.id.clone()));
    body.insert("input".into(), Value::Array(input(model, context)));
    body.insert("stream".into(), Value::Bool(true));
    if let Some(session) = options.session_id.as_deref().filter(|id| !id.is_empty()) {
        body.insert("prompt_cache_key".into(), Value::String(session.to_owned()));
    }
    body.insert("store".into(), Value::Bool(false));
    if let Some(max_tokens) = max_output_tokens(model, options) {
        body.insert("max_output_tokens".into(), Value::from(max_tokens));
    }
    if let Some(temperature) = options.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if !context.tools.is_empty() {
        let tools = context
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "name": tool.name(),
                    "description": tool.description(),
                    "parameters": tool.parameters().schema(),
                    "strict": false,
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        if let Some(choice) = &options.tool_choice {
            body.insert("tool_choice".into(), tool_choice(choice));
        }
    }
    if model.reasoning
        && let Some(level) = requested_level(model, options)
    {
        let effort = match model.thinking_level_map.as_ref().and_then(|map| map.get(level.name())) {
            Some(Some(mapped)) => mapped.clone(),
            _ => effort(level).to_owned(),
        };
        body.insert("reasoning".into(), json!({"effort": effort, "summary": "auto"}));
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    } else if model.reasoning && model.provider != "github-copilot" {
        // A reasoning model asked not to think is told so (pi-ai: the map's `off` value, else
        // `none`), unless its `thinkingLevelMap` marks `off` unsupported.
        match model.thinking_level_map.as_ref().and_then(|map| map.get("off")) {
            Some(None) => {}
            Some(Some(off)) => {
                body.insert("reasoning".into(), json!({"effort": off}));
            }
            None => {
                body.insert("reasoning".into(), json!({"effort": "none"}));
            }
        }
    }
    Value::Object(body)
}

/// `tool_choice`: a string for auto/none/required, `{type: "function", name}` to force one tool.
pub(crate) fn tool_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Tool(name) => json!({"type": "function", "name": name}),
    }
}

/// The `reasoning.effort` of a level (`max` becomes `xhigh`, the highest the API knows).
pub(crate) fn effort(level: ThinkingLevel) -> &'static str {
    match level {
        ThinkingLevel::Off => "none",
        ThinkingLevel::Minimal => "minimal",
        ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        ThinkingLevel::High => "high",
        ThinkingLevel::Xhigh | ThinkingLevel::Max => "xhigh",
    }
}

/// Splits pi's `call_id|item_id` tool-call id; ids of other APIs have no item id.
pub(crate) fn split_call_id(id: &str) -> (&str, Option<&str>) {
    match id.split_once('|') {
        Some((call, item)) => (call, Some(item).filter(|item| !item.is_empty())),
        None => (id, None),
    }
}

fn image_part(data: &str, mime_type: &str) -> Value {
    json!({"type": "input_image", "detail": "auto", "image_url": format!("data:{mime_type};base64,{data}")})
}

/// The `input` array.
pub(crate) fn input(model: &Model, context: &LlmContext<'_>) -> Vec<Value> {
    let accepts_images = model.input.iter().any(|kind| kind == "image");
    let prepared: Vec<Cow<'_, AgentMessage>> = prepare_messages(context.messages);
    let mut out = Vec::with_capacity(prepared.len() + 1);
    if !context.system_prompt.is_empty() {
        let role = if model.reasoning { "developer" } else { "system" };
        out.push(json!({"role": role, "content": context.system_prompt}));
    }
    for message in &prepared {
        match message.as_ref() {
            AgentMessage::User(user) => {
                if let Some(content) = user_content(&user.content, accepts_images) {
                    out.push(json!({"role": "user", "content": content}));
                }
            }
            AgentMessage::Assistant(assistant) => assistant_items(model, assistant, &mut out),
            AgentMessage::ToolResult(result) => tool_result_items(result, accepts_images, &mut out),
            AgentMessage::Custom(_) => {}
        }
    }
    out
}

/// User content as `input_text` / `input_image` parts; `None` when nothing is left.
fn user_content(content: &UserContent, accepts_images: bool) -> Option<Value> {
    let parts: Vec<Value> = match content {
        UserContent::Text(text) => vec![json!({"type": "input_text", "text": text})],
        UserContent::Blocks(blocks) => blocks
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text(text) => Some(json!({"type": "input_text", "text": text.text})),
                ContentBlock::Image(image) if accepts_images => Some(image_part(&image.data, &image.mime_type)),
                _ => None,
            })
            .collect(),
    };
    (!parts.is_empty()).then_some(Value::Array(parts))
}

/// The stored `reasoning` item of a thinking block, if it can be replayed: an object of type
/// `reasoning` with its encrypted content. (With `store: false` the server keeps nothing, so an
/// item carrying only its id would be looked up in vain and fail the request.)
fn reasoning_item(thinking: &ThinkingContent) -> Option<Value> {
    let signature = thinking.thinking_signature.as_deref()?;
    let item: Value = serde_json::from_str(signature).ok()?;
    let encrypted = item
        .get("encrypted_content")
        .and_then(Value::as_str)
        .is_some_and(|content| !content.is_empty());
    let replayable = item.get("type").and_then(Value::as_str) == Some("reasoning") && encrypted;
    replayable.then_some(item)
}

/// The output-message id a text signature holds: the signature itself, or the `id` of pi's
/// newer `{"v":1,"id":…}` form, when it looks like a message id.
fn message_id(signature: Option<&str>) -> Option<String> {
    let signature = signature?;
    let id = if signature.starts_with('{') {
        let parsed: Value = serde_json::from_str(signature).ok()?;
        parsed.get("id")?.as_str()?.to_owned()
    } else {
        signature.to_owned()
    };
    (id.starts_with("msg") && id.chars().count() <= MAX_ID_CHARS).then_some(id)
}

/// The items of one assistant message, in block order.
fn assistant_items(model: &Model, message: &AssistantMessage, out: &mut Vec<Value>) {
    let same_model = message.api == model.api && message.provider == model.provider && message.model == model.id;
    let mut skipped_reasoning = false;
    for block in &message.content {
        match block {
            ContentBlock::Thinking(thinking) => match reasoning_item(thinking).filter(|_| same_model) {
                Some(item) => out.push(item),
                None => skipped_reasoning = true,
            },
            ContentBlock::Text(text) => {
                let mut item = Map::new();
                item.insert("type".into(), json!("message"));
                item.insert("role".into(), json!("assistant"));
                item.insert(
                    "content".into(),
                    json!([{"type": "output_text", "text": text.text, "annotations": []}]),
                );
                item.insert("status".into(), json!("completed"));
                if let Some(id) = message_id(text.text_signature.as_deref()) {
                    item.insert("id".into(), Value::String(id));
                }
                out.push(Value::Object(item));
            }
            ContentBlock::ToolCall(call) => {
                let (call_id, item_id) = split_call_id(&call.id);
                let arguments = serde_json::to_string(&call.arguments).unwrap_or_else(|_| "{}".to_owned());
                let mut item = Map::new();
                item.insert("type".into(), json!("function_call"));
                if let Some(item_id) = item_id.filter(|id| same_model && !skipped_reasoning && id.len() <= MAX_ID_CHARS)
                {
                    item.insert("id".into(), json!(item_id));
                }
                item.insert("call_id".into(), json!(call_id));
                item.insert("name".into(), json!(call.name));
                item.insert("arguments".into(), Value::String(arguments));
                out.push(Value::Object(item));
            }
            ContentBlock::Image(_) => {}
        }
    }
}

/// A `function_call_output` item, then a user message with the result's images.
fn tool_result_items(result: &ToolResultMessage, accepts_images: bool, out: &mut Vec<Value>) {
    let text: Vec<&str> = result.content.iter().filter_map(ContentBlock::as_text).collect();
    let text = text.join("\n");
    let images: Vec<Value> = result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Image(image) => Some(image_part(&image.data, &image.mime_type)),
            _ => None,
        })
        .collect();
    let output = if text.is_empty() && !images.is_empty() {
        IMAGE_ONLY_RESULT.to_owned()
    } else {
        text
    };
    let (call_id, _) = split_call_id(&result.tool_call_id);
    out.push(json!({"type": "function_call_output", "call_id": call_id, "output": output}));
    if accepts_images && !images.is_empty() {
        let mut parts = vec![json!({"type": "input_text", "text": TOOL_IMAGES_INTRO})];
        parts.extend(images);
        out.push(json!({"role": "user", "content": parts}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_ids_split_on_the_bar() {
        assert_eq!(split_call_id("call_1|fc_2"), ("call_1", Some("fc_2")));
        assert_eq!(split_call_id("toolu_9"), ("toolu_9", None));
        assert_eq!(split_call_id("call_1|"), ("call_1", None));
    }

    #[test]
    fn message_ids_from_signatures() {
        assert_eq!(message_id(Some("msg_abc")).as_deref(), Some("msg_abc"));
        assert_eq!(
            message_id(Some(r#"{"v":1,"id":"msg_x","phase":"final_answer"}"#)).as_deref(),
            Some("msg_x")
        );
        assert_eq!(message_id(Some("reasoning_content")), None);
        assert_eq!(message_id(Some(&format!("msg_{}", "a".repeat(80)))), None);
        assert_eq!(message_id(Some("{broken")), None);
        assert_eq!(message_id(None), None);
    }

    #[test]
    fn only_stored_reasoning_items_replay() {
        let thinking = |signature: Option<&str>| ThinkingContent {
            thinking: "t".into(),
            thinking_signature: signature.map(str::to_owned),
            redacted: None,
        };
        let item = r#"{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"enc"}"#;
        assert_eq!(reasoning_item(&thinking(Some(item))).unwrap()["id"], "rs_1");
        assert!(reasoning_item(&thinking(Some("EqQBCkYIBx…anthropic"))).is_none());
        assert!(reasoning_item(&thinking(Some(r#"{"type":"reasoning"}"#))).is_none());
        let id_only = r#"{"type":"reasoning","id":"rs_2","summary":[]}"#;
        assert!(reasoning_item(&thinking(Some(id_only))).is_none());
        assert!(reasoning_item(&thinking(None)).is_none());
    }

    #[test]
    fn efforts_and_choices() {
        assert_eq!(effort(ThinkingLevel::Minimal), "minimal");
        assert_eq!(effort(ThinkingLevel::Max), "xhigh");
        assert_eq!(tool_choice(&ToolChoice::Required), json!("required"));
        assert_eq!(
            tool_choice(&ToolChoice::Tool("resolve".into())),
            json!({"type": "function", "name": "resolve"})
        );
    }
}
