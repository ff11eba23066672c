//! Asking the model for the summary: pi's prompts, its serialization of the conversation, and the
//! structured format with the file lists appended (so a session compacted by either program reads
//! the same).

use futures::StreamExt;
use pi_agent_core::{
    AgentMessage, AssistantMessage, AssistantMessageEvent, ContentBlock, LlmContext, Model, StopReason, StreamFn,
    StreamOptions, ThinkingLevel, UserContent, UserMessage, now_ms,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::prepare::CompactionPreparation;
use super::tokens::js_len;
use super::{CompactionError, CompactionResult};
use crate::convert_to_llm;

/// The system prompt of every summary request.
pub const SUMMARIZATION_SYSTEM_PROMPT: &str = "You are a context summarization assistant. Your task is to read a conversation between a user and an AI coding assistant, then produce a structured summary following the exact format specified.\n\nDo NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output the structured summary.";

/// The instructions of a first summary.
pub const SUMMARIZATION_PROMPT: &str = r#"The messages above are a conversation to summarize. Create a structured context checkpoint summary that another LLM will use to continue the work.

Use this EXACT format:

## Goal
[What is the user trying to accomplish? Can be multiple items if the session covers different tasks.]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned by user]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Current work]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [Ordered list of what should happen next]

## Critical Context
- [Any data, examples, or references needed to continue]
- [Or "(none)" if not applicable]

Keep each section concise. Preserve exact file paths, function names, and error messages."#;

/// The instructions of a summary that updates the previous one.
pub const UPDATE_SUMMARIZATION_PROMPT: &str = r#"The messages above are NEW conversation messages to incorporate into the existing summary provided in <previous-summary> tags.

Update the existing structured summary with new information. RULES:
- PRESERVE all existing information from the previous summary
- ADD new progress, decisions, and context from the new messages
- UPDATE the Progress section: move items from "In Progress" to "Done" when completed
- UPDATE "Next Steps" based on what was accomplished
- PRESERVE exact file paths, function names, and error messages
- If something is no longer relevant, you may remove it

Use this EXACT format:

## Goal
[Preserve existing goals, add new ones if the task expanded]

## Constraints & Preferences
- [Preserve existing, add new ones discovered]

## Progress
### Done
- [x] [Include previously done items AND newly completed items]

### In Progress
- [ ] [Current work - update based on progress]

### Blocked
- [Current blockers - remove if resolved]

## Key Decisions
- **[Decision]**: [Brief rationale] (preserve all previous, add new)

## Next Steps
1. [Update based on current state]

## Critical Context
- [Preserve important context, add new if needed]

Keep each section concise. Preserve exact file paths, function names, and error messages."#;

/// The instructions for the beginning of a turn cut in two.
pub const TURN_PREFIX_SUMMARIZATION_PROMPT: &str = r#"This is the PREFIX of a turn that was too large to keep. The SUFFIX (recent work) is retained.

Summarize the prefix to provide context for the retained suffix:

## Original Request
[What did the user ask for in this turn?]

## Early Progress
- [Key decisions and work done in the prefix]

## Context for Suffix
- [Information needed to understand the retained recent work]

Be concise. Focus on what's needed to understand the kept suffix."#;

/// Characters of a tool result kept in the serialized conversation.
const TOOL_RESULT_MAX_CHARS: usize = 2000;

fn truncate_for_summary(text: &str) -> String {
    let total = js_len(text);
    if total <= TOOL_RESULT_MAX_CHARS {
        return text.to_owned();
    }
    let mut kept = String::new();
    let mut units = 0;
    for c in text.chars() {
        if units + c.len_utf16() > TOOL_RESULT_MAX_CHARS {
            break;
        }
        units += c.len_utf16();
        kept.push(c);
    }
    format!(
        "{kept}\n\n[... {} more characters truncated]",
        total - TOOL_RESULT_MAX_CHARS
    )
}

