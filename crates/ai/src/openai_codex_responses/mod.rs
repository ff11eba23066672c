//! The `openai-codex-responses` wire API: ChatGPT-plan Codex, the Responses API behind
//! `https://chatgpt.com/backend-api`, `POST {baseUrl}/codex/responses` with `stream: true` (over
//! server-sent events; pi-ai 0.73.1 tries a WebSocket first and falls back to these).
//!
//! What pi-ai sends, given the ChatGPT login's access token as the key (pi's `/login` stores it in
//! `auth.json`; building that login is another task):
//!
//! * the URL: the base URL (default `https://chatgpt.com/backend-api`) with `/codex/responses`
//!   appended unless it already ends so (`…/codex` gets `/responses`);
//! * the headers: the model's and the call's, then — replacing those — `authorization: Bearer
//!   <token>`, `chatgpt-account-id` (the `chatgpt_account_id` of the token's
//!   `https://api.openai.com/auth` claim), `originator: pi`, `user-agent: pi (<os> <release>;
//!   <arch>)`, `openai-beta: responses=experimental`, `accept: text/event-stream`,
//!   `content-type: application/json`, and the session id as `session_id` and
//!   `x-client-request-id`;
//! * the body: `model`, `store: false`, `stream: true`, the system prompt as `instructions` (`You
//!   are a helpful assistant.` without one; it is not an `input` item), `input` (as
//!   [`crate::openai_responses`] builds it), `text: {verbosity: "low"}`, `include:
//!   ["reasoning.encrypted_content"]`, `prompt_cache_key` (the session id), `tool_choice` (`auto`
//!   unless the call forces one), `parallel_tool_calls: true`, `temperature`, `tools` (`strict:
//!   null`) and, for a thinking level, `reasoning: {effort, summary: "auto"}` (the level's
//!   `thinkingLevelMap` value). No output-token limit.
//!
//! The stream is the Responses API's ([`crate::openai_responses::ResponsesProtocol`]).

use base64::Engine;
use pi_agent_core::{AssistantMessageStream, LlmContext, Model, StreamOptions, ToolChoice};
use serde_json::{Map, Value, json};

use crate::driver::{self, PreparedRequest};
use crate::http::HttpClient;
use crate::openai_responses::ResponsesProtocol;
use crate::openai_responses::request::{effort, input, tool_choice};
use crate::transform::requested_level;

/// The `api` value of this wire API.
pub const API: &str = "openai-codex-responses";

/// The base URL when the model has none.
pub const DEFAULT_BASE_URL: &str = "https://chatgpt.com/backend-api";

/// The claim of the access token that holds the account.
const AUTH_CLAIM: &str = "https://api.openai.com/auth";

/// The instructions sent when there is no system prompt.
const DEFAULT_INSTRUCTIONS: &str = "You are a helpful assistant.";

/// Why a request could not be built; [`std::fmt::Display`] is pi-ai's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodexError {
    /// No token.
    #[error("No API key for provider: {0}")]
    NoKey(String),
    /// The token is not a JWT with a ChatGPT account id.
    #[error("Failed to extract accountId from token")]
    NoAccountId,
}

/// The request URL of a base URL.
pub(crate) fn url(base_url: &str) -> String {
    let raw = if base_url.trim().is_empty() {
        DEFAULT_BASE_URL
    } else {
        base_url
    };
    let normalized = raw.trim_end_matches('/');
    if normalized.ends_with("/codex/responses") {
        normalized.to_owned()
    } else if normalized.ends_with("/codex") {
        format!("{normalized}/responses")
    } else {
        format!("{normalized}/codex/responses")
    }
}

/// The ChatGPT account id in an access token (a JWT; its payload's `https://api.openai.com/auth`
/// claim). The signature is not checked: the server does that.
pub fn account_id(token: &str) -> Result<String, CodexError> {
    let parts: Vec<&str> = token.split('.').collect();
    let [_, payload, _] = parts.as_slice() else {
        return Err(CodexError::NoAccountId);
    };
    let payload = payload.trim_end_matches('=');
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(payload))
        .map_err(|_| CodexError::NoAccountId)?;
    let claims: Value = serde_json::from_slice(&bytes).map_err(|_| CodexError::NoAccountId)?;
    claims
        .get(AUTH_CLAIM)
        .and_then(|auth| auth.get("chatgpt_account_id"))
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
        .ok_or(CodexError::NoAccountId)
}

/// `pi (<os> <release>; <arch>)` with Node's names (`linux`, `darwin`, `win32`; `x64`, `arm64`).
pub(crate) fn user_agent() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        "x86" => "ia32",
        other => other,
    };
    format!("pi ({os} {}; {arch})", os_release())
}

