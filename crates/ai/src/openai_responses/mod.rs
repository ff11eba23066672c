//! The `openai-responses` wire API: `POST {baseUrl}/responses` with `stream: true`.
//!
//! OpenAI's Responses API (also served by Azure, OpenRouter and some local servers). [`prepare`]
//! builds the request from the agent transcript the way pi-ai's `openai-responses` provider does;
//! [`ResponsesProtocol`] maps the streamed `response.*` events onto pi's assistant-message events.
//!
//! Conventions shared by both directions, as pi stores them:
//!
//! * a tool call's `id` is `<call_id>|<item_id>` (the function call's `call_id` and its output
//!   item id); requests split it again, tool results answer the `call_id` part;
//! * a thinking block's `thinkingSignature` is the complete `reasoning` output item as JSON
//!   (with its `encrypted_content`), replayed verbatim in later requests (`store: false` keeps
//!   the conversation stateless, so the encrypted reasoning travels with the history);
//! * a text block's `textSignature` is the id of the output message it came from.
//!
//! ```no_run
//! # async fn demo() {
//! use futures::StreamExt;
//! use pi_agent_core::{AgentMessage, LlmContext, Model, StreamOptions};
//! use pi_ai::HttpClient;
//!
//! let model = Model {
//!     id: "gpt-5-mini".into(),
//!     api: "openai-responses".into(),
//!     provider: "openai".into(),
//!     base_url: "https://api.openai.com/v1".into(),
//!     reasoning: true,
//!     ..Model::unknown()
//! };
//! let messages = [AgentMessage::user("Hello")];
//! let context = LlmContext { system_prompt: "Be brief.", messages: &messages, tools: &[] };
//! let options = StreamOptions { api_key: Some("sk-…".into()), ..StreamOptions::default() };
//! let mut events = pi_ai::openai_responses::stream(&HttpClient::default(), &model, &context, &options);
//! while let Some(event) = events.next().await {
//!     println!("{}", event.kind());
//! }
//! # }
//! ```

mod events;
pub(crate) mod request;

use pi_agent_core::{AssistantMessageStream, LlmContext, Model, StreamOptions};

use crate::driver::{self, PreparedRequest};
use crate::http::HttpClient;

pub use events::ResponsesProtocol;

/// The `api` value of this wire API.
pub const API: &str = "openai-responses";

/// Builds the request for one response.
pub fn prepare(model: &Model, context: &LlmContext<'_>, options: &StreamOptions) -> PreparedRequest {
    let api_key = options.api_key.clone().filter(|key| !key.is_empty());
    PreparedRequest {
        url: format!("{}/responses", model.base_url.trim_end_matches('/')),
        headers: request::headers(model, options, api_key.as_deref()),
        body: request::body(model, context, options),
        api_key,
        hooks: options.provider_hooks.clone(),
    }
}

/// Streams one response of `model` (see the module docs). The request is built before this
/// returns; the stream never fails, every failure is its final `error` event.
pub fn stream(
    client: &HttpClient,
    model: &Model,
    context: &LlmContext<'_>,
    options: &StreamOptions,
) -> AssistantMessageStream {
    let request = prepare(model, context, options);
    driver::drive(
        client.clone(),
        model,
        request,
        events::ResponsesProtocol::new(),
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
