//! The session's side of extensions: the runner, `before_agent_start` and `input`.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use pi_agent_core::{AgentMessage, ImageContent, PromptInput};
use tokio_util::sync::CancellationToken;

use super::AgentSession;
use crate::extensions::events::{ExtensionRunner, Extensions, InputOutcome, InputSource, current, install_agent_hooks};

impl AgentSession {
    /// pi's `before_agent_start` for `input`: appends the injected custom messages and sets the
    /// chained system prompt; returns the prompt to put back after the run when it changed it.
    pub(super) async fn before_agent_start(&self, input: &mut PromptInput) -> Option<String> {
        let extensions = self.extensions()?;
        if !extensions.has("before_agent_start") {
            return None;
        }
        let PromptInput::Messages(messages) = input;
        let (text, images) = match messages.iter().find_map(AgentMessage::as_user) {
            Some(user) => (user.content.text(), user.content.images()),
            None => (String::new(), Vec::new()),
        };
        let base = self.inner.agent.state().system_prompt;
        let cwd = self.inner.cwd.clone();
        let tools = self.active_tool_names();
        let outcome = extensions
            .before_agent_start(
                &text,
                (!images.is_empty()).then_some(images.as_slice()),
                &base,
                || serde_json::json!({"cwd": cwd, "selectedTools": tools}),
                &CancellationToken::new(),
            )
            .await?;
        messages.extend(outcome.messages);
        let prompt = outcome.system_prompt?;
        self.inner.agent.set_system_prompt(prompt);
        Some(base)
    }

    /// Sets (or removes) the extensions that get this session's events. The loop hooks are
    /// installed with the first runner and read the current one whenever they run; a session
    /// that never gets one has none.
    pub fn set_extension_runner(&self, runner: Option<Arc<dyn ExtensionRunner>>) {
        let extensions = runner.map(Extensions::new);
        let has = extensions.is_some();
        *self.inner.extensions.write().unwrap_or_else(|p| p.into_inner()) = extensions;
        self.inner.has_extensions.store(has, Ordering::SeqCst);
        if has && !self.inner.extension_hooks.swap(true, Ordering::SeqCst) {
            install_agent_hooks(
                &self.inner.agent,
                self.inner.extensions.clone(),
                self.inner.extension_queue.clone(),
            );
        }
    }

    /// The extensions getting this session's events, if any.
    pub fn extensions(&self) -> Option<Extensions> {
        if !self.inner.has_extensions.load(Ordering::SeqCst) {
            return None;
        }
        current(&self.inner.extensions)
    }

    /// pi's `input` event for a prompt's text before it is expanded or sent: the extensions may
    /// let it through, change it or handle it. Without listeners: [`InputOutcome::Continue`].
    pub async fn emit_input(&self, text: &str, images: &[ImageContent], source: InputSource) -> InputOutcome {
        let Some(extensions) = self.extensions() else {
            return InputOutcome::Continue;
        };
        let images = (!images.is_empty()).then_some(images);
        extensions.input(text, images, source, &CancellationToken::new()).await
    }
}

impl AgentSession {
    /// Queues the notification event `kind` that `fields` builds (only when someone listens): the
    /// extensions get it in order with the agent's events, and nothing waits for them.
    pub(crate) fn queue_extension_event(&self, kind: &'static str, fields: impl FnOnce() -> serde_json::Value) {
        let Some(extensions) = self.extensions().filter(|e| e.has(kind)) else {
            return;
        };
        let mut event = fields();
        event["type"] = serde_json::Value::String(kind.to_owned());
        self.inner.extension_queue.push(extensions, kind, event);
    }

    /// Waits until the extensions have handled every queued event.
    pub(crate) async fn extension_events_drained(&self) {
        if self.inner.has_extensions.load(Ordering::SeqCst) {
            self.inner.extension_queue.drained().await;
        }
    }
}
