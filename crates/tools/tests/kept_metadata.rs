//! What a file keeps when `write` or `edit` replaces it (issue 14, item 5): its mode, its owner
//! (checked with a file given to another user when the tests run as root) and its extended
//! attributes (a `user.` attribute; a file system without them fails the test unless
//! `PI_ALLOW_NO_XATTR=1` says that is expected).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use serde_json::json;
use support::Fixture;

/// Sets `user.pi.test`, or — only with `PI_ALLOW_NO_XATTR=1` — says it cannot and returns false.
fn set_user_xattr(path: &Path, value: &[u8]) -> bool {
    match xattr::set(path, "user.pi.test", value) {
        Ok(()) => true,
        Err(error) if std::env::var("PI_ALLOW_NO_XATTR").as_deref() == Ok("1") => {
            eprintln!(
                "PI_ALLOW_NO_XATTR=1: no user xattrs in {} ({error}): not checked",
                path.display()
            );
            false
        }
        Err(error) => panic!(
            "cannot set a user xattr on {} ({error}); set PI_ALLOW_NO_XATTR=1 where the file system has none",
            path.display()
        ),
    }
}

fn user_xattr(path: &Path) -> Option<Vec<u8>> {
    xattr::get(path, "user.pi.test").unwrap()
}

#[tokio::test]
async fn a_user_xattr_survives_write_and_edit() {
    let fx = Fixture::new(&[("w.txt", "old\n"), ("e.txt", "old\n")]);
    if !(set_user_xattr(&fx.path("w.txt"), b"written") && set_user_xattr(&fx.path("e.txt"), b"edited")) {
        return;
    }
    let out = fx
        .call(&fx.tool("write"), json!({"path": "w.txt", "content": "new\n"}))
        .await;
    out.ok();
    let out = fx
        .call(
            &fx.tool("edit"),
            json!({"path": "e.txt", "edits": [{"oldText": "old", "newText": "new"}]}),
        )
        .await;
    out.ok();
    assert_eq!(fx.read("w.txt"), "new\n");
    assert_eq!(fx.read("e.txt"), "new\n");
    assert_eq!(user_xattr(&fx.path("w.txt")).as_deref(), Some(&b"written"[..]));
    assert_eq!(user_xattr(&fx.path("e.txt")).as_deref(), Some(&b"edited"[..]));
}

#[tokio::test]
async fn the_mode_and_owner_survive_write_and_edit() {
    let fx = Fixture::new(&[("w.sh", "old\n"), ("e.sh", "old\n")]);
    let ours = std::fs::metadata(fx.path("w.sh")).unwrap();
    let root = ours.uid() == 0;
    // As root, the files belong to someone else; otherwise only root could do that, and the
    // files must at least stay ours.
    let owner = if root { (4242, 4343) } else { (ours.uid(), ours.gid()) };
    if !root {
        eprintln!("not root: only checked that files of ours keep their owner");
    }
    for name in ["w.sh", "e.sh"] {
        let path = fx.path(name);
        if root {
            std::os::unix::fs::chown(&path, Some(owner.0), Some(owner.1)).unwrap();
        }
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o751)).unwrap();
    }
    fx.call(&fx.tool("write"), json!({"path": "w.sh", "content": "new\n"}))
        .await
        .ok();
    fx.call(
        &fx.tool("edit"),
        json!({"path": "e.sh", "edits": [{"oldText": "old", "newText": "new"}]}),
    )
    .await
    .ok();
    for name in ["w.sh", "e.sh"] {
        let after = std::fs::metadata(fx.path(name)).unwrap();
        assert_eq!(fx.read(name), "new\n");
        assert_eq!((after.uid(), after.gid()), owner, "{name}");
        assert_eq!(after.mode() & 0o7777, 0o751, "{name}");
    }
}

/// The file [`write_in_place_as_another_user`] writes, and the one it writes in a batch.
const OTHER_USER_FILE: &str = "PI_TEST_OTHER_USER_FILE";
const OTHER_USER_BATCH_FILE: &str = "PI_TEST_OTHER_USER_BATCH_FILE";

#[test]
fn a_file_another_user_may_write_keeps_its_owner_by_being_written_in_place() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let (single, batch) = (dir.path().join("single.txt"), dir.path().join("batch.txt"));
    for path in [&single, &batch] {
        std::fs::write(path, "old").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666)).unwrap();
    }
    let owner = std::fs::metadata(&single).unwrap().uid();
    if owner != 0 {
        eprintln!("not root: cannot act as another user here; the in-place fallback is not checked");
        return;
    }
    // This test binary again, as `nobody`, running only the helper below: it cannot give the
    // temporary file to root, so it must write in place (as pi does) instead of leaving a file
    // owned by `nobody`.
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "write_in_place_as_another_user", "--nocapture"])
        .env(OTHER_USER_FILE, &single)
        .env(OTHER_USER_BATCH_FILE, &batch)
        .uid(65534)
        .gid(65534)
        .status()
        .unwrap();
    assert!(status.success(), "the helper failed: {status}");
    for path in [&single, &batch] {
        let after = std::fs::metadata(path).unwrap();
        assert_eq!(std::fs::read_to_string(path).unwrap(), "new", "{}", path.display());
        assert_eq!((after.uid(), after.gid()), (0, 0), "{}", path.display());
        assert_eq!(after.mode() & 0o777, 0o666);
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        2,
        "no temp file left behind"
    );
}

/// Run by the test above as another user; fails when run on its own.
#[test]
#[ignore = "a helper of a_file_another_user_may_write_keeps_its_owner_by_being_written_in_place"]
fn write_in_place_as_another_user() {
    let single = std::env::var_os(OTHER_USER_FILE).expect("run by the test above");
    let batch = std::env::var_os(OTHER_USER_BATCH_FILE).expect("run by the test above");
    pi_tools::atomic::write_atomic(Path::new(&single), b"new").unwrap();
    pi_tools::atomic::write_all_or_nothing(&[pi_tools::atomic::BatchWrite {
        path: Path::new(&batch),
        contents: b"new",
        original: b"old",
    }])
    .unwrap();
}
