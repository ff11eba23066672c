//! pi-ai's `complete()` for extensions (`ai.complete`): one model call with pi's providers and the
//! user's credentials, outside the session's transcript.

use std::sync::Arc;

use pi_agent_core::{
    AgentMessage, AgentTool, AssistantMessage, FnTool, LlmContext, StreamFn, StreamOptions, ToolError,
};
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{App, AppError};
use crate::compaction::final_message;
use crate::config::parse_thinking_level;

/// What an extension asks `ai.complete` for (pi-ai's `complete(model, context, options)`).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct CompleteRequest {
    model: ModelRef,
    context: CompleteContext,
    #[serde(default)]
    options: CompleteOptions,
}

#[derive(Debug, Clone, Deserialize)]
struct ModelRef {
    provider: String,
    id: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CompleteContext {
    #[serde(default)]
    system_prompt: String,
    #[serde(default)]
    messages: Vec<AgentMessage>,
    #[serde(default)]
    tools: Vec<DeclaredTool>,
}

/// A tool the model may call in a `complete()` (it only sees the declaration; nothing runs).
#[derive(Debug, Clone, Deserialize)]
struct DeclaredTool {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    parameters: Value,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CompleteOptions {
    reasoning: Option<String>,
    max_tokens: Option<u64>,
}

/// How to call a model outside a run ([`App::model_call`]).
pub(super) struct ModelCall {
    pub(super) stream_fn: Arc<dyn StreamFn>,
    pub(super) api_key: Option<String>,
    pub(super) headers: std::collections::BTreeMap<String, String>,
}

impl App {
    /// How to call `model` outside a run (a summary, an extension's `complete()`): the session's
    /// model boundary and headers, and the key for the model's provider (`getApiKey`, else
    /// `--api-key` when it is the session's provider). `None` without a model boundary.
    pub(super) async fn model_call(&self, model: &pi_agent_core::Model) -> Option<ModelCall> {
        let agent = self.inner.session.agent();
        let mut config = None;
        agent.update_config(|c| config = Some(c.clone()));
        let config = config?;
        let stream_fn = config.stream_fn.clone().or_else(pi_agent_core::default_stream_fn)?;
        let mut api_key = None;
        if let Some(get_api_key) = &config.get_api_key {
            api_key = get_api_key(&model.provider).await.filter(|key| !key.is_empty());
        }
        if api_key.is_none() && model.provider == agent.model().provider {
            api_key = config.api_key;
        }
        Some(ModelCall {
            stream_fn,
            api_key,
            headers: config.headers,
        })
    }

    /// One model call for an extension: the model named by the request (from the registry, or
    /// the session's), the request's context and options, the session's stream function and the
    /// user's key for that provider. Ends as pi-ai's `complete()` resolves: with the final
    /// message, a failed call included (`stopReason: "error"`).
    pub(crate) async fn complete(
        &self,
        request: CompleteRequest,
        cancel: &CancellationToken,
    ) -> Result<AssistantMessage, AppError> {
        let agent = self.inner.session.agent();
        let current = agent.model();
        let ModelRef { provider, id } = request.model;
        let model = if current.provider == provider && current.id == id {
            current.clone()
        } else {
            self.registry()
                .find(&provider, &id)
                .cloned()
                .ok_or(AppError::ModelNotFound { provider, id })?
        };
        let call = self.model_call(&model).await.ok_or(AppError::NoModel)?;
        let tools: Vec<Arc<dyn AgentTool>> = request
            .context
            .tools
            .into_iter()
            .map(|tool| {
                let name = tool.name.clone();
                Arc::new(FnTool::new(
                    tool.name,
                    tool.description,
                    tool.parameters,
                    move |_, _, _| {
                        let name = name.clone();
                        async move { Err(ToolError::new(format!("Tool \"{name}\" only declared to the model"))) }
                    },
                )) as Arc<dyn AgentTool>
            })
            .collect();
        let context = LlmContext {
            system_prompt: &request.context.system_prompt,
            messages: &request.context.messages,
            tools: &tools,
        };
        let options = StreamOptions {
            api_key: call.api_key,
            reasoning: request
                .options
                .reasoning
                .as_deref()
                .and_then(parse_thinking_level)
                .filter(|_| model.reasoning),
            max_tokens: request.options.max_tokens,
            headers: call.headers,
            cancel: cancel.clone(),
            ..StreamOptions::default()
        };
        tracing::debug!(provider = %model.provider, model = %model.id, "extension model call");
        Ok(final_message(call.stream_fn.stream(&model, &context, &options)).await)
    }
}
