//! The lock of `auth.json` as pi takes it (the `proper-lockfile` package): a directory
//! `auth.json.lock` made with `mkdir`, considered abandoned once its modification time is older
//! than the stale limit, removed to release. A `pi` 0.73.1 and this program running at the same
//! time therefore exclude each other.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// How a lock is waited for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Retry {
    /// Attempts after the first.
    pub(crate) retries: u32,
    /// The first wait.
    pub(crate) min: Duration,
    /// Each wait is the last one times this.
    pub(crate) factor: u32,
    /// The longest wait.
    pub(crate) max: Duration,
    /// A lock older than this is abandoned.
    pub(crate) stale: Duration,
}

/// pi's synchronous lock (reads and writes): 10 attempts 20 ms apart; stale after 10 s.
pub(crate) const QUICK: Retry = Retry {
    retries: 9,
    min: Duration::from_millis(20),
    factor: 1,
    max: Duration::from_millis(20),
    stale: Duration::from_secs(10),
};

/// pi's lock around a token refresh: 10 retries from 100 ms, doubling, at most 10 s; stale after
/// 30 s.
pub(crate) const REFRESH: Retry = Retry {
    retries: 10,
    min: Duration::from_millis(100),
    factor: 2,
    max: Duration::from_secs(10),
    stale: Duration::from_secs(30),
};

/// A held lock; dropping it releases it.
#[derive(Debug)]
pub(crate) struct FileLock {
    dir: PathBuf,
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// The lock directory of `file`.
pub(crate) fn lock_dir(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// Takes the lock of `file`, waiting as `retry` says (blocking: call it off the runtime's
/// threads).
pub(crate) fn acquire(file: &Path, retry: Retry) -> std::io::Result<FileLock> {
    let dir = lock_dir(file);
    let mut wait = retry.min;
    let mut attempt = 0;
    loop {
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(FileLock { dir }),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                let stale = std::fs::metadata(&dir)
                    .and_then(|meta| meta.modified())
                    .ok()
                    .and_then(|modified| modified.elapsed().ok())
                    .is_some_and(|age| age > retry.stale);
                if stale {
                    // Abandoned by a process that died: take it over. A lock that cannot be removed
                    // (not empty, no permission) is an error, not a reason to try again at once forever.
                    match std::fs::remove_dir(&dir) {
                        Ok(()) => continue,
                        Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
                        Err(error) => return Err(error),
                    }
                }
                if attempt >= retry.retries {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::WouldBlock,
                        format!("Lock file is already being held: {}", dir.display()),
                    ));
                }
                attempt += 1;
                std::thread::sleep(wait);
                wait = (wait * retry.factor).min(retry.max);
            }
            Err(error) => return Err(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_excludes_and_a_stale_one_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("auth.json");
        let held = acquire(&file, QUICK).unwrap();
        assert!(dir.path().join("auth.json.lock").is_dir());
        let quick = Retry { retries: 1, ..QUICK };
        assert!(acquire(&file, quick).is_err());
        drop(held);
        assert!(!dir.path().join("auth.json.lock").exists());
        // A lock left behind (older than the stale limit) does not block.
        std::fs::create_dir(dir.path().join("auth.json.lock")).unwrap();
        let at_once = Retry {
            stale: Duration::ZERO,
            ..quick
        };
        std::thread::sleep(Duration::from_millis(5));
        assert!(acquire(&file, at_once).is_ok());
    }
}
