//! The directory walk shared by `grep` and `find`.
//!
//! pi runs `rg --hidden` and `fd --hidden`; both are built on the `ignore` walker, and so is this module:
//! hidden files are included; `.gitignore`, `.ignore`, `.git/info/exclude` and the global git excludes are
//! respected, also outside a git repository (`require_git(false)`, fd's `--no-require-git`); `.git` itself is
//! never entered (nor listed). Both tools walk in two phases: a single-threaded walk in path order first
//! (it ends as soon as enough results are known, the usual case for a frequent pattern), then, for a big
//! tree, the parallel walker for everything after the last path visited ([`already_visited`]). A
//! [`FirstByPath`](crate::collector::FirstByPath) keeps only the results that sort first by path, so the output is the same on every run
//! whichever thread found what, and the walkers skip whole directories that sort after the kept results.

use std::path::Path;

use ignore::{DirEntry, WalkBuilder, WalkParallel, WalkState};
#[cfg(test)]
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// The line limit pi passes to `truncateHead` for grep/find output (`Number.MAX_SAFE_INTEGER`): only the
/// byte limit applies.
pub(crate) const NO_LINE_LIMIT: usize = 9_007_199_254_740_991;

/// A walker over `root` configured like `rg --hidden --no-require-git` / `fd --hidden --no-require-git`;
/// `tool_ignore` is the tool's own ignore file name (`.rgignore` or `.fdignore`).
pub(crate) fn walker(root: &Path, tool_ignore: &str) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .require_git(false)
        .add_custom_ignore_filename(tool_ignore)
        .filter_entry(|entry| entry.file_name() != ".git");
    builder
}

/// Runs `walk`, calling a visitor made by `make_visitor` (one per thread) for every entry the walker yields.
/// Unreadable entries are skipped; the walk stops soon after `cancel` fires.
pub(crate) fn run<'s, V>(walk: WalkParallel, cancel: &'s CancellationToken, mut make_visitor: impl FnMut() -> V)
where
    V: FnMut(&DirEntry) -> WalkState + Send + 's,
{
    walk.run(|| {
        let mut visit = make_visitor();
        Box::new(move |entry| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            match entry {
                Ok(entry) => visit(&entry),
                Err(_) => WalkState::Continue,
            }
        })
    });
}

/// For a parallel walk that continues a sorted walk which stopped after visiting `last`: the walk state for
/// an entry the sorted walk already visited (`None`: not visited yet). Every path up to `last` was visited;
/// `last` and its ancestors are descended into (their later children were not), anything else up to `last`
/// is skipped with its subtree, which sorts before `last` too.
pub(crate) fn already_visited(path: &Path, is_dir: bool, last: Option<&Path>) -> Option<WalkState> {
    let last = last?;
    if path > last {
        return None;
    }
    Some(if is_dir && last.starts_with(path) {
        WalkState::Continue
    } else {
        WalkState::Skip
    })
}

/// Whether a walker entry is a directory (not following symlinks).
pub(crate) fn is_dir(entry: &DirEntry) -> bool {
    entry.file_type().is_some_and(|kind| kind.is_dir())
}

/// A `limit` argument as pi uses it: `Math.max(1, limit ?? default)`, rounded down to a whole count.
pub(crate) fn limit_or(limit: Option<f64>, default: usize) -> usize {
    match limit {
        Some(limit) if limit.is_finite() => (limit.floor().max(1.0)) as usize,
        Some(_) => 1,
        None => default,
    }
}

/// [`limit_or`] on a raw `limit` argument.
#[cfg(test)]
fn parse_limit(value: Option<&Value>, default: usize) -> usize {
    limit_or(value.and_then(Value::as_f64), default)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn visited_paths_are_skipped_except_the_way_down_to_the_last() {
        let last = Some(Path::new("/r/b/c/d.txt"));
        assert_eq!(already_visited(Path::new("/r/a"), true, last), Some(WalkState::Skip));
        assert_eq!(
            already_visited(Path::new("/r/b"), true, last),
            Some(WalkState::Continue)
        );
        assert_eq!(
            already_visited(Path::new("/r/b/c"), true, last),
            Some(WalkState::Continue)
        );
        assert_eq!(
            already_visited(Path::new("/r/b/a.txt"), false, last),
            Some(WalkState::Skip)
        );
        assert_eq!(
            already_visited(Path::new("/r/b/c/d.txt"), false, last),
            Some(WalkState::Skip)
        );
        assert_eq!(already_visited(Path::new("/r/b/c/e.txt"), false, last), None);
        assert_eq!(already_visited(Path::new("/r/b-"), true, last), None);
        assert_eq!(already_visited(Path::new("/r/a"), true, None), None);
    }

    #[test]
    fn limits_are_at_least_one() {
        assert_eq!(parse_limit(None, 100), 100);
        assert_eq!(parse_limit(Some(&json!(0)), 100), 1);
        assert_eq!(parse_limit(Some(&json!(-5)), 100), 1);
        assert_eq!(parse_limit(Some(&json!(2.7)), 100), 2);
        assert_eq!(parse_limit(Some(&json!(7)), 100), 7);
        assert_eq!(parse_limit(Some(&Value::Null), 100), 100);
    }
}
