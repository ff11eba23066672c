//! The request body of `models/{id}:streamGenerateContent`, shared by `google-generative-ai` and
//! `google-vertex` (the same `GenerateContentRequest` on both endpoints), built from the agent
//! transcript the way pi-ai 0.73.1's Google providers build it.
//!
//! * `contents`: user messages as `{parts: [{text} | {inlineData}], role: "user"}`; assistant
//!   messages as `role: "model"` with their thinking (`{thought: true, text, thoughtSignature}`),
//!   text (`{text, thoughtSignature}`) and tool calls (`{functionCall: {name, args}, thoughtSignature}`);
//!   tool results as `{functionResponse: {name, response: {output | error}}}` parts of one user
//!   turn. Signatures travel back only to the provider and model that made them, and only when they
//!   are base64 (the API's `bytes` type); another model's thinking becomes plain text.
//! * Images of a tool result sit inside its `functionResponse.parts` for Gemini 3 and newer (and for
//!   models that are not Gemini); for older Gemini models they follow as a user turn
//!   `Tool result image:`. Models without image input get pi's placeholders instead of images.
//! * Tool-call ids are sent only to the models that need them (`claude-…`, `gpt-oss-…`), and then
//!   cut to 64 characters of `[A-Za-z0-9_-]` when they came from another model.
//! * `systemInstruction`, `tools` (`functionDeclarations` with the schema as `parametersJsonSchema`),
//!   `toolConfig.functionCallingConfig` for a tool choice, and `generationConfig` (`temperature`,
//!   `maxOutputTokens`, `thinkingConfig`).
//!
//! Thinking: a reasoning model asked for a level gets `{includeThoughts: true}` with a
//! `thinkingLevel` (Gemini 3 Pro and Flash, Gemma 4) or a `thinkingBudget` (Gemini 2.5 budgets by
//! model, `-1` — dynamic — for others); asked for none it gets the lowest setting the model
//! allows (`thinkingBudget: 0`, or `thinkingLevel` `LOW` / `MINIMAL` for the models that cannot
//! switch thinking off).

use std::borrow::Cow;
use std::sync::LazyLock;

use pi_agent_core::{
    AgentMessage, AssistantMessage, ContentBlock, LlmContext, Model, StreamOptions, ThinkingLevel, ToolChoice,
    ToolResultMessage, UserContent,
};
use regex::Regex;
use serde_json::{Map, Value, json};

use crate::transform::{max_output_tokens, prepare_messages, requested_level};

/// The response of a tool result that holds only images.
const IMAGE_ONLY_RESULT: &str = "(see attached image)";

/// The text before the images of a tool result, for models that cannot take them inside it.
const TOOL_IMAGES_INTRO: &str = "Tool result image:";

/// What replaces the images of a user message for a model without image input (pi-ai's).
const USER_IMAGE_PLACEHOLDER: &str = "(image omitted: model does not support images)";

/// What replaces the images of a tool result for a model without image input (pi-ai's).
const TOOL_IMAGE_PLACEHOLDER: &str = "(tool image omitted: model does not support images)";

/// Which of the two APIs the body is for: they differ only in the thinking settings pi-ai gives
/// (Vertex knows no Gemma 4 levels and no Flash-Lite budgets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// `google-generative-ai`.
    Gemini,
    /// `google-vertex`.
    Vertex,
}

/// A constant pattern, checked by the tests below (`None`, never matching, cannot happen).
type Pattern = LazyLock<Option<Regex>>;

static GEMINI_3_PRO: Pattern = LazyLock::new(|| Regex::new(r"gemini-3(?:\.\d+)?-pro").ok());
static GEMINI_3_FLASH: Pattern = LazyLock::new(|| Regex::new(r"gemini-3(?:\.\d+)?-flash").ok());
static GEMMA_4: Pattern = LazyLock::new(|| Regex::new(r"gemma-?4").ok());
static GEMINI_MAJOR: Pattern = LazyLock::new(|| Regex::new(r"^gemini(?:-live)?-(\d+)").ok());
static BASE64: Pattern = LazyLock::new(|| Regex::new(r"^[A-Za-z0-9+/]+={0,2}$").ok());

