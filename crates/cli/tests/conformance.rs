//! Recorded conformance with pi 0.73.1: every scenario of `tests/data/conformance/` (see its
//! README) replayed through our binary with the runner `cargo xtask record-pi` used for pi
//! (`pi_test_support::conformance`), compared with pi's goldens after the same normalization.
//!
//! A difference is allowed only where `differences.json` lists it, and each entry there has its
//! row, with the reason, in `docs/differences-from-pi.md` (section "Recorded conformance"). The
//! test fails on a difference no entry covers, on an entry that covers nothing any more, and on
//! an entry without its row (or a row without its entry).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::Path;

use pi_test_support::conformance::{Differences, Program, compare, read_goldens, run, scenarios};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/conformance");
const DOCS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/differences-from-pi.md");

/// The ids of the rows of the "Recorded conformance" section of `docs/differences-from-pi.md`:
/// the first cell of each table row, in backticks.
fn documented_ids(docs: &str) -> BTreeSet<String> {
    let section = docs
        .split("\n## ")
        .find(|section| section.starts_with("Recorded conformance"))
        .expect("docs/differences-from-pi.md has a \"## Recorded conformance\" section");
    section
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split_once('`'))
        .map(|(id, _)| id.to_owned())
        .collect()
}

#[test]
fn documented_ids_are_the_first_cells_of_the_section_only() {
    let docs = "# T\n\n| `other` | x |\n\n## Recorded conformance\n\ntext `not-a-row`\n\n| id | where |\n| --- | --- |\n\
                | `one` | a `two` |\n| `three` | b |\n\n## Later\n\n| `four` | c |\n";
    assert_eq!(documented_ids(docs), ["one".to_owned(), "three".to_owned()].into());
}

#[test]
fn every_listed_difference_is_documented_and_every_documented_one_listed() {
    let differences = Differences::load(&Path::new(DATA).join("differences.json")).unwrap();
    let documented = documented_ids(&std::fs::read_to_string(DOCS).unwrap());
    let listed = differences.ids();
    let undocumented: Vec<&String> = listed.difference(&documented).collect();
    let unlisted: Vec<&String> = documented.difference(&listed).collect();
    assert!(
        undocumented.is_empty() && unlisted.is_empty(),
        "differences.json ids without a row in docs/differences-from-pi.md: {undocumented:?}; \
         rows without an entry: {unlisted:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn our_binary_does_what_pi_0_73_1_did_in_every_scenario() {
    let differences = Differences::load(&Path::new(DATA).join("differences.json")).unwrap();
    let all = scenarios(Path::new(DATA)).unwrap();
    assert!(!all.is_empty(), "no scenarios in {DATA}");
    let program = Program::binary(env!("CARGO_BIN_EXE_pi"));
    let mut unlisted = Vec::new();
    let mut used = BTreeSet::new();
    for scenario in &all {
        let goldens = read_goldens(&Path::new(DATA).join(&scenario.name)).unwrap();
        assert!(
            goldens.contains_key("requests"),
            "scenario {} has no goldens: run `cargo xtask record-pi --scenario {}`",
            scenario.name,
            scenario.name
        );
        let ours = run(scenario, &program).await.unwrap();
        let report = compare(&scenario.name, &goldens, &ours, &differences);
        unlisted.extend(report.unlisted);
        used.extend(report.used);
    }
    let stale: Vec<String> = differences.ids().difference(&used).cloned().collect();
    assert!(
        unlisted.is_empty() && stale.is_empty(),
        "differences from pi 0.73.1 that differences.json does not list:\n{}\n\
         listed differences that no longer occur (remove them and their docs rows): {stale:?}",
        unlisted.join("\n")
    );
}
