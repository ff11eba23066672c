//! Error texts the model reads are capped at pi's output limits (issue 14, item 8): a 100 KB path
//! given to `read` and a 100 KB invalid regex given to `grep`, called by a scripted model through
//! the real agent loop, come back as error results of at most about 50 KB that keep their start
//! and say how much they show.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pi_agent_core::faux::FauxModel;
use pi_agent_core::{AgentContext, AgentLoopConfig, AgentMessage, ToolResultMessage, run_agent_loop};
use pi_test_support::scripted;
use pi_tools::{DEFAULT_MAX_BYTES, ToolEnv};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Runs one call of `tool` with `args` through the loop and returns the model's tool result.
async fn through_the_loop(tool: &str, args: Value) -> ToolResultMessage {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(cwd.join("a.txt"), "hello\n").unwrap();
    // Big chunks: the 100 KB arguments stream in a few deltas, not 25,000.
    let faux = FauxModel::builder().token_size(32 * 1024, 32 * 1024).build();
    faux.set_responses([scripted::tool_call("call-1", tool, args), scripted::text("done")]);
    let config = AgentLoopConfig::new(faux.model()).with_stream_fn(faux.stream_fn());
    let context = AgentContext {
        tools: vec![pi_tools::create_tool(tool, &ToolEnv::new(&cwd)).unwrap()],
        ..AgentContext::default()
    };
    let messages = run_agent_loop(
        vec![AgentMessage::user("go")],
        context,
        &config,
        &CancellationToken::new(),
        &mut |_| {},
    )
    .await
    .unwrap();
    assert_eq!(faux.call_count(), 2, "the model was called again with the result");
    messages.iter().find_map(AgentMessage::as_tool_result).unwrap().clone()
}

/// The start and end of a long text, and its size, for a readable snapshot.
fn outline(text: &str) -> String {
    let head: String = text.chars().take(60).collect();
    let tail: String = {
        let chars: Vec<char> = text.chars().collect();
        chars[chars.len().saturating_sub(60)..].iter().collect()
    };
    format!("{head}\n… {} bytes in all …\n{tail}", text.len())
}

#[tokio::test]
async fn a_100_kb_path_given_to_read_comes_back_capped() {
    let path = format!("{}.txt", "p".repeat(100 * 1024));
    let result = through_the_loop("read", json!({"path": path})).await;
    assert!(result.is_error);
    let text = result.text();
    assert!(text.len() <= DEFAULT_MAX_BYTES + 200, "{} bytes", text.len());
    assert!(
        text.starts_with("ENAMETOOLONG: name too long, access '"),
        "{}",
        &text[..200]
    );
    assert!(text.ends_with("ppp... [truncated]"), "{}", &text[text.len() - 200..]);
}

#[tokio::test]
async fn a_100_kb_invalid_regex_given_to_grep_comes_back_capped() {
    let pattern = format!("({}", "a".repeat(100 * 1024));
    let result = through_the_loop("grep", json!({"pattern": pattern})).await;
    assert!(result.is_error);
    let text = result.text();
    assert!(text.len() <= DEFAULT_MAX_BYTES + 200, "{} bytes", text.len());
    insta::assert_snapshot!("grep_invalid_regex_capped", outline(&text));
}
