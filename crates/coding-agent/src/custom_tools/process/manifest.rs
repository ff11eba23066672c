//! `tool.json`: how to start a process tool.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::spec::{DEFAULT_TIMEOUT, ProcessSpec};

/// Why a `tool.json` is not a valid manifest; the text names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestError {
    /// Not JSON, or not the manifest's shape (a missing `command`, a field of the wrong type).
    #[error("Invalid {}: {source}", .manifest.display())]
    Syntax {
        /// The manifest's path.
        manifest: PathBuf,
        /// What serde_json says.
        #[source]
        source: serde_json::Error,
    },
    /// `command` is empty.
    #[error("Invalid {}: \"command\" must not be empty", .manifest.display())]
    EmptyCommand {
        /// The manifest's path.
        manifest: PathBuf,
    },
    /// `timeout` is 0.
    #[error("Invalid {}: \"timeout\" must be a positive number of milliseconds", .manifest.display())]
    ZeroTimeout {
        /// The manifest's path.
        manifest: PathBuf,
    },
}

/// The manifest as written; unknown fields are allowed (a `$schema`, a description for humans).
#[derive(Deserialize)]
struct Manifest {
    command: String,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    timeout: Option<u64>,
}

/// The process described by the manifest `text` read from `manifest` in the tool directory `dir`.
///
/// ```
/// use std::path::Path;
/// use pi_coding_agent::custom_tools::process::parse_manifest;
///
/// let text = r#"{"command": "./tool.sh", "args": ["--serve"], "timeout": 5000}"#;
/// let spec = parse_manifest(Path::new("/tools/demo"), Path::new("/tools/demo/tool.json"), text).unwrap();
/// assert_eq!(spec.program, Path::new("/tools/demo/./tool.sh"));
/// assert_eq!(spec.timeout.as_secs(), 5);
/// assert_eq!(spec.label, "./tool.sh --serve");
///
/// let error = parse_manifest(Path::new("/t"), Path::new("/t/tool.json"), "{}").unwrap_err();
/// assert_eq!(error.to_string(), "Invalid /t/tool.json: missing field `command` at line 1 column 2");
/// ```
pub fn parse_manifest(dir: &Path, manifest: &Path, text: &str) -> Result<ProcessSpec, ManifestError> {
    let manifest = manifest.to_path_buf();
    let parsed: Manifest = serde_json::from_str(text).map_err(|source| ManifestError::Syntax {
        manifest: manifest.clone(),
        source,
    })?;
    if parsed.command.trim().is_empty() {
        return Err(ManifestError::EmptyCommand { manifest });
    }
    let timeout = match parsed.timeout {
        None => DEFAULT_TIMEOUT,
        Some(0) => return Err(ManifestError::ZeroTimeout { manifest }),
        Some(millis) => Duration::from_millis(millis),
    };
    let label = std::iter::once(parsed.command.as_str())
        .chain(parsed.args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    Ok(ProcessSpec {
        program: program_path(dir, &parsed.command),
        args: parsed.args,
        env: parsed.env,
        dir: dir.to_path_buf(),
        timeout,
        label,
    })
}

/// A path with a separator is relative to the tool's directory; a bare name is looked up on
/// `PATH` when the process starts.
fn program_path(dir: &Path, command: &str) -> PathBuf {
    let path = Path::new(command);
    if path.is_absolute() || path.components().count() == 1 {
        path.to_path_buf()
    } else {
        dir.join(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_defaults() {
        let dir = Path::new("/tools/hello");
        let manifest = dir.join("tool.json");
        let spec = parse_manifest(dir, &manifest, r#"{"command": "python3", "args": ["tool.py"]}"#).unwrap();
        assert_eq!(spec.program, PathBuf::from("python3"));
        assert_eq!(spec.dir, dir);
        assert_eq!(spec.timeout, DEFAULT_TIMEOUT);
        assert_eq!(spec.label, "python3 tool.py");
        let spec = parse_manifest(dir, &manifest, r#"{"command": "bin/tool", "env": {"A": "1"}}"#).unwrap();
        assert_eq!(spec.program, dir.join("bin/tool"));
        assert_eq!(spec.env["A"], "1");
        let spec = parse_manifest(dir, &manifest, r#"{"command": "/usr/bin/env"}"#).unwrap();
        assert_eq!(spec.program, PathBuf::from("/usr/bin/env"));
    }

    #[test]
    fn errors_name_the_file() {
        let dir = Path::new("/t");
        let manifest = dir.join("tool.json");
        let cases = [
            ("", "Invalid /t/tool.json: EOF while parsing a value at line 1 column 0"),
            (
                r#"{"command": ""}"#,
                "Invalid /t/tool.json: \"command\" must not be empty",
            ),
            (
                r#"{"command": "x", "timeout": 0}"#,
                "Invalid /t/tool.json: \"timeout\" must be a positive number of milliseconds",
            ),
            (
                r#"{"command": "x", "args": "tool.py"}"#,
                "Invalid /t/tool.json: invalid type: string \"tool.py\", expected a sequence at line 1 column 34",
            ),
        ];
        for (text, error) in cases {
            assert_eq!(
                parse_manifest(dir, &manifest, text).unwrap_err().to_string(),
                error,
                "{text}"
            );
        }
    }
}
