//! The pi coding agent.
//!
//! This crate will hold the `AgentSession` around [`pi_agent_core::Agent`], the LIFO pending-action
//! store and the hidden `resolve` tool, transactional `ast_edit` / `ast_grep`, the custom-tool
//! loader, sessions on disk, settings and the CLI modes. Today it holds the offline demo that the
//! `pi` binary runs: the faux model of [`pi_agent_core::faux`] driving a real agent loop.

pub mod demo;
pub mod pending;
