//! GitHub Copilot: GitHub's device flow (the user types a code at a GitHub page), then the
//! GitHub token is exchanged for a Copilot token — the "refresh" is that exchange again.

use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::common::{LoginCallbacks, OAuthCredentials, OAuthEndpoints, OAuthError};

const CLIENT_ID: &str = "Iv1.b507a08c87ecfe98";
const USER_AGENT: &str = "GitHubCopilotChat/0.35.0";
/// The headers pi sends Copilot's API (also the catalog's for the Copilot models).
pub(crate) const COPILOT_HEADERS: [(&str, &str); 4] = [
    ("User-Agent", USER_AGENT),
    ("Editor-Version", "vscode/1.107.0"),
    ("Editor-Plugin-Version", "copilot-chat/0.35.0"),
    ("Copilot-Integration-Id", "vscode-chat"),
];
const INITIAL_POLL_MULTIPLIER: f64 = 1.2;
const SLOW_DOWN_POLL_MULTIPLIER: f64 = 1.4;
const EXPIRY_MARGIN_MS: i64 = 5 * 60 * 1000;

/// The host of a GitHub Enterprise URL or domain (pi's `normalizeDomain`); `None` for blank or
/// unreadable input.
///
/// ```
/// use pi_ai::oauth::normalize_domain;
/// assert_eq!(normalize_domain("https://company.ghe.com/login").as_deref(), Some("company.ghe.com"));
/// assert_eq!(normalize_domain(" company.ghe.com ").as_deref(), Some("company.ghe.com"));
/// assert_eq!(normalize_domain(""), None);
/// ```
pub fn normalize_domain(input: &str) -> Option<String> {
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return None;
    }
    let url = if trimmed.contains("://") {
        reqwest::Url::parse(trimmed)
    } else {
        reqwest::Url::parse(&format!("https://{trimmed}"))
    };
    url.ok()?.host_str().map(str::to_owned)
}

/// Copilot's API base URL: from the token's `proxy-ep=proxy.…` (as `https://api.…`), else
/// `https://copilot-api.<enterprise domain>`, else `https://api.individual.githubcopilot.com`
/// (pi's `getGitHubCopilotBaseUrl`).
///
/// ```
/// use pi_ai::oauth::copilot_base_url;
/// let token = "tid=1;exp=9;proxy-ep=proxy.business.githubcopilot.com;st=dotcom";
/// assert_eq!(copilot_base_url(Some(token), None), "https://api.business.githubcopilot.com");
/// assert_eq!(copilot_base_url(Some("x"), Some("ghe.example")), "https://copilot-api.ghe.example");
/// assert_eq!(copilot_base_url(None, None), "https://api.individual.githubcopilot.com");
/// ```
pub fn copilot_base_url(token: Option<&str>, enterprise_domain: Option<&str>) -> String {
    let from_token = token.and_then(|token| {
        let start = token.find("proxy-ep=")? + "proxy-ep=".len();
        let host = token[start..].split(';').next().filter(|h| !h.is_empty())?;
        let host = host
            .strip_prefix("proxy.")
            .map_or(host.to_owned(), |rest| format!("api.{rest}"));
        Some(format!("https://{host}"))
    });
    if let Some(url) = from_token {
        return url;
    }
    match enterprise_domain.filter(|d| !d.is_empty()) {
        Some(domain) => format!("https://copilot-api.{domain}"),
        None => "https://api.individual.githubcopilot.com".to_owned(),
    }
}

struct Urls {
    device_code: String,
    access_token: String,
    copilot_token: String,
}

fn urls(domain: &str, endpoints: &OAuthEndpoints) -> Urls {
    Urls {
        device_code: endpoints.url(&format!("https://{domain}/login/device/code")),
        access_token: endpoints.url(&format!("https://{domain}/login/oauth/access_token")),
        copilot_token: endpoints.url(&format!("https://api.{domain}/copilot_internal/v2/token")),
    }
}

