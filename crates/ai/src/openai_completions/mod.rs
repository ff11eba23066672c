//! The `openai-completions` wire API: `POST {baseUrl}/chat/completions` with `stream: true`.
//!
//! This is the API most OpenAI-compatible servers speak (OpenAI itself, Ollama, vLLM, llama.cpp,
//! LM Studio, OpenRouter, Groq, DeepSeek, xAI, Mistral …). [`prepare`] builds the request from the
//! agent transcript; [`CompletionsProtocol`] maps the streamed `chat.completion.chunk`s onto pi's
//! assistant message events. Server quirks are described by [`Compat`], read from the model's `compat`
//! object (pi's `models.json` field) with defaults detected from the provider and base URL.
//!
//! ```no_run
//! # async fn demo() {
//! use futures::StreamExt;
//! use pi_agent_core::{AgentMessage, LlmContext, Model, StreamOptions};
//! use pi_ai::HttpClient;
//!
//! let model = Model {
//!     id: "llama3.1:8b".into(),
//!     api: "openai-completions".into(),
//!     provider: "ollama".into(),
//!     base_url: "http://localhost:11434/v1".into(),
//!     ..Model::unknown()
//! };
//! let messages = [AgentMessage::user("Hello")];
//! let context = LlmContext { system_prompt: "Be brief.", messages: &messages, tools: &[] };
//! let mut events = pi_ai::openai_completions::stream(&HttpClient::default(), &model, &context, &StreamOptions::default());
//! while let Some(event) = events.next().await {
//!     println!("{}", event.kind());
//! }
//! # }
//! ```

mod compat;
mod protocol;
mod request;
pub(crate) use request::tool_choice;

use pi_agent_core::{AssistantMessageStream, LlmContext, Model, StreamOptions};

use crate::driver::{self, PreparedRequest};
use crate::http::HttpClient;

pub use compat::{Compat, MaxTokensField, ThinkingFormat};
pub use protocol::CompletionsProtocol;

/// The `api` value of this wire API.
pub const API: &str = "openai-completions";

/// Builds the request for one response.
pub fn prepare(model: &Model, context: &LlmContext<'_>, options: &StreamOptions) -> PreparedRequest {
    let compat = Compat::for_model(model);
    let api_key = options.api_key.clone().filter(|key| !key.is_empty());
    PreparedRequest {
        url: format!("{}/chat/completions", model.base_url.trim_end_matches('/')),
        headers: request::headers(model, options, api_key.as_deref()),
        body: request::body(model, context, options, &compat),
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
    let protocol = protocol::CompletionsProtocol::new(model, &Compat::for_model(model));
    driver::drive(client.clone(), model, request, protocol, options.cancel.clone())
}

/// The request body for a call (for the comparison with pi's recorded bodies).
#[cfg(test)]
pub(crate) fn request_body(
    model: &pi_agent_core::Model,
    context: &pi_agent_core::LlmContext<'_>,
    options: &pi_agent_core::StreamOptions,
) -> serde_json::Value {
    request::body(model, context, options, &Compat::for_model(model))
}
