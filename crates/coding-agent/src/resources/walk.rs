//! Walking resource directories as pi does: `.gitignore`, `.ignore` and `.fdignore` files apply
//! below their directory (their patterns prefixed with its path relative to the walk's root, as
//! pi's `ignore` matcher gets them), names starting with `.` and `node_modules` are skipped,
//! symbolic links are followed. All blocking.

use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::paths::{normalize, posix};

const IGNORE_FILE_NAMES: [&str; 3] = [".gitignore", ".ignore", ".fdignore"];

/// The ignore rules met so far in one walk.
pub(crate) struct IgnoreRules {
    root: PathBuf,
    lines: Vec<String>,
    matcher: Gitignore,
}

impl IgnoreRules {
    pub(crate) fn new(root: &Path) -> Self {
        IgnoreRules {
            root: root.to_path_buf(),
            lines: Vec::new(),
            matcher: Gitignore::empty(),
        }
    }

    /// Adds the ignore files of `dir`.
    pub(crate) fn add_dir(&mut self, dir: &Path) {
        let prefix = match dir.strip_prefix(&self.root) {
            Ok(rel) if !rel.as_os_str().is_empty() => format!("{}/", posix(rel)),
            _ => String::new(),
        };
        let before = self.lines.len();
        for name in IGNORE_FILE_NAMES {
            let Ok(content) = std::fs::read_to_string(dir.join(name)) else {
                continue;
            };
            for line in content.split('\n') {
                let line = line.strip_suffix('\r').unwrap_or(line);
                if let Some(pattern) = prefix_pattern(line, &prefix) {
                    self.lines.push(pattern);
                }
            }
        }
        if self.lines.len() != before {
            let mut builder = GitignoreBuilder::new(&self.root);
            for line in &self.lines {
                // A pattern the matcher cannot read is left out (pi's `ignore` skips it too).
                let _ = builder.add_line(None, line);
            }
            self.matcher = builder.build().unwrap_or_else(|_| Gitignore::empty());
        }
    }

    /// Whether `path` (under the root) is ignored.
    pub(crate) fn ignores(&self, path: &Path, is_dir: bool) -> bool {
        if self.lines.is_empty() || !path.starts_with(&self.root) {
            return false;
        }
        self.matcher.matched_path_or_any_parents(path, is_dir).is_ignore()
    }
}

/// pi's `prefixIgnorePattern`: comments and blank lines dropped, `!` kept in front, a leading `/`
/// removed, the directory's prefix added.
fn prefix_pattern(line: &str, prefix: &str) -> Option<String> {
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
    let prefixed = format!("{prefix}{pattern}");
    Some(if negated { format!("!{prefixed}") } else { prefixed })
}

/// An entry of a directory listing: its path and what it is (links followed; broken links are
/// left out).
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) path: PathBuf,
    pub(crate) is_dir: bool,
    pub(crate) is_file: bool,
}

impl Entry {
    /// Names starting with `.` and `node_modules`: never walked into nor collected.
    pub(crate) fn skipped(&self) -> bool {
        self.name.starts_with('.') || self.name == "node_modules"
    }
}

/// The entries of `dir`, sorted by name byte for byte (Node's `readdirSync` lists them so: libuv
/// sorts with `strcmp`).
pub(crate) fn entries(dir: &Path) -> Vec<Entry> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in read.flatten() {
        let path = entry.path();
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        let (is_dir, is_file) = if file_type.is_symlink() {
            match std::fs::metadata(&path) {
                Ok(meta) => (meta.is_dir(), meta.is_file()),
                Err(_) => continue,
            }
        } else {
            (file_type.is_dir(), file_type.is_file())
        };
        out.push(Entry {
            name: entry.file_name().to_string_lossy().into_owned(),
            path,
            is_dir,
            is_file,
        });
    }
    out.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    out
}

