//! The request we send: endpoint, headers and the JSON body of `POST /v1/messages`.

use std::sync::Arc;

use pi_agent_core::{
    AgentMessage, AgentTool, AssistantMessage, ContentBlock, LlmContext, Model, StreamOptions, ThinkingLevel,
    ToolChoice, ToolResultMessage, UserContent,
};
use serde_json::{Map, Value, json};

use crate::driver::PreparedRequest;
use crate::transform::{max_output_tokens, prepare_messages, requested_level};

/// Base URL used when the model has none.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// The `anthropic-version` header we send.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// `max_tokens` when neither the options nor the model give one.
pub const DEFAULT_MAX_TOKENS: u64 = 4096;

/// The smallest thinking budget Anthropic accepts.
pub const MIN_THINKING_BUDGET: u64 = 1024;

/// The Messages endpoint for a base URL.
///
/// Trailing slashes are ignored. A base URL that already ends in `/v1` gets `/messages`; any
/// other gets `/v1/messages`; an empty one means [`DEFAULT_BASE_URL`].
///
/// ```
/// use pi_ai::anthropic::endpoint;
///
/// assert_eq!(endpoint("https://api.anthropic.com"), "https://api.anthropic.com/v1/messages");
/// assert_eq!(endpoint("http://127.0.0.1:8080/v1/"), "http://127.0.0.1:8080/v1/messages");
/// assert_eq!(endpoint("https://proxy.example/anthropic"), "https://proxy.example/anthropic/v1/messages");
/// assert_eq!(endpoint(""), "https://api.anthropic.com/v1/messages");
/// ```
pub fn endpoint(base_url: &str) -> String {
    let base = base_url.trim().trim_end_matches('/');
    let base = if base.is_empty() { DEFAULT_BASE_URL } else { base };
    if base.ends_with("/v1") {
        format!("{base}/messages")
    } else {
        format!("{base}/v1/messages")
    }
}

/// `max_tokens` and the `budget_tokens` of extended thinking for a reasoning level, as pi-ai's
/// `adjustMaxTokensForThinking` computes them: the level's budget (minimal 1024, low 2048, medium
/// 8192, high 16384; `xhigh` and `max` count as high) is added to `max_tokens`, up to the
/// model's limit (`model_max_tokens`, 0 for none); when the budget no longer fits under the
/// result, it shrinks to leave 1024 tokens for the answer. `None` for `off`.
///
/// ```
/// use pi_agent_core::ThinkingLevel;
/// use pi_ai::anthropic::thinking_budget;
///
/// assert_eq!(thinking_budget(ThinkingLevel::Medium, 16_384, 16_384), Some((16_384, 8192)));
/// assert_eq!(thinking_budget(ThinkingLevel::High, 16_384, 16_384), Some((16_384, 15_360)));
/// assert_eq!(thinking_budget(ThinkingLevel::Low, 32_000, 64_000), Some((34_048, 2048)));
/// assert_eq!(thinking_budget(ThinkingLevel::Off, 16_384, 16_384), None);
/// ```
pub fn thinking_budget(level: ThinkingLevel, max_tokens: u64, model_max_tokens: u64) -> Option<(u64, u64)> {
    let wanted: u64 = match level {
        ThinkingLevel::Off => return None,
        ThinkingLevel::Minimal => 1024,
        ThinkingLevel::Low => 2048,
        ThinkingLevel::Medium => 8192,
        ThinkingLevel::High | ThinkingLevel::Xhigh | ThinkingLevel::Max => 16_384,
    };
    let mut total = max_tokens + wanted;
    if model_max_tokens > 0 {
        total = total.min(model_max_tokens);
    }
    let budget = if total <= wanted {
        total.saturating_sub(MIN_THINKING_BUDGET)
    } else {
        wanted
    };
    Some((total, budget))
}

/// Builds the complete request (URL, headers, body) for one call.
///
/// Headers: `x-api-key` (when a key is given; `authorization: Bearer` for `github-copilot`), `anthropic-version`, `accept:
/// text/event-stream`, then the model's and the options' headers, later ones replacing earlier
/// ones of the same name (`content-type` is always `application/json` and cannot be replaced).
/// See [`super`] for the body.
pub fn prepare_request(model: &Model, context: &LlmContext<'_>, options: &StreamOptions) -> PreparedRequest {
    let api_key = options.api_key.clone().filter(|key| !key.is_empty());
    PreparedRequest {
        url: endpoint(&model.base_url),
        headers: headers(model, options, api_key.as_deref()),
        body: body(model, context, options),
        api_key,
        hooks: options.provider_hooks.clone(),
    }
}

