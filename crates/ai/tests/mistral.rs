//! The `mistral-conversations` wire API (Mistral) against a scripted server on 127.0.0.1 replaying
//! SSE transcripts in Mistral's documented format: request bodies (insta snapshots, and equal to
//! the ones pi-ai 0.73.1 sends through Mistral's SDK, recorded in `data/`), text, thinking, tool
//! calls with streamed arguments and Mistral's nine-character ids, usage and cost, stop reasons,
//! forced tool choice, errors (429 / 503 retried, overflow recognised), abort, the key kept out of
//! errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::client;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use pi_agent_core::{
    AgentMessage, AgentTool, AssistantMessageEvent, ContentBlock, LlmContext, Model, StopReason, StreamOptions,
    ThinkingContent, ThinkingLevel, ToolCall, ToolChoice, UserContent, UserMessage,
};
use pi_ai::ModelRegistry;
use pi_test_support::messages::{self, user};
use pi_test_support::mistral::{self, DONE, chunk, finish};
use pi_test_support::stream::{API_KEY, assert_no_key, error_message, final_message, kinds, options};
use pi_test_support::tools::{self, weather};
use pi_test_support::{MockServer, Reply, pretty};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

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
    pi_ai::mistral::stream(&client(), model, &context, options)
        .collect()
        .await
}

#[tokio::test]
async fn plain_text_response() {
    let server = MockServer::start(vec![Reply::events(&[
        chunk(json!({"role": "assistant", "content": "Hello"})),
        chunk(json!({"content": ", world"})),
        finish("stop", 12, 3),
        DONE.to_owned(),
    ])])
    .await;
    let model = mistral::model(server.url(""));
    let options = StreamOptions {
        session_id: Some("session-1".into()),
        ..options()
    };
    let events = run(&model, &[user("Say hello")], &[], &options).await;
    assert_eq!(
        kinds(&events),
        [
            "start",
            "text_start",
            "text_delta",
            "text_delta",
            "text_delta",
            "text_end",
            "done"
        ]
    );
    let message = final_message(&events);
    assert_eq!(message.text(), "Hello, world");
    assert_eq!(message.stop_reason, StopReason::Stop);
    assert_eq!(message.response_id.as_deref(), Some("cmpl-mistral-1"));
    assert_eq!(message.api, "mistral-conversations");
    assert_eq!(message.usage.input, 12);
    assert_eq!(message.usage.output, 3);
    assert_eq!(message.usage.total_tokens, 15);
    let expected = 12.0 * 0.4 / 1e6 + 3.0 * 2.0 / 1e6;
    assert!(
        (message.usage.cost.total - expected).abs() < 1e-12,
        "{:?}",
        message.usage.cost
    );

    let request = &server.requests()[0];
    assert_eq!(request.line, "POST /v1/chat/completions");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {API_KEY}").as_str())
    );
    assert_eq!(request.header("accept"), Some("text/event-stream"));
    assert_eq!(request.header("x-affinity"), Some("session-1"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    insta::assert_snapshot!("plain_text_request", pretty(&request.json()));
}

#[tokio::test]
async fn thinking_text_and_streamed_tool_calls_then_their_replay() {
    let server = MockServer::start(vec![Reply::events(&[
        chunk(json!({"role": "assistant", "content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Two cities."}]}]})),
        chunk(json!({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": " Both."}]}]})),
        chunk(json!({"content": "Checking both."})),
        chunk(json!({"tool_calls": [{"id": "Wx1abcdEf", "index": 0, "function": {"name": "get_weather", "arguments": "{\"city\": \"Pa"}}]})),
        chunk(json!({"tool_calls": [{"id": "Wx1abcdEf", "index": 0, "function": {"name": "get_weather", "arguments": "ris\"}"}}]})),
        chunk(json!({"tool_calls": [{"id": "Wx2abcdEf", "index": 1, "function": {"name": "get_weather", "arguments": {"city": "Rome"}}}]})),
        finish("tool_calls", 1000, 40),
        DONE.to_owned(),
    ])])
    .await;
    let model = Model {
        id: "magistral-medium-latest".into(),
        reasoning: true,
        max_tokens: 16_384,
        ..mistral::model(server.url(""))
    };
    let options = StreamOptions {
        reasoning: Some(ThinkingLevel::Medium),
        ..options()
    };
    let events = run(&model, &[user("Weather in Paris and Rome?")], &[weather()], &options).await;
    assert_eq!(
        kinds(&events),
        [
            "start",
            "thinking_start",
            "thinking_delta",
            "thinking_delta",
            "thinking_end",
            "text_start",
            "text_delta",
            "text_end",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_start",
            "toolcall_delta",
            // The last chunk's empty `content` opens a text block, as with pi-ai; the calls end last.
            "text_start",
            "text_delta",
            "text_end",
            "toolcall_end",
            "toolcall_end",
            "done",
        ]
    );
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    assert!(matches!(&message.content[0], ContentBlock::Thinking(t) if t.thinking == "Two cities. Both."));
    let calls: Vec<&ToolCall> = message.tool_calls().collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        (calls[0].id.as_str(), &calls[0].arguments),
        ("Wx1abcdEf", &json!({"city": "Paris"}))
    );
    assert_eq!(
        (calls[1].id.as_str(), &calls[1].arguments),
        ("Wx2abcdEf", &json!({"city": "Rome"}))
    );
    let body = server.requests()[0].json();
    assert_eq!(body["prompt_mode"], json!("reasoning"));
    assert_eq!(body["max_tokens"], json!(16_384));

    // The second turn sends the thinking, text and calls back, and each result as a tool message.
    let server = MockServer::start(vec![mistral::text("Sunny in both.")]).await;
    let model = Model {
        base_url: server.url(""),
        ..model
    };
    let history = vec![
        user("Weather in Paris and Rome?"),
        AgentMessage::Assistant(message.clone()),
        messages::tool_result(
            &calls[0].id,
            "get_weather",
            vec![ContentBlock::text("sunny in Paris")],
            false,
        ),
        messages::tool_result(&calls[1].id, "get_weather", vec![], true),
    ];
    let events = run(&model, &history, &[weather()], &options).await;
    assert_eq!(final_message(&events).text(), "Sunny in both.");
    insta::assert_snapshot!("replay_request", pretty(&server.requests()[0].json()));
}

