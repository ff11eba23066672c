//! The request/stream loop every wire API shares.

use futures::StreamExt;
use pi_agent_core::{AssistantMessageEvent, AssistantMessageStream, Model, ProviderHooks, StopReason};
use serde_json::Value;
use std::collections::VecDeque;
use tracing::Instrument;

use tokio_util::sync::CancellationToken;

use crate::builder::{MessageBuilder, ToolCallError};
use crate::http::{HttpClient, HttpError, HttpRequest};
use crate::redact::{redact, redacted_excerpt, register_secret};
use crate::sse::{SseEvent, SseParser};

/// Why a [`WireProtocol`] ended a response with an error; [`std::fmt::Display`] is the error
/// text of the final message.
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    /// A tool call could not be closed.
    #[error(transparent)]
    ToolCall(#[from] ToolCallError),
    /// An event's data is not the JSON the API sends.
    #[error("Malformed SSE data from {provider}: {}{}", json_error(error), quoted_data(data.as_deref()))]
    Malformed {
        /// The provider (or API) named in the text.
        provider: String,
        /// What the JSON parser reported.
        error: serde_json::Error,
        /// An excerpt of the offending data, when the text quotes it.
        data: Option<String>,
    },
    /// The API reported an error in the stream; `message` is its text, with its code or type
    /// as the API's convention puts them.
    #[error("{message}")]
    Reported {
        /// The error text.
        message: String,
    },
    /// The response stopped for a reason that is an error (`finish_reason: content_filter`,
    /// `incomplete: …`).
    #[error("{provider} stopped the response ({field}: {reason})")]
    Stopped {
        /// The provider named in the text.
        provider: String,
        /// The wire field that carried the reason.
        field: &'static str,
        /// The reason the API gave.
        reason: String,
    },
    /// The model stopped with a stop reason that is an error (Anthropic's `refusal`,
    /// `sensitive`).
    #[error("The model stopped with stop reason \"{reason}\"")]
    Refused {
        /// The stop reason.
        reason: String,
    },
    /// The body ended before the API's end marker; `missing` says what did not arrive.
    #[error("The response from {provider} ended before it was complete ({missing})")]
    Incomplete {
        /// The provider named in the text.
        provider: String,
        /// What is missing (`no response.completed event`).
        missing: &'static str,
    },
    /// An AWS event-stream frame is corrupt (a CRC mismatch, a bad length or header).
    #[error("Malformed event stream from {provider}: {error}")]
    MalformedFrame {
        /// The provider named in the text.
        provider: String,
        /// What the frame decoder reported.
        error: String,
    },
    /// The request could not be authorized (signed) before it was sent.
    #[error("{0}")]
    Unauthorized(String),
    /// The Anthropic body ended before `message_stop`.
    #[error("Anthropic stream ended before message_stop")]
    NoMessageStop,
    /// A successful response whose body is not a server-sent event stream (a JSON object, an
    /// HTML page, garbage); `excerpt` is its start, redacted.
    #[error("The response from {provider} is not an event stream{}: {excerpt}", nor_json(.json_error.as_deref()))]
    NotAnEventStream {
        /// The provider named in the text.
        provider: String,
        /// Why the body is not JSON either, when it is not.
        json_error: Option<String>,
        /// The start of the body.
        excerpt: String,
    },
}

fn nor_json(error: Option<&str>) -> String {
    error.map(|error| format!(" nor JSON ({error})")).unwrap_or_default()
}

/// Longest start of a body that is not an event stream quoted in its error.
const BODY_EXCERPT_CHARS: usize = 500;

/// How much of a body's start is kept until its first event, to describe a body that is not an
/// event stream.
const KEPT_BODY_BYTES: usize = 4096;

/// Whether `line` (the first non-blank line of a body) is a line of a server-sent event stream.
fn is_sse_line(line: &str) -> bool {
    line.starts_with(':') || {
        let field = line.split(':').next().unwrap_or(line);
        matches!(field.trim_end(), "data" | "event" | "id" | "retry")
    }
}

/// The error for a successful body that held no event, or `None` when it is empty or reads as an
/// event stream (comments only, an event cut short).
fn not_an_event_stream(provider: &str, start: &[u8]) -> Option<ProtocolError> {
    let text = String::from_utf8_lossy(start);
    let first = text.lines().map(str::trim).find(|line| !line.is_empty())?;
    if is_sse_line(first) {
        return None;
    }
    let json_error = match serde_json::from_str::<Value>(text.trim()) {
        Ok(_) => None,
        // A body longer than what was kept is judged on its start: only a syntax error there counts.
        Err(error) if error.is_eof() && start.len() >= KEPT_BODY_BYTES => None,
        Err(error) => Some(json_error(&error)),
    };
    Some(ProtocolError::NotAnEventStream {
        provider: provider.to_owned(),
        json_error,
        excerpt: redacted_excerpt(&text, BODY_EXCERPT_CHARS, None),
    })
}