fn headers(model: &Model, options: &StreamOptions, api_key: Option<&str>) -> Vec<(String, String)> {
    let mut headers = Vec::new();
    // Copilot's Anthropic endpoint takes the token as a bearer (pi-ai's `authToken`).
    if let Some(key) = api_key {
        if model.provider == "github-copilot" {
            headers.push(("authorization".to_owned(), format!("Bearer {key}")));
        } else {
            headers.push(("x-api-key".to_owned(), key.to_owned()));
        }
    }
    headers.push(("anthropic-version".to_owned(), ANTHROPIC_VERSION.to_owned()));
    headers.push(("accept".to_owned(), "text/event-stream".to_owned()));
    let extra = model.headers.iter().flatten().chain(&options.headers);
    for (name, value) in extra {
        if name.eq_ignore_ascii_case("content-type") {
            continue;
        }
        headers.retain(|(existing, _)| !existing.eq_ignore_ascii_case(name));
        headers.push((name.clone(), value.clone()));
    }
    headers
}

/// The JSON body of the request.
pub(crate) fn body(model: &Model, context: &LlmContext<'_>, options: &StreamOptions) -> Value {
    let has_tools = !context.tools.is_empty();
    let choice = options.tool_choice.as_ref().filter(|_| has_tools);
    let forced = matches!(choice, Some(ToolChoice::Required | ToolChoice::Tool(_)));
    let mut max_tokens = max_output_tokens(model, options).unwrap_or(DEFAULT_MAX_TOKENS);
    let level = requested_level(model, options).filter(|_| model.reasoning && !forced);
    let budget = match level.and_then(|level| thinking_budget(level, max_tokens, model.max_tokens)) {
        Some((total, budget)) => {
            max_tokens = total;
            Some(budget)
        }
        None => None,
    };
    // Keys in pi-ai's order: model, messages, max_tokens, stream, system, temperature, tools,
    // thinking, tool_choice.
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("messages".into(), Value::Array(messages(model, context.messages)));
    body.insert("max_tokens".into(), json!(max_tokens));
    body.insert("stream".into(), json!(true));
    if !context.system_prompt.trim().is_empty() {
        body.insert(
            "system".into(),
            json!([{"type": "text", "text": context.system_prompt, "cache_control": ephemeral()}]),
        );
    }
    if budget.is_none()
        && let Some(temperature) = options.temperature.filter(|t| t.is_finite())
    {
        body.insert("temperature".into(), json!(temperature));
    }
    if has_tools {
        let eager = model
            .compat
            .as_ref()
            .and_then(|compat| compat.get("supportsEagerToolInputStreaming"))
            .and_then(Value::as_bool)
            .unwrap_or(true);
        let mut tools: Vec<Value> = context.tools.iter().map(|t| tool(t, eager)).collect();
        // Like the system prompt and the last user message, the tools are a cache breakpoint.
        if let Some(last) = tools.last_mut() {
            last["cache_control"] = ephemeral();
        }
        body.insert("tools".into(), Value::Array(tools));
    }
    match budget {
        Some(budget) => {
            let budget = if budget == 0 { MIN_THINKING_BUDGET } else { budget };
            body.insert(
                "thinking".into(),
                json!({"type": "enabled", "budget_tokens": budget, "display": "summarized"}),
            );
        }
        None if model.reasoning && !forced => {
            body.insert("thinking".into(), json!({"type": "disabled"}));
        }
        None => {}
    }
    if let Some(choice) = choice {
        body.insert("tool_choice".into(), tool_choice(choice));
    }
    Value::Object(body)
}

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// Anthropic's `tool_choice` for ours.
pub(crate) fn tool_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!({"type": "auto"}),
        ToolChoice::None => json!({"type": "none"}),
        ToolChoice::Required => json!({"type": "any"}),
        ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
    }
}

/// A tool as pi-ai sends it: the schema's `properties` and `required` only.
fn tool(tool: &Arc<dyn AgentTool>, eager_input_streaming: bool) -> Value {
    let schema = tool.parameters().schema();
    let mut out = json!({"name": tool.name(), "description": tool.description()});
    if eager_input_streaming {
        out["eager_input_streaming"] = Value::Bool(true);
    }
    out["input_schema"] = json!({
        "type": "object",
        "properties": schema.get("properties").cloned().unwrap_or_else(|| json!({})),
        "required": schema.get("required").cloned().unwrap_or_else(|| json!([])),
    });
    out
}

