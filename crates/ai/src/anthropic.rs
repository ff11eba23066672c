//! PLACEHOLDER for the `anthropic` wire API: replace this whole file with the real implementation.

use pi_agent_core::{AssistantMessageStream, LlmContext, Model, StreamOptions};

use crate::http::HttpClient;

/// Streams one response (PLACEHOLDER).
pub fn stream(
    _client: &HttpClient,
    model: &Model,
    _context: &LlmContext<'_>,
    _options: &StreamOptions,
) -> AssistantMessageStream {
    crate::driver::failed(model, "PLACEHOLDER".to_owned())
}
