//! Compatibility switches of partially OpenAI-compatible servers (pi's `compat` object).

use pi_agent_core::Model;
use serde_json::Value;

/// Which body field carries the output-token limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaxTokensField {
    /// `max_completion_tokens` (OpenAI's current name).
    MaxCompletionTokens,
    /// `max_tokens` (older servers, Mistral).
    MaxTokens,
}

/// How a reasoning level is put into the request body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThinkingFormat {
    /// `reasoning_effort: "low" | "medium" | …` (OpenAI and most compatible servers).
    OpenAi,
    /// `reasoning: {effort}` (OpenRouter).
    OpenRouter,
    /// `enable_thinking: bool` (Z.ai, Qwen).
    EnableThinking,
    /// `thinking: {type: "enabled" | "disabled"}` and, when on, `reasoning_effort` (DeepSeek).
    DeepSeek,
}

/// Compatibility switches for partially OpenAI-compatible servers (pi's `compat` for
/// `openai-completions`). Unset keys take the defaults [`Compat::for_model`] detects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compat {
    /// Send the system prompt of a reasoning model as a `developer` message
    /// (`supportsDeveloperRole`).
    pub supports_developer_role: bool,
    /// Send `reasoning_effort` (`supportsReasoningEffort`).
    pub supports_reasoning_effort: bool,
    /// Send `stream_options: {include_usage: true}` (`supportsUsageInStreaming`).
    pub supports_usage_in_streaming: bool,
    /// The server ends every response with a `finish_reason` (`supportsFinishReason`); when
    /// false, a body that ends without one finishes normally.
    pub supports_finish_reason: bool,
    /// The output-token limit field (`maxTokensField`).
    pub max_tokens_field: MaxTokensField,
    /// Add `name` to tool results (`requiresToolResultName`).
    pub requires_tool_result_name: bool,
    /// Insert an assistant message between tool results and a user message
    /// (`requiresAssistantAfterToolResult`).
    pub requires_assistant_after_tool_result: bool,
    /// Replay thinking blocks as text (`requiresThinkingAsText`).
    pub requires_thinking_as_text: bool,
    /// Shorten tool-call ids to Mistral's nine alphanumeric characters (`requiresMistralToolIds`).
    pub requires_mistral_tool_ids: bool,
    /// How reasoning is requested (`thinkingFormat`: `openai`, `openrouter`, `zai`, `qwen`,
    /// `deepseek`).
    pub thinking_format: ThinkingFormat,
    /// Send `store: false` (`supportsStore`; off for the servers that reject it).
    pub supports_store: bool,
    /// Send `strict: false` in each tool (`supportsStrictMode`; off for Moonshot and Cloudflare's AI
    /// gateway, which reject unknown fields).
    pub supports_strict_mode: bool,
}

impl Compat {
    /// The switches for `model`: its `compat` object over the defaults detected from the
    /// provider name and base URL (as pi-ai detects them).
    pub fn for_model(model: &Model) -> Compat {
        let provider = model.provider.as_str();
        let url = model.base_url.as_str();
        let is = |name: &str, host: &str| provider == name || url.contains(host);
        let zai = is("zai", "api.z.ai");
        let xai = is("xai", "api.x.ai");
        let mistral = is("mistral", "mistral.ai");
        let moonshot = provider == "moonshotai" || provider == "moonshotai-cn" || url.contains("api.moonshot.");
        let cloudflare_gateway = is("cloudflare-ai-gateway", "gateway.ai.cloudflare.com");
        let store_rejected = is("cerebras", "cerebras.ai")
            || xai
            || url.contains("chutes.ai")
            || url.contains("deepseek.com")
            || zai
            || moonshot
            || is("opencode", "opencode.ai")
            || is("cloudflare-workers-ai", "api.cloudflare.com")
            || cloudflare_gateway;
        let non_standard = is("cerebras", "cerebras.ai")
            || xai
            || mistral
            || url.contains("chutes.ai")
            || url.contains("deepseek.com")
            || zai
            || is("opencode", "opencode.ai");
        let mut compat = Compat {
            supports_developer_role: !non_standard,
            supports_reasoning_effort: !xai && !zai,
            supports_usage_in_streaming: true,
            supports_finish_reason: true,
            max_tokens_field: if mistral || url.contains("chutes.ai") {
                MaxTokensField::MaxTokens
            } else {
                MaxTokensField::MaxCompletionTokens
            },
            requires_tool_result_name: mistral,
            requires_assistant_after_tool_result: false,
            requires_thinking_as_text: mistral,
            requires_mistral_tool_ids: mistral,
            thinking_format: if provider == "deepseek" || url.contains("deepseek.com") {
                ThinkingFormat::DeepSeek
            } else if zai {
                ThinkingFormat::EnableThinking
            } else if is("openrouter", "openrouter.ai") {
                ThinkingFormat::OpenRouter
            } else {
                ThinkingFormat::OpenAi
            },
            supports_store: !store_rejected,
            supports_strict_mode: !moonshot && !cloudflare_gateway,
        };
        if let Some(Value::Object(overrides)) = &model.compat {
            let flag = |key: &str, current: bool| overrides.get(key).and_then(Value::as_bool).unwrap_or(current);
            compat.supports_developer_role = flag("supportsDeveloperRole", compat.supports_developer_role);
            compat.supports_reasoning_effort = flag("supportsReasoningEffort", compat.supports_reasoning_effort);
            compat.supports_usage_in_streaming = flag("supportsUsageInStreaming", compat.supports_usage_in_streaming);
            compat.supports_finish_reason = flag("supportsFinishReason", compat.supports_finish_reason);
            compat.requires_tool_result_name = flag("requiresToolResultName", compat.requires_tool_result_name);
            compat.requires_assistant_after_tool_result = flag(
                "requiresAssistantAfterToolResult",
                compat.requires_assistant_after_tool_result,
            );
            compat.requires_thinking_as_text = flag("requiresThinkingAsText", compat.requires_thinking_as_text);
            compat.requires_mistral_tool_ids = flag("requiresMistralToolIds", compat.requires_mistral_tool_ids);
            compat.supports_store = flag("supportsStore", compat.supports_store);
            compat.supports_strict_mode = flag("supportsStrictMode", compat.supports_strict_mode);
            match overrides.get("maxTokensField").and_then(Value::as_str) {
                Some("max_tokens") => compat.max_tokens_field = MaxTokensField::MaxTokens,
                Some("max_completion_tokens") => compat.max_tokens_field = MaxTokensField::MaxCompletionTokens,
                _ => {}
            }
            match overrides.get("thinkingFormat").and_then(Value::as_str) {
                Some("openai") => compat.thinking_format = ThinkingFormat::OpenAi,
                Some("openrouter") => compat.thinking_format = ThinkingFormat::OpenRouter,
                Some("zai" | "qwen") => compat.thinking_format = ThinkingFormat::EnableThinking,
                Some("deepseek") => compat.thinking_format = ThinkingFormat::DeepSeek,
                _ => {}
            }
        }
        compat
    }
}
