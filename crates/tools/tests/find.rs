//! Scenario tests for the `find` tool: name globs at any depth, path globs with `/`, directories with a
//! trailing `/`, smart case, the result limit and byte cap notices, `.gitignore`/hidden/`.git` handling, and
//! the errors for a bad glob, a missing path, a file as the search path and an abort.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pi_agent_core::ToolContext;
use serde_json::{Value, json};
use support::{Fixture, Outcome};

async fn find(fx: &Fixture, args: Value) -> Outcome {
    fx.call(&fx.tool("find"), args).await
}

/// A small project used by most scenarios.
fn project() -> Fixture {
    Fixture::new(&[
        ("src/main.ts", "main\n"),
        ("src/app.spec.ts", "spec\n"),
        ("src/lib/util.ts", "util\n"),
        ("src/lib/util.spec.ts", "spec\n"),
        ("test/e2e.spec.ts", "spec\n"),
        ("package.json", "{}\n"),
        ("config/app.json", "{}\n"),
        ("README.md", "readme\n"),
    ])
}

#[tokio::test]
async fn name_glob_matches_at_any_depth() {
    let fx = project();
    let out = find(&fx, json!({"pattern": "*.ts"})).await;
    insta::assert_snapshot!("find_name_glob", fx.render(&out));
}

#[tokio::test]
async fn path_globs_with_a_slash() {
    let fx = project();
    let mut rendered = String::new();
    for pattern in ["src/**/*.spec.ts", "**/*.json", "lib/*.ts", "src/*.ts"] {
        let out = find(&fx, json!({"pattern": pattern})).await;
        rendered.push_str(&format!("== {pattern}\n{}\n", out.text()));
    }
    let absolute = format!("{}/src/*.ts", fx.root().display());
    let out = find(&fx, json!({"pattern": absolute})).await;
    rendered.push_str(&format!("== <root>/src/*.ts\n{}\n", out.text()));
    let out = find(&fx, json!({"pattern": "/src/*.ts"})).await;
    rendered.push_str(&format!("== /src/*.ts\n{}\n", out.text()));
    insta::assert_snapshot!("find_path_glob", rendered);
}

#[tokio::test]
async fn path_argument_and_relative_output() {
    let fx = project();
    let out = find(&fx, json!({"pattern": "*.ts", "path": "src/lib"})).await;
    assert_eq!(out.text(), "util.spec.ts\nutil.ts");
    let out = find(&fx, json!({"pattern": "src/lib/*.ts", "path": "src"})).await;
    assert_eq!(out.text(), "lib/util.spec.ts\nlib/util.ts");
}

#[tokio::test]
async fn directories_end_with_a_slash() {
    let fx = project();
    fx.mkdir("empty_dir");
    let out = find(&fx, json!({"pattern": "*"})).await;
    insta::assert_snapshot!("find_directories", fx.render(&out));
}

#[tokio::test]
async fn smart_case() {
    let fx = project();
    let lower = find(&fx, json!({"pattern": "readme*"})).await;
    let upper = find(&fx, json!({"pattern": "README*"})).await;
    let mixed = find(&fx, json!({"pattern": "Readme*"})).await;
    assert_eq!(lower.text(), "README.md");
    assert_eq!(upper.text(), "README.md");
    assert_eq!(mixed.text(), "No files found matching pattern");
}

#[tokio::test]
async fn result_limit() {
    let fx = project();
    let out = find(&fx, json!({"pattern": "*.ts", "limit": 2})).await;
    insta::assert_snapshot!("find_limit", fx.render(&out));
    let exact = find(&fx, json!({"pattern": "*.md", "limit": 1})).await;
    assert_eq!(
        exact.text(),
        "README.md\n\n[1 results limit reached. Use limit=2 for more, or refine pattern]"
    );
}

#[tokio::test]
async fn default_limit_is_1000() {
    let fx = Fixture::empty();
    for i in 0..1005 {
        fx.write(&format!("f{i:04}.txt"), b"");
    }
    let out = find(&fx, json!({"pattern": "*.txt"})).await;
    let text = out.text();
    assert_eq!(text.lines().next(), Some("f0000.txt"));
    assert_eq!(text.lines().filter(|l| l.ends_with(".txt")).count(), 1000);
    assert!(text.ends_with("f0999.txt\n\n[1000 results limit reached. Use limit=2000 for more, or refine pattern]"));
    assert_eq!(out.ok().details, json!({"resultLimitReached": 1000}));
}

