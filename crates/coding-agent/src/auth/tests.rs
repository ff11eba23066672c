#![allow(clippy::unwrap_used)]

use super::*;

/// The file as pi 0.73.1 writes it (`JSON.stringify(data, null, 2)`), with an entry kind this
/// program does not know.
const PI_WRITTEN: &str = r#"{
  "anthropic": {
    "type": "api_key",
    "key": "sk-ant-api-0123456789"
  },
  "openai-codex": {
    "type": "oauth",
    "access": "codex-access-0123456789",
    "refresh": "codex-refresh-0123456789",
    "expires": 4102444800000,
    "accountId": "acct-1"
  },
  "future": {
    "type": "something-new",
    "x": 1
  }
}"#;

fn storage_with(text: Option<&str>) -> (tempfile::TempDir, AuthStorage) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agent").join("auth.json");
    if let Some(text) = text {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
    }
    let storage = AuthStorage::open(&path).unwrap();
    (dir, storage)
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_missing_file_is_created_as_pi_creates_it() {
    let (_dir, storage) = storage_with(None);
    assert_eq!(std::fs::read_to_string(storage.path()).unwrap(), "{}");
    #[cfg(unix)]
    {
        assert_eq!(mode(storage.path()), 0o600);
        assert_eq!(mode(storage.path().parent().unwrap()), 0o700);
    }
    assert!(storage.list().is_empty());
}

#[test]
fn pis_file_is_read_and_written_back_unchanged() {
    let (_dir, storage) = storage_with(Some(PI_WRITTEN));
    assert_eq!(storage.list(), ["anthropic", "openai-codex", "future"]);
    assert_eq!(
        storage.get("anthropic"),
        Some(AuthCredential::ApiKey {
            key: "sk-ant-api-0123456789".into()
        })
    );
    let Some(AuthCredential::OAuth(login)) = storage.get("openai-codex") else {
        panic!("no login");
    };
    assert_eq!(login.account_id(), Some("acct-1"));
    assert_eq!(storage.get("future"), None);
    // Writing an entry back as it was leaves the file byte for byte as pi wrote it.
    storage.set("openai-codex", &AuthCredential::OAuth(login)).unwrap();
    storage
        .set(
            "anthropic",
            &AuthCredential::ApiKey {
                key: "sk-ant-api-0123456789".into(),
            },
        )
        .unwrap();
    assert_eq!(std::fs::read_to_string(storage.path()).unwrap(), PI_WRITTEN);
}

#[test]
fn set_and_remove_keep_what_another_process_wrote_meanwhile() {
    let (_dir, storage) = storage_with(Some("{}"));
    // Another process adds an entry after we loaded the file.
    std::fs::write(storage.path(), r#"{"groq": {"type": "api_key", "key": "gsk"}}"#).unwrap();
    storage
        .set("openai", &AuthCredential::ApiKey { key: "sk-o".into() })
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(storage.path()).unwrap(),
        "{\n  \"groq\": {\n    \"type\": \"api_key\",\n    \"key\": \"gsk\"\n  },\n  \"openai\": {\n    \"type\": \"api_key\",\n    \"key\": \"sk-o\"\n  }\n}"
    );
    #[cfg(unix)]
    assert_eq!(mode(storage.path()), 0o600);
    storage.remove("groq").unwrap();
    assert_eq!(storage.list(), ["openai"]);
    assert!(!lock::lock_dir(storage.path()).exists(), "the lock is released");
}

#[test]
fn a_broken_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    std::fs::write(&path, "{not json").unwrap();
    let error = AuthStorage::open(&path).unwrap_err();
    assert!(matches!(error, AuthError::Invalid { .. }));
    assert!(error.to_string().starts_with(&path.display().to_string()));
}

#[test]
fn the_registry_reads_auth_json_first() {
    let (_dir, storage) = storage_with(Some(PI_WRITTEN));
    let registry = pi_ai::ModelRegistry::builtin()
        .with_env(|name| (name == "ANTHROPIC_API_KEY").then(|| "sk-from-env-0123".to_owned()))
        .with_credentials(Arc::new(SharedAuth(Arc::new(storage))));
    assert_eq!(
        registry.api_key_for("anthropic").as_deref(),
        Some("sk-ant-api-0123456789")
    );
    assert_eq!(
        registry.api_key_for("openai-codex").as_deref(),
        Some("codex-access-0123456789")
    );
    assert_eq!(registry.api_key_for("groq"), None);
    // Tokens read from the file are secrets.
    assert_eq!(pi_ai::redact("codex-refresh-0123456789", None), pi_ai::REDACTED);
}

