//! AWS credentials for Bedrock, found where the AWS SDK's default chain (which pi-ai 0.73.1 uses)
//! finds them, in its order:
//!
//! 1. **Environment**: `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` (with `AWS_SESSION_TOKEN`),
//!    skipped when `AWS_PROFILE` is set, as the SDK skips them.
//! 2. **Shared files**: the profile `AWS_PROFILE` names (else `default`) in
//!    `~/.aws/credentials` (`AWS_SHARED_CREDENTIALS_FILE`) and `~/.aws/config` (`AWS_CONFIG_FILE`,
//!    sections `[profile NAME]`), the credentials file winning key by key: static keys
//!    (`aws_access_key_id`, `aws_secret_access_key`, `aws_session_token`), or **IAM Identity
//!    Center (SSO)**: `sso_session` (its `[sso-session NAME]` section's `sso_start_url` and
//!    `sso_region`) or the legacy `sso_start_url` / `sso_region`, with `sso_account_id` and
//!    `sso_role_name`. The token `aws sso login` left in `~/.aws/sso/cache/<sha1 of the session
//!    name or start URL>.json` is exchanged at the portal's `GetRoleCredentials`
//!    (`https://portal.sso.<region>.amazonaws.com`, or `AWS_ENDPOINT_URL_SSO`).
//! 3. **Container credentials** (ECS, EKS Pod Identity): `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`
//!    (on `http://169.254.170.2`) or `AWS_CONTAINER_CREDENTIALS_FULL_URI` (HTTPS, or a loopback or
//!    the container hosts' address), with `AWS_CONTAINER_AUTHORIZATION_TOKEN` or the file
//!    `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE` names as `Authorization`.
//!
//! Not followed (docs/differences-from-pi.md): role assumption (`role_arn`), `credential_process`,
//! web identity (`AWS_WEB_IDENTITY_TOKEN_FILE`), the EC2 instance metadata service, and refreshing
//! an expired SSO token (run `aws sso login` again). Credentials fetched from the portal or a
//! container endpoint are cached until five minutes before they expire. Every secret read or
//! obtained here goes to the redactor.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, SystemTime};

use aws_smithy_types::DateTime;
use aws_smithy_types::date_time::Format;
use serde_json::Value;
use sha1::{Digest, Sha1};
use tokio_util::sync::CancellationToken;

use crate::google_vertex::Env;
use crate::http::{HttpClient, HttpError};
use crate::redact::{redacted_excerpt, register_secret};

/// The AWS SDK's text when no source has credentials.
pub(crate) const NO_CREDENTIALS: &str = "Could not load credentials from any providers";

/// The SDK's text for a missing or unreadable SSO token.
pub(crate) const SSO_TOKEN_INVALID: &str = "The SSO session associated with this profile is invalid. To refresh this SSO session run aws sso login with the corresponding profile.";

/// The SDK's text for an expired SSO token.
pub(crate) const SSO_TOKEN_EXPIRED: &str = "The SSO session associated with this profile has expired. To refresh this SSO session run aws sso login with the corresponding profile.";

/// Cached credentials are renewed this long before they expire.
const EAGER_REFRESH: Duration = Duration::from_secs(5 * 60);

/// Longest excerpt of an endpoint's answer quoted in an error.
const BODY_EXCERPT_CHARS: usize = 300;

/// Hosts a full container-credentials URI may name over plain HTTP (the SDK's list).
const CONTAINER_HOSTS: &[&str] = &[
    "localhost",
    "127.0.0.1",
    "169.254.170.2",
    "169.254.170.23",
    "[fd00:ec2::23]",
];

/// A set of AWS credentials.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct AwsCredentials {
    pub(crate) access_key_id: String,
    pub(crate) secret_access_key: String,
    pub(crate) session_token: Option<String>,
    pub(crate) expires: Option<SystemTime>,
    /// Where they came from (`environment`, `profile dev`, `sso`, `container`).
    pub(crate) source: &'static str,
}

