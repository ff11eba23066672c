//! The system prompt: pi's coding-assistant prompt listing the active tools, then the project's
//! context files (`AGENTS.md` / `CLAUDE.md` from the global agent directory and from the
//! filesystem root down to the working directory), then the skills (when `read` is active), then
//! the date and the working directory.
//!
//! `--system-prompt` (else `SYSTEM.md`) replaces the base text and `--append-system-prompt` (else
//! `APPEND_SYSTEM.md`) adds to it (either may be a file's path, whose content is used); context
//! files, skills, date and directory are added in every case.
//! The text is pi 0.73.1's, byte for byte, except for the documentation section, which points at
//! this program's README and `docs/` (tests compare it with prompts recorded from pi 0.73.1).

use std::path::{Path, PathBuf};

/// Names of the context files, in the order they are looked for in each directory.
pub const CONTEXT_FILE_NAMES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// A context file and its content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextFile {
    /// Where it was found.
    pub path: PathBuf,
    /// Its text.
    pub content: String,
}

/// The context files for `cwd`: `global` (e.g. `~/.pi/agent/AGENTS.md`) if it exists, then the first
/// of [`CONTEXT_FILE_NAMES`] in each directory from the root down to `cwd`. Unreadable files are
/// skipped. Blocking.
pub fn find_context_files(cwd: &Path, global: Option<&Path>) -> Vec<ContextFile> {
    let mut files = Vec::new();
    if let Some(global) = global
        && let Ok(content) = std::fs::read_to_string(global)
    {
        files.push(ContextFile {
            path: global.to_path_buf(),
            content,
        });
    }
    let mut dirs: Vec<&Path> = cwd.ancestors().collect();
    dirs.reverse();
    for dir in dirs {
        for name in CONTEXT_FILE_NAMES {
            let path = dir.join(name);
            if files.iter().any(|f| f.path == path) {
                break;
            }
            if let Ok(content) = std::fs::read_to_string(&path) {
                files.push(ContextFile { path, content });
                break;
            }
        }
    }
    files
}

/// The one-line summary of a tool in the prompt's "Available tools" list (pi's `promptSnippet`).
pub fn tool_snippet(name: &str) -> Option<&'static str> {
    Some(match name {
        "read" => "Read file contents",
        "bash" => "Execute bash commands (ls, grep, find, etc.)",
        "edit" => "Make precise file edits with exact text replacement, including multiple disjoint edits in one call",
        "write" => "Create or overwrite files",
        "grep" => "Search file contents for patterns (respects .gitignore)",
        "find" => "Find files by glob pattern (respects .gitignore)",
        "ls" => "List directory contents",
        "ast_grep" => "Search code by syntax-tree patterns (structural grep)",
        "ast_edit" => "Rewrite code by syntax-tree patterns; shows a preview that resolve applies or discards",
        "resolve" => "Apply or discard a pending preview",
        _ => return None,
    })
}

/// The guidelines a tool adds to the prompt (pi's `promptGuidelines`), in order.
pub fn tool_guidelines(name: &str) -> &'static [&'static str] {
    match name {
        "read" => &["Use read to examine files instead of cat or sed."],
        "edit" => &[
            "Use edit for precise changes (edits[].oldText must match exactly)",
            "When changing multiple separate locations in one file, use one edit call with multiple entries in edits[] \
             instead of multiple edit calls",
            "Each edits[].oldText is matched against the original file, not after earlier edits are applied. Do not \
             emit overlapping or nested edits. Merge nearby changes into one edit.",
            "Keep edits[].oldText as small as possible while still being unique in the file. Do not pad with large \
             unchanged regions.",
        ],
        "write" => &["Use write only for new files or complete rewrites."],
        "ast_edit" => &[
            "Use ast_edit for the same structural change in many places; review its preview, then call resolve to \
             apply or discard it",
        ],
        _ => &[],
    }
}

/// Where the prompt's documentation section points: this program's README and docs folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocsLocation {
    /// The README (pi: "Main documentation").
    pub readme: String,
    /// The docs folder (pi: "Additional docs").
    pub docs: String,
}

