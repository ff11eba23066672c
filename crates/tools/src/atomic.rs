//! Atomic file writes: the new content goes to a temporary file in the same directory, which
//! then replaces the target with a rename, so a failed or interrupted write leaves the old file
//! intact.
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("a.txt");
//! pi_tools::atomic::write_atomic(&path, b"hello").unwrap();
//! assert_eq!(std::fs::read(&path).unwrap(), b"hello");
//! ```
//!
//! [`write_all_or_nothing`] does the same for several files at once: every file changes, or (as far
//! as the file system lets it) none does.
//!
//! pi writes files in place, which keeps everything a file has beyond its bytes. A replacement
//! here keeps it too: the temporary file is given the existing file's owner (user and group),
//! extended attributes (POSIX ACLs among them) and permissions before the rename. Where one of
//! them cannot be given — not root and the file is another user's, or a group we are not in, or
//! an attribute the file system refuses on a new file — the file is written in place instead,
//! as pi does: never replaced with something that silently lost them.

use std::io::Write;
use std::path::{Path, PathBuf};

/// A temporary file in `dir` to be renamed over the target. It is created with mode 0666 less the
/// process's umask — what a plain create gives — so that a new file is not left 0600 (tempfile's
/// private default); an existing target's permissions are copied onto it afterwards.
fn temp_file_in(dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(".pi-write-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(dir)
}

/// Gives `temp` what the existing file at `target` (with `metadata`) has beyond its bytes: its
/// owner, its extended attributes and its permissions — in that order, since a change of owner
/// clears the set-user-ID bits and an ACL sets the group bits. `Ok(false)` when the owner or an
/// attribute cannot be given: the caller writes in place instead (see the module documentation).
fn carry_over(target: &Path, metadata: &std::fs::Metadata, temp: &std::fs::File) -> std::io::Result<bool> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let made = temp.metadata()?;
        if (made.uid(), made.gid()) != (metadata.uid(), metadata.gid()) {
            match std::os::unix::fs::fchown(temp, Some(metadata.uid()), Some(metadata.gid())) {
                Ok(()) => {}
                // Not root, and the file is another user's (or of a group we are not in).
                Err(error) if error.kind() == std::io::ErrorKind::PermissionDenied => return Ok(false),
                Err(error) => return Err(error),
            }
        }
        if !copy_xattrs(target, temp) {
            return Ok(false);
        }
    }
    temp.set_permissions(metadata.permissions())?;
    Ok(true)
}

/// Copies every extended attribute of `target` onto `temp`; false when one cannot be read or set
/// (or they cannot be listed), so that nothing is lost by a replacement. A file system without
/// extended attributes has none to copy.
#[cfg(unix)]
fn copy_xattrs(target: &Path, temp: &std::fs::File) -> bool {
    use nix::errno::Errno;
    use xattr::FileExt;
    if !xattr::SUPPORTED_PLATFORM {
        return true;
    }
    let names = match xattr::list(target) {
        Ok(names) => names,
        Err(error) => {
            let code = error.raw_os_error();
            return code == Some(Errno::ENOTSUP as i32) || code == Some(Errno::EOPNOTSUPP as i32);
        }
    };
    for name in names {
        let value = match xattr::get(target, &name) {
            Ok(Some(value)) => value,
            // Gone since it was listed: nothing to keep.
            Ok(None) => continue,
            Err(_) => return false,
        };
        // Already there (a label or an ACL the new file inherited): nothing to set.
        if temp.get_xattr(&name).ok().flatten().as_deref() == Some(value.as_slice()) {
            continue;
        }
        if temp.set_xattr(&name, &value).is_err() {
            return false;
        }
    }
    true
}

