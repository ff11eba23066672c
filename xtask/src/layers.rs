//! `cargo xtask layers`: checks the dependencies between our crates against SPEC §2.
//!
//! The workspace's packages become a petgraph [`DiGraph`] with an edge for every dependency (normal, dev
//! or build) of one of our packages on another (a crate's dev-dependency on itself, which only turns on its
//! own test features, is not an edge). The check fails on every edge SPEC §2 does not allow, on
//! any cycle, on a binary target outside `pi-cli`, on a package SPEC §2 does not know, on a normal
//! or build dependency on a tests-only package ([`DEV_ONLY_PACKAGES`]), and on an external crate
//! a package must not pull in ([`FORBIDDEN_EXTERNAL`]: `pi-coding-agent` has no clap, crossterm or
//! ratatui, checked with `cargo tree -p pi-coding-agent`).
//! `xtask` itself is tooling and is left out.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::fmt;
use std::path::Path;

use anyhow::{Context, Result, bail};
use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::metadata::{DependencyKind, Package, Workspace};

/// Workspace packages that are tooling rather than product; the check ignores them.
pub const IGNORED_PACKAGES: &[&str] = &["xtask"];

/// The only package that may declare a binary target (the `pi` binary).
pub const BINARY_PACKAGE: &str = "pi-cli";

/// SPEC §2: each of our packages and the packages it may depend on.
pub const ALLOWED_DEPENDENCIES: &[(&str, &[&str])] = &[
    ("pi-agent-core", &[]),
    ("pi-ai", &["pi-agent-core"]),
    ("pi-tools", &["pi-agent-core"]),
    ("pi-tui", &[]),
    ("pi-session-store", &["pi-agent-core"]),
    (
        "pi-coding-agent",
        &["pi-agent-core", "pi-ai", "pi-tools", "pi-session-store", "pi-tui"],
    ),
    (
        "pi-cli",
        &[
            "pi-agent-core",
            "pi-ai",
            "pi-tools",
            "pi-session-store",
            "pi-tui",
            "pi-coding-agent",
        ],
    ),
    ("pi-test-support", &["pi-agent-core"]),
];

/// Packages only tests may use: any package may list them under `[dev-dependencies]`, none under
/// `[dependencies]` or `[build-dependencies]`.
pub const DEV_ONLY_PACKAGES: &[&str] = &["pi-test-support"];

/// External crates a package must not pull in through its normal dependencies with default features
/// (SPEC §2: the coding-agent library has no terminal or command-line code).
pub const FORBIDDEN_EXTERNAL: &[(&str, &[&str])] = &[
    ("pi-coding-agent", &["clap", "crossterm", "ratatui"]),
    ("pi-session-store", &["clap", "crossterm", "ratatui"]),
];

/// The packages `package` may depend on, or `None` if SPEC §2 does not know `package`.
pub fn allowed_dependencies(package: &str) -> Option<&'static [&'static str]> {
    ALLOWED_DEPENDENCIES
        .iter()
        .find(|(name, _)| *name == package)
        .map(|(_, allowed)| *allowed)
}

/// One break of the SPEC §2 rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Violation {
    /// `from` depends on `to`, which SPEC §2 does not allow.
    ForbiddenEdge {
        /// The depending package.
        from: String,
        /// The package depended on.
        to: String,
        /// The tables that declare the dependency.
        kinds: Vec<DependencyKind>,
    },
    /// Packages that depend on each other in a circle, in dependency order; the first is not repeated.
    Cycle {
        /// The packages of the cycle.
        packages: Vec<String>,
    },
    /// A package other than [`BINARY_PACKAGE`] declares a binary target.
    ForbiddenBinary {
        /// The package.
        package: String,
        /// The binary target's name.
        target: String,
    },
    /// A workspace package that SPEC §2 (and [`ALLOWED_DEPENDENCIES`]) does not list.
    UnknownPackage {
        /// The package.
        name: String,
    },
    /// A package pulls in an external crate [`FORBIDDEN_EXTERNAL`] keeps out of it.
    ForbiddenExternal {
        /// The package.
        package: String,
        /// The external crate found in its normal dependency tree.
        dependency: String,
    },
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ForbiddenEdge { from, to, kinds } => {
                if DEV_ONLY_PACKAGES.contains(&to.as_str()) {
                    write!(
                        f,
                        "forbidden dependency: {from} -> {to} ({to} is for tests only: a dev-dependency)"
                    )?;
                } else {
                    let allowed = match allowed_dependencies(from) {
                        Some([]) | None => "nothing".to_owned(),
                        Some(allowed) => allowed.join(", "),
                    };
                    write!(
                        f,
                        "forbidden dependency: {from} -> {to} (SPEC §2 allows {from} -> {allowed})"
                    )?;
                }
                if kinds.iter().any(|kind| *kind != DependencyKind::Normal) {
                    let kinds: Vec<String> = kinds.iter().map(ToString::to_string).collect();
                    write!(f, " [declared as {}]", kinds.join(", "))?;
                }
                Ok(())
            }
            Self::Cycle { packages } => {
                let first = packages.first().map_or("", String::as_str);
                write!(
                    f,
                    "dependency cycle: {} -> {first} (SPEC §2 layers must not form a cycle)",
                    packages.join(" -> ")
                )
            }
            Self::ForbiddenBinary { package, target } => write!(
                f,
                "forbidden binary target: {package} declares binary `{target}` \
                 (SPEC §2: only {BINARY_PACKAGE} has a binary)"
            ),
            Self::ForbiddenExternal { package, dependency } => write!(
                f,
                "forbidden external dependency: {package} pulls in {dependency} \
                 (SPEC §2: {package} has no terminal or command-line code; `cargo tree -p {package} -i {dependency}` shows the path)"
            ),
            Self::UnknownPackage { name } => write!(
                f,
                "unknown workspace package: {name} (not in SPEC §2; add it to the spec and to \
                 ALLOWED_DEPENDENCIES in xtask/src/layers.rs)"
            ),
        }
    }
}