fn matches(pattern: &Pattern, text: &str) -> bool {
    pattern.as_ref().is_some_and(|re| re.is_match(text))
}

fn is_gemini_3_pro(model: &Model) -> bool {
    matches(&GEMINI_3_PRO, &model.id.to_lowercase())
}

fn is_gemini_3_flash(model: &Model) -> bool {
    matches(&GEMINI_3_FLASH, &model.id.to_lowercase())
}

fn is_gemma_4(model: &Model, flavor: Flavor) -> bool {
    flavor == Flavor::Gemini && matches(&GEMMA_4, &model.id.to_lowercase())
}

/// Whether the model behind a Google API needs the tool-call ids (Claude and gpt-oss on Vertex).
pub(crate) fn requires_tool_call_id(model_id: &str) -> bool {
    model_id.starts_with("claude-") || model_id.starts_with("gpt-oss-")
}

/// Whether the model takes images inside a `functionResponse` (Gemini 3 and newer, and models
/// that are not Gemini).
fn multimodal_function_response(model_id: &str) -> bool {
    let id = model_id.to_lowercase();
    let major = GEMINI_MAJOR
        .as_ref()
        .and_then(|re| re.captures(&id))
        .and_then(|c| c.get(1));
    match major {
        Some(major) => major.as_str().parse::<u32>().is_ok_and(|major| major >= 3),
        None => true,
    }
}

/// A thought signature the API accepts back: base64 of whole groups.
fn valid_signature(signature: Option<&str>) -> Option<&str> {
    signature.filter(|s| !s.is_empty() && s.len() % 4 == 0 && matches(&BASE64, s))
}

/// The `thinkingLevel` of a level for the level-based models.
fn thinking_level(level: ThinkingLevel, model: &Model, flavor: Flavor) -> &'static str {
    let level = match level {
        ThinkingLevel::Xhigh | ThinkingLevel::Max => ThinkingLevel::High,
        other => other,
    };
    if is_gemini_3_pro(model) {
        return match level {
            ThinkingLevel::Medium | ThinkingLevel::High => "HIGH",
            _ => "LOW",
        };
    }
    if is_gemma_4(model, flavor) {
        return match level {
            ThinkingLevel::Medium | ThinkingLevel::High => "HIGH",
            _ => "MINIMAL",
        };
    }
    match level {
        ThinkingLevel::Off | ThinkingLevel::Minimal => "MINIMAL",
        ThinkingLevel::Low => "LOW",
        ThinkingLevel::Medium => "MEDIUM",
        _ => "HIGH",
    }
}

/// The `thinkingBudget` of a level for the budget-based models: pi-ai's per-model budgets, `-1`
/// (the model decides) for others.
pub(crate) fn thinking_budget(level: ThinkingLevel, model: &Model, flavor: Flavor) -> i64 {
    let index = match level {
        ThinkingLevel::Off | ThinkingLevel::Minimal => 0,
        ThinkingLevel::Low => 1,
        ThinkingLevel::Medium => 2,
        _ => 3,
    };
    let budgets: [i64; 4] = if model.id.contains("2.5-pro") {
        [128, 2048, 8192, 32768]
    } else if flavor == Flavor::Gemini && model.id.contains("2.5-flash-lite") {
        [512, 2048, 8192, 24576]
    } else if model.id.contains("2.5-flash") {
        [128, 2048, 8192, 24576]
    } else {
        return -1;
    };
    budgets[index]
}

