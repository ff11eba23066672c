//! Replies of an Amazon Bedrock runtime (`POST /model/{modelId}/converse-stream`, API
//! `bedrock-converse-stream`) as the AWS binary event stream (`application/vnd.amazon.eventstream`),
//! encoded here independently of the decoder under test: each frame is a prelude (total length,
//! headers length, CRC32 of the two), string headers (`:message-type`, `:event-type` or
//! `:exception-type`, `:content-type`), the JSON payload and the CRC32 of all before it.
//!
//! ```
//! use pi_test_support::bedrock;
//! use serde_json::json;
//!
//! let frame = bedrock::event("messageStart", &json!({"role": "assistant"}));
//! assert_eq!(u32::from_be_bytes(frame[..4].try_into().unwrap()) as usize, frame.len());
//! assert_eq!(bedrock::reply(vec![frame]).status, 200);
//! ```

use std::time::Duration;

use pi_agent_core::{Model, ModelCost};
use serde_json::{Value, json};

use super::Reply;

/// Model id of [`model`].
pub const MODEL_ID: &str = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";

/// The CRC32 (IEEE) of `bytes`.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// One frame with string `headers` and `payload`.
///
/// # Panics
///
/// When a header is longer than the format allows (255-byte names, 65 535-byte values).
pub fn frame(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut encoded = Vec::new();
    for (name, value) in headers {
        encoded.push(u8::try_from(name.len()).expect("short header name"));
        encoded.extend_from_slice(name.as_bytes());
        encoded.push(7);
        encoded.extend_from_slice(&u16::try_from(value.len()).expect("short header value").to_be_bytes());
        encoded.extend_from_slice(value.as_bytes());
    }
    let total = 12 + encoded.len() + payload.len() + 4;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&u32::try_from(total).expect("small frame").to_be_bytes());
    out.extend_from_slice(&u32::try_from(encoded.len()).expect("small headers").to_be_bytes());
    let prelude_crc = crc32(&out);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(&encoded);
    out.extend_from_slice(payload);
    let message_crc = crc32(&out);
    out.extend_from_slice(&message_crc.to_be_bytes());
    out
}

/// An `event` frame of type `event_type` (`messageStart`, `contentBlockDelta`, …).
pub fn event(event_type: &str, payload: &Value) -> Vec<u8> {
    frame(
        &[
            (":event-type", event_type),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ],
        payload.to_string().as_bytes(),
    )
}

/// An `exception` frame (`throttlingException`, …) with `message`.
pub fn exception(exception_type: &str, message: &str) -> Vec<u8> {
    frame(
        &[
            (":exception-type", exception_type),
            (":content-type", "application/json"),
            (":message-type", "exception"),
        ],
        json!({"message": message}).to_string().as_bytes(),
    )
}

/// A 200 reply streaming `frames`, one chunk each.
pub fn reply(frames: Vec<Vec<u8>>) -> Reply {
    Reply {
        status: 200,
        headers: vec![
            ("content-type".into(), "application/vnd.amazon.eventstream".into()),
            ("x-amzn-requestid".into(), "req-1".into()),
        ],
        chunks: frames.into_iter().map(|frame| (Duration::ZERO, frame)).collect(),
    }
}

/// `messageStart` of the assistant.
pub fn start() -> Vec<u8> {
    event("messageStart", &json!({"role": "assistant", "p": "abcd"}))
}

/// A text delta of block `index`.
pub fn text_delta(index: u64, text: &str) -> Vec<u8> {
    event(
        "contentBlockDelta",
        &json!({"contentBlockIndex": index, "delta": {"text": text}, "p": "ab"}),
    )
}

/// `contentBlockStop` of block `index`.
pub fn block_stop(index: u64) -> Vec<u8> {
    event("contentBlockStop", &json!({"contentBlockIndex": index, "p": "abc"}))
}

/// `messageStop` with `reason` (`end_turn`, `tool_use`, `max_tokens`, …).
pub fn stop(reason: &str) -> Vec<u8> {
    event("messageStop", &json!({"stopReason": reason, "p": "abcdef"}))
}

/// `metadata` with the usage (`inputTokens`, `outputTokens`, cache reads and writes).
pub fn metadata(input: u64, output: u64, cache_read: u64, cache_write: u64) -> Vec<u8> {
    event(
        "metadata",
        &json!({
            "usage": {
                "inputTokens": input,
                "outputTokens": output,
                "cacheReadInputTokens": cache_read,
                "cacheWriteInputTokens": cache_write,
                "totalTokens": input + output + cache_read + cache_write,
            },
            "metrics": {"latencyMs": 420},
            "p": "abcdefgh",
        }),
    )
}

/// A whole text response: `text` as one block, `end_turn`, 10 input and 2 output tokens.
pub fn text(text: &str) -> Reply {
    reply(vec![
        start(),
        text_delta(0, text),
        block_stop(0),
        stop("end_turn"),
        metadata(10, 2, 0, 0),
    ])
}

/// Claude Sonnet 4.5 on Bedrock as pi-ai 0.73.1's catalog has it (US cross-region profile,
/// reasoning, text and images, $3 / $15 per million input / output tokens, $0.30 cache reads,
/// $3.75 cache writes, 200 000-token window, 64 000 output tokens), served at `base_url`.
pub fn model(base_url: impl Into<String>) -> Model {
    Model {
        id: MODEL_ID.into(),
        name: "Claude Sonnet 4.5 (US)".into(),
        api: "bedrock-converse-stream".into(),
        provider: "amazon-bedrock".into(),
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
        max_tokens: 64_000,
        headers: None,
        compat: None,
        thinking_level_map: None,
    }
}
