//! The `openai-codex-responses` wire API (ChatGPT-plan Codex) against a scripted server on
//! 127.0.0.1: the URL, the headers and the body equal to what pi-ai 0.73.1 sends over its SSE
//! transport (recorded in `data/` by `record-codex-bodies.mjs`) given the login's access token, a
//! streamed answer with usage and cost, forced tool choice, a token without an account, retries,
//! and the token kept out of errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::client;

use std::sync::Arc;

use futures::StreamExt;
use pi_agent_core::{
    AgentMessage, AssistantMessageEvent, ContentBlock, LlmContext, Model, StopReason, StreamOptions, ThinkingLevel,
    ToolCall, ToolChoice,
};
use pi_ai::ModelRegistry;
use pi_test_support::messages::{self, user};
use pi_test_support::openai_responses as responses;
use pi_test_support::stream::{error_message, final_message, kinds};
use pi_test_support::tools::{self, weather};
use pi_test_support::{MockServer, Reply, pretty};
use serde_json::{Value, json};

fn recorded() -> Value {
    serde_json::from_str(include_str!("data/codex-bodies-pi-0.73.1.json")).expect("recorded requests")
}

/// The access token of the recording: a JWT naming the account `acct-test-0123`.
fn token() -> String {
    recorded()["token"].as_str().unwrap().to_owned()
}

fn catalog_model(id: &str, base_url: String) -> Model {
    let registry = ModelRegistry::builtin().with_env(|_| None);
    Model {
        base_url,
        ..registry.find("openai-codex", id).unwrap().clone()
    }
}

fn options() -> StreamOptions {
    StreamOptions {
        api_key: Some(token()),
        ..StreamOptions::default()
    }
}

async fn run(model: &Model, messages: &[AgentMessage], options: &StreamOptions) -> Vec<AssistantMessageEvent> {
    let tools = [weather()];
    let context = LlmContext {
        system_prompt: "You are a test.",
        messages,
        tools: &tools,
    };
    pi_ai::openai_codex_responses::stream(&client(), model, &context, options)
        .collect()
        .await
}

