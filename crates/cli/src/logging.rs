//! pi's debug log: `PI_LOG` (any `tracing` filter directive: `debug`, `pi_ai=trace,info`, …), or
//! `RUST_LOG` when `PI_LOG` is unset or empty, turns on a subscriber that appends to
//! `<agent dir>/logs/pi.log` ([`log_file`]). Without either nothing is installed, so the spans and
//! events of the crates cost next to nothing. The log never goes to stdout or stderr: the
//! interactive mode owns the terminal, and RPC and JSON modes own stdout.
//!
//! Secrets: the crates never put an API key, a request header or body, a tool's arguments or
//! environment values into a span or an event, and every error text they log has been through
//! [`pi_ai::redact`] with the request's key. As a second line, every line written here goes
//! through that same redactor with every secret registered with it so far ([`pi_ai::register_secret`]:
//! keys, `models.json` header values, tokens, resolved when a request is made) and the secrets
//! known at startup ([`known_secrets`]): `--api-key` and the values of environment variables whose
//! names say they hold a key, token, secret or password.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::fmt::format::FmtSpan;

/// The environment variable that turns the debug log on, with a filter directive.
pub const LOG_ENV: &str = "PI_LOG";

/// Read instead of [`LOG_ENV`] when that is unset or empty.
pub const FALLBACK_LOG_ENV: &str = "RUST_LOG";

/// Secrets shorter than this are not redacted (they would match ordinary text).
const MIN_SECRET_CHARS: usize = 8;

/// The log file under `agent_dir`: `logs/pi.log`.
///
/// ```
/// use std::path::Path;
/// assert_eq!(pi_cli::logging::log_file(Path::new("/home/ada/.pi/agent")), Path::new("/home/ada/.pi/agent/logs/pi.log"));
/// ```
pub fn log_file(agent_dir: &Path) -> PathBuf {
    agent_dir.join("logs").join("pi.log")
}

/// The filter directive `env` asks for: `PI_LOG`, else `RUST_LOG`; `None` when neither is set
/// (or both are empty).
///
/// ```
/// let env = |name: &str| (name == "RUST_LOG").then(|| "info".to_owned());
/// assert_eq!(pi_cli::logging::directive(&env).as_deref(), Some("info"));
/// assert_eq!(pi_cli::logging::directive(&|_: &str| None), None);
/// ```
pub fn directive(env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let non_empty = |name: &str| env(name).filter(|value| !value.trim().is_empty());
    non_empty(LOG_ENV).or_else(|| non_empty(FALLBACK_LOG_ENV))
}

/// Whether an environment variable called `name` holds a secret, by its name.
fn names_a_secret(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET", "PASSWORD"]
        .iter()
        .any(|word| name.contains(word))
}

/// The secrets known before any configuration is read: `api_key` (`--api-key`) and the values of
/// the variables in `vars` whose names contain `KEY`, `TOKEN`, `SECRET` or `PASSWORD`, longest
/// first (so that a key containing another is redacted whole).
pub fn known_secrets(api_key: Option<&str>, vars: impl IntoIterator<Item = (String, String)>) -> Vec<String> {
    let mut secrets: Vec<String> = vars
        .into_iter()
        .filter(|(name, _)| names_a_secret(name))
        .map(|(_, value)| value)
        .chain(api_key.map(str::to_owned))
        .filter(|value| value.chars().count() >= MIN_SECRET_CHARS)
        .collect();
    secrets.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
    secrets.dedup();
    secrets
}

/// `text` with every one of `secrets` replaced by `[redacted]` ([`pi_ai::redact`]).
pub fn redact_all(text: &str, secrets: &[String]) -> String {
    secrets
        .iter()
        .fold(text.to_owned(), |text, secret| pi_ai::redact(&text, Some(secret)))
}

/// The log file, shared by every thread; each formatted line is redacted, then appended whole.
struct LogWriter {
    file: Mutex<File>,
    secrets: Vec<String>,
}

/// One line (tracing-subscriber formats an event into a buffer and writes it at once).
struct LineWriter<'a> {
    log: &'a LogWriter,
}

impl Write for LineWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = redact_all(&String::from_utf8_lossy(buf), &self.log.secrets);
        // And every secret resolved since start-up (models.json keys and headers, tokens).
        let text = pi_ai::redact(&text, None);
        let mut file = self.log.file.lock().unwrap_or_else(PoisonError::into_inner);
        file.write_all(text.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.log.file.lock().unwrap_or_else(PoisonError::into_inner).flush()
    }
}

