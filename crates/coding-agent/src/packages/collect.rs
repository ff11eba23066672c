//! What a package holds: its `package.json` `pi` manifest (paths, globs, `!`/`+`/`-` patterns) or
//! pi's conventional directories, narrowed by the object form of a `packages` entry. Blocking
//! file-system reads: callers run them off the async runtime.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use serde_json::Value;

use super::paths::{posix, relative, resolve_lexically};

/// The four kinds of resources a package provides, in pi's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ResourceKind {
    /// `extensions`: `.ts` / `.js` files (or directories with an `index.ts` / `index.js`).
    Extensions,
    /// `skills`: `SKILL.md` folders and top-level `.md` files.
    Skills,
    /// `prompts`: `.md` prompt templates.
    Prompts,
    /// `themes`: `.json` themes.
    Themes,
}

impl ResourceKind {
    /// All four, in pi's order.
    pub const ALL: [ResourceKind; 4] = [
        ResourceKind::Extensions,
        ResourceKind::Skills,
        ResourceKind::Prompts,
        ResourceKind::Themes,
    ];

    /// The key in `package.json`'s `pi` field and in settings (also the conventional directory).
    pub fn key(self) -> &'static str {
        match self {
            ResourceKind::Extensions => "extensions",
            ResourceKind::Skills => "skills",
            ResourceKind::Prompts => "prompts",
            ResourceKind::Themes => "themes",
        }
    }

    /// The heading `pi config` gives the kind (`Extensions`, `Skills`, `Prompts`, `Themes`).
    pub fn label(self) -> &'static str {
        match self {
            ResourceKind::Extensions => "Extensions",
            ResourceKind::Skills => "Skills",
            ResourceKind::Prompts => "Prompts",
            ResourceKind::Themes => "Themes",
        }
    }

    fn file_matches(self, name: &str) -> bool {
        match self {
            ResourceKind::Extensions => name.ends_with(".ts") || name.ends_with(".js"),
            ResourceKind::Skills | ResourceKind::Prompts => name.ends_with(".md"),
            ResourceKind::Themes => name.ends_with(".json"),
        }
    }
}

/// One file a package offers and whether the filters leave it on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) kind: ResourceKind,
    pub(crate) path: PathBuf,
    pub(crate) enabled: bool,
}

/// The `pi` field of `<root>/package.json`, when there is one.
fn read_manifest(root: &Path) -> Option<serde_json::Map<String, Value>> {
    let text = std::fs::read_to_string(root.join("package.json")).ok()?;
    match serde_json::from_str::<Value>(&text).ok()?.get("pi")? {
        Value::Object(manifest) => Some(manifest.clone()),
        _ => None,
    }
}

fn strings(value: Option<&Value>) -> Option<Vec<String>> {
    match value? {
        Value::Array(items) => Some(items.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect()),
        _ => None,
    }
}

/// The resources of the package at `root`; `filter` is the object form of its settings entry
/// (`None` for the string form). `None` when the package declares nothing (no manifest, no
/// filter, no conventional directory): a local directory then loads as one extension.
pub(crate) fn package_resources(root: &Path, filter: Option<&serde_json::Map<String, Value>>) -> Option<Vec<Found>> {
    let mut found = Vec::new();
    let manifest = read_manifest(root);
    if let Some(filter) = filter {
        for kind in ResourceKind::ALL {
            match strings(filter.get(kind.key())) {
                Some(patterns) => apply_package_filter(root, &patterns, kind, manifest.as_ref(), &mut found),
                None => default_resources(root, kind, manifest.as_ref(), &mut found),
            }
        }
        return Some(found);
    }
    if let Some(manifest) = &manifest {
        for kind in ResourceKind::ALL {
            if let Some(entries) = strings(manifest.get(kind.key())) {
                add_manifest_entries(&entries, root, kind, &mut found);
            }
        }
        return Some(found);
    }
    let mut any_dir = false;
    for kind in ResourceKind::ALL {
        let dir = root.join(kind.key());
        if dir.exists() {
            any_dir = true;
            for path in collect_resource_files(&dir, kind) {
                found.push(Found {
                    kind,
                    path,
                    enabled: true,
                });
            }
        }
    }
    any_dir.then_some(found)
}

