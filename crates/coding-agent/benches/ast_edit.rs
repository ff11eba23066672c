//! `ast_edit` preview and apply of one rewrite (`console.log($$$ARGS)` → `logger.info($$$ARGS)`) over a generated
//! TypeScript tree, timed through the tool and, when the `ast-grep` CLI is installed, against
//! `ast-grep run` on the same tree (spawning it is allowed here, never in the crate; `sg` is never used
//! because on many systems it is another program).
//!
//! `cargo bench -p pi-coding-agent --bench ast_edit` builds 5 000 files in 100 directories (about 40
//! lines each; every 8th file holds two `console.log` calls, so 625 files and 1 250 replacements); `cargo
//! test --benches` (no `--bench` argument) runs the same code once on 80 files. Figures are medians of
//! several runs after a warm-up; ours and theirs alternate within each round.
//!
//! - preview: our preview (walk, read, parse, match, text) against `ast-grep run -p … -r … -l ts <dir>`,
//!   which prints the same rewrites as a diff and writes nothing. Files without the pattern's literal
//!   text (`console`) are not parsed by us; a second rewrite (`this.items.get($ID)` →
//!   `this.lookup($ID)`, text present in every file) measures the preview when every file is parsed;
//! - apply: our preview followed by the apply (re-read, all-or-nothing write with fsync) against
//!   `ast-grep run -p … -r … -l ts -U <dir>`, each on a fresh copy of the tree.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pi_agent_core::{AgentTool, ToolContext};
use pi_coding_agent::ast::AstEditTool;
use pi_coding_agent::resolve::PendingActionStore;
use serde_json::json;

/// The ratio to the ast-grep CLI the budget allows (SPEC §8).
const BUDGET: f64 = 1.3;

const PATTERN: &str = "console.log($$$ARGS)";
const REWRITE: &str = "logger.info($$$ARGS)";

/// A rewrite whose pattern text is in every file, so that every file is parsed (no pre-filter gain).
const DENSE_PATTERN: &str = "this.items.get($ID)";
const DENSE_REWRITE: &str = "this.lookup($ID)";

/// Writes `files` TypeScript files under `root`, spread over `files / 50` directories.
fn generate(root: &Path, files: usize) {
    std::fs::create_dir_all(root).unwrap();
    for n in 0..files {
        let dir = root.join(format!("pkg{:02}/src/mod{:03}", n % 10, n / 50));
        std::fs::create_dir_all(&dir).unwrap();
        let logs = if n % 8 == 0 {
            format!("    console.log(\"total\", total);\n    console.log(`item {n}`);\n")
        } else {
            String::new()
        };
        let text = format!(
            "import {{ helper{n} }} from \"./helper\";\n\
             \n\
             export interface Item{n} {{\n\
             \x20 id: number;\n\
             \x20 name: string;\n\
             \x20 tags: string[];\n\
             }}\n\
             \n\
             export function process{n}(items: Item{n}[]): number {{\n\
             \x20 let total = 0;\n\
             \x20 for (const item of items) {{\n\
             \x20   if (item.tags.includes(\"skip\")) {{\n\
             \x20     continue;\n\
             \x20   }}\n\
             \x20   total += item.id * {n};\n\
             \x20 }}\n\
             {logs}\
             \x20 return helper{n}(total);\n\
             }}\n\
             \n\
             export class Store{n} {{\n\
             \x20 private readonly items = new Map<number, Item{n}>();\n\
             \n\
             \x20 add(item: Item{n}): void {{\n\
             \x20   this.items.set(item.id, item);\n\
             \x20 }}\n\
             \n\
             \x20 find(id: number): Item{n} | undefined {{\n\
             \x20   return this.items.get(id);\n\
             \x20 }}\n\
             \n\
             \x20 get size(): number {{\n\
             \x20   return this.items.size;\n\
             \x20 }}\n\
             }}\n\
             \n\
             export const DEFAULTS{n} = {{ retries: 3, timeout: 1000, label: \"store-{n}\" }};\n"
        );
        std::fs::write(dir.join(format!("file{n:05}.ts")), text).unwrap();
    }
}

/// Copies the tree at `from` to `to` (not timed).
fn copy_tree(from: &Path, to: &Path) {
    let status = Command::new("cp").arg("-r").arg(from).arg(to).status().unwrap();
    assert!(status.success());
}

/// The `ast-grep` CLI if one is installed (checked by its `--version` output).
fn ast_grep_cli() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("ast-grep"))
        .filter(|candidate| candidate.is_file())
        .find(|candidate| {
            Command::new(candidate)
                .arg("--version")
                .output()
                .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains("ast-grep"))
        })
}

fn run_cli(cli: &Path, dir: &Path, (pattern, rewrite): (&str, &str), update: bool) {
    let mut command = Command::new(cli);
    command.args(["run", "-p", pattern, "-r", rewrite, "-l", "ts", "--color", "never"]);
    if update {
        command.arg("-U");
    }
    let status = command
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "ast-grep failed");
}