/// The conversation `data/record-codex-bodies.mjs` sends through pi-ai 0.73.1.
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
    let recorded = recorded();
    let read = tools::unused(
        "read",
        "Read a file",
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    );
    let cases: Vec<(&String, &Value)> = recorded
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| *k != "token")
        .collect();
    assert_eq!(cases.len(), 4);
    for (name, pi) in cases {
        let (id, rest) = name.split_once('/').unwrap();
        let (level, rest) = rest.split_once('/').unwrap();
        let (path, prompt) = rest.rsplit_once('/').unwrap();
        let server = MockServer::start(vec![responses::text("ok")]).await;
        let model = catalog_model(id, server.url(path));
        let level = match level {
            "minimal" => Some(ThinkingLevel::Minimal),
            "low" => Some(ThinkingLevel::Low),
            "xhigh" => Some(ThinkingLevel::Xhigh),
            _ => None,
        };
        let options = StreamOptions {
            reasoning: level,
            session_id: Some("session-1".into()),
            ..options()
        };
        let messages = recorded_conversation(&model);
        let system_prompt = if prompt == "prompt" { "You are a test." } else { "" };
        let context = LlmContext {
            system_prompt,
            messages: &messages,
            tools: std::slice::from_ref(&read),
        };
        let events: Vec<_> = pi_ai::openai_codex_responses::stream(&client(), &model, &context, &options)
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
        for (header, value) in pi["headers"].as_object().unwrap() {
            assert_eq!(request.header(header), value.as_str(), "{name}: {header}");
        }
        let agent = request.header("user-agent").unwrap();
        assert!(agent.starts_with("pi (") && agent.ends_with(')'), "{agent}");
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
async fn thinking_text_usage_cost_and_a_forced_tool() {
    let mut events = vec![responses::created("resp_cx")];
    events.push(responses::reasoning_added(0, "rs_1"));
    events.push(responses::summary_part_added(0, "rs_1", 0));
    events.push(responses::summary_delta(0, "rs_1", 0, "Plan."));
    events.push(responses::summary_part_done(0, "rs_1", 0, "Plan."));
    events.push(responses::reasoning_done(0, "rs_1", &["Plan."], "ENC"));
    events.extend(responses::message(1, "msg_1", &["Hel", "lo"]));
    events.push(responses::completed("resp_cx", 1000, 50, 400));
    let server = MockServer::start(vec![Reply::events(&events)]).await;
    let model = catalog_model("gpt-5.1", server.url("/backend-api"));
    let options = StreamOptions {
        reasoning: Some(ThinkingLevel::High),
        tool_choice: Some(ToolChoice::Tool("get_weather".into())),
        ..options()
    };
    let events = run(&model, &[user("x")], &options).await;
    assert_eq!(
        kinds(&events),
        [
            "start",
            "thinking_start",
            "thinking_delta",
            "thinking_end",
            "text_start",
            "text_delta",
            "text_delta",
            "text_end",
            "done"
        ],
        "{}",
        error_message(&events)
    );
    let message = final_message(&events);
    assert_eq!(message.api, "openai-codex-responses");
    assert_eq!(message.text(), "Hello");
    assert_eq!(
        (message.usage.input, message.usage.cache_read, message.usage.output),
        (600, 400, 50)
    );
    let expected = 600.0 * 1.25 / 1e6 + 400.0 * 0.125 / 1e6 + 50.0 * 10.0 / 1e6;
    assert!(
        (message.usage.cost.total - expected).abs() < 1e-12,
        "{:?}",
        message.usage.cost
    );
    let body = server.requests()[0].json();
    assert_eq!(body["tool_choice"], json!({"type": "function", "name": "get_weather"}));
    assert_eq!(body["reasoning"], json!({"effort": "high", "summary": "auto"}));
    assert_eq!(body.get("max_output_tokens"), None);
    insta::assert_snapshot!("codex_forced_tool_request", pretty(&body));
}

#[tokio::test]
async fn a_token_without_an_account_or_no_token_fails_before_sending() {
    let server = MockServer::start(vec![]).await;
    let model = catalog_model("gpt-5.1", server.url("/backend-api"));
    let plain = StreamOptions {
        api_key: Some("sk-plain-api-key-0123".into()),
        ..StreamOptions::default()
    };
    let events = run(&model, &[user("x")], &plain).await;
    assert_eq!(error_message(&events), "Failed to extract accountId from token");
    let events = run(&model, &[user("x")], &StreamOptions::default()).await;
    assert_eq!(error_message(&events), "No API key for provider: openai-codex");
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn overloaded_is_retried_and_an_echoed_token_is_redacted() {
    let token = token();
    let server = MockServer::start(vec![
        Reply::json(503, r#"{"error": {"message": "overloaded"}}"#),
        responses::text("Finally."),
    ])
    .await;
    let model = catalog_model("gpt-5.1", server.url("/backend-api"));
    let events = run(&model, &[user("x")], &options()).await;
    assert_eq!(final_message(&events).text(), "Finally.");
    assert_eq!(server.requests().len(), 2);

    let echo = json!({"error": {"message": format!("bad token {token}")}});
    let server = MockServer::start(vec![Reply::json(401, &echo.to_string())]).await;
    let model = catalog_model("gpt-5.1", server.url("/backend-api"));
    let events = run(&model, &[user("x")], &options()).await;
    let text = error_message(&events);
    assert!(text.contains("bad token [redacted]"), "{text}");
    for event in &events {
        assert!(!serde_json::to_string(event).unwrap().contains(&token));
    }
}

#[tokio::test]
async fn through_providers_with_the_token_as_the_key() {
    let server = MockServer::start(vec![responses::text("Hi.")]).await;
    let json =
        json!({"providers": {"openai-codex": {"baseUrl": server.url("/backend-api"), "apiKey": token()}}}).to_string();
    let registry = ModelRegistry::from_json(&json, "models.json")
        .unwrap()
        .with_env(|_| None);
    let model = registry.find("openai-codex", "gpt-5.1-codex-mini").unwrap().clone();
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
    assert_eq!(request.line, "POST /backend-api/codex/responses");
    assert_eq!(request.header("chatgpt-account-id"), Some("acct-test-0123"));
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {}", token()).as_str())
    );
}
