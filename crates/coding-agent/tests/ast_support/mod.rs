//! Fixtures for the `ast_edit` / `ast_grep` tests: a temporary tree, the two tools working in it, calls
//! made the way the agent loop makes them (validation, then `execute`), and renderings for snapshots
//! with the tree's path replaced by `<root>`.

#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_agent_core::{AgentTool, ContentBlock, ToolContext, ToolResult};
use pi_coding_agent::ast::{AstEditTool, AstGrepTool};
use pi_coding_agent::resolve::{PendingActionStore, PendingError};
use serde_json::Value;

/// A temporary tree with the tools and a pending-action store.
pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
    pub store: PendingActionStore,
}

/// The outcome of a call: the result or the error text and details.
#[derive(Debug, Clone)]
pub enum Outcome {
    Ok(ToolResult),
    Err(String, Option<Value>),
}

impl Outcome {
    /// The text the model reads.
    pub fn text(&self) -> String {
        match self {
            Outcome::Ok(result) => text_of(&result.content),
            Outcome::Err(message, _) => message.clone(),
        }
    }

    /// The successful result; panics on an error.
    pub fn ok(&self) -> &ToolResult {
        match self {
            Outcome::Ok(result) => result,
            Outcome::Err(message, _) => panic!("expected success, got: {message}"),
        }
    }

    /// The error text; panics on success.
    pub fn err(&self) -> &str {
        match self {
            Outcome::Ok(result) => panic!("expected an error, got: {}", text_of(&result.content)),
            Outcome::Err(message, _) => message,
        }
    }

    /// The details of the result or error (`null` when none).
    pub fn details(&self) -> Value {
        match self {
            Outcome::Ok(result) => result.details.clone(),
            Outcome::Err(_, details) => details.clone().unwrap_or(Value::Null),
        }
    }
}

/// The concatenated text blocks.
pub fn text_of(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Fixture {
    /// A tree of text files (`path`, content).
    pub fn new(files: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let fx = Fixture {
            dir,
            root,
            store: PendingActionStore::new(),
        };
        for (path, content) in files {
            fx.write(path, content);
        }
        fx
    }

    /// Absolute path of an entry.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    /// Writes a file, creating parents.
    pub fn write(&self, relative: &str, content: &str) {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    /// Reads a file.
    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.path(relative)).unwrap()
    }

    /// `ast_edit` in this tree, pushing onto this fixture's store.
    pub fn edit_tool(&self) -> Arc<dyn AgentTool> {
        Arc::new(AstEditTool::new(self.root.clone(), self.store.clone()))
    }

    /// `ast_edit` with a touched-files cap.
    pub fn edit_tool_max(&self, max_files: usize) -> Arc<dyn AgentTool> {
        Arc::new(AstEditTool::new(self.root.clone(), self.store.clone()).with_max_files(max_files))
    }

    /// `ast_grep` in this tree.
    pub fn grep_tool(&self) -> Arc<dyn AgentTool> {
        Arc::new(AstGrepTool::new(self.root.clone()))
    }

    /// Calls `tool` as the loop does: validation (with coercion), then `execute`.
    pub async fn call(&self, tool: &Arc<dyn AgentTool>, args: Value) -> Outcome {
        self.call_with(tool, args, ToolContext::detached()).await
    }

    /// Like [`Fixture::call`] with a given context.
    pub async fn call_with(&self, tool: &Arc<dyn AgentTool>, args: Value, ctx: ToolContext) -> Outcome {
        let prepared = tool.prepare_arguments(args);
        let args = match tool.parameters().validate(tool.name(), &prepared) {
            Ok(args) => args,
            Err(error) => return Outcome::Err(error.to_string(), None),
        };
        match tool.execute("call-1", args, ctx).await {
            Ok(result) => Outcome::Ok(result),
            Err(error) => Outcome::Err(error.message().to_owned(), error.details().cloned()),
        }
    }

    /// `execute` without validation (to reach the tool's own argument checks).
    pub async fn call_raw(&self, tool: &Arc<dyn AgentTool>, args: Value) -> Outcome {
        match tool.execute("call-1", args, ToolContext::detached()).await {
            Ok(result) => Outcome::Ok(result),
            Err(error) => Outcome::Err(error.message().to_owned(), error.details().cloned()),
        }
    }

    /// Applies the newest pending action (without popping it, as a failed `resolve` would leave it).
    pub async fn apply_top(&self) -> Outcome {
        let action = self.store.peek().expect("a pending action");
        match (action.apply)("Looks right.".to_owned(), None).await {
            Ok(result) => Outcome::Ok(result),
            Err(PendingError::Tool(error)) => Outcome::Err(error.message().to_owned(), error.details().cloned()),
            Err(PendingError::Other(message)) => Outcome::Err(format!("Apply failed: {message}"), None),
        }
    }

    /// `text` with the tree's path replaced by `<root>`.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.replace(&self.root.to_string_lossy().into_owned(), "<root>");
        let raw = self.dir.path().to_string_lossy().into_owned();
        if raw != self.root.to_string_lossy() {
            out = out.replace(&raw, "<root>");
        }
        out
    }

    /// A snapshot rendering: status, text and details of one outcome.
    pub fn render(&self, outcome: &Outcome) -> String {
        let status = match outcome {
            Outcome::Ok(_) => "ok",
            Outcome::Err(..) => "error",
        };
        let details = outcome.details();
        let details = if details.is_null() {
            String::new()
        } else {
            format!("\n--- details ---\n{}", serde_json::to_string_pretty(&details).unwrap())
        };
        self.redact(&format!("{status}\n--- text ---\n{}{details}", outcome.text()))
    }

    /// Every file under the root, sorted, as `== path` + content (for snapshots of what changed).
    pub fn tree(&self) -> String {
        let mut files = Vec::new();
        collect(&self.root, &self.root, &mut files);
        files.sort();
        files
            .iter()
            .map(|(relative, path)| format!("== {relative}\n{}", std::fs::read_to_string(path).unwrap_or_default()))
            .collect::<String>()
    }

    /// Names of every file under the root (to look for leftover temporary files).
    pub fn file_names(&self) -> Vec<String> {
        let mut files = Vec::new();
        collect(&self.root, &self.root, &mut files);
        let mut names: Vec<String> = files.into_iter().map(|(relative, _)| relative).collect();
        names.sort();
        names
    }
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(root, &path, out);
        } else {
            out.push((pi_tools::path::display_relative(root, &path), path));
        }
    }
}
