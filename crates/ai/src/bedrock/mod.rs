//! The `bedrock-converse-stream` wire API (Amazon Bedrock):
//! `POST {endpoint}/model/{modelId}/converse-stream`, answered with the AWS binary event stream.
//!
//! What pi-ai 0.73.1 sends through the AWS SDK's `ConverseStreamCommand`:
//!
//! * **Endpoint and region.** The region is `AWS_REGION`, else `AWS_DEFAULT_REGION`; with neither,
//!   and no `AWS_PROFILE`, it is the one of the model's standard base URL
//!   (`https://bedrock-runtime.<region>.amazonaws.com`), else `us-east-1`; with `AWS_PROFILE` and
//!   no region variable, the profile's `region` (the SDK's `Region is missing` without one). A
//!   base URL that is not a standard Bedrock runtime endpoint (a proxy, a VPC endpoint, a test
//!   server) is always used as it is; a standard one only when no region or profile is configured,
//!   else the endpoint of the configured region is. The model id is percent-encoded in the path
//!   (`:` as `%3A`, `/` of an ARN as `%2F`).
//! * **Authentication.** `AWS_BEARER_TOKEN_BEDROCK` (a Bedrock API key) goes as
//!   `Authorization: Bearer …`; otherwise the request is signed with AWS Signature Version 4
//!   (service `bedrock`, AWS's `aws-sigv4` crate) with the credentials of the default chain (see
//!   the `credentials` module: environment, shared profile files with SSO, container
//!   credentials). `AWS_BEDROCK_SKIP_AUTH=1` (a proxy that authenticates itself) signs with
//!   dummy credentials and ignores the bearer token. The key the agent resolves for the provider
//!   (`models.json` `apiKey`) is not used, as pi-ai does not pass it to Bedrock.
//! * **Body**: see the `request` module. **Events**: see the `events` module.
//! * **HTTP errors** carry pi's wording of the SDK's exceptions: the body's `message` after
//!   `Validation error:` (400), `Throttling error:` (429), `Internal server error:` (500),
//!   `Service unavailable:` (503) or the exception's name (`AccessDeniedException: …`, 403), read
//!   from the status, since the error type travels in a header the client does not keep.
//!
//! Left out (docs/differences-from-pi.md): `HTTP(S)_PROXY` (the client's own proxy handling
//! applies), `AWS_BEDROCK_FORCE_HTTP1`, FIPS and dual-stack endpoints, `AWS_ENDPOINT_URL_*`
//! for Bedrock itself, `requestMetadata`.

mod credentials;
mod events;
mod request;

use std::sync::Arc;
use std::time::SystemTime;

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use aws_smithy_runtime_api::client::identity::Identity;
use futures::StreamExt;
use pi_agent_core::{AssistantMessageEvent, AssistantMessageStream, LlmContext, Model, StopReason, StreamOptions};

use crate::builder::MessageBuilder;
use crate::driver::{self, Flow, PreparedRequest, ProtocolError, WireProtocol};
use crate::google_vertex::Env;
use crate::http::{HttpClient, HttpError};
use crate::redact::register_secret;
use crate::sse::SseEvent;

use credentials::AwsCredentials;
use events::Events;

/// The `api` value of this wire API.
pub const API: &str = "bedrock-converse-stream";

/// The SigV4 service name of the Bedrock runtime.
const SERVICE: &str = "bedrock";

/// The AWS SDK's text when no region is found.
pub const NO_REGION: &str = "Region is missing";

/// How the request is authorized.
#[derive(Clone)]
pub(crate) enum Auth {
    /// `Authorization: Bearer <token>`.
    Bearer(String),
    /// A SigV4 signature.
    SigV4 {
        credentials: AwsCredentials,
        region: String,
        /// The signing time (the clock, or a fixed one in tests).
        time: SystemTime,
    },
}

