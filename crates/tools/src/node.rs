//! What Node.js would print or compute, for the places where pi shows it to the model verbatim:
//! fs error messages (`ENOENT: no such file or directory, access '/abs/path'`), `path.resolve`'s
//! lexical normalisation, and JavaScript's number-to-text conversion.

use std::io;
use std::path::{Component, Path, PathBuf};

use nix::errno::Errno;

/// The errno name of an OS error (`ENOENT`, `EACCES`, …), if it carries one.
pub(crate) fn error_code(error: &io::Error) -> Option<String> {
    let errno = Errno::from_raw(error.raw_os_error()?);
    if errno == Errno::UnknownErrno {
        return None;
    }
    Some(format!("{errno:?}"))
}

/// libuv's description of an errno (what Node puts after the code).
fn describe(errno: Errno) -> String {
    let text = match errno {
        Errno::ENOENT => "no such file or directory",
        Errno::EACCES => "permission denied",
        Errno::EISDIR => "illegal operation on a directory",
        Errno::ENOTDIR => "not a directory",
        Errno::EEXIST => "file already exists",
        Errno::ELOOP => "too many symbolic links encountered",
        Errno::ENAMETOOLONG => "name too long",
        Errno::EPERM => "operation not permitted",
        Errno::EROFS => "read-only file system",
        Errno::ENOSPC => "no space left on device",
        Errno::EDQUOT => "disk quota exceeded",
        Errno::EMFILE => "too many open files",
        Errno::ENFILE => "file table overflow",
        Errno::EBUSY => "resource busy or locked",
        Errno::EIO => "i/o error",
        Errno::EINVAL => "invalid argument",
        Errno::EXDEV => "cross-device link not permitted",
        Errno::ETXTBSY => "text file is busy",
        Errno::ENOTEMPTY => "directory not empty",
        Errno::EFBIG => "file too large",
        Errno::EAGAIN => "resource temporarily unavailable",
        Errno::ENXIO => "no such device or address",
        Errno::ENODEV => "no such device",
        other => return other.desc().to_lowercase(),
    };
    text.to_owned()
}

/// A Node-style fs error message: `<CODE>: <description>, <syscall> '<path>'` (the path part only
/// when given). Errors without an OS error code fall back to their own text.
pub(crate) fn fs_error(error: &io::Error, syscall: &str, path: Option<&Path>) -> String {
    let Some(raw) = error.raw_os_error() else {
        return error.to_string();
    };
    let errno = Errno::from_raw(raw);
    if errno == Errno::UnknownErrno {
        return error.to_string();
    }
    let head = format!("{errno:?}: {}, {syscall}", describe(errno));
    match path {
        Some(path) => format!("{head} '{}'", path.display()),
        None => head,
    }
}

/// Lexical normalisation as Node's `path.resolve` does it: `.` segments dropped, `..` removes
/// the previous segment (never above the root), no trailing separator. Symlinks are not
/// consulted, exactly like Node.
pub(crate) fn normalize_path(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if out.file_name().is_some() {
                    out.pop();
                } else if !out.has_root() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// A number as JavaScript's `String(n)` prints it: `5`, `2.5`, `1e+21`, `1e-7`.
pub(crate) fn js_number(value: f64) -> String {
    if value.is_nan() {
        return "NaN".to_owned();
    }
    if value.is_infinite() {
        return if value > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    let magnitude = value.abs();
    if value.fract() == 0.0 && magnitude < 1e21 {
        return format!("{}", value as i128);
    }
    if !(1e-6..1e21).contains(&magnitude) {
        let text = format!("{value:e}");
        return match text.split_once('e') {
            Some((mantissa, exponent)) if !exponent.starts_with('-') => format!("{mantissa}e+{exponent}"),
            _ => text,
        };
    }
    format!("{value}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The helpers at a glance (the example the module documentation used to carry).
    #[test]
    fn module_example() {
        use std::path::Path;

        let missing = std::io::Error::from_raw_os_error(2);
        assert_eq!(
            fs_error(&missing, "access", Some(Path::new("/w/a.txt"))),
            "ENOENT: no such file or directory, access '/w/a.txt'"
        );
        assert_eq!(normalize_path(Path::new("/w/./a/../b")), Path::new("/w/b"));
        assert_eq!(js_number(5.0), "5");
    }

    #[test]
    fn messages_look_like_node() {
        let err = io::Error::from_raw_os_error(Errno::EISDIR as i32);
        assert_eq!(
            fs_error(&err, "read", None),
            "EISDIR: illegal operation on a directory, read"
        );
        let err = io::Error::from_raw_os_error(Errno::EACCES as i32);
        assert_eq!(
            fs_error(&err, "open", Some(Path::new("/x"))),
            "EACCES: permission denied, open '/x'"
        );
        assert_eq!(error_code(&err).as_deref(), Some("EACCES"));
        let custom = io::Error::other("boom");
        assert_eq!(fs_error(&custom, "read", None), "boom");
        assert_eq!(error_code(&custom), None);
    }

    #[test]
    fn normalises_like_path_resolve() {
        assert_eq!(normalize_path(Path::new("/w/.")), Path::new("/w"));
        assert_eq!(normalize_path(Path::new("/w/a/../../..")), Path::new("/"));
        assert_eq!(normalize_path(Path::new("/w//a/./b/")), Path::new("/w/a/b"));
        assert_eq!(normalize_path(Path::new("a/../..")), Path::new(".."));
        assert_eq!(normalize_path(Path::new("")), Path::new("."));
    }

    #[test]
    fn numbers_print_like_javascript() {
        assert_eq!(js_number(500.0), "500");
        assert_eq!(js_number(-0.0), "0");
        assert_eq!(js_number(-3.0), "-3");
        assert_eq!(js_number(2.5), "2.5");
        assert_eq!(js_number(1e21), "1e+21");
        assert_eq!(js_number(1e20), "100000000000000000000");
        assert_eq!(js_number(1e-7), "1e-7");
        assert_eq!(js_number(0.000001), "0.000001");
    }
}
