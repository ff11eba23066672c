//! The `anthropic-messages` API against a scripted server on 127.0.0.1: streaming text, tool
//! calls and thinking, usage and cost, retries, failures, abort, the request bodies we send,
//! and the agent loop running a tool-call conversation over it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use pi_agent_core::{
    AgentContext, AgentEvent, AgentLoopConfig, AgentMessage, AgentTool, AssistantMessage, AssistantMessageEvent,
    ContentBlock, FnTool, LlmContext, Model, StopReason, StreamOptions, TextContent, ThinkingContent, ThinkingLevel,
    ToolCall, ToolChoice, ToolResult, UserContent, UserMessage, run_agent_loop,
};
use pi_ai::anthropic;
use pi_ai::{HttpClient, HttpOptions};
use pi_test_support::anthropic::{
    block_delta, block_start, block_stop, error_body, event, message_end, message_start, model, small_usage,
    text as text_reply, text_block, text_events, tool_block,
};
use pi_test_support::stream::{API_KEY, assert_no_key, final_message, kinds, options};
use pi_test_support::{MockServer, Reply, messages, pretty, tools};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const SYSTEM: &str = "You are terse.";

fn client_with(base_delay: Duration) -> HttpClient {
    HttpClient::new(HttpOptions {
        max_retries: 2,
        base_delay,
        max_retry_delay: Duration::from_secs(30),
        connect_timeout: Duration::from_secs(2),
        idle_timeout: Duration::from_secs(5),
        total_timeout: Duration::from_secs(30),
    })
}

fn client() -> HttpClient {
    client_with(Duration::from_millis(5))
}

fn path_tool(name: &str) -> Arc<dyn AgentTool> {
    tools::unused(
        name,
        &format!("The {name} tool"),
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    )
}

// ---- running a call ---------------------------------------------------------------------

async fn run_with(
    client: &HttpClient,
    model: &Model,
    messages: &[AgentMessage],
    tools: &[Arc<dyn AgentTool>],
    options: &StreamOptions,
) -> Vec<AssistantMessageEvent> {
    let context = LlmContext {
        system_prompt: SYSTEM,
        messages,
        tools,
    };
    anthropic::stream(client, model, &context, options).collect().await
}

async fn run(server: &MockServer, messages: &[AgentMessage]) -> Vec<AssistantMessageEvent> {
    run_with(&client(), &model(server.base_url()), messages, &[], &options()).await
}

// ---- tests --------------------------------------------------------------------------------

#[tokio::test]
async fn plain_text() {
    let server = MockServer::start(vec![text_reply("msg_01", &["Hel", "lo!"])]).await;
    let events = run(&server, &[AgentMessage::user("Say hello")]).await;

    assert_eq!(
        kinds(&events),
        ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    );
    let message = final_message(&events);
    assert_eq!(message.text(), "Hello!");
    assert_eq!(message.stop_reason, StopReason::Stop);
    assert_eq!(message.response_id.as_deref(), Some("msg_01"));
    assert_eq!(message.api, "anthropic-messages");
    assert_eq!(message.model, "claude-test-1");

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.line, "POST /v1/messages");
    assert_eq!(request.header("x-api-key"), Some(API_KEY));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("accept"), Some("text/event-stream"));
    let content_types: Vec<_> = request.headers.iter().filter(|(n, _)| n == "content-type").collect();
    assert_eq!(content_types.len(), 1);
    assert_eq!(content_types[0].1, "application/json");
    let body = request.json();
    assert_eq!(body["stream"], true);
    assert_eq!(body["model"], "claude-test-1");
    assert_eq!(body["max_tokens"], 32_000);
    assert!(body.get("tools").is_none());
    // The mock model can reason; at `off` it is told not to (pi-ai's `thinking: {type: "disabled"}`).
    assert_eq!(body["thinking"], json!({"type": "disabled"}));
}

