//! SSE + tool-call-argument parsing throughput of the `openai-completions` stream mapping.
//!
//! A chat-completions transcript is generated in memory the way OpenAI streams a response with
//! many parallel tool calls: a short text preamble, then [`CALLS`] `write` calls whose JSON
//! arguments (a path and a file of about [`FILE_BYTES`] bytes) arrive in 3–6 byte fragments, one
//! `chat.completion.chunk` per fragment, then `finish_reason`, a usage chunk and `[DONE]`. The
//! bytes are fed in 16 KiB reads through [`SseParser`], the completions [`WireProtocol`] and a
//! [`MessageBuilder`] (which re-parses the partial arguments after every fragment). No network is
//! involved.
//!
//! Run with `cargo bench -p pi-ai --bench sse_parse`. Before criterion's report it prints
//!
//! ```text
//! sse+args parse (openai-completions): X MB/s (median of 15 runs over a N MB transcript, …)
//! sse+args parse (openai-completions, events held per 16 KiB read): Y MB/s (…)
//! ```
//!
//! (MB = 10^6 bytes of SSE transcript). The first figure drops every event as soon as it is
//! produced, so the builder updates the message in place; the second keeps the events of one read
//! alive until the read is processed, as `driver.rs` does before sending them, so each event after
//! the first of a read copies the message so far. Under `cargo test --benches` the bench runs once
//! on a small transcript as a smoke test.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use pi_agent_core::{AssistantMessage, AssistantMessageEvent, Model, StopReason};
use pi_ai::openai_completions::{Compat, CompletionsProtocol};
use pi_ai::{Flow, MessageBuilder, SseParser, WireProtocol};
use serde_json::json;

/// Parallel tool calls in the response.
const CALLS: usize = 48;
/// Size of the file each call writes.
const FILE_BYTES: usize = 3_000;
/// The smaller shape used when the bench only runs as a smoke test (`cargo test --benches`).
const SMOKE_CALLS: usize = 3;
const SMOKE_FILE_BYTES: usize = 300;
/// Size of the reads the body arrives in.
const READ_BYTES: usize = 16 * 1024;

const PRINTED_RUNS: usize = 15;
const WARM_UP_RUNS: usize = 3;

fn model() -> Model {
    Model {
        id: "gpt-bench".into(),
        api: "openai-completions".into(),
        provider: "bench".into(),
        base_url: "http://127.0.0.1:1/v1".into(),
        ..Model::unknown()
    }
}

fn chunk(delta: serde_json::Value) -> String {
    let chunk = json!({
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "gpt-bench",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": null}],
    });
    format!("data: {chunk}\n\n")
}

