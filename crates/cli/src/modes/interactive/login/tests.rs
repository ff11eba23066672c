#![allow(clippy::unwrap_used)]

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use super::*;
use pi_ai::oauth::OAuthEndpoints;
use pi_test_support::{MockServer, Reply};

/// Answers the dialogs from a script and records what was shown.
#[derive(Default)]
struct ScriptedUi {
    answers: Mutex<VecDeque<Option<String>>>,
    shown: Mutex<Vec<String>>,
}

impl ScriptedUi {
    fn new(answers: &[Option<&str>]) -> Arc<ScriptedUi> {
        Arc::new(ScriptedUi {
            answers: Mutex::new(answers.iter().map(|a| a.map(str::to_owned)).collect()),
            shown: Mutex::new(Vec::new()),
        })
    }

    fn shown(&self) -> Vec<String> {
        self.shown.lock().unwrap().clone()
    }

    async fn answer(&self, asked: String) -> Option<String> {
        self.shown.lock().unwrap().push(asked);
        let next = self.answers.lock().unwrap().pop_front();
        match next {
            Some(answer) => answer,
            // Out of answers: the dialog stays open.
            None => std::future::pending().await,
        }
    }
}

#[async_trait]
impl ToolUi for ScriptedUi {
    fn has_ui(&self) -> bool {
        true
    }
    async fn select(&self, title: &str, options: &[String]) -> Option<String> {
        self.answer(format!("select {title} {options:?}")).await
    }
    async fn confirm(&self, _title: &str, _message: &str) -> bool {
        false
    }
    async fn input(&self, title: &str, placeholder: Option<&str>) -> Option<String> {
        self.answer(format!("input {title} {placeholder:?}")).await
    }
    fn notify(&self, message: &str, kind: NotifyKind) {
        self.shown.lock().unwrap().push(format!("{kind:?}: {message}"));
    }
}

fn storage(dir: &tempfile::TempDir, server: Option<&MockServer>) -> Arc<AuthStorage> {
    let mut storage = AuthStorage::open(dir.path().join("auth.json")).unwrap();
    if let Some(server) = server {
        storage = storage.with_endpoints(OAuthEndpoints {
            base_url: Some(server.base_url()),
            callback_port: Some(0),
            poll_second: Duration::from_millis(1),
            ..OAuthEndpoints::default()
        });
    }
    Arc::new(storage)
}

fn registry() -> ModelRegistry {
    ModelRegistry::builtin().with_env(|name| (name == "GROQ_API_KEY").then(|| "gsk-env".to_owned()))
}