/// Which rules a skill directory follows: pi's own (`~/.pi/agent/skills`, `.pi/skills`: root
/// `.md` files are skills too) or the Agent Skills ones (`.agents/skills`: only `SKILL.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SkillDirMode {
    Pi,
    Agents,
}

/// pi's `collectSkillEntries` (and `loadSkillsFromDir`, which walks a `--skill` directory the
/// same way): a directory with a `SKILL.md` is one skill (not searched further); otherwise its
/// subdirectories are searched, and in [`SkillDirMode::Pi`] the root's `.md` files are skills.
pub(crate) fn skill_files(dir: &Path, mode: SkillDirMode) -> Vec<PathBuf> {
    let mut rules = IgnoreRules::new(dir);
    let mut out = Vec::new();
    skill_files_in(dir, dir, mode, &mut rules, &mut out);
    out
}

fn skill_files_in(dir: &Path, root: &Path, mode: SkillDirMode, rules: &mut IgnoreRules, out: &mut Vec<PathBuf>) {
    if !dir.exists() {
        return;
    }
    rules.add_dir(dir);
    let listing = entries(dir);
    if let Some(skill) = listing.iter().find(|e| e.name == "SKILL.md")
        && skill.is_file
        && !rules.ignores(&skill.path, false)
    {
        out.push(skill.path.clone());
        return;
    }
    for entry in &listing {
        if entry.skipped() {
            continue;
        }
        if mode == SkillDirMode::Pi
            && dir == root
            && entry.is_file
            && entry.name.ends_with(".md")
            && !rules.ignores(&entry.path, false)
        {
            out.push(entry.path.clone());
            continue;
        }
        if !entry.is_dir || rules.ignores(&entry.path, true) {
            continue;
        }
        skill_files_in(&entry.path, root, mode, rules, out);
    }
}

/// pi's `collectAutoPromptEntries`: the `.md` files directly in `dir` (not recursive).
pub(crate) fn prompt_files(dir: &Path) -> Vec<PathBuf> {
    files_directly_in(dir, ".md")
}

/// pi's `collectAutoPromptEntries` / `collectAutoThemeEntries`: the files directly in `dir` whose
/// name ends with `suffix`, skipping hidden ones, `node_modules` and what ignore files exclude.
pub(crate) fn files_directly_in(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut rules = IgnoreRules::new(dir);
    rules.add_dir(dir);
    entries(dir)
        .into_iter()
        .filter(|e| !e.skipped())
        .filter(|e| !rules.ignores(&e.path, false) && e.is_file && e.name.ends_with(suffix))
        .map(|e| e.path)
        .collect()
}

/// pi's `collectFiles`: every `.md` file under `dir`, recursively (a settings entry naming a
/// prompts directory).
pub(crate) fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    files_ending(dir, ".md")
}

/// pi's `collectFiles` for any extension: every file under `dir` whose name ends with `suffix`
/// (`.md` prompts, `.json` themes), recursively.
pub(crate) fn files_ending(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut rules = IgnoreRules::new(dir);
    let mut out = Vec::new();
    files_ending_in(dir, suffix, &mut rules, &mut out);
    out
}

fn files_ending_in(dir: &Path, suffix: &str, rules: &mut IgnoreRules, out: &mut Vec<PathBuf>) {
    if !dir.exists() {
        return;
    }
    rules.add_dir(dir);
    for entry in entries(dir) {
        if entry.skipped() || rules.ignores(&entry.path, entry.is_dir) {
            continue;
        }
        if entry.is_dir {
            files_ending_in(&entry.path, suffix, rules, out);
        } else if entry.is_file && entry.name.ends_with(suffix) {
            out.push(entry.path);
        }
    }
}

/// pi's template directories (`--prompt-template <dir>`): the `.md` files directly in `dir`, no
/// ignore files, no name filter.
pub(crate) fn template_files_of_path_dir(dir: &Path) -> Vec<PathBuf> {
    entries(dir)
        .into_iter()
        .filter(|e| e.is_file && e.name.ends_with(".md"))
        .map(|e| e.path)
        .collect()
}

