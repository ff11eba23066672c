//! The body of `POST /model/{modelId}/converse-stream`, built from the agent transcript the way
//! pi-ai 0.73.1's Bedrock provider builds its `ConverseStreamCommand` input, in the JSON form the
//! AWS SDK sends it (members in pi-ai's order, absent ones left out, image bytes as base64;
//! compared with requests recorded from pi 0.73.1 in `tests/bedrock.rs`):
//!
//! * `additionalModelRequestFields`: for a Claude reasoning model asked for a level, extended
//!   thinking — `{type: "adaptive", display}` with `output_config.effort` for Opus 4.6 / 4.7 and
//!   Sonnet 4.6, else `{type: "enabled", budget_tokens, display}` and the
//!   `interleaved-thinking-2025-05-14` beta; `display: "summarized"`, except for GovCloud
//!   (`us-gov-…` region, `us-gov.` / `arn:aws-us-gov:` model ids).
//! * `inferenceConfig`: `maxTokens` (raised by the thinking budget as for Anthropic) and
//!   `temperature`.
//! * `messages`: user text and images (`{image: {format, source: {bytes}}}`); assistant text,
//!   `toolUse` and thinking as `reasoningContent.reasoningText` (with its `signature` for Claude,
//!   which gets plain text instead when the signature is missing); the tool results in a row as
//!   one user message of `toolResult` blocks (`status` `success` / `error`). Empty texts and
//!   empty assistant messages are left out; another model's thinking is plain text.
//! * `system`: the system prompt as one text block.
//! * Cache points (`{cachePoint: {type: "default"}}`, with `ttl: "1h"` when `PI_CACHE_RETENTION`
//!   is `long`) after the system prompt and at the end of the last user message, for the Claude
//!   models Bedrock caches (4.x, 3.7 Sonnet, 3.5 Haiku; any model with `AWS_BEDROCK_FORCE_CACHE=1`).
//! * `toolConfig`: `tools` as `toolSpec`s with `inputSchema.json`, and `toolChoice` (`auto`,
//!   `any` for a required call, `tool: {name}` for one named tool); none with no tools or the
//!   choice `none`.

use pi_agent_core::{
    AgentMessage, AssistantMessage, ContentBlock, LlmContext, Model, StreamOptions, ThinkingLevel, ToolChoice,
    ToolResultMessage, UserContent,
};
use serde_json::{Map, Value, json};

use crate::google_vertex::Env;
use crate::transform::{max_output_tokens, prepare_messages, requested_level, sanitized_call_id};

/// What replaces the images of a user message for a model without image input (pi-ai's).
const USER_IMAGE_PLACEHOLDER: &str = "(image omitted: model does not support images)";

/// What replaces the images of a tool result for a model without image input (pi-ai's).
const TOOL_IMAGE_PLACEHOLDER: &str = "(tool image omitted: model does not support images)";

/// The beta header Claude models on Bedrock get with budgeted thinking.
const INTERLEAVED_THINKING: &str = "interleaved-thinking-2025-05-14";

/// The model id and name, lowercased, each also with runs of spaces, `_`, `.` and `:` as `-`
/// (pi-ai's candidates, so that an inference profile's name can say what model it is).
fn candidates(model: &Model) -> Vec<String> {
    let mut values = vec![model.id.as_str()];
    if !model.name.is_empty() {
        values.push(model.name.as_str());
    }
    values
        .into_iter()
        .flat_map(|value| {
            let lower = value.to_lowercase();
            let mut dashed = String::with_capacity(lower.len());
            let mut in_run = false;
            for c in lower.chars() {
                if c.is_whitespace() || matches!(c, '_' | '.' | ':') {
                    if !in_run {
                        dashed.push('-');
                    }
                    in_run = true;
                } else {
                    dashed.push(c);
                    in_run = false;
                }
            }
            [lower, dashed]
        })
        .collect()
}

/// Whether the model is Anthropic's Claude (by id or name).
pub(crate) fn is_claude(model: &Model) -> bool {
    let id = model.id.to_lowercase();
    let name = model.name.to_lowercase();
    id.contains("anthropic.claude") || id.contains("anthropic/claude") || name.contains("claude")
}

fn adaptive_thinking(model: &Model) -> bool {
    candidates(model)
        .iter()
        .any(|s| s.contains("opus-4-6") || s.contains("opus-4-7") || s.contains("sonnet-4-6"))
}

fn caches_prompts(model: &Model, env: &Env) -> bool {
    let candidates = candidates(model);
    if !candidates.iter().any(|s| s.contains("claude")) {
        return env("AWS_BEDROCK_FORCE_CACHE").as_deref() == Some("1");
    }
    candidates
        .iter()
        .any(|s| s.contains("-4-") || s.contains("claude-3-7-sonnet") || s.contains("claude-3-5-haiku"))
}

