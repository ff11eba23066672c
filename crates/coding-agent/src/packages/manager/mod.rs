//! [`PackageManager`]: installing, removing, updating and listing the packages of both scopes, and
//! resolving what they provide, as pi 0.73.1's package manager does.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use super::PackageError;
use super::collect::{Found, ResourceKind};
use super::commands::{ChildOutput, capture, run};
use super::source::{GitSource, NpmSource, PackageSource};
use crate::paths::{node_join, relative, resolve_from_base};

mod resolve;
mod update;

/// Which settings file a package belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// `~/.pi/agent/settings.json`.
    User,
    /// `.pi/settings.json` of the working directory (`-l`).
    Project,
    /// `-e npm:…` / `-e git:…`: one run, installed under the temporary directory.
    Temporary,
}

impl Scope {
    /// pi's name: `user`, `project`, `temporary`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Temporary => "temporary",
        }
    }
}

/// The package a resource came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageOrigin {
    /// The source as written in settings (or on the command line).
    pub source: String,
    /// Its scope.
    pub scope: Scope,
    /// The package's directory (for a single-file local package, the file's directory).
    pub root: PathBuf,
}

/// One resource of a package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageResource {
    /// The file (an extension may also be a directory with an `index.ts`).
    pub path: PathBuf,
    /// Whether the settings' filters leave it on ([`resources`] returns only those).
    pub enabled: bool,
    /// The package it came from.
    pub package: Arc<PackageOrigin>,
}

/// What the packages provide, by kind, in pi's order (project packages first).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackageResources {
    /// Extension entry points.
    pub extensions: Vec<PackageResource>,
    /// Skill files (`SKILL.md` or a top-level `.md`).
    pub skills: Vec<PackageResource>,
    /// Prompt templates.
    pub prompts: Vec<PackageResource>,
    /// Themes.
    pub themes: Vec<PackageResource>,
}

impl PackageResources {
    /// The resources of `kind`.
    pub fn of(&self, kind: ResourceKind) -> &[PackageResource] {
        match kind {
            ResourceKind::Extensions => &self.extensions,
            ResourceKind::Skills => &self.skills,
            ResourceKind::Prompts => &self.prompts,
            ResourceKind::Themes => &self.themes,
        }
    }

    fn of_mut(&mut self, kind: ResourceKind) -> &mut Vec<PackageResource> {
        match kind {
            ResourceKind::Extensions => &mut self.extensions,
            ResourceKind::Skills => &mut self.skills,
            ResourceKind::Prompts => &mut self.prompts,
            ResourceKind::Themes => &mut self.themes,
        }
    }

    /// Only the enabled ones.
    pub fn enabled(mut self) -> PackageResources {
        for kind in ResourceKind::ALL {
            self.of_mut(kind).retain(|r| r.enabled);
        }
        self
    }

    /// Adds a resource unless `seen` (the canonical paths of its kind so far) has its canonical path.
    fn add(
        &mut self,
        item: Found,
        canonical: PathBuf,
        seen: &mut HashSet<(ResourceKind, PathBuf)>,
        package: &Arc<PackageOrigin>,
    ) {
        if !seen.insert((item.kind, canonical)) {
            return;
        }
        self.of_mut(item.kind).push(PackageResource {
            path: item.path,
            enabled: item.enabled,
            package: package.clone(),
        });
    }
}

/// A package listed in settings (`pi list`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfiguredPackage {
    /// The source as written.
    pub source: String,
    /// `User` or `Project`.
    pub scope: Scope,
    /// The object form (with filters) rather than a plain string.
    pub filtered: bool,
    /// Where it is installed, when it is.
    pub installed_path: Option<PathBuf>,
}

/// `npm root -g` as answered for one npm command line.
type NpmRoot = (Vec<String>, PathBuf);

/// Called with pi's progress lines (`Installing npm:x...`).
pub type ProgressFn = Arc<dyn Fn(&str) + Send + Sync>;

/// Installs, removes, updates and lists packages, and resolves their resources, for one working
/// directory and agent directory.
#[derive(Clone)]
pub struct PackageManager {
    cwd: PathBuf,
    agent_dir: PathBuf,
    home: PathBuf,
    temp_dir: PathBuf,
    offline: bool,
    output: ChildOutput,
    progress: Option<ProgressFn>,
    env: Vec<(String, String)>,
    npm_root: Arc<Mutex<Option<NpmRoot>>>,
}

