//! The interactive transcript: what the session's events mean for the screen.
//!
//! Items are appended in the order they happen — the user's message, the assistant's text, one
//! block per tool call (call and result merged), notices — and each knows when it is finished. An
//! item is *committed* (printed into the terminal's scrollback, never redrawn) once it and every
//! item before it are finished, so the scrollback reads in order even when parallel tool calls end
//! out of order; the others form the live region that is redrawn.

use std::time::{Duration, Instant};

use pi_agent_core::{AgentEvent, AgentMessage, AssistantMessage, ContentBlock, StopReason, ToolResult};
use serde_json::Value;

use pi_coding_agent::SessionEvent;

/// How a notice looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    /// Plain information.
    Info,
    /// Something to look at.
    Warning,
    /// Something went wrong.
    Error,
}

/// One tool call: its arguments (partial while they stream), partial results, its result.
#[derive(Debug, Clone)]
pub struct ToolBlock {
    /// The call id.
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments so far.
    pub args: Value,
    /// The latest partial result while it runs.
    pub partial: Option<ToolResult>,
    /// The final result.
    pub result: Option<ToolResult>,
    /// The result is an error.
    pub is_error: bool,
    /// When execution started.
    pub started: Option<Instant>,
    /// How long execution took.
    pub elapsed: Option<Duration>,
}

impl ToolBlock {
    fn new(call_id: &str, name: &str, args: Value) -> Self {
        ToolBlock {
            call_id: call_id.to_owned(),
            name: name.to_owned(),
            args,
            partial: None,
            result: None,
            is_error: false,
            started: None,
            elapsed: None,
        }
    }
}

/// One item of the transcript.
#[derive(Debug, Clone)]
pub enum Item {
    /// A message the user sent (or a visible custom message).
    User {
        /// Its text.
        text: String,
    },
    /// The assistant's text and thinking of one message.
    Assistant {
        /// The text so far.
        text: String,
        /// The thinking so far.
        thinking: String,
        /// The message ended.
        done: bool,
        /// Why it failed (stop reason `error`); for one aborted while a retry is in progress,
        /// pi's `Aborted after N retry attempts`.
        error: Option<String>,
        /// The run was aborted during this message.
        aborted: bool,
    },
    /// A tool call.
    Tool(Box<ToolBlock>),
    /// A line from pi itself.
    Notice {
        /// What to say.
        text: String,
        /// How.
        kind: NoticeKind,
    },
}

impl Item {
    /// Whether the item will not change any more.
    pub fn is_finished(&self) -> bool {
        match self {
            Item::User { .. } | Item::Notice { .. } => true,
            Item::Assistant { done, .. } => *done,
            Item::Tool(block) => block.result.is_some(),
        }
    }
}

/// The transcript of one interactive session.
#[derive(Debug, Clone, Default)]
pub struct Transcript {
    items: Vec<Item>,
    committed: usize,
    /// The item index of the assistant message being streamed.
    streaming: Option<usize>,
    /// The item indexes of that message's tool blocks, by the position of their call in the
    /// message: while a call streams its id may still be empty (and providers that number calls
    /// per response repeat ids from turn to turn), so its position is what identifies it.
    streaming_calls: Vec<usize>,
    /// The automatic retry in progress (pi's `retryAttempt`): an answer aborted during it reads
    /// `Aborted after N retry attempts`.
    retry_attempt: u32,
}

/// A provider error as the screen shows it: a failed connection in pi's words (`Connection
/// error.`, the providers' SDKs' text) followed by its innermost cause (`Connection refused (os
/// error 111)`), not the HTTP client's `error sending request for url (…)` chain; any other
/// error as it is.
pub fn error_text(error: &str) -> String {
    let Some(chain) = error.strip_prefix("Connection error: ") else {
        return error.to_owned();
    };
    let cause = chain.rsplit(": ").next().unwrap_or_default().trim();
    if cause.is_empty() || cause.starts_with("error sending request") {
        "Connection error.".to_owned()
    } else {
        format!("Connection error. {cause}")
    }
}

fn text_of(message: &AssistantMessage) -> (String, String) {
    let mut text = String::new();
    let mut thinking = String::new();
    for block in &message.content {
        match block {
            ContentBlock::Text(t) => text.push_str(&t.text),
            ContentBlock::Thinking(t) => thinking.push_str(&t.thinking),
            _ => {}
        }
    }
    (text, thinking)
}

impl Transcript {
    /// An empty transcript.
    pub fn new() -> Self {
        Transcript::default()
    }

    /// Every item.
    pub fn items(&self) -> &[Item] {
        &self.items
    }

