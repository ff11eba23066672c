//! Installing npm and git packages and updating them, as pi does.

use std::path::Path;

use serde_json::Value;

use super::super::PackageError;
use super::super::commands::{ChildOutput, capture, run};
use super::super::source::{GitSource, NpmSource, PackageSource};
use super::{PackageManager, Scope, Snapshot, ensure_gitignore, ensure_npm_project, entry_source, io_error, strings};

impl PackageManager {
    /// `pi update [source]`: every unpinned npm and git package of both scopes (or the one
    /// matching `source`); nothing offline.
    pub async fn update(&self, source: Option<&str>) -> Result<(), PackageError> {
        let snapshot = self.snapshot().await?;
        let wanted = source.map(|s| self.identity(s, None));
        let mut targets = Vec::new();
        let mut all = Vec::new();
        for scope in [Scope::User, Scope::Project] {
            for entry in snapshot.packages(scope) {
                let Some(entry_source) = entry_source(&entry) else {
                    continue;
                };
                all.push(entry_source.to_owned());
                if wanted
                    .as_ref()
                    .is_some_and(|w| self.identity(entry_source, Some(scope)) != *w)
                {
                    continue;
                }
                targets.push((entry_source.to_owned(), scope));
            }
        }
        if let Some(source) = source
            && targets.is_empty()
        {
            return Err(PackageError::NoMatchingPackage(no_match_message(source, &all)));
        }
        if self.offline {
            return Ok(());
        }
        let mut npm_batches: [(Scope, Vec<(String, NpmSource)>); 2] =
            [(Scope::User, Vec::new()), (Scope::Project, Vec::new())];
        let mut gits = Vec::new();
        for (source, scope) in targets {
            let parsed = PackageSource::parse(&source);
            if parsed.pinned() {
                continue;
            }
            match parsed {
                PackageSource::Npm(npm) => {
                    if self.npm_needs_update(&snapshot, &npm, scope).await? {
                        let batch = if scope == Scope::User { 0 } else { 1 };
                        npm_batches[batch].1.push((source, npm));
                    }
                }
                PackageSource::Git(git) => gits.push((source, git, scope)),
                PackageSource::Local(_) => {}
            }
        }
        for (scope, batch) in npm_batches {
            if batch.is_empty() {
                continue;
            }
            if let [(source, _)] = batch.as_slice() {
                self.say(&format!("Updating {source}..."));
            } else {
                self.say(&format!("Updating {} npm packages...", scope.as_str()));
            }
            let specs: Vec<String> = batch.iter().map(|(_, npm)| format!("{}@latest", npm.name)).collect();
            let mut args: Vec<&str> = vec!["install"];
            if scope == Scope::User {
                args.push("-g");
                args.extend(specs.iter().map(String::as_str));
                self.npm(&snapshot, &args, None).await?;
            } else {
                let root = crate::config::project_dir(&self.cwd).join("npm");
                ensure_npm_project(&root).await?;
                let root_text = root.display().to_string();
                args.extend(specs.iter().map(String::as_str));
                args.extend(["--prefix", &root_text]);
                self.npm(&snapshot, &args, None).await?;
            }
        }
        for (source, git, scope) in gits {
            self.say(&format!("Updating {source}..."));
            self.update_git(&snapshot, &git, scope).await?;
        }
        Ok(())
    }

    pub(super) async fn installed_npm_version(path: &Path) -> Option<String> {
        let text = tokio::fs::read_to_string(path.join("package.json")).await.ok()?;
        let json: Value = serde_json::from_str(&text).ok()?;
        json.get("version").and_then(Value::as_str).map(str::to_owned)
    }

