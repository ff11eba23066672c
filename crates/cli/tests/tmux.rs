//! End to end in a real terminal: `pi --demo` runs under tmux, a prompt is typed, the scripted
//! (faux) model answers, and the captured pane — scrollback included — is checked.
//!
//! Needs tmux. Without it the test prints `skipped: …` and passes, unless `PI_REQUIRE_TMUX` is set
//! (`.ci/run` installs tmux and sets it, so CI cannot skip it).

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A tmux server of our own (its own socket, no user configuration), killed on drop.
pub(crate) struct Tmux {
    pub(crate) socket: String,
}

impl Tmux {
    pub(crate) fn command(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .unwrap()
    }

    pub(crate) fn capture(&self) -> String {
        let out = self.command(&["capture-pane", "-p", "-J", "-S", "-", "-t", "pi"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub(crate) fn send(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "pi"];
        args.extend_from_slice(keys);
        let out = self.command(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }

    pub(crate) fn wait_for(&self, needle: &str, timeout: Duration) -> String {
        self.wait_until(&format!("{needle:?}"), timeout, |pane| pane.contains(needle))
    }

    /// Captures the pane until `ready` holds for it.
    pub(crate) fn wait_until(&self, what: &str, timeout: Duration, ready: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let pane = self.capture();
            if ready(&pane) {
                return pane;
            }
            assert!(
                start.elapsed() < timeout,
                "timed out waiting for {what}; the pane:\n{pane}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command(&["kill-server"]);
    }
}

pub(crate) fn tmux_available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

pub(crate) fn shell_quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

#[test]
fn pi_answers_a_typed_prompt_in_a_real_terminal() {
    if !tmux_available() {
        assert!(
            std::env::var_os("PI_REQUIRE_TMUX").is_none(),
            "PI_REQUIRE_TMUX is set but tmux is not installed"
        );
        eprintln!("skipped: tmux not found (install it, or run .ci/run)");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let pi = Path::new(env!("CARGO_BIN_EXE_pi"));
    let tmux = Tmux {
        socket: format!("pi-test-{}", std::process::id()),
    };
    let script = format!(
        "env TERM=xterm-256color HOME={home} PI_CODING_AGENT_DIR={home}/agent {pi} --demo; echo \"pi exited with $?\"; sleep 30",
        home = shell_quote(home.path()),
        pi = shell_quote(pi),
    );
    let out = tmux.command(&[
        "new-session",
        "-d",
        "-s",
        "pi",
        "-x",
        "100",
        "-y",
        "30",
        "sh",
        "-c",
        &script,
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    tmux.wait_for("Send any message", Duration::from_secs(30));
    tmux.send(&["-l", "hello from tmux"]);
    tmux.send(&["Enter"]);
    // The answer is complete once its last words are there and the loader is gone.
    let pane = tmux.wait_until("the end of the run", Duration::from_secs(60), |pane| {
        pane.contains("Done: the typo is fixed") && !pane.contains("Working…")
    });
    for expected in [
        "hello from tmux",
        "read src/greet.ts",
        "edit src/greet.ts",
        "AST Edit console.log($$$ARGS) in src",
        "proposed",
        "✓ Accept: 2 replacements in 2 files [AST Edit]",
        "✗ Discard: 1 replacement in 1 file [AST Edit]",
        "faux-1",
    ] {
        assert!(pane.contains(expected), "missing {expected:?} in the pane:\n{pane}");
    }
    // Each finished block is in the scrollback exactly once, and no earlier frame of the live
    // region (a second footer, a stale loader) was left behind.
    assert_eq!(pane.matches("✓ Accept:").count(), 1, "{pane}");
    assert_eq!(pane.matches("hello from tmux").count(), 1, "{pane}");
    assert_eq!(pane.matches("%/128k (auto)").count(), 1, "one footer:\n{pane}");
    assert_eq!(pane.matches("Done: the typo is fixed").count(), 1, "{pane}");

    tmux.send(&["-l", "/quit"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("pi exited with 0", Duration::from_secs(20));
}
