//! Scenario tests for the `bash` tool: output merging, exit codes, working directory and
//! environment, timeouts and aborts (the whole process group dies), lossy decoding, tail
//! truncation with the full-output log, and throttled streaming updates.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pi_agent_core::{ToolContext, ToolResult, ToolUpdateSink};
use pi_tools::ToolEnv;
use serde_json::{Value, json};
use support::{Fixture, Outcome, text_of};
use tokio_util::sync::CancellationToken;

async fn bash(fx: &Fixture, args: Value) -> Outcome {
    fx.call(&fx.tool("bash"), args).await
}

/// Whether `pid` is gone (or a zombie waiting to be reaped).
fn is_dead(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_err(),
    }
}

/// Polls [`is_dead`] for up to a second.
async fn wait_dead(pid: i32) -> bool {
    for _ in 0..50 {
        if is_dead(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// The first line of `text` as a pid.
fn first_pid(text: &str) -> i32 {
    text.lines().next().unwrap().trim().parse().unwrap()
}

/// The full-output path named in `details`, checked to be `<tmpdir>/pi-bash-<16 hex>.log`.
fn full_output_path(details: &Value) -> std::path::PathBuf {
    let path = std::path::PathBuf::from(details["fullOutputPath"].as_str().unwrap());
    assert_eq!(path.parent().unwrap(), std::env::temp_dir());
    let name = path.file_name().unwrap().to_str().unwrap();
    let hex = name.strip_prefix("pi-bash-").unwrap().strip_suffix(".log").unwrap();
    assert!(hex.len() == 16 && hex.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    path
}

/// A rendering of a truncated result small enough for a snapshot: the last lines of the text,
/// and the details with the kept content summarised and the log path redacted.
fn render_truncated(outcome: &Outcome, path: &std::path::Path) -> String {
    let result = outcome.ok();
    let text = text_of(&result.content).replace(&path.display().to_string(), "<log>");
    let lines: Vec<&str> = text.lines().collect();
    let mut details = result.details.clone();
    let content = details["truncation"]["content"].as_str().unwrap().len();
    details["truncation"]["content"] = json!(format!("<{content} bytes>"));
    details["fullOutputPath"] = json!("<log>");
    let shorten = |line: &&str| match line.char_indices().nth(80) {
        Some((end, _)) => format!("{}… ({} bytes)", &line[..end], line.len()),
        None => (*line).to_owned(),
    };
    let last: Vec<String> = lines[lines.len().saturating_sub(3)..].iter().map(shorten).collect();
    format!(
        "{} lines of text; last 3 (cut to 80 chars):\n{}\n--- details ---\n{}\n",
        lines.len(),
        last.join("\n"),
        serde_json::to_string_pretty(&details).unwrap()
    )
}

#[tokio::test]
async fn echo() {
    let fx = Fixture::empty();
    let out = bash(&fx, json!({"command": "echo hello"})).await;
    insta::assert_snapshot!("bash_echo", fx.render(&out));
}

#[tokio::test]
async fn stderr_is_merged_in_arrival_order() {
    let fx = Fixture::empty();
    let out = bash(
        &fx,
        json!({"command": "echo one; sleep 0.05; echo two >&2; sleep 0.05; echo three"}),
    )
    .await;
    insta::assert_snapshot!("bash_stderr_merged", fx.render(&out));
}

#[tokio::test]
async fn non_zero_exit_is_an_error_carrying_the_output() {
    let fx = Fixture::empty();
    let out = bash(
        &fx,
        json!({"command": "echo failing; sleep 0.05; echo oops >&2; exit 2"}),
    )
    .await;
    insta::assert_snapshot!("bash_exit_code", fx.render(&out));
}

#[tokio::test]
async fn empty_output() {
    let fx = Fixture::empty();
    let out = bash(&fx, json!({"command": "true"})).await;
    insta::assert_snapshot!("bash_no_output", fx.render(&out));
    let out = bash(&fx, json!({"command": "exit 3"})).await;
    insta::assert_snapshot!("bash_no_output_exit_code", fx.render(&out));
}

#[tokio::test]
async fn killed_by_a_signal_of_its_own_is_success() {
    let fx = Fixture::empty();
    let out = bash(&fx, json!({"command": "echo before; kill -9 $$"})).await;
    insta::assert_snapshot!("bash_self_killed", fx.render(&out));
}

#[tokio::test]
async fn runs_in_the_fixture_root() {
    let fx = Fixture::new(&[("notes/a.txt", "alpha\n")]);
    let out = bash(&fx, json!({"command": "pwd; cat notes/a.txt; echo new > b.txt"})).await;
    insta::assert_snapshot!("bash_cwd", fx.render(&out));
}

#[tokio::test]
async fn missing_working_directory() {
    let fx = Fixture::empty();
    let env = ToolEnv::new(fx.path("gone"));
    let tool = pi_tools::create_tool("bash", &env).unwrap();
    let out = fx.call(&tool, json!({"command": "echo never"})).await;
    insta::assert_snapshot!("bash_missing_cwd", fx.render(&out));
}

#[tokio::test]
async fn pi_variables_reach_the_command() {
    let fx = Fixture::empty();
    let mut env = fx.env.clone();
    env.env.insert("PI_MODEL".into(), "claude-sonnet-4-5".into());
    env.env.insert("PI_PROVIDER".into(), "anthropic".into());
    env.env.insert("PI_SESSION_ID".into(), "session-1".into());
    let tool = pi_tools::create_tool("bash", &env).unwrap();
    let out = fx
        .call(
            &tool,
            json!({"command": "echo \"$PI_PROVIDER/$PI_MODEL $PI_SESSION_ID [${PI_SESSION_FILE-unset}]\""}),
        )
        .await;
    insta::assert_snapshot!("bash_pi_env", fx.render(&out));
}

#[tokio::test]
async fn shell_command_prefix_is_prepended() {
    let fx = Fixture::empty();
    let mut env = fx.env.clone();
    env.shell_command_prefix = Some("greet() { echo \"hi $1\"; }".into());
    let tool = pi_tools::create_tool("bash", &env).unwrap();
    let out = fx.call(&tool, json!({"command": "greet there"})).await;
    insta::assert_snapshot!("bash_prefix", fx.render(&out));
}

#[tokio::test]
async fn configured_shell_is_used() {
    let fx = Fixture::empty();
    let mut env = fx.env.clone();
    env.shell = Some("/bin/sh".into());
    let tool = pi_tools::create_tool("bash", &env).unwrap();
    let out = fx
        .call(&tool, json!({"command": "echo \"${BASH_VERSION:-not bash}\""}))
        .await;
    let text = out.ok();
    // dash/busybox sh do not set BASH_VERSION; a bash-as-sh does, so only check it ran.
    assert!(!text_of(&text.content).is_empty());
}

#[tokio::test]
async fn missing_shell_is_a_clear_error() {
    let fx = Fixture::empty();
    let mut env = fx.env.clone();
    env.shell = Some(fx.path("no-such-shell"));
    let tool = pi_tools::create_tool("bash", &env).unwrap();
    let out = fx.call(&tool, json!({"command": "echo never"})).await;
    insta::assert_snapshot!("bash_missing_shell", fx.render(&out));
}

#[tokio::test]
async fn invalid_timeouts() {
    let fx = Fixture::empty();
    let mut rendered = String::new();
    for timeout in [json!(0), json!(-1), json!(2147484), json!(1e300)] {
        let out = bash(&fx, json!({"command": "echo never > ran.txt", "timeout": timeout})).await;
        rendered.push_str(&format!("timeout {timeout}:\n{}\n", fx.render(&out)));
    }
    insta::assert_snapshot!("bash_invalid_timeouts", rendered);
}

#[tokio::test]
async fn timeout_kills_the_whole_process_group() {
    let fx = Fixture::empty();
    let started = Instant::now();
    let out = bash(
        &fx,
        json!({"command": "sleep 1000 & echo $!; sleep 1000", "timeout": 1}),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
    let pid = first_pid(out.err());
    assert_eq!(out.err(), format!("{pid}\n\n\nCommand timed out after 1 seconds"));
    assert!(wait_dead(pid).await, "background child {pid} survived the timeout");
}

#[tokio::test]
async fn fractional_timeout_is_printed_like_pi() {
    let fx = Fixture::empty();
    let out = bash(&fx, json!({"command": "sleep 1000", "timeout": 0.2})).await;
    insta::assert_snapshot!("bash_timeout_fractional", fx.render(&out));
}

#[tokio::test]
async fn abort_kills_a_command_that_ignores_sigterm() {
    let fx = Fixture::empty();
    let cancel = CancellationToken::new();
    let ctx = ToolContext {
        cancel: cancel.clone(),
        updates: ToolUpdateSink::discard(),
    };
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let command = "trap '' TERM; sleep 1000 & echo $!; sleep 1000";
    let out = fx.call_with(&fx.tool("bash"), json!({"command": command}), ctx).await;
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "took {:?}",
        started.elapsed()
    );
    let pid = first_pid(out.err());
    assert_eq!(out.err(), format!("{pid}\n\n\nCommand aborted"));
    assert!(wait_dead(pid).await, "background child {pid} survived the abort");
}

#[tokio::test]
async fn dropping_the_call_kills_the_group() {
    let fx = Fixture::empty();
    let seen: Arc<Mutex<String>> = Arc::default();
    let sink = {
        let seen = seen.clone();
        ToolUpdateSink::new(move |update| *seen.lock().unwrap() = text_of(&update.content))
    };
    let ctx = ToolContext {
        cancel: CancellationToken::new(),
        updates: sink,
    };
    let tool = fx.tool("bash");
    let call = fx.call_with(&tool, json!({"command": "sleep 1000 & echo $!; sleep 1000"}), ctx);
    assert!(tokio::time::timeout(Duration::from_millis(300), call).await.is_err());
    let pid = first_pid(&seen.lock().unwrap());
    assert!(wait_dead(pid).await, "background child {pid} survived the dropped call");
}

#[tokio::test]
async fn already_aborted_runs_nothing() {
    let fx = Fixture::empty();
    let ctx = ToolContext::detached();
    ctx.cancel.cancel();
    let out = fx
        .call_with(&fx.tool("bash"), json!({"command": "echo ran > ran.txt"}), ctx)
        .await;
    insta::assert_snapshot!("bash_aborted_before_start", fx.render(&out));
}

#[tokio::test]
async fn background_child_holding_the_pipe_does_not_hang() {
    let fx = Fixture::empty();
    let started = Instant::now();
    let out = bash(&fx, json!({"command": "sleep 1000 & echo $!; echo done"})).await;
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "took {:?}",
        started.elapsed()
    );
    let text = out.ok();
    let text = text_of(&text.content);
    let pid = first_pid(&text);
    assert_eq!(text, format!("{pid}\ndone\n"));
    // A normal exit leaves background jobs alone, like pi; clean up.
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL).unwrap();
}

#[tokio::test]
async fn non_utf8_output_is_decoded_lossily() {
    let fx = Fixture::empty();
    let out = bash(&fx, json!({"command": "printf 'ok \\xff\\xfe \\xc3\\xa9\\n'"})).await;
    insta::assert_snapshot!("bash_non_utf8", fx.render(&out));
}

#[tokio::test]
async fn large_output_is_tail_truncated_with_the_full_log() {
    let fx = Fixture::empty();
    let out = bash(&fx, json!({"command": "seq 1 100000"})).await;
    let path = full_output_path(&out.ok().details);
    insta::assert_snapshot!("bash_truncated_lines", render_truncated(&out, &path));
    let full = std::fs::read_to_string(&path).unwrap();
    let expected: String = (1..=100_000).map(|i| format!("{i}\n")).collect();
    assert!(full == expected, "the log does not hold the full output");
    std::fs::remove_file(path).unwrap();
}

#[tokio::test]
async fn wide_output_hits_the_byte_limit() {
    let fx = Fixture::empty();
    let command = "for i in $(seq 1 3000); do echo \"line $i 0123456789012345678901234567890123456789\"; done";
    let out = bash(&fx, json!({"command": command})).await;
    let path = full_output_path(&out.ok().details);
    insta::assert_snapshot!("bash_truncated_bytes", render_truncated(&out, &path));
    assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 3000);
    std::fs::remove_file(path).unwrap();
}

#[tokio::test]
async fn one_huge_line_keeps_its_end() {
    let fx = Fixture::empty();
    let out = bash(&fx, json!({"command": "head -c 60000 /dev/zero | tr '\\0' a; echo b"})).await;
    let path = full_output_path(&out.ok().details);
    insta::assert_snapshot!("bash_truncated_partial_line", render_truncated(&out, &path));
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 60_002);
    std::fs::remove_file(path).unwrap();
}

