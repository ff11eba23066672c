//! The `google-vertex` wire API: Gemini on Vertex AI, `…/publishers/google/models/{id}:streamGenerateContent?alt=sse`.
//!
//! The body and the stream are those of [`crate::google`]; what differs is where the request goes
//! and how it authenticates, as pi-ai 0.73.1's Vertex provider (through Google's SDK) does it:
//!
//! * **API key** (Vertex express mode): the call's key, else `GOOGLE_CLOUD_API_KEY` (pi's
//!   placeholders `gcp-vertex-credentials` and `<…>` do not count), sent as `x-goog-api-key` to
//!   `https://aiplatform.googleapis.com/v1/publishers/google/models/{id}:streamGenerateContent`.
//! * **Application Default Credentials** otherwise: `GOOGLE_CLOUD_PROJECT` (or `GCLOUD_PROJECT`)
//!   and `GOOGLE_CLOUD_LOCATION` are required, and the request goes to
//!   `https://{location}-aiplatform.googleapis.com/v1/projects/{project}/locations/{location}/publishers/google/models/{id}:streamGenerateContent`
//!   (`aiplatform.googleapis.com` for `global`, `aiplatform.{us|eu}.rep.googleapis.com` for the
//!   multi-regions) with `Authorization: Bearer <token>`, the token from the credential file (a
//!   service account's signed JWT, or gcloud's `authorized_user` refresh token; see the `auth`
//!   module), cached until shortly before it expires.
//!
//! A model whose `baseUrl` is set and has no `{location}` placeholder (a proxy, a test server) is
//! sent to `{baseUrl}/v1/publishers/google/models/{id}:streamGenerateContent` (no `/v1` when the
//! base URL already names a version), whichever the authentication.

mod auth;

use std::sync::Arc;

use futures::StreamExt;
use pi_agent_core::{AssistantMessageStream, LlmContext, Model, StreamOptions};

use crate::driver::{self, PreparedRequest};
use crate::google::request::{self, Flavor};
use crate::google::{GoogleProtocol, headers};
use crate::http::HttpClient;

/// The `api` value of this wire API.
pub const API: &str = "google-vertex";

/// The API version in the URL.
const API_VERSION: &str = "v1";

/// The marker pi stores for a Vertex provider authenticated by Application Default Credentials.
const CREDENTIALS_MARKER: &str = "gcp-vertex-credentials";

/// pi-ai's text when no project is set.
pub const NO_PROJECT: &str =
    "Vertex AI requires a project ID. Set GOOGLE_CLOUD_PROJECT/GCLOUD_PROJECT or pass project in options.";

/// pi-ai's text when no location is set.
pub const NO_LOCATION: &str = "Vertex AI requires a location. Set GOOGLE_CLOUD_LOCATION or pass location in options.";

/// Looks an environment variable up.
pub type Env = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// The key to send, if any: the call's, else `GOOGLE_CLOUD_API_KEY`, never a placeholder.
fn api_key(options: &StreamOptions, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let key = options
        .api_key
        .as_deref()
        .map(str::trim)
        .filter(|key| !key.is_empty())
        .map(str::to_owned)
        .or_else(|| env("GOOGLE_CLOUD_API_KEY").map(|key| key.trim().to_owned()))?;
    let placeholder =
        key.starts_with('<') && key.ends_with('>') && key.len() > 2 && !key[1..key.len() - 1].contains('>');
    (!key.is_empty() && key != CREDENTIALS_MARKER && !placeholder).then_some(key)
}

/// The model's base URL when it is one to use: set, without the catalog's `{location}`.
fn custom_base_url(model: &Model) -> Option<&str> {
    let base = model.base_url.trim();
    (!base.is_empty() && !base.contains("{location}")).then_some(base)
}

/// Whether a path segment of the URL is an API version (`v1`, `v1beta1`).
fn names_a_version(base_url: &str) -> bool {
    let path = reqwest::Url::parse(base_url)
        .map(|url| url.path().to_owned())
        .unwrap_or_else(|_| base_url.to_owned());
    path.split('/').any(|segment| {
        let Some(rest) = segment.strip_prefix('v') else {
            return false;
        };
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        let tail = &rest[digits..];
        digits > 0
            && (tail.is_empty()
                || tail
                    .strip_prefix("beta")
                    .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit())))
    })
}

/// The model's resource path: `publishers/google/models/{id}` (an id naming its own collection is
/// kept, `owner/name` becomes `publishers/owner/models/name`).
fn model_resource(id: &str) -> String {
    if id.starts_with("publishers/") || id.starts_with("projects/") || id.starts_with("models/") {
        id.to_owned()
    } else if let Some((publisher, name)) = id.split_once('/') {
        format!("publishers/{publisher}/models/{name}")
    } else {
        format!("publishers/google/models/{id}")
    }
}

/// `base/version/path`, without the version when the base URL names one.
fn join(base: &str, path: &str) -> String {
    let base = base.trim_end_matches('/');
    if names_a_version(base) {
        format!("{base}/{path}")
    } else {
        format!("{base}/{API_VERSION}/{path}")
    }
}

/// The endpoint: the model's base URL, else the express endpoint for a key, else the regional one
/// of the project.
fn url(model: &Model, location: Option<(&str, &str)>) -> String {
    let method = format!("{}:streamGenerateContent?alt=sse", model_resource(&model.id));
    if let Some(base) = custom_base_url(model) {
        return join(base, &method);
    }
    match location {
        None => join("https://aiplatform.googleapis.com", &method),
        Some((project, location)) => {
            let host = match location {
                "global" => "https://aiplatform.googleapis.com".to_owned(),
                "us" | "eu" => format!("https://aiplatform.{location}.rep.googleapis.com"),
                other => format!("https://{other}-aiplatform.googleapis.com"),
            };
            join(&host, &format!("projects/{project}/locations/{location}/{method}"))
        }
    }
}