fn effort(model: &Model, level: ThinkingLevel) -> String {
    if level == ThinkingLevel::Xhigh && candidates(model).iter().any(|s| s.contains("opus-4-7")) {
        return "xhigh".to_owned();
    }
    let key = level.as_str();
    if let Some(Some(mapped)) = model.thinking_level_map.as_ref().and_then(|map| map.get(key)) {
        return mapped.clone();
    }
    match level {
        ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        _ => "high",
    }
    .to_owned()
}

fn gov_cloud(model: &Model, region: Option<&str>) -> bool {
    let id = model.id.to_lowercase();
    region.is_some_and(|region| region.to_lowercase().starts_with("us-gov-"))
        || id.starts_with("us-gov.")
        || id.starts_with("arn:aws-us-gov:")
}

/// The body (see the module docs). `region` is the configured one (`AWS_REGION`,
/// `AWS_DEFAULT_REGION`), for the GovCloud rule.
pub(crate) fn body(
    model: &Model,
    context: &LlmContext<'_>,
    options: &StreamOptions,
    region: Option<&str>,
    env: &Env,
) -> Value {
    let mut max_tokens = max_output_tokens(model, options);
    let level = requested_level(model, options).filter(|_| model.reasoning);
    let mut additional = None;
    if let Some(level) = level
        && is_claude(model)
    {
        let display = (!gov_cloud(model, region)).then_some("summarized");
        let mut fields = Map::new();
        if adaptive_thinking(model) {
            let mut thinking = json!({"type": "adaptive"});
            if let Some(display) = display {
                thinking["display"] = json!(display);
            }
            fields.insert("thinking".into(), thinking);
            fields.insert("output_config".into(), json!({"effort": effort(model, level)}));
        } else {
            let (total, budget) = crate::anthropic::thinking_budget(level, max_tokens.unwrap_or(0), model.max_tokens)
                .unwrap_or((max_tokens.unwrap_or(0), 0));
            max_tokens = Some(total);
            let mut thinking = json!({"type": "enabled", "budget_tokens": budget});
            if let Some(display) = display {
                thinking["display"] = json!(display);
            }
            fields.insert("thinking".into(), thinking);
            fields.insert("anthropic_beta".into(), json!([INTERLEAVED_THINKING]));
        }
        additional = Some(Value::Object(fields));
    }
    let cache = caches_prompts(model, env).then(|| {
        let long = env("PI_CACHE_RETENTION").as_deref() == Some("long");
        let mut point = json!({"type": "default"});
        if long {
            point["ttl"] = json!("1h");
        }
        json!({"cachePoint": point})
    });

    // The members in the order pi-ai builds them (the SDK keeps it).
    let mut body = Map::new();
    let mut messages = messages(model, context.messages);
    if let (Some(point), Some(last)) = (&cache, messages.last_mut())
        && last["role"] == "user"
        && let Some(content) = last["content"].as_array_mut()
    {
        content.push(point.clone());
    }
    body.insert("messages".into(), Value::Array(messages));
    if !context.system_prompt.is_empty() {
        let mut system = vec![json!({"text": context.system_prompt})];
        system.extend(cache.clone());
        body.insert("system".into(), Value::Array(system));
    }
    let mut inference = Map::new();
    if let Some(max_tokens) = max_tokens {
        inference.insert("maxTokens".into(), json!(max_tokens));
    }
    if let Some(temperature) = options.temperature {
        inference.insert("temperature".into(), json!(temperature));
    }
    body.insert("inferenceConfig".into(), Value::Object(inference));
    if let Some(config) = tool_config(context, options.tool_choice.as_ref()) {
        body.insert("toolConfig".into(), config);
    }
    if let Some(additional) = additional {
        body.insert("additionalModelRequestFields".into(), additional);
    }
    Value::Object(body)
}

fn tool_config(context: &LlmContext<'_>, choice: Option<&ToolChoice>) -> Option<Value> {
    if context.tools.is_empty() || matches!(choice, Some(ToolChoice::None)) {
        return None;
    }
    let tools: Vec<Value> = context
        .tools
        .iter()
        .map(|tool| {
            // The SDK's order of the members.
            json!({"toolSpec": {
                "name": tool.name(),
                "inputSchema": {"json": tool.parameters().schema()},
                "description": tool.description(),
            }})
        })
        .collect();
    let mut config = json!({"tools": tools});
    let choice = match choice {
        Some(ToolChoice::Auto) => Some(json!({"auto": {}})),
        Some(ToolChoice::Required) => Some(json!({"any": {}})),
        Some(ToolChoice::Tool(name)) => Some(json!({"tool": {"name": name}})),
        Some(ToolChoice::None) | None => None,
    };
    if let Some(choice) = choice {
        config["toolChoice"] = choice;
    }
    Some(config)
}