#[tokio::test]
async fn failing_truncated_output_still_names_the_log() {
    let fx = Fixture::empty();
    let out = bash(&fx, json!({"command": "seq 1 3000; exit 1"})).await;
    let text = out.err();
    let notice = text.lines().rev().nth(2).unwrap();
    assert!(
        notice.starts_with("[Showing lines 1001-3000 of 3000. Full output: "),
        "{notice}"
    );
    assert!(text.ends_with(".log]\n\nCommand exited with code 1"), "{text}");
    let path = notice
        .strip_prefix("[Showing lines 1001-3000 of 3000. Full output: ")
        .unwrap();
    std::fs::remove_file(path.strip_suffix(']').unwrap()).unwrap();
}

#[tokio::test]
async fn updates_are_cumulative_and_throttled() {
    let fx = Fixture::empty();
    let seen: Arc<Mutex<Vec<(Instant, ToolResult)>>> = Arc::default();
    let sink = {
        let seen = seen.clone();
        ToolUpdateSink::new(move |update| seen.lock().unwrap().push((Instant::now(), update)))
    };
    let ctx = ToolContext {
        cancel: CancellationToken::new(),
        updates: sink,
    };
    let command = "for i in $(seq 1 40); do echo $i; sleep 0.01; done";
    let out = fx.call_with(&fx.tool("bash"), json!({"command": command}), ctx).await;
    let final_text = text_of(&out.ok().content);
    let seen = seen.lock().unwrap();

    let (_, first) = &seen[0];
    assert!(
        first.content.is_empty() && first.details.is_null(),
        "first update: {first:?}"
    );
    assert!(seen.len() >= 3, "only {} updates", seen.len());
    for pair in seen[1..].windows(2) {
        let gap = pair[1].0 - pair[0].0;
        assert!(gap >= Duration::from_millis(95), "updates {gap:?} apart");
    }
    let mut previous = String::new();
    for (_, update) in &seen[1..] {
        let text = text_of(&update.content);
        assert!(
            text.starts_with(&previous),
            "update {text:?} does not extend {previous:?}"
        );
        assert!(final_text.starts_with(&text));
        assert_eq!(update.details, json!({}));
        previous = text;
    }
}
