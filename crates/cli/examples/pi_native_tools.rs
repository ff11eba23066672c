//! `pi` with the example custom tools built in as native Rust tools — how a program embeds pi with
//! its own tools. Run `cargo run -p pi-coding-agent --example pi_native_tools -- -p "…"`; the tools
//! are `hello`, `todo`, `tic_tac_toe` / `tic_tac_toe_see_board` and `batch_rename_preview`
//! (sources in `examples/custom-tools/*/native.rs`).

#[path = "../../../examples/custom-tools/batch-rename-preview/native.rs"]
mod batch_rename_preview;
#[path = "../../../examples/custom-tools/hello/native.rs"]
mod hello;
#[path = "../../../examples/custom-tools/tic-tac-toe/native.rs"]
mod tic_tac_toe;
#[path = "../../../examples/custom-tools/todo/native.rs"]
mod todo;

fn main() -> std::process::ExitCode {
    let options = pi_cli::RunOptions {
        factories: vec![
            hello::factory(),
            todo::factory(),
            tic_tac_toe::factory(),
            batch_rename_preview::factory(),
        ],
        ..Default::default()
    };
    pi_cli::main_with(options)
}
