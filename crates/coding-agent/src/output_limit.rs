//! pi's output limits for the results of custom tools (and of `resolve`, which returns what a
//! custom tool's pending action applied).
//!
//! pi's docs ask every extension tool to truncate its own output and pi trusts them; a tool that
//! does not (a 30 MB answer) fills the model's context and every copy of the result on its way.
//! Here the session registers each custom tool behind [`limit_output`], and `resolve` passes its
//! results through [`limit_result`]: a result whose text is
//! over 2000 lines / 50KB (by more than the room for the tool's own notice) keeps its start —
//! whole lines, or the start of a first line that is alone over 50KB — and gets a notice in the
//! words of pi's `bash`, naming the file the whole text was saved to:
//!
//! ```text
//! [Showing lines 1-2000 of 5000. Full output: /tmp/pi-tool-Ab12Cd.log]
//! [Showing lines 1-1200 of 5000 (50.0KB limit). Full output: /tmp/pi-tool-Ab12Cd.log]
//! [Showing first 50.0KB of line 1 (line is 5.0MB). Full output: /tmp/pi-tool-Ab12Cd.log]
//! ```
//!
//! If the file cannot be written the notice says `Full output: unavailable (<why>)`, as `bash`'s
//! does. Errors are left to the loop, which caps every error text the model reads.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use pi_agent_core::{
    AgentTool, ContentCut, ToolContext, ToolError, ToolExecutionMode, ToolParameters, ToolResult, TruncationOptions,
    append_text, cut_text_content, head_notice,
};
use serde_json::Value;

/// The prefix of the files whole results are saved to, in the temporary directory.
const FULL_OUTPUT_PREFIX: &str = "pi-tool-";

/// A tool whose results are kept within pi's output limits.
struct Limited(Arc<dyn AgentTool>);

#[async_trait]
impl AgentTool for Limited {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn label(&self) -> &str {
        self.0.label()
    }
    fn description(&self) -> &str {
        self.0.description()
    }
    fn parameters(&self) -> &ToolParameters {
        self.0.parameters()
    }
    fn execution_mode(&self) -> Option<ToolExecutionMode> {
        self.0.execution_mode()
    }
    fn prepare_arguments(&self, args: Value) -> Value {
        self.0.prepare_arguments(args)
    }
    fn mutated_files(&self, args: &Value) -> Vec<PathBuf> {
        self.0.mutated_files(args)
    }
    async fn execute(&self, call_id: &str, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let mut result = self.0.execute(call_id, args, ctx).await?;
        limit_result(&mut result).await;
        Ok(result)
    }
}

/// `tool`, with its results kept within pi's output limits (see the module documentation).
pub(crate) fn limit_output(tool: Arc<dyn AgentTool>) -> Arc<dyn AgentTool> {
    Arc::new(Limited(tool))
}

/// Cuts `result`'s text to pi's limits, saves the whole text and appends the notice.
pub(crate) async fn limit_result(result: &mut ToolResult) {
    let Some(ContentCut {
        truncation,
        first_line_bytes,
        full_text,
    }) = cut_text_content(&mut result.content, TruncationOptions::default())
    else {
        return;
    };
    // The whole text moves to the writer and is dropped there: no copy of it is kept.
    let saved = tokio::task::spawn_blocking(move || save_full_output(&full_text)).await;
    let location = match saved {
        Ok(Ok(path)) => path.display().to_string(),
        Ok(Err(error)) => format!("unavailable ({error})"),
        Err(error) => format!("unavailable ({error})"),
    };
    tracing::debug!(
        total_bytes = truncation.total_bytes,
        kept_bytes = truncation.output_bytes,
        %location,
        "custom tool result truncated"
    );
    append_text(
        &mut result.content,
        &head_notice(&truncation, first_line_bytes, Some(&location)),
    );
}

/// Writes `text` to a new `pi-tool-<random>.log` (owner-only) in the temporary directory, and
/// keeps it there for the model or the user to read.
fn save_full_output(text: &str) -> std::io::Result<PathBuf> {
    use std::io::Write;
    let mut file = tempfile::Builder::new()
        .prefix(FULL_OUTPUT_PREFIX)
        .suffix(".log")
        .tempfile()?;
    file.write_all(text.as_bytes())?;
    let (_, path) = file.keep().map_err(|error| error.error)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_agent_core::{ContentBlock, DEFAULT_MAX_BYTES};

    fn text(result: &ToolResult) -> &str {
        result.content[0].as_text().unwrap_or_default()
    }

    fn saved_path(text: &str) -> PathBuf {
        let start = text
            .rfind("Full output: ")
            .map(|i| i + "Full output: ".len())
            .unwrap_or(0);
        PathBuf::from(text[start..].trim_end_matches(']'))
    }

    /// Found reviewing the merge of issue 14's branches: the wrapper dropped the files a custom
    /// tool declares (`mutatedPaths`), so a session's custom tools lost their place in the
    /// per-file queue. Everything the loop asks a tool must reach the wrapped one.
    #[test]
    fn the_wrapper_answers_every_question_the_loop_asks_as_the_tool_does() {
        let tool = pi_agent_core::FnTool::new(
            "touch",
            "Touch a file",
            serde_json::json!({"type": "object"}),
            |_id, _args, _ctx| async { Ok(ToolResult::text("ok")) },
        )
        .with_execution_mode(ToolExecutionMode::Sequential)
        .with_mutated_files(|args| args["path"].as_str().map(PathBuf::from).into_iter().collect());
        let tool: Arc<dyn AgentTool> = Arc::new(tool);
        let limited = limit_output(tool.clone());
        let args = serde_json::json!({"path": "/work/a.txt"});
        assert_eq!(limited.mutated_files(&args), [PathBuf::from("/work/a.txt")]);
        assert_eq!(limited.mutated_files(&args), tool.mutated_files(&args));
        assert_eq!(limited.execution_mode(), tool.execution_mode());
        assert_eq!(limited.name(), tool.name());
    }

    #[tokio::test]
    async fn a_long_result_keeps_its_start_and_the_whole_text_is_saved() {
        let whole: String = (1..=5000).map(|i| format!("line {i}\n")).collect();
        let mut result = ToolResult::text(whole.clone());
        limit_result(&mut result).await;
        let text = text(&result);
        assert!(text.starts_with("line 1\nline 2\n"));
        assert!(text.contains("\nline 2000\n\n[Showing lines 1-2000 of 5000. Full output: "));
        let path = saved_path(text);
        assert!(path.file_name().unwrap().to_string_lossy().starts_with("pi-tool-"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), whole);
        std::fs::remove_file(path).unwrap();
    }

    #[tokio::test]
    async fn a_huge_single_line_is_cut_and_small_results_are_untouched() {
        let mut result = ToolResult::text("x".repeat(3 * 1024 * 1024));
        limit_result(&mut result).await;
        let text = text(&result);
        assert_eq!(&text[..DEFAULT_MAX_BYTES], "x".repeat(DEFAULT_MAX_BYTES));
        let notice = &text[DEFAULT_MAX_BYTES..];
        assert!(
            notice.starts_with("\n\n[Showing first 50.0KB of line 1 (line is 3.0MB). Full output: "),
            "{notice}"
        );
        std::fs::remove_file(saved_path(text)).unwrap();

        let mut small = ToolResult::text("fine");
        limit_result(&mut small).await;
        assert_eq!(small.content, [ContentBlock::text("fine")]);
    }
}
