//! `pi`: the coding agent's command-line entry point; everything lives in
//! [`pi_coding_agent::cli`].

fn main() -> std::process::ExitCode {
    pi_coding_agent::cli::main_with(pi_coding_agent::cli::RunOptions::default())
}
