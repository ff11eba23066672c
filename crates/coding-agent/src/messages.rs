//! What the model sees of the session's transcript (pi's `convertToLlm`).
//!
//! Messages with pi's app-specific roles reach the model as user messages, as pi sends them:
//!
//! * `custom` (such as the hidden `resolve-reminder`): its `content`;
//! * `compactionSummary` / `branchSummary`: the summary in pi's wrapper text;
//! * `bashExecution` (a command the user ran, e.g. over RPC): ``Ran `<command>` `` and the fenced
//!   output, with the exit code or cancellation — unless it is marked `excludeFromContext`.
//!
//! Other roles the providers don't know are left out.
//!
//! ```
//! use pi_agent_core::AgentMessage;
//! use pi_coding_agent::convert_to_llm;
//! use pi_coding_agent::resolve::resolve_reminder;
//!
//! let converted = convert_to_llm(&[AgentMessage::user("hi"), resolve_reminder("ast_edit")]);
//! assert_eq!(converted.len(), 2);
//! assert_eq!(converted[1].role(), "user");
//! ```

use pi_agent_core::{AgentMessage, ContentBlock, CustomMessage, UserContent, UserMessage, now_ms};
use serde_json::Value;

/// Maps the transcript to the messages sent to the model.
pub fn convert_to_llm(messages: &[AgentMessage]) -> Vec<AgentMessage> {
    messages
        .iter()
        .filter_map(|message| match message {
            AgentMessage::Custom(custom) => match custom.role.as_str() {
                "custom" => custom_to_user(custom),
                "bashExecution" => bash_execution_to_user(custom),
                _ => pi_session_store::summary_text_for_model(message).map(|text| user(text, custom)),
            },
            other => Some(other.clone()),
        })
        .collect()
}

fn timestamp(custom: &CustomMessage) -> i64 {
    custom
        .fields
        .get("timestamp")
        .and_then(Value::as_i64)
        .unwrap_or_else(now_ms)
}

/// A user message with one text block (pi's `[{type:"text",text}]`).
fn user(text: String, custom: &CustomMessage) -> AgentMessage {
    AgentMessage::User(UserMessage {
        content: UserContent::Blocks(vec![ContentBlock::text(text)]),
        timestamp: timestamp(custom),
    })
}

/// The text pi sends for a command the user ran.
pub fn bash_execution_text(fields: &serde_json::Map<String, Value>) -> String {
    let command = fields.get("command").and_then(Value::as_str).unwrap_or_default();
    let output = fields.get("output").and_then(Value::as_str).unwrap_or_default();
    let mut text = format!("Ran `{command}`\n");
    if output.is_empty() {
        text.push_str("(no output)");
    } else {
        // The output as it is, trailing newline included, as pi writes it.
        text.push_str(&format!("```\n{output}\n```"));
    }
    if fields.get("cancelled").and_then(Value::as_bool) == Some(true) {
        text.push_str("\n\n(command cancelled)");
    } else if let Some(code) = fields.get("exitCode").and_then(Value::as_i64).filter(|c| *c != 0) {
        text.push_str(&format!("\n\nCommand exited with code {code}"));
    }
    if fields.get("truncated").and_then(Value::as_bool) == Some(true)
        && let Some(path) = fields.get("fullOutputPath").and_then(Value::as_str)
    {
        text.push_str(&format!("\n\n[Output truncated. Full output: {path}]"));
    }
    text
}

fn bash_execution_to_user(custom: &CustomMessage) -> Option<AgentMessage> {
    if custom.fields.get("excludeFromContext").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    Some(user(bash_execution_text(&custom.fields), custom))
}

/// A `custom` message as the user message pi sends for it (a string `content` becomes one text
/// block, as pi converts it).
fn custom_to_user(custom: &CustomMessage) -> Option<AgentMessage> {
    let content = match custom.fields.get("content")? {
        Value::String(text) => UserContent::Blocks(vec![ContentBlock::text(text.clone())]),
        blocks @ Value::Array(_) => {
            UserContent::Blocks(serde_json::from_value::<Vec<ContentBlock>>(blocks.clone()).ok()?)
        }
        _ => return None,
    };
    let timestamp = custom
        .fields
        .get("timestamp")
        .and_then(Value::as_i64)
        .unwrap_or_else(now_ms);
    Some(AgentMessage::User(UserMessage { content, timestamp }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn custom(value: Value) -> AgentMessage {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn bash_executions_and_summaries_become_user_text() {
        let ran = custom(
            json!({"role": "bashExecution", "command": "ls", "output": "a\nb\n", "exitCode": 2,
            "cancelled": false, "truncated": false, "timestamp": 1}),
        );
        let hidden = custom(
            json!({"role": "bashExecution", "command": "env", "output": "x", "exitCode": 0,
            "cancelled": false, "truncated": false, "excludeFromContext": true, "timestamp": 1}),
        );
        let summary = pi_session_store::branch_summary_message("Tried X.", "abcd1234", "2026-01-01T00:00:00.000Z");
        let converted = convert_to_llm(&[ran, hidden, summary]);
        assert_eq!(converted.len(), 2);
        // pi's text keeps the output's own trailing newline before the fence, in one text block.
        assert_eq!(
            serde_json::to_value(&converted[0].as_user().unwrap().content).unwrap(),
            json!([{"type": "text", "text": "Ran `ls`\n```\na\nb\n\n```\n\nCommand exited with code 2"}])
        );
        assert!(converted[1].as_user().unwrap().content.text().contains("Tried X."));
    }

    #[test]
    fn custom_string_content_becomes_one_text_block() {
        let custom = custom(json!({"role": "custom", "customType": "note", "content": "remember",
            "display": true, "timestamp": 1}));
        let converted = convert_to_llm(&[custom]);
        assert_eq!(
            serde_json::to_value(&converted[0]).unwrap(),
            json!({"role": "user", "content": [{"type": "text", "text": "remember"}], "timestamp": 1})
        );
    }

    #[test]
    fn migrated_v2_custom_messages_reach_the_model_as_user_messages() {
        let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../session-store/tests/fixtures/sessions/v2_hook_message.jsonl");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v2_hook_message.jsonl");
        std::fs::copy(&fixture, &path).unwrap();
        let (session, _) = pi_session_store::SessionManager::open(&path).unwrap();
        let llm = convert_to_llm(&session.build_context().messages);
        assert_eq!(
            llm.iter().map(AgentMessage::role).collect::<Vec<_>>(),
            ["user", "user", "assistant", "user"]
        );
    }
}
