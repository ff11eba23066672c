//! OpenAI Codex (ChatGPT Plus/Pro): authorization code with PKCE, a random state, a callback
//! on port 1455, a form-encoded token endpoint, and the ChatGPT account id from the token.

use serde_json::Value;

use super::callback::{CallbackServer, CallbackSpec};
use super::common::{LoginCallbacks, OAuthCredentials, OAuthEndpoints, OAuthError, jwt_claims, now_ms, wait_for_code};
use super::pkce;

const CLIENT_ID: &str = "app_EMoamEEZ73f0CkXaXp7hrann";
const AUTHORIZE_URL: &str = "https://auth.openai.com/oauth/authorize";
const TOKEN_URL: &str = "https://auth.openai.com/oauth/token";
const CALLBACK_PORT: u16 = 1455;
const CALLBACK_PATH: &str = "/auth/callback";
const SCOPE: &str = "openid profile email offline_access";
const AUTH_CLAIM: &str = "https://api.openai.com/auth";

pub(super) async fn login(
    callbacks: &dyn LoginCallbacks,
    endpoints: &OAuthEndpoints,
) -> Result<OAuthCredentials, OAuthError> {
    let pkce = pkce::generate()?;
    let state: String = pkce::random_bytes::<16>()?.iter().map(|b| format!("{b:02x}")).collect();
    let port = endpoints.callback_port.unwrap_or(CALLBACK_PORT);
    let spec = CallbackSpec {
        path: CALLBACK_PATH,
        state: state.clone(),
        state_first: false,
        success: "OpenAI authentication completed. You can close this window.",
        provider: "OpenAI",
    };
    // pi goes on without the server when the port is taken: the code is then pasted.
    let mut server = CallbackServer::start(&endpoints.callback_host, port, spec).await.ok();
    let redirect_port = server.as_ref().map_or(port, CallbackServer::port);
    let redirect_uri = format!("http://localhost:{redirect_port}{CALLBACK_PATH}");
    let mut url = reqwest::Url::parse(&endpoints.url(AUTHORIZE_URL)).map_err(|e| OAuthError::failed(e.to_string()))?;
    url.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", CLIENT_ID)
        .append_pair("redirect_uri", &redirect_uri)
        .append_pair("scope", SCOPE)
        .append_pair("code_challenge", &pkce.challenge)
        .append_pair("code_challenge_method", "S256")
        .append_pair("state", &state)
        .append_pair("id_token_add_organizations", "true")
        .append_pair("codex_cli_simplified_flow", "true")
        .append_pair("originator", "pi");
    callbacks.on_auth(
        url.as_str(),
        Some("A browser window should open. Complete login to finish."),
    );
    let (code, _) = wait_for_code(
        server.as_mut(),
        callbacks,
        &state,
        ("Paste the authorization code (or full redirect URL):", None),
        "State mismatch",
    )
    .await?;
    drop(server);
    let form = [
        ("grant_type", "authorization_code"),
        ("client_id", CLIENT_ID),
        ("code", code.as_str()),
        ("code_verifier", pkce.verifier.as_str()),
        ("redirect_uri", redirect_uri.as_str()),
    ];
    let (access, refresh, expires) = token_request(&endpoints.url(TOKEN_URL), &form, "exchange").await?;
    with_account(access, refresh, expires)
}

pub(super) async fn refresh(refresh_token: &str, endpoints: &OAuthEndpoints) -> Result<OAuthCredentials, OAuthError> {
    let form = [
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh_token),
        ("client_id", CLIENT_ID),
    ];
    let (access, refresh, expires) = token_request(&endpoints.url(TOKEN_URL), &form, "refresh")
        .await
        .map_err(|error| match error {
            // pi words a transport failure of the refresh so.
            OAuthError::Failed(message) if !message.starts_with("OpenAI Codex") => {
                OAuthError::failed(format!("OpenAI Codex token refresh error: {message}"))
            }
            other => other,
        })?;
    with_account(access, refresh, expires)
}

fn with_account(access: String, refresh: String, expires: i64) -> Result<OAuthCredentials, OAuthError> {
    crate::register_secret(&access);
    crate::register_secret(&refresh);
    let account = account_id(&access).ok_or_else(|| OAuthError::failed("Failed to extract accountId from token"))?;
    let mut extra = serde_json::Map::new();
    extra.insert("accountId".to_owned(), Value::String(account));
    Ok(OAuthCredentials {
        refresh,
        access,
        expires,
        extra,
    })
}

/// The `chatgpt_account_id` of the token's `https://api.openai.com/auth` claim.
fn account_id(access: &str) -> Option<String> {
    let claims = jwt_claims(access)?;
    let id = claims.get(AUTH_CLAIM)?.get("chatgpt_account_id")?.as_str()?;
    (!id.is_empty()).then(|| id.to_owned())
}

/// POSTs the form; access, refresh and expiry, or pi's `OpenAI Codex token <what> failed …`.
async fn token_request(url: &str, form: &[(&str, &str)], what: &str) -> Result<(String, String, i64), OAuthError> {
    let response = super::common::client()
        .post(url)
        .form(form)
        .send()
        .await
        .map_err(|error| OAuthError::failed(error.to_string()))?;
    let status = response.status();
    if !status.is_success() {
        let text = response.text().await.unwrap_or_default();
        let text = if text.is_empty() {
            status.canonical_reason().unwrap_or_default().to_owned()
        } else {
            text
        };
        return Err(OAuthError::failed(format!(
            "OpenAI Codex token {what} failed ({}): {text}",
            status.as_u16()
        )));
    }
    let text = response
        .text()
        .await
        .map_err(|error| OAuthError::failed(error.to_string()))?;
    let json: Value = serde_json::from_str(&text).map_err(|error| OAuthError::failed(error.to_string()))?;
    let field = |name: &str| {
        json.get(name)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    match (
        field("access_token"),
        field("refresh_token"),
        json.get("expires_in").and_then(Value::as_f64),
    ) {
        (Some(access), Some(refresh), Some(expires_in)) => {
            crate::register_secret(&access);
            crate::register_secret(&refresh);
            Ok((access, refresh, now_ms() + (expires_in * 1000.0) as i64))
        }
        _ => Err(OAuthError::failed(format!(
            "OpenAI Codex token {what} response missing fields: {json}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;

    #[test]
    fn the_account_comes_from_the_auth_claim() {
        let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(r#"{"https://api.openai.com/auth":{"chatgpt_account_id":"acc-1"}}"#);
        assert_eq!(account_id(&format!("h.{payload}.s")).as_deref(), Some("acc-1"));
        assert_eq!(account_id("not-a-jwt"), None);
    }
}
