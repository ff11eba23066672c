//! Fuzz target of the `openai-completions` chunk mapping: `chat.completion.chunk` streams with
//! text, every reasoning field, parallel tool calls by index (ids that change, names that come
//! late, arguments cut or with garbage), finish reasons, usage, error chunks and fields of the
//! wrong type, framed as SSE, damaged and split anywhere. The checks are the shared ones of
//! [`crate::driver::fuzz`].

use pi_agent_core::Model;
use pi_test_support::fuzz;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::CompletionsProtocol;
use crate::driver::fuzz::{argument_fragments, odd_value, run, sse_body, text};
use crate::openai_completions::compat::Compat;

fn tool_calls() -> impl Strategy<Value = Vec<Value>> {
    (
        prop_oneof![4 => (0u64..3).prop_map(Value::from), 1 => odd_value()],
        prop::option::of(prop::sample::select(vec!["call_1", "call_2", ""])),
        prop::option::of(text()),
        argument_fragments(),
    )
        .prop_map(|(index, id, name, fragments)| {
            fragments
                .into_iter()
                .enumerate()
                .map(|(n, arguments)| {
                    let mut call = json!({"index": index, "function": {"arguments": arguments}});
                    if n == 0 {
                        call["id"] = json!(id);
                        call["function"]["name"] = json!(name);
                    }
                    json!([call])
                })
                .collect()
        })
}

fn delta() -> impl Strategy<Value = Vec<Value>> {
    prop_oneof![
        text().prop_map(|text| vec![json!({"content": text})]),
        (
            prop::sample::select(vec!["reasoning_content", "reasoning", "reasoning_text"]),
            text()
        )
            .prop_map(|(field, text)| vec![json!({field: text})]),
        tool_calls().prop_map(|calls| calls.into_iter().map(|calls| json!({"tool_calls": calls})).collect()),
        odd_value().prop_map(|value| vec![json!({"tool_calls": value})]),
        odd_value().prop_map(|value| vec![value]),
    ]
}

fn chunks() -> impl Strategy<Value = Vec<String>> {
    let finish = prop::sample::select(vec![
        "stop",
        "length",
        "tool_calls",
        "function_call",
        "content_filter",
        "error",
        "other",
    ]);
    prop_oneof![
        6 => delta().prop_map(|deltas| deltas
            .into_iter()
            .map(|delta| json!({"id": "chatcmpl-1", "choices": [{"delta": delta}]}).to_string())
            .collect()),
        2 => finish.prop_map(|reason| vec![json!({"choices": [{"delta": {}, "finish_reason": reason}]}).to_string()]),
        1 => (0u64..1_000_000, 0u64..1_000_000, 0u64..2_000_000).prop_map(|(p, c, cached)| vec![json!({"choices": [], "usage": {
            "prompt_tokens": p, "completion_tokens": c, "prompt_tokens_details": {"cached_tokens": cached}}}).to_string()]),
        1 => odd_value().prop_map(|error| vec![json!({"error": error}).to_string()]),
        1 => Just(vec!["[DONE]".to_owned()]),
        1 => odd_value().prop_map(|value| vec![json!({"choices": value, "usage": value}).to_string()]),
    ]
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(chunks(), 0..16).prop_map(|chunks| {
        let framed: Vec<(Option<String>, String)> = chunks.into_iter().flatten().map(|data| (None, data)).collect();
        sse_body(&framed)
    })
}

proptest! {
    #![proptest_config(fuzz::config())]

    #[test]
    fn fuzz_openai_completions_events(
        body in fuzz::damaged(body()),
        cuts in fuzz::cuts(),
        supports_finish_reason in any::<bool>(),
    ) {
        let model = Model::unknown();
        let compat = Compat { supports_finish_reason, ..Compat::for_model(&model) };
        let _ = run(&mut CompletionsProtocol::new(&model, &compat), &fuzz::chunks(&body, &cuts))?;
    }
}