fn image_format(mime_type: &str) -> Option<&'static str> {
    match mime_type {
        "image/jpeg" | "image/jpg" => Some("jpeg"),
        "image/png" => Some("png"),
        "image/gif" => Some("gif"),
        "image/webp" => Some("webp"),
        _ => None,
    }
}

/// Text and image blocks; images of a type Bedrock does not take become a note, those of a model
/// without image input pi's placeholder (once per run of images).
fn media_blocks(blocks: &[ContentBlock], images: bool, placeholder: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut previous_was_placeholder = false;
    for block in blocks {
        match block {
            ContentBlock::Image(_) if !images => {
                if !previous_was_placeholder {
                    out.push(json!({"text": placeholder}));
                }
                previous_was_placeholder = true;
                continue;
            }
            ContentBlock::Image(image) => match image_format(&image.mime_type) {
                Some(format) => out.push(json!({"image": {"format": format, "source": {"bytes": image.data}}})),
                None => out.push(json!({"text": format!("(image of unsupported type {} omitted)", image.mime_type)})),
            },
            ContentBlock::Text(text) => out.push(json!({"text": text.text})),
            _ => {}
        }
        previous_was_placeholder = matches!(block, ContentBlock::Text(text) if text.text == placeholder);
    }
    out
}

fn messages(model: &Model, transcript: &[AgentMessage]) -> Vec<Value> {
    let images = model.input.iter().any(|kind| kind == "image");
    let mut out: Vec<Value> = Vec::new();
    let mut results: Vec<Value> = Vec::new();
    let flush = |out: &mut Vec<Value>, results: &mut Vec<Value>| {
        if !results.is_empty() {
            out.push(json!({"role": "user", "content": std::mem::take(results)}));
        }
    };
    for message in prepare_messages(transcript) {
        match message.as_ref() {
            AgentMessage::ToolResult(result) => results.push(tool_result(result, images)),
            AgentMessage::User(user) => {
                flush(&mut out, &mut results);
                let content = match &user.content {
                    UserContent::Text(text) => vec![json!({"text": text})],
                    UserContent::Blocks(blocks) => media_blocks(blocks, images, USER_IMAGE_PLACEHOLDER),
                };
                out.push(json!({"role": "user", "content": content}));
            }
            AgentMessage::Assistant(assistant) => {
                flush(&mut out, &mut results);
                let content = assistant_content(model, assistant);
                if !content.is_empty() {
                    out.push(json!({"role": "assistant", "content": content}));
                }
            }
            AgentMessage::Custom(_) => {}
        }
    }
    flush(&mut out, &mut results);
    out
}

fn tool_result(result: &ToolResultMessage, images: bool) -> Value {
    json!({"toolResult": {
        "toolUseId": sanitized_call_id(&result.tool_call_id),
        "content": media_blocks(&result.content, images, TOOL_IMAGE_PLACEHOLDER),
        "status": if result.is_error { "error" } else { "success" },
    }})
}

