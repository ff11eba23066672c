//! The dispatcher: one [`StreamFn`] for every wire API, chosen by the model's `api`.

use std::sync::Arc;

use futures::StreamExt;
use pi_agent_core::{AssistantMessageStream, LlmContext, Model, StreamFn, StreamOptions};

use crate::driver;
use crate::http::HttpClient;
use crate::registry::{ModelRegistry, env_var_for_provider, env_vars_for_provider, is_local_url};
use crate::shared_registry::SharedRegistry;

/// The wire APIs this crate implements.
pub const SUPPORTED_APIS: &[&str] = &[
    "openai-completions",
    "anthropic-messages",
    "openai-responses",
    "google-generative-ai",
    "google-vertex",
    "mistral-conversations",
    "azure-openai-responses",
    "openai-codex-responses",
    "bedrock-converse-stream",
];

/// Streams responses over whichever wire API the model uses.
///
/// [`Providers`] resolves what a request needs besides the model and context — the API key (the
/// call's own, else the registry's, else the provider's usual environment variable) and the
/// model's header values — and hands the call to `openai_completions`, `anthropic`,
/// `openai_responses`, `google`, `google_vertex`, `mistral`, `azure_openai_responses`, `openai_codex_responses` or `bedrock`. A model of another API fails with pi's text
/// `No API provider registered for api: <api>`; a remote provider without a key fails with
/// `No API key for provider: <name>` before anything is sent. Servers on the local machine
/// (`localhost`, `127.0.0.1`, `[::1]`) need no key, and neither do `google-vertex`, which
/// authenticates with Application Default Credentials without one, and `bedrock-converse-stream`,
/// which finds its AWS credentials itself (both read through the registry's environment).
///
/// ```no_run
/// use std::sync::Arc;
/// use pi_agent_core::{AgentLoopConfig, StreamFn};
/// use pi_ai::{ModelRegistry, Providers};
///
/// let registry = Arc::new(ModelRegistry::load_default().unwrap());
/// let model = registry.find_by_pattern("anthropic/claude-sonnet-4-5").unwrap().clone();
/// let providers: Arc<dyn StreamFn> = Arc::new(Providers::default().with_registry(registry));
/// let config = AgentLoopConfig::new(model).with_stream_fn(providers);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Providers {
    client: HttpClient,
    registry: Option<SharedRegistry>,
}

impl Providers {
    /// A dispatcher sending requests with `client`; keys come from the call or the process
    /// environment.
    pub fn new(client: HttpClient) -> Self {
        Providers { client, registry: None }
    }

    /// Resolves keys and header values through `registry` (its `models.json` `apiKey`s and its
    /// environment).
    #[must_use]
    pub fn with_registry(mut self, registry: impl Into<SharedRegistry>) -> Self {
        self.registry = Some(registry.into());
        self
    }

    /// The HTTP client.
    pub fn client(&self) -> &HttpClient {
        &self.client
    }

    /// The registry now, if any (extensions may change it: [`SharedRegistry`]).
    pub fn registry(&self) -> Option<Arc<ModelRegistry>> {
        self.registry.as_ref().map(SharedRegistry::current)
    }

    /// The variables: the registry's environment, else the process's.
    fn env(&self) -> crate::google_vertex::Env {
        match self.registry() {
            Some(registry) => Arc::new(move |name: &str| registry.env(name)),
            None => Arc::new(|name: &str| std::env::var(name).ok()),
        }
    }

    fn api_key(&self, model: &Model, options: &StreamOptions) -> Option<String> {
        if let Some(key) = options.api_key.as_ref().filter(|key| !key.is_empty()) {
            return Some(key.clone());
        }
        match self.registry() {
            Some(registry) => registry.api_key_for(&model.provider),
            None => env_vars_for_provider(&model.provider)
                .iter()
                .find_map(|var| std::env::var(var).ok().filter(|key| !key.is_empty())),
        }
    }
}

/// The headers pi-ai adds to every GitHub Copilot request: `X-Initiator` (`user` when the last
/// message is the user's, else `agent`), `Openai-Intent: conversation-edits`, and
/// `Copilot-Vision-Request: true` when a user message or tool result carries an image.
fn copilot_headers(context: &LlmContext<'_>) -> [(&'static str, Option<&'static str>); 3] {
    use pi_agent_core::{AgentMessage, ContentBlock, UserContent};
    let initiator = match context.messages.last() {
        Some(message) if message.role() != "user" => "agent",
        _ => "user",
    };
    let image = |block: &ContentBlock| matches!(block, ContentBlock::Image(_));
    let has_images = context.messages.iter().any(|message| match message {
        AgentMessage::User(user) => matches!(&user.content, UserContent::Blocks(blocks) if blocks.iter().any(image)),
        AgentMessage::ToolResult(result) => result.content.iter().any(image),
        _ => false,
    });
    [
        ("X-Initiator", Some(initiator)),
        ("Openai-Intent", Some("conversation-edits")),
        ("Copilot-Vision-Request", has_images.then_some("true")),
    ]
}