/// `thinkingConfig`, or `None` for a model that cannot reason.
fn thinking_config(model: &Model, options: &StreamOptions, flavor: Flavor) -> Option<Value> {
    if !model.reasoning {
        return None;
    }
    let level_based = is_gemini_3_pro(model) || is_gemini_3_flash(model) || is_gemma_4(model, flavor);
    Some(match requested_level(model, options) {
        Some(level) if level_based => {
            json!({"includeThoughts": true, "thinkingLevel": thinking_level(level, model, flavor)})
        }
        Some(level) => json!({"includeThoughts": true, "thinkingBudget": thinking_budget(level, model, flavor)}),
        // Gemini 3 cannot switch thinking off: its lowest level, without the thoughts.
        None if is_gemini_3_pro(model) => json!({"thinkingLevel": "LOW"}),
        None if is_gemini_3_flash(model) || is_gemma_4(model, flavor) => json!({"thinkingLevel": "MINIMAL"}),
        None => json!({"thinkingBudget": 0}),
    })
}

/// `toolConfig.functionCallingConfig` of a tool choice: `AUTO`, `NONE`, `ANY`, and `ANY` limited
/// to the named function.
pub(crate) fn function_calling_config(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!({"mode": "AUTO"}),
        ToolChoice::None => json!({"mode": "NONE"}),
        ToolChoice::Required => json!({"mode": "ANY"}),
        ToolChoice::Tool(name) => json!({"mode": "ANY", "allowedFunctionNames": [name]}),
    }
}

/// The JSON body of a `streamGenerateContent` request.
pub(crate) fn body(model: &Model, context: &LlmContext<'_>, options: &StreamOptions, flavor: Flavor) -> Value {
    let mut body = Map::new();
    body.insert("contents".into(), Value::Array(contents(model, context)));
    if !context.system_prompt.is_empty() {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": context.system_prompt}], "role": "user"}),
        );
    }
    if !context.tools.is_empty() {
        let declarations: Vec<Value> = context
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name(),
                    "description": tool.description(),
                    "parametersJsonSchema": tool.parameters().schema(),
                })
            })
            .collect();
        body.insert("tools".into(), json!([{"functionDeclarations": declarations}]));
        if let Some(choice) = &options.tool_choice {
            body.insert(
                "toolConfig".into(),
                json!({"functionCallingConfig": function_calling_config(choice)}),
            );
        }
    }
    let mut generation = Map::new();
    if let Some(temperature) = options.temperature {
        generation.insert("temperature".into(), json!(temperature));
    }
    if let Some(max_tokens) = max_output_tokens(model, options) {
        generation.insert("maxOutputTokens".into(), Value::from(max_tokens));
    }
    if let Some(config) = thinking_config(model, options, flavor) {
        generation.insert("thinkingConfig".into(), config);
    }
    if !generation.is_empty() {
        body.insert("generationConfig".into(), Value::Object(generation));
    }
    Value::Object(body)
}

fn inline_data(data: &str, mime_type: &str) -> Value {
    json!({"inlineData": {"mimeType": mime_type, "data": data}})
}

/// The `contents` array.
pub(crate) fn contents(model: &Model, context: &LlmContext<'_>) -> Vec<Value> {
    let accepts_images = model.input.iter().any(|kind| kind == "image");
    let include_ids = requires_tool_call_id(&model.id);
    let prepared: Vec<Cow<'_, AgentMessage>> = prepare_messages(context.messages);
    // Ids of calls made by another model, renamed for a model that needs ids in a strict form.
    let mut renamed: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    let mut out: Vec<Value> = Vec::with_capacity(prepared.len());
    for message in &prepared {
        match message.as_ref() {
            AgentMessage::User(user) => {
                let parts = user_parts(&user.content, accepts_images);
                if let Some(parts) = parts {
                    out.push(json!({"parts": parts, "role": "user"}));
                }
            }
            AgentMessage::Assistant(assistant) => {
                let parts = model_parts(model, assistant, include_ids, &mut renamed);
                if !parts.is_empty() {
                    out.push(json!({"parts": parts, "role": "model"}));
                }
            }
            AgentMessage::ToolResult(result) => {
                tool_result(model, result, accepts_images, include_ids, &renamed, &mut out);
            }
            AgentMessage::Custom(_) => {}
        }
    }
    out
}

