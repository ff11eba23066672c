//! The `read` tool: a text file's lines (a window of them, truncated to 2000 lines / 50KB) or an
//! image as an attachment.
//!
//! Text is returned as is, without line numbers; notices at the end tell the model how to
//! continue. Images (png, jpeg, gif, webp: pi 0.73.1's four) are recognised by their first bytes and returned
//! as `[text "Read image file [<mime>]", image block]`, resized first as pi does ([`crate::images`]:
//! the text then carries pi's dimension note) unless [`ToolEnv::auto_resize_images`] is off. Text files are read in
//! one streaming pass that never holds more of the file than the output (lines after the kept
//! ones are only counted), so reading the start of a multi-gigabyte log costs a few megabytes of
//! memory. `offset` ≤ 1 starts at the top; a `limit` ≤ 0 is rejected with [`INVALID_LIMIT`].
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use pi_agent_core::{AgentTool, ToolContext};
//!
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
//! let read = pi_tools::ReadTool::new(pi_tools::ToolEnv::new(dir.path()));
//! let args = serde_json::json!({"path": "a.txt", "offset": 2, "limit": 1});
//! let result = read.execute("call-1", args, ToolContext::detached()).await.unwrap();
//! assert_eq!(
//!     result.content[0].as_text(),
//!     Some("two\n\n[2 more lines in file. Use offset=3 to continue.]")
//! );
//! # });
//! ```

mod image;

pub use image::sniff_image;
mod scan;

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use base64::Engine;
use pi_agent_core::{ContentBlock, OPERATION_ABORTED, ToolContext, ToolError, ToolParameters, ToolResult, TypedTool};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use unicode_normalization::UnicodeNormalization;

use crate::env::ToolEnv;
use crate::images::{IMAGE_OMITTED, ResizeOptions, format_dimension_note, resize_image};
use crate::node::{fs_error, js_number, normalize_path};
use crate::truncate::{DEFAULT_MAX_BYTES, TruncatedBy, TruncationOptions, format_size};
use scan::{Scan, ScanError, Window};

/// pi's description of `read`.
const DESCRIPTION: &str = "Read the contents of a file. Supports text files and images (jpg, png, gif, webp). \
Images are sent as attachments. For text files, output is truncated to 2000 lines or 50KB (whichever is hit first). \
Use offset/limit for large files. When you need the full file, continue with offset until complete.";

/// Error for a `limit` that is zero, negative or not finite.
pub(crate) const INVALID_LIMIT: &str = "Invalid limit: must be a positive number";

/// The `read` tool.
pub struct ReadTool {
    env: ToolEnv,
    parameters: ToolParameters,
}

impl ReadTool {
    /// `read` resolving paths against `env.cwd`.
    pub fn new(env: ToolEnv) -> Self {
        let parameters = ToolParameters::new(json!({
            "type": "object",
            "required": ["path"],
            "properties": {
                "path": {"type": "string", "description": "Path to the file to read (relative or absolute)"},
                "offset": {"type": "number", "description": "Line number to start reading from (1-indexed)"},
                "limit": {"type": "number", "description": "Maximum number of lines to read"}
            }
        }));
        ReadTool { env, parameters }
    }
}

/// The arguments of a `read` call.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ReadParams {
    /// Path to the file to read (relative or absolute).
    pub path: String,
    /// Line number to start reading from (1-indexed).
    pub offset: Option<f64>,
    /// Maximum number of lines to read.
    pub limit: Option<f64>,
}

/// What the blocking part found.
enum Loaded {
    Image(Vec<ContentBlock>),
    Text(Scan),
}

#[async_trait]
impl TypedTool for ReadTool {
    type Params = ReadParams;

