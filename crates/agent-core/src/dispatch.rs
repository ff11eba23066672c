//! Executing the tool calls of one assistant message.
//!
//! The dispatch rule (pi PR #3345): the batch runs sequentially if the global mode is sequential
//! or if any call names a tool whose [`ToolExecutionMode`] is sequential — checked before any
//! preflight, so a sequential call that is later blocked still forces the batch sequential.
//! Unknown tool names never force it.
//!
//! * Sequential: per call, `tool_execution_start` → prepare → execute → `tool_execution_end` →
//!   the result's `message_start` / `message_end`; an abort stops the batch after the current call.
//! * Parallel: preflight every call in source order (start event, lookup, `prepare_arguments`,
//!   validation, `before_tool_call`, then the reservation of the files it declares with
//!   [`AgentTool::mutated_files`]; immediate failures end right away), then run the prepared
//!   calls together, emitting `tool_execution_end` in completion order, then emit the result
//!   messages in source order. An abort during preflight stops it; calls already prepared end
//!   as `Operation aborted` without running (pi PR #8936).
//!
//! File mutations: a call that declared files waits, just before it runs, until every earlier
//! call of those files (and anything else that queued for them earlier) is done, and holds them
//! while it runs ([`crate::MutationTicket`]). Because the places are reserved during the
//! sequential preflight, the mutations of one file land in source order in a parallel batch
//! too — pi gets the same from JavaScript starting every `execute` synchronously in source order.
//! A call that fails, is blocked, panics or is aborted gives its places up.
//!
//! Every error result the model reads — from the lookup, validation, a hook, the tool or a panic —
//! has its text capped at pi's output limits, keeping its start ([`crate::cap_error_result`]).
//!
//! No tool is executed once the run is aborted: the check after preparing a call is the last step
//! before [`AgentTool::execute`], so tools need no abort check of their own before they start.
//!
//! Every call runs in a `tool_call` [`tracing`] span with the tool's name and the call id (never
//! the arguments, which may hold secrets), with debug events when it starts and ends.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, Span};

use crate::config::AgentLoopConfig;
use crate::event::{AgentEvent, EventSink};
use crate::hooks::{AfterToolCallContext, BeforeToolCallContext};
use crate::limit::cap_error_result;
use crate::message::{AgentMessage, AssistantMessage, ToolCall, ToolResultMessage, now_ms};
use crate::mutation::{MutationTicket, mutation_keys};
use crate::tool::{AgentTool, OPERATION_ABORTED, ToolContext, ToolExecutionMode, ToolResult, ToolUpdateSink};

/// Text of a call blocked by `before_tool_call` without a reason.
pub(crate) const BLOCKED_DEFAULT: &str = "Tool execution was blocked";

/// The text of every call of a message cut off by the output-token limit.
pub(crate) fn length_error_text(tool_name: &str) -> String {
    format!(
        "Tool call \"{tool_name}\" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments."
    )
}

/// A finalised call: its result after hooks and whether it failed.
#[derive(Debug, Clone)]
struct Finalized {
    result: ToolResult,
    is_error: bool,
}

impl Finalized {
    /// Every result the model reads is made here: an error's text is capped at pi's output
    /// limits (a 100 KB path or pattern echoed back whole would fill the context).
    fn new(mut result: ToolResult, is_error: bool) -> Self {
        if is_error {
            cap_error_result(&mut result);
        }
        Finalized { result, is_error }
    }

    fn error(message: impl Into<String>) -> Self {
        Finalized::new(ToolResult::error_text(message), true)
    }

    fn error_terminating(message: impl Into<String>, terminate: bool) -> Self {
        let mut finalized = Finalized::error(message);
        if terminate {
            finalized.result.terminate = Some(true);
        }
        finalized
    }
}

enum Prepared {
    Immediate(Finalized),
    Ready(ReadyCall),
}

