//! The chat-completions request: headers and the JSON body built from the transcript.
//!
//! Messages go out the way pi-ai sends them: the system prompt as a `system` message (or
//! `developer` for reasoning models when the server supports it), user text and images as
//! `text` / `image_url` parts, assistant text as a string with `tool_calls`
//! (`{id, type:"function", function:{name, arguments}}`, arguments as a JSON string), tool
//! results as `role:"tool"` messages with `tool_call_id`. Thinking blocks are not sent back
//! (unless the server wants them as text). The transcript first goes through
//! [`crate::transform::prepare_messages`], so failed assistant messages are left out and orphaned
//! tool calls get their `No result provided` result.

use std::borrow::Cow;

use pi_agent_core::{
    AgentMessage, AssistantMessage, ContentBlock, LlmContext, Model, StreamOptions, ThinkingLevel, ToolChoice,
    ToolResultMessage, UserContent,
};
use serde_json::{Map, Value, json};

use super::compat::{Compat, MaxTokensField, ThinkingFormat};
use crate::transform::{max_output_tokens, prepare_messages, requested_level};

/// Text of the assistant message inserted between tool results and a user message when the
/// server requires it.
const BRIDGE_TEXT: &str = "I have processed the tool results.";

/// Text sent for a tool result that holds only images.
const IMAGE_ONLY_RESULT: &str = "(see attached image)";

/// Text introducing the images of tool results, sent as a user message.
const TOOL_IMAGES_INTRO: &str = "Attached image(s) from tool result:";

/// The request headers: `authorization: Bearer <key>` when there is a key, then the model's and
/// the call's headers (later ones replace earlier ones of the same name).
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

