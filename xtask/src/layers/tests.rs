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
            Package::new("pi-session-store")
                .depends_on("pi-agent-core", Normal)
                .depends_on("pi-test-support", Dev),
            Package::new("pi-coding-agent")
                .depends_on("pi-agent-core", Normal)
                .depends_on("pi-ai", Normal)
                .depends_on("pi-tools", Normal)
                .depends_on("pi-session-store", Normal)
                .depends_on("pi-tui", Build)
                .depends_on("pi-test-support", Dev),
            Package::new("pi-cli")
                .depends_on("pi-agent-core", Normal)
                .depends_on("pi-ai", Normal)
                .depends_on("pi-tools", Normal)
                .depends_on("pi-session-store", Normal)
                .depends_on("pi-tui", Normal)
                .depends_on("pi-coding-agent", Normal)
                .depends_on("pi-test-support", Dev)
                .with_binary("pi"),
            Package::new("pi-test-support").depends_on("pi-agent-core", Normal),
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
        [
            "pi-agent-core",
            "pi-ai",
            "pi-cli",
            "pi-coding-agent",
            "pi-session-store",
            "pi-test-support",
            "pi-tools",
            "pi-tui"
        ]
    );
    assert_eq!(report.edges.len(), 18);
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
fn a_binary_outside_cli_fails_but_xtask_may_have_one() {
    let mut workspace = allowed_workspace();
    workspace.packages[2] = workspace.packages[2].clone().with_binary("tools-cli");
    let violations = check(&workspace).expect_err("only pi-cli has a binary");
    assert_eq!(
        messages(&violations),
        ["forbidden binary target: pi-tools declares binary `tools-cli` \
             (SPEC §2: only pi-cli has a binary)"]
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
    assert_eq!(report.edges.len(), 18);
}

#[test]
fn a_normal_dependency_on_test_support_fails() {
    let violations = check(&with_dependency("pi-tools", "pi-test-support", Normal)).expect_err("tests only");
    assert_eq!(
        messages(&violations),
        ["forbidden dependency: pi-tools -> pi-test-support (pi-test-support is for tests only: a dev-dependency)"]
    );
    // As a dev-dependency it is fine, from any package.
    check(&with_dependency("pi-tools", "pi-test-support", Dev)).expect("a dev-dependency on test support");
}

#[test]
fn the_library_must_not_reach_the_terminal_or_the_cli() {
    let violations = check(&with_dependency("pi-coding-agent", "pi-cli", Normal)).expect_err("library -> cli");
    assert!(
        messages(&violations).contains(
            &"forbidden dependency: pi-coding-agent -> pi-cli (SPEC §2 allows pi-coding-agent -> pi-agent-core, \
          pi-ai, pi-tools, pi-session-store, pi-tui)"
                .to_owned()
        )
    );
    let violations =
        check(&with_dependency("pi-session-store", "pi-tools", Normal)).expect_err("the store uses agent-core only");
    assert_eq!(
        messages(&violations),
        ["forbidden dependency: pi-session-store -> pi-tools (SPEC §2 allows pi-session-store -> pi-agent-core)"]
    );
}

#[test]
fn clap_crossterm_or_ratatui_in_the_library_tree_fails() {
    let tree = "pi-coding-agent v0.1.0 (/w/crates/coding-agent)\npi-agent-core v0.1.0 (/w/crates/agent-core)\n\
                crossterm v0.29.0\nserde v1.0.0\nclap v4.5.0\ncrossterm v0.29.0\n";
    assert_eq!(
        messages(&check_externals("pi-coding-agent", tree)),
        [
            "forbidden external dependency: pi-coding-agent pulls in clap (SPEC §2: pi-coding-agent has no \
             terminal or command-line code; `cargo tree -p pi-coding-agent -i clap` shows the path)",
            "forbidden external dependency: pi-coding-agent pulls in crossterm (SPEC §2: pi-coding-agent has no \
             terminal or command-line code; `cargo tree -p pi-coding-agent -i crossterm` shows the path)",
        ]
    );
    assert!(check_externals("pi-coding-agent", "pi-coding-agent v0.1.0\nserde v1.0.0\n").is_empty());
    // The binary's crate may use them.
    assert!(check_externals("pi-cli", tree).is_empty());
}

#[test]
fn this_workspace_keeps_the_terminal_out_of_the_library() {
    let violations = external_violations(&crate::workspace_root()).expect("cargo tree runs");
    assert!(violations.is_empty(), "{}", messages(&violations).join("\n"));
}
