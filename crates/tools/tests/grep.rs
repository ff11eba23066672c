//! Scenario tests for the `grep` tool: match and context formatting, case and literal options, glob
//! filters, match limit and byte cap notices, long-line cutting, `.gitignore`/hidden/binary/`.git` handling,
//! single-file searches, and the errors for a bad regex, a bad glob, a missing path and an abort.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pi_agent_core::ToolContext;
use serde_json::{Value, json};
use support::{Fixture, Outcome};

async fn grep(fx: &Fixture, args: Value) -> Outcome {
    fx.call(&fx.tool("grep"), args).await
}

/// A small project used by most scenarios.
fn project() -> Fixture {
    Fixture::new(&[
        ("src/main.rs", "use std::io;\n\nfn main() {\n    run();\n}\n"),
        ("src/lib.rs", "pub fn run() {\n    println!(\"Hello\");\n}\n"),
        ("src/util/mod.rs", "pub fn helper() -> u32 {\n    42\n}\n"),
        ("README.md", "# Demo\nRun it with `cargo run`.\n"),
        ("notes.txt", "run (fast)\nrun.*\nRUN\n"),
    ])
}

#[tokio::test]
async fn basic_match() {
    let fx = project();
    let out = grep(&fx, json!({"pattern": "fn \\w+"})).await;
    insta::assert_snapshot!("grep_basic", fx.render(&out));
}

#[tokio::test]
async fn context_lines() {
    let fx = Fixture::new(&[("a.txt", "one\ntwo\nhit 1\nhit 2\nfive\nsix\nseven\nhit 3\n")]);
    let out = grep(&fx, json!({"pattern": "hit", "context": 1})).await;
    insta::assert_snapshot!("grep_context", fx.render(&out));
}

#[tokio::test]
async fn context_at_file_edges() {
    let fx = Fixture::new(&[("a.txt", "hit first\nmiddle\nhit last")]);
    let out = grep(&fx, json!({"pattern": "hit", "context": 5})).await;
    insta::assert_snapshot!("grep_context_edges", fx.render(&out));
}

#[tokio::test]
async fn ignore_case() {
    let fx = project();
    let out = grep(&fx, json!({"pattern": "run", "ignoreCase": true, "path": "notes.txt"})).await;
    insta::assert_snapshot!("grep_ignore_case", fx.render(&out));
    let sensitive = grep(&fx, json!({"pattern": "RUN", "path": "notes.txt"})).await;
    assert_eq!(sensitive.text(), "notes.txt:3: RUN");
}

#[tokio::test]
async fn literal_with_metacharacters() {
    let fx = project();
    let out = grep(&fx, json!({"pattern": "run.*", "literal": true})).await;
    insta::assert_snapshot!("grep_literal", fx.render(&out));
    let out = grep(&fx, json!({"pattern": "(fast)", "literal": true})).await;
    assert_eq!(out.text(), "notes.txt:1: run (fast)");
}

#[tokio::test]
async fn glob_filter() {
    let fx = Fixture::new(&[
        ("a.ts", "target\n"),
        ("a.js", "target\n"),
        ("src/b.spec.ts", "target\n"),
        ("src/deep/c.spec.ts", "target\n"),
        ("src/c.ts", "target\n"),
    ]);
    let name = grep(&fx, json!({"pattern": "target", "glob": "*.ts"})).await;
    let nested = grep(&fx, json!({"pattern": "target", "glob": "**/*.spec.ts"})).await;
    let negated = grep(&fx, json!({"pattern": "target", "glob": "!*.ts"})).await;
    let rendered = format!(
        "== glob *.ts\n{}\n== glob **/*.spec.ts\n{}\n== glob !*.ts\n{}",
        name.text(),
        nested.text(),
        negated.text()
    );
    insta::assert_snapshot!("grep_glob", rendered);
}

#[tokio::test]
async fn glob_is_relative_to_the_working_directory() {
    let fx = Fixture::new(&[("sub/a/x.txt", "target\n"), ("sub/b/x.txt", "target\n")]);
    let out = grep(&fx, json!({"pattern": "target", "path": "sub", "glob": "sub/a/*.txt"})).await;
    assert_eq!(out.text(), "a/x.txt:1: target");
}

