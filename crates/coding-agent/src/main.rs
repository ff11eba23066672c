//! `pi`: the coding agent's command-line entry point.
//!
//! Today it runs the offline demo of [`pi_coding_agent::demo`]; pi's full CLI (providers,
//! sessions, print / JSON / RPC and interactive modes) is being built on top of the same crates.

use std::io::{Read, Write};
use std::process::ExitCode;

const HELP: &str = "pi - a coding agent (Rust implementation)

Usage: pi [options] [message...]

Options:
  -h, --help     Show this help
  -v, --version  Show the version

This build's command line does not select a model provider yet, so pi runs its offline
demo model: the real agent loop, streaming and tool dispatch, driven by a scripted model.
";

fn main() -> ExitCode {
    let mut words = Vec::new();
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "-h" | "--help" => {
                print!("{HELP}");
                return ExitCode::SUCCESS;
            }
            "-v" | "--version" => {
                println!("{}", env!("CARGO_PKG_VERSION"));
                return ExitCode::SUCCESS;
            }
            flag if flag.starts_with('-') && flag.len() > 1 => {
                eprintln!("Error: unknown option {flag}\n\n{HELP}");
                return ExitCode::from(2);
            }
            _ => words.push(arg),
        }
    }
    let mut prompt = words.join(" ");
    if !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        let mut piped = String::new();
        if std::io::stdin().read_to_string(&mut piped).is_ok() && !piped.trim().is_empty() {
            prompt = if prompt.is_empty() {
                piped
            } else {
                format!("{prompt}\n{piped}")
            };
        }
    }
    if prompt.trim().is_empty() {
        prompt = "hello".to_owned();
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("Error: {error}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!("This build's CLI does not select a model provider yet; running pi's offline demo model.");
    let outcome = runtime.block_on(pi_coding_agent::demo::run(&prompt, |text| {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(text.as_bytes());
        let _ = stdout.flush();
    }));
    match outcome {
        Ok(_) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("Error: {error}");
            ExitCode::FAILURE
        }
    }
}
