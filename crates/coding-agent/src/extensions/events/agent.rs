//! The extension events of an agent run: the loop hooks (`tool_call`, `tool_result`, `context`,
//! `message_end`, `before_provider_request`, `after_provider_response`) and the notification
//! events the agent's own events become (`agent_start`, `turn_start`, …), in pi's shapes.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use pi_agent_core::{
    AfterToolCallContext, AfterToolCallHook, AfterToolCallResult, Agent, AgentEvent, AgentMessage,
    BeforeToolCallContext, BeforeToolCallHook, BeforeToolCallResult, MessageEndHook, Model, PayloadHook, ProviderHooks,
    ResponseHook, ToolError, TransformContext, now_ms,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{EventQueue, ExtensionSlot, current};

/// The hooks, reading the slot each time they run.
struct Hooks {
    slot: ExtensionSlot,
    queue: Arc<EventQueue>,
}

/// Installs the extension hooks on `agent`'s loop (once a runner is set; a session without
/// extensions has none, so its runs pay nothing for them).
pub(crate) fn install_agent_hooks(agent: &Agent, slot: ExtensionSlot, queue: Arc<EventQueue>) {
    let hooks = Arc::new(Hooks { slot, queue });
    agent.update_config(|config| {
        config.before_tool_call = Some(hooks.clone());
        config.after_tool_call = Some(hooks.clone());
        config.transform_context = Some(hooks.clone());
        config.message_end = Some(hooks.clone());
        config.provider_hooks = ProviderHooks {
            on_payload: Some(hooks.clone()),
            on_response: Some(hooks.clone()),
        };
    });
}

#[async_trait]
impl BeforeToolCallHook for Hooks {
    async fn before_tool_call(
        &self,
        ctx: BeforeToolCallContext<'_>,
        cancel: &CancellationToken,
    ) -> Result<Option<BeforeToolCallResult>, ToolError> {
        let Some(extensions) = current(&self.slot).filter(|e| e.has("tool_call")) else {
            return Ok(None);
        };
        // pi lets the queued notifications (this call's `tool_execution_start`…) go first.
        self.queue.drained().await;
        let outcome = extensions
            .tool_call(&ctx.tool_call.id, &ctx.tool_call.name, ctx.args, cancel)
            .await
            .map_err(|error| ToolError::new(error.message()))?;
        let Some(outcome) = outcome else {
            return Ok(None);
        };
        if let Some(input) = outcome.input {
            *ctx.args = input;
        }
        Ok(outcome.block.then_some(BeforeToolCallResult {
            block: true,
            reason: outcome.reason,
            terminate: false,
        }))
    }
}

#[async_trait]
impl AfterToolCallHook for Hooks {
    async fn after_tool_call(
        &self,
        ctx: AfterToolCallContext<'_>,
        cancel: &CancellationToken,
    ) -> Result<Option<AfterToolCallResult>, ToolError> {
        let Some(extensions) = current(&self.slot) else {
            return Ok(None);
        };
        let patch = extensions
            .tool_result(
                || {
                    (
                        ctx.tool_call.id.clone(),
                        ctx.tool_call.name.clone(),
                        ctx.args.clone(),
                        ctx.result.content.clone(),
                        ctx.result.details.clone(),
                        ctx.is_error,
                    )
                },
                cancel,
            )
            .await;
        Ok(patch.map(|patch| AfterToolCallResult {
            content: patch.content,
            details: patch.details,
            is_error: Some(patch.is_error.unwrap_or(ctx.is_error)),
            ..AfterToolCallResult::default()
        }))
    }
}

#[async_trait]
impl TransformContext for Hooks {
    async fn transform(&self, messages: &[AgentMessage], cancel: &CancellationToken) -> Vec<AgentMessage> {
        let Some(extensions) = current(&self.slot).filter(|e| e.has("context")) else {
            return messages.to_vec();
        };
        // The turn's queued notifications (`turn_end`, `turn_start`) reach the extensions first.
        self.queue.drained().await;
        extensions
            .context(messages, cancel)
            .await
            .unwrap_or_else(|| messages.to_vec())
    }
}

#[async_trait]
impl MessageEndHook for Hooks {
    async fn message_end(&self, message: &AgentMessage, cancel: &CancellationToken) -> Option<AgentMessage> {
        let extensions = current(&self.slot).filter(|e| e.has("message_end"))?;
        // In pi's order: after the notifications queued before it (`message_start`, updates).
        self.queue.drained().await;
        extensions.message_end(message, cancel).await
    }
}

#[async_trait]
impl PayloadHook for Hooks {
    async fn on_payload(&self, payload: &Value, _model: &Model, cancel: &CancellationToken) -> Option<Value> {
        let extensions = current(&self.slot).filter(|e| e.has("before_provider_request"))?;
        self.queue.drained().await;
        extensions.before_provider_request(payload, cancel).await
    }
}

#[async_trait]
impl ResponseHook for Hooks {
    async fn on_response(
        &self,
        status: u16,
        headers: &BTreeMap<String, String>,
        _model: &Model,
        cancel: &CancellationToken,
    ) {
        let Some(extensions) = current(&self.slot).filter(|e| e.has("after_provider_response")) else {
            return;
        };
        self.queue.drained().await;
        extensions
            .emit(
                "after_provider_response",
                || json!({"status": status, "headers": headers}),
                cancel,
            )
            .await;
    }
}

/// Turns the agent's events into the extensions' notification events (pi's
/// `_emitExtensionEvent`), queued in order; `message_end` is the loop hook's, not queued here.
#[derive(Default)]
pub(crate) struct AgentEvents {
    turn_index: AtomicU64,
}

impl AgentEvents {
    /// Queues the extension event for `event`, if anyone listens to it.
    pub(crate) fn on_agent_event(&self, slot: &ExtensionSlot, queue: &EventQueue, event: &AgentEvent) {
        let kind = event.kind();
        if matches!(event, AgentEvent::AgentStart) {
            self.turn_index.store(0, Ordering::SeqCst);
        }
        let turn_index = self.turn_index.load(Ordering::SeqCst);
        if matches!(event, AgentEvent::TurnEnd { .. }) {
            self.turn_index.fetch_add(1, Ordering::SeqCst);
        }
        if matches!(event, AgentEvent::MessageEnd { .. }) {
            return;
        }
        let Some(extensions) = current(slot).filter(|e| e.has(kind)) else {
            return;
        };
        let payload = match event {
            AgentEvent::TurnStart => json!({"type": "turn_start", "turnIndex": turn_index, "timestamp": now_ms()}),
            AgentEvent::TurnEnd { message, tool_results } => json!({
                "type": "turn_end", "turnIndex": turn_index, "message": message, "toolResults": tool_results,
            }),
            // The agent's own shape is pi's extension shape for every other event.
            other => serde_json::to_value(other).unwrap_or(Value::Null),
        };
        queue.push(extensions, kind, payload);
    }
}
