//! Serde round trips of messages, stop reasons and agent events against JSON written the way pi
//! writes it: camelCase fields, `role` first, content blocks tagged by `type`, timestamps as
//! integer milliseconds.
//!
//! Every test parses a literal into the Rust type, checks a few fields, serialises it back and
//! compares the result with the literal as a [`serde_json::Value`]. Messages must also serialise
//! with `role` as their first key.
//!
//! Longer than 800 lines on purpose: one literal per message shape of pi's wire format, side by side
//! with its round trip; splitting them would scatter the format a reader checks against pi.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use pi_agent_core::{
    AgentEvent, AgentMessage, AssistantMessage, AssistantMessageEvent, ContentBlock, Cost, CustomMessage, ImageContent,
    StopReason, TextContent, ThinkingContent, ToolCall, ToolResultMessage, Usage, UserContent, UserMessage,
};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Parses a literal as a JSON value (the reference the round trip is compared with).
fn value_of(literal: &str) -> Value {
    serde_json::from_str(literal).expect("the literal is valid JSON")
}

/// The keys of a serialised JSON object, in the order they were written.
fn keys_in_order(serialised: &str) -> Vec<String> {
    // `serde_json` is built with `preserve_order`, so a parsed map keeps the written order.
    match serde_json::from_str::<Value>(serialised).expect("serialised JSON parses") {
        Value::Object(map) => map.keys().cloned().collect(),
        other => panic!("expected a JSON object, got {other}"),
    }
}

/// Parses `literal` as a message, serialises it back and checks the result: equal to the literal
/// as a JSON value, `role` as the first key, and equal to the parsed message when read again.
fn round_trip_message(literal: &str) -> AgentMessage {
    let message: AgentMessage = serde_json::from_str(literal).expect("the literal parses as an AgentMessage");
    let serialised = serde_json::to_string(&message).expect("the message serialises");
    assert!(
        serialised.starts_with(r#"{"role":"#),
        "`role` must be the first key of the serialised message: {serialised}"
    );
    assert_eq!(keys_in_order(&serialised).first().map(String::as_str), Some("role"));
    assert_eq!(value_of(&serialised), value_of(literal), "round trip changed the JSON");
    let again: AgentMessage = serde_json::from_str(&serialised).expect("the serialised message parses");
    assert_eq!(
        again, message,
        "reading the serialised message gave a different message"
    );
    message
}

/// Parses `literal` as an event, serialises it back and compares it with the literal.
fn round_trip_event(literal: &str) -> AgentEvent {
    let event = parse_event(literal);
    let serialised = serde_json::to_string(&event).expect("the event serialises");
    assert_eq!(value_of(&serialised), value_of(literal), "round trip changed the JSON");
    let again: AgentEvent = serde_json::from_str(&serialised).expect("the serialised event parses");
    assert_eq!(again, event, "reading the serialised event gave a different event");
    event
}

fn parse_event(literal: &str) -> AgentEvent {
    serde_json::from_str(literal).expect("the literal parses as an AgentEvent")
}

fn user(message: &AgentMessage) -> &UserMessage {
    match message {
        AgentMessage::User(user) => user,
        other => panic!("expected a user message, got {other:?}"),
    }
}

fn custom(message: &AgentMessage) -> &CustomMessage {
    match message {
        AgentMessage::Custom(custom) => custom,
        other => panic!("expected a custom message, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Literals, written as pi writes them
// ---------------------------------------------------------------------------------------------

const USER_STRING: &str =
    r#"{"role":"user","content":"List the files in src/ and tell me what main.rs does.","timestamp":1731234567890}"#;

const USER_BLOCKS: &str = r#"{
  "role": "user",
  "content": [
    {"type": "text", "text": "What is wrong with this screenshot?"},
    {"type": "image", "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "mimeType": "image/png"},
    {"type": "text", "text": "It should be blue.", "textSignature": "msg_0a1b2c"}
  ],
  "timestamp": 1731234567901
}"#;

const ASSISTANT_TOOL_USE: &str = r#"{
  "role": "assistant",
  "content": [
    {"type": "thinking", "thinking": "The user wants two things: the file list and main.rs.", "thinkingSignature": "EqQBCkYIBxgCKkB0c2lnbmF0dXJl"},
    {"type": "text", "text": "Let me look at the project first."},
    {"type": "toolCall", "id": "toolu_01A9q", "name": "ls", "arguments": {"path": "src", "limit": 500}},
    {"type": "toolCall", "id": "toolu_01B7x", "name": "read", "arguments": {"path": "src/main.rs", "offset": 1, "flags": {"raw": true, "tags": ["a", "b"]}}}
  ],
  "api": "anthropic-messages",
  "provider": "anthropic",
  "model": "claude-sonnet-4-5",
  "responseId": "msg_01XFDUDYJgAACzvnptvVoYEL",
  "usage": {
    "input": 1234,
    "output": 96,
    "cacheRead": 4096,
    "cacheWrite": 512,
    "totalTokens": 5938,
    "cost": {"input": 0.003702, "output": 0.00144, "cacheRead": 0.0012288, "cacheWrite": 0.00192, "total": 0.0082908}
  },
  "stopReason": "toolUse",
  "timestamp": 1731234568123
}"#;

const ASSISTANT_ERROR: &str = r#"{
  "role": "assistant",
  "content": [],
  "api": "openai-completions",
  "provider": "openai",
  "model": "gpt-4o",
  "usage": {
    "input": 10,
    "output": 1,
    "cacheRead": 2,
    "cacheWrite": 3,
    "totalTokens": 16,
    "cost": {"input": 0.25, "output": 0.5, "cacheRead": 0.125, "cacheWrite": 0.0625, "total": 0.9375}
  },
  "stopReason": "error",
  "errorMessage": "429 Too Many Requests: rate limit exceeded",
  "timestamp": 1731234569000
}"#;

const ASSISTANT_ABORTED: &str = r#"{
  "role": "assistant",
  "content": [{"type": "text", "text": "I was about to"}],
  "api": "faux",
  "provider": "faux",
  "model": "faux-1",
  "usage": {
    "input": 7,
    "output": 4,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 11,
    "cost": {"input": 0.5, "output": 1.5, "cacheRead": 0.25, "cacheWrite": 0.75, "total": 3.5}
  },
  "stopReason": "aborted",
  "errorMessage": "Request was aborted",
  "timestamp": 1731234569500
}"#;

const TOOL_RESULT_WITH_DETAILS: &str = r#"{
  "role": "toolResult",
  "toolCallId": "toolu_01B7x",
  "toolName": "read",
  "content": [
    {"type": "text", "text": "fn main() {\n    println!(\"hi\");\n}\n"},
    {"type": "image", "data": "R0lGODlhAQABAAAAACw=", "mimeType": "image/gif"}
  ],
  "details": {"truncation": null, "lines": 3, "path": "src/main.rs", "ranges": [[1, 3]]},
  "isError": false,
  "timestamp": 1731234568200
}"#;

