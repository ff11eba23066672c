//! The `write` tool: creates or replaces a file with the given content, creating parent
//! directories as needed.
//!
//! The replacement is atomic (temporary file + rename, keeping the old file's permissions), goes
//! through the file's place in the [mutation queue](crate::mutation_queue) (reserved in source
//! order by the agent loop, see [`TypedTool::mutated_files`]), and writes through
//! symlinks to their target. On any error nothing on disk changes (apart from parent directories
//! already created).
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use pi_agent_core::{AgentTool, ToolContext};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let write = pi_tools::WriteTool::new(pi_tools::ToolEnv::new(dir.path()));
//! let args = serde_json::json!({"path": "notes/hello.txt", "content": "héllo\n"});
//! let result = write.execute("call-1", args, ToolContext::detached()).await.unwrap();
//! assert_eq!(result.content[0].as_text(), Some("Successfully wrote 6 bytes to notes/hello.txt"));
//! assert_eq!(std::fs::read_to_string(dir.path().join("notes/hello.txt")).unwrap(), "héllo\n");
//! # });
//! ```

use std::io;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use pi_agent_core::{OPERATION_ABORTED, ToolContext, ToolError, ToolParameters, ToolResult, TypedTool};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::atomic::write_atomic;
use crate::env::ToolEnv;
use crate::mutation_queue::with_file_mutation_queue;
use crate::node::{fs_error, normalize_path};

/// pi's description of `write`.
const DESCRIPTION: &str = "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. \
Automatically creates parent directories.";

/// Symlinks followed before giving up (Linux's limit).
const MAX_SYMLINKS: usize = 40;

/// The `write` tool.
pub struct WriteTool {
    env: ToolEnv,
    parameters: ToolParameters,
}

impl WriteTool {
    /// `write` resolving paths against `env.cwd`.
    pub fn new(env: ToolEnv) -> Self {
        let parameters = ToolParameters::new(json!({
            "type": "object",
            "required": ["path", "content"],
            "properties": {
                "path": {"type": "string", "description": "Path to the file to write (relative or absolute)"},
                "content": {"type": "string", "description": "Content to write to the file"}
            }
        }));
        WriteTool { env, parameters }
    }

    /// The absolute path a `path` argument writes to.
    fn absolute(&self, path: &str) -> PathBuf {
        normalize_path(&self.env.resolve(path))
    }
}

/// The arguments of a `write` call.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct WriteParams {
    /// Path to the file to write (relative or absolute).
    pub path: String,
    /// Content to write to the file.
    pub content: String,
}

#[async_trait]
impl TypedTool for WriteTool {
    type Params = WriteParams;

    fn name(&self) -> &str {
        "write"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &ToolParameters {
        &self.parameters
    }

    /// The file `path` names, resolved as [`TypedTool::execute`] resolves it, so that the loop
    /// reserves its place in the mutation queue in source order.
    fn mutated_files(&self, args: &Value) -> Vec<PathBuf> {
        args.get("path")
            .and_then(Value::as_str)
            .map(|path| self.absolute(path))
            .into_iter()
            .collect()
    }

    async fn execute(&self, _call_id: &str, args: WriteParams, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let WriteParams { path, content } = args;
        let absolute = self.absolute(&path);
        // pi reports the JS string length: UTF-16 code units.
        let length = content.encode_utf16().count();
        with_file_mutation_queue(&absolute, async {
            if ctx.cancel.is_cancelled() {
                return Err(ToolError::new(OPERATION_ABORTED));
            }
            let target = absolute.clone();
            // The blocking write always runs to completion so the queue is never released mid-write.
            tokio::task::spawn_blocking(move || write_file(&target, content.as_bytes()))
                .await
                .map_err(|e| ToolError::new(format!("write failed: {e}")))??;
            if ctx.cancel.is_cancelled() {
                return Err(ToolError::new(OPERATION_ABORTED));
            }
            Ok(ToolResult::text(format!("Successfully wrote {length} bytes to {path}")).with_details(Value::Null))
        })
        .await
    }
}

/// `mkdir -p` the parent, then replace the file (or its symlink target) atomically.
fn write_file(path: &Path, bytes: &[u8]) -> Result<(), ToolError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| ToolError::new(fs_error(&e, "mkdir", Some(parent))))?;
    }
    let open_error = |e: io::Error| ToolError::new(fs_error(&e, "open", Some(path)));
    let target = follow_symlinks(path).map_err(open_error)?;
    match std::fs::metadata(&target) {
        Ok(meta) if meta.is_dir() => return Err(open_error(io::Error::from_raw_os_error(nix::libc::EISDIR))),
        // Opening for writing (without truncating) checks the permission the old file has; the
        // atomic rename alone would replace even a read-only file.
        Ok(meta) if meta.is_file() => {
            std::fs::OpenOptions::new()
                .write(true)
                .open(&target)
                .map_err(open_error)?;
        }
        // A device, FIFO or socket is written to in place, as Node would; renaming a file over
        // it would replace the special file itself (think `/dev/null`).
        Ok(_) => return std::fs::write(&target, bytes).map_err(open_error),
        Err(_) => {}
    }
    write_atomic(&target, bytes).map_err(|e| match e.raw_os_error() {
        Some(nix::libc::ENOSPC | nix::libc::EDQUOT | nix::libc::EIO | nix::libc::EFBIG) => {
            ToolError::new(fs_error(&e, "write", None))
        }
        _ => open_error(e),
    })
}

/// The path a write to `path` lands on: symlinks are followed (also dangling ones, whose target
/// gets created), like Node's `writeFile`.
fn follow_symlinks(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_SYMLINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = std::fs::read_link(&current)?;
                let base = current.parent().map(Path::to_path_buf).unwrap_or_default();
                current = normalize_path(&base.join(link));
            }
            _ => return Ok(current),
        }
    }
    Err(io::Error::from_raw_os_error(nix::libc::ELOOP))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_through_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.txt");
        std::fs::write(&real, "old").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink("real.txt", &link).unwrap();
        write_file(&link, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    }

    #[test]
    fn dangling_symlink_creates_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink("made.txt", &link).unwrap();
        write_file(&link, b"x").unwrap();
        assert_eq!(std::fs::read_to_string(dir.path().join("made.txt")).unwrap(), "x");
    }

    #[test]
    fn special_files_are_never_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("s.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let message = write_file(&socket, b"x").unwrap_err().message().to_owned();
        assert!(
            message.starts_with("ENXIO: no such device or address, open '"),
            "{message}"
        );
        assert!(std::fs::metadata(&socket).unwrap().file_type().is_socket());
    }

    #[test]
    fn symlink_loops_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::os::unix::fs::symlink("b", &a).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        let message = write_file(&a, b"x").unwrap_err().message().to_owned();
        assert!(
            message.starts_with("ELOOP: too many symbolic links encountered, open '"),
            "{message}"
        );
    }
}
