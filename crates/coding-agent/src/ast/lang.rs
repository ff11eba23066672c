//! Language resolution: the `lang` override (any ast-grep alias, case-insensitive) and the inference
//! of one language from the candidate files' extensions.

use std::collections::BTreeSet;
use std::path::Path;

use ast_grep_language::{Alias, Language, SupportLang};
use pi_agent_core::ToolError;

use super::AstTool;

/// Every language with the name this crate prints for it and its ast-grep aliases.
const LANGUAGES: [(SupportLang, &str, &[&str]); 29] = {
    use ast_grep_language as l;
    [
        (SupportLang::Bash, "bash", <l::Bash as Alias>::ALIAS),
        (SupportLang::C, "c", <l::C as Alias>::ALIAS),
        (SupportLang::Cpp, "cpp", <l::Cpp as Alias>::ALIAS),
        (SupportLang::CSharp, "csharp", <l::CSharp as Alias>::ALIAS),
        (SupportLang::Css, "css", <l::Css as Alias>::ALIAS),
        (SupportLang::Dart, "dart", <l::Dart as Alias>::ALIAS),
        (SupportLang::Elixir, "elixir", <l::Elixir as Alias>::ALIAS),
        (SupportLang::Go, "go", <l::Go as Alias>::ALIAS),
        (SupportLang::Haskell, "haskell", <l::Haskell as Alias>::ALIAS),
        (SupportLang::Hcl, "hcl", <l::Hcl as Alias>::ALIAS),
        (SupportLang::Html, "html", <l::Html as Alias>::ALIAS),
        (SupportLang::Java, "java", <l::Java as Alias>::ALIAS),
        (SupportLang::JavaScript, "javascript", <l::JavaScript as Alias>::ALIAS),
        (SupportLang::Json, "json", <l::Json as Alias>::ALIAS),
        (SupportLang::Kotlin, "kotlin", <l::Kotlin as Alias>::ALIAS),
        (SupportLang::Lua, "lua", <l::Lua as Alias>::ALIAS),
        (SupportLang::Markdown, "markdown", <l::Markdown as Alias>::ALIAS),
        (SupportLang::Nix, "nix", <l::Nix as Alias>::ALIAS),
        (SupportLang::Php, "php", <l::Php as Alias>::ALIAS),
        (SupportLang::Python, "python", <l::Python as Alias>::ALIAS),
        (SupportLang::Ruby, "ruby", <l::Ruby as Alias>::ALIAS),
        (SupportLang::Rust, "rust", <l::Rust as Alias>::ALIAS),
        (SupportLang::Scala, "scala", <l::Scala as Alias>::ALIAS),
        (SupportLang::Solidity, "solidity", <l::Solidity as Alias>::ALIAS),
        (SupportLang::Swift, "swift", <l::Swift as Alias>::ALIAS),
        (SupportLang::Tsx, "tsx", <l::Tsx as Alias>::ALIAS),
        (SupportLang::TypeScript, "typescript", <l::TypeScript as Alias>::ALIAS),
        (SupportLang::Yaml, "yaml", <l::Yaml as Alias>::ALIAS),
        (SupportLang::Zig, "zig", <l::Zig as Alias>::ALIAS),
    ]
};

/// The lower-case name printed for `lang` (`typescript`, `csharp`, …).
pub(crate) fn name(lang: SupportLang) -> &'static str {
    LANGUAGES
        .iter()
        .find(|(l, _, _)| *l == lang)
        .map_or("unknown", |(_, name, _)| name)
}

/// Every alias ast-grep accepts, sorted and de-duplicated.
pub(crate) fn all_aliases() -> Vec<&'static str> {
    let set: BTreeSet<&'static str> = LANGUAGES
        .iter()
        .flat_map(|(_, _, aliases)| aliases.iter().copied())
        .collect();
    set.into_iter().collect()
}

/// Parses a `lang` argument: any alias, case-insensitive, surrounding spaces ignored.
pub(crate) fn parse(lang: &str) -> Result<SupportLang, ToolError> {
    let wanted = lang.trim();
    LANGUAGES
        .iter()
        .find(|(_, _, aliases)| aliases.iter().any(|alias| alias.eq_ignore_ascii_case(wanted)))
        .map(|(l, _, _)| *l)
        .ok_or_else(|| {
            ToolError::new(format!(
                "Unsupported language '{wanted}'. Supported: {}",
                all_aliases().join(", ")
            ))
        })
}

/// The language a file's extension belongs to, if any.
pub(crate) fn of_path(path: &Path) -> Option<SupportLang> {
    <SupportLang as Language>::from_path(path)
}

