//! The path pipeline shared by `ast_edit` and `ast_grep`: the `paths` argument becomes a sorted list of
//! candidate files in one language, plus the scope (the directory the output is grouped under).
//!
//! - Each path resolves against the working directory ([`pi_tools::path::resolve_path`]). An existing
//!   file is a candidate as it is (also when gitignored); an existing directory is walked; a path that
//!   does not exist and holds `*`, `?`, `[` or `{` is a glob, walked from its static prefix (the leading
//!   components without glob characters) and matched against each file's absolute path, `*` never
//!   crossing `/` (`src/*.ts`: direct children only; `src/**/*.ts`: any depth).
//! - Walks are gitignore-aware like `rg --hidden`: hidden files are included; `.gitignore`, `.ignore`
//!   and git excludes apply, also outside a git repository; `.git` is never entered; `node_modules` is
//!   skipped unless the glob mentions it; symbolic links are not followed; only regular files count.
//! - Without `lang`, walked files whose extension no language claims are dropped and every remaining
//!   candidate must be of one language; with `lang`, walked files must have one of that language's
//!   extensions (as `ast-grep run -l` does) while explicitly named files are always kept.
//! - At most [`MAX_CANDIDATE_FILES`] candidates are kept; beyond that the walk stops and the result
//!   says `limitReached` (which files are kept is then not specified).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use ast_grep_language::SupportLang;
use globset::{GlobBuilder, GlobMatcher};
use ignore::{WalkBuilder, WalkState};
use pi_agent_core::{OPERATION_ABORTED, ToolError};
use tokio_util::sync::CancellationToken;

use super::{AstTool, lang};

/// The most candidate files one call considers.
pub const MAX_CANDIDATE_FILES: usize = 100_000;

/// The resolved `paths` argument.
#[derive(Debug)]
pub(crate) struct Scope {
    /// The directory output is grouped under, or the file itself for a single-file scope.
    pub(crate) base: PathBuf,
    /// Whether `paths` named exactly one existing file.
    pub(crate) single_file: bool,
    /// The language every candidate is parsed as.
    pub(crate) lang: SupportLang,
    /// Candidate files, absolute, sorted by path.
    pub(crate) candidates: Vec<PathBuf>,
    /// Whether [`MAX_CANDIDATE_FILES`] cut the list.
    pub(crate) capped: bool,
}

/// One entry of `paths` after resolution.
#[derive(Debug)]
enum Target {
    File(PathBuf),
    Dir(PathBuf),
    Glob(GlobTarget),
}

#[derive(Debug)]
struct GlobTarget {
    /// The directory the walk starts from.
    prefix: PathBuf,
    matcher: GlobMatcher,
    /// Maximum depth below `prefix` (`None` when the glob has `**`).
    max_depth: Option<usize>,
    /// Whether the glob names `node_modules`, which walks otherwise skip.
    wants_node_modules: bool,
}

impl Target {
    /// The directory this target contributes to the common scope.
    fn anchor(&self) -> &Path {
        match self {
            Target::File(path) => path.parent().unwrap_or(path),
            Target::Dir(path) => path,
            Target::Glob(glob) => &glob.prefix,
        }
    }
}

fn has_glob_chars(text: &str) -> bool {
    text.contains(['*', '?', '[', '{'])
}