/// The error for a body that should be an AWS event stream and held no frame: its start quoted
/// (a JSON error object, an HTML page), or `None` when it is empty.
fn not_binary_events(provider: &str, start: &[u8]) -> Option<ProtocolError> {
    if start.is_empty() {
        return None;
    }
    let text = String::from_utf8_lossy(start);
    let json_error = serde_json::from_str::<Value>(text.trim())
        .err()
        .filter(|error| !(error.is_eof() && start.len() >= KEPT_BODY_BYTES))
        .map(|error| json_error(&error));
    Some(ProtocolError::NotAnEventStream {
        provider: provider.to_owned(),
        json_error,
        excerpt: redacted_excerpt(&text, BODY_EXCERPT_CHARS, None),
    })
}

/// Longest part of a JSON parser's message quoted in an error (its message can quote a whole
/// string value of the data: `invalid type: string "…", expected u64`).
const JSON_ERROR_CHARS: usize = 200;

/// The parser's message, cut to [`JSON_ERROR_CHARS`] characters before its position.
fn json_error(error: &serde_json::Error) -> String {
    let text = error.to_string();
    let (message, position) = match text.rfind(" at line ") {
        Some(at) => text.split_at(at),
        None => (text.as_str(), ""),
    };
    match message.char_indices().nth(JSON_ERROR_CHARS) {
        Some((end, _)) => format!("{}…{position}", &message[..end]),
        None => text,
    }
}

fn quoted_data(data: Option<&str>) -> String {
    data.map(|data| format!(" (data: {data})")).unwrap_or_default()
}

/// How a response body is framed into events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Framing {
    /// Server-sent events (`text/event-stream`).
    #[default]
    ServerSentEvents,
    /// The AWS binary event stream (`application/vnd.amazon.eventstream`); each message becomes an
    /// [`SseEvent`] whose `event` is its event (or exception) type, `data` its payload and `id`
    /// its message type (`event`, `exception`, `error`).
    AwsEventStream,
}

/// What a protocol says after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Keep reading.
    Continue,
    /// The response is complete with this stop reason.
    Finished(StopReason),
}

