//! Replies of a Gemini API server (`POST {baseUrl}/models/{id}:streamGenerateContent?alt=sse`,
//! APIs `google-generative-ai` and `google-vertex`), as server-sent events in Google's documented
//! format, and models that point at a [`MockServer`](super::MockServer).
//!
//! Each event is one `GenerateContentResponse` ([`chunk`]): the first candidate's `content.parts`
//! (text, `thought: true` text, `functionCall`s, each with an optional `thoughtSignature`), then
//! a `finishReason` and the `usageMetadata` on the last chunk ([`finish`]). There is no end
//! marker: the stream ends with the body. [`text`] is a whole text response.
//!
//! ```
//! use pi_test_support::google;
//! use serde_json::json;
//!
//! let events = vec![
//!     google::chunk(json!([{"text": "Hel"}])),
//!     google::chunk(json!([{"text": "lo"}])),
//!     google::finish("STOP", 10, 2, 0, 0),
//! ];
//! assert!(events[0].starts_with("data: {\"candidates\""));
//! assert_eq!(google::text("Hi.").chunks.len(), 2);
//! ```

use pi_agent_core::{Model, ModelCost};
use serde_json::{Value, json};

use super::Reply;

/// Model id of [`model`].
pub const MODEL_ID: &str = "gemini-2.5-flash";

/// Gemini 2.5 Flash as pi-ai 0.73.1's catalog has it (provider `google`, reasoning, text and
/// image input, $0.30 / $2.50 / $0.03 per million input / output / cache-read tokens, a
/// 1 048 576-token window, 65 536 output tokens), served at `base_url` (e.g. `server.url("/v1beta")`).
pub fn model(base_url: impl Into<String>) -> Model {
    Model {
        id: MODEL_ID.into(),
        name: "Gemini 2.5 Flash".into(),
        api: "google-generative-ai".into(),
        provider: "google".into(),
        base_url: base_url.into(),
        reasoning: true,
        input: vec!["text".into(), "image".into()],
        cost: ModelCost {
            input: 0.3,
            output: 2.5,
            cache_read: 0.03,
            cache_write: 0.0,
        },
        context_window: 1_048_576,
        max_tokens: 65_536,
        headers: None,
        compat: None,
        thinking_level_map: None,
    }
}

/// [`model`] on Vertex AI (provider and API `google-vertex`).
pub fn vertex_model(base_url: impl Into<String>) -> Model {
    Model {
        api: "google-vertex".into(),
        provider: "google-vertex".into(),
        ..model(base_url)
    }
}

/// One server-sent event carrying `value`.
pub fn event(value: &Value) -> String {
    format!("data: {value}\r\n\r\n")
}

/// A chunk whose first candidate holds `parts` (a JSON array).
pub fn chunk(parts: Value) -> String {
    event(&json!({
        "candidates": [{"content": {"parts": parts, "role": "model"}, "index": 0}],
        "modelVersion": MODEL_ID,
        "responseId": "resp-gemini-1",
    }))
}

/// The last chunk: an empty text part, `finishReason`, and the usage (`promptTokenCount`,
/// `candidatesTokenCount`, `thoughtsTokenCount`, `cachedContentTokenCount`).
pub fn finish(reason: &str, prompt: u64, candidates: u64, thoughts: u64, cached: u64) -> String {
    let mut usage = json!({
        "promptTokenCount": prompt,
        "candidatesTokenCount": candidates,
        "totalTokenCount": prompt + candidates + thoughts,
    });
    if thoughts > 0 {
        usage["thoughtsTokenCount"] = json!(thoughts);
    }
    if cached > 0 {
        usage["cachedContentTokenCount"] = json!(cached);
    }
    event(&json!({
        "candidates": [{"content": {"parts": [{"text": ""}], "role": "model"}, "finishReason": reason, "index": 0}],
        "usageMetadata": usage,
        "modelVersion": MODEL_ID,
        "responseId": "resp-gemini-1",
    }))
}

/// A whole text response: `text`, then `STOP` with 10 prompt and 2 candidate tokens.
pub fn text(text: &str) -> Reply {
    Reply::events(&[chunk(json!([{"text": text}])), finish("STOP", 10, 2, 0, 0)])
}

/// An error answer as Google's APIs give it: `{"error": {"code", "message", "status"}}`.
pub fn error(code: u16, status: &str, message: &str) -> Reply {
    let body = json!({"error": {"code": code, "message": message, "status": status}});
    Reply::json(code, &body.to_string())
}
