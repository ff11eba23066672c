//! Embedding pi's coding agent in a Rust program: build a session with [`SessionBuilder`], add a
//! native tool, run one prompt and print the events.
//!
//! ```sh
//! cargo run -p pi-coding-agent --example embed
//! ```
//!
//! The model here is pi's faux model, scripted to call the native tool and then answer, so the
//! example needs no key and no network. With a real model, drop `.stream_fn(...)` and give the
//! builder a model from `pi_ai::ModelRegistry` (keys come from the environment, as in pi):
//!
//! ```ignore
//! let registry = std::sync::Arc::new(pi_ai::ModelRegistry::builtin());
//! let model = registry.find("anthropic", "claude-sonnet-4-5").unwrap().clone();
//! let builder = SessionBuilder::new(cwd, model).registry(registry);
//! ```

use std::sync::Arc;

use pi_agent_core::faux::{FauxModel, faux_assistant_message, faux_assistant_text, faux_tool_call};
use pi_agent_core::{AgentEvent, AgentMessage, ContentBlock, FnTool, ToolResult};
use pi_coding_agent::SessionEvent;
use pi_coding_agent::custom_tools::plain;
use pi_coding_agent::{SessionBuilder, ToolSelection};
use serde_json::json;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let project = tempfile::tempdir()?;

    // A native tool: name, description, JSON schema of its parameters, and what it does.
    let word_count = FnTool::new(
        "word_count",
        "Count the words of a text",
        json!({
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The text"}},
            "required": ["text"]
        }),
        |_call_id, args, _ctx| async move {
            let text = args["text"].as_str().unwrap_or_default();
            Ok(ToolResult::text(format!("{} words", text.split_whitespace().count())))
        },
    );

    // The scripted model: one tool call, then an answer.
    let faux = FauxModel::new();
    faux.append_responses([
        faux_assistant_message(vec![faux_tool_call(
            "call-1",
            "word_count",
            json!({"text": "the quick brown fox"}),
        )]),
        faux_assistant_text("The text has 4 words."),
    ]);

    let built = SessionBuilder::new(project.path(), faux.model())
        .stream_fn(Arc::new(faux.clone()))
        .tool(plain(word_count))
        .tools(ToolSelection::Only(vec!["read".into(), "word_count".into()]))
        .context_files(false)
        .build()
        .await?;
    for error in &built.load_errors {
        eprintln!("custom tool {error}");
    }
    let session = built.session;
    println!("active tools: {}", session.active_tool_names().join(", "));

    let subscription = session.subscribe(|event| {
        if let SessionEvent::Agent(event) = event {
            match event {
                AgentEvent::ToolExecutionStart { tool_name, args, .. } => {
                    println!("{} {tool_name} {args}", event.kind())
                }
                AgentEvent::ToolExecutionEnd { result, is_error, .. } => {
                    println!("{} error={is_error} {}", event.kind(), text_of(&result.content))
                }
                AgentEvent::MessageEnd { message } => {
                    println!("{} {}: {}", event.kind(), message.role(), message_text(message))
                }
                AgentEvent::MessageUpdate { .. } => {}
                other => println!("{}", other.kind()),
            }
        }
    });
    session.prompt("How many words are in 'the quick brown fox'?").await?;
    subscription.unsubscribe();
    Ok(())
}

/// The text blocks of `content`, joined.
fn text_of(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect::<Vec<_>>()
        .join("")
}

/// What a message says, for printing.
fn message_text(message: &AgentMessage) -> String {
    if let Some(user) = message.as_user() {
        user.content.text()
    } else if let Some(assistant) = message.as_assistant() {
        assistant.text()
    } else if let Some(result) = message.as_tool_result() {
        result.text()
    } else {
        String::new()
    }
}
