//! LLM providers for pi.
//!
//! This crate will hold the streaming clients for the three wire APIs pi speaks —
//! `openai-completions` (which also covers Ollama, vLLM, llama.cpp, LM Studio, OpenRouter, Groq …),
//! `anthropic-messages` and `openai-responses` — each implementing
//! [`pi_agent_core::StreamFn`], plus the model registry that reads pi's
//! `~/.pi/agent/models.json`.
//!
//! Until those land, the only model available to the workspace is the faux model of
//! [`pi_agent_core::faux`]; this crate re-exports the model description so downstream code can
//! already name it from here.

pub use pi_agent_core::{Model, ModelCost, StreamFn};
