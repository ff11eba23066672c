//! `cargo xtask ci`: the one test command (SPEC §9).
//!
//! Runs, in order, stopping at the first failure: `cargo fmt --check`, clippy with `-D warnings`, all
//! tests, doctests, the [snapshot check](crate::snapshots), the [layers check](crate::layers) and the
//! docs build with `-D warnings`. Tests run with `INSTA_UPDATE=no` and `CI=true`, so insta never writes
//! a snapshot. When `Cargo.lock` exists, cargo runs with `--locked` so a stale lock file fails CI.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};

/// The environment the test steps run with: insta compares and never writes.
pub const TEST_ENV: &[(&str, &str)] = &[("INSTA_UPDATE", "no"), ("CI", "true")];

/// The environment of the docs step: rustdoc warnings are errors.
pub const DOC_ENV: &[(&str, &str)] = &[("RUSTDOCFLAGS", "-D warnings")];

/// What a step does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Runs cargo with these arguments and extra environment variables.
    Cargo {
        /// The arguments after `cargo`.
        args: Vec<&'static str>,
        /// Variables set for the cargo process.
        env: &'static [(&'static str, &'static str)],
    },
    /// Runs [`crate::snapshots::run`] in this process.
    Snapshots,
    /// Runs [`crate::layers::run`] in this process.
    Layers,
}

/// One step of `cargo xtask ci`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// A short name for headers and the summary, e.g. `clippy`.
    pub name: &'static str,
    /// What the step does.
    pub action: Action,
    /// A cargo step running longer is stopped (with every process it started) and fails: a test
    /// that hangs ends CI with its name (libtest prints "has been running for over 60 seconds")
    /// instead of holding it until the machine's limit.
    pub limit: Option<Duration>,
}

/// The limit of the test steps: several times what they take on a loaded 2-core machine.
pub const TEST_LIMIT: Duration = Duration::from_secs(40 * 60);

impl Step {
    /// The step as a command line a developer could run by hand.
    pub fn describe(&self) -> String {
        match &self.action {
            Action::Cargo { args, env } => {
                let mut line: Vec<String> = env.iter().map(|(key, value)| format!("{key}={value:?}")).collect();
                line.push("cargo".to_owned());
                line.extend(args.iter().map(|arg| (*arg).to_owned()));
                line.join(" ")
            }
            Action::Snapshots => "no pending or unreferenced insta snapshots".to_owned(),
            Action::Layers => "cargo xtask layers".to_owned(),
        }
    }
}

/// The steps of `cargo xtask ci`, in order; `locked` adds `--locked` to the cargo builds.
pub fn steps(locked: bool) -> Vec<Step> {
    let cargo = |args: &[&'static str], env| {
        let mut args = args.to_vec();
        if locked && args.first() != Some(&"fmt") {
            let at = args.iter().position(|arg| *arg == "--").unwrap_or(args.len());
            args.insert(at, "--locked");
        }
        Action::Cargo { args, env }
    };
    vec![
        Step {
            name: "fmt",
            action: cargo(&["fmt", "--all", "--", "--check"], &[]),
            limit: None,
        },
        Step {
            name: "clippy",
            action: cargo(&["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"], &[]),
            limit: None,
        },
        Step {
            name: "test",
            action: cargo(&["test", "--workspace", "--all-targets"], TEST_ENV),
            limit: Some(TEST_LIMIT),
        },
        Step {
            name: "doctest",
            action: cargo(&["test", "--workspace", "--doc"], TEST_ENV),
            limit: Some(TEST_LIMIT),
        },
        Step {
            name: "example",
            action: cargo(&["run", "-p", "pi-coding-agent", "--example", "embed"], &[]),
            limit: None,
        },
        Step {
            name: "snapshots",
            action: Action::Snapshots,
            limit: None,
        },
        Step {
            name: "layers",
            action: Action::Layers,
            limit: None,
        },
        Step {
            name: "doc",
            action: cargo(&["doc", "--workspace", "--no-deps"], DOC_ENV),
            limit: None,
        },
    ]
}

/// Runs every step in `root`, printing a header per step and a summary line; stops at the first failure.
pub fn run(root: &Path) -> Result<()> {
    let steps = steps(root.join("Cargo.lock").is_file());
    let total = steps.len();
    let started = Instant::now();
    for (number, step) in (1..).zip(&steps) {
        println!("\n==> ci [{number}/{total}] {}: {}", step.name, step.describe());
        let step_started = Instant::now();
        if let Err(error) = run_step(root, step) {
            return Err(anyhow!(
                "ci FAILED at step {number}/{total} ({}) after {}: {error:#}",
                step.name,
                format_duration(started.elapsed())
            ));
        }
        println!(
            "==> ci [{number}/{total}] {}: ok ({})",
            step.name,
            format_duration(step_started.elapsed())
        );
    }
    println!(
        "\nci: all {total} steps passed in {}",
        format_duration(started.elapsed())
    );
    Ok(())
}

