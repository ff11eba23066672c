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
}

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
        },
        Step {
            name: "clippy",
            action: cargo(&["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"], &[]),
        },
        Step {
            name: "test",
            action: cargo(&["test", "--workspace", "--all-targets"], TEST_ENV),
        },
        Step {
            name: "doctest",
            action: cargo(&["test", "--workspace", "--doc"], TEST_ENV),
        },
        Step {
            name: "example",
            action: cargo(&["run", "-p", "pi-coding-agent", "--example", "embed"], &[]),
        },
        Step {
            name: "snapshots",
            action: Action::Snapshots,
        },
        Step {
            name: "layers",
            action: Action::Layers,
        },
        Step {
            name: "doc",
            action: cargo(&["doc", "--workspace", "--no-deps"], DOC_ENV),
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
            let status = crate::cargo(root)
                .args(args)
                .envs(env.iter().copied())
                .status()
                .with_context(|| format!("could not start `{}`", step.describe()))?;
            if !status.success() {
                bail!("`{}` exited with {status}", step.describe());
            }
            Ok(())
        }
        Action::Snapshots => crate::snapshots::run(root),
        Action::Layers => crate::layers::run(root),
    }
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
