//! The part of `cargo metadata` xtask needs: the workspace's packages, their dependencies on each other
//! and their binary targets.

use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

/// Which manifest table declares a dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DependencyKind {
    /// `[dependencies]`.
    Normal,
    /// `[dev-dependencies]`.
    Dev,
    /// `[build-dependencies]`.
    Build,
}

impl fmt::Display for DependencyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Normal => "dependency",
            Self::Dev => "dev-dependency",
            Self::Build => "build-dependency",
        })
    }
}

/// A dependency of one workspace package on another workspace package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependency {
    /// The package depended on (its package name, not a `package = …` rename).
    pub name: String,
    /// The table that declares it.
    pub kind: DependencyKind,
}

/// One package of the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    /// The package name, e.g. `pi-agent-core`.
    pub name: String,
    /// Its dependencies on other packages of the workspace (external crates are left out).
    pub dependencies: Vec<Dependency>,
    /// The names of its binary targets.
    pub binaries: Vec<String>,
}

impl Package {
    /// A package with no dependencies and no binary targets.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            dependencies: Vec::new(),
            binaries: Vec::new(),
        }
    }

    /// This package with one more dependency on a workspace package.
    pub fn depends_on(mut self, name: impl Into<String>, kind: DependencyKind) -> Self {
        self.dependencies.push(Dependency {
            name: name.into(),
            kind,
        });
        self
    }

    /// This package with one more binary target.
    pub fn with_binary(mut self, name: impl Into<String>) -> Self {
        self.binaries.push(name.into());
        self
    }
}

/// The workspace's packages: the graph description that [`crate::layers::check`] judges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Workspace {
    /// Every workspace member, in `cargo metadata` order.
    pub packages: Vec<Package>,
}

impl Workspace {
    /// Runs `cargo metadata --format-version 1 --no-deps` in `root` and parses its output.
    pub fn load(root: &Path) -> Result<Self> {
        let output = crate::cargo(root)
            .args(["metadata", "--format-version", "1", "--no-deps"])
            .output()
            .context("could not run `cargo metadata`")?;
        if !output.status.success() {
            bail!(
                "`cargo metadata` failed ({}):\n{}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim_end()
            );
        }
        let json = String::from_utf8(output.stdout).context("`cargo metadata` printed non-UTF-8")?;
        Self::from_metadata_json(&json)
    }

    /// Parses the JSON printed by `cargo metadata --format-version 1` (with or without `--no-deps`).
    ///
    /// Keeps the workspace members only, and of their dependencies only those on other members
    /// (path dependencies whose name is a member's name).
    pub fn from_metadata_json(json: &str) -> Result<Self> {
        let raw: RawMetadata = serde_json::from_str(json).context("could not parse `cargo metadata` output")?;
        let member_ids: BTreeSet<&str> = raw.workspace_members.iter().map(String::as_str).collect();
        let members: Vec<&RawPackage> = raw
            .packages
            .iter()
            .filter(|package| member_ids.contains(package.id.as_str()))
            .collect();
        let member_names: BTreeSet<&str> = members.iter().map(|package| package.name.as_str()).collect();

        let mut packages = Vec::with_capacity(members.len());
        for raw_package in members {
            let mut package = Package::new(raw_package.name.clone());
            for dependency in &raw_package.dependencies {
                if dependency.source.is_some() || !member_names.contains(dependency.name.as_str()) {
                    continue;
                }
                let kind = match dependency.kind.as_deref() {
                    None | Some("normal") => DependencyKind::Normal,
                    Some("dev") => DependencyKind::Dev,
                    Some("build") => DependencyKind::Build,
                    Some(other) => bail!(
                        "`cargo metadata`: unknown dependency kind `{other}` in package {}",
                        raw_package.name
                    ),
                };
                package = package.depends_on(dependency.name.clone(), kind);
            }
            for target in &raw_package.targets {
                if target.kind.iter().any(|kind| kind == "bin") {
                    package = package.with_binary(target.name.clone());
                }
            }
            packages.push(package);
        }
        Ok(Self { packages })
    }
}

#[derive(Deserialize)]
struct RawMetadata {
    packages: Vec<RawPackage>,
    workspace_members: Vec<String>,
}

#[derive(Deserialize)]
struct RawPackage {
    id: String,
    name: String,
    #[serde(default)]
    dependencies: Vec<RawDependency>,
    #[serde(default)]
    targets: Vec<RawTarget>,
}

#[derive(Deserialize)]
struct RawDependency {
    name: String,
    kind: Option<String>,
    source: Option<String>,
}

#[derive(Deserialize)]
struct RawTarget {
    name: String,
    kind: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"{
        "packages": [
            {
                "id": "path+file:///w/crates/a#pi-ai@0.1.0",
                "name": "pi-ai",
                "dependencies": [
                    {"name": "pi-agent-core", "kind": null, "source": null, "path": "/w/crates/agent-core"},
                    {"name": "serde", "kind": null, "source": "registry+https://github.com/rust-lang/crates.io-index"},
                    {"name": "pi-tools", "kind": "dev", "source": null, "path": "/w/crates/tools"},
                    {"name": "pi-tui", "kind": "build", "source": null, "rename": "tui", "path": "/w/crates/tui"}
                ],
                "targets": [
                    {"name": "pi_ai", "kind": ["lib"]},
                    {"name": "helper", "kind": ["bin"]},
                    {"name": "smoke", "kind": ["test"]}
                ]
            },
            {"id": "path+file:///w/crates/agent-core#pi-agent-core@0.1.0", "name": "pi-agent-core",
             "dependencies": [], "targets": [{"name": "pi_agent_core", "kind": ["lib"]}]},
            {"id": "path+file:///w/crates/tools#pi-tools@0.1.0", "name": "pi-tools",
             "dependencies": [], "targets": []},
            {"id": "path+file:///w/crates/tui#pi-tui@0.1.0", "name": "pi-tui",
             "dependencies": [], "targets": []},
            {"id": "registry+https://github.com/rust-lang/crates.io-index#serde@1.0.0", "name": "serde",
             "dependencies": [], "targets": [{"name": "serde", "kind": ["lib"]}]}
        ],
        "workspace_members": [
            "path+file:///w/crates/a#pi-ai@0.1.0",
            "path+file:///w/crates/agent-core#pi-agent-core@0.1.0",
            "path+file:///w/crates/tools#pi-tools@0.1.0",
            "path+file:///w/crates/tui#pi-tui@0.1.0"
        ]
    }"#;

    #[test]
    fn parses_members_internal_dependencies_and_binaries() {
        let workspace = Workspace::from_metadata_json(SAMPLE).expect("sample parses");
        let names: Vec<&str> = workspace.packages.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["pi-ai", "pi-agent-core", "pi-tools", "pi-tui"]);
        let ai = &workspace.packages[0];
        assert_eq!(
            ai,
            &Package::new("pi-ai")
                .depends_on("pi-agent-core", DependencyKind::Normal)
                .depends_on("pi-tools", DependencyKind::Dev)
                .depends_on("pi-tui", DependencyKind::Build)
                .with_binary("helper")
        );
    }

    #[test]
    fn rejects_output_that_is_not_metadata() {
        assert!(Workspace::from_metadata_json("{}").is_err());
        assert!(Workspace::from_metadata_json("not json").is_err());
    }
}
