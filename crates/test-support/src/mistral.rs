//! Replies of a Mistral chat-completions server (`POST {baseUrl}/v1/chat/completions`, API
//! `mistral-conversations`), as server-sent events in Mistral's documented format, and a model that
//! points at a [`MockServer`](super::MockServer).
//!
//! Each event is one `chat.completion.chunk` ([`chunk`]) with the first choice's `delta` (`content`
//! as a string or as `text` / `thinking` parts, `tool_calls`); the last carries `finish_reason`
//! and `usage` ([`finish`]); `data: [DONE]` ends the stream ([`DONE`]). [`text`] is a whole text
//! response.
//!
//! ```
//! use pi_test_support::mistral;
//! use serde_json::json;
//!
//! let events = vec![
//!     mistral::chunk(json!({"role": "assistant", "content": "Hel"})),
//!     mistral::chunk(json!({"content": "lo"})),
//!     mistral::finish("stop", 10, 2),
//!     mistral::DONE.to_owned(),
//! ];
//! assert!(events[0].starts_with("data: {\"id\""));
//! assert_eq!(mistral::text("Hi.").chunks.len(), 3);
//! ```

use pi_agent_core::{Model, ModelCost};
use serde_json::{Value, json};

use super::Reply;

/// Model id of [`model`].
pub const MODEL_ID: &str = "devstral-medium-latest";

/// The end marker of the stream.
pub const DONE: &str = "data: [DONE]\n\n";

/// Devstral Medium as pi-ai 0.73.1's catalog has it (provider `mistral`, text input, $0.40 / $2 per
/// million input / output tokens, a 262 144-token window, 262 144 output tokens), served at
/// `base_url` (e.g. `server.url("")`).
pub fn model(base_url: impl Into<String>) -> Model {
    Model {
        id: MODEL_ID.into(),
        name: "Devstral 2 (latest)".into(),
        api: "mistral-conversations".into(),
        provider: "mistral".into(),
        base_url: base_url.into(),
        reasoning: false,
        input: vec!["text".into()],
        cost: ModelCost {
            input: 0.4,
            output: 2.0,
            cache_read: 0.0,
            cache_write: 0.0,
        },
        context_window: 262_144,
        max_tokens: 262_144,
        headers: None,
        compat: None,
        thinking_level_map: None,
    }
}

/// One server-sent event carrying `value`.
pub fn event(value: &Value) -> String {
    format!("data: {value}\n\n")
}

/// A chunk whose first choice holds `delta`.
pub fn chunk(delta: Value) -> String {
    event(&json!({
        "id": "cmpl-mistral-1",
        "object": "chat.completion.chunk",
        "created": 1_764_000_000,
        "model": MODEL_ID,
        "choices": [{"index": 0, "delta": delta, "finish_reason": null}],
    }))
}

/// The last chunk: an empty delta, `finish_reason`, and the usage (`prompt_tokens`,
/// `completion_tokens`).
pub fn finish(reason: &str, prompt: u64, completion: u64) -> String {
    event(&json!({
        "id": "cmpl-mistral-1",
        "object": "chat.completion.chunk",
        "created": 1_764_000_000,
        "model": MODEL_ID,
        "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": reason}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }))
}

/// A whole text response: `text`, then `stop` with 10 prompt and 2 completion tokens, then
/// [`DONE`].
pub fn text(text: &str) -> Reply {
    Reply::events(&[
        chunk(json!({"role": "assistant", "content": text})),
        finish("stop", 10, 2),
        DONE.to_owned(),
    ])
}

/// An error answer as Mistral gives it: `{"object": "error", "message", "type", "code"}`.
pub fn error(status: u16, kind: &str, message: &str) -> Reply {
    let body = json!({"object": "error", "message": message, "type": kind, "param": null, "code": status.to_string()});
    Reply::json(status, &body.to_string())
}