const TOOL_RESULT_ERROR_NO_DETAILS: &str = r#"{"role":"toolResult","toolCallId":"toolu_01A9q","toolName":"ls","content":[{"type":"text","text":"Path not found: src"}],"isError":true,"timestamp":1731234568190}"#;

const BASH_EXECUTION: &str = r#"{"role":"bashExecution","command":"ls","output":"Cargo.toml\nsrc\n","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1731234570000}"#;

const NOTIFICATION: &str = r#"{"role":"notification","level":"warning","text":"Context is 91% full","details":{"percent":91.5,"tokens":[116480,128000],"extra":null},"timestamp":1731234571000}"#;

const CUSTOM: &str = r#"{"role":"custom","customType":"todo-list","content":[{"type":"text","text":"- [ ] write tests"}],"display":true,"details":{"items":1},"timestamp":1731234572000}"#;

// ---------------------------------------------------------------------------------------------
// User messages
// ---------------------------------------------------------------------------------------------

#[test]
fn user_message_with_string_content_round_trips() {
    let message = round_trip_message(USER_STRING);
    assert_eq!(message.role(), "user");
    let user = user(&message);
    assert_eq!(
        user.content,
        UserContent::Text("List the files in src/ and tell me what main.rs does.".into())
    );
    assert_eq!(user.timestamp, 1_731_234_567_890);
    // A bare string stays a bare string on the way out.
    let out = serde_json::to_value(&message).unwrap();
    assert!(out["content"].is_string());
}

#[test]
fn user_message_with_text_and_image_blocks_round_trips() {
    let message = round_trip_message(USER_BLOCKS);
    let user = user(&message);
    let UserContent::Blocks(blocks) = &user.content else {
        panic!("expected blocks, got {:?}", user.content);
    };
    assert_eq!(blocks.len(), 3);
    assert_eq!(blocks[0].as_text(), Some("What is wrong with this screenshot?"));
    match &blocks[1] {
        ContentBlock::Image(ImageContent { data, mime_type }) => {
            assert!(data.starts_with("iVBORw0KGgo"));
            assert_eq!(mime_type, "image/png");
        }
        other => panic!("expected an image block, got {other:?}"),
    }
    assert_eq!(
        blocks[2],
        ContentBlock::Text(TextContent {
            text: "It should be blue.".into(),
            text_signature: Some("msg_0a1b2c".into()),
        })
    );
    assert_eq!(
        user.content.text(),
        "What is wrong with this screenshot?It should be blue."
    );
    let out = serde_json::to_value(&message).unwrap();
    assert_eq!(out["content"][1]["mimeType"], "image/png");
    assert!(
        out["content"][0].get("textSignature").is_none(),
        "absent signature must stay absent"
    );
}

// ---------------------------------------------------------------------------------------------
// Assistant messages
// ---------------------------------------------------------------------------------------------

