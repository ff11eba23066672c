//! Fuzz target of the process protocol's framing: what a tool process writes on stdout (JSON-RPC
//! requests, responses, notifications with awkward params and ids, blank, CRLF, garbage and
//! unfinished lines), read in chunks of any size; and pi's own lines.
//!
//! Asserts: no panic; the lines read are exactly the stream's lines, however it is chunked, and
//! the line buffer holds no more than the longest line plus one chunk; a line that is not JSON is
//! quoted in at most 80 characters on one line; a request's id is not null; pi's requests, notifications and answers are one line each and
//! read back as what was sent; the `initialize` and `execute` answers are checked with the
//! documented errors.

use pi_test_support::fuzz;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::super::protocol::{
    Incoming, MAX_LINE, RpcError, notification_line, parse_definitions, parse_line, parse_result, request_line,
    response_line, start_of,
};
use super::{Read, read_line};

fn message() -> impl Strategy<Value = Value> {
    let id = prop_oneof![4 => (0u64..100).prop_map(Value::from), 1 => fuzz::json_value()];
    let method = prop_oneof![
        3 => prop::sample::select(vec!["update", "ui.confirm", "exec", "log", "pendingAction.resolve"]).prop_map(str::to_owned),
        1 => fuzz::awkward_string(),
    ];
    prop_oneof![
        (id.clone(), fuzz::json_value()).prop_map(|(id, result)| json!({"jsonrpc": "2.0", "id": id, "result": result})),
        (id.clone(), fuzz::json_value(), fuzz::json_value()).prop_map(|(id, code, message)| json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message, "data": {"kind": "exception"}}})),
        (id, method.clone(), fuzz::json_value()).prop_map(|(id, method, params)| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})),
        (method, fuzz::json_value()).prop_map(|(method, params)| json!({"jsonrpc": "2.0", "method": method, "params": params})),
        fuzz::json_value(),
    ]
}

fn stream() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        6 => message().prop_map(|m| m.to_string().into_bytes()),
        1 => Just(Vec::new()),
        1 => Just(b" \r".to_vec()),
        1 => fuzz::garbage(),
    ];
    fuzz::damaged(prop::collection::vec((line, any::<bool>()), 0..12).prop_map(|lines| {
        lines
            .into_iter()
            .flat_map(|(mut line, crlf)| {
                line.extend(if crlf { &b"\r\n"[..] } else { b"\n" });
                line
            })
            .collect()
    }))
}

/// Reads every line of `bytes` through a buffer of `capacity` bytes.
async fn read_all(bytes: &[u8], capacity: usize) -> Result<Vec<Vec<u8>>, TestCaseError> {
    let mut reader = tokio::io::BufReader::with_capacity(capacity, bytes);
    let mut lines = Vec::new();
    let mut line = Vec::new();
    let longest = bytes.split(|b| *b == b'\n').map(<[u8]>::len).max().unwrap_or(0);
    loop {
        match read_line(&mut reader, &mut line).await {
            Ok(Read::Line) => lines.push(line.clone()),
            Ok(Read::End) => return Ok(lines),
            Ok(Read::TooLong) => return Err(TestCaseError::fail("a short line was too long")),
            Err(error) => return Err(TestCaseError::fail(error.to_string())),
        }
        prop_assert!(
            line.capacity() <= 2 * (longest + capacity) + 64,
            "holds {} bytes",
            line.capacity()
        );
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, TestCaseError> {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| TestCaseError::fail(e.to_string()))
}

proptest! {
    #![proptest_config(fuzz::config())]

    #[test]
    fn fuzz_process_framing(bytes in stream(), capacity in 1usize..64) {
        let runtime = runtime()?;
        let lines = runtime.block_on(read_all(&bytes, capacity))?;
        let mut expected: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
        if expected.last().is_some_and(|last| last.is_empty()) {
            expected.pop();
        }
        prop_assert_eq!(&lines, &expected);
        for line in &lines {
            match parse_line(line) {
                Err(()) => {
                    let quoted = start_of(line);
                    prop_assert!(quoted.chars().count() <= 81);
                    prop_assert!(!quoted.contains('\n'));
                }
                Ok(Incoming::Request { id, .. }) => prop_assert!(!id.is_null()),
                Ok(_) => {}
            }
        }
    }

    #[test]
    fn fuzz_process_own_lines(id in any::<u64>(), method in fuzz::awkward_string(), params in fuzz::json_value(), ok in any::<bool>()) {
        let request = request_line(id, &method, &params);
        let notification = notification_line(&method, &params);
        let outcome = if ok { Ok(params.clone()) } else { Err(RpcError::new(-32000, method.clone())) };
        let answer = response_line(&json!(id), &outcome);
        for line in [&request, &notification, &answer] {
            prop_assert!(!line.contains('\n'), "{}", line);
        }
        prop_assert_eq!(parse_line(request.as_bytes()), Ok(Incoming::Request { id: json!(id), method: method.clone(), params: params.clone() }));
        prop_assert_eq!(parse_line(notification.as_bytes()), Ok(Incoming::Notification { method, params }));
        prop_assert_eq!(parse_line(answer.as_bytes()), Ok(Incoming::Response { id, outcome }));
    }

    #[test]
    fn fuzz_process_answers(tools in fuzz::json_value(), result in fuzz::json_value()) {
        if let Err(why) = parse_definitions(&json!({"tools": tools})) {
            let documented = why.starts_with("the answer ") || why.starts_with("tool ");
            prop_assert!(documented, "{}", why);
        }
        if let Err(why) = parse_result(result) {
            let documented = ["a result must be", "\"content\" must be", "a text block", "an image block", "unknown content block type"]
                .iter()
                .any(|start| why.starts_with(start));
            prop_assert!(documented, "{}", why);
        }
    }
}

/// A line longer than the limit is reported as too long after holding at most the limit and one
/// read, not read to its end.
#[test]
fn fuzz_process_framing_too_long_line() {
    use tokio::io::AsyncReadExt;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    runtime.block_on(async {
        let endless = tokio::io::repeat(b'x').take(4 * MAX_LINE as u64);
        let mut reader = tokio::io::BufReader::new(endless);
        let mut line = Vec::new();
        let read = read_line(&mut reader, &mut line)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(read, Read::TooLong));
        assert!(line.len() <= MAX_LINE + 8192, "{} bytes", line.len());
    });
}
