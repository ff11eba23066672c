//! The offline demo: pi's agent loop driven by the faux model, so `pi` runs anywhere without an
//! API key.
//!
//! The demo model answers every prompt in two turns: it calls the `word_count` tool on the
//! prompt, then reads the tool's result from the transcript and answers with it. Everything
//! between the model and the terminal is the real loop: streaming, argument validation, tool
//! dispatch and events.
//!
//! ```
//! # tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async {
//! let transcript = pi_coding_agent::demo::run("count these words", |_| {}).await.unwrap();
//! assert!(transcript.contains("3 words"));
//! # });
//! ```

use std::sync::{Arc, Mutex};

use pi_agent_core::faux::{FauxModel, FauxRequest, FauxResponse, faux_assistant_message, faux_text, faux_tool_call};
use pi_agent_core::{
    Agent, AgentError, AgentEvent, AgentMessage, AgentOptions, AssistantMessageEvent, FnTool, StopReason, ToolResult,
};
use serde_json::json;

/// Name of the demo's one tool.
pub const DEMO_TOOL: &str = "word_count";

/// System prompt of the demo agent.
pub const DEMO_SYSTEM_PROMPT: &str = "You are pi's offline demo model.";

fn word_count_tool() -> FnTool {
    FnTool::new(
        DEMO_TOOL,
        "Count the words of a text.",
        json!({
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The text to count."}},
            "required": ["text"]
        }),
        |_id, args, _ctx| async move {
            let text = args["text"].as_str().unwrap_or_default();
            let words = text.split_whitespace().count();
            Ok(ToolResult::text(format!("{words} words")).with_details(json!({ "words": words })))
        },
    )
    .with_label("Word count")
}

fn answer(request: &FauxRequest<'_>) -> pi_agent_core::AssistantMessage {
    let counted = request
        .context
        .messages
        .iter()
        .rev()
        .find_map(AgentMessage::as_tool_result)
        .map(|result| result.text())
        .unwrap_or_else(|| "no".to_owned());
    faux_assistant_message(vec![faux_text(format!(
        "Your message has {counted}. This answer came from pi's offline demo model through the real agent \
         loop. The providers for real models live in pi-ai (see docs/providers.md); the pi command line \
         that selects them is still being built."
    ))])
}

/// An agent wired to the demo model, with `prompt`'s two responses queued.
pub fn agent(prompt: &str) -> Agent {
    let faux = FauxModel::new();
    faux.set_responses([
        FauxResponse::from(faux_assistant_message(vec![
            faux_text("Let me count the words of your message."),
            faux_tool_call("demo-call-1", DEMO_TOOL, json!({ "text": prompt })),
        ])),
        FauxResponse::factory(answer),
    ]);
    Agent::new(
        AgentOptions::new(faux.model())
            .stream_fn(faux.stream_fn())
            .system_prompt(DEMO_SYSTEM_PROMPT)
            .tools(vec![word_count_tool().into_arc()]),
    )
}

/// The terminal text for one event: streamed assistant text, tool calls and their results.
pub fn render(event: &AgentEvent) -> Option<String> {
    match event {
        AgentEvent::MessageUpdate {
            assistant_message_event: AssistantMessageEvent::TextDelta { delta, .. },
            ..
        } => Some(delta.clone()),
        AgentEvent::MessageEnd {
            message: AgentMessage::Assistant(message),
        } => match message.stop_reason {
            StopReason::Error | StopReason::Aborted => Some(format!(
                "\nError: {}\n",
                message.error_message.as_deref().unwrap_or("request failed")
            )),
            _ => Some("\n".to_owned()),
        },
        AgentEvent::ToolExecutionStart { tool_name, args, .. } => Some(format!("→ {tool_name} {args}\n")),
        AgentEvent::ToolExecutionEnd { result, is_error, .. } => {
            let text: String = result.content.iter().filter_map(|b| b.as_text()).collect();
            Some(format!("{} {text}\n", if *is_error { "✗" } else { "✓" }))
        }
        _ => None,
    }
}

/// Runs the demo on `prompt`, calling `output` with each piece of terminal text as it streams,
/// and returns the whole text.
pub async fn run(prompt: &str, output: impl Fn(&str) + Send + Sync + 'static) -> Result<String, AgentError> {
    let agent = agent(prompt);
    let transcript = Arc::new(Mutex::new(String::new()));
    let sink = transcript.clone();
    agent.subscribe(move |event, _| {
        if let Some(text) = render(event) {
            output(&text);
            if let Ok(mut all) = sink.lock() {
                all.push_str(&text);
            }
        }
    });
    agent.prompt(prompt).await?;
    let text = transcript.lock().map(|t| t.clone()).unwrap_or_default();
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread")]
    async fn demo_runs_a_tool_call_through_the_loop() {
        let text = run("one two three four", |_| {}).await.unwrap();
        assert!(text.starts_with("Let me count the words of your message.\n"), "{text}");
        assert!(
            text.contains("→ word_count {\"text\":\"one two three four\"}\n✓ 4 words\n"),
            "{text}"
        );
        assert!(text.contains("Your message has 4 words."), "{text}");
    }
}