#[tokio::test]
async fn base_url_ending_in_v1_is_not_doubled_and_headers_merge() {
    let server = MockServer::start(vec![text_reply("msg_02", &["ok"])]).await;
    let mut model = model(server.url("/v1/"));
    model.headers = Some(BTreeMap::from([
        ("x-model-header".to_owned(), "m".to_owned()),
        ("Anthropic-Version".to_owned(), "2099-01-01".to_owned()),
    ]));
    let mut options = options();
    options.headers.insert("x-model-header".into(), "from-options".into());
    let events = run_with(&client(), &model, &[AgentMessage::user("hi")], &[], &options).await;
    assert_eq!(final_message(&events).text(), "ok");

    let request = &server.requests()[0];
    assert_eq!(request.line, "POST /v1/messages");
    assert_eq!(request.header("x-model-header"), Some("from-options"));
    let versions: Vec<_> = request
        .headers
        .iter()
        .filter(|(n, _)| n == "anthropic-version")
        .collect();
    assert_eq!(versions.len(), 1);
    assert_eq!(versions[0].1, "2099-01-01");
}

#[tokio::test]
async fn several_tool_calls_keep_order_ids_and_parse_progressively() {
    let mut chunks = vec![message_start("msg_tools", small_usage())];
    chunks.extend(text_block(0, &["I'll read both."]));
    chunks.extend(tool_block(
        1,
        "toolu_A",
        "read",
        &[r#"{"path"#, r#"": "src/ma"#, r#"in.rs"}"#],
    ));
    chunks.extend(tool_block(2, "toolu_B", "read", &[r#"{"path": "Cargo.toml"}"#]));
    chunks.extend(message_end("tool_use", 40));
    let server = MockServer::start(vec![Reply::events(&chunks)]).await;
    let tools = [path_tool("read")];
    let events = run_with(
        &client(),
        &model(server.base_url()),
        &[AgentMessage::user("read")],
        &tools,
        &options(),
    )
    .await;

    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    let calls: Vec<_> = message.tool_calls().collect();
    assert_eq!(calls.len(), 2);
    assert_eq!((calls[0].id.as_str(), calls[0].name.as_str()), ("toolu_A", "read"));
    assert_eq!(calls[0].arguments, json!({"path": "src/main.rs"}));
    assert_eq!((calls[1].id.as_str(), calls[1].name.as_str()), ("toolu_B", "read"));
    assert_eq!(calls[1].arguments, json!({"path": "Cargo.toml"}));
    assert!(matches!(message.content[0], ContentBlock::Text(_)));

    // The second fragment leaves `{"path": "src/ma`: the partial already holds that much.
    let partially_parsed = events.iter().any(|event| match event {
        AssistantMessageEvent::ToolCallDelta {
            content_index: 1,
            partial,
            ..
        } => partial.content[1].as_tool_call().map(|c| c.arguments.clone()) == Some(json!({"path": "src/ma"})),
        _ => false,
    });
    assert!(partially_parsed, "no toolcall_delta with partially parsed arguments");

    let ends: Vec<_> = events
        .iter()
        .filter_map(|event| match event {
            AssistantMessageEvent::ToolCallEnd {
                content_index,
                tool_call,
                ..
            } => Some((*content_index, tool_call.id.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(ends, [(1, "toolu_A".to_owned()), (2, "toolu_B".to_owned())]);
}

#[tokio::test]
async fn thinking_and_redacted_thinking_round_trip() {
    let mut chunks = vec![message_start("msg_think", small_usage())];
    chunks.push(block_start(
        0,
        json!({"type": "thinking", "thinking": "", "signature": ""}),
    ));
    chunks.push(block_delta(
        0,
        json!({"type": "thinking_delta", "thinking": "Two plus two "}),
    ));
    chunks.push(block_delta(
        0,
        json!({"type": "thinking_delta", "thinking": "is four."}),
    ));
    chunks.push(block_delta(
        0,
        json!({"type": "signature_delta", "signature": "EqQBCgIYAh"}),
    ));
    chunks.push(block_delta(
        0,
        json!({"type": "signature_delta", "signature": "IQ-part-two"}),
    ));
    chunks.push(block_stop(0));
    chunks.push(block_start(
        1,
        json!({"type": "redacted_thinking", "data": "ENCRYPTED-BLOB"}),
    ));
    chunks.push(block_stop(1));
    chunks.extend(text_block(2, &["4"]));
    chunks.extend(message_end("end_turn", 30));
    let server = MockServer::start(vec![Reply::events(&chunks), text_reply("msg_next", &["ok"])]).await;
    let model = model(server.base_url());
    let mut options = options();
    options.reasoning = Some(ThinkingLevel::Medium);
    options.temperature = Some(0.7);

    let question = AgentMessage::user("2 + 2?");
    let events = run_with(&client(), &model, std::slice::from_ref(&question), &[], &options).await;
    assert_eq!(
        kinds(&events),
        [
            "start",
            "thinking_start",
            "thinking_delta",
            "thinking_delta",
            "thinking_end",
            "thinking_start",
            "thinking_delta",
            "thinking_end",
            "text_start",
            "text_delta",
            "text_end",
            "done"
        ]
    );
    let answer = final_message(&events).clone();
    assert_eq!(
        answer.content[0],
        ContentBlock::Thinking(ThinkingContent {
            thinking: "Two plus two is four.".into(),
            thinking_signature: Some("EqQBCgIYAhIQ-part-two".into()),
            redacted: None,
        })
    );
    assert_eq!(
        answer.content[1],
        ContentBlock::Thinking(ThinkingContent {
            thinking: anthropic::REDACTED_THINKING_TEXT.into(),
            thinking_signature: Some("ENCRYPTED-BLOB".into()),
            redacted: Some(true),
        })
    );
    assert_eq!(answer.text(), "4");

    let first = server.requests()[0].json();
    assert_eq!(
        first["thinking"],
        json!({"type": "enabled", "budget_tokens": 8192, "display": "summarized"})
    );
    assert!(
        first.get("temperature").is_none(),
        "temperature is not allowed with thinking"
    );

    let history = [question, answer.into(), AgentMessage::user("And 3 + 3?")];
    let events = run_with(&client(), &model, &history, &[], &options).await;
    assert_eq!(final_message(&events).text(), "ok");
    let second = server.requests()[1].json();
    insta::assert_snapshot!("request_thinking_round_trip", pretty(&second));
}

#[tokio::test]
async fn usage_and_cost_from_the_model_prices() {
    let usage = json!({"input_tokens": 1000, "cache_read_input_tokens": 2000,
                       "cache_creation_input_tokens": 500, "output_tokens": 1});
    let mut chunks = vec![message_start("msg_usage", usage)];
    chunks.extend(text_block(0, &["counted"]));
    chunks.extend(message_end("end_turn", 300));
    let server = MockServer::start(vec![Reply::events(&chunks)]).await;
    let events = run(&server, &[AgentMessage::user("count")]).await;

    let usage = final_message(&events).usage;
    assert_eq!(
        (
            usage.input,
            usage.output,
            usage.cache_read,
            usage.cache_write,
            usage.total_tokens
        ),
        (1000, 300, 2000, 500, 3800)
    );
    let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    assert!(close(usage.cost.input, 0.003), "{:?}", usage.cost);
    assert!(close(usage.cost.output, 0.0045), "{:?}", usage.cost);
    assert!(close(usage.cost.cache_read, 0.0006), "{:?}", usage.cost);
    assert!(close(usage.cost.cache_write, 0.001875), "{:?}", usage.cost);
    assert!(
        close(usage.cost.total, 0.003 + 0.0045 + 0.0006 + 0.001875),
        "{:?}",
        usage.cost
    );
}

#[tokio::test]
async fn rate_limit_with_retry_after_zero_then_success() {
    let server = MockServer::start(vec![
        Reply::json(429, &error_body("rate_limit_error", "slow down")).header("retry-after", "0"),
        text_reply("msg_retry", &["after the wait"]),
    ])
    .await;
    // A long base delay: only an honoured `retry-after: 0` finishes quickly.
    let started = Instant::now();
    let events = run_with(
        &client_with(Duration::from_secs(20)),
        &model(server.base_url()),
        &[AgentMessage::user("hi")],
        &[],
        &options(),
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(final_message(&events).text(), "after the wait");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn overloaded_529_is_retried() {
    let server = MockServer::start(vec![
        Reply::json(529, &error_body("overloaded_error", "Overloaded")),
        text_reply("msg_529", &["fine now"]),
    ])
    .await;
    let events = run(&server, &[AgentMessage::user("hi")]).await;
    assert_eq!(final_message(&events).text(), "fine now");
    assert_eq!(final_message(&events).stop_reason, StopReason::Stop);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn server_errors_exhaust_the_retries() {
    let failure = error_body("api_error", "internal boom");
    let server = MockServer::start(vec![
        Reply::json(500, &failure),
        Reply::json(500, &failure),
        Reply::json(500, &failure),
    ])
    .await;
    let events = run(&server, &[AgentMessage::user("hi")]).await;
    assert_eq!(kinds(&events), ["start", "error"]);
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Error);
    let error = message.error_message.as_deref().unwrap();
    assert!(error.contains("500"), "{error}");
    assert!(error.contains("internal boom"), "{error}");
    assert_eq!(server.requests().len(), 3, "one attempt and two retries");
    assert_no_key(&events);
}

#[tokio::test]
async fn malformed_sse_is_an_error_not_a_panic() {
    let mut chunks = vec![message_start("msg_bad", small_usage())];
    chunks.push(block_start(0, json!({"type": "text", "text": ""})));
    chunks.push(block_delta(0, json!({"type": "text_delta", "text": "Hel"})));
    chunks.push(
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"text\n\n".into(),
    );
    chunks.extend(message_end("end_turn", 5));
    let server = MockServer::start(vec![Reply::events(&chunks)]).await;
    let events = run(&server, &[AgentMessage::user("hi")]).await;
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Error);
    let error = message.error_message.as_deref().unwrap();
    assert!(error.starts_with("Malformed SSE data from anthropic: "), "{error}");
    assert_eq!(message.text(), "Hel", "what arrived before the bad event is kept");
}

#[tokio::test]
async fn error_event_mid_stream() {
    let mut chunks = vec![message_start("msg_err", small_usage())];
    chunks.extend(text_block(0, &["partial"]));
    chunks.push(event(
        "error",
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ));
    let server = MockServer::start(vec![Reply::events(&chunks)]).await;
    let events = run(&server, &[AgentMessage::user("hi")]).await;
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(message.error_message.as_deref(), Some("overloaded_error: Overloaded"));
    assert_eq!(message.text(), "partial");
}

#[tokio::test]
async fn stream_cut_before_message_stop_is_an_error() {
    let mut chunks = vec![message_start("msg_cut", small_usage())];
    chunks.push(block_start(0, json!({"type": "text", "text": ""})));
    chunks.push(block_delta(0, json!({"type": "text_delta", "text": "half"})));
    let server = MockServer::start(vec![Reply::events(&chunks)]).await;
    let events = run(&server, &[AgentMessage::user("hi")]).await;
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Error);
    assert!(message.error_message.as_deref().unwrap().contains("message_stop"));
}

#[tokio::test]
async fn abort_mid_stream() {
    let first = [
        message_start("msg_abort", small_usage()),
        block_start(0, json!({"type": "text", "text": ""})),
        block_delta(0, json!({"type": "text_delta", "text": "Hel"})),
    ]
    .concat();
    let mut chunks = vec![first, block_delta(0, json!({"type": "text_delta", "text": "lo"}))];
    chunks.push(block_stop(0));
    chunks.extend(message_end("end_turn", 5));
    let server = MockServer::start(vec![Reply::events(&chunks).paced(Duration::from_secs(5))]).await;

    let options = options();
    let messages = [AgentMessage::user("hi")];
    let context = LlmContext {
        system_prompt: SYSTEM,
        messages: &messages,
        tools: &[],
    };
    let mut stream = anthropic::stream(&client(), &model(server.base_url()), &context, &options);
    let mut events = Vec::new();
    let mut cancelled_at = None;
    while let Some(event) = tokio::time::timeout(Duration::from_secs(2), stream.next())
        .await
        .expect("the stream stalled")
    {
        if event.kind() == "text_delta" && cancelled_at.is_none() {
            options.cancel.cancel();
            cancelled_at = Some(Instant::now());
        }
        events.push(event);
    }
    let cancelled_at = cancelled_at.expect("no text_delta arrived");
    assert!(cancelled_at.elapsed() < Duration::from_secs(1), "abort was not prompt");
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Aborted);
    assert_eq!(message.error_message.as_deref(), Some("Request was aborted"));
    assert_eq!(message.text(), "Hel");
}

#[tokio::test]
async fn forced_tool_choice() {
    let server = MockServer::start(vec![text_reply("msg_force", &["ok"])]).await;
    let resolve = tools::unused(
        "resolve",
        "Resolve the pending action",
        json!({"type": "object", "properties": {"action": {"type": "string", "enum": ["apply", "discard"]}},
               "required": ["action"]}),
    );
    let mut options = options();
    options.tool_choice = Some(ToolChoice::Tool("resolve".into()));
    options.reasoning = Some(ThinkingLevel::High);
    let events = run_with(
        &client(),
        &model(server.base_url()),
        &[AgentMessage::user("decide")],
        &[resolve],
        &options,
    )
    .await;
    assert_eq!(final_message(&events).stop_reason, StopReason::Stop);
    let body = server.requests()[0].json();
    assert_eq!(body["tool_choice"], json!({"type": "tool", "name": "resolve"}));
    assert!(
        body.get("thinking").is_none(),
        "thinking is not allowed with a forced tool"
    );
    insta::assert_snapshot!("request_tool_choice", pretty(&body));
}

fn assistant(content: Vec<ContentBlock>, stop_reason: StopReason) -> AgentMessage {
    messages::assistant(&model(String::new()), content, stop_reason)
}

#[tokio::test]
async fn conversation_request_body() {
    let server = MockServer::start(vec![text_reply("msg_conv", &["done"])]).await;
    let messages = vec![
        AgentMessage::User(UserMessage {
            content: UserContent::Text("List the files.".into()),
            timestamp: 0,
        }),
        AgentMessage::User(UserMessage {
            content: UserContent::Blocks(vec![
                ContentBlock::text("What is in this picture?"),
                ContentBlock::image("iVBORw0KGgo=", "image/png"),
            ]),
            timestamp: 0,
        }),
        assistant(
            vec![
                ContentBlock::Thinking(ThinkingContent {
                    thinking: "I should look at both.".into(),
                    thinking_signature: Some("sig-abc".into()),
                    redacted: None,
                }),
                ContentBlock::Text(TextContent::new("Let me look.")),
                ContentBlock::ToolCall(ToolCall::new("toolu_01", "read", json!({"path": "src/main.rs"}))),
                ContentBlock::ToolCall(ToolCall::new("toolu_02", "screenshot", json!({"path": "."}))),
            ],
            StopReason::ToolUse,
        ),
        messages::tool_result("toolu_01", "read", vec![ContentBlock::text("fn main() {}")], false),
        messages::tool_result(
            "toolu_02",
            "screenshot",
            vec![
                ContentBlock::image("R0lGODlh", "image/gif"),
                ContentBlock::text("screen.gif"),
            ],
            false,
        ),
        // Failed turns are left out, with the results answering them.
        AgentMessage::Assistant(AssistantMessage {
            error_message: Some("boom".into()),
            ..assistant(
                vec![
                    ContentBlock::text("half an ans"),
                    ContentBlock::ToolCall(ToolCall::new("toolu_err", "read", json!({}))),
                ],
                StopReason::Error,
            )
            .as_assistant()
            .unwrap()
            .clone()
        }),
        messages::tool_result("toolu_err", "read", vec![ContentBlock::text("stale")], false),
        // An orphaned call gets a synthetic error result.
        assistant(
            vec![ContentBlock::ToolCall(ToolCall::new(
                "toolu_03",
                "bash",
                json!({"command": "ls"}),
            ))],
            StopReason::ToolUse,
        ),
        AgentMessage::user("Thanks, continue."),
    ];
    let tools = [
        path_tool("read"),
        path_tool("screenshot"),
        tools::unused(
            "bash",
            "Run a command",
            json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
        ),
    ];
    let mut options = options();
    options.temperature = Some(0.2);
    options.max_tokens = Some(1024);
    let events = run_with(&client(), &model(server.base_url()), &messages, &tools, &options).await;
    assert_eq!(final_message(&events).text(), "done");

    let body = server.requests()[0].json();
    let text = pretty(&body);
    assert!(text.contains("No result provided"));
    assert!(!text.contains("half an ans") && !text.contains("stale"));
    assert!(!text.contains("never"), "details are not sent");
    insta::assert_snapshot!("request_conversation", text);
}

#[tokio::test]
async fn api_key_never_appears_in_errors_or_snapshots() {
    let echo = error_body("authentication_error", &format!("invalid x-api-key: {API_KEY}"));
    let server = MockServer::start(vec![Reply::json(401, &echo)]).await;
    let events = run(&server, &[AgentMessage::user("hi")]).await;
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Error);
    let error = message.error_message.as_deref().unwrap();
    assert!(error.contains("401"), "{error}");
    assert!(error.contains("authentication_error"), "{error}");
    assert_eq!(server.requests().len(), 1, "401 is not retried");
    assert_no_key(&events);

    let snapshots = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    for entry in std::fs::read_dir(snapshots).into_iter().flatten() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("anthropic__") {
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(!text.contains(API_KEY), "key in {name}");
        }
    }
}

#[tokio::test]
async fn agent_loop_runs_a_tool_call_conversation() {
    let mut first = vec![message_start("msg_turn1", small_usage())];
    first.extend(text_block(0, &["Greeting now."]));
    first.extend(tool_block(1, "toolu_greet", "greet", &[r#"{"name":"#, r#" "pi"}"#]));
    first.extend(message_end("tool_use", 20));
    let second = text_events("msg_turn2", &["pi has been ", "greeted."]);
    let server = MockServer::start(vec![Reply::events(&first), Reply::events(&second)]).await;

    let client = client();
    let stream_fn = move |m: &Model, c: &LlmContext<'_>, o: &StreamOptions| anthropic::stream(&client, m, c, o);
    let mut config = AgentLoopConfig::new(model(server.base_url())).with_stream_fn(Arc::new(stream_fn));
    config.api_key = Some(API_KEY.into());
    let greet = FnTool::new(
        "greet",
        "Greets someone",
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
        |_id, args, _ctx| async move {
            Ok(ToolResult::text(format!(
                "hello {}",
                args["name"].as_str().unwrap_or("")
            )))
        },
    )
    .into_arc();
    let context = AgentContext {
        system_prompt: SYSTEM.into(),
        messages: Vec::new(),
        tools: vec![greet],
    };
    let mut event_kinds = Vec::new();
    let added = run_agent_loop(
        vec![AgentMessage::user("greet pi")],
        context,
        &config,
        &CancellationToken::new(),
        &mut |event: AgentEvent| event_kinds.push(event.kind()),
    )
    .await
    .unwrap();

    let roles: Vec<_> = added.iter().map(AgentMessage::role).collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "assistant"]);
    let turn1 = added[1].as_assistant().unwrap();
    assert_eq!(turn1.stop_reason, StopReason::ToolUse);
    assert_eq!(turn1.tool_calls().next().unwrap().arguments, json!({"name": "pi"}));
    let result = added[2].as_tool_result().unwrap();
    assert_eq!(
        (result.tool_call_id.as_str(), result.text().as_str()),
        ("toolu_greet", "hello pi")
    );
    let turn2 = added[3].as_assistant().unwrap();
    assert_eq!(turn2.text(), "pi has been greeted.");
    assert_eq!(turn2.stop_reason, StopReason::Stop);
    assert_eq!(event_kinds.first(), Some(&"agent_start"));
    assert_eq!(event_kinds.last(), Some(&"agent_end"));

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let body = requests[1].json();
    assert_eq!(body["tools"][0]["name"], "greet");
    assert_eq!(
        body["messages"][1],
        json!({"role": "assistant", "content": [
            {"type": "text", "text": "Greeting now."},
            {"type": "tool_use", "id": "toolu_greet", "name": "greet", "input": {"name": "pi"}}
        ]})
    );
    assert_eq!(
        body["messages"][2],
        json!({"role": "user", "content": [{
            "type": "tool_result", "tool_use_id": "toolu_greet",
            "content": [{"type": "text", "text": "hello pi"}],
            "is_error": false,
            "cache_control": {"type": "ephemeral"}
        }]})
    );
}
