//! Project automation for the pi workspace, run as `cargo xtask <command>`.
//!
//! * [`ci`]: the one test command: fmt check, clippy, tests, snapshot check, layers check, docs build.
//! * [`layers`]: checks the dependencies between our crates against SPEC §2.
//! * [`bench`](mod@bench): runs the benchmarks.
//! * [`fuzz`](mod@fuzz): runs the `fuzz_*` targets with a bigger budget.
//! * [`record_pi`]: records the conformance goldens from pi 0.73.1.
//! * [`models`]: generates pi-ai 0.73.1's model catalog for `pi-ai`.
//!
//! The checks are plain functions over parsed data ([`metadata::Workspace`], file names) so they are
//! unit-tested here; the commands are thin wrappers that gather the data and print the result.
//! `docs/xtask.md` describes the commands for users.

pub mod bench;
pub mod ci;
pub mod fuzz;
pub mod layers;
pub mod metadata;
pub mod models;
pub mod record_pi;
pub mod snapshots;
pub mod source_rules;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The root of the workspace: the directory above this crate's `Cargo.toml`.
pub fn workspace_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .map_or_else(|| manifest_dir.to_path_buf(), Path::to_path_buf)
}

/// A `cargo` command that runs in `root`.
///
/// It uses the cargo that started xtask (the `CARGO` variable cargo sets for the programs it runs), so
/// `cargo +toolchain xtask ci` checks with that toolchain; plain `cargo` from `PATH` otherwise.
pub fn cargo(root: &Path) -> Command {
    let program = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(program);
    command.current_dir(root);
    command
}