    fn name(&self) -> &str {
        "read"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &ToolParameters {
        &self.parameters
    }

    async fn execute(&self, _call_id: &str, args: ReadParams, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let limit = match args.limit {
            Some(limit) if !(limit.is_finite() && limit > 0.0) => return Err(ToolError::new(INVALID_LIMIT)),
            // Fractional limits are cut to whole lines (at least one).
            Some(limit) => Some((limit.trunc() as usize).max(1)),
            None => None,
        };
        // pi: `offset ? Math.max(0, offset - 1) : 0`.
        let start = match args.offset {
            Some(offset) if offset > 1.0 => (offset - 1.0).trunc() as usize,
            _ => 0,
        };
        let window = Window { start, limit };
        let path = normalize_path(&self.env.resolve(&args.path));
        let cancel = ctx.cancel.clone();
        let resize = self.env.auto_resize_images;
        let task = tokio::task::spawn_blocking(move || load(&path, window, resize, &cancel));
        let loaded = tokio::select! {
            () = ctx.cancel.cancelled() => return Err(ToolError::new(OPERATION_ABORTED)),
            joined = task => joined.map_err(|e| ToolError::new(format!("read failed: {e}")))??,
        };
        match loaded {
            Loaded::Image(content) => Ok(ToolResult {
                content,
                details: Value::Null,
                ..Default::default()
            }),
            Loaded::Text(scan) => render(&scan, window, args.offset, &args.path),
        }
    }
}

/// Opens, sniffs and scans the file, or reads and resizes the image (blocking).
fn load(requested: &Path, window: Window, resize: bool, cancel: &CancellationToken) -> Result<Loaded, ToolError> {
    let path = existing_variant(requested);
    let mut file = File::open(&path).map_err(|e| ToolError::new(fs_error(&e, "access", Some(&path))))?;
    let mut head = Vec::with_capacity(image::SNIFF_BYTES);
    (&file)
        .take(image::SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|e| ToolError::new(fs_error(&e, "read", None)))?;
    if let Some(mime) = image::sniff_image(&head) {
        let mut data = head;
        file.read_to_end(&mut data)
            .map_err(|e| ToolError::new(fs_error(&e, "read", None)))?;
        return Ok(Loaded::Image(image_content(&data, mime, resize)));
    }
    let reader = io::Cursor::new(head).chain(file);
    match scan::scan(reader, window, TruncationOptions::default(), || cancel.is_cancelled()) {
        Ok(scan) => Ok(Loaded::Text(scan)),
        Err(ScanError::Cancelled) => Err(ToolError::new(OPERATION_ABORTED)),
        Err(ScanError::Io(e)) => Err(ToolError::new(fs_error(&e, "read", None))),
    }
}

/// pi's result for an image: the note, then the image (resized unless `resize` is off); only the
/// note when it cannot be made small enough.
fn image_content(data: &[u8], mime: &str, resize: bool) -> Vec<ContentBlock> {
    if !resize {
        let base64 = base64::engine::general_purpose::STANDARD.encode(data);
        return vec![
            ContentBlock::text(format!("Read image file [{mime}]")),
            ContentBlock::image(base64, mime),
        ];
    }
    match resize_image(data, mime, &ResizeOptions::default()) {
        None => vec![ContentBlock::text(format!("Read image file [{mime}]\n{IMAGE_OMITTED}"))],
        Some(resized) => {
            let mut note = format!("Read image file [{}]", resized.mime_type);
            if let Some(dimensions) = format_dimension_note(&resized) {
                note.push('\n');
                note.push_str(&dimensions);
            }
            vec![
                ContentBlock::text(note),
                ContentBlock::image(resized.data, resized.mime_type),
            ]
        }
    }
}

/// pi's `resolveReadPath`: the path itself if it exists, else the first existing macOS variant
/// (narrow no-break space before AM/PM in screenshot names, NFD, curly apostrophe), else the
/// path itself.
fn existing_variant(path: &Path) -> PathBuf {
    if path.exists() {
        return path.to_path_buf();
    }
    let Some(text) = path.to_str() else {
        return path.to_path_buf();
    };
    let am_pm = text.replace(" AM.", "\u{202F}AM.").replace(" PM.", "\u{202F}PM.");
    let nfd: String = text.nfd().collect();
    let curly = text.replace('\'', "\u{2019}");
    let nfd_curly = nfd.replace('\'', "\u{2019}");
    [am_pm, nfd, curly, nfd_curly]
        .into_iter()
        .find(|variant| variant != text && Path::new(variant).exists())
        .map_or_else(|| path.to_path_buf(), PathBuf::from)
}

/// The text result with pi's notices.
fn render(scan: &Scan, window: Window, offset: Option<f64>, raw_path: &str) -> Result<ToolResult, ToolError> {
    if scan.selected_lines == 0 {
        let offset = js_number(offset.unwrap_or(0.0));
        return Err(ToolError::new(format!(
            "Offset {offset} is beyond end of file ({} lines total)",
            scan.total_lines
        )));
    }
    let truncation = &scan.truncation;
    let first = window.start + 1;
    let total = scan.total_lines;
    let limit_text = format_size(DEFAULT_MAX_BYTES);
    let mut details = Value::Null;
    let text = if truncation.first_line_exceeds_limit {
        details = json!({ "truncation": truncation });
        format!(
            "[Line {first} is {}, exceeds {limit_text} limit. Use bash: sed -n '{first}p' {raw_path} | head -c {DEFAULT_MAX_BYTES}]",
            format_size(scan.first_line_bytes)
        )
    } else if truncation.truncated {
        details = json!({ "truncation": truncation });
        let last = first + truncation.output_lines - 1;
        let next = last + 1;
        let limit_note = match truncation.truncated_by {
            Some(TruncatedBy::Bytes) => format!(" ({limit_text} limit)"),
            _ => String::new(),
        };
        format!(
            "{}\n\n[Showing lines {first}-{last} of {total}{limit_note}. Use offset={next} to continue.]",
            truncation.content
        )
    } else if window.limit.is_some() && window.start + scan.selected_lines < total {
        let shown_to = window.start + scan.selected_lines;
        format!(
            "{}\n\n[{} more lines in file. Use offset={} to continue.]",
            truncation.content,
            total - shown_to,
            shown_to + 1
        )
    } else {
        truncation.content.clone()
    };
    Ok(ToolResult::text(text).with_details(details))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_macos_screenshot_and_apostrophe_variants() {
        let dir = tempfile::tempdir().unwrap();
        let shot = dir.path().join("Screenshot 2024-01-01 at 9.41.00\u{202F}AM.png");
        std::fs::write(&shot, b"x").unwrap();
        let asked = dir.path().join("Screenshot 2024-01-01 at 9.41.00 AM.png");
        assert_eq!(existing_variant(&asked), shot);
        let curly = dir.path().join("Bob\u{2019}s notes.txt");
        std::fs::write(&curly, b"x").unwrap();
        assert_eq!(existing_variant(&dir.path().join("Bob's notes.txt")), curly);
        let missing = dir.path().join("nope.txt");
        assert_eq!(existing_variant(&missing), missing);
    }
}
