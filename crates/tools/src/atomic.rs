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

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically, keeping an existing file's permissions. A symlink is
/// followed (its target is replaced, the link stays), and a special file such as a FIFO or a
/// device is written in place, since renaming over it would replace the node itself, and so is
/// an existing file in a directory where no temporary file can be created. Blocking:
/// call it from `spawn_blocking` in async code.
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
    let permissions = std::fs::metadata(path).ok().map(|m| m.permissions());
    let mut temp = match tempfile::Builder::new().prefix(".pi-write-").tempfile_in(dir) {
        Ok(temp) => temp,
        // A writable file in a directory we may not create files in: write in place, as pi does.
        Err(error) if error.kind() == std::io::ErrorKind::PermissionDenied && permissions.is_some() => {
            return std::fs::write(path, bytes);
        }
        Err(error) => return Err(error),
    };
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    if let Some(permissions) = permissions {
        temp.as_file().set_permissions(permissions)?;
    }
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
