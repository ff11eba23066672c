//! Compaction in a running app: `/compact`, the automatic compaction after a run (threshold) and
//! the compact-and-retry of a request the provider refused as too long (overflow), with pi's
//! `compaction_start` / `compaction_end` events; and the context usage figure.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use pi_agent_core::{AgentError, AgentMessage, AssistantMessage, PromptInput, StopReason, lock};
use pi_session_store::{Compaction, EntryKind, SessionEntry};
use tokio_util::sync::CancellationToken;

use super::App;
use crate::compaction::{
    BeforeCompact, BeforeCompactEvent, CompactionError, CompactionHook, CompactionReason, CompactionResult,
    CompactionSettings, ContextUsage, Protected, Summarizer, calculate_context_tokens, estimate_context_tokens,
    prepare_compaction, should_compact,
};
use crate::session::SessionEvent;

/// What to do after a compaction check.
enum Next {
    Done,
    /// Run the agent on from the transcript (a retry after overflow, or queued messages).
    Continue,
}

/// pi's text when the retry after an overflow compaction overflowed again.
const OVERFLOW_RETRY_FAILED: &str = "Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or switching to a larger-context model.";

impl App {
    /// Sets the compaction settings (pi's `compaction` settings object).
    pub fn set_compaction_settings(&self, settings: CompactionSettings) {
        *lock(&self.inner.compaction.settings) = settings;
    }

    /// The compaction settings in force.
    pub fn compaction_settings(&self) -> CompactionSettings {
        lock(&self.inner.compaction.settings).clone()
    }

    /// Turns automatic compaction on or off (RPC `set_auto_compaction`); saved as
    /// `compaction.enabled` in the global settings when choices are saved
    /// ([`App::save_choices_to`]), as pi does.
    pub fn set_auto_compaction(&self, enabled: bool) {
        lock(&self.inner.compaction.settings).enabled = enabled;
        let mut updates = serde_json::Map::new();
        updates.insert("compaction".into(), serde_json::json!({"enabled": enabled}));
        self.save_choices(updates);
    }

    /// Whether the app compacts automatically.
    pub fn auto_compaction_enabled(&self) -> bool {
        lock(&self.inner.compaction.settings).enabled
    }

    /// Whether a compaction is running.
    pub fn is_compacting(&self) -> bool {
        self.inner.compaction.running.is_active()
    }

    /// Aborts the running compaction, if any.
    pub fn abort_compaction(&self) {
        self.inner.compaction.running.cancel();
    }

    /// Adds a hook asked before every compaction and told after it.
    pub fn add_compaction_hook(&self, hook: Arc<dyn CompactionHook>) {
        self.inner
            .compaction
            .hooks
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .push(hook);
    }

    /// How full the context is (pi's `getContextUsage`): `None` without a context window; tokens
    /// unknown after a compaction until an answer reports usage again.
    pub fn context_usage(&self) -> Option<ContextUsage> {
        let agent = self.inner.session.agent();
        let context_window = agent.model().context_window;
        if context_window == 0 {
            return None;
        }
        let fresh = self.with_store(|store| {
            let branch = store.path_to_leaf();
            let Some(at) = branch.iter().rposition(|e| matches!(e.kind, EntryKind::Compaction(_))) else {
                return true;
            };
            branch[at + 1..]
                .iter()
                .rev()
                .filter_map(|entry| match &entry.kind {
                    EntryKind::Message(AgentMessage::Assistant(a))
                        if !matches!(a.stop_reason, StopReason::Aborted | StopReason::Error) =>
                    {
                        Some(a)
                    }
                    _ => None,
                })
                .next()
                .is_some_and(|a| calculate_context_tokens(&a.usage) > 0)
        });
        if !fresh {
            return Some(ContextUsage {
                tokens: None,
                context_window,
                percent: None,
            });
        }
        let tokens = estimate_context_tokens(&agent.messages()).tokens;
        Some(ContextUsage {
            tokens: Some(tokens),
            context_window,
            percent: Some(tokens as f64 / context_window as f64 * 100.0),
        })
    }

    /// Sends a prompt as pi's session does: compacts first if the last answer left the context
    /// over the threshold, runs, then compacts when the context passed the threshold, or — when
    /// the provider refused the request as too long — compacts and runs again (once).
    ///
    /// One prompt at a time: a prompt sent while the previous one still checks or runs its
    /// compaction (RPC's `agent_end` comes before that check) waits for it.
    pub async fn prompt(&self, input: impl Into<PromptInput>) -> Result<(), AgentError> {
        let _turn = self.inner.compaction.prompt_turn.lock().await;
        let agent = self.inner.session.agent();
        self.inner.compaction.overflow_attempted.store(false, Ordering::SeqCst);
        if let Some(last) = last_assistant(&agent.messages()) {
            // The next prompt follows anyway; queued messages go with it.
            let _ = self.check_compaction(&last, false).await;
        }
        // The session retries a turn that failed with a transient error first (pi checks the
        // retry before the compaction on each `agent_end`).
        self.inner.session.prompt(input).await?;
        self.after_run().await;
        Ok(())
    }

