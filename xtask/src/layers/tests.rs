//! Unit tests of the SPEC §2 layers check.

use super::*;
use DependencyKind::{Build, Dev, Normal};

/// The graph SPEC §2 describes, every allowed edge present, plus xtask depending on everything.
fn allowed_workspace() -> Workspace {
    Workspace {
        packages: vec![
            Package::new("pi-agent-core"),
            Package::new("pi-ai").depends_on("pi-agent-core", Normal),
            Package::new("pi-tools")
                .depends_on("pi-agent-core", Normal)
                .depends_on("pi-agent-core", Dev),
            Package::new("pi-tui"),
            Package::new("pi-coding-agent")
                .depends_on("pi-agent-core", Normal)
                .depends_on("pi-ai", Normal)
                .depends_on("pi-tools", Normal)
                .depends_on("pi-tui", Build)
                .with_binary("pi"),
            Package::new("xtask")
                .depends_on("pi-agent-core", Normal)
                .depends_on("pi-coding-agent", Dev)
                .with_binary("xtask"),
        ],
    }
}

fn with_dependency(from: &str, to: &str, kind: DependencyKind) -> Workspace {
    let mut workspace = allowed_workspace();
    for package in &mut workspace.packages {
        if package.name == from {
            *package = package.clone().depends_on(to, kind);
        }
    }
    workspace
}

fn messages(violations: &[Violation]) -> Vec<String> {
    violations.iter().map(ToString::to_string).collect()
}

#[test]
fn the_allowed_graph_passes() {
    let report = check(&allowed_workspace()).expect("the SPEC §2 graph passes");
    assert_eq!(
        report.packages,
        ["pi-agent-core", "pi-ai", "pi-coding-agent", "pi-tools", "pi-tui"]
    );
    assert_eq!(report.edges.len(), 6);
    assert!(!report.edges.iter().any(|(from, to)| from == "xtask" || to == "xtask"));
}

#[test]
fn an_upward_edge_fails_naming_the_edge() {
    let violations =
        check(&with_dependency("pi-agent-core", "pi-tools", Normal)).expect_err("agent-core must not depend on tools");
    assert_eq!(
        messages(&violations),
        [
            "forbidden dependency: pi-agent-core -> pi-tools (SPEC §2 allows pi-agent-core -> nothing)",
            // pi-tools already depends on pi-agent-core, so the upward edge also closes a cycle.
            "dependency cycle: pi-agent-core -> pi-tools -> pi-agent-core \
             (SPEC §2 layers must not form a cycle)",
        ]
    );
}

#[test]
fn a_sideways_dev_dependency_fails_and_says_how_it_is_declared() {
    let violations =
        check(&with_dependency("pi-ai", "pi-tui", Dev)).expect_err("ai must not depend on tui, even for tests");
    assert_eq!(
        messages(&violations),
        [
            "forbidden dependency: pi-ai -> pi-tui (SPEC §2 allows pi-ai -> pi-agent-core) \
             [declared as dev-dependency]"
        ]
    );
}

#[test]
fn a_cycle_fails_naming_its_packages() {
    let mut workspace = with_dependency("pi-ai", "pi-tools", Normal);
    workspace.packages[2] = workspace.packages[2].clone().depends_on("pi-ai", Normal);
    let violations = check(&workspace).expect_err("a cycle fails");
    assert!(violations.contains(&Violation::Cycle {
        packages: vec!["pi-ai".to_owned(), "pi-tools".to_owned()],
    }));
    assert!(
        messages(&violations).contains(
            &"dependency cycle: pi-ai -> pi-tools -> pi-ai (SPEC §2 layers must not form a cycle)".to_owned()
        )
    );
    assert_eq!(violations.len(), 3, "two forbidden edges and one cycle: {violations:?}");
}

#[test]
fn a_dev_dependency_back_to_the_top_is_a_cycle() {
    let violations =
        check(&with_dependency("pi-agent-core", "pi-coding-agent", Dev)).expect_err("dev-dependency cycles count");
    let cycles: Vec<&Violation> = violations
        .iter()
        .filter(|violation| matches!(violation, Violation::Cycle { .. }))
        .collect();
    assert_eq!(
        cycles,
        [&Violation::Cycle {
            packages: vec!["pi-agent-core".to_owned(), "pi-coding-agent".to_owned()],
        }]
    );
}

#[test]
fn a_package_depending_on_itself_is_a_cycle() {
    let violations = check(&with_dependency("pi-tui", "pi-tui", Normal)).expect_err("self loop");
    assert!(violations.contains(&Violation::Cycle {
        packages: vec!["pi-tui".to_owned()],
    }));
}

#[test]
fn a_binary_outside_coding_agent_fails_but_xtask_may_have_one() {
    let mut workspace = allowed_workspace();
    workspace.packages[2] = workspace.packages[2].clone().with_binary("tools-cli");
    let violations = check(&workspace).expect_err("only coding-agent has a binary");
    assert_eq!(
        messages(&violations),
        ["forbidden binary target: pi-tools declares binary `tools-cli` \
             (SPEC §2: only pi-coding-agent has a binary)"]
    );
}

#[test]
fn an_unknown_package_fails_and_nothing_may_depend_on_it() {
    let mut workspace = with_dependency("pi-coding-agent", "pi-extra", Normal);
    workspace.packages.push(Package::new("pi-extra"));
    let violations = check(&workspace).expect_err("unknown package");
    assert!(violations.contains(&Violation::UnknownPackage {
        name: "pi-extra".to_owned(),
    }));
    assert!(violations.iter().any(|violation| matches!(
        violation,
        Violation::ForbiddenEdge { from, to, .. } if from == "pi-coding-agent" && to == "pi-extra"
    )));
}

#[test]
fn every_violation_is_reported_not_just_the_first() {
    let mut workspace = with_dependency("pi-agent-core", "pi-ai", Normal);
    workspace.packages[3] = workspace.packages[3].clone().depends_on("pi-tools", Build);
    let violations = check(&workspace).expect_err("two forbidden edges");
    let edges: Vec<(&str, &str)> = violations
        .iter()
        .filter_map(|violation| match violation {
            Violation::ForbiddenEdge { from, to, .. } => Some((from.as_str(), to.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(edges, [("pi-agent-core", "pi-ai"), ("pi-tui", "pi-tools")]);
}

#[test]
fn this_workspace_passes() {
    let workspace = Workspace::load(&crate::workspace_root()).expect("cargo metadata of this workspace");
    let names: BTreeSet<&str> = workspace.packages.iter().map(|p| p.name.as_str()).collect();
    for (package, _) in ALLOWED_DEPENDENCIES {
        assert!(names.contains(package), "{package} is a workspace member");
    }
    if let Err(violations) = check(&workspace) {
        panic!("this workspace breaks SPEC §2:\n{}", messages(&violations).join("\n"));
    }
}

#[test]
fn a_dev_dependency_on_itself_is_not_an_edge() {
    let report = check(&with_dependency("pi-ai", "pi-ai", Dev)).expect("a self dev-dependency passes");
    assert_eq!(report.edges.len(), 6);
}
