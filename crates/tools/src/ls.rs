//! The `ls` tool: a directory's entries, one a line, sorted case-insensitively, dotfiles
//! included, directories marked with a trailing `/`.
//!
//! Output is capped at `limit` entries (default 500) and 50KB, with pi's notices; entries that
//! cannot be stat'ed (e.g. dangling symlinks) are left out. The order follows pi's
//! `a.toLowerCase().localeCompare(b.toLowerCase())` (ICU root collation): punctuation before
//! digits before letters, accents only breaking ties.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use pi_agent_core::{AgentTool, ToolContext};
//!
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::create_dir(dir.path().join("src")).unwrap();
//! std::fs::write(dir.path().join("README.md"), "").unwrap();
//! std::fs::write(dir.path().join(".env"), "").unwrap();
//! let ls = pi_tools::LsTool::new(pi_tools::ToolEnv::new(dir.path()));
//! let result = ls.execute("call-1", serde_json::json!({}), ToolContext::detached()).await.unwrap();
//! assert_eq!(result.content[0].as_text(), Some(".env\nREADME.md\nsrc/"));
//! # });
//! ```

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::collation::{CaseTieBreak, CollationKey, collation_key};
use async_trait::async_trait;
use pi_agent_core::{OPERATION_ABORTED, ToolContext, ToolError, ToolParameters, ToolResult, TypedTool};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::env::ToolEnv;
use crate::node::{fs_error, js_number, normalize_path};
use crate::truncate::{DEFAULT_MAX_BYTES, TruncationOptions, format_size, truncate_head};

/// pi's description of `ls`.
const DESCRIPTION: &str = "List directory contents. Returns entries sorted alphabetically, with '/' suffix for \
directories. Includes dotfiles. Output is truncated to 500 entries or 50KB (whichever is hit first).";

/// Entries listed when the model gives no `limit` (pi: 500).
pub(crate) const DEFAULT_LIMIT: f64 = 500.0;

/// Error for a `limit` that is zero, negative or not finite.
pub(crate) const INVALID_LIMIT: &str = "Invalid limit: must be a positive number";

/// pi truncates ls output by bytes only (`maxLines: Number.MAX_SAFE_INTEGER`).
const MAX_SAFE_INTEGER: usize = 9_007_199_254_740_991;

/// Entries stat'ed between two cancellation checks.
const CANCEL_CHECK_EVERY: usize = 256;

/// The `ls` tool.
pub struct LsTool {
    env: ToolEnv,
    parameters: ToolParameters,
}

impl LsTool {
    /// `ls` resolving paths against `env.cwd`.
    pub fn new(env: ToolEnv) -> Self {
        let parameters = ToolParameters::new(json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Directory to list (default: current directory)"},
                "limit": {"type": "number", "description": "Maximum number of entries to return (default: 500)"}
            }
        }));
        LsTool { env, parameters }
    }
}

/// The arguments of an `ls` call.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct LsParams {
    /// Directory to list (default: current directory).
    pub path: Option<String>,
    /// Maximum number of entries to return (default: 500).
    pub limit: Option<f64>,
}

/// What the blocking walk found.
struct Listing {
    entries: Vec<String>,
    limit_reached: bool,
}

#[async_trait]
impl TypedTool for LsTool {
    type Params = LsParams;

    fn name(&self) -> &str {
        "ls"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &ToolParameters {
        &self.parameters
    }

    async fn execute(&self, _call_id: &str, args: LsParams, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
        if !(limit.is_finite() && limit > 0.0) {
            return Err(ToolError::new(INVALID_LIMIT));
        }
        // pi: `path || "."`.
        let requested = args.path.as_deref().filter(|p| !p.is_empty()).unwrap_or(".");
        let dir = normalize_path(&self.env.resolve(requested));
        let cancel = ctx.cancel.clone();
        let task = tokio::task::spawn_blocking(move || list(&dir, limit, &cancel));
        let listing = tokio::select! {
            () = ctx.cancel.cancelled() => return Err(ToolError::new(OPERATION_ABORTED)),
            joined = task => joined.map_err(|e| ToolError::new(format!("ls failed: {e}")))??,
        };
        Ok(render(listing, limit))
    }
}

/// Reads, sorts and stats the directory (blocking).
fn list(dir: &Path, limit: f64, cancel: &CancellationToken) -> Result<Listing, ToolError> {
    let meta = std::fs::metadata(dir).map_err(|_| ToolError::new(format!("Path not found: {}", dir.display())))?;
    if !meta.is_dir() {
        return Err(ToolError::new(format!("Not a directory: {}", dir.display())));
    }
    let cannot_read =
        |e: std::io::Error| ToolError::new(format!("Cannot read directory: {}", fs_error(&e, "scandir", Some(dir))));
    let mut names: Vec<(CollationKey, OsString)> = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(cannot_read)? {
        let name = entry.map_err(cannot_read)?.file_name();
        let display = name.to_string_lossy().into_owned();
        names.push((collation_key(&display, CaseTieBreak::Ignore), name));
    }
    names.sort_by(|a, b| a.0.cmp(&b.0));
    let mut entries = Vec::new();
    let mut limit_reached = false;
    for (index, (key, name)) in names.into_iter().enumerate() {
        if index % CANCEL_CHECK_EVERY == 0 && cancel.is_cancelled() {
            return Err(ToolError::new(OPERATION_ABORTED));
        }
        if entries.len() as f64 >= limit {
            limit_reached = true;
            break;
        }
        let full: PathBuf = dir.join(&name);
        let Ok(meta) = std::fs::metadata(&full) else {
            continue;
        };
        let suffix = if meta.is_dir() { "/" } else { "" };
        entries.push(format!("{}{suffix}", key.text()));
    }
    Ok(Listing { entries, limit_reached })
}

/// The text and details pi returns for a listing.
fn render(listing: Listing, limit: f64) -> ToolResult {
    if listing.entries.is_empty() {
        return ToolResult::text("(empty directory)").with_details(Value::Null);
    }
    let options = TruncationOptions {
        max_lines: MAX_SAFE_INTEGER,
        max_bytes: DEFAULT_MAX_BYTES,
    };
    let truncation = truncate_head(&listing.entries.join("\n"), options);
    let mut output = truncation.content.clone();
    let mut details = Map::new();
    let mut notices = Vec::new();
    if listing.limit_reached {
        notices.push(format!(
            "{} entries limit reached. Use limit={} for more",
            js_number(limit),
            js_number(limit * 2.0)
        ));
        details.insert("entryLimitReached".to_owned(), js_value(limit));
    }
    if truncation.truncated {
        notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
        details.insert("truncation".to_owned(), json!(truncation));
    }
    if !notices.is_empty() {
        output.push_str(&format!("\n\n[{}]", notices.join(". ")));
    }
    let details = if details.is_empty() {
        Value::Null
    } else {
        Value::Object(details)
    };
    ToolResult::text(output).with_details(details)
}

/// A JSON number the way JavaScript would serialise it (`500`, not `500.0`).
fn js_value(value: f64) -> Value {
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
        json!(value as i64)
    } else {
        json!(value)
    }
}
