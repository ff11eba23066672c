//! Unit tests of the source rules.

use super::*;

fn parse(text: &str) -> Vec<syn::Item> {
    syn::parse_file(text).expect("test source parses").items
}

fn module(path: &[&str], text: &str) -> Module {
    Module {
        path: path.iter().map(|s| (*s).to_owned()).collect(),
        file: PathBuf::from(format!("{}.rs", path.join("/"))),
        items: parse(text),
    }
}

fn functions(violations: &[SourceViolation]) -> Vec<String> {
    violations
        .iter()
        .filter_map(|v| match v {
            SourceViolation::StringError { function, .. } => Some(function.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn public_functions_returning_string_errors_are_found() {
    let items = parse(
        r#"
        pub fn bad() -> Result<(), String> { Ok(()) }
        pub async fn bad_async(x: u8) -> std::result::Result<u8, String> { Ok(x) }
        pub fn boxed() -> Pin<Box<dyn Future<Output = Result<(), String>>>> { todo() }
        pub(crate) fn internal() -> Result<(), String> { Ok(()) }
        fn private() -> Result<(), String> { Ok(()) }
        pub fn good() -> Result<(), Error> { Ok(()) }
        pub struct S;
        impl S { pub fn method(&self) -> Result<String, String> { Ok(String::new()) } fn hidden() -> Result<(), String> { Ok(()) } }
        impl Trait for S { fn required(&self) -> Result<(), String> { Ok(()) } }
        pub trait Factory { fn create(&self) -> Result<Vec<u8>, String>; }
        trait Private { fn create(&self) -> Result<Vec<u8>, String>; }
        "#,
    );
    assert_eq!(
        functions(&string_errors(Path::new("x.rs"), &items)),
        ["bad", "bad_async", "boxed", "S::method", "Factory::create"]
    );
}

#[test]
fn a_circle_between_siblings_is_found_and_re_exports_are_not_edges() {
    let modules = vec![
        module(&[], "mod a; mod b; mod c; pub use a::A; pub use b::B;"),
        module(&["a"], "use crate::b::B; pub struct A;"),
        module(&["b"], "pub struct B; fn f() { super::a::helper(); }"),
        module(&["c"], "use crate::a::A;"),
    ];
    let cycles = import_cycles("demo", &modules);
    assert_eq!(
        cycles.iter().map(ToString::to_string).collect::<Vec<_>>(),
        ["import circle in demo: crate::a <-> crate::b (arrange the modules so that imports go one way)"]
    );
}

#[test]
fn a_child_using_its_parent_while_the_parent_uses_the_child_is_a_circle() {
    let modules = vec![
        module(&[], "mod cli; mod modes;"),
        module(
            &["cli"],
            "pub fn is_available() -> bool { true } fn run() { crate::modes::rpc::run(); }",
        ),
        module(&["modes"], "pub mod rpc;"),
        module(&["modes", "rpc"], "use crate::cli::is_available; pub fn run() {}"),
    ];
    let cycles = import_cycles("demo", &modules);
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    let one_way = vec![
        module(&[], "mod cli; mod modes;"),
        module(&["cli"], "fn run() { crate::modes::rpc::run(); }"),
        module(&["modes"], "pub mod rpc;"),
        module(&["modes", "rpc"], "pub fn run() {}"),
    ];
    assert!(import_cycles("demo", &one_way).is_empty());
}

#[test]
fn this_workspace_follows_the_source_rules() {
    let crates = crate::workspace_root().join("crates");
    let violations = check_crates(&crates).expect("the crates can be read");
    let text: Vec<String> = violations.iter().map(ToString::to_string).collect();
    assert!(text.is_empty(), "{}", text.join("\n"));
}

#[test]
fn a_long_file_must_say_why_at_its_top() {
    let long = "fn f() {}\n".repeat(LONG_FILE_LINES + 1);
    let explained = format!("//! Tests.\n//!\n//! {LONG_FILE_MARK}: one test per case.\n{long}");
    let short = "fn f() {}\n".repeat(10);
    let found = long_files([
        (Path::new("long.rs"), long.as_str()),
        (Path::new("explained.rs"), explained.as_str()),
        (Path::new("short.rs"), short.as_str()),
    ]);
    assert_eq!(
        found.iter().map(ToString::to_string).collect::<Vec<_>>(),
        [
            "long file without a reason: long.rs has 801 lines; split it along a seam, or say at its top why \
          it is long (\"Longer than 800 lines on purpose\" …)"
        ]
    );
}
