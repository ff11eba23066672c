//! The coding agent's integration tests: one module per file of `tests/`, built as one test binary.
//!
//! Every test binary of this crate links all of ast-grep's grammars (about 90 MB each), so the files
//! are modules of this one crate instead of separate binaries (`autotests = false` in Cargo.toml):
//! one link instead of ten, on CI's two cores and disk. Run one file's tests with
//! `cargo test -p pi-coding-agent --test all <file>::`, e.g. `--test all process_tools::`.
//! Their insta snapshots are `tests/snapshots/all__<file>__<name>.snap`.

mod ast_support;
mod extension_support;
mod process_support;
mod support;

mod app_compaction;
mod app_pending;
mod app_tree;
mod ast_edit;
mod ast_grep;
mod dispatch_props;
mod extension_events;
mod extension_host;
mod extension_host_events;
mod extension_imports;
mod extension_pi073;
mod extension_runner;
mod mcp_tools;
mod mutation_order;
mod pending_props;
mod process_tools;
mod resolve;
mod retry;
mod sandbox;
mod session_ast_edit;
mod session_resolve;
mod session_run_end;
mod tool_choice_queue;
