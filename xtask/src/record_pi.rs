//! `cargo xtask record-pi`: runs the conformance scenarios through pi 0.73.1 and writes its
//! goldens (not part of CI: it needs Node ≥ 20 and pi's npm package).
//!
//! ```text
//! cargo xtask record-pi [--pi <dir of @mariozechner/pi-coding-agent>] [--node <node>] [--scenario NAME]…
//! ```
//!
//! Each scenario of `crates/cli/tests/data/conformance/` runs once through `node <pi>/dist/cli.js`
//! with `pi_test_support::conformance::run` (the runner pi-cli's `conformance` tests use for our
//! binary), and its goldens are rewritten.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use pi_test_support::conformance::{Program, Scenario, run, scenarios, write_goldens};
use pi_test_support::pi073;

/// Where the scenarios are, under the workspace root.
pub const SCENARIOS: &str = "crates/cli/tests/data/conformance";

/// The version the goldens must come from.
pub const PI_VERSION: &str = "0.73.1";

/// The parsed arguments.
#[derive(Debug, Default, PartialEq)]
pub struct Options {
    /// pi's package directory.
    pub pi: Option<PathBuf>,
    /// The Node binary.
    pub node: Option<PathBuf>,
    /// Only these scenarios (all when empty).
    pub scenarios: Vec<String>,
}

/// Parses `record-pi`'s arguments.
///
/// # Errors
/// On an unknown argument or a flag without its value.
pub fn parse(args: &[String]) -> Result<Options> {
    let mut options = Options::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || args.next().cloned().with_context(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--pi" => options.pi = Some(value()?.into()),
            "--node" => options.node = Some(value()?.into()),
            "--scenario" => options.scenarios.push(value()?),
            other => bail!(
                "unknown argument {other:?} (usage: cargo xtask record-pi [--pi DIR] [--node NODE] [--scenario NAME]…)"
            ),
        }
    }
    Ok(options)
}

/// `cargo xtask record-pi`.
///
/// # Errors
/// When pi is not found or not 0.73.1, a named scenario does not exist, or a golden cannot be
/// written.
pub fn run_command(root: &Path, args: &[String]) -> Result<()> {
    let options = parse(args)?;
    let pi = options.pi.unwrap_or_else(|| pi073::package_dir(&pi073::process_env));
    let version = pi073::package_version(&pi).context(
        "where is pi 0.73.1? pass --pi <node_modules/@mariozechner/pi-coding-agent> (or set PI_073_PACKAGE)",
    )?;
    if version != PI_VERSION {
        bail!(
            "{} is pi {version}; the goldens come from pi {PI_VERSION}",
            pi.display()
        );
    }
    let node = options.node.unwrap_or_else(|| PathBuf::from("node"));
    let program = Program::node(&node, &pi.join("dist/cli.js"));
    let dir = root.join(SCENARIOS);
    let all = scenarios(&dir)?;
    for name in &options.scenarios {
        if !all.iter().any(|scenario| &scenario.name == name) {
            bail!("no scenario {name:?} in {}", dir.display());
        }
    }
    let chosen: Vec<&Scenario> = all
        .iter()
        .filter(|scenario| options.scenarios.is_empty() || options.scenarios.contains(&scenario.name))
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("a tokio runtime")?;
    for scenario in chosen {
        println!("recording {}", scenario.name);
        let artifacts = runtime.block_on(run(scenario, &program))?;
        for (name, value) in &artifacts {
            if name.ends_with(".exit") && value["code"] != 0 {
                println!("  {name}: {value}");
            }
        }
        write_goldens(&dir.join(&scenario.name), &artifacts)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn arguments_parse() {
        let options = parse(&args(&[
            "--pi",
            "/p",
            "--scenario",
            "a",
            "--scenario",
            "b",
            "--node",
            "/n",
        ]))
        .unwrap();
        assert_eq!(
            options,
            Options {
                pi: Some("/p".into()),
                node: Some("/n".into()),
                scenarios: vec!["a".into(), "b".into()],
            }
        );
        assert!(parse(&args(&["--pi"])).is_err());
        assert!(parse(&args(&["--frob"])).is_err());
    }

    #[test]
    fn every_scenario_parses() {
        let all = scenarios(&crate::workspace_root().join(SCENARIOS)).unwrap();
        assert!(all.len() >= 10, "{} scenarios", all.len());
    }
}
