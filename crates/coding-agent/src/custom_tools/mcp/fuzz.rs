//! Fuzz targets of what an MCP server sends pi: the JSON-RPC lines of its stdout through rmcp's
//! stdio transport (the framing pi uses, damaged and chunked), `tools/list` entries (names, titles,
//! input schemas of any shape) and `tools/call` results.
//!
//! Asserts: no panic; the transport ends at the end of the stream with at most one message per
//! line; every tool gets a unique name of at most 64 letters, digits, `_` or `-`, and an object
//! schema that validates arguments without panicking; a result is a tool result or, for
//! `isError`, a tool error with a message, holding no more than linear in what was sent.

use std::path::Path;
use std::sync::Arc;

use pi_agent_core::ContentBlock;
use pi_test_support::fuzz;
use proptest::prelude::*;
use rmcp::transport::Transport;
use serde_json::{Value, json};

use super::content::convert;
use super::server::McpServer;
use super::tool::build_tools;
use crate::config::McpServerConfig;

fn schema() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})),
        Just(json!({"properties": {"n": {"type": "integer", "minimum": 0}}})),
        Just(json!({"type": "object", "$ref": "#/definitions/missing"})),
        Just(json!({"type": "object", "properties": {"a": {"pattern": "(unclosed"}}})),
        Just(json!({"type": ["object", "null"], "additionalProperties": false})),
        fuzz::json_value(),
    ]
}

fn listed() -> impl Strategy<Value = Vec<Value>> {
    let name = prop_oneof![
        3 => prop::sample::select(vec!["read", "read", "get.weather/now", "x", "a-b_c"]).prop_map(Value::from),
        1 => "[a-z]{60,70}".prop_map(Value::from),
        1 => fuzz::json_value(),
    ];
    let entry = (name, prop::option::of(fuzz::json_value()), prop::option::of(fuzz::awkward_string()), prop::option::of(schema()))
        .prop_map(|(name, annotations, description, schema)| {
            json!({"name": name, "annotations": annotations, "description": description, "inputSchema": schema, "title": description})
        });
    prop::collection::vec(prop_oneof![6 => entry, 1 => fuzz::json_value()], 0..8)
}

fn block() -> impl Strategy<Value = Value> {
    prop_oneof![
        fuzz::awkward_string().prop_map(|text| json!({"type": "text", "text": text})),
        Just(json!({"type": "image", "data": "AAAA", "mimeType": "image/png"})),
        (fuzz::awkward_string(), prop::option::of(fuzz::awkward_string())).prop_map(
            |(uri, text)| json!({"type": "resource", "resource": {"uri": uri, "text": text, "mimeType": "text/plain"}})
        ),
        (fuzz::awkward_string(), fuzz::awkward_string())
            .prop_map(|(uri, name)| json!({"type": "resource_link", "uri": uri, "name": name, "description": name})),
        Just(json!({"type": "audio", "mimeType": "audio/wav", "data": "AAAA"})),
        fuzz::json_value(),
    ]
}

fn result() -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => (prop::collection::vec(block(), 0..5), prop::option::of(fuzz::json_value()), prop::option::of(any::<bool>()))
            .prop_map(|(content, structured, is_error)| json!({"content": content, "structuredContent": structured, "isError": is_error})),
        1 => fuzz::json_value(),
    ]
}

/// A reader that returns the stream in the given chunks, one per read.
struct Chunked(std::collections::VecDeque<Vec<u8>>);

impl tokio::io::AsyncRead for Chunked {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        if let Some(chunk) = self.0.front_mut() {
            let n = chunk.len().min(buf.remaining());
            buf.put_slice(&chunk[..n]);
            chunk.drain(..n);
            if chunk.is_empty() {
                self.0.pop_front();
            }
        }
        std::task::Poll::Ready(Ok(()))
    }
}