/// Why no language could be read from a file name.
pub(crate) fn unknown_reason(path: &Path) -> String {
    match path.extension().and_then(|e| e.to_str()) {
        Some(ext) => format!("unknown file extension '.{ext}'"),
        None => "no file extension".to_owned(),
    }
}

/// The one language of `langs` (the candidates' languages), or the error saying why there is none.
pub(crate) fn infer_one(tool: AstTool, langs: &BTreeSet<&'static str>) -> Result<SupportLang, ToolError> {
    let mut names = langs.iter();
    match (names.next(), names.next()) {
        (None, _) => Err(ToolError::new(format!(
            "`lang` is required for {} when no files match path/glob",
            tool.name()
        ))),
        (Some(one), None) => parse(one),
        (Some(_), Some(_)) => Err(ToolError::new(format!(
            "`lang` is required for {} when path/glob resolves to multiple languages: {}",
            tool.name(),
            langs.iter().copied().collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// The error for explicitly named files whose language cannot be read from their names.
pub(crate) fn not_inferable(tool: AstTool, failures: &[(String, String)]) -> ToolError {
    let lines: Vec<String> = failures.iter().map(|(file, why)| format!("- {file}: {why}")).collect();
    ToolError::new(format!(
        "`lang` is required for {} when language cannot be inferred from all files:\n{}",
        tool.name(),
        lines.join("\n")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_are_case_insensitive() {
        let cases = [
            ("ts", SupportLang::TypeScript),
            ("TypeScript", SupportLang::TypeScript),
            ("jsx", SupportLang::JavaScript),
            ("JS", SupportLang::JavaScript),
            ("rs", SupportLang::Rust),
            ("kotlin", SupportLang::Kotlin),
            ("kt", SupportLang::Kotlin),
            ("bash", SupportLang::Bash),
            ("c", SupportLang::C),
            ("cpp", SupportLang::Cpp),
            ("C++", SupportLang::Cpp),
            ("csharp", SupportLang::CSharp),
            ("golang", SupportLang::Go),
            ("yml", SupportLang::Yaml),
            (" tsx ", SupportLang::Tsx),
        ];
        for (alias, lang) in cases {
            assert_eq!(parse(alias).ok(), Some(lang), "{alias}");
        }
    }

    #[test]
    fn unknown_languages_list_every_alias() {
        let error = parse("brainfuck")
            .err()
            .map(|e| e.message().to_owned())
            .unwrap_or_default();
        assert!(error.starts_with("Unsupported language 'brainfuck'. Supported: bash, c, c++, cc, cpp, cs, csharp"));
        assert!(error.ends_with("yaml, yml, zig"), "{error}");
    }

    #[test]
    fn every_printed_name_is_an_alias() {
        for (lang, name, _) in LANGUAGES {
            assert_eq!(parse(name).ok(), Some(lang), "{name}");
        }
        assert_eq!(LANGUAGES.len(), SupportLang::all_langs().len());
    }

    #[test]
    fn inference_from_extensions() {
        let cases = [
            ("a.ts", Some("typescript")),
            ("a.tsx", Some("tsx")),
            ("a.mjs", Some("javascript")),
            ("a.rs", Some("rust")),
            ("a.py", Some("python")),
            ("a.go", Some("go")),
            ("a.h", Some("c")),
            ("a.hpp", Some("cpp")),
            ("a.kts", Some("kotlin")),
            ("a.yml", Some("yaml")),
            ("Makefile", None),
            ("notes.txt", None),
        ];
        for (file, expected) in cases {
            assert_eq!(of_path(Path::new(file)).map(name), expected, "{file}");
        }
    }

    #[test]
    fn one_language_must_remain() {
        let set = |names: &[&'static str]| names.iter().copied().collect::<BTreeSet<_>>();
        assert_eq!(
            infer_one(AstTool::Edit, &set(&["typescript"])).ok(),
            Some(SupportLang::TypeScript)
        );
        let mixed = infer_one(AstTool::Edit, &set(&["typescript", "rust"])).err();
        assert_eq!(
            mixed.as_ref().map(|e| e.message()),
            Some("`lang` is required for ast_edit when path/glob resolves to multiple languages: rust, typescript")
        );
        let none = infer_one(AstTool::Grep, &set(&[])).err();
        assert_eq!(
            none.as_ref().map(|e| e.message()),
            Some("`lang` is required for ast_grep when no files match path/glob")
        );
        let files = [("Makefile".to_owned(), unknown_reason(Path::new("Makefile")))];
        assert_eq!(
            not_inferable(AstTool::Edit, &files).message(),
            "`lang` is required for ast_edit when language cannot be inferred from all files:\n- Makefile: no file extension"
        );
    }
}
