//! The HTTP side every provider shares: a POST that returns a streaming body, retries with
//! exponential backoff on 429 / 5xx / overloaded (honouring `retry-after`), connect and idle
//! timeouts, cancellation, and error texts that carry the status and a body excerpt but never
//! the API key.

use std::time::Duration;

use bytes::Bytes;
use futures::{Stream, StreamExt};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Retry and timeout settings of a provider client.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpOptions {
    /// Retries after the first attempt for 429, 5xx and overloaded responses.
    pub max_retries: u32,
    /// First backoff delay; doubled on every retry.
    pub base_delay: Duration,
    /// Longest delay between attempts (also caps `retry-after`).
    pub max_retry_delay: Duration,
    /// Timeout for establishing the connection.
    pub connect_timeout: Duration,
    /// Longest silence allowed between two body chunks (and before the response headers).
    pub idle_timeout: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            max_retries: 3,
            base_delay: Duration::from_secs(1),
            max_retry_delay: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(300),
        }
    }
}

/// Why a request failed; [`std::fmt::Display`] is the text shown to the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    /// The run was aborted.
    #[error("Request was aborted")]
    Aborted,
    /// The server answered with an error status.
    #[error("{status} status code: {body}")]
    Status {
        /// HTTP status.
        status: u16,
        /// Excerpt of the response body.
        body: String,
    },
    /// No connection, a reset, a timeout.
    #[error("{0}")]
    Transport(String),
}

/// Longest body excerpt kept in an error text.
const BODY_EXCERPT_CHARS: usize = 1000;

/// Replaces every occurrence of `secret` in `text` with `[redacted]`.
pub fn redact(text: &str, secret: Option<&str>) -> String {
    match secret {
        Some(secret) if secret.len() >= 4 => text.replace(secret, "[redacted]"),
        _ => text.to_owned(),
    }
}

/// The body excerpt of an error text, the secret redacted *before* the cut (a secret the cut
/// would split is not recognised afterwards), and a start of the secret that a cut body ends with
/// redacted as well.
fn redacted_excerpt(body: &str, secret: Option<&str>) -> String {
    let whole = redact(body, secret);
    let cut = excerpt(&whole);
    match secret {
        Some(secret) if secret.len() >= 4 => redact_cut_prefix(cut, secret),
        _ => cut,
    }
}

/// `text` with a trailing start (4 characters or more) of `secret` replaced by `[redacted]`,
/// looking before the `…` of a cut excerpt.
fn redact_cut_prefix(text: String, secret: &str) -> String {
    let (body, ellipsis) = match text.strip_suffix('…') {
        Some(body) => (body, "…"),
        None => (text.as_str(), ""),
    };
    let longest = (4..secret.len())
        .rev()
        .filter(|&len| secret.is_char_boundary(len))
        .find(|&len| body.ends_with(&secret[..len]));
    match longest {
        Some(len) => format!("{}[redacted]{ellipsis}", &body[..body.len() - len]),
        None => text,
    }
}

/// `error`'s text followed by its causes (`source()` chain), each once: reqwest's `error sending
/// request for url (…)` alone does not say that the connection was refused or reset, or that the
/// body was cut. Redact the result before showing it.
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        let part = inner.to_string();
        if !part.is_empty() && !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        cause = inner.source();
    }
    text
}

fn excerpt(body: &str) -> String {
    let body = body.trim();
    match body.char_indices().nth(BODY_EXCERPT_CHARS) {
        Some((end, _)) => format!("{}…", &body[..end]),
        None => body.to_owned(),
    }
}

/// Whether a failed status (with its body) is worth retrying.
fn retryable(status: u16, body: &str) -> bool {
    status == 429 || status >= 500 || body.contains("overloaded")
}

/// The delay a `retry-after` header asks for (seconds or an HTTP date).
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let value = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(std::time::SystemTime::now()).unwrap_or_default())
}

/// A request to send.
#[derive(Debug, Clone)]
pub struct HttpRequest<'a> {
    /// Full URL.
    pub url: String,
    /// Headers, API key included.
    pub headers: Vec<(String, String)>,
    /// JSON body.
    pub body: &'a Value,
    /// The API key, so that error texts can redact it.
    pub secret: Option<&'a str>,
}

