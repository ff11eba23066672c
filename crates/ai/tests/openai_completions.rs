//! The `openai-completions` wire API against a scripted server on 127.0.0.1: request bodies
//! (insta snapshots), streamed events, tool calls, thinking, usage, retries, errors, abort,
//! forced tool choice, and a two-turn tool conversation through `run_agent_loop`.
//!
//! Longer than 800 lines on purpose: one test per behaviour of the wire API, each a short script
//! for the mock server; the snapshot names (`openai_completions__*`) are tied to this file.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::client;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt;
use pi_agent_core::{
    AgentContext, AgentEvent, AgentLoopConfig, AgentMessage, AgentTool, AssistantMessageEvent, ContentBlock,
    LlmContext, Model, ModelCost, StopReason, StreamFn, StreamOptions, ThinkingContent, ThinkingLevel, ToolCall,
    ToolChoice, UserContent, UserMessage, run_agent_loop,
};
use pi_ai::{ModelRegistry, Providers};
use pi_test_support::messages::{self, user};
use pi_test_support::openai::{DONE, RESPONSE_ID, data, delta, finish, usage_cached};
use pi_test_support::stream::{API_KEY, error_message, final_message, kinds, options};
use pi_test_support::tools::{self, weather as weather_tool};
use pi_test_support::{MockServer, Reply, pretty};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn model(server: &MockServer) -> Model {
    Model {
        id: "gpt-test".into(),
        name: "GPT Test".into(),
        api: "openai-completions".into(),
        provider: "testai".into(),
        base_url: server.url("/v1"),
        reasoning: false,
        input: vec!["text".into(), "image".into()],
        cost: ModelCost {
            input: 2.0,
            output: 8.0,
            cache_read: 0.5,
            cache_write: 0.0,
        },
        context_window: 128_000,
        max_tokens: 16_384,
        headers: None,
        compat: None,
        thinking_level_map: None,
    }
}

async fn run(
    server: &MockServer,
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
    let _ = server;
    pi_ai::openai_completions::stream(&client(), model, &context, options)
        .collect()
        .await
}

#[tokio::test]
async fn plain_text_response() {
    let server = MockServer::start(vec![Reply::sse(
        200,
        &[
            &delta(json!({"role": "assistant", "content": ""})),
            &delta(json!({"content": "Hello"})),
            &delta(json!({"content": ", world"})),
            &finish("stop"),
            &usage_cached(12, 3, 0),
            DONE,
        ],
    )])
    .await;
    let events = run(&server, &model(&server), &[user("Say hello")], &[], &options()).await;
    assert_eq!(
        kinds(&events),
        ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    );
    let message = final_message(&events);
    assert_eq!(message.text(), "Hello, world");
    assert_eq!(message.stop_reason, StopReason::Stop);
    assert_eq!(message.response_id.as_deref(), Some(RESPONSE_ID));
    assert_eq!(message.api, "openai-completions");
    assert_eq!(message.provider, "testai");
    assert_eq!(message.model, "gpt-test");
    match &events[4] {
        AssistantMessageEvent::TextEnd { content, .. } => assert_eq!(content, "Hello, world"),
        other => panic!("unexpected {}", other.kind()),
    }

    let request = &server.requests()[0];
    assert_eq!(request.line, "POST /v1/chat/completions");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {API_KEY}").as_str())
    );
    assert_eq!(request.header("content-type"), Some("application/json"));
    insta::assert_snapshot!("plain_text_request", pretty(&request.json()));
}

