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

/// The text pi puts in place of each image when `images.blockImages` is on.
pub const IMAGE_BLOCKED: &str = "Image reading is disabled.";

/// pi's `images.blockImages` filter over what [`convert_to_llm`] gives: every image of a user
/// message or tool result becomes the text [`IMAGE_BLOCKED`] (one for a run of images in a row),
/// so no image reaches a provider whatever added it.
///
/// ```
/// use pi_agent_core::{AgentMessage, ContentBlock, UserContent, UserMessage};
/// use pi_coding_agent::{IMAGE_BLOCKED, block_images};
///
/// let message = AgentMessage::User(UserMessage {
///     content: UserContent::Blocks(vec![ContentBlock::text("look"), ContentBlock::image("AAAA", "image/png")]),
///     timestamp: 0,
/// });
/// let blocked = block_images(vec![message]);
/// assert_eq!(blocked[0].as_user().unwrap().content.text(), format!("look{IMAGE_BLOCKED}"));
/// ```
pub fn block_images(messages: Vec<AgentMessage>) -> Vec<AgentMessage> {
    messages
        .into_iter()
        .map(|message| match message {
            AgentMessage::User(mut user) => {
                if let UserContent::Blocks(blocks) = &mut user.content {
                    replace_images(blocks);
                }
                AgentMessage::User(user)
            }
            AgentMessage::ToolResult(mut result) => {
                replace_images(&mut result.content);
                AgentMessage::ToolResult(result)
            }
            other => other,
        })
        .collect()
}

fn replace_images(blocks: &mut Vec<ContentBlock>) {
    if !blocks.iter().any(|block| matches!(block, ContentBlock::Image(_))) {
        return;
    }
    let is_blocked = |block: &ContentBlock| block.as_text() == Some(IMAGE_BLOCKED);
    let mut replaced: Vec<ContentBlock> = Vec::with_capacity(blocks.len());
    for block in blocks.drain(..) {
        let block = match block {
            ContentBlock::Image(_) => ContentBlock::text(IMAGE_BLOCKED),
            other => other,
        };
        // pi drops a placeholder that follows another one.
        if is_blocked(&block) && replaced.last().is_some_and(is_blocked) {
            continue;
        }
        replaced.push(block);
    }
    *blocks = replaced;
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
    fn blocked_images_become_one_placeholder_per_run_in_user_messages_and_tool_results() {
        let image = || ContentBlock::image("AAAA", "image/png");
        let user = AgentMessage::User(UserMessage {
            content: UserContent::Blocks(vec![
                ContentBlock::text("a"),
                image(),
                image(),
                ContentBlock::text("b"),
                image(),
            ]),
            timestamp: 1,
        });
        let result = AgentMessage::ToolResult(pi_agent_core::ToolResultMessage {
            tool_call_id: "c1".into(),
            tool_name: "read".into(),
            content: vec![ContentBlock::text("Read image file [image/png]"), image()],
            details: None,
            usage: None,
            added_tool_names: None,
            is_error: false,
            timestamp: 2,
        });
        let texts = |message: &AgentMessage| -> Vec<String> {
            let blocks = match message {
                AgentMessage::User(user) => match &user.content {
                    UserContent::Blocks(blocks) => blocks.clone(),
                    UserContent::Text(text) => vec![ContentBlock::text(text.clone())],
                },
                AgentMessage::ToolResult(result) => result.content.clone(),
                _ => Vec::new(),
            };
            blocks
                .iter()
                .map(|b| b.as_text().unwrap_or("<image>").to_owned())
                .collect()
        };
        let blocked = block_images(vec![user, result, AgentMessage::user("plain")]);
        assert_eq!(texts(&blocked[0]), ["a", IMAGE_BLOCKED, "b", IMAGE_BLOCKED]);
        assert_eq!(texts(&blocked[1]), ["Read image file [image/png]", IMAGE_BLOCKED]);
        assert_eq!(blocked[2].as_user().unwrap().content.text(), "plain");
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