fn default_resources(
    root: &Path,
    kind: ResourceKind,
    manifest: Option<&serde_json::Map<String, Value>>,
    found: &mut Vec<Found>,
) {
    if let Some(entries) = manifest.and_then(|m| strings(m.get(kind.key()))) {
        add_manifest_entries(&entries, root, kind, found);
        return;
    }
    let dir = root.join(kind.key());
    if dir.exists() {
        for path in collect_resource_files(&dir, kind) {
            found.push(Found {
                kind,
                path,
                enabled: true,
            });
        }
    }
}

fn apply_package_filter(
    root: &Path,
    patterns: &[String],
    kind: ResourceKind,
    manifest: Option<&serde_json::Map<String, Value>>,
    found: &mut Vec<Found>,
) {
    let all = manifest_files(root, kind, manifest);
    let enabled = if patterns.is_empty() {
        Vec::new()
    } else {
        apply_patterns(&all, patterns, root)
    };
    for path in all {
        let on = enabled.contains(&path);
        found.push(Found {
            kind,
            path,
            enabled: on,
        });
    }
}

/// What the manifest allows of `kind` (or the conventional directory's files).
fn manifest_files(root: &Path, kind: ResourceKind, manifest: Option<&serde_json::Map<String, Value>>) -> Vec<PathBuf> {
    if let Some(entries) = manifest
        .and_then(|m| strings(m.get(kind.key())))
        .filter(|e| !e.is_empty())
    {
        let all = files_from_manifest_entries(&entries, root, kind);
        let overrides: Vec<String> = entries.iter().filter(|e| is_override(e)).cloned().collect();
        if overrides.is_empty() {
            return all;
        }
        return apply_patterns(&all, &overrides, root);
    }
    let dir = root.join(kind.key());
    if !dir.exists() {
        return Vec::new();
    }
    collect_resource_files(&dir, kind)
}

fn add_manifest_entries(entries: &[String], root: &Path, kind: ResourceKind, found: &mut Vec<Found>) {
    let all = files_from_manifest_entries(entries, root, kind);
    let overrides: Vec<String> = entries.iter().filter(|e| is_override(e)).cloned().collect();
    let enabled = apply_patterns(&all, &overrides, root);
    for path in all {
        if enabled.contains(&path) {
            found.push(Found {
                kind,
                path,
                enabled: true,
            });
        }
    }
}

fn files_from_manifest_entries(entries: &[String], root: &Path, kind: ResourceKind) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for entry in entries.iter().filter(|e| !is_override(e)) {
        if has_glob(entry) {
            paths.extend(glob_paths(root, entry));
        } else {
            paths.push(resolve_lexically(root, Path::new(entry)));
        }
    }
    files_from_paths(&paths, kind)
}

/// Files and directories under `root` matching `pattern` (no dot files), sorted.
fn glob_paths(root: &Path, pattern: &str) -> Vec<PathBuf> {
    let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
    let Some(matcher) = glob(pattern) else {
        return Vec::new();
    };
    let depth = if pattern.contains("**") {
        usize::MAX
    } else {
        pattern.split('/').count()
    };
    let mut out = Vec::new();
    walk(root, depth, &mut |path| {
        let rel = posix(Path::new(&relative(root, path)));
        if matcher.is_match(&rel) {
            out.push(path.to_path_buf());
        }
    });
    out.sort();
    out
}

fn walk(dir: &Path, depth: usize, visit: &mut dyn FnMut(&Path)) {
    if depth == 0 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        visit(&path);
        if path.is_dir() {
            walk(&path, depth - 1, visit);
        }
    }
}

/// Every file of `kind` in `paths`: files as they are, directories collected.
pub(crate) fn files_from_paths(paths: &[PathBuf], kind: ResourceKind) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for path in paths {
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_file() => files.push(path.clone()),
            Ok(meta) if meta.is_dir() => files.extend(collect_resource_files(path, kind)),
            _ => {}
        }
    }
    files
}

/// A directory's resources of `kind` as pi collects them.
pub(crate) fn collect_resource_files(dir: &Path, kind: ResourceKind) -> Vec<PathBuf> {
    match kind {
        ResourceKind::Skills => {
            let mut ignore = Ignore::default();
            collect_skills(dir, dir, &mut ignore)
        }
        ResourceKind::Extensions => collect_extensions(dir),
        _ => {
            let mut ignore = Ignore::default();
            let mut files = Vec::new();
            collect_files(dir, dir, kind, &mut ignore, &mut files);
            files
        }
    }
}