#[tokio::test]
async fn another_models_calls_get_mistral_ids() {
    let server = MockServer::start(vec![mistral::text("ok")]).await;
    let model = mistral::model(server.url(""));
    let other = Model {
        id: "gpt-5".into(),
        api: "openai-responses".into(),
        provider: "openai".into(),
        ..model.clone()
    };
    let history = vec![
        user("x"),
        messages::assistant(
            &other,
            vec![
                ContentBlock::Thinking(ThinkingContent {
                    thinking: "Theirs.".into(),
                    thinking_signature: Some("{}".into()),
                    redacted: None,
                }),
                ContentBlock::ToolCall(ToolCall::new(
                    "call_abc|fc_123456789",
                    "get_weather",
                    json!({"city": "Oslo"}),
                )),
            ],
            StopReason::ToolUse,
        ),
        messages::tool_result(
            "call_abc|fc_123456789",
            "get_weather",
            vec![ContentBlock::text("cold")],
            false,
        ),
    ];
    run(&model, &history, &[weather()], &options()).await;
    let body = server.requests()[0].json();
    // pi's id for this one (pi-ai 0.73.1's shortHash of "callabcfc123456789", nine characters).
    assert_eq!(
        body["messages"][2],
        json!({"role": "assistant", "content": [{"type": "text", "text": "Theirs."}], "tool_calls": [
            {"id": "qyf2yq1lq", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}, "index": 0}
        ], "prefix": false})
    );
    assert_eq!(body["messages"][3]["tool_call_id"], json!("qyf2yq1lq"));
}

