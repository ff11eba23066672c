//! Where extensions come from, in pi 0.73.1's load order (`docs/extensions.md`, "Extension
//! Locations"):
//!
//! 1. `-e` / `--extension <path>` — the command line (also with `--no-extensions`);
//! 2. the project's `.pi/settings.json` `extensions` (relative to `.pi/`);
//! 3. the global `settings.json` `extensions` (relative to pi's directory);
//! 4. `.pi/extensions/` — the project's, discovered;
//! 5. `~/.pi/agent/extensions/` — global, discovered;
//!
//! and, after them, the entries a package resolver found (`npm:` / `git:` sources: the
//! `resolved` seam of [`DiscoverOptions`]). The same file is loaded once, from its first source.
//!
//! An extensions directory holds `*.ts` / `*.js` files and folders; a folder is an extension when
//! it has a `package.json` with `pi.extensions` (entry paths), an `index.ts` / `index.js`, or —
//! ours, for any language — an `extension.json` manifest (`tool.json`'s fields: a process that
//! speaks the extension protocol). A directory that is itself such a folder is one extension.
//! Names starting with `.` and `node_modules` are passed over.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::paths::resolve_lexically;

/// The manifest of an extension in another language than TypeScript / JavaScript.
pub const EXTENSION_MANIFEST: &str = "extension.json";

/// How an extension runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    /// A TypeScript / JavaScript module, run by the one Node host of the session.
    Script,
    /// A process of its own, described by `manifest` (`extension.json`) in the extension's
    /// directory (the entry's path).
    Process {
        /// The `extension.json`.
        manifest: PathBuf,
    },
}

/// Where an extension was found (pi's `sourceInfo`, shown by RPC `get_commands`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `-e` / `--extension` (pi: `source: "cli"`, `scope: "temporary"`).
    Cli,
    /// A settings file's `extensions` (`source: "local"`).
    Settings {
        /// `true`: the project's; `false`: the global one.
        project: bool,
    },
    /// An extensions directory (`source: "auto"`).
    Auto {
        /// `true`: `.pi/extensions/`; `false`: pi's directory's.
        project: bool,
    },
    /// A package resolver's entry (`source: "package"`).
    Package,
}

/// One extension to load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionEntry {
    /// The module (absolute), or the directory of an `extension.json` extension.
    pub path: PathBuf,
    /// How it runs.
    pub kind: EntryKind,
    /// Where it was found.
    pub origin: Origin,
    /// The directory its source is relative to (`.pi`, pi's directory), when it has one.
    pub base_dir: Option<PathBuf>,
}

impl ExtensionEntry {
    /// pi's `sourceInfo` of the entry: `{path, source, scope, origin, baseDir?}`.
    pub fn source_info(&self) -> Value {
        let (source, scope) = match self.origin {
            Origin::Cli => ("cli", "temporary"),
            Origin::Settings { project } => ("local", if project { "project" } else { "user" }),
            Origin::Auto { project } => ("auto", if project { "project" } else { "user" }),
            Origin::Package => ("package", "user"),
        };
        let mut info = json!({"path": self.path, "source": source, "scope": scope, "origin": "top-level"});
        if let Some(base) = &self.base_dir {
            info["baseDir"] = json!(base);
        }
        info
    }
}

/// A path given on the command line or in settings that holds no extension.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Extension path does not exist: {}", .path.display())]
pub struct MissingPath {
    /// The path.
    pub path: PathBuf,
}

/// What [`discover`] looks at.
#[derive(Debug, Clone, Default)]
pub struct DiscoverOptions {
    /// The session's working directory.
    pub cwd: PathBuf,
    /// pi's directory (`~/.pi/agent`): its `extensions/` and `settings.json`.
    pub agent_dir: Option<PathBuf>,
    /// `-e` / `--extension` paths (relative to `cwd`, `~` expanded).
    pub cli: Vec<PathBuf>,
    /// `--no-extensions`: only the `cli` paths (and `resolved`).
    pub no_extensions: bool,
    /// Entry files a package resolver found (`npm:` / `git:` sources, installed packages):
    /// loaded after the others.
    pub resolved: Vec<PathBuf>,
    /// `$HOME` for `~`.
    pub home: Option<String>,
}

