//! The agent loop: stream a model response, run its tool calls, repeat until the model stops,
//! with steering and follow-up messages injected at turn boundaries.
//!
//! [`run_agent_loop`] and [`run_agent_loop_continue`] drive a run to its end, sending every event
//! to an [`EventSink`]; [`agent_loop`] and [`agent_loop_continue`] spawn the run and hand back an
//! [`AgentEventStream`].
//!
//! ```
//! use pi_agent_core::faux::{FauxModel, faux_assistant_text};
//! use pi_agent_core::{AgentContext, AgentLoopConfig, AgentMessage, run_agent_loop};
//! use tokio_util::sync::CancellationToken;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let faux = FauxModel::new();
//! faux.set_responses([faux_assistant_text("4")]);
//! let config = AgentLoopConfig::new(faux.model()).with_stream_fn(faux.stream_fn());
//! let mut kinds = Vec::new();
//! let new_messages = run_agent_loop(
//!     vec![AgentMessage::user("2 + 2?")],
//!     AgentContext::default(),
//!     &config,
//!     &CancellationToken::new(),
//!     &mut |event: pi_agent_core::AgentEvent| kinds.push(event.kind()),
//! )
//! .await
//! .unwrap();
//! assert_eq!(new_messages.len(), 2);
//! assert_eq!(kinds.first(), Some(&"agent_start"));
//! assert_eq!(kinds.last(), Some(&"agent_end"));
//! # });
//! ```

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::{Stream, StreamExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::config::{AgentContext, AgentLoopConfig, TurnContext};
use crate::dispatch::Batch;
use crate::event::{AgentEvent, EventSink};
use crate::message::{AgentMessage, AssistantMessage, StopReason, ToolCall, ToolResultMessage, now_ms};
use crate::model::{
    AssistantMessageEvent, LlmContext, Model, StreamFn, StreamOptions, ThinkingLevel, default_stream_fn,
};

/// Errors a loop reports before it starts (pi throws these synchronously).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentLoopError {
    /// No stream function was given and no default is installed.
    #[error("No default stream function configured. Pass streamFn explicitly or call setDefaultStreamFn().")]
    NoStreamFn,
    /// `continue` on an empty transcript.
    #[error("Cannot continue: no messages in context")]
    NoMessages,
    /// `continue` when the transcript ends with an assistant message.
    #[error("Cannot continue from message role: assistant")]
    ContinueFromAssistant,
    /// The spawned run panicked or was cancelled by its runtime.
    #[error("{0}")]
    Crashed(String),
}

/// Whether the run starts with new prompts and whether it polls steering first.
pub(crate) struct RunStart {
    pub(crate) prompts: Vec<AgentMessage>,
    pub(crate) poll_initial_steering: bool,
}

/// Runs the loop with new prompt messages until it ends, and returns the messages it added.
pub async fn run_agent_loop(
    prompts: Vec<AgentMessage>,
    context: AgentContext,
    config: &AgentLoopConfig,
    cancel: &CancellationToken,
    sink: &mut dyn EventSink,
) -> Result<Vec<AgentMessage>, AgentLoopError> {
    let start = RunStart {
        prompts,
        poll_initial_steering: true,
    };
    run_loop(start, context, config, cancel, sink).await
}

/// Continues from the current transcript without a new message (retries, resumptions).
///
/// The last message must be a user message or a tool result (or a custom message the caller's
/// `convert_to_llm` turns into one).
pub async fn run_agent_loop_continue(
    context: AgentContext,
    config: &AgentLoopConfig,
    cancel: &CancellationToken,
    sink: &mut dyn EventSink,
) -> Result<Vec<AgentMessage>, AgentLoopError> {
    check_continue(&context)?;
    let start = RunStart {
        prompts: Vec::new(),
        poll_initial_steering: true,
    };
    run_loop(start, context, config, cancel, sink).await
}

fn check_continue(context: &AgentContext) -> Result<(), AgentLoopError> {
    match context.messages.last() {
        None => Err(AgentLoopError::NoMessages),
        Some(AgentMessage::Assistant(_)) => Err(AgentLoopError::ContinueFromAssistant),
        Some(_) => Ok(()),
    }
}

