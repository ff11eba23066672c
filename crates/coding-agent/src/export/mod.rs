//! HTML export of a session (`/export`, `pi --export`, RPC `export_html`): one self-contained file
//! with the session's header and statistics, every entry of every branch (messages, thinking,
//! tool calls with their results as pi's export renders the built-in tools, images as `data:`
//! URIs) and the session tree in a sidebar; clicking an entry of the tree shows its branch.
//! Markdown is rendered with pulldown-cmark and code highlighted with syntect when the file is
//! written, so the page fetches nothing and needs no script to be read (a small script of its
//! own switches branches and folds outputs). `docs/export.md` lists what differs from pi.
//!
//! ```
//! use pi_agent_core::{AgentMessage, AssistantMessage, ContentBlock};
//! use pi_coding_agent::export::{ExportColors, ExportExtras, render_html};
//! use pi_session_store::SessionManager;
//!
//! let mut session = SessionManager::in_memory("/work/app");
//! session.append_message(AgentMessage::user("What is **2 + 2**?")).unwrap();
//! let answer = AssistantMessage { content: vec![ContentBlock::text("4")], ..Default::default() };
//! session.append_message(answer.into()).unwrap();
//!
//! let html = render_html(&session, &ExportExtras::default(), &ExportColors::default());
//! assert!(html.contains("<strong>2 + 2</strong>"));
//! assert!(html.contains("Session: "));
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pi_agent_core::AgentMessage;
use pi_session_store::{EntryKind, SessionManager, StoreError};
use serde_json::Value;

mod colors;
mod entries;
mod highlight;
mod html;
mod markdown;
mod tools;
mod tree;

pub use colors::ExportColors;

use entries::{Lookup, render_entry};
use html::escape;

const PAGE_CSS: &str = include_str!("page.css");
const PAGE_JS: &str = include_str!("page.js");

/// Why an export failed; the messages are pi's.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// `pi --export` of a file that does not exist.
    #[error("File not found: {}", .0.display())]
    FileNotFound(PathBuf),
    /// `/export` or RPC `export_html` of a `--no-session` session.
    #[error("Cannot export in-memory session to HTML")]
    InMemory,
    /// `/export` before the session file was written (before the first answer).
    #[error("Nothing to export yet - start a conversation first")]
    NothingYet,
    /// The session file could not be read.
    #[error(transparent)]
    Read(#[from] StoreError),
    /// The HTML file could not be written.
    #[error("Cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The export was interrupted (its blocking task panicked or was cancelled).
    #[error("export interrupted: {0}")]
    Interrupted(#[from] tokio::task::JoinError),
}

/// What a running session adds to its export: the system prompt and the active tools (an export
/// of a file alone has neither).
#[derive(Debug, Clone, Default)]
pub struct ExportExtras {
    /// The system prompt.
    pub system_prompt: Option<String>,
    /// The active tools.
    pub tools: Vec<ExportTool>,
}

/// A tool as the export lists it.
#[derive(Debug, Clone)]
pub struct ExportTool {
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its JSON schema.
    pub parameters: Value,
}

/// pi's default file name of an export: `pi-session-<file name without .jsonl>.html` (in the
/// current directory).
///
/// ```
/// use std::path::Path;
/// use pi_coding_agent::export::default_file_name;
///
/// let name = default_file_name(Path::new("/s/2026-11-26T10-00-00-000Z_abc.jsonl"));
/// assert_eq!(name, Path::new("pi-session-2026-11-26T10-00-00-000Z_abc.html"));
/// ```
pub fn default_file_name(session_file: &Path) -> PathBuf {
    let name = session_file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".jsonl").unwrap_or(&name);
    PathBuf::from(format!("pi-session-{stem}.html"))
}

/// Exports a session file (`pi --export <file> [output]`) to `output`, or to
/// [`default_file_name`] in the current directory; returns the path written. Blocking.
pub fn export_file(input: &Path, output: Option<&Path>, colors: &ExportColors) -> Result<PathBuf, ExportError> {
    if !input.exists() {
        return Err(ExportError::FileNotFound(input.to_path_buf()));
    }
    let (session, _warnings) = SessionManager::open(input)?;
    let html = render_html(&session, &ExportExtras::default(), colors);
    let output = output.map_or_else(|| default_file_name(input), Path::to_path_buf);
    write(&output, &html)?;
    Ok(output)
}

