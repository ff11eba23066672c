//! Scenario tests for the `ls` tool: case-insensitive order, dotfiles, `/` for directories
//! (also through symlinks), dangling symlinks skipped, the empty directory, the entry-limit and
//! 50KB notices, and the path errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};
use support::{Fixture, Outcome};

async fn ls(fx: &Fixture, args: Value) -> Outcome {
    fx.call(&fx.tool("ls"), args).await
}

/// Output and details only (for trees too large to show).
fn output_and_details(fx: &Fixture, out: &Outcome) -> String {
    let text = out.text();
    let lines: Vec<&str> = text.split('\n').collect();
    let shown = format!(
        "{}\n{}\n… {} lines …\n{}\n{}",
        lines[0],
        lines[1],
        lines.len() - 4,
        lines[lines.len() - 2],
        lines[lines.len() - 1]
    );
    let mut details = out.ok().details.clone();
    if let Some(content) = details.pointer_mut("/truncation/content") {
        let size = content.as_str().unwrap().len();
        *content = json!(format!("<{size} bytes>"));
    }
    format!(
        "--- output ---\n{}\n--- details ---\n{}\n",
        fx.redact(&shown),
        serde_json::to_string_pretty(&details).unwrap()
    )
}

#[tokio::test]
async fn sorted_case_insensitively_with_dotfiles_and_dir_suffix() {
    let fx = Fixture::new(&[
        ("README.md", "# r\n"),
        ("src/main.rs", "fn main() {}\n"),
        (".gitignore", "target\n"),
        ("Cargo.toml", "[package]\n"),
        ("build.rs", "fn main() {}\n"),
        ("_private.txt", "p\n"),
        ("10-notes.txt", "n\n"),
        ("docs/a.md", "a\n"),
    ]);
    let out = ls(&fx, json!({})).await;
    insta::assert_snapshot!("ls_basic", fx.render(&out));
}

#[tokio::test]
async fn subdirectory_and_default_path_forms() {
    let fx = Fixture::new(&[("src/b.rs", ""), ("src/A.rs", ""), ("src/mod/x.rs", "")]);
    let expected = "A.rs\nb.rs\nmod/";
    for path in ["src", "@src", "./src/", "src/mod/.."] {
        let out = ls(&fx, json!({"path": path})).await;
        assert_eq!(out.ok().content[0].as_text(), Some(expected), "path {path}");
    }
    for args in [json!({}), json!({"path": ""}), json!({"path": "."})] {
        let out = ls(&fx, args.clone()).await;
        assert_eq!(out.ok().content[0].as_text(), Some("src/"), "{args}");
    }
}

#[tokio::test]
async fn empty_directory() {
    let fx = Fixture::empty();
    fx.mkdir("void");
    let out = ls(&fx, json!({"path": "void"})).await;
    insta::assert_snapshot!("ls_empty", fx.render(&out));
}

#[tokio::test]
async fn symlinks_follow_their_target_and_dangling_ones_are_skipped() {
    let fx = Fixture::new(&[("real/f.txt", "x\n"), ("file.txt", "y\n")]);
    std::os::unix::fs::symlink("real", fx.path("to-dir")).unwrap();
    std::os::unix::fs::symlink("file.txt", fx.path("to-file")).unwrap();
    std::os::unix::fs::symlink("nowhere", fx.path("broken")).unwrap();
    let out = ls(&fx, json!({})).await;
    assert_eq!(out.ok().content[0].as_text(), Some("file.txt\nreal/\nto-dir/\nto-file"));
}

#[tokio::test]
async fn entry_limit_notice() {
    let fx = Fixture::new(&[("a", ""), ("b", ""), ("c", ""), ("d", ""), ("e", "")]);
    let out = ls(&fx, json!({"limit": 3})).await;
    insta::assert_snapshot!("ls_limit", fx.render(&out));
}

#[tokio::test]
async fn default_limit_is_500() {
    let fx = Fixture::empty();
    for i in 0..501 {
        fx.write(&format!("f{i:04}.txt"), b"");
    }
    let out = ls(&fx, json!({})).await;
    insta::assert_snapshot!("ls_default_limit", output_and_details(&fx, &out));
}

#[tokio::test]
async fn byte_limit_and_entry_limit_notices_are_joined() {
    let fx = Fixture::empty();
    for i in 0..600 {
        fx.write(&format!("{i:04}-{}", "n".repeat(195)), b"");
    }
    let out = ls(&fx, json!({})).await;
    insta::assert_snapshot!("ls_both_limits", output_and_details(&fx, &out));
}

#[tokio::test]
async fn zero_or_negative_limit_is_an_error() {
    let fx = Fixture::new(&[("a", "")]);
    let out = ls(&fx, json!({"limit": 0})).await;
    insta::assert_snapshot!("ls_zero_limit", fx.render(&out));
    let out = ls(&fx, json!({"limit": -1})).await;
    assert_eq!(out.err(), "Invalid limit: must be a positive number");
}

#[tokio::test]
async fn missing_path() {
    let fx = Fixture::new(&[("a.txt", "")]);
    let out = ls(&fx, json!({"path": "nope/../missing"})).await;
    insta::assert_snapshot!("ls_not_found", fx.render(&out));
}

#[tokio::test]
async fn not_a_directory() {
    let fx = Fixture::new(&[("a.txt", "x\n")]);
    let out = ls(&fx, json!({"path": "a.txt"})).await;
    insta::assert_snapshot!("ls_not_a_directory", fx.render(&out));
}

#[tokio::test]
async fn unreadable_directory() {
    use std::os::unix::fs::PermissionsExt;
    let fx = Fixture::new(&[("locked/inner.txt", "x\n")]);
    let dir = fx.path("locked");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o000)).unwrap();
    let out = ls(&fx, json!({"path": "locked"})).await;
    if std::fs::read_dir(&dir).is_ok() {
        // Root (or CAP_DAC_READ_SEARCH) can list it anyway; so could pi.
        assert_eq!(out.ok().content[0].as_text(), Some("inner.txt"));
    } else {
        assert_eq!(
            fx.redact(out.err()),
            "Cannot read directory: EACCES: permission denied, scandir '<root>/locked'"
        );
    }
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
}
