//! `cargo xtask bench`: runs the benchmarks that own a SPEC §8 budget, one `cargo bench` each.
//!
//! * `pi-agent-core`: the agent-loop overhead per tool call (`docs/agent-loop.md`);
//! * `pi-tools --bench search`: `grep` / `find` on a 50k-file tree, side by side with `rg` / `fd` when
//!   they are installed (`docs/tools/grep.md`);
//! * `pi-coding-agent --bench ast_edit`: `ast_edit` preview and apply on a 5k-file TypeScript tree, side
//!   by side with the `ast-grep` CLI when it is installed (`docs/tools/ast_edit.md`);
//! * `pi-cli --bench cli`: `pi --version` wall time and peak memory, and a scripted 7-tool-call
//!   `pi -p` session against a local mock server (`docs/cli.md`);
//! * `pi-session-store --bench session_load`: opening a 100k-entry session file (`docs/sessions.md`);
//! * `pi-cli --bench compaction`: a 2 000-turn RPC session with compaction on — time, peak memory and
//!   tokens sent, side by side with pi 0.73.1 when Node.js and its package are there, else pi's last
//!   recorded figures (`docs/compaction.md`);
//! * `pi-cli --bench extension_startup`: start-up with pi 0.73.1's `hello` extension until the
//!   answer to RPC `get_commands`, and without it, side by side with pi 0.73.1 when Node.js and
//!   its package are there, else pi's last recorded figures (`docs/extensions.md`, "Speed");
//! * `pi-cli --bench tui`: frame time and bytes written while a reply streams under a 10 000-line
//!   transcript, and an idle pi's wake-ups under tmux, side by side with pi 0.73.1 when Node.js and
//!   its package are there (`docs/tui.md`, "Speed").
//!
//! Extra arguments go to every `cargo bench`, e.g. `cargo xtask bench -- --quick`.

use std::path::Path;

use anyhow::{Context, Result, bail};

/// The cargo arguments of each bench run, in order, before any extra arguments.
pub const BENCHES: &[&[&str]] = &[
    &["bench", "-p", "pi-agent-core"],
    &["bench", "-p", "pi-tools", "--bench", "search"],
    &["bench", "-p", "pi-coding-agent", "--bench", "ast_edit"],
    &["bench", "-p", "pi-cli", "--bench", "cli"],
    &["bench", "-p", "pi-session-store", "--bench", "session_load"],
    &["bench", "-p", "pi-cli", "--bench", "compaction"],
    &["bench", "-p", "pi-cli", "--bench", "extension_startup"],
    &["bench", "-p", "pi-cli", "--bench", "tui"],
];

/// Runs every bench of [`BENCHES`] in `root` with `extra` appended; stops at the first failure.
pub fn run(root: &Path, extra: &[String]) -> Result<()> {
    for args in BENCHES {
        let line = format!("cargo {}", args.join(" "));
        println!("==> {line}");
        let status = crate::cargo(root)
            .args(*args)
            .args(extra)
            .status()
            .with_context(|| format!("could not start `{line}`"))?;
        if !status.success() {
            bail!("`{line}` exited with {status}");
        }
    }
    Ok(())
}
