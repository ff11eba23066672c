//! The `azure-openai-responses` wire API: OpenAI's Responses API on Azure OpenAI,
//! `POST {baseUrl}/responses?api-version={version}` with `stream: true`.
//!
//! What pi-ai 0.73.1 sends through the `openai` SDK's `AzureOpenAI` client:
//!
//! * the base URL: `AZURE_OPENAI_BASE_URL`, else `https://{AZURE_OPENAI_RESOURCE_NAME}.openai.azure.com/openai/v1`,
//!   else the model's `baseUrl` (the catalog leaves it empty; `models.json` may set it). An Azure
//!   host (`*.openai.azure.com`, `*.cognitiveservices.azure.com`) given without a path, or with
//!   `/openai` only, gets `/openai/v1`;
//! * `api-version`: `AZURE_OPENAI_API_VERSION`, else `v1`;
//! * the key in the `api-key` header (no `authorization`), then the model's and the call's
//!   headers;
//! * the body of [`crate::openai_responses`] with the deployment name as `model` — the model's
//!   entry in `AZURE_OPENAI_DEPLOYMENT_NAME_MAP` (`model=deployment,…`), else the model id — and
//!   without `store`.
//!
//! The stream is the Responses API's ([`crate::openai_responses::ResponsesProtocol`]).

use std::sync::Arc;

use pi_agent_core::{AssistantMessageStream, LlmContext, Model, StreamOptions};

use crate::driver::{self, PreparedRequest};
use crate::google_vertex::Env;
use crate::http::HttpClient;
use crate::openai_responses::ResponsesProtocol;

/// The `api` value of this wire API.
pub const API: &str = "azure-openai-responses";

/// The `api-version` when `AZURE_OPENAI_API_VERSION` gives none.
pub const DEFAULT_API_VERSION: &str = "v1";

/// Why a request could not be built; [`std::fmt::Display`] is pi-ai's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AzureError {
    /// No key from the call, the registry or `AZURE_OPENAI_API_KEY`.
    #[error(
        "Azure OpenAI API key is required. Set AZURE_OPENAI_API_KEY environment variable or pass it as an argument."
    )]
    NoKey,
    /// No base URL from the environment or the model.
    #[error(
        "Azure OpenAI base URL is required. Set AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME, or pass azureBaseUrl, azureResourceName, or model.baseUrl."
    )]
    NoBaseUrl,
    /// The base URL is not a URL.
    #[error("Invalid Azure OpenAI base URL: {0}")]
    InvalidBaseUrl(String),
}

/// A variable's value, when it is set and not blank.
fn set(env: &dyn Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    env(name)
        .map(|value| value.trim().to_owned())
        .filter(|value| !value.is_empty())
}

/// The deployment of `model_id` in a `AZURE_OPENAI_DEPLOYMENT_NAME_MAP` value
/// (`model=deployment` pairs separated by commas; as in pi-ai, a pair's text after a second `=`
/// is ignored).
pub(crate) fn deployment_in_map(map: &str, model_id: &str) -> Option<String> {
    let mut found = None;
    for entry in map.split(',').map(str::trim).filter(|entry| !entry.is_empty()) {
        let mut parts = entry.split('=');
        let (Some(model), Some(deployment)) = (parts.next(), parts.next()) else {
            continue;
        };
        if model.is_empty() || deployment.is_empty() {
            continue;
        }
        if model.trim() == model_id {
            found = Some(deployment.trim().to_owned());
        }
    }
    found.filter(|deployment| !deployment.is_empty())
}

