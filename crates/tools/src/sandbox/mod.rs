//! The opt-in sandbox of the processes pi starts for the model (beyond pi, which runs them with
//! the user's full rights): `bash` commands and custom-tool processes may write only inside the
//! project, the temp directories and a few devices a shell needs, and, when the network is off,
//! open no network socket. They read and execute everywhere.
//!
//! On Linux a [`Sandbox`] is a Landlock ruleset (write access rights; TCP bind and connect when
//! the network is off) plus, when the network is off, a seccomp filter refusing every socket that
//! is not a Unix socket (so UDP and raw sockets too) and `io_uring` (whose requests seccomp does
//! not see). [`Sandbox::spawn_with`] enters both on a fresh thread of its own — Landlock, seccomp
//! and `no_new_privs` hold for the calling thread only and pass to every process it starts — and
//! starts the child there, so pi itself stays unrestricted and no `unsafe` `pre_exec` hook is
//! needed. It fails closed: when the kernel does not enforce every right asked for, it returns a
//! [`SandboxError`] and nothing is started. Elsewhere than on Linux it always fails.
//!
//! The built-in file tools (`read`, `write`, `edit`, …) run inside pi itself and are not
//! limited by it; they have their own checks (`docs/security.md`).
//!
//! ```no_run
//! let sandbox = pi_tools::Sandbox::new("/home/me/project").network(false);
//! let mut command = std::process::Command::new("sh");
//! command.arg("-c").arg("touch /home/me/elsewhere");
//! let status = sandbox.spawn_with(|| command.status()).expect("a kernel with Landlock").unwrap();
//! assert!(!status.success()); // Permission denied
//! ```

mod error;
#[cfg(target_os = "linux")]
mod linux;

pub use error::SandboxError;

use std::path::{Path, PathBuf};

/// Files and directories every sandboxed process may write besides the project and the temp
/// directories: the devices a shell and common tools open for writing. Missing ones are skipped.
const DEVICES: [&str; 9] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
];

/// The temp directories: `$TMPDIR` (or `/tmp`), `/tmp` and `/var/tmp`.
fn temp_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![std::env::temp_dir()];
    for dir in ["/tmp", "/var/tmp"] {
        let dir = PathBuf::from(dir);
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    dirs
}

/// What a sandboxed process may do: write below [`Sandbox::writable_paths`], and use the network
/// only when [`Sandbox::allows_network`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    project: PathBuf,
    extra: Vec<PathBuf>,
    network: bool,
    simulate_missing_landlock: bool,
}

impl Sandbox {
    /// A sandbox whose process may write in `project`, the temp directories and the usual
    /// devices, with the network allowed.
    pub fn new(project: impl Into<PathBuf>) -> Self {
        Sandbox {
            project: project.into(),
            extra: Vec::new(),
            network: true,
            simulate_missing_landlock: false,
        }
    }

    /// Allows or forbids the network (TCP, UDP and every other non-Unix socket).
    #[must_use]
    pub fn network(mut self, allowed: bool) -> Self {
        self.network = allowed;
        self
    }

    /// Lets the process write below `path` too (e.g. a build cache); a missing path is skipped.
    #[must_use]
    pub fn writable(mut self, path: impl Into<PathBuf>) -> Self {
        self.extra.push(path.into());
        self
    }

    /// For tests of the fail-closed path: [`Sandbox::spawn_with`] fails as on a kernel without
    /// Landlock, whatever the kernel.
    #[must_use]
    pub fn simulate_missing_landlock(mut self) -> Self {
        self.simulate_missing_landlock = true;
        self
    }

    /// The project directory.
    pub fn project(&self) -> &Path {
        &self.project
    }

    /// Whether the network is allowed.
    pub fn allows_network(&self) -> bool {
        self.network
    }

    /// Everything the process may write below: the project, the temp directories, the extra
    /// paths, then the devices (those that do not exist are skipped when preparing).
    pub fn writable_paths(&self) -> Vec<PathBuf> {
        let mut paths = vec![self.project.clone()];
        paths.extend(temp_dirs());
        paths.extend(self.extra.iter().cloned());
        paths.extend(DEVICES.iter().map(PathBuf::from));
        paths
    }

    /// Runs `start` — which should start the sandboxed process, e.g. `|| command.spawn()` — on a
    /// new thread that has entered the sandbox, inside the caller's tokio runtime if there is one.
    /// Every process that thread starts, and their descendants, stay in the sandbox; the thread
    /// ends with `start`. Fails closed, without calling `start`, when the platform or the kernel
    /// cannot enforce every rule. Blocks the caller for about as long as starting a process
    /// or two does (the rules are built anew each time, about a millisecond).
    pub fn spawn_with<T: Send>(&self, start: impl FnOnce() -> T + Send) -> Result<T, SandboxError> {
        if self.simulate_missing_landlock {
            return Err(SandboxError::Landlock {
                needed: self.needed(),
                detail: "simulated: the kernel does not support Landlock".to_owned(),
            });
        }
        #[cfg(target_os = "linux")]
        {
            let runtime = tokio::runtime::Handle::try_current().ok();
            std::thread::scope(|scope| {
                let thread = std::thread::Builder::new()
                    .name("pi-sandbox".to_owned())
                    .spawn_scoped(scope, move || {
                        linux::restrict_this_thread(&self.writable_paths(), self.network, self.needed())?;
                        let _runtime = runtime.as_ref().map(tokio::runtime::Handle::enter);
                        Ok(start())
                    })
                    .map_err(SandboxError::Thread)?;
                thread
                    .join()
                    .unwrap_or_else(|_| Err(SandboxError::Thread(std::io::Error::other("it panicked"))))
            })
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = start;
            Err(SandboxError::UnsupportedPlatform {
                os: std::env::consts::OS,
            })
        }
    }

    /// Checks that the sandbox can be entered here (the platform, the kernel, the paths), without
    /// starting anything: [`Sandbox::spawn_with`] of nothing.
    pub fn check(&self) -> Result<(), SandboxError> {
        self.spawn_with(|| ())
    }

    /// What the kernel must offer, in words, for the error texts.
    fn needed(&self) -> &'static str {
        if self.network {
            "file-system rules (ABI 3, Linux 6.2 or newer)"
        } else {
            "file-system and TCP rules (ABI 4, Linux 6.7 or newer)"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writable_paths_are_the_project_temp_extra_and_devices() {
        let sandbox = Sandbox::new("/work/project").writable("/cache");
        let paths = sandbox.writable_paths();
        assert_eq!(paths[0], Path::new("/work/project"));
        assert!(paths.contains(&std::env::temp_dir()));
        assert!(paths.contains(&PathBuf::from("/tmp")));
        assert!(paths.contains(&PathBuf::from("/cache")));
        assert!(paths.contains(&PathBuf::from("/dev/null")));
        assert!(!paths.iter().any(|p| p == Path::new("/") || p == Path::new("/home")));
    }

    #[test]
    fn a_simulated_missing_landlock_fails_closed_with_a_clear_text() {
        let error = Sandbox::new("/tmp")
            .network(false)
            .simulate_missing_landlock()
            .spawn_with(|| panic!("nothing may run"))
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "Sandbox unavailable: this kernel does not enforce Landlock file-system and TCP rules (ABI 4, Linux \
6.7 or newer) (simulated: the kernel does not support Landlock). Nothing was run. Start pi with --no-sandbox \
(or set \"sandbox\": {\"enabled\": false} in settings.json) to run commands without the sandbox."
        );
    }
}
