//! `grep` and `find` on a large tree, timed through the tools and, when installed, against `rg` and `fd`
//! run the way pi runs them (spawning them is allowed here, never in the crate).
//!
//! `cargo bench -p pi-tools --bench search` builds 500 directories × 100 files (50k files, a few lines each,
//! a quarter of them `.log` files excluded by a `.gitignore`) in a temporary directory; `cargo test --benches`
//! (no `--bench` argument) runs the same code on 5 × 100 files. Each figure is the median of several warm
//! runs. The tree holds an empty `.git` directory so that `fd` 8.x (which has no `--no-require-git`) also
//! applies the `.gitignore`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pi_agent_core::{AgentTool, ContentBlock, ToolContext};
use pi_tools::FindTool;
use pi_tools::GrepTool;
use pi_tools::ToolEnv;
use serde_json::{Value, json};

/// The ratio to rg/fd the budget allows (SPEC §8).
const BUDGET: f64 = 1.3;

/// Writes `dirs` × `files` small files under `root`.
fn generate(root: &Path, dirs: usize, files: usize) {
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".gitignore"), "*.log\ntarget/\n").unwrap();
    for d in 0..dirs {
        let dir = root.join(format!("pkg{:03}/src/mod{d:03}", d % 50));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..files {
            let n = d * files + f;
            let ext = ["rs", "txt", "md", "log"][f % 4];
            let special = if n.is_multiple_of(997) {
                format!("    let marker = NEEDLE_LITERAL_{n};\n")
            } else {
                String::new()
            };
            let handler = if n.is_multiple_of(1499) {
                format!("fn handler_{n}_special() {{}}\n")
            } else {
                String::new()
            };
            let text = format!(
                "// file {n} of the benchmark tree\n\
                 use std::collections::HashMap;\n\
                 \n\
                 fn item_{n}(input: &str) -> usize {{\n\
                 {special}    let mut counts = HashMap::new();\n\
                 \x20   for word in input.split_whitespace() {{\n\
                 \x20       *counts.entry(word).or_insert(0) += 1;\n\
                 \x20   }}\n\
                 \x20   counts.len()\n\
                 }}\n\
                 {handler}"
            );
            std::fs::write(dir.join(format!("file_{f:03}.{ext}")), text).unwrap();
        }
    }
}

/// The first executable called one of `names` on `PATH`.
fn which(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
    })
}

fn time(f: &mut impl FnMut()) -> Duration {
    let started = Instant::now();
    f();
    started.elapsed()
}

fn middle(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Median timings of `ours` and (when given) `theirs` over `runs` rounds after one warm-up round; the two
/// alternate within each round so that load changes on the machine hit both alike.
fn race(runs: usize, mut ours: impl FnMut(), theirs: Option<&mut dyn FnMut()>) -> (Duration, Option<Duration>) {
    let mut theirs = theirs;
    let mut ours_times = Vec::new();
    let mut their_times = Vec::new();
    for round in 0..=runs {
        let mine = time(&mut ours);
        let other = theirs.as_mut().map(|f| {
            let started = Instant::now();
            f();
            started.elapsed()
        });
        if round > 0 {
            ours_times.push(mine);
            their_times.extend(other);
        }
    }
    let theirs = (!their_times.is_empty()).then(|| middle(their_times));
    (middle(ours_times), theirs)
}

fn text(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|block| {
            if let ContentBlock::Text(t) = block {
                Some(t.text.as_str())
            } else {
                None
            }
        })
        .collect()
}

/// Runs a tool call to completion and returns its text.
fn call(rt: &tokio::runtime::Runtime, tool: &dyn AgentTool, args: &Value) -> String {
    let result = rt
        .block_on(tool.execute("bench", args.clone(), ToolContext::detached()))
        .unwrap();
    text(&result.content)
}

