//! The request/stream loop every wire API shares.
//!
//! An API module prepares its request (URL, headers, JSON body) and implements [`WireProtocol`]
//! to turn SSE events into [`MessageBuilder`] calls. [`drive`] does the rest: it sends the
//! request with retries, feeds the body through the SSE parser, forwards the events, and turns
//! every failure — HTTP status, transport, malformed SSE or JSON, abort — into the final `error`
//! event, so the returned stream never fails.

use futures::StreamExt;
use pi_agent_core::{AssistantMessageEvent, AssistantMessageStream, Model, StopReason};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::builder::MessageBuilder;
use crate::http::{HttpClient, HttpError, HttpRequest, redact};
use crate::sse::{SseEvent, SseParser};

/// What a protocol says after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Keep reading.
    Continue,
    /// The response is complete with this stop reason.
    Finished(StopReason),
}

/// Maps one wire API's SSE events onto a [`MessageBuilder`].
pub trait WireProtocol: Send + 'static {
    /// Handles one event, pushing the events to emit into `out`. An `Err` ends the response
    /// with that error text.
    fn on_event(
        &mut self,
        event: SseEvent,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<Flow, String>;

    /// Called when the body ended without the API's own end marker; returns the stop reason to
    /// finish with, or the error to fail with.
    fn on_body_end(
        &mut self,
        builder: &mut MessageBuilder,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<StopReason, String>;
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
}

/// Runs `request` with `protocol` on a spawned task and returns the event stream.
pub fn drive(
    client: HttpClient,
    model: &Model,
    request: PreparedRequest,
    protocol: impl WireProtocol,
    cancel: CancellationToken,
) -> AssistantMessageStream {
    let (tx, rx) = mpsc::unbounded_channel();
    let builder = MessageBuilder::new(model);
    tokio::spawn(run(client, request, protocol, builder, cancel, tx));
    Box::pin(futures::stream::unfold(rx, |mut rx| async move {
        let event = rx.recv().await?;
        Some((event, rx))
    }))
}

/// A response that failed before or while streaming.
pub fn failed(model: &Model, message: String) -> AssistantMessageStream {
    let builder = MessageBuilder::new(model);
    let start = builder.start();
    let error = builder.error(message, false);
    Box::pin(futures::stream::iter([start, error]))
}

async fn run(
    client: HttpClient,
    request: PreparedRequest,
    mut protocol: impl WireProtocol,
    mut builder: MessageBuilder,
    cancel: CancellationToken,
    tx: mpsc::UnboundedSender<AssistantMessageEvent>,
) {
    let secret = request.api_key.as_deref();
    let send = |event: AssistantMessageEvent| tx.send(event).is_ok();
    if !send(builder.start()) {
        return;
    }
    let http_request = HttpRequest {
        url: request.url.clone(),
        headers: request.headers.clone(),
        body: &request.body,
        secret,
    };
    let body = match client.post_stream(&http_request, &cancel).await {
        Ok(body) => body,
        Err(error) => {
            let aborted = error == HttpError::Aborted;
            send(builder.error(redact(&error.to_string(), secret), aborted));
            return;
        }
    };
    let mut body = std::pin::pin!(body);
    let mut parser = SseParser::default();
    let mut out = Vec::new();
    let flush = |out: &mut Vec<AssistantMessageEvent>| out.drain(..).all(&send);
    let finish: Result<StopReason, (String, bool)> = 'read: loop {
        let (events, ended): (Vec<SseEvent>, bool) = match body.next().await {
            Some(Ok(chunk)) => (parser.feed(&chunk), false),
            Some(Err(error)) => break Err((error.to_string(), error == HttpError::Aborted)),
            None => (parser.finish().into_iter().collect(), true),
        };
        for event in events {
            match protocol.on_event(event, &mut builder, &mut out) {
                Ok(Flow::Continue) => {}
                Ok(Flow::Finished(reason)) => break 'read Ok(reason),
                Err(error) => break 'read Err((error, false)),
            }
        }
        if !flush(&mut out) {
            return;
        }
        if ended {
            break protocol
                .on_body_end(&mut builder, &mut out)
                .map_err(|error| (error, false));
        }
        if cancel.is_cancelled() {
            break Err((HttpError::Aborted.to_string(), true));
        }
    };
    if !flush(&mut out) {
        return;
    }
    match finish {
        Ok(reason) => send(builder.done(reason)),
        Err((message, aborted)) => send(builder.error(redact(&message, secret), aborted)),
    };
}
