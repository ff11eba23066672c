//! The HTTP side every provider shares: a POST that returns a streaming body, retries with
//! exponential backoff on 429 / 5xx / overloaded (honouring `retry-after`), connect and idle
//! timeouts, cancellation, and error texts that carry the status and a body excerpt but never
//! the API key.

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::time::Instant;

use crate::redact::{redact, redacted_excerpt};

use bytes::Bytes;
use futures::{Stream, StreamExt};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Retry and timeout settings of a provider client. The `pi` binary reads them from
/// `settings.json` (`retry.provider.*`, see `docs/settings.md`).
#[derive(Debug, Clone, PartialEq)]
pub struct HttpOptions {
    /// Retries after the first attempt for 429, 5xx, overloaded and transport failures
    /// (`retry.provider.maxRetries`); 2 by default, the OpenAI and Anthropic SDKs' default that
    /// pi 0.73.1 leaves in force. The session's retry of the whole turn (`retry.maxRetries`)
    /// comes on top of these: see `docs/retry.md`.
    pub max_retries: u32,
    /// First backoff delay; doubled on every retry, at most [`MAX_BACKOFF`] (0.5 s, 1 s, 2 s, …
    /// 8 s, as the SDKs wait).
    pub base_delay: Duration,
    /// Longest delay between attempts. A `retry-after` asking for longer fails the request at
    /// once instead of waiting silently (`retry.provider.maxRetryDelayMs`); zero: no limit.
    pub max_retry_delay: Duration,
    /// Timeout for establishing the connection.
    pub connect_timeout: Duration,
    /// The per-attempt timeout: the longest wait for the response headers, and the longest
    /// silence between two body chunks once the response streams (`retry.provider.timeoutMs`).
    pub idle_timeout: Duration,
    /// The total deadline: the longest time from the first attempt until a response starts,
    /// across every attempt and every wait between them (`retry.provider.totalTimeoutMs`). A
    /// response that has started streaming is bounded by `idle_timeout` alone.
    pub total_timeout: Duration,
}

/// The longest exponential backoff between two attempts (the SDKs' 8 s); a `retry-after` may ask
/// for more, up to `max_retry_delay`.
pub const MAX_BACKOFF: Duration = Duration::from_secs(8);

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            max_retries: 2,
            base_delay: Duration::from_millis(500),
            max_retry_delay: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(300),
            total_timeout: Duration::from_secs(600),
        }
    }
}

/// Why a request failed; [`std::fmt::Display`] is the text shown to the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    /// The run was aborted while the response streamed (pi's providers' own text, no period).
    #[error("Request was aborted")]
    Aborted,
    /// The run was aborted before the response came (pi's SDKs' text, with the period).
    #[error("Request was aborted.")]
    AbortedBeforeResponse,
    /// The server answered with an error status.
    #[error("{status} status code: {body}")]
    Status {
        /// HTTP status.
        status: u16,
        /// Excerpt of the response body.
        body: String,
    },
    /// The server answered with a retryable status but asked to wait longer than
    /// [`HttpOptions::max_retry_delay`].
    #[error(
        "{status} status code: {body} (the server asks to retry after {}, longer than the {} allowed by retry.provider.maxRetryDelayMs)",
        seconds(*asked),
        seconds(*allowed)
    )]
    RetryTooLate {
        /// HTTP status.
        status: u16,
        /// Excerpt of the response body.
        body: String,
        /// The delay the server asked for.
        asked: Duration,
        /// The longest delay allowed.
        allowed: Duration,
    },
    /// No connection, a reset, a cut body, a timeout.
    #[error("{0}")]
    Transport(String),
}

/// Longest body excerpt kept in an error text.
const BODY_EXCERPT_CHARS: usize = 1000;

/// A duration as people read it in an error text: `300 s`, `0.25 s`.
pub(crate) fn seconds(duration: Duration) -> String {
    let text = format!("{:.3}", duration.as_secs_f64());
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} s")
}

