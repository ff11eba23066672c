//! The `skills` / `prompts` arrays of `settings.json` as pi reads them: plain entries are files or
//! directories; `!pattern` excludes, `+path` forces in, `-path` forces out, and entries with `*`
//! or `?` are globs that select among the plain entries' files. The `!`/`+`/`-` entries also
//! filter the auto-discovered resources of the same scope.

use std::path::Path;

use globset::{GlobBuilder, GlobMatcher};

use super::walk::posix;

fn is_override(entry: &str) -> bool {
    entry.starts_with('!') || entry.starts_with('+') || entry.starts_with('-')
}

/// Whether a settings entry is a pattern rather than a path.
pub(crate) fn is_pattern(entry: &str) -> bool {
    is_override(entry) || entry.contains('*') || entry.contains('?')
}

fn glob(pattern: &str) -> Option<GlobMatcher> {
    GlobBuilder::new(&pattern.replace('\\', "/"))
        .literal_separator(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

/// The forms of a resource path a pattern is compared with: relative to the base, the file name,
/// the absolute path, and for a `SKILL.md` the same three of its directory.
fn forms(file: &Path, base: &Path) -> Vec<String> {
    let relative = |p: &Path| posix(p.strip_prefix(base).unwrap_or(p));
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
    let relative = |p: &Path| posix(p.strip_prefix(base).unwrap_or(p));
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

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
}
