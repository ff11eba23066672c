//! What a package holds: its `package.json` `pi` manifest (paths, globs, `!`/`+`/`-` patterns) or
//! pi's conventional directories, narrowed by the object form of a `packages` entry. Blocking
//! file-system reads: callers run them off the async runtime.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::paths::{posix, relative, resolve_lexically};
use crate::resources::patterns::{apply_patterns, glob, has_glob, is_override};
use crate::resources::walk::{self, IgnoreRules, SkillDirMode};

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
        if let Some(files) = conventional_files(root, kind) {
            any_dir = true;
            found.extend(files.into_iter().map(|path| Found {
                kind,
                path,
                enabled: true,
            }));
        }
    }
    any_dir.then_some(found)
}

/// The files of `kind` in the package's conventional directory (`<root>/<kind>`); `None` when
/// there is no such directory.
fn conventional_files(root: &Path, kind: ResourceKind) -> Option<Vec<PathBuf>> {
    let dir = root.join(kind.key());
    dir.exists().then(|| collect_resource_files(&dir, kind))
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
    found.extend(conventional_files(root, kind).into_iter().flatten().map(|path| Found {
        kind,
        path,
        enabled: true,
    }));
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
    conventional_files(root, kind).unwrap_or_default()
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
    walk_tree(root, depth, &mut |path| {
        let rel = posix(Path::new(&relative(root, path)));
        if matcher.is_match(&rel) {
            out.push(path.to_path_buf());
        }
    });
    out.sort();
    out
}

fn walk_tree(dir: &Path, depth: usize, visit: &mut dyn FnMut(&Path)) {
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
            walk_tree(&path, depth - 1, visit);
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

/// A directory's resources of `kind` as pi collects them (`collectResourceFiles`).
pub(crate) fn collect_resource_files(dir: &Path, kind: ResourceKind) -> Vec<PathBuf> {
    match kind {
        ResourceKind::Skills => walk::skill_files(dir, SkillDirMode::Pi),
        ResourceKind::Extensions => collect_extensions(dir),
        ResourceKind::Prompts => walk::files_ending(dir, ".md"),
        ResourceKind::Themes => walk::files_ending(dir, ".json"),
    }
}

/// The extension entry points of a directory: its `package.json` `pi.extensions` (the ones that
/// exist), else `index.ts`, else `index.js`.
/// The entries of an extension folder, by the rule extension discovery uses (the manifest's `pi.extensions`,
/// `index.ts` / `index.js`, or an `extension.json` process extension: the folder itself).
fn extension_entries(dir: &Path) -> Option<Vec<PathBuf>> {
    crate::extensions::folder_entries(dir).map(|entries| entries.into_iter().map(|(path, _)| path).collect())
}

fn collect_extensions(dir: &Path) -> Vec<PathBuf> {
    if !dir.exists() {
        return Vec::new();
    }
    if let Some(entries) = extension_entries(dir) {
        return entries;
    }
    let mut rules = IgnoreRules::new(dir);
    rules.add_dir(dir);
    let mut out = Vec::new();
    for entry in walk::entries(dir) {
        if entry.skipped() || rules.ignores(&entry.path, entry.is_dir) {
            continue;
        }
        if entry.is_file && (entry.name.ends_with(".ts") || entry.name.ends_with(".js")) {
            out.push(entry.path);
        } else if entry.is_dir
            && let Some(entries) = extension_entries(&entry.path)
        {
            out.extend(entries);
        }
    }
    out
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
        write(root, "extensions/guard/extension.json", "{}");
        write(root, "extensions/guard/extension.py", "");
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
            on(&["extensions/a.ts", "extensions/guard", "extensions/sub/index.ts"])
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
        write(root, "themes/.gitignore", "old.json\n");
        write(root, "themes/old.json", "");
        write(root, "themes/new.json", "");
        write(root, "extensions/.ignore", "draft.ts\n");
        write(root, "extensions/draft.ts", "");
        write(root, "extensions/main.ts", "");
        let found = package_resources(root, None).unwrap();
        assert_eq!(
            rels(root, &found, ResourceKind::Prompts),
            on(&["prompts/ok.md", "prompts/sub/y.md"])
        );
        assert_eq!(rels(root, &found, ResourceKind::Themes), on(&["themes/new.json"]));
        assert_eq!(
            rels(root, &found, ResourceKind::Extensions),
            on(&["extensions/main.ts"])
        );
    }
}
