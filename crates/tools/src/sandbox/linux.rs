//! The sandbox on Linux: a Landlock ruleset with every right a hard requirement, and a seccomp
//! filter compiled by `seccompiler`, both entered by the calling thread only.

use std::collections::BTreeMap;
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, PathFdError, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetError, RulesetStatus,
};
use nix::libc;
use seccompiler::{
    BackendError, BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

use super::error::SandboxError;

/// The Landlock ABI whose write rights the sandbox asks for: 3 is the first to cover truncation,
/// without which a file outside the project could still be emptied.
const FS_ABI: ABI = ABI::V3;

/// Restricts the calling thread (and so every process it starts): `no_new_privs`, the network
/// filter when the network is off, then the Landlock ruleset, which must be fully enforced.
pub(super) fn restrict_this_thread(
    writable_paths: &[PathBuf],
    network: bool,
    needed: &'static str,
) -> Result<(), SandboxError> {
    let landlock_error = |detail: String| SandboxError::Landlock { needed, detail };
    let ruleset_error = |error: RulesetError| landlock_error(error.to_string());
    // Everything that can fail is built before the thread is restricted in any way.
    let write = AccessFs::from_write(FS_ABI);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(write)
        .map_err(ruleset_error)?;
    if !network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(ABI::V4))
            .map_err(ruleset_error)?;
    }
    let mut created = ruleset.create().map_err(ruleset_error)?;
    for path in writable_paths.iter().cloned() {
        let fd = match PathFd::new(&path) {
            Ok(fd) => fd,
            Err(PathFdError::OpenCall { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => continue,
            Err(PathFdError::OpenCall { source, .. }) => return Err(SandboxError::Path { path, source }),
            Err(error) => {
                return Err(SandboxError::Path {
                    path,
                    source: std::io::Error::other(error.to_string()),
                });
            }
        };
        let is_dir = std::fs::metadata(&path).is_ok_and(|meta| meta.is_dir());
        let access = if is_dir {
            write
        } else {
            write & AccessFs::from_file(FS_ABI)
        };
        created = created.add_rule(PathBeneath::new(fd, access)).map_err(ruleset_error)?;
    }
    let filter = if network { None } else { Some(network_filter()?) };
    nix::sys::prctl::set_no_new_privs().map_err(|errno| landlock_error(format!("no_new_privs: {errno}")))?;
    if let Some(filter) = &filter {
        seccompiler::apply_filter(filter).map_err(|error| SandboxError::Seccomp {
            arch: std::env::consts::ARCH,
            detail: error.to_string(),
        })?;
    }
    let status = created.restrict_self().map_err(ruleset_error)?;
    if status.ruleset != RulesetStatus::FullyEnforced {
        return Err(landlock_error(format!("the ruleset is {:?}", status.ruleset)));
    }
    Ok(())
}

/// The seccomp filter of a sandbox without network: `socket` and `socketpair` fail with `EPERM`
/// for every family but `AF_UNIX`, and so does `io_uring_setup` (seccomp does not see the requests
/// of an `io_uring`, which can open sockets). Everything else is allowed.
fn network_filter() -> Result<BpfProgram, SandboxError> {
    let arch = std::env::consts::ARCH;
    let seccomp_error = |detail: String| SandboxError::Seccomp { arch, detail };
    let target = arch
        .try_into()
        .map_err(|error: BackendError| seccomp_error(error.to_string()))?;
    let unix = u64::try_from(libc::AF_UNIX).map_err(|error| seccomp_error(error.to_string()))?;
    let not_unix = || {
        SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, unix)
            .and_then(|condition| SeccompRule::new(vec![condition]))
            .map_err(|error| seccomp_error(error.to_string()))
    };
    let rules: BTreeMap<i64, Vec<SeccompRule>> = [
        (libc::SYS_socket, vec![not_unix()?]),
        (libc::SYS_socketpair, vec![not_unix()?]),
        (libc::SYS_io_uring_setup, Vec::new()),
    ]
    .into_iter()
    .collect();
    let eperm = u32::try_from(libc::EPERM).map_err(|error| seccomp_error(error.to_string()))?;
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(eperm), target)
        .map_err(|error| seccomp_error(error.to_string()))?;
    filter
        .try_into()
        .map_err(|error: BackendError| seccomp_error(error.to_string()))
}