/// The extensions to load, in order, and the paths that hold none. Reads the file system: call
/// it off the runtime's threads.
pub fn discover(options: &DiscoverOptions) -> (Vec<ExtensionEntry>, Vec<MissingPath>) {
    let mut found = Found::default();
    let home = options.home.clone();
    let env = move |name: &str| if name == "HOME" { home.clone() } else { None };
    for path in &options.cli {
        let path = resolve_lexically(&options.cwd, &crate::config::expand_home(&path.to_string_lossy(), &env));
        found.explicit(&path, Origin::Cli, None);
    }
    if !options.no_extensions {
        let project = crate::config::project_dir(&options.cwd);
        for entry in settings_entries(&project.join("settings.json")) {
            let path = resolve_lexically(&project, &crate::config::expand_home(&entry, &env));
            found.explicit(&path, Origin::Settings { project: true }, Some(&project));
        }
        if let Some(agent) = &options.agent_dir {
            for entry in settings_entries(&agent.join("settings.json")) {
                let path = resolve_lexically(agent, &crate::config::expand_home(&entry, &env));
                found.explicit(&path, Origin::Settings { project: false }, Some(agent));
            }
        }
        found.directory(&project.join("extensions"), Origin::Auto { project: true }, &project);
        if let Some(agent) = &options.agent_dir {
            found.directory(&agent.join("extensions"), Origin::Auto { project: false }, agent);
        }
    }
    for path in &options.resolved {
        found.explicit(&resolve_lexically(&options.cwd, path), Origin::Package, None);
    }
    (found.entries, found.missing)
}

#[derive(Default)]
struct Found {
    entries: Vec<ExtensionEntry>,
    missing: Vec<MissingPath>,
}

impl Found {
    fn push(&mut self, path: PathBuf, kind: EntryKind, origin: Origin, base_dir: Option<&Path>) {
        if self.entries.iter().any(|entry| entry.path == path) {
            return;
        }
        self.entries.push(ExtensionEntry {
            path,
            kind,
            origin,
            base_dir: base_dir.map(Path::to_path_buf),
        });
    }

    /// A path named by the user: a file, or a directory holding extensions.
    fn explicit(&mut self, path: &Path, origin: Origin, base_dir: Option<&Path>) {
        if path.is_file() {
            self.push(path.to_path_buf(), EntryKind::Script, origin, base_dir);
        } else if path.is_dir() {
            match folder_entries(path) {
                Some(entries) => {
                    for (entry, kind) in entries {
                        self.push(entry, kind, origin, base_dir);
                    }
                }
                None => self.directory(path, origin, base_dir.unwrap_or(path)),
            }
        } else {
            self.missing.push(MissingPath {
                path: path.to_path_buf(),
            });
        }
    }

    /// An extensions directory: the folder itself when it is one extension, else its `*.ts` /
    /// `*.js` files and extension folders, by name.
    fn directory(&mut self, dir: &Path, origin: Origin, base_dir: &Path) {
        if let Some(entries) = folder_entries(dir) {
            for (entry, kind) in entries {
                self.push(entry, kind, origin, Some(base_dir));
            }
            return;
        }
        let Ok(read) = std::fs::read_dir(dir) else { return };
        let mut names: Vec<PathBuf> = read
            .filter_map(Result::ok)
            .filter(|item| {
                let name = item.file_name();
                let name = name.to_string_lossy();
                !name.starts_with('.') && name != "node_modules"
            })
            .map(|item| item.path())
            .collect();
        names.sort();
        for path in names {
            if path.is_file() {
                let script = path
                    .extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| e == "ts" || e == "js");
                if script {
                    self.push(path, EntryKind::Script, origin, Some(base_dir));
                }
            } else if path.is_dir()
                && let Some(entries) = folder_entries(&path)
            {
                for (entry, kind) in entries {
                    self.push(entry, kind, origin, Some(base_dir));
                }
            }
        }
    }
}

