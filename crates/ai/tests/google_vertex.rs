//! The `google-vertex` wire API against scripted servers on 127.0.0.1: the API key (express
//! mode), Application Default Credentials from a service-account key (an RS256 JWT exchanged at
//! the file's `token_uri`, checked against the public key) and from gcloud's `authorized_user`
//! file (a refresh-token exchange), the token cache, the quota project, token endpoint refusals,
//! missing project / location / credentials, abort during the token exchange, and the whole path
//! through `Providers` with no key at all.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::client;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use pi_agent_core::{AssistantMessageEvent, LlmContext, Model, StopReason, StreamOptions};
use pi_ai::ModelRegistry;
use pi_ai::google_vertex::{self, Env};
use pi_test_support::google;
use pi_test_support::messages::user;
use pi_test_support::stream::{error_message, final_message};
use pi_test_support::{MockServer, Recorded, Reply};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const PRIVATE_KEY: &str = include_str!("data/test-service-account-key.pem");
const PUBLIC_KEY: &str = include_str!("data/test-service-account-key.pub.pem");

fn env(vars: Vec<(&'static str, String)>) -> Env {
    Arc::new(move |name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.clone()))
}

async fn run(model: &Model, options: &StreamOptions, env: Env) -> Vec<AssistantMessageEvent> {
    let messages = [user("hi")];
    let context = LlmContext {
        system_prompt: "",
        messages: &messages,
        tools: &[],
    };
    google_vertex::stream_with_env(&client(), model, &context, options, env)
        .collect()
        .await
}

fn token_reply(token: &str, expires_in: u64) -> Reply {
    Reply::json(
        200,
        &json!({"access_token": token, "expires_in": expires_in, "token_type": "Bearer"}).to_string(),
    )
}

/// The form fields of a token request.
fn form(request: &Recorded) -> Vec<(String, String)> {
    reqwest::Url::parse(&format!("http://x/?{}", request.body))
        .unwrap()
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn field<'a>(form: &'a [(String, String)], name: &str) -> &'a str {
    form.iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or("")
}

fn write(dir: &tempfile::TempDir, name: &str, value: &Value) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, value.to_string()).unwrap();
    path.to_string_lossy().into_owned()
}