/// What a passing check looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The packages checked, sorted by name.
    pub packages: Vec<String>,
    /// The dependency edges between them, `(from, to)`, sorted.
    pub edges: Vec<(String, String)>,
}

/// The dependency graph of our packages: one node per package, one edge per depending pair, weighted
/// with the tables that declare the dependency.
pub type LayerGraph = DiGraph<String, Vec<DependencyKind>>;

/// Builds the [`LayerGraph`] of `workspace`, leaving out [`IGNORED_PACKAGES`] and dependencies on them.
pub fn build_graph(workspace: &Workspace) -> LayerGraph {
    let packages = checked_packages(workspace);
    let mut graph = LayerGraph::new();
    let mut index: BTreeMap<&str, NodeIndex> = BTreeMap::new();
    for package in &packages {
        index.insert(&package.name, graph.add_node(package.name.clone()));
    }
    let mut edges: BTreeMap<(&str, &str), BTreeSet<DependencyKind>> = BTreeMap::new();
    for package in &packages {
        for dependency in &package.dependencies {
            // A crate's dev-dependency on itself only switches on its own test features (e.g.
            // `pi-ai`'s `testing`); it is not an edge between layers.
            let self_for_tests = dependency.name == package.name && dependency.kind == DependencyKind::Dev;
            if index.contains_key(dependency.name.as_str()) && !self_for_tests {
                edges
                    .entry((&package.name, &dependency.name))
                    .or_default()
                    .insert(dependency.kind);
            }
        }
    }
    for ((from, to), kinds) in edges {
        graph.add_edge(index[from], index[to], kinds.into_iter().collect());
    }
    graph
}

/// Checks `workspace` against SPEC §2; on failure returns every violation found, not just the first.
pub fn check(workspace: &Workspace) -> Result<Report, Vec<Violation>> {
    let mut violations = Vec::new();
    for package in checked_packages(workspace) {
        if allowed_dependencies(&package.name).is_none() {
            violations.push(Violation::UnknownPackage {
                name: package.name.clone(),
            });
        }
        if package.name != BINARY_PACKAGE {
            for target in &package.binaries {
                violations.push(Violation::ForbiddenBinary {
                    package: package.name.clone(),
                    target: target.clone(),
                });
            }
        }
    }

    let graph = build_graph(workspace);
    let mut edges = Vec::new();
    for edge in graph.edge_indices() {
        let Some((from, to)) = graph.edge_endpoints(edge) else {
            continue;
        };
        let (from, to) = (graph[from].clone(), graph[to].clone());
        let allowed = allowed_dependencies(&from).unwrap_or(&[]);
        let dev_only = DEV_ONLY_PACKAGES.contains(&to.as_str());
        let kinds = &graph[edge];
        let ok = if dev_only {
            kinds.iter().all(|kind| *kind == DependencyKind::Dev)
        } else {
            allowed.contains(&to.as_str())
        };
        if !ok {
            violations.push(Violation::ForbiddenEdge {
                from: from.clone(),
                to: to.clone(),
                kinds: graph[edge].clone(),
            });
        }
        edges.push((from, to));
    }
    for packages in cycles(&graph) {
        violations.push(Violation::Cycle { packages });
    }

    if violations.is_empty() {
        edges.sort();
        let mut packages: Vec<String> = graph.node_weights().cloned().collect();
        packages.sort();
        Ok(Report { packages, edges })
    } else {
        Err(violations)
    }
}