/// The base URL with an Azure host's missing `/openai/v1` added, or pi-ai's error text.
pub(crate) fn normalize_base_url(base_url: &str) -> Result<String, AzureError> {
    let trimmed = base_url.trim().trim_end_matches('/');
    let mut url = reqwest::Url::parse(trimmed).map_err(|_| AzureError::InvalidBaseUrl(base_url.to_owned()))?;
    let azure_host = url
        .host_str()
        .is_some_and(|host| host.ends_with(".openai.azure.com") || host.ends_with(".cognitiveservices.azure.com"));
    let path = url.path().trim_end_matches('/').to_owned();
    if azure_host && (path.is_empty() || path == "/openai") {
        url.set_path("/openai/v1");
        url.set_query(None);
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

/// The request URL, or the error text when no base URL is known or it is not a URL.
pub(crate) fn url(model: &Model, env: &dyn Fn(&str) -> Option<String>) -> Result<String, AzureError> {
    let version = set(env, "AZURE_OPENAI_API_VERSION").unwrap_or_else(|| DEFAULT_API_VERSION.to_owned());
    let base = set(env, "AZURE_OPENAI_BASE_URL")
        .or_else(|| {
            set(env, "AZURE_OPENAI_RESOURCE_NAME").map(|name| format!("https://{name}.openai.azure.com/openai/v1"))
        })
        .or_else(|| Some(model.base_url.clone()).filter(|url| !url.is_empty()))
        .ok_or(AzureError::NoBaseUrl)?;
    let base = normalize_base_url(&base)?;
    let mut url = reqwest::Url::parse(&format!("{base}/responses")).map_err(|_| AzureError::InvalidBaseUrl(base))?;
    url.query_pairs_mut().append_pair("api-version", &version);
    Ok(url.into())
}

/// Builds the request for one response, reading the variables through `env`; the error text when
/// there is no key or no base URL.
pub fn prepare(
    model: &Model,
    context: &LlmContext<'_>,
    options: &StreamOptions,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<PreparedRequest, AzureError> {
    let api_key = options
        .api_key
        .clone()
        .filter(|key| !key.is_empty())
        .or_else(|| set(env, "AZURE_OPENAI_API_KEY"))
        .ok_or(AzureError::NoKey)?;
    let url = url(model, env)?;
    let deployment = set(env, "AZURE_OPENAI_DEPLOYMENT_NAME_MAP")
        .and_then(|map| deployment_in_map(&map, &model.id))
        .unwrap_or_else(|| model.id.clone());
    let mut body = crate::openai_responses::request::body(model, context, options);
    if let Some(object) = body.as_object_mut() {
        object.insert("model".into(), serde_json::Value::String(deployment));
        object.shift_remove("store");
    }
    let own = vec![("api-key".to_owned(), api_key.clone())];
    Ok(PreparedRequest {
        url,
        headers: crate::google::headers(own, model, options),
        body,
        api_key: Some(api_key),
        hooks: options.provider_hooks.clone(),
    })
}

/// Streams one response of `model` with the variables of the process (see the module docs).
pub fn stream(
    client: &HttpClient,
    model: &Model,
    context: &LlmContext<'_>,
    options: &StreamOptions,
) -> AssistantMessageStream {
    stream_with_env(
        client,
        model,
        context,
        options,
        Arc::new(|name| std::env::var(name).ok()),
    )
}

/// Streams one response of `model`, reading the `AZURE_OPENAI_*` variables through `env`. The
/// stream never fails: every failure is its final `error` event.
pub fn stream_with_env(
    client: &HttpClient,
    model: &Model,
    context: &LlmContext<'_>,
    options: &StreamOptions,
    env: Env,
) -> AssistantMessageStream {
    match prepare(model, context, options, &*env) {
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

    #[test]
    fn deployment_maps() {
        let map = "gpt-5-mini=my-gpt5-mini, other=x,broken,=y,z=";
        assert_eq!(deployment_in_map(map, "gpt-5-mini").as_deref(), Some("my-gpt5-mini"));
        assert_eq!(deployment_in_map(map, "other").as_deref(), Some("x"));
        assert_eq!(deployment_in_map(map, "broken"), None);
        assert_eq!(deployment_in_map(map, "z"), None);
        assert_eq!(deployment_in_map("a=b=c", "a").as_deref(), Some("b"));
    }

    #[test]
    fn azure_hosts_get_openai_v1() {
        for (given, expected) in [
            ("https://res.openai.azure.com", "https://res.openai.azure.com/openai/v1"),
            (
                "https://res.openai.azure.com/",
                "https://res.openai.azure.com/openai/v1",
            ),
            (
                "https://res.openai.azure.com/openai/",
                "https://res.openai.azure.com/openai/v1",
            ),
            (
                "https://res.cognitiveservices.azure.com/openai",
                "https://res.cognitiveservices.azure.com/openai/v1",
            ),
            (
                "https://res.openai.azure.com/openai/v1/",
                "https://res.openai.azure.com/openai/v1",
            ),
            ("https://proxy.example.com", "https://proxy.example.com"),
            ("http://127.0.0.1:8080/openai/v1", "http://127.0.0.1:8080/openai/v1"),
        ] {
            assert_eq!(normalize_base_url(given).as_deref(), Ok(expected), "{given}");
        }
        assert_eq!(
            normalize_base_url("not a url").map_err(|e| e.to_string()),
            Err("Invalid Azure OpenAI base URL: not a url".to_owned())
        );
    }

    #[test]
    fn base_url_resource_name_and_version_from_the_environment() {
        let model = Model {
            base_url: "https://from-models-json.openai.azure.com".into(),
            ..Model::unknown()
        };
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned())
        };
        assert_eq!(
            url(&model, &env(&[])).as_deref(),
            Ok("https://from-models-json.openai.azure.com/openai/v1/responses?api-version=v1")
        );
        assert_eq!(
            url(
                &model,
                &env(&[
                    ("AZURE_OPENAI_RESOURCE_NAME", "res"),
                    ("AZURE_OPENAI_API_VERSION", "2025-04-01-preview")
                ])
            )
            .as_deref(),
            Ok("https://res.openai.azure.com/openai/v1/responses?api-version=2025-04-01-preview")
        );
        assert_eq!(
            url(
                &model,
                &env(&[
                    ("AZURE_OPENAI_RESOURCE_NAME", "res"),
                    ("AZURE_OPENAI_BASE_URL", "https://gw.example.com/az")
                ])
            )
            .as_deref(),
            Ok("https://gw.example.com/az/responses?api-version=v1")
        );
        assert_eq!(url(&Model::unknown(), &env(&[])), Err(AzureError::NoBaseUrl));
    }
}
