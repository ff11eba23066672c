//! Turning a path a model wrote into a path on disk, the way pi does.
//!
//! A leading `@` is stripped (some models prefix paths with it), Unicode spaces become ASCII
//! spaces, `~` and `~/…` expand to the home directory, and relative paths are resolved against
//! the session's working directory.
//!
//! ```
//! use std::path::Path;
//! use pi_tools::path::resolve_path;
//!
//! assert_eq!(resolve_path(Path::new("/work"), "@src/main.rs"), Path::new("/work/src/main.rs"));
//! assert_eq!(resolve_path(Path::new("/work"), "/etc/hosts"), Path::new("/etc/hosts"));
//! ```

use std::path::{Path, PathBuf};

fn is_unicode_space(c: char) -> bool {
    matches!(
        c,
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}'
    )
}

/// The user's home directory, from `$HOME`.
pub fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// Expands `~`, strips a leading `@` and normalises Unicode spaces, without resolving against a
/// directory.
pub fn expand_path(input: &str) -> PathBuf {
    let input = input.strip_prefix('@').unwrap_or(input);
    let normalised: String = input
        .chars()
        .map(|c| if is_unicode_space(c) { ' ' } else { c })
        .collect();
    if normalised == "~" {
        if let Some(home) = home_dir() {
            return home;
        }
    } else if let Some(rest) = normalised.strip_prefix("~/")
        && let Some(home) = home_dir()
    {
        return home.join(rest);
    }
    PathBuf::from(normalised)
}

/// Resolves a model-supplied path against `cwd`, normalising `.` and `..` lexically the way
/// Node's `path.resolve` does.
pub fn resolve_path(cwd: &Path, input: &str) -> PathBuf {
    let expanded = expand_path(input);
    let joined = if expanded.is_absolute() {
        expanded
    } else {
        cwd.join(expanded)
    };
    crate::node::normalize_path(&joined)
}

/// `path` relative to `base` with `/` separators, or `path` itself when it is not under `base`.
pub fn display_relative(base: &Path, path: &Path) -> String {
    let Ok(relative) = path.strip_prefix(base) else {
        return path.to_string_lossy().into_owned();
    };
    relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_at_and_normalises_spaces() {
        let cwd = Path::new("/w");
        assert_eq!(resolve_path(cwd, "@a\u{00A0}b.txt"), Path::new("/w/a b.txt"));
        assert_eq!(resolve_path(cwd, "a/../b"), Path::new("/w/b"));
        assert_eq!(resolve_path(cwd, "."), Path::new("/w"));
    }

    #[test]
    fn expands_home() {
        if let Some(home) = home_dir() {
            assert_eq!(resolve_path(Path::new("/w"), "~/x"), home.join("x"));
            assert_eq!(resolve_path(Path::new("/w"), "~"), home);
        }
    }

    #[test]
    fn relative_display_uses_slashes() {
        assert_eq!(display_relative(Path::new("/a"), Path::new("/a/b/c.rs")), "b/c.rs");
        assert_eq!(display_relative(Path::new("/a"), Path::new("/x/y")), "/x/y");
    }
}