fn is_url(text: &str) -> bool {
    let lower = text.get(..8).unwrap_or(text).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// Resolves `paths`, walks what needs walking and settles the language.
pub(crate) fn collect(
    cwd: &Path,
    paths: &[String],
    lang_override: Option<SupportLang>,
    tool: AstTool,
    cancel: &CancellationToken,
) -> Result<Scope, ToolError> {
    let inputs: Vec<&str> = paths.iter().map(|p| p.trim()).filter(|p| !p.is_empty()).collect();
    if inputs.is_empty() {
        return Err(ToolError::new("`paths` must contain non-empty paths or globs"));
    }
    if let Some(url) = inputs.iter().find(|p| is_url(p)) {
        return Err(ToolError::new(format!(
            "Cannot {} external URL: {url}. {} works on local files, directories and globs only.",
            tool.verb(),
            tool.name()
        )));
    }
    let mut targets = Vec::new();
    let mut missing = Vec::new();
    for input in &inputs {
        match resolve_target(cwd, input)? {
            Some(target) => targets.push(target),
            None => match split_joined(cwd, input)? {
                Some(parts) => targets.extend(parts),
                None => missing.push(*input),
            },
        }
    }
    if targets.is_empty() {
        return Err(ToolError::new(format!("Path not found: {}", missing.join(", "))));
    }

    let single_file = targets.len() == 1 && matches!(targets[0], Target::File(_));
    let base = match (&targets[0], single_file) {
        (Target::File(path), true) => path.clone(),
        _ => common_ancestor(targets.iter().map(Target::anchor)),
    };

    let mut found: BTreeMap<PathBuf, Option<SupportLang>> = BTreeMap::new();
    let mut not_inferable = Vec::new();
    let capped = AtomicBool::new(false);
    for target in &targets {
        if cancel.is_cancelled() {
            break;
        }
        match target {
            Target::File(path) => {
                let file_lang = lang::of_path(path);
                if lang_override.is_none() && file_lang.is_none() {
                    not_inferable.push((display(cwd, path), lang::unknown_reason(path)));
                }
                found.insert(path.clone(), file_lang);
            }
            Target::Dir(dir) => walk(dir, None, lang_override, cancel, &capped, &mut found),
            Target::Glob(glob) => walk(&glob.prefix, Some(glob), lang_override, cancel, &capped, &mut found),
        }
    }
    if cancel.is_cancelled() {
        return Err(ToolError::new(OPERATION_ABORTED));
    }
    if !not_inferable.is_empty() {
        return Err(lang::not_inferable(tool, &not_inferable));
    }
    let mut capped = capped.into_inner();
    if found.len() > MAX_CANDIDATE_FILES {
        capped = true;
        while found.len() > MAX_CANDIDATE_FILES {
            found.pop_last();
        }
    }
    let lang = match lang_override {
        Some(lang) => lang,
        None => {
            let names: BTreeSet<&'static str> = found.values().flatten().map(|l| lang::name(*l)).collect();
            lang::infer_one(tool, &names)?
        }
    };
    Ok(Scope {
        base,
        single_file,
        lang,
        candidates: found.into_keys().collect(),
        capped,
    })
}

/// How a path is shown to the model: relative to `cwd` with `/` separators, or absolute outside it.
pub(crate) fn display(cwd: &Path, path: &Path) -> String {
    let shown = pi_tools::path::display_relative(cwd, path);
    if shown.is_empty() { ".".to_owned() } else { shown }
}

/// `path` relative to the scope's base, for the grouped output (its file name for a single-file scope).
pub(crate) fn relative_to_base(scope: &Scope, path: &Path) -> String {
    if !scope.single_file
        && let Ok(relative) = path.strip_prefix(&scope.base)
    {
        let parts: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if !parts.is_empty() {
            return parts.join("/");
        }
    }
    path.to_string_lossy().into_owned()
}

/// One `paths` entry as a target; `Ok(None)` when it does not exist (and is not a glob whose prefix does).
fn resolve_target(cwd: &Path, input: &str) -> Result<Option<Target>, ToolError> {
    let resolved = pi_tools::path::resolve_path(cwd, input);
    match std::fs::metadata(&resolved) {
        Ok(meta) if meta.is_dir() => return Ok(Some(Target::Dir(resolved))),
        Ok(meta) if meta.is_file() => return Ok(Some(Target::File(resolved))),
        Ok(_) => return Err(ToolError::new(format!("Not a regular file or directory: {input}"))),
        Err(_) => {}
    }
    if !has_glob_chars(input) {
        return Ok(None);
    }
    let glob = compile_glob(cwd, input)?;
    Ok(std::fs::metadata(&glob.prefix)
        .is_ok_and(|meta| meta.is_dir())
        .then_some(Target::Glob(glob)))
}

/// A single argument that holds several existing paths separated by commas, semicolons or spaces
/// (models sometimes join them); `None` unless every part resolves.
fn split_joined(cwd: &Path, input: &str) -> Result<Option<Vec<Target>>, ToolError> {
    let parts: Vec<&str> = input
        .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
        .filter(|p| !p.is_empty())
        .collect();
    if parts.len() < 2 {
        return Ok(None);
    }
    let mut targets = Vec::new();
    for part in parts {
        match resolve_target(cwd, part)? {
            Some(target) => targets.push(target),
            None => return Ok(None),
        }
    }
    Ok(Some(targets))
}

/// Splits a glob into the directory to walk from and a matcher for absolute paths. For a relative glob
/// the working directory is literal even if its name holds glob characters.
fn compile_glob(cwd: &Path, input: &str) -> Result<GlobTarget, ToolError> {
    let expanded = pi_tools::path::expand_path(input);
    let mut prefix = if expanded.is_absolute() {
        PathBuf::from("/")
    } else {
        cwd.to_path_buf()
    };
    let mut rest: Vec<String> = Vec::new();
    for component in expanded.components() {
        let text = component.as_os_str().to_string_lossy();
        if !rest.is_empty() || has_glob_chars(&text) {
            rest.push(text.into_owned());
            continue;
        }
        match component {
            Component::ParentDir => {
                prefix.pop();
            }
            Component::Normal(name) => prefix.push(name),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    let pattern_rest = rest.join("/");
    let prefix_text = prefix.to_string_lossy();
    let separator = if prefix_text.ends_with('/') { "" } else { "/" };
    let pattern = format!("{}{separator}{pattern_rest}", globset::escape(&prefix_text));
    let glob = GlobBuilder::new(&pattern)
        .literal_separator(true)
        .build()
        .map_err(|error| ToolError::new(format!("Invalid glob '{input}': {}", error.kind())))?;
    let max_depth = (!pattern_rest.contains("**")).then_some(rest.len());
    Ok(GlobTarget {
        prefix,
        matcher: glob.compile_matcher(),
        max_depth,
        wants_node_modules: input.contains("node_modules"),
    })
}

/// The deepest directory containing every anchor.
fn common_ancestor<'a>(mut anchors: impl Iterator<Item = &'a Path>) -> PathBuf {
    let Some(first) = anchors.next() else {
        return PathBuf::from("/");
    };
    let mut common: Vec<Component<'a>> = first.components().collect();
    for anchor in anchors {
        let shared = common
            .iter()
            .zip(anchor.components())
            .take_while(|(a, b)| *a == b)
            .count();
        common.truncate(shared);
    }
    common.iter().collect()
}

/// Walks `root` (filtered by `glob` when given) in parallel and adds the files that pass the language
/// filter to `found`.
fn walk(
    root: &Path,
    glob: Option<&GlobTarget>,
    lang_override: Option<SupportLang>,
    cancel: &CancellationToken,
    capped: &AtomicBool,
    found: &mut BTreeMap<PathBuf, Option<SupportLang>>,
) {
    let allow_node_modules = glob.is_some_and(|g| g.wants_node_modules);
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .max_depth(glob.and_then(|g| g.max_depth))
        .filter_entry(move |entry| {
            let name = entry.file_name();
            entry.depth() == 0 || (name != ".git" && (allow_node_modules || name != "node_modules"))
        });
    let collected: Mutex<Vec<(PathBuf, Option<SupportLang>)>> = Mutex::new(Vec::new());
    let count = AtomicUsize::new(found.len());
    builder.build_parallel().run(|| {
        let collected = &collected;
        let count = &count;
        Box::new(move |entry| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let path = entry.path();
            if glob.is_some_and(|g| !g.matcher.is_match(path)) {
                return WalkState::Continue;
            }
            let file_lang = lang::of_path(path);
            let keep = match lang_override {
                Some(wanted) => file_lang == Some(wanted),
                None => file_lang.is_some(),
            };
            if !keep {
                return WalkState::Continue;
            }
            if count.fetch_add(1, Ordering::Relaxed) >= MAX_CANDIDATE_FILES {
                capped.store(true, Ordering::Relaxed);
                return WalkState::Quit;
            }
            pi_agent_core::lock(collected).push((entry.into_path(), file_lang));
            WalkState::Continue
        })
    });
    found.extend(collected.into_inner().unwrap_or_else(|p| p.into_inner()));
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn tree(files: &[&str]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for file in files {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x\n").unwrap();
        }
        (dir, root)
    }

    fn names(root: &Path, paths: &[&str], lang: Option<SupportLang>) -> Result<Vec<String>, String> {
        let paths: Vec<String> = paths.iter().map(|p| (*p).to_owned()).collect();
        collect(root, &paths, lang, AstTool::Edit, &CancellationToken::new())
            .map(|scope| scope.candidates.iter().map(|p| display(root, p)).collect())
            .map_err(|e| e.message().to_owned())
    }

    #[test]
    fn star_matches_direct_children_only() {
        let (_dir, root) = tree(&["src/a.ts", "src/deep/b.ts", "c.ts"]);
        assert_eq!(names(&root, &["src/*.ts"], None).unwrap(), ["src/a.ts"]);
        assert_eq!(
            names(&root, &["src/**/*.ts"], None).unwrap(),
            ["src/a.ts", "src/deep/b.ts"]
        );
        assert_eq!(
            names(&root, &["**/*.ts"], None).unwrap(),
            ["c.ts", "src/a.ts", "src/deep/b.ts"]
        );
    }

    #[test]
    fn globs_in_the_middle_of_the_path() {
        let (_dir, root) = tree(&[
            "packages/pkg-1/src/root.ts",
            "packages/pkg-1/src/nested/child.ts",
            "packages/pkg-1/src/ignore.js",
            "packages/other/src/x.ts",
            "outside.ts",
        ]);
        let pattern = format!("{}/packages/pkg-*/src/**/*.ts", root.display());
        assert_eq!(
            names(&root, &[&pattern], None).unwrap(),
            ["packages/pkg-1/src/nested/child.ts", "packages/pkg-1/src/root.ts"]
        );
    }

    #[test]
    fn gitignore_hidden_and_node_modules() {
        let (_dir, root) = tree(&[
            "src/a.ts",
            "src/gen.ts",
            ".hidden/h.ts",
            "node_modules/lib/index.ts",
            ".git/objects/x.ts",
        ]);
        std::fs::write(root.join(".gitignore"), "gen.ts\n").unwrap();
        assert_eq!(names(&root, &["."], None).unwrap(), [".hidden/h.ts", "src/a.ts"]);
        assert_eq!(
            names(&root, &["node_modules/**/*.ts"], None).unwrap(),
            ["node_modules/lib/index.ts"]
        );
        // An explicitly named file is searched even when ignored.
        assert_eq!(names(&root, &["src/gen.ts"], None).unwrap(), ["src/gen.ts"]);
    }

    #[test]
    fn missing_paths() {
        let (_dir, root) = tree(&["a.ts"]);
        assert_eq!(
            names(&root, &["nope.ts", "gone/"], None).unwrap_err(),
            "Path not found: nope.ts, gone/"
        );
        assert_eq!(names(&root, &["nope.ts", "a.ts"], None).unwrap(), ["a.ts"]);
        assert_eq!(
            names(&root, &["nope/*.ts"], None).unwrap_err(),
            "Path not found: nope/*.ts"
        );
        assert_eq!(
            names(&root, &["  ", ""], None).unwrap_err(),
            "`paths` must contain non-empty paths or globs"
        );
    }

    #[test]
    fn joined_paths_are_split() {
        let (_dir, root) = tree(&["a.ts", "b.ts", "c.ts"]);
        assert_eq!(names(&root, &["a.ts, b.ts"], None).unwrap(), ["a.ts", "b.ts"]);
        assert_eq!(
            names(&root, &["a.ts x.ts"], None).unwrap_err(),
            "Path not found: a.ts x.ts"
        );
    }

    #[test]
    fn urls_are_refused() {
        let (_dir, root) = tree(&["a.ts"]);
        let error = names(&root, &["https://example.com/a.ts"], None).unwrap_err();
        assert!(
            error.starts_with("Cannot rewrite external URL: https://example.com/a.ts. "),
            "{error}"
        );
    }

    #[test]
    fn languages_are_inferred_or_filtered() {
        let (_dir, root) = tree(&["a.ts", "b.rs", "notes.txt", "Makefile"]);
        assert!(
            names(&root, &["."], None)
                .unwrap_err()
                .contains("multiple languages: rust, typescript")
        );
        assert_eq!(names(&root, &["."], Some(SupportLang::Rust)).unwrap(), ["b.rs"]);
        assert_eq!(
            names(&root, &["notes.txt"], Some(SupportLang::Rust)).unwrap(),
            ["notes.txt"]
        );
        assert_eq!(
            names(&root, &["*.txt"], None).unwrap_err(),
            "`lang` is required for ast_edit when no files match path/glob"
        );
        assert_eq!(
            names(&root, &["Makefile", "a.ts"], None).unwrap_err(),
            "`lang` is required for ast_edit when language cannot be inferred from all files:\n- Makefile: no file extension"
        );
    }

    #[test]
    fn scope_base() {
        let (_dir, root) = tree(&["a/x/1.ts", "a/y/2.ts", "b.ts"]);
        let scope = |paths: &[&str]| {
            let paths: Vec<String> = paths.iter().map(|p| (*p).to_owned()).collect();
            collect(&root, &paths, None, AstTool::Grep, &CancellationToken::new()).unwrap()
        };
        let one = scope(&["b.ts"]);
        assert!(one.single_file);
        assert_eq!(one.base, root.join("b.ts"));
        let two = scope(&["a/x/1.ts", "a/y"]);
        assert!(!two.single_file);
        assert_eq!(two.base, root.join("a"));
        assert_eq!(relative_to_base(&two, &root.join("a/x/1.ts")), "x/1.ts");
        let glob = scope(&["a/*/*.ts"]);
        assert_eq!(glob.base, root.join("a"));
    }
}