/// Exports an open session (`/export`, RPC `export_html`) to `output` or [`default_file_name`] of
/// its file; an in-memory session, or one whose file is not written yet, cannot be exported.
/// Blocking.
pub fn export_session(
    session: &SessionManager,
    extras: &ExportExtras,
    output: Option<&Path>,
    colors: &ExportColors,
) -> Result<PathBuf, ExportError> {
    let file = check_exportable(session)?;
    let output = output.map_or_else(|| default_file_name(file), Path::to_path_buf);
    write(&output, &render_html(session, extras, colors))?;
    Ok(output)
}

/// The session's file, when it can be exported: not an in-memory session, and written (pi's
/// messages otherwise).
pub(crate) fn check_exportable(session: &SessionManager) -> Result<&Path, ExportError> {
    let file = session.file().ok_or(ExportError::InMemory)?;
    if !session.is_written() || !file.exists() {
        return Err(ExportError::NothingYet);
    }
    Ok(file)
}

/// `/export <file>.jsonl`: the current branch as a session file of its own — a new header (same
/// id and cwd, stamped now) and the branch's entries with their `parentId`s chained in a line, as
/// pi writes it. The path is made absolute; missing directories are created. Blocking.
pub fn export_branch_jsonl(session: &SessionManager, output: &Path) -> Result<PathBuf, ExportError> {
    let path = std::path::absolute(output).unwrap_or_else(|_| output.to_path_buf());
    let write_error = |source| ExportError::Write {
        path: path.clone(),
        source,
    };
    let header = pi_session_store::SessionHeader::new(
        session.id(),
        pi_session_store::now_iso(),
        session.header().cwd.clone(),
        None,
    );
    let mut lines = vec![serde_json::to_string(&header).map_err(|e| write_error(e.into()))?];
    let mut previous: Option<String> = None;
    for entry in session.path_to_leaf() {
        let mut entry = entry.clone();
        entry.parent_id = previous.replace(entry.id.clone());
        lines.push(serde_json::to_string(&entry).map_err(|e| write_error(e.into()))?);
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(write_error)?;
    }
    std::fs::write(&path, format!("{}\n", lines.join("\n"))).map_err(write_error)?;
    Ok(path)
}