impl DocsLocation {
    /// The README and `docs/` of the source tree this program was built from.
    pub fn bundled() -> Self {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .and_then(Path::parent)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")));
        DocsLocation {
            readme: root.join("README.md").display().to_string(),
            docs: root.join("docs").display().to_string(),
        }
    }
}

impl Default for DocsLocation {
    fn default() -> Self {
        DocsLocation::bundled()
    }
}

/// What the prompt is built from.
#[derive(Debug, Clone, Default)]
pub struct PromptParts<'a> {
    /// `(name, description)` of every active tool, in order.
    pub tools: Vec<(&'a str, &'a str)>,
    /// Replaces the base text (`--system-prompt`).
    pub custom: Option<String>,
    /// Added after the base text (`--append-system-prompt`).
    pub append: Option<String>,
    /// Context files, in order.
    pub context_files: Vec<ContextFile>,
    /// The date line's value (`YYYY-MM-DD`, see [`now_text`]).
    pub now: String,
    /// The working directory.
    pub cwd: String,
    /// Where the documentation section points.
    pub docs: DocsLocation,
    /// The skills listed for the model (only when the `read` tool is active, as in pi).
    pub skills: Vec<crate::resources::Skill>,
    /// Tools' own one-line summaries (an extension tool's `promptSnippet`), by name: they replace
    /// the built-in summary or the description's first line.
    pub snippets: std::collections::HashMap<String, String>,
    /// Tools' own guidelines (an extension tool's `promptGuidelines`), by name: they replace a
    /// built-in's (pi does not inherit them when an extension overrides a built-in).
    pub guidelines: std::collections::HashMap<String, Vec<String>>,
}

/// Builds the system prompt the way pi 0.73.1 does: the base text (tools, guidelines, the
/// documentation section) or the custom text, the appended text, the context files, the date and
/// the working directory.
///
/// ```
/// use pi_coding_agent::{PromptParts, build_system_prompt};
/// let prompt = build_system_prompt(&PromptParts {
///     tools: vec![("read", "Read a file")],
///     now: "2026-11-23".into(),
///     cwd: "/work".into(),
///     ..Default::default()
/// });
/// assert!(prompt.contains("- read: Read file contents"));
/// assert!(prompt.ends_with("\nCurrent date: 2026-11-23\nCurrent working directory: /work"));
/// ```
pub fn build_system_prompt(parts: &PromptParts<'_>) -> String {
    // An empty custom prompt (an empty `SYSTEM.md`) leaves pi's default in place.
    let mut prompt = match parts.custom.as_deref().filter(|c| !c.is_empty()) {
        Some(custom) => custom.to_owned(),
        None => base_prompt(parts),
    };
    if let Some(append) = parts.append.as_deref().filter(|a| !a.is_empty()) {
        prompt.push_str("\n\n");
        prompt.push_str(append);
    }
    if !parts.context_files.is_empty() {
        prompt.push_str("\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n");
        for file in &parts.context_files {
            prompt.push_str(&format!("## {}\n\n{}\n\n", file.path.display(), file.content));
        }
    }
    if parts.tools.iter().any(|(name, _)| *name == "read") {
        prompt.push_str(&crate::resources::format_for_prompt(&parts.skills));
    }
    prompt.push_str(&format!("\nCurrent date: {}", parts.now));
    prompt.push_str(&format!(
        "\nCurrent working directory: {}",
        parts.cwd.replace('\\', "/")
    ));
    prompt
}

