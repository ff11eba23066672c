//! TypeScript of pi's custom tools, transpiled to JavaScript in Rust (oxc) before Node runs it, so
//! that any Node.js pi supports (20.6 and newer; Node 20 has no type stripping) runs `.ts` tools.
//!
//! [`transpile_graph`] transpiles a tool's entry and every TypeScript file it reaches through
//! relative imports with a literal specifier (`import … from "./x"`, `export … from "./x.js"`,
//! `import("./x.ts")`), resolving them as the host's resolve hook does (`./x`, `./x.js` may name
//! `x.ts`). Each output is an ES module with an inline source map (so that, with
//! `--enable-source-maps`, a stack trace names the `.ts` line), cached by content hash as
//! `<cache>/<hash>.mjs` beside `<hash>.json` (the module's specifiers, so that a cached module is
//! not parsed again). The host's load hook serves each file's cached output under the file's own
//! URL: relative and package imports and `import.meta.url` behave as in the original file, and the
//! module is an ES module whatever the project's `package.json` says (`"type": "commonjs"`).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use oxc_allocator::Allocator;
use oxc_codegen::{Codegen, CodegenOptions};
use oxc_parser::Parser;
use oxc_semantic::SemanticBuilder;
use oxc_span::SourceType;
use oxc_transformer::{TransformOptions, Transformer};
use sha2::{Digest, Sha256};

/// What the cache key includes besides a file's path and content: the transpiler and its use. Bump
/// the last part when the output of the same input changes.
const CACHE_SALT: &str = concat!("pi-ts oxc 0.110.0 esm+inline-map 1 ", env!("CARGO_PKG_VERSION"));

/// The extensions of TypeScript files.
const TS_EXTENSIONS: [&str; 3] = ["ts", "mts", "cts"];

/// What the host's resolve hook tries, in order, after a relative specifier as written (host.mjs
/// `TRY_SUFFIXES`); `.js` / `.mjs` / `.cjs` are first swapped for `.ts` / `.mts` / `.cts`.
const TRY_SUFFIXES: [&str; 8] = [
    ".ts",
    ".mts",
    ".js",
    ".mjs",
    ".cjs",
    "/index.ts",
    "/index.js",
    "/index.mjs",
];

/// Why a TypeScript file could not be transpiled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TranspileError {
    /// The file could not be read.
    #[error("Cannot read {}: {source}", .file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TypeScript (or the transform refused it).
    #[error("{}: {message}", .file.display())]
    Syntax {
        /// The file.
        file: PathBuf,
        /// The parser's or transformer's diagnostics, one a line.
        message: String,
    },
    /// The cache could not be written.
    #[error("Cannot write the transpiled TypeScript to {}: {source}", .dir.display())]
    Cache {
        /// The cache directory.
        dir: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// One transpiled TypeScript file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranspiledModule {
    /// The TypeScript file (canonical path, as Node's resolver sees it).
    pub source: PathBuf,
    /// The cached ES module (`<cache>/<hash>.mjs`).
    pub output: PathBuf,
    /// Whether the output was already in the cache (nothing was transpiled).
    pub cached: bool,
}

/// The transpiled form of one file: JavaScript with an inline source map, and its specifiers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transpiled {
    /// The ES module, ending with `//# sourceMappingURL=data:…`.
    pub code: String,
    /// The module specifiers of its static imports / re-exports and literal dynamic imports.
    pub specifiers: Vec<String>,
}

/// Whether `path` is a TypeScript file (`.ts`, `.mts`, `.cts`; not `.d.ts`).
pub fn is_typescript(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let declaration = [".d.ts", ".d.mts", ".d.cts"].iter().any(|d| name.ends_with(d));
    !declaration
        && path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| TS_EXTENSIONS.contains(&e))
}

/// The diagnostics of oxc, one a line.
fn messages<E: std::fmt::Display>(errors: &[E]) -> String {
    errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")
}

