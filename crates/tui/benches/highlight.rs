//! Code highlighting: the one-time load of the syntaxes (what `pi_tui::highlight::preload` moves
//! off the first frame), highlighting a 500-line TypeScript file with the dark theme from scratch
//! (each run on a new thread, whose kept highlights are empty), and again once the same thread
//! has highlighted its first 499 lines (a streamed code block's next frame).
//!
//! `cargo bench -p pi-tui --bench highlight` prints the load time and medians of 7 runs;
//! `cargo test --benches` (no `--bench` argument) runs the same code once.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use pi_tui::Theme;
use pi_tui::highlight::{highlight, is_supported};

fn source(lines: usize) -> String {
    let block = [
        "// A comment about the next function.",
        "export async function read(path: string, limit = 2000): Promise<number> {",
        "  const text = `template ${path}`;",
        "  return text.length * 2; /* block */",
        "}",
    ];
    block.iter().cycle().take(lines).copied().collect::<Vec<_>>().join("\n")
}

fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

fn main() {
    let bench = std::env::args().any(|arg| arg == "--bench");
    let started = Instant::now();
    assert!(is_supported("typescript"));
    println!("highlight: syntaxes loaded in {:.1?}", started.elapsed());
    let code = source(500);
    let rounds = if bench { 7 } else { 1 };
    let fresh: Vec<Duration> = (0..rounds)
        .map(|_| {
            let code = code.clone();
            std::thread::spawn(move || {
                let started = Instant::now();
                assert_eq!(highlight(&code, "ts", &Theme::dark()).len(), 500);
                started.elapsed()
            })
            .join()
            .unwrap()
        })
        .collect();
    println!(
        "highlight: 500 TypeScript lines in {:.1?} (median of {rounds})",
        median(fresh)
    );
    let shorter = source(499);
    let grown: Vec<Duration> = (0..rounds)
        .map(|_| {
            let (shorter, code) = (shorter.clone(), code.clone());
            std::thread::spawn(move || {
                highlight(&shorter, "ts", &Theme::dark());
                let started = Instant::now();
                assert_eq!(highlight(&code, "ts", &Theme::dark()).len(), 500);
                started.elapsed()
            })
            .join()
            .unwrap()
        })
        .collect();
    println!(
        "highlight: the same after its first 499 lines in {:.1?} (median of {rounds})",
        median(grown)
    );
}