impl Auth {
    fn apply(&self, url: &str, headers: &mut Vec<(String, String)>, body: &[u8]) -> Result<(), ProtocolError> {
        match self {
            Auth::Bearer(token) => {
                headers.retain(|(name, _)| !name.eq_ignore_ascii_case("authorization"));
                headers.push(("authorization".to_owned(), format!("Bearer {token}")));
                Ok(())
            }
            Auth::SigV4 {
                credentials,
                region,
                time,
            } => {
                let host =
                    host_of(url).ok_or_else(|| ProtocolError::Unauthorized(format!("Invalid endpoint: {url}")))?;
                let signed = [("content-type", "application/json"), ("host", host.as_str())];
                let added = sign_v4(credentials, region, SERVICE, *time, "POST", url, &signed, body)
                    .map_err(ProtocolError::Unauthorized)?;
                headers.retain(|(name, _)| {
                    !added.iter().any(|(added, _)| added.eq_ignore_ascii_case(name))
                        && !name.eq_ignore_ascii_case("host")
                });
                headers.extend(added);
                Ok(())
            }
        }
    }
}

/// `host` or `host:port` of `url` as the `Host` header carries it (no default port).
fn host_of(url: &str) -> Option<String> {
    let url = reqwest::Url::parse(url).ok()?;
    let host = url.host_str()?;
    Some(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    })
}

/// Signs a request with SigV4 (`headers` are the ones to sign, `host` among them) and returns
/// the headers to add: `x-amz-date`, `x-amz-security-token` with a session token, and
/// `authorization`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sign_v4(
    credentials: &AwsCredentials,
    region: &str,
    service: &str,
    time: SystemTime,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Result<Vec<(String, String)>, String> {
    let identity: Identity = Credentials::new(
        &credentials.access_key_id,
        &credentials.secret_access_key,
        credentials.session_token.clone(),
        None,
        "pi",
    )
    .into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name(service)
        .time(time)
        .settings(SigningSettings::default())
        .build()
        .map_err(|error| format!("Cannot sign the request: {error}"))?
        .into();
    let request = SignableRequest::new(method, url, headers.iter().copied(), SignableBody::Bytes(body))
        .map_err(|error| format!("Cannot sign the request: {error}"))?;
    let (instructions, _signature) = sign(request, &params)
        .map_err(|error| format!("Cannot sign the request: {error}"))?
        .into_parts();
    Ok(instructions
        .headers()
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect())
}

