//! The snapshot step of `cargo xtask ci`: no pending insta snapshot, no unreferenced one.
//!
//! * Pending: any `*.snap.new` or `*.pending-snap` file in the repository (outside `target/` and
//!   `.git/`). CI runs tests with `INSTA_UPDATE=no`, so these come from a local run nobody reviewed.
//! * Unreferenced: a `*.snap` file in a `snapshots/` directory whose snapshot name no test of its crate
//!   mentions. insta names the file `<module path>__<snapshot name>.snap`; the name is referenced when
//!   it appears as a string literal (as in `assert_snapshot!("name", value)`) in some `.rs` file of the
//!   crate (the nearest directory above the file holding a `Cargo.toml`), or, for unnamed snapshots,
//!   when the crate has a `fn name` or `fn test_name` (insta names those after the test function).
//!   insta's `-2`, `-3` … counters and `@suffix` parts are ignored when matching.
//!
//! Names built at run time (`assert_snapshot!(format!(…), …)`) cannot be seen by this check; give such
//! snapshots a literal name or a suffix through `insta::Settings::set_snapshot_suffix`.

use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// A problem the snapshot check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// A snapshot insta wrote for review (`*.snap.new`, `*.pending-snap`).
    Pending {
        /// The file, relative to the repository root.
        path: PathBuf,
    },
    /// A committed snapshot that no test of its crate refers to.
    Unreferenced {
        /// The file, relative to the repository root.
        path: PathBuf,
        /// The snapshot name read from the file name.
        name: String,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Pending { path } => write!(
                f,
                "pending snapshot: {} (review it with `cargo insta review` or delete it; CI never \
                 accepts snapshots)",
                path.display()
            ),
            Self::Unreferenced { path, name } => write!(
                f,
                "unreferenced snapshot: {} (no test of its crate names `{name}`; delete the file or \
                 restore its test)",
                path.display()
            ),
        }
    }
}

/// What the check found: how many committed snapshots it looked at, and the problems.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The number of `*.snap` files in `snapshots/` directories.
    pub snapshots: usize,
    /// Everything wrong, in path order.
    pub problems: Vec<Problem>,
}

/// The snapshot name in an insta snapshot file name: the part after the last `__`, without `.snap`.
///
/// `pi_agent_core__events__tests__parallel_batch.snap` gives `parallel_batch`; a file without a module
/// prefix gives its whole stem. `None` if the file is not a `.snap` file or the name is empty.
pub fn snapshot_name(file_name: &str) -> Option<&str> {
    let stem = file_name.strip_suffix(".snap")?;
    let name = stem.rsplit_once("__").map_or(stem, |(_, name)| name);
    (!name.is_empty()).then_some(name)
}

