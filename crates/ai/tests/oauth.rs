//! Subscription login against a local authorization server on 127.0.0.1 (nothing reaches the
//! internet): the PKCE flows of Anthropic and OpenAI Codex end to end (the authorize URL's
//! parameters, the browser's redirect to the loopback callback, the token exchange), a pasted
//! redirect URL instead of the redirect, GitHub's device flow with `authorization_pending` and
//! `slow_down` and Copilot's token exchange, refreshes, a request made with a refreshed login,
//! Copilot's headers, and tokens kept out of error texts.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use base64::Engine;
use futures::StreamExt;
use pi_agent_core::{LlmContext, StreamFn, StreamOptions};
use pi_ai::oauth::{LoginCallbacks, OAuthCredentials, OAuthEndpoints, OAuthError, OAuthProvider, login, refresh};
use pi_ai::{CredentialStore, ModelRegistry, Providers, StoredCredential};
use pi_test_support::messages::user;
use pi_test_support::openai_responses as responses;
use pi_test_support::stream::{error_message, final_message};
use pi_test_support::{MockServer, Recorded, Reply};
use serde_json::json;
use sha2::Digest;
use tokio_util::sync::CancellationToken;

/// What the flows asked of the user.
#[derive(Default)]
struct Recorder {
    auth: Mutex<Vec<(String, Option<String>)>>,
    prompts: Mutex<Vec<(String, Option<String>)>>,
    progress: Mutex<Vec<String>>,
    answer: Option<String>,
    paste: Mutex<Option<tokio::sync::oneshot::Receiver<String>>>,
}

#[async_trait]
impl LoginCallbacks for Recorder {
    fn on_auth(&self, url: &str, instructions: Option<&str>) {
        self.auth
            .lock()
            .unwrap()
            .push((url.to_owned(), instructions.map(str::to_owned)));
    }
    async fn prompt(&self, message: &str, placeholder: Option<&str>) -> Option<String> {
        self.prompts
            .lock()
            .unwrap()
            .push((message.to_owned(), placeholder.map(str::to_owned)));
        self.answer.clone()
    }
    fn progress(&self, message: &str) {
        self.progress.lock().unwrap().push(message.to_owned());
    }
    fn offers_manual_input(&self) -> bool {
        self.paste.lock().unwrap().is_some()
    }
    async fn manual_input(&self) -> Option<String> {
        let paste = self.paste.lock().unwrap().take();
        match paste {
            Some(rx) => rx.await.ok(),
            None => std::future::pending().await,
        }
    }
}

fn endpoints(server: &MockServer) -> OAuthEndpoints {
    OAuthEndpoints {
        base_url: Some(server.base_url()),
        callback_port: Some(0),
        poll_second: Duration::from_millis(1),
        ..OAuthEndpoints::default()
    }
}

fn query(url: &str) -> HashMap<String, String> {
    reqwest::Url::parse(url).unwrap().query_pairs().into_owned().collect()
}

fn form(request: &Recorded) -> HashMap<String, String> {
    reqwest::Url::parse(&format!("http://x/?{}", request.body))
        .unwrap()
        .query_pairs()
        .into_owned()
        .collect()
}

fn challenge(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()))
}

/// A JWT whose claims name the ChatGPT account `account`.
fn codex_token(account: &str, tag: &str) -> String {
    let claims = json!({"https://api.openai.com/auth": {"chatgpt_account_id": account}, "tag": tag});
    let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(claims.to_string());
    format!("eyJhbGciOiJub25lIn0.{payload}.sig-{tag}")
}