fn js_json(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// The conversation as text, so that the model summarizes it instead of continuing it (pi's
/// `serializeConversation` of the messages `convert_to_llm` gives): `[User]: …`,
/// `[Assistant thinking]: …`, `[Assistant]: …`, `[Assistant tool calls]: read(path="a"); …`,
/// `[Tool result]: …` (cut at 2 000 characters), blank lines between.
pub fn serialize_conversation(messages: &[AgentMessage]) -> String {
    let mut parts = Vec::new();
    for message in convert_to_llm(messages) {
        match &message {
            AgentMessage::User(user) => {
                let content = match &user.content {
                    UserContent::Text(text) => text.clone(),
                    UserContent::Blocks(blocks) => blocks.iter().filter_map(ContentBlock::as_text).collect(),
                };
                if !content.is_empty() {
                    parts.push(format!("[User]: {content}"));
                }
            }
            AgentMessage::Assistant(assistant) => {
                let mut text = Vec::new();
                let mut thinking = Vec::new();
                let mut calls = Vec::new();
                for block in &assistant.content {
                    match block {
                        ContentBlock::Text(t) => text.push(t.text.as_str()),
                        ContentBlock::Thinking(t) => thinking.push(t.thinking.as_str()),
                        ContentBlock::ToolCall(call) => {
                            let args = match &call.arguments {
                                Value::Object(map) => map
                                    .iter()
                                    .map(|(k, v)| format!("{k}={}", js_json(v)))
                                    .collect::<Vec<_>>()
                                    .join(", "),
                                _ => String::new(),
                            };
                            calls.push(format!("{}({args})", call.name));
                        }
                        ContentBlock::Image(_) => {}
                    }
                }
                if !thinking.is_empty() {
                    parts.push(format!("[Assistant thinking]: {}", thinking.join("\n")));
                }
                if !text.is_empty() {
                    parts.push(format!("[Assistant]: {}", text.join("\n")));
                }
                if !calls.is_empty() {
                    parts.push(format!("[Assistant tool calls]: {}", calls.join("; ")));
                }
            }
            AgentMessage::ToolResult(result) => {
                let content: String = result.content.iter().filter_map(ContentBlock::as_text).collect();
                if !content.is_empty() {
                    parts.push(format!("[Tool result]: {}", truncate_for_summary(&content)));
                }
            }
            AgentMessage::Custom(_) => {}
        }
    }
    parts.join("\n\n")
}

/// The `<read-files>` / `<modified-files>` sections pi appends to a summary (empty without files).
pub fn format_file_operations(read_files: &[String], modified_files: &[String]) -> String {
    let mut sections = Vec::new();
    if !read_files.is_empty() {
        sections.push(format!("<read-files>\n{}\n</read-files>", read_files.join("\n")));
    }
    if !modified_files.is_empty() {
        sections.push(format!(
            "<modified-files>\n{}\n</modified-files>",
            modified_files.join("\n")
        ));
    }
    if sections.is_empty() {
        return String::new();
    }
    format!("\n\n{}", sections.join("\n\n"))
}

/// The message a model call ends with: its `done` or `error` message; a stream that ends
/// without either gives the last partial message as an error.
pub(crate) async fn final_message(mut stream: pi_agent_core::AssistantMessageStream) -> AssistantMessage {
    let mut last = AssistantMessage::default();
    while let Some(event) = stream.next().await {
        match event {
            AssistantMessageEvent::Done { message, .. } => return message,
            AssistantMessageEvent::Error { error, .. } => return error,
            other => {
                if let Some(partial) = other.partial() {
                    last = (**partial).clone();
                }
            }
        }
    }
    last.stop_reason = StopReason::Error;
    last.error_message
        .get_or_insert_with(|| "The stream ended without a message".to_owned());
    last
}

/// The model and how to call it for a summary.
#[derive(Clone)]
pub struct Summarizer {
    /// The model (the session's).
    pub model: Model,
    /// The model boundary.
    pub stream_fn: std::sync::Arc<dyn StreamFn>,
    /// The API key.
    pub api_key: Option<String>,
    /// Extra HTTP headers.
    pub headers: std::collections::BTreeMap<String, String>,
    /// The session's thinking level (used when the model reasons).
    pub thinking_level: ThinkingLevel,
}

impl std::fmt::Debug for Summarizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Summarizer").field("model", &self.model.id).finish()
    }
}

impl Summarizer {
    /// One summary request: `prompt` as the only user message, at most `max_tokens` back; with
    /// the session's thinking level when `with_reasoning` and the model reasons (pi's compaction
    /// passes it, its branch summary does not).
    pub(super) async fn complete(
        &self,
        prompt: String,
        max_tokens: u64,
        with_reasoning: bool,
        cancel: &CancellationToken,
    ) -> AssistantMessage {
        let messages = [AgentMessage::User(UserMessage {
            content: UserContent::Blocks(vec![ContentBlock::text(prompt)]),
            timestamp: now_ms(),
        })];
        let reasoning = (with_reasoning && self.model.reasoning && self.thinking_level != ThinkingLevel::Off)
            .then_some(self.thinking_level);
        let options = StreamOptions {
            api_key: self.api_key.clone(),
            reasoning,
            session_id: None,
            max_tokens: Some(max_tokens),
            temperature: None,
            tool_choice: None,
            headers: self.headers.clone(),
            cancel: cancel.clone(),
            provider_hooks: Default::default(),
        };
        let context = LlmContext {
            system_prompt: SUMMARIZATION_SYSTEM_PROMPT,
            messages: &messages,
            tools: &[],
        };
        final_message(self.stream_fn.stream(&self.model, &context, &options)).await
    }