/// The entries of `dir` (sorted by name, as a stable stand-in for the directory's order), dot
/// files and `node_modules` left out, with whether each is a directory and a file (links
/// followed).
fn listing(dir: &Path) -> Vec<(String, PathBuf, bool, bool)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<_> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name == "node_modules" {
                return None;
            }
            let path = entry.path();
            let meta = std::fs::metadata(&path).ok()?;
            Some((name, path, meta.is_dir(), meta.is_file()))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn collect_files(dir: &Path, root: &Path, kind: ResourceKind, ignore: &mut Ignore, files: &mut Vec<PathBuf>) {
    ignore.add_dir(dir, root);
    for (name, path, is_dir, is_file) in listing(dir) {
        let rel = relative(root, &path);
        if ignore.ignores(&rel, is_dir) {
            continue;
        }
        if is_dir {
            collect_files(&path, root, kind, ignore, files);
        } else if is_file && kind.file_matches(&name) {
            files.push(path);
        }
    }
}

fn collect_skills(dir: &Path, root: &Path, ignore: &mut Ignore) -> Vec<PathBuf> {
    ignore.add_dir(dir, root);
    let skill = dir.join("SKILL.md");
    if skill.is_file() && !ignore.ignores(&relative(root, &skill), false) {
        return vec![skill];
    }
    let mut out = Vec::new();
    for (name, path, is_dir, is_file) in listing(dir) {
        let rel = relative(root, &path);
        if dir == root && is_file && name.ends_with(".md") && !ignore.ignores(&rel, false) {
            out.push(path);
            continue;
        }
        if !is_dir || ignore.ignores(&rel, true) {
            continue;
        }
        out.extend(collect_skills(&path, root, ignore));
    }
    out
}

/// The extension entry points of a directory: its `package.json` `pi.extensions` (the ones that
/// exist), else `index.ts`, else `index.js`.
fn extension_entries(dir: &Path) -> Option<Vec<PathBuf>> {
    if let Some(entries) = read_manifest(dir).and_then(|m| strings(m.get("extensions"))) {
        let existing: Vec<PathBuf> = entries
            .iter()
            .map(|e| resolve_lexically(dir, Path::new(e)))
            .filter(|p| p.exists())
            .collect();
        if !existing.is_empty() {
            return Some(existing);
        }
    }
    ["index.ts", "index.js"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.exists())
        .map(|p| vec![p])
}

fn collect_extensions(dir: &Path) -> Vec<PathBuf> {
    if !dir.exists() {
        return Vec::new();
    }
    if let Some(entries) = extension_entries(dir) {
        return entries;
    }
    let mut ignore = Ignore::default();
    ignore.add_dir(dir, dir);
    let mut out = Vec::new();
    for (name, path, is_dir, is_file) in listing(dir) {
        if ignore.ignores(&relative(dir, &path), is_dir) {
            continue;
        }
        if is_file && (name.ends_with(".ts") || name.ends_with(".js")) {
            out.push(path);
        } else if is_dir && let Some(entries) = extension_entries(&path) {
            out.extend(entries);
        }
    }
    out
}

/// `.gitignore`, `.ignore` and `.fdignore` rules met so far on the way down, each prefixed with
/// its directory relative to the collection's root, as pi reads them.
#[derive(Default)]
struct Ignore {
    lines: Vec<String>,
    matcher: Option<ignore::gitignore::Gitignore>,
}

impl Ignore {
    fn add_dir(&mut self, dir: &Path, root: &Path) {
        let rel = relative(root, dir);
        let prefix = if rel.is_empty() {
            String::new()
        } else {
            format!("{rel}/")
        };
        let before = self.lines.len();
        for name in [".gitignore", ".ignore", ".fdignore"] {
            let Ok(text) = std::fs::read_to_string(dir.join(name)) else {
                continue;
            };
            for line in text.lines() {
                if let Some(rule) = prefixed_rule(line, &prefix) {
                    self.lines.push(rule);
                }
            }
        }
        if self.lines.len() != before {
            let mut builder = ignore::gitignore::GitignoreBuilder::new("/");
            for line in &self.lines {
                // A rule the gitignore syntax refuses is skipped, as pi's `ignore` package skips it.
                let _ = builder.add_line(None, line);
            }
            self.matcher = builder.build().ok();
        }
    }

    fn ignores(&self, rel: &str, is_dir: bool) -> bool {
        self.matcher
            .as_ref()
            .is_some_and(|m| m.matched(Path::new("/").join(rel), is_dir).is_ignore())
    }
}