#[tokio::test]
async fn forced_tool_choice_and_reasoning_effort() {
    let server = MockServer::start(vec![mistral::text("ok"), mistral::text("ok"), mistral::text("ok")]).await;
    let model = Model {
        id: "mistral-small-latest".into(),
        reasoning: true,
        ..mistral::model(server.url(""))
    };
    for choice in [
        ToolChoice::Tool("get_weather".into()),
        ToolChoice::Required,
        ToolChoice::None,
    ] {
        let options = StreamOptions {
            tool_choice: Some(choice),
            reasoning: Some(ThinkingLevel::Low),
            ..options()
        };
        run(&model, &[user("x")], &[weather()], &options).await;
    }
    let choices: Vec<Value> = server
        .requests()
        .iter()
        .map(|request| request.json()["tool_choice"].clone())
        .collect();
    assert_eq!(
        choices,
        [
            json!({"type": "function", "function": {"name": "get_weather"}}),
            json!("required"),
            json!("none"),
        ]
    );
    let body = server.requests()[0].json();
    assert_eq!(body["reasoning_effort"], json!("high"));
    assert_eq!(body.get("prompt_mode"), None);
    insta::assert_snapshot!("forced_tool_choice_request", pretty(&body));
}

#[tokio::test]
async fn stop_reasons() {
    let server = MockServer::start(vec![
        Reply::events(&[
            chunk(json!({"content": "cut"})),
            finish("length", 5, 5),
            DONE.to_owned(),
        ]),
        Reply::events(&[
            chunk(json!({"content": "cut"})),
            finish("model_length", 5, 5),
            DONE.to_owned(),
        ]),
        Reply::events(&[chunk(json!({"content": "bad"})), finish("error", 5, 5), DONE.to_owned()]),
        // No [DONE]: the body's end ends the response.
        Reply::events(&[chunk(json!({"content": "fine"})), finish("stop", 5, 5)]),
    ])
    .await;
    let model = mistral::model(server.url(""));
    let events = run(&model, &[user("x")], &[], &options()).await;
    assert_eq!(final_message(&events).stop_reason, StopReason::Length);
    let events = run(&model, &[user("x")], &[], &options()).await;
    assert_eq!(final_message(&events).stop_reason, StopReason::Length);
    let events = run(&model, &[user("x")], &[], &options()).await;
    assert_eq!(final_message(&events).stop_reason, StopReason::Error);
    assert_eq!(error_message(&events), "An unknown error occurred");
    assert_eq!(final_message(&events).text(), "bad");
    let events = run(&model, &[user("x")], &[], &options()).await;
    assert_eq!(final_message(&events).stop_reason, StopReason::Stop);
    assert_eq!(final_message(&events).text(), "fine");
}

#[tokio::test]
async fn rate_limits_and_unavailable_are_retried() {
    let server = MockServer::start(vec![
        mistral::error(429, "rate_limited", "Requests rate limit exceeded").header("retry-after", "0"),
        mistral::error(503, "internal_server_error", "Service unavailable"),
        mistral::text("Finally."),
    ])
    .await;
    let model = mistral::model(server.url(""));
    let events = run(&model, &[user("x")], &[], &options()).await;
    assert_eq!(final_message(&events).text(), "Finally.");
    assert_eq!(server.requests().len(), 3);

    let server = MockServer::start(vec![
        mistral::error(503, "internal_server_error", "Service unavailable"),
        mistral::error(503, "internal_server_error", "Service unavailable"),
        mistral::error(503, "internal_server_error", "Service unavailable"),
    ])
    .await;
    let model = mistral::model(server.url(""));
    let events = run(&model, &[user("x")], &[], &options()).await;
    assert_eq!(final_message(&events).stop_reason, StopReason::Error);
    assert_eq!(
        error_message(&events),
        r#"503 status code: {"object":"error","message":"Service unavailable","type":"internal_server_error","param":null,"code":"503"}"#
    );
    assert_no_key(&events);
}

