//! The `pi` binary against providers that fail: a secret header value echoed back never reaches
//! stderr, the JSON output, the session file or the debug log; a server that never answers fails
//! within the timeouts of `settings.json` (`retry.provider.*`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use pi_test_support::faults::StallingServer;
use pi_test_support::sandbox::{Sandbox, text};
use pi_test_support::{MockServer, Reply};
use serde_json::json;

/// The value of the `api-key` header, from `$SOME_VAR` (a name that says nothing about a key).
const HEADER_SECRET: &str = "hdr-0123456789-abcdefghij";

/// A sandbox whose `models.json` declares an Azure-style provider at `base_url`: no `apiKey` (the
/// server is local), the credential in an `api-key` header taken from `$SOME_VAR`.
fn azure_style(base_url: &str) -> Sandbox {
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    let models = json!({
        "providers": {
            "azure-like": {
                "baseUrl": base_url,
                "api": "openai-completions",
                "headers": {"api-key": "$SOME_VAR"},
                "models": [{"id": "deployment-1"}]
            }
        }
    });
    sandbox.write_models_json(&models.to_string());
    sandbox
}

fn echo_reply() -> Reply {
    Reply::json(
        400,
        &format!(
            r#"{{"error":{{"message":"Access denied: api-key {HEADER_SECRET} is not valid for this deployment"}}}}"#
        ),
    )
}

async fn run(sandbox: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut command = sandbox.command(args);
    command.env("SOME_VAR", HEADER_SECRET);
    for (name, value) in env {
        command.env(name, value);
    }
    tokio::time::timeout(Duration::from_secs(120), pi_test_support::sandbox::output(command))
        .await
        .expect("pi ends within two minutes")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_header_secret_echoed_by_the_server_is_redacted_everywhere() {
    let server = MockServer::start(vec![echo_reply(), echo_reply()]).await;
    let sandbox = azure_style(&server.url("/v1"));
    let model = ["--model", "azure-like/deployment-1"];

    let output = run(&sandbox, &[&model[..], &["-p", "hi"]].concat(), &[]).await;
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert_eq!(
        stderr,
        "400 status code: {\"error\":{\"message\":\"Access denied: api-key [redacted] is not valid for this deployment\"}}\n"
    );

    let output = run(
        &sandbox,
        &[&model[..], &["--mode", "json", "hi"]].concat(),
        &[("PI_LOG", "debug")],
    )
    .await;
    assert_eq!(output.status.code(), Some(1));
    let stdout = text(&output.stdout);
    assert!(stdout.contains("api-key [redacted] is not valid"), "{stdout}");
    assert!(!stdout.contains(HEADER_SECRET), "{stdout}");
    assert!(!text(&output.stderr).contains(HEADER_SECRET));

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0].header("api-key"),
        Some(HEADER_SECRET),
        "the header was sent"
    );

    let sessions = sandbox.session_files();
    assert_eq!(sessions.len(), 2, "{sessions:?}");
    for file in sessions {
        let content = std::fs::read_to_string(&file).unwrap();
        assert!(content.contains("api-key [redacted] is not valid"), "{content}");
        assert!(!content.contains(HEADER_SECRET), "{content}");
    }
    let log = std::fs::read_to_string(sandbox.agent_dir().join("logs/pi.log")).unwrap();
    assert!(log.contains("request failed"), "{log}");
    assert!(!log.contains(HEADER_SECRET), "{log}");
}

/// A sandbox pointing the mock model at `server`, with `retry.provider` settings. The session's
/// own retry of the failed turn is off: these tests are about the limits of one request.
fn stalled(server: &StallingServer, retry: serde_json::Value) -> Sandbox {
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    sandbox.write_models_json(&pi_test_support::openai::models_json(&server.url("/v1")));
    let settings = json!({"retry": {"enabled": false, "provider": retry}});
    std::fs::write(sandbox.agent_dir().join("settings.json"), settings.to_string()).unwrap();
    sandbox
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_never_answers_fails_after_the_configured_timeout() {
    let server = StallingServer::start().await;
    let sandbox = stalled(&server, json!({"timeoutMs": 300, "maxRetries": 0}));
    let output = run(&sandbox, &["-p", "hi"], &[]).await;
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output.stderr),
        "Request timed out: no response within 0.3 s (retry.provider.timeoutMs)\n"
    );
    assert_eq!(server.requests(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn retries_stop_at_the_configured_total_deadline() {
    let server = StallingServer::start().await;
    let sandbox = stalled(
        &server,
        json!({"timeoutMs": 300, "maxRetries": 50, "totalTimeoutMs": 1500}),
    );
    let output = run(&sandbox, &["-p", "hi"], &[]).await;
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    let attempts = server.requests();
    assert!((2..=6).contains(&attempts), "{attempts} attempts: {stderr}");
    // Either the deadline passed during a wait, or the next wait would have passed it (with
    // 0.5 s, 1 s, … between attempts of 0.3 s, usually the latter): then the last failure is named.
    let said = format!(
        "Request timed out: no response within the total deadline of 1.5 s (retry.provider.totalTimeoutMs), \
         {attempts} attempts"
    );
    assert!(
        [
            format!("{said}\n"),
            format!(
                "{said}; the last failed with: Request timed out: no response within 0.3 s (retry.provider.timeoutMs)\n"
            )
        ]
        .contains(&stderr),
        "{stderr}"
    );
}