fn messages(model: &Model, messages: &[AgentMessage]) -> Vec<Value> {
    let images = model.input.iter().any(|kind| kind == "image");
    let mut out: Vec<Value> = Vec::new();
    let mut results: Vec<Value> = Vec::new();
    let flush = |out: &mut Vec<Value>, results: &mut Vec<Value>| push_user(out, std::mem::take(results));
    for message in prepare_messages(messages) {
        match message.as_ref() {
            AgentMessage::ToolResult(result) => results.push(tool_result(result, images)),
            AgentMessage::User(user) => {
                flush(&mut out, &mut results);
                push_user(&mut out, user_content(&user.content, images));
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
    mark_cache_breakpoint(&mut out);
    out
}

/// Appends user blocks, to the previous message when it is the user's too: tool results and
/// the user text after them form one turn, as Anthropic expects (strict compatible servers
/// reject two user messages in a row).
fn push_user(out: &mut Vec<Value>, content: Vec<Value>) {
    if content.is_empty() {
        return;
    }
    if let Some(last) = out.last_mut()
        && last["role"] == "user"
        && let Some(blocks) = last["content"].as_array_mut()
    {
        blocks.extend(content);
        return;
    }
    out.push(json!({"role": "user", "content": content}));
}

/// Puts `cache_control` on the last block of the last message when it is the user's, so the
/// conversation so far is cached for the next turn.
fn mark_cache_breakpoint(messages: &mut [Value]) {
    let Some(last) = messages.last_mut() else {
        return;
    };
    if last["role"] != "user" {
        return;
    }
    if let Some(Value::Object(block)) = last["content"].as_array_mut().and_then(|blocks| blocks.last_mut()) {
        block.insert("cache_control".into(), ephemeral());
    }
}

fn text_block(text: &str) -> Option<Value> {
    (!text.trim().is_empty()).then(|| json!({"type": "text", "text": text}))
}

fn image_block(data: &str, mime_type: &str) -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": mime_type, "data": data}})
}

/// Text and image blocks; empty texts are dropped, and images when the model takes none.
fn media_blocks(blocks: &[ContentBlock], images: bool) -> Vec<Value> {
    blocks
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => text_block(&text.text),
            ContentBlock::Image(image) if images => Some(image_block(&image.data, &image.mime_type)),
            _ => None,
        })
        .collect()
}

fn user_content(content: &UserContent, images: bool) -> Vec<Value> {
    match content {
        UserContent::Text(text) => text_block(text).into_iter().collect(),
        UserContent::Blocks(blocks) => media_blocks(blocks, images),
    }
}

fn tool_result(result: &ToolResultMessage, images: bool) -> Value {
    let mut block = Map::new();
    block.insert("type".into(), json!("tool_result"));
    block.insert(
        "tool_use_id".into(),
        json!(crate::transform::sanitized_call_id(&result.tool_call_id)),
    );
    let content = media_blocks(&result.content, images);
    if !content.is_empty() {
        block.insert("content".into(), Value::Array(content));
    }
    block.insert("is_error".into(), json!(result.is_error));
    Value::Object(block)
}

