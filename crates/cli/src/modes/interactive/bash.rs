//! `!command` and `!!command` typed in the editor: the command runs in the session's shell (an
//! extension's `user_bash` may answer instead), its output is shown, and a `bashExecution`
//! message is recorded — which reaches the model with the next prompt, unless `!!` marked it
//! `excludeFromContext` (pi's behaviour).

use pi_agent_core::{AgentMessage, ToolUpdateSink, now_ms};
use pi_coding_agent::App;
use pi_coding_agent::extensions::events::UserBashResult;
use serde_json::Map;
use tokio_util::sync::CancellationToken;

use super::transcript::NoticeKind;

/// The shown lines of output at most (the rest is in the message and the full-output file).
const SHOWN_LINES: usize = 20;

/// Runs `command` and records it; returns what to show: `$ command`, the output's last lines
/// and how it ended.
pub(super) async fn run(app: &App, command: &str, exclude: bool, cancel: CancellationToken) -> (String, NoticeKind) {
    let session = app.session();
    let mut env = pi_tools::ToolEnv::new(session.cwd().to_path_buf());
    env.sandbox = session.sandbox().cloned();
    let result = match app.emit_user_bash(command, exclude).await {
        Some(replaced) => Ok(replaced),
        None => pi_tools::run_command(&env, command, None, &cancel, ToolUpdateSink::discard())
            .await
            .map(|run| UserBashResult {
                output: run.output,
                exit_code: run.exit_code,
                cancelled: run.cancelled,
                truncated: run.truncation.is_some(),
                full_output_path: run.full_output_path,
            }),
    };
    let run = match result {
        Ok(run) => run,
        Err(error) => return (format!("Bash command failed: {error}"), NoticeKind::Error),
    };
    let mut fields = Map::new();
    fields.insert("command".into(), command.into());
    fields.insert("output".into(), run.output.clone().into());
    if let Some(code) = run.exit_code {
        fields.insert("exitCode".into(), code.into());
    }
    fields.insert("cancelled".into(), run.cancelled.into());
    fields.insert("truncated".into(), run.truncated.into());
    if let Some(path) = &run.full_output_path {
        fields.insert("fullOutputPath".into(), path.display().to_string().into());
    }
    if exclude {
        fields.insert("excludeFromContext".into(), true.into());
    }
    fields.insert("timestamp".into(), now_ms().into());
    app.add_message(AgentMessage::Custom(pi_agent_core::CustomMessage {
        role: "bashExecution".into(),
        fields,
    }));
    shown(command, &run, exclude)
}

/// pi's bash block as text: `$ command`, the output (its last lines), the status.
fn shown(command: &str, run: &UserBashResult, exclude: bool) -> (String, NoticeKind) {
    let mut text = format!("$ {command}");
    if exclude {
        text.push_str("  (not sent to the model)");
    }
    let output = run.output.trim_end();
    let lines: Vec<&str> = output.lines().collect();
    if lines.len() > SHOWN_LINES {
        text.push_str(&format!("\n... {} more lines", lines.len() - SHOWN_LINES));
    }
    for line in &lines[lines.len().saturating_sub(SHOWN_LINES)..] {
        text.push('\n');
        text.push_str(line);
    }
    let kind = if run.cancelled {
        text.push_str("\n(cancelled)");
        NoticeKind::Warning
    } else {
        match run.exit_code {
            Some(0) | None => NoticeKind::Info,
            Some(code) => {
                text.push_str(&format!("\n(exit {code})"));
                NoticeKind::Error
            }
        }
    };
    if let Some(path) = &run.full_output_path {
        text.push_str(&format!("\nFull output: {}", path.display()));
    }
    (text, kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_shows_the_last_lines_and_the_status() {
        let run = UserBashResult {
            output: (1..=25).map(|i| format!("line {i}\n")).collect(),
            exit_code: Some(2),
            cancelled: false,
            truncated: false,
            full_output_path: None,
        };
        let (text, kind) = shown("seq 25", &run, true);
        assert_eq!(kind, NoticeKind::Error);
        assert!(
            text.starts_with("$ seq 25  (not sent to the model)\n... 5 more lines\nline 6\n"),
            "{text}"
        );
        assert!(text.ends_with("line 25\n(exit 2)"), "{text}");
    }
}