#[tokio::test]
async fn context_overflow_is_recognised() {
    let server = MockServer::start(vec![mistral::error(
        400,
        "invalid_request_prompt",
        "Prompt contains 300000 tokens and 0 draft tokens, too large for model with 262144 maximum context length",
    )])
    .await;
    let model = mistral::model(server.url(""));
    let events = run(&model, &[user("x")], &[], &options()).await;
    let message = final_message(&events);
    assert_eq!(server.requests().len(), 1, "a 400 is not retried");
    assert!(
        pi_ai::is_context_overflow(message, model.context_window),
        "{:?}",
        message.error_message
    );
}

#[tokio::test]
async fn abort_mid_stream() {
    let mut events: Vec<String> = (0..50)
        .map(|i| chunk(json!({"content": format!("word{i} ")})))
        .collect();
    events.push(finish("stop", 1, 50));
    events.push(DONE.to_owned());
    let chunks: Vec<&str> = events.iter().map(String::as_str).collect();
    let server = MockServer::start(vec![Reply::sse(200, &chunks).paced(Duration::from_millis(20))]).await;
    let model = mistral::model(server.url(""));
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
    let mut stream = pi_ai::mistral::stream(&client(), &model, &context, &options);
    let mut events = Vec::new();
    let mut cancelled_at = None;
    while let Some(event) = stream.next().await {
        if matches!(event, AssistantMessageEvent::TextDelta { .. }) && cancelled_at.is_none() {
            cancel.cancel();
            cancelled_at = Some(Instant::now());
        }
        events.push(event);
    }
    assert!(cancelled_at.unwrap().elapsed() < Duration::from_millis(500));
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Aborted);
    assert_eq!(message.error_message.as_deref(), Some("Request was aborted"));
    assert!(message.text().starts_with("word0 "));
    assert!(!message.text().contains("word49"));
}

#[tokio::test]
async fn through_providers_with_the_key_from_the_environment() {
    let server = MockServer::start(vec![mistral::text("Hi.")]).await;
    let json = json!({"providers": {"mistral": {"baseUrl": server.url("")}}}).to_string();
    let registry = ModelRegistry::from_json(&json, "models.json")
        .unwrap()
        .with_env(|name| (name == "MISTRAL_API_KEY").then(|| "mistral-env-key-0123".to_owned()));
    let model = registry.find("mistral", "devstral-medium-latest").unwrap().clone();
    let providers = pi_ai::Providers::new(client()).with_registry(Arc::new(registry));
    let messages = [user("x")];
    let context = LlmContext {
        system_prompt: "",
        messages: &messages,
        tools: &[],
    };
    let events: Vec<_> = pi_agent_core::StreamFn::stream(&providers, &model, &context, &StreamOptions::default())
        .collect()
        .await;
    assert_eq!(final_message(&events).text(), "Hi.", "{}", error_message(&events));
    let request = &server.requests()[0];
    assert_eq!(request.header("authorization"), Some("Bearer mistral-env-key-0123"));
    assert_eq!(request.line, "POST /v1/chat/completions");
}