/// Sends `request`; the JSON body, or pi's `<status> <reason>: <body>`.
async fn fetch_json(request: reqwest::RequestBuilder) -> Result<Value, OAuthError> {
    let response = request.send().await.map_err(|e| OAuthError::failed(e.to_string()))?;
    let status = response.status();
    let text = response.text().await.map_err(|e| OAuthError::failed(e.to_string()))?;
    if !status.is_success() {
        return Err(OAuthError::failed(format!(
            "{} {}: {text}",
            status.as_u16(),
            status.canonical_reason().unwrap_or_default()
        )));
    }
    serde_json::from_str(&text).map_err(|e| OAuthError::failed(e.to_string()))
}

fn form_post(url: &str, form: &[(&str, &str)]) -> reqwest::RequestBuilder {
    super::common::client()
        .post(url)
        .header("accept", "application/json")
        .header("user-agent", USER_AGENT)
        .form(form)
}

pub(super) async fn login(
    callbacks: &dyn LoginCallbacks,
    endpoints: &OAuthEndpoints,
    cancel: &CancellationToken,
) -> Result<OAuthCredentials, OAuthError> {
    let input = callbacks
        .prompt(
            "GitHub Enterprise URL/domain (blank for github.com)",
            Some("company.ghe.com"),
        )
        .await
        .ok_or(OAuthError::Cancelled)?;
    if cancel.is_cancelled() {
        return Err(OAuthError::Cancelled);
    }
    let enterprise = normalize_domain(&input);
    if !input.trim().is_empty() && enterprise.is_none() {
        return Err(OAuthError::failed("Invalid GitHub Enterprise URL/domain"));
    }
    let domain = enterprise.clone().unwrap_or_else(|| "github.com".to_owned());
    let urls = urls(&domain, endpoints);
    let device = fetch_json(form_post(
        &urls.device_code,
        &[("client_id", CLIENT_ID), ("scope", "read:user")],
    ))
    .await?;
    let text = |name: &str| device.get(name).and_then(Value::as_str).map(str::to_owned);
    let number = |name: &str| device.get(name).and_then(Value::as_f64);
    let (Some(device_code), Some(user_code), Some(verification_uri), Some(interval), Some(expires_in)) = (
        text("device_code"),
        text("user_code"),
        text("verification_uri"),
        number("interval"),
        number("expires_in"),
    ) else {
        return Err(OAuthError::failed("Invalid device code response fields"));
    };
    crate::register_secret(&device_code);
    callbacks.on_auth(&verification_uri, Some(&format!("Enter code: {user_code}")));
    let github_token = poll(&urls, &device_code, interval, expires_in, endpoints.poll_second, cancel).await?;
    crate::register_secret(&github_token);
    let credentials = copilot_token(&github_token, enterprise.as_deref(), endpoints).await?;
    callbacks.progress("Enabling models...");
    enable_models(&credentials.access, enterprise.as_deref(), endpoints).await;
    Ok(credentials)
}

