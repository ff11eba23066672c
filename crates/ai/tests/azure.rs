//! The `azure-openai-responses` wire API (the Responses API on Azure OpenAI) against a scripted
//! server on 127.0.0.1: the URL, `api-version`, `api-key` header, deployment name and body equal to
//! what pi-ai 0.73.1 sends (recorded in `data/` by `record-azure-bodies.mjs`), the base URL and key
//! from the `AZURE_OPENAI_*` variables as pi resolves them, a streamed tool call with usage and
//! cost, forced tool choice, retries, abort, and pi's errors for a missing key or base URL.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::client;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use pi_agent_core::{
    AgentMessage, AssistantMessageEvent, ContentBlock, LlmContext, Model, StopReason, StreamOptions, ThinkingLevel,
    ToolCall, ToolChoice,
};
use pi_ai::ModelRegistry;
use pi_test_support::messages::{self, user};
use pi_test_support::openai_responses as responses;
use pi_test_support::stream::{API_KEY, assert_no_key, error_message, final_message, kinds, options};
use pi_test_support::tools::{self, weather};
use pi_test_support::{MockServer, Reply, pretty};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// An environment of exactly `vars`.
fn env(vars: Vec<(&'static str, String)>) -> pi_ai::google_vertex::Env {
    Arc::new(move |name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.clone()))
}

/// A catalog model of the provider `azure-openai-responses`.
fn catalog_model(id: &str) -> Model {
    let registry = ModelRegistry::builtin().with_env(|_| None);
    registry.find("azure-openai-responses", id).unwrap().clone()
}

async fn run(
    model: &Model,
    messages: &[AgentMessage],
    options: &StreamOptions,
    env: pi_ai::google_vertex::Env,
) -> Vec<AssistantMessageEvent> {
    let tools = [weather()];
    let context = LlmContext {
        system_prompt: "You are a test.",
        messages,
        tools: &tools,
    };
    pi_ai::azure_openai_responses::stream_with_env(&client(), model, &context, options, env)
        .collect()
        .await
}

/// The conversation `data/record-azure-bodies.mjs` sends through pi-ai 0.73.1.
fn recorded_conversation(model: &Model) -> Vec<AgentMessage> {
    let mut text = pi_agent_core::TextContent::new("ok");
    text.text_signature = Some("msg_1".into());
    vec![
        user("hi"),
        messages::assistant(
            model,
            vec![
                ContentBlock::Text(text),
                ContentBlock::ToolCall(ToolCall::new("call_1|fc_1", "read", json!({"path": "x"}))),
            ],
            StopReason::ToolUse,
        ),
        messages::tool_result("call_1|fc_1", "read", vec![ContentBlock::text("file")], false),
        AgentMessage::User(pi_agent_core::UserMessage {
            content: pi_agent_core::UserContent::Blocks(vec![ContentBlock::text("look")]),
            timestamp: 4,
        }),
    ]
}

