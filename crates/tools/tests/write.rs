//! Scenario tests for the `write` tool: creating files and parent directories, overwriting
//! (keeping the file's mode), the UTF-16 length pi reports, the path echoed as given, and bad
//! targets — a directory, a file where a parent directory should be, no permission — which fail
//! with Node-style errors and leave the tree unchanged.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::os::unix::fs::PermissionsExt;

use pi_agent_core::ToolContext;
use serde_json::{Value, json};
use support::{Fixture, Outcome};

async fn write(fx: &Fixture, args: Value) -> Outcome {
    fx.call(&fx.tool("write"), args).await
}

/// Whether this process can write a file it has no permission for (root, CAP_DAC_OVERRIDE).
fn permissions_bypassed(path: &std::path::Path) -> bool {
    std::fs::OpenOptions::new().append(true).open(path).is_ok()
}

#[tokio::test]
async fn creates_file_and_parent_directories() {
    let fx = Fixture::new(&[("README.md", "# hi\n")]);
    let out = write(
        &fx,
        json!({"path": "src/deep/nested/main.rs", "content": "fn main() {}\n"}),
    )
    .await;
    insta::assert_snapshot!("write_creates_parents", fx.render(&out));
}

#[tokio::test]
async fn overwrites_and_keeps_the_mode() {
    let fx = Fixture::new(&[("run.sh", "#!/bin/sh\necho old\n")]);
    std::fs::set_permissions(fx.path("run.sh"), std::fs::Permissions::from_mode(0o754)).unwrap();
    let out = write(&fx, json!({"path": "run.sh", "content": "#!/bin/sh\necho new\n"})).await;
    insta::assert_snapshot!("write_overwrite", fx.render(&out));
    let mode = std::fs::metadata(fx.path("run.sh")).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o754);
}

#[tokio::test]
async fn length_is_counted_in_utf16_units() {
    // "é" is 1 unit (2 bytes), "😀" is 2 units (4 bytes): 8 units, 11 bytes.
    let fx = Fixture::empty();
    let out = write(&fx, json!({"path": "u.txt", "content": "héllo 😀"})).await;
    insta::assert_snapshot!("write_utf16_length", fx.render(&out));
    assert_eq!(std::fs::read(fx.path("u.txt")).unwrap().len(), 11);
}

#[tokio::test]
async fn empty_content() {
    let fx = Fixture::empty();
    let out = write(&fx, json!({"path": "empty.txt", "content": ""})).await;
    assert_eq!(
        out.ok().content[0].as_text(),
        Some("Successfully wrote 0 bytes to empty.txt")
    );
    assert_eq!(fx.read("empty.txt"), "");
}

#[tokio::test]
async fn path_is_echoed_as_given() {
    let fx = Fixture::empty();
    let out = write(&fx, json!({"path": "@notes/./a.txt", "content": "x"})).await;
    insta::assert_snapshot!("write_at_path", fx.render(&out));
}

#[tokio::test]
async fn directory_where_a_file_is_expected() {
    let fx = Fixture::new(&[("src/lib.rs", "pub fn f() {}\n")]);
    let out = write(&fx, json!({"path": "src", "content": "oops"})).await;
    insta::assert_snapshot!("write_directory_target", fx.render(&out));
}

#[tokio::test]
async fn file_where_a_parent_directory_is_expected() {
    let fx = Fixture::new(&[("notes.txt", "keep me\n")]);
    let out = write(&fx, json!({"path": "notes.txt/child.txt", "content": "x"})).await;
    insta::assert_snapshot!("write_parent_is_file", fx.render(&out));
    let out = write(&fx, json!({"path": "notes.txt/a/b.txt", "content": "x"})).await;
    assert_eq!(
        fx.redact(out.err()),
        "ENOTDIR: not a directory, mkdir '<root>/notes.txt/a'"
    );
}

#[tokio::test]
async fn read_only_file_is_not_replaced() {
    let fx = Fixture::new(&[("locked.txt", "original\n")]);
    let path = fx.path("locked.txt");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let out = write(&fx, json!({"path": "locked.txt", "content": "changed\n"})).await;
    if permissions_bypassed(&path) {
        // Root may write a read-only file, as it could with pi (Node's writeFile).
        assert_eq!(
            out.ok().content[0].as_text(),
            Some("Successfully wrote 8 bytes to locked.txt")
        );
        assert_eq!(fx.read("locked.txt"), "changed\n");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o444);
    } else {
        assert_eq!(
            fx.redact(out.err()),
            "EACCES: permission denied, open '<root>/locked.txt'"
        );
        assert_eq!(fx.read("locked.txt"), "original\n");
    }
}

#[tokio::test]
async fn read_only_directory_gets_no_new_file() {
    let fx = Fixture::new(&[("ro/existing.txt", "x\n")]);
    let dir = fx.path("ro");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    let out = write(&fx, json!({"path": "ro/new.txt", "content": "y"})).await;
    let bypassed = tempfile::tempfile_in(&dir).is_ok();
    if bypassed {
        // Root can create files in a read-only directory.
        assert_eq!(
            out.ok().content[0].as_text(),
            Some("Successfully wrote 1 bytes to ro/new.txt")
        );
    } else {
        assert_eq!(
            fx.redact(out.err()),
            "EACCES: permission denied, open '<root>/ro/new.txt'"
        );
        assert!(!fx.path("ro/new.txt").exists());
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(leftovers, ["existing.txt"]);
    }
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[tokio::test]
async fn concurrent_writes_to_one_file_are_serialised() {
    let fx = Fixture::empty();
    let tool = fx.tool("write");
    let mut calls = Vec::new();
    for i in 0..16 {
        let content = format!("{i}\n").repeat(1000);
        calls.push(fx.call(&tool, json!({"path": "shared.txt", "content": content})));
    }
    for out in futures::future::join_all(calls).await {
        out.ok();
    }
    let text = fx.read("shared.txt");
    let first = text.lines().next().unwrap().to_owned();
    assert!(text.lines().all(|line| line == first), "a write was interleaved");
    let names: Vec<_> = std::fs::read_dir(fx.root())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names, ["shared.txt"], "temporary files left behind");
}

#[tokio::test]
async fn cancelled_before_start_writes_nothing() {
    let fx = Fixture::empty();
    let ctx = ToolContext::detached();
    ctx.cancel.cancel();
    let out = fx
        .call_with(&fx.tool("write"), json!({"path": "a.txt", "content": "x"}), ctx)
        .await;
    insta::assert_snapshot!("write_aborted", fx.render(&out));
}