fn write(path: &Path, html: &str) -> Result<(), ExportError> {
    std::fs::write(path, html).map_err(|source| ExportError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// The export of `session` as one HTML document.
pub fn render_html(session: &SessionManager, extras: &ExportExtras, colors: &ExportColors) -> String {
    let entries = session.entries();
    let lookup = Lookup::new(entries);
    let session_tree = session.tree();
    let leaf = session
        .leaf_id()
        .and_then(|id| entries.iter().rposition(|e| e.id == id));
    let on_path: std::collections::HashSet<usize> = tree::path_to(&session_tree, leaf).into_iter().collect();

    let mut messages = String::new();
    for (index, entry) in entries.iter().enumerate() {
        let html = render_entry(entry, &lookup);
        if html.is_empty() {
            continue;
        }
        let hidden = if on_path.contains(&index) { "" } else { " hidden" };
        messages.push_str(&format!(
            "<div class=\"entry\" data-entry=\"{}\"{hidden}>{html}</div>\n",
            escape(&entry.id)
        ));
    }
    let (tree_rows, tree_status) = tree::render(&session_tree, leaf, &lookup);
    let parents: BTreeMap<&str, Option<&str>> = session_tree
        .nodes()
        .iter()
        .map(|node| {
            let parent = node.parent.map(|p| session_tree.nodes()[p].entry.id.as_str());
            (node.entry.id.as_str(), parent)
        })
        .collect();
    let parents = serde_json::to_string(&parents)
        .unwrap_or_else(|_| "{}".into())
        .replace('<', "\\u003c");

    let css = PAGE_CSS.replace("{{VARS}}", &colors.css_variables());
    let header = header_html(session, extras);
    let title = match session.name() {
        Some(name) => format!("Session Export: {}", escape(name)),
        None => "Session Export".to_owned(),
    };
    format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<meta name="generator" content="pi">
<title>{title}</title>
<style>
{css}</style>
</head>
<body>
<div id="app">
<aside id="sidebar">
<div class="sidebar-header">Session tree</div>
<div class="tree-container" id="tree-container">
{tree_rows}</div>
<div class="tree-status" id="tree-status">{tree_status}</div>
</aside>
<main id="content">
<div id="header-container">{header}</div>
<div id="messages">
{messages}</div>
</main>
<div id="image-modal" class="image-modal"><img id="modal-image" src="" alt=""></div>
</div>
<script id="session-tree" type="application/json">{parents}</script>
<script>
{PAGE_JS}</script>
</body>
</html>
"#
    )
}

/// pi's token counts: `999`, `1.2k`, `12k`, `1.2M`.
fn format_tokens(count: u64) -> String {
    if count < 1000 {
        count.to_string()
    } else if count < 10_000 {
        format!("{:.1}k", count as f64 / 1000.0)
    } else if count < 1_000_000 {
        format!("{}k", (count as f64 / 1000.0).round())
    } else {
        format!("{:.1}M", count as f64 / 1_000_000.0)
    }
}

#[derive(Default)]
struct Stats {
    user: usize,
    assistant: usize,
    tool_results: usize,
    custom: usize,
    compactions: usize,
    branch_summaries: usize,
    tool_calls: usize,
    tokens: [u64; 4],
    cost: f64,
    models: Vec<String>,
}

fn stats(session: &SessionManager) -> Stats {
    let mut stats = Stats::default();
    for entry in session.entries() {
        match &entry.kind {
            EntryKind::Message(AgentMessage::User(_)) => stats.user += 1,
            EntryKind::Message(AgentMessage::Assistant(assistant)) => {
                stats.assistant += 1;
                if !assistant.model.is_empty() {
                    let model = if assistant.provider.is_empty() {
                        assistant.model.clone()
                    } else {
                        format!("{}/{}", assistant.provider, assistant.model)
                    };
                    if !stats.models.contains(&model) {
                        stats.models.push(model);
                    }
                }
                let usage = &assistant.usage;
                for (total, n) in
                    stats
                        .tokens
                        .iter_mut()
                        .zip([usage.input, usage.output, usage.cache_read, usage.cache_write])
                {
                    *total += n;
                }
                stats.cost += usage.cost.input + usage.cost.output + usage.cost.cache_read + usage.cost.cache_write;
                stats.tool_calls += assistant.tool_calls().count();
            }
            EntryKind::Message(AgentMessage::ToolResult(_)) => stats.tool_results += 1,
            EntryKind::Compaction(_) => stats.compactions += 1,
            EntryKind::BranchSummary(_) => stats.branch_summaries += 1,
            EntryKind::CustomMessage(_) => stats.custom += 1,
            _ => {}
        }
    }
    stats
}

fn header_html(session: &SessionManager, extras: &ExportExtras) -> String {
    let stats = stats(session);
    let tokens: Vec<String> = ["↑", "↓", "R", "W"]
        .iter()
        .zip(stats.tokens)
        .filter(|(_, n)| *n > 0)
        .map(|(mark, n)| format!("{mark}{}", format_tokens(n)))
        .collect();
    let messages: Vec<String> = [
        (stats.user, "user"),
        (stats.assistant, "assistant"),
        (stats.tool_results, "tool results"),
        (stats.custom, "custom"),
        (stats.compactions, "compactions"),
        (stats.branch_summaries, "branch summaries"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    let header = session.header();
    let date = if header.timestamp.is_empty() {
        "unknown".to_owned()
    } else {
        header.timestamp.replacen('T', " ", 1)
    };
    let or = |text: String, fallback: &str| if text.is_empty() { fallback.to_owned() } else { text };
    let item = |label: &str, value: String| {
        format!(
            "<div class=\"info-item\"><span class=\"info-label\">{label}:</span><span class=\"info-value\">{value}</span></div>"
        )
    };
    let mut html = format!(
        "<div class=\"header\"><h1>Session: {}</h1><div class=\"help-bar\"><span class=\"help-hint\">T toggle thinking · O toggle tools</span><div class=\"help-actions\"><button type=\"button\" class=\"header-toggle-btn\" data-action=\"toggle-thinking\" title=\"Toggle thinking (T)\">Toggle thinking</button> <button type=\"button\" class=\"header-toggle-btn\" data-action=\"toggle-tools\" title=\"Toggle tools (O)\">Toggle tools</button></div></div><div class=\"header-info\">",
        escape(if header.id.is_empty() { "unknown" } else { &header.id })
    );
    if let Some(name) = session.name() {
        html.push_str(&item("Name", escape(name)));
    }
    html.push_str(&item("Date", escape(&date)));
    html.push_str(&item("Models", escape(&or(stats.models.join(", "), "unknown"))));
    html.push_str(&item("Messages", or(messages.join(", "), "0")));
    html.push_str(&item("Tool Calls", stats.tool_calls.to_string()));
    html.push_str(&item("Tokens", or(tokens.join(" "), "0")));
    html.push_str(&item("Cost", format!("${:.3}", stats.cost)));
    html.push_str("</div></div>");

    if let Some(prompt) = extras.system_prompt.as_deref().filter(|p| !p.is_empty()) {
        let lines: Vec<&str> = prompt.split('\n').collect();
        if lines.len() > 10 {
            html.push_str(&format!(
                "<div class=\"system-prompt expandable\"><div class=\"system-prompt-header\">System Prompt</div><div class=\"system-prompt-preview\">{}</div><div class=\"system-prompt-expand-hint\">... ({} more lines, click to expand)</div><div class=\"system-prompt-full\">{}</div></div>",
                escape(&lines[..10].join("\n")),
                lines.len() - 10,
                escape(prompt)
            ));
        } else {
            html.push_str(&format!(
                "<div class=\"system-prompt\"><div class=\"system-prompt-header\">System Prompt</div><div class=\"system-prompt-full\">{}</div></div>",
                escape(prompt)
            ));
        }
    }
    if !extras.tools.is_empty() {
        html.push_str(
            "<div class=\"tools-list\"><div class=\"tools-header\">Available Tools</div><div class=\"tools-content\">",
        );
        for tool in &extras.tools {
            html.push_str(&tool_item(tool));
        }
        html.push_str("</div></div>");
    }
    html
}

fn tool_item(tool: &ExportTool) -> String {
    let summary = format!(
        "<span class=\"tool-item-name\">{}</span> - <span class=\"tool-item-desc\">{}</span>",
        escape(&tool.name),
        escape(&tool.description)
    );
    let properties = tool.parameters.get("properties").and_then(Value::as_object);
    let Some(properties) = properties.filter(|p| !p.is_empty()) else {
        return format!("<div class=\"tool-item\">{summary}</div>");
    };
    let required: Vec<&str> = tool
        .parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut params = String::new();
    for (name, property) in properties {
        let kind = match property.get("type") {
            Some(Value::String(t)) => t.clone(),
            Some(other) => other.to_string(),
            None => "any".to_owned(),
        };
        let requirement = if required.contains(&name.as_str()) {
            "<span class=\"tool-param-required\">required</span>"
        } else {
            "<span class=\"tool-param-optional\">optional</span>"
        };
        params.push_str(&format!(
            "<div class=\"tool-param\"><span class=\"tool-param-name\">{}</span> <span class=\"tool-param-type\">{}</span> {requirement}",
            escape(name),
            escape(&kind)
        ));
        if let Some(description) = property.get("description").and_then(Value::as_str) {
            params.push_str(&format!("<div class=\"tool-param-desc\">{}</div>", escape(description)));
        }
        params.push_str("</div>");
    }
    format!(
        "<div class=\"tool-item\">{summary} <span class=\"tool-params-hint\"></span><div class=\"tool-params-content\">{params}</div></div>"
    )
}

#[cfg(test)]
mod tests;