/// pi 0.73.1 records the `model` the chunks name as `responseModel` when it is not the model
/// asked for (the first such chunk counts), and leaves it out otherwise.
#[tokio::test]
async fn the_chunks_model_is_recorded_when_it_differs() {
    let chunk = |model: &str, delta: Value, finish: Value| {
        data(
            &json!({"id": RESPONSE_ID, "object": "chat.completion.chunk", "model": model,
                     "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
        )
    };
    let script = |models: [&str; 3]| {
        Reply::sse(
            200,
            &[
                &chunk(models[0], json!({"role": "assistant", "content": "Hi"}), Value::Null),
                &chunk(models[1], json!({"content": "!"}), Value::Null),
                &chunk(models[2], json!({}), json!("stop")),
                DONE,
            ],
        )
    };
    let server = MockServer::start(vec![
        script(["gpt-test", "gpt-test-2025-01-01", "gpt-test-2"]),
        script(["gpt-test", "", "gpt-test"]),
    ])
    .await;
    let model = model(&server);
    let events = run(&server, &model, &[user("x")], &[], &options()).await;
    let first = final_message(&events);
    assert_eq!(first.response_model.as_deref(), Some("gpt-test-2025-01-01"));
    let json = serde_json::to_string(&first).unwrap();
    assert!(
        json.ends_with(&format!(
            r#""responseId":"{RESPONSE_ID}","responseModel":"gpt-test-2025-01-01"}}"#
        )),
        "{json}"
    );
    let events = run(&server, &model, &[user("x")], &[], &options()).await;
    let second = final_message(&events);
    assert_eq!(second.response_model, None);
    assert!(!serde_json::to_string(&second).unwrap().contains("responseModel"));
}

#[tokio::test]
async fn several_tool_calls_keep_order_and_ids() {
    let call = |index: u64, id: Option<&str>, name: Option<&str>, args: &str| {
        let mut function = serde_json::Map::new();
        if let Some(name) = name {
            function.insert("name".into(), json!(name));
        }
        function.insert("arguments".into(), json!(args));
        let mut fragment = json!({"index": index, "function": function});
        if let Some(id) = id {
            fragment["id"] = json!(id);
            fragment["type"] = json!("function");
        }
        delta(json!({"tool_calls": [fragment]}))
    };
    let server = MockServer::start(vec![Reply::sse(
        200,
        &[
            &delta(json!({"role": "assistant", "content": "Checking both."})),
            &call(0, Some("call_paris"), Some("get_weather"), ""),
            &call(0, None, None, "{\"ci"),
            &call(1, Some("call_rome"), Some("get_weather"), "{\"city\":"),
            &call(0, None, None, "ty\": \"Paris\"}"),
            &call(1, None, None, " \"Rome\"}"),
            &call(2, Some("call_oslo"), Some("get_weather"), "{\"city\": \"Oslo\"}"),
            &finish("tool_calls"),
            DONE,
        ],
    )])
    .await;
    let events = run(
        &server,
        &model(&server),
        &[user("Weather?")],
        &[weather_tool()],
        &options(),
    )
    .await;
    assert_eq!(
        kinds(&events),
        [
            "start",
            "text_start",
            "text_delta",
            // pi's order: every fragment is a delta (the first, without arguments, an empty one);
            // the blocks end together when the response does, in content order.
            "toolcall_start",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_start",
            "toolcall_delta",
            "text_end",
            "toolcall_end",
            "toolcall_end",
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
            ("call_paris", "get_weather", json!({"city": "Paris"})),
            ("call_rome", "get_weather", json!({"city": "Rome"})),
            ("call_oslo", "get_weather", json!({"city": "Oslo"})),
        ]
    );
    // The partial arguments are parsed while they stream.
    let partial = events
        .iter()
        .filter_map(|event| match event {
            AssistantMessageEvent::ToolCallDelta {
                content_index: 1,
                partial,
                ..
            } => Some(partial.clone()),
            _ => None,
        })
        .next()
        .unwrap();
    assert_eq!(partial.content[1].as_tool_call().unwrap().arguments, json!({}));
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
async fn calls_numbered_zero_with_new_ids_are_separate_calls() {
    let server = MockServer::start(vec![Reply::sse(
        200,
        &[
            &delta(
                json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "get_weather", "arguments": "{\"city\":\"A\"}"}}]}),
            ),
            &delta(
                json!({"tool_calls": [{"index": 0, "id": "b", "function": {"name": "get_weather", "arguments": "{\"city\":\"B\"}"}}]}),
            ),
            &finish("tool_calls"),
            DONE,
        ],
    )])
    .await;
    let events = run(&server, &model(&server), &[user("x")], &[weather_tool()], &options()).await;
    let message = final_message(&events);
    let ids: Vec<&str> = message.tool_calls().map(|call| call.id.as_str()).collect();
    assert_eq!(ids, ["a", "b"]);
    assert_eq!(message.tool_calls().nth(1).unwrap().arguments, json!({"city": "B"}));
}