#[test]
fn assistant_message_with_thinking_text_and_tool_calls_round_trips() {
    let message = round_trip_message(ASSISTANT_TOOL_USE);
    let assistant = message.as_assistant().expect("an assistant message");
    assert_eq!(assistant.content.len(), 4);
    assert_eq!(
        assistant.content[0],
        ContentBlock::Thinking(ThinkingContent {
            thinking: "The user wants two things: the file list and main.rs.".into(),
            thinking_signature: Some("EqQBCkYIBxgCKkB0c2lnbmF0dXJl".into()),
            redacted: None,
        })
    );
    assert_eq!(assistant.text(), "Let me look at the project first.");
    let calls: Vec<&ToolCall> = assistant.tool_calls().collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].id, "toolu_01A9q");
    assert_eq!(calls[0].name, "ls");
    assert_eq!(calls[0].arguments, json!({"path": "src", "limit": 500}));
    assert_eq!(calls[1].id, "toolu_01B7x");
    assert_eq!(calls[1].arguments["flags"]["tags"][1], "b");
    assert_eq!(calls[1].thought_signature, None);
    assert_eq!(assistant.api, "anthropic-messages");
    assert_eq!(assistant.provider, "anthropic");
    assert_eq!(assistant.model, "claude-sonnet-4-5");
    assert_eq!(assistant.response_id.as_deref(), Some("msg_01XFDUDYJgAACzvnptvVoYEL"));
    assert_eq!(
        assistant.usage,
        Usage {
            input: 1234,
            output: 96,
            cache_read: 4096,
            cache_write: 512,
            total_tokens: 5938,
            cost: Cost {
                input: 0.003702,
                output: 0.00144,
                cache_read: 0.0012288,
                cache_write: 0.00192,
                total: 0.0082908,
            },
        }
    );
    assert_eq!(assistant.stop_reason, StopReason::ToolUse);
    assert_eq!(assistant.error_message, None);
    assert_eq!(assistant.timestamp, 1_731_234_568_123);
    let out = serde_json::to_value(&message).unwrap();
    assert!(
        out.get("errorMessage").is_none(),
        "absent errorMessage must stay absent"
    );
    assert_eq!(out["usage"]["cost"]["cacheWrite"], json!(0.00192));
}

/// pi 0.73.1's OpenAI-compatible provider records the model the chunks name as `responseModel`,
/// after `responseId` (a message from one of its session files): read and written back byte for
/// byte.
#[test]
fn response_model_round_trips_after_response_id() {
    let literal = r#"{"role":"assistant","content":[{"type":"text","text":"Done"}],"api":"openai-completions","provider":"mock","model":"mock-model","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1795708606904,"responseId":"chatcmpl-1","responseModel":"mock"}"#;
    let message = round_trip_message(literal);
    assert_eq!(message.as_assistant().unwrap().response_model.as_deref(), Some("mock"));
    assert_eq!(serde_json::to_string(&message).unwrap(), literal);
}

/// pi's `toolCall` block has an optional `namespace` (OpenAI Responses, reference §1.1);
/// `ToolCall` has no such field and serde drops it silently, so replaying the call loses it.
#[test]
fn tool_call_namespace_round_trips() {
    let literal = r#"{"role":"assistant","content":[{"type":"toolCall","id":"fc_1","name":"search","arguments":{"q":"x"},"namespace":"mcp__github"}],"api":"openai-responses","provider":"openai","model":"gpt-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0.5,"output":0.5,"cacheRead":0.5,"cacheWrite":0.5,"total":2.5}},"stopReason":"toolUse","timestamp":1}"#;
    round_trip_message(literal);
}

#[test]
fn assistant_error_message_round_trips() {
    let message = round_trip_message(ASSISTANT_ERROR);
    let assistant = message.as_assistant().expect("an assistant message");
    assert!(assistant.content.is_empty());
    assert_eq!(assistant.stop_reason, StopReason::Error);
    assert_eq!(
        assistant.error_message.as_deref(),
        Some("429 Too Many Requests: rate limit exceeded")
    );
    assert_eq!(assistant.response_id, None);
    assert_eq!(assistant.usage.total_tokens, 16);
    let out = serde_json::to_value(&message).unwrap();
    assert!(out.get("responseId").is_none(), "absent responseId must stay absent");
}

#[test]
fn assistant_aborted_message_round_trips() {
    let message = round_trip_message(ASSISTANT_ABORTED);
    let assistant = message.as_assistant().expect("an assistant message");
    assert_eq!(assistant.stop_reason, StopReason::Aborted);
    assert_eq!(assistant.error_message.as_deref(), Some("Request was aborted"));
    assert_eq!(assistant.text(), "I was about to");
    assert_eq!(assistant.usage.cost.total, 3.5);
}

/// pi writes zero (and other whole-number) costs as JSON integers (`"total":0`), e.g. for every
/// free or faux model. `Cost` holds `f64`s, so they come back as `0.0`, which is a different
/// `serde_json::Value` (`PosInt(0)` vs `Float(0.0)`) and different bytes in a session file.
#[test]
fn assistant_message_with_integer_costs_round_trips() {
    let literal = r#"{"role":"assistant","content":[{"type":"text","text":"4"}],"api":"faux","provider":"faux","model":"faux-1","usage":{"input":3,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":4,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1731234567890}"#;
    let message = round_trip_message(literal);
    assert_eq!(message.as_assistant().unwrap().usage.cost, Cost::default());
}