    async fn npm_needs_update(&self, snapshot: &Snapshot, npm: &NpmSource, scope: Scope) -> Result<bool, PackageError> {
        let path = self.npm_install_path(snapshot, npm, scope).await?;
        let Some(installed) = PackageManager::installed_npm_version(&path).await else {
            return Ok(true);
        };
        let (program, mut args, _) = PackageManager::npm_command(snapshot)?;
        args.extend([
            "view".to_owned(),
            npm.name.clone(),
            "version".to_owned(),
            "--json".to_owned(),
        ]);
        let latest = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            capture(&program, &args, Some(&self.cwd), &self.env),
        )
        .await;
        Ok(match latest {
            Ok(Ok(text)) => serde_json::from_str::<String>(text.trim()).map_or(true, |latest| latest != installed),
            _ => true,
        })
    }

    pub(super) async fn install_npm(
        &self,
        snapshot: &Snapshot,
        npm: &NpmSource,
        scope: Scope,
    ) -> Result<(), PackageError> {
        if scope == Scope::User {
            return self.npm(snapshot, &["install", "-g", &npm.spec], None).await;
        }
        let root = match scope {
            Scope::Temporary => self.temporary_dir("npm", None),
            _ => crate::config::project_dir(&self.cwd).join("npm"),
        };
        ensure_npm_project(&root).await?;
        let root_text = root.display().to_string();
        self.npm(snapshot, &["install", &npm.spec, "--prefix", &root_text], None)
            .await
    }

    pub(super) async fn install_git(
        &self,
        snapshot: &Snapshot,
        git: &GitSource,
        scope: Scope,
    ) -> Result<(), PackageError> {
        let target = self.git_install_path(git, scope);
        if tokio::fs::try_exists(&target).await.unwrap_or(false) {
            return Ok(());
        }
        if let Some(root) = self.git_install_root(scope) {
            ensure_gitignore(&root).await?;
        }
        if let Some(parent) = target.parent() {
            tokio::fs::create_dir_all(parent)
                .await
                .map_err(|e| io_error(parent, &e))?;
        }
        let target_text = target.display().to_string();
        run(
            "git",
            &strings(&["clone", &git.repo, &target_text]),
            None,
            self.output,
            &self.env,
        )
        .await?;
        if let Some(git_ref) = &git.git_ref {
            run(
                "git",
                &strings(&["checkout", git_ref]),
                Some(&target),
                self.output,
                &self.env,
            )
            .await?;
        }
        self.npm_install_dependencies(snapshot, &target).await
    }

    /// `npm install` in a git package that has a `package.json` (`--omit=dev` unless `npmCommand`
    /// is set).
    async fn npm_install_dependencies(&self, snapshot: &Snapshot, target: &Path) -> Result<(), PackageError> {
        if !tokio::fs::try_exists(target.join("package.json"))
            .await
            .unwrap_or(false)
        {
            return Ok(());
        }
        let (_, _, configured) = PackageManager::npm_command(snapshot)?;
        let args: &[&str] = if configured {
            &["install"]
        } else {
            &["install", "--omit=dev"]
        };
        self.npm(snapshot, args, Some(target)).await
    }

    async fn git_capture(&self, dir: &Path, args: &[&str]) -> Result<String, PackageError> {
        let args_owned = strings(args);
        let run = capture("git", &args_owned, Some(dir), &self.env);
        match tokio::time::timeout(std::time::Duration::from_secs(10), run).await {
            Ok(result) => result,
            Err(_) => Err(PackageError::Command {
                message: format!("git {} timed out after 10000ms", args.join(" ")),
            }),
        }
    }

    /// Fetches the branch the clone follows and resets to it when it moved (then `git clean` and
    /// the dependencies again), as pi updates a git package.
    pub(super) async fn update_git(
        &self,
        snapshot: &Snapshot,
        git: &GitSource,
        scope: Scope,
    ) -> Result<(), PackageError> {
        let target = self.git_install_path(git, scope);
        if !tokio::fs::try_exists(&target).await.unwrap_or(false) {
            return self.install_git(snapshot, git, scope).await;
        }
        let fetch_branch = |branch: &str| {
            strings(&[
                "fetch",
                "--prune",
                "--no-tags",
                "origin",
                &format!("+refs/heads/{branch}:refs/remotes/origin/{branch}"),
            ])
        };
        let upstream = self
            .git_capture(&target, &["rev-parse", "--abbrev-ref", "@{upstream}"])
            .await;
        let (reference, fetch) = match upstream.as_deref().map(str::trim) {
            Ok(upstream) if upstream.strip_prefix("origin/").is_some_and(|b| !b.is_empty()) => {
                let branch = &upstream["origin/".len()..];
                self.git_capture(&target, &["rev-parse", "@{upstream}"]).await?;
                ("@{upstream}", fetch_branch(branch))
            }
            _ => {
                let _ = run(
                    "git",
                    &strings(&["remote", "set-head", "origin", "-a"]),
                    Some(&target),
                    ChildOutput::Null,
                    &self.env,
                )
                .await;
                self.git_capture(&target, &["rev-parse", "origin/HEAD"]).await?;
                let head_ref = self
                    .git_capture(&target, &["symbolic-ref", "refs/remotes/origin/HEAD"])
                    .await
                    .unwrap_or_default();
                let branch = head_ref.trim().trim_start_matches("refs/remotes/origin/").to_owned();
                if branch.is_empty() {
                    (
                        "origin/HEAD",
                        strings(&[
                            "fetch",
                            "--prune",
                            "--no-tags",
                            "origin",
                            "+HEAD:refs/remotes/origin/HEAD",
                        ]),
                    )
                } else {
                    ("origin/HEAD", fetch_branch(&branch))
                }
            }
        };
        run("git", &fetch, Some(&target), self.output, &self.env).await?;
        let local = self.git_capture(&target, &["rev-parse", "HEAD"]).await?;
        let remote = self.git_capture(&target, &["rev-parse", reference]).await?;
        if local.trim() == remote.trim() {
            return Ok(());
        }
        run(
            "git",
            &strings(&["reset", "--hard", reference]),
            Some(&target),
            self.output,
            &self.env,
        )
        .await?;
        run(
            "git",
            &strings(&["clean", "-fdx"]),
            Some(&target),
            self.output,
            &self.env,
        )
        .await?;
        self.npm_install_dependencies(snapshot, &target).await
    }
}

fn no_match_message(source: &str, configured: &[String]) -> String {
    let trimmed = source.trim();
    let suggestion = configured
        .iter()
        .find(|configured| match PackageSource::parse(configured) {
            PackageSource::Npm(npm) => trimmed == npm.name || trimmed == npm.spec,
            PackageSource::Git(git) => {
                let shorthand = format!("{}/{}", git.host, git.path);
                trimmed == shorthand
                    || git
                        .git_ref
                        .as_ref()
                        .is_some_and(|r| trimmed == format!("{shorthand}@{r}"))
            }
            PackageSource::Local(_) => false,
        });
    match suggestion {
        Some(suggestion) => format!("No matching package found for {source}. Did you mean {suggestion}?"),
        None => format!("No matching package found for {source}"),
    }
}
