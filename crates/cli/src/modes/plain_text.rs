//! A plain-text transcript of a run, for the offline demo and the line-mode interactive session:
//! streamed assistant text, one line per tool call, and the first lines of each result.

use pi_agent_core::{AgentEvent, AgentMessage, AssistantMessageEvent, StopReason, ToolResult};
use serde_json::Value;

use pi_coding_agent::SessionEvent;

/// Result lines shown before `… N more lines`.
pub const RESULT_LINES: usize = 8;

/// The text of one session event, if it shows anything.
///
/// ```
/// use pi_agent_core::{AgentEvent, ToolResult};
/// use pi_cli::modes::plain_text::render;
/// use pi_coding_agent::SessionEvent;
///
/// let end = AgentEvent::ToolExecutionEnd {
///     tool_call_id: "c1".into(),
///     tool_name: "read".into(),
///     result: ToolResult::text("hello"),
///     is_error: false,
/// };
/// assert_eq!(render(&SessionEvent::Agent(end)).as_deref(), Some("  ✓ hello\n"));
/// ```
pub fn render(event: &SessionEvent) -> Option<String> {
    match event {
        SessionEvent::Agent(event) => render_agent(event),
        SessionEvent::ResolveForcingStopped(_) => event.notice().map(|n| format!("! {n}\n")),
        SessionEvent::CompactionStart { .. } | SessionEvent::CompactionEnd { .. } => {
            event.notice().map(|n| format!("· {n}\n"))
        }
        SessionEvent::AutoRetryStart {
            attempt,
            max_attempts,
            delay_ms,
            ..
        } => Some(format!(
            "Retrying ({attempt}/{max_attempts}) in {}s...\n",
            delay_ms.div_ceil(1000)
        )),
        SessionEvent::AutoRetryEnd {
            success: false,
            attempt,
            final_error,
        } => Some(format!(
            "Error: Retry failed after {attempt} attempts: {}\n",
            final_error.as_deref().unwrap_or("Unknown error")
        )),
        SessionEvent::AutoRetryEnd { .. }
        | SessionEvent::PendingActionPushed { .. }
        | SessionEvent::Resolved(_)
        | SessionEvent::QueueUpdate { .. }
        | SessionEvent::ThinkingLevelChanged(_)
        | SessionEvent::SessionInfoChanged { .. } => None,
    }
}

fn render_agent(event: &AgentEvent) -> Option<String> {
    match event {
        AgentEvent::MessageUpdate {
            assistant_message_event: AssistantMessageEvent::TextDelta { delta, .. },
            ..
        } => Some(delta.clone()),
        AgentEvent::MessageEnd {
            message: AgentMessage::Assistant(message),
        } => match message.stop_reason {
            StopReason::Error | StopReason::Aborted => Some(format!(
                "\nError: {}\n",
                message.error_message.as_deref().unwrap_or("request failed")
            )),
            _ if message.text().is_empty() => None,
            _ => Some("\n".to_owned()),
        },
        AgentEvent::ToolExecutionStart { tool_name, args, .. } => Some(format!("→ {tool_name} {}\n", brief(args))),
        AgentEvent::ToolExecutionEnd { result, is_error, .. } => Some(result_lines(result, *is_error)),
        _ => None,
    }
}

/// Arguments on one line, long strings cut.
fn brief(args: &Value) -> String {
    let text = args.to_string();
    if text.chars().count() > 160 {
        let cut: String = text.chars().take(157).collect();
        format!("{cut}...")
    } else {
        text
    }
}

fn result_lines(result: &ToolResult, is_error: bool) -> String {
    let text: String = result.content.iter().filter_map(|b| b.as_text()).collect();
    let mark = if is_error { "✗" } else { "✓" };
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    for (index, line) in lines.iter().take(RESULT_LINES).enumerate() {
        let lead = if index == 0 { mark } else { " " };
        out.push_str(&format!("  {lead} {line}\n"));
    }
    if lines.is_empty() {
        out.push_str(&format!("  {mark}\n"));
    }
    if lines.len() > RESULT_LINES {
        out.push_str(&format!("    … {} more lines\n", lines.len() - RESULT_LINES));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_automatic_retry_reads_as_in_the_tui() {
        let start = SessionEvent::AutoRetryStart {
            attempt: 1,
            max_attempts: 3,
            delay_ms: 2500,
            error_message: "503 Service Unavailable".into(),
        };
        assert_eq!(render(&start).as_deref(), Some("Retrying (1/3) in 3s...\n"));
        let failed = SessionEvent::AutoRetryEnd {
            success: false,
            attempt: 3,
            final_error: Some("503 Service Unavailable".into()),
        };
        assert_eq!(
            render(&failed).as_deref(),
            Some("Error: Retry failed after 3 attempts: 503 Service Unavailable\n")
        );
        let succeeded = SessionEvent::AutoRetryEnd {
            success: true,
            attempt: 1,
            final_error: None,
        };
        assert_eq!(render(&succeeded), None);
    }
}