#[tokio::test]
async fn requests_equal_the_ones_pi_0_73_1_sends() {
    let recorded: Value =
        serde_json::from_str(include_str!("data/azure-bodies-pi-0.73.1.json")).expect("recorded requests");
    let read = tools::unused(
        "read",
        "Read a file",
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    );
    let cases = recorded.as_object().unwrap();
    assert_eq!(cases.len(), 4);
    for (name, pi) in cases {
        let parts: Vec<&str> = name.splitn(5, '/').collect();
        let (id, level, rest) = (parts[0], parts[1], parts[2..].join("/"));
        // `<path>/<version>/<map>`, the path being `/openai/v1` (on the model) or `env`.
        let (path, version, map) = if let Some(rest) = rest.strip_prefix("/openai/v1/") {
            let (version, map) = rest.split_once('/').unwrap();
            ("/openai/v1", version, map)
        } else {
            let (version, map) = rest.strip_prefix("env/").unwrap().split_once('/').unwrap();
            ("env", version, map)
        };
        let server = MockServer::start(vec![responses::text("ok")]).await;
        let mut model = catalog_model(id);
        let mut vars = Vec::new();
        if path == "env" {
            vars.push(("AZURE_OPENAI_BASE_URL", server.url("/openai/v1")));
        } else {
            model.base_url = server.url(path);
        }
        if version != "-" {
            vars.push(("AZURE_OPENAI_API_VERSION", version.to_owned()));
        }
        if map != "-" {
            vars.push(("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", map.to_owned()));
        }
        let level = match level {
            "medium" => Some(ThinkingLevel::Medium),
            "xhigh" => Some(ThinkingLevel::Xhigh),
            _ => None,
        };
        let options = StreamOptions {
            api_key: Some("k-123456789".into()),
            reasoning: level,
            session_id: Some("session-1".into()),
            ..StreamOptions::default()
        };
        let messages = recorded_conversation(&model);
        let context = LlmContext {
            system_prompt: "You are a test.",
            messages: &messages,
            tools: std::slice::from_ref(&read),
        };
        let events: Vec<_> =
            pi_ai::azure_openai_responses::stream_with_env(&client(), &model, &context, &options, env(vars))
                .collect()
                .await;
        assert_eq!(
            final_message(&events).text(),
            "ok",
            "{name}: {}",
            error_message(&events)
        );
        let request = &server.requests()[0];
        assert_eq!(request.line, pi["line"].as_str().unwrap(), "{name}");
        assert_eq!(request.header("api-key"), pi["apiKey"].as_str(), "{name}");
        assert_eq!(request.header("authorization"), None, "{name}");
        assert_eq!(
            serde_json::to_string(&request.json()).unwrap(),
            serde_json::to_string(&pi["body"]).unwrap(),
            "{name}:\nours {}\npi   {}",
            pretty(&request.json()),
            pretty(&pi["body"])
        );
    }
}

#[tokio::test]
async fn through_providers_with_key_base_url_version_and_deployment_from_the_environment() {
    let server = MockServer::start(vec![Reply::events(&[
        responses::created("resp_az"),
        responses::call_added(0, "fc_1", "call_1", "get_weather"),
        responses::args_delta(0, "fc_1", "{\"city\":"),
        responses::args_delta(0, "fc_1", "\"Oslo\"}"),
        responses::call_done(0, "fc_1", "call_1", "get_weather", "{\"city\":\"Oslo\"}"),
        responses::completed("resp_az", 1000, 20, 200),
    ])])
    .await;
    let base = server.url("/openai/v1");
    let registry = ModelRegistry::builtin().with_env(move |name| match name {
        "AZURE_OPENAI_API_KEY" => Some("azure-env-key-0123".to_owned()),
        "AZURE_OPENAI_BASE_URL" => Some(base.clone()),
        "AZURE_OPENAI_API_VERSION" => Some("2025-04-01-preview".to_owned()),
        "AZURE_OPENAI_DEPLOYMENT_NAME_MAP" => Some("gpt-4.1=prod-gpt41".to_owned()),
        _ => None,
    });
    let model = registry.find("azure-openai-responses", "gpt-4.1").unwrap().clone();
    let providers = pi_ai::Providers::new(client()).with_registry(Arc::new(registry));
    let messages = [user("Weather in Oslo?")];
    let tools = [weather()];
    let context = LlmContext {
        system_prompt: "",
        messages: &messages,
        tools: &tools,
    };
    let options = StreamOptions {
        tool_choice: Some(ToolChoice::Tool("get_weather".into())),
        ..StreamOptions::default()
    };
    let events: Vec<_> = pi_agent_core::StreamFn::stream(&providers, &model, &context, &options)
        .collect()
        .await;
    assert_eq!(
        kinds(&events),
        [
            "start",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_end",
            "done"
        ],
        "{}",
        error_message(&events)
    );
    let message = final_message(&events);
    assert_eq!(message.api, "azure-openai-responses");
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    let call = message.tool_calls().next().unwrap();
    assert_eq!(
        (call.id.as_str(), &call.arguments),
        ("call_1|fc_1", &json!({"city": "Oslo"}))
    );
    assert_eq!(
        (message.usage.input, message.usage.cache_read, message.usage.output),
        (800, 200, 20)
    );
    let expected = 800.0 * 2.0 / 1e6 + 200.0 * 0.5 / 1e6 + 20.0 * 8.0 / 1e6;
    assert!(
        (message.usage.cost.total - expected).abs() < 1e-12,
        "{:?}",
        message.usage.cost
    );
    let request = &server.requests()[0];
    assert_eq!(request.line, "POST /openai/v1/responses?api-version=2025-04-01-preview");
    assert_eq!(request.header("api-key"), Some("azure-env-key-0123"));
    assert_eq!(request.header("authorization"), None);
    let body = request.json();
    assert_eq!(body["model"], json!("prod-gpt41"));
    assert_eq!(body.get("store"), None);
    assert_eq!(body["tool_choice"], json!({"type": "function", "name": "get_weather"}));
    insta::assert_snapshot!("azure_tool_call_request", pretty(&body));
}

