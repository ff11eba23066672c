//! Failures below the wire API, through the dispatcher and the driver: a server that never
//! answers (the per-attempt timeout, the total deadline across retries), a refused connection, a
//! stream cut by the network, a successful body that is not an event stream, event data that is
//! not JSON, a `retry-after` longer than allowed, and secrets from `models.json` headers echoed
//! back. Each error names its cause.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use pi_agent_core::{AgentMessage, AssistantMessageEvent, LlmContext, Model, StopReason, StreamFn, StreamOptions};
use pi_ai::{HttpClient, HttpOptions, ModelRegistry, Providers};
use pi_test_support::faults::{RawServer, StallingServer};
use pi_test_support::{MockServer, Reply, openai};

fn options(idle: Duration, total: Duration, retries: u32) -> HttpOptions {
    HttpOptions {
        max_retries: retries,
        base_delay: Duration::from_millis(20),
        max_retry_delay: Duration::from_millis(100),
        connect_timeout: Duration::from_secs(2),
        idle_timeout: idle,
        total_timeout: total,
    }
}

fn model(base_url: String) -> Model {
    Model {
        id: "m".into(),
        api: "openai-completions".into(),
        provider: "local".into(),
        base_url,
        ..Model::unknown()
    }
}

/// Runs one request and returns the final event's error text (after checking it is an error).
async fn error_of(providers: &Providers, model: &Model) -> String {
    let messages = [AgentMessage::user("hi")];
    let context = LlmContext {
        system_prompt: "",
        messages: &messages,
        tools: &[],
    };
    let stream = providers.stream(model, &context, &StreamOptions::default());
    let events: Vec<AssistantMessageEvent> = tokio::time::timeout(Duration::from_secs(60), stream.collect())
        .await
        .expect("the request ends well within a minute");
    match events.last().unwrap() {
        AssistantMessageEvent::Error { reason, error } => {
            assert_eq!(*reason, StopReason::Error);
            error.error_message.clone().unwrap()
        }
        other => panic!("expected an error, got {}", other.kind()),
    }
}

async fn failure(http: HttpOptions, base_url: String) -> String {
    error_of(&Providers::new(HttpClient::new(http)), &model(base_url)).await
}

#[tokio::test]
async fn a_server_that_never_answers_fails_after_the_per_attempt_timeout() {
    let server = StallingServer::start().await;
    let error = failure(
        options(Duration::from_millis(300), Duration::from_secs(30), 1),
        server.url("/v1"),
    )
    .await;
    assert_eq!(
        error,
        "Request timed out: no response within 0.3 s (retry.provider.timeoutMs)"
    );
    assert_eq!(server.requests(), 2, "the first attempt and one retry");
}

#[tokio::test]
async fn the_total_deadline_stops_the_retries() {
    let server = StallingServer::start().await;
    // 0.3 s per attempt, 50 retries allowed, but only 1 s in all: the deadline ends it.
    let error = failure(
        options(Duration::from_millis(300), Duration::from_secs(1), 50),
        server.url("/v1"),
    )
    .await;
    assert!(
        error.starts_with(
            "Request timed out: no response within the total deadline of 1 s (retry.provider.totalTimeoutMs), "
        ),
        "{error}"
    );
    let attempts = server.requests();
    assert!((2..=4).contains(&attempts), "{attempts} attempts: {error}");
    assert!(error.contains(&format!("{attempts} attempts")), "{error}");
}

