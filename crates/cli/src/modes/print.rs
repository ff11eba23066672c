//! Print mode (`-p`) and JSON mode (`--mode json`): send the prompts one after another, then exit.
//!
//! Text: every text block of the final assistant message goes to stdout, each followed by a
//! newline; when that message ended in an error or was aborted, its error goes to stderr and the
//! exit code is 1. JSON: the session header, then every event as one line (see [`super::json`]).
//!
//! Every line written, to stdout or stderr, goes through the redactor ([`pi_ai::redact`]).
//!
//! A preview still pending when the run ends is never applied (pi exits, and the preview with
//! it): text mode says so on stderr, one line per action, after the notice that forcing
//! `resolve` stopped if it did; both modes then exit with [`EXIT_PREVIEW_NOT_APPLIED`] unless the
//! run failed (1). After that report, each pending action's `reject` is called with
//! [`EXIT_REJECT_REASON`] (top first), so a tool with side state hears that its preview is gone; a
//! failing `reject` is one more stderr line, in both modes.

use crate::io::write_redacted;

use pi_agent_core::{AgentMessage, ContentBlock, StopReason};
use serde_json::Value;

use super::json::event_line;
use pi_coding_agent::extensions::Extensions;
use pi_coding_agent::extensions::events::InputSource;
use pi_coding_agent::{AgentSession, App, SessionEvent};

/// The exit code of a print or JSON run that ended with a preview still pending (not applied).
pub const EXIT_PREVIEW_NOT_APPLIED: i32 = 3;

/// The reason the `reject` of a preview still pending when a print or JSON run ends is called
/// with (as `Session switched.` is when `/resume` drops one).
pub const EXIT_REJECT_REASON: &str = "pi exited without applying the preview.";

pub use crate::io::Output;

/// Writes `line` and a newline, every secret redacted.
fn write_line(output: &Output, line: &str) {
    write_redacted(output, line, true);
}

/// Runs `prompts` in text print mode; returns the exit code.
pub async fn run_text(app: &App, prompts: Vec<AgentMessage>, stdout: Output, stderr: Output) -> i32 {
    run_text_with(app, &Extensions::none(), prompts, stdout, stderr).await
}

/// [`run_text`] with extensions: a prompt `/name args` naming an extension command runs the
/// command instead of reaching the model (pi checks extension commands first); a command that
/// fails is a stderr line, `Extension error (command:<name>): <message>`, and the run goes on.
pub async fn run_text_with(
    app: &App,
    extensions: &Extensions,
    prompts: Vec<AgentMessage>,
    stdout: Output,
    stderr: Output,
) -> i32 {
    let session = app.session();
    let sink = stderr.clone();
    let subscription = session.subscribe(move |event| {
        if let SessionEvent::ResolveForcingStopped(_) = event
            && let Some(notice) = event.notice()
        {
            write_line(&sink, &format!("pi: {notice}"));
        }
    });
    let code = run_prompts(app, extensions, prompts, &stdout, &stderr).await;
    subscription.unsubscribe();
    let pending = session.pending_actions().labels();
    for label in &pending {
        write_line(
            &stderr,
            &format!("pi: not applied: {label} (the preview was still pending when pi exited)"),
        );
    }
    reject_pending(session, &stderr).await;
    with_pending(code, !pending.is_empty())
}

/// Calls the `reject` of every action still pending with [`EXIT_REJECT_REASON`] and drops it; a
/// failure is a line on `stderr` (the wording of a failed discard on a session switch).
async fn reject_pending(session: &AgentSession, stderr: &Output) {
    for (label, error) in session.drop_pending_actions(EXIT_REJECT_REASON).await {
        write_line(
            stderr,
            &format!("pi: discarding the pending preview \"{label}\" failed: {error}"),
        );
    }
}

/// `code`, or [`EXIT_PREVIEW_NOT_APPLIED`] when a successful run left previews pending.
fn with_pending(code: i32, pending: bool) -> i32 {
    if code == 0 && pending {
        EXIT_PREVIEW_NOT_APPLIED
    } else {
        code
    }
}

/// Runs `prompt` as an extension command when it is one (`/name args`); `true` when it was. A
/// failed command is reported on `stderr` as pi words it.
async fn run_command(extensions: &Extensions, prompt: &AgentMessage, stderr: &Output) -> bool {
    let Some(text) = prompt.as_user().map(|user| user.content.text()) else {
        return false;
    };
    match extensions.run_command(&text).await {
        None => false,
        Some(Ok(())) => true,
        Some(Err(error)) => {
            write_line(
                stderr,
                &format!("Extension error ({}): {}", error.extension(), error.message()),
            );
            true
        }
    }
}

async fn run_prompts(
    app: &App,
    extensions: &Extensions,
    prompts: Vec<AgentMessage>,
    stdout: &Output,
    stderr: &Output,
) -> i32 {
    let session = app.session();
    for prompt in prompts {
        if run_command(extensions, &prompt, stderr).await {
            continue;
        }
        if let Err(error) = app.prompt_from(prompt, InputSource::Interactive).await {
            write_line(stderr, &error.to_string());
            return 1;
        }
    }
    let messages = session.agent().messages();
    let Some(last) = messages.iter().rev().find_map(AgentMessage::as_assistant) else {
        return 0;
    };
    match last.stop_reason {
        StopReason::Error | StopReason::Aborted => {
            let reason = match last.stop_reason {
                StopReason::Aborted => "aborted",
                _ => "failed",
            };
            let text = last
                .error_message
                .clone()
                .unwrap_or_else(|| format!("Request {reason}"));
            write_line(stderr, &text);
            1
        }
        _ => {
            for block in &last.content {
                if let ContentBlock::Text(text) = block {
                    write_line(stdout, &text.text);
                }
            }
            0
        }
    }
}

/// Runs `prompts` in JSON mode: `header` first, then every event; returns the exit code (1 when
/// the last assistant message failed, else [`EXIT_PREVIEW_NOT_APPLIED`] when a preview is still
/// pending — its `pending_action` event is in the output). Pending actions are then rejected as in
/// [`run_text`]; only a failing `reject` writes to `stderr`.
pub async fn run_json(app: &App, header: Value, prompts: Vec<AgentMessage>, stdout: Output, stderr: Output) -> i32 {
    run_json_with(app, &Extensions::none(), header, prompts, stdout, stderr).await
}

/// [`run_json`] with extensions: extension commands run as in [`run_text_with`].
pub async fn run_json_with(
    app: &App,
    extensions: &Extensions,
    header: Value,
    prompts: Vec<AgentMessage>,
    stdout: Output,
    stderr: Output,
) -> i32 {
    let session = app.session();
    write_line(&stdout, &header.to_string());
    let sink = stdout.clone();
    let subscription = session.subscribe(move |event| write_line(&sink, &event_line(event)));
    let mut code = 0;
    for prompt in prompts {
        if run_command(extensions, &prompt, &stderr).await {
            continue;
        }
        if app.prompt_from(prompt, InputSource::Interactive).await.is_err() {
            code = 1;
            break;
        }
    }
    subscription.unsubscribe();
    let failed = session
        .agent()
        .messages()
        .iter()
        .rev()
        .find_map(AgentMessage::as_assistant)
        .is_some_and(|m| matches!(m.stop_reason, StopReason::Error | StopReason::Aborted));
    let pending = session.pending_actions().has_pending();
    reject_pending(session, &stderr).await;
    if failed { 1 } else { with_pending(code, pending) }
}