/// The parts of a user message; `None` for a message of blocks that leaves none.
fn user_parts(content: &UserContent, accepts_images: bool) -> Option<Vec<Value>> {
    match content {
        UserContent::Text(text) => Some(vec![json!({"text": text})]),
        UserContent::Blocks(blocks) => {
            let mut parts = Vec::with_capacity(blocks.len());
            let mut after_placeholder = false;
            for block in blocks {
                match block {
                    ContentBlock::Text(text) => {
                        after_placeholder = text.text == USER_IMAGE_PLACEHOLDER;
                        parts.push(json!({"text": text.text}));
                    }
                    ContentBlock::Image(image) if accepts_images => {
                        after_placeholder = false;
                        parts.push(inline_data(&image.data, &image.mime_type));
                    }
                    ContentBlock::Image(_) => {
                        if !after_placeholder {
                            parts.push(json!({"text": USER_IMAGE_PLACEHOLDER}));
                        }
                        after_placeholder = true;
                    }
                    _ => {}
                }
            }
            (!parts.is_empty()).then_some(parts)
        }
    }
}

/// The parts of an assistant message, in block order.
fn model_parts(
    model: &Model,
    message: &AssistantMessage,
    include_ids: bool,
    renamed: &mut std::collections::HashMap<String, String>,
) -> Vec<Value> {
    let same_model = message.provider == model.provider && message.api == model.api && message.model == model.id;
    // Signatures go back to the provider and model that made them (pi-ai does not compare the API here).
    let same_provider_model = message.provider == model.provider && message.model == model.id;
    let signature = |signature: Option<&str>| {
        same_provider_model
            .then(|| valid_signature(signature))
            .flatten()
            .map(str::to_owned)
    };
    let mut parts = Vec::new();
    for block in &message.content {
        match block {
            ContentBlock::Text(text) => {
                if text.text.trim().is_empty() {
                    continue;
                }
                let mut part = Map::new();
                part.insert("text".into(), json!(text.text));
                // Another model's text goes without its signature.
                let kept = if same_model {
                    text.text_signature.as_deref()
                } else {
                    None
                };
                if let Some(signature) = signature(kept) {
                    part.insert("thoughtSignature".into(), json!(signature));
                }
                parts.push(Value::Object(part));
            }
            ContentBlock::Thinking(thinking) => {
                // Redacted thinking is only for the model that made it; empty thinking is left out.
                if thinking.redacted == Some(true) && !same_model {
                    continue;
                }
                if thinking.thinking.trim().is_empty() {
                    continue;
                }
                if same_model && same_provider_model {
                    let mut part = Map::new();
                    part.insert("thought".into(), json!(true));
                    part.insert("text".into(), json!(thinking.thinking));
                    if let Some(signature) = signature(thinking.thinking_signature.as_deref()) {
                        part.insert("thoughtSignature".into(), json!(signature));
                    }
                    parts.push(Value::Object(part));
                } else {
                    parts.push(json!({"text": thinking.thinking}));
                }
            }
            ContentBlock::ToolCall(call) => {
                let mut function = Map::new();
                function.insert("name".into(), json!(call.name));
                let arguments = if call.arguments.is_null() {
                    json!({})
                } else {
                    call.arguments.clone()
                };
                function.insert("args".into(), arguments);
                if include_ids {
                    let id = if same_model {
                        call.id.clone()
                    } else {
                        let id = crate::transform::sanitized_call_id(&call.id);
                        if id != call.id {
                            renamed.insert(call.id.clone(), id.clone());
                        }
                        id
                    };
                    function.insert("id".into(), json!(id));
                }
                let mut part = Map::new();
                part.insert("functionCall".into(), Value::Object(function));
                let kept = if same_model {
                    call.thought_signature.as_deref()
                } else {
                    None
                };
                if let Some(signature) = signature(kept) {
                    part.insert("thoughtSignature".into(), json!(signature));
                }
                parts.push(Value::Object(part));
            }
            ContentBlock::Image(_) => {}
        }
    }
    parts
}