#[tokio::test]
async fn match_limit() {
    let content: String = (1..=8).map(|i| format!("match {i}\n")).collect();
    let fx = Fixture::new(&[("a.txt", &content), ("b.txt", "match b\n")]);
    let out = grep(&fx, json!({"pattern": "match", "limit": 3})).await;
    insta::assert_snapshot!("grep_limit", fx.render(&out));
    let exact = grep(&fx, json!({"pattern": "match b", "limit": 1})).await;
    assert!(
        exact
            .text()
            .ends_with("[1 matches limit reached. Use limit=2 for more, or refine pattern]")
    );
    let zero = grep(&fx, json!({"pattern": "match", "limit": 0})).await;
    assert_eq!(zero.text().lines().next(), Some("a.txt:1: match 1"));
    assert!(zero.text().contains("[1 matches limit reached. Use limit=2 for more"));
}

#[tokio::test]
async fn default_limit_is_100() {
    let content: String = (1..=150).map(|i| format!("x{i}\n")).collect();
    let fx = Fixture::new(&[("a.txt", &content)]);
    let out = grep(&fx, json!({"pattern": "x"})).await;
    let text = out.text();
    assert_eq!(text.lines().filter(|l| l.starts_with("a.txt:")).count(), 100);
    assert!(text.ends_with("\n\n[100 matches limit reached. Use limit=200 for more, or refine pattern]"));
    assert_eq!(out.ok().details, json!({"matchLimitReached": 100}));
}

#[tokio::test]
async fn long_lines_are_cut() {
    let long = format!("needle {}\n", "x".repeat(600));
    let fx = Fixture::new(&[("long.txt", &long)]);
    let out = grep(&fx, json!({"pattern": "needle"})).await;
    insta::assert_snapshot!("grep_long_line", fx.render(&out));
}

#[tokio::test]
async fn byte_cap() {
    let line = format!("hit {}\n", "y".repeat(200));
    let fx = Fixture::new(&[("big.txt", &line.repeat(400))]);
    let out = grep(&fx, json!({"pattern": "hit", "limit": 1000})).await;
    let text = out.text();
    let (body, notice) = text.rsplit_once("\n\n").unwrap();
    assert!(body.len() <= 50 * 1024);
    assert!(body.len() + 220 > 50 * 1024, "the next whole line would not fit");
    let details = &out.ok().details;
    let rendered = format!(
        "first: {}\nlast: {}\nlines: {}\nbytes: {}\nnotice: {notice}\ndetails.truncation: {}",
        &body.lines().next().unwrap()[..20],
        &body.lines().last().unwrap()[..20],
        body.lines().count(),
        body.len(),
        serde_json::to_string_pretty(&{
            let mut t = details["truncation"].clone();
            t["content"] = json!("<kept text>");
            t
        })
        .unwrap()
    );
    insta::assert_snapshot!("grep_byte_cap", rendered);
    assert_eq!(details.as_object().unwrap().keys().collect::<Vec<_>>(), ["truncation"]);
}

#[tokio::test]
async fn gitignore_is_respected_without_a_repository() {
    let fx = Fixture::new(&[
        (".gitignore", "*.log\nbuild/\n"),
        ("app.txt", "secret\n"),
        ("debug.log", "secret\n"),
        ("build/out.txt", "secret\n"),
        ("sub/.ignore", "skip.txt\n"),
        ("sub/skip.txt", "secret\n"),
        ("sub/keep.txt", "secret\n"),
    ]);
    let out = grep(&fx, json!({"pattern": "secret"})).await;
    insta::assert_snapshot!("grep_gitignore", fx.render(&out));
}

#[tokio::test]
async fn hidden_files_are_searched_but_not_dot_git() {
    let fx = Fixture::new(&[
        (".env", "TOKEN=abc\n"),
        (".config/settings.toml", "token = 'abc'\n"),
        (".git/config", "token abc\n"),
        ("visible.txt", "abc\n"),
    ]);
    let out = grep(&fx, json!({"pattern": "abc"})).await;
    insta::assert_snapshot!("grep_hidden", fx.render(&out));
}