fn set(env: &dyn Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    env(name).filter(|value| !value.is_empty())
}

/// Streams one response of `model`, reading the environment of the process.
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

/// Streams one response of `model`, reading the variables (`GOOGLE_CLOUD_API_KEY`,
/// `GOOGLE_CLOUD_PROJECT`, `GOOGLE_APPLICATION_CREDENTIALS`, `HOME`, …) through `env`. The body
/// is built before this returns; the credential file is read and the token fetched when the stream
/// is first polled. The stream never fails: every failure is its final `error` event (`aborted`
/// when `options.cancel` fires, the token exchange included).
pub fn stream_with_env(
    client: &HttpClient,
    model: &Model,
    context: &LlmContext<'_>,
    options: &StreamOptions,
    env: Env,
) -> AssistantMessageStream {
    let body = request::body(model, context, options, Flavor::Vertex);
    let protocol = GoogleProtocol::new(model.provider.clone());
    if let Some(key) = api_key(options, &*env) {
        let own = vec![("x-goog-api-key".to_owned(), key.clone())];
        let request = PreparedRequest {
            url: url(model, None),
            headers: headers(own, model, options),
            body,
            api_key: Some(key),
            hooks: options.provider_hooks.clone(),
        };
        return driver::drive(client.clone(), model, request, protocol, options.cancel.clone());
    }
    let Some(project) = set(&*env, "GOOGLE_CLOUD_PROJECT").or_else(|| set(&*env, "GCLOUD_PROJECT")) else {
        return driver::failed(model, NO_PROJECT.to_owned());
    };
    let Some(location) = set(&*env, "GOOGLE_CLOUD_LOCATION") else {
        return driver::failed(model, NO_LOCATION.to_owned());
    };
    let url = url(model, Some((&project, &location)));
    let source = auth::credential_path(&*env);
    let client = client.clone();
    let model = model.clone();
    let options = options.clone();
    let cancel = options.cancel.clone();
    let authenticated = async move {
        let token = tokio::select! {
            _ = cancel.cancelled() => Err(None),
            token = auth::access_token(&client, source, &cancel) => token.map_err(Some),
        };
        let token = match token {
            Ok(token) => token,
            Err(None) | Err(Some(auth::AuthError::Http(crate::http::HttpError::AbortedBeforeResponse))) => {
                return driver::failed_or_aborted(
                    &model,
                    crate::http::HttpError::AbortedBeforeResponse.to_string(),
                    true,
                );
            }
            Err(Some(error)) => return driver::failed(&model, error.to_string()),
        };
        let mut own = vec![("authorization".to_owned(), format!("Bearer {}", token.token))];
        if let Some(project) = token.quota_project {
            own.push(("x-goog-user-project".to_owned(), project));
        }
        let request = PreparedRequest {
            url,
            headers: headers(own, &model, &options),
            body,
            api_key: Some(token.token),
            hooks: options.provider_hooks.clone(),
        };
        driver::drive(client, &model, request, protocol, cancel)
    };
    Box::pin(futures::stream::once(authenticated).flatten())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(base_url: &str, id: &str) -> Model {
        Model {
            id: id.into(),
            base_url: base_url.into(),
            api: API.into(),
            provider: "google-vertex".into(),
            ..Model::unknown()
        }
    }

    #[test]
    fn endpoints_as_googles_sdk_builds_them() {
        let catalog = model("https://{location}-aiplatform.googleapis.com", "gemini-2.5-pro");
        assert_eq!(
            url(&catalog, Some(("proj", "us-central1"))),
            "https://us-central1-aiplatform.googleapis.com/v1/projects/proj/locations/us-central1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            url(&catalog, Some(("proj", "global"))),
            "https://aiplatform.googleapis.com/v1/projects/proj/locations/global/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            url(&catalog, Some(("proj", "eu"))),
            "https://aiplatform.eu.rep.googleapis.com/v1/projects/proj/locations/eu/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            url(&catalog, None),
            "https://aiplatform.googleapis.com/v1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
        let proxy = model("http://127.0.0.1:9/vertex/", "gemini-2.5-pro");
        assert_eq!(
            url(&proxy, Some(("proj", "us-central1"))),
            "http://127.0.0.1:9/vertex/v1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
        let versioned = model("http://127.0.0.1:9/v1beta1", "anthropic/claude");
        assert_eq!(
            url(&versioned, None),
            "http://127.0.0.1:9/v1beta1/publishers/anthropic/models/claude:streamGenerateContent?alt=sse"
        );
    }

    #[test]
    fn placeholders_are_not_keys() {
        let none = |_: &str| None;
        let with = |key: &str| StreamOptions {
            api_key: Some(key.into()),
            ..StreamOptions::default()
        };
        assert_eq!(api_key(&with(" vx-key "), &none).as_deref(), Some("vx-key"));
        assert_eq!(api_key(&with("<authenticated>"), &none), None);
        assert_eq!(api_key(&with("gcp-vertex-credentials"), &none), None);
        let env = |name: &str| (name == "GOOGLE_CLOUD_API_KEY").then(|| "env-key".to_owned());
        assert_eq!(api_key(&StreamOptions::default(), &env).as_deref(), Some("env-key"));
        assert!(names_a_version("http://h/v1"));
        assert!(names_a_version("http://h/api/v1beta1/x"));
        assert!(!names_a_version("http://h/vertex"));
    }
}
