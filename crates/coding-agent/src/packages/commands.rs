//! The user's `npm` and `git`, spawned (never reimplemented) the way pi runs them: output to the
//! terminal (or to stderr when stdout is a protocol), and pi's error texts when they fail.

use std::path::Path;
use std::process::Stdio;

use super::PackageError;

/// Where the output of `npm` and `git` goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChildOutput {
    /// The terminal, as `pi install` shows it.
    #[default]
    Inherit,
    /// Standard error: stdout carries JSON or RPC.
    Stderr,
    /// Nowhere.
    Null,
}

fn stdio_out(output: ChildOutput) -> Stdio {
    match output {
        ChildOutput::Inherit => Stdio::inherit(),
        ChildOutput::Stderr => stderr_stdio(),
        ChildOutput::Null => Stdio::null(),
    }
}

#[cfg(unix)]
fn stderr_stdio() -> Stdio {
    use std::os::fd::AsFd;
    std::io::stderr()
        .as_fd()
        .try_clone_to_owned()
        .map(Stdio::from)
        .unwrap_or_else(|_| Stdio::null())
}

#[cfg(not(unix))]
fn stderr_stdio() -> Stdio {
    Stdio::inherit()
}

fn spawn_error(program: &str, error: &std::io::Error) -> PackageError {
    let message = if error.kind() == std::io::ErrorKind::NotFound {
        format!("spawn {program} ENOENT")
    } else {
        format!("spawn {program}: {error}")
    };
    PackageError::Command { message }
}

/// Runs `program args` in `cwd` to its end; a failure is pi's `<program> <args> failed with code N`.
pub(crate) async fn run(
    program: &str,
    args: &[String],
    cwd: Option<&Path>,
    output: ChildOutput,
    env: &[(String, String)],
) -> Result<(), PackageError> {
    let mut command = tokio::process::Command::new(program);
    command
        .envs(env.iter().map(|(k, v)| (k, v)))
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdio_out(output))
        .stderr(match output {
            ChildOutput::Null => Stdio::null(),
            ChildOutput::Inherit | ChildOutput::Stderr => Stdio::inherit(),
        })
        .kill_on_drop(true);
    if let Some(cwd) = cwd {
        command.current_dir(cwd);
    }
    let status = command.status().await.map_err(|e| spawn_error(program, &e))?;
    if status.success() {
        return Ok(());
    }
    let code = status.code().map_or_else(|| "null".to_owned(), |c| c.to_string());
    Err(PackageError::Command {
        message: format!("{program} {} failed with code {code}", args.join(" ")),
    })
}

/// Runs `program args` and returns its standard output, trimmed; a failure carries its output.
pub(crate) async fn capture(
    program: &str,
    args: &[String],
    cwd: Option<&Path>,
    env: &[(String, String)],
) -> Result<String, PackageError> {
    let mut command = tokio::process::Command::new(program);
    command
        .envs(env.iter().map(|(k, v)| (k, v)))
        .args(args)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    if let Some(cwd) = cwd {
        command.current_dir(cwd);
    }
    let output = command.output().await.map_err(|e| spawn_error(program, &e))?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if output.status.success() {
        return Ok(stdout.trim().to_owned());
    }
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let status = output
        .status
        .code()
        .map_or_else(|| "signal unknown".to_owned(), |c| format!("code {c}"));
    Err(PackageError::Command {
        message: format!(
            "{program} {} failed with {status}: {}",
            args.join(" "),
            if stderr.is_empty() { stdout } else { stderr }
        ),
    })
}