    /// Appends a notice.
    pub fn notice(&mut self, text: impl Into<String>, kind: NoticeKind) {
        self.items.push(Item::Notice {
            text: text.into(),
            kind,
        });
    }

    /// Appends the user's message (shown as soon as it is sent).
    pub fn user(&mut self, text: impl Into<String>) {
        self.items.push(Item::User { text: text.into() });
    }

    /// Items for messages already in the session (a continued or resumed one), all finished. A
    /// tool call whose result is missing (the run was cut off) is shown without one.
    pub fn load_messages(&mut self, messages: &[AgentMessage]) {
        let start = self.items.len();
        self.streaming = None;
        self.streaming_calls.clear();
        for message in messages {
            match message {
                AgentMessage::User(user) => self.user(user.content.text()),
                AgentMessage::Assistant(assistant) => self.sync_assistant(assistant, true),
                AgentMessage::ToolResult(result) => {
                    let block = self.block(&result.tool_call_id, &result.tool_name, &Value::Null);
                    let mut shown = ToolResult::text("");
                    shown.content = result.content.clone();
                    shown.details = result.details.clone().unwrap_or(Value::Null);
                    block.result = Some(shown);
                    block.is_error = result.is_error;
                }
                AgentMessage::Custom(custom) => {
                    if custom.role == "custom" && custom.fields.get("display").and_then(Value::as_bool) != Some(false) {
                        let text = match custom.fields.get("content") {
                            Some(Value::String(text)) => text.clone(),
                            Some(other) => other.to_string(),
                            None => String::new(),
                        };
                        self.notice(text, NoticeKind::Info);
                    }
                }
            }
        }
        for item in &mut self.items[start..] {
            if let Item::Tool(block) = item
                && block.result.is_none()
            {
                block.result = Some(ToolResult::text("(no result)"));
                block.is_error = true;
            }
        }
    }

    /// Appends the block of a resolution the user made from the keyboard (shown like the model's
    /// `resolve` call).
    pub fn user_resolution(&mut self, action: &str, reason: &str, result: ToolResult, is_error: bool) {
        let args = serde_json::json!({"action": action, "reason": reason});
        let mut block = ToolBlock::new("", "resolve", args);
        block.result = Some(result);
        block.is_error = is_error;
        self.items.push(Item::Tool(Box::new(block)));
    }

    /// The items that are finished and not yet committed, in order; they count as committed after
    /// this call.
    pub fn take_finished(&mut self) -> std::ops::Range<usize> {
        let start = self.committed;
        while self.committed < self.items.len() && self.items[self.committed].is_finished() {
            self.committed += 1;
        }
        start..self.committed
    }

    /// The items of the live region (not committed yet).
    pub fn live(&self) -> &[Item] {
        &self.items[self.committed..]
    }

    /// The newest block still waiting for the result of `call_id`. Only live blocks count: ids
    /// are not unique across turns, and a block with its result is never updated again.
    fn waiting_block(&self, call_id: &str) -> Option<usize> {
        let live = self.items[self.committed..].iter().rposition(
            |item| matches!(item, Item::Tool(block) if block.call_id == call_id && block.result.is_none()),
        )?;
        Some(self.committed + live)
    }

    /// The block waiting for `call_id`, or a new one at the end.
    fn block(&mut self, call_id: &str, name: &str, args: &Value) -> &mut ToolBlock {
        let index = match self.waiting_block(call_id) {
            Some(index) => index,
            None => self.push_block(call_id, name, args),
        };
        self.tool_at(index)
    }

    fn push_block(&mut self, call_id: &str, name: &str, args: &Value) -> usize {
        self.items
            .push(Item::Tool(Box::new(ToolBlock::new(call_id, name, args.clone()))));
        self.items.len() - 1
    }

    fn tool_at(&mut self, index: usize) -> &mut ToolBlock {
        match &mut self.items[index] {
            Item::Tool(block) => block,
            _ => unreachable!("only tool items are indexed as blocks"),
        }
    }

