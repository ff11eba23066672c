//! Replies of an OpenAI Responses API server (`POST /v1/responses`, API `openai-responses`), as
//! server-sent events, and a model that points at a [`MockServer`](super::MockServer).
//!
//! One SSE event per server event, named after its `type`. A response is [`created`], output
//! items (a [`message`], a function call from [`call_added`] to [`call_done`], reasoning from
//! [`reasoning_added`] to [`reasoning_done`]), then [`completed`] with the usage; send the events
//! with [`Reply::events`], or take a whole text response from [`text`].
//!
//! ```
//! use pi_test_support::{Reply, openai_responses as responses};
//!
//! let mut events = vec![responses::created("resp_1")];
//! events.extend(responses::message(0, "msg_1", &["Hello", ", world"]));
//! events.push(responses::completed("resp_1", 12, 3, 0));
//! let reply = Reply::events(&events);
//! assert_eq!(reply.chunks.len(), 7);
//! assert!(events[0].starts_with("event: response.created\ndata: "));
//! ```

use pi_agent_core::{Model, ModelCost};
use serde_json::{Value, json};

use super::Reply;

/// Model id of [`model`], also named in [`created`] and [`completed`].
pub const MODEL_ID: &str = "gpt-test";

/// A GPT-like model of provider `openai` served at `base_url` (e.g. `server.url("/v1")`): no
/// reasoning, text and image input, prices per million tokens of input $2, output $8 and cache
/// read $0.50, a 400 000-token window and 128 000 output tokens.
pub fn model(base_url: impl Into<String>) -> Model {
    Model {
        id: MODEL_ID.into(),
        name: "GPT Test".into(),
        api: "openai-responses".into(),
        provider: "openai".into(),
        base_url: base_url.into(),
        reasoning: false,
        input: vec!["text".into(), "image".into()],
        cost: ModelCost {
            input: 2.0,
            output: 8.0,
            cache_read: 0.5,
            cache_write: 0.0,
        },
        context_window: 400_000,
        max_tokens: 128_000,
        headers: None,
        compat: None,
        thinking_level_map: None,
    }
}

/// One server-sent event carrying `value`, named after its `"type"`.
///
/// # Panics
///
/// When `value` has no string `"type"`.
pub fn event(value: Value) -> String {
    #[allow(clippy::expect_used)]
    let name = value["type"].as_str().expect("a server event has a string \"type\"");
    format!("event: {name}\ndata: {value}\n\n")
}

/// `response.created` of response `id`, in progress.
pub fn created(id: &str) -> String {
    event(json!({"type": "response.created", "sequence_number": 0,
        "response": {"id": id, "object": "response", "status": "in_progress", "model": MODEL_ID, "output": [], "usage": null}}))
}

/// `response.output_item.added` of message item `id` at output `index`.
pub fn message_added(index: u64, id: &str) -> String {
    event(json!({"type": "response.output_item.added", "output_index": index,
        "item": {"id": id, "type": "message", "status": "in_progress", "role": "assistant", "content": []}}))
}

/// `response.content_part.added`: the (empty) `output_text` part of message item `id`.
pub fn part_added(index: u64, id: &str) -> String {
    event(
        json!({"type": "response.content_part.added", "item_id": id, "output_index": index, "content_index": 0,
        "part": {"type": "output_text", "text": "", "annotations": []}}),
    )
}

/// `response.output_text.delta` of message item `id`.
pub fn text_delta(index: u64, id: &str, delta: &str) -> String {
    event(
        json!({"type": "response.output_text.delta", "item_id": id, "output_index": index, "content_index": 0, "delta": delta}),
    )
}

/// `response.output_item.done` of message item `id`, its whole `text`.
pub fn message_done(index: u64, id: &str, text: &str) -> String {
    event(json!({"type": "response.output_item.done", "output_index": index,
        "item": {"id": id, "type": "message", "status": "completed", "role": "assistant",
                 "content": [{"type": "output_text", "text": text, "annotations": []}]}}))
}

/// A whole text message item: [`message_added`], [`part_added`], one [`text_delta`] per delta,
/// [`message_done`].
pub fn message(index: u64, id: &str, deltas: &[&str]) -> Vec<String> {
    let mut events = vec![message_added(index, id), part_added(index, id)];
    events.extend(deltas.iter().map(|d| text_delta(index, id, d)));
    events.push(message_done(index, id, &deltas.concat()));
    events
}

