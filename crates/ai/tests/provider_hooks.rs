//! The request hooks every wire API calls (pi-ai's `onPayload` / `onResponse`): the payload hook
//! sees the body and its replacement is what the server receives; the response hook gets the
//! status and the headers of the response; neither is called more than once per request, and a
//! request that gets no response to stream never reaches the response hook.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use pi_agent_core::{
    AgentMessage, LlmContext, Model, PayloadHook, ProviderHooks, ResponseHook, StreamFn, StreamOptions,
};
use pi_ai::{HttpClient, HttpOptions, Providers};
use pi_test_support::{MockServer, Reply};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

#[derive(Default)]
struct Recorder {
    payloads: Mutex<Vec<Value>>,
    responses: Mutex<Vec<(u16, BTreeMap<String, String>)>>,
}

#[async_trait]
impl PayloadHook for Recorder {
    async fn on_payload(&self, payload: &Value, _model: &Model, _cancel: &CancellationToken) -> Option<Value> {
        self.payloads.lock().unwrap().push(payload.clone());
        let mut replaced = payload.clone();
        replaced["x_hooked"] = json!(true);
        Some(replaced)
    }
}

#[async_trait]
impl ResponseHook for Recorder {
    async fn on_response(
        &self,
        status: u16,
        headers: &BTreeMap<String, String>,
        _model: &Model,
        _cancel: &CancellationToken,
    ) {
        self.responses.lock().unwrap().push((status, headers.clone()));
    }
}

fn model(api: &str, base_url: String) -> Model {
    Model {
        id: "m".into(),
        api: api.into(),
        provider: "local".into(),
        base_url,
        ..Model::unknown()
    }
}

fn client() -> HttpClient {
    HttpClient::new(HttpOptions {
        max_retries: 2,
        base_delay: Duration::from_millis(5),
        max_retry_delay: Duration::from_millis(20),
        connect_timeout: Duration::from_secs(2),
        idle_timeout: Duration::from_secs(5),
        total_timeout: Duration::from_secs(30),
    })
}

async fn run(model: &Model, recorder: &Arc<Recorder>) {
    let messages = [AgentMessage::user("hi")];
    let context = LlmContext {
        system_prompt: "sys",
        messages: &messages,
        tools: &[],
    };
    let options = StreamOptions {
        api_key: Some("k".into()),
        provider_hooks: ProviderHooks {
            on_payload: Some(recorder.clone()),
            on_response: Some(recorder.clone()),
        },
        ..StreamOptions::default()
    };
    let _events: Vec<_> = Providers::new(client())
        .stream(model, &context, &options)
        .collect()
        .await;
}

fn reply() -> Reply {
    let mut reply = Reply::sse(200, &["data: {}\n\n"]);
    reply.headers.push(("X-Request-Id".into(), "req-1".into()));
    reply
}

#[tokio::test]
async fn every_api_sends_the_replaced_payload_and_reports_the_response() {
    for api in ["openai-completions", "openai-responses", "anthropic-messages"] {
        let server = MockServer::start(vec![reply()]).await;
        let recorder = Arc::new(Recorder::default());
        run(&model(api, server.url("/v1")), &recorder).await;

        let payloads = recorder.payloads.lock().unwrap().clone();
        assert_eq!(payloads.len(), 1, "{api}: one payload call");
        assert!(
            payloads[0].get("x_hooked").is_none(),
            "{api}: the hook sees the body as built"
        );
        assert_eq!(payloads[0]["model"], "m", "{api}");
        let sent = server.requests()[0].json();
        assert_eq!(sent["x_hooked"], true, "{api}: the replacement is sent");

        let responses = recorder.responses.lock().unwrap().clone();
        assert_eq!(responses.len(), 1, "{api}: one response call");
        assert_eq!(responses[0].0, 200);
        assert_eq!(
            responses[0].1.get("x-request-id").map(String::as_str),
            Some("req-1"),
            "{api}"
        );
    }
}

#[tokio::test]
async fn retries_call_the_payload_hook_once_and_the_response_hook_for_the_answer_streamed() {
    let server = MockServer::start(vec![Reply::json(503, "{\"error\":\"busy\"}"), reply()]).await;
    let recorder = Arc::new(Recorder::default());
    run(&model("openai-completions", server.url("/v1")), &recorder).await;
    assert_eq!(server.requests().len(), 2);
    assert!(server.requests().iter().all(|r| r.json()["x_hooked"] == true));
    assert_eq!(recorder.payloads.lock().unwrap().len(), 1);
    let responses = recorder.responses.lock().unwrap().clone();
    assert_eq!(responses.iter().map(|r| r.0).collect::<Vec<_>>(), [200]);
}

#[tokio::test]
async fn a_refused_request_never_reaches_the_response_hook() {
    let server = MockServer::start(vec![Reply::json(400, "{\"error\":\"bad\"}")]).await;
    let recorder = Arc::new(Recorder::default());
    run(&model("anthropic-messages", server.url("/v1")), &recorder).await;
    assert_eq!(recorder.payloads.lock().unwrap().len(), 1);
    assert!(recorder.responses.lock().unwrap().is_empty());
}

/// A payload hook that waits until its request is cancelled (an extension's
/// `before_provider_request` handler waiting on `ctx.signal`).
struct WaitsForAbort;

#[async_trait]
impl PayloadHook for WaitsForAbort {
    async fn on_payload(&self, _payload: &Value, _model: &Model, cancel: &CancellationToken) -> Option<Value> {
        cancel.cancelled().await;
        None
    }
}

#[tokio::test]
async fn an_abort_reaches_the_payload_hook_through_its_token() {
    let server = MockServer::start(vec![reply()]).await;
    let model = model("openai-completions", server.url("/v1"));
    let messages = [AgentMessage::user("hi")];
    let context = LlmContext {
        system_prompt: "sys",
        messages: &messages,
        tools: &[],
    };
    let cancel = CancellationToken::new();
    let options = StreamOptions {
        api_key: Some("k".into()),
        cancel: cancel.clone(),
        provider_hooks: ProviderHooks {
            on_payload: Some(Arc::new(WaitsForAbort)),
            on_response: None,
        },
        ..StreamOptions::default()
    };
    let abort = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancel.cancel();
    });
    let events = tokio::time::timeout(
        Duration::from_secs(10),
        Providers::new(client())
            .stream(&model, &context, &options)
            .collect::<Vec<_>>(),
    )
    .await
    .expect("the hook returns once the request is aborted");
    abort.await.unwrap();
    assert!(!events.is_empty());
    assert!(server.requests().is_empty(), "an aborted request is not sent");
}