fn prefixed_rule(line: &str, prefix: &str) -> Option<String> {
    let trimmed = line.trim();
    if trimmed.is_empty() || (trimmed.starts_with('#') && !trimmed.starts_with("\\#")) {
        return None;
    }
    let (negated, pattern) = match line.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (
            false,
            line.strip_prefix('\\').filter(|r| r.starts_with('!')).unwrap_or(line),
        ),
    };
    let pattern = pattern.strip_prefix('/').unwrap_or(pattern);
    let rule = format!("{prefix}{pattern}");
    // Anchored at the collection root, as the `ignore` package pi uses reads a rule with a slash.
    let rule = if prefix.is_empty() { rule } else { format!("/{rule}") };
    Some(if negated { format!("!{rule}") } else { rule })
}

fn is_override(entry: &str) -> bool {
    entry.starts_with('!') || entry.starts_with('+') || entry.starts_with('-')
}

fn has_glob(entry: &str) -> bool {
    entry.contains('*') || entry.contains('?')
}

fn glob(pattern: &str) -> Option<GlobMatcher> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

/// Whether `path` matches one of `patterns` (globs against the path relative to `base`, the
/// file name and the absolute path; a `SKILL.md` also by its folder).
fn matches_any(path: &Path, patterns: &[&str], base: &Path) -> bool {
    let candidates = candidates(path, base);
    patterns.iter().any(|pattern| {
        let pattern = pattern.replace('\\', "/");
        glob(&pattern).is_some_and(|m| candidates.iter().any(|c| m.is_match(c)))
    })
}

fn candidates(path: &Path, base: &Path) -> Vec<String> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut out = vec![relative(base, path), name.clone(), posix(path)];
    if name == "SKILL.md"
        && let Some(parent) = path.parent()
    {
        out.push(relative(base, parent));
        out.push(
            parent
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
        out.push(posix(parent));
    }
    out
}

/// Whether `path` is exactly one of `patterns` (relative to `base` or absolute; a `SKILL.md` also
/// by its folder). `./` in front is ignored.
fn matches_exact(path: &Path, patterns: &[&str], base: &Path) -> bool {
    let name_is_skill = path.file_name().is_some_and(|n| n == "SKILL.md");
    let mut candidates = vec![relative(base, path), posix(path)];
    if name_is_skill && let Some(parent) = path.parent() {
        candidates.push(relative(base, parent));
        candidates.push(posix(parent));
    }
    patterns.iter().any(|pattern| {
        let pattern = pattern.strip_prefix("./").unwrap_or(pattern).replace('\\', "/");
        candidates.contains(&pattern)
    })
}

