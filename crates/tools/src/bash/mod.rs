//! The `bash` tool: runs a shell command in the working directory and returns its merged
//! stdout and stderr, tail-truncated to 2000 lines or 50KB with the full output saved to
//! `<tmpdir>/pi-bash-<16 hex>.log`.
//!
//! The command runs as `<shell> -c <command>` in its own process group with stdin closed; on
//! timeout or abort the whole group is killed. A non-zero exit, an abort or a timeout is an
//! error whose text still carries the output. With [`ToolEnv::sandbox`] set (beyond pi) the shell
//! starts in that [`crate::Sandbox`], and a sandbox the kernel cannot enforce is an error before
//! anything runs.
//!
//! ```no_run
//! # async fn demo() {
//! use pi_agent_core::{AgentTool, ToolContext};
//! use pi_tools::{BashTool, ToolEnv};
//!
//! let tool = BashTool::new(ToolEnv::new("/tmp"));
//! let args = serde_json::json!({"command": "echo hello", "timeout": 5});
//! let result = tool.execute("call-1", args, ToolContext::detached()).await.unwrap();
//! // result.content: one text block "hello\n"
//! # }
//! ```

mod error;
mod output;
mod process;

use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use pi_agent_core::{Lenient, ToolContext, ToolError, ToolParameters, ToolResult, TypedTool};
use serde::Deserialize;
use serde_json::{Map, Value, json};

pub use error::CommandError;

use crate::env::ToolEnv;
use output::format_output;
use process::{Ending, Spec};

/// The description pi gives the model.
const DESCRIPTION: &str = "Execute a bash command in the current working directory. Returns stdout and stderr. \
Output is truncated to last 2000 lines or 50KB (whichever is hit first). If truncated, full output is saved to \
a temp file. Optionally provide a timeout in seconds.";

/// The largest timeout pi accepts, in milliseconds (a 32-bit timer).
const MAX_TIMEOUT_MS: f64 = 2_147_483_647.0;

/// pi's `bash` tool.
pub struct BashTool {
    env: ToolEnv,
    parameters: ToolParameters,
}

impl BashTool {
    /// The tool running commands in `env.cwd` with `env`'s shell, prefix and variables.
    pub fn new(env: ToolEnv) -> Self {
        let parameters = ToolParameters::new(json!({
            "type": "object",
            "required": ["command"],
            "properties": {
                "command": {"type": "string", "description": "Bash command to execute"},
                "timeout": {"type": "number", "description": "Timeout in seconds (optional, no default timeout)"}
            }
        }));
        BashTool { env, parameters }
    }
}

/// Text of a call cut short, or never started, because the run was aborted.
const COMMAND_ABORTED: &str = "Command aborted";

/// The arguments of a `bash` call.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct BashParams {
    /// Bash command to execute.
    pub command: String,
    /// Timeout in seconds: `None` when absent or `null`, `Some(Lenient(None))` when it is no
    /// number (which the call rejects as an invalid timeout).
    #[serde(default)]
    pub timeout: Option<Lenient<f64>>,
}

/// Checks the `timeout` argument (seconds) like pi.
fn check_timeout(timeout: Option<Lenient<f64>>) -> Result<Option<f64>, ToolError> {
    let seconds = match timeout {
        None => return Ok(None),
        Some(Lenient(seconds)) => seconds.unwrap_or(f64::NAN),
    };
    if !seconds.is_finite() || seconds <= 0.0 {
        return Err(ToolError::new("Invalid timeout: must be a finite number of seconds"));
    }
    if seconds * 1000.0 > MAX_TIMEOUT_MS {
        return Err(ToolError::new("Invalid timeout: maximum is 2147483.647 seconds"));
    }
    Ok(Some(seconds))
}

/// [`check_timeout`] on a raw `timeout` argument.
#[cfg(test)]
fn parse_timeout(value: Option<&Value>) -> Result<Option<f64>, ToolError> {
    let timeout = match value {
        Some(value) => serde_json::from_value(value.clone())?,
        None => None,
    };
    check_timeout(timeout)
}

/// `<text>\n\n<status>`, or just the status when there is no text.
fn with_status(text: &str, status: &str) -> String {
    if text.is_empty() {
        status.to_owned()
    } else {
        format!("{text}\n\n{status}")
    }
}

#[async_trait]
impl TypedTool for BashTool {
    type Params = BashParams;