/// Spawns a run on the current tokio runtime and returns its event stream.
pub fn agent_loop(
    prompts: Vec<AgentMessage>,
    context: AgentContext,
    config: AgentLoopConfig,
    cancel: CancellationToken,
) -> AgentEventStream {
    AgentEventStream::spawn(
        RunStart {
            prompts,
            poll_initial_steering: true,
        },
        context,
        config,
        cancel,
    )
}

/// Spawns a continuation; fails at once like [`run_agent_loop_continue`] would.
pub fn agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    cancel: CancellationToken,
) -> Result<AgentEventStream, AgentLoopError> {
    check_continue(&context)?;
    Ok(AgentEventStream::spawn(
        RunStart {
            prompts: Vec::new(),
            poll_initial_steering: true,
        },
        context,
        config,
        cancel,
    ))
}

/// The events of a spawned run; ends after `agent_end`. [`AgentEventStream::result`] gives the
/// messages the run added.
pub struct AgentEventStream {
    events: mpsc::UnboundedReceiver<AgentEvent>,
    run: JoinHandle<Result<Vec<AgentMessage>, AgentLoopError>>,
}

impl AgentEventStream {
    fn spawn(start: RunStart, context: AgentContext, config: AgentLoopConfig, cancel: CancellationToken) -> Self {
        let (tx, events) = mpsc::unbounded_channel();
        let run = tokio::spawn(async move {
            let mut sink = move |event: AgentEvent| {
                let _ = tx.send(event);
            };
            run_loop(start, context, &config, &cancel, &mut sink).await
        });
        AgentEventStream { events, run }
    }

    /// Waits for the run to end and returns the messages it added.
    pub async fn result(self) -> Result<Vec<AgentMessage>, AgentLoopError> {
        match self.run.await {
            Ok(result) => result,
            Err(error) => Err(AgentLoopError::Crashed(error.to_string())),
        }
    }
}

impl Stream for AgentEventStream {
    type Item = AgentEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<AgentEvent>> {
        self.events.poll_recv(cx)
    }
}

/// The mutable state of one run.
struct Run<'a> {
    context: AgentContext,
    config: &'a AgentLoopConfig,
    stream_fn: Arc<dyn StreamFn>,
    model: Model,
    reasoning: Option<ThinkingLevel>,
    cancel: &'a CancellationToken,
    new_messages: Vec<AgentMessage>,
}

pub(crate) async fn run_loop(
    start: RunStart,
    context: AgentContext,
    config: &AgentLoopConfig,
    cancel: &CancellationToken,
    sink: &mut dyn EventSink,
) -> Result<Vec<AgentMessage>, AgentLoopError> {
    let stream_fn = match &config.stream_fn {
        Some(stream_fn) => stream_fn.clone(),
        None => default_stream_fn().ok_or(AgentLoopError::NoStreamFn)?,
    };
    let mut run = Run {
        context,
        config,
        stream_fn,
        model: config.model.clone(),
        reasoning: config.reasoning,
        cancel,
        new_messages: Vec::new(),
    };
    run.run(start, sink).await;
    Ok(run.new_messages)
}