    /// The compaction check after a run (pi's, on `agent_end`); runs the agent on after an
    /// overflow compaction or when messages wait in the queues.
    pub async fn after_run(&self) {
        let agent = self.inner.session.agent();
        loop {
            let Some(last) = last_assistant(&agent.messages()) else {
                return;
            };
            if last.stop_reason != StopReason::Error {
                self.inner.compaction.overflow_attempted.store(false, Ordering::SeqCst);
            }
            match self.check_compaction(&last, true).await {
                Next::Done => return,
                Next::Continue => {
                    // Retried like a prompt's run when it fails with a transient error.
                    if self.inner.session.continue_run().await.is_err() {
                        return;
                    }
                }
            }
        }
    }

    /// Compacts now (`/compact [instructions]`, RPC `compact`): aborts a run first.
    pub async fn compact(&self, instructions: Option<&str>) -> Result<CompactionResult, CompactionError> {
        self.inner.session.abort().await;
        self.run_compaction(CompactionReason::Manual, instructions, false).await
    }

    /// pi's `_checkCompaction` for the assistant message `message`.
    async fn check_compaction(&self, message: &AssistantMessage, skip_aborted: bool) -> Next {
        let settings = self.compaction_settings();
        if !settings.enabled || (skip_aborted && message.stop_reason == StopReason::Aborted) {
            return Next::Done;
        }
        let agent = self.inner.session.agent();
        let model = agent.model();
        let same_model = message.provider == model.provider && message.model == model.id;
        // An answer from before the latest compaction says nothing about the context now.
        if self.written_before_compaction(message) {
            return Next::Done;
        }
        if same_model && pi_ai::is_context_overflow(message, model.context_window) {
            if self.inner.compaction.overflow_attempted.swap(true, Ordering::SeqCst) {
                self.emit_end(
                    CompactionReason::Overflow,
                    None,
                    false,
                    false,
                    Some(OVERFLOW_RETRY_FAILED.to_owned()),
                );
                return Next::Done;
            }
            // The failed answer stays in the file, not in the context of the retry.
            drop_trailing_assistant(agent, false);
            return match self.run_compaction(CompactionReason::Overflow, None, true).await {
                Ok(_) => {
                    drop_trailing_assistant(agent, true);
                    Next::Continue
                }
                Err(_) => Next::Done,
            };
        }
        let tokens = if message.stop_reason == StopReason::Error {
            // No usage on a failed answer: estimate from the last one that has it.
            let messages = agent.messages();
            let estimate = estimate_context_tokens(&messages);
            let Some(index) = estimate.last_usage_index else {
                return Next::Done;
            };
            let stale = messages[index]
                .as_assistant()
                .is_some_and(|usage_message| self.written_before_compaction(usage_message));
            if stale {
                return Next::Done;
            }
            estimate.tokens
        } else {
            calculate_context_tokens(&message.usage)
        };
        if !should_compact(tokens, model.context_window, &settings) {
            return Next::Done;
        }
        match self.run_compaction(CompactionReason::Threshold, None, false).await {
            Ok(_) if agent.has_queued_messages() => Next::Continue,
            _ => Next::Done,
        }
    }

    /// Whether the branch has a compaction and `message` is not among the assistant messages
    /// written after the latest one. pi compares the message's timestamp with the entry's; the
    /// order of the entries is exact where a millisecond clock is not (a retry that fails within
    /// the millisecond the compaction was written in would count as older).
    fn written_before_compaction(&self, message: &AssistantMessage) -> bool {
        self.with_store(|store| {
            let path = store.path_to_leaf();
            let Some(compaction) = path.iter().rposition(|e| matches!(e.kind, EntryKind::Compaction(_))) else {
                return false;
            };
            !path[compaction + 1..].iter().any(|entry| {
                matches!(entry.message(), Some(AgentMessage::Assistant(written))
                    if written.timestamp == message.timestamp && written.content == message.content)
            })
        })
    }