/// A prepared call waiting to run: its tool, its final arguments and, when it declared files
/// ([`AgentTool::mutated_files`]), its reserved place in their mutation queues.
struct ReadyCall {
    index: usize,
    tool: Arc<dyn AgentTool>,
    args: Value,
    ticket: Option<MutationTicket>,
}

/// A call that got a result: its message and whether it asked the run to stop.
struct Settled {
    terminate: bool,
    message: ToolResultMessage,
}

impl Settled {
    fn new(call: &ToolCall, finalized: &Finalized) -> Self {
        Settled {
            terminate: finalized.result.terminate == Some(true),
            message: result_message(call, finalized),
        }
    }
}

/// The result of a batch: result messages in source order and whether the run should stop.
pub(crate) struct BatchOutcome {
    pub(crate) results: Vec<ToolResultMessage>,
    pub(crate) terminate: bool,
}

/// Everything the calls of one batch share.
pub(crate) struct Batch<'a> {
    pub(crate) config: &'a AgentLoopConfig,
    pub(crate) tools: &'a [Arc<dyn AgentTool>],
    pub(crate) messages: &'a [AgentMessage],
    pub(crate) assistant: &'a AssistantMessage,
    pub(crate) cancel: &'a CancellationToken,
}

/// The message of a caught panic (its `&str` or `String` payload), `unknown panic` otherwise.
///
/// ```
/// let payload = std::panic::catch_unwind(|| panic!("bad {}", 1)).unwrap_err();
/// assert_eq!(pi_agent_core::panic_text(payload.as_ref()), "bad 1");
/// let payload = std::panic::catch_unwind(|| std::panic::panic_any(7)).unwrap_err();
/// assert_eq!(pi_agent_core::panic_text(payload.as_ref()), "unknown panic");
/// ```
pub fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_owned()
    }
}

/// The tracing span of one call: the tool's name and the call id, never the arguments.
fn call_span(call: &ToolCall) -> Span {
    tracing::debug_span!("tool_call", tool_name = %call.name, call_id = %call.id)
}

fn find_tool<'t>(tools: &'t [Arc<dyn AgentTool>], name: &str) -> Option<&'t Arc<dyn AgentTool>> {
    tools.iter().find(|tool| tool.name() == name)
}

