//! LLM providers for pi.
//!
//! Three wire APIs implement [`pi_agent_core::StreamFn`]: `openai-completions` (which also
//! covers Ollama, vLLM, llama.cpp, LM Studio, OpenRouter, Groq …), `anthropic-messages` and
//! `openai-responses`. [`Providers`] picks one by the model's `api`. The model registry reads
//! pi's `~/.pi/agent/models.json` and resolves API keys from the usual environment variables.
//!
//! Shared pieces: [`sse`] (an incremental SSE parser), [`partial_json`] (tool-call arguments
//! parsed while they stream), [`http`] (retries, timeouts, error texts without the key),
//! [`builder`] (the streamed message and its events), [`transform`] (orphaned tool calls,
//! failed messages), [`cost`]. The scripted provider server for tests is in the dev-only
//! `pi-test-support` crate.

pub mod anthropic;
pub mod builder;
pub mod cost;
pub mod driver;
pub mod http;
pub mod openai_completions;
pub mod openai_responses;
pub mod partial_json;
pub mod providers;
pub mod registry;
pub mod sse;
pub mod transform;

pub use http::{HttpClient, HttpOptions};
pub use pi_agent_core::{Model, ModelCost, StreamFn};
pub use providers::Providers;
pub use registry::{ModelRegistry, RegistryError, is_local_url};