/// The JSON body of a streaming chat-completions request.
pub(crate) fn body(model: &Model, context: &LlmContext<'_>, options: &StreamOptions, compat: &Compat) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), Value::String(model.id.clone()));
    body.insert("messages".into(), Value::Array(messages(model, context, compat)));
    body.insert("stream".into(), Value::Bool(true));
    // OpenAI's own server caches prompts by the session id (pi-ai sends it to no other).
    if model.base_url.contains("api.openai.com")
        && let Some(session) = options.session_id.as_deref().filter(|id| !id.is_empty())
    {
        body.insert("prompt_cache_key".into(), Value::String(session.to_owned()));
    }
    if compat.supports_usage_in_streaming {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if compat.supports_store {
        body.insert("store".into(), Value::Bool(false));
    }
    if let Some(max_tokens) = max_output_tokens(model, options) {
        let field = match compat.max_tokens_field {
            MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
            MaxTokensField::MaxTokens => "max_tokens",
        };
        body.insert(field.into(), Value::from(max_tokens));
    }
    if let Some(temperature) = options.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if !context.tools.is_empty() {
        let tools = context
            .tools
            .iter()
            .map(|tool| {
                let mut function = json!({
                    "name": tool.name(),
                    "description": tool.description(),
                    "parameters": tool.parameters().schema(),
                });
                if compat.supports_strict_mode {
                    function["strict"] = Value::Bool(false);
                }
                json!({"type": "function", "function": function})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        if let Some(choice) = &options.tool_choice {
            body.insert("tool_choice".into(), tool_choice(choice));
        }
    }
    let level = requested_level(model, options);
    if model.reasoning {
        match compat.thinking_format {
            ThinkingFormat::EnableThinking => {
                body.insert("enable_thinking".into(), Value::Bool(level.is_some()));
            }
            ThinkingFormat::DeepSeek => {
                let kind = if level.is_some() { "enabled" } else { "disabled" };
                body.insert("thinking".into(), json!({"type": kind}));
                if let Some(level) = level {
                    body.insert("reasoning_effort".into(), Value::String(effort(model, level)));
                }
            }
            ThinkingFormat::OpenRouter => {
                if let Some(level) = level {
                    body.insert("reasoning".into(), json!({"effort": effort(model, level)}));
                }
            }
            ThinkingFormat::OpenAi if compat.supports_reasoning_effort => match level {
                Some(level) => {
                    body.insert("reasoning_effort".into(), Value::String(effort(model, level)));
                }
                // At `off`, a `thinkingLevelMap` value for `off` is sent as it is (pi-ai).
                None => {
                    if let Some(Some(off)) = model.thinking_level_map.as_ref().and_then(|map| map.get("off")) {
                        body.insert("reasoning_effort".into(), Value::String(off.clone()));
                    }
                }
            },
            ThinkingFormat::OpenAi => {}
        }
    }
    Value::Object(body)
}

/// `tool_choice`: a string for auto/none/required, `{type:"function", function:{name}}` to force
/// one tool.
pub(crate) fn tool_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
    }
}

/// The `reasoning_effort` value of a level: the model's `thinkingLevelMap` entry, else its older
/// `compat.reasoningEffortMap` entry, else the level's name (`max` becomes `xhigh`, the highest
/// OpenAI knows).
fn effort(model: &Model, level: ThinkingLevel) -> String {
    if let Some(Some(mapped)) = model.thinking_level_map.as_ref().and_then(|map| map.get(level.name())) {
        return mapped.clone();
    }
    let name = level.name();
    let mapped = model
        .compat
        .as_ref()
        .and_then(|compat| compat.get("reasoningEffortMap"))
        .and_then(|map| map.get(name))
        .and_then(Value::as_str);
    match (mapped, level) {
        (Some(value), _) => value.to_owned(),
        (None, ThinkingLevel::Max) => "xhigh".to_owned(),
        (None, _) => name.to_owned(),
    }
}

/// A tool-call id as this server accepts it.
fn call_id(model: &Model, compat: &Compat, id: &str) -> String {
    if compat.requires_mistral_tool_ids {
        let mut short: String = id.chars().filter(char::is_ascii_alphanumeric).take(9).collect();
        let pad = "ABCDEFGHI";
        let missing = 9 - short.len();
        short.push_str(&pad[..missing]);
        return short;
    }
    // Ids from the Responses API look like `call_id|item_id`; keep the call id.
    if let Some((call, _)) = id.split_once('|') {
        return call
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(40)
            .collect();
    }
    if model.provider == "openai" && id.chars().count() > 40 {
        return id.chars().take(40).collect();
    }
    id.to_owned()
}

fn image_part(data: &str, mime_type: &str) -> Value {
    json!({"type": "image_url", "image_url": {"url": format!("data:{mime_type};base64,{data}")}})
}

/// The `messages` array.
pub(crate) fn messages(model: &Model, context: &LlmContext<'_>, compat: &Compat) -> Vec<Value> {
    let accepts_images = model.input.iter().any(|kind| kind == "image");
    let prepared: Vec<Cow<'_, AgentMessage>> = prepare_messages(context.messages);
    let mut out = Vec::with_capacity(prepared.len() + 1);
    if !context.system_prompt.is_empty() {
        let role = if model.reasoning && compat.supports_developer_role {
            "developer"
        } else {
            "system"
        };
        out.push(json!({"role": role, "content": context.system_prompt}));
    }
    let mut after_tool_results = false;
    let mut pending_images: Vec<Value> = Vec::new();
    for message in &prepared {
        if !matches!(message.as_ref(), AgentMessage::ToolResult(_)) {
            flush_tool_images(&mut out, &mut pending_images, &mut after_tool_results, compat);
        }
        match message.as_ref() {
            AgentMessage::User(user) => {
                let Some(content) = user_content(&user.content, accepts_images) else {
                    continue;
                };
                if compat.requires_assistant_after_tool_result && after_tool_results {
                    out.push(json!({"role": "assistant", "content": BRIDGE_TEXT}));
                }
                out.push(json!({"role": "user", "content": content}));
                after_tool_results = false;
            }
            AgentMessage::Assistant(assistant) => {
                if let Some(value) = assistant_message(model, assistant, compat) {
                    out.push(value);
                    after_tool_results = false;
                }
            }
            AgentMessage::ToolResult(result) => {
                out.push(tool_message(model, result, compat));
                if accepts_images {
                    for block in &result.content {
                        if let ContentBlock::Image(image) = block {
                            pending_images.push(image_part(&image.data, &image.mime_type));
                        }
                    }
                }
                after_tool_results = true;
            }
            AgentMessage::Custom(_) => {}
        }
    }
    flush_tool_images(&mut out, &mut pending_images, &mut after_tool_results, compat);
    out
}

/// Sends the images of the preceding tool results as one user message (the `tool` role takes
/// text only).
fn flush_tool_images(out: &mut Vec<Value>, images: &mut Vec<Value>, after_tool_results: &mut bool, compat: &Compat) {
    if images.is_empty() {
        return;
    }
    if compat.requires_assistant_after_tool_result {
        out.push(json!({"role": "assistant", "content": BRIDGE_TEXT}));
    }
    let mut parts = vec![json!({"type": "text", "text": TOOL_IMAGES_INTRO})];
    parts.append(images);
    out.push(json!({"role": "user", "content": parts}));
    *after_tool_results = false;
}

/// User content: a string stays a string; blocks become `text` / `image_url` parts (images are
/// left out for text-only models). `None` when nothing is left.
fn user_content(content: &UserContent, accepts_images: bool) -> Option<Value> {
    match content {
        UserContent::Text(text) => Some(Value::String(text.clone())),
        UserContent::Blocks(blocks) => {
            let parts: Vec<Value> = blocks
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::Text(text) => Some(json!({"type": "text", "text": text.text})),
                    ContentBlock::Image(image) if accepts_images => Some(image_part(&image.data, &image.mime_type)),
                    _ => None,
                })
                .collect();
            (!parts.is_empty()).then_some(Value::Array(parts))
        }
    }
}