#[tokio::test]
async fn a_missing_key_or_base_url_fails_with_pis_text_before_sending() {
    let model = catalog_model("gpt-4.1");
    let events = run(
        &model,
        &[user("x")],
        &StreamOptions::default(),
        env(vec![("AZURE_OPENAI_BASE_URL", "http://127.0.0.1:9/openai/v1".into())]),
    )
    .await;
    assert_eq!(
        error_message(&events),
        "Azure OpenAI API key is required. Set AZURE_OPENAI_API_KEY environment variable or pass it as an argument."
    );
    let events = run(&model, &[user("x")], &options(), env(vec![])).await;
    assert_eq!(
        error_message(&events),
        "Azure OpenAI base URL is required. Set AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME, or pass azureBaseUrl, azureResourceName, or model.baseUrl."
    );
    assert_no_key(&events);
}

#[tokio::test]
async fn rate_limits_are_retried_and_an_echoed_key_is_redacted() {
    let error = json!({"error": {"code": "429", "message": "Rate limit is exceeded. Try again in 1 seconds."}});
    let server = MockServer::start(vec![
        Reply::json(429, &error.to_string()).header("retry-after", "0"),
        responses::text("Finally."),
    ])
    .await;
    let model = Model {
        base_url: server.url("/openai/v1"),
        ..catalog_model("gpt-4.1")
    };
    let events = run(&model, &[user("x")], &options(), env(vec![])).await;
    assert_eq!(final_message(&events).text(), "Finally.");
    assert_eq!(server.requests().len(), 2);

    let echo = json!({"error": {"code": "401", "message": format!("Access denied due to invalid subscription key {API_KEY}")}});
    let server = MockServer::start(vec![Reply::json(401, &echo.to_string())]).await;
    let model = Model {
        base_url: server.url("/openai/v1"),
        ..catalog_model("gpt-4.1")
    };
    let events = run(&model, &[user("x")], &options(), env(vec![])).await;
    assert!(
        error_message(&events).contains("subscription key [redacted]"),
        "{}",
        error_message(&events)
    );
    assert_no_key(&events);
}

#[tokio::test]
async fn abort_mid_stream() {
    let mut events = vec![
        responses::created("r"),
        responses::message_added(0, "msg_1"),
        responses::part_added(0, "msg_1"),
    ];
    events.extend((0..50).map(|i| responses::text_delta(0, "msg_1", &format!("word{i} "))));
    events.push(responses::completed("r", 1, 1, 0));
    let chunks: Vec<&str> = events.iter().map(String::as_str).collect();
    let server = MockServer::start(vec![Reply::sse(200, &chunks).paced(Duration::from_millis(20))]).await;
    let model = Model {
        base_url: server.url("/openai/v1"),
        ..catalog_model("gpt-4.1")
    };
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
    let mut stream = pi_ai::azure_openai_responses::stream_with_env(&client(), &model, &context, &options, env(vec![]));
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
    assert!(!message.text().contains("word49"));
}
