//! The `skills` / `prompts` arrays of `settings.json` as pi reads them: plain entries are files or
//! directories; `!pattern` excludes, `+path` forces in, `-path` forces out, and entries with `*`
//! or `?` are globs that select among the plain entries' files. The `!`/`+`/`-` entries also
//! filter the auto-discovered resources of the same scope. A package's manifest and the filters
//! of its settings entry use the same rules ([`apply_patterns`]).

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};

use crate::paths::{posix, relative};

/// Whether an entry is `!pattern`, `+path` or `-path`.
pub(crate) fn is_override(entry: &str) -> bool {
    entry.starts_with('!') || entry.starts_with('+') || entry.starts_with('-')
}

/// Whether a settings entry is a pattern rather than a path.
pub(crate) fn is_pattern(entry: &str) -> bool {
    is_override(entry) || has_glob(entry)
}

/// Whether an entry has `*` or `?` (a glob).
pub(crate) fn has_glob(entry: &str) -> bool {
    entry.contains('*') || entry.contains('?')
}

/// A glob as pi's `minimatch` reads these patterns: `*` does not cross `/`; `\\` is `/`.
pub(crate) fn glob(pattern: &str) -> Option<GlobMatcher> {
    GlobBuilder::new(&pattern.replace('\\', "/"))
        .literal_separator(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

/// The forms of a resource path a pattern is compared with: relative to the base, the file name,
/// the absolute path, and for a `SKILL.md` the same three of its directory.
fn forms(file: &Path, base: &Path) -> Vec<String> {
    let relative = |p: &Path| relative(base, p);
    let name = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let mut out = vec![relative(file), name(file), posix(file)];
    if name(file) == "SKILL.md"
        && let Some(dir) = file.parent()
    {
        out.extend([relative(dir), name(dir), posix(dir)]);
    }
    out
}

fn matches_any(file: &Path, patterns: &[&str], base: &Path) -> bool {
    let forms = forms(file, base);
    patterns
        .iter()
        .filter_map(|p| glob(p))
        .any(|g| forms.iter().any(|f| g.is_match(f)))
}

fn matches_exact(file: &Path, patterns: &[&str], base: &Path) -> bool {
    let relative = |p: &Path| relative(base, p);
    let is_skill = file.file_name().is_some_and(|n| n == "SKILL.md");
    patterns.iter().any(|pattern| {
        let pattern = pattern
            .strip_prefix("./")
            .or_else(|| pattern.strip_prefix(".\\"))
            .unwrap_or(pattern)
            .replace('\\', "/");
        if pattern == relative(file) || pattern == posix(file) {
            return true;
        }
        is_skill
            && file
                .parent()
                .is_some_and(|dir| pattern == relative(dir) || pattern == posix(dir))
    })
}

fn stripped(entries: &[String], prefix: char) -> Vec<&str> {
    entries.iter().filter_map(|e| e.strip_prefix(prefix)).collect()
}

/// pi's `isEnabledByOverrides`: whether an auto-discovered `file` stays on given the scope's
/// settings entries.
pub(crate) fn enabled_by_overrides(file: &Path, entries: &[String], base: &Path) -> bool {
    let (excludes, includes, force_out) = (stripped(entries, '!'), stripped(entries, '+'), stripped(entries, '-'));
    let mut enabled = excludes.is_empty() || !matches_any(file, &excludes, base);
    if !includes.is_empty() && matches_exact(file, &includes, base) {
        enabled = true;
    }
    if !force_out.is_empty() && matches_exact(file, &force_out, base) {
        enabled = false;
    }
    enabled
}

/// pi's `applyPatterns`: whether a file found from the plain entries stays on given the pattern
/// entries.
pub(crate) fn enabled_by_patterns(file: &Path, patterns: &[&str], base: &Path) -> bool {
    let includes: Vec<&str> = patterns.iter().copied().filter(|p| !is_override(p)).collect();
    let excludes: Vec<&str> = patterns.iter().filter_map(|p| p.strip_prefix('!')).collect();
    let force_in: Vec<&str> = patterns.iter().filter_map(|p| p.strip_prefix('+')).collect();
    let force_out: Vec<&str> = patterns.iter().filter_map(|p| p.strip_prefix('-')).collect();
    let mut enabled = includes.is_empty() || matches_any(file, &includes, base);
    if enabled && !excludes.is_empty() && matches_any(file, &excludes, base) {
        enabled = false;
    }
    if !enabled && !force_in.is_empty() && matches_exact(file, &force_in, base) {
        enabled = true;
    }
    if !force_out.is_empty() && matches_exact(file, &force_out, base) {
        enabled = false;
    }
    enabled
}

/// pi's `applyPatterns` over a list (a package's manifest and its settings filters): the files of
/// `all` that stay on, in pi's order — the ones kept, then the `+path` ones brought back.
pub(crate) fn apply_patterns(all: &[PathBuf], patterns: &[String], base: &Path) -> Vec<PathBuf> {
    let includes: Vec<&str> = patterns
        .iter()
        .map(String::as_str)
        .filter(|p| !is_override(p))
        .collect();
    let excludes = stripped(patterns, '!');
    let force_in = stripped(patterns, '+');
    let force_out = stripped(patterns, '-');
    let mut result: Vec<PathBuf> = all
        .iter()
        .filter(|p| includes.is_empty() || matches_any(p, &includes, base))
        .filter(|p| excludes.is_empty() || !matches_any(p, &excludes, base))
        .cloned()
        .collect();
    if !force_in.is_empty() {
        for path in all {
            if !result.contains(path) && matches_exact(path, &force_in, base) {
                result.push(path.clone());
            }
        }
    }
    if !force_out.is_empty() {
        result.retain(|p| !matches_exact(p, &force_out, base));
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_exclude_and_force() {
        let base = Path::new("/p/.pi");
        let skill = PathBuf::from("/p/.pi/skills/web/SKILL.md");
        let entries = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert!(enabled_by_overrides(&skill, &entries(&["../other"]), base));
        assert!(!enabled_by_overrides(&skill, &entries(&["!web"]), base));
        assert!(!enabled_by_overrides(&skill, &entries(&["!skills/*"]), base));
        assert!(enabled_by_overrides(&skill, &entries(&["!web", "+skills/web"]), base));
        assert!(!enabled_by_overrides(
            &skill,
            &entries(&["+skills/web", "-skills/web/SKILL.md"]),
            base
        ));
    }

    #[test]
    fn globs_select_among_the_files() {
        let base = Path::new("/p/.pi");
        let a = PathBuf::from("/p/.pi/prompts/a.md");
        let b = PathBuf::from("/p/.pi/prompts/sub/b.md");
        assert!(enabled_by_patterns(&a, &["prompts/*.md"], base));
        assert!(!enabled_by_patterns(&b, &["prompts/*.md"], base));
        assert!(enabled_by_patterns(&b, &["prompts/*.md", "+prompts/sub/b.md"], base));
        assert!(!enabled_by_patterns(&a, &["!a.md"], base));
    }

    #[test]
    fn force_exclude_wins_over_force_include() {
        let root = Path::new("/p");
        let all = vec![root.join("a.md"), root.join("b.md")];
        let patterns = ["+a.md", "-a.md", "!b.md"].map(str::to_owned);
        assert!(apply_patterns(&all, &patterns, root).is_empty());
        let patterns = ["-./b.md".to_owned()];
        assert_eq!(apply_patterns(&all, &patterns, root), vec![root.join("a.md")]);
        // `.\` in front is ignored too (one matcher for settings and packages).
        let patterns = ["-.\\b.md".to_owned()];
        assert_eq!(apply_patterns(&all, &patterns, root), vec![root.join("a.md")]);
    }

    #[test]
    fn a_file_outside_the_base_is_matched_by_its_relative_path() {
        let base = Path::new("/p/.pi");
        let outside = PathBuf::from("/p/shared/x.md");
        assert!(!enabled_by_patterns(&outside, &["!../shared/x.md"], base));
        assert!(enabled_by_patterns(&outside, &["!shared/x.md"], base));
    }

    proptest::proptest! {
        /// Whatever the patterns, the result is a subset of the files, without duplicates, and a
        /// `-path` is never in it.
        #[test]
        fn patterns_only_narrow(
            names in proptest::collection::vec("[ab]{1,2}\\.md", 1..6),
            patterns in proptest::collection::vec("[!+-]?[ab*]{1,2}(\\.md)?", 0..5),
        ) {
            let root = Path::new("/p");
            let mut all: Vec<PathBuf> = names.iter().map(|n| root.join(n)).collect();
            all.sort();
            all.dedup();
            let result = apply_patterns(&all, &patterns, root);
            proptest::prop_assert!(result.iter().all(|p| all.contains(p)));
            let mut unique = result.clone();
            unique.sort();
            unique.dedup();
            proptest::prop_assert_eq!(unique.len(), result.len());
            for pattern in patterns.iter().filter_map(|p| p.strip_prefix('-')) {
                proptest::prop_assert!(!result.contains(&root.join(pattern)));
            }
            // The list and the one-file form agree.
            let refs: Vec<&str> = patterns.iter().map(String::as_str).collect();
            for file in &all {
                proptest::prop_assert_eq!(result.contains(file), enabled_by_patterns(file, &refs, root));
            }
        }
    }
}
