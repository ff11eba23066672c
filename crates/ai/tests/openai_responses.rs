//! The `openai-responses` wire API against a scripted server on 127.0.0.1: request bodies
//! (insta snapshots), streamed events, function calls, reasoning summaries and their replay,
//! usage, retries, errors, abort, forced tool choice, the API key kept out of errors, and a
//! two-turn tool conversation through `run_agent_loop`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::client;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use pi_agent_core::{
    AgentContext, AgentEvent, AgentLoopConfig, AgentMessage, AgentTool, AssistantMessage, AssistantMessageEvent,
    ContentBlock, FnTool, LlmContext, Model, StopReason, StreamFn, StreamOptions, TextContent, ThinkingContent,
    ThinkingLevel, ToolCall, ToolChoice, ToolResult, UserContent, UserMessage, run_agent_loop,
};
use pi_test_support::messages::user;
use pi_test_support::openai_responses::{
    args_delta, args_done, call_added, call_done, completed, created, event, message, message_added, message_done,
    reasoning_added, reasoning_done, summary_delta, summary_part_added, summary_part_done, text as text_reply,
    text_delta,
};
use pi_test_support::stream::{API_KEY, assert_no_key, error_message, final_message, kinds, options};
use pi_test_support::tools::{self, weather as weather_tool};
use pi_test_support::{MockServer, Reply, messages, pretty};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn model(server: &MockServer) -> Model {
    pi_test_support::openai_responses::model(server.url("/v1"))
}

async fn run(
    model: &Model,
    messages: &[AgentMessage],
    tools: &[Arc<dyn AgentTool>],
    options: &StreamOptions,
) -> Vec<AssistantMessageEvent> {
    let context = LlmContext {
        system_prompt: "You are a test.",
        messages,
        tools,
    };
    pi_ai::openai_responses::stream(&client(), model, &context, options)
        .collect()
        .await
}

fn assistant(content: Vec<ContentBlock>, stop_reason: StopReason) -> AgentMessage {
    messages::assistant(&pi_test_support::openai_responses::model(""), content, stop_reason)
}

fn tool_result(id: &str, content: Vec<ContentBlock>, is_error: bool) -> AgentMessage {
    messages::tool_result(id, "get_weather", content, is_error)
}

#[tokio::test]
async fn plain_text_response() {
    let mut events = vec![created("resp_abc")];
    events.extend(message(0, "msg_abc", &["Hello", ", world"]));
    events.push(completed("resp_abc", 12, 3, 0));
    let server = MockServer::start(vec![Reply::events(&events)]).await;
    let events = run(&model(&server), &[user("Say hello")], &[], &options()).await;
    assert_eq!(
        kinds(&events),
        ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    );
    let message = final_message(&events);
    assert_eq!(message.text(), "Hello, world");
    assert_eq!(message.stop_reason, StopReason::Stop);
    assert_eq!(message.response_id.as_deref(), Some("resp_abc"));
    assert_eq!(message.api, "openai-responses");
    assert_eq!(message.provider, "openai");
    assert_eq!(message.model, "gpt-test");
    match &message.content[0] {
        ContentBlock::Text(text) => assert_eq!(text.text_signature.as_deref(), Some("msg_abc")),
        other => panic!("expected text, got {other:?}"),
    }
    match &events[4] {
        AssistantMessageEvent::TextEnd { content, .. } => assert_eq!(content, "Hello, world"),
        other => panic!("unexpected {}", other.kind()),
    }

    let request = &server.requests()[0];
    assert_eq!(request.line, "POST /v1/responses");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {API_KEY}").as_str())
    );
    assert_eq!(request.header("content-type"), Some("application/json"));
    insta::assert_snapshot!("plain_text_request", pretty(&request.json()));
}