#[tokio::test]
async fn an_api_key_goes_to_the_express_path_as_x_goog_api_key() {
    let server = MockServer::start(vec![google::text("Hi.")]).await;
    let model = google::vertex_model(server.url("/"));
    let options = StreamOptions {
        api_key: Some("vertex-key-0123456".into()),
        ..StreamOptions::default()
    };
    let events = run(&model, &options, env(vec![])).await;
    assert_eq!(final_message(&events).text(), "Hi.");
    assert_eq!(final_message(&events).api, "google-vertex");
    let request = &server.requests()[0];
    assert_eq!(
        request.line,
        "POST /v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
    assert_eq!(request.header("x-goog-api-key"), Some("vertex-key-0123456"));
    assert_eq!(request.header("authorization"), None);

    // GOOGLE_CLOUD_API_KEY when the call has none.
    let server = MockServer::start(vec![google::text("Hi.")]).await;
    let model = google::vertex_model(server.url("/"));
    let vars = env(vec![("GOOGLE_CLOUD_API_KEY", "env-vertex-key-0123".into())]);
    run(&model, &StreamOptions::default(), vars).await;
    assert_eq!(
        server.requests()[0].header("x-goog-api-key"),
        Some("env-vertex-key-0123")
    );
}

#[tokio::test]
async fn a_service_account_signs_a_jwt_and_the_token_is_cached_until_expiry() {
    let tokens = MockServer::start(vec![token_reply("ya29.service-account-token-1", 3600)]).await;
    let api = MockServer::start(vec![google::text("One."), google::text("Two.")]).await;
    let dir = tempfile::tempdir().unwrap();
    let key_file = write(
        &dir,
        "sa.json",
        &json!({
            "type": "service_account",
            "project_id": "proj-1",
            "private_key_id": "kid-1",
            "private_key": PRIVATE_KEY,
            "client_email": "pi-test@proj-1.iam.gserviceaccount.com",
            "client_id": "1234",
            "token_uri": tokens.url("/token"),
        }),
    );
    let vars = env(vec![
        ("GOOGLE_APPLICATION_CREDENTIALS", key_file),
        ("GOOGLE_CLOUD_PROJECT", "proj-1".into()),
        ("GOOGLE_CLOUD_LOCATION", "us-central1".into()),
    ]);
    let model = google::vertex_model(api.url(""));
    let first = run(&model, &StreamOptions::default(), vars.clone()).await;
    assert_eq!(final_message(&first).text(), "One.", "{}", error_message(&first));
    let second = run(&model, &StreamOptions::default(), vars).await;
    assert_eq!(final_message(&second).text(), "Two.");

    // One exchange for both requests.
    let token_requests = tokens.requests();
    assert_eq!(token_requests.len(), 1);
    assert_eq!(token_requests[0].line, "POST /token");
    assert_eq!(
        token_requests[0].header("content-type"),
        Some("application/x-www-form-urlencoded")
    );
    let form = form(&token_requests[0]);
    assert_eq!(
        field(&form, "grant_type"),
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
    );
    // The assertion verifies with the account's public key and carries Google's claims.
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
    validation.set_audience(&[tokens.url("/token")]);
    validation.set_issuer(&["pi-test@proj-1.iam.gserviceaccount.com"]);
    let decoded = jsonwebtoken::decode::<Value>(
        field(&form, "assertion"),
        &jsonwebtoken::DecodingKey::from_rsa_pem(PUBLIC_KEY.as_bytes()).unwrap(),
        &validation,
    )
    .expect("a valid RS256 assertion");
    assert_eq!(
        decoded.claims["scope"],
        "https://www.googleapis.com/auth/cloud-platform"
    );
    let iat = decoded.claims["iat"].as_u64().unwrap();
    assert_eq!(decoded.claims["exp"].as_u64().unwrap(), iat + 3600);

    for request in api.requests() {
        assert_eq!(
            request.header("authorization"),
            Some("Bearer ya29.service-account-token-1")
        );
        assert_eq!(request.header("x-goog-api-key"), None);
        assert_eq!(
            request.line,
            "POST /v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
        );
    }
}

#[tokio::test]
async fn gclouds_authorized_user_file_refreshes_and_renews_a_token_about_to_expire() {
    let tokens = MockServer::start(vec![
        // Expires within the five minutes of early renewal: fetched again next time.
        token_reply("ya29.user-token-1", 120),
        token_reply("ya29.user-token-2", 3600),
    ])
    .await;
    let api = MockServer::start(vec![google::text("One."), google::text("Two.")]).await;
    let home = tempfile::tempdir().unwrap();
    let gcloud = home.path().join(".config").join("gcloud");
    std::fs::create_dir_all(&gcloud).unwrap();
    std::fs::write(
        gcloud.join("application_default_credentials.json"),
        json!({
            "type": "authorized_user",
            "client_id": "764086051850-client.apps.googleusercontent.com",
            "client_secret": "d-FL95Q19q7MQmFpd7hHD0Ty",
            "refresh_token": "1//0refresh-token-secret",
            "quota_project_id": "billing-proj",
            "token_uri": tokens.url("/token"),
        })
        .to_string(),
    )
    .unwrap();
    let vars = env(vec![
        ("HOME", home.path().to_string_lossy().into_owned()),
        ("GCLOUD_PROJECT", "proj-2".into()),
        ("GOOGLE_CLOUD_LOCATION", "global".into()),
    ]);
    let model = google::vertex_model(api.url("/"));
    let first = run(&model, &StreamOptions::default(), vars.clone()).await;
    assert_eq!(final_message(&first).text(), "One.", "{}", error_message(&first));
    run(&model, &StreamOptions::default(), vars).await;

    let token_requests = tokens.requests();
    assert_eq!(token_requests.len(), 2);
    let form = form(&token_requests[0]);
    assert_eq!(field(&form, "grant_type"), "refresh_token");
    assert_eq!(field(&form, "refresh_token"), "1//0refresh-token-secret");
    assert_eq!(
        field(&form, "client_id"),
        "764086051850-client.apps.googleusercontent.com"
    );
    assert_eq!(field(&form, "client_secret"), "d-FL95Q19q7MQmFpd7hHD0Ty");
    let requests = api.requests();
    assert_eq!(requests[0].header("authorization"), Some("Bearer ya29.user-token-1"));
    assert_eq!(requests[1].header("authorization"), Some("Bearer ya29.user-token-2"));
    assert_eq!(requests[0].header("x-goog-user-project"), Some("billing-proj"));
}

#[tokio::test]
async fn a_refused_token_request_fails_with_googles_words_and_no_secret() {
    let tokens = MockServer::start(vec![Reply::json(
        400,
        r#"{"error": "invalid_grant", "error_description": "Token has been expired or revoked."}"#,
    )])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        &dir,
        "adc.json",
        &json!({
            "type": "authorized_user",
            "client_id": "id-0123",
            "client_secret": "client-secret-0123456",
            "refresh_token": "refresh-token-0123456",
            "token_uri": tokens.url("/token"),
        }),
    );
    let vars = env(vec![
        ("GOOGLE_APPLICATION_CREDENTIALS", file),
        ("GOOGLE_CLOUD_PROJECT", "p".into()),
        ("GOOGLE_CLOUD_LOCATION", "us-east5".into()),
    ]);
    let model = google::vertex_model("https://{location}-aiplatform.googleapis.com");
    let events = run(&model, &StreamOptions::default(), vars).await;
    assert_eq!(final_message(&events).stop_reason, StopReason::Error);
    assert_eq!(
        error_message(&events),
        "invalid_grant: Token has been expired or revoked."
    );
    assert_eq!(pi_ai::redact("refresh-token-0123456", None), pi_ai::REDACTED);
    assert_eq!(pi_ai::redact("client-secret-0123456", None), pi_ai::REDACTED);
}