#[tokio::test]
async fn binary_files_are_skipped() {
    let fx = Fixture::new(&[("text.txt", "needle\n")]);
    fx.write("blob.bin", b"needle\0\x01\x02needle\n");
    let out = grep(&fx, json!({"pattern": "needle"})).await;
    insta::assert_snapshot!("grep_binary", fx.render(&out));
    // Named explicitly, a binary file is searched as text (rg --json reports its matches too).
    let named = grep(&fx, json!({"pattern": "needle", "path": "blob.bin"})).await;
    assert_eq!(named.text(), "blob.bin:1: needle\0\x01\x02needle");
}

#[tokio::test]
async fn single_file_path() {
    let fx = Fixture::new(&[
        (".gitignore", "*.log\n"),
        ("logs/app.log", "alpha\r\nbeta\r\nalpha again\r\n"),
    ]);
    let out = grep(
        &fx,
        json!({"pattern": "alpha", "path": "logs/app.log", "glob": "*.rs", "context": 1}),
    )
    .await;
    insta::assert_snapshot!("grep_single_file", fx.render(&out));
}

#[tokio::test]
async fn crlf_and_invalid_utf8_lines() {
    let fx = Fixture::empty();
    fx.write("w.txt", b"caf\xe9 match\r\nplain\r\n");
    let out = grep(&fx, json!({"pattern": "match"})).await;
    assert_eq!(out.text(), "w.txt:1: caf\u{FFFD} match");
}

#[tokio::test]
async fn no_matches() {
    let fx = project();
    let out = grep(&fx, json!({"pattern": "does-not-occur"})).await;
    insta::assert_snapshot!("grep_no_matches", fx.render(&out));
}

#[tokio::test]
async fn invalid_regex() {
    let fx = project();
    let out = grep(&fx, json!({"pattern": "fn (main"})).await;
    insta::assert_snapshot!("grep_invalid_regex", fx.render(&out));
}

#[tokio::test]
async fn invalid_glob() {
    let fx = project();
    let out = grep(&fx, json!({"pattern": "fn", "glob": "src/[a"})).await;
    insta::assert_snapshot!("grep_invalid_glob", fx.render(&out));
}

#[tokio::test]
async fn missing_path() {
    let fx = project();
    let out = grep(&fx, json!({"pattern": "fn", "path": "nope/../missing"})).await;
    insta::assert_snapshot!("grep_missing_path", fx.render(&out));
}

#[tokio::test]
async fn aborted_before_start() {
    let fx = project();
    let ctx = ToolContext::detached();
    ctx.cancel.cancel();
    let out = fx.call_with(&fx.tool("grep"), json!({"pattern": "fn"}), ctx).await;
    assert_eq!(out.err(), "Operation aborted");
}

#[tokio::test]
async fn results_are_in_path_order_on_every_run() {
    let mut files = Vec::new();
    for dir in 0..20 {
        for file in 0..20 {
            files.push((format!("d{dir}/f{file}.txt"), format!("line\nneedle {dir} {file}\n")));
        }
    }
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
    let fx = Fixture::new(&refs);
    let first = grep(&fx, json!({"pattern": "needle", "limit": 25})).await.text();
    for _ in 0..5 {
        assert_eq!(grep(&fx, json!({"pattern": "needle", "limit": 25})).await.text(), first);
    }
    let mut paths: Vec<String> = files.iter().map(|(p, _)| p.clone()).collect();
    paths.sort_by(|a, b| std::path::Path::new(a).cmp(std::path::Path::new(b)));
    let expected: Vec<String> = paths[..25].iter().map(|p| format!("{p}:2:")).collect();
    let got: Vec<String> = first
        .lines()
        .take(25)
        .map(|l| l.split(' ').next().unwrap().to_owned())
        .collect();
    assert_eq!(got, expected);
}

#[tokio::test]
async fn symlinked_files_are_not_followed() {
    let fx = Fixture::new(&[("real.txt", "needle\n")]);
    std::os::unix::fs::symlink(fx.path("real.txt"), fx.path("alias.txt")).unwrap();
    let out = grep(&fx, json!({"pattern": "needle"})).await;
    assert_eq!(out.text(), "real.txt:1: needle");
}