#[tokio::test]
async fn malformed_tool_call_arguments_are_repaired_and_do_not_end_the_run() {
    // What models really send: not JSON, trailing text after the object, an object cut short.
    let calls = [
        ("a", "{not json"),
        ("b", "{\"city\":\"Paris\"} trailing"),
        ("c", "{\"city\":\"Ber"),
    ];
    let chunks: Vec<String> = calls
        .iter()
        .enumerate()
        .map(|(index, (id, arguments))| {
            delta(json!({"tool_calls": [{"index": index, "id": id, "function": {"name": "get_weather", "arguments": arguments}}]}))
        })
        .chain([finish("tool_calls"), DONE.to_owned()])
        .collect();
    let chunks: Vec<&str> = chunks.iter().map(String::as_str).collect();
    let server = MockServer::start(vec![Reply::sse(200, &chunks)]).await;
    let events = run(&server, &model(&server), &[user("x")], &[weather_tool()], &options()).await;
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse, "{:?}", message.error_message);
    let arguments: Vec<&Value> = message.tool_calls().map(|call| &call.arguments).collect();
    assert_eq!(
        arguments,
        [&json!({}), &json!({"city": "Paris"}), &json!({"city": "Ber"})]
    );
}

#[tokio::test]
async fn thinking_then_text_with_developer_role_and_effort() {
    let server = MockServer::start(vec![Reply::sse(
        200,
        &[
            &delta(json!({"role": "assistant", "content": null, "reasoning_content": "Let me"})),
            &delta(json!({"reasoning_content": " think."})),
            &delta(json!({"content": "Answer."})),
            &finish("stop"),
            DONE,
        ],
    )])
    .await;
    let mut model = model(&server);
    model.reasoning = true;
    let options = StreamOptions {
        reasoning: Some(ThinkingLevel::High),
        max_tokens: Some(4096),
        ..options()
    };
    let events = run(&server, &model, &[user("Think")], &[], &options).await;
    assert_eq!(
        kinds(&events),
        [
            "start",
            "thinking_start",
            "thinking_delta",
            "thinking_delta",
            "text_start",
            "text_delta",
            "thinking_end",
            "text_end",
            "done"
        ]
    );
    let message = final_message(&events);
    match &message.content[0] {
        ContentBlock::Thinking(thinking) => {
            assert_eq!(thinking.thinking, "Let me think.");
            assert_eq!(thinking.thinking_signature.as_deref(), Some("reasoning_content"));
        }
        other => panic!("expected thinking, got {other:?}"),
    }
    assert_eq!(message.content[1].as_text(), Some("Answer."));
    let body = server.requests()[0].json();
    assert_eq!(body["messages"][0]["role"], "developer");
    insta::assert_snapshot!("reasoning_request", pretty(&body));
}

#[tokio::test]
async fn reasoning_field_and_compat_switches() {
    let server = MockServer::start(vec![Reply::sse(
        200,
        &[
            &delta(json!({"reasoning": "hmm"})),
            &delta(json!({"content": "ok"})),
            &finish("stop"),
            DONE,
        ],
    )])
    .await;
    let mut model = model(&server);
    model.reasoning = true;
    model.compat = Some(json!({
        "supportsDeveloperRole": false,
        "supportsReasoningEffort": false,
        "supportsUsageInStreaming": false,
        "maxTokensField": "max_tokens"
    }));
    let options = StreamOptions {
        reasoning: Some(ThinkingLevel::Low),
        max_tokens: Some(100),
        ..options()
    };
    let events = run(&server, &model, &[user("x")], &[], &options).await;
    assert_eq!(
        final_message(&events).content[0],
        ContentBlock::Thinking(ThinkingContent {
            thinking: "hmm".into(),
            thinking_signature: Some("reasoning".into()),
            redacted: None,
        })
    );
    let body = server.requests()[0].json();
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(body["max_tokens"], 100);
    assert!(body.get("max_completion_tokens").is_none());
    assert!(body.get("reasoning_effort").is_none());
    assert!(body.get("stream_options").is_none());
}