/// pi's `loadThemesFromDir` (a `--theme <dir>`): the `.json` files directly in `dir`, no ignore
/// files, no name filter.
pub(crate) fn theme_files_of_path_dir(dir: &Path) -> Vec<PathBuf> {
    entries(dir)
        .into_iter()
        .filter(|e| e.is_file && e.name.ends_with(".json"))
        .map(|e| e.path)
        .collect()
}

/// The `.agents/skills` directories from `cwd` up to the git repository's root (the directory
/// holding `.git`), or up to the filesystem root outside a repository.
pub(crate) fn ancestor_agents_skill_dirs(cwd: &Path) -> Vec<PathBuf> {
    let start = normalize(cwd);
    let repo_root = start
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_path_buf);
    let mut dirs = Vec::new();
    for dir in start.ancestors() {
        dirs.push(dir.join(".agents").join("skills"));
        if repo_root.as_deref() == Some(dir) {
            break;
        }
    }
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn names(root: &Path, mut files: Vec<PathBuf>) -> Vec<String> {
        files.sort();
        files.iter().map(|f| posix(f.strip_prefix(root).unwrap())).collect()
    }

    #[test]
    fn pi_skill_dirs_take_root_markdown_and_skill_dirs_recursively() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(&root.join("single.md"), "x");
        write(&root.join("a/SKILL.md"), "x");
        write(&root.join("a/inner/SKILL.md"), "not searched: a is a skill");
        write(&root.join("group/b/SKILL.md"), "x");
        write(&root.join("group/notes.md"), "only root files count");
        write(&root.join(".hidden/SKILL.md"), "x");
        write(&root.join("node_modules/c/SKILL.md"), "x");
        write(&root.join("ignored/SKILL.md"), "x");
        write(&root.join(".gitignore"), "# comment\n/ignored/\n");
        assert_eq!(
            names(root, skill_files(root, SkillDirMode::Pi)),
            ["a/SKILL.md", "group/b/SKILL.md", "single.md"]
        );
        assert_eq!(
            names(root, skill_files(root, SkillDirMode::Agents)),
            ["a/SKILL.md", "group/b/SKILL.md"]
        );
    }

    #[test]
    fn ignore_files_below_the_root_apply_to_their_subtree() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(&root.join("group/.ignore"), "skip\n");
        write(&root.join("group/skip/SKILL.md"), "x");
        write(&root.join("group/keep/SKILL.md"), "x");
        write(&root.join("skip/SKILL.md"), "x");
        assert_eq!(
            names(root, skill_files(root, SkillDirMode::Pi)),
            ["group/keep/SKILL.md", "skip/SKILL.md"]
        );
    }

    #[test]
    fn prompt_dirs_are_flat() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(&root.join("review.md"), "x");
        write(&root.join("sub/deep.md"), "x");
        write(&root.join("notes.txt"), "x");
        assert_eq!(names(root, prompt_files(root)), ["review.md"]);
        assert_eq!(names(root, markdown_files(root)), ["review.md", "sub/deep.md"]);
        write(&root.join("themes/dark.json"), "{}");
        write(&root.join("themes/.gitignore"), "old.json\n");
        write(&root.join("themes/old.json"), "{}");
        assert_eq!(
            names(root, files_ending(&root.join("themes"), ".json")),
            ["themes/dark.json"]
        );
    }

    #[test]
    fn agents_dirs_stop_at_the_repository_root() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("a/b")).unwrap();
        let dirs = ancestor_agents_skill_dirs(&repo.join("a/b"));
        assert_eq!(
            dirs,
            [
                repo.join("a/b/.agents/skills"),
                repo.join("a/.agents/skills"),
                repo.join(".agents/skills")
            ]
        );
    }
}