/// The region of a standard Bedrock runtime endpoint
/// (`bedrock-runtime[-fips].<region>.amazonaws.com[.cn]`).
fn standard_endpoint_region(base_url: &str) -> Option<String> {
    let url = reqwest::Url::parse(base_url).ok()?;
    let host = url.host_str()?.to_lowercase();
    let rest = host
        .strip_prefix("bedrock-runtime-fips.")
        .or_else(|| host.strip_prefix("bedrock-runtime."))?;
    let region = rest
        .strip_suffix(".amazonaws.com")
        .or_else(|| rest.strip_suffix(".amazonaws.com.cn"))?;
    (!region.is_empty()
        && region
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
    .then(|| region.to_owned())
}

/// The model id as a path segment: every byte but `A-Z a-z 0-9 - _ . ~` percent-encoded (the
/// SDK's encoding of a path label).
fn path_segment(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for byte in id.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else {
            use std::fmt::Write as _;
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

fn set(env: &Env, name: &str) -> Option<String> {
    env(name).filter(|value| !value.is_empty())
}

/// Where the request goes and the region it is signed for: `(base URL, region)`, the region
/// `None` when it must come from the profile.
fn endpoint(model: &Model, env: &Env) -> (Option<String>, Option<String>) {
    let configured = set(env, "AWS_REGION").or_else(|| set(env, "AWS_DEFAULT_REGION"));
    let profile = set(env, "AWS_PROFILE").is_some();
    let base = model.base_url.trim();
    let standard = standard_endpoint_region(base);
    let explicit = !base.is_empty() && (standard.is_none() || (configured.is_none() && !profile));
    let region = configured
        .or_else(|| standard.clone().filter(|_| explicit))
        .or_else(|| (!profile).then(|| "us-east-1".to_owned()));
    (explicit.then(|| base.trim_end_matches('/').to_owned()), region)
}

fn regional_endpoint(region: &str) -> String {
    let suffix = if region.starts_with("cn-") {
        "amazonaws.com.cn"
    } else {
        "amazonaws.com"
    };
    format!("https://bedrock-runtime.{region}.{suffix}")
}

/// Streams one response of `model`, reading the process environment.
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

/// Streams one response of `model` (see the module docs), reading the variables through `env`.
/// The body is built before this returns; the credentials are resolved (files read, SSO or
/// container endpoints asked) when the stream is first polled. The stream never fails: every
/// failure is its final `error` event (`aborted` when `options.cancel` fires).
pub fn stream_with_env(
    client: &HttpClient,
    model: &Model,
    context: &LlmContext<'_>,
    options: &StreamOptions,
    env: Env,
) -> AssistantMessageStream {
    let configured = set(&env, "AWS_REGION").or_else(|| set(&env, "AWS_DEFAULT_REGION"));
    let body = request::body(model, context, options, configured.as_deref(), &env);
    let (base, region) = endpoint(model, &env);
    let skip_auth = env("AWS_BEDROCK_SKIP_AUTH").as_deref() == Some("1");
    let bearer = set(&env, "AWS_BEARER_TOKEN_BEDROCK").filter(|_| !skip_auth);
    if let Some(token) = &bearer {
        register_secret(token);
    }
    let client = client.clone();
    let model = model.clone();
    let options = options.clone();
    let cancel = options.cancel.clone();
    let prepared = async move {
        let region = match region {
            Some(region) => region,
            None => match credentials::profile_region(&env).await {
                Some(region) => region,
                None => return driver::failed(&model, NO_REGION.to_owned()),
            },
        };
        let auth = if let Some(token) = bearer {
            Auth::Bearer(token)
        } else {
            let credentials = if skip_auth {
                AwsCredentials {
                    access_key_id: "dummy-access-key".to_owned(),
                    secret_access_key: "dummy-secret-key".to_owned(),
                    session_token: None,
                    expires: None,
                    source: "dummy",
                }
            } else {
                let resolved = tokio::select! {
                    _ = cancel.cancelled() => None,
                    resolved = credentials::resolve(&client, &env, &cancel) => Some(resolved),
                };
                match resolved {
                    None
                    | Some(Err(credentials::CredentialsError::Http {
                        error: HttpError::AbortedBeforeResponse,
                        ..
                    })) => {
                        return driver::failed_or_aborted(&model, HttpError::AbortedBeforeResponse.to_string(), true);
                    }
                    Some(Err(error)) => return driver::failed(&model, error.to_string()),
                    Some(Ok(credentials)) => credentials,
                }
            };
            tracing::debug!(source = credentials.source, "AWS credentials found");
            Auth::SigV4 {
                credentials,
                region: region.clone(),
                time: SystemTime::now(),
            }
        };
        let base = base.unwrap_or_else(|| regional_endpoint(&region));
        let url = format!("{base}/model/{}/converse-stream", path_segment(&model.id));
        let mut headers: Vec<(String, String)> = Vec::new();
        for (name, value) in model.headers.iter().flatten().chain(&options.headers) {
            headers.retain(|(existing, _)| !existing.eq_ignore_ascii_case(name));
            headers.push((name.clone(), value.clone()));
        }
        let request = PreparedRequest {
            url,
            headers,
            body,
            api_key: None,
            hooks: options.provider_hooks.clone(),
        };
        let protocol = BedrockProtocol {
            provider: model.provider.clone(),
            events: Events::default(),
            auth,
        };
        driver::drive(client, &model, request, protocol, cancel)
    };
    Box::pin(futures::stream::once(prepared).flatten())
}

/// The [`WireProtocol`] of `bedrock-converse-stream`: the events above, the AWS event-stream
/// framing, and the request's authorization (see the module docs).
pub(crate) struct BedrockProtocol {
    pub(crate) provider: String,
    pub(crate) events: Events,
    pub(crate) auth: Auth,
}

impl WireProtocol for BedrockProtocol {
    fn on_event(
        &mut self,
        event: SseEvent,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<Flow, ProtocolError> {
        self.events.on_event(&self.provider, event, builder, out)
    }

    fn on_body_end(
        &mut self,
        _builder: &mut MessageBuilder,
        _out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<StopReason, ProtocolError> {
        self.events.on_body_end()
    }

    fn framing(&self) -> crate::driver::Framing {
        crate::driver::Framing::AwsEventStream
    }

    fn authorize(
        &mut self,
        url: &str,
        headers: &mut Vec<(String, String)>,
        body: &serde_json::Value,
    ) -> Result<(), ProtocolError> {
        // The signature covers the bytes `HttpClient` sends: `serde_json::to_vec` of the body.
        let body = serde_json::to_vec(body).unwrap_or_default();
        self.auth.apply(url, headers, &body)
    }

    fn http_error_text(&self, error: &HttpError) -> Option<String> {
        events::http_error_text(error)
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