#[tokio::test]
async fn usage_and_cost() {
    let server = MockServer::start(vec![Reply::sse(
        200,
        &[
            &delta(json!({"content": "hi"})),
            &finish("stop"),
            &usage_cached(1_000_000, 500_000, 400_000),
            DONE,
        ],
    )])
    .await;
    let events = run(&server, &model(&server), &[user("x")], &[], &options()).await;
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
            r#"{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}"#,
        )
        .header("retry-after", "0"),
        Reply::sse(200, &[&delta(json!({"content": "after retry"})), &finish("stop"), DONE]),
    ])
    .await;
    let events = run(&server, &model(&server), &[user("x")], &[], &options()).await;
    assert_eq!(final_message(&events).text(), "after retry");
    assert_eq!(final_message(&events).stop_reason, StopReason::Stop);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].body, requests[1].body);
}

#[tokio::test]
async fn server_errors_exhaust_retries() {
    let server = MockServer::start(vec![
        Reply::json(500, r#"{"error":{"message":"upstream exploded"}}"#),
        Reply::json(502, r#"{"error":{"message":"upstream exploded"}}"#),
        Reply::json(503, r#"{"error":{"message":"upstream still exploded"}}"#),
    ])
    .await;
    let events = run(&server, &model(&server), &[user("x")], &[], &options()).await;
    assert_eq!(kinds(&events), ["start", "error"]);
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Error);
    let error = error_message(&events);
    assert!(error.contains("503"), "{error}");
    assert!(error.contains("upstream still exploded"), "{error}");
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let server = MockServer::start(vec![Reply::json(
        400,
        r#"{"error":{"message":"Invalid 'messages[1].content'","type":"invalid_request_error"}}"#,
    )])
    .await;
    let events = run(&server, &model(&server), &[user("x")], &[], &options()).await;
    let error = error_message(&events);
    assert!(error.starts_with("400 status code"), "{error}");
    assert!(error.contains("Invalid 'messages[1].content'"), "{error}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn malformed_sse_data_is_a_clear_error() {
    let server = MockServer::start(vec![Reply::sse(
        200,
        &[
            &delta(json!({"content": "partial"})),
            "data: {\"choices\": [oops\n\n",
            DONE,
        ],
    )])
    .await;
    let events = run(&server, &model(&server), &[user("x")], &[], &options()).await;
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Error);
    let error = error_message(&events);
    assert!(error.starts_with("Malformed SSE data from testai: "), "{error}");
    assert!(error.contains("line 1 column"), "{error}");
    // What streamed before the bad line is kept.
    assert_eq!(message.text(), "partial");
}

#[tokio::test]
async fn error_object_in_stream() {
    let server = MockServer::start(vec![Reply::sse(
        200,
        &[
            &delta(json!({"content": "Hel"})),
            &data(&json!({"error": {"message": "Provider returned error", "code": 502}})),
        ],
    )])
    .await;
    let events = run(&server, &model(&server), &[user("x")], &[], &options()).await;
    assert_eq!(final_message(&events).stop_reason, StopReason::Error);
    assert_eq!(error_message(&events), "Provider returned error (502)");
}

#[tokio::test]
async fn finish_reasons() {
    let server = MockServer::start(vec![
        Reply::sse(200, &[&delta(json!({"content": "cut"})), &finish("length"), DONE]),
        Reply::sse(200, &[&delta(json!({"content": "bad"})), &finish("content_filter"), DONE]),
        Reply::sse(
            200,
            &[
                &delta(json!({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "get_weather", "arguments": "{\"city\": \"Par"}}]})),
                &finish("length"),
                DONE,
            ],
        ),
    ])
    .await;
    let model = model(&server);
    let events = run(&server, &model, &[user("x")], &[], &options()).await;
    assert_eq!(final_message(&events).stop_reason, StopReason::Length);

    let events = run(&server, &model, &[user("x")], &[], &options()).await;
    assert_eq!(final_message(&events).stop_reason, StopReason::Error);
    assert_eq!(
        error_message(&events),
        "testai stopped the response (finish_reason: content_filter)"
    );

    // Truncated tool-call arguments: the response still ends with `length`, arguments best-effort.
    let events = run(&server, &model, &[user("x")], &[weather_tool()], &options()).await;
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Length);
    assert_eq!(message.tool_calls().next().unwrap().arguments, json!({"city": "Par"}));
}