/// A shareable HTTP client with the provider retry policy.
///
/// The HTTP side every provider shares: a POST that returns a streaming body, retries with
/// exponential backoff on 429 / 5xx / overloaded (honouring `retry-after`), connect and idle
/// timeouts, cancellation, and error texts that carry the status and a body excerpt but never
/// the API key.
///
/// [`redact`] is the one redactor of secrets: every error text — the ones the user reads and the
/// ones logged through `tracing` — passes through it. Log events carry only statuses, attempt
/// numbers, delays and those redacted texts; never a header, a body or a URL path.
#[derive(Debug, Clone)]
pub struct HttpClient {
    client: reqwest::Client,
    options: HttpOptions,
}

impl Default for HttpClient {
    fn default() -> Self {
        HttpClient::new(HttpOptions::default())
    }
}

impl HttpClient {
    /// A client with these options.
    pub fn new(options: HttpOptions) -> Self {
        let client = reqwest::Client::builder()
            .connect_timeout(options.connect_timeout)
            .build()
            .unwrap_or_default();
        HttpClient { client, options }
    }

    /// The options.
    pub fn options(&self) -> &HttpOptions {
        &self.options
    }

    /// POSTs `request` and returns the body as a stream of chunks, retrying as configured.
    pub async fn post_stream(
        &self,
        request: &HttpRequest<'_>,
        cancel: &CancellationToken,
    ) -> Result<impl Stream<Item = Result<Bytes, HttpError>> + Send + 'static, HttpError> {
        let mut attempt = 0;
        loop {
            let mut builder = self
                .client
                .post(&request.url)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(serde_json::to_vec(request.body).unwrap_or_default());
            for (name, value) in &request.headers {
                builder = builder.header(name, value);
            }
            tracing::debug!(attempt, "sending request");
            let sent = tokio::select! {
                _ = cancel.cancelled() => return Err(HttpError::Aborted),
                sent = tokio::time::timeout(self.options.idle_timeout, builder.send()) => sent,
            };
            let failure = match sent {
                Err(_) => HttpError::Transport(format!(
                    "Request timed out after {} seconds",
                    self.options.idle_timeout.as_secs()
                )),
                Ok(Err(error)) => HttpError::Transport(redact(&with_causes(&error), request.secret)),
                Ok(Ok(response)) if response.status().is_success() => {
                    tracing::debug!(status = response.status().as_u16(), attempt, "response headers");
                    return Ok(self.body_stream(response, cancel.clone(), request.secret.map(str::to_owned)));
                }
                Ok(Ok(response)) => {
                    let status = response.status().as_u16();
                    let wait = retry_after(response.headers());
                    let body = response.text().await.unwrap_or_default();
                    let error = HttpError::Status {
                        status,
                        body: redacted_excerpt(&body, request.secret),
                    };
                    tracing::debug!(status, attempt, "error status");
                    if attempt < self.options.max_retries && retryable(status, &body) {
                        self.backoff(attempt, wait, cancel).await?;
                        attempt += 1;
                        continue;
                    }
                    return Err(error);
                }
            };
            tracing::debug!(attempt, error = %failure, "transport error");
            if attempt < self.options.max_retries {
                self.backoff(attempt, None, cancel).await?;
                attempt += 1;
                continue;
            }
            return Err(failure);
        }
    }

    async fn backoff(
        &self,
        attempt: u32,
        asked: Option<Duration>,
        cancel: &CancellationToken,
    ) -> Result<(), HttpError> {
        let exponential = self.options.base_delay.saturating_mul(2u32.saturating_pow(attempt));
        let delay = asked.unwrap_or(exponential).min(self.options.max_retry_delay);
        tracing::info!(retry = attempt + 1, ?delay, "retrying");
        tokio::select! {
            _ = cancel.cancelled() => Err(HttpError::Aborted),
            _ = tokio::time::sleep(delay) => Ok(()),
        }
    }

    fn body_stream(
        &self,
        response: reqwest::Response,
        cancel: CancellationToken,
        secret: Option<String>,
    ) -> impl Stream<Item = Result<Bytes, HttpError>> + Send + 'static {
        let idle = self.options.idle_timeout;
        let body = response.bytes_stream();
        futures::stream::unfold(
            (Box::pin(body), cancel, secret, false),
            move |(mut body, cancel, secret, done)| async move {
                if done {
                    return None;
                }
                let next = tokio::select! {
                    _ = cancel.cancelled() => return Some((Err(HttpError::Aborted), (body, cancel, secret, true))),
                    next = tokio::time::timeout(idle, body.next()) => next,
                };
                match next {
                    Err(_) => {
                        let error =
                            HttpError::Transport(format!("Stream idle for more than {} seconds", idle.as_secs()));
                        tracing::debug!(error = %error, "body stream failed");
                        Some((Err(error), (body, cancel, secret, true)))
                    }
                    Ok(None) => None,
                    Ok(Some(Ok(bytes))) => Some((Ok(bytes), (body, cancel, secret, false))),
                    Ok(Some(Err(error))) => {
                        let error = HttpError::Transport(redact(&with_causes(&error), secret.as_deref()));
                        tracing::debug!(error = %error, "body stream failed");
                        Some((Err(error), (body, cancel, secret, true)))
                    }
                }
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_refused_connection_names_its_cause() {
        // A port nothing listens on: bind one, then close it.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let client = HttpClient::new(HttpOptions {
            max_retries: 0,
            ..HttpOptions::default()
        });
        let body = serde_json::json!({});
        let request = HttpRequest {
            url: format!("http://127.0.0.1:{port}/v1/chat/completions"),
            headers: Vec::new(),
            body: &body,
            secret: None,
        };
        let Err(HttpError::Transport(text)) = client.post_stream(&request, &CancellationToken::new()).await.map(drop)
        else {
            panic!("a transport error");
        };
        assert!(text.starts_with("error sending request for url"), "{text}");
        assert!(text.to_lowercase().contains("connection refused"), "{text}");
    }

    #[test]
    fn causes_are_appended_once() {
        #[derive(Debug)]
        struct Outer(std::io::Error);
        impl std::fmt::Display for Outer {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("error decoding response body")
            }
        }
        impl std::error::Error for Outer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let cut = Outer(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "connection closed before message completed",
        ));
        assert_eq!(
            with_causes(&cut),
            "error decoding response body: connection closed before message completed"
        );
    }

    #[test]
    fn a_key_split_by_the_excerpt_is_still_redacted() {
        let key = "sk-live-0123456789abcdefghijklmnopqrstuvwxyz";
        // The key starts 10 characters before the cut.
        let body = format!("{}{key} and more", "x".repeat(BODY_EXCERPT_CHARS - 10));
        let text = redacted_excerpt(&body, Some(key));
        assert!(!text.contains(&key[..4]), "{}", &text[text.len() - 40..]);
        assert!(text.ends_with("[redacted]…"), "{}", &text[text.len() - 40..]);
        // A body that merely ends with the start of the key, uncut.
        assert_eq!(
            redacted_excerpt("error near sk-live", Some(key)),
            "error near [redacted]"
        );
        // Short bodies are redacted as before.
        assert_eq!(
            redacted_excerpt(&format!("bad key {key}"), Some(key)),
            "bad key [redacted]"
        );
    }

    #[test]
    fn redaction_and_excerpts() {
        assert_eq!(redact("key sk-abc123 bad", Some("sk-abc123")), "key [redacted] bad");
        assert_eq!(excerpt(&"x".repeat(2000)).chars().count(), BODY_EXCERPT_CHARS + 1);
    }

    #[test]
    fn retry_policy() {
        assert!(retryable(429, ""));
        assert!(retryable(503, ""));
        assert!(retryable(400, r#"{"type":"overloaded_error"}"#));
        assert!(!retryable(401, "bad key"));
    }

    #[test]
    fn retry_after_seconds() {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(reqwest::header::RETRY_AFTER, "2".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
    }
}