#[tokio::test]
async fn byte_cap() {
    let fx = Fixture::empty();
    let long = "n".repeat(200);
    for i in 0..300 {
        fx.write(&format!("{long}{i:03}.txt"), b"");
    }
    let out = find(&fx, json!({"pattern": "*.txt"})).await;
    let text = out.text();
    let (body, notice) = text.rsplit_once("\n\n").unwrap();
    let mut truncation = out.ok().details["truncation"].clone();
    truncation["content"] = json!("<kept text>");
    let rendered = format!(
        "lines: {}\nbytes: {}\nnotice: {notice}\ndetails.truncation: {}",
        body.lines().count(),
        body.len(),
        serde_json::to_string_pretty(&truncation).unwrap()
    );
    insta::assert_snapshot!("find_byte_cap", rendered);
}

#[tokio::test]
async fn gitignore_is_respected_without_a_repository() {
    let fx = Fixture::new(&[
        (".gitignore", "dist/\n*.log\n"),
        ("dist/bundle.js", "x\n"),
        ("src/index.js", "x\n"),
        ("src/debug.log", "x\n"),
        ("src/.gitignore", "generated.js\n"),
        ("src/generated.js", "x\n"),
        ("other/generated.js", "x\n"),
    ]);
    let out = find(&fx, json!({"pattern": "*"})).await;
    insta::assert_snapshot!("find_gitignore", fx.render(&out));
}

#[tokio::test]
async fn hidden_entries_are_listed_but_not_dot_git() {
    let fx = Fixture::new(&[
        (".env", "x\n"),
        (".github/workflows/ci.yml", "x\n"),
        (".git/HEAD", "ref: refs/heads/main\n"),
        (".git/config", "x\n"),
        ("visible.yml", "x\n"),
    ]);
    let out = find(&fx, json!({"pattern": "*"})).await;
    insta::assert_snapshot!("find_hidden", fx.render(&out));
    let git = find(&fx, json!({"pattern": ".git"})).await;
    assert_eq!(git.text(), "No files found matching pattern");
}

#[tokio::test]
async fn no_results() {
    let fx = project();
    let out = find(&fx, json!({"pattern": "*.rs"})).await;
    insta::assert_snapshot!("find_no_results", fx.render(&out));
}

#[tokio::test]
async fn invalid_glob() {
    let fx = project();
    let out = find(&fx, json!({"pattern": "src/{a,b"})).await;
    insta::assert_snapshot!("find_invalid_glob", fx.render(&out));
}

#[tokio::test]
async fn missing_path() {
    let fx = project();
    let out = find(&fx, json!({"pattern": "*.ts", "path": "./missing/dir"})).await;
    insta::assert_snapshot!("find_missing_path", fx.render(&out));
}

#[tokio::test]
async fn file_as_search_path() {
    let fx = project();
    let out = find(&fx, json!({"pattern": "*", "path": "README.md"})).await;
    assert_eq!(
        out.err(),
        format!("Not a directory: {}", fx.path("README.md").display())
    );
}

#[tokio::test]
async fn aborted_before_start() {
    let fx = project();
    let ctx = ToolContext::detached();
    ctx.cancel.cancel();
    let out = fx.call_with(&fx.tool("find"), json!({"pattern": "*"}), ctx).await;
    assert_eq!(out.err(), "Operation aborted");
}

#[tokio::test]
async fn results_are_in_path_order_on_every_run() {
    let fx = Fixture::empty();
    let mut expected = Vec::new();
    for dir in 0..15 {
        for file in 0..15 {
            let path = format!("d{dir}/f{file}.rs");
            fx.write(&path, b"");
            expected.push(path);
        }
    }
    expected.sort_by(|a, b| std::path::Path::new(a).cmp(std::path::Path::new(b)));
    let first = find(&fx, json!({"pattern": "*.rs", "limit": 40})).await.text();
    for _ in 0..5 {
        assert_eq!(find(&fx, json!({"pattern": "*.rs", "limit": 40})).await.text(), first);
    }
    let listed: Vec<&str> = first.lines().take(40).collect();
    assert_eq!(listed, expected[..40]);
}

#[tokio::test]
async fn symlinks_are_listed_but_not_followed() {
    let fx = Fixture::new(&[("real/inner.txt", "x\n")]);
    std::os::unix::fs::symlink(fx.path("real"), fx.path("link")).unwrap();
    let out = find(&fx, json!({"pattern": "*"})).await;
    assert_eq!(out.text(), "link\nreal/\nreal/inner.txt");
}
