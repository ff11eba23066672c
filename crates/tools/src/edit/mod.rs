//! The `edit` tool: replaces unique, non-overlapping pieces of text in one file.
//!
//! Every `edits[].oldText` is matched against the original file (exactly, or after pi's fuzzy
//! normalisation of quotes, dashes, Unicode spaces and trailing whitespace), all replacements are
//! applied in one go, and the file is written back atomically with its byte-order mark and line
//! endings. The call runs inside the file's [mutation queue](crate::mutation_queue), whose place the
//! agent loop reserves in source order ([`TypedTool::mutated_files`]), so parallel edits of one
//! file never lose a change and land in the order the model wrote them. The result names the
//! number of replaced blocks; `details` holds a line-numbered `diff`, a unified `patch` and
//! `firstChangedLine`.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use pi_agent_core::{AgentTool, ToolContext};
//! use pi_tools::{EditTool, ToolEnv};
//!
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
//! let tool = EditTool::new(ToolEnv::new(dir.path()));
//! let args = serde_json::json!({"path": "a.txt", "edits": [{"oldText": "two", "newText": "2"}]});
//! let result = tool.execute("call-1", args, ToolContext::detached()).await.unwrap();
//! assert_eq!(result.details["firstChangedLine"], 2);
//! assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), "one\n2\nthree\n");
//! # });
//! ```

mod diff;
mod matching;
mod text;

use std::io::Read as _;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use pi_agent_core::{OPERATION_ABORTED, ToolContext, ToolError, ToolParameters, ToolResult, TypedTool};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::env::ToolEnv;
use diff::{EditDiff, edit_diff};
use text::{BOM, LineEnding, detect_line_ending, normalize_to_lf, restore_line_endings, strip_bom};

pub use matching::{Edit, EditError, apply_edits};
pub use text::normalize_for_fuzzy_match;

/// The description pi gives the model.
const DESCRIPTION: &str = "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, \
non-overlapping region of the original file. If two changes affect the same block or nearby lines, merge them into \
one edit instead of emitting overlapping edits. Do not include large unchanged regions just to connect distant changes.";

/// Error text of a call without replacements.
pub(crate) const INVALID_INPUT: &str = "Edit tool input is invalid. edits must contain at least one replacement.";

/// pi's `edit` tool.
pub struct EditTool {
    env: ToolEnv,
    parameters: ToolParameters,
}

impl EditTool {
    /// The tool editing files under `env.cwd`.
    pub fn new(env: ToolEnv) -> Self {
        // pi's schema, key for key (`additionalProperties: false` on the call and on each edit).
        let parameters = ToolParameters::new(json!({
            "type": "object",
            "required": ["path", "edits"],
            "properties": {
                "path": {"type": "string", "description": "Path to the file to edit (relative or absolute)"},
                "edits": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["oldText", "newText"],
                        "properties": {
                            "oldText": {
                                "type": "string",
                                "description": "Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call."
                            },
                            "newText": {"type": "string", "description": "Replacement text for this targeted edit."}
                        },
                        "additionalProperties": false
                    },
                    "description": "One or more targeted replacements. Each edit is matched against the original file, not incrementally. Do not include overlapping or nested edits. If two changes touch the same block or nearby lines, merge them into one edit instead."
                }
            },
            "additionalProperties": false
        }));
        EditTool { env, parameters }
    }
}

/// pi's `prepareArguments` for `edit`: an `edits` array sent as a JSON string is parsed, and a
/// legacy top-level `oldText` / `newText` pair is moved to the end of `edits`. Anything else is
/// left as it is (validation reports it).
pub(crate) fn prepare_edit_arguments(args: Value) -> Value {
    let Value::Object(mut map) = args else {
        return args;
    };
    if let Some(Value::String(raw)) = map.get("edits")
        && let Ok(parsed @ Value::Array(_)) = serde_json::from_str::<Value>(raw)
    {
        map.insert("edits".to_owned(), parsed);
    }
    if let (Some(Value::String(_)), Some(Value::String(_))) = (map.get("oldText"), map.get("newText"))
        && let (Some(old_text), Some(new_text)) = (map.remove("oldText"), map.remove("newText"))
    {
        let mut edits = match map.remove("edits") {
            Some(Value::Array(edits)) => edits,
            _ => Vec::new(),
        };
        let mut edit = Map::new();
        edit.insert("oldText".to_owned(), old_text);
        edit.insert("newText".to_owned(), new_text);
        edits.push(Value::Object(edit));
        map.insert("edits".to_owned(), Value::Array(edits));
    }
    Value::Object(map)
}

/// The arguments of an `edit` call (after pi's `prepareArguments`, which [`EditTool`] applies:
/// `edits` sent as a JSON string, or a legacy top-level `oldText` / `newText` pair).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct EditParams {
    /// Path to the file to edit (relative or absolute).
    pub path: String,
    /// One or more targeted replacements, each matched against the original file.
    pub edits: Vec<Edit>,
}

