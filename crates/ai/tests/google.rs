//! The `google-generative-ai` wire API (Gemini) against a scripted server on 127.0.0.1 replaying
//! SSE transcripts in Google's documented format: request bodies (insta snapshots, and equal to
//! the ones pi-ai 0.73.1 sends, recorded in `data/`), text, thinking with thought signatures and
//! their replay, parallel function calls, usage and cost, stop reasons, forced tool choice,
//! errors (429 / 503 retried, overflow recognised), abort, the key kept out of errors.

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
use pi_test_support::google::{self, chunk, finish};
use pi_test_support::messages::{self, user};
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
    pi_ai::google::stream(&client(), model, &context, options)
        .collect()
        .await
}

#[tokio::test]
async fn plain_text_response() {
    let server = MockServer::start(vec![Reply::events(&[
        chunk(json!([{"text": "Hello"}])),
        chunk(json!([{"text": ", world"}])),
        finish("STOP", 12, 3, 0, 0),
    ])])
    .await;
    let model = google::model(server.url("/v1beta"));
    let events = run(&model, &[user("Say hello")], &[], &options()).await;
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
    assert_eq!(message.response_id.as_deref(), Some("resp-gemini-1"));
    assert_eq!(message.api, "google-generative-ai");
    assert_eq!(message.usage.input, 12);
    assert_eq!(message.usage.output, 3);

    let request = &server.requests()[0];
    assert_eq!(
        request.line,
        "POST /v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
    assert_eq!(request.header("x-goog-api-key"), Some(API_KEY));
    assert_eq!(request.header("authorization"), None);
    assert_eq!(request.header("content-type"), Some("application/json"));
    insta::assert_snapshot!("plain_text_request", pretty(&request.json()));
}

#[tokio::test]
async fn thinking_text_and_parallel_calls_with_signatures_usage_and_cost() {
    let server = MockServer::start(vec![Reply::events(&[
        chunk(json!([{"text": "**Planning**\nTwo cities.", "thought": true, "thoughtSignature": "c2lnLXRoaW5r"}])),
        chunk(json!([{"text": " Both at once.", "thought": true}])),
        chunk(json!([{"text": "Checking both."}])),
        chunk(json!([
            {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": "c2lnLWNhbGw="},
            {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}},
        ])),
        finish("STOP", 1000, 40, 60, 400),
    ])])
    .await;
    let model = google::model(server.url("/v1beta"));
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
            "toolcall_end",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_end",
            "text_start",
            "text_delta",
            "text_end",
            "done",
        ]
    );
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    match &message.content[0] {
        ContentBlock::Thinking(thinking) => {
            assert_eq!(thinking.thinking, "**Planning**\nTwo cities. Both at once.");
            assert_eq!(thinking.thinking_signature.as_deref(), Some("c2lnLXRoaW5r"));
        }
        other => panic!("expected thinking, got {other:?}"),
    }
    let calls: Vec<&ToolCall> = message.tool_calls().collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].arguments, json!({"city": "Paris"}));
    assert_eq!(calls[1].arguments, json!({"city": "Rome"}));
    assert_eq!(calls[0].thought_signature.as_deref(), Some("c2lnLWNhbGw="));
    assert_eq!(calls[1].thought_signature, None);
    // pi's ids: <name>_<milliseconds>_<counter>, distinct.
    assert!(calls[0].id.starts_with("get_weather_"), "{}", calls[0].id);
    assert_ne!(calls[0].id, calls[1].id);
    // Usage: cached prompt tokens are cache reads, thoughts count as output.
    assert_eq!(message.usage.input, 600);
    assert_eq!(message.usage.cache_read, 400);
    assert_eq!(message.usage.output, 100);
    assert_eq!(message.usage.total_tokens, 1100);
    let expected = 600.0 * 0.3 / 1e6 + 100.0 * 2.5 / 1e6 + 400.0 * 0.03 / 1e6;
    assert!(
        (message.usage.cost.total - expected).abs() < 1e-12,
        "{:?}",
        message.usage.cost
    );
    let body = server.requests()[0].json();
    assert_eq!(
        body["generationConfig"]["thinkingConfig"],
        json!({"includeThoughts": true, "thinkingBudget": 8192})
    );

    // The second turn sends the thinking, text and calls back with their signatures, and both
    // results in one user turn.
    let server = MockServer::start(vec![google::text("Sunny in both.")]).await;
    let model = google::model(server.url("/v1beta"));
    let history = vec![
        user("Weather in Paris and Rome?"),
        AgentMessage::Assistant(message.clone()),
        messages::tool_result(
            &calls[0].id,
            "get_weather",
            vec![ContentBlock::text("sunny in Paris")],
            false,
        ),
        messages::tool_result(&calls[1].id, "get_weather", vec![ContentBlock::text("no data")], true),
    ];
    let events = run(&model, &history, &[weather()], &options).await;
    assert_eq!(final_message(&events).text(), "Sunny in both.");
    insta::assert_snapshot!("replay_request", pretty(&server.requests()[0].json()));
}