/// Maps one wire API's SSE events onto a [`MessageBuilder`].
///
/// An API module prepares its request (URL, headers, JSON body) and implements [`WireProtocol`]
/// to turn SSE events into [`MessageBuilder`] calls. [`drive`] does the rest: it sends the
/// request with retries, feeds the body through the SSE parser, forwards the events, and turns
/// every failure — HTTP status, transport, malformed SSE or JSON, abort — into the final `error`
/// event, so the returned stream never fails.
pub trait WireProtocol: Send + 'static {
    /// Handles one event, pushing the events to emit into `out`. An `Err` ends the response
    /// with its text.
    fn on_event(
        &mut self,
        event: SseEvent,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<Flow, ProtocolError>;

    /// Called when the body ended without the API's own end marker; returns the stop reason to
    /// finish with, or the error to fail with.
    fn on_body_end(
        &mut self,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<StopReason, ProtocolError>;

    /// How the response body is framed; server-sent events unless the API says otherwise.
    fn framing(&self) -> Framing {
        Framing::ServerSentEvents
    }

    /// Called once, after the payload hook and before the request is first sent, with the URL,
    /// the headers and the body (sent as `serde_json::to_vec` of it); adds what authorizes the
    /// request (a signature). An `Err` ends the response with its text, nothing sent.
    fn authorize(
        &mut self,
        url: &str,
        headers: &mut Vec<(String, String)>,
        body: &serde_json::Value,
    ) -> Result<(), ProtocolError> {
        let _ = (url, headers, body);
        Ok(())
    }

    /// The text of a request that failed before its body streamed, when the API words it its own
    /// way (`None`: the [`HttpError`]'s own text).
    fn http_error_text(&self, error: &HttpError) -> Option<String> {
        let _ = error;
        None
    }
}

/// A prepared HTTP request.
#[derive(Debug, Clone)]
pub struct PreparedRequest {
    /// Full URL.
    pub url: String,
    /// Headers, including the API key.
    pub headers: Vec<(String, String)>,
    /// JSON body.
    pub body: Value,
    /// The API key, redacted from every error text.
    pub api_key: Option<String>,
    /// Called with the body before it is sent (it may replace it) and with the status and headers
    /// of the response to stream (pi-ai's `onPayload` / `onResponse`), once per request whatever
    /// the retries.
    pub hooks: ProviderHooks,
}

/// Runs `request` with `protocol` and returns the event stream.
///
/// Nothing is spawned: the request is sent and the body read as the stream is polled, and one
/// SSE event is mapped per poll, so the builder updates its partial message in place whenever
/// the consumer has dropped the previous event.
pub fn drive(
    client: HttpClient,
    model: &Model,
    request: PreparedRequest,
    protocol: impl WireProtocol,
    cancel: CancellationToken,
) -> AssistantMessageStream {
    // One span per request. Its fields never include the API key, the headers or the body: only
    // the URL's host (and port), never its path or query.
    let span = tracing::info_span!(
        "provider_request",
        provider = %model.provider,
        api = %model.api,
        model = %model.id,
        host = %url_host(&request.url),
    );
    if let Some(key) = &request.api_key {
        register_secret(key);
    }
    let state = Driver {
        client,
        model: model.clone(),
        payload_done: false,
        provider: model.provider.clone(),
        request,
        protocol,
        builder: Some(MessageBuilder::new(model)),
        cancel,
        body: None,
        decoder: BodyDecoder::default(),
        authorized: false,
        sse: VecDeque::new(),
        out: VecDeque::new(),
        started: false,
        ended: false,
        events_seen: false,
        body_start: Vec::new(),
    };
    Box::pin(futures::stream::unfold((state, span), |(mut state, span)| async move {
        let event = state.next_event().instrument(span.clone()).await?;
        Some((event, (state, span)))
    }))
}

/// `host` or `host:port` of `url`, for logs: no user info, path or query (where keys may travel).
fn url_host(url: &str) -> String {
    let Ok(url) = reqwest::Url::parse(url) else {
        return String::new();
    };
    match (url.host_str(), url.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_owned(),
        (None, _) => String::new(),
    }
}

/// A response that failed before or while streaming.
pub(crate) fn failed(model: &Model, message: String) -> AssistantMessageStream {
    failed_or_aborted(model, message, false)
}

/// A response that failed (or, with `aborted`, was aborted) before its request was sent.
pub(crate) fn failed_or_aborted(model: &Model, message: String, aborted: bool) -> AssistantMessageStream {
    let message = redact(&message, None);
    if aborted {
        tracing::debug!(provider = %model.provider, model = %model.id, "request aborted before it was sent");
    } else {
        tracing::warn!(provider = %model.provider, model = %model.id, error = %message, "request not sent");
    }
    let builder = MessageBuilder::new(model);
    let start = builder.start();
    let error = builder.error(message, aborted);
    Box::pin(futures::stream::iter([start, error]))
}

/// The decoder of the body's framing.
enum BodyDecoder {
    Sse(SseParser),
    Aws(crate::event_stream::EventStreamDecoder),
}

impl Default for BodyDecoder {
    fn default() -> Self {
        BodyDecoder::Sse(SseParser::default())
    }
}

type Body = futures::stream::BoxStream<'static, Result<bytes::Bytes, HttpError>>;

struct Driver<P> {
    client: HttpClient,
    /// The model, for the request hooks.
    model: Model,
    /// The payload hook was called.
    payload_done: bool,
    provider: String,
    request: PreparedRequest,
    protocol: P,
    /// `None` once the final event was produced.
    builder: Option<MessageBuilder>,
    cancel: CancellationToken,
    body: Option<Body>,
    decoder: BodyDecoder,
    /// The protocol authorized the request.
    authorized: bool,
    sse: VecDeque<SseEvent>,
    out: VecDeque<AssistantMessageEvent>,
    started: bool,
    ended: bool,
    /// Whether the body produced an event.
    events_seen: bool,
    /// The start of the body until its first event (at most [`KEPT_BODY_BYTES`]).
    body_start: Vec<u8>,
}

impl<P: WireProtocol> Driver<P> {
    async fn next_event(&mut self) -> Option<AssistantMessageEvent> {
        loop {
            if let Some(event) = self.out.pop_front() {
                return Some(event);
            }
            let builder = self.builder.as_mut()?;
            if !self.started {
                self.started = true;
                return Some(builder.start());
            }
            if let Some(event) = self.sse.pop_front() {
                let mut produced = Vec::new();
                let flow = self.protocol.on_event(event, builder, &mut produced);
                self.out.extend(produced);
                match flow {
                    Ok(Flow::Continue) => {}
                    Ok(Flow::Finished(reason)) => self.finish(Ok(reason)),
                    Err(error) => self.finish(Err((error.to_string(), false))),
                }
                continue;
            }
            if self.ended {
                let cut = matches!(&self.decoder, BodyDecoder::Aws(decoder) if decoder.cut_short());
                if !self.events_seen
                    && let Some(error) = match &self.decoder {
                        BodyDecoder::Sse(_) => not_an_event_stream(&self.provider, &self.body_start),
                        BodyDecoder::Aws(_) => not_binary_events(&self.provider, &self.body_start),
                    }
                {
                    self.finish(Err((error.to_string(), false)));
                    continue;
                }
                if cut {
                    let error = ProtocolError::Incomplete {
                        provider: self.provider.clone(),
                        missing: "its last event-stream frame was cut",
                    };
                    self.finish(Err((error.to_string(), false)));
                    continue;
                }
                let mut produced = Vec::new();
                let result = self.protocol.on_body_end(builder, &mut produced);
                self.out.extend(produced);
                self.finish(result.map_err(|error| (error.to_string(), false)));
                continue;
            }
            if self.cancel.is_cancelled() {
                let error = if self.body.is_some() {
                    HttpError::Aborted
                } else {
                    HttpError::AbortedBeforeResponse
                };
                self.finish(Err((error.to_string(), true)));
                continue;
            }
            let Some(body) = self.body.as_mut() else {
                if !self.payload_done {
                    self.payload_done = true;
                    if let Some(hook) = self.request.hooks.on_payload.clone()
                        && let Some(replaced) = hook.on_payload(&self.request.body, &self.model, &self.cancel).await
                    {
                        self.request.body = replaced;
                    }
                    continue;
                }
                if !self.authorized {
                    self.authorized = true;
                    if self.protocol.framing() == Framing::AwsEventStream {
                        self.decoder = BodyDecoder::Aws(Default::default());
                    }
                    if let Err(error) =
                        self.protocol
                            .authorize(&self.request.url, &mut self.request.headers, &self.request.body)
                    {
                        self.finish(Err((error.to_string(), false)));
                    }
                    continue;
                }
                let request = HttpRequest {
                    url: self.request.url.clone(),
                    headers: self.request.headers.clone(),
                    body: &self.request.body,
                    secret: self.request.api_key.as_deref(),
                };
                match self.client.post_stream(&request, &self.cancel).await {
                    Ok((head, body)) => {
                        if let Some(hook) = self.request.hooks.on_response.clone() {
                            hook.on_response(head.status, &head.headers, &self.model, &self.cancel)
                                .await;
                        }
                        self.body = Some(Box::pin(body));
                    }
                    Err(error) => {
                        let aborted = matches!(error, HttpError::Aborted | HttpError::AbortedBeforeResponse);
                        let text = self
                            .protocol
                            .http_error_text(&error)
                            .unwrap_or_else(|| error.to_string());
                        self.finish(Err((text, aborted)));
                    }
                }
                continue;
            };
            match body.next().await {
                Some(Ok(chunk)) => {
                    if !self.events_seen && self.body_start.len() < KEPT_BODY_BYTES {
                        let room = KEPT_BODY_BYTES - self.body_start.len();
                        self.body_start.extend_from_slice(&chunk[..chunk.len().min(room)]);
                    }
                    let events = match &mut self.decoder {
                        BodyDecoder::Sse(parser) => parser.feed(&chunk),
                        BodyDecoder::Aws(decoder) => match decoder.feed(&chunk) {
                            Ok(events) => events,
                            Err(error) => {
                                let error = if self.events_seen {
                                    ProtocolError::MalformedFrame {
                                        provider: self.provider.clone(),
                                        error,
                                    }
                                } else {
                                    not_binary_events(&self.provider, &self.body_start).unwrap_or(
                                        ProtocolError::MalformedFrame {
                                            provider: self.provider.clone(),
                                            error,
                                        },
                                    )
                                };
                                self.finish(Err((error.to_string(), false)));
                                continue;
                            }
                        },
                    };
                    if !events.is_empty() {
                        self.events_seen = true;
                        self.body_start = Vec::new();
                    }
                    self.sse.extend(events);
                }
                Some(Err(error)) => {
                    let aborted = matches!(error, HttpError::Aborted | HttpError::AbortedBeforeResponse);
                    self.finish(Err((error.to_string(), aborted)));
                }
                None => {
                    if let BodyDecoder::Sse(parser) = &mut self.decoder
                        && let Some(event) = parser.finish()
                    {
                        self.events_seen = true;
                        self.sse.push_back(event);
                    }
                    self.ended = true;
                }
            }
        }
    }

    /// Queues the terminal event and stops the stream after it.
    fn finish(&mut self, result: Result<StopReason, (String, bool)>) {
        let Some(builder) = self.builder.take() else { return };
        self.body = None;
        let event = match result {
            Ok(reason) => {
                tracing::debug!(stop_reason = ?reason, "response complete");
                builder.done(reason)
            }
            Err((message, aborted)) => {
                let message = redact(&message, self.request.api_key.as_deref());
                if aborted {
                    tracing::debug!("request aborted");
                } else {
                    tracing::warn!(error = %message, "request failed");
                }
                builder.error(message, aborted)
            }
        };
        self.out.push_back(event);
    }
}

#[cfg(test)]
pub(crate) mod fuzz;