/// Polls for the GitHub token as pi does: the interval (at least 1 s) × 1.2, after `slow_down`
/// the server's new interval (or 5 s more) × 1.4, until `expires_in` runs out.
async fn poll(
    urls: &Urls,
    device_code: &str,
    interval: f64,
    expires_in: f64,
    second: Duration,
    cancel: &CancellationToken,
) -> Result<String, OAuthError> {
    let start = tokio::time::Instant::now();
    let deadline = start + second.mul_f64(expires_in.max(0.0));
    // In seconds of `second`.
    let mut interval = interval.max(1.0);
    let mut multiplier = INITIAL_POLL_MULTIPLIER;
    let mut slow_downs = 0;
    while tokio::time::Instant::now() < deadline {
        let remaining = deadline.saturating_duration_since(tokio::time::Instant::now());
        let wait = second.mul_f64(interval * multiplier).min(remaining);
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = cancel.cancelled() => return Err(OAuthError::Cancelled),
        }
        let form = [
            ("client_id", CLIENT_ID),
            ("device_code", device_code),
            ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
        ];
        let raw = fetch_json(form_post(&urls.access_token, &form)).await?;
        if let Some(token) = raw.get("access_token").and_then(Value::as_str) {
            return Ok(token.to_owned());
        }
        if let Some(error) = raw.get("error").and_then(Value::as_str) {
            match error {
                "authorization_pending" => continue,
                "slow_down" => {
                    slow_downs += 1;
                    interval = match raw.get("interval").and_then(Value::as_f64) {
                        Some(new) if new > 0.0 => new,
                        _ => (interval + 5.0).max(1.0),
                    };
                    multiplier = SLOW_DOWN_POLL_MULTIPLIER;
                    continue;
                }
                _ => {
                    let suffix = raw
                        .get("error_description")
                        .and_then(Value::as_str)
                        .filter(|d| !d.is_empty())
                        .map(|d| format!(": {d}"))
                        .unwrap_or_default();
                    return Err(OAuthError::failed(format!("Device flow failed: {error}{suffix}")));
                }
            }
        }
    }
    if slow_downs > 0 {
        return Err(OAuthError::failed(
            "Device flow timed out after one or more slow_down responses. This is often caused by clock drift in WSL or VM environments. Please sync or restart the VM clock and try again.",
        ));
    }
    Err(OAuthError::failed("Device flow timed out"))
}

/// Exchanges the GitHub token for a Copilot token (pi's `refreshGitHubCopilotToken`).
pub(super) async fn copilot_token(
    github_token: &str,
    enterprise: Option<&str>,
    endpoints: &OAuthEndpoints,
) -> Result<OAuthCredentials, OAuthError> {
    let domain = enterprise.filter(|d| !d.is_empty()).unwrap_or("github.com");
    let url = urls(domain, endpoints).copilot_token;
    let mut request = super::common::client()
        .get(&url)
        .header("accept", "application/json")
        .header("authorization", format!("Bearer {github_token}"));
    for (name, value) in COPILOT_HEADERS {
        request = request.header(name, value);
    }
    let raw = fetch_json(request).await?;
    let (Some(token), Some(expires_at)) = (
        raw.get("token").and_then(Value::as_str),
        raw.get("expires_at").and_then(Value::as_f64),
    ) else {
        return Err(OAuthError::failed("Invalid Copilot token response fields"));
    };
    crate::register_secret(token);
    let mut extra = serde_json::Map::new();
    if let Some(domain) = enterprise.filter(|d| !d.is_empty()) {
        extra.insert("enterpriseUrl".to_owned(), Value::String(domain.to_owned()));
    }
    Ok(OAuthCredentials {
        refresh: github_token.to_owned(),
        access: token.to_owned(),
        expires: (expires_at * 1000.0) as i64 - EXPIRY_MARGIN_MS,
        extra,
    })
}

/// Accepts the policy of every Copilot model of the catalog (some, like Claude's, need it);
/// failures are ignored, as pi ignores them.
async fn enable_models(token: &str, enterprise: Option<&str>, endpoints: &OAuthEndpoints) {
    let base = match &endpoints.base_url {
        Some(base) => base.trim_end_matches('/').to_owned(),
        None => copilot_base_url(Some(token), enterprise),
    };
    let registry = crate::ModelRegistry::builtin();
    let ids: Vec<String> = registry
        .all()
        .iter()
        .filter(|model| model.provider == "github-copilot")
        .map(|model| model.id.clone())
        .collect();
    let client = super::common::client();
    let requests = ids.iter().map(|id| {
        let mut request = client
            .post(format!("{base}/models/{id}/policy"))
            .header("content-type", "application/json")
            .header("authorization", format!("Bearer {token}"))
            .header("openai-intent", "chat-policy")
            .header("x-interaction-type", "chat-policy")
            .body(r#"{"state":"enabled"}"#);
        for (name, value) in COPILOT_HEADERS {
            request = request.header(name, value);
        }
        async move {
            let _ = request.send().await;
        }
    });
    futures::future::join_all(requests).await;
}