impl Batch<'_> {
    /// The dispatch rule.
    pub(crate) fn mode(&self, calls: &[&ToolCall]) -> ToolExecutionMode {
        let forced = calls.iter().any(|call| {
            find_tool(self.tools, &call.name)
                .is_some_and(|tool| tool.execution_mode() == Some(ToolExecutionMode::Sequential))
        });
        if self.config.tool_execution == ToolExecutionMode::Sequential || forced {
            ToolExecutionMode::Sequential
        } else {
            ToolExecutionMode::Parallel
        }
    }

    /// Runs every call of the batch and emits its events.
    pub(crate) async fn run(&self, calls: &[&ToolCall], sink: &mut dyn EventSink) -> BatchOutcome {
        let spans: Vec<Span> = calls.iter().map(|call| call_span(call)).collect();
        let settled = match self.mode(calls) {
            ToolExecutionMode::Sequential => self.run_sequential(calls, &spans, sink).await,
            ToolExecutionMode::Parallel => self.run_parallel(calls, &spans, sink).await,
        };
        let terminate = !settled.is_empty() && settled.iter().all(|s| s.terminate);
        let results = settled.into_iter().map(|s| s.message).collect();
        BatchOutcome { results, terminate }
    }

    /// Fails every call of a message that hit the output-token limit.
    pub(crate) async fn fail_truncated(&self, calls: &[&ToolCall], sink: &mut dyn EventSink) -> BatchOutcome {
        let mut results = Vec::with_capacity(calls.len());
        for call in calls {
            let span = call_span(call);
            emit_start(sink, call, &span).await;
            let finalized = Finalized::error(length_error_text(&call.name));
            emit_end(sink, call, &finalized, &span).await;
            let mut message = result_message(call, &finalized);
            emit_result_message(sink, &mut message, self.config, self.cancel).await;
            results.push(message);
        }
        BatchOutcome {
            results,
            terminate: false,
        }
    }

    async fn run_sequential(&self, calls: &[&ToolCall], spans: &[Span], sink: &mut dyn EventSink) -> Vec<Settled> {
        let mut settled = Vec::with_capacity(calls.len());
        for (index, (call, span)) in calls.iter().zip(spans).enumerate() {
            emit_start(sink, call, span).await;
            let finalized = match self.prepare(index, call).instrument(span.clone()).await {
                Prepared::Immediate(finalized) => {
                    emit_end(sink, call, &finalized, span).await;
                    finalized
                }
                Prepared::Ready(ready) => {
                    let ready = vec![ready];
                    let mut done = self.execute_all(calls, spans, ready, sink).await;
                    done.pop()
                        .map(|(_, f)| f)
                        .unwrap_or_else(|| Finalized::error(OPERATION_ABORTED))
                }
            };
            let mut entry = Settled::new(call, &finalized);
            emit_result_message(sink, &mut entry.message, self.config, self.cancel).await;
            settled.push(entry);
            if self.cancel.is_cancelled() {
                break;
            }
        }
        settled
    }

    async fn run_parallel(&self, calls: &[&ToolCall], spans: &[Span], sink: &mut dyn EventSink) -> Vec<Settled> {
        let mut slots: Vec<Option<Finalized>> = vec![None; calls.len()];
        let mut ready = Vec::new();
        for (index, (call, span)) in calls.iter().zip(spans).enumerate() {
            emit_start(sink, call, span).await;
            match self.prepare(index, call).instrument(span.clone()).await {
                Prepared::Immediate(finalized) => {
                    emit_end(sink, call, &finalized, span).await;
                    slots[index] = Some(finalized);
                }
                Prepared::Ready(call) => ready.push(call),
            }
            if self.cancel.is_cancelled() {
                break;
            }
        }
        if self.cancel.is_cancelled() {
            // Dropping the prepared calls gives their reserved places up.
            for ReadyCall { index, .. } in ready {
                let finalized = Finalized::error(OPERATION_ABORTED);
                emit_end(sink, calls[index], &finalized, &spans[index]).await;
                slots[index] = Some(finalized);
            }
        } else {
            for (index, finalized) in self.execute_all(calls, spans, ready, sink).await {
                slots[index] = Some(finalized);
            }
        }
        let mut settled = Vec::with_capacity(calls.len());
        for (call, slot) in calls.iter().zip(slots) {
            if let Some(finalized) = slot {
                let mut entry = Settled::new(call, &finalized);
                emit_result_message(sink, &mut entry.message, self.config, self.cancel).await;
                settled.push(entry);
            }
        }
        settled
    }

    /// Prepares call `index`: lookup, `prepare_arguments`, validation, `before_tool_call`, then
    /// the reservation of the files it declares.
    async fn prepare(&self, index: usize, call: &ToolCall) -> Prepared {
        let Some(tool) = find_tool(self.tools, &call.name) else {
            return Prepared::Immediate(Finalized::error(format!("Tool {} not found", call.name)));
        };
        match AssertUnwindSafe(self.prepare_found(index, tool, call))
            .catch_unwind()
            .await
        {
            Ok(prepared) => prepared,
            Err(payload) => Prepared::Immediate(Finalized::error(panic_text(payload.as_ref()))),
        }
    }

    async fn prepare_found(&self, index: usize, tool: &Arc<dyn AgentTool>, call: &ToolCall) -> Prepared {
        let raw = tool.prepare_arguments(call.arguments.clone());
        let mut args = match tool.parameters().validate(tool.name(), &raw) {
            Ok(args) => args,
            Err(error) => return Prepared::Immediate(Finalized::error(error.to_string())),
        };
        if let Some(hook) = &self.config.before_tool_call {
            let ctx = BeforeToolCallContext {
                assistant_message: self.assistant,
                tool_call: call,
                args: &mut args,
                messages: self.messages,
            };
            let outcome = match hook.before_tool_call(ctx, self.cancel).await {
                Ok(outcome) => outcome,
                Err(error) => return Prepared::Immediate(Finalized::error(error.message())),
            };
            if self.cancel.is_cancelled() {
                return Prepared::Immediate(Finalized::error(OPERATION_ABORTED));
            }
            if let Some(outcome) = outcome.filter(|o| o.block) {
                let reason = outcome.reason.unwrap_or_else(|| BLOCKED_DEFAULT.to_owned());
                return Prepared::Immediate(Finalized::error_terminating(reason, outcome.terminate));
            }
        }
        if self.cancel.is_cancelled() {
            return Prepared::Immediate(Finalized::error(OPERATION_ABORTED));
        }
        // Reserved here, while the calls are prepared one after the other in source order; a call
        // that ends before it runs drops its ticket and with it its place.
        let files = tool.mutated_files(&args);
        let ticket = if files.is_empty() {
            None
        } else {
            Some(MutationTicket::reserve(mutation_keys(files).await))
        };
        if self.cancel.is_cancelled() {
            return Prepared::Immediate(Finalized::error(OPERATION_ABORTED));
        }
        Prepared::Ready(ReadyCall {
            index,
            tool: tool.clone(),
            args,
            ticket,
        })
    }

    /// Executes prepared calls together, forwarding their updates and emitting each
    /// `tool_execution_end` as the call completes. Returns `(index, result)` in completion order.
    async fn execute_all(
        &self,
        calls: &[&ToolCall],
        spans: &[Span],
        ready: Vec<ReadyCall>,
        sink: &mut dyn EventSink,
    ) -> Vec<(usize, Finalized)> {
        let (update_tx, mut update_rx) = mpsc::unbounded_channel::<(usize, ToolResult)>();
        let mut running: FuturesUnordered<BoxFuture<'_, (usize, Finalized)>> = FuturesUnordered::new();
        for ReadyCall {
            index,
            tool,
            args,
            ticket,
        } in ready
        {
            let tx = update_tx.clone();
            let updates = ToolUpdateSink::new(move |partial| {
                // The receiver lives until the batch ends; later updates are dropped anyway.
                let _ = tx.send((index, partial));
            });
            let call = calls[index];
            let run = self
                .execute(call, tool, args, ticket, updates)
                .instrument(spans[index].clone());
            running.push(Box::pin(async move { (index, run.await) }));
        }
        drop(update_tx);
        let mut done = Vec::with_capacity(running.len());
        loop {
            tokio::select! {
                biased;
                Some((index, partial)) = update_rx.recv() => emit_update(sink, calls[index], partial).await,
                next = running.next() => {
                    let Some((index, finalized)) = next else { break };
                    while let Ok((earlier, partial)) = update_rx.try_recv() {
                        emit_update(sink, calls[earlier], partial).await;
                    }
                    emit_end(sink, calls[index], &finalized, &spans[index]).await;
                    done.push((index, finalized));
                }
            }
        }
        done
    }

    /// Executes one prepared call — after waiting for the turn of the files it reserved, which it
    /// holds while it runs — and applies `after_tool_call`. An abort while it waits ends it as
    /// `Operation aborted` without running.
    async fn execute(
        &self,
        call: &ToolCall,
        tool: Arc<dyn AgentTool>,
        args: Value,
        ticket: Option<MutationTicket>,
        updates: ToolUpdateSink,
    ) -> Finalized {
        let guard = match ticket {
            None => None,
            Some(ticket) => tokio::select! {
                biased;
                () = self.cancel.cancelled() => return Finalized::error(OPERATION_ABORTED),
                guard = ticket.acquire() => Some(guard),
            },
        };
        let ctx = ToolContext {
            cancel: self.cancel.clone(),
            updates: updates.clone(),
        };
        let run = tool.execute(&call.id, args.clone(), ctx);
        // The guard is released as soon as the tool returns (or panics), before the hook.
        let outcome = match guard {
            Some(guard) => AssertUnwindSafe(guard.hold(run)).catch_unwind().await,
            None => AssertUnwindSafe(run).catch_unwind().await,
        };
        updates.settle();
        let (mut result, mut is_error) = match outcome {
            Ok(Ok(result)) => (result, false),
            Ok(Err(error)) => (error.into_result(), true),
            Err(payload) => (
                ToolResult::error_text(format!("Tool {} panicked: {}", call.name, panic_text(payload.as_ref()))),
                true,
            ),
        };
        if let Some(hook) = &self.config.after_tool_call {
            let ctx = AfterToolCallContext {
                assistant_message: self.assistant,
                tool_call: call,
                args: &args,
                result: &result,
                is_error,
                messages: self.messages,
            };
            match AssertUnwindSafe(hook.after_tool_call(ctx, self.cancel))
                .catch_unwind()
                .await
            {
                Ok(Ok(Some(overrides))) => {
                    if let Some(content) = overrides.content {
                        result.content = content;
                    }
                    if let Some(details) = overrides.details {
                        result.details = details;
                    }
                    if let Some(usage) = overrides.usage {
                        result.usage = Some(usage);
                    }
                    if let Some(terminate) = overrides.terminate {
                        result.terminate = Some(terminate);
                    }
                    if let Some(flag) = overrides.is_error {
                        is_error = flag;
                    }
                }
                Ok(Ok(None)) => {}
                Ok(Err(error)) => return Finalized::error(error.message()),
                Err(payload) => return Finalized::error(panic_text(payload.as_ref())),
            }
        }
        Finalized::new(result, is_error)
    }
}