#[tokio::test]
async fn stream_end_without_done() {
    let server = MockServer::start(vec![
        // A finish_reason but no [DONE]: complete.
        Reply::sse(200, &[&delta(json!({"content": "fine"})), &finish("stop")]),
        // Neither: cut off.
        Reply::sse(200, &[&delta(json!({"content": "cut"}))]),
    ])
    .await;
    let model = model(&server);
    let events = run(&server, &model, &[user("x")], &[], &options()).await;
    assert_eq!(final_message(&events).stop_reason, StopReason::Stop);
    assert_eq!(final_message(&events).text(), "fine");

    let events = run(&server, &model, &[user("x")], &[], &options()).await;
    assert_eq!(final_message(&events).stop_reason, StopReason::Error);
    assert!(error_message(&events).contains("ended before it was complete"));
    assert_eq!(final_message(&events).text(), "cut");
}

#[tokio::test]
async fn abort_mid_stream() {
    let mut chunks: Vec<String> = (0..50)
        .map(|i| delta(json!({"content": format!("word{i} ")})))
        .collect();
    chunks.push(finish("stop"));
    chunks.push(DONE.to_owned());
    let chunk_refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
    let server = MockServer::start(vec![Reply::sse(200, &chunk_refs).paced(Duration::from_millis(20))]).await;
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
    let mut stream = pi_ai::openai_completions::stream(&client(), &model, &context, &options);
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        if matches!(event, AssistantMessageEvent::TextDelta { .. }) && events.len() == 3 {
            cancel.cancel();
        }
        events.push(event);
    }
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
    let reply = || Reply::sse(200, &[&delta(json!({"content": "ok"})), &finish("stop"), DONE]);
    let server = MockServer::start(vec![reply(), reply(), reply()]).await;
    let model = model(&server);
    let tools = [weather_tool()];
    for choice in [
        ToolChoice::Tool("get_weather".into()),
        ToolChoice::Required,
        ToolChoice::None,
    ] {
        let options = StreamOptions {
            tool_choice: Some(choice),
            ..options()
        };
        run(&server, &model, &[user("x")], &tools, &options).await;
    }
    let requests = server.requests();
    insta::assert_snapshot!("forced_tool_choice_request", pretty(&requests[0].json()));
    assert_eq!(requests[1].json()["tool_choice"], "required");
    assert_eq!(requests[2].json()["tool_choice"], "none");
}