// ---------------------------------------------------------------------------------------------
// Tool results
// ---------------------------------------------------------------------------------------------

#[test]
fn tool_result_with_details_round_trips() {
    let message = round_trip_message(TOOL_RESULT_WITH_DETAILS);
    let result = message.as_tool_result().expect("a tool result");
    assert_eq!(result.tool_call_id, "toolu_01B7x");
    assert_eq!(result.tool_name, "read");
    assert_eq!(result.text(), "fn main() {\n    println!(\"hi\");\n}\n");
    assert_eq!(result.content.len(), 2);
    assert_eq!(
        result.details,
        Some(json!({"truncation": null, "lines": 3, "path": "src/main.rs", "ranges": [[1, 3]]}))
    );
    assert_eq!(result.usage, None);
    assert_eq!(result.added_tool_names, None);
    assert!(!result.is_error);
    assert_eq!(result.timestamp, 1_731_234_568_200);
}

#[test]
fn tool_result_without_details_round_trips() {
    let message = round_trip_message(TOOL_RESULT_ERROR_NO_DETAILS);
    let result = message.as_tool_result().expect("a tool result");
    assert_eq!(result.tool_call_id, "toolu_01A9q");
    assert_eq!(result.details, None);
    assert!(result.is_error);
    assert_eq!(result.text(), "Path not found: src");
    let serialised = serde_json::to_string(&message).unwrap();
    assert!(
        !serialised.contains("details"),
        "absent details must stay absent: {serialised}"
    );
    assert!(
        !serialised.contains("usage"),
        "absent usage must stay absent: {serialised}"
    );
    assert!(
        !serialised.contains("addedToolNames"),
        "absent addedToolNames must stay absent: {serialised}"
    );
}

#[test]
fn tool_result_with_usage_and_added_tool_names_round_trips() {
    let literal = r#"{"role":"toolResult","toolCallId":"call_7","toolName":"tool_search","content":[{"type":"text","text":"Loaded 2 tools"}],"details":{},"usage":{"input":50,"output":20,"cacheRead":0,"cacheWrite":0,"totalTokens":70,"cost":{"input":0.5,"output":0.25,"cacheRead":0.125,"cacheWrite":0.0625,"total":0.9375}},"addedToolNames":["mcp__github__search","mcp__github__issue"],"isError":false,"timestamp":1731234573000}"#;
    let message = round_trip_message(literal);
    let result = message.as_tool_result().unwrap();
    assert_eq!(result.details, Some(json!({})));
    assert_eq!(result.usage.map(|u| u.total_tokens), Some(70));
    assert_eq!(
        result.added_tool_names.as_deref(),
        Some(&["mcp__github__search".to_owned(), "mcp__github__issue".to_owned()][..])
    );
}

// ---------------------------------------------------------------------------------------------
// Custom roles
// ---------------------------------------------------------------------------------------------

#[test]
fn bash_execution_message_round_trips_with_every_field() {
    let message = round_trip_message(BASH_EXECUTION);
    assert_eq!(message.role(), "bashExecution");
    let custom = custom(&message);
    assert_eq!(custom.role, "bashExecution");
    assert!(
        !custom.fields.contains_key("role"),
        "`role` is held apart from the fields"
    );
    assert_eq!(custom.fields["command"], "ls");
    assert_eq!(custom.fields["output"], "Cargo.toml\nsrc\n");
    assert_eq!(custom.fields["exitCode"], 0);
    assert_eq!(custom.fields["timestamp"], 1_731_234_570_000_i64);
    assert_eq!(custom.fields.len(), 6);
}

#[test]
fn notification_message_round_trips_with_every_field() {
    let message = round_trip_message(NOTIFICATION);
    let custom = custom(&message);
    assert_eq!(custom.role, "notification");
    assert_eq!(custom.fields["level"], "warning");
    assert_eq!(custom.fields["details"]["percent"], 91.5);
    assert_eq!(custom.fields["details"]["extra"], Value::Null);
    assert_eq!(custom.fields.len(), 4);
}

#[test]
fn custom_message_round_trips_with_every_field() {
    let message = round_trip_message(CUSTOM);
    let custom = custom(&message);
    assert_eq!(custom.role, "custom");
    assert_eq!(custom.fields["customType"], "todo-list");
    assert_eq!(custom.fields["display"], true);
    assert_eq!(custom.fields.len(), 5);
}

/// A custom message is app data that pi writes with `JSON.stringify`, which keeps insertion order.
/// Reading removes `role` from the field map with `Map::remove`, which under serde_json's
/// `preserve_order` is `swap_remove`: the last field (`timestamp`) jumps into `role`'s slot, so the
/// message is re-written as `{"role":…,"timestamp":…,"command":…,…}`. The values survive (the
/// value comparison above passes); the field order does not. `shift_remove` would keep it.
#[test]
fn custom_messages_keep_their_field_order() {
    for literal in [BASH_EXECUTION, NOTIFICATION, CUSTOM] {
        let message: AgentMessage = serde_json::from_str(literal).unwrap();
        let serialised = serde_json::to_string(&message).unwrap();
        assert_eq!(keys_in_order(&serialised), keys_in_order(literal));
        assert_eq!(serialised, literal);
    }
}