impl Run<'_> {
    async fn run(&mut self, start: RunStart, sink: &mut dyn EventSink) {
        sink.emit(AgentEvent::AgentStart).await;
        sink.emit(AgentEvent::TurnStart).await;
        for prompt in start.prompts {
            self.deliver(prompt, sink).await;
        }
        let mut pending = if start.poll_initial_steering {
            poll(&self.config.get_steering_messages)
        } else {
            Vec::new()
        };
        let mut first_turn = true;
        loop {
            let mut has_more_tool_calls = true;
            while has_more_tool_calls || !pending.is_empty() {
                if first_turn {
                    first_turn = false;
                } else {
                    sink.emit(AgentEvent::TurnStart).await;
                }
                for message in std::mem::take(&mut pending) {
                    self.deliver(message, sink).await;
                }
                let message = self.stream_assistant_response(sink).await;
                self.new_messages.push(AgentMessage::Assistant(message.clone()));
                if matches!(message.stop_reason, StopReason::Error | StopReason::Aborted) {
                    sink.emit(AgentEvent::TurnEnd {
                        message: AgentMessage::Assistant(message),
                        tool_results: Vec::new(),
                    })
                    .await;
                    self.end(sink).await;
                    return;
                }
                let calls: Vec<&ToolCall> = message.tool_calls().collect();
                let mut tool_results = Vec::new();
                if calls.is_empty() {
                    has_more_tool_calls = false;
                } else {
                    let batch = Batch {
                        config: self.config,
                        tools: &self.context.tools,
                        messages: &self.context.messages,
                        assistant: &message,
                        cancel: self.cancel,
                    };
                    let outcome = if message.stop_reason == StopReason::Length {
                        batch.fail_truncated(&calls, sink).await
                    } else {
                        batch.run(&calls, sink).await
                    };
                    has_more_tool_calls = !outcome.terminate;
                    tool_results = outcome.results;
                    for result in &tool_results {
                        let result = AgentMessage::ToolResult(result.clone());
                        self.context.messages.push(result.clone());
                        self.new_messages.push(result);
                    }
                }
                let has_turn_hooks =
                    self.config.prepare_next_turn.is_some() || self.config.should_stop_after_turn.is_some();
                if has_turn_hooks {
                    sink.emit(AgentEvent::TurnEnd {
                        message: AgentMessage::Assistant(message.clone()),
                        tool_results: tool_results.clone(),
                    })
                    .await;
                    if self.after_turn(&message, &tool_results) {
                        self.end(sink).await;
                        return;
                    }
                } else {
                    sink.emit(AgentEvent::TurnEnd {
                        message: AgentMessage::Assistant(message),
                        tool_results,
                    })
                    .await;
                }
                pending = poll(&self.config.get_steering_messages);
            }
            let follow_ups = poll(&self.config.get_follow_up_messages);
            if follow_ups.is_empty() {
                break;
            }
            pending = follow_ups;
        }
        self.end(sink).await;
    }

    /// `prepare_next_turn` then `should_stop_after_turn`; true when the run must stop.
    fn after_turn(&mut self, message: &AssistantMessage, tool_results: &[ToolResultMessage]) -> bool {
        let next = self.config.prepare_next_turn.as_ref().and_then(|prepare| {
            prepare(&TurnContext {
                message,
                tool_results,
                messages: &self.context.messages,
                system_prompt: &self.context.system_prompt,
            })
        });
        if let Some(next) = next {
            if let Some(system_prompt) = next.system_prompt {
                self.context.system_prompt = system_prompt;
            }
            if let Some(messages) = next.messages {
                self.context.messages = messages;
            }
            if let Some(tools) = next.tools {
                self.context.tools = tools;
            }
            if let Some(model) = next.model {
                self.model = model;
            }
            if let Some(level) = next.thinking_level {
                self.reasoning = (level != ThinkingLevel::Off).then_some(level);
            }
        }
        let Some(should_stop) = &self.config.should_stop_after_turn else {
            return false;
        };
        should_stop(&TurnContext {
            message,
            tool_results,
            messages: &self.context.messages,
            system_prompt: &self.context.system_prompt,
        })
    }

    /// Emits a prompt / steering / follow-up message and appends it to the transcript.
    async fn deliver(&mut self, message: AgentMessage, sink: &mut dyn EventSink) {
        sink.emit(AgentEvent::MessageStart {
            message: message.clone(),
        })
        .await;
        let message = finish_message(self.config, message, self.cancel).await;
        sink.emit(AgentEvent::MessageEnd {
            message: message.clone(),
        })
        .await;
        self.context.messages.push(message.clone());
        self.new_messages.push(message);
    }

    async fn end(&mut self, sink: &mut dyn EventSink) {
        sink.emit(AgentEvent::AgentEnd {
            messages: self.new_messages.clone(),
        })
        .await;
    }

    /// Streams one assistant message, emitting its events, and appends it to the transcript.
    async fn stream_assistant_response(&mut self, sink: &mut dyn EventSink) -> AssistantMessage {
        let transformed = match &self.config.transform_context {
            Some(transform) => Some(transform.transform(&self.context.messages, self.cancel).await),
            None => None,
        };
        let base: &[AgentMessage] = transformed.as_deref().unwrap_or(&self.context.messages);
        let converted = self.config.convert_to_llm.as_ref().map(|convert| convert(base));
        let llm_messages: &[AgentMessage] = converted.as_deref().unwrap_or(base);

        let mut api_key = None;
        if let Some(get_api_key) = &self.config.get_api_key {
            api_key = get_api_key(&self.model.provider).await.filter(|key| !key.is_empty());
        }
        let options = StreamOptions {
            api_key: api_key.or_else(|| self.config.api_key.clone()),
            reasoning: self.reasoning,
            session_id: self.config.session_id.clone(),
            max_tokens: self.config.max_tokens,
            temperature: self.config.temperature,
            tool_choice: self
                .config
                .get_tool_choice
                .as_ref()
                .and_then(|f| f(&self.context.messages)),
            headers: self.config.headers.clone(),
            cancel: self.cancel.clone(),
            provider_hooks: self.config.provider_hooks.clone(),
        };
        let llm_context = LlmContext {
            system_prompt: &self.context.system_prompt,
            messages: llm_messages,
            tools: &self.context.tools,
        };
        let mut stream = self.stream_fn.stream(&self.model, &llm_context, &options);
        drop(converted);
        drop(transformed);

        let mut started = false;
        let message = loop {
            match stream.next().await {
                Some(AssistantMessageEvent::Start { partial }) => {
                    started = true;
                    let message = AgentMessage::Assistant((*partial).clone());
                    sink.emit(AgentEvent::MessageStart { message }).await;
                }
                Some(AssistantMessageEvent::Done { message, .. }) => break message,
                Some(AssistantMessageEvent::Error { error, .. }) => break error,
                Some(event) => {
                    if let Some(partial) = event.partial().cloned() {
                        sink.emit(AgentEvent::MessageUpdate {
                            message: partial,
                            assistant_message_event: event,
                        })
                        .await;
                    }
                }
                None => break self.unterminated_stream_message(),
            }
        };
        drop(stream);
        if !started {
            sink.emit(AgentEvent::MessageStart {
                message: AgentMessage::Assistant(message.clone()),
            })
            .await;
        }
        let message = finish_assistant(self.config, message, self.cancel).await;
        let final_message = AgentMessage::Assistant(message.clone());
        sink.emit(AgentEvent::MessageEnd {
            message: final_message.clone(),
        })
        .await;
        self.context.messages.push(final_message);
        message
    }

    /// The message recorded when a model stream ends without `done` or `error`.
    fn unterminated_stream_message(&self) -> AssistantMessage {
        let aborted = self.cancel.is_cancelled();
        AssistantMessage {
            content: Vec::new(),
            api: self.model.api.clone(),
            provider: self.model.provider.clone(),
            model: self.model.id.clone(),
            stop_reason: if aborted {
                StopReason::Aborted
            } else {
                StopReason::Error
            },
            error_message: Some(if aborted {
                "Request was aborted".to_owned()
            } else {
                "Model stream ended without a final message".to_owned()
            }),
            timestamp: now_ms(),
            ..Default::default()
        }
    }
}

/// The message `message_end` carries: the [`crate::MessageEndHook`]'s replacement, if any, of the
/// same role.
async fn finish_message(config: &AgentLoopConfig, message: AgentMessage, cancel: &CancellationToken) -> AgentMessage {
    let Some(hook) = &config.message_end else {
        return message;
    };
    match hook.message_end(&message, cancel).await {
        Some(replacement) if std::mem::discriminant(&replacement) == std::mem::discriminant(&message) => replacement,
        _ => message,
    }
}

/// [`finish_message`] for the assistant's answer.
async fn finish_assistant(
    config: &AgentLoopConfig,
    message: AssistantMessage,
    cancel: &CancellationToken,
) -> AssistantMessage {
    let Some(hook) = &config.message_end else {
        return message;
    };
    match hook
        .message_end(&AgentMessage::Assistant(message.clone()), cancel)
        .await
    {
        Some(AgentMessage::Assistant(replacement)) => replacement,
        _ => message,
    }
}

fn poll(source: &Option<crate::config::MessageSourceFn>) -> Vec<AgentMessage> {
    source.as_ref().map(|f| f()).unwrap_or_default()
}