    fn name(&self) -> &str {
        "bash"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &ToolParameters {
        &self.parameters
    }

    /// Only `command` can fail to parse (`timeout` is lenient), so every parse error is about it.
    fn parse_arguments(&self, args: Value) -> Result<BashParams, ToolError> {
        crate::args::parse_or(args, "Invalid arguments: command must be a string")
    }

    fn aborted(&self) -> ToolError {
        ToolError::new(COMMAND_ABORTED)
    }

    async fn execute(&self, _call_id: &str, args: BashParams, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let command = args.command.as_str();
        let timeout = check_timeout(args.timeout)?;
        ctx.updates.update(ToolResult::default());
        let limit = timeout.and_then(|seconds| Duration::try_from_secs_f64(seconds).ok());
        let run = run_command(&self.env, command, limit, &ctx.cancel, ctx.updates.clone())
            .await
            .map_err(|error| ToolError::new(error.to_string()))?;
        let text = if run.output.is_empty() {
            "(no output)".to_owned()
        } else {
            run.output.clone()
        };
        if run.cancelled {
            return Err(ToolError::new(with_status(&run.output, COMMAND_ABORTED)));
        }
        if run.timed_out {
            let seconds = crate::node::js_number(timeout.unwrap_or_default());
            return Err(ToolError::new(with_status(
                &run.output,
                &format!("Command timed out after {seconds} seconds"),
            )));
        }
        if let Some(code) = run.exit_code.filter(|&code| code != 0) {
            return Err(ToolError::new(with_status(
                &text,
                &format!("Command exited with code {code}"),
            )));
        }
        let details = match &run.truncation {
            Some(truncation) => {
                let mut details = Map::new();
                details.insert("truncation".into(), serde_json::to_value(truncation)?);
                if let Some(path) = &run.full_output_path {
                    details.insert("fullOutputPath".into(), Value::String(path.display().to_string()));
                }
                Value::Object(details)
            }
            None => Value::Null,
        };
        Ok(ToolResult::text(text).with_details(details))
    }
}

/// What one command produced ([`run_command`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CommandOutput {
    /// The merged stdout and stderr, tail-truncated, with pi's notice naming the full-output file
    /// when it was truncated; empty when the command printed nothing.
    pub output: String,
    /// The exit code; `None` when a signal ended the shell or the run was stopped.
    pub exit_code: Option<i32>,
    /// The cancellation token fired and the process group was killed.
    pub cancelled: bool,
    /// The time limit elapsed and the process group was killed.
    pub timed_out: bool,
    /// How the output was truncated, when it was.
    pub truncation: Option<crate::truncate::TruncationResult>,
    /// The file holding the whole output, when it was truncated.
    pub full_output_path: Option<PathBuf>,
}

/// Runs `command` the way the `bash` tool does (the environment's shell and prefix, its own
/// process group, output merged, truncated and logged, partial results streamed to `updates`),
/// for callers that need the pieces rather than the tool's text — such as the RPC `bash` command.
/// The error is a command that could not start.
pub async fn run_command(
    env: &ToolEnv,
    command: &str,
    timeout: Option<Duration>,
    cancel: &tokio_util::sync::CancellationToken,
    updates: pi_agent_core::ToolUpdateSink,
) -> Result<CommandOutput, CommandError> {
    let cwd = env.cwd();
    if !tokio::fs::try_exists(cwd).await.unwrap_or(false) {
        return Err(CommandError::MissingCwd { cwd: cwd.to_owned() });
    }
    let full_command = match env.shell_command_prefix.as_deref() {
        Some(prefix) if !prefix.is_empty() => format!("{prefix}\n{command}"),
        _ => command.to_owned(),
    };
    let shell = process::resolve_shell(env.shell.as_deref()).await;
    let spec = Spec {
        shell: &shell,
        command: &full_command,
        cwd,
        env: &env.env,
        timeout,
        sandbox: env.sandbox.as_ref(),
    };
    let mut run = process::run(spec, cancel, updates).await?;
    let full_output = run.log.finish().await;
    let truncation = run.output.snapshot();
    let last_line_bytes = run.output.last_line_bytes();
    let output = format_output(&truncation, last_line_bytes, &full_output, "");
    let (exit_code, cancelled, timed_out) = match run.ending {
        Ending::Aborted => (None, true, false),
        Ending::TimedOut => (None, false, true),
        Ending::Exited(code) => (code, false, false),
    };
    Ok(CommandOutput {
        output,
        exit_code,
        cancelled,
        timed_out,
        full_output_path: full_output.ok().flatten().filter(|_| truncation.truncated),
        truncation: truncation.truncated.then_some(truncation),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_checked_like_pi() {
        let check = |value: Value| parse_timeout(Some(&value)).map_err(|e| e.message().to_owned());
        assert_eq!(check(json!(1)), Ok(Some(1.0)));
        assert_eq!(check(json!(2147483.647)), Ok(Some(2147483.647)));
        assert_eq!(check(Value::Null), Ok(None));
        let finite = Err("Invalid timeout: must be a finite number of seconds".to_owned());
        assert_eq!(check(json!(0)), finite);
        assert_eq!(check(json!(-1)), finite);
        assert_eq!(check(json!("soon")), finite);
        assert_eq!(
            check(json!(2147483.648)),
            Err("Invalid timeout: maximum is 2147483.647 seconds".to_owned())
        );
        assert_eq!(parse_timeout(None).map_err(|e| e.message().to_owned()), Ok(None));
    }

    #[test]
    fn status_is_appended_after_a_blank_line() {
        assert_eq!(with_status("", "Command aborted"), "Command aborted");
        assert_eq!(with_status("out", "Command aborted"), "out\n\nCommand aborted");
    }
}
