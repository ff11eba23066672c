//! Tests of the opt-in sandbox of bash and tool processes need a kernel with Landlock. Where the
//! kernel lacks it they must fail, not skip — unless the person running them says so with
//! `PI_ALLOW_NO_LANDLOCK=1` (never set in CI).
//!
//! ```
//! # fn check() -> Result<(), String> { Ok(()) }
//! // In a test: `check` is `pi_tools::Sandbox::new(dir).network(false).check()`.
//! if !pi_test_support::landlock::available(check()) {
//!     return; // PI_ALLOW_NO_LANDLOCK=1 on a kernel without Landlock: said on stderr
//! }
//! ```

/// The variable that lets sandbox tests pass on a kernel without Landlock.
pub const ALLOW_NO_LANDLOCK: &str = "PI_ALLOW_NO_LANDLOCK";

/// Whether the sandbox can run here, from the result of checking it: `true` when it can; when it
/// cannot, `false` (said on stderr) if `PI_ALLOW_NO_LANDLOCK=1`, else a panic naming the cause.
///
/// # Panics
///
/// When `check` failed and `PI_ALLOW_NO_LANDLOCK` is not `1`.
pub fn available<E: std::fmt::Display>(check: Result<(), E>) -> bool {
    match check {
        Ok(()) => true,
        Err(error) if std::env::var(ALLOW_NO_LANDLOCK).as_deref() == Ok("1") => {
            eprintln!("{ALLOW_NO_LANDLOCK}=1: not testing the sandbox here: {error}");
            false
        }
        Err(error) => panic!("this kernel cannot run the sandbox tests (set {ALLOW_NO_LANDLOCK}=1 to allow): {error}"),
    }
}

/// A project directory and a sibling outside it, under `root` (a test's `CARGO_TARGET_TMPDIR`:
/// not below a temp directory, which the sandbox lets everyone write).
#[derive(Debug)]
pub struct SandboxDirs {
    _root: tempfile::TempDir,
    /// The directory the sandbox lets the command write.
    pub project: std::path::PathBuf,
    /// A directory beside it the sandbox must keep the command out of.
    pub outside: std::path::PathBuf,
}

impl SandboxDirs {
    /// Makes both directories under `root`; `writable` lists what a sandbox of the project lets
    /// write (`pi_tools::Sandbox::new(project).writable_paths()`, the project first).
    ///
    /// # Panics
    ///
    /// When a directory cannot be made, or `outside` lies below one of the other writable paths
    /// (the test would then prove nothing).
    pub fn new(root: &str, writable: impl FnOnce(&std::path::Path) -> Vec<std::path::PathBuf>) -> Self {
        let root = tempfile::tempdir_in(root).expect("a temporary directory");
        let base = std::fs::canonicalize(root.path()).expect("its canonical path");
        let (project, outside) = (base.join("project"), base.join("outside"));
        std::fs::create_dir(&project).expect("the project directory");
        std::fs::create_dir(&outside).expect("the outside directory");
        for allowed in writable(&project).iter().skip(1) {
            let allowed = std::fs::canonicalize(allowed).unwrap_or_else(|_| allowed.clone());
            assert!(
                !outside.starts_with(&allowed),
                "{} is below {}, which the sandbox lets everyone write: the test would prove nothing",
                outside.display(),
                allowed.display()
            );
        }
        SandboxDirs {
            _root: root,
            project,
            outside,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_working_sandbox_is_available() {
        assert!(available(Ok::<(), String>(())));
    }

    #[test]
    #[should_panic(expected = "this kernel cannot run the sandbox tests")]
    fn a_missing_one_fails_the_test() {
        // The variable is never set where the crate's own tests run.
        assert_ne!(std::env::var(ALLOW_NO_LANDLOCK).as_deref(), Ok("1"));
        available(Err("no Landlock"));
    }
}
