//! Where pi 0.73.1's published npm package (`@mariozechner/pi-coding-agent`, installed with its
//! dependencies) is, for the tests, benches and xtask commands that run pi itself.
//!
//! The package is `$PI_073_PACKAGE` (unless empty), else `.ci/pi073/node_modules/@mariozechner/pi-coding-agent`
//! under the workspace root, where `.ci/ensure-pi073` installs it. A test that cannot find it is
//! skipped with `skipped: …` ([`or_skip`]), unless `PI_REQUIRE_PI073` is set (`.ci/run` sets it),
//! which fails it instead. Node.js is found by the callers that can depend on pi-coding-agent
//! (`pi_coding_agent::custom_tools::node`), as pi finds it.

use std::fmt::Display;
use std::path::{Path, PathBuf};

/// The pi version the package must have.
pub const VERSION: &str = "0.73.1";
/// The variable naming the package directory.
pub const PACKAGE_VAR: &str = "PI_073_PACKAGE";
/// Set (to anything): a test that cannot run pi 0.73.1 fails instead of being skipped.
pub const REQUIRE_VAR: &str = "PI_REQUIRE_PI073";

/// Why pi 0.73.1's package is not there.
#[derive(Debug, thiserror::Error)]
pub enum Pi073Error {
    /// No readable `package.json` in the directory.
    #[error("no {} (run .ci/ensure-pi073, or set PI_073_PACKAGE to pi 0.73.1's package directory)", .0.display())]
    Missing(PathBuf),
    /// A `package.json` that is not JSON.
    #[error("{}: {source}", .path.display())]
    Unparsable {
        /// The `package.json`.
        path: PathBuf,
        /// The parse error.
        source: serde_json::Error,
    },
    /// Another version of pi.
    #[error("{} is version {version} of pi, not 0.73.1", .dir.display())]
    WrongVersion {
        /// The package directory.
        dir: PathBuf,
        /// Its version (empty when `package.json` has none).
        version: String,
    },
}

/// The process's environment, as the `env` parameters below take it.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The package directory `env` names ([`PACKAGE_VAR`]), else the install of `.ci/ensure-pi073`;
/// not checked.
pub fn package_dir(env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    match env(PACKAGE_VAR).filter(|dir| !dir.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/pi073/node_modules/@mariozechner/pi-coding-agent")
        }
    }
}

/// The `version` of the npm package in `dir` (empty when its `package.json` has none).
///
/// # Errors
/// When `dir/package.json` cannot be read or is not JSON.
pub fn package_version(dir: &Path) -> Result<String, Pi073Error> {
    let path = dir.join("package.json");
    let text = std::fs::read_to_string(&path).map_err(|_| Pi073Error::Missing(path.clone()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|source| Pi073Error::Unparsable { path, source })?;
    Ok(json["version"].as_str().unwrap_or_default().to_owned())
}

/// [`package_dir`], checked to hold pi [`VERSION`].
///
/// # Errors
/// When it has no `package.json` or another version.
pub fn package(env: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, Pi073Error> {
    let dir = package_dir(env);
    let version = package_version(&dir)?;
    if version != VERSION {
        return Err(Pi073Error::WrongVersion { dir, version });
    }
    Ok(dir)
}

/// `found`'s value, or `None` after printing `skipped: <what> (<why>)` — unless `env` has
/// [`REQUIRE_VAR`], which panics with `PI_REQUIRE_PI073 is set, but <what> cannot run: <why>`.
pub fn or_skip<T, E: Display>(what: &str, found: Result<T, E>, env: &dyn Fn(&str) -> Option<String>) -> Option<T> {
    match found {
        Ok(value) => Some(value),
        Err(why) => {
            assert!(
                env(REQUIRE_VAR).is_none(),
                "{REQUIRE_VAR} is set, but {what} cannot run: {why}"
            );
            println!("skipped: {what} ({why})");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
    }

    #[test]
    fn the_variable_wins_and_an_empty_one_counts_as_unset() {
        assert_eq!(package_dir(&env_of(&[(PACKAGE_VAR, "/p")])), Path::new("/p"));
        let fallback = package_dir(&env_of(&[(PACKAGE_VAR, "")]));
        assert!(
            fallback.ends_with(".ci/pi073/node_modules/@mariozechner/pi-coding-agent"),
            "{}",
            fallback.display()
        );
    }

    #[test]
    fn only_version_0_73_1_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_str().unwrap().to_owned();
        let env = move |name: &str| (name == PACKAGE_VAR).then(|| path.clone());
        assert!(matches!(package(&env), Err(Pi073Error::Missing(_))));
        std::fs::write(dir.path().join("package.json"), "{").unwrap();
        assert!(matches!(package(&env), Err(Pi073Error::Unparsable { .. })));
        std::fs::write(dir.path().join("package.json"), r#"{"version": "0.74.0"}"#).unwrap();
        let error = package(&env).unwrap_err().to_string();
        assert_eq!(
            error,
            format!("{} is version 0.74.0 of pi, not 0.73.1", dir.path().display())
        );
        std::fs::write(dir.path().join("package.json"), r#"{"version": "0.73.1"}"#).unwrap();
        assert_eq!(package(&env).unwrap(), dir.path());
    }

    #[test]
    fn a_missing_package_skips_unless_it_is_required() {
        let missing: Result<(), &str> = Err("gone");
        assert_eq!(or_skip("pi", missing, &env_of(&[])), None);
        assert_eq!(or_skip("pi", Ok::<_, &str>(1), &env_of(&[(REQUIRE_VAR, "1")])), Some(1));
        let panic = std::panic::catch_unwind(|| or_skip("pi's RpcClient", missing, &env_of(&[(REQUIRE_VAR, "1")])))
            .unwrap_err();
        assert_eq!(
            panic.downcast_ref::<String>().unwrap(),
            "PI_REQUIRE_PI073 is set, but pi's RpcClient cannot run: gone"
        );
    }
}
