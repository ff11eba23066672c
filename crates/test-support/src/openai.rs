//! Replies of an OpenAI-compatible `/chat/completions` server, as server-sent events, and the
//! model and `models.json` that point at a [`MockServer`](super::MockServer).
//!
//! ```
//! use pi_test_support::openai;
//! use serde_json::json;
//!
//! let reply = openai::tool_calls(&[("call-1", "read", json!({"path": "a.txt"}))]);
//! let body: String = reply.chunks.iter().map(|(_, b)| String::from_utf8_lossy(b).into_owned()).collect();
//! assert!(body.contains("\"finish_reason\":\"tool_calls\""));
//! assert!(body.ends_with("data: [DONE]\n\n"));
//! ```

use pi_agent_core::{Model, ModelCost};
use serde_json::{Value, json};

use super::Reply;

/// Provider name of [`model`] and [`models_json`].
pub const PROVIDER: &str = "mock";
/// Model id of [`model`] and [`models_json`].
pub const MODEL_ID: &str = "mock-model";
/// The `id` of every chunk (what a provider keeps as the response id).
pub const RESPONSE_ID: &str = "chatcmpl-mock";

/// One `data:` event.
pub fn data(value: &Value) -> String {
    format!("data: {value}\n\n")
}

/// A chunk carrying `delta`.
pub fn delta(delta: Value) -> String {
    data(&json!({
        "id": RESPONSE_ID, "object": "chat.completion.chunk", "model": MODEL_ID,
        "choices": [{"index": 0, "delta": delta, "finish_reason": null}]
    }))
}

/// The chunk ending the choice with `reason` (`stop`, `tool_calls`, `length`).
pub fn finish(reason: &str) -> String {
    data(&json!({
        "id": RESPONSE_ID, "object": "chat.completion.chunk", "model": MODEL_ID,
        "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]
    }))
}

/// The usage chunk.
pub fn usage(prompt: u64, completion: u64) -> String {
    data(&json!({
        "id": RESPONSE_ID, "object": "chat.completion.chunk", "model": MODEL_ID, "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    }))
}

/// The usage chunk of a server reporting prompt-cache hits: `cached` of the `prompt` tokens were
/// read from the cache.
pub fn usage_cached(prompt: u64, completion: u64, cached: u64) -> String {
    data(&json!({
        "id": RESPONSE_ID, "object": "chat.completion.chunk", "model": MODEL_ID, "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                  "prompt_tokens_details": {"cached_tokens": cached}}
    }))
}

/// The end of the stream.
pub const DONE: &str = "data: [DONE]\n\n";

/// A reply streaming `text` in a few pieces, then `stop`.
pub fn text(text: &str) -> Reply {
    let mut chunks = vec![delta(json!({"role": "assistant", "content": ""}))];
    let pieces: Vec<char> = text.chars().collect();
    for piece in pieces.chunks(16) {
        chunks.push(delta(json!({"content": piece.iter().collect::<String>()})));
    }
    chunks.push(finish("stop"));
    chunks.push(usage(100, 20));
    chunks.push(DONE.to_owned());
    Reply::events(&chunks)
}

/// A reply calling these tools (`(id, name, arguments)`), in order, then `tool_calls`.
pub fn tool_calls(calls: &[(&str, &str, Value)]) -> Reply {
    let mut chunks = vec![delta(json!({"role": "assistant", "content": null}))];
    for (index, (id, name, arguments)) in calls.iter().enumerate() {
        let arguments = arguments.to_string();
        let (head, tail) = arguments.split_at(arguments.len() / 2);
        chunks.push(delta(json!({"tool_calls": [{
            "index": index, "id": id, "type": "function", "function": {"name": name, "arguments": head}
        }]})));
        chunks.push(delta(
            json!({"tool_calls": [{"index": index, "function": {"arguments": tail}}]}),
        ));
    }
    chunks.push(finish("tool_calls"));
    chunks.push(usage(100, 20));
    chunks.push(DONE.to_owned());
    Reply::events(&chunks)
}

/// The names of the tools a Chat Completions request body offers (`tools[].function.name`), in
/// order; none when it offers none.
pub fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|tool| tool["function"]["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// A model of provider [`PROVIDER`] served at `base_url` (e.g. `server.url("/v1")`).
pub fn model(base_url: &str) -> Model {
    Model {
        id: MODEL_ID.into(),
        name: "Mock Model".into(),
        api: "openai-completions".into(),
        provider: PROVIDER.into(),
        base_url: base_url.into(),
        reasoning: false,
        input: vec!["text".into()],
        cost: ModelCost::default(),
        context_window: 128_000,
        max_tokens: 16_384,
        headers: None,
        compat: None,
        thinking_level_map: None,
    }
}

/// A pi `models.json` declaring provider [`PROVIDER`] with model [`MODEL_ID`] at `base_url`.
pub fn models_json(base_url: &str) -> String {
    json!({
        "providers": {
            PROVIDER: {
                "baseUrl": base_url,
                "api": "openai-completions",
                "apiKey": "mock-key",
                "models": [{"id": MODEL_ID, "name": "Mock Model"}]
            }
        }
    })
    .to_string()
}
