//! The API key never appears in an error text: every failure path of the `openai-completions`
//! API that can be triggered locally — an HTTP error echoing the key, exhausted retries, a
//! malformed stream, an error object in the stream, an idle stream, a refused connection — ends
//! in an `error` event whose message (and whole serialised event) does not contain the key.
//! Snapshots are checked too.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use pi_agent_core::{AgentMessage, AssistantMessageEvent, LlmContext, Model, StopReason, StreamFn, StreamOptions};
use pi_ai::{HttpClient, HttpOptions, ModelRegistry, Providers};
use pi_test_support::stream::{API_KEY, assert_no_key, options};
use pi_test_support::{MockServer, Reply};

fn client(idle: Duration) -> HttpClient {
    HttpClient::new(HttpOptions {
        max_retries: 2,
        base_delay: Duration::from_millis(5),
        max_retry_delay: Duration::from_millis(20),
        connect_timeout: Duration::from_millis(500),
        idle_timeout: idle,
        total_timeout: Duration::from_secs(30),
    })
}

fn model(base_url: String) -> Model {
    Model {
        id: "gpt-test".into(),
        api: "openai-completions".into(),
        provider: "testai".into(),
        base_url,
        ..Model::unknown()
    }
}

/// Runs one request through the dispatcher with the key given as the call's key and returns
/// the final error text, after checking that no event mentions the key.
async fn failure(base_url: String, idle: Duration) -> String {
    let messages = [AgentMessage::user(format!("my key is not {}", "here"))];
    let context = LlmContext {
        system_prompt: "",
        messages: &messages,
        tools: &[],
    };
    let providers = Providers::new(client(idle));
    let events: Vec<AssistantMessageEvent> = providers.stream(&model(base_url), &context, &options()).collect().await;
    assert_no_key(&events);
    match events.last().unwrap() {
        AssistantMessageEvent::Error { reason, error } => {
            assert_eq!(*reason, StopReason::Error);
            error.error_message.clone().unwrap()
        }
        other => panic!("expected an error, got {}", other.kind()),
    }
}

#[tokio::test]
async fn unauthorized_response_echoing_the_key() {
    let body = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {API_KEY}. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","code":"invalid_api_key"}}}}"#
    );
    let server = MockServer::start(vec![Reply::json(401, &body)]).await;
    let error = failure(server.url("/v1"), Duration::from_secs(2)).await;
    assert!(error.starts_with("401 status code"), "{error}");
    assert!(error.contains("Incorrect API key provided: [redacted]"), "{error}");
    assert!(!error.contains(API_KEY));
    // The key was sent, only as the bearer token.
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some(format!("Bearer {API_KEY}").as_str())
    );
    assert!(!server.requests()[0].body.contains(API_KEY));
}

#[tokio::test]
async fn server_errors_exhausting_retries() {
    let body = format!(r#"{{"error":{{"message":"backend failed for key {API_KEY}"}}}}"#);
    let server = MockServer::start(vec![
        Reply::json(500, &body),
        Reply::json(500, &body),
        Reply::json(500, &body),
    ])
    .await;
    let error = failure(server.url("/v1"), Duration::from_secs(2)).await;
    assert!(error.contains("500"), "{error}");
    assert!(!error.contains(API_KEY), "{error}");
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn malformed_stream_data() {
    let bad = format!("data: {{\"choices\": [{{\"delta\": {{\"content\": \"{API_KEY}\"}}}}] BROKEN\n\n");
    let server = MockServer::start(vec![Reply::sse(200, &[&bad])]).await;
    let error = failure(server.url("/v1"), Duration::from_secs(2)).await;
    assert!(error.starts_with("Malformed SSE data from testai:"), "{error}");
}

#[tokio::test]
async fn error_object_in_the_stream() {
    let chunk = format!("data: {{\"error\": {{\"message\": \"key {API_KEY} is disabled\", \"code\": 403}}}}\n\n");
    let server = MockServer::start(vec![Reply::sse(200, &[&chunk])]).await;
    let error = failure(server.url("/v1"), Duration::from_secs(2)).await;
    assert_eq!(error, "key [redacted] is disabled (403)");
}

#[tokio::test]
async fn idle_stream() {
    let first = "data: {\"choices\": [{\"delta\": {\"content\": \"hi\"}}]}\n\n";
    let server = MockServer::start(vec![
        Reply::sse(200, &[first, "data: [DONE]\n\n"]).paced(Duration::from_millis(800)),
    ])
    .await;
    let error = failure(server.url("/v1"), Duration::from_millis(200)).await;
    assert!(error.contains("idle"), "{error}");
}

#[tokio::test]
async fn refused_connection() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let error = failure(format!("http://127.0.0.1:{port}/v1"), Duration::from_secs(2)).await;
    assert!(!error.is_empty());
    // A key that is part of the URL (some gateways put it in the path) is redacted too.
    let error = failure(format!("http://127.0.0.1:{port}/{API_KEY}/v1"), Duration::from_secs(2)).await;
    assert!(error.contains("[redacted]"), "{error}");
}

#[tokio::test]
async fn keys_from_the_registry_are_redacted_too() {
    let body = format!(r#"{{"error":{{"message":"bad key {API_KEY}"}}}}"#);
    let server = MockServer::start(vec![Reply::json(403, &body)]).await;
    let json = format!(
        r#"{{"providers": {{"local": {{"baseUrl": "{}", "api": "openai-completions", "apiKey": "$LOCAL_API_KEY", "models": [{{"id": "m"}}]}}}}}}"#,
        server.url("/v1")
    );
    let registry = ModelRegistry::from_json(&json, "models.json")
        .unwrap()
        .with_env(|name| (name == "LOCAL_API_KEY").then(|| API_KEY.to_owned()));
    let model = registry.find("local", "m").unwrap().clone();
    let providers = Providers::new(client(Duration::from_secs(2))).with_registry(Arc::new(registry));
    let messages = [AgentMessage::user("x")];
    let context = LlmContext {
        system_prompt: "",
        messages: &messages,
        tools: &[],
    };
    let events: Vec<_> = providers
        .stream(&model, &context, &StreamOptions::default())
        .collect()
        .await;
    let json = serde_json::to_string(events.last().unwrap()).unwrap();
    assert!(json.contains("403"), "{json}");
    assert!(!json.contains(API_KEY), "{json}");
}

#[test]
fn no_snapshot_contains_a_test_key() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("snapshots");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(!text.contains(API_KEY), "{} contains the test key", path.display());
        assert!(
            !text.contains("SECRET"),
            "{} contains a secret-looking test key",
            path.display()
        );
    }
}