/// The body excerpt of an error text, redacted before and after the cut ([`redacted_excerpt`]).
fn body_excerpt(body: &str, secret: Option<&str>) -> String {
    redacted_excerpt(body, BODY_EXCERPT_CHARS, secret)
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

/// The text of a failed connection or body read, after pi's `Connection error.`: the whole
/// `source()` chain, redacted.
fn connection_error(error: &reqwest::Error, secret: Option<&str>) -> HttpError {
    HttpError::Transport(redact(&format!("Connection error: {}", with_causes(error)), secret))
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

/// The status and headers of a response whose body streams.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseHead {
    /// The HTTP status.
    pub status: u16,
    /// The headers, names lowercase; a repeated header's values joined with `, `.
    pub headers: BTreeMap<String, String>,
}

impl ResponseHead {
    fn of(response: &reqwest::Response) -> Self {
        let mut headers: BTreeMap<String, String> = BTreeMap::new();
        for (name, value) in response.headers() {
            let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
            headers
                .entry(name.as_str().to_owned())
                .and_modify(|joined| {
                    joined.push_str(", ");
                    joined.push_str(&value);
                })
                .or_insert(value);
        }
        ResponseHead {
            status: response.status().as_u16(),
            headers,
        }
    }
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

    /// POSTs `request` and returns the body as a stream of chunks, retrying as configured
    /// within the total deadline.
    pub async fn post_stream(
        &self,
        request: &HttpRequest<'_>,
        cancel: &CancellationToken,
    ) -> Result<
        (
            ResponseHead,
            impl Stream<Item = Result<Bytes, HttpError>> + Send + 'static,
        ),
        HttpError,
    > {
        let deadline = Instant::now() + self.options.total_timeout;
        let mut attempt = 0;
        loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                return Err(self.gave_up(attempt, None));
            }
            let mut builder = self
                .client
                .post(&request.url)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(serde_json::to_vec(request.body).unwrap_or_default());
            for (name, value) in &request.headers {
                builder = builder.header(name, value);
            }
            tracing::debug!(attempt, "sending request");
            let wait = self.options.idle_timeout.min(remaining);
            let sent = tokio::select! {
                _ = cancel.cancelled() => return Err(HttpError::AbortedBeforeResponse),
                sent = tokio::time::timeout(wait, builder.send()) => sent,
            };
            let (failure, asked) = match sent {
                Err(_) if wait < self.options.idle_timeout => {
                    tracing::debug!(attempt, "total deadline reached");
                    return Err(self.gave_up(attempt + 1, None));
                }
                Err(_) => (
                    HttpError::Transport(format!(
                        "Request timed out: no response within {} (retry.provider.timeoutMs)",
                        seconds(self.options.idle_timeout)
                    )),
                    None,
                ),
                Ok(Err(error)) => (connection_error(&error, request.secret), None),
                Ok(Ok(response)) if response.status().is_success() => {
                    tracing::debug!(status = response.status().as_u16(), attempt, "response headers");
                    let head = ResponseHead::of(&response);
                    return Ok((
                        head,
                        self.body_stream(response, cancel.clone(), request.secret.map(str::to_owned)),
                    ));
                }
                Ok(Ok(response)) => {
                    let status = response.status().as_u16();
                    let asked = retry_after(response.headers());
                    let body = response.text().await.unwrap_or_default();
                    let error = HttpError::Status {
                        status,
                        body: body_excerpt(&body, request.secret),
                    };
                    tracing::debug!(status, attempt, "error status");
                    if !retryable(status, &body) {
                        return Err(error);
                    }
                    (error, asked)
                }
            };
            tracing::debug!(attempt, error = %failure, "attempt failed");
            if attempt >= self.options.max_retries {
                return Err(failure);
            }
            let delay = self.backoff_delay(attempt, asked, &failure)?;
            if Instant::now() + delay >= deadline {
                let why = format!("the last failed with: {failure}");
                return Err(self.gave_up(attempt + 1, Some(why)));
            }
            tracing::info!(retry = attempt + 1, ?delay, "retrying");
            tokio::select! {
                _ = cancel.cancelled() => return Err(HttpError::AbortedBeforeResponse),
                _ = tokio::time::sleep(delay) => {}
            }
            attempt += 1;
        }
    }

    /// POSTs an `application/x-www-form-urlencoded` `form` once (an OAuth token request) and
    /// returns the status and the body, whatever the status; `secret` is redacted from error
    /// texts. The per-attempt timeout bounds the whole exchange.
    pub(crate) async fn post_form(
        &self,
        url: &str,
        form: &[(&str, &str)],
        secret: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<(u16, String), HttpError> {
        let exchange = async {
            let response = self
                .client
                .post(url)
                .header(reqwest::header::ACCEPT, "application/json")
                .form(form)
                .send()
                .await
                .map_err(|error| connection_error(&error, secret))?;
            let status = response.status().as_u16();
            let body = response
                .text()
                .await
                .map_err(|error| connection_error(&error, secret))?;
            Ok((status, body))
        };
        tokio::select! {
            _ = cancel.cancelled() => Err(HttpError::AbortedBeforeResponse),
            done = tokio::time::timeout(self.options.idle_timeout, exchange) => done.unwrap_or_else(|_| {
                Err(HttpError::Transport(format!(
                    "Request timed out: no response within {} (retry.provider.timeoutMs)",
                    seconds(self.options.idle_timeout)
                )))
            }),
        }
    }

    /// GETs `url` once with `headers` (a credential endpoint) and returns the status and the body,
    /// whatever the status; `secret` is redacted from error texts. The per-attempt timeout bounds
    /// the whole exchange.
    pub(crate) async fn get_once(
        &self,
        url: &str,
        headers: &[(String, String)],
        secret: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<(u16, String), HttpError> {
        let exchange = async {
            let mut builder = self.client.get(url).header(reqwest::header::ACCEPT, "application/json");
            for (name, value) in headers {
                builder = builder.header(name, value);
            }
            let response = builder.send().await.map_err(|error| connection_error(&error, secret))?;
            let status = response.status().as_u16();
            let body = response
                .text()
                .await
                .map_err(|error| connection_error(&error, secret))?;
            Ok((status, body))
        };
        tokio::select! {
            _ = cancel.cancelled() => Err(HttpError::AbortedBeforeResponse),
            done = tokio::time::timeout(self.options.idle_timeout, exchange) => done.unwrap_or_else(|_| {
                Err(HttpError::Transport(format!(
                    "Request timed out: no response within {} (retry.provider.timeoutMs)",
                    seconds(self.options.idle_timeout)
                )))
            }),
        }
    }

    /// The wait before the retry after `attempt`: what the server asked for, else the
    /// exponential backoff, capped by `max_retry_delay`; `failure` back when the server asks for
    /// more than that.
    fn backoff_delay(&self, attempt: u32, asked: Option<Duration>, failure: &HttpError) -> Result<Duration, HttpError> {
        let cap = self.options.max_retry_delay;
        let exponential = self
            .options
            .base_delay
            .saturating_mul(2u32.saturating_pow(attempt))
            .min(MAX_BACKOFF.max(self.options.base_delay));
        match (asked, failure) {
            (Some(asked), HttpError::Status { status, body }) if !cap.is_zero() && asked > cap => {
                Err(HttpError::RetryTooLate {
                    status: *status,
                    body: body.clone(),
                    asked,
                    allowed: cap,
                })
            }
            (Some(asked), _) => Ok(asked),
            (None, _) if cap.is_zero() => Ok(exponential),
            (None, _) => Ok(exponential.min(cap)),
        }
    }

    /// The error when the total deadline ends the retries after `attempts` attempts.
    fn gave_up(&self, attempts: u32, why: Option<String>) -> HttpError {
        let plural = if attempts == 1 { "" } else { "s" };
        let why = why.map(|why| format!("; {why}")).unwrap_or_default();
        HttpError::Transport(format!(
            "Request timed out: no response within the total deadline of {} (retry.provider.totalTimeoutMs), {attempts} attempt{plural}{why}",
            seconds(self.options.total_timeout)
        ))
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
                        let error = HttpError::Transport(format!(
                            "Request timed out: the response stream was idle for more than {} (retry.provider.timeoutMs)",
                            seconds(idle)
                        ));
                        tracing::debug!(error = %error, "body stream failed");
                        Some((Err(error), (body, cancel, secret, true)))
                    }
                    Ok(None) => None,
                    Ok(Some(Ok(bytes))) => Some((Ok(bytes), (body, cancel, secret, false))),
                    Ok(Some(Err(error))) => {
                        let error = connection_error(&error, secret.as_deref());
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
        assert!(
            text.starts_with("Connection error: error sending request for url"),
            "{text}"
        );
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
    fn durations_read_as_seconds() {
        assert_eq!(seconds(Duration::from_secs(300)), "300 s");
        assert_eq!(seconds(Duration::from_millis(250)), "0.25 s");
        assert_eq!(seconds(Duration::from_millis(1500)), "1.5 s");
    }

    #[test]
    fn retry_policy() {
        assert!(retryable(429, ""));
        assert!(retryable(503, ""));
        assert!(retryable(400, r#"{"type":"overloaded_error"}"#));
        assert!(!retryable(401, "bad key"));
    }

    #[test]
    fn defaults_are_the_sdks() {
        let options = HttpOptions::default();
        assert_eq!(options.max_retries, 2);
        let client = HttpClient::new(options);
        let failure = HttpError::Transport("x".into());
        let delays: Vec<Duration> = (0..6)
            .map(|attempt| client.backoff_delay(attempt, None, &failure).unwrap())
            .collect();
        let secs = |s: f64| Duration::from_secs_f64(s);
        assert_eq!(
            delays,
            [secs(0.5), secs(1.0), secs(2.0), secs(4.0), secs(8.0), secs(8.0)]
        );
    }

    #[test]
    fn retry_after_seconds() {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(reqwest::header::RETRY_AFTER, "2".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
    }
}
