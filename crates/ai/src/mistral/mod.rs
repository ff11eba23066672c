//! The `mistral-conversations` wire API (Mistral): `POST {baseUrl}/v1/chat/completions` with
//! `stream: true`.
//!
//! The request is what Mistral's TypeScript SDK sends for pi-ai 0.73.1's Mistral provider:
//! `authorization: Bearer <key>`, `accept: text/event-stream`, the session id as `x-affinity` (which
//! Mistral uses to reuse its prompt cache) unless the headers name one, then the model's and the
//! call's headers; the body in the SDK's wire form (snake case, its field order; see the `request`
//! module). The base URL is the bare host (`https://api.mistral.ai`).
//!
//! The response is a server-sent event stream of chat-completion chunks ([`MistralProtocol`]) that
//! ends with `data: [DONE]`: text and thinking content, tool calls, the finish reason, the usage.
//!
//! Tool-call ids: Mistral takes ids of exactly nine letters and digits. Calls of the same model go
//! back with their ids; another model's (`call_…|fc_…` from the Responses API, `toolu_…`) get pi's
//! nine-character form, derived from the id by pi's short hash, and their results follow.
//!
//! ```no_run
//! # async fn demo() {
//! use futures::StreamExt;
//! use pi_agent_core::{AgentMessage, LlmContext, Model, StreamOptions};
//! use pi_ai::HttpClient;
//!
//! let model = Model {
//!     id: "devstral-medium-latest".into(),
//!     api: "mistral-conversations".into(),
//!     provider: "mistral".into(),
//!     base_url: "https://api.mistral.ai".into(),
//!     ..Model::unknown()
//! };
//! let messages = [AgentMessage::user("Hello")];
//! let context = LlmContext { system_prompt: "Be brief.", messages: &messages, tools: &[] };
//! let options = StreamOptions { api_key: Some("…".into()), ..StreamOptions::default() };
//! let mut events = pi_ai::mistral::stream(&HttpClient::default(), &model, &context, &options);
//! while let Some(event) = events.next().await {
//!     println!("{}", event.kind());
//! }
//! # }
//! ```

mod events;
mod ids;
mod request;

use pi_agent_core::{AssistantMessageStream, LlmContext, Model, StreamOptions};

use crate::driver::{self, PreparedRequest};
use crate::http::HttpClient;

pub use events::MistralProtocol;

/// The `api` value of this wire API.
pub const API: &str = "mistral-conversations";

/// Builds the request for one response.
pub fn prepare(model: &Model, context: &LlmContext<'_>, options: &StreamOptions) -> PreparedRequest {
    let api_key = options.api_key.clone().filter(|key| !key.is_empty());
    PreparedRequest {
        url: format!("{}/v1/chat/completions", model.base_url.trim_end_matches('/')),
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
        MistralProtocol::new(model.provider.clone()),
        options.cancel.clone(),
    )
}