impl StreamFn for Providers {
    fn stream(&self, model: &Model, context: &LlmContext<'_>, options: &StreamOptions) -> AssistantMessageStream {
        // An expired login is refreshed first (pi: before the request, under auth.json's lock).
        if let Some(registry) = self.registry()
            && options.api_key.as_ref().is_none_or(String::is_empty)
            && registry.needs_refresh(&model.provider)
        {
            let (this, model, options) = (self.clone(), model.clone(), options.clone());
            let (system_prompt, messages, tools) = (
                context.system_prompt.to_owned(),
                context.messages.to_vec(),
                context.tools.to_vec(),
            );
            let refreshed = async move {
                if let Err(error) = registry.refresh_login(&model.provider).await {
                    return driver::failed(&model, error.to_string());
                }
                let context = LlmContext {
                    system_prompt: &system_prompt,
                    messages: &messages,
                    tools: &tools,
                };
                this.stream_now(&model, &context, &options)
            };
            return Box::pin(futures::stream::once(refreshed).flatten());
        }
        self.stream_now(model, context, options)
    }
}

impl Providers {
    fn stream_now(&self, model: &Model, context: &LlmContext<'_>, options: &StreamOptions) -> AssistantMessageStream {
        let api = model.api.as_str();
        if !SUPPORTED_APIS.contains(&api) {
            return driver::failed(model, format!("No API provider registered for api: {api}"));
        }
        let api_key = self.api_key(model, options);
        if api_key.is_none()
            && !is_local_url(&model.base_url)
            && api != crate::google_vertex::API
            && api != crate::bedrock::API
        {
            let hint = match env_var_for_provider(&model.provider) {
                Some(var) => format!("set {var} or \"apiKey\" for the provider in models.json"),
                None => "set \"apiKey\" for the provider in models.json".to_owned(),
            };
            return driver::failed(model, format!("No API key for provider: {} ({hint})", model.provider));
        }
        let mut options = options.clone();
        options.api_key = api_key;
        // Every secret of the request goes to the redactor before anything is sent.
        if let Some(key) = &options.api_key {
            crate::redact::register_secret(key);
        }
        for (name, value) in &options.headers {
            if crate::redact::names_a_credential(name) {
                crate::redact::register_secret(value);
            }
        }
        if model.provider == "github-copilot" {
            for (name, value) in copilot_headers(context) {
                if let Some(value) = value
                    && !options.headers.keys().any(|given| given.eq_ignore_ascii_case(name))
                {
                    options.headers.insert(name.to_owned(), value.to_owned());
                }
            }
        }
        let resolved;
        let relocated;
        let mut model = model;
        if let Some(registry) = self.registry() {
            if let Some(base_url) = registry.login_base_url(&model.provider) {
                relocated = Model {
                    base_url,
                    ..model.clone()
                };
                model = &relocated;
            }
            if let Some(headers) = &model.headers {
                resolved = Model {
                    headers: Some(registry.resolve_headers(headers)),
                    ..model.clone()
                };
                model = &resolved;
            }
            if registry.uses_auth_header(&model.provider)
                && let Some(key) = &options.api_key
                && !options
                    .headers
                    .keys()
                    .any(|name| name.eq_ignore_ascii_case("authorization"))
            {
                options
                    .headers
                    .insert("authorization".to_owned(), format!("Bearer {key}"));
            }
        }
        // A credential header the model carries without a registry (set by a program) is a secret too.
        for (name, value) in model.headers.iter().flatten() {
            if crate::redact::names_a_credential(name) {
                crate::redact::register_secret(value);
            }
        }
        match api {
            "openai-completions" => crate::openai_completions::stream(&self.client, model, context, &options),
            "anthropic-messages" => crate::anthropic::stream(&self.client, model, context, &options),
            "google-generative-ai" => crate::google::stream(&self.client, model, context, &options),
            "mistral-conversations" => crate::mistral::stream(&self.client, model, context, &options),
            "openai-codex-responses" => crate::openai_codex_responses::stream(&self.client, model, context, &options),
            "azure-openai-responses" => {
                crate::azure_openai_responses::stream_with_env(&self.client, model, context, &options, self.env())
            }
            "google-vertex" => {
                crate::google_vertex::stream_with_env(&self.client, model, context, &options, self.env())
            }
            "bedrock-converse-stream" => {
                crate::bedrock::stream_with_env(&self.client, model, context, &options, self.env())
            }
            _ => crate::openai_responses::stream(&self.client, model, context, &options),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_urls() {
        for url in [
            "http://localhost:11434/v1",
            "http://LOCALHOST/v1",
            "http://127.0.0.1:8080",
            "http://127.1.2.3/v1",
            "http://[::1]:1234/v1",
            "http://0.0.0.0:8000/v1",
            "http://user:pw@localhost/v1",
            "http://ollama.localhost/v1",
        ] {
            assert!(is_local_url(url), "{url}");
        }
        for url in [
            "https://api.openai.com/v1",
            "http://127.0.0.1.example.com/v1",
            "http://localhost.example.com/v1",
            "http://10.0.0.5:11434/v1",
            "",
        ] {
            assert!(!is_local_url(url), "{url}");
        }
    }
}