impl std::fmt::Debug for AwsCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AwsCredentials")
            .field("access_key_id", &self.access_key_id)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl AwsCredentials {
    fn new(access_key_id: &str, secret_access_key: &str, session_token: Option<&str>, source: &'static str) -> Self {
        register_secret(secret_access_key);
        if let Some(token) = session_token {
            register_secret(token);
        }
        AwsCredentials {
            access_key_id: access_key_id.to_owned(),
            secret_access_key: secret_access_key.to_owned(),
            session_token: session_token.filter(|token| !token.is_empty()).map(str::to_owned),
            expires: None,
            source,
        }
    }

    fn fresh(&self) -> bool {
        self.expires
            .is_none_or(|expires| SystemTime::now() + EAGER_REFRESH < expires)
    }
}

/// Why no credentials could be had; [`std::fmt::Display`] is the error text of the response.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CredentialsError {
    /// No source had credentials.
    #[error("{NO_CREDENTIALS}")]
    NotFound,
    /// The profile uses a way of getting credentials this crate does not follow.
    #[error(
        "The AWS profile {profile} gets its credentials through {what}, which pi does not support; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or use a profile with static keys or SSO"
    )]
    Unsupported {
        /// The profile.
        profile: String,
        /// `role_arn`, `credential_process`, …
        what: &'static str,
    },
    /// Web identity credentials are set up and not followed.
    #[error(
        "AWS_WEB_IDENTITY_TOKEN_FILE is set, but pi does not support web identity credentials; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or use a profile with static keys or SSO"
    )]
    WebIdentity,
    /// The SSO profile is missing a setting.
    #[error("The AWS profile {profile} is missing {key} for SSO")]
    SsoIncomplete {
        /// The profile.
        profile: String,
        /// The missing key.
        key: &'static str,
    },
    /// No cached SSO token, or an unreadable one.
    #[error("{SSO_TOKEN_INVALID}")]
    SsoTokenInvalid,
    /// The cached SSO token expired.
    #[error("{SSO_TOKEN_EXPIRED}")]
    SsoTokenExpired,
    /// A credential endpoint could not be reached.
    #[error("{what} failed: {error}")]
    Http {
        /// `SSO GetRoleCredentials`, `Container credentials request`.
        what: &'static str,
        /// Why.
        error: HttpError,
    },
    /// A credential endpoint refused or answered something else.
    #[error("{what} failed ({status}): {body}")]
    Refused {
        /// The request.
        what: &'static str,
        /// Its status.
        status: u16,
        /// An excerpt of its answer, redacted.
        body: String,
    },
    /// The full container-credentials URI is neither HTTPS nor a container host.
    #[error("AWS_CONTAINER_CREDENTIALS_FULL_URI must use HTTPS or name a loopback or container host, not {0}")]
    ContainerUri(String),
}

fn set(env: &Env, name: &str) -> Option<String> {
    env(name).filter(|value| !value.is_empty())
}

fn home_file(env: &Env, variable: &str, name: &str) -> Option<PathBuf> {
    if let Some(path) = set(env, variable) {
        return Some(PathBuf::from(path));
    }
    set(env, "HOME").map(|home| PathBuf::from(home).join(".aws").join(name))
}

/// The sections of an AWS shared file: `name → key → value`, keys lowercase; a nested
/// sub-setting (an indented line under a key with no value) is left out.
pub(crate) fn parse_ini(text: &str) -> HashMap<String, HashMap<String, String>> {
    let mut sections: HashMap<String, HashMap<String, String>> = HashMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let nested = line.starts_with([' ', '\t']);
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line
            .strip_prefix('[')
            .and_then(|rest| rest.split_once(']'))
            .map(|(name, _)| name)
        {
            current = Some(name.split_whitespace().collect::<Vec<_>>().join(" "));
            sections.entry(current.clone().unwrap_or_default()).or_default();
            continue;
        }
        if nested {
            continue;
        }
        let (Some(section), Some((key, value))) = (&current, line.split_once('=')) else {
            continue;
        };
        let value = value.trim();
        // Inline comments need a space before them, as the SDK reads them.
        let value = value
            .find(" #")
            .or_else(|| value.find(" ;"))
            .map_or(value, |at| value[..at].trim_end());
        sections
            .entry(section.clone())
            .or_default()
            .insert(key.trim().to_ascii_lowercase(), value.to_owned());
    }
    sections
}

async fn read_ini(path: Option<PathBuf>) -> HashMap<String, HashMap<String, String>> {
    match path {
        Some(path) => tokio::fs::read_to_string(&path)
            .await
            .map(|text| parse_ini(&text))
            .unwrap_or_default(),
        None => HashMap::new(),
    }
}