/// The names a test may use for the snapshot in `file_name`, most likely first.
///
/// Besides [`snapshot_name`] these are the longer tails after each earlier `__` (a name may contain
/// `__` itself), each also without an `@suffix` and without a trailing `-<n>` counter.
pub fn candidate_names(file_name: &str) -> Vec<&str> {
    let Some(stem) = file_name.strip_suffix(".snap") else {
        return Vec::new();
    };
    let mut tails: Vec<&str> = stem.match_indices("__").map(|(at, _)| &stem[at + 2..]).collect();
    tails.reverse();
    tails.push(stem);
    let mut names = Vec::new();
    for tail in tails {
        let without_suffix = tail.split_once('@').map_or(tail, |(name, _)| name);
        let without_counter = strip_counter(without_suffix);
        for name in [tail, without_suffix, without_counter] {
            if !name.is_empty() && !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

/// Whether any of `sources` refers to the snapshot stored in `file_name` (see the module docs).
pub fn is_referenced(file_name: &str, sources: &[String]) -> bool {
    candidate_names(file_name).into_iter().any(|name| {
        let literal = format!("\"{name}\"");
        sources.iter().any(|source| {
            source.contains(&literal) || declares_fn(source, name) || declares_fn(source, &format!("test_{name}"))
        })
    })
}

/// Checks the repository at `root` for pending and unreferenced snapshots.
pub fn check(root: &Path) -> Result<Outcome> {
    let mut files = Vec::new();
    walk(root, &mut files).with_context(|| format!("could not list {}", root.display()))?;
    files.sort();

    let mut outcome = Outcome::default();
    let mut crate_sources: HashMap<PathBuf, Vec<String>> = HashMap::new();
    for path in files {
        let Some(file_name) = path.file_name().and_then(|name| name.to_str()) else {
            continue;
        };
        let relative = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
        if file_name.ends_with(".snap.new") || file_name.ends_with(".pending-snap") {
            outcome.problems.push(Problem::Pending { path: relative });
            continue;
        }
        let in_snapshots_dir = path
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|dir| dir == "snapshots");
        let Some(name) = snapshot_name(file_name).filter(|_| in_snapshots_dir) else {
            continue;
        };
        outcome.snapshots += 1;
        let crate_root = crate_root(root, &path);
        if !crate_sources.contains_key(&crate_root) {
            let sources = rust_sources(&crate_root)?;
            crate_sources.insert(crate_root.clone(), sources);
        }
        let sources = crate_sources.get(&crate_root).map_or(&[][..], Vec::as_slice);
        if !is_referenced(file_name, sources) {
            outcome.problems.push(Problem::Unreferenced {
                path: relative,
                name: name.to_owned(),
            });
        }
    }
    Ok(outcome)
}

/// The snapshot step of `cargo xtask ci`: runs [`check`] and prints the outcome.
pub fn run(root: &Path) -> Result<()> {
    let outcome = check(root)?;
    if outcome.problems.is_empty() {
        println!(
            "snapshots: ok: {} committed snapshot(s), none pending or unreferenced",
            outcome.snapshots
        );
        return Ok(());
    }
    for problem in &outcome.problems {
        eprintln!("{problem}");
    }
    bail!("snapshots: {} problem(s)", outcome.problems.len())
}

/// `name` without a trailing `-<digits>` counter.
fn strip_counter(name: &str) -> &str {
    match name.rsplit_once('-') {
        Some((base, counter))
            if !base.is_empty() && !counter.is_empty() && counter.bytes().all(|byte| byte.is_ascii_digit()) =>
        {
            base
        }
        _ => name,
    }
}

/// Whether `source` has `fn <ident>` followed by something that ends the identifier.
fn declares_fn(source: &str, ident: &str) -> bool {
    let needle = format!("fn {ident}");
    source.match_indices(&needle).any(|(at, _)| {
        let before_ok = source[..at].chars().next_back().is_none_or(|c| !is_ident_char(c));
        let after_ok = source[at + needle.len()..]
            .chars()
            .next()
            .is_none_or(|c| !is_ident_char(c));
        before_ok && after_ok
    })
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The nearest directory at or above `file`'s directory, inside `root`, that holds a `Cargo.toml`.
fn crate_root(root: &Path, file: &Path) -> PathBuf {
    file.ancestors()
        .skip(1)
        .take_while(|dir| dir.starts_with(root))
        .find(|dir| dir.join("Cargo.toml").is_file())
        .unwrap_or(root)
        .to_path_buf()
}

/// The contents of every `.rs` file under `dir`.
fn rust_sources(dir: &Path) -> Result<Vec<String>> {
    let mut files = Vec::new();
    walk(dir, &mut files).with_context(|| format!("could not list {}", dir.display()))?;
    files
        .into_iter()
        .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
        .map(|path| fs::read_to_string(&path).with_context(|| format!("could not read {}", path.display())))
        .collect()
}

/// Every regular file under `dir`, skipping `target` and `.git` directories and symbolic links.
fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let file_type = entry.file_type()?;
        if file_type.is_dir() {
            let name = entry.file_name();
            if name != "target" && name != ".git" {
                walk(&entry.path(), files)?;
            }
        } else if file_type.is_file() {
            files.push(entry.path());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_name_is_the_part_after_the_last_double_underscore() {
        assert_eq!(
            snapshot_name("pi_agent_core__events__tests__parallel_batch.snap"),
            Some("parallel_batch")
        );
        assert_eq!(snapshot_name("loop__tool_error-2.snap"), Some("tool_error-2"));
        assert_eq!(snapshot_name("lonely.snap"), Some("lonely"));
        assert_eq!(snapshot_name("crate__.snap"), None);
        assert_eq!(snapshot_name("crate__name.snap.new"), None);
        assert_eq!(snapshot_name("notes.txt"), None);
    }

    #[test]
    fn candidate_names_drop_counters_and_suffixes_and_allow_underscores_in_names() {
        assert_eq!(
            candidate_names("m__tests__render-3.snap"),
            [
                "render-3",
                "render",
                "tests__render-3",
                "tests__render",
                "m__tests__render-3",
                "m__tests__render"
            ]
        );
        assert_eq!(candidate_names("m__diff@wide.snap")[..2], ["diff@wide", "diff"]);
        assert_eq!(candidate_names("m__my-name.snap")[0], "my-name");
        assert!(candidate_names("m__x.txt").is_empty());
    }

    #[test]
    fn a_string_literal_references_a_named_snapshot() {
        let sources = vec![r#"insta::assert_snapshot!("parallel_batch", events);"#.to_owned()];
        assert!(is_referenced("core__tests__parallel_batch.snap", &sources));
        assert!(is_referenced("core__tests__parallel_batch-2.snap", &sources));
        assert!(!is_referenced("core__tests__parallel.snap", &sources));
        assert!(!is_referenced("core__tests__batch.snap", &sources));
    }

    #[test]
    fn a_test_function_references_an_unnamed_snapshot() {
        let sources = vec!["#[test]\nfn test_tool_error() { assert_debug_snapshot!(x); }\n".to_owned()];
        assert!(is_referenced("core__tests__tool_error.snap", &sources));
        assert!(is_referenced("core__tests__tool_error-2.snap", &sources));
        assert!(!is_referenced("core__tests__error.snap", &sources));
        let sources = vec!["async fn renders_diff() {}".to_owned()];
        assert!(is_referenced("tui__renders_diff@narrow.snap", &sources));
        assert!(!is_referenced("tui__renders.snap", &sources));
    }

    #[test]
    fn check_finds_pending_and_unreferenced_snapshots() {
        let root = std::env::temp_dir().join(format!("xtask-snapshots-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let write = |path: &str, text: &str| {
            let path = root.join(path);
            fs::create_dir_all(path.parent().expect("has a parent")).expect("create dir");
            fs::write(path, text).expect("write file");
        };
        write("Cargo.toml", "[workspace]\n");
        write("crates/demo/Cargo.toml", "[package]\n");
        write(
            "crates/demo/src/lib.rs",
            "#[test]\nfn test_kept() { insta::assert_snapshot!(\"named\", 1); }\n",
        );
        write("crates/demo/src/snapshots/demo__named.snap", "---\n");
        write("crates/demo/src/snapshots/demo__kept.snap", "---\n");
        write("crates/demo/src/snapshots/demo__gone.snap", "---\n");
        write("crates/demo/src/snapshots/demo__named.snap.new", "---\n");
        write("crates/demo/src/.lib.rs.pending-snap", "{}\n");
        write("crates/demo/target/snapshots/demo__ignored.snap.new", "---\n");
        write("crates/other/src/lib.rs", "fn uses() { let _ = \"gone\"; }\n");

        let outcome = check(&root).expect("check runs");
        let _ = fs::remove_dir_all(&root);
        assert_eq!(outcome.snapshots, 3);
        assert_eq!(
            outcome.problems,
            [
                Problem::Pending {
                    path: PathBuf::from("crates/demo/src/.lib.rs.pending-snap")
                },
                Problem::Unreferenced {
                    path: PathBuf::from("crates/demo/src/snapshots/demo__gone.snap"),
                    name: "gone".to_owned(),
                },
                Problem::Pending {
                    path: PathBuf::from("crates/demo/src/snapshots/demo__named.snap.new")
                },
            ]
        );
    }
}