/// Writes `bytes` to `path` atomically, keeping an existing file's owner, extended attributes
/// and permissions (or writing in place where they cannot be kept; see the module
/// documentation). A symlink is followed (its target is replaced, the link stays), and a special
/// file such as a FIFO or a device is written in place, since renaming over it would replace
/// the node itself, and so is an existing file in a directory where no temporary file can be
/// created. Blocking: call it from `spawn_blocking` in async code.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let resolved;
    let path = match std::fs::canonicalize(path) {
        Ok(real) => {
            resolved = real;
            resolved.as_path()
        }
        Err(_) => path,
    };
    if let Ok(metadata) = std::fs::metadata(path)
        && !metadata.is_file()
        && !metadata.is_dir()
    {
        return std::fs::write(path, bytes);
    }
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let existing = std::fs::metadata(path).ok();
    let mut temp = match temp_file_in(dir) {
        Ok(temp) => temp,
        // A writable file in a directory we may not create files in: write in place, as pi does.
        Err(error) if error.kind() == std::io::ErrorKind::PermissionDenied && existing.is_some() => {
            return std::fs::write(path, bytes);
        }
        Err(error) => return Err(error),
    };
    temp.write_all(bytes)?;
    if let Some(metadata) = &existing
        && !carry_over(path, metadata, temp.as_file())?
    {
        drop(temp);
        return std::fs::write(path, bytes);
    }
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// One file of a [`write_all_or_nothing`] batch.
#[derive(Debug, Clone, Copy)]
pub struct BatchWrite<'a> {
    /// The file to replace (a symlink is followed).
    pub path: &'a Path,
    /// Its new content.
    pub contents: &'a [u8],
    /// Its current content, written back if a later file of the batch fails.
    pub original: &'a [u8],
}

/// Why a batch was not written.
#[derive(Debug)]
pub struct BatchWriteError {
    /// The file whose write or rename failed.
    pub path: PathBuf,
    /// The failure.
    pub error: std::io::Error,
    /// Files already replaced that could not be put back (empty when the rollback worked).
    pub unrestored: Vec<(PathBuf, std::io::Error)>,
}

impl std::fmt::Display for BatchWriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Failed to write {}: {}", self.path.display(), self.error)?;
        for (path, error) in &self.unrestored {
            write!(f, "; could not restore {}: {error}", path.display())?;
        }
        Ok(())
    }
}

impl std::error::Error for BatchWriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// Fault-injection points of [`write_all_or_nothing_with`], so tests can make the k-th temporary-file
/// write or the k-th rename fail (permission tricks do not work for root). Both default to `Ok`.
pub trait BatchHooks: Sync {
    /// Called before the temporary file of `files[index]` is created.
    fn before_write(&self, index: usize, path: &Path) -> std::io::Result<()> {
        let _ = (index, path);
        Ok(())
    }

    /// Called before the temporary file of `files[index]` is renamed over it.
    fn before_rename(&self, index: usize, path: &Path) -> std::io::Result<()> {
        let _ = (index, path);
        Ok(())
    }
}

/// The hooks that never fail.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

impl BatchHooks for NoHooks {}

