//! Scenario fixtures for the tool tests: an input tree, a call, and a readable rendering of the
//! output text and the resulting tree for insta snapshots.
//!
//! ```ignore
//! let fx = Fixture::new(&[("src/a.txt", "hello\n")]);
//! let out = fx.call(&fx.tool("read"), json!({"path": "src/a.txt"})).await;
//! insta::assert_snapshot!("read_basic", fx.render(&out));
//! ```

#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_agent_core::{AgentTool, ContentBlock, ToolContext, ToolResult};
use pi_tools::ToolEnv;
use serde_json::Value;

/// A temporary directory tree the tools run in.
pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub env: ToolEnv,
}

/// What one call returned.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The tool's result, or the error text.
    pub result: Result<ToolResult, String>,
}

impl Outcome {
    /// The text the model sees (error text for failures).
    pub fn text(&self) -> String {
        match &self.result {
            Ok(result) => text_of(&result.content),
            Err(message) => message.clone(),
        }
    }

    /// The successful result; panics on an error.
    pub fn ok(&self) -> &ToolResult {
        self.result
            .as_ref()
            .unwrap_or_else(|e| panic!("expected success, got error: {e}"))
    }

    /// The error text; panics on success.
    pub fn err(&self) -> &str {
        match &self.result {
            Ok(result) => panic!("expected an error, got: {}", text_of(&result.content)),
            Err(message) => message,
        }
    }
}

/// The concatenated text blocks, with image blocks shown as `[image <mime> <n> base64 chars]`.
pub fn text_of(content: &[ContentBlock]) -> String {
    content
        .iter()
        .map(|block| match block {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::Image(i) => format!("[image {} {} base64 chars]", i.mime_type, i.data.len()),
            other => format!("{other:?}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Fixture {
    /// A tree of text files (`path`, content); parent directories are created.
    pub fn new(files: &[(&str, &str)]) -> Self {
        let fx = Fixture::empty();
        for (path, content) in files {
            fx.write(path, content.as_bytes());
        }
        fx
    }

    /// An empty tree.
    pub fn empty() -> Self {
        let dir = tempfile::tempdir().unwrap();
        // Canonical so that paths printed by tools match `root()` (macOS /private/var, symlinked tmp).
        let cwd = std::fs::canonicalize(dir.path()).unwrap();
        Fixture {
            env: ToolEnv::new(cwd),
            dir,
        }
    }

    /// The tree's root (the tools' cwd).
    pub fn root(&self) -> &Path {
        &self.env.cwd
    }

    /// Absolute path of a tree entry.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.root().join(relative)
    }

    /// Writes a file (creating parents).
    pub fn write(&self, relative: &str, bytes: &[u8]) {
        let path = self.path(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, bytes).unwrap();
    }

    /// Creates a directory (and parents).
    pub fn mkdir(&self, relative: &str) {
        std::fs::create_dir_all(self.path(relative)).unwrap();
    }

    /// Reads a file as text.
    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.path(relative)).unwrap()
    }

    /// A built-in tool working in this tree.
    pub fn tool(&self, name: &str) -> Arc<dyn AgentTool> {
        pi_tools::create_tool(name, &self.env).unwrap()
    }

    /// Calls `tool` the way the loop does: `prepare_arguments`, validation, then `execute`.
    pub async fn call(&self, tool: &Arc<dyn AgentTool>, args: Value) -> Outcome {
        self.call_with(tool, args, ToolContext::detached()).await
    }

    /// Like [`Fixture::call`] with a given context (cancellation, updates).
    pub async fn call_with(&self, tool: &Arc<dyn AgentTool>, args: Value, ctx: ToolContext) -> Outcome {
        let prepared = tool.prepare_arguments(args);
        let args = match tool.parameters().validate(tool.name(), &prepared) {
            Ok(args) => args,
            Err(error) => {
                return Outcome {
                    result: Err(error.to_string()),
                };
            }
        };
        let result = tool
            .execute("call-1", args, ctx)
            .await
            .map_err(|e| e.message().to_owned());
        Outcome { result }
    }

    /// Replaces the tree's absolute path with `<root>` in `text`.
    pub fn redact(&self, text: &str) -> String {
        let root = self.root().to_string_lossy().into_owned();
        let mut out = text.replace(&root, "<root>");
        let raw = self.dir.path().to_string_lossy().into_owned();
        if raw != root {
            out = out.replace(&raw, "<root>");
        }
        out
    }

    /// The tree as text: one `== path (N bytes)` header per file followed by its content
    /// (binary files summarised), directories as `== path/`, sorted.
    pub fn tree(&self) -> String {
        let mut entries = Vec::new();
        collect(self.root(), self.root(), &mut entries);
        entries.sort();
        let mut out = String::new();
        for (relative, path) in entries {
            if path.is_dir() {
                out.push_str(&format!("== {relative}/\n"));
                continue;
            }
            let bytes = std::fs::read(&path).unwrap_or_default();
            out.push_str(&format!("== {relative} ({} bytes)\n", bytes.len()));
            match std::str::from_utf8(&bytes) {
                Ok(text) if bytes.len() <= 4096 => {
                    out.push_str(text);
                    if !text.is_empty() && !text.ends_with('\n') {
                        out.push_str("\n[no newline at end]\n");
                    }
                }
                Ok(_) => out.push_str("[large text file]\n"),
                Err(_) => out.push_str("[binary]\n"),
            }
        }
        out
    }

    /// The snapshot text of one call: status, output text, details (if any) and the tree.
    pub fn render(&self, outcome: &Outcome) -> String {
        let (status, details) = match &outcome.result {
            Ok(result) if result.details.is_null() => ("ok", String::new()),
            Ok(result) => (
                "ok",
                format!(
                    "--- details ---\n{}\n",
                    serde_json::to_string_pretty(&result.details).unwrap()
                ),
            ),
            Err(_) => ("error", String::new()),
        };
        let text = self.redact(&outcome.text());
        let details = self.redact(&details);
        format!(
            "{status}\n--- output ---\n{text}\n{details}--- tree ---\n{}",
            self.tree()
        )
    }
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let relative = pi_tools::path::display_relative(root, &path);
        if path.is_dir() {
            let before = out.len();
            collect(root, &path, out);
            if out.len() == before {
                out.push((relative, path));
            }
        } else {
            out.push((relative, path));
        }
    }
}