/// Checks the normal dependency tree of `package` — the crate names `cargo tree -e normal,build
/// --prefix none --format {p}` printed for it, one per line — against [`FORBIDDEN_EXTERNAL`].
pub fn check_externals(package: &str, tree: &str) -> Vec<Violation> {
    let Some((_, forbidden)) = FORBIDDEN_EXTERNAL.iter().find(|(name, _)| *name == package) else {
        return Vec::new();
    };
    let found: BTreeSet<&str> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| forbidden.contains(name))
        .collect();
    found
        .into_iter()
        .map(|dependency| Violation::ForbiddenExternal {
            package: package.to_owned(),
            dependency: dependency.to_owned(),
        })
        .collect()
}

/// Runs `cargo tree` for every package of [`FORBIDDEN_EXTERNAL`] on its own (so features other
/// workspace members turn on are not counted) and checks what it prints.
fn external_violations(root: &Path) -> Result<Vec<Violation>> {
    let mut violations = Vec::new();
    for (package, _) in FORBIDDEN_EXTERNAL {
        let output = crate::cargo(root)
            .args([
                "tree",
                "-p",
                package,
                "-e",
                "normal,build",
                "--prefix",
                "none",
                "--format",
                "{p}",
            ])
            .output()
            .with_context(|| format!("could not run `cargo tree -p {package}`"))?;
        if !output.status.success() {
            bail!(
                "`cargo tree -p {package}` failed ({}):\n{}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim_end()
            );
        }
        violations.extend(check_externals(package, &String::from_utf8_lossy(&output.stdout)));
    }
    Ok(violations)
}

/// `cargo xtask layers`: loads the workspace's metadata, checks it and prints the outcome.
pub fn run(root: &Path) -> Result<()> {
    let workspace = Workspace::load(root)?;
    let externals = external_violations(root)?;
    let source = crate::source_rules::check_crates(&root.join("crates"))?;
    for violation in &source {
        eprintln!("{violation}");
    }
    let outcome = match check(&workspace) {
        Ok(report) if externals.is_empty() => Ok(report),
        Ok(_) => Err(externals),
        Err(mut violations) => {
            violations.extend(externals);
            Err(violations)
        }
    };
    match outcome {
        Ok(_) if !source.is_empty() => bail!("layers: {} violation(s) of the source rules", source.len()),
        Ok(report) => {
            println!(
                "layers: ok: {} packages, {} dependency edges, all allowed by SPEC §2",
                report.packages.len(),
                report.edges.len()
            );
            for (from, to) in &report.edges {
                println!("  {from} -> {to}");
            }
            Ok(())
        }
        Err(violations) => {
            for violation in &violations {
                eprintln!("{violation}");
            }
            bail!("layers: {} violation(s) of SPEC §2", violations.len())
        }
    }
}

/// The packages the check covers, sorted by name.
fn checked_packages(workspace: &Workspace) -> Vec<&Package> {
    let mut packages: Vec<&Package> = workspace
        .packages
        .iter()
        .filter(|package| !IGNORED_PACKAGES.contains(&package.name.as_str()))
        .collect();
    packages.sort_by(|a, b| a.name.cmp(&b.name));
    packages
}

/// Every cycle of `graph`, one per strongly connected component that has one, as package names.
fn cycles(graph: &LayerGraph) -> Vec<Vec<String>> {
    let mut found: Vec<Vec<String>> = tarjan_scc(graph)
        .into_iter()
        .filter(|component| match component.as_slice() {
            [single] => graph.contains_edge(*single, *single),
            component => component.len() > 1,
        })
        .map(|component| {
            cycle_in(graph, &component)
                .into_iter()
                .map(|node| graph[node].clone())
                .collect()
        })
        .collect();
    found.sort();
    found
}

/// A shortest cycle through the first-named package of a strongly connected `component`.
fn cycle_in(graph: &LayerGraph, component: &[NodeIndex]) -> Vec<NodeIndex> {
    let Some(&start) = component.iter().min_by_key(|node| &graph[**node]) else {
        return Vec::new();
    };
    let members: HashSet<NodeIndex> = component.iter().copied().collect();
    let mut parent: HashMap<NodeIndex, NodeIndex> = HashMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        let mut next_nodes: Vec<NodeIndex> = graph.neighbors(node).filter(|next| members.contains(next)).collect();
        next_nodes.sort_by_key(|next| &graph[*next]);
        for next in next_nodes {
            if next == start {
                let mut path = vec![node];
                let mut current = node;
                while let Some(&previous) = parent.get(&current) {
                    path.push(previous);
                    current = previous;
                }
                path.reverse();
                return path;
            }
            if let std::collections::hash_map::Entry::Vacant(entry) = parent.entry(next) {
                entry.insert(node);
                queue.push_back(next);
            }
        }
    }
    component.to_vec()
}

#[cfg(test)]
mod tests;
