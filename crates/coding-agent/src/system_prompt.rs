//! The system prompt: pi's coding-assistant prompt listing the active tools, then the project's
//! context files (`AGENTS.md` / `CLAUDE.md` from the global agent directory and from the
//! filesystem root down to the working directory), then the date and the working directory.
//!
//! `--system-prompt` replaces the base text and `--append-system-prompt` adds to it (either may be
//! a file's path, whose content is used); context files, date and directory are added in every case.

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

/// The one-line summary of a built-in tool in the prompt's tool list.
pub fn tool_snippet(name: &str) -> Option<&'static str> {
    Some(match name {
        "read" => "Read file contents",
        "bash" => "Execute bash commands (ls, grep, find, etc.)",
        "edit" => "Make surgical edits to files (find exact text and replace)",
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
    /// The date and time line's value.
    pub now: String,
    /// The working directory.
    pub cwd: String,
}

/// Builds the system prompt.
///
/// ```
/// use pi_coding_agent::{PromptParts, build_system_prompt};
/// let prompt = build_system_prompt(&PromptParts {
///     tools: vec![("read", "Read a file")],
///     now: "2026-11-23 16:00".into(),
///     cwd: "/work".into(),
///     ..Default::default()
/// });
/// assert!(prompt.contains("- read: Read file contents"));
/// assert!(prompt.ends_with("Current working directory: /work"));
/// ```
pub fn build_system_prompt(parts: &PromptParts<'_>) -> String {
    let mut prompt = match &parts.custom {
        Some(custom) => custom.clone(),
        None => base_prompt(&parts.tools),
    };
    if let Some(append) = parts.append.as_deref().filter(|a| !a.trim().is_empty()) {
        prompt.push_str("\n\n");
        prompt.push_str(append);
    }
    if !parts.context_files.is_empty() {
        prompt.push_str("\n\n# Project Context\n\nProject-specific instructions and guidelines:\n");
        for file in &parts.context_files {
            prompt.push_str(&format!(
                "\n## {}\n\n{}\n",
                file.path.display(),
                file.content.trim_end()
            ));
        }
    }
    prompt.push_str(&format!("\n\nCurrent date and time: {}", parts.now));
    prompt.push_str(&format!("\nCurrent working directory: {}", parts.cwd));
    prompt
}

fn base_prompt(tools: &[(&str, &str)]) -> String {
    let mut text = String::from(
        "You are an expert coding assistant operating inside pi, a coding agent harness. You help users by \
         reading files, executing commands, editing code, and writing new files.\n\nAvailable tools:\n",
    );
    if tools.is_empty() {
        text.push_str("(none)\n");
    }
    for (name, description) in tools {
        let summary = tool_snippet(name)
            .map(str::to_owned)
            .unwrap_or_else(|| description.lines().next().unwrap_or("").trim().to_owned());
        text.push_str(&format!("- {name}: {summary}\n"));
    }
    let has = |name: &str| tools.iter().any(|(n, _)| *n == name);
    let mut guidelines: Vec<&str> = Vec::new();
    if has("bash") && !has("grep") && !has("find") {
        guidelines.push("Use bash for file operations like ls, rg, find");
    }
    if has("read") {
        guidelines.push("Use read to examine files before editing. You must use this tool instead of cat or sed.");
    }
    if has("edit") {
        guidelines.push("Use edit for precise changes (old text must match exactly)");
    }
    if has("write") {
        guidelines.push("Use write only for new files or complete rewrites");
    }
    if has("ast_edit") {
        guidelines.push(
            "Use ast_edit for the same structural change in many places; review its preview, then call resolve \
             to apply or discard it",
        );
    }
    guidelines.push(
        "When summarizing your actions, output plain text directly - do NOT use cat or bash to display what you did",
    );
    guidelines.push("Be concise in your responses");
    guidelines.push("Show file paths clearly when working with files");
    text.push_str("\nGuidelines:\n");
    for line in guidelines {
        text.push_str(&format!("- {line}\n"));
    }
    text.trim_end().to_owned()
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

/// The current date and time in UTC for the prompt, e.g. `2026-11-23 16:04:05 UTC`.
pub fn now_text() -> String {
    utc_text(&pi_session_store::now_iso())
}

/// `2026-11-23T16:04:05.123Z` → `2026-11-23 16:04:05 UTC`.
fn utc_text(iso: &str) -> String {
    let seconds = iso.split('.').next().unwrap_or(iso).trim_end_matches('Z');
    format!("{} UTC", seconds.replacen('T', " ", 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(utc_text("2024-02-29T07:08:09.123Z"), "2024-02-29 07:08:09 UTC");
        let now = now_text();
        assert_eq!(now.len(), "2026-11-23 16:04:05 UTC".len(), "{now}");
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
            "You are terse.\n\nAnswer in French.\n\nCurrent date and time: now\nCurrent working directory: /w"
        );
    }
}