#[tokio::test]
async fn a_retry_that_would_pass_the_deadline_is_not_waited_for() {
    let server = MockServer::start(vec![
        Reply::json(503, r#"{"error":"busy"}"#).header("retry-after", "5"),
        openai::text("never reached"),
    ])
    .await;
    let mut http = options(Duration::from_secs(5), Duration::from_secs(2), 3);
    http.max_retry_delay = Duration::from_secs(60);
    let error = failure(http, server.url("/v1")).await;
    assert_eq!(
        error,
        "Request timed out: no response within the total deadline of 2 s (retry.provider.totalTimeoutMs), \
         1 attempt; the last failed with: 503 status code: {\"error\":\"busy\"}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_retry_after_longer_than_allowed_fails_at_once() {
    let server = MockServer::start(vec![
        Reply::json(429, r#"{"error":"quota"}"#).header("retry-after", "18000"),
        openai::text("never reached"),
    ])
    .await;
    let mut http = options(Duration::from_secs(5), Duration::from_secs(30), 3);
    http.max_retry_delay = Duration::from_secs(60);
    let error = failure(http, server.url("/v1")).await;
    assert_eq!(
        error,
        "429 status code: {\"error\":\"quota\"} (the server asks to retry after 18000 s, longer than the 60 s \
         allowed by retry.provider.maxRetryDelayMs)"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_refused_connection_says_connection_error_and_why() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let error = failure(
        options(Duration::from_secs(2), Duration::from_secs(30), 0),
        format!("http://127.0.0.1:{port}/v1"),
    )
    .await;
    assert!(
        error.starts_with(&format!(
            "Connection error: error sending request for url (http://127.0.0.1:{port}/v1/chat/completions)"
        )),
        "{error}"
    );
    assert!(error.to_lowercase().contains("connection refused"), "{error}");
}

#[tokio::test]
async fn a_stream_cut_by_the_network_says_connection_error_and_why() {
    let server = RawServer::cut_stream("data: {\"choices\":[{\"delta\":{\"content\":\"half\"}}]}\n\n").await;
    let error = failure(
        options(Duration::from_secs(2), Duration::from_secs(30), 0),
        server.url("/v1"),
    )
    .await;
    // The cause, not only reqwest's summary.
    assert_eq!(
        error,
        "Connection error: error decoding response body: error reading a body from connection: \
         unexpected EOF during chunk size line"
    );
}

#[tokio::test]
async fn a_successful_body_that_is_json_not_events_says_so() {
    let server = MockServer::start(vec![Reply::json(200, r#"{"id":"x","choices":[]}"#)]).await;
    let error = failure(
        options(Duration::from_secs(2), Duration::from_secs(30), 0),
        server.url("/v1"),
    )
    .await;
    assert_eq!(
        error,
        r#"The response from local is not an event stream: {"id":"x","choices":[]}"#
    );
}

#[tokio::test]
async fn a_successful_body_that_is_not_json_names_the_json_error() {
    let server = MockServer::start(vec![Reply::json(200, "{\"id\": \"x\", oops")]).await;
    let error = failure(
        options(Duration::from_secs(2), Duration::from_secs(30), 0),
        server.url("/v1"),
    )
    .await;
    assert_eq!(
        error,
        "The response from local is not an event stream nor JSON (key must be a string at line 1 column 13): \
         {\"id\": \"x\", oops"
    );
}

#[tokio::test]
async fn event_data_that_is_not_json_is_quoted() {
    let server = MockServer::start(vec![Reply::sse(200, &["data: {\"choices\": [BROKEN\n\n"])]).await;
    let error = failure(
        options(Duration::from_secs(2), Duration::from_secs(30), 0),
        server.url("/v1"),
    )
    .await;
    assert!(error.starts_with("Malformed SSE data from local: "), "{error}");
    assert!(error.ends_with("(data: {\"choices\": [BROKEN)"), "{error}");
}

#[tokio::test]
async fn a_secret_header_value_echoed_back_is_redacted() {
    const SECRET: &str = "azure-header-secret-0123456789";
    let body = format!(r#"{{"error":{{"message":"bad api-key {SECRET}"}}}}"#);
    let server = MockServer::start(vec![
        Reply::json(400, &body),
        // The body of a 200 that is not an event stream is quoted, redacted, too.
        Reply::json(200, &format!(r#"{{"echo":"{SECRET}"}}"#)),
    ])
    .await;
    let json = format!(
        r#"{{"providers": {{"azure": {{"baseUrl": "{}", "api": "openai-completions",
            "headers": {{"api-key": "$AZURE_HEADER_VALUE"}}, "models": [{{"id": "m"}}]}}}}}}"#,
        server.url("/v1")
    );
    let registry = ModelRegistry::from_json(&json, "models.json")
        .unwrap()
        .with_env(|name| (name == "AZURE_HEADER_VALUE").then(|| SECRET.to_owned()));
    let model = registry.find("azure", "m").unwrap().clone();
    let providers = Providers::new(HttpClient::new(options(
        Duration::from_secs(2),
        Duration::from_secs(30),
        0,
    )))
    .with_registry(Arc::new(registry));
    let error = error_of(&providers, &model).await;
    assert_eq!(
        error,
        "400 status code: {\"error\":{\"message\":\"bad api-key [redacted]\"}}"
    );
    assert_eq!(
        server.requests()[0].header("api-key"),
        Some(SECRET),
        "the header was sent"
    );
    let error = error_of(&providers, &model).await;
    assert_eq!(
        error,
        "The response from azure is not an event stream: {\"echo\":\"[redacted]\"}"
    );
}
