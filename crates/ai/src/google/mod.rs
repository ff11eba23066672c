//! The `google-generative-ai` wire API (Gemini): `POST {baseUrl}/models/{id}:streamGenerateContent?alt=sse`.
//!
//! The request is what Google's SDK sends for pi-ai 0.73.1's Google provider: the key in
//! `x-goog-api-key`, then the model's and the call's headers, and a `GenerateContentRequest` body
//! (`contents`, `systemInstruction`, `tools`, `toolConfig`, `generationConfig` with
//! `thinkingConfig`; see the `request` module for how the transcript maps onto it). The base URL
//! carries the API version (`https://generativelanguage.googleapis.com/v1beta`).
//!
//! The response is a server-sent event stream of `GenerateContentResponse` chunks
//! ([`GoogleProtocol`]): text and thought parts, whole function calls, the finish reason and the
//! usage. Thought signatures are kept on the blocks they came with (thinking, text, tool call) and
//! sent back to the same model, as the API requires for multi-turn function calling.
//!
//! [`crate::google_vertex`] sends the same body to Vertex AI.
//!
//! ```no_run
//! # async fn demo() {
//! use futures::StreamExt;
//! use pi_agent_core::{AgentMessage, LlmContext, Model, StreamOptions};
//! use pi_ai::HttpClient;
//!
//! let model = Model {
//!     id: "gemini-2.5-flash".into(),
//!     api: "google-generative-ai".into(),
//!     provider: "google".into(),
//!     base_url: "https://generativelanguage.googleapis.com/v1beta".into(),
//!     reasoning: true,
//!     ..Model::unknown()
//! };
//! let messages = [AgentMessage::user("Hello")];
//! let context = LlmContext { system_prompt: "Be brief.", messages: &messages, tools: &[] };
//! let options = StreamOptions { api_key: Some("AIza…".into()), ..StreamOptions::default() };
//! let mut events = pi_ai::google::stream(&HttpClient::default(), &model, &context, &options);
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

pub use events::GoogleProtocol;

/// The `api` value of this wire API.
pub const API: &str = "google-generative-ai";

/// The path of a model's streaming method below the base URL: `models/{id}:streamGenerateContent`
/// (an id that already names its collection, `models/…` or `tunedModels/…`, is kept).
pub(crate) fn model_path(id: &str) -> String {
    if id.starts_with("models/") || id.starts_with("tunedModels/") {
        format!("{id}:streamGenerateContent")
    } else {
        format!("models/{id}:streamGenerateContent")
    }
}

/// `headers` with `set` applied: a later header replaces an earlier one of the same name, ignoring
/// case. The model's headers and then the call's come after the API's own.
pub(crate) fn headers(own: Vec<(String, String)>, model: &Model, options: &StreamOptions) -> Vec<(String, String)> {
    let mut headers: Vec<(String, String)> = Vec::new();
    let extra = model.headers.iter().flatten().chain(&options.headers);
    for (name, value) in own.into_iter().chain(extra.map(|(n, v)| (n.clone(), v.clone()))) {
        headers.retain(|(existing, _)| !existing.eq_ignore_ascii_case(&name));
        headers.push((name, value));
    }
    headers
}

/// Builds the request for one response.
pub fn prepare(model: &Model, context: &LlmContext<'_>, options: &StreamOptions) -> PreparedRequest {
    let api_key = options.api_key.clone().filter(|key| !key.is_empty());
    let own = api_key
        .iter()
        .map(|key| ("x-goog-api-key".to_owned(), key.clone()))
        .collect();
    PreparedRequest {
        url: format!(
            "{}/{}?alt=sse",
            model.base_url.trim_end_matches('/'),
            model_path(&model.id)
        ),
        headers: headers(own, model, options),
        body: request::body(model, context, options, request::Flavor::Gemini),
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
        GoogleProtocol::new(model.provider.clone()),
        options.cancel.clone(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_paths() {
        assert_eq!(
            model_path("gemini-2.5-pro"),
            "models/gemini-2.5-pro:streamGenerateContent"
        );
        assert_eq!(model_path("tunedModels/mine"), "tunedModels/mine:streamGenerateContent");
    }
}