fn result_message(call: &ToolCall, finalized: &Finalized) -> ToolResultMessage {
    let result = &finalized.result;
    ToolResultMessage {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        content: result.content.clone(),
        details: (!result.details.is_null()).then(|| result.details.clone()),
        usage: result.usage,
        added_tool_names: (!result.added_tool_names.is_empty()).then(|| result.added_tool_names.clone()),
        is_error: finalized.is_error,
        timestamp: now_ms(),
    }
}

async fn emit_start(sink: &mut dyn EventSink, call: &ToolCall, span: &Span) {
    span.in_scope(|| tracing::debug!("tool call started"));
    sink.emit(AgentEvent::ToolExecutionStart {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        args: call.arguments.clone(),
    })
    .await;
}

async fn emit_update(sink: &mut dyn EventSink, call: &ToolCall, partial: ToolResult) {
    sink.emit(AgentEvent::ToolExecutionUpdate {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        args: call.arguments.clone(),
        partial_result: partial,
    })
    .await;
}

async fn emit_end(sink: &mut dyn EventSink, call: &ToolCall, finalized: &Finalized, span: &Span) {
    span.in_scope(|| tracing::debug!(is_error = finalized.is_error, "tool call finished"));
    sink.emit(AgentEvent::ToolExecutionEnd {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        result: finalized.result.clone(),
        is_error: finalized.is_error,
    })
    .await;
}

/// Emits a tool result's `message_start` / `message_end`; the [`crate::MessageEndHook`] may
/// replace `message` in between.
async fn emit_result_message(
    sink: &mut dyn EventSink,
    message: &mut ToolResultMessage,
    config: &AgentLoopConfig,
    cancel: &CancellationToken,
) {
    sink.emit(AgentEvent::MessageStart {
        message: AgentMessage::ToolResult(message.clone()),
    })
    .await;
    if let Some(hook) = &config.message_end
        && let Some(AgentMessage::ToolResult(replacement)) = hook
            .message_end(&AgentMessage::ToolResult(message.clone()), cancel)
            .await
    {
        *message = replacement;
    }
    sink.emit(AgentEvent::MessageEnd {
        message: AgentMessage::ToolResult(message.clone()),
    })
    .await;
}