/// Splits `text` into fragments of 3–6 bytes (on character boundaries), like model tokens.
fn fragments(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut size = 3;
    while start < text.len() {
        let mut end = (start + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
        size = 3 + (size + 1) % 4;
    }
    out
}

/// Some source-like text with quotes, escapes and newlines to exercise the JSON strings.
fn file_text(call: usize, bytes: usize) -> String {
    let mut text = String::new();
    let mut line = 0;
    while text.len() < bytes {
        text.push_str(&format!(
            "    let value_{call}_{line} = format!(\"{{}} \\\"quoted\\\" é\", input[{line}]); // step {line}\n"
        ));
        line += 1;
    }
    text
}

/// A response of `calls` `write` calls of `file_bytes`-byte files.
#[derive(Debug, Clone, Copy)]
struct Shape {
    calls: usize,
    file_bytes: usize,
}

fn transcript(shape: Shape) -> String {
    let mut out = String::new();
    out.push_str(&chunk(json!({"role": "assistant", "content": ""})));
    for piece in fragments("I will write all the files now, one call per file, in parallel.") {
        out.push_str(&chunk(json!({"content": piece})));
    }
    for call in 0..shape.calls {
        let content = file_text(call, shape.file_bytes);
        let arguments = json!({"path": format!("src/generated/file_{call}.rs"), "content": content}).to_string();
        out.push_str(&chunk(json!({"tool_calls": [{
            "index": call, "id": format!("call_{call:04}"), "type": "function",
            "function": {"name": "write", "arguments": ""},
        }]})));
        for piece in fragments(&arguments) {
            out.push_str(&chunk(
                json!({"tool_calls": [{"index": call, "function": {"arguments": piece}}]}),
            ));
        }
    }
    out.push_str(&format!(
        "data: {}\n\n",
        json!({"id": "chatcmpl-bench", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    ));
    out.push_str(&format!(
        "data: {}\n\n",
        json!({"id": "chatcmpl-bench", "object": "chat.completion.chunk", "choices": [],
               "usage": {"prompt_tokens": 5000, "completion_tokens": 40000, "total_tokens": 45000}})
    ));
    out.push_str("data: [DONE]\n\n");
    out
}

/// How long the consumer keeps the events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Consumer {
    /// Each event is dropped as soon as it is produced: the builder updates the message in place.
    DropsEach,
    /// The events of one read are kept until the read is processed, as `driver.rs` buffers
    /// them before sending: every event after the first of a read copies the message.
    HoldsPerRead,
}

/// Parses the whole transcript and returns the final message.
fn parse(model: &Model, bytes: &[u8], consumer: Consumer) -> AssistantMessage {
    let mut parser = SseParser::default();
    let mut protocol = CompletionsProtocol::new(model, &Compat::for_model(model));
    let mut builder = MessageBuilder::new(model);
    let mut out: Vec<AssistantMessageEvent> = vec![builder.start()];
    for read in bytes.chunks(READ_BYTES) {
        for event in parser.feed(read) {
            let flow = protocol.on_event(event, &mut builder, &mut out).unwrap();
            if consumer == Consumer::DropsEach {
                black_box(&out);
                out.clear();
            }
            if let Flow::Finished(reason) = flow {
                out.clear();
                return match builder.done(reason) {
                    AssistantMessageEvent::Done { message, .. } => message,
                    other => panic!("unexpected {}", other.kind()),
                };
            }
        }
        black_box(&out);
        out.clear();
    }
    panic!("the transcript ended without [DONE]");
}

fn check(message: &AssistantMessage, shape: Shape) {
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    assert_eq!(message.tool_calls().count(), shape.calls);
    let last = message.tool_calls().last().unwrap();
    assert_eq!(last.id, format!("call_{:04}", shape.calls - 1));
    let content = file_text(shape.calls - 1, shape.file_bytes);
    assert_eq!(last.arguments["content"].as_str().unwrap(), content);
}

/// Median time of one parse.
fn median(model: &Model, bytes: &[u8], consumer: Consumer) -> Duration {
    for _ in 0..WARM_UP_RUNS {
        black_box(parse(model, bytes, consumer));
    }
    let mut times: Vec<Duration> = (0..PRINTED_RUNS)
        .map(|_| {
            let start = Instant::now();
            black_box(parse(model, bytes, consumer));
            start.elapsed()
        })
        .collect();
    times.sort_unstable();
    times[times.len() / 2]
}

fn print_figures(model: &Model, bytes: &[u8], shape: Shape) {
    let megabytes = bytes.len() as f64 / 1e6;
    let content = file_text(0, shape.file_bytes);
    let argument_bytes = shape.calls
        * json!({"path": "src/generated/file_00.rs", "content": content})
            .to_string()
            .len();
    let each = median(model, bytes, Consumer::DropsEach);
    println!(
        "sse+args parse (openai-completions): {:.1} MB/s (median of {PRINTED_RUNS} runs over a {megabytes:.2} MB transcript, {} tool calls, ~{:.0} KB of arguments in 3-6 byte fragments, {:.1} ms per transcript, events dropped as produced)",
        megabytes / each.as_secs_f64(),
        shape.calls,
        argument_bytes as f64 / 1e3,
        each.as_secs_f64() * 1e3,
    );
    let held = median(model, bytes, Consumer::HoldsPerRead);
    println!(
        "sse+args parse (openai-completions, events held per 16 KiB read): {:.1} MB/s ({:.1} ms per transcript)",
        megabytes / held.as_secs_f64(),
        held.as_secs_f64() * 1e3,
    );
}

fn main() {
    let model = model();
    // `cargo bench` passes `--bench`; `cargo test --benches` does not, and then criterion runs the
    // benchmark once as a smoke test on a small transcript, and no figure is printed.
    let benching = std::env::args().any(|arg| arg == "--bench");
    let listing = std::env::args().any(|arg| arg == "--list");
    let shape = if benching {
        Shape {
            calls: CALLS,
            file_bytes: FILE_BYTES,
        }
    } else {
        Shape {
            calls: SMOKE_CALLS,
            file_bytes: SMOKE_FILE_BYTES,
        }
    };
    let text = transcript(shape);
    let bytes = text.as_bytes();
    check(&parse(&model, bytes, Consumer::DropsEach), shape);
    check(&parse(&model, bytes, Consumer::HoldsPerRead), shape);
    if benching && !listing {
        print_figures(&model, bytes, shape);
    }
    let mut criterion = Criterion::default().configure_from_args();
    {
        let mut group = criterion.benchmark_group("sse_parse");
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(3))
            .throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function("openai_completions", |b| {
            b.iter(|| black_box(parse(&model, bytes, Consumer::DropsEach)))
        });
        group.finish();
    }
    criterion.final_summary();
}