/// Assistant blocks. Thinking is replayed with its signature only to the model that wrote it
/// (same provider, API and model id): a signed block goes back as `thinking`, a redacted one as
/// `redacted_thinking`. Thinking without a signature, or from another model, becomes plain
/// text; redacted thinking from another model is dropped.
fn assistant_content(model: &Model, assistant: &AssistantMessage) -> Vec<Value> {
    let same_model = assistant.provider == model.provider && assistant.api == model.api && assistant.model == model.id;
    let mut blocks = Vec::new();
    for block in &assistant.content {
        match block {
            ContentBlock::Text(text) => blocks.extend(text_block(&text.text)),
            ContentBlock::Thinking(thinking) => {
                let signature = thinking.thinking_signature.as_deref().filter(|s| !s.trim().is_empty());
                let redacted = thinking.redacted == Some(true);
                match (same_model, redacted, signature) {
                    (true, true, Some(data)) => blocks.push(json!({"type": "redacted_thinking", "data": data})),
                    (_, true, _) => {}
                    (true, false, Some(signature)) => blocks.push(json!({
                        "type": "thinking",
                        "thinking": thinking.thinking,
                        "signature": signature,
                    })),
                    (_, false, _) => blocks.extend(text_block(&thinking.thinking)),
                }
            }
            ContentBlock::ToolCall(call) => {
                let input = match &call.arguments {
                    Value::Object(_) => call.arguments.clone(),
                    _ => json!({}),
                };
                blocks.push(json!({
                    "type": "tool_use",
                    "id": crate::transform::sanitized_call_id(&call.id),
                    "name": call.name,
                    "input": input,
                }));
            }
            ContentBlock::Image(_) => {}
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_agent_core::{StopReason, ThinkingContent, ToolCall};

    fn model() -> Model {
        Model {
            id: "claude-test".into(),
            api: "anthropic-messages".into(),
            provider: "anthropic".into(),
            reasoning: true,
            max_tokens: 32_000,
            ..Model::unknown()
        }
    }

    fn body_for(messages: &[AgentMessage], options: &StreamOptions) -> Value {
        let context = LlmContext {
            system_prompt: "",
            messages,
            tools: &[],
        };
        body(&model(), &context, options)
    }

    #[test]
    fn tool_choice_mapping() {
        assert_eq!(tool_choice(&ToolChoice::Auto), json!({"type": "auto"}));
        assert_eq!(tool_choice(&ToolChoice::None), json!({"type": "none"}));
        assert_eq!(tool_choice(&ToolChoice::Required), json!({"type": "any"}));
        assert_eq!(
            tool_choice(&ToolChoice::Tool("resolve".into())),
            json!({"type": "tool", "name": "resolve"})
        );
    }

    #[test]
    fn tool_ids_are_normalised() {
        assert_eq!(crate::transform::sanitized_call_id("call_1|fc.2"), "call_1_fc_2");
        assert_eq!(crate::transform::sanitized_call_id(&"x".repeat(80)).len(), 64);
    }

    #[test]
    fn thinking_replaces_temperature_and_tool_choice_without_tools_is_dropped() {
        let options = StreamOptions {
            reasoning: Some(ThinkingLevel::Low),
            temperature: Some(0.5),
            tool_choice: Some(ToolChoice::Required),
            ..Default::default()
        };
        let body = body_for(&[AgentMessage::user("hi")], &options);
        assert_eq!(
            body["thinking"],
            json!({"type": "enabled", "budget_tokens": 2048, "display": "summarized"})
        );
        assert!(body.get("temperature").is_none());
        assert!(body.get("tool_choice").is_none());
        assert!(body.get("system").is_none());
        assert_eq!(body["max_tokens"], 32_000);

        let options = StreamOptions {
            temperature: Some(0.5),
            max_tokens: Some(100),
            ..Default::default()
        };
        let body = body_for(&[AgentMessage::user("hi")], &options);
        assert_eq!(body["temperature"], 0.5);
        assert_eq!(body["max_tokens"], 100);
        // A reasoning model at `off` is told not to think (pi-ai's `thinking: {type: "disabled"}`).
        assert_eq!(body["thinking"], json!({"type": "disabled"}));
    }

    #[test]
    fn images_are_dropped_for_text_only_models_and_empty_messages_vanish() {
        let mut text_only = model();
        text_only.input = vec!["text".into()];
        let user = AgentMessage::User(pi_agent_core::UserMessage {
            content: UserContent::Blocks(vec![ContentBlock::image("AAAA", "image/png")]),
            timestamp: 0,
        });
        let context = LlmContext {
            system_prompt: "",
            messages: std::slice::from_ref(&user),
            tools: &[],
        };
        assert_eq!(
            body(&text_only, &context, &StreamOptions::default())["messages"],
            json!([])
        );
    }

    #[test]
    fn foreign_thinking_becomes_text() {
        let assistant = AssistantMessage {
            content: vec![
                ContentBlock::Thinking(ThinkingContent {
                    thinking: "hmm".into(),
                    thinking_signature: Some("sig".into()),
                    redacted: None,
                }),
                ContentBlock::Thinking(ThinkingContent {
                    thinking: "[Reasoning redacted]".into(),
                    thinking_signature: Some("blob".into()),
                    redacted: Some(true),
                }),
                ContentBlock::ToolCall(ToolCall::new("c1", "t", json!("not an object"))),
            ],
            api: "openai-responses".into(),
            provider: "openai".into(),
            model: "gpt".into(),
            stop_reason: StopReason::ToolUse,
            ..Default::default()
        };
        let messages = [AgentMessage::user("q"), assistant.into()];
        let body = body_for(&messages, &StreamOptions::default());
        assert_eq!(
            body["messages"][1]["content"],
            json!([
                {"type": "text", "text": "hmm"},
                {"type": "tool_use", "id": "c1", "name": "t", "input": {}}
            ])
        );
    }
}