    /// Brings the streaming assistant item (and the tool blocks of its calls) up to `message`.
    fn sync_assistant(&mut self, message: &AssistantMessage, done: bool) {
        let (text, thinking) = text_of(message);
        let error = matches!(message.stop_reason, StopReason::Error).then(|| {
            message
                .error_message
                .as_deref()
                .map_or_else(|| "Request failed".to_owned(), error_text)
        });
        let aborted = matches!(message.stop_reason, StopReason::Aborted);
        // pi's text for an answer aborted while a retry is in progress.
        let error = match (error, aborted, self.retry_attempt) {
            (None, true, n) if n > 0 => Some(format!(
                "Aborted after {n} retry attempt{}",
                if n > 1 { "s" } else { "" }
            )),
            (error, ..) => error,
        };
        let index = match self.streaming {
            Some(index) => index,
            None => {
                self.items.push(Item::Assistant {
                    text: String::new(),
                    thinking: String::new(),
                    done: false,
                    error: None,
                    aborted: false,
                });
                let index = self.items.len() - 1;
                self.streaming = Some(index);
                index
            }
        };
        if let Item::Assistant {
            text: item_text,
            thinking: item_thinking,
            done: item_done,
            error: item_error,
            aborted: item_aborted,
        } = &mut self.items[index]
        {
            *item_text = text;
            *item_thinking = thinking;
            *item_done = done;
            if done {
                *item_error = error;
                *item_aborted = aborted;
            }
        }
        for (position, call) in message.tool_calls().enumerate() {
            let index = match self.streaming_calls.get(position) {
                Some(&index) => index,
                None => {
                    let index = self.push_block(&call.id, &call.name, &call.arguments);
                    self.streaming_calls.push(index);
                    index
                }
            };
            let block = self.tool_at(index);
            block.call_id.clone_from(&call.id);
            block.name.clone_from(&call.name);
            block.args = call.arguments.clone();
        }
        if done {
            self.streaming = None;
            let calls = std::mem::take(&mut self.streaming_calls);
            // Calls of a failed message never run: close their blocks.
            if matches!(message.stop_reason, StopReason::Error | StopReason::Aborted) {
                let reason = message.error_message.clone().unwrap_or_else(|| "aborted".to_owned());
                for index in calls {
                    let block = self.tool_at(index);
                    if block.result.is_none() {
                        block.result = Some(ToolResult::text(reason.clone()));
                        block.is_error = true;
                    }
                }
            }
        }
    }

    /// Applies one session event.
    pub fn apply(&mut self, event: &SessionEvent) {
        match event {
            SessionEvent::Agent(event) => self.apply_agent(event),
            SessionEvent::ResolveForcingStopped(_) => {
                if let Some(text) = event.notice() {
                    self.notice(text, NoticeKind::Warning);
                }
            }
            SessionEvent::AutoRetryStart { attempt, .. } => self.retry_attempt = *attempt,
            // pi's `showError` when the retries ran out or the wait was cancelled.
            SessionEvent::AutoRetryEnd {
                success: false,
                attempt,
                final_error,
            } => {
                self.retry_attempt = 0;
                self.notice(
                    format!(
                        "Error: Retry failed after {attempt} attempts: {}",
                        final_error
                            .as_deref()
                            .map_or_else(|| "Unknown error".to_owned(), error_text)
                    ),
                    NoticeKind::Error,
                );
            }
            SessionEvent::AutoRetryEnd { success: true, .. } => self.retry_attempt = 0,
            SessionEvent::CompactionStart { .. } => {
                if let Some(text) = event.notice() {
                    self.notice(text, NoticeKind::Info);
                }
            }
            SessionEvent::CompactionEnd { result, .. } => {
                if let Some(text) = event.notice() {
                    let kind = if result.is_some() {
                        NoticeKind::Info
                    } else {
                        NoticeKind::Error
                    };
                    self.notice(text, kind);
                }
            }
            // The screen shows queues, the thinking level and the name from their own state, and
            // a retry's wait in its loader.
            SessionEvent::PendingActionPushed { .. }
            | SessionEvent::Resolved(_)
            | SessionEvent::QueueUpdate { .. }
            | SessionEvent::ThinkingLevelChanged(_)
            | SessionEvent::SessionInfoChanged { .. } => {}
        }
    }