/// `response.output_item.added` of function call item `id` (call id `call_id`) calling `name`.
pub fn call_added(index: u64, id: &str, call_id: &str, name: &str) -> String {
    event(json!({"type": "response.output_item.added", "output_index": index,
        "item": {"id": id, "type": "function_call", "status": "in_progress", "arguments": "", "call_id": call_id, "name": name}}))
}

/// `response.function_call_arguments.delta` of function call item `id`.
pub fn args_delta(index: u64, id: &str, delta: &str) -> String {
    event(
        json!({"type": "response.function_call_arguments.delta", "item_id": id, "output_index": index, "delta": delta}),
    )
}

/// `response.function_call_arguments.done` of function call item `id`, its whole `arguments`.
pub fn args_done(index: u64, id: &str, arguments: &str) -> String {
    event(
        json!({"type": "response.function_call_arguments.done", "item_id": id, "output_index": index, "arguments": arguments}),
    )
}

/// `response.output_item.done` of function call item `id`.
pub fn call_done(index: u64, id: &str, call_id: &str, name: &str, arguments: &str) -> String {
    event(json!({"type": "response.output_item.done", "output_index": index,
        "item": {"id": id, "type": "function_call", "status": "completed", "arguments": arguments, "call_id": call_id, "name": name}}))
}

/// `response.output_item.added` of reasoning item `id`.
pub fn reasoning_added(index: u64, id: &str) -> String {
    event(json!({"type": "response.output_item.added", "output_index": index,
        "item": {"id": id, "type": "reasoning", "summary": []}}))
}

/// `response.reasoning_summary_part.added`: summary part `part` of reasoning item `id`.
pub fn summary_part_added(index: u64, id: &str, part: u64) -> String {
    event(
        json!({"type": "response.reasoning_summary_part.added", "item_id": id, "output_index": index,
        "summary_index": part, "part": {"type": "summary_text", "text": ""}}),
    )
}

/// `response.reasoning_summary_text.delta` of summary part `part` of reasoning item `id`.
pub fn summary_delta(index: u64, id: &str, part: u64, delta: &str) -> String {
    event(
        json!({"type": "response.reasoning_summary_text.delta", "item_id": id, "output_index": index,
        "summary_index": part, "delta": delta}),
    )
}

/// `response.reasoning_summary_part.done` of summary part `part`, its whole `text`.
pub fn summary_part_done(index: u64, id: &str, part: u64, text: &str) -> String {
    event(
        json!({"type": "response.reasoning_summary_part.done", "item_id": id, "output_index": index,
        "summary_index": part, "part": {"type": "summary_text", "text": text}}),
    )
}

/// `response.output_item.done` of reasoning item `id` with its summary parts and
/// `encrypted_content`.
pub fn reasoning_done(index: u64, id: &str, summary: &[&str], encrypted: &str) -> String {
    let parts: Vec<Value> = summary
        .iter()
        .map(|text| json!({"type": "summary_text", "text": text}))
        .collect();
    event(json!({"type": "response.output_item.done", "output_index": index,
        "item": {"id": id, "type": "reasoning", "summary": parts, "encrypted_content": encrypted}}))
}

/// `response.completed` of response `id` with its usage: `input` tokens of which `cached` were
/// read from the cache, and `output` tokens.
pub fn completed(id: &str, input: u64, output: u64, cached: u64) -> String {
    event(json!({"type": "response.completed",
        "response": {"id": id, "object": "response", "status": "completed", "model": MODEL_ID, "output": [],
                     "usage": {"input_tokens": input, "input_tokens_details": {"cached_tokens": cached},
                               "output_tokens": output, "output_tokens_details": {"reasoning_tokens": 0},
                               "total_tokens": input + output}}}))
}

/// A plain text response `text` (response `resp_1`, message item `msg_1`, 10 input and 2
/// output tokens).
pub fn text(text: &str) -> Reply {
    let mut events = vec![created("resp_1")];
    events.extend(message(0, "msg_1", &[text]));
    events.push(completed("resp_1", 10, 2, 0));
    Reply::events(&events)
}