/// The arguments, or [`INVALID_INPUT`] when `edits` is no array or an empty one.
fn parse_input(args: Value) -> Result<EditParams, ToolError> {
    if !args.get("edits").is_some_and(Value::is_array) {
        return Err(ToolError::new(INVALID_INPUT));
    }
    let input: EditParams = serde_json::from_value(args)?;
    if input.edits.is_empty() {
        return Err(ToolError::new(INVALID_INPUT));
    }
    Ok(input)
}

fn aborted() -> ToolError {
    ToolError::new(OPERATION_ABORTED)
}

/// The Node-style code of an I/O error (`ENOENT`, `EACCES`, `EISDIR`, …): its errno name, or
/// for errors without one the code of its kind.
fn error_code(error: &std::io::Error) -> String {
    if let Some(code) = crate::node::error_code(error) {
        return code;
    }
    use std::io::ErrorKind;
    let code = match error.kind() {
        ErrorKind::NotFound => "ENOENT",
        ErrorKind::PermissionDenied => "EACCES",
        ErrorKind::IsADirectory => "EISDIR",
        ErrorKind::NotADirectory => "ENOTDIR",
        ErrorKind::ReadOnlyFilesystem => "EROFS",
        ErrorKind::StorageFull => "ENOSPC",
        _ => "EIO",
    };
    code.to_owned()
}

fn access_error(path: &str, error: &std::io::Error) -> ToolError {
    ToolError::new(format!(
        "Could not edit file: {path}. Error code: {}.",
        error_code(error)
    ))
}

/// Reads the file to edit: it must be a regular file we may read and write, holding UTF-8 text.
/// Returns the real path (so that writing keeps symlinks) and the text.
fn read_editable(absolute: &Path, path: &str) -> Result<(PathBuf, String), ToolError> {
    let metadata = std::fs::metadata(absolute).map_err(|e| access_error(path, &e))?;
    if metadata.is_dir() {
        return Err(ToolError::new(format!(
            "Could not edit file: {path}. Error code: EISDIR."
        )));
    }
    if !metadata.is_file() {
        return Err(ToolError::new(format!(
            "Could not edit file: {path}. It is not a regular file."
        )));
    }
    let target = std::fs::canonicalize(absolute).map_err(|e| access_error(path, &e))?;
    // Opening for writing (without truncating) is the write-permission check, like pi's access().
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&target)
        .map_err(|e| access_error(path, &e))?;
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0).saturating_add(1));
    file.read_to_end(&mut bytes).map_err(|e| access_error(path, &e))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        ToolError::new(format!(
            "Could not edit file: {path}. It is not valid UTF-8 text (invalid byte at offset {}); edit only changes UTF-8 text files.",
            e.utf8_error().valid_up_to()
        ))
    })?;
    Ok((target, text))
}

/// The file's new bytes, ready to be written.
struct Prepared {
    target: PathBuf,
    bytes: Vec<u8>,
    diff: EditDiff,
}

/// Reads the file and applies the edits (blocking).
fn prepare(absolute: &Path, path: &str, edits: &[Edit], cancel: &CancellationToken) -> Result<Prepared, ToolError> {
    let (target, raw) = read_editable(absolute, path)?;
    if cancel.is_cancelled() {
        return Err(aborted());
    }
    let (had_bom, content) = strip_bom(&raw);
    let ending = detect_line_ending(content);
    let normalized = normalize_to_lf(content);
    let new_content = apply_edits(&normalized, edits, path).map_err(|error| ToolError::new(error.to_string()))?;
    if cancel.is_cancelled() {
        return Err(aborted());
    }
    let diff = edit_diff(path, &normalized, &new_content);
    let bytes = if !had_bom && ending == LineEnding::Lf {
        new_content.into_bytes()
    } else {
        let restored = restore_line_endings(&new_content, ending);
        let mut bytes = Vec::with_capacity(restored.len() + BOM.len_utf8());
        if had_bom {
            bytes.extend_from_slice(BOM.encode_utf8(&mut [0; 4]).as_bytes());
        }
        bytes.extend_from_slice(restored.as_bytes());
        bytes
    };
    Ok(Prepared { target, bytes, diff })
}

fn join_error(error: tokio::task::JoinError) -> ToolError {
    ToolError::new(format!("edit task failed: {error}"))
}

#[async_trait]
impl TypedTool for EditTool {
    type Params = EditParams;