    fn apply_agent(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::MessageStart {
                message: AgentMessage::User(user),
            } => self.user(user.content.text()),
            AgentEvent::MessageStart {
                message: AgentMessage::Assistant(message),
            } => self.sync_assistant(message, false),
            AgentEvent::MessageUpdate { message, .. } => self.sync_assistant(message, false),
            AgentEvent::MessageEnd {
                message: AgentMessage::Assistant(message),
            } => self.sync_assistant(message, true),
            AgentEvent::MessageEnd {
                message: AgentMessage::Custom(custom),
            } if custom.role == "custom" && custom.fields.get("display").and_then(Value::as_bool) != Some(false) => {
                let text = match custom.fields.get("content") {
                    Some(Value::String(text)) => text.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                self.notice(text, NoticeKind::Info);
            }
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
            } => {
                let block = self.block(tool_call_id, tool_name, args);
                block.args = args.clone();
                block.started = Some(Instant::now());
            }
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                tool_name,
                args,
                partial_result,
            } => {
                let block = self.block(tool_call_id, tool_name, args);
                block.partial = Some(partial_result.clone());
            }
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                result,
                is_error,
            } => {
                let block = self.block(tool_call_id, tool_name, &Value::Null);
                block.result = Some(result.clone());
                block.is_error = *is_error;
                block.elapsed = block.started.map(|s| s.elapsed());
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_agent_core::faux::{faux_assistant_message, faux_text, faux_tool_call};
    use serde_json::json;

    fn end(call: &str, text: &str) -> SessionEvent {
        SessionEvent::Agent(AgentEvent::ToolExecutionEnd {
            tool_call_id: call.into(),
            tool_name: "read".into(),
            result: ToolResult::text(text),
            is_error: false,
        })
    }

    #[test]
    fn items_commit_in_order_even_when_tools_end_out_of_order() {
        let mut transcript = Transcript::new();
        transcript.user("read two files");
        let message = faux_assistant_message(vec![
            faux_text("Reading."),
            faux_tool_call("a", "read", json!({"path": "a"})),
            faux_tool_call("b", "read", json!({"path": "b"})),
        ]);
        transcript.apply(&SessionEvent::Agent(AgentEvent::MessageEnd {
            message: AgentMessage::Assistant(message),
        }));
        assert_eq!(transcript.take_finished(), 0..2, "user and assistant text");
        transcript.apply(&end("b", "B"));
        assert_eq!(transcript.take_finished(), 2..2, "b waits for a");
        transcript.apply(&end("a", "A"));
        assert_eq!(transcript.take_finished(), 2..4);
        assert!(transcript.live().is_empty());
    }

    fn assistant(event: fn(AgentMessage) -> AgentEvent, calls: &[(&str, &str)]) -> SessionEvent {
        let blocks = calls
            .iter()
            .map(|(id, path)| faux_tool_call(*id, "read", json!({ "path": path })))
            .collect();
        SessionEvent::Agent(event(AgentMessage::Assistant(faux_assistant_message(blocks))))
    }

    fn update(message: AgentMessage) -> AgentEvent {
        let AgentMessage::Assistant(message) = message else {
            unreachable!("only assistant messages stream")
        };
        let message = std::sync::Arc::new(message);
        AgentEvent::MessageUpdate {
            assistant_message_event: pi_agent_core::AssistantMessageEvent::Start {
                partial: message.clone(),
            },
            message,
        }
    }

    fn message_end(message: AgentMessage) -> AgentEvent {
        AgentEvent::MessageEnd { message }
    }

    fn tool_blocks(transcript: &Transcript) -> Vec<(String, String, Option<String>)> {
        transcript
            .items()
            .iter()
            .filter_map(|item| match item {
                Item::Tool(block) => Some((
                    block.call_id.clone(),
                    block.args["path"].as_str().unwrap_or_default().to_owned(),
                    block.result.as_ref().map(super::super::tools::result_text),
                )),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn calls_are_matched_by_position_while_streaming_and_ids_repeat_across_turns() {
        let mut transcript = Transcript::new();
        // openai-completions without ids: empty while the call streams, `call_0` at the end, and
        // `call_0` again in the next response.
        transcript.apply(&assistant(update, &[("", "a")]));
        transcript.apply(&assistant(update, &[("", "a"), ("", "b")]));
        transcript.apply(&assistant(message_end, &[("call_0", "a"), ("call_1", "b")]));
        transcript.apply(&end("call_0", "A"));
        transcript.apply(&end("call_1", "B"));
        transcript.take_finished();
        transcript.apply(&assistant(update, &[("", "c")]));
        transcript.apply(&assistant(message_end, &[("call_0", "c")]));
        transcript.apply(&end("call_0", "C"));
        let some = |s: &str| Some(s.to_owned());
        assert_eq!(
            tool_blocks(&transcript),
            vec![
                ("call_0".into(), "a".into(), some("A")),
                ("call_1".into(), "b".into(), some("B")),
                ("call_0".into(), "c".into(), some("C")),
            ]
        );
        assert_eq!(transcript.take_finished().len(), 2, "the new turn's text and block");
        assert!(transcript.live().is_empty());
    }

    #[test]
    fn a_keyboard_resolution_is_not_taken_over_by_a_call_without_an_id() {
        let mut transcript = Transcript::new();
        transcript.user_resolution("apply", "Decided by the user.", ToolResult::text("Applied."), false);
        transcript.apply(&assistant(update, &[("", "a")]));
        let blocks = tool_blocks(&transcript);
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[0].2.as_deref(), Some("Applied."));
        assert_eq!(blocks[1].1, "a");
    }
}
