//! What the packages provide: resolving both scopes (and `-e` sources) to their resources, and
//! turning one resource on or off.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::super::PackageError;
use super::super::collect::{Found, ResourceKind, package_resources};
use super::super::source::PackageSource;
use super::{PackageManager, PackageOrigin, PackageResource, PackageResources, Scope, Snapshot, entry_source};
use crate::paths::{relative, resolve_from_base};

impl PackageManager {
    /// Every resource of every package of both scopes, enabled or not (`pi config` shows both);
    /// missing npm and git packages are installed first unless offline. A project entry wins
    /// over a global one for the same package.
    pub async fn resolve(&self) -> Result<PackageResources, PackageError> {
        let snapshot = self.snapshot().await?;
        let mut entries: Vec<(Value, Scope)> = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        for scope in [Scope::Project, Scope::User] {
            for entry in snapshot.packages(scope) {
                let Some(source) = entry_source(&entry) else { continue };
                let identity = self.identity(source, Some(scope));
                if seen.contains(&identity) {
                    continue;
                }
                seen.push(identity);
                entries.push((entry.clone(), scope));
            }
        }
        self.resolve_entries(&snapshot, entries).await
    }

    /// `-e <source>` for one run: npm and git sources installed under the temporary directory
    /// (`<tmp>/pi-extensions/`), a git one pulled again when it is there already and unpinned;
    /// local paths resolved against the working directory.
    pub async fn resolve_extension_sources(&self, sources: &[String]) -> Result<PackageResources, PackageError> {
        let snapshot = self.snapshot().await?;
        let entries = sources
            .iter()
            .map(|s| (Value::String(s.clone()), Scope::Temporary))
            .collect();
        self.resolve_entries(&snapshot, entries).await
    }

    async fn resolve_entries(
        &self,
        snapshot: &Snapshot,
        entries: Vec<(Value, Scope)>,
    ) -> Result<PackageResources, PackageError> {
        let mut resources = PackageResources::default();
        let mut seen = HashSet::new();
        for (entry, scope) in entries {
            let Some(source) = entry_source(&entry).map(str::to_owned) else {
                continue;
            };
            let filter = entry.as_object().cloned();
            let root = match PackageSource::parse(&source) {
                PackageSource::Local(path) => resolve_from_base(&path, &self.base_dir(scope), &self.home),
                PackageSource::Npm(npm) => {
                    let installed = self.npm_install_path(snapshot, &npm, scope).await?;
                    let needs_install = match PackageManager::installed_npm_version(&installed).await {
                        None => !tokio::fs::try_exists(&installed).await.unwrap_or(false) || npm.version.is_some(),
                        Some(version) => npm.version.as_ref().is_some_and(|pinned| *pinned != version),
                    };
                    if needs_install {
                        if self.offline {
                            continue;
                        }
                        self.install_npm(snapshot, &npm, scope).await?;
                    }
                    installed
                }
                PackageSource::Git(git) => {
                    let installed = self.git_install_path(&git, scope);
                    if !tokio::fs::try_exists(&installed).await.unwrap_or(false) {
                        if self.offline {
                            continue;
                        }
                        self.install_git(snapshot, &git, scope).await?;
                    } else if scope == Scope::Temporary && git.git_ref.is_none() && !self.offline {
                        self.say(&format!("Refreshing {source}..."));
                        // A cached checkout is kept when the refresh fails.
                        let _ = self.update_git(snapshot, &git, scope).await;
                    }
                    installed
                }
            };
            let collected = tokio::task::spawn_blocking(move || collect_package(&root, filter.as_ref()))
                .await
                .map_err(|e| PackageError::Io {
                    path: source.clone(),
                    message: e.to_string(),
                })?;
            let Some((package_root, found)) = collected else {
                continue;
            };
            let origin = Arc::new(PackageOrigin {
                source,
                scope,
                root: package_root,
            });
            for (item, canonical) in found {
                resources.add(item, canonical, &mut seen, &origin);
            }
        }
        Ok(resources)
    }

    /// Turns one package resource on or off in its scope's settings, as `pi config` does: a
    /// `+path` or `-path` (relative to the package) in the object form of the package's entry.
    pub async fn set_enabled(
        &self,
        resource: &PackageResource,
        kind: ResourceKind,
        enabled: bool,
    ) -> Result<(), PackageError> {
        let scope = resource.package.scope;
        if scope == Scope::Temporary {
            return Ok(());
        }
        let snapshot = self.snapshot().await?;
        let mut packages = snapshot.packages(scope);
        let Some(index) = packages
            .iter()
            .position(|e| entry_source(e) == Some(resource.package.source.as_str()))
        else {
            return Ok(());
        };
        let mut object = match &packages[index] {
            Value::Object(object) => object.clone(),
            other => {
                let mut object = Map::new();
                object.insert("source".to_owned(), other.clone());
                object
            }
        };
        let pattern = relative(&resource.package.root, &resource.path);
        let mut list: Vec<Value> = object
            .get(kind.key())
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|p| {
                let p = p.as_str().unwrap_or("");
                let stripped = p.strip_prefix(['!', '+', '-']).unwrap_or(p);
                stripped != pattern
            })
            .collect();
        list.push(Value::String(format!("{}{pattern}", if enabled { '+' } else { '-' })));
        object.insert(kind.key().to_owned(), Value::Array(list));
        packages[index] = Value::Object(object);
        self.write_packages(scope, packages).await
    }
}

/// The package's resources, each with its canonical path (the same file reached twice loads
/// once): a file is one extension; a directory its declared resources, or itself as one extension
/// when it declares none. `None` when the path does not exist.
fn collect_package(root: &Path, filter: Option<&Map<String, Value>>) -> Option<(PathBuf, Vec<(Found, PathBuf)>)> {
    let meta = std::fs::metadata(root).ok()?;
    let one_extension = || {
        vec![Found {
            kind: ResourceKind::Extensions,
            path: root.to_path_buf(),
            enabled: true,
        }]
    };
    let (package_root, found) = if meta.is_file() {
        (root.parent().unwrap_or(Path::new("/")).to_path_buf(), one_extension())
    } else {
        (
            root.to_path_buf(),
            package_resources(root, filter).unwrap_or_else(one_extension),
        )
    };
    let found = found
        .into_iter()
        .map(|item| {
            let canonical = std::fs::canonicalize(&item.path).unwrap_or_else(|_| item.path.clone());
            (item, canonical)
        })
        .collect();
    Some((package_root, found))
}