    fn name(&self) -> &str {
        "edit"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &ToolParameters {
        &self.parameters
    }

    fn prepare_arguments(&self, args: Value) -> Value {
        prepare_edit_arguments(args)
    }

    fn parse_arguments(&self, args: Value) -> Result<EditParams, ToolError> {
        parse_input(args)
    }

    /// The file `path` names, resolved as [`TypedTool::execute`] resolves it, so that the loop
    /// reserves its place in the mutation queue in source order.
    fn mutated_files(&self, args: &Value) -> Vec<PathBuf> {
        args.get("path")
            .and_then(Value::as_str)
            .map(|path| self.env.resolve(path))
            .into_iter()
            .collect()
    }

    async fn execute(&self, _call_id: &str, args: EditParams, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let EditParams { path, edits } = args;
        let absolute = self.env.resolve(&path);
        let cancel = ctx.cancel;
        let count = edits.len();
        let queue_path = absolute.clone();
        crate::mutation_queue::with_file_mutation_queue(&queue_path, async move {
            if cancel.is_cancelled() {
                return Err(aborted());
            }
            let prepared = {
                let (path, cancel) = (path.clone(), cancel.clone());
                tokio::task::spawn_blocking(move || prepare(&absolute, &path, &edits, &cancel))
                    .await
                    .map_err(join_error)??
            };
            if cancel.is_cancelled() {
                return Err(aborted());
            }
            let Prepared { target, bytes, diff } = prepared;
            tokio::task::spawn_blocking(move || crate::atomic::write_atomic(&target, &bytes))
                .await
                .map_err(join_error)?
                .map_err(|e| access_error(&path, &e))?;
            Ok(
                ToolResult::text(format!("Successfully replaced {count} block(s) in {path}.")).with_details(json!({
                    "diff": diff.diff,
                    "patch": diff.patch,
                    "firstChangedLine": diff.first_changed_line,
                })),
            )
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schema is pi 0.73.1's, key order included (the recording is pi's request body; see
    /// `crates/test-support/data/pi-0.73.1/README.md`).
    #[test]
    fn the_schema_is_pis_byte_for_byte() {
        let recorded: Value =
            serde_json::from_str(include_str!("../../../test-support/data/pi-0.73.1/cc-plain.json")).unwrap();
        let pis = recorded["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|tool| tool["function"]["name"] == "edit")
            .unwrap();
        let tool = EditTool::new(ToolEnv::new(std::env::temp_dir()));
        assert_eq!(
            serde_json::to_string(tool.parameters.schema()).unwrap(),
            serde_json::to_string(&pis["function"]["parameters"]).unwrap()
        );
    }

    /// The helpers at a glance (the example the module documentation used to carry).
    #[test]
    fn prepare_edit_arguments_example() {
        use serde_json::json;

        let legacy = json!({"path": "a.txt", "oldText": "a", "newText": "b"});
        assert_eq!(
            prepare_edit_arguments(legacy),
            json!({"path": "a.txt", "edits": [{"oldText": "a", "newText": "b"}]})
        );
        let stringified = json!({"path": "a.txt", "edits": "[{\"oldText\":\"a\",\"newText\":\"b\"}]"});
        assert_eq!(prepare_edit_arguments(stringified)["edits"][0]["newText"], "b");
    }

    #[test]
    fn stringified_edits_are_parsed() {
        let args = json!({"path": "a", "edits": "[{\"oldText\":\"x\",\"newText\":\"y\"}]"});
        assert_eq!(
            prepare_edit_arguments(args),
            json!({"path": "a", "edits": [{"oldText": "x", "newText": "y"}]})
        );
    }

    #[test]
    fn legacy_pair_is_appended_to_edits() {
        let args = json!({"path": "a", "edits": [{"oldText": "1", "newText": "2"}], "oldText": "x", "newText": "y"});
        assert_eq!(
            prepare_edit_arguments(args),
            json!({"path": "a", "edits": [{"oldText": "1", "newText": "2"}, {"oldText": "x", "newText": "y"}]})
        );
    }

    #[test]
    fn everything_else_is_untouched() {
        for args in [
            json!({"path": "a", "edits": "not json"}),
            json!({"path": "a", "edits": "{\"oldText\":\"x\"}"}),
            json!({"path": "a", "oldText": "x"}),
            json!({"path": "a", "oldText": 1, "newText": "y"}),
            json!("a string"),
            json!(null),
        ] {
            assert_eq!(prepare_edit_arguments(args.clone()), args);
        }
    }

    #[test]
    fn error_codes_are_node_style() {
        let code = |kind| error_code(&std::io::Error::from(kind));
        assert_eq!(code(std::io::ErrorKind::NotFound), "ENOENT");
        assert_eq!(code(std::io::ErrorKind::PermissionDenied), "EACCES");
        assert_eq!(error_code(&std::io::Error::from_raw_os_error(21)), "EISDIR");
        assert_eq!(error_code(&std::io::Error::from_raw_os_error(2)), "ENOENT");
    }

    #[test]
    fn input_without_edits_is_invalid() {
        for args in [
            json!({"path": "a"}),
            json!({"path": "a", "edits": []}),
            json!({"path": "a", "edits": "x"}),
        ] {
            assert_eq!(parse_input(args).err().unwrap().message(), INVALID_INPUT);
        }
    }
}