impl<'a> MakeWriter<'a> for LogWriter {
    type Writer = LineWriter<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        LineWriter { log: self }
    }
}

/// Why the debug log could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// Neither `HOME` nor `PI_CODING_AGENT_DIR` is set: there is no agent directory.
    #[error("{LOG_ENV} is set, but there is no agent directory for the log (set HOME or PI_CODING_AGENT_DIR)")]
    NoAgentDir,
    /// The log file (or its directory) could not be opened.
    #[error("cannot open the debug log {}: {source}", .path.display())]
    Open {
        /// The log file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A `tracing` subscriber is installed already (by a program embedding pi).
    #[error("a tracing subscriber is installed already; {LOG_ENV} is ignored")]
    AlreadyInstalled,
}

/// Installs the debug log when `env` asks for one ([`directive`]): appends to
/// [`log_file`]`(agent_dir)`, redacting `secrets`. `Ok(None)` (and nothing installed) without
/// `PI_LOG` or `RUST_LOG`; `Ok(Some(path))` once the log is on. Filter directives that do not
/// parse are skipped (the others apply).
pub fn init(
    env: &dyn Fn(&str) -> Option<String>,
    agent_dir: Option<&Path>,
    secrets: Vec<String>,
) -> Result<Option<PathBuf>, LogError> {
    let Some(directive) = directive(env) else {
        return Ok(None);
    };
    let agent_dir = agent_dir.ok_or(LogError::NoAgentDir)?;
    let path = log_file(agent_dir);
    let open = || {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::OpenOptions::new().create(true).append(true).open(&path)
    };
    let file = open().map_err(|source| LogError::Open {
        path: path.clone(),
        source,
    })?;
    let writer = LogWriter {
        file: Mutex::new(file),
        secrets,
    };
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::builder().parse_lossy(&directive))
        .with_writer(writer)
        .with_ansi(false)
        .with_span_events(FmtSpan::NEW | FmtSpan::CLOSE)
        .finish();
    tracing::subscriber::set_global_default(subscriber).map_err(|_| LogError::AlreadyInstalled)?;
    tracing::info!(version = crate::VERSION, pid = std::process::id(), filter = %directive, "pi debug log started");
    Ok(Some(path))
}

/// [`init`] for the `pi` process: its environment, the agent directory (`agent_dir`, else
/// `$PI_CODING_AGENT_DIR` or `~/.pi/agent`) and the secrets of [`known_secrets`] with `api_key`
/// (`--api-key`). Reads nothing more than `PI_LOG` and `RUST_LOG` when neither is set. A log that
/// cannot be set up is said once on stderr, before any mode owns the terminal.
pub fn init_for_process(api_key: Option<&str>, agent_dir: Option<&Path>) {
    let env = |name: &str| std::env::var(name).ok();
    if directive(&env).is_none() {
        return;
    }
    let agent_dir = agent_dir
        .map(Path::to_path_buf)
        .or_else(|| pi_coding_agent::config::AgentPaths::from_process_env().map(|paths| paths.agent_dir));
    let vars =
        std::env::vars_os().filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)));
    match init(&env, agent_dir.as_deref(), known_secrets(api_key, vars)) {
        Ok(_) | Err(LogError::AlreadyInstalled) => {}
        Err(error) => eprintln!("pi: {error}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_come_from_the_names_that_say_so() {
        let vars = [
            ("OPENAI_API_KEY", "sk-openai-0123456789"),
            ("GH_TOKEN", "ghp_abcdefghij"),
            ("HOME", "/home/ada/very/long/path"),
            ("MY_PASSWORD", "short"),
        ]
        .map(|(name, value)| (name.to_owned(), value.to_owned()));
        let secrets = known_secrets(Some("sk-from-the-command-line"), vars);
        assert_eq!(
            secrets,
            ["sk-from-the-command-line", "sk-openai-0123456789", "ghp_abcdefghij"]
        );
        assert_eq!(
            redact_all("key=sk-openai-0123456789 home=/home/ada", &secrets),
            "key=[redacted] home=/home/ada"
        );
    }

    #[test]
    fn pi_log_comes_before_rust_log() {
        let both = |name: &str| match name {
            "PI_LOG" => Some("pi_ai=debug".to_owned()),
            "RUST_LOG" => Some("trace".to_owned()),
            _ => None,
        };
        assert_eq!(directive(&both).as_deref(), Some("pi_ai=debug"));
        let empty = |name: &str| (name == "PI_LOG").then(String::new);
        assert_eq!(directive(&empty), None);
    }
}
