//! What the flows share: the credentials, the endpoints, the errors, the program's callbacks,
//! and reading the code the browser (or the user) brings back.

use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::callback;

/// The stored state of a login (`auth.json`'s `{"type": "oauth", …}` without `type`): the
/// access token, the refresh token and when the access token expires (milliseconds since the
/// epoch), plus the provider's own fields (`accountId` for Codex, `enterpriseUrl` for Copilot),
/// kept as they are.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct OAuthCredentials {
    /// The refresh token (for Copilot: the GitHub token).
    pub refresh: String,
    /// The access token sent with requests.
    pub access: String,
    /// When `access` expires, in milliseconds since the epoch.
    pub expires: i64,
    /// Other fields, in their order.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl std::fmt::Debug for OAuthCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthCredentials")
            .field("refresh", &crate::REDACTED)
            .field("access", &crate::REDACTED)
            .field("expires", &self.expires)
            .field("extra", &self.extra.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl OAuthCredentials {
    /// Whether `access` has expired at `now_ms` (pi refreshes once `now >= expires`).
    pub fn is_expired(&self, now_ms: i64) -> bool {
        now_ms >= self.expires
    }

    /// Codex's `accountId`.
    pub fn account_id(&self) -> Option<&str> {
        self.extra.get("accountId").and_then(Value::as_str)
    }

    /// Copilot's `enterpriseUrl` (a GitHub Enterprise domain).
    pub fn enterprise_url(&self) -> Option<&str> {
        self.extra.get("enterpriseUrl").and_then(Value::as_str)
    }

    /// Registers both tokens with the redactor.
    pub fn register_secrets(&self) {
        crate::register_secret(&self.access);
        crate::register_secret(&self.refresh);
    }
}

/// Milliseconds since the epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Where the flows send their requests. The default is pi's real endpoints;
/// [`OAuthEndpoints::from_env`] reads the test-only overrides.
#[derive(Debug, Clone, PartialEq)]
pub struct OAuthEndpoints {
    /// Test only: replaces the scheme and host of every endpoint (`https://claude.ai`,
    /// `https://platform.claude.com`, `https://auth.openai.com`, `https://github.com`,
    /// `https://api.github.com` and Copilot's API), keeping pi's paths, so one local server
    /// answers them all. `None`: pi's endpoints.
    pub base_url: Option<String>,
    /// Test only: the callback port instead of pi's (53692 for Anthropic, 1455 for Codex); 0
    /// takes any free port.
    pub callback_port: Option<u16>,
    /// The address the callback server listens on (pi's `PI_OAUTH_CALLBACK_HOST`, default
    /// `127.0.0.1`).
    pub callback_host: String,
    /// Test only: what one second of the device flow's polling interval lasts (1 s normally).
    pub poll_second: Duration,
}

impl Default for OAuthEndpoints {
    fn default() -> Self {
        OAuthEndpoints {
            base_url: None,
            callback_port: None,
            callback_host: "127.0.0.1".to_owned(),
            poll_second: Duration::from_secs(1),
        }
    }
}

impl OAuthEndpoints {
    /// pi's endpoints, with `PI_OAUTH_CALLBACK_HOST` (pi's variable) and the test-only
    /// `PI_OAUTH_TEST_BASE_URL`, `PI_OAUTH_TEST_CALLBACK_PORT` and `PI_OAUTH_TEST_POLL_MS`
    /// read through `env`.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> OAuthEndpoints {
        let mut endpoints = OAuthEndpoints::default();
        if let Some(host) = env("PI_OAUTH_CALLBACK_HOST").filter(|h| !h.is_empty()) {
            endpoints.callback_host = host;
        }
        endpoints.base_url = env("PI_OAUTH_TEST_BASE_URL").filter(|b| !b.is_empty());
        endpoints.callback_port = env("PI_OAUTH_TEST_CALLBACK_PORT").and_then(|p| p.parse().ok());
        if let Some(ms) = env("PI_OAUTH_TEST_POLL_MS").and_then(|p| p.parse().ok()) {
            endpoints.poll_second = Duration::from_millis(ms);
        }
        endpoints
    }

    /// An endpoint: `real` (`https://host/path`), or the override's base with its path.
    pub(crate) fn url(&self, real: &str) -> String {
        match &self.base_url {
            None => real.to_owned(),
            Some(base) => {
                let path = real
                    .split_once("://")
                    .and_then(|(_, rest)| rest.find('/').map(|at| &rest[at..]))
                    .unwrap_or("/");
                format!("{}{path}", base.trim_end_matches('/'))
            }
        }
    }
}

/// Why a login or refresh failed; the texts are pi-ai's (redacted).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OAuthError {
    /// The user cancelled (pi shows nothing for it).
    #[error("Login cancelled")]
    Cancelled,
    /// Anything else, in pi's words.
    #[error("{0}")]
    Failed(String),
}

impl OAuthError {
    pub(crate) fn failed(message: impl AsRef<str>) -> OAuthError {
        OAuthError::Failed(crate::redact(message.as_ref(), None))
    }
}

