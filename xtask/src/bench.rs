//! `cargo xtask bench`: runs the benchmarks.
//!
//! Today that is `cargo bench -p pi-agent-core` (the agent-loop overhead bench, see
//! `docs/agent-loop.md`); extra arguments go to `cargo bench`, e.g. `cargo xtask bench -- --quick`.

use std::path::Path;

use anyhow::{Context, Result, bail};

/// The cargo arguments of the bench run, before any extra arguments.
pub const BENCH_ARGS: &[&str] = &["bench", "-p", "pi-agent-core"];

/// Runs `cargo bench -p pi-agent-core <extra>` in `root`.
pub fn run(root: &Path, extra: &[String]) -> Result<()> {
    let status = crate::cargo(root)
        .args(BENCH_ARGS)
        .args(extra)
        .status()
        .context("could not start `cargo bench`")?;
    if !status.success() {
        bail!("`cargo bench -p pi-agent-core` exited with {status}");
    }
    Ok(())
}
