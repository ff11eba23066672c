//! Application Default Credentials for Vertex AI: an OAuth access token from the credential file
//! Google's libraries find.
//!
//! The file is the one `GOOGLE_APPLICATION_CREDENTIALS` names, else gcloud's
//! `application_default_credentials.json` (in `CLOUDSDK_CONFIG`, else `~/.config/gcloud`), written
//! by `gcloud auth application-default login`. Two kinds are understood:
//!
//! * `service_account`: a JWT signed with the account's RS256 `private_key` (`iss` the
//!   `client_email`, `scope` cloud-platform, `aud` the token URI, one hour) exchanged at the file's
//!   `token_uri` (grant type `urn:ietf:params:oauth:grant-type:jwt-bearer`);
//! * `authorized_user`: its `refresh_token` exchanged with its `client_id` and `client_secret`
//!   (grant type `refresh_token`) at `https://oauth2.googleapis.com/token`, or at the file's
//!   `token_uri` when it has one.
//!
//! A token is cached per credential file content until five minutes before it expires (Google's
//! libraries refresh that early too); concurrent requests wait for one exchange. The file's
//! `quota_project_id` is sent as `x-goog-user-project`. Every secret read or obtained here (the
//! private key, refresh token, client secret, the signed assertion and the access token) is
//! registered with the redactor before anything is sent.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::http::{HttpClient, HttpError};
use crate::redact::{redacted_excerpt, register_secret};

/// The scope of the tokens Vertex AI accepts.
pub(crate) const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";

/// Google's OAuth token endpoint, for files that name none.
pub(crate) const DEFAULT_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";

/// The grant type of a service account's signed assertion.
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// How long a service account's assertion is valid.
const ASSERTION_LIFETIME_SECS: u64 = 3600;

/// A token is renewed this long before it expires.
const EAGER_REFRESH: Duration = Duration::from_secs(5 * 60);

/// Longest excerpt of a token endpoint's answer quoted in an error.
const BODY_EXCERPT_CHARS: usize = 500;

/// google-auth-library's text when no credential file is found.
pub(crate) const NO_ADC_FOUND: &str = "Could not load the default credentials. Browse to https://cloud.google.com/docs/authentication/getting-started for more information.";

/// Why no access token could be had; [`std::fmt::Display`] is the error text of the response.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AuthError {
    /// Neither `GOOGLE_APPLICATION_CREDENTIALS` nor gcloud's file.
    #[error("{NO_ADC_FOUND}")]
    NotFound,
    /// The file `GOOGLE_APPLICATION_CREDENTIALS` names cannot be read.
    #[error(
        "Unable to read the credential file specified by the GOOGLE_APPLICATION_CREDENTIALS environment variable: The file at {} does not exist, or it is not a file. {error}",
        path.display()
    )]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The file is not a credential file we understand.
    #[error("The credential file {} is not valid: {why}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// The service account's key could not sign the assertion.
    #[error("The private_key of the service account in {} cannot sign a token request: {error}", path.display())]
    Signing {
        /// The file.
        path: PathBuf,
        /// What the signer said.
        error: jsonwebtoken::errors::Error,
    },
    /// The token endpoint could not be reached.
    #[error("Google Cloud token request failed: {0}")]
    Http(HttpError),
    /// The token endpoint refused (`invalid_grant: …`, as Google's libraries word it).
    #[error("{0}")]
    Refused(String),
}

/// An access token and the project its use is billed to.
#[derive(Debug, Clone)]
pub(crate) struct AccessToken {
    /// The bearer token.
    pub(crate) token: String,
    /// `x-goog-user-project`, when the file names a quota project.
    pub(crate) quota_project: Option<String>,
}

struct Cached {
    token: AccessToken,
    renew_at: Instant,
}

/// Tokens by credential file content.
static CACHE: LazyLock<tokio::sync::Mutex<HashMap<String, Cached>>> =
    LazyLock::new(|| tokio::sync::Mutex::new(HashMap::new()));