/// Writes every file of `files` or none of them, in two phases:
///
/// 1. each new content goes to a temporary file in its target's own directory (symlinks followed,
///    owner, extended attributes and permissions kept, data synced — or, where they cannot be
///    kept, the file is marked to be written in place in phase 2); if any of these fails, the
///    temporary files are deleted and no target has changed;
/// 2. the temporary files are renamed over their targets (or the marked files written) in order;
///    if a rename fails, the targets already replaced get their `original` bytes back
///    (atomically), and the other temporary files are deleted.
///
/// A target that is not a regular file (a FIFO, a device) fails the batch before anything changes.
/// Blocking: call it from `spawn_blocking` in async code.
///
/// ```
/// use pi_tools::atomic::{BatchWrite, write_all_or_nothing};
///
/// let dir = tempfile::tempdir().unwrap();
/// let (a, b) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
/// std::fs::write(&a, "old a").unwrap();
/// std::fs::write(&b, "old b").unwrap();
/// write_all_or_nothing(&[
///     BatchWrite { path: &a, contents: b"new a", original: b"old a" },
///     BatchWrite { path: &b, contents: b"new b", original: b"old b" },
/// ])
/// .unwrap();
/// assert_eq!(std::fs::read(&b).unwrap(), b"new b");
/// ```
pub fn write_all_or_nothing(files: &[BatchWrite<'_>]) -> Result<(), BatchWriteError> {
    write_all_or_nothing_with(files, &NoHooks)
}

/// [`write_all_or_nothing`] with fault-injection hooks.
pub fn write_all_or_nothing_with(files: &[BatchWrite<'_>], hooks: &dyn BatchHooks) -> Result<(), BatchWriteError> {
    let staged = stage_all(files, hooks)?;
    let mut staged: Vec<Option<Staged>> = staged.into_iter().map(Some).collect();
    for index in 0..staged.len() {
        let Some((target, replacement)) = staged[index].take() else {
            continue;
        };
        let renamed = hooks
            .before_rename(index, files[index].path)
            .and_then(|()| match replacement {
                Replacement::Temp(temp) => temp.persist(&target).map(drop).map_err(|e| e.error),
                Replacement::InPlace => std::fs::write(&target, files[index].contents),
            });
        if let Err(error) = renamed {
            // Dropping the remaining temporary files deletes them.
            drop(staged);
            let unrestored = files[..index]
                .iter()
                .filter_map(|file| {
                    write_atomic(file.path, file.original)
                        .err()
                        .map(|e| (file.path.to_path_buf(), e))
                })
                .collect();
            return Err(BatchWriteError {
                path: files[index].path.to_path_buf(),
                error,
                unrestored,
            });
        }
    }
    Ok(())
}

/// How a staged target will be replaced.
enum Replacement {
    /// By renaming this synced temporary file over it.
    Temp(tempfile::NamedTempFile),
    /// By writing it in place: its owner or an extended attribute could not be given to a
    /// temporary file.
    InPlace,
}

/// A target's real path and what will replace it.
type Staged = (PathBuf, Replacement);

/// Threads staging a large batch at most.
const STAGING_THREADS: usize = 8;

/// Phase 1 of the batch: one synced temporary file per target, staged on up to [`STAGING_THREADS`] threads. On
/// failure every temporary file made so far is deleted (dropped) and the first failing file is reported.
fn stage_all(files: &[BatchWrite<'_>], hooks: &dyn BatchHooks) -> Result<Vec<Staged>, BatchWriteError> {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    let slots: Vec<Mutex<Option<std::io::Result<Staged>>>> = files.iter().map(|_| Mutex::new(None)).collect();
    let failed = AtomicBool::new(false);
    let next = AtomicUsize::new(0);
    let work = || {
        while !failed.load(Ordering::Relaxed) {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let Some(file) = files.get(index) else { break };
            let result = hooks.before_write(index, file.path).and_then(|()| stage(file));
            if result.is_err() {
                failed.store(true, Ordering::Relaxed);
            }
            *pi_agent_core::lock(&slots[index]) = Some(result);
        }
    };
    // Staging waits on the disk (fsync) more than on the CPU, so it uses more threads than cores.
    let threads = STAGING_THREADS.min(files.len() / 16 + 1);
    if threads <= 1 {
        work();
    } else {
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(work);
            }
        });
    }
    let mut staged = Vec::with_capacity(files.len());
    for (index, slot) in slots.into_iter().enumerate() {
        match slot.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some(Ok(temp)) => staged.push(temp),
            Some(Err(error)) => {
                return Err(BatchWriteError {
                    path: files[index].path.to_path_buf(),
                    error,
                    unrestored: Vec::new(),
                });
            }
            // Not reached because an earlier or parallel file failed; that failure is reported
            // when the loop gets to it.
            None => continue,
        }
    }
    Ok(staged)
}

