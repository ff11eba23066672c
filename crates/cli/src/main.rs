//! `pi`: the coding agent's command-line entry point; everything lives in [`pi_cli`].

fn main() -> std::process::ExitCode {
    pi_cli::main_with(pi_cli::RunOptions::default())
}