#[tokio::test]
async fn an_api_key_is_stored_as_pi_stores_it() {
    let dir = tempfile::tempdir().unwrap();
    let auth = storage(&dir, None);
    let ui = ScriptedUi::new(&[
        Some(API_KEY),
        Some("groq ✓ env: GROQ_API_KEY"),
        Some("  gsk-typed-0123456789  "),
    ]);
    LoginDialogs::new(ui.clone(), auth.clone(), registry()).login().await;
    let shown = ui.shown();
    assert_eq!(
        shown[0],
        r#"select Select authentication method: ["Use a subscription", "Use an API key"]"#
    );
    assert!(
        shown[1].starts_with("select Select provider to configure: ["),
        "{}",
        shown[1]
    );
    assert!(shown[1].contains(r#""anthropic • unconfigured""#), "{}", shown[1]);
    assert!(
        !shown[1].contains("openai-codex"),
        "subscription-only providers take no key"
    );
    assert_eq!(shown[2], "input Login to groq\nEnter API key: None");
    assert_eq!(
        shown[3],
        format!(
            "Info: Saved API key for groq. Credentials saved to {}",
            auth.path().display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(auth.path()).unwrap(),
        "{\n  \"groq\": {\n    \"type\": \"api_key\",\n    \"key\": \"gsk-typed-0123456789\"\n  }\n}"
    );
}

#[tokio::test]
async fn an_empty_key_is_refused_and_esc_on_the_provider_goes_back() {
    let dir = tempfile::tempdir().unwrap();
    let auth = storage(&dir, None);
    let ui = ScriptedUi::new(&[
        Some(API_KEY),
        None,
        Some(API_KEY),
        Some("groq ✓ env: GROQ_API_KEY"),
        Some(" "),
    ]);
    LoginDialogs::new(ui.clone(), auth.clone(), registry()).login().await;
    let shown = ui.shown();
    assert!(
        shown[2].starts_with("select Select authentication method:"),
        "{shown:?}"
    );
    assert_eq!(
        shown.last().unwrap(),
        "Error: Failed to save API key for groq: API key cannot be empty."
    );
    assert!(auth.list().is_empty());
}

#[tokio::test]
async fn copilot_subscription_login_through_the_dialogs() {
    let server = MockServer::start_with(|request| match request.line.split(' ').nth(1).unwrap_or_default() {
        "/login/device/code" => Reply::json(
            200,
            r#"{"device_code":"dc-dialog-0123","user_code":"WXYZ-0001","verification_uri":"https://github.com/login/device","interval":1,"expires_in":60}"#,
        ),
        "/login/oauth/access_token" => Reply::json(200, r#"{"access_token":"ghu_dialog-token-0123456789"}"#),
        "/copilot_internal/v2/token" => Reply::json(200, r#"{"token":"tid=dialog;proxy-ep=proxy.x.githubcopilot.com","expires_at":2000000000}"#),
        _ => Reply::json(200, "{}"),
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let auth = storage(&dir, Some(&server));
    // The method, the provider, then a blank Enterprise domain; the waiting field stays open.
    let ui = ScriptedUi::new(&[Some(SUBSCRIPTION), Some("GitHub Copilot • unconfigured"), Some("")]);
    let opened = Arc::new(Mutex::new(Vec::new()));
    let record = opened.clone();
    LoginDialogs::new(ui.clone(), auth.clone(), registry())
        .with_opener(Arc::new(move |url: &str| record.lock().unwrap().push(url.to_owned())))
        .login()
        .await;
    let shown = ui.shown();
    assert_eq!(
        shown[1],
        r#"select Select provider to configure: ["Anthropic (Claude Pro/Max) • unconfigured", "ChatGPT Plus/Pro (Codex Subscription) • unconfigured", "GitHub Copilot • unconfigured"]"#
    );
    assert_eq!(
        shown[2],
        r#"input Login to GitHub Copilot
GitHub Enterprise URL/domain (blank for github.com) Some("e.g., company.ghe.com")"#
    );
    assert!(
        shown.contains(
            &"Info: Login to GitHub Copilot\nhttps://github.com/login/device\nEnter code: WXYZ-0001".to_owned()
        ),
        "{shown:?}"
    );
    assert!(shown.contains(&"Info: Enabling models...".to_owned()), "{shown:?}");
    assert_eq!(
        shown.last().unwrap(),
        &format!(
            "Info: Logged in to GitHub Copilot. Credentials saved to {}",
            auth.path().display()
        )
    );
    assert_eq!(*opened.lock().unwrap(), ["https://github.com/login/device"]);
    let written: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(auth.path()).unwrap()).unwrap();
    let entry = written["github-copilot"].as_object().unwrap();
    assert_eq!(
        entry.keys().collect::<Vec<_>>(),
        ["type", "refresh", "access", "expires"]
    );
    assert_eq!(entry["refresh"], "ghu_dialog-token-0123456789");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(auth.path()).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    // `/logout` removes it with pi's text.
    let ui = ScriptedUi::new(&[Some("GitHub Copilot ✓ configured")]);
    LoginDialogs::new(ui.clone(), auth.clone(), registry()).logout().await;
    assert_eq!(
        ui.shown(),
        [
            r#"select Select provider to logout: ["GitHub Copilot ✓ configured"]"#,
            "Info: Logged out of GitHub Copilot"
        ]
    );
    assert!(auth.list().is_empty());
}

#[tokio::test]
async fn cancelling_a_login_says_nothing_and_logout_without_entries_says_pis_text() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![]).await;
    let auth = storage(&dir, Some(&server));
    // Codex: the paste field is dismissed (Esc) while the browser is awaited.
    let ui = ScriptedUi::new(&[
        Some(SUBSCRIPTION),
        Some("ChatGPT Plus/Pro (Codex Subscription) • unconfigured"),
        None,
    ]);
    LoginDialogs::new(ui.clone(), auth.clone(), registry())
        .with_opener(Arc::new(|_: &str| {}))
        .login()
        .await;
    let shown = ui.shown();
    assert_eq!(
        shown.last().unwrap(),
        "input Paste redirect URL below, or complete login in browser: None"
    );
    assert!(
        shown[2].starts_with("Info: Login to ChatGPT Plus/Pro (Codex Subscription)\nhttp://127.0.0.1:"),
        "{shown:?}"
    );
    assert!(
        shown[2].ends_with("A browser window should open. Complete login to finish."),
        "{shown:?}"
    );
    assert!(auth.list().is_empty());

    let ui = ScriptedUi::new(&[]);
    LoginDialogs::new(ui.clone(), auth, registry()).logout().await;
    assert_eq!(
        ui.shown(),
        [
            "Info: No stored credentials to remove. /logout only removes credentials saved by /login; environment variables and models.json config are unchanged."
        ]
    );
}