fn base_prompt<'a>(parts: &'a PromptParts<'_>) -> String {
    let (tools, docs) = (&parts.tools, &parts.docs);
    let has = |name: &str| tools.iter().any(|(n, _)| *n == name);
    let listed: Vec<String> = tools
        .iter()
        .filter_map(|(name, description)| {
            let summary = match parts
                .snippets
                .get(*name)
                .map(String::as_str)
                .or_else(|| tool_snippet(name))
            {
                Some(snippet) => snippet.trim().to_owned(),
                // A tool of ours or a custom tool without a built-in snippet: its first line.
                None => description.lines().next().unwrap_or("").trim().to_owned(),
            };
            (!summary.is_empty()).then(|| format!("- {name}: {summary}"))
        })
        .collect();
    let tools_list = if listed.is_empty() {
        "(none)".to_owned()
    } else {
        listed.join("\n")
    };
    let mut guidelines: Vec<&str> = Vec::new();
    let mut add = |line: &'a str| {
        let line = line.trim();
        if !line.is_empty() && !guidelines.contains(&line) {
            guidelines.push(line);
        }
    };
    let explorers = has("grep") || has("find") || has("ls");
    if has("bash") && !explorers {
        add("Use bash for file operations like ls, rg, find");
    } else if has("bash") {
        add("Prefer grep/find/ls tools over bash for file exploration (faster, respects .gitignore)");
    }
    for (name, _) in tools.iter() {
        match parts.guidelines.get(*name) {
            Some(own) => own.iter().for_each(|line| add(line)),
            None => tool_guidelines(name).iter().for_each(|line| add(line)),
        }
    }
    add("Be concise in your responses");
    add("Show file paths clearly when working with files");
    let guidelines: Vec<String> = guidelines.iter().map(|g| format!("- {g}")).collect();
    format!(
        "You are an expert coding assistant operating inside pi, a coding agent harness. You help users by reading \
         files, executing commands, editing code, and writing new files.\n\n\
         Available tools:\n{tools_list}\n\n\
         In addition to the tools above, you may have access to other custom tools depending on the project.\n\n\
         Guidelines:\n{guidelines}\n\n{docs_section}",
        guidelines = guidelines.join("\n"),
        docs_section = docs_section(docs),
    )
}

/// The documentation section, pointing at this program's own docs (pi points at its npm
/// package's README, docs and examples).
fn docs_section(docs: &DocsLocation) -> String {
    format!(
        "Pi documentation (read only when the user asks about pi itself, its SDK, extensions, themes, skills, or TUI):\n\
         - Main documentation: {readme}\n\
         - Additional docs: {docs}\n\
         - When asked about: custom tools (docs/custom-tools.md), providers and models (docs/providers.md), sessions \
         (docs/sessions.md), RPC mode (docs/rpc.md), the command line (docs/cli.md), TUI (docs/tui.md), previews and \
         resolve (docs/resolve.md), built-in tools (docs/tools/), skills (docs/skills.md), prompt templates \
         (docs/prompt-templates.md)\n\
         - When working on pi topics, read the docs and examples, and follow .md cross-references before implementing\n\
         - Always read pi .md files completely and follow links to related docs (e.g., tui.md for TUI API details)",
        readme = docs.readme,
        docs = docs.docs,
    )
}

/// A `--system-prompt` / `--append-system-prompt` value: the content of the file it names, or the
/// text itself. Blocking.
pub fn text_or_file(value: &str, cwd: &Path) -> String {
    let path = cwd.join(value);
    if value.len() < 4096
        && path.is_file()
        && let Ok(content) = std::fs::read_to_string(&path)
    {
        return content;
    }
    value.to_owned()
}

/// Today's date for the prompt, `YYYY-MM-DD` (in UTC; pi uses the local date).
pub fn now_text() -> String {
    utc_date(&pi_session_store::now_iso())
}

