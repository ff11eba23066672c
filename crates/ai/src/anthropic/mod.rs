//! The `anthropic-messages` wire API: Anthropic's Messages API with SSE streaming.
//!
//! # Request
//!
//! `POST {baseUrl}/v1/messages` ([`endpoint`] says how the base URL is joined) with the
//! headers `x-api-key`, `anthropic-version: 2023-06-01`, `accept: text/event-stream`,
//! `content-type: application/json`, then the model's and the call's own headers. The body:
//!
//! * `model`, `max_tokens` (the options', else the model's up to 32000, else [`DEFAULT_MAX_TOKENS`]),
//!   `stream: true`;
//! * `system`: the system prompt as one text block, left out when empty;
//! * `messages`, after [`crate::transform::prepare_messages`] (failed assistant turns left out,
//!   orphaned tool calls answered with `No result provided`): user text and base64 `image`
//!   blocks (images only for models whose `input` has `image`); assistant `text`, `thinking`
//!   with its `signature` (or `redacted_thinking` with its `data`), `tool_use`; tool results as
//!   a `user` message of `tool_result` blocks. Consecutive user-side messages (tool results, and
//!   a user message right after them) are merged into one `user` message; empty texts and
//!   messages left without blocks are dropped;
//! * prompt caching: `cache_control: {type: "ephemeral"}` on the system block and on the last
//!   block of the final user message;
//! * `tools` (`name`, `description`, `input_schema`) and `tool_choice` (`auto`, `none`, `any`
//!   for required, `{type: "tool", name}` for a named tool; only sent with tools);
//! * `thinking: {type: "enabled", budget_tokens, display: "summarized"}` when a reasoning level
//!   (clamped to the model's levels) is set on a reasoning model, with `max_tokens` raised by the
//!   budget ([`thinking_budget`]); `{type: "disabled"}` for a reasoning model at `off`; neither
//!   when the tool choice forces a tool call, which Anthropic does not allow together with
//!   thinking; `temperature` only without thinking. Tools carry `eager_input_streaming: true`
//!   unless `compat.supportsEagerToolInputStreaming` is false.
//!
//! # Stream
//!
//! `message_start` gives the response id and the input-side usage; `content_block_start`,
//! `content_block_delta` (`text_delta`, `thinking_delta`, `signature_delta`,
//! `input_json_delta`) and `content_block_stop` build text, thinking and tool-call blocks
//! addressed by Anthropic's `index`; `message_delta` gives the stop reason (`end_turn` /
//! `stop_sequence` → stop, `max_tokens` → length, `tool_use` → toolUse, `refusal` → error) and
//! the cumulative output usage; `message_stop` finishes; `ping` is ignored; an `error` event
//! fails the response with `<type>: <message>`. Data that is not the JSON we expect fails it
//! with `Malformed SSE data from anthropic: …`.
//!
//! ```no_run
//! use pi_agent_core::{AgentMessage, LlmContext, Model, StreamOptions};
//! use pi_ai::HttpClient;
//!
//! # async fn demo(model: Model) {
//! let messages = [AgentMessage::user("Hello")];
//! let context = LlmContext { system_prompt: "Be brief.", messages: &messages, tools: &[] };
//! let options = StreamOptions { api_key: Some("sk-ant-…".into()), ..Default::default() };
//! let events = pi_ai::anthropic::stream(&HttpClient::default(), &model, &context, &options);
//! # drop(events);
//! # }
//! ```

mod events;
mod request;

use pi_agent_core::{AssistantMessageStream, LlmContext, Model, StreamOptions};

use crate::http::HttpClient;

pub use events::REDACTED_THINKING_TEXT;
pub use request::{
    ANTHROPIC_VERSION, DEFAULT_BASE_URL, DEFAULT_MAX_TOKENS, MIN_THINKING_BUDGET, endpoint, prepare_request,
    thinking_budget,
};

/// Streams one response of `model` for `context`.
///
/// The request is built before this returns (so `context` may be dropped right after); the
/// HTTP exchange runs on a spawned task, which needs a tokio runtime. The stream never fails:
/// every problem ends it with an `error` event, `aborted` when `options.cancel` fired.
pub fn stream(
    client: &HttpClient,
    model: &Model,
    context: &LlmContext<'_>,
    options: &StreamOptions,
) -> AssistantMessageStream {
    let request = prepare_request(model, context, options);
    crate::driver::drive(
        client.clone(),
        model,
        request,
        events::AnthropicEvents::default(),
        options.cancel.clone(),
    )
}

/// The request body for a call (for the comparison with pi's recorded bodies).
#[cfg(test)]
pub(crate) fn request_body(
    model: &pi_agent_core::Model,
    context: &pi_agent_core::LlmContext<'_>,
    options: &pi_agent_core::StreamOptions,
) -> serde_json::Value {
    request::body(model, context, options)
}