#[tokio::test]
async fn another_models_signatures_are_not_sent() {
    let server = MockServer::start(vec![google::text("ok")]).await;
    let model = google::model(server.url("/v1beta"));
    let other = Model {
        id: "gemini-2.5-pro".into(),
        ..model.clone()
    };
    let mut call = ToolCall::new("c1", "get_weather", json!({"city": "Oslo"}));
    call.thought_signature = Some("c2lnLWNhbGw=".into());
    let history = vec![
        user("x"),
        messages::assistant(
            &other,
            vec![
                ContentBlock::Thinking(ThinkingContent {
                    thinking: "Mine.".into(),
                    thinking_signature: Some("c2lnLXRoaW5r".into()),
                    redacted: None,
                }),
                ContentBlock::ToolCall(call),
            ],
            StopReason::ToolUse,
        ),
        messages::tool_result("c1", "get_weather", vec![ContentBlock::text("cold")], false),
    ];
    run(&model, &history, &[weather()], &options()).await;
    let body = server.requests()[0].json();
    assert_eq!(
        body["contents"][1],
        json!({"parts": [{"text": "Mine."}, {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}}], "role": "model"})
    );
}

#[tokio::test]
async fn images_in_user_messages_and_tool_results() {
    let server = MockServer::start(vec![google::text("A cat."), google::text("A cat.")]).await;
    let png = "iVBORw0KGgo=";
    let history = vec![
        AgentMessage::User(UserMessage {
            content: UserContent::Blocks(vec![
                ContentBlock::text("What is this?"),
                ContentBlock::image(png, "image/png"),
            ]),
            timestamp: 1,
        }),
        messages::assistant(
            &google::model(""),
            vec![ContentBlock::ToolCall(ToolCall::new(
                "c1",
                "get_weather",
                json!({"city": "x"}),
            ))],
            StopReason::ToolUse,
        ),
        messages::tool_result("c1", "get_weather", vec![ContentBlock::image(png, "image/png")], false),
    ];
    // Gemini 2.5: the image follows the result as a user turn.
    let model = google::model(server.url("/v1beta"));
    run(&model, &history, &[weather()], &options()).await;
    // Gemini 3: inside the function response.
    let gemini3 = Model {
        id: "gemini-3-flash-preview".into(),
        ..google::model(server.url("/v1beta"))
    };
    let history_3: Vec<AgentMessage> = history
        .iter()
        .map(|message| match message {
            AgentMessage::Assistant(assistant) => AgentMessage::Assistant(pi_agent_core::AssistantMessage {
                model: gemini3.id.clone(),
                ..assistant.clone()
            }),
            other => other.clone(),
        })
        .collect();
    run(&gemini3, &history_3, &[weather()], &options()).await;
    let requests = server.requests();
    insta::assert_snapshot!("images_gemini_2_5_contents", pretty(&requests[0].json()["contents"]));
    insta::assert_snapshot!("images_gemini_3_contents", pretty(&requests[1].json()["contents"]));
}

#[tokio::test]
async fn forced_tool_choice() {
    let server = MockServer::start(vec![google::text("ok"), google::text("ok"), google::text("ok")]).await;
    let model = google::model(server.url("/v1beta"));
    for choice in [
        ToolChoice::Tool("get_weather".into()),
        ToolChoice::Required,
        ToolChoice::None,
    ] {
        let options = StreamOptions {
            tool_choice: Some(choice),
            ..options()
        };
        run(&model, &[user("x")], &[weather()], &options).await;
    }
    let configs: Vec<Value> = server
        .requests()
        .iter()
        .map(|request| request.json()["toolConfig"].clone())
        .collect();
    assert_eq!(
        configs,
        [
            json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}}),
            json!({"functionCallingConfig": {"mode": "ANY"}}),
            json!({"functionCallingConfig": {"mode": "NONE"}}),
        ]
    );
    insta::assert_snapshot!("forced_tool_choice_request", pretty(&server.requests()[0].json()));
}