#[tokio::test]
async fn history_conversion() {
    let server = MockServer::start(vec![Reply::sse(
        200,
        &[&delta(json!({"content": "ok"})), &finish("stop"), DONE],
    )])
    .await;
    let model = model(&server);
    let assistant = |content, stop_reason| messages::assistant(&model, content, stop_reason);
    let result = |id: &str, content, is_error| messages::tool_result(id, "get_weather", content, is_error);
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
                ContentBlock::Thinking(ThinkingContent {
                    thinking: "private reasoning".into(),
                    thinking_signature: Some("reasoning_content".into()),
                    redacted: None,
                }),
                ContentBlock::text("Let me check two cities."),
                ContentBlock::ToolCall(ToolCall::new("call_1", "get_weather", json!({"city": "Paris"}))),
                ContentBlock::ToolCall(ToolCall::new("call_2", "get_weather", json!({"city": "Rome"}))),
            ],
            StopReason::ToolUse,
        ),
        result(
            "call_1",
            vec![ContentBlock::text("sunny"), ContentBlock::image("cGlj", "image/jpeg")],
            false,
        ),
        result("call_2", vec![ContentBlock::text("city not found")], true),
        user("And Oslo?"),
        // A failed response and an aborted one are left out.
        assistant(vec![ContentBlock::text("half an ans")], StopReason::Error),
        assistant(
            vec![ContentBlock::ToolCall(ToolCall::new(
                "call_x",
                "get_weather",
                json!({}),
            ))],
            StopReason::Aborted,
        ),
        user("Please retry."),
        // An orphaned call gets a synthetic result.
        assistant(
            vec![ContentBlock::ToolCall(ToolCall::new(
                "call_3",
                "get_weather",
                json!({"city": "Oslo"}),
            ))],
            StopReason::ToolUse,
        ),
        user("Never mind."),
    ];
    run(&server, &model, &messages, &[weather_tool()], &options()).await;
    let body = server.requests()[0].json();
    insta::assert_snapshot!("history_request", pretty(&body));
    let text = body.to_string();
    assert!(!text.contains("private reasoning"));
    assert!(!text.contains("half an ans"));
    assert!(!text.contains("never"));
    assert!(text.contains("No result provided"));
}

#[tokio::test]
async fn text_only_models_get_no_images_and_headers_merge() {
    let server = MockServer::start(vec![Reply::sse(
        200,
        &[&delta(json!({"content": "ok"})), &finish("stop"), DONE],
    )])
    .await;
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
    let messages = [AgentMessage::User(UserMessage {
        content: UserContent::Blocks(vec![
            ContentBlock::text("look"),
            ContentBlock::image("aGk=", "image/png"),
        ]),
        timestamp: 1,
    })];
    run(&server, &model, &messages, &[], &options).await;
    let request = &server.requests()[0];
    assert_eq!(
        request.json()["messages"][1]["content"],
        json!([{"type": "text", "text": "look"}])
    );
    assert_eq!(request.header("x-model"), Some("m"));
    assert_eq!(request.header("x-both"), Some("call"));
    assert_eq!(request.headers.iter().filter(|(name, _)| name == "x-both").count(), 1);
}

#[tokio::test]
async fn dispatcher_errors_and_local_servers() {
    let server = MockServer::start(vec![Reply::sse(
        200,
        &[&delta(json!({"content": "local"})), &finish("stop"), DONE],
    )])
    .await;
    let providers = Providers::new(client()).with_registry(Arc::new(ModelRegistry::builtin().with_env(|_| None)));
    let messages = [user("x")];
    let context = LlmContext {
        system_prompt: "",
        messages: &messages,
        tools: &[],
    };

    let mut unknown = model(&server);
    unknown.api = "not-an-api".into();
    let events: Vec<_> = providers
        .stream(&unknown, &context, &StreamOptions::default())
        .collect()
        .await;
    assert_eq!(kinds(&events), ["start", "error"]);
    assert_eq!(error_message(&events), "No API provider registered for api: not-an-api");

    let mut remote = model(&server);
    remote.provider = "openai".into();
    remote.base_url = "https://api.openai.invalid/v1".into();
    let events: Vec<_> = providers
        .stream(&remote, &context, &StreamOptions::default())
        .collect()
        .await;
    assert_eq!(
        error_message(&events),
        "No API key for provider: openai (set OPENAI_API_KEY or \"apiKey\" for the provider in models.json)"
    );

    // 127.0.0.1 needs no key, and none is sent.
    let local = model(&server);
    let events: Vec<_> = providers
        .stream(&local, &context, &StreamOptions::default())
        .collect()
        .await;
    assert_eq!(final_message(&events).text(), "local");
    assert_eq!(server.requests()[0].header("authorization"), None);
}

