//! Replies of an Anthropic Messages API server (`POST /v1/messages`, API `anthropic-messages`),
//! as server-sent events, and a model that points at a [`MockServer`](super::MockServer).
//!
//! A response is `message_start`, content blocks (`content_block_start`, deltas,
//! `content_block_stop`), then `message_delta` with the stop reason and `message_stop`: build one
//! from the pieces ([`message_start`], [`text_block`], [`tool_block`], [`message_end`]) and send it
//! with [`Reply::events`], or take a whole text response from [`text_events`].
//!
//! ```
//! use pi_test_support::{Reply, anthropic};
//!
//! let mut events = vec![anthropic::message_start("msg_1", anthropic::small_usage())];
//! events.extend(anthropic::tool_block(0, "toolu_1", "read", &[r#"{"path": "a.txt"}"#]));
//! events.extend(anthropic::message_end("tool_use", 12));
//! let reply = Reply::events(&events);
//! assert_eq!(reply.chunks.len(), 6);
//! assert!(events[0].starts_with("event: message_start\ndata: "));
//! ```

use pi_agent_core::{Model, ModelCost};
use serde_json::{Value, json};

use super::Reply;

/// Model id of [`model`], also named in [`message_start`].
pub const MODEL_ID: &str = "claude-test-1";

/// A Claude-like model of provider `anthropic` served at `base_url` (a Messages API server's
/// base, with or without `/v1`): reasoning, text and image input, Claude's prices per million
/// tokens (input $3, output $15, cache read $0.30, cache write $3.75), a 200 000-token window and
/// 32 000 output tokens.
pub fn model(base_url: impl Into<String>) -> Model {
    Model {
        id: MODEL_ID.into(),
        name: "Claude Test".into(),
        api: "anthropic-messages".into(),
        provider: "anthropic".into(),
        base_url: base_url.into(),
        reasoning: true,
        input: vec!["text".into(), "image".into()],
        cost: ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
        },
        context_window: 200_000,
        max_tokens: 32_000,
        headers: None,
        compat: None,
        thinking_level_map: None,
    }
}

/// One server-sent event: `event: <name>` and `data: <data>`.
pub fn event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// `message_start` of message `id` (model [`MODEL_ID`]) with this `usage` object.
pub fn message_start(id: &str, usage: Value) -> String {
    event(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": id, "type": "message", "role": "assistant", "model": MODEL_ID,
            "content": [], "stop_reason": null, "stop_sequence": null, "usage": usage,
        }}),
    )
}

/// The usage of a small `message_start`: 10 input tokens, 1 output token.
pub fn small_usage() -> Value {
    json!({"input_tokens": 10, "output_tokens": 1})
}

/// `ping`.
pub fn ping() -> String {
    event("ping", json!({"type": "ping"}))
}

/// `content_block_start` of block `index` with its initial `block` (`{"type": "text", ...}`).
pub fn block_start(index: u64, block: Value) -> String {
    event(
        "content_block_start",
        json!({"type": "content_block_start", "index": index, "content_block": block}),
    )
}

/// `content_block_delta` of block `index` (`{"type": "text_delta", "text": ...}` and the like).
pub fn block_delta(index: u64, delta: Value) -> String {
    event(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": index, "delta": delta}),
    )
}

/// `content_block_stop` of block `index`.
pub fn block_stop(index: u64) -> String {
    event(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": index}),
    )
}

/// A whole text block `index`: its start, one `text_delta` per part, its stop.
pub fn text_block(index: u64, parts: &[&str]) -> Vec<String> {
    let mut events = vec![block_start(index, json!({"type": "text", "text": ""}))];
    for part in parts {
        events.push(block_delta(index, json!({"type": "text_delta", "text": part})));
    }
    events.push(block_stop(index));
    events
}

/// A whole `tool_use` block `index` calling `name` as `id`, its input streamed as these
/// `input_json_delta` fragments.
pub fn tool_block(index: u64, id: &str, name: &str, fragments: &[&str]) -> Vec<String> {
    let mut events = vec![block_start(
        index,
        json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
    )];
    for fragment in fragments {
        events.push(block_delta(
            index,
            json!({"type": "input_json_delta", "partial_json": fragment}),
        ));
    }
    events.push(block_stop(index));
    events
}

/// The end of a message: `message_delta` with `stop_reason` (`end_turn`, `tool_use`,
/// `max_tokens`) and the output token count, then `message_stop`.
pub fn message_end(stop_reason: &str, output_tokens: u64) -> Vec<String> {
    vec![
        event(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                   "usage": {"output_tokens": output_tokens}}),
        ),
        event("message_stop", json!({"type": "message_stop"})),
    ]
}

/// A complete text response, message `id`: [`message_start`] with [`small_usage`], a [`ping`],
/// one [`text_block`] of these parts, and [`message_end`] with `end_turn`.
pub fn text_events(id: &str, parts: &[&str]) -> Vec<String> {
    let mut events = vec![message_start(id, small_usage())];
    events.push(ping());
    events.extend(text_block(0, parts));
    events.extend(message_end("end_turn", 5));
    events
}

/// [`text_events`] as a reply.
pub fn text(id: &str, parts: &[&str]) -> Reply {
    Reply::events(&text_events(id, parts))
}

/// The JSON body of an API error (for [`Reply::json`] or an `error` event):
/// `{"type": "error", "error": {"type": kind, "message": message}}`.
pub fn error_body(kind: &str, message: &str) -> String {
    json!({"type": "error", "error": {"type": kind, "message": message}}).to_string()
}