/// Transpiles TypeScript `text` of `file` to an ES module with an inline source map whose source
/// is `file`. Pure: reads and writes nothing.
pub fn transpile(file: &Path, text: &str) -> Result<Transpiled, TranspileError> {
    let syntax = |message: String| TranspileError::Syntax {
        file: file.to_path_buf(),
        message,
    };
    let allocator = Allocator::default();
    // Always a module: `.cts` too is run as an ES module (its imports stay imports).
    let source_type = SourceType::ts().with_module(true);
    let parsed = Parser::new(&allocator, text, source_type).parse();
    if parsed.panicked || !parsed.errors.is_empty() {
        return Err(syntax(messages(&parsed.errors)));
    }
    let mut specifiers: Vec<String> = parsed
        .module_record
        .requested_modules
        .keys()
        .map(ToString::to_string)
        .collect();
    for import in &parsed.module_record.dynamic_imports {
        let request = import.module_request;
        let literal = text.get(request.start as usize..request.end as usize).unwrap_or("");
        if let Some(specifier) = string_literal(literal) {
            specifiers.push(specifier);
        }
    }
    let mut program = parsed.program;
    let scoping = SemanticBuilder::new().build(&program).semantic.into_scoping();
    let options = TransformOptions::default();
    let transformed = Transformer::new(&allocator, file, &options).build_with_scoping(scoping, &mut program);
    if !transformed.errors.is_empty() {
        return Err(syntax(messages(&transformed.errors)));
    }
    let printed = Codegen::new()
        .with_options(CodegenOptions {
            source_map_path: Some(file.to_path_buf()),
            ..CodegenOptions::default()
        })
        .build(&program);
    let mut code = printed.code;
    if !code.ends_with('\n') {
        code.push('\n');
    }
    if let Some(map) = printed.map {
        code.push_str("//# sourceMappingURL=");
        code.push_str(&map.to_data_url());
        code.push('\n');
    }
    Ok(Transpiled { code, specifiers })
}

/// The value of a plain JavaScript string literal (`"./x"`, `'./x'`, `` `./x` `` without
/// substitutions and escapes), else `None`.
fn string_literal(text: &str) -> Option<String> {
    let text = text.trim();
    let quote = text.chars().next()?;
    if !matches!(quote, '"' | '\'' | '`') || text.len() < 2 || !text.ends_with(quote) {
        return None;
    }
    let inner = &text[1..text.len() - 1];
    let substitution = quote == '`' && inner.contains("${");
    let plain = !inner.contains(['\\', quote]) && !substitution;
    plain.then(|| inner.to_owned())
}