#[cfg(unix)]
fn os_release() -> String {
    nix::sys::utsname::uname()
        .map(|name| name.release().to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(not(unix))]
fn os_release() -> String {
    String::new()
}

/// The request headers (see the module docs).
pub(crate) fn headers(model: &Model, options: &StreamOptions, token: &str, account: &str) -> Vec<(String, String)> {
    let mut own = vec![
        ("authorization".to_owned(), format!("Bearer {token}")),
        ("chatgpt-account-id".to_owned(), account.to_owned()),
        ("originator".to_owned(), "pi".to_owned()),
        ("user-agent".to_owned(), user_agent()),
        ("openai-beta".to_owned(), "responses=experimental".to_owned()),
        ("accept".to_owned(), "text/event-stream".to_owned()),
        ("content-type".to_owned(), "application/json".to_owned()),
    ];
    if let Some(session) = options.session_id.as_deref().filter(|id| !id.is_empty()) {
        own.push(("session_id".to_owned(), session.to_owned()));
        own.push(("x-client-request-id".to_owned(), session.to_owned()));
    }
    // The given headers first; the API's own replace them.
    let given = model.headers.iter().flatten().chain(&options.headers);
    let mut headers: Vec<(String, String)> = Vec::new();
    for (name, value) in given.map(|(n, v)| (n.clone(), v.clone())).chain(own) {
        headers.retain(|(existing, _)| !existing.eq_ignore_ascii_case(&name));
        headers.push((name, value));
    }
    headers
}

/// The JSON body (see the module docs).
pub(crate) fn body(model: &Model, context: &LlmContext<'_>, options: &StreamOptions) -> Value {
    let without_prompt = LlmContext {
        system_prompt: "",
        ..*context
    };
    let instructions = if context.system_prompt.is_empty() {
        DEFAULT_INSTRUCTIONS
    } else {
        context.system_prompt
    };
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("store".into(), json!(false));
    body.insert("stream".into(), json!(true));
    body.insert("instructions".into(), json!(instructions));
    body.insert("input".into(), Value::Array(input(model, &without_prompt)));
    body.insert("text".into(), json!({"verbosity": "low"}));
    body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    if let Some(session) = options.session_id.as_deref().filter(|id| !id.is_empty()) {
        body.insert("prompt_cache_key".into(), json!(session));
    }
    let choice = options.tool_choice.as_ref().unwrap_or(&ToolChoice::Auto);
    body.insert("tool_choice".into(), tool_choice(choice));
    body.insert("parallel_tool_calls".into(), json!(true));
    if let Some(temperature) = options.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if !context.tools.is_empty() {
        let tools: Vec<Value> = context
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "name": tool.name(),
                    "description": tool.description(),
                    "parameters": tool.parameters().schema(),
                    "strict": null,
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(level) = requested_level(model, options) {
        let mapped = model.thinking_level_map.as_ref().and_then(|map| map.get(level.name()));
        let effort = match mapped {
            Some(Some(value)) => Some(value.clone()),
            // A level the map sets to null sends no reasoning.
            Some(None) => None,
            None => Some(effort(level).to_owned()),
        };
        if let Some(effort) = effort {
            body.insert("reasoning".into(), json!({"effort": effort, "summary": "auto"}));
        }
    }
    Value::Object(body)
}

/// Builds the request for one response; the error when there is no token or it names no account.
pub fn prepare(
    model: &Model,
    context: &LlmContext<'_>,
    options: &StreamOptions,
) -> Result<PreparedRequest, CodexError> {
    let token = options
        .api_key
        .clone()
        .filter(|key| !key.is_empty())
        .ok_or_else(|| CodexError::NoKey(model.provider.clone()))?;
    let account = account_id(&token)?;
    Ok(PreparedRequest {
        url: url(&model.base_url),
        headers: headers(model, options, &token, &account),
        body: body(model, context, options),
        api_key: Some(token),
        hooks: options.provider_hooks.clone(),
    })
}

/// Streams one response of `model` (see the module docs). The stream never fails: every failure
/// is its final `error` event.
pub fn stream(
    client: &HttpClient,
    model: &Model,
    context: &LlmContext<'_>,
    options: &StreamOptions,
) -> AssistantMessageStream {
    if let Some(token) = options.api_key.as_deref().filter(|key| !key.is_empty()) {
        crate::redact::register_secret(token);
    }
    match prepare(model, context, options) {
        Ok(request) => driver::drive(
            client.clone(),
            model,
            request,
            ResponsesProtocol::new(),
            options.cancel.clone(),
        ),
        Err(error) => driver::failed(model, error.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(claims: &Value) -> String {
        let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        format!(
            "{}.{}.c2ln",
            engine.encode(r#"{"alg":"RS256"}"#),
            engine.encode(claims.to_string())
        )
    }

    #[test]
    fn urls() {
        for (base, expected) in [
            ("", "https://chatgpt.com/backend-api/codex/responses"),
            (
                "https://chatgpt.com/backend-api",
                "https://chatgpt.com/backend-api/codex/responses",
            ),
            (
                "https://chatgpt.com/backend-api/",
                "https://chatgpt.com/backend-api/codex/responses",
            ),
            ("http://127.0.0.1:1/x/codex", "http://127.0.0.1:1/x/codex/responses"),
            (
                "http://127.0.0.1:1/x/codex/responses/",
                "http://127.0.0.1:1/x/codex/responses",
            ),
        ] {
            assert_eq!(url(base), expected, "{base}");
        }
    }

    #[test]
    fn the_account_id_comes_from_the_tokens_auth_claim() {
        let good = token(&json!({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-1"}}));
        assert_eq!(account_id(&good), Ok("acct-1".to_owned()));
        for bad in [
            "sk-not-a-jwt".to_owned(),
            token(&json!({"sub": "x"})),
            "a.!!!.c".to_owned(),
            token(&json!({"https://api.openai.com/auth": {"chatgpt_account_id": ""}})),
        ] {
            assert_eq!(account_id(&bad), Err(CodexError::NoAccountId), "{bad}");
        }
        assert_eq!(
            CodexError::NoAccountId.to_string(),
            "Failed to extract accountId from token"
        );
    }

    #[test]
    fn the_user_agent_uses_nodes_names() {
        let agent = user_agent();
        assert!(agent.starts_with("pi ("), "{agent}");
        assert!(!agent.contains("x86_64") && !agent.contains("macos"), "{agent}");
    }
}
