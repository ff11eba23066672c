//! The `pi` command's integration tests: one module per file of `tests/`, built as one test binary.
//!
//! Every test binary of this crate links pi-coding-agent and with it all of ast-grep's grammars
//! (about 90 MB each), so the files are modules of this one crate instead of separate binaries
//! (`autotests = false` in Cargo.toml): one link instead of six, on CI's two cores and disk. Run one
//! file's tests with `cargo test -p pi-cli --test all <file>::`, e.g. `--test all interactive_screens::`.
//! Their insta snapshots are `tests/snapshots/all__<file>__<name>.snap`.

mod catalog_models;
mod cli;
mod compaction;
mod conformance;
mod examples;
mod export;
mod extension_providers;
mod extensions;
mod faults;
mod images;
mod interactive_autocomplete;
mod interactive_commands;
mod interactive_editor;
mod interactive_keys;
mod interactive_loop;
mod interactive_screens;
mod interactive_transcript;
mod list_models;
mod packages;
mod pi_073;
mod resources;
mod retry;
mod rpc;
mod rpc_client;
mod session_flags;
mod themes;
mod tmux;
mod tui_render;