#[tokio::test]
async fn missing_project_location_or_credentials() {
    let model = google::vertex_model("https://{location}-aiplatform.googleapis.com");
    let events = run(&model, &StreamOptions::default(), env(vec![])).await;
    assert_eq!(error_message(&events), google_vertex::NO_PROJECT);
    let events = run(
        &model,
        &StreamOptions::default(),
        env(vec![("GOOGLE_CLOUD_PROJECT", "p".into())]),
    )
    .await;
    assert_eq!(error_message(&events), google_vertex::NO_LOCATION);

    let home = tempfile::tempdir().unwrap();
    let vars = vec![
        ("GOOGLE_CLOUD_PROJECT", "p".to_owned()),
        ("GOOGLE_CLOUD_LOCATION", "us-central1".to_owned()),
        ("HOME", home.path().to_string_lossy().into_owned()),
    ];
    let events = run(&model, &StreamOptions::default(), env(vars.clone())).await;
    assert_eq!(
        error_message(&events),
        "Could not load the default credentials. Browse to https://cloud.google.com/docs/authentication/getting-started for more information."
    );
    let mut named = vars;
    named.push(("GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent/key.json".into()));
    let events = run(&model, &StreamOptions::default(), env(named)).await;
    assert!(
        error_message(&events).starts_with("Unable to read the credential file specified by the GOOGLE_APPLICATION_CREDENTIALS environment variable: The file at /nonexistent/key.json does not exist"),
        "{}",
        error_message(&events)
    );
}