/// pi's pattern rules over `all`: plain patterns include (all when there are none), `!pattern`
/// excludes, `+path` forces an exact path back in, `-path` forces it out.
pub(crate) fn apply_patterns(all: &[PathBuf], patterns: &[String], base: &Path) -> Vec<PathBuf> {
    let mut includes = Vec::new();
    let mut excludes = Vec::new();
    let mut force_in = Vec::new();
    let mut force_out = Vec::new();
    for pattern in patterns {
        if let Some(p) = pattern.strip_prefix('+') {
            force_in.push(p);
        } else if let Some(p) = pattern.strip_prefix('-') {
            force_out.push(p);
        } else if let Some(p) = pattern.strip_prefix('!') {
            excludes.push(p);
        } else {
            includes.push(pattern.as_str());
        }
    }
    let mut result: Vec<PathBuf> = if includes.is_empty() {
        all.to_vec()
    } else {
        all.iter()
            .filter(|p| matches_any(p, &includes, base))
            .cloned()
            .collect()
    };
    if !excludes.is_empty() {
        result.retain(|p| !matches_any(p, &excludes, base));
    }
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

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn rels(root: &Path, found: &[Found], kind: ResourceKind) -> Vec<(String, bool)> {
        found
            .iter()
            .filter(|f| f.kind == kind)
            .map(|f| (relative(root, &f.path), f.enabled))
            .collect()
    }

    fn on(names: &[&str]) -> Vec<(String, bool)> {
        names.iter().map(|n| ((*n).to_owned(), true)).collect()
    }

    #[test]
    fn conventional_directories_without_a_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "extensions/a.ts", "");
        write(root, "extensions/b.txt", "");
        write(root, "extensions/sub/index.ts", "");
        write(root, "skills/review/SKILL.md", "");
        write(root, "skills/review/notes.md", "");
        write(root, "skills/top.md", "");
        write(root, "prompts/hi.md", "");
        write(root, "prompts/deep/more.md", "");
        write(root, "prompts/.hidden.md", "");
        write(root, "themes/t.json", "");
        let found = package_resources(root, None).unwrap();
        assert_eq!(
            rels(root, &found, ResourceKind::Extensions),
            on(&["extensions/a.ts", "extensions/sub/index.ts"])
        );
        assert_eq!(
            rels(root, &found, ResourceKind::Skills),
            on(&["skills/review/SKILL.md", "skills/top.md"])
        );
        assert_eq!(
            rels(root, &found, ResourceKind::Prompts),
            on(&["prompts/deep/more.md", "prompts/hi.md"])
        );
        assert_eq!(rels(root, &found, ResourceKind::Themes), on(&["themes/t.json"]));
    }

    #[test]
    fn nothing_declared_is_none() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "index.ts", "");
        assert_eq!(package_resources(dir.path(), None), None);
    }

    #[test]
    fn manifest_globs_and_exclusions() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(
            root,
            "package.json",
            r#"{"pi": {"extensions": ["ext/*.ts", "!ext/legacy.ts"], "prompts": ["./p"]}}"#,
        );
        write(root, "ext/one.ts", "");
        write(root, "ext/legacy.ts", "");
        write(root, "ext/deep/two.ts", "");
        write(root, "p/x.md", "");
        write(root, "skills/ignored-without-manifest-entry/SKILL.md", "");
        let found = package_resources(root, None).unwrap();
        assert_eq!(rels(root, &found, ResourceKind::Extensions), on(&["ext/one.ts"]));
        assert_eq!(rels(root, &found, ResourceKind::Prompts), on(&["p/x.md"]));
        assert!(rels(root, &found, ResourceKind::Skills).is_empty());
    }

    #[test]
    fn settings_filters_narrow_the_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "extensions/a.ts", "");
        write(root, "extensions/legacy.ts", "");
        write(root, "skills/one/SKILL.md", "");
        write(root, "prompts/review.md", "");
        write(root, "prompts/other.md", "");
        write(root, "themes/legacy.json", "");
        let filter = serde_json::json!({
            "extensions": ["extensions/*.ts", "!extensions/legacy.ts"],
            "skills": [],
            "prompts": ["prompts/review.md"],
            "themes": ["!*.json", "+themes/legacy.json"],
        });
        let found = package_resources(root, filter.as_object()).unwrap();
        assert_eq!(
            rels(root, &found, ResourceKind::Extensions),
            vec![
                ("extensions/a.ts".to_owned(), true),
                ("extensions/legacy.ts".to_owned(), false)
            ]
        );
        assert_eq!(
            rels(root, &found, ResourceKind::Skills),
            vec![("skills/one/SKILL.md".to_owned(), false)]
        );
        assert_eq!(
            rels(root, &found, ResourceKind::Prompts),
            vec![
                ("prompts/other.md".to_owned(), false),
                ("prompts/review.md".to_owned(), true)
            ]
        );
        assert_eq!(rels(root, &found, ResourceKind::Themes), on(&["themes/legacy.json"]));
    }

    #[test]
    fn force_exclude_wins_over_force_include() {
        let root = Path::new("/p");
        let all = vec![root.join("a.md"), root.join("b.md")];
        let patterns = ["+a.md", "-a.md", "!b.md"].map(str::to_owned);
        assert!(apply_patterns(&all, &patterns, root).is_empty());
        let patterns = ["-./b.md".to_owned()];
        assert_eq!(apply_patterns(&all, &patterns, root), vec![root.join("a.md")]);
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
            all.dedup();
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
        }
    }

    #[test]
    fn ignore_files_are_honoured() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "prompts/.gitignore", "drafts/\nsecret.md\n");
        write(root, "prompts/drafts/d.md", "");
        write(root, "prompts/secret.md", "");
        write(root, "prompts/ok.md", "");
        write(root, "prompts/sub/.ignore", "x.md\n");
        write(root, "prompts/sub/x.md", "");
        write(root, "prompts/sub/y.md", "");
        let found = package_resources(root, None).unwrap();
        assert_eq!(
            rels(root, &found, ResourceKind::Prompts),
            on(&["prompts/ok.md", "prompts/sub/y.md"])
        );
    }
}