/// The credential file: `GOOGLE_APPLICATION_CREDENTIALS`, else gcloud's well-known file; and
/// whether the variable named it.
pub(crate) fn credential_path(env: &dyn Fn(&str) -> Option<String>) -> Option<(PathBuf, bool)> {
    if let Some(path) = env("GOOGLE_APPLICATION_CREDENTIALS").filter(|path| !path.is_empty()) {
        return Some((PathBuf::from(path), true));
    }
    let dir = match env("CLOUDSDK_CONFIG").filter(|dir| !dir.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(&env("HOME").filter(|home| !home.is_empty())?)
            .join(".config")
            .join("gcloud"),
    };
    Some((dir.join("application_default_credentials.json"), false))
}

#[derive(Deserialize)]
struct CredentialFile {
    #[serde(rename = "type")]
    kind: Option<String>,
    client_email: Option<String>,
    private_key: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
    refresh_token: Option<String>,
    token_uri: Option<String>,
    quota_project_id: Option<String>,
}

#[derive(Serialize)]
struct Claims<'a> {
    iss: &'a str,
    scope: &'a str,
    aud: &'a str,
    exp: u64,
    iat: u64,
}

fn required<'a>(value: Option<&'a String>, field: &str, path: &Path) -> Result<&'a str, AuthError> {
    value
        .map(String::as_str)
        .filter(|value| !value.is_empty())
        .ok_or_else(|| AuthError::Invalid {
            path: path.to_owned(),
            why: format!("The incoming JSON object does not contain a {field} field"),
        })
}

/// An access token for the credential file `source` ([`credential_path`]), from the cache while
/// it is fresh.
pub(crate) async fn access_token(
    client: &HttpClient,
    source: Option<(PathBuf, bool)>,
    cancel: &CancellationToken,
) -> Result<AccessToken, AuthError> {
    let (path, named) = source.ok_or(AuthError::NotFound)?;
    let text = match tokio::fs::read_to_string(&path).await {
        Ok(text) => text,
        Err(error) if named => return Err(AuthError::Unreadable { path, error }),
        Err(_) => return Err(AuthError::NotFound),
    };
    let mut cache = CACHE.lock().await;
    if let Some(cached) = cache.get(&text)
        && Instant::now() < cached.renew_at
    {
        return Ok(cached.token.clone());
    }
    let file: CredentialFile = serde_json::from_str(&text).map_err(|error| AuthError::Invalid {
        path: path.clone(),
        why: error.to_string(),
    })?;
    let (token, expires_in) = exchange(client, &file, &path, cancel).await?;
    register_secret(&token);
    let token = AccessToken {
        token,
        quota_project: file.quota_project_id.filter(|project| !project.is_empty()),
    };
    let lifetime = Duration::from_secs(expires_in);
    cache.insert(
        text,
        Cached {
            token: token.clone(),
            renew_at: Instant::now() + lifetime.saturating_sub(EAGER_REFRESH),
        },
    );
    Ok(token)
}