/// `2026-11-23T16:04:05.123Z` → `2026-11-23`.
fn utc_date(iso: &str) -> String {
    iso.split('T').next().unwrap_or(iso).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(utc_date("2024-02-29T07:08:09.123Z"), "2024-02-29");
        let now = now_text();
        assert_eq!(now.len(), "2026-11-23".len(), "{now}");
    }

    #[test]
    fn context_files_from_root_to_cwd() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let sub = project.join("sub");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(project.join("CLAUDE.md"), "claude").unwrap();
        std::fs::write(sub.join("AGENTS.md"), "agents").unwrap();
        std::fs::write(sub.join("CLAUDE.md"), "ignored: AGENTS.md wins").unwrap();
        let global = dir.path().join("global-AGENTS.md");
        std::fs::write(&global, "global").unwrap();
        let files = find_context_files(&sub, Some(&global));
        let contents: Vec<&str> = files.iter().map(|f| f.content.as_str()).collect();
        assert_eq!(contents, ["global", "claude", "agents"]);
    }

    #[test]
    fn custom_and_appended_text() {
        let prompt = build_system_prompt(&PromptParts {
            custom: Some("You are terse.".into()),
            append: Some("Answer in French.".into()),
            now: "now".into(),
            cwd: "/w".into(),
            ..Default::default()
        });
        assert_eq!(
            prompt,
            "You are terse.\n\nAnswer in French.\nCurrent date: now\nCurrent working directory: /w"
        );
    }

    /// pi's documentation section (recorded) and ours, the one part that differs on purpose.
    fn with_pis_docs_section(ours: &str, recorded: &str) -> String {
        let section = |text: &str| -> Option<(usize, usize)> {
            let start = text.find("Pi documentation (")?;
            let end = start + text[start..].find("TUI API details)")? + "TUI API details)".len();
            Some((start, end))
        };
        match (section(ours), section(recorded)) {
            (Some((a, b)), Some((c, d))) => format!("{}{}{}", &ours[..a], &recorded[c..d], &ours[b..]),
            (None, None) => ours.to_owned(),
            _ => panic!("one prompt has the documentation section and the other not:\n{ours}\n---\n{recorded}"),
        }
    }

    fn ours_for(
        tools: &[&str],
        custom: Option<&str>,
        append: Option<&str>,
        context_files: Vec<ContextFile>,
        cwd: &str,
    ) -> String {
        build_system_prompt(&PromptParts {
            tools: tools.iter().map(|name| (*name, "")).collect(),
            custom: custom.map(str::to_owned),
            append: append.map(str::to_owned),
            context_files,
            now: pi_test_support::pi_recorded::RECORDED_DATE.into(),
            cwd: cwd.into(),
            docs: DocsLocation::bundled(),
            ..Default::default()
        })
    }

    #[test]
    fn an_extension_tools_snippet_and_guidelines_replace_the_defaults() {
        let parts = |snippets: &[(&str, &str)], guidelines: &[(&str, &[&str])]| PromptParts {
            tools: vec![("read", "Read a file"), ("word_count", "Count words\nin a text")],
            snippets: snippets
                .iter()
                .map(|(n, s)| ((*n).to_owned(), (*s).to_owned()))
                .collect(),
            guidelines: guidelines
                .iter()
                .map(|(n, g)| ((*n).to_owned(), g.iter().map(|l| (*l).to_owned()).collect()))
                .collect(),
            ..Default::default()
        };
        let plain = build_system_prompt(&parts(&[], &[]));
        assert!(
            plain.contains("- read: Read file contents\n- word_count: Count words\n"),
            "{plain}"
        );
        assert!(plain.contains("- Use read to examine files instead of cat or sed."));
        let own = build_system_prompt(&parts(
            &[("read", "Read with logging"), ("word_count", " Count the words ")],
            &[
                ("read", &["Read through the log."]),
                ("word_count", &["Use word_count.", " ", "Use word_count."]),
            ],
        ));
        assert!(
            own.contains("- read: Read with logging\n- word_count: Count the words\n"),
            "{own}"
        );
        assert!(
            !own.contains("instead of cat or sed"),
            "an override inherits no guideline: {own}"
        );
        assert_eq!(own.matches("- Use word_count.").count(), 1, "{own}");
        assert!(own.contains("- Read through the log.\n- Use word_count.\n"), "{own}");
    }

    const DEFAULT_TOOLS: [&str; 4] = ["read", "bash", "edit", "write"];

    #[test]
    fn prompts_equal_pi_0_73_1s_for_each_tool_set_and_option() {
        let recorded_context = || {
            vec![
                ContextFile {
                    path: "/tmp/req/agent/AGENTS.md".into(),
                    content: "Global rule one.\n".into(),
                },
                ContextFile {
                    path: "/tmp/req/ctx/proj/AGENTS.md".into(),
                    content: "# Project\n\nUse tabs.\n".into(),
                },
                ContextFile {
                    path: "/tmp/req/ctx/proj/sub/CLAUDE.md".into(),
                    content: "Sub rules.\n".into(),
                },
            ]
        };
        let cases: Vec<(&str, String)> = vec![
            (
                "cc-plain",
                ours_for(&DEFAULT_TOOLS, None, None, vec![], "/tmp/req/proj"),
            ),
            (
                "tools-read-bash",
                ours_for(&["read", "bash"], None, None, vec![], "/tmp/req/proj"),
            ),
            (
                "tools-grep-bash",
                ours_for(&["bash", "grep"], None, None, vec![], "/tmp/req/proj"),
            ),
            (
                "tools-all",
                ours_for(
                    &["read", "bash", "edit", "write", "grep", "find", "ls"],
                    None,
                    None,
                    vec![],
                    "/tmp/req/proj",
                ),
            ),
            ("no-tools", ours_for(&[], None, None, vec![], "/tmp/req/proj")),
            (
                "append",
                ours_for(
                    &DEFAULT_TOOLS,
                    None,
                    Some("Always answer in French."),
                    vec![],
                    "/tmp/req/proj",
                ),
            ),
            (
                "custom",
                ours_for(
                    &DEFAULT_TOOLS,
                    Some("You are a terse bot."),
                    None,
                    vec![],
                    "/tmp/req/proj",
                ),
            ),
            (
                "custom-append",
                ours_for(
                    &DEFAULT_TOOLS,
                    Some("You are a terse bot."),
                    Some("Extra."),
                    vec![],
                    "/tmp/req/proj",
                ),
            ),
            (
                "context",
                ours_for(&DEFAULT_TOOLS, None, None, recorded_context(), "/tmp/req/ctx/proj/sub"),
            ),
            (
                "context-custom",
                ours_for(
                    &DEFAULT_TOOLS,
                    Some("Custom."),
                    None,
                    recorded_context(),
                    "/tmp/req/ctx/proj/sub",
                ),
            ),
        ];
        for (name, ours) in cases {
            let recorded = pi_test_support::pi_recorded::system_prompt(&pi_test_support::pi_recorded::body(name));
            assert_eq!(with_pis_docs_section(&ours, &recorded), recorded, "{name}");
        }
    }

    #[test]
    fn the_docs_section_points_at_this_programs_docs() {
        let prompt = ours_for(&DEFAULT_TOOLS, None, None, vec![], "/w");
        let docs = DocsLocation::bundled();
        assert!(
            prompt.contains(&format!("- Main documentation: {}\n", docs.readme)),
            "{prompt}"
        );
        assert!(
            prompt.contains(&format!("- Additional docs: {}\n", docs.docs)),
            "{prompt}"
        );
        assert!(Path::new(&docs.readme).is_file() && Path::new(&docs.docs).join("custom-tools.md").is_file());
        for named in ["skills.md", "prompt-templates.md"] {
            assert!(prompt.contains(&format!("(docs/{named})")), "{prompt}");
            assert!(Path::new(&docs.docs).join(named).is_file(), "{named}");
        }
        assert!(!prompt.contains("node_modules"));
    }

    #[test]
    fn our_tools_have_snippets_and_guidelines() {
        let prompt = ours_for(&["read", "ast_grep", "ast_edit", "resolve"], None, None, vec![], "/w");
        assert!(
            prompt.contains("- ast_edit: Rewrite code by syntax-tree patterns"),
            "{prompt}"
        );
        assert!(
            prompt.contains("- resolve: Apply or discard a pending preview\n"),
            "{prompt}"
        );
        assert!(
            prompt.contains("- Use ast_edit for the same structural change in many places"),
            "{prompt}"
        );
    }
}