fn assistant_content(model: &Model, assistant: &AssistantMessage) -> Vec<Value> {
    let same_model = assistant.provider == model.provider && assistant.api == model.api && assistant.model == model.id;
    let claude = is_claude(model);
    let mut blocks = Vec::new();
    for block in &assistant.content {
        match block {
            ContentBlock::Text(text) if !text.text.trim().is_empty() => blocks.push(json!({"text": text.text})),
            ContentBlock::Text(_) | ContentBlock::Image(_) => {}
            ContentBlock::Thinking(thinking) => {
                if thinking.thinking.trim().is_empty() || (!same_model && thinking.redacted == Some(true)) {
                    continue;
                }
                if !same_model {
                    blocks.push(json!({"text": thinking.thinking}));
                    continue;
                }
                let signature = thinking.thinking_signature.as_deref().filter(|s| !s.trim().is_empty());
                match (claude, signature) {
                    (true, None) => blocks.push(json!({"text": thinking.thinking})),
                    (true, Some(signature)) => blocks.push(json!({"reasoningContent": {"reasoningText": {
                        "text": thinking.thinking,
                        "signature": signature,
                    }}})),
                    (false, _) => blocks.push(json!({"reasoningContent": {"reasoningText": {
                        "text": thinking.thinking,
                    }}})),
                }
            }
            ContentBlock::ToolCall(call) => {
                let id = if same_model {
                    call.id.clone()
                } else {
                    sanitized_call_id(&call.id)
                };
                blocks.push(json!({"toolUse": {"toolUseId": id, "name": call.name, "input": call.arguments}}));
            }
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_agent_core::{ThinkingContent, UserMessage};
    use std::sync::Arc;

    fn model(id: &str, name: &str) -> Model {
        Model {
            id: id.into(),
            name: name.into(),
            api: "bedrock-converse-stream".into(),
            provider: "amazon-bedrock".into(),
            reasoning: true,
            input: vec!["text".into(), "image".into()],
            max_tokens: 64_000,
            ..Model::unknown()
        }
    }

    fn no_env() -> Env {
        Arc::new(|_: &str| None)
    }

    fn body_for(model: &Model, messages: &[AgentMessage], options: &StreamOptions) -> Value {
        let context = LlmContext {
            system_prompt: "sys",
            messages,
            tools: &[],
        };
        body(model, &context, options, None, &no_env())
    }

    #[test]
    fn claude_thinking_budget_adaptive_and_gov_cloud() {
        let options = StreamOptions {
            reasoning: Some(ThinkingLevel::Medium),
            ..StreamOptions::default()
        };
        let sonnet = model("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "Claude Sonnet 4.5");
        let body = body_for(&sonnet, &[AgentMessage::user("hi")], &options);
        assert_eq!(
            body["additionalModelRequestFields"],
            json!({"thinking": {"type": "enabled", "budget_tokens": 8192, "display": "summarized"},
                   "anthropic_beta": [INTERLEAVED_THINKING]})
        );
        assert_eq!(body["inferenceConfig"]["maxTokens"], json!(32_000 + 8192));
        let opus = model("global.anthropic.claude-opus-4-6-v1", "Claude Opus 4.6");
        let body = body_for(&opus, &[AgentMessage::user("hi")], &options);
        assert_eq!(
            body["additionalModelRequestFields"],
            json!({"thinking": {"type": "adaptive", "display": "summarized"}, "output_config": {"effort": "medium"}})
        );
        let gov = model("us-gov.anthropic.claude-sonnet-4-5-20250929-v1:0", "Claude Sonnet 4.5");
        let body = body_for(&gov, &[AgentMessage::user("hi")], &options);
        assert_eq!(body["additionalModelRequestFields"]["thinking"].get("display"), None);
        let nova = model("amazon.nova-premier-v1:0", "Nova Premier");
        let body = body_for(&nova, &[AgentMessage::user("hi")], &options);
        assert_eq!(body.get("additionalModelRequestFields"), None);
        assert_eq!(body["inferenceConfig"]["maxTokens"], json!(32_000));
        // Nova caches on its own: no cache points.
        assert_eq!(body["system"], json!([{"text": "sys"}]));
    }

    #[test]
    fn thinking_replay_and_images() {
        let claude = model("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "Claude Sonnet 4.5");
        let thinking = ThinkingContent {
            thinking: "pondering".into(),
            thinking_signature: Some("sig".into()),
            redacted: None,
        };
        let unsigned = ThinkingContent {
            thinking: "unsigned".into(),
            thinking_signature: None,
            redacted: None,
        };
        let assistant = AssistantMessage {
            content: vec![
                ContentBlock::Thinking(thinking.clone()),
                ContentBlock::Thinking(unsigned),
                ContentBlock::Text(pi_agent_core::TextContent::new("  ")),
            ],
            provider: claude.provider.clone(),
            api: claude.api.clone(),
            model: claude.id.clone(),
            ..Default::default()
        };
        let user = AgentMessage::User(UserMessage {
            content: UserContent::Blocks(vec![
                ContentBlock::text("look"),
                ContentBlock::image("aGk=", "image/png"),
            ]),
            timestamp: 0,
        });
        let body = body_for(&claude, &[user, assistant.clone().into()], &StreamOptions::default());
        assert_eq!(
            body["messages"][1]["content"],
            json!([{"reasoningContent": {"reasoningText": {"text": "pondering", "signature": "sig"}}}, {"text": "unsigned"}])
        );
        assert_eq!(
            body["messages"][0]["content"][1],
            json!({"image": {"format": "png", "source": {"bytes": "aGk="}}})
        );
        let other = model("openai.gpt-oss-120b-1:0", "gpt-oss-120b");
        let foreign = AssistantMessage {
            content: vec![ContentBlock::Thinking(thinking)],
            ..Default::default()
        };
        let body = body_for(
            &other,
            &[AgentMessage::user("q"), foreign.into()],
            &StreamOptions::default(),
        );
        assert_eq!(body["messages"][1]["content"], json!([{"text": "pondering"}]));
    }
}