/// Writes one file's new content to a synced temporary file next to its real target (or, when
/// the target's owner or attributes cannot be given to one, stages an in-place write).
fn stage(file: &BatchWrite<'_>) -> std::io::Result<Staged> {
    let target = std::fs::canonicalize(file.path).unwrap_or_else(|_| file.path.to_path_buf());
    let metadata = std::fs::metadata(&target).ok();
    if metadata.as_ref().is_some_and(|m| !m.is_file()) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let dir = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut temp = temp_file_in(dir)?;
    temp.write_all(file.contents)?;
    if let Some(metadata) = &metadata
        && !carry_over(&target, metadata, temp.as_file())?
    {
        return Ok((target, Replacement::InPlace));
    }
    temp.as_file().sync_all()?;
    Ok((target, Replacement::Temp(temp)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_gets_the_mode_a_plain_create_gives() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain.txt");
        std::fs::write(&plain, "x").unwrap();
        let expected = std::fs::metadata(&plain).unwrap().permissions().mode() & 0o777;
        let path = dir.path().join("new.txt");
        write_atomic(&path, b"new").unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, expected);
        let batch = dir.path().join("batch.txt");
        write_all_or_nothing(&[BatchWrite {
            path: &batch,
            contents: b"b",
            original: b"",
        }])
        .unwrap();
        assert_eq!(
            std::fs::metadata(&batch).unwrap().permissions().mode() & 0o777,
            expected
        );
    }

    /// Sets a `user.` extended attribute. A file system without them fails the test, unless
    /// `PI_ALLOW_NO_XATTR=1` says that is expected here (then it says so and returns false).
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

    #[test]
    fn extended_attributes_survive_a_replacement() {
        let dir = tempfile::tempdir().unwrap();
        let (single, batch) = (dir.path().join("single.txt"), dir.path().join("batch.txt"));
        std::fs::write(&single, "old").unwrap();
        std::fs::write(&batch, "old").unwrap();
        if !(set_user_xattr(&single, b"kept") && set_user_xattr(&batch, b"kept too")) {
            return;
        }
        write_atomic(&single, b"new").unwrap();
        write_all_or_nothing(&[BatchWrite {
            path: &batch,
            contents: b"new",
            original: b"old",
        }])
        .unwrap();
        assert_eq!(std::fs::read(&single).unwrap(), b"new");
        assert_eq!(
            xattr::get(&single, "user.pi.test").unwrap().as_deref(),
            Some(&b"kept"[..])
        );
        assert_eq!(std::fs::read(&batch).unwrap(), b"new");
        assert_eq!(
            xattr::get(&batch, "user.pi.test").unwrap().as_deref(),
            Some(&b"kept too"[..])
        );
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            2,
            "no temp file left behind"
        );
    }

    #[test]
    fn the_owner_survives_a_replacement() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("owned.txt");
        std::fs::write(&path, "old").unwrap();
        let ours = std::fs::metadata(&path).unwrap();
        if ours.uid() != 0 {
            // Only root can give a file to another user; our own file must stay ours.
            eprintln!("not root: only checked that a file of ours keeps its owner");
            write_atomic(&path, b"new").unwrap();
            let after = std::fs::metadata(&path).unwrap();
            assert_eq!((after.uid(), after.gid()), (ours.uid(), ours.gid()));
            return;
        }
        std::os::unix::fs::chown(&path, Some(4242), Some(4343)).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o4750)).unwrap();
        write_atomic(&path, b"new").unwrap();
        let after = std::fs::metadata(&path).unwrap();
        assert_eq!((after.uid(), after.gid()), (4242, 4343));
        assert_eq!(
            after.mode() & 0o7777,
            0o4750,
            "the set-user-ID bit is set again after the chown"
        );
        write_all_or_nothing(&[BatchWrite {
            path: &path,
            contents: b"newer",
            original: b"new",
        }])
        .unwrap();
        let after = std::fs::metadata(&path).unwrap();
        assert_eq!((after.uid(), after.gid()), (4242, 4343));
        assert_eq!(std::fs::read(&path).unwrap(), b"newer");
    }

    #[test]
    fn replaces_and_keeps_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.sh");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        write_atomic(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o755);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temp file left behind"
        );
    }

    #[test]
    fn symlinks_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.txt");
        let link = dir.path().join("link.txt");
        std::fs::write(&target, "old").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
    }

    #[test]
    fn failure_leaves_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing_dir = dir.path().join("nope/x.txt");
        assert!(write_atomic(&missing_dir, b"new").is_err());
    }

    fn batch_dir(count: usize) -> (tempfile::TempDir, Vec<PathBuf>) {
        let dir = tempfile::tempdir().unwrap();
        let paths: Vec<PathBuf> = (0..count).map(|i| dir.path().join(format!("f{i}.txt"))).collect();
        for (i, path) in paths.iter().enumerate() {
            std::fs::write(path, format!("old {i}")).unwrap();
        }
        (dir, paths)
    }

    fn run_batch(paths: &[PathBuf], hooks: &dyn BatchHooks) -> Result<(), BatchWriteError> {
        let news: Vec<String> = (0..paths.len()).map(|i| format!("new {i}")).collect();
        let olds: Vec<String> = (0..paths.len()).map(|i| format!("old {i}")).collect();
        let files: Vec<BatchWrite<'_>> = paths
            .iter()
            .zip(news.iter().zip(&olds))
            .map(|(path, (new, old))| BatchWrite {
                path,
                contents: new.as_bytes(),
                original: old.as_bytes(),
            })
            .collect();
        write_all_or_nothing_with(&files, hooks)
    }

    fn contents(dir: &Path) -> Vec<(String, String)> {
        let mut entries: Vec<(String, String)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read_to_string(e.path()).unwrap(),
                )
            })
            .collect();
        entries.sort();
        entries
    }

    /// Fails the `k`-th write or rename.
    struct FailAt {
        write: Option<usize>,
        rename: Option<usize>,
    }

    impl BatchHooks for FailAt {
        fn before_write(&self, index: usize, _path: &Path) -> std::io::Result<()> {
            if self.write == Some(index) {
                return Err(std::io::Error::other("injected write failure"));
            }
            Ok(())
        }
        fn before_rename(&self, index: usize, _path: &Path) -> std::io::Result<()> {
            if self.rename == Some(index) {
                return Err(std::io::Error::other("injected rename failure"));
            }
            Ok(())
        }
    }

    #[test]
    fn batch_writes_every_file() {
        let (dir, paths) = batch_dir(40);
        run_batch(&paths, &NoHooks).unwrap();
        let all = contents(dir.path());
        assert_eq!(all.len(), 40, "no temp file left behind");
        assert!(all.iter().all(|(_, text)| text.starts_with("new ")));
    }

    #[test]
    fn a_failed_write_changes_nothing() {
        for count in [1, 3, 40] {
            for k in 0..count {
                let (dir, paths) = batch_dir(count);
                let before = contents(dir.path());
                let error = run_batch(
                    &paths,
                    &FailAt {
                        write: Some(k),
                        rename: None,
                    },
                )
                .unwrap_err();
                assert_eq!(error.path, paths[k]);
                assert_eq!(
                    error.to_string(),
                    format!("Failed to write {}: injected write failure", paths[k].display())
                );
                assert_eq!(contents(dir.path()), before, "{count} files, write {k} failed");
            }
        }
    }

    #[test]
    fn a_failed_rename_rolls_back() {
        for k in 0..4 {
            let (dir, paths) = batch_dir(4);
            let before = contents(dir.path());
            let error = run_batch(
                &paths,
                &FailAt {
                    write: None,
                    rename: Some(k),
                },
            )
            .unwrap_err();
            assert!(error.unrestored.is_empty());
            assert_eq!(contents(dir.path()), before, "rename {k} failed");
        }
    }

    #[test]
    fn batch_keeps_permissions_and_follows_symlinks() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.sh");
        let link = dir.path().join("link.sh");
        std::fs::write(&target, "old").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o750)).unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_all_or_nothing(&[BatchWrite {
            path: &link,
            contents: b"new",
            original: b"old",
        }])
        .unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        assert_eq!(std::fs::metadata(&target).unwrap().permissions().mode() & 0o777, 0o750);
    }

    #[test]
    fn special_files_fail_the_batch_first() {
        let (dir, paths) = batch_dir(2);
        let before = contents(dir.path());
        let files = [
            BatchWrite {
                path: &paths[0],
                contents: b"new",
                original: b"old 0",
            },
            BatchWrite {
                path: dir.path(),
                contents: b"new",
                original: b"",
            },
        ];
        let error = write_all_or_nothing(&files).unwrap_err();
        assert_eq!(error.path, dir.path());
        assert_eq!(contents(dir.path()), before);
    }
}
