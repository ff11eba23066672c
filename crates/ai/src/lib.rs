//! LLM providers for pi.
//!
//! Nine wire APIs implement [`pi_agent_core::StreamFn`], each in its module:
//! [`openai_completions`] (which also covers Ollama, vLLM, llama.cpp, LM Studio, OpenRouter,
//! Groq …), [`anthropic`] (`anthropic-messages`), [`openai_responses`], [`google`]
//! (`google-generative-ai`, Gemini), [`google_vertex`] (Gemini on Vertex AI, by API key or
//! Application Default Credentials), [`mistral`] (`mistral-conversations`),
//! [`azure_openai_responses`] (the Responses API on Azure OpenAI) and [`openai_codex_responses`]
//! (ChatGPT-plan Codex) and [`bedrock`] (`bedrock-converse-stream`, Amazon Bedrock, SigV4-signed). [`Providers`] picks one by the model's `api`. The [`ModelRegistry`] reads pi's `~/.pi/agent/models.json` and
//! resolves API keys from the usual environment variables.
//!
//! Secrets: every key and credential header value this crate resolves or is given is registered
//! with the one redactor ([`register_secret`]); [`redact`] keeps them out of every error text,
//! and a program calls it on whatever else it writes (the `pi` binary: stderr, its JSON and RPC
//! output, the debug log). A program that resolves a secret itself (an OAuth token) registers it.
//!
//! Shared pieces, for these APIs and for a new one: [`HttpClient`] (retries, a per-attempt
//! timeout and a total deadline, error texts that name their cause), [`SseParser`] (an incremental SSE parser),
//! [`ArgumentsAccumulator`] (tool-call arguments parsed while they stream), [`MessageBuilder`]
//! (the streamed message and its events), [`WireProtocol`] and [`drive`] (the request/stream
//! loop), [`prepare_messages`] (orphaned tool calls, failed messages) and [`cost_of`]. The
//! scripted provider server for tests is in the dev-only `pi-test-support` crate.

pub mod anthropic;
pub mod azure_openai_responses;
pub mod bedrock;
mod builder;
mod cost;
mod driver;
mod event_stream;
pub mod google;
pub mod google_vertex;
mod http;
pub mod mistral;
pub mod oauth;
pub mod openai_codex_responses;
pub mod openai_completions;
pub mod openai_responses;
mod overflow;
mod partial_json;
mod providers;
mod redact;
mod registry;
mod shared_registry;
mod sse;
mod transform;

#[cfg(test)]
mod pi_recorded_tests;

pub use builder::{MessageBuilder, ToolCallError};
pub use cost::cost_of;
pub use driver::{Flow, Framing, PreparedRequest, ProtocolError, WireProtocol, drive};
pub use http::{HttpClient, HttpError, HttpOptions, HttpRequest, MAX_BACKOFF, ResponseHead};
pub use overflow::{is_context_overflow, is_overflow_error_text};
pub use partial_json::{ArgumentsAccumulator, parse_partial_json};
pub use pi_agent_core::{Model, ModelCost, StreamFn};
pub use providers::{Providers, SUPPORTED_APIS};
pub use redact::{MIN_SECRET_CHARS, REDACTED, names_a_credential, redact, redacted_excerpt, register_secret};
pub use registry::{
    BuiltinProvider, CATALOG_SOURCE_VERSION, CredentialStore, ModelRegistry, ProviderConfigError, RegistryError,
    StoredCredential, builtin_providers, default_models_path, env_var_for_provider, env_vars_for_provider,
    is_local_url, resolve_config_value,
};
pub use shared_registry::SharedRegistry;
pub use sse::{SseEvent, SseParser};
pub use transform::{NO_RESULT_PROVIDED, prepare_messages};