/// The shared files' view of the profiles.
pub(crate) struct SharedConfig {
    credentials: HashMap<String, HashMap<String, String>>,
    config: HashMap<String, HashMap<String, String>>,
}

impl SharedConfig {
    /// Reads `~/.aws/credentials` and `~/.aws/config` (or the files the variables name); a file
    /// that cannot be read counts as empty.
    pub(crate) async fn load(env: &Env) -> Self {
        SharedConfig {
            credentials: read_ini(home_file(env, "AWS_SHARED_CREDENTIALS_FILE", "credentials")).await,
            config: read_ini(home_file(env, "AWS_CONFIG_FILE", "config")).await,
        }
    }

    /// The profile's settings, the credentials file's over the config file's; `None` when neither
    /// has it.
    pub(crate) fn profile(&self, name: &str) -> Option<HashMap<String, String>> {
        let config_name = if name == "default" {
            "default".to_owned()
        } else {
            format!("profile {name}")
        };
        let from_config = self.config.get(&config_name).or_else(|| {
            (name == "default")
                .then(|| self.config.get("profile default"))
                .flatten()
        });
        let from_credentials = self.credentials.get(name);
        if from_config.is_none() && from_credentials.is_none() {
            return None;
        }
        let mut merged = from_config.cloned().unwrap_or_default();
        merged.extend(from_credentials.cloned().unwrap_or_default());
        Some(merged)
    }

    fn sso_session(&self, name: &str) -> Option<&HashMap<String, String>> {
        self.config.get(&format!("sso-session {name}"))
    }
}

/// The profile in use: `AWS_PROFILE`, else `default`.
pub(crate) fn profile_name(env: &Env) -> String {
    set(env, "AWS_PROFILE").unwrap_or_else(|| "default".to_owned())
}

/// The region the profile sets (`region` in the config file), if any.
pub(crate) async fn profile_region(env: &Env) -> Option<String> {
    let shared = SharedConfig::load(env).await;
    shared
        .profile(&profile_name(env))?
        .get("region")
        .filter(|region| !region.is_empty())
        .cloned()
}

static CACHE: LazyLock<Mutex<HashMap<String, AwsCredentials>>> = LazyLock::new(Mutex::default);

fn cached(key: &str) -> Option<AwsCredentials> {
    let cache = CACHE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    cache.get(key).filter(|credentials| credentials.fresh()).cloned()
}

fn remember(key: String, credentials: &AwsCredentials) {
    if credentials.expires.is_some() {
        let mut cache = CACHE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        cache.insert(key, credentials.clone());
    }
}

/// The credentials of the default chain (see the module docs).
pub(crate) async fn resolve(
    client: &HttpClient,
    env: &Env,
    cancel: &CancellationToken,
) -> Result<AwsCredentials, CredentialsError> {
    if set(env, "AWS_PROFILE").is_none()
        && let (Some(id), Some(secret)) = (set(env, "AWS_ACCESS_KEY_ID"), set(env, "AWS_SECRET_ACCESS_KEY"))
    {
        let token = set(env, "AWS_SESSION_TOKEN");
        return Ok(AwsCredentials::new(&id, &secret, token.as_deref(), "environment"));
    }
    let shared = SharedConfig::load(env).await;
    let name = profile_name(env);
    if let Some(profile) = shared.profile(&name)
        && let Some(credentials) = from_profile(client, env, &shared, &name, &profile, cancel).await?
    {
        return Ok(credentials);
    }
    if set(env, "AWS_WEB_IDENTITY_TOKEN_FILE").is_some() {
        return Err(CredentialsError::WebIdentity);
    }
    if let Some(credentials) = from_container(client, env, cancel).await? {
        return Ok(credentials);
    }
    Err(CredentialsError::NotFound)
}