#[tokio::test]
async fn registry_keys_and_headers_reach_the_request() {
    let server = MockServer::start(vec![Reply::sse(
        200,
        &[&delta(json!({"content": "ok"})), &finish("stop"), DONE],
    )])
    .await;
    let json = format!(
        r#"{{"providers": {{"local": {{"baseUrl": "{}", "api": "openai-completions", "apiKey": "$LOCAL_API_KEY",
            "headers": {{"x-team": "${{TEAM}}"}}, "models": [{{"id": "m1"}}]}}}}}}"#,
        server.url("/v1")
    );
    let registry = ModelRegistry::from_json(&json, "models.json")
        .unwrap()
        .with_env(|name| match name {
            "LOCAL_API_KEY" => Some(API_KEY.to_owned()),
            "TEAM" => Some("blue".to_owned()),
            _ => None,
        });
    let model = registry.find("local", "m1").unwrap().clone();
    let providers = Providers::new(client()).with_registry(Arc::new(registry));
    let messages = [user("x")];
    let context = LlmContext {
        system_prompt: "",
        messages: &messages,
        tools: &[],
    };
    let events: Vec<_> = providers
        .stream(&model, &context, &StreamOptions::default())
        .collect()
        .await;
    assert_eq!(final_message(&events).text(), "ok");
    let request = &server.requests()[0];
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {API_KEY}").as_str())
    );
    assert_eq!(request.header("x-team"), Some("blue"));
}

/// The agent loop runs unchanged over this API: a tool call, the tool runs, the result goes back,
/// the model answers.
#[tokio::test]
async fn two_turn_tool_conversation_through_the_agent_loop() {
    let server = MockServer::start(vec![
        Reply::sse(
            200,
            &[
                &delta(json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": "call_note", "type": "function", "function": {"name": "read_note", "arguments": ""}}]})),
                &delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"name\": "}}]})),
                &delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"todo\"}"}}]})),
                &finish("tool_calls"),
                &usage_cached(50, 10, 0),
                DONE,
            ],
        ),
        Reply::sse(
            200,
            &[
                &delta(json!({"role": "assistant", "content": "The note says: "})),
                &delta(json!({"content": "buy milk."})),
                &finish("stop"),
                &usage_cached(80, 6, 40),
                DONE,
            ],
        ),
    ])
    .await;
    let calls = Arc::new(AtomicUsize::new(0));
    let read_note = tools::read_note(calls.clone());
    let providers: Arc<dyn StreamFn> = Arc::new(Providers::new(client()));
    let mut config = AgentLoopConfig::new(model(&server)).with_stream_fn(providers);
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
    assert_eq!(first.tool_calls().next().unwrap().arguments, json!({"name": "todo"}));
    assert_eq!(first.usage.input, 50);
    let result = messages[2].as_tool_result().unwrap();
    assert_eq!(result.tool_call_id, "call_note");
    assert_eq!(result.text(), "buy milk");
    let last = messages[3].as_assistant().unwrap();
    assert_eq!(last.text(), "The note says: buy milk.");
    assert_eq!(last.stop_reason, StopReason::Stop);
    assert_eq!(last.usage.cache_read, 40);
    assert!(matches!(events.last(), Some(AgentEvent::AgentEnd { .. })));

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    insta::assert_snapshot!("loop_second_request", pretty(&requests[1].json()));
}

/// Aborted before the server answered: pi's SDK text, with its period (mid-stream it has none).
#[tokio::test]
async fn abort_before_the_response_has_the_sdk_text() {
    // A server that reads the request and never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let silent = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let server = MockServer::start(Vec::new()).await;
    let mut model = model(&server);
    model.base_url = format!("http://{address}/v1");
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
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        canceller.cancel();
    });
    let stream = pi_ai::openai_completions::stream(&client(), &model, &context, &options);
    let events: Vec<AssistantMessageEvent> = stream.collect().await;
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Aborted);
    assert_eq!(message.error_message.as_deref(), Some("Request was aborted."));
    silent.abort();
}
