//! Rules read from our crates' source (`cargo xtask layers` runs them after the crate graph):
//!
//! * **No string errors in public signatures**: a `pub fn` reachable from outside its crate (a
//!   free function, an inherent method or a trait method) must not return `Result<_, String>`;
//!   callers cannot match on a string (issue 12: errors are `thiserror` enums that carry data).
//! * **No import circles inside a crate**: the modules of a crate, with an edge from a module to
//!   every module whose items it names (`use` declarations and `crate::` / `super::` / `self::`
//!   paths in code), must form no cycle. Re-exports (`pub use`, `pub(crate) use`) and `mod`
//!   declarations are the module tree itself, not dependencies, and are left out, as is test code
//!   (`#[cfg(test)]` items and `tests.rs` files).
//!
//! Both rules parse the files with `syn`; a file that does not parse is reported, not skipped.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};
use syn::visit::Visit;

/// One break of a source rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceViolation {
    /// A public function returns `Result<_, String>`.
    StringError {
        /// The file.
        file: PathBuf,
        /// The function (`Type::method` for methods).
        function: String,
    },
    /// Modules of one crate that import each other in a circle.
    ImportCycle {
        /// The crate (its `src` directory's package).
        krate: String,
        /// The modules of the circle, as `crate::a::b` paths, sorted.
        modules: Vec<String>,
    },
    /// A source file longer than [`LONG_FILE_LINES`] that does not say why at its top.
    LongFile {
        /// The file.
        file: PathBuf,
        /// Its length in lines.
        lines: usize,
    },
    /// A source file that `syn` cannot parse.
    Unparsable {
        /// The file.
        file: PathBuf,
        /// The parser's message.
        message: String,
    },
}

impl fmt::Display for SourceViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::StringError { file, function } => write!(
                f,
                "string error in a public signature: {function} in {} returns Result<_, String> \
                 (use a thiserror enum that carries data)",
                file.display()
            ),
            Self::ImportCycle { krate, modules } => write!(
                f,
                "import circle in {krate}: {} (arrange the modules so that imports go one way)",
                modules.join(" <-> ")
            ),
            Self::LongFile { file, lines } => write!(
                f,
                "long file without a reason: {} has {lines} lines; split it along a seam, or say at its \
                 top why it is long (\"{LONG_FILE_MARK}\" …)",
                file.display()
            ),
            Self::Unparsable { file, message } => write!(f, "cannot parse {}: {message}", file.display()),
        }
    }
}

/// Past this many lines a file is long (issue 12: "a file past ~800 lines is a sign to split
/// along a seam").
pub const LONG_FILE_LINES: usize = 800;

/// The words a long file's top comment uses to say why it is long.
pub const LONG_FILE_MARK: &str = "Longer than 800 lines on purpose";

/// The long files among `files` (path and text) whose first 40 lines do not say why they are long.
pub fn long_files<'a>(files: impl IntoIterator<Item = (&'a Path, &'a str)>) -> Vec<SourceViolation> {
    files
        .into_iter()
        .filter_map(|(file, text)| {
            let lines = text.lines().count();
            let explained = text.lines().take(40).any(|line| line.contains(LONG_FILE_MARK));
            (lines > LONG_FILE_LINES && !explained).then(|| SourceViolation::LongFile {
                file: file.to_owned(),
                lines,
            })
        })
        .collect()
}

