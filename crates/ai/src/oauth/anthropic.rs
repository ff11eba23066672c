//! Anthropic (Claude Pro/Max): authorization code with PKCE, the verifier doubling as the
//! state, a callback on port 53692, and a JSON token endpoint.

use serde_json::{Value, json};

use super::callback::{CallbackServer, CallbackSpec};
use super::common::{LoginCallbacks, OAuthCredentials, OAuthEndpoints, OAuthError, now_ms, wait_for_code};
use super::pkce;

const CLIENT_ID: &str = "9d1c250a-e61b-44d9-88ed-5944d1962f5e";
const AUTHORIZE_URL: &str = "https://claude.ai/oauth/authorize";
const TOKEN_URL: &str = "https://platform.claude.com/v1/oauth/token";
const CALLBACK_PORT: u16 = 53692;
const CALLBACK_PATH: &str = "/callback";
const SCOPES: &str =
    "org:create_api_key user:profile user:inference user:sessions:claude_code user:mcp_servers user:file_upload";
/// pi subtracts five minutes from the token's lifetime.
const EXPIRY_MARGIN_MS: i64 = 5 * 60 * 1000;

pub(super) async fn login(
    callbacks: &dyn LoginCallbacks,
    endpoints: &OAuthEndpoints,
) -> Result<OAuthCredentials, OAuthError> {
    let pkce = pkce::generate()?;
    let spec = CallbackSpec {
        path: CALLBACK_PATH,
        state: pkce.verifier.clone(),
        state_first: true,
        success: "Anthropic authentication completed. You can close this window.",
        provider: "Anthropic",
    };
    let port = endpoints.callback_port.unwrap_or(CALLBACK_PORT);
    let mut server = CallbackServer::start(&endpoints.callback_host, port, spec)
        .await
        .map_err(|error| OAuthError::failed(error.to_string()))?;
    let redirect_uri = format!("http://localhost:{}{CALLBACK_PATH}", server.port());
    let mut url = reqwest::Url::parse(&endpoints.url(AUTHORIZE_URL)).map_err(|e| OAuthError::failed(e.to_string()))?;
    url.query_pairs_mut()
        .append_pair("code", "true")
        .append_pair("client_id", CLIENT_ID)
        .append_pair("response_type", "code")
        .append_pair("redirect_uri", &redirect_uri)
        .append_pair("scope", SCOPES)
        .append_pair("code_challenge", &pkce.challenge)
        .append_pair("code_challenge_method", "S256")
        .append_pair("state", &pkce.verifier);
    callbacks.on_auth(
        url.as_str(),
        Some(
            "Complete login in your browser. If the browser is on another machine, paste the final redirect URL here.",
        ),
    );
    let (code, state) = wait_for_code(
        Some(&mut server),
        callbacks,
        &pkce.verifier,
        (
            "Paste the authorization code or full redirect URL:",
            Some(&redirect_uri),
        ),
        "OAuth state mismatch",
    )
    .await?;
    drop(server);
    callbacks.progress("Exchanging authorization code for tokens...");
    let token_url = endpoints.url(TOKEN_URL);
    let body = json!({
        "grant_type": "authorization_code",
        "client_id": CLIENT_ID,
        "code": code,
        "state": state,
        "redirect_uri": redirect_uri,
        "code_verifier": pkce.verifier,
    });
    let text = post_json(&token_url, &body).await.map_err(|details| {
        OAuthError::failed(format!(
            "Token exchange request failed. url={token_url}; redirect_uri={redirect_uri}; response_type=authorization_code; details={details}"
        ))
    })?;
    tokens(&text).map_err(|details| {
        OAuthError::failed(format!(
            "Token exchange returned invalid JSON. url={token_url}; body={text}; details={details}"
        ))
    })
}

pub(super) async fn refresh(refresh_token: &str, endpoints: &OAuthEndpoints) -> Result<OAuthCredentials, OAuthError> {
    let token_url = endpoints.url(TOKEN_URL);
    let body = json!({"grant_type": "refresh_token", "client_id": CLIENT_ID, "refresh_token": refresh_token});
    let text = post_json(&token_url, &body).await.map_err(|details| {
        OAuthError::failed(format!(
            "Anthropic token refresh request failed. url={token_url}; details={details}"
        ))
    })?;
    tokens(&text).map_err(|details| {
        OAuthError::failed(format!(
            "Anthropic token refresh returned invalid JSON. url={token_url}; body={text}; details={details}"
        ))
    })
}

/// The credentials of a token response.
fn tokens(text: &str) -> Result<OAuthCredentials, String> {
    let data: Value = serde_json::from_str(text).map_err(|e| format!("SyntaxError: {e}"))?;
    let field = |name: &str| data.get(name).and_then(Value::as_str).map(str::to_owned);
    let (Some(access), Some(refresh)) = (field("access_token"), field("refresh_token")) else {
        return Err("TypeError: missing access_token or refresh_token".to_owned());
    };
    let expires_in = data.get("expires_in").and_then(Value::as_f64).unwrap_or(0.0);
    let credentials = OAuthCredentials {
        refresh,
        access,
        expires: now_ms() + (expires_in * 1000.0) as i64 - EXPIRY_MARGIN_MS,
        extra: serde_json::Map::new(),
    };
    credentials.register_secrets();
    Ok(credentials)
}

/// POSTs JSON; the body text, or pi's `HTTP request failed. …` description.
async fn post_json(url: &str, body: &Value) -> Result<String, String> {
    let response = super::common::client()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .body(body.to_string())
        .send()
        .await
        .map_err(|error| format!("Error: {error}"))?;
    let status = response.status().as_u16();
    let text = response.text().await.map_err(|error| format!("Error: {error}"))?;
    if !(200..300).contains(&status) {
        return Err(format!(
            "Error: HTTP request failed. status={status}; url={url}; body={text}"
        ));
    }
    Ok(text)
}
