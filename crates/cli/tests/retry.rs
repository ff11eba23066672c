//! The automatic retry of failed turns in print mode. The JSON and RPC behaviour against pi
//! 0.73.1 (three 503s then an answer, retries running out, `set_auto_retry` / `abort_retry`) is
//! in the recorded conformance suite (`tests/data/conformance/retry-503`, `retry-exhausted`,
//! `rpc-abort-retry`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pi_test_support::sandbox::text;
use pi_test_support::{MockServer, Reply};
use serde_json::json;

use crate::pi_073::sandbox;

/// Our text for the recording server's 503 (ours names the status and quotes the body,
/// `docs/providers.md`; pi's SDK gives `503 Service Unavailable`).
const OURS_503: &str = r#"503 status code: {"error": {"message": "Service Unavailable", "type": "server_error"}}"#;

#[tokio::test(flavor = "multi_thread")]
async fn print_mode_reports_the_last_error_when_the_retries_run_out() {
    let body = r#"{"error": {"message": "Service Unavailable", "type": "server_error"}}"#;
    let server = MockServer::start(
        (0..12)
            .map(|_| Reply::json(503, body).header("retry-after", "0"))
            .collect(),
    )
    .await;
    let sandbox = sandbox(&server);
    std::fs::write(
        sandbox.agent_dir().join("settings.json"),
        json!({"retry": {"baseDelayMs": 10}}).to_string(),
    )
    .unwrap();
    let output = sandbox
        .run(&["--provider", "mock", "--model", "mock-model", "-p", "hi"])
        .await;
    // pi: `503 Service Unavailable` on stderr, exit 1.
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(text(&output.stderr), format!("{OURS_503}\n"));
    assert_eq!(text(&output.stdout), "");
    assert_eq!(server.requests().len(), 12, "4 attempts of 3 requests");
}