/// What a login asks of the program (pi's `OAuthLoginCallbacks`).
#[async_trait]
pub trait LoginCallbacks: Send + Sync {
    /// Open `url` in the browser (or show it), with the provider's instructions.
    fn on_auth(&self, url: &str, instructions: Option<&str>);
    /// Ask for a line of text; `None` when cancelled.
    async fn prompt(&self, message: &str, placeholder: Option<&str>) -> Option<String>;
    /// A progress message (`Exchanging authorization code for tokens...`).
    fn progress(&self, message: &str);
    /// Whether the program takes a pasted redirect URL while the browser flow runs (pi's
    /// `onManualCodeInput`, which the interactive mode offers).
    fn offers_manual_input(&self) -> bool {
        false
    }
    /// The pasted redirect URL or code; `None` when cancelled. Called once, when
    /// [`LoginCallbacks::offers_manual_input`], racing the browser's redirect.
    async fn manual_input(&self) -> Option<String> {
        std::future::pending().await
    }
}

/// The HTTP client of the flows: 30 s per request, as pi-ai's Anthropic flow.
pub(crate) fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap_or_default()
}

/// A pasted redirect URL, `code#state`, a query string, or a bare code (pi's
/// `parseAuthorizationInput`): `(code, state)`.
pub(crate) fn parse_authorization_input(input: &str) -> (Option<String>, Option<String>) {
    let value = input.trim();
    if value.is_empty() {
        return (None, None);
    }
    let from_pairs = |pairs: reqwest::Url| {
        let get = |name: &str| {
            pairs
                .query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        };
        (get("code"), get("state"))
    };
    if let Ok(url) = reqwest::Url::parse(value) {
        return from_pairs(url);
    }
    if let Some((code, state)) = value.split_once('#') {
        return (Some(code.to_owned()), Some(state.to_owned()));
    }
    if value.contains("code=")
        && let Ok(url) = reqwest::Url::parse(&format!("http://localhost/?{value}"))
    {
        return from_pairs(url);
    }
    (Some(value.to_owned()), None)
}

/// The code from the browser's redirect, or from a paste racing it, or (without either) from a
/// prompt: pi's order. `state` is checked against a pasted URL's; `mismatch` is the provider's
/// text for a wrong one.
pub(crate) async fn wait_for_code(
    server: Option<&mut callback::CallbackServer>,
    callbacks: &dyn LoginCallbacks,
    state: &str,
    prompt: (&str, Option<&str>),
    mismatch: &str,
) -> Result<(String, String), OAuthError> {
    let checked = |input: &str| -> Result<Option<(String, String)>, OAuthError> {
        let (code, pasted_state) = parse_authorization_input(input);
        if let Some(pasted) = &pasted_state
            && pasted != state
        {
            return Err(OAuthError::failed(mismatch));
        }
        Ok(code
            .filter(|c| !c.is_empty())
            .map(|c| (c, pasted_state.unwrap_or_else(|| state.to_owned()))))
    };
    if let Some(server) = server {
        if callbacks.offers_manual_input() {
            tokio::select! {
                callback = server.code() => if let Some(callback) = callback {
                    return Ok((callback.code, callback.state.unwrap_or_else(|| state.to_owned())));
                },
                pasted = callbacks.manual_input() => match pasted {
                    None => return Err(OAuthError::Cancelled),
                    Some(input) => if let Some(found) = checked(&input)? {
                        return Ok(found);
                    },
                },
            }
        } else if let Some(callback) = server.code().await {
            return Ok((callback.code, callback.state.unwrap_or_else(|| state.to_owned())));
        }
    }
    let input = callbacks
        .prompt(prompt.0, prompt.1)
        .await
        .ok_or(OAuthError::Cancelled)?;
    checked(&input)?.ok_or_else(|| OAuthError::failed("Missing authorization code"))
}

/// The claims of a JWT, unverified (pi's `decodeJwt`).
pub(crate) fn jwt_claims(token: &str) -> Option<Value> {
    use base64::Engine;
    let mut parts = token.split('.');
    let (_, payload, _) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    serde_json::from_slice(&bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_input_is_read_as_pi_reads_it() {
        let some = |s: &str| Some(s.to_owned());
        assert_eq!(
            parse_authorization_input("http://localhost:1455/auth/callback?code=abc&state=xyz"),
            (some("abc"), some("xyz"))
        );
        assert_eq!(parse_authorization_input("abc#xyz"), (some("abc"), some("xyz")));
        assert_eq!(
            parse_authorization_input("code=abc&state=xyz"),
            (some("abc"), some("xyz"))
        );
        assert_eq!(parse_authorization_input(" abc "), (some("abc"), None));
        assert_eq!(parse_authorization_input("  "), (None, None));
    }

    #[test]
    fn the_test_base_url_keeps_pis_paths() {
        let endpoints = OAuthEndpoints {
            base_url: Some("http://127.0.0.1:9/".into()),
            ..OAuthEndpoints::default()
        };
        assert_eq!(
            endpoints.url("https://platform.claude.com/v1/oauth/token"),
            "http://127.0.0.1:9/v1/oauth/token"
        );
        assert_eq!(
            OAuthEndpoints::default().url("https://auth.openai.com/oauth/token"),
            "https://auth.openai.com/oauth/token"
        );
    }

    #[test]
    fn credentials_keep_unknown_fields_and_debug_hides_tokens() {
        let text =
            r#"{"refresh":"r-token-0123456789","access":"a-token-0123456789","expires":5,"accountId":"acc","x":1}"#;
        let credentials: OAuthCredentials = serde_json::from_str(text).unwrap();
        assert_eq!(credentials.account_id(), Some("acc"));
        assert_eq!(serde_json::to_string(&credentials).unwrap(), text);
        let debug = format!("{credentials:?}");
        assert!(!debug.contains("a-token") && !debug.contains("r-token"), "{debug}");
        assert!(credentials.is_expired(5) && !credentials.is_expired(4));
    }
}