fn middle(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

/// Runs our preview of `(pattern, rewrite)` in `dir`; returns the pending action store holding it.
fn preview(rt: &tokio::runtime::Runtime, dir: &Path, (pattern, rewrite): (&str, &str)) -> PendingActionStore {
    let store = PendingActionStore::new();
    let tool = AstEditTool::new(dir.to_path_buf(), store.clone()).with_max_files(100_000);
    let args = json!({"ops": [{"pat": pattern, "out": rewrite}], "paths": ["."]});
    let result = rt
        .block_on(tool.execute("bench", args, ToolContext::detached()))
        .unwrap();
    assert_eq!(result.details["applied"], false);
    store
}

fn apply(rt: &tokio::runtime::Runtime, store: &PendingActionStore) {
    let action = store.pop().expect("a pending action");
    rt.block_on((action.apply)("bench".into(), None)).unwrap();
}

fn report(full: bool, label: &str, ours: Duration, theirs: Option<Duration>) {
    match theirs {
        Some(theirs) => {
            let ratio = ours.as_secs_f64() / theirs.as_secs_f64();
            let verdict = match (full, ratio <= BUDGET) {
                (false, _) => " [smoke run, not a measurement]",
                (true, true) => "",
                (true, false) => " OVER BUDGET",
            };
            println!(
                "{label}: ours {} ms, ast-grep {} ms, ratio {ratio:.2} (budget ≤ {BUDGET}){verdict}",
                ms(ours),
                ms(theirs)
            );
        }
        None => println!(
            "{label}: ours {} ms; ast-grep CLI not installed: ratio not measured",
            ms(ours)
        ),
    }
}

fn main() {
    let full = std::env::args().any(|arg| arg == "--bench");
    let (files, runs) = if full { (5000, 9) } else { (80, 1) };
    let tmp = tempfile::tempdir().unwrap();
    let work = std::fs::canonicalize(tmp.path()).unwrap();
    let pristine = work.join("pristine");
    let started = Instant::now();
    generate(&pristine, files);
    println!(
        "tree: {files} TypeScript files in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let cli = ast_grep_cli();

    // Sanity: both see the same rewrite.
    let store = preview(&rt, &pristine, (PATTERN, REWRITE));
    let details = store.peek().unwrap().details.unwrap();
    let expected = (files / 8 + usize::from(!files.is_multiple_of(8))) * 2;
    assert_eq!(details["totalReplacements"], expected);
    println!(
        "rewrite: {} replacements in {} files",
        details["totalReplacements"], details["filesTouched"]
    );

    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for round in 0..=runs {
        let started = Instant::now();
        drop(preview(&rt, &pristine, (PATTERN, REWRITE)));
        let mine = started.elapsed();
        let other = cli.as_ref().map(|cli| {
            let started = Instant::now();
            run_cli(cli, &pristine, (PATTERN, REWRITE), false);
            started.elapsed()
        });
        if round > 0 {
            ours.push(mine);
            theirs.extend(other);
        }
    }
    report(
        full,
        &format!("ast_edit preview, {files} files"),
        middle(ours),
        (!theirs.is_empty()).then(|| middle(theirs)),
    );

    let dense = preview(&rt, &pristine, (DENSE_PATTERN, DENSE_REWRITE));
    assert_eq!(dense.peek().unwrap().details.unwrap()["totalReplacements"], files);
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for round in 0..=runs {
        let started = Instant::now();
        drop(preview(&rt, &pristine, (DENSE_PATTERN, DENSE_REWRITE)));
        let mine = started.elapsed();
        let other = cli.as_ref().map(|cli| {
            let started = Instant::now();
            run_cli(cli, &pristine, (DENSE_PATTERN, DENSE_REWRITE), false);
            started.elapsed()
        });
        if round > 0 {
            ours.push(mine);
            theirs.extend(other);
        }
    }
    report(
        full,
        &format!("ast_edit preview, {files} files, all parsed ({files} replacements)"),
        middle(ours),
        (!theirs.is_empty()).then(|| middle(theirs)),
    );

    let mut ours = Vec::new();
    let mut applies = Vec::new();
    let mut theirs = Vec::new();
    for round in 0..=runs {
        let mine_dir = work.join(format!("ours{round}"));
        copy_tree(&pristine, &mine_dir);
        let started = Instant::now();
        let store = preview(&rt, &mine_dir, (PATTERN, REWRITE));
        let applying = Instant::now();
        apply(&rt, &store);
        let mine = started.elapsed();
        if round > 0 {
            applies.push(applying.elapsed());
        }
        let text = std::fs::read_to_string(mine_dir.join("pkg00/src/mod000/file00000.ts")).unwrap();
        assert!(text.contains("logger.info(\"total\", total)"), "{text}");
        let other = cli.as_ref().map(|cli| {
            let their_dir = work.join(format!("theirs{round}"));
            copy_tree(&pristine, &their_dir);
            let started = Instant::now();
            run_cli(cli, &their_dir, (PATTERN, REWRITE), true);
            let elapsed = started.elapsed();
            let text = std::fs::read_to_string(their_dir.join("pkg00/src/mod000/file00000.ts")).unwrap();
            assert!(
                text.contains("logger.info(\"total\", total)"),
                "ast-grep did not rewrite"
            );
            elapsed
        });
        if round > 0 {
            ours.push(mine);
            theirs.extend(other);
        }
    }
    println!(
        "ast_edit apply alone (re-read, lock, stage with fsync, rename): {} ms",
        ms(middle(applies))
    );
    report(
        full,
        &format!("ast_edit preview + apply, {files} files"),
        middle(ours),
        (!theirs.is_empty()).then(|| middle(theirs)),
    );
}