    async fn text(
        &self,
        prompt: String,
        max_tokens: u64,
        cancel: &CancellationToken,
        failure: &str,
    ) -> Result<String, CompactionError> {
        let response = self.complete(prompt, max_tokens, true, cancel).await;
        if cancel.is_cancelled() || response.stop_reason == StopReason::Aborted {
            return Err(CompactionError::Cancelled);
        }
        if response.stop_reason == StopReason::Error {
            let reason = response.error_message.unwrap_or_else(|| "Unknown error".to_owned());
            return Err(CompactionError::Failed(format!("{failure} failed: {reason}")));
        }
        Ok(response
            .content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect::<Vec<_>>()
            .join("\n"))
    }

    /// The summary of `messages` (pi's `generateSummary`): updates `previous` when there is one,
    /// with the user's `instructions` as `Additional focus`.
    pub async fn summarize(
        &self,
        messages: &[AgentMessage],
        reserve_tokens: u64,
        instructions: Option<&str>,
        previous: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<String, CompactionError> {
        let max_tokens = (0.8 * reserve_tokens as f64).floor() as u64;
        let mut base = if previous.is_some() {
            UPDATE_SUMMARIZATION_PROMPT.to_owned()
        } else {
            SUMMARIZATION_PROMPT.to_owned()
        };
        if let Some(instructions) = instructions.filter(|i| !i.is_empty()) {
            base = with_focus(&base, instructions);
        }
        let mut prompt = conversation_block(messages);
        if let Some(previous) = previous {
            prompt.push_str(&format!("<previous-summary>\n{previous}\n</previous-summary>\n\n"));
        }
        prompt.push_str(&base);
        self.text(prompt, max_tokens, cancel, "Summarization").await
    }

    /// The summary of the beginning of a split turn (half the reserve).
    async fn summarize_turn_prefix(
        &self,
        messages: &[AgentMessage],
        reserve_tokens: u64,
        cancel: &CancellationToken,
    ) -> Result<String, CompactionError> {
        let max_tokens = (0.5 * reserve_tokens as f64).floor() as u64;
        let prompt = conversation_block(messages) + TURN_PREFIX_SUMMARIZATION_PROMPT;
        self.text(prompt, max_tokens, cancel, "Turn prefix summarization").await
    }

    /// pi's `compact`: the summary (two, merged, for a split turn) with the file lists appended.
    pub async fn compact(
        &self,
        preparation: &CompactionPreparation,
        instructions: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<CompactionResult, CompactionError> {
        let reserve = preparation.settings.reserve_tokens;
        let previous = preparation.previous_summary.as_deref();
        let mut summary = if preparation.is_split_turn && !preparation.turn_prefix_messages.is_empty() {
            let history = async {
                if preparation.messages_to_summarize.is_empty() {
                    Ok("No prior history.".to_owned())
                } else {
                    self.summarize(
                        &preparation.messages_to_summarize,
                        reserve,
                        instructions,
                        previous,
                        cancel,
                    )
                    .await
                }
            };
            let prefix = self.summarize_turn_prefix(&preparation.turn_prefix_messages, reserve, cancel);
            let (history, prefix) = futures::join!(history, prefix);
            format!("{}\n\n---\n\n**Turn Context (split turn):**\n\n{}", history?, prefix?)
        } else {
            self.summarize(
                &preparation.messages_to_summarize,
                reserve,
                instructions,
                previous,
                cancel,
            )
            .await?
        };
        let (read_files, modified_files) = preparation.file_ops.file_lists();
        summary.push_str(&format_file_operations(&read_files, &modified_files));
        Ok(CompactionResult {
            summary,
            first_kept_entry_id: preparation.first_kept_entry_id.clone(),
            tokens_before: preparation.tokens_before,
            details: Some(json!({"readFiles": read_files, "modifiedFiles": modified_files})),
        })
    }
}

/// The serialized `messages` as every summary request opens: `<conversation>…</conversation>`
/// and a blank line.
pub(super) fn conversation_block(messages: &[AgentMessage]) -> String {
    format!(
        "<conversation>\n{}\n</conversation>\n\n",
        serialize_conversation(messages)
    )
}

/// A summary prompt with the user's instructions after it, as pi adds them.
pub(super) fn with_focus(prompt: &str, instructions: &str) -> String {
    format!("{prompt}\n\nAdditional focus: {instructions}")
}
