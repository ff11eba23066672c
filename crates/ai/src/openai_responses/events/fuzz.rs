//! Fuzz target of the `openai-responses` event mapping: Responses API streams with output items
//! of every type at a few indexes and ids, text, refusal, reasoning-summary and argument deltas,
//! items done with or without streamed content, completion, failure, incomplete and error events
//! and fields of the wrong type, framed as SSE, damaged and split anywhere. The checks are the
//! shared ones of [`crate::driver::fuzz`].

use pi_test_support::fuzz;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::ResponsesProtocol;
use crate::driver::fuzz::{argument_fragments, odd_value, run, sse_body, text};

fn output_index() -> impl Strategy<Value = Value> {
    prop_oneof![6 => (0u64..3).prop_map(Value::from), 1 => odd_value()]
}

fn item_id() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => prop::sample::select(vec!["msg_1", "fc_1", "rs_1", "x"]).prop_map(Value::from),
        1 => odd_value(),
    ]
}

fn item() -> impl Strategy<Value = Value> {
    prop_oneof![
        (item_id(), text()).prop_map(|(id, text)| json!({"type": "message", "id": id, "content": [{"type": "output_text", "text": text}]})),
        item_id().prop_map(|id| json!({"type": "message", "id": id, "content": []})),
        (item_id(), text(), text(), text()).prop_map(|(id, call_id, name, arguments)| json!({"type": "function_call", "id": id, "call_id": call_id, "name": name, "arguments": arguments})),
        (item_id(), text(), text()).prop_map(|(id, summary, encrypted)| json!({"type": "reasoning", "id": id, "summary": [{"type": "summary_text", "text": summary}], "encrypted_content": encrypted})),
        odd_value(),
    ]
}

fn events() -> impl Strategy<Value = Vec<Value>> {
    let one = |value: Value| vec![value];
    prop_oneof![
        (text()).prop_map(move |id| one(json!({"type": "response.created", "response": {"id": id}}))),
        (output_index(), item()).prop_map(move |(i, item)| one(json!({"type": "response.output_item.added", "output_index": i, "item": item}))),
        (output_index(), item()).prop_map(move |(i, item)| one(json!({"type": "response.output_item.done", "output_index": i, "item": item}))),
        (output_index(), item_id(), text(), prop::sample::select(vec!["response.output_text.delta", "response.refusal.delta"]))
            .prop_map(move |(i, id, delta, kind)| one(json!({"type": kind, "output_index": i, "item_id": id, "delta": delta}))),
        (output_index(), item_id(), prop::option::of(0u64..3), text(), prop::sample::select(vec![
            "response.reasoning_summary_part.added", "response.reasoning_summary_text.delta", "response.reasoning_text.delta"]))
            .prop_map(move |(i, id, part, delta, kind)| one(json!({"type": kind, "output_index": i, "item_id": id, "summary_index": part, "delta": delta, "part": {"type": "summary_text", "text": ""}}))),
        (output_index(), item_id(), argument_fragments()).prop_map(|(i, id, fragments)| fragments
            .into_iter()
            .map(|delta| json!({"type": "response.function_call_arguments.delta", "output_index": i, "item_id": id, "delta": delta}))
            .collect()),
        (output_index(), item_id(), text()).prop_map(move |(i, id, arguments)| one(json!({"type": "response.function_call_arguments.done", "output_index": i, "item_id": id, "arguments": arguments}))),
        (prop::sample::select(vec!["response.completed", "response.done", "response.incomplete"]), prop::sample::select(vec!["completed", "incomplete", "failed", "cancelled", "queued"]), odd_value())
            .prop_map(move |(kind, status, usage)| one(json!({"type": kind, "response": {"id": "resp_1", "status": status, "usage": usage, "incomplete_details": {"reason": "max_output_tokens"}}}))),
        (odd_value()).prop_map(move |error| one(json!({"type": "response.failed", "response": {"status": "failed", "error": error}}))),
        (text(), text()).prop_map(move |(code, message)| one(json!({"type": "error", "code": code, "message": message}))),
        odd_value().prop_map(one),
    ]
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(events(), 0..16).prop_map(|events| {
        let framed: Vec<(Option<String>, String)> = events
            .into_iter()
            .flatten()
            .map(|event| {
                (
                    event.get("type").and_then(Value::as_str).map(str::to_owned),
                    event.to_string(),
                )
            })
            .collect();
        sse_body(&framed)
    })
}

proptest! {
    #![proptest_config(fuzz::config())]

    #[test]
    fn fuzz_openai_responses_events(body in fuzz::damaged(body()), cuts in fuzz::cuts()) {
        let _ = run(&mut ResponsesProtocol::new(), &fuzz::chunks(&body, &cuts))?;
    }
}