#[tokio::test]
async fn stop_reasons() {
    let server = MockServer::start(vec![
        Reply::events(&[chunk(json!([{"text": "cut"}])), finish("MAX_TOKENS", 5, 5, 0, 0)]),
        Reply::events(&[chunk(json!([{"text": "unsafe"}])), finish("SAFETY", 5, 5, 0, 0)]),
    ])
    .await;
    let model = google::model(server.url("/v1beta"));
    let events = run(&model, &[user("x")], &[], &options()).await;
    assert_eq!(final_message(&events).stop_reason, StopReason::Length);
    let events = run(&model, &[user("x")], &[], &options()).await;
    assert_eq!(final_message(&events).stop_reason, StopReason::Error);
    assert_eq!(
        error_message(&events),
        "google stopped the response (finishReason: SAFETY)"
    );
    assert_eq!(final_message(&events).text(), "unsafe");
}

#[tokio::test]
async fn rate_limits_and_unavailable_are_retried() {
    let server = MockServer::start(vec![
        google::error(
            429,
            "RESOURCE_EXHAUSTED",
            "Resource has been exhausted (e.g. check quota).",
        )
        .header("retry-after", "0"),
        google::error(503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
        google::text("Finally."),
    ])
    .await;
    let model = google::model(server.url("/v1beta"));
    let events = run(&model, &[user("x")], &[], &options()).await;
    assert_eq!(final_message(&events).text(), "Finally.");
    assert_eq!(server.requests().len(), 3);

    // Out of retries: the last status and Google's error body.
    let server = MockServer::start(vec![
        google::error(503, "UNAVAILABLE", "overloaded"),
        google::error(503, "UNAVAILABLE", "overloaded"),
        google::error(503, "UNAVAILABLE", "overloaded"),
    ])
    .await;
    let model = google::model(server.url("/v1beta"));
    let events = run(&model, &[user("x")], &[], &options()).await;
    assert_eq!(final_message(&events).stop_reason, StopReason::Error);
    assert_eq!(
        error_message(&events),
        r#"503 status code: {"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}"#
    );
    assert_no_key(&events);
}

#[tokio::test]
async fn context_overflow_is_recognised() {
    let server = MockServer::start(vec![google::error(
        400,
        "INVALID_ARGUMENT",
        "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).",
    )])
    .await;
    let model = google::model(server.url("/v1beta"));
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
async fn an_error_chunk_in_the_stream_fails_the_response() {
    let server = MockServer::start(vec![Reply::events(&[
        chunk(json!([{"text": "partial"}])),
        google::event(&json!({"error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}})),
    ])])
    .await;
    let model = google::model(server.url("/v1beta"));
    let events = run(&model, &[user("x")], &[], &options()).await;
    assert_eq!(final_message(&events).stop_reason, StopReason::Error);
    assert_eq!(
        error_message(&events),
        r#"got status: INTERNAL. {"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL"}}"#
    );
    assert_eq!(final_message(&events).text(), "partial");
}

#[tokio::test]
async fn abort_mid_stream() {
    let mut events: Vec<String> = (0..50).map(|i| chunk(json!([{"text": format!("word{i} ")}]))).collect();
    events.push(finish("STOP", 1, 50, 0, 0));
    let chunks: Vec<&str> = events.iter().map(String::as_str).collect();
    let server = MockServer::start(vec![Reply::sse(200, &chunks).paced(Duration::from_millis(20))]).await;
    let model = google::model(server.url("/v1beta"));
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
    let mut stream = pi_ai::google::stream(&client(), &model, &context, &options);
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
    let server = MockServer::start(vec![google::text("Hi.")]).await;
    let json = json!({"providers": {"google": {"baseUrl": server.url("/v1beta")}}}).to_string();
    let registry = ModelRegistry::from_json(&json, "models.json")
        .unwrap()
        .with_env(|name| (name == "GEMINI_API_KEY").then(|| "gemini-env-key-0123".to_owned()));
    let model = registry.find("google", "gemini-2.5-pro").unwrap().clone();
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
    assert_eq!(final_message(&events).text(), "Hi.");
    let request = &server.requests()[0];
    assert_eq!(request.header("x-goog-api-key"), Some("gemini-env-key-0123"));
    assert_eq!(
        request.line,
        "POST /v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    );
}

/// The conversation `data/record-google-bodies.mjs` sends through pi-ai 0.73.1.
fn recorded_conversation(model: &Model) -> Vec<AgentMessage> {
    let mut call = ToolCall::new("read_1", "read", json!({"path": "x"}));
    call.thought_signature = Some("c2lnMg==".into());
    let mut text = pi_agent_core::TextContent::new("ok");
    text.text_signature = Some("c2lnMw==".into());
    vec![
        user("hi"),
        messages::assistant(
            model,
            vec![
                ContentBlock::Thinking(ThinkingContent {
                    thinking: "prior".into(),
                    thinking_signature: Some("c2lnMQ==".into()),
                    redacted: None,
                }),
                ContentBlock::Text(text),
                ContentBlock::ToolCall(call),
            ],
            StopReason::ToolUse,
        ),
        messages::tool_result(
            "read_1",
            "read",
            vec![ContentBlock::text("file"), ContentBlock::image("aGk=", "image/png")],
            false,
        ),
        AgentMessage::User(UserMessage {
            content: UserContent::Blocks(vec![
                ContentBlock::text("look"),
                ContentBlock::image("aGk=", "image/png"),
            ]),
            timestamp: 4,
        }),
    ]
}

#[tokio::test]
async fn bodies_equal_the_ones_pi_0_73_1_sends() {
    let recorded: Value =
        serde_json::from_str(include_str!("data/google-bodies-pi-0.73.1.json")).expect("recorded bodies");
    let registry = ModelRegistry::builtin().with_env(|_| None);
    let read = tools::unused(
        "read",
        "Read a file",
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    );
    let cases = recorded.as_object().unwrap();
    assert_eq!(cases.len(), 5);
    for (name, pi_body) in cases {
        let mut parts = name.split('/');
        let (provider, id, level) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
        let server = MockServer::start(vec![google::text("ok")]).await;
        let mut model = registry.find(provider, id).unwrap().clone();
        model.base_url = server.url("/v1beta");
        let level = match level {
            "minimal" => Some(ThinkingLevel::Minimal),
            "low" => Some(ThinkingLevel::Low),
            "medium" => Some(ThinkingLevel::Medium),
            "high" => Some(ThinkingLevel::High),
            _ => None,
        };
        let options = StreamOptions {
            api_key: Some("k-123456789".into()),
            reasoning: level,
            ..StreamOptions::default()
        };
        let messages = recorded_conversation(&model);
        let context = LlmContext {
            system_prompt: "You are a test.",
            messages: &messages,
            tools: std::slice::from_ref(&read),
        };
        let events: Vec<_> = if provider == "google" {
            pi_ai::google::stream(&client(), &model, &context, &options)
                .collect()
                .await
        } else {
            pi_ai::google_vertex::stream_with_env(&client(), &model, &context, &options, Arc::new(|_| None))
                .collect()
                .await
        };
        assert_eq!(
            final_message(&events).text(),
            "ok",
            "{name}: {}",
            error_message(&events)
        );
        let ours = server.requests()[0].json();
        assert_eq!(
            &ours,
            pi_body,
            "{name}:\nours {}\npi   {}",
            pretty(&ours),
            pretty(pi_body)
        );
    }
}

#[tokio::test]
async fn a_key_echoed_by_the_server_is_redacted() {
    let body = json!({"error": {"code": 400, "message": format!("API key not valid: {API_KEY}"), "status": "INVALID_ARGUMENT"}});
    let server = MockServer::start(vec![Reply::json(400, &body.to_string())]).await;
    let model = google::model(server.url("/v1beta"));
    let events = run(&model, &[user("x")], &[], &options()).await;
    assert!(
        error_message(&events).contains("API key not valid: [redacted]"),
        "{}",
        error_message(&events)
    );
    assert_no_key(&events);
}