fn server() -> Arc<McpServer> {
    let config = McpServerConfig {
        command: "pi-fuzz-never-started".to_owned(),
        ..McpServerConfig::default()
    };
    Arc::new(McpServer::new("my server", &config, Path::new("/"), None))
}

proptest! {
    #![proptest_config(fuzz::config())]

    #[test]
    fn fuzz_mcp_tools_list(listed in listed(), args in fuzz::json_value()) {
        let tools = build_tools(&server(), &listed);
        let named = listed.iter().filter(|entry| entry.get("name").is_some_and(Value::is_string)).count();
        prop_assert_eq!(tools.len(), named);
        let mut names = std::collections::HashSet::new();
        for tool in &tools {
            let name = tool.name();
            prop_assert!(!name.is_empty() && name.len() <= 64, "{}", name);
            prop_assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'), "{}", name);
            prop_assert!(names.insert(name.to_owned()), "{} twice", name);
            prop_assert!(tool.parameters().schema().is_object());
            let _ = tool.parameters().validate(name, &args);
        }
    }

    #[test]
    fn fuzz_mcp_call_result(result in result()) {
        let sent = result.to_string().len();
        match convert(result.clone(), "t", "s") {
            Ok(converted) => {
                let size: usize = converted.content.iter().map(|block| match block {
                    ContentBlock::Text(text) => text.text.len(),
                    other => serde_json::to_string(other).map_or(0, |t| t.len()),
                }).sum();
                prop_assert!(size <= 2 * sent + 64 * converted.content.len(), "{} bytes from {}", size, sent);
            }
            Err(error) => {
                prop_assert_eq!(result.get("isError").and_then(Value::as_bool), Some(true));
                prop_assert!(!error.message().is_empty());
            }
        }
    }

    /// Lines from the server's stdout through rmcp's stdio transport.
    #[test]
    fn fuzz_mcp_framing(lines in prop::collection::vec(prop_oneof![
        Just(json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}})),
        Just(json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 0.5}})),
        Just(json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "no"}})),
        Just(json!({"jsonrpc": "2.0", "id": 3, "method": "roots/list"})),
        Just(json!({"jsonrpc": "2.0", "method": "window/logMessage", "params": {}})),
        fuzz::json_value(),
    ].prop_map(|m| m.to_string()), 0..10), cuts in fuzz::cuts(), garble in fuzz::damage()) {
        let text = lines.join("\n");
        let bytes = garble.apply(text.as_bytes());
        let line_count = bytes.split(|b| *b == b'\n').count();
        let chunks: Vec<Vec<u8>> = fuzz::chunks(&bytes, &cuts).into_iter().map(<[u8]>::to_vec).collect();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let received = runtime.block_on(async move {
            let reader = Chunked(chunks.into_iter().filter(|c| !c.is_empty()).collect());
            let mut transport = rmcp::transport::async_rw::AsyncRwTransport::new_client(reader, tokio::io::sink());
            let mut received = 0;
            // Bounded: every message takes a line, so the stream ends within its lines.
            while received <= line_count {
                match tokio::time::timeout(std::time::Duration::from_secs(5), transport.receive()).await {
                    Ok(Some(_)) => received += 1,
                    Ok(None) => break,
                    Err(_) => return Err("the transport hung at the end of the stream".to_owned()),
                }
            }
            Ok(received)
        }).map_err(TestCaseError::fail)?;
        prop_assert!(received <= line_count, "{} messages from {} lines", received, line_count);
    }
}

/// Found while fuzzing: an `isError` result whose content is one empty text block gave the model
/// an empty error message; it now says which tool of which server failed.
#[test]
fn fuzz_mcp_error_with_empty_text_names_the_tool() {
    let result = json!({"content": [{"type": "text", "text": ""}], "isError": true});
    let error = convert(result, "t", "s").map(|_| ()).unwrap_err();
    assert_eq!(error.message(), "MCP tool \"t\" of server \"s\" failed");
}