/// The entries of an extension folder: `package.json` `pi.extensions` (those that exist), else
/// `index.ts`, else `index.js`, else an `extension.json` process; `None` when it is none of them.
pub(crate) fn folder_entries(dir: &Path) -> Option<Vec<(PathBuf, EntryKind)>> {
    if let Ok(text) = std::fs::read_to_string(dir.join("package.json"))
        && let Ok(package) = serde_json::from_str::<Value>(&text)
        && let Some(listed) = package.pointer("/pi/extensions").and_then(Value::as_array)
    {
        let entries: Vec<(PathBuf, EntryKind)> = listed
            .iter()
            .filter_map(Value::as_str)
            .map(|entry| resolve_lexically(dir, Path::new(entry)))
            .filter(|entry| entry.exists())
            .map(|entry| (entry, EntryKind::Script))
            .collect();
        if !entries.is_empty() {
            return Some(entries);
        }
    }
    for index in ["index.ts", "index.js"] {
        if dir.join(index).is_file() {
            return Some(vec![(dir.join(index), EntryKind::Script)]);
        }
    }
    let manifest = dir.join(EXTENSION_MANIFEST);
    manifest
        .is_file()
        .then(|| vec![(dir.to_path_buf(), EntryKind::Process { manifest })])
}

/// The `extensions` array of a settings file (missing file or key: none; non-strings skipped).
fn settings_entries(file: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(file) else {
        return Vec::new();
    };
    let Ok(settings) = serde_json::from_str::<Value>(&text) else {
        return Vec::new();
    };
    settings
        .get("extensions")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn pis_locations_in_pis_order() {
        let root = tempfile::tempdir().unwrap();
        let cwd = root.path().join("project");
        let agent = root.path().join("agent");
        write(&cwd.join(".pi/extensions/b.ts"), "");
        write(&cwd.join(".pi/extensions/a.js"), "");
        write(&cwd.join(".pi/extensions/notes.md"), "");
        write(&cwd.join(".pi/extensions/.hidden.ts"), "");
        write(&cwd.join(".pi/extensions/lib/util.ts"), "");
        write(
            &cwd.join(".pi/extensions/pkg/package.json"),
            r#"{"pi": {"extensions": ["src/main.ts", "gone.ts"]}}"#,
        );
        write(&cwd.join(".pi/extensions/pkg/src/main.ts"), "");
        write(
            &cwd.join(".pi/extensions/py/extension.json"),
            r#"{"command": "python3"}"#,
        );
        write(&cwd.join(".pi/extensions/dir/index.ts"), "");
        write(&cwd.join(".pi/extensions/dir/index.js"), "");
        write(
            &cwd.join(".pi/settings.json"),
            r#"{"extensions": ["../tools/x.ts", "../nowhere.ts"]}"#,
        );
        write(&cwd.join("tools/x.ts"), "");
        write(&agent.join("extensions/global.ts"), "");
        write(&agent.join("settings.json"), r#"{"extensions": ["~/home.ts"]}"#);
        write(&root.path().join("home/home.ts"), "");
        write(&cwd.join("cli.ts"), "");
        let options = DiscoverOptions {
            cwd: cwd.clone(),
            agent_dir: Some(agent.clone()),
            cli: vec!["cli.ts".into(), ".pi/extensions/b.ts".into()],
            home: Some(root.path().join("home").display().to_string()),
            ..DiscoverOptions::default()
        };
        let (entries, missing) = discover(&options);
        let paths: Vec<String> = entries
            .iter()
            .map(|e| e.path.strip_prefix(root.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(
            paths,
            [
                "project/cli.ts",
                "project/.pi/extensions/b.ts",
                "project/tools/x.ts",
                "home/home.ts",
                "project/.pi/extensions/a.js",
                "project/.pi/extensions/dir/index.ts",
                "project/.pi/extensions/pkg/src/main.ts",
                "project/.pi/extensions/py",
                "agent/extensions/global.ts",
            ]
        );
        assert_eq!(entries[1].origin, Origin::Cli, "the first source wins");
        assert!(matches!(entries[7].kind, EntryKind::Process { .. }));
        assert_eq!(missing.len(), 1);
        assert_eq!(
            missing[0].to_string(),
            format!("Extension path does not exist: {}", cwd.join("nowhere.ts").display())
        );
        assert_eq!(entries[4].source_info()["source"], "auto");
        assert_eq!(entries[4].source_info()["scope"], "project");
        assert_eq!(entries[0].source_info()["scope"], "temporary");

        let only_cli = discover(&DiscoverOptions {
            no_extensions: true,
            resolved: vec![agent.join("extensions/global.ts")],
            ..options
        });
        assert_eq!(
            only_cli.0.len(),
            3,
            "-e paths and resolved packages stay with --no-extensions"
        );
        assert_eq!(only_cli.0[2].origin, Origin::Package);
    }
}