async fn from_profile(
    client: &HttpClient,
    env: &Env,
    shared: &SharedConfig,
    name: &str,
    profile: &HashMap<String, String>,
    cancel: &CancellationToken,
) -> Result<Option<AwsCredentials>, CredentialsError> {
    let get = |key: &str| profile.get(key).filter(|value| !value.is_empty()).cloned();
    if let (Some(id), Some(secret)) = (get("aws_access_key_id"), get("aws_secret_access_key")) {
        let token = get("aws_session_token");
        return Ok(Some(AwsCredentials::new(&id, &secret, token.as_deref(), "profile")));
    }
    if get("sso_session").is_some() || get("sso_start_url").is_some() {
        return sso(client, env, shared, name, profile, cancel).await.map(Some);
    }
    for (key, what) in [
        ("role_arn", "role assumption (role_arn)"),
        ("credential_process", "credential_process"),
        ("web_identity_token_file", "web identity (web_identity_token_file)"),
    ] {
        if get(key).is_some() {
            return Err(CredentialsError::Unsupported {
                profile: name.to_owned(),
                what,
            });
        }
    }
    Ok(None)
}

fn sha1_hex(text: &str) -> String {
    Sha1::digest(text.as_bytes())
        .iter()
        .fold(String::with_capacity(40), |mut hex, byte| {
            use std::fmt::Write as _;
            let _ = write!(hex, "{byte:02x}");
            hex
        })
}

/// When an ISO 8601 time (`2026-01-01T00:00:00Z`) is.
fn parse_time(text: &str) -> Option<SystemTime> {
    let time = DateTime::from_str(text, Format::DateTime).ok()?;
    SystemTime::try_from(time).ok()
}

async fn sso(
    client: &HttpClient,
    env: &Env,
    shared: &SharedConfig,
    name: &str,
    profile: &HashMap<String, String>,
    cancel: &CancellationToken,
) -> Result<AwsCredentials, CredentialsError> {
    let missing = |key: &'static str| CredentialsError::SsoIncomplete {
        profile: name.to_owned(),
        key,
    };
    let get = |key: &str| profile.get(key).filter(|value| !value.is_empty()).cloned();
    let (cache_name, start_url, region) = match get("sso_session") {
        Some(session) => {
            let section = shared
                .sso_session(&session)
                .ok_or_else(|| missing("an [sso-session] section"))?;
            let value = |key: &str| section.get(key).filter(|value| !value.is_empty()).cloned();
            let start_url = value("sso_start_url").ok_or_else(|| missing("sso_start_url"))?;
            let region = value("sso_region").ok_or_else(|| missing("sso_region"))?;
            (session, start_url, region)
        }
        None => {
            let start_url = get("sso_start_url").ok_or_else(|| missing("sso_start_url"))?;
            let region = get("sso_region").ok_or_else(|| missing("sso_region"))?;
            (start_url.clone(), start_url, region)
        }
    };
    let account = get("sso_account_id").ok_or_else(|| missing("sso_account_id"))?;
    let role = get("sso_role_name").ok_or_else(|| missing("sso_role_name"))?;
    let key = format!("sso\n{start_url}\n{account}\n{role}");
    if let Some(credentials) = cached(&key) {
        return Ok(credentials);
    }
    let home = set(env, "HOME").ok_or(CredentialsError::SsoTokenInvalid)?;
    let file = PathBuf::from(home)
        .join(".aws")
        .join("sso")
        .join("cache")
        .join(format!("{}.json", sha1_hex(&cache_name)));
    let text = tokio::fs::read_to_string(&file)
        .await
        .map_err(|_| CredentialsError::SsoTokenInvalid)?;
    let cached_token: Value = serde_json::from_str(&text).map_err(|_| CredentialsError::SsoTokenInvalid)?;
    let token = cached_token
        .get("accessToken")
        .and_then(Value::as_str)
        .filter(|token| !token.is_empty())
        .ok_or(CredentialsError::SsoTokenInvalid)?;
    register_secret(token);
    let expires = cached_token
        .get("expiresAt")
        .and_then(Value::as_str)
        .and_then(parse_time)
        .ok_or(CredentialsError::SsoTokenInvalid)?;
    if expires <= SystemTime::now() {
        return Err(CredentialsError::SsoTokenExpired);
    }
    let endpoint = set(env, "AWS_ENDPOINT_URL_SSO")
        .or_else(|| set(env, "AWS_ENDPOINT_URL"))
        .unwrap_or_else(|| format!("https://portal.sso.{region}.amazonaws.com"));
    let mut url = reqwest::Url::parse(&format!("{}/federation/credentials", endpoint.trim_end_matches('/'))).map_err(
        |error| CredentialsError::Http {
            what: "SSO GetRoleCredentials",
            error: HttpError::Transport(format!("invalid endpoint {endpoint}: {error}")),
        },
    )?;
    url.query_pairs_mut()
        .append_pair("account_id", &account)
        .append_pair("role_name", &role);
    let headers = [("x-amz-sso_bearer_token".to_owned(), token.to_owned())];
    let what = "SSO GetRoleCredentials";
    let (status, body) = client
        .get_once(url.as_str(), &headers, Some(token), cancel)
        .await
        .map_err(|error| CredentialsError::Http { what, error })?;
    let refused = |body: &str| CredentialsError::Refused {
        what,
        status,
        body: redacted_excerpt(body, BODY_EXCERPT_CHARS, Some(token)),
    };
    if !(200..300).contains(&status) {
        return Err(refused(&body));
    }
    let answer: Value = serde_json::from_str(&body).map_err(|_| refused(&body))?;
    let role_credentials = answer.get("roleCredentials").ok_or_else(|| refused(&body))?;
    let field = |name: &str| role_credentials.get(name).and_then(Value::as_str);
    let (Some(id), Some(secret)) = (field("accessKeyId"), field("secretAccessKey")) else {
        return Err(refused(&body));
    };
    let mut credentials = AwsCredentials::new(id, secret, field("sessionToken"), "sso");
    credentials.expires = role_credentials
        .get("expiration")
        .and_then(Value::as_u64)
        .map(|ms| SystemTime::UNIX_EPOCH + Duration::from_millis(ms));
    remember(key, &credentials);
    Ok(credentials)
}