/// An assistant message: non-empty text joined into `content`, tool calls as `tool_calls`.
/// `None` when it has neither.
fn assistant_message(model: &Model, message: &AssistantMessage, compat: &Compat) -> Option<Value> {
    let mut text = String::new();
    if compat.requires_thinking_as_text {
        let thinking: Vec<&str> = message
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Thinking(thinking) if !thinking.thinking.trim().is_empty() => {
                    Some(thinking.thinking.as_str())
                }
                _ => None,
            })
            .collect();
        text = thinking.join("\n\n");
    }
    for block in &message.content {
        if let ContentBlock::Text(block) = block
            && !block.text.trim().is_empty()
        {
            if !text.is_empty() {
                text.push_str("\n\n");
            }
            text.push_str(&block.text);
        }
    }
    let calls: Vec<Value> = message
        .tool_calls()
        .map(|call| {
            let arguments = serde_json::to_string(&call.arguments).unwrap_or_else(|_| "{}".to_owned());
            json!({
                "id": call_id(model, compat, &call.id),
                "type": "function",
                "function": {"name": call.name, "arguments": arguments},
            })
        })
        .collect();
    if text.is_empty() && calls.is_empty() {
        return None;
    }
    let mut value = Map::new();
    value.insert("role".into(), json!("assistant"));
    let content = if !text.is_empty() {
        Value::String(text)
    } else if compat.requires_assistant_after_tool_result {
        Value::String(String::new())
    } else {
        Value::Null
    };
    value.insert("content".into(), content);
    if !calls.is_empty() {
        value.insert("tool_calls".into(), Value::Array(calls));
    }
    Some(Value::Object(value))
}