impl std::fmt::Debug for PackageManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackageManager")
            .field("cwd", &self.cwd)
            .field("agent_dir", &self.agent_dir)
            .field("offline", &self.offline)
            .finish_non_exhaustive()
    }
}

/// Both settings files' objects.
struct Snapshot {
    global: Map<String, Value>,
    project: Map<String, Value>,
}

impl Snapshot {
    fn packages(&self, scope: Scope) -> Vec<Value> {
        let settings = if scope == Scope::Project {
            &self.project
        } else {
            &self.global
        };
        match settings.get("packages") {
            Some(Value::Array(items)) => items.clone(),
            _ => Vec::new(),
        }
    }
}

/// The source string of a `packages` entry (a string, or an object's `source`).
fn entry_source(entry: &Value) -> Option<&str> {
    match entry {
        Value::String(source) => Some(source),
        Value::Object(object) => object.get("source").and_then(Value::as_str),
        _ => None,
    }
}

/// Every enabled resource of every package of both scopes (installing missing npm and git
/// packages first unless offline, as pi does at start-up). The function the extension, skill,
/// prompt-template and theme loaders call.
pub async fn resources(manager: &PackageManager) -> Result<PackageResources, PackageError> {
    Ok(manager.resolve().await?.enabled())
}

impl PackageManager {
    /// A manager for `cwd` and pi's `agent_dir`, reading `HOME`, `PI_OFFLINE` and the temporary
    /// directory from the process environment.
    pub fn new(cwd: impl Into<PathBuf>, agent_dir: impl Into<PathBuf>) -> Self {
        PackageManager::from_env(cwd, agent_dir, &|name| std::env::var(name).ok())
    }