#[tokio::test]
async fn abort_during_the_token_exchange() {
    let tokens = MockServer::start(vec![Reply {
        status: 200,
        headers: vec![("content-type".into(), "application/json".into())],
        chunks: vec![(Duration::from_secs(5), b"{}".to_vec())],
    }])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        &dir,
        "slow.json",
        &json!({"type": "authorized_user", "client_id": "a", "client_secret": "slow-secret-0123",
            "refresh_token": "slow-refresh-0123", "token_uri": tokens.url("/token")}),
    );
    let vars = env(vec![
        ("GOOGLE_APPLICATION_CREDENTIALS", file),
        ("GOOGLE_CLOUD_PROJECT", "p".into()),
        ("GOOGLE_CLOUD_LOCATION", "us-central1".into()),
    ]);
    let cancel = CancellationToken::new();
    let options = StreamOptions {
        cancel: cancel.clone(),
        ..StreamOptions::default()
    };
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        canceller.cancel();
    });
    let started = std::time::Instant::now();
    let model = google::vertex_model("https://{location}-aiplatform.googleapis.com");
    let events = run(&model, &options, vars).await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(final_message(&events).stop_reason, StopReason::Aborted);
    assert_eq!(error_message(&events), "Request was aborted.");
}

#[tokio::test]
async fn providers_send_vertex_requests_without_a_key() {
    let tokens = MockServer::start(vec![token_reply("ya29.providers-token-1", 3600)]).await;
    let api = MockServer::start(vec![google::text("Hi.")]).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        &dir,
        "sa.json",
        &json!({"type": "service_account", "private_key": PRIVATE_KEY,
            "client_email": "providers@p.iam.gserviceaccount.com", "token_uri": tokens.url("/token")}),
    );
    let json = json!({"providers": {"google-vertex": {"baseUrl": api.url("")}}}).to_string();
    let registry = ModelRegistry::from_json(&json, "models.json")
        .unwrap()
        .with_env(move |name| match name {
            "GOOGLE_APPLICATION_CREDENTIALS" => Some(file.clone()),
            "GOOGLE_CLOUD_PROJECT" => Some("p".into()),
            "GOOGLE_CLOUD_LOCATION" => Some("us-central1".into()),
            _ => None,
        });
    let model = registry.find("google-vertex", "gemini-2.5-pro").unwrap().clone();
    assert!(registry.is_available(&model));
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
    assert_eq!(
        api.requests()[0].header("authorization"),
        Some("Bearer ya29.providers-token-1")
    );
    assert_eq!(pi_ai::redact("ya29.providers-token-1", None), pi_ai::REDACTED);
}

#[tokio::test]
async fn an_access_token_echoed_by_the_server_is_redacted() {
    let tokens = MockServer::start(vec![token_reply("ya29.echoed-access-token-0123", 3600)]).await;
    let api = MockServer::start(vec![Reply::json(
        401,
        r#"{"error": {"code": 401, "message": "Bearer ya29.echoed-access-token-0123 is not valid", "status": "UNAUTHENTICATED"}}"#,
    )])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        &dir,
        "echo.json",
        &json!({"type": "authorized_user", "client_id": "a", "client_secret": "echo-secret-0123",
            "refresh_token": "echo-refresh-0123", "token_uri": tokens.url("/token")}),
    );
    let vars = env(vec![
        ("GOOGLE_APPLICATION_CREDENTIALS", file),
        ("GOOGLE_CLOUD_PROJECT", "p".into()),
        ("GOOGLE_CLOUD_LOCATION", "us-central1".into()),
    ]);
    let events = run(&google::vertex_model(api.url("")), &StreamOptions::default(), vars).await;
    let text = error_message(&events);
    assert!(text.starts_with("401 status code: "), "{text}");
    assert!(!text.contains("ya29.echoed-access-token-0123"), "{text}");
    assert!(text.contains("[redacted] is not valid"), "{text}");
}