// ---------------------------------------------------------------------------------------------
// Stop reasons
// ---------------------------------------------------------------------------------------------

#[test]
fn every_stop_reason_round_trips() {
    let cases = [
        ("stop", StopReason::Stop),
        ("length", StopReason::Length),
        ("toolUse", StopReason::ToolUse),
        ("error", StopReason::Error),
        ("aborted", StopReason::Aborted),
    ];
    for (text, reason) in cases {
        let json = format!("\"{text}\"");
        let parsed: StopReason = serde_json::from_str(&json).unwrap();
        assert_eq!(parsed, reason);
        assert_eq!(serde_json::to_string(&reason).unwrap(), json);

        // And inside a message, where pi writes it.
        let literal = format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"x"}}],"api":"faux","provider":"faux","model":"faux-1","usage":{{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{{"input":0.5,"output":0.5,"cacheRead":0.5,"cacheWrite":0.5,"total":2.5}}}},"stopReason":"{text}","timestamp":1}}"#
        );
        let message = round_trip_message(&literal);
        assert_eq!(message.as_assistant().unwrap().stop_reason, reason);
    }
    assert_eq!(StopReason::default(), StopReason::Stop);
}

/// pi's newest `StopReason` adds `"pending"` (partials) and `"deferred"` (reference §6.1); sessions
/// holding them do not load.
#[test]
fn newer_stop_reasons_parse() {
    for text in ["\"pending\"", "\"deferred\""] {
        let reason: StopReason = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&reason).unwrap(), text);
    }
}