/// The `functionResponse` part of a tool result, joined to the user turn of the results before
/// it, and for older Gemini models a user turn with its images.
fn tool_result(
    model: &Model,
    result: &ToolResultMessage,
    accepts_images: bool,
    include_ids: bool,
    renamed: &std::collections::HashMap<String, String>,
    out: &mut Vec<Value>,
) {
    let mut texts: Vec<&str> = Vec::new();
    let mut images = Vec::new();
    let mut after_placeholder = false;
    for block in &result.content {
        match block {
            ContentBlock::Text(text) => {
                after_placeholder = text.text == TOOL_IMAGE_PLACEHOLDER;
                texts.push(&text.text);
            }
            ContentBlock::Image(image) if accepts_images => images.push(inline_data(&image.data, &image.mime_type)),
            ContentBlock::Image(_) => {
                if !after_placeholder {
                    texts.push(TOOL_IMAGE_PLACEHOLDER);
                }
                after_placeholder = true;
            }
            _ => {}
        }
    }
    let text = texts.join("\n");
    let value = if !text.is_empty() {
        text
    } else if !images.is_empty() {
        IMAGE_ONLY_RESULT.to_owned()
    } else {
        String::new()
    };
    let nested = multimodal_function_response(&model.id);
    let mut response = Map::new();
    response.insert("name".into(), json!(result.tool_name));
    let key = if result.is_error { "error" } else { "output" };
    response.insert("response".into(), json!({ key: value }));
    if nested && !images.is_empty() {
        response.insert("parts".into(), Value::Array(images.clone()));
    }
    if include_ids {
        let id = renamed
            .get(&result.tool_call_id)
            .cloned()
            .unwrap_or_else(|| result.tool_call_id.clone());
        response.insert("id".into(), json!(id));
    }
    let part = json!({"functionResponse": Value::Object(response)});
    let joins = out.last().is_some_and(|last| {
        last["role"] == "user"
            && last["parts"]
                .as_array()
                .is_some_and(|parts| parts.iter().any(|p| p.get("functionResponse").is_some()))
    });
    match out.last_mut().and_then(|last| last["parts"].as_array_mut()) {
        Some(parts) if joins => parts.push(part),
        _ => out.push(json!({"parts": [part], "role": "user"})),
    }
    if !nested && !images.is_empty() {
        let mut parts = vec![json!({"text": TOOL_IMAGES_INTRO})];
        parts.extend(images);
        out.push(json!({"parts": parts, "role": "user"}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(id: &str) -> Model {
        Model {
            id: id.into(),
            reasoning: true,
            api: "google-generative-ai".into(),
            provider: "google".into(),
            ..Model::unknown()
        }
    }

    #[test]
    fn every_pattern_compiles() {
        for pattern in [&GEMINI_3_PRO, &GEMINI_3_FLASH, &GEMMA_4, &GEMINI_MAJOR, &BASE64] {
            assert!(pattern.is_some());
        }
        assert!(is_gemini_3_pro(&model("gemini-3.1-pro-preview")));
        assert!(is_gemini_3_flash(&model("gemini-3-flash-preview")));
        assert!(is_gemma_4(&model("gemma-4-26b-a4b-it"), Flavor::Gemini));
        assert!(!is_gemma_4(&model("gemma-4-26b-a4b-it"), Flavor::Vertex));
    }

    #[test]
    fn budgets_and_levels_as_pi_ai_gives_them() {
        let pro = model("gemini-2.5-pro");
        let lite = model("gemini-2.5-flash-lite");
        assert_eq!(thinking_budget(ThinkingLevel::Minimal, &pro, Flavor::Gemini), 128);
        assert_eq!(thinking_budget(ThinkingLevel::High, &pro, Flavor::Gemini), 32768);
        assert_eq!(thinking_budget(ThinkingLevel::Minimal, &lite, Flavor::Gemini), 512);
        assert_eq!(thinking_budget(ThinkingLevel::Minimal, &lite, Flavor::Vertex), 128);
        assert_eq!(
            thinking_budget(ThinkingLevel::Medium, &model("gemini-flash-latest"), Flavor::Gemini),
            -1
        );
        let pro3 = model("gemini-3-pro-preview");
        assert_eq!(thinking_level(ThinkingLevel::Low, &pro3, Flavor::Gemini), "LOW");
        assert_eq!(thinking_level(ThinkingLevel::Medium, &pro3, Flavor::Gemini), "HIGH");
        let flash3 = model("gemini-3-flash-preview");
        assert_eq!(thinking_level(ThinkingLevel::Medium, &flash3, Flavor::Gemini), "MEDIUM");
        assert_eq!(thinking_level(ThinkingLevel::Xhigh, &flash3, Flavor::Gemini), "HIGH");
        let gemma = model("gemma-4-26b-a4b-it");
        assert_eq!(thinking_level(ThinkingLevel::Low, &gemma, Flavor::Gemini), "MINIMAL");
    }

    #[test]
    fn thinking_off_is_the_lowest_setting_each_model_allows() {
        let options = StreamOptions::default();
        let config = |id: &str, flavor| thinking_config(&model(id), &options, flavor);
        assert_eq!(
            config("gemini-2.5-flash", Flavor::Gemini),
            Some(json!({"thinkingBudget": 0}))
        );
        assert_eq!(
            config("gemini-3.1-pro-preview", Flavor::Gemini),
            Some(json!({"thinkingLevel": "LOW"}))
        );
        assert_eq!(
            config("gemini-3-flash-preview", Flavor::Vertex),
            Some(json!({"thinkingLevel": "MINIMAL"}))
        );
        assert_eq!(
            config("gemma-4-26b-a4b-it", Flavor::Vertex),
            Some(json!({"thinkingBudget": 0}))
        );
        let mut plain = model("gemini-2.0-flash");
        plain.reasoning = false;
        assert_eq!(thinking_config(&plain, &options, Flavor::Gemini), None);
    }

    #[test]
    fn signatures_must_be_base64() {
        assert_eq!(valid_signature(Some("c2lnMQ==")), Some("c2lnMQ=="));
        assert_eq!(valid_signature(Some("c2lnMQ=")), None);
        assert_eq!(valid_signature(Some("msg_abc!")), None);
        assert_eq!(valid_signature(Some("")), None);
        assert_eq!(valid_signature(None), None);
    }

    #[test]
    fn ids_and_multimodal_responses() {
        assert!(requires_tool_call_id("claude-sonnet-4-5"));
        assert!(!requires_tool_call_id("gemini-2.5-pro"));
        assert_eq!(crate::transform::sanitized_call_id("call_1|fc_2"), "call_1_fc_2");
        assert_eq!(crate::transform::sanitized_call_id(&"a".repeat(80)).len(), 64);
        assert!(multimodal_function_response("gemini-3-pro-preview"));
        assert!(!multimodal_function_response("gemini-2.5-flash"));
        assert!(!multimodal_function_response("gemini-live-2.5-flash"));
        assert!(multimodal_function_response("claude-opus-4"));
    }

    #[test]
    fn tool_choices() {
        assert_eq!(function_calling_config(&ToolChoice::Required), json!({"mode": "ANY"}));
        assert_eq!(
            function_calling_config(&ToolChoice::Tool("read".into())),
            json!({"mode": "ANY", "allowedFunctionNames": ["read"]})
        );
    }
}