/// Every `.rs` file below `dir`, sorted (`target` directories left out).
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            if path.file_name().is_some_and(|name| name != "target") {
                rust_files(&path, out)?;
            }
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// Checks every crate under `crates_dir` (each `crates/<name>/src`; the file-length rule also
/// covers its tests, benches and examples).
pub fn check_crates(crates_dir: &Path) -> Result<Vec<SourceViolation>> {
    let mut violations = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(crates_dir)
        .with_context(|| format!("cannot list {}", crates_dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.join("src").is_dir())
        .collect();
    entries.sort();
    for krate in entries {
        let name = krate
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let modules = load_crate(&krate.join("src"), &mut violations)?;
        for module in &modules {
            violations.extend(string_errors(&module.file, &module.items));
        }
        violations.extend(import_cycles(&name, &modules));
        let mut files = Vec::new();
        rust_files(&krate, &mut files)?;
        let texts: Vec<(PathBuf, String)> = files
            .into_iter()
            .map(|file| {
                let text = std::fs::read_to_string(&file).with_context(|| format!("cannot read {}", file.display()))?;
                Ok((file, text))
            })
            .collect::<Result<_>>()?;
        violations.extend(long_files(
            texts.iter().map(|(file, text)| (file.as_path(), text.as_str())),
        ));
    }
    Ok(violations)
}

/// One module of a crate: its path from the crate root and its items.
pub struct Module {
    /// `["resolve", "pending"]` for `crate::resolve::pending`; empty for the root.
    pub path: Vec<String>,
    /// The file that holds it (inline modules share their parent's file).
    pub file: PathBuf,
    /// Its items, test code removed.
    pub items: Vec<syn::Item>,
}

/// Loads the module tree of the crate whose sources are in `src` (from `lib.rs`, else `main.rs`).
fn load_crate(src: &Path, violations: &mut Vec<SourceViolation>) -> Result<Vec<Module>> {
    let root = ["lib.rs", "main.rs"].iter().map(|f| src.join(f)).find(|p| p.is_file());
    let mut modules = Vec::new();
    if let Some(root) = root {
        load_file(&root, Vec::new(), src, &mut modules, violations)?;
    }
    Ok(modules)
}

fn load_file(
    file: &Path,
    path: Vec<String>,
    dir: &Path,
    modules: &mut Vec<Module>,
    violations: &mut Vec<SourceViolation>,
) -> Result<()> {
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let parsed = match syn::parse_file(&text) {
        Ok(parsed) => parsed,
        Err(error) => {
            violations.push(SourceViolation::Unparsable {
                file: file.to_owned(),
                message: error.to_string(),
            });
            return Ok(());
        }
    };
    load_items(parsed.items, file, path, dir, modules, violations)
}

fn load_items(
    items: Vec<syn::Item>,
    file: &Path,
    path: Vec<String>,
    dir: &Path,
    modules: &mut Vec<Module>,
    violations: &mut Vec<SourceViolation>,
) -> Result<()> {
    let mut kept = Vec::new();
    for item in items {
        if is_test_only(item_attrs(&item)) {
            continue;
        }
        if let syn::Item::Mod(module) = &item {
            let name = module.ident.to_string();
            let mut child = path.clone();
            child.push(name.clone());
            if let Some((_, inline)) = &module.content {
                load_items(inline.clone(), file, child, &dir.join(&name), modules, violations)?;
            } else {
                let explicit = module.attrs.iter().find_map(path_attribute);
                let candidates = match explicit {
                    Some(relative) => vec![dir.join(relative)],
                    None => vec![dir.join(format!("{name}.rs")), dir.join(&name).join("mod.rs")],
                };
                if name == "tests" {
                    continue;
                }
                if let Some(found) = candidates.into_iter().find(|p| p.is_file()) {
                    load_file(&found, child, &dir.join(&name), modules, violations)?;
                }
            }
            continue;
        }
        kept.push(item);
    }
    modules.push(Module {
        path,
        file: file.to_owned(),
        items: kept,
    });
    Ok(())
}

fn path_attribute(attr: &syn::Attribute) -> Option<String> {
    if !attr.path().is_ident("path") {
        return None;
    }
    let syn::Meta::NameValue(value) = &attr.meta else {
        return None;
    };
    let syn::Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Str(text),
        ..
    }) = &value.value
    else {
        return None;
    };
    Some(text.value())
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        _ => &[],
    }
}

/// `#[cfg(test)]` (alone, not `cfg(any(test, …))`).
fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .any(|attr| attr.path().is_ident("cfg") && attr.parse_args::<syn::Ident>().is_ok_and(|ident| ident == "test"))
}

// ----- string errors ---------------------------------------------------------------------------

/// The public functions among `items` that return `Result<_, String>`.
pub fn string_errors(file: &Path, items: &[syn::Item]) -> Vec<SourceViolation> {
    let mut found = Vec::new();
    let mut report = |function: String| {
        found.push(SourceViolation::StringError {
            file: file.to_owned(),
            function,
        })
    };
    for item in items {
        match item {
            syn::Item::Fn(f) if is_public(&f.vis) && returns_string_error(&f.sig.output) => {
                report(f.sig.ident.to_string());
            }
            syn::Item::Impl(block) if block.trait_.is_none() => {
                let owner = type_name(&block.self_ty);
                for inner in &block.items {
                    if let syn::ImplItem::Fn(f) = inner
                        && is_public(&f.vis)
                        && returns_string_error(&f.sig.output)
                    {
                        report(format!("{owner}::{}", f.sig.ident));
                    }
                }
            }
            syn::Item::Trait(t) if is_public(&t.vis) => {
                for inner in &t.items {
                    if let syn::TraitItem::Fn(f) = inner
                        && returns_string_error(&f.sig.output)
                    {
                        report(format!("{}::{}", t.ident, f.sig.ident));
                    }
                }
            }
            _ => {}
        }
    }
    found
}

fn is_public(vis: &syn::Visibility) -> bool {
    matches!(vis, syn::Visibility::Public(_))
}

fn type_name(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Path(path) => path
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default(),
        _ => "_".to_owned(),
    }
}

fn returns_string_error(output: &syn::ReturnType) -> bool {
    let syn::ReturnType::Type(_, ty) = output else {
        return false;
    };
    contains_string_result(ty)
}