fn run_step(root: &Path, step: &Step) -> Result<()> {
    match &step.action {
        Action::Cargo { args, env } => {
            let mut child = crate::cargo(root)
                .args(args)
                .envs(env.iter().copied())
                .spawn()
                .with_context(|| format!("could not start `{}`", step.describe()))?;
            let status = match step.limit {
                None => child.wait()?,
                Some(limit) => match wait_within(&mut child, limit)? {
                    Some(status) => status,
                    None => bail!(
                        "`{}` ran longer than {} and was stopped (a test that hangs: see \"has been running for over 60 seconds\" above)",
                        step.describe(),
                        format_duration(limit)
                    ),
                },
            };
            if !status.success() {
                bail!("`{}` exited with {status}", step.describe());
            }
            Ok(())
        }
        Action::Snapshots => crate::snapshots::run(root),
        Action::Layers => crate::layers::run(root),
    }
}

/// The child's exit status, or `None` once `limit` passed: then it is killed with every process
/// it started (cargo's test binaries and their children).
fn wait_within(child: &mut std::process::Child, limit: Duration) -> Result<Option<std::process::ExitStatus>> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            let mut pids = descendants(child.id());
            pids.push(child.id());
            let _ = std::process::Command::new("kill")
                .arg("-KILL")
                .args(pids.iter().map(u32::to_string))
                .status();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Every process below `pid` (children, their children, …), from `/proc`.
fn descendants(pid: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(id) = entry.file_name().to_str().and_then(|name| name.parse::<u32>().ok()) else {
            continue;
        };
        // `pid (comm) state ppid …`: the name may hold spaces and parentheses; the last `)` ends it.
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some(ppid) = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|ppid| ppid.parse::<u32>().ok())
        else {
            continue;
        };
        parents.push((id, ppid));
    }
    let mut found = Vec::new();
    let mut frontier = vec![pid];
    while let Some(parent) = frontier.pop() {
        for &(id, _) in parents.iter().filter(|(_, ppid)| *ppid == parent) {
            found.push(id);
            frontier.push(id);
        }
    }
    found
}

/// `42.1s` under a minute, `12m05s` above.
fn format_duration(duration: Duration) -> String {
    let seconds = duration.as_secs();
    if seconds < 60 {
        format!("{:.1}s", duration.as_secs_f64())
    } else {
        format!("{}m{:02}s", seconds / 60, seconds % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_run_in_the_spec_order_with_the_right_commands() {
        let lines: Vec<String> = steps(true).iter().map(Step::describe).collect();
        assert_eq!(
            lines,
            [
                "cargo fmt --all -- --check",
                "cargo clippy --workspace --all-targets --locked -- -D warnings",
                "INSTA_UPDATE=\"no\" CI=\"true\" cargo test --workspace --all-targets --locked",
                "INSTA_UPDATE=\"no\" CI=\"true\" cargo test --workspace --doc --locked",
                "cargo run -p pi-coding-agent --example embed --locked",
                "no pending or unreferenced insta snapshots",
                "cargo xtask layers",
                "RUSTDOCFLAGS=\"-D warnings\" cargo doc --workspace --no-deps --locked",
            ]
        );
    }

    #[test]
    fn a_step_over_its_limit_is_stopped_with_the_processes_it_started() {
        let dir = std::env::temp_dir().join(format!("xtask-limit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let marker = dir.join("grandchild.pid");
        // A child that starts a grandchild and waits for it, as cargo waits for a test binary.
        let script = format!("sleep 600 & echo $! > {}; wait", marker.display());
        let mut child = std::process::Command::new("sh").args(["-c", &script]).spawn().unwrap();
        let started = Instant::now();
        assert!(wait_within(&mut child, Duration::from_secs(1)).unwrap().is_none());
        assert!(started.elapsed() < Duration::from_secs(30));
        let grandchild = std::fs::read_to_string(&marker).unwrap();
        let grandchild = grandchild.trim();
        // Killed, so at most a zombie until init reaps it.
        let stat = std::fs::read_to_string(format!("/proc/{grandchild}/stat")).unwrap_or_default();
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next());
        assert!(
            matches!(state, None | Some("Z")),
            "the grandchild {grandchild} still runs: {stat}"
        );
        let _ = std::fs::remove_dir_all(&dir);

        let mut quick = std::process::Command::new("true").spawn().unwrap();
        assert!(
            wait_within(&mut quick, Duration::from_secs(30))
                .unwrap()
                .unwrap()
                .success()
        );
    }

    #[test]
    fn without_a_lock_file_cargo_is_not_locked() {
        for step in steps(false) {
            if let Action::Cargo { args, .. } = step.action {
                assert!(!args.contains(&"--locked"), "{}", step.name);
            }
        }
    }

    #[test]
    fn durations_are_short() {
        assert_eq!(format_duration(Duration::from_millis(4_250)), "4.2s");
        assert_eq!(format_duration(Duration::from_secs(725)), "12m05s");
    }
}