/// The conversation `data/record-mistral-bodies.mjs` sends through pi-ai 0.73.1.
fn recorded_conversation(model: &Model) -> Vec<AgentMessage> {
    let other = Model {
        id: "gpt-5".into(),
        api: "openai-responses".into(),
        provider: "openai".into(),
        ..model.clone()
    };
    let thinking = |text: &str| {
        ContentBlock::Thinking(ThinkingContent {
            thinking: text.into(),
            thinking_signature: None,
            redacted: None,
        })
    };
    vec![
        user("hi"),
        messages::assistant(
            model,
            vec![
                thinking("prior"),
                ContentBlock::text("ok"),
                ContentBlock::ToolCall(ToolCall::new("AbC123xyz", "read", json!({"path": "x"}))),
            ],
            StopReason::ToolUse,
        ),
        messages::tool_result(
            "AbC123xyz",
            "read",
            vec![ContentBlock::text("file"), ContentBlock::image("aGk=", "image/png")],
            false,
        ),
        messages::assistant(
            &other,
            vec![
                thinking("other"),
                ContentBlock::ToolCall(ToolCall::new("call_abc|fc_123456789", "read", json!({"path": "y"}))),
            ],
            StopReason::ToolUse,
        ),
        messages::tool_result(
            "call_abc|fc_123456789",
            "read",
            vec![ContentBlock::text("missing")],
            true,
        ),
        AgentMessage::User(UserMessage {
            content: UserContent::Blocks(vec![
                ContentBlock::text("look"),
                ContentBlock::image("aGk=", "image/png"),
            ]),
            timestamp: 6,
        }),
    ]
}

#[tokio::test]
async fn bodies_equal_the_ones_pi_0_73_1_sends() {
    let recorded: Value =
        serde_json::from_str(include_str!("data/mistral-bodies-pi-0.73.1.json")).expect("recorded bodies");
    let registry = ModelRegistry::builtin().with_env(|_| None);
    let read = tools::unused(
        "read",
        "Read a file",
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    );
    let cases = recorded.as_object().unwrap();
    assert_eq!(cases.len(), 5);
    for (name, pi_body) in cases {
        let parts: Vec<&str> = name.split('/').collect();
        let (provider, id, level, choice) = (parts[0], parts[1], parts[2], parts[3]);
        let server = MockServer::start(vec![mistral::text("ok")]).await;
        let mut model = registry.find(provider, id).unwrap().clone();
        model.base_url = server.url("");
        let level = match level {
            "low" => Some(ThinkingLevel::Low),
            "medium" => Some(ThinkingLevel::Medium),
            "high" => Some(ThinkingLevel::High),
            _ => None,
        };
        let tool_choice = match choice {
            "-" => None,
            "required" => Some(ToolChoice::Required),
            "none" => Some(ToolChoice::None),
            tool => Some(ToolChoice::Tool(tool.into())),
        };
        let options = StreamOptions {
            api_key: Some("k-123456789".into()),
            reasoning: level,
            tool_choice,
            session_id: Some("session-1".into()),
            ..StreamOptions::default()
        };
        let messages = recorded_conversation(&model);
        let context = LlmContext {
            system_prompt: "You are a test.",
            messages: &messages,
            tools: std::slice::from_ref(&read),
        };
        let events: Vec<_> = pi_ai::mistral::stream(&client(), &model, &context, &options)
            .collect()
            .await;
        assert_eq!(
            final_message(&events).text(),
            "ok",
            "{name}: {}",
            error_message(&events)
        );
        let request = &server.requests()[0];
        assert_eq!(request.header("x-affinity"), Some("session-1"));
        // Byte for byte, key order included.
        assert_eq!(
            serde_json::to_string(&request.json()).unwrap(),
            serde_json::to_string(pi_body).unwrap(),
            "{name}:\nours {}\npi   {}",
            pretty(&request.json()),
            pretty(pi_body)
        );
    }
}

#[tokio::test]
async fn a_key_echoed_by_the_server_is_redacted() {
    let server = MockServer::start(vec![mistral::error(
        401,
        "invalid_api_key",
        &format!("Unauthorized: key {API_KEY}"),
    )])
    .await;
    let model = mistral::model(server.url(""));
    let events = run(&model, &[user("x")], &[], &options()).await;
    assert!(
        error_message(&events).contains("Unauthorized: key [redacted]"),
        "{}",
        error_message(&events)
    );
    assert_no_key(&events);
}