/// Whether `ty` is (or wraps, as in `Pin<Box<dyn Future<Output = Result<_, String>>>>`) a
/// `Result<_, String>`.
fn contains_string_result(ty: &syn::Type) -> bool {
    struct Finder(bool);
    impl<'ast> Visit<'ast> for Finder {
        fn visit_path_segment(&mut self, segment: &'ast syn::PathSegment) {
            if segment.ident == "Result"
                && let syn::PathArguments::AngleBracketed(args) = &segment.arguments
                && let Some(syn::GenericArgument::Type(syn::Type::Path(error))) = args.args.iter().nth(1)
                && error.path.is_ident("String")
            {
                self.0 = true;
            }
            syn::visit::visit_path_segment(self, segment);
        }
    }
    let mut finder = Finder(false);
    finder.visit_type(ty);
    finder.0
}

// ----- import circles --------------------------------------------------------------------------

/// The import circles among `modules` (one crate).
pub fn import_cycles(krate: &str, modules: &[Module]) -> Vec<SourceViolation> {
    let known: BTreeSet<&[String]> = modules.iter().map(|m| m.path.as_slice()).collect();
    let mut graph: DiGraph<String, ()> = DiGraph::new();
    let mut index: BTreeMap<&[String], NodeIndex> = BTreeMap::new();
    for module in modules {
        index.insert(&module.path, graph.add_node(display_path(&module.path)));
    }
    for module in modules {
        let children: BTreeSet<String> = modules
            .iter()
            .filter(|m| m.path.len() == module.path.len() + 1 && m.path.starts_with(&module.path))
            .filter_map(|m| m.path.last().cloned())
            .collect();
        let mut collector = PathCollector::default();
        for item in &module.items {
            collector.visit_item(item);
        }
        let mut targets = BTreeSet::new();
        for path in collector.paths {
            if let Some(absolute) = absolute(&module.path, &children, &path) {
                // The deepest module the path names.
                let target = (0..=absolute.len())
                    .rev()
                    .map(|len| &absolute[..len])
                    .find(|prefix| known.contains(prefix));
                if let Some(target) = target
                    && target != module.path.as_slice()
                {
                    targets.insert(target.to_vec());
                }
            }
        }
        for target in targets {
            if let (Some(&from), Some(&to)) = (index.get(module.path.as_slice()), index.get(target.as_slice())) {
                graph.update_edge(from, to, ());
            }
        }
    }
    let mut cycles: Vec<SourceViolation> = tarjan_scc(&graph)
        .into_iter()
        .filter(|component| component.len() > 1)
        .map(|component| {
            let mut modules: Vec<String> = component.iter().map(|n| graph[*n].clone()).collect();
            modules.sort();
            SourceViolation::ImportCycle {
                krate: krate.to_owned(),
                modules,
            }
        })
        .collect();
    cycles.sort_by_key(ToString::to_string);
    cycles
}

fn display_path(path: &[String]) -> String {
    std::iter::once("crate")
        .chain(path.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join("::")
}

/// `path` (as written in module `here`) from the crate root, or `None` for another crate's path.
fn absolute(here: &[String], children: &BTreeSet<String>, path: &[String]) -> Option<Vec<String>> {
    let first = path.first()?;
    match first.as_str() {
        "crate" => Some(path[1..].to_vec()),
        "self" => Some(here.iter().chain(&path[1..]).cloned().collect()),
        "super" => {
            let mut base = here.to_vec();
            let mut rest = path;
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
            Some(base.into_iter().chain(rest.iter().cloned()).collect())
        }
        name if children.contains(name) && path.len() > 1 => Some(here.iter().chain(path).cloned().collect()),
        _ => None,
    }
}

/// Every path used in code and `use` declarations (re-exports left out).
#[derive(Default)]
struct PathCollector {
    paths: Vec<Vec<String>>,
}

impl<'ast> Visit<'ast> for PathCollector {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        if !matches!(item.vis, syn::Visibility::Inherited) {
            return; // a re-export
        }
        let mut prefix = Vec::new();
        collect_use(&item.tree, &mut prefix, &mut self.paths);
    }

    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {
        // Inline modules are modules of their own.
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if segments.len() > 1 {
            self.paths.push(segments);
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_attribute(&mut self, _: &'ast syn::Attribute) {}
}

fn collect_use(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match tree {
        syn::UseTree::Path(path) => {
            prefix.push(path.ident.to_string());
            collect_use(&path.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(name) => {
            let mut full = prefix.clone();
            if name.ident != "self" {
                full.push(name.ident.to_string());
            }
            out.push(full);
        }
        syn::UseTree::Rename(rename) => {
            let mut full = prefix.clone();
            full.push(rename.ident.to_string());
            out.push(full);
        }
        syn::UseTree::Glob(_) => out.push(prefix.clone()),
        syn::UseTree::Group(group) => {
            for tree in &group.items {
                collect_use(tree, prefix, out);
            }
        }
    }
}

#[cfg(test)]
mod tests;