#[test]
fn unknown_stop_reasons_are_errors() {
    for text in ["\"finished\"", "\"tool_use\"", "\"ToolUse\"", "\"\"", "0", "null"] {
        assert!(
            serde_json::from_str::<StopReason>(text).is_err(),
            "{text} must not parse"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Agent events
// ---------------------------------------------------------------------------------------------

#[test]
fn agent_start_and_turn_start_round_trip() {
    assert_eq!(round_trip_event(r#"{"type":"agent_start"}"#), AgentEvent::AgentStart);
    assert_eq!(round_trip_event(r#"{"type":"turn_start"}"#), AgentEvent::TurnStart);
    assert_eq!(AgentEvent::AgentStart.kind(), "agent_start");
}

#[test]
fn agent_end_round_trips() {
    let literal = format!(
        r#"{{"type":"agent_end","messages":[{USER_STRING},{ASSISTANT_TOOL_USE},{TOOL_RESULT_ERROR_NO_DETAILS},{BASH_EXECUTION}]}}"#
    );
    let AgentEvent::AgentEnd { messages } = round_trip_event(&literal) else {
        panic!("expected agent_end");
    };
    let roles: Vec<&str> = messages.iter().map(AgentMessage::role).collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "bashExecution"]);
}

#[test]
fn message_start_and_end_round_trip() {
    let start = round_trip_event(&format!(r#"{{"type":"message_start","message":{USER_BLOCKS}}}"#));
    let AgentEvent::MessageStart { message } = &start else {
        panic!("expected message_start, got {start:?}");
    };
    assert_eq!(message.role(), "user");
    let end = round_trip_event(&format!(
        r#"{{"type":"message_end","message":{TOOL_RESULT_WITH_DETAILS}}}"#
    ));
    assert_eq!(end.kind(), "message_end");
}

fn turn_end_literal() -> String {
    format!(
        r#"{{"type":"turn_end","message":{ASSISTANT_TOOL_USE},"toolResults":[{TOOL_RESULT_ERROR_NO_DETAILS},{TOOL_RESULT_WITH_DETAILS}]}}"#
    )
}

#[test]
fn turn_end_with_tool_results_parses() {
    let event = parse_event(&turn_end_literal());
    let AgentEvent::TurnEnd { message, tool_results } = &event else {
        panic!("expected turn_end, got {event:?}");
    };
    assert_eq!(message.role(), "assistant");
    assert_eq!(message.as_assistant().unwrap().tool_calls().count(), 2);
    assert_eq!(tool_results.len(), 2);
    assert_eq!(tool_results[0].tool_call_id, "toolu_01A9q");
    assert!(tool_results[0].is_error);
    assert_eq!(tool_results[1].tool_name, "read");
    assert_eq!(tool_results[1].details.as_ref().unwrap()["lines"], 3);
}

/// pi's `turn_end.toolResults` are `ToolResultMessage`s and carry `"role":"toolResult"`.
/// `AgentEvent::TurnEnd::tool_results` is a `Vec<ToolResultMessage>`, and `ToolResultMessage`
/// serialises without `role` (only `AgentMessage` adds it), so the role is dropped on the way out.
#[test]
fn turn_end_with_tool_results_round_trips() {
    let event = round_trip_event(&turn_end_literal());
    assert_eq!(event.kind(), "turn_end");
}

/// A streaming partial as pi sends it in `message_update` (and in `assistantMessageEvent.partial`).
const PARTIAL: &str = r#"{"role":"assistant","content":[{"type":"text","text":"Hel"}],"api":"faux","provider":"faux","model":"faux-1","usage":{"input":5,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":6,"cost":{"input":0.5,"output":0.25,"cacheRead":0.125,"cacheWrite":0.0625,"total":0.9375}},"stopReason":"stop","timestamp":1731234567890}"#;

fn message_update_literal() -> String {
    format!(
        r#"{{"type":"message_update","message":{PARTIAL},"assistantMessageEvent":{{"type":"text_delta","contentIndex":0,"delta":"Hel","partial":{PARTIAL}}}}}"#
    )
}

#[test]
fn message_update_with_text_delta_parses() {
    let event = parse_event(&message_update_literal());
    let AgentEvent::MessageUpdate {
        message,
        assistant_message_event,
    } = &event
    else {
        panic!("expected message_update, got {event:?}");
    };
    assert_eq!(message.text(), "Hel");
    assert_eq!(assistant_message_event.kind(), "text_delta");
    let AssistantMessageEvent::TextDelta {
        content_index,
        delta,
        partial,
    } = assistant_message_event
    else {
        panic!("expected text_delta, got {assistant_message_event:?}");
    };
    assert_eq!(*content_index, 0);
    assert_eq!(delta, "Hel");
    assert_eq!(partial.text(), "Hel");
    assert_eq!(**partial, **message);
}

/// pi's `message_update.message` and every `assistantMessageEvent.partial` / `message` / `error`
/// are `AssistantMessage`s with `"role":"assistant"`. Here they are `Arc<AssistantMessage>` /
/// `AssistantMessage`, which serialise without `role`.
#[test]
fn message_update_with_text_delta_round_trips() {
    let event = round_trip_event(&message_update_literal());
    assert_eq!(event.kind(), "message_update");
}

#[test]
fn tool_execution_start_round_trips() {
    let literal = r#"{"type":"tool_execution_start","toolCallId":"toolu_01B7x","toolName":"read","args":{"path":"src/main.rs","offset":1}}"#;
    let event = round_trip_event(literal);
    assert_eq!(
        event,
        AgentEvent::ToolExecutionStart {
            tool_call_id: "toolu_01B7x".into(),
            tool_name: "read".into(),
            args: json!({"path": "src/main.rs", "offset": 1}),
        }
    );
}

#[test]
fn tool_execution_update_round_trips() {
    let literal = r#"{"type":"tool_execution_update","toolCallId":"call_bash_1","toolName":"bash","args":{"command":"cargo build"},"partialResult":{"content":[{"type":"text","text":"   Compiling pi v0.1.0\n"}],"details":{"bytes":24,"truncated":false}}}"#;
    let event = round_trip_event(literal);
    let AgentEvent::ToolExecutionUpdate {
        tool_call_id,
        tool_name,
        args,
        partial_result,
    } = &event
    else {
        panic!("expected tool_execution_update, got {event:?}");
    };
    assert_eq!(tool_call_id, "call_bash_1");
    assert_eq!(tool_name, "bash");
    assert_eq!(args["command"], "cargo build");
    assert_eq!(partial_result.content[0].as_text(), Some("   Compiling pi v0.1.0\n"));
    assert_eq!(partial_result.details["bytes"], 24);
    assert_eq!(partial_result.terminate, None);
}

#[test]
fn tool_execution_end_round_trips() {
    let ok = r#"{"type":"tool_execution_end","toolCallId":"call_bash_1","toolName":"bash","result":{"content":[{"type":"text","text":"Finished"}],"details":{"exitCode":0}},"isError":false}"#;
    let AgentEvent::ToolExecutionEnd {
        tool_call_id,
        result,
        is_error,
        ..
    } = round_trip_event(ok)
    else {
        panic!("expected tool_execution_end");
    };
    assert_eq!(tool_call_id, "call_bash_1");
    assert_eq!(result.details, json!({"exitCode": 0}));
    assert!(!is_error);

    let failed = r#"{"type":"tool_execution_end","toolCallId":"call_x","toolName":"nope","result":{"content":[{"type":"text","text":"Tool nope not found"}],"details":{}},"isError":true}"#;
    let AgentEvent::ToolExecutionEnd {
        tool_name,
        result,
        is_error,
        ..
    } = round_trip_event(failed)
    else {
        panic!("expected tool_execution_end");
    };
    assert_eq!(tool_name, "nope");
    assert_eq!(result.content[0].as_text(), Some("Tool nope not found"));
    assert!(is_error);
}

// ---------------------------------------------------------------------------------------------
// Negative cases: errors, never panics
// ---------------------------------------------------------------------------------------------

#[test]
fn malformed_messages_are_errors_not_panics() {
    let bad = [
        // No role at all.
        r#"{"content":"hi","timestamp":1}"#,
        // Role of the wrong type.
        r#"{"role":7,"content":"hi","timestamp":1}"#,
        r#"{"role":null,"content":"hi","timestamp":1}"#,
        // Not an object.
        r#"["user","hi"]"#,
        r#""user""#,
        "null",
        // User content of the wrong type.
        r#"{"role":"user","content":42,"timestamp":1}"#,
        // Timestamp as an ISO string instead of integer milliseconds.
        r#"{"role":"user","content":"hi","timestamp":"2024-11-10T10:29:27Z"}"#,
        // Missing timestamp.
        r#"{"role":"user","content":"hi"}"#,
        // Unknown content block type.
        r#"{"role":"user","content":[{"type":"video","url":"x"}],"timestamp":1}"#,
        // Content block without a type tag.
        r#"{"role":"user","content":[{"text":"hi"}],"timestamp":1}"#,
        // Image without its mimeType.
        r#"{"role":"user","content":[{"type":"image","data":"AAAA"}],"timestamp":1}"#,
        // Invalid stop reason.
        r#"{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"finished","timestamp":1}"#,
        // Usage missing.
        r#"{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","stopReason":"stop","timestamp":1}"#,
        // Negative token count.
        r#"{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{"input":-1,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1}"#,
        // Tool call without its id.
        r#"{"role":"assistant","content":[{"type":"toolCall","name":"ls","arguments":{}}],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":1}"#,
        // Tool result with isError as a string, and without toolCallId.
        r#"{"role":"toolResult","toolCallId":"c","toolName":"t","content":[],"isError":"no","timestamp":1}"#,
        r#"{"role":"toolResult","toolName":"t","content":[],"isError":false,"timestamp":1}"#,
        // Truncated JSON.
        r#"{"role":"user","content":"hi","#,
    ];
    for literal in bad {
        let result = std::panic::catch_unwind(|| serde_json::from_str::<AgentMessage>(literal));
        let Ok(parsed) = result else {
            panic!("parsing panicked on {literal}");
        };
        assert!(parsed.is_err(), "expected an error for {literal}, got {parsed:?}");
    }
    let missing_role = serde_json::from_str::<AgentMessage>(r#"{"content":"hi","timestamp":1}"#).unwrap_err();
    assert!(missing_role.to_string().contains("role"), "{missing_role}");
}

#[test]
fn malformed_events_are_errors_not_panics() {
    let bad = [
        r#"{"type":"agent_begin"}"#,
        r#"{"kind":"agent_start"}"#,
        r#"{"type":"tool_execution_start","toolName":"read","args":{}}"#,
        r#"{"type":"tool_execution_end","toolCallId":"c","toolName":"t","result":{"content":[]},"isError":"yes"}"#,
        r#"{"type":"turn_end","message":{"content":"no role"},"toolResults":[]}"#,
        r#"{"type":"message_update","message":{},"assistantMessageEvent":{"type":"text_delta"}}"#,
    ];
    for literal in bad {
        let result = std::panic::catch_unwind(|| serde_json::from_str::<AgentEvent>(literal));
        let Ok(parsed) = result else {
            panic!("parsing panicked on {literal}");
        };
        assert!(parsed.is_err(), "expected an error for {literal}, got {parsed:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Property: random messages round-trip unchanged
// ---------------------------------------------------------------------------------------------

/// Text of any characters, control characters and non-BMP ones included.
fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![".{0,24}", "[ -~\n\t\"\\\\]{0,24}"]
}

fn id() -> impl Strategy<Value = String> {
    "[A-Za-z0-9_-]{1,16}"
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        // Binary fractions print and parse back exactly.
        (-1_000_000i32..1_000_000).prop_map(|n| Value::from(f64::from(n) / 64.0)),
        any_text().prop_map(Value::String),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-zA-Z_]{1,8}", inner, 0..4).prop_map(object),
        ]
    })
}

fn object(map: BTreeMap<String, Value>) -> Value {
    Value::Object(map.into_iter().collect::<Map<String, Value>>())
}

fn json_object() -> impl Strategy<Value = Value> {
    prop::collection::btree_map("[a-zA-Z_]{1,8}", json_value(), 0..4).prop_map(object)
}

fn text_block() -> impl Strategy<Value = ContentBlock> {
    (any_text(), prop::option::of(id()))
        .prop_map(|(text, text_signature)| ContentBlock::Text(TextContent { text, text_signature }))
}

fn image_block() -> impl Strategy<Value = ContentBlock> {
    (
        "[A-Za-z0-9+/]{0,32}={0,2}",
        prop_oneof![
            Just("image/png"),
            Just("image/jpeg"),
            Just("image/gif"),
            Just("image/webp")
        ],
    )
        .prop_map(|(data, mime)| ContentBlock::image(data, mime))
}

fn thinking_block() -> impl Strategy<Value = ContentBlock> {
    (any_text(), prop::option::of(id()), prop::option::of(any::<bool>())).prop_map(
        |(thinking, thinking_signature, redacted)| {
            ContentBlock::Thinking(ThinkingContent {
                thinking,
                thinking_signature,
                redacted,
            })
        },
    )
}

fn tool_call_block() -> impl Strategy<Value = ContentBlock> {
    (id(), "[a-z_]{1,12}", json_object(), prop::option::of(id())).prop_map(|(id, name, arguments, sig)| {
        let mut call = ToolCall::new(id, name, arguments);
        call.thought_signature = sig;
        ContentBlock::ToolCall(call)
    })
}

fn cost_amount() -> impl Strategy<Value = f64> {
    (0u32..10_000_000).prop_map(|n| f64::from(n) / 1024.0)
}

fn usage() -> impl Strategy<Value = Usage> {
    (
        any::<u32>(),
        any::<u32>(),
        any::<u32>(),
        any::<u32>(),
        any::<u32>(),
        (
            cost_amount(),
            cost_amount(),
            cost_amount(),
            cost_amount(),
            cost_amount(),
        ),
    )
        .prop_map(
            |(input, output, cache_read, cache_write, total, (ci, co, cr, cw, ct))| Usage {
                input: input.into(),
                output: output.into(),
                cache_read: cache_read.into(),
                cache_write: cache_write.into(),
                total_tokens: total.into(),
                cost: Cost {
                    input: ci,
                    output: co,
                    cache_read: cr,
                    cache_write: cw,
                    total: ct,
                },
            },
        )
}

fn stop_reason() -> impl Strategy<Value = StopReason> {
    prop_oneof![
        Just(StopReason::Stop),
        Just(StopReason::Length),
        Just(StopReason::ToolUse),
        Just(StopReason::Error),
        Just(StopReason::Aborted),
    ]
}

fn user_message() -> impl Strategy<Value = AgentMessage> {
    let content = prop_oneof![
        any_text().prop_map(UserContent::Text),
        prop::collection::vec(prop_oneof![text_block(), image_block()], 0..4).prop_map(UserContent::Blocks),
    ];
    (content, any::<i64>()).prop_map(|(content, timestamp)| AgentMessage::User(UserMessage { content, timestamp }))
}

fn assistant_message() -> impl Strategy<Value = AgentMessage> {
    (
        prop::collection::vec(prop_oneof![text_block(), thinking_block(), tool_call_block()], 0..5),
        ("[a-z-]{1,20}", "[a-z-]{1,12}", "[a-z0-9.-]{1,20}"),
        (prop::option::of(id()), prop::option::of("[a-z0-9.-]{1,20}")),
        usage(),
        stop_reason(),
        prop::option::of(any_text()),
        any::<i64>(),
    )
        .prop_map(
            |(
                content,
                (api, provider, model),
                (response_id, response_model),
                usage,
                stop_reason,
                error_message,
                timestamp,
            )| {
                AgentMessage::Assistant(AssistantMessage {
                    content,
                    api,
                    provider,
                    model,
                    response_id,
                    response_model,
                    usage,
                    stop_reason,
                    error_message,
                    timestamp,
                })
            },
        )
}

fn tool_result_message() -> impl Strategy<Value = AgentMessage> {
    (
        id(),
        "[a-z_]{1,12}",
        prop::collection::vec(prop_oneof![text_block(), image_block()], 0..3),
        // `details: null` reads back as absent, so details are an object when present.
        prop::option::of(json_object()),
        prop::option::of(usage()),
        prop::option::of(prop::collection::vec("[a-z_]{1,10}", 0..3)),
        any::<bool>(),
        any::<i64>(),
    )
        .prop_map(
            |(tool_call_id, tool_name, content, details, usage, added_tool_names, is_error, timestamp)| {
                AgentMessage::ToolResult(ToolResultMessage {
                    tool_call_id,
                    tool_name,
                    content,
                    details,
                    usage,
                    added_tool_names,
                    is_error,
                    timestamp,
                })
            },
        )
}

fn custom_message() -> impl Strategy<Value = AgentMessage> {
    (
        "[a-zA-Z]{1,14}".prop_filter("not an LLM role", |r| {
            !matches!(r.as_str(), "user" | "assistant" | "toolResult")
        }),
        prop::collection::btree_map(
            "[a-zA-Z_]{1,8}".prop_filter("not role", |k| k != "role"),
            json_value(),
            0..5,
        ),
    )
        .prop_map(|(role, fields)| {
            AgentMessage::Custom(CustomMessage {
                role,
                fields: fields.into_iter().collect(),
            })
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_messages_round_trip_through_json(
        message in prop_oneof![user_message(), assistant_message(), tool_result_message()],
    ) {
        let serialised = serde_json::to_string(&message).unwrap();
        prop_assert!(serialised.starts_with(r#"{"role":"#), "role is not first: {}", serialised);
        let back: AgentMessage = serde_json::from_str(&serialised).unwrap();
        prop_assert_eq!(&back, &message);
        let again = serde_json::to_string(&back).unwrap();
        prop_assert_eq!(again, serialised);
    }

    #[test]
    fn random_custom_messages_round_trip_as_values(message in custom_message()) {
        let serialised = serde_json::to_string(&message).unwrap();
        prop_assert!(serialised.starts_with(r#"{"role":"#), "role is not first: {}", serialised);
        let back: AgentMessage = serde_json::from_str(&serialised).unwrap();
        prop_assert_eq!(back.role(), message.role());
        prop_assert_eq!(serde_json::to_value(&back).unwrap(), serde_json::to_value(&message).unwrap());
    }
}
