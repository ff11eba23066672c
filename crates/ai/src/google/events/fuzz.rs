//! Fuzz target of the Gemini stream mapping (`google-generative-ai` and `google-vertex`):
//! `GenerateContentResponse` chunks with text and thought parts (with and without signatures),
//! function calls with odd names, ids and arguments, finish reasons, usage metadata, error objects
//! and fields of the wrong type, framed as SSE, damaged and split anywhere. The checks are the
//! shared ones of [`crate::driver::fuzz`].

use pi_test_support::fuzz;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::GoogleProtocol;
use crate::driver::fuzz::{odd_value, run, sse_body, text};

fn signature() -> impl Strategy<Value = Value> {
    prop_oneof![
        2 => Just(Value::Null),
        2 => prop::sample::select(vec!["c2lnMQ==", "", "not base64!"]).prop_map(Value::from),
        1 => odd_value(),
    ]
}

fn part() -> impl Strategy<Value = Value> {
    prop_oneof![
        (text(), signature()).prop_map(|(text, sig)| json!({"text": text, "thoughtSignature": sig})),
        (text(), signature()).prop_map(|(text, sig)| json!({"text": text, "thought": true, "thoughtSignature": sig})),
        (text(), prop::option::of(text()), odd_value(), signature())
            .prop_map(|(name, id, args, sig)| json!({"functionCall": {"name": name, "id": id, "args": args}, "thoughtSignature": sig})),
        (text(), odd_value()).prop_map(|(text, thought)| json!({"text": text, "thought": thought})),
        odd_value(),
    ]
}

fn chunk() -> impl Strategy<Value = Value> {
    let reason = prop::sample::select(vec!["STOP", "MAX_TOKENS", "SAFETY", "MALFORMED_FUNCTION_CALL", ""]);
    prop_oneof![
        4 => (prop::collection::vec(part(), 0..4), prop::option::of(reason), prop::option::of(text()))
            .prop_map(|(parts, reason, id)| json!({"candidates": [{"content": {"parts": parts, "role": "model"}, "finishReason": reason}], "responseId": id})),
        1 => (odd_value(), odd_value(), odd_value()).prop_map(|(prompt, cached, thoughts)| json!({"usageMetadata": {
            "promptTokenCount": prompt, "cachedContentTokenCount": cached, "thoughtsTokenCount": thoughts,
            "candidatesTokenCount": 3, "totalTokenCount": 9}})),
        1 => (odd_value(), text()).prop_map(|(status, message)| json!({"error": {"code": 503, "status": status, "message": message}})),
        1 => odd_value().prop_map(|candidates| json!({"candidates": candidates})),
        1 => odd_value(),
    ]
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(chunk(), 0..12).prop_map(|chunks| {
        let framed: Vec<(Option<String>, String)> = chunks.iter().map(|chunk| (None, chunk.to_string())).collect();
        sse_body(&framed)
    })
}

proptest! {
    #![proptest_config(fuzz::config())]

    #[test]
    fn fuzz_google_events(body in fuzz::damaged(body()), cuts in fuzz::cuts()) {
        let _ = run(&mut GoogleProtocol::new("google"), &fuzz::chunks(&body, &cuts))?;
    }
}