/// Runs `rg args` like pi: reads its JSON events and kills it once `limit` matches arrived.
fn spawn_until(program: &Path, args: &[&str], limit: usize) -> usize {
    use std::io::BufRead;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut matches = 0;
    for line in stdout.lines() {
        if line.unwrap().starts_with("{\"type\":\"match\"") {
            matches += 1;
            if matches == limit {
                break;
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    matches
}

/// Runs `program args` and returns its stdout.
fn spawn(program: &Path, args: &[&str]) -> Vec<u8> {
    let output = Command::new(program).args(args).stdin(Stdio::null()).output().unwrap();
    output.stdout
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

/// Prints one comparison line (`full`: a real measurement, checked against the budget).
fn report(full: bool, label: &str, ours: Duration, theirs: Option<(&str, Duration)>, missing: &str) {
    match theirs {
        Some((name, theirs)) => {
            let ratio = ours.as_secs_f64() / theirs.as_secs_f64();
            let verdict = match (full, ratio <= BUDGET) {
                (false, _) => " [smoke run, not a measurement]",
                (true, true) => "",
                (true, false) => " OVER BUDGET",
            };
            println!(
                "{label}: ours {} ms, {name} {} ms, ratio {ratio:.2} (budget ≤ {BUDGET}){verdict}",
                ms(ours),
                ms(theirs)
            );
        }
        None => println!(
            "{label}: ours {} ms; {missing} not installed: ratio not measured",
            ms(ours)
        ),
    }
}

fn main() {
    let full = std::env::args().any(|arg| arg == "--bench");
    let (dirs, runs, size) = if full { (500, 15, "50k") } else { (5, 1, "500") };
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let started = Instant::now();
    generate(&root, dirs, 100);
    println!(
        "tree: {dirs} dirs × 100 files in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let env = ToolEnv::new(&root);
    let grep = GrepTool::new(env.clone());
    let find = FindTool::new(env);
    let root_arg = root.to_str().unwrap();
    let rg = which(&["rg"]);
    let fd = which(&["fd", "fdfind"]);

    let cases: [(&str, Value, Vec<&str>); 2] = [
        (
            "grep literal",
            json!({"pattern": "NEEDLE_LITERAL_", "literal": true}),
            vec!["--fixed-strings"],
        ),
        ("grep regex", json!({"pattern": r"handler_\d+_spec[a-z]+\("}), vec![]),
    ];
    for (label, args, flags) in cases {
        let out = call(&rt, &grep, &args);
        let pattern = args["pattern"].as_str().unwrap();
        let mut argv = vec!["--json", "--line-number", "--color=never", "--hidden"];
        argv.extend(&flags);
        argv.extend(["--", pattern, root_arg]);
        if let Some(rg) = &rg {
            let found = spawn(rg, &argv);
            let rg_matches = String::from_utf8_lossy(&found).matches("\"type\":\"match\"").count();
            assert_eq!(rg_matches, out.lines().count(), "rg and grep disagree on {label}");
        }
        let mut run_rg = || drop(spawn(rg.as_deref().unwrap_or(Path::new("rg")), &argv));
        let (ours, theirs) = race(
            runs,
            || drop(call(&rt, &grep, &args)),
            rg.is_some().then_some(&mut run_rg as &mut dyn FnMut()),
        );
        let theirs = theirs.map(|t| ("rg", t));
        report(
            full,
            &format!("{label} {size} files ({} matches)", out.lines().count()),
            ours,
            theirs,
            "rg",
        );
    }

    // A common pattern: the default limit of 100 stops both early (pi kills rg after 100 match events).
    let args = json!({"pattern": "HashMap"});
    let out = call(&rt, &grep, &args);
    let argv = [
        "--json",
        "--line-number",
        "--color=never",
        "--hidden",
        "--",
        "HashMap",
        root_arg,
    ];
    let mut run_rg = || assert_eq!(spawn_until(rg.as_deref().unwrap_or(Path::new("rg")), &argv, 100), 100);
    let (ours, theirs) = race(
        runs,
        || drop(call(&rt, &grep, &args)),
        rg.is_some().then_some(&mut run_rg as &mut dyn FnMut()),
    );
    let shown = out.lines().filter(|line| line.contains(": ")).count();
    report(
        full,
        &format!("grep common {size} files ({shown} of many matches)"),
        ours,
        theirs.map(|t| ("rg", t)),
        "rg",
    );

    let finds = [("find *.rs", "*.rs", "1000"), ("find one name", "file_042.md", "1000")];
    for (label, pattern, limit) in finds {
        let args = json!({"pattern": pattern});
        let out = call(&rt, &find, &args);
        let listed = out.lines().take_while(|line| !line.is_empty()).count();
        let argv = [
            "--glob",
            "--color=never",
            "--hidden",
            "--max-results",
            limit,
            "--",
            pattern,
            root_arg,
        ];
        if let Some(fd) = &fd {
            let found = spawn(fd, &argv);
            let fd_lines = String::from_utf8_lossy(&found)
                .lines()
                .filter(|l| !l.contains("/.git"))
                .count();
            assert_eq!(fd_lines, listed, "fd and find disagree on {label}");
        }
        let mut run_fd = || drop(spawn(fd.as_deref().unwrap_or(Path::new("fd")), &argv));
        let (ours, theirs) = race(
            runs,
            || drop(call(&rt, &find, &args)),
            fd.is_some().then_some(&mut run_fd as &mut dyn FnMut()),
        );
        let theirs = theirs.map(|t| ("fd", t));
        report(
            full,
            &format!("{label} {size} files ({listed} results)"),
            ours,
            theirs,
            "fd",
        );
    }
}