#[tokio::test]
async fn several_function_calls_keep_order_and_ids() {
    let mut events = vec![created("resp_2")];
    events.extend(message(0, "msg_1", &["Checking three cities."]));
    events.extend([
        call_added(1, "fc_paris", "call_paris", "get_weather"),
        args_delta(1, "fc_paris", "{\"ci"),
        args_delta(1, "fc_paris", "ty\": \"Par"),
        args_delta(1, "fc_paris", "is\"}"),
        args_done(1, "fc_paris", "{\"city\": \"Paris\"}"),
        call_done(1, "fc_paris", "call_paris", "get_weather", "{\"city\": \"Paris\"}"),
        call_added(2, "fc_rome", "call_rome", "get_weather"),
        args_delta(2, "fc_rome", "{\"city\": \"Rome\"}"),
        call_done(2, "fc_rome", "call_rome", "get_weather", "{\"city\": \"Rome\"}"),
        // A server that sends the arguments only with `.done`.
        call_added(3, "fc_oslo", "call_oslo", "get_weather"),
        args_done(3, "fc_oslo", "{\"city\": \"Oslo\"}"),
        call_done(3, "fc_oslo", "call_oslo", "get_weather", "{\"city\": \"Oslo\"}"),
        completed("resp_2", 40, 30, 0),
    ]);
    let server = MockServer::start(vec![Reply::events(&events)]).await;
    let events = run(&model(&server), &[user("Weather?")], &[weather_tool()], &options()).await;
    assert_eq!(
        kinds(&events),
        [
            "start",
            "text_start",
            "text_delta",
            "text_end",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_end",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_end",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_end",
            "done",
        ]
    );
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    let calls: Vec<(&str, &str, Value)> = message
        .tool_calls()
        .map(|call| (call.id.as_str(), call.name.as_str(), call.arguments.clone()))
        .collect();
    assert_eq!(
        calls,
        [
            ("call_paris|fc_paris", "get_weather", json!({"city": "Paris"})),
            ("call_rome|fc_rome", "get_weather", json!({"city": "Rome"})),
            ("call_oslo|fc_oslo", "get_weather", json!({"city": "Oslo"})),
        ]
    );
    // The arguments are parsed while they stream.
    let partial_arguments: Vec<Value> = events
        .iter()
        .filter_map(|event| match event {
            AssistantMessageEvent::ToolCallDelta {
                content_index: 1,
                partial,
                ..
            } => Some(partial.content[1].as_tool_call().unwrap().arguments.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        partial_arguments,
        [json!({}), json!({"city": "Par"}), json!({"city": "Paris"})]
    );
    let end_indices: Vec<usize> = events
        .iter()
        .filter_map(|event| match event {
            AssistantMessageEvent::ToolCallEnd { content_index, .. } => Some(*content_index),
            _ => None,
        })
        .collect();
    assert_eq!(end_indices, [1, 2, 3]);
}

#[tokio::test]
async fn interleaved_items_are_told_apart_by_item_id() {
    let events = vec![
        created("resp_3"),
        call_added(0, "fc_a", "call_a", "get_weather"),
        call_added(1, "fc_b", "call_b", "get_weather"),
        args_delta(1, "fc_b", "{\"city\": \"B\"}"),
        args_delta(0, "fc_a", "{\"city\": \"A\"}"),
        call_done(1, "fc_b", "call_b", "get_weather", "{\"city\": \"B\"}"),
        call_done(0, "fc_a", "call_a", "get_weather", "{\"city\": \"A\"}"),
        completed("resp_3", 1, 1, 0),
    ];
    let server = MockServer::start(vec![Reply::events(&events)]).await;
    let events = run(&model(&server), &[user("x")], &[weather_tool()], &options()).await;
    let message = final_message(&events);
    let calls: Vec<(&str, Value)> = message
        .tool_calls()
        .map(|call| (call.id.as_str(), call.arguments.clone()))
        .collect();
    assert_eq!(
        calls,
        [
            ("call_a|fc_a", json!({"city": "A"})),
            ("call_b|fc_b", json!({"city": "B"}))
        ]
    );
}

#[tokio::test]
async fn reasoning_summary_becomes_thinking_and_is_replayed() {
    let mut events = vec![
        created("resp_r"),
        reasoning_added(0, "rs_1"),
        summary_part_added(0, "rs_1", 0),
        summary_delta(0, "rs_1", 0, "**Plan**"),
        summary_delta(0, "rs_1", 0, " the answer."),
        summary_part_done(0, "rs_1", 0, "**Plan** the answer."),
        summary_part_added(0, "rs_1", 1),
        summary_delta(0, "rs_1", 1, "Check it."),
        summary_part_done(0, "rs_1", 1, "Check it."),
        reasoning_done(0, "rs_1", &["**Plan** the answer.", "Check it."], "gAAAA-encrypted"),
    ];
    events.extend(message(1, "msg_r", &["42."]));
    events.push(completed("resp_r", 20, 50, 0));
    let server = MockServer::start(vec![Reply::events(&events), text_reply("Sure.")]).await;
    let mut model = model(&server);
    model.reasoning = true;
    let options = StreamOptions {
        reasoning: Some(ThinkingLevel::High),
        max_tokens: Some(4096),
        session_id: Some("session-1".into()),
        ..options()
    };
    let events = run(&model, &[user("Think")], &[], &options).await;
    assert_eq!(
        kinds(&events),
        [
            "start",
            "thinking_start",
            "thinking_delta",
            "thinking_delta",
            "thinking_delta",
            "thinking_delta",
            "thinking_end",
            "text_start",
            "text_delta",
            "text_end",
            "done"
        ]
    );
    let message = final_message(&events).clone();
    let ContentBlock::Thinking(thinking) = &message.content[0] else {
        panic!("expected thinking, got {:?}", message.content[0]);
    };
    assert_eq!(thinking.thinking, "**Plan** the answer.\n\nCheck it.");
    let stored: Value = serde_json::from_str(thinking.thinking_signature.as_deref().unwrap()).unwrap();
    assert_eq!(stored["type"], "reasoning");
    assert_eq!(stored["id"], "rs_1");
    assert_eq!(stored["encrypted_content"], "gAAAA-encrypted");
    assert_eq!(message.text(), "42.");

    let first = server.requests()[0].json();
    assert_eq!(first["input"][0]["role"], "developer");
    assert_eq!(first["reasoning"], json!({"effort": "high", "summary": "auto"}));
    assert_eq!(first["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(first["max_output_tokens"], 4096);
    assert_eq!(first["prompt_cache_key"], "session-1");

    // The next request replays the reasoning item verbatim before the message that followed it.
    let history = [user("Think"), AgentMessage::Assistant(message), user("Thanks")];
    run(&model, &history, &[], &options).await;
    let second = server.requests()[1].json();
    assert_eq!(second["input"][2], stored);
    insta::assert_snapshot!("reasoning_replay_request", pretty(&second));
}

#[tokio::test]
async fn reasoning_without_encrypted_content_is_not_replayed() {
    let server = MockServer::start(vec![text_reply("ok")]).await;
    let model = model(&server);
    let history = [
        user("x"),
        assistant(
            vec![
                ContentBlock::Thinking(ThinkingContent {
                    thinking: "summary".into(),
                    thinking_signature: Some(r#"{"type":"reasoning","id":"rs_9","summary":[]}"#.into()),
                    redacted: None,
                }),
                ContentBlock::ToolCall(ToolCall::new("call_9|fc_9", "get_weather", json!({"city": "Lima"}))),
            ],
            StopReason::ToolUse,
        ),
        tool_result("call_9|fc_9", vec![ContentBlock::text("foggy")], false),
    ];
    run(&model, &history, &[weather_tool()], &options()).await;
    let input = server.requests()[0].json()["input"].clone();
    assert_eq!(
        input[2],
        json!({"type": "function_call", "call_id": "call_9", "name": "get_weather", "arguments": "{\"city\":\"Lima\"}"})
    );
    assert_eq!(
        input[3],
        json!({"type": "function_call_output", "call_id": "call_9", "output": "foggy"})
    );
    assert!(!input.to_string().contains("rs_9"));
}

#[tokio::test]
async fn reasoning_is_turned_off_without_a_level_and_not_requested_for_plain_models() {
    let server = MockServer::start(vec![text_reply("a"), text_reply("b")]).await;
    let mut reasoning_model = model(&server);
    reasoning_model.reasoning = true;
    run(&reasoning_model, &[user("x")], &[], &options()).await;
    let plain = model(&server);
    let with_level = StreamOptions {
        reasoning: Some(ThinkingLevel::Max),
        ..options()
    };
    run(&plain, &[user("x")], &[], &with_level).await;
    let requests = server.requests();
    // A reasoning model without a level is told `effort: "none"` (pi-ai does the same).
    assert_eq!(requests[0].json()["reasoning"], json!({"effort": "none"}));
    assert!(requests[1].json().get("reasoning").is_none());
    for request in &requests {
        let body = request.json();
        assert!(body.get("include").is_none(), "{body}");
    }
    assert_eq!(requests[0].json()["input"][0]["role"], "developer");
    assert_eq!(requests[1].json()["input"][0]["role"], "system");
}

#[tokio::test]
async fn usage_and_cost() {
    let mut events = vec![created("resp_u")];
    events.extend(message(0, "msg_u", &["hi"]));
    events.push(completed("resp_u", 1_000_000, 500_000, 400_000));
    let server = MockServer::start(vec![Reply::events(&events)]).await;
    let events = run(&model(&server), &[user("x")], &[], &options()).await;
    let usage = final_message(&events).usage;
    assert_eq!(usage.input, 600_000);
    assert_eq!(usage.cache_read, 400_000);
    assert_eq!(usage.output, 500_000);
    assert_eq!(usage.cache_write, 0);
    assert_eq!(usage.total_tokens, 1_500_000);
    // 0.6 M × $2 + 0.5 M × $8 + 0.4 M × $0.5
    assert!((usage.cost.input - 1.2).abs() < 1e-9);
    assert!((usage.cost.output - 4.0).abs() < 1e-9);
    assert!((usage.cost.cache_read - 0.2).abs() < 1e-9);
    assert!((usage.cost.total - 5.4).abs() < 1e-9);
}

#[tokio::test]
async fn rate_limited_then_success() {
    let server = MockServer::start(vec![
        Reply::json(
            429,
            r#"{"error":{"message":"Rate limit reached for gpt-test","type":"requests","code":"rate_limit_exceeded"}}"#,
        )
        .header("retry-after", "0"),
        text_reply("after retry"),
    ])
    .await;
    let events = run(&model(&server), &[user("x")], &[], &options()).await;
    assert_eq!(final_message(&events).text(), "after retry");
    assert_eq!(final_message(&events).stop_reason, StopReason::Stop);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].body, requests[1].body);
}

#[tokio::test]
async fn server_errors_exhaust_retries() {
    let server = MockServer::start(vec![
        Reply::json(500, r#"{"error":{"message":"The server had an error"}}"#),
        Reply::json(502, r#"{"error":{"message":"The server had an error"}}"#),
        Reply::json(503, r#"{"error":{"message":"The server is still overloaded"}}"#),
    ])
    .await;
    let started = Instant::now();
    let events = run(&model(&server), &[user("x")], &[], &options()).await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(kinds(&events), ["start", "error"]);
    assert_eq!(final_message(&events).stop_reason, StopReason::Error);
    let error = error_message(&events);
    assert!(error.contains("503"), "{error}");
    assert!(error.contains("The server is still overloaded"), "{error}");
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn malformed_sse_data_is_a_clear_error() {
    let mut events = vec![created("resp_m")];
    events.extend([message_added(0, "msg_m"), text_delta(0, "msg_m", "partial")]);
    events.push("event: response.output_text.delta\ndata: {\"delta\": [oops\n\n".to_owned());
    events.push(completed("resp_m", 1, 1, 0));
    let server = MockServer::start(vec![Reply::events(&events)]).await;
    let events = run(&model(&server), &[user("x")], &[], &options()).await;
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Error);
    let error = error_message(&events);
    assert!(error.starts_with("Malformed SSE data from openai: "), "{error}");
    assert!(error.contains("line 1 column"), "{error}");
    // What streamed before the bad event is kept.
    assert_eq!(message.text(), "partial");
}

#[tokio::test]
async fn failures_in_the_stream() {
    let failed = event(json!({"type": "response.failed",
        "response": {"id": "resp_f", "status": "failed", "error": {"code": "server_error", "message": "The model crashed"}}}));
    let error_event = event(json!({"type": "error", "code": "invalid_prompt", "message": "Bad prompt", "param": null}));
    let incomplete = event(json!({"type": "response.incomplete",
        "response": {"id": "resp_i", "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
                     "usage": {"input_tokens": 5, "output_tokens": 7, "total_tokens": 12}}}));
    let server = MockServer::start(vec![
        Reply::events(&[created("resp_f"), failed]),
        Reply::events(&[created("resp_e"), error_event]),
        Reply::events(&[
            created("resp_i"),
            message_added(0, "msg_i"),
            text_delta(0, "msg_i", "cut"),
            call_added(1, "fc_i", "call_i", "get_weather"),
            args_delta(1, "fc_i", "{\"city\": \"Par"),
            incomplete,
        ]),
        // Cut off: no response.completed.
        Reply::events(&[
            created("resp_c"),
            message_added(0, "msg_c"),
            text_delta(0, "msg_c", "half"),
        ]),
    ])
    .await;
    let model = model(&server);
    let events = run(&model, &[user("x")], &[], &options()).await;
    assert_eq!(final_message(&events).stop_reason, StopReason::Error);
    assert_eq!(error_message(&events), "server_error: The model crashed");

    let events = run(&model, &[user("x")], &[], &options()).await;
    assert_eq!(error_message(&events), "Error Code invalid_prompt: Bad prompt");

    let events = run(&model, &[user("x")], &[weather_tool()], &options()).await;
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Length);
    assert_eq!(message.text(), "cut");
    assert_eq!(message.usage.output, 7);
    // Truncated arguments keep their best-effort parse.
    assert_eq!(message.tool_calls().next().unwrap().arguments, json!({"city": "Par"}));
    assert!(kinds(&events).contains(&"text_end"));

    let events = run(&model, &[user("x")], &[], &options()).await;
    assert_eq!(final_message(&events).stop_reason, StopReason::Error);
    assert!(error_message(&events).contains("ended before it was complete"));
    assert_eq!(final_message(&events).text(), "half");
}

#[tokio::test]
async fn abort_mid_stream() {
    let mut events = vec![created("resp_a"), message_added(0, "msg_a")];
    events.extend((0..50).map(|i| text_delta(0, "msg_a", &format!("word{i} "))));
    events.push(message_done(0, "msg_a", "…"));
    events.push(completed("resp_a", 1, 50, 0));
    let chunks: Vec<&str> = events.iter().map(String::as_str).collect();
    let server = MockServer::start(vec![Reply::sse(200, &chunks).paced(Duration::from_millis(20))]).await;
    let model = model(&server);
    let cancel = CancellationToken::new();
    let options = StreamOptions {
        cancel: cancel.clone(),
        ..options()
    };
    let messages = [user("x")];
    let context = LlmContext {
        system_prompt: "",
        messages: &messages,
        tools: &[],
    };
    let mut stream = pi_ai::openai_responses::stream(&client(), &model, &context, &options);
    let mut events = Vec::new();
    let mut cancelled_at = None;
    while let Some(event) = stream.next().await {
        if matches!(event, AssistantMessageEvent::TextDelta { .. }) && cancelled_at.is_none() {
            cancel.cancel();
            cancelled_at = Some(Instant::now());
        }
        events.push(event);
    }
    // Aborted promptly, not after the remaining ~1 s of the stream.
    assert!(cancelled_at.unwrap().elapsed() < Duration::from_millis(500));
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Aborted);
    assert_eq!(message.error_message.as_deref(), Some("Request was aborted"));
    assert!(message.text().starts_with("word0 "));
    assert!(!message.text().contains("word49"));
    match events.last().unwrap() {
        AssistantMessageEvent::Error { reason, .. } => assert_eq!(*reason, StopReason::Aborted),
        other => panic!("unexpected {}", other.kind()),
    }
}

#[tokio::test]
async fn forced_tool_choice() {
    let server = MockServer::start(vec![text_reply("ok"), text_reply("ok"), text_reply("ok")]).await;
    let model = model(&server);
    let resolve = FnTool::new(
        "resolve",
        "Resolve the pending action",
        json!({"type": "object", "properties": {"decision": {"type": "string"}}, "required": ["decision"]}),
        |_id, _args, _ctx| async move { Ok(ToolResult::text("done")) },
    )
    .into_arc();
    let tools = [weather_tool(), resolve];
    for choice in [
        ToolChoice::Tool("resolve".into()),
        ToolChoice::Required,
        ToolChoice::None,
    ] {
        let options = StreamOptions {
            tool_choice: Some(choice),
            ..options()
        };
        run(&model, &[user("x")], &tools, &options).await;
    }
    let requests = server.requests();
    assert_eq!(
        requests[0].json()["tool_choice"],
        json!({"type": "function", "name": "resolve"})
    );
    insta::assert_snapshot!("forced_tool_choice_request", pretty(&requests[0].json()));
    assert_eq!(requests[1].json()["tool_choice"], "required");
    assert_eq!(requests[2].json()["tool_choice"], "none");
}

#[tokio::test]
async fn history_conversion() {
    let server = MockServer::start(vec![text_reply("ok")]).await;
    let model = model(&server);
    let text_with_id = |text: &str, id: &str| {
        ContentBlock::Text(TextContent {
            text: text.into(),
            text_signature: Some(id.into()),
        })
    };
    let messages = vec![
        AgentMessage::User(UserMessage {
            content: UserContent::Blocks(vec![
                ContentBlock::text("What is in this picture?"),
                ContentBlock::image("aGVsbG8=", "image/png"),
            ]),
            timestamp: 1,
        }),
        assistant(
            vec![
                text_with_id("Let me check two cities.", "msg_1"),
                ContentBlock::ToolCall(ToolCall::new("call_1|fc_1", "get_weather", json!({"city": "Paris"}))),
                ContentBlock::ToolCall(ToolCall::new("call_2|fc_2", "get_weather", json!({"city": "Rome"}))),
            ],
            StopReason::ToolUse,
        ),
        tool_result(
            "call_1|fc_1",
            vec![ContentBlock::text("sunny"), ContentBlock::image("cGlj", "image/jpeg")],
            false,
        ),
        tool_result("call_2|fc_2", vec![ContentBlock::text("city not found")], true),
        user("And Oslo?"),
        // A failed response and an aborted one are left out, with the result of the latter.
        assistant(vec![ContentBlock::text("half an ans")], StopReason::Error),
        assistant(
            vec![ContentBlock::ToolCall(ToolCall::new(
                "call_x|fc_x",
                "get_weather",
                json!({}),
            ))],
            StopReason::Aborted,
        ),
        tool_result("call_x|fc_x", vec![ContentBlock::text("stale")], false),
        user("Please retry."),
        // Another provider's turn: its thinking cannot be replayed (and the call's item id goes
        // with it), its call id has no item part.
        AgentMessage::Assistant(AssistantMessage {
            content: vec![
                ContentBlock::Thinking(ThinkingContent {
                    thinking: "private reasoning".into(),
                    thinking_signature: Some("EqQBCkYIBxgCKkB-anthropic-signature".into()),
                    redacted: None,
                }),
                ContentBlock::ToolCall(ToolCall::new(
                    "toolu_01|fc_ignored",
                    "get_weather",
                    json!({"city": "Oslo"}),
                )),
            ],
            stop_reason: StopReason::ToolUse,
            api: "anthropic-messages".into(),
            provider: "anthropic".into(),
            model: "claude-test".into(),
            timestamp: 4,
            ..AssistantMessage::default()
        }),
        // No result for that call: a synthetic one is sent.
        user("Never mind."),
    ];
    run(&model, &messages, &[weather_tool()], &options()).await;
    let body = server.requests()[0].json();
    insta::assert_snapshot!("history_request", pretty(&body));
    let text = body.to_string();
    assert!(!text.contains("private reasoning"));
    assert!(!text.contains("half an ans"));
    assert!(!text.contains("stale"));
    assert!(!text.contains("never"));
    assert!(!text.contains("fc_ignored"));
    assert!(text.contains("No result provided"));
}

#[tokio::test]
async fn text_only_models_get_no_images_and_headers_merge() {
    let server = MockServer::start(vec![text_reply("ok")]).await;
    let mut model = model(&server);
    model.input = vec!["text".into()];
    model.headers = Some(
        [
            ("x-model".to_owned(), "m".to_owned()),
            ("x-both".to_owned(), "model".to_owned()),
        ]
        .into(),
    );
    let mut options = options();
    options.headers.insert("X-Both".into(), "call".into());
    let messages = [
        AgentMessage::User(UserMessage {
            content: UserContent::Blocks(vec![ContentBlock::image("aGk=", "image/png")]),
            timestamp: 1,
        }),
        AgentMessage::User(UserMessage {
            content: UserContent::Blocks(vec![
                ContentBlock::text("look"),
                ContentBlock::image("aGk=", "image/png"),
            ]),
            timestamp: 1,
        }),
    ];
    run(&model, &messages, &[], &options).await;
    let request = &server.requests()[0];
    let input = request.json()["input"].clone();
    // The image-only message is skipped entirely.
    assert_eq!(input.as_array().unwrap().len(), 2);
    assert_eq!(input[1]["content"], json!([{"type": "input_text", "text": "look"}]));
    assert_eq!(request.header("x-model"), Some("m"));
    assert_eq!(request.header("x-both"), Some("call"));
    assert_eq!(request.headers.iter().filter(|(name, _)| name == "x-both").count(), 1);
}

#[tokio::test]
async fn the_key_never_appears_in_an_error() {
    let unauthorized = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {API_KEY}.","type":"invalid_request_error","code":"invalid_api_key"}}}}"#
    );
    let in_stream =
        event(json!({"type": "error", "code": "invalid_api_key", "message": format!("key {API_KEY} revoked")}));
    let malformed = format!("event: response.output_text.delta\ndata: {{\"delta\": \"{API_KEY}\" BROKEN\n\n");
    let server = MockServer::start(vec![
        Reply::json(401, &unauthorized),
        Reply::events(&[created("resp_k"), in_stream]),
        Reply::events(&[created("resp_k"), malformed]),
    ])
    .await;
    let model = model(&server);
    let mut errors = Vec::new();
    for _ in 0..3 {
        let events = run(&model, &[user("x")], &[], &options()).await;
        assert_no_key(&events);
        errors.push(error_message(&events));
    }
    assert!(errors[0].starts_with("401 status code"), "{}", errors[0]);
    assert!(
        errors[0].contains("Incorrect API key provided: [redacted]"),
        "{}",
        errors[0]
    );
    assert_eq!(errors[1], "Error Code invalid_api_key: key [redacted] revoked");
    assert!(
        errors[2].starts_with("Malformed SSE data from openai: "),
        "{}",
        errors[2]
    );
    assert!(errors.iter().all(|error| !error.contains(API_KEY)));
    // The key was sent only as the bearer token.
    for request in server.requests() {
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {API_KEY}").as_str())
        );
        assert!(!request.body.contains(API_KEY));
    }
}

/// The agent loop runs unchanged over this API: a function call, the tool runs, its output goes
/// back with the call, the model answers.
#[tokio::test]
async fn two_turn_tool_conversation_through_the_agent_loop() {
    let first = vec![
        created("resp_t1"),
        call_added(0, "fc_note", "call_note", "read_note"),
        args_delta(0, "fc_note", "{\"name\": "),
        args_delta(0, "fc_note", "\"todo\"}"),
        args_done(0, "fc_note", "{\"name\": \"todo\"}"),
        call_done(0, "fc_note", "call_note", "read_note", "{\"name\": \"todo\"}"),
        completed("resp_t1", 50, 10, 0),
    ];
    let mut second = vec![created("resp_t2")];
    second.extend(message(0, "msg_t2", &["The note says: ", "buy milk."]));
    second.push(completed("resp_t2", 80, 6, 40));
    let server = MockServer::start(vec![Reply::events(&first), Reply::events(&second)]).await;

    let calls = Arc::new(AtomicUsize::new(0));
    let read_note = tools::read_note(calls.clone());
    let http = client();
    let stream_fn: Arc<dyn StreamFn> = Arc::new(move |m: &Model, c: &LlmContext<'_>, o: &StreamOptions| {
        pi_ai::openai_responses::stream(&http, m, c, o)
    });
    let mut config = AgentLoopConfig::new(model(&server)).with_stream_fn(stream_fn);
    config.api_key = Some(API_KEY.into());
    let context = AgentContext {
        system_prompt: "You read notes.".into(),
        messages: Vec::new(),
        tools: vec![read_note],
    };
    let mut events = Vec::new();
    let mut sink = |event: AgentEvent| events.push(event);
    let messages = run_agent_loop(
        vec![user("What does my todo note say?")],
        context,
        &config,
        &CancellationToken::new(),
        &mut sink,
    )
    .await
    .unwrap();

    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let roles: Vec<&str> = messages.iter().map(AgentMessage::role).collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "assistant"]);
    let first = messages[1].as_assistant().unwrap();
    assert_eq!(first.stop_reason, StopReason::ToolUse);
    let call = first.tool_calls().next().unwrap();
    assert_eq!(call.id, "call_note|fc_note");
    assert_eq!(call.arguments, json!({"name": "todo"}));
    assert_eq!(first.usage.input, 50);
    let result = messages[2].as_tool_result().unwrap();
    assert_eq!(result.tool_call_id, "call_note|fc_note");
    assert_eq!(result.text(), "buy milk");
    let last = messages[3].as_assistant().unwrap();
    assert_eq!(last.text(), "The note says: buy milk.");
    assert_eq!(last.stop_reason, StopReason::Stop);
    assert_eq!(last.usage.cache_read, 40);
    assert_eq!(last.usage.input, 40);
    assert!(matches!(events.last(), Some(AgentEvent::AgentEnd { .. })));

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let body = requests[1].json();
    assert_eq!(body["input"][2]["call_id"], "call_note");
    assert_eq!(body["input"][3]["call_id"], "call_note");
    insta::assert_snapshot!("loop_second_request", pretty(&body));
}