/// Waits for the flow's authorize URL, then plays the browser: the redirect to `redirect_uri`
/// with `code` and the URL's `state`.
async fn browser(recorder: Arc<Recorder>, code: &str) -> reqwest::Response {
    let url = loop {
        if let Some((url, _)) = recorder.auth.lock().unwrap().first().cloned() {
            break url;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let params = query(&url);
    let redirect = format!("{}?code={code}&state={}", params["redirect_uri"], params["state"]);
    reqwest::get(redirect.replace("localhost", "127.0.0.1")).await.unwrap()
}

#[tokio::test]
async fn anthropic_pkce_login_end_to_end() {
    let server = MockServer::start(vec![Reply::json(
        200,
        r#"{"access_token":"sk-ant-oat01-access-0123456789","refresh_token":"sk-ant-ort01-refresh-0123456789","expires_in":3600}"#,
    )])
    .await;
    let recorder = Arc::new(Recorder::default());
    let browser = tokio::spawn(browser(recorder.clone(), "the-code"));
    let before = pi_ai::oauth::now_ms();
    let credentials = login(
        OAuthProvider::Anthropic,
        &*recorder,
        &endpoints(&server),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    let page = browser.await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(
        page.text()
            .await
            .unwrap()
            .contains("Anthropic authentication completed. You can close this window.")
    );

    let (url, instructions) = recorder.auth.lock().unwrap()[0].clone();
    assert!(
        url.starts_with(&format!("{}/oauth/authorize?", server.base_url())),
        "{url}"
    );
    let params = query(&url);
    assert_eq!(params["code"], "true");
    assert_eq!(params["client_id"], "9d1c250a-e61b-44d9-88ed-5944d1962f5e");
    assert_eq!(params["response_type"], "code");
    assert!(params["redirect_uri"].starts_with("http://localhost:") && params["redirect_uri"].ends_with("/callback"));
    assert_eq!(
        params["scope"],
        "org:create_api_key user:profile user:inference user:sessions:claude_code user:mcp_servers user:file_upload"
    );
    assert_eq!(params["code_challenge_method"], "S256");
    assert_eq!(
        instructions.as_deref(),
        Some(
            "Complete login in your browser. If the browser is on another machine, paste the final redirect URL here."
        )
    );
    assert_eq!(
        *recorder.progress.lock().unwrap(),
        ["Exchanging authorization code for tokens..."]
    );

    let requests = server.requests();
    assert_eq!(requests[0].line, "POST /v1/oauth/token");
    let body = requests[0].json();
    assert_eq!(body["grant_type"], "authorization_code");
    assert_eq!(body["code"], "the-code");
    assert_eq!(body["redirect_uri"], params["redirect_uri"].as_str());
    // The verifier doubles as the state, and its S256 challenge went in the authorize URL.
    assert_eq!(body["state"], params["state"].as_str());
    assert_eq!(body["code_verifier"], params["state"].as_str());
    assert_eq!(
        challenge(body["code_verifier"].as_str().unwrap()),
        params["code_challenge"]
    );

    assert_eq!(credentials.access, "sk-ant-oat01-access-0123456789");
    assert_eq!(credentials.refresh, "sk-ant-ort01-refresh-0123456789");
    // An hour, less pi's five minutes.
    let lifetime = credentials.expires - before;
    assert!((3_300_000..3_330_000).contains(&lifetime), "{lifetime}");
    // The tokens are secrets from now on.
    assert_eq!(pi_ai::redact("sk-ant-oat01-access-0123456789", None), pi_ai::REDACTED);
}

#[tokio::test]
async fn codex_pkce_login_end_to_end_with_the_account_from_the_token() {
    let access = codex_token("acct-42", "login");
    let server = MockServer::start(vec![Reply::json(
        200,
        &json!({"access_token": access, "refresh_token": "rt-codex-0123456789", "expires_in": 864000}).to_string(),
    )])
    .await;
    let recorder = Arc::new(Recorder::default());
    let browser = tokio::spawn(browser(recorder.clone(), "codex-code"));
    let credentials = login(
        OAuthProvider::OpenAiCodex,
        &*recorder,
        &endpoints(&server),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert!(
        browser
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
            .contains("OpenAI authentication completed.")
    );
    let (url, instructions) = recorder.auth.lock().unwrap()[0].clone();
    let params = query(&url);
    assert_eq!(params["client_id"], "app_EMoamEEZ73f0CkXaXp7hrann");
    assert_eq!(params["scope"], "openid profile email offline_access");
    assert_eq!(params["id_token_add_organizations"], "true");
    assert_eq!(params["codex_cli_simplified_flow"], "true");
    assert_eq!(params["originator"], "pi");
    assert_eq!(params["state"].len(), 32);
    assert!(params["redirect_uri"].ends_with("/auth/callback"));
    assert_eq!(
        instructions.as_deref(),
        Some("A browser window should open. Complete login to finish.")
    );

    let request = &server.requests()[0];
    assert_eq!(request.line, "POST /oauth/token");
    let body = form(request);
    assert_eq!(body["grant_type"], "authorization_code");
    assert_eq!(body["code"], "codex-code");
    assert_eq!(challenge(&body["code_verifier"]), params["code_challenge"]);
    assert_eq!(credentials.account_id(), Some("acct-42"));
    assert_eq!(credentials.access, access);
}

#[tokio::test]
async fn a_pasted_redirect_url_wins_over_the_browser_and_a_wrong_state_is_refused() {
    let server = MockServer::start(vec![Reply::json(
        200,
        r#"{"access_token":"sk-ant-oat01-pasted-0123456789","refresh_token":"sk-ant-ort01-pasted-0123456789","expires_in":60}"#,
    )])
    .await;
    // The right state: pasted while the callback waits.
    let (tx, rx) = tokio::sync::oneshot::channel();
    let recorder = Arc::new(Recorder {
        paste: Mutex::new(Some(rx)),
        ..Recorder::default()
    });
    let paster = {
        let recorder = recorder.clone();
        tokio::spawn(async move {
            let url = loop {
                if let Some((url, _)) = recorder.auth.lock().unwrap().first().cloned() {
                    break url;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            };
            let state = query(&url)["state"].clone();
            tx.send(format!("http://localhost:53692/callback?code=pasted&state={state}"))
                .unwrap();
        })
    };
    let credentials = login(
        OAuthProvider::Anthropic,
        &*recorder,
        &endpoints(&server),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    paster.await.unwrap();
    assert_eq!(credentials.access, "sk-ant-oat01-pasted-0123456789");
    assert_eq!(server.requests()[0].json()["code"], "pasted");

    // A pasted URL with another state.
    let (tx, rx) = tokio::sync::oneshot::channel();
    tx.send("http://localhost:53692/callback?code=c&state=forged".to_owned())
        .unwrap();
    let recorder = Recorder {
        paste: Mutex::new(Some(rx)),
        ..Recorder::default()
    };
    let error = login(
        OAuthProvider::Anthropic,
        &recorder,
        &endpoints(&server),
        &CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert_eq!(error.to_string(), "OAuth state mismatch");

    // Cancelling the paste cancels the login.
    let (tx, rx) = tokio::sync::oneshot::channel::<String>();
    drop(tx);
    let recorder = Recorder {
        paste: Mutex::new(Some(rx)),
        ..Recorder::default()
    };
    let error = login(
        OAuthProvider::OpenAiCodex,
        &recorder,
        &endpoints(&server),
        &CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert_eq!(error, OAuthError::Cancelled);
}

#[tokio::test]
async fn copilot_device_flow_polls_through_pending_and_slow_down() {
    let polls = Arc::new(Mutex::new(Vec::<(std::time::Instant, String)>::new()));
    let seen = polls.clone();
    let server = MockServer::start_with(move |request| {
        let path = request.line.split(' ').nth(1).unwrap_or_default().to_owned();
        seen.lock().unwrap().push((std::time::Instant::now(), format!("{} {}", request.line, request.body)));
        match path.as_str() {
            "/login/device/code" => Reply::json(
                200,
                r#"{"device_code":"dc-0123456789","user_code":"ABCD-1234","verification_uri":"https://github.com/login/device","interval":5,"expires_in":900}"#,
            ),
            "/login/oauth/access_token" => {
                let n = seen.lock().unwrap().iter().filter(|(_, l)| l.contains("access_token")).count();
                match n {
                    1 => Reply::json(200, r#"{"error":"authorization_pending"}"#),
                    2 => Reply::json(200, r#"{"error":"slow_down","interval":10}"#),
                    _ => Reply::json(200, r#"{"access_token":"ghu_github-token-0123456789","token_type":"bearer"}"#),
                }
            }
            "/copilot_internal/v2/token" => Reply::json(
                200,
                r#"{"token":"tid=1;exp=2000000000;proxy-ep=proxy.business.githubcopilot.com;sku=x","expires_at":2000000000}"#,
            ),
            _ => Reply::json(200, "{}"),
        }
    })
    .await;
    let recorder = Recorder {
        answer: Some(String::new()),
        ..Recorder::default()
    };
    let credentials = login(
        OAuthProvider::GithubCopilot,
        &recorder,
        &endpoints(&server),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(
        *recorder.prompts.lock().unwrap(),
        [(
            "GitHub Enterprise URL/domain (blank for github.com)".to_owned(),
            Some("company.ghe.com".to_owned())
        )]
    );
    assert_eq!(
        *recorder.auth.lock().unwrap(),
        [(
            "https://github.com/login/device".to_owned(),
            Some("Enter code: ABCD-1234".to_owned())
        )]
    );
    assert_eq!(*recorder.progress.lock().unwrap(), ["Enabling models..."]);
    assert_eq!(credentials.refresh, "ghu_github-token-0123456789");
    assert!(credentials.access.contains("proxy-ep=proxy.business.githubcopilot.com"));
    assert_eq!(credentials.expires, 2_000_000_000_000 - 300_000);
    assert_eq!(credentials.enterprise_url(), None);
    assert_eq!(
        pi_ai::oauth::copilot_base_url(Some(&credentials.access), None),
        "https://api.business.githubcopilot.com"
    );

    let log = polls.lock().unwrap().clone();
    let token_polls: Vec<_> = log
        .iter()
        .filter(|(_, l)| l.contains("/login/oauth/access_token"))
        .collect();
    assert_eq!(token_polls.len(), 3);
    assert!(
        token_polls[0]
            .1
            .contains("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code")
    );
    assert!(token_polls[0].1.contains("device_code=dc-0123456789"));
    // interval 5 × 1.2 before the first polls, then the server's 10 × 1.4 after slow_down (in
    // the test's 1 ms seconds).
    let gap = token_polls[2].0 - token_polls[1].0;
    assert!(gap >= Duration::from_millis(14), "{gap:?}");
    // The policy of every Copilot model of the catalog is accepted.
    let policies = log.iter().filter(|(_, l)| l.contains("/policy")).count();
    let models = ModelRegistry::builtin()
        .all()
        .iter()
        .filter(|m| m.provider == "github-copilot")
        .count();
    assert_eq!(policies, models);
}

#[tokio::test]
async fn a_device_flow_error_and_an_enterprise_domain() {
    let server = MockServer::start(vec![
        Reply::json(
            200,
            r#"{"device_code":"dc","user_code":"U","verification_uri":"https://ghe.example/login/device","interval":1,"expires_in":60}"#,
        ),
        Reply::json(200, r#"{"error":"access_denied","error_description":"The user said no."}"#),
    ])
    .await;
    let recorder = Recorder {
        answer: Some("https://ghe.example/".to_owned()),
        ..Recorder::default()
    };
    let error = login(
        OAuthProvider::GithubCopilot,
        &recorder,
        &endpoints(&server),
        &CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "Device flow failed: access_denied: The user said no."
    );

    let recorder = Recorder {
        answer: Some("http://".to_owned()),
        ..Recorder::default()
    };
    let error = login(
        OAuthProvider::GithubCopilot,
        &recorder,
        &endpoints(&server),
        &CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert_eq!(error.to_string(), "Invalid GitHub Enterprise URL/domain");
}

fn expired(access: &str, refresh: &str) -> OAuthCredentials {
    OAuthCredentials {
        refresh: refresh.to_owned(),
        access: access.to_owned(),
        expires: 1,
        extra: serde_json::Map::new(),
    }
}

#[tokio::test]
async fn refreshes_and_a_failed_refresh_keeps_tokens_out_of_the_text() {
    let server = MockServer::start(vec![
        Reply::json(200, r#"{"access_token":"sk-ant-oat01-new-0123456789","refresh_token":"sk-ant-ort01-new-0123456789","expires_in":3600}"#),
        Reply::json(400, r#"{"error":"invalid_grant","refresh_token":"sk-ant-ort01-old-0123456789"}"#),
    ])
    .await;
    let old = expired("sk-ant-oat01-old-0123456789", "sk-ant-ort01-old-0123456789");
    let new = refresh(OAuthProvider::Anthropic, &old, &endpoints(&server))
        .await
        .unwrap();
    assert_eq!(new.access, "sk-ant-oat01-new-0123456789");
    let body = server.requests()[0].json();
    assert_eq!(
        body,
        json!({"grant_type": "refresh_token", "client_id": "9d1c250a-e61b-44d9-88ed-5944d1962f5e", "refresh_token": "sk-ant-ort01-old-0123456789"})
    );
    let error = refresh(OAuthProvider::Anthropic, &old, &endpoints(&server))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("Anthropic token refresh request failed. url="),
        "{error}"
    );
    assert!(error.contains("status=400"), "{error}");
    assert!(!error.contains("sk-ant-ort01-old-0123456789"), "{error}");
}

/// `auth.json` in memory: one login, refreshed through the server of the test.
struct Store {
    login: Arc<Mutex<OAuthCredentials>>,
    endpoints: OAuthEndpoints,
}

impl CredentialStore for Store {
    fn get(&self, _provider: &str) -> Option<StoredCredential> {
        Some(StoredCredential::OAuth(self.login.lock().unwrap().clone()))
    }
    fn refresh(&self, _provider: &str) -> futures::future::BoxFuture<'static, Result<(), OAuthError>> {
        let (slot, endpoints) = (self.login.clone(), self.endpoints.clone());
        Box::pin(async move {
            let old = slot.lock().unwrap().clone();
            let new = refresh(OAuthProvider::OpenAiCodex, &old, &endpoints).await?;
            *slot.lock().unwrap() = new;
            Ok(())
        })
    }
}

#[tokio::test]
async fn an_expired_codex_login_is_refreshed_before_the_request_that_carries_it() {
    let new_access = codex_token("acct-7", "refreshed");
    let auth = MockServer::start(vec![Reply::json(
        200,
        &json!({"access_token": new_access, "refresh_token": "rt-new-0123456789", "expires_in": 3600}).to_string(),
    )])
    .await;
    let api = MockServer::start(vec![responses::text("hello")]).await;
    let login = Arc::new(Mutex::new(OAuthCredentials {
        extra: serde_json::Map::from_iter([("accountId".to_owned(), json!("acct-7"))]),
        ..expired(&codex_token("acct-7", "old"), "rt-old-0123456789")
    }));
    let store = Store {
        login: login.clone(),
        endpoints: endpoints(&auth),
    };
    let registry = Arc::new(
        ModelRegistry::builtin()
            .with_env(|_| None)
            .with_credentials(Arc::new(store)),
    );
    let model = pi_agent_core::Model {
        base_url: api.base_url(),
        ..registry.find("openai-codex", "gpt-5.1").unwrap().clone()
    };
    assert!(registry.needs_refresh("openai-codex"));
    assert!(
        registry.is_available(&model),
        "an expired login still counts as configured"
    );
    let providers = Providers::new(support::client()).with_registry(registry.clone());
    let messages = [user("hi")];
    let context = LlmContext {
        system_prompt: "",
        messages: &messages,
        tools: &[],
    };
    let events: Vec<_> = providers
        .stream(&model, &context, &StreamOptions::default())
        .collect()
        .await;
    final_message(&events);

    let refresh_request = &auth.requests()[0];
    assert_eq!(form(refresh_request)["grant_type"], "refresh_token");
    assert_eq!(form(refresh_request)["refresh_token"], "rt-old-0123456789");
    let request = &api.requests()[0];
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {new_access}").as_str())
    );
    assert_eq!(request.header("chatgpt-account-id"), Some("acct-7"));
    assert_eq!(login.lock().unwrap().refresh, "rt-new-0123456789");
    assert!(!registry.needs_refresh("openai-codex"));
}

#[tokio::test]
async fn a_failed_refresh_fails_the_request_with_pis_text_and_no_token() {
    let auth = MockServer::start(vec![Reply::json(401, r#"{"error":"refresh_token_expired"}"#)]).await;
    let api = MockServer::start(vec![]).await;
    let store = Store {
        login: Arc::new(Mutex::new(expired(&codex_token("a", "stale"), "rt-stale-0123456789"))),
        endpoints: endpoints(&auth),
    };
    let registry = Arc::new(
        ModelRegistry::builtin()
            .with_env(|_| None)
            .with_credentials(Arc::new(store)),
    );
    let model = pi_agent_core::Model {
        base_url: api.base_url(),
        ..registry.find("openai-codex", "gpt-5.1").unwrap().clone()
    };
    let messages = [user("hi")];
    let context = LlmContext {
        system_prompt: "",
        messages: &messages,
        tools: &[],
    };
    let events: Vec<_> = Providers::new(support::client())
        .with_registry(registry)
        .stream(&model, &context, &StreamOptions::default())
        .collect()
        .await;
    assert_eq!(error_message(&events), "Failed to refresh OAuth token for openai-codex");
    assert!(api.requests().is_empty());
}

#[tokio::test]
async fn copilot_requests_carry_pis_headers_and_the_token_as_a_bearer() {
    for id in ["gpt-4.1", "claude-haiku-4.5"] {
        let api = MockServer::start(vec![Reply::json(500, r#"{"error":"stop here"}"#)]).await;
        let registry = Arc::new(ModelRegistry::builtin().with_env(|_| None));
        let model = pi_agent_core::Model {
            base_url: api.base_url(),
            ..registry.find("github-copilot", id).unwrap().clone()
        };
        let messages = [user("hi")];
        let context = LlmContext {
            system_prompt: "",
            messages: &messages,
            tools: &[],
        };
        let options = StreamOptions {
            api_key: Some("tid=copilot-token-0123456789".to_owned()),
            ..StreamOptions::default()
        };
        let _: Vec<_> = Providers::new(support::client())
            .with_registry(registry)
            .stream(&model, &context, &options)
            .collect()
            .await;
        let request = &api.requests()[0];
        assert_eq!(
            request.header("authorization"),
            Some("Bearer tid=copilot-token-0123456789"),
            "{id}"
        );
        assert_eq!(request.header("x-api-key"), None, "{id}");
        assert_eq!(request.header("x-initiator"), Some("user"), "{id}");
        assert_eq!(request.header("openai-intent"), Some("conversation-edits"), "{id}");
        assert_eq!(request.header("copilot-vision-request"), None, "{id}");
        assert_eq!(request.header("editor-version"), Some("vscode/1.107.0"), "{id}");
        assert_eq!(request.header("copilot-integration-id"), Some("vscode-chat"), "{id}");
    }
}

#[test]
fn a_copilot_login_moves_the_requests_to_its_tokens_host() {
    let login = OAuthCredentials {
        refresh: "ghu_x".to_owned(),
        access: "tid=1;proxy-ep=proxy.enterprise.githubcopilot.com;x=y".to_owned(),
        expires: i64::MAX,
        extra: serde_json::Map::new(),
    };
    let store = Store {
        login: Arc::new(Mutex::new(login)),
        endpoints: OAuthEndpoints::default(),
    };
    let registry = ModelRegistry::builtin()
        .with_env(|_| None)
        .with_credentials(Arc::new(store));
    assert_eq!(
        registry.login_base_url("github-copilot").as_deref(),
        Some("https://api.enterprise.githubcopilot.com")
    );
    assert_eq!(registry.login_base_url("openai-codex"), None);
    assert_eq!(
        registry.api_key_for("github-copilot").as_deref(),
        Some("tid=1;proxy-ep=proxy.enterprise.githubcopilot.com;x=y")
    );
}
