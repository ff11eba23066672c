//! `cargo xtask fuzz`: runs the fuzz targets longer than a plain test run does.
//!
//! Every fuzz target of the workspace is a proptest unit test named `fuzz_*` whose budget is the
//! `PI_FUZZ_CASES` variable (`pi_test_support::fuzz`, 64 cases when it is unset, which is what
//! `cargo test` and so `cargo xtask ci` run). This command runs only those tests, with
//! [`DEFAULT_CASES`] cases each unless `--cases N` says otherwise, and `--target NAME` keeps the
//! targets whose name contains `fuzz_NAME` (`--target session` runs `fuzz_session_loader`,
//! `fuzz_session_open`, …). Failing inputs proptest finds are written to the crate's
//! `proptest-regressions/` files, replayed first by every later run: commit them.

use std::path::Path;

use anyhow::{Context, Result, bail};

/// Cases per target of `cargo xtask fuzz` without `--cases`.
pub const DEFAULT_CASES: u32 = 2000;

/// The variable the targets read their budget from.
pub const CASES_ENV: &str = "PI_FUZZ_CASES";

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Cases per target.
    pub cases: u32,
    /// The test-name filter (`fuzz_` or `fuzz_<target>`).
    pub filter: String,
}

/// Reads `[--cases N] [--target NAME]`.
pub fn parse_args(args: &[String]) -> Result<Options> {
    let mut options = Options {
        cases: DEFAULT_CASES,
        filter: "fuzz_".to_owned(),
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) => (flag, Some(value.to_owned())),
            None => (arg.as_str(), None),
        };
        let mut value = || inline.clone().or_else(|| args.next().cloned());
        match flag {
            "--cases" => {
                let text = value().context("--cases needs a number")?;
                options.cases = match text.parse::<u32>() {
                    Ok(n) if n > 0 => n,
                    _ => bail!("--cases needs a positive number, not {text:?}"),
                };
            }
            "--target" => {
                let name = value().context("--target needs a name")?;
                let name = name.strip_prefix("fuzz_").unwrap_or(&name);
                options.filter = format!("fuzz_{name}");
            }
            other => bail!("unknown argument {other:?} (usage: cargo xtask fuzz [--cases N] [--target NAME])"),
        }
    }
    Ok(options)
}

/// The cargo arguments that run the fuzz targets.
pub fn cargo_args(options: &Options) -> Vec<String> {
    ["test", "--workspace", "--lib", "--", &options.filter]
        .iter()
        .map(|arg| (*arg).to_owned())
        .collect()
}

/// Runs the fuzz targets in `root`.
pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let options = parse_args(args)?;
    let args = cargo_args(&options);
    let line = format!("{CASES_ENV}={} cargo {}", options.cases, args.join(" "));
    println!("==> {line}");
    let status = crate::cargo(root)
        .args(&args)
        .env(CASES_ENV, options.cases.to_string())
        // A new random seed per run (unless PI_FUZZ_SEED fixes one), even under CI.
        .env_remove("CI")
        .status()
        .with_context(|| format!("could not start `{line}`"))?;
    if !status.success() {
        bail!("`{line}` exited with {status}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Options> {
        parse_args(&args.iter().map(|arg| (*arg).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn defaults_run_every_target_longer() {
        let options = parse(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(options.cases, DEFAULT_CASES);
        assert_eq!(cargo_args(&options).join(" "), "test --workspace --lib -- fuzz_");
    }

    #[test]
    fn cases_and_target() {
        let options = parse(&["--cases", "50", "--target=session"]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            options,
            Options {
                cases: 50,
                filter: "fuzz_session".to_owned()
            }
        );
        let options = parse(&["--target", "fuzz_sse_parser"]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(options.filter, "fuzz_sse_parser");
    }

    #[test]
    fn bad_arguments_are_errors() {
        for args in [
            &["--cases"][..],
            &["--cases", "0"],
            &["--cases", "x"],
            &["--target"],
            &["--fast"],
        ] {
            assert!(parse(args).is_err(), "{args:?}");
        }
    }
}
