//! `cargo xtask`: project automation for the pi workspace. Run `cargo xtask help` or see
//! `docs/xtask.md`.

use std::process::ExitCode;

const USAGE: &str = "\
cargo xtask: project automation for the pi workspace

Usage: cargo xtask <COMMAND> [ARGS]

Commands:
  ci       the one test command; runs, stopping at the first failure:
             cargo fmt --all -- --check
             cargo clippy --workspace --all-targets -- -D warnings
             cargo test --workspace --all-targets   (INSTA_UPDATE=no CI=true)
             cargo test --workspace --doc           (INSTA_UPDATE=no CI=true)
             cargo run -p pi-coding-agent --example embed
             snapshot check (no pending or unreferenced insta snapshots)
             layers check
             cargo doc --workspace --no-deps        (RUSTDOCFLAGS=\"-D warnings\")
  layers   check the dependencies between our crates against SPEC §2
           (allowed edges only, no cycles, only pi-cli has a binary,
            no clap, crossterm or ratatui under pi-coding-agent)
  bench    run the budgeted benchmarks (agent loop, grep/find, ast_edit, pi binary, sessions) [ARGS]
  fuzz     run the fuzz targets (tests named fuzz_*) longer: [--cases N] (default 2000 per target)
           [--target NAME] (only fuzz_NAME*); `cargo xtask ci` runs them with 64 cases each
  record-pi  run the conformance scenarios through pi 0.73.1 and write their goldens
           (crates/cli/tests/data/conformance; needs Node >= 20, not run in CI):
           [--pi DIR of @mariozechner/pi-coding-agent] [--node NODE] [--scenario NAME]...
  models   generate pi-ai 0.73.1's model catalog (crates/ai/src/registry/builtin/catalog.rs; needs
           Node >= 20): [--pi-ai DIR of @mariozechner/pi-ai] [--node NODE] [--check]
  help     print this text

See docs/xtask.md.
";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let command = args.next();
    let rest: Vec<String> = args.collect();
    let root = xtask::workspace_root();
    let wants_help = rest.iter().any(|arg| arg == "-h" || arg == "--help");

    let result = match command.as_deref() {
        Some("help" | "-h" | "--help") => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some("ci" | "layers") if wants_help => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some(command @ ("ci" | "layers")) if !rest.is_empty() => {
            eprintln!(
                "error: `cargo xtask {command}` takes no arguments (got {})\n\n{USAGE}",
                rest.join(" ")
            );
            return ExitCode::from(2);
        }
        Some("ci") => xtask::ci::run(&root),
        Some("layers") => xtask::layers::run(&root),
        Some("bench") => xtask::bench::run(&root, &rest),
        Some("fuzz") if wants_help => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some("fuzz") => xtask::fuzz::run(&root, &rest),
        Some("record-pi") if wants_help => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some("record-pi") => xtask::record_pi::run_command(&root, &rest),
        Some("models") if wants_help => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some("models") => xtask::models::run_command(&root, &rest),
        Some(other) => {
            eprintln!("error: unknown command `{other}`\n\n{USAGE}");
            return ExitCode::from(2);
        }
        None => {
            eprint!("{USAGE}");
            return ExitCode::from(2);
        }
    };

    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