/// A tool result: its text (or a note when it holds only images) under `role: "tool"`.
fn tool_message(model: &Model, result: &ToolResultMessage, compat: &Compat) -> Value {
    let text: Vec<&str> = result.content.iter().filter_map(ContentBlock::as_text).collect();
    let text = text.join("\n");
    let content = if text.is_empty() && result.content.iter().any(|b| matches!(b, ContentBlock::Image(_))) {
        IMAGE_ONLY_RESULT.to_owned()
    } else {
        text
    };
    let mut value = Map::new();
    value.insert("role".into(), json!("tool"));
    value.insert("content".into(), Value::String(content));
    value.insert(
        "tool_call_id".into(),
        Value::String(call_id(model, compat, &result.tool_call_id)),
    );
    if compat.requires_tool_result_name && !result.tool_name.is_empty() {
        value.insert("name".into(), Value::String(result.tool_name.clone()));
    }
    Value::Object(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(provider: &str, base_url: &str) -> Model {
        Model {
            provider: provider.into(),
            base_url: base_url.into(),
            ..Model::unknown()
        }
    }

    #[test]
    fn tool_call_ids() {
        let openai = model("openai", "https://api.openai.com/v1");
        let compat = Compat::for_model(&openai);
        assert_eq!(call_id(&openai, &compat, "call_abc"), "call_abc");
        assert_eq!(call_id(&openai, &compat, "call_1|fc_2+x/y"), "call_1");
        assert_eq!(call_id(&openai, &compat, "call/x+y|fc"), "call_x_y");
        assert_eq!(call_id(&openai, &compat, &"a".repeat(50)).len(), 40);
        let mistral = model("mistral", "https://api.mistral.ai/v1");
        let compat = Compat::for_model(&mistral);
        assert_eq!(call_id(&mistral, &compat, "call_1"), "call1ABCD");
        assert_eq!(call_id(&mistral, &compat, "abcdefghijkl"), "abcdefghi");
    }

    #[test]
    fn efforts() {
        let mut m = model("x", "http://h");
        assert_eq!(effort(&m, ThinkingLevel::Minimal), "minimal");
        assert_eq!(effort(&m, ThinkingLevel::Xhigh), "xhigh");
        assert_eq!(effort(&m, ThinkingLevel::Max), "xhigh");
        m.compat = Some(json!({"reasoningEffortMap": {"max": "max", "low": "small"}}));
        assert_eq!(effort(&m, ThinkingLevel::Max), "max");
        assert_eq!(effort(&m, ThinkingLevel::Low), "small");
        m.thinking_level_map = Some([("low".to_owned(), Some("tiny".to_owned()))].into_iter().collect());
        assert_eq!(effort(&m, ThinkingLevel::Low), "tiny", "thinkingLevelMap wins");
    }

    #[test]
    fn only_openais_server_gets_the_session_id_as_prompt_cache_key() {
        let context = LlmContext {
            system_prompt: "",
            messages: &[],
            tools: &[],
        };
        let options = StreamOptions {
            session_id: Some("s-1".into()),
            ..StreamOptions::default()
        };
        let key = |m: &Model| body(m, &context, &options, &Compat::for_model(m))["prompt_cache_key"].clone();
        assert_eq!(key(&model("openai", "https://api.openai.com/v1")), "s-1");
        assert_eq!(key(&model("local", "http://127.0.0.1:1/v1")), Value::Null);
    }

    #[test]
    fn thinking_level_maps_shape_reasoning_effort() {
        let mut m = model("x", "http://h");
        m.reasoning = true;
        let map = |pairs: &[(&str, Option<&str>)]| {
            Some(
                pairs
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), v.map(str::to_owned)))
                    .collect(),
            )
        };
        let context = LlmContext {
            system_prompt: "",
            messages: &[],
            tools: &[],
        };
        let sent = |m: &Model, level: Option<ThinkingLevel>| {
            let options = StreamOptions {
                reasoning: level,
                ..StreamOptions::default()
            };
            body(m, &context, &options, &Compat::for_model(m))["reasoning_effort"].clone()
        };
        // No map: xhigh is not offered and becomes high; off sends nothing.
        assert_eq!(sent(&m, Some(ThinkingLevel::Xhigh)), "high");
        assert_eq!(sent(&m, None), Value::Null);
        // A map naming xhigh sends its value; a string for off is sent at off.
        m.thinking_level_map = map(&[("xhigh", Some("max")), ("off", Some("none"))]);
        assert_eq!(sent(&m, Some(ThinkingLevel::Xhigh)), "max");
        assert_eq!(sent(&m, None), "none");
        // A level set to null is skipped upwards.
        m.thinking_level_map = map(&[("minimal", None)]);
        assert_eq!(sent(&m, Some(ThinkingLevel::Minimal)), "low");
    }

    #[test]
    fn deepseeks_thinking_format() {
        let context = LlmContext {
            system_prompt: "",
            messages: &[],
            tools: &[],
        };
        let sent = |m: &Model, level: Option<ThinkingLevel>| {
            let options = StreamOptions {
                reasoning: level,
                ..StreamOptions::default()
            };
            let body = body(m, &context, &options, &Compat::for_model(m));
            (
                body["thinking"].clone(),
                body["reasoning_effort"].clone(),
                body["reasoning"].clone(),
            )
        };
        // pi-ai's catalog gives OpenRouter's DeepSeek V4 `thinkingFormat: "deepseek"`.
        let mut router = model("openrouter", "https://openrouter.ai/api/v1");
        router.reasoning = true;
        router.compat = Some(json!({"thinkingFormat": "deepseek"}));
        router.thinking_level_map = Some([("xhigh".to_owned(), Some("max".to_owned()))].into_iter().collect());
        assert_eq!(
            sent(&router, Some(ThinkingLevel::Xhigh)),
            (json!({"type": "enabled"}), json!("max"), Value::Null)
        );
        assert_eq!(
            sent(&router, None),
            (json!({"type": "disabled"}), Value::Null, Value::Null)
        );
        // DeepSeek's own API is detected.
        let mut direct = model("deepseek", "https://api.deepseek.com");
        direct.reasoning = true;
        assert_eq!(
            sent(&direct, Some(ThinkingLevel::High)),
            (json!({"type": "enabled"}), json!("high"), Value::Null)
        );
    }

    #[test]
    fn detected_compat() {
        let mistral = Compat::for_model(&model("mistral", "https://api.mistral.ai/v1"));
        assert_eq!(mistral.max_tokens_field, MaxTokensField::MaxTokens);
        assert!(mistral.requires_tool_result_name && !mistral.supports_developer_role);
        let xai = Compat::for_model(&model("xai", "https://api.x.ai/v1"));
        assert!(!xai.supports_reasoning_effort);
        let router = Compat::for_model(&model("openrouter", "https://openrouter.ai/api/v1"));
        assert_eq!(router.thinking_format, ThinkingFormat::OpenRouter);
        let ollama = Compat::for_model(&model("ollama", "http://localhost:11434/v1"));
        assert!(ollama.supports_developer_role && ollama.supports_reasoning_effort);
        assert_eq!(ollama.max_tokens_field, MaxTokensField::MaxCompletionTokens);
    }
}