/// An expired Codex login in `auth.json` and a token server answering its refresh.
async fn expired_login(server: &pi_test_support::MockServer) -> (tempfile::TempDir, Arc<AuthStorage>) {
    let text = PI_WRITTEN.replace("4102444800000", "1000");
    let (dir, storage) = storage_with(Some(&text));
    let endpoints = OAuthEndpoints {
        base_url: Some(server.base_url()),
        ..OAuthEndpoints::default()
    };
    (dir, Arc::new(storage.with_endpoints(endpoints)))
}

fn jwt(account: &str) -> String {
    use base64::Engine;
    let claims = serde_json::json!({"https://api.openai.com/auth": {"chatgpt_account_id": account}});
    let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(claims.to_string());
    format!("h.{payload}.s")
}

#[tokio::test]
async fn an_expired_login_is_refreshed_under_the_lock_and_written_as_pi_writes_it() {
    let access = jwt("acct-9");
    let body =
        serde_json::json!({"access_token": access, "refresh_token": "codex-refresh-new-0123", "expires_in": 3600});
    let server = pi_test_support::MockServer::start(vec![pi_test_support::Reply::json(200, &body.to_string())]).await;
    let (_dir, storage) = expired_login(&server).await;
    let registry = pi_ai::ModelRegistry::builtin()
        .with_env(|_| None)
        .with_credentials(Arc::new(SharedAuth(storage.clone())));
    assert!(registry.needs_refresh("openai-codex"));
    assert_eq!(
        registry.api_key_for("openai-codex"),
        None,
        "an expired token is not sent"
    );
    registry.refresh_login("openai-codex").await.unwrap();
    assert_eq!(registry.api_key_for("openai-codex").as_deref(), Some(access.as_str()));
    let written: Value = serde_json::from_str(&std::fs::read_to_string(storage.path()).unwrap()).unwrap();
    let entry = &written["openai-codex"];
    let keys: Vec<_> = entry.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, ["type", "access", "refresh", "expires", "accountId"]);
    assert_eq!(entry["refresh"], "codex-refresh-new-0123");
    assert_eq!(entry["accountId"], "acct-9");
    assert_eq!(
        written["anthropic"]["key"], "sk-ant-api-0123456789",
        "other entries are kept"
    );
    assert!(!lock::lock_dir(storage.path()).exists());
}

#[tokio::test]
async fn a_login_refreshed_by_another_process_meanwhile_is_used_as_it_is() {
    let server = pi_test_support::MockServer::start(vec![]).await;
    let (_dir, storage) = expired_login(&server).await;
    // The other process wrote a fresh login after we read the file.
    std::fs::write(storage.path(), PI_WRITTEN).unwrap();
    storage.refresh_login("openai-codex").await.unwrap();
    assert!(server.requests().is_empty(), "no second refresh");
    let Some(AuthCredential::OAuth(login)) = storage.get("openai-codex") else {
        panic!("no login");
    };
    assert_eq!(login.access, "codex-access-0123456789");
}

#[tokio::test]
async fn two_refreshes_at_once_ask_the_server_once() {
    let access = jwt("acct-2");
    let body =
        serde_json::json!({"access_token": access, "refresh_token": "codex-refresh-two-0123", "expires_in": 3600});
    let server = pi_test_support::MockServer::start(vec![
        pi_test_support::Reply::json(200, &body.to_string()).paced(std::time::Duration::from_millis(50)),
    ])
    .await;
    let (_dir, first) = expired_login(&server).await;
    // A second "process": its own storage of the same file.
    let second = Arc::new(
        AuthStorage::open(first.path())
            .unwrap()
            .with_endpoints(first.endpoints().clone()),
    );
    let (a, b) = tokio::join!(
        first.refresh_login("openai-codex"),
        second.refresh_login("openai-codex")
    );
    a.unwrap();
    b.unwrap();
    assert_eq!(server.requests().len(), 1);
    for storage in [&first, &second] {
        let Some(AuthCredential::OAuth(login)) = storage.get("openai-codex") else {
            panic!("no login");
        };
        assert_eq!(login.refresh, "codex-refresh-two-0123");
    }
}

#[tokio::test]
async fn a_failed_refresh_leaves_the_entry_and_names_no_token() {
    let server =
        pi_test_support::MockServer::start(vec![pi_test_support::Reply::json(400, r#"{"error":"invalid_grant"}"#)])
            .await;
    let (_dir, storage) = expired_login(&server).await;
    let error = storage.refresh_login("openai-codex").await.unwrap_err().to_string();
    assert!(error.starts_with("OpenAI Codex token refresh failed (400)"), "{error}");
    assert!(!error.contains("codex-refresh-0123456789"));
    assert_eq!(
        std::fs::read_to_string(storage.path()).unwrap(),
        PI_WRITTEN.replace("4102444800000", "1000")
    );
    assert!(!lock::lock_dir(storage.path()).exists());
}