    /// One compaction with its events: `compaction_start`, the hooks, the summary, the entry,
    /// the context rebuilt from the file, `compaction_end`.
    async fn run_compaction(
        &self,
        reason: CompactionReason,
        instructions: Option<&str>,
        will_retry: bool,
    ) -> Result<CompactionResult, CompactionError> {
        let Some(running) = self.inner.compaction.running.try_start() else {
            return Err(CompactionError::Busy);
        };
        self.inner.session.emit(&SessionEvent::CompactionStart { reason });
        let outcome = self.compaction_steps(reason, instructions, running.token()).await;
        drop(running);
        match &outcome {
            Ok(result) => self.emit_end(reason, Some(result.clone()), false, will_retry, None),
            Err(error) => {
                let aborted = *error == CompactionError::Cancelled;
                let message = match (reason, error) {
                    (_, CompactionError::Cancelled) => None,
                    // pi ends an automatic compaction with nothing to do silently.
                    (
                        CompactionReason::Threshold | CompactionReason::Overflow,
                        CompactionError::AlreadyCompacted | CompactionError::NothingToCompact,
                    ) => None,
                    (CompactionReason::Manual, error) => Some(format!("Compaction failed: {error}")),
                    (CompactionReason::Overflow, error) => Some(format!("Context overflow recovery failed: {error}")),
                    (CompactionReason::Threshold, error) => Some(format!("Auto-compaction failed: {error}")),
                };
                self.emit_end(reason, None, aborted, false, message);
            }
        }
        outcome
    }

    async fn compaction_steps(
        &self,
        reason: CompactionReason,
        instructions: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<CompactionResult, CompactionError> {
        let settings = self.compaction_settings();
        let branch: Vec<SessionEntry> = self.with_store(|store| store.path_to_leaf().into_iter().cloned().collect());
        let path: Vec<&SessionEntry> = branch.iter().collect();
        let protected = Protected {
            pending_sources: self.inner.session.pending_actions().source_tool_names(),
        };
        let Some(preparation) = prepare_compaction(&path, &settings, &protected) else {
            return Err(match branch.last().map(|e| &e.kind) {
                Some(EntryKind::Compaction(_)) => CompactionError::AlreadyCompacted,
                _ => CompactionError::NothingToCompact,
            });
        };
        let hooks = self
            .inner
            .compaction
            .hooks
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let mut supplied = None;
        for hook in &hooks {
            let event = BeforeCompactEvent {
                preparation: &preparation,
                branch_entries: &branch,
                custom_instructions: instructions,
                reason,
                cancel,
            };
            match hook.before_compact(event).await {
                BeforeCompact::Proceed => continue,
                BeforeCompact::Cancel => return Err(CompactionError::Cancelled),
                BeforeCompact::Supply(result) => {
                    supplied = Some(result);
                    break;
                }
            }
        }
        let from_hook = supplied.is_some();
        let result = match supplied {
            Some(result) => result,
            None => {
                self.summarizer()
                    .await?
                    .compact(&preparation, instructions, cancel)
                    .await?
            }
        };
        if cancel.is_cancelled() {
            return Err(CompactionError::Cancelled);
        }
        let compaction = Compaction {
            summary: result.summary.clone(),
            first_kept_entry_id: result.first_kept_entry_id.clone(),
            tokens_before: result.tokens_before,
            details: result.details.clone(),
            from_hook: Some(from_hook),
        };
        let (entry, context) = self.with_store(|store| {
            let id = store
                .append_compaction(compaction)
                .map_err(|e| CompactionError::Failed(e.to_string()))?;
            Ok::<_, CompactionError>((store.entry(&id).cloned(), store.build_context()))
        })?;
        self.inner.session.agent().set_messages(context.messages);
        if let Some(entry) = entry {
            for hook in &hooks {
                hook.after_compact(&entry, from_hook).await;
            }
        }
        Ok(result)
    }

    /// The session's model and model boundary, for the summary request.
    pub(super) async fn summarizer(&self) -> Result<Summarizer, CompactionError> {
        let agent = self.inner.session.agent();
        let model = agent.model();
        let call = self
            .model_call(&model)
            .await
            .ok_or_else(|| CompactionError::Failed("No model selected".to_owned()))?;
        Ok(Summarizer {
            model,
            stream_fn: call.stream_fn,
            api_key: call.api_key,
            headers: call.headers,
            thinking_level: agent.thinking_level(),
        })
    }

    fn emit_end(
        &self,
        reason: CompactionReason,
        result: Option<CompactionResult>,
        aborted: bool,
        will_retry: bool,
        error_message: Option<String>,
    ) {
        self.inner.session.emit(&SessionEvent::CompactionEnd {
            reason,
            result,
            aborted,
            will_retry,
            error_message,
        });
    }
}

fn last_assistant(messages: &[AgentMessage]) -> Option<AssistantMessage> {
    messages.iter().rev().find_map(AgentMessage::as_assistant).cloned()
}

/// Drops the last message of the transcript when it is an assistant message (only a failed one
/// when `only_failed`).
fn drop_trailing_assistant(agent: &pi_agent_core::Agent, only_failed: bool) {
    let mut messages = agent.messages();
    if let Some(AgentMessage::Assistant(last)) = messages.last()
        && (!only_failed || last.stop_reason == StopReason::Error)
    {
        messages.pop();
        agent.set_messages(messages);
    }
}