/// The cache key of `file` with content `text`: SHA-256 of the salt, the path and the content.
fn cache_key(file: &Path, text: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(CACHE_SALT.as_bytes());
    hasher.update([0]);
    hasher.update(file.to_string_lossy().as_bytes());
    hasher.update([0]);
    hasher.update(text.as_bytes());
    hasher.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The cached specifiers of `key` in `dir`, when both its files are there.
fn cached_specifiers(dir: &Path, key: &str) -> Option<Vec<String>> {
    if !dir.join(format!("{key}.mjs")).is_file() {
        return None;
    }
    let json = std::fs::read(dir.join(format!("{key}.json"))).ok()?;
    serde_json::from_slice(&json).ok()
}

/// Transpiles TypeScript file `file` (canonical) into cache `dir` unless it is there; returns the
/// module and its specifiers.
pub fn transpile_cached(file: &Path, dir: &Path) -> Result<(TranspiledModule, Vec<String>), TranspileError> {
    let text = std::fs::read_to_string(file).map_err(|source| TranspileError::Read {
        file: file.to_path_buf(),
        source,
    })?;
    let key = cache_key(file, &text);
    let output = dir.join(format!("{key}.mjs"));
    if let Some(specifiers) = cached_specifiers(dir, &key) {
        let module = TranspiledModule {
            source: file.to_path_buf(),
            output,
            cached: true,
        };
        return Ok((module, specifiers));
    }
    let started = std::time::Instant::now();
    let transpiled = transpile(file, &text)?;
    tracing::debug!(file = %file.display(), elapsed = ?started.elapsed(), "TypeScript transpiled");
    let cache_error = |source| TranspileError::Cache {
        dir: dir.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(cache_error)?;
    let specifiers = serde_json::to_vec(&transpiled.specifiers).unwrap_or_else(|_| b"[]".to_vec());
    // The specifiers first: the `.mjs` is what marks the entry complete.
    pi_tools::atomic::write_atomic(&dir.join(format!("{key}.json")), &specifiers).map_err(cache_error)?;
    pi_tools::atomic::write_atomic(&output, transpiled.code.as_bytes()).map_err(cache_error)?;
    let module = TranspiledModule {
        source: file.to_path_buf(),
        output,
        cached: false,
    };
    Ok((module, transpiled.specifiers))
}

/// The file relative `specifier` of `from` names, resolved as the host's resolve hook does: as
/// written, else with `.js` swapped for `.ts` (`.mjs` → `.mts`, `.cjs` → `.cts`), else with the
/// suffixes host.mjs tries (`.ts`, `.mts`, `.js`, …, `/index.ts`, …). `None` for a package
/// specifier or a file that is not there.
pub fn resolve_relative(specifier: &str, from: &Path) -> Option<PathBuf> {
    let relative = specifier.starts_with("./") || specifier.starts_with("../");
    let base = if relative {
        from.parent()?.join(specifier)
    } else if specifier.starts_with('/') {
        PathBuf::from(specifier)
    } else {
        return None;
    };
    if base.is_file() {
        return Some(base);
    }
    let text = base.to_string_lossy().into_owned();
    let mut candidates = Vec::new();
    for (js, ts) in [(".js", ".ts"), (".mjs", ".mts"), (".cjs", ".cts")] {
        if let Some(stem) = text.strip_suffix(js) {
            candidates.push(PathBuf::from(format!("{stem}{ts}")));
        }
    }
    candidates.extend(
        TRY_SUFFIXES
            .iter()
            .map(|suffix| PathBuf::from(format!("{text}{suffix}"))),
    );
    candidates.into_iter().find(|candidate| candidate.is_file())
}

/// Transpiles the TypeScript `entry` and every TypeScript file it reaches through relative imports
/// (see the module docs) into cache `dir`; the modules in the order they were reached, the entry
/// first, each once.
pub fn transpile_graph(entry: &Path, dir: &Path) -> Result<Vec<TranspiledModule>, TranspileError> {
    let canonical = |path: &Path| std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut seen = BTreeSet::new();
    let mut queue = VecDeque::from([canonical(entry)]);
    let mut modules = Vec::new();
    while let Some(file) = queue.pop_front() {
        if !seen.insert(file.clone()) {
            continue;
        }
        let (module, specifiers) = transpile_cached(&file, dir)?;
        modules.push(module);
        for specifier in specifiers {
            if let Some(found) = resolve_relative(&specifier, &file)
                && is_typescript(&found)
            {
                queue.push_back(canonical(&found));
            }
        }
    }
    Ok(modules)
}

/// The map the host's load hook reads (`PI_TS_MODULES`): each TypeScript file's path to its
/// transpiled output.
pub fn module_map(modules: &[TranspiledModule]) -> String {
    let map: BTreeMap<String, String> = modules
        .iter()
        .map(|m| (m.source.display().to_string(), m.output.display().to_string()))
        .collect();
    serde_json::to_string(&map).unwrap_or_else(|_| "{}".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_stripped_and_lowered_with_an_inline_source_map() {
        let source = "import type { A } from \"./a\";\nimport { B } from \"./b.js\";\nimport { C, type D } from \"pkg\";\n\
                      enum E { X, Y }\nexport const f = (x: number): number => x + E.Y;\n\
                      export async function g(): Promise<unknown> { return import(\"./c\"); }\n\
                      export const h = (b: B, d: D): C => b as unknown as C;\n\
                      export function dynamic(name: string) { return import(`./${name}`); }\n";
        let out = transpile(Path::new("/t/x.ts"), source).unwrap();
        assert!(!out.code.contains(": number"), "{}", out.code);
        assert!(
            out.code.contains("E[E[\"Y\"] = 1] = \"Y\""),
            "an enum is lowered: {}",
            out.code
        );
        assert!(
            !out.code.contains("import { B }"),
            "an import used as a type only goes: {}",
            out.code
        );
        let map_line = out.code.lines().last().unwrap();
        assert!(
            map_line.starts_with("//# sourceMappingURL=data:application/json;"),
            "{map_line}"
        );
        // Every specifier, type-only ones included (harmless: they are only followed when they
        // name a TypeScript file); a template with a substitution is not a literal.
        let mut specifiers = out.specifiers;
        specifiers.sort();
        assert_eq!(specifiers, ["./a", "./b.js", "./c", "pkg"]);
    }

    #[test]
    fn a_syntax_error_names_the_file() {
        let error = transpile(Path::new("/t/bad.ts"), "const x: = 1;")
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("/t/bad.ts: "), "{error}");
    }

    #[test]
    fn string_literals() {
        assert_eq!(string_literal("\"./a\"").as_deref(), Some("./a"));
        assert_eq!(string_literal(" './a' ").as_deref(), Some("./a"));
        assert_eq!(string_literal("`./a`").as_deref(), Some("./a"));
        for not in ["`./${a}`", "name", "\"a\" + b", "'a\\'b'", "\""] {
            assert_eq!(string_literal(not), None, "{not}");
        }
    }

    #[test]
    fn the_graph_follows_relative_typescript_imports_and_the_cache_is_reused() {
        let dir = tempfile::tempdir().unwrap();
        let tool = dir.path().join("tool");
        std::fs::create_dir_all(tool.join("lib")).unwrap();
        let write = |name: &str, text: &str| std::fs::write(tool.join(name), text).unwrap();
        write(
            "index.ts",
            "import { b } from \"./b.js\";\nimport { c } from \"./lib\";\nimport \"node:fs\";\n\
             export default async () => [b, c, await import(\"./d\")];\n",
        );
        write(
            "b.ts",
            "import { c } from \"./lib/index.ts\";\nexport const b: number = c;\n",
        );
        write("lib/index.ts", "export const c: number = 1;\n");
        write("d.mts", "export const d: string = \"d\";\n");
        let cache = dir.path().join("cache");
        let real = |name: &str| std::fs::canonicalize(tool.join(name)).unwrap();

        let first = transpile_graph(&tool.join("index.ts"), &cache).unwrap();
        let sources: Vec<_> = first.iter().map(|m| m.source.clone()).collect();
        assert_eq!(
            sources,
            [real("index.ts"), real("b.ts"), real("lib/index.ts"), real("d.mts")]
        );
        assert!(first.iter().all(|m| !m.cached && m.output.starts_with(&cache)));

        // Nothing is transpiled again: the outputs are reused as they are.
        let second = transpile_graph(&tool.join("index.ts"), &cache).unwrap();
        assert!(second.iter().all(|m| m.cached), "{second:?}");
        let outputs = |modules: &[TranspiledModule]| modules.iter().map(|m| m.output.clone()).collect::<Vec<_>>();
        assert_eq!(outputs(&second), outputs(&first));

        // A changed file is transpiled again, the others are not.
        write("b.ts", "export const b: number = 2;\n");
        let third = transpile_graph(&tool.join("index.ts"), &cache).unwrap();
        let fresh: Vec<_> = third.iter().filter(|m| !m.cached).map(|m| m.source.clone()).collect();
        assert_eq!(fresh, [real("b.ts")]);
        let leftovers: Vec<_> = std::fs::read_dir(&cache)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "no temporary file left: {leftovers:?}");

        let map: BTreeMap<String, String> = serde_json::from_str(&module_map(&third)).unwrap();
        assert_eq!(map.len(), 4);
        assert_eq!(
            map[&real("b.ts").display().to_string()],
            third[1].output.display().to_string()
        );
    }

    /// How long oxc takes on the shipped examples (printed; see docs/custom-tools.md). No timed
    /// assertion: the machine may be busy.
    #[test]
    fn transpile_time_of_the_examples() {
        let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/custom-tools");
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&examples)
            .unwrap()
            .flatten()
            .map(|e| e.path().join("index.ts"))
            .filter(|p| p.is_file())
            .collect();
        entries.sort();
        assert!(!entries.is_empty());
        for entry in entries {
            let text = std::fs::read_to_string(&entry).unwrap();
            let started = std::time::Instant::now();
            let out = transpile(&entry, &text).unwrap();
            let elapsed = started.elapsed();
            assert!(out.code.contains("sourceMappingURL"));
            println!(
                "transpiled {} ({} lines) in {:.2} ms",
                entry.display(),
                text.lines().count(),
                elapsed.as_secs_f64() * 1000.0
            );
        }
    }
}