    /// [`PackageManager::new`] with the environment read through `env`.
    pub fn from_env(
        cwd: impl Into<PathBuf>,
        agent_dir: impl Into<PathBuf>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Self {
        let offline = env("PI_OFFLINE").is_some_and(|v| {
            let v = v.to_ascii_lowercase();
            v == "1" || v == "true" || v == "yes"
        });
        let temp_dir = env("TMPDIR")
            .filter(|t| !t.is_empty())
            .map(|t| PathBuf::from(t.trim_end_matches('/')))
            .unwrap_or_else(|| PathBuf::from("/tmp"));
        let home = env("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .unwrap_or_default();
        PackageManager {
            cwd: cwd.into(),
            agent_dir: agent_dir.into(),
            home,
            temp_dir,
            offline,
            output: ChildOutput::Inherit,
            progress: None,
            env: Vec::new(),
            npm_root: Arc::new(Mutex::new(None)),
        }
    }

    /// Offline (`--offline`, `PI_OFFLINE`): nothing is installed or updated from the network.
    pub fn offline(mut self, offline: bool) -> Self {
        self.offline = self.offline || offline;
        self
    }

    /// Where `npm` and `git` print (default: the terminal).
    pub fn child_output(mut self, output: ChildOutput) -> Self {
        self.output = output;
        self
    }

    /// Receives pi's progress lines (`Installing <source>...`).
    pub fn on_progress(mut self, progress: ProgressFn) -> Self {
        self.progress = Some(progress);
        self
    }

    /// Sets an environment variable of every `npm` and `git` it runs (say `GIT_TERMINAL_PROMPT=0`).
    pub fn child_env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    fn say(&self, line: &str) {
        if let Some(progress) = &self.progress {
            progress(line);
        }
    }

    fn settings_file(&self, scope: Scope) -> PathBuf {
        match scope {
            Scope::Project => crate::config::project_settings_file(&self.cwd),
            _ => self.agent_dir.join("settings.json"),
        }
    }

    async fn snapshot(&self) -> Result<Snapshot, PackageError> {
        let files = (self.settings_file(Scope::User), self.settings_file(Scope::Project));
        let read = tokio::task::spawn_blocking(move || {
            let global = crate::config::read_object(&files.0)?.unwrap_or_default();
            let project = crate::config::read_object(&files.1)?.unwrap_or_default();
            Ok::<_, PackageError>(Snapshot { global, project })
        });
        read.await.map_err(|e| PackageError::Io {
            path: self.agent_dir.display().to_string(),
            message: e.to_string(),
        })?
    }

    async fn write_packages(&self, scope: Scope, packages: Vec<Value>) -> Result<(), PackageError> {
        let file = self.settings_file(scope);
        let mut updates = Map::new();
        updates.insert("packages".to_owned(), Value::Array(packages));
        let write = tokio::task::spawn_blocking(move || crate::config::save_global_settings(&file, updates));
        write.await.map_err(|e| PackageError::Io {
            path: self.agent_dir.display().to_string(),
            message: e.to_string(),
        })??;
        Ok(())
    }

    /// `npmCommand` of the settings (project over global), else `npm`.
    fn npm_command(snapshot: &Snapshot) -> Result<(String, Vec<String>, bool), PackageError> {
        let configured = snapshot
            .project
            .get("npmCommand")
            .or_else(|| snapshot.global.get("npmCommand"))
            .and_then(Value::as_array)
            .filter(|a| !a.is_empty());
        let Some(configured) = configured else {
            return Ok(("npm".to_owned(), Vec::new(), false));
        };
        let words: Vec<String> = configured
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        match words.split_first() {
            Some((program, args)) if !program.is_empty() => Ok((program.clone(), args.to_vec(), true)),
            _ => Err(PackageError::InvalidNpmCommand),
        }
    }

    async fn npm(&self, snapshot: &Snapshot, args: &[&str], cwd: Option<&Path>) -> Result<(), PackageError> {
        let (program, mut full, _) = PackageManager::npm_command(snapshot)?;
        full.extend(args.iter().map(|a| (*a).to_owned()));
        run(&program, &full, cwd, self.output, &self.env).await
    }

    /// `npm root -g` (or bun's global directory), once per command.
    async fn global_npm_root(&self, snapshot: &Snapshot) -> Result<PathBuf, PackageError> {
        let (program, args, _) = PackageManager::npm_command(snapshot)?;
        let key: Vec<String> = std::iter::once(program.clone()).chain(args.iter().cloned()).collect();
        if let Ok(cached) = self.npm_root.lock()
            && let Some((cached_key, root)) = cached.as_ref()
            && *cached_key == key
        {
            return Ok(root.clone());
        }
        let bun = program == "bun";
        let mut full = args.clone();
        let query: &[&str] = if bun { &["pm", "bin", "-g"] } else { &["root", "-g"] };
        full.extend(query.iter().map(|a| (*a).to_owned()));
        let output = capture(&program, &full, None, &self.env)
            .await
            .map_err(|error| PackageError::Command {
                message: match error {
                    PackageError::Command { message } if message.starts_with("spawn ") => {
                        format!(
                            "Failed to run {program} {}: spawnSync{}",
                            full.join(" "),
                            &message["spawn".len()..]
                        )
                    }
                    other => format!("Failed to run {program} {}: {other}", full.join(" ")),
                },
            })?;
        let root = if bun {
            Path::new(&output)
                .parent()
                .unwrap_or(Path::new("/"))
                .join("install/global/node_modules")
        } else {
            PathBuf::from(output)
        };
        if let Ok(mut cached) = self.npm_root.lock() {
            *cached = Some((key, root.clone()));
        }
        Ok(root)
    }

    fn base_dir(&self, scope: Scope) -> PathBuf {
        match scope {
            Scope::Project => crate::config::project_dir(&self.cwd),
            Scope::User => self.agent_dir.clone(),
            Scope::Temporary => self.cwd.clone(),
        }
    }

    fn resolve_input(&self, path: &str) -> PathBuf {
        resolve_from_base(path, &self.cwd, &self.home)
    }

    /// `<tmp>/pi-extensions/<prefix>/<8 hex of sha256>/<suffix>`, pi's place for `-e` packages.
    fn temporary_dir(&self, prefix: &str, suffix: Option<&str>) -> PathBuf {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(format!("{prefix}-{}", suffix.unwrap_or("")).as_bytes());
        let hash: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
        let dir = self.temp_dir.join("pi-extensions").join(prefix).join(hash);
        match suffix {
            Some(suffix) => node_join(&dir, suffix),
            None => dir,
        }
    }

    async fn npm_install_path(
        &self,
        snapshot: &Snapshot,
        npm: &NpmSource,
        scope: Scope,
    ) -> Result<PathBuf, PackageError> {
        Ok(match scope {
            Scope::Temporary => node_join(&self.temporary_dir("npm", None).join("node_modules"), &npm.name),
            Scope::Project => node_join(
                &crate::config::project_dir(&self.cwd).join("npm/node_modules"),
                &npm.name,
            ),
            Scope::User => node_join(&self.global_npm_root(snapshot).await?, &npm.name),
        })
    }

    fn git_install_path(&self, git: &GitSource, scope: Scope) -> PathBuf {
        match scope {
            Scope::Temporary => self.temporary_dir(&format!("git-{}", git.host), Some(&git.path)),
            Scope::Project => node_join(
                &crate::config::project_dir(&self.cwd).join("git").join(&git.host),
                &git.path,
            ),
            Scope::User => node_join(&self.agent_dir.join("git").join(&git.host), &git.path),
        }
    }

    fn git_install_root(&self, scope: Scope) -> Option<PathBuf> {
        match scope {
            Scope::Temporary => None,
            Scope::Project => Some(crate::config::project_dir(&self.cwd).join("git")),
            Scope::User => Some(self.agent_dir.join("git")),
        }
    }

    /// The identity two entries share when they are the same package: the npm name, the git
    /// host and path, or the resolved local path.
    fn identity(&self, source: &str, scope: Option<Scope>) -> String {
        match PackageSource::parse(source) {
            PackageSource::Npm(npm) => format!("npm:{}", npm.name),
            PackageSource::Git(git) => format!("git:{}/{}", git.host, git.path),
            PackageSource::Local(path) => {
                let resolved = match scope {
                    Some(scope) => resolve_from_base(&path, &self.base_dir(scope), &self.home),
                    None => self.resolve_input(&path),
                };
                format!("local:{}", resolved.display())
            }
        }
    }

    /// `pi install <source> [-l]`: installs, then adds the source to the scope's settings (a local
    /// path relative to the settings file's directory) unless it is there already.
    pub async fn install_and_persist(&self, source: &str, local: bool) -> Result<(), PackageError> {
        let scope = if local { Scope::Project } else { Scope::User };
        let snapshot = self.snapshot().await?;
        self.say(&format!("Installing {source}..."));
        match PackageSource::parse(source) {
            PackageSource::Npm(npm) => self.install_npm(&snapshot, &npm, scope).await?,
            PackageSource::Git(git) => self.install_git(&snapshot, &git, scope).await?,
            PackageSource::Local(path) => {
                let resolved = self.resolve_input(&path);
                if !tokio::fs::try_exists(&resolved).await.unwrap_or(false) {
                    return Err(PackageError::PathDoesNotExist(resolved.display().to_string()));
                }
            }
        }
        let snapshot = self.snapshot().await?;
        let mut packages = snapshot.packages(scope);
        let wanted = self.identity(source, None);
        let present = packages
            .iter()
            .filter_map(entry_source)
            .any(|existing| self.identity(existing, Some(scope)) == wanted);
        if !present {
            let stored = match PackageSource::parse(source) {
                PackageSource::Local(path) => {
                    let rel = relative(&self.base_dir(scope), &self.resolve_input(&path));
                    if rel.is_empty() { ".".to_owned() } else { rel }
                }
                _ => source.to_owned(),
            };
            packages.push(Value::String(stored));
            self.write_packages(scope, packages).await?;
        }
        Ok(())
    }

    /// `pi remove <source> [-l]`: uninstalls (npm) or deletes the clone (git), then removes the
    /// matching entries from the scope's settings; false when none matched.
    pub async fn remove_and_persist(&self, source: &str, local: bool) -> Result<bool, PackageError> {
        let scope = if local { Scope::Project } else { Scope::User };
        let snapshot = self.snapshot().await?;
        self.say(&format!("Removing {source}..."));
        match PackageSource::parse(source) {
            PackageSource::Npm(npm) => {
                if scope == Scope::User {
                    self.npm(&snapshot, &["uninstall", "-g", &npm.name], None).await?;
                } else {
                    let root = crate::config::project_dir(&self.cwd).join("npm");
                    if tokio::fs::try_exists(&root).await.unwrap_or(false) {
                        let root_text = root.display().to_string();
                        self.npm(&snapshot, &["uninstall", &npm.name, "--prefix", &root_text], None)
                            .await?;
                    }
                }
            }
            PackageSource::Git(git) => {
                let target = self.git_install_path(&git, scope);
                if tokio::fs::try_exists(&target).await.unwrap_or(false) {
                    tokio::fs::remove_dir_all(&target).await.map_err(|e| PackageError::Io {
                        path: target.display().to_string(),
                        message: e.to_string(),
                    })?;
                    if let Some(root) = self.git_install_root(scope) {
                        prune_empty_parents(&target, &root).await;
                    }
                }
            }
            PackageSource::Local(_) => {}
        }
        let snapshot = self.snapshot().await?;
        let packages = snapshot.packages(scope);
        let wanted = self.identity(source, None);
        let kept: Vec<Value> = packages
            .iter()
            .filter(|entry| entry_source(entry).is_none_or(|s| self.identity(s, Some(scope)) != wanted))
            .cloned()
            .collect();
        if kept.len() == packages.len() {
            return Ok(false);
        }
        self.write_packages(scope, kept).await?;
        Ok(true)
    }

    /// `pi list`: the packages of the global then the project settings.
    pub async fn list_configured(&self) -> Result<Vec<ConfiguredPackage>, PackageError> {
        let snapshot = self.snapshot().await?;
        let mut out = Vec::new();
        for scope in [Scope::User, Scope::Project] {
            for entry in snapshot.packages(scope) {
                let Some(source) = entry_source(&entry) else { continue };
                let installed = self.installed_path(&snapshot, source, scope).await?;
                out.push(ConfiguredPackage {
                    source: source.to_owned(),
                    scope,
                    filtered: entry.is_object(),
                    installed_path: installed,
                });
            }
        }
        Ok(out)
    }

    async fn installed_path(
        &self,
        snapshot: &Snapshot,
        source: &str,
        scope: Scope,
    ) -> Result<Option<PathBuf>, PackageError> {
        let path = match PackageSource::parse(source) {
            PackageSource::Npm(npm) => self.npm_install_path(snapshot, &npm, scope).await?,
            PackageSource::Git(git) => self.git_install_path(&git, scope),
            PackageSource::Local(path) => resolve_from_base(&path, &self.base_dir(scope), &self.home),
        };
        Ok(tokio::fs::try_exists(&path).await.unwrap_or(false).then_some(path))
    }
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| (*a).to_owned()).collect()
}

fn io_error(path: &Path, error: &std::io::Error) -> PackageError {
    PackageError::Io {
        path: path.display().to_string(),
        message: error.to_string(),
    }
}

/// A `.gitignore` of `*` and `!.gitignore` in pi's install directories, so that a project never
/// commits them.
async fn ensure_gitignore(dir: &Path) -> Result<(), PackageError> {
    tokio::fs::create_dir_all(dir).await.map_err(|e| io_error(dir, &e))?;
    let ignore = dir.join(".gitignore");
    if !tokio::fs::try_exists(&ignore).await.unwrap_or(false) {
        tokio::fs::write(&ignore, "*\n!.gitignore\n")
            .await
            .map_err(|e| io_error(&ignore, &e))?;
    }
    Ok(())
}

/// The npm project pi installs project and temporary packages into.
async fn ensure_npm_project(root: &Path) -> Result<(), PackageError> {
    ensure_gitignore(root).await?;
    let manifest = root.join("package.json");
    if !tokio::fs::try_exists(&manifest).await.unwrap_or(false) {
        let text = "{\n  \"name\": \"pi-extensions\",\n  \"private\": true\n}";
        tokio::fs::write(&manifest, text)
            .await
            .map_err(|e| io_error(&manifest, &e))?;
    }
    Ok(())
}

/// Removes the empty directories between a removed clone and pi's git directory.
async fn prune_empty_parents(target: &Path, root: &Path) {
    let mut current = target.parent();
    while let Some(dir) = current {
        if !dir.starts_with(root) || dir == root {
            break;
        }
        let empty = match tokio::fs::read_dir(dir).await {
            Ok(mut entries) => entries.next_entry().await.ok().flatten().is_none(),
            Err(_) => {
                current = dir.parent();
                continue;
            }
        };
        if !empty || tokio::fs::remove_dir(dir).await.is_err() {
            break;
        }
        current = dir.parent();
    }
}

#[cfg(test)]
mod tests;