async fn from_container(
    client: &HttpClient,
    env: &Env,
    cancel: &CancellationToken,
) -> Result<Option<AwsCredentials>, CredentialsError> {
    let url = if let Some(relative) = set(env, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") {
        format!("http://169.254.170.2{relative}")
    } else if let Some(full) = set(env, "AWS_CONTAINER_CREDENTIALS_FULL_URI") {
        let parsed = reqwest::Url::parse(&full).map_err(|_| CredentialsError::ContainerUri(full.clone()))?;
        let host = parsed.host_str().unwrap_or_default().to_owned();
        let loopback = host.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| ip.is_loopback()) || host == "[::1]";
        if parsed.scheme() != "https" && !(loopback || CONTAINER_HOSTS.contains(&host.as_str())) {
            return Err(CredentialsError::ContainerUri(full));
        }
        full
    } else {
        return Ok(None);
    };
    let key = format!("container\n{url}");
    if let Some(credentials) = cached(&key) {
        return Ok(Some(credentials));
    }
    let token = match set(env, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE") {
        Some(file) => tokio::fs::read_to_string(&file)
            .await
            .ok()
            .map(|token| token.trim().to_owned()),
        None => set(env, "AWS_CONTAINER_AUTHORIZATION_TOKEN"),
    }
    .filter(|token| !token.is_empty());
    if let Some(token) = &token {
        register_secret(token);
    }
    let headers: Vec<(String, String)> = token
        .iter()
        .map(|token| ("authorization".to_owned(), token.clone()))
        .collect();
    let what = "Container credentials request";
    let (status, body) = client
        .get_once(&url, &headers, token.as_deref(), cancel)
        .await
        .map_err(|error| CredentialsError::Http { what, error })?;
    let refused = |body: &str| CredentialsError::Refused {
        what,
        status,
        body: redacted_excerpt(body, BODY_EXCERPT_CHARS, token.as_deref()),
    };
    if !(200..300).contains(&status) {
        return Err(refused(&body));
    }
    let answer: Value = serde_json::from_str(&body).map_err(|_| refused(&body))?;
    let field = |name: &str| answer.get(name).and_then(Value::as_str);
    let (Some(id), Some(secret)) = (field("AccessKeyId"), field("SecretAccessKey")) else {
        return Err(refused(&body));
    };
    let mut credentials = AwsCredentials::new(id, secret, field("Token"), "container");
    credentials.expires = field("Expiration").and_then(parse_time);
    remember(key, &credentials);
    Ok(Some(credentials))
}

#[cfg(test)]
#[path = "credentials_tests.rs"]
mod tests;
