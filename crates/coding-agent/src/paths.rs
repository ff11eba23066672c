//! Path arithmetic as pi does it with Node's `path`: resolving lexically (`..` removed without
//! touching the disk), `~` expansion, and relative paths between two absolute ones. Shared by
//! packages and resources (one copy, so the two cannot drift).

use std::path::{Component, Path, PathBuf};

/// `path` made absolute against `base` and normalized lexically (`.` and `..` removed), as Node's
/// `path.resolve(base, path)` (a relative `base` is taken from the process's working directory).
pub(crate) fn resolve_lexically(base: &Path, path: &Path) -> PathBuf {
    let joined = base.join(path);
    let out = normalize(&std::path::absolute(&joined).unwrap_or(joined));
    if out.as_os_str().is_empty() {
        return PathBuf::from("/");
    }
    out
}

/// `path` with `.` and `..` removed lexically: `..` above the root stays at the root; a relative
/// path keeps the `..` it cannot remove.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The path with links resolved, or itself when that fails (pi's `canonicalizePath`).
pub(crate) fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// `base` joined with `rest` as Node's `path.join` does: `rest` never replaces `base`, even when
/// it starts with `/` (an npm "name" that is a tarball path).
pub(crate) fn node_join(base: &Path, rest: &str) -> PathBuf {
    resolve_lexically(base, Path::new(rest.trim_start_matches('/')))
}

/// `input` (trimmed) with a leading `~` expanded to `home`, else resolved against `base`.
pub(crate) fn resolve_from_base(input: &str, base: &Path, home: &Path) -> PathBuf {
    let trimmed = input.trim();
    if trimmed == "~" {
        return home.to_path_buf();
    }
    if let Some(rest) = trimmed.strip_prefix("~/") {
        return resolve_lexically(home, Path::new(rest));
    }
    if let Some(rest) = trimmed.strip_prefix('~') {
        return resolve_lexically(home, Path::new(rest));
    }
    resolve_lexically(base, Path::new(trimmed))
}

/// The relative path from `from` to `to` (both absolute), as Node's `path.relative`: empty when
/// they are the same.
pub(crate) fn relative(from: &Path, to: &Path) -> String {
    let (from, to) = (
        resolve_lexically(Path::new("/"), from),
        resolve_lexically(Path::new("/"), to),
    );
    let from: Vec<_> = from.components().collect();
    let to: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = Vec::new();
    for _ in common..from.len() {
        parts.push("..".to_owned());
    }
    for component in &to[common..] {
        parts.push(component.as_os_str().to_string_lossy().into_owned());
    }
    parts.join("/")
}

/// `path` with `/` separators.
pub(crate) fn posix(path: &Path) -> String {
    path.to_string_lossy().replace(std::path::MAIN_SEPARATOR, "/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_like_node() {
        let base = Path::new("/home/ada/project");
        assert_eq!(
            resolve_lexically(base, Path::new("../pkg/./x")),
            Path::new("/home/ada/pkg/x")
        );
        assert_eq!(resolve_lexically(base, Path::new("/a/../../b")), Path::new("/b"));
        let home = Path::new("/home/ada");
        assert_eq!(resolve_from_base(" ~/pkgs ", base, home), Path::new("/home/ada/pkgs"));
        assert_eq!(resolve_from_base("~", base, home), home);
        assert_eq!(resolve_from_base("./p", base, home), Path::new("/home/ada/project/p"));
        assert_eq!(
            resolve_from_base("../skills", Path::new("/p/.pi"), home),
            Path::new("/p/skills")
        );
        assert_eq!(resolve_from_base("/abs", base, home), Path::new("/abs"));
        assert_eq!(normalize(Path::new("a/../../b/./c")), Path::new("../b/c"));
    }

    #[test]
    fn join_like_node() {
        assert_eq!(
            node_join(Path::new("/a/node_modules"), "/tmp/x.tgz"),
            Path::new("/a/node_modules/tmp/x.tgz")
        );
        assert_eq!(node_join(Path::new("/a"), "@s/n"), Path::new("/a/@s/n"));
    }

    #[test]
    fn relative_like_node() {
        let agent = Path::new("/tmp/r/home/.pi/agent");
        assert_eq!(
            relative(agent, Path::new("/tmp/r/fixtures/local-pkg")),
            "../../../fixtures/local-pkg"
        );
        assert_eq!(relative(agent, agent), "");
        assert_eq!(relative(Path::new("/a"), Path::new("/a/b/c")), "b/c");
    }
}
