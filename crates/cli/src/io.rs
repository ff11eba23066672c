//! The standard streams of a run and the one way a line is written to them.

use std::io::{IsTerminal, Read, Write};
use std::sync::{Arc, Mutex};

use crate::args::{Args, Mode};

/// Where output goes: stdout or stderr, or a buffer in tests.
pub type Output = Arc<Mutex<dyn Write + Send>>;

/// The standard streams of a run, replaceable in tests.
pub struct Io {
    /// Standard output.
    pub stdout: Output,
    /// Standard error.
    pub stderr: Output,
    /// Piped standard input, already read (`None` when stdin is a terminal or unused).
    pub stdin: Option<String>,
    /// Whether stdin and stdout are terminals (the interactive mode needs both).
    pub interactive: bool,
}

impl Io {
    /// The process's streams. Piped stdin is read when `args` may send it as a prompt: not in RPC
    /// mode (stdin carries commands), nor for `--demo` or `--list-models`.
    pub fn process(args: &Args) -> Io {
        let interactive = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
        let wants_prompt = args.mode() != Mode::Rpc && !args.demo && args.list_models.is_none();
        let stdin = if wants_prompt && !std::io::stdin().is_terminal() {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).ok().map(|_| text)
        } else {
            None
        };
        Io {
            stdout: Arc::new(Mutex::new(std::io::stdout())),
            stderr: Arc::new(Mutex::new(std::io::stderr())),
            stdin,
            interactive,
        }
    }
}

/// Writes `text` to `output` with every secret redacted ([`pi_ai::redact`]), then a newline when
/// `newline`, and flushes: the one way pi's modes write to stdout and stderr. A closed stream
/// (`pi -p … | head`) is ignored, never a crash.
pub(crate) fn write_redacted(output: &Output, text: &str, newline: bool) {
    let text = pi_ai::redact(text, None);
    let mut out = output.lock().unwrap_or_else(|p| p.into_inner());
    let _ = out.write_all(text.as_bytes());
    if newline {
        let _ = out.write_all(b"\n");
    }
    let _ = out.flush();
}

/// Writes `text` as a line (a newline is added unless it ends with one), every secret redacted.
pub(crate) fn say(output: &Output, text: &str) {
    write_redacted(output, text, !text.ends_with('\n'));
}
