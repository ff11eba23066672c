//! The renderer end to end in a real terminal (tmux reflows on a resize, which vt100 does not):
//! `pi --demo` is resized while its reply streams, and an idle pi is watched for wake-ups.
//!
//! Needs tmux: without it the tests print `skipped: …` and pass, unless `PI_REQUIRE_TMUX` is set
//! (`.ci/run` installs tmux and sets it).

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::Duration;

use crate::tmux::{Tmux, shell_quote, tmux_available};

/// False (after saying why) when tmux is missing and not required.
fn have_tmux() -> bool {
    if tmux_available() {
        return true;
    }
    assert!(
        std::env::var_os("PI_REQUIRE_TMUX").is_none(),
        "PI_REQUIRE_TMUX is set but tmux is not installed"
    );
    eprintln!("skipped: tmux not found (install it, or run .ci/run)");
    false
}

/// `pi --demo` in a `width` × `height` tmux pane of a server of its own.
fn start_demo(name: &str, home: &Path, width: u16, height: u16) -> Tmux {
    let tmux = Tmux {
        socket: format!("pi-{name}-{}", std::process::id()),
    };
    let script = format!(
        "env TERM=xterm-256color HOME={home} PI_CODING_AGENT_DIR={home}/agent {pi} --demo; echo \"pi exited with $?\"; sleep 30",
        home = shell_quote(home),
        pi = shell_quote(Path::new(env!("CARGO_BIN_EXE_pi"))),
    );
    let (w, h) = (width.to_string(), height.to_string());
    let out = tmux.command(&["new-session", "-d", "-s", "pi", "-x", &w, "-y", &h, "sh", "-c", &script]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    tmux.wait_for("Send any message", Duration::from_secs(30));
    tmux
}

/// Every row of the pane, scrollback included, as tmux holds them (`join`: rows the terminal
/// wrapped itself joined back into one).
fn rows(tmux: &Tmux, join: bool) -> Vec<String> {
    let mut args = vec!["capture-pane", "-p", "-S", "-", "-t", "pi"];
    if join {
        args.push("-J");
    }
    let out = tmux.command(&args);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|row| row.trim_end().to_owned())
        .collect()
}

fn resize(tmux: &Tmux, width: u16, height: u16) {
    let (w, h) = (width.to_string(), height.to_string());
    let out = tmux.command(&["resize-window", "-t", "pi", "-x", &w, "-y", &h]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Narrowed and then shortened below the live region while the reply streams, the pane holds the
/// conversation wrapped by pi at the final width — no row the terminal's reflow split (a word cut
/// in two, a padded row turned into a blank one) — and one copy of the live region.
#[test]
fn a_resize_mid_stream_leaves_no_split_words_or_stale_live_rows() {
    if !have_tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let tmux = start_demo("resize", home.path(), 100, 30);
    tmux.send(&["-l", "hello from tmux"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("read src/greet.ts", Duration::from_secs(60));
    resize(&tmux, 47, 30);
    tmux.wait_for("edit src/greet.ts", Duration::from_secs(60));
    resize(&tmux, 47, 6);
    std::thread::sleep(Duration::from_millis(300));
    resize(&tmux, 61, 12);
    let pane = tmux.wait_until("the end of the run", Duration::from_secs(60), |pane| {
        pane.contains("Done: the typo is fixed") && !pane.contains("Working…")
    });
    let plain = rows(&tmux, false);
    let joined = rows(&tmux, true);
    // tmux joins back only rows it wrapped itself (in its reflow): there are none.
    assert_eq!(plain, joined, "rows wrapped by the terminal, not by pi");
    assert!(plain.iter().all(|row| row.chars().count() <= 61), "{plain:#?}");
    for expected in ["hello from tmux", "read src/greet.ts", "edit src/greet.ts", "faux-1"] {
        assert!(pane.contains(expected), "missing {expected:?} in the pane:\n{pane}");
    }
    // One footer, one user message, one answer: no stale copy of the live region.
    assert_eq!(pane.matches("faux-1").count(), 1, "{pane}");
    assert_eq!(pane.matches("hello from tmux").count(), 1, "{pane}");
    assert_eq!(pane.matches("Done: the typo is fixed").count(), 1, "{pane}");
    tmux.send(&["-l", "/quit"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("pi exited with 0", Duration::from_secs(20));
}

/// The pid of the pane's shell's child: pi.
fn pi_pid(tmux: &Tmux) -> u32 {
    let out = tmux.command(&["display-message", "-p", "-t", "pi", "#{pane_pid}"]);
    let shell = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let children = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).unwrap();
    children.split_whitespace().next().unwrap().parse().unwrap()
}

/// Context switches of every thread of `pid` so far: each time one of them went to sleep and
/// was woken again (or was preempted).
fn context_switches(pid: u32) -> u64 {
    let mut total = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let status = std::fs::read_to_string(task.unwrap().path().join("status")).unwrap_or_default();
        for line in status.lines() {
            if let Some(count) = line
                .strip_prefix("voluntary_ctxt_switches:")
                .or_else(|| line.strip_prefix("nonvoluntary_ctxt_switches:"))
            {
                total += count.trim().parse::<u64>().unwrap_or(0);
            }
        }
    }
    total
}

/// An idle pi sleeps: over two seconds with nothing to do, its threads wake a handful of times
/// at most (a 50 ms input poll woke it 40 times).
#[test]
fn an_idle_pi_does_not_wake_up() {
    if !have_tmux() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let tmux = start_demo("idle", home.path(), 100, 30);
    let pid = pi_pid(&tmux);
    // Let start-up work (the highlighter's syntaxes, the first frames) finish, however long it takes
    // on a busy machine: wait for a quiet half second (at most 30 s; a polling pi is never quiet,
    // and the measurement below then fails).
    let settle = std::time::Instant::now() + Duration::from_secs(30);
    while std::time::Instant::now() < settle {
        let start = context_switches(pid);
        std::thread::sleep(Duration::from_millis(500));
        if context_switches(pid).saturating_sub(start) <= 1 {
            break;
        }
    }
    let before = context_switches(pid);
    std::thread::sleep(Duration::from_secs(2));
    // A thread that ended in between takes its count with it: never below zero.
    let woken = context_switches(pid).saturating_sub(before);
    assert!(woken <= 8, "pi woke {woken} times in 2 s of idling");
    tmux.send(&["-l", "/quit"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("pi exited with 0", Duration::from_secs(20));
}