/// The token request of the file's kind; returns the token and its lifetime in seconds.
async fn exchange(
    client: &HttpClient,
    file: &CredentialFile,
    path: &Path,
    cancel: &CancellationToken,
) -> Result<(String, u64), AuthError> {
    match file.kind.as_deref() {
        Some("service_account") => {
            let email = required(file.client_email.as_ref(), "client_email", path)?;
            let key = required(file.private_key.as_ref(), "private_key", path)?;
            register_secret(key);
            let token_uri = file
                .token_uri
                .as_deref()
                .filter(|uri| !uri.is_empty())
                .unwrap_or(DEFAULT_TOKEN_URI);
            let assertion = sign_assertion(email, key, token_uri).map_err(|error| AuthError::Signing {
                path: path.to_owned(),
                error,
            })?;
            register_secret(&assertion);
            let form = [("grant_type", JWT_BEARER), ("assertion", assertion.as_str())];
            request_token(client, token_uri, &form, cancel).await
        }
        Some("authorized_user") => {
            let client_id = required(file.client_id.as_ref(), "client_id", path)?;
            let secret = required(file.client_secret.as_ref(), "client_secret", path)?;
            let refresh = required(file.refresh_token.as_ref(), "refresh_token", path)?;
            register_secret(secret);
            register_secret(refresh);
            let token_uri = file
                .token_uri
                .as_deref()
                .filter(|uri| !uri.is_empty())
                .unwrap_or(DEFAULT_TOKEN_URI);
            let form = [
                ("refresh_token", refresh),
                ("client_id", client_id),
                ("client_secret", secret),
                ("grant_type", "refresh_token"),
            ];
            request_token(client, token_uri, &form, cancel).await
        }
        other => Err(AuthError::Invalid {
            path: path.to_owned(),
            why: match other {
                Some(kind) => format!(
                    "credentials of type \"{kind}\" are not supported (only service_account and authorized_user)"
                ),
                None => "The incoming JSON object does not contain a type field".to_owned(),
            },
        }),
    }
}

/// The RS256-signed JWT a service account exchanges for a token.
pub(crate) fn sign_assertion(email: &str, private_key: &str, audience: &str) -> jsonwebtoken::errors::Result<String> {
    let iat = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs())
        .unwrap_or(0);
    let claims = Claims {
        iss: email,
        scope: SCOPE,
        aud: audience,
        exp: iat + ASSERTION_LIFETIME_SECS,
        iat,
    };
    let key = jsonwebtoken::EncodingKey::from_rsa_pem(private_key.as_bytes())?;
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256),
        &claims,
        &key,
    )
}

/// POSTs `form` to the token endpoint; the token and its lifetime (an hour when not given).
async fn request_token(
    client: &HttpClient,
    url: &str,
    form: &[(&str, &str)],
    cancel: &CancellationToken,
) -> Result<(String, u64), AuthError> {
    let (status, body) = client
        .post_form(url, form, None, cancel)
        .await
        .map_err(AuthError::Http)?;
    let json: Option<Value> = serde_json::from_str(&body).ok();
    let field = |name: &str| {
        json.as_ref()
            .and_then(|json| json.get(name))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    if (200..300).contains(&status)
        && let Some(token) = field("access_token").filter(|token| !token.is_empty())
    {
        let expires_in = json
            .as_ref()
            .and_then(|json| json.get("expires_in"))
            .and_then(Value::as_u64)
            .unwrap_or(ASSERTION_LIFETIME_SECS);
        return Ok((token, expires_in));
    }
    match field("error") {
        Some(error) => {
            let description = field("error_description").unwrap_or_else(|| "undefined".to_owned());
            Err(AuthError::Refused(crate::redact::redact(
                &format!("{error}: {description}"),
                None,
            )))
        }
        None => Err(AuthError::Http(HttpError::Status {
            status,
            body: redacted_excerpt(&body, BODY_EXCERPT_CHARS, None),
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_the_variables_else_gclouds() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned())
        };
        assert_eq!(
            credential_path(&env(&[("GOOGLE_APPLICATION_CREDENTIALS", "/k.json"), ("HOME", "/h")])),
            Some((PathBuf::from("/k.json"), true))
        );
        assert_eq!(
            credential_path(&env(&[("HOME", "/h")])),
            Some((
                PathBuf::from("/h/.config/gcloud/application_default_credentials.json"),
                false
            ))
        );
        assert_eq!(
            credential_path(&env(&[("HOME", "/h"), ("CLOUDSDK_CONFIG", "/cfg")])),
            Some((PathBuf::from("/cfg/application_default_credentials.json"), false))
        );
        assert_eq!(credential_path(&env(&[])), None);
    }

    #[test]
    fn a_key_that_is_not_rsa_pem_does_not_sign() {
        assert!(sign_assertion("a@b", "not a key", DEFAULT_TOKEN_URI).is_err());
    }
}
