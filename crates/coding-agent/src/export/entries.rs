//! The entries of a session as HTML: the messages of the main column (pi's export's structure
//! and class names) and the one-line descriptions of the session tree.

use std::collections::HashMap;
use std::sync::OnceLock;

use pi_agent_core::{AgentMessage, ContentBlock, StopReason, ToolCall, ToolResultMessage, UserContent};
use pi_session_store::{EntryKind, SessionEntry};
use regex::Regex;
use serde_json::Value;

use super::html::escape;
use super::markdown;
use super::tools::{image_tag, render_tool_call, tree_label};

/// What rendering one entry needs to know about the others.
pub(crate) struct Lookup<'a> {
    results: HashMap<&'a str, &'a ToolResultMessage>,
    calls: HashMap<&'a str, &'a ToolCall>,
}

impl<'a> Lookup<'a> {
    pub(crate) fn new(entries: &'a [SessionEntry]) -> Self {
        let mut results = HashMap::new();
        let mut calls = HashMap::new();
        for entry in entries {
            match entry.message() {
                Some(AgentMessage::ToolResult(result)) => {
                    results.entry(result.tool_call_id.as_str()).or_insert(result);
                }
                Some(AgentMessage::Assistant(assistant)) => {
                    for call in assistant.tool_calls() {
                        calls.insert(call.id.as_str(), call);
                    }
                }
                _ => {}
            }
        }
        Lookup { results, calls }
    }
}

/// `HH:MM:SS` of an ISO 8601 timestamp (UTC, as written in the file).
fn time_of(timestamp: &str) -> Option<&str> {
    timestamp.get(11..19).filter(|t| t.as_bytes().get(2) == Some(&b':'))
}

/// A skill invocation pi puts in a user message: `<skill name location>` … `</skill>`, then the
/// user's own words.
struct SkillBlock<'a> {
    name: &'a str,
    content: &'a str,
    user_message: Option<&'a str>,
}

fn skill_block(text: &str) -> Option<SkillBlock<'_>> {
    static PATTERN: OnceLock<Option<Regex>> = OnceLock::new();
    let pattern = PATTERN
        .get_or_init(|| {
            Regex::new(r#"(?s)\A<skill name="([^"]+)" location="([^"]+)">\n(.*?)\n</skill>(?:\n\n(.+))?\z"#).ok()
        })
        .as_ref()?;
    let captures = pattern.captures(text)?;
    Some(SkillBlock {
        name: captures.get(1)?.as_str(),
        content: captures.get(3)?.as_str(),
        user_message: captures.get(4).map(|m| m.as_str().trim()).filter(|m| !m.is_empty()),
    })
}

fn user_parts(content: &UserContent) -> (String, Vec<(&str, &str)>) {
    match content {
        UserContent::Text(text) => (text.clone(), Vec::new()),
        UserContent::Blocks(blocks) => {
            let text = blocks
                .iter()
                .filter_map(ContentBlock::as_text)
                .collect::<Vec<_>>()
                .join("\n");
            let images = blocks
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Image(image) => Some((image.mime_type.as_str(), image.data.as_str())),
                    _ => None,
                })
                .collect();
            (text, images)
        }
    }
}

fn message_images(images: &[(&str, &str)]) -> String {
    if images.is_empty() {
        return String::new();
    }
    let tags: String = images
        .iter()
        .map(|(mime, data)| image_tag(mime, data, "message-image"))
        .collect();
    format!("<div class=\"message-images\">{tags}</div>")
}

/// The element of one entry in the main column; empty for entries pi's export does not show
/// there (tool results, which appear under their call, labels, settings).
pub(crate) fn render_entry(entry: &SessionEntry, lookup: &Lookup<'_>) -> String {
    let id = format!("entry-{}", escape(&entry.id));
    let time = time_of(&entry.timestamp)
        .map(|t| format!("<div class=\"message-timestamp\">{t}</div>"))
        .unwrap_or_default();
    match &entry.kind {
        EntryKind::Message(AgentMessage::User(user)) => {
            let (text, images) = user_parts(&user.content);
            if let Some(skill) = skill_block(&text) {
                let mut html = format!(
                    "<div class=\"skill-user-entry\" id=\"{id}\">{time}<div class=\"skill-invocation expandable\"><div class=\"skill-invocation-label\">[skill] {name}</div><div class=\"skill-invocation-collapsed\">{name} (click to expand)</div><div class=\"skill-invocation-content markdown-content\">{content}</div></div>",
                    name = escape(skill.name),
                    content = markdown::to_html(skill.content)
                );
                if skill.user_message.is_some() || !images.is_empty() {
                    html.push_str("<div class=\"user-message\">");
                    html.push_str(&message_images(&images));
                    if let Some(message) = skill.user_message {
                        html.push_str(&format!(
                            "<div class=\"markdown-content\">{}</div>",
                            markdown::to_html(message)
                        ));
                    }
                    html.push_str("</div>");
                }
                html.push_str("</div>");
                return html;
            }
            let mut html = format!("<div class=\"user-message\" id=\"{id}\">{time}");
            html.push_str(&message_images(&images));
            if !text.trim().is_empty() {
                html.push_str(&format!(
                    "<div class=\"markdown-content\">{}</div>",
                    markdown::to_html(&text)
                ));
            }
            html.push_str("</div>");
            html
        }
        EntryKind::Message(AgentMessage::Assistant(assistant)) => {
            let mut html = format!("<div class=\"assistant-message\" id=\"{id}\">{time}");
            for block in &assistant.content {
                match block {
                    ContentBlock::Text(text) if !text.text.trim().is_empty() => html.push_str(&format!(
                        "<div class=\"assistant-text markdown-content\">{}</div>",
                        markdown::to_html(&text.text)
                    )),
                    ContentBlock::Thinking(thinking) if !thinking.thinking.trim().is_empty() => {
                        html.push_str(&format!(
                            "<div class=\"thinking-block\"><div class=\"thinking-text\">{}</div><div class=\"thinking-collapsed\">Thinking ...</div></div>",
                            escape(&thinking.thinking)
                        ))
                    }
                    _ => {}
                }
            }
            for call in assistant.tool_calls() {
                html.push_str(&render_tool_call(call, lookup.results.get(call.id.as_str()).copied()));
            }
            match assistant.stop_reason {
                StopReason::Aborted => html.push_str("<div class=\"error-text\">Aborted</div>"),
                StopReason::Error => html.push_str(&format!(
                    "<div class=\"error-text\">Error: {}</div>",
                    escape(assistant.error_message.as_deref().unwrap_or("Unknown error"))
                )),
                _ => {}
            }
            html.push_str("</div>");
            html
        }
        EntryKind::Message(AgentMessage::Custom(custom)) if custom.role == "bashExecution" => {
            let field = |k: &str| custom.fields.get(k);
            let command = field("command").and_then(Value::as_str).unwrap_or_default();
            let output = field("output").and_then(Value::as_str).unwrap_or_default();
            let cancelled = field("cancelled").and_then(Value::as_bool).unwrap_or(false);
            let exit_code = field("exitCode").and_then(Value::as_i64);
            let failed = cancelled || exit_code.is_some_and(|c| c != 0);
            let status = if failed { "error" } else { "success" };
            let mut html = format!(
                "<div class=\"tool-execution {status}\" id=\"{id}\">{time}<div class=\"tool-command\">$ {}</div>",
                escape(command)
            );
            if !output.is_empty() {
                html.push_str(&super::tools::expandable_output(output, 10, None));
            }
            if cancelled {
                html.push_str("<div class=\"bash-status warning\">(cancelled)</div>");
            } else if let Some(code) = exit_code.filter(|c| *c != 0) {
                html.push_str(&format!("<div class=\"bash-status error\">(exit {code})</div>"));
            }
            html.push_str("</div>");
            html
        }
        EntryKind::ModelChange { provider, model_id } => format!(
            "<div class=\"model-change\" id=\"{id}\">{time}Switched to model: <span class=\"model-name\">{}/{}</span></div>",
            escape(provider),
            escape(model_id)
        ),
        EntryKind::Compaction(compaction) => {
            let tokens = crate::grouped(compaction.tokens_before);
            format!(
                "<div class=\"compaction expandable\" id=\"{id}\"><div class=\"compaction-label\">[compaction]</div><div class=\"compaction-collapsed\">Compacted from {tokens} tokens</div><div class=\"compaction-content\"><strong>Compacted from {tokens} tokens</strong>\n\n{}</div></div>",
                escape(&compaction.summary)
            )
        }
        EntryKind::BranchSummary(summary) => format!(
            "<div class=\"branch-summary\" id=\"{id}\">{time}<div class=\"branch-summary-header\">Branch Summary</div><div class=\"markdown-content\">{}</div></div>",
            markdown::to_html(&summary.summary)
        ),
        EntryKind::CustomMessage(custom) if custom.display => {
            let content = match &custom.content {
                UserContent::Text(text) => text.clone(),
                blocks => serde_json::to_string(blocks).unwrap_or_default(),
            };
            format!(
                "<div class=\"hook-message\" id=\"{id}\">{time}<div class=\"hook-type\">[{}]</div><div class=\"markdown-content\">{}</div></div>",
                escape(&custom.custom_type),
                markdown::to_html(&content)
            )
        }
        _ => String::new(),
    }
}

fn one_line(text: &str) -> String {
    text.replace(['\n', '\t'], " ").trim().to_owned()
}

fn truncated(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}...")
}

/// The text blocks of content, concatenated (pi's `extractContent`).
fn content_text(content: &UserContent) -> String {
    match content {
        UserContent::Text(text) => text.clone(),
        UserContent::Blocks(blocks) => blocks.iter().filter_map(ContentBlock::as_text).collect(),
    }
}

/// The description of an entry in the session tree, as HTML.
pub(crate) fn tree_display(entry: &SessionEntry, label: Option<&str>, lookup: &Lookup<'_>) -> String {
    let label_html = label
        .map(|l| format!("<span class=\"tree-label\">[{}]</span> ", escape(l)))
        .unwrap_or_default();
    let short = |text: &str| escape(&truncated(&one_line(text), 100));
    let body = match &entry.kind {
        EntryKind::Message(AgentMessage::User(user)) => {
            let text = content_text(&user.content);
            match skill_block(&text) {
                Some(skill) => {
                    let mut html = format!("<span class=\"tree-role-skill\">skill:</span> {}", escape(skill.name));
                    if let Some(message) = skill.user_message {
                        html.push_str(&format!(
                            " · <span class=\"tree-role-user\">user:</span> {}",
                            short(message)
                        ));
                    }
                    html
                }
                None => format!("<span class=\"tree-role-user\">user:</span> {}", short(&text)),
            }
        }
        EntryKind::Message(AgentMessage::Assistant(assistant)) => {
            let text = truncated(&one_line(&assistant.text()), 100);
            let role = "<span class=\"tree-role-assistant\">assistant:</span>";
            if !text.is_empty() {
                format!("{role} {}", escape(&text))
            } else if assistant.stop_reason == StopReason::Aborted {
                format!("{role} <span class=\"tree-muted\">(aborted)</span>")
            } else if let Some(error) = &assistant.error_message {
                format!(
                    "{role} <span class=\"tree-error\">{}</span>",
                    escape(&truncated(error, 100))
                )
            } else {
                format!("{role} <span class=\"tree-muted\">(no text)</span>")
            }
        }
        EntryKind::Message(AgentMessage::ToolResult(result)) => {
            let text = match lookup.calls.get(result.tool_call_id.as_str()) {
                Some(call) => tree_label(&call.name, &call.arguments),
                None => format!(
                    "[{}]",
                    if result.tool_name.is_empty() {
                        "tool"
                    } else {
                        &result.tool_name
                    }
                ),
            };
            format!("<span class=\"tree-role-tool\">{}</span>", escape(&text))
        }
        EntryKind::Message(AgentMessage::Custom(custom)) if custom.role == "bashExecution" => {
            let command = custom.fields.get("command").and_then(Value::as_str).unwrap_or_default();
            format!("<span class=\"tree-role-tool\">[bash]:</span> {}", short(command))
        }
        EntryKind::Message(message) => {
            format!("<span class=\"tree-muted\">[{}]</span>", escape(message.role()))
        }
        EntryKind::Compaction(compaction) => format!(
            "<span class=\"tree-compaction\">[compaction: {}k tokens]</span>",
            (compaction.tokens_before as f64 / 1000.0).round()
        ),
        EntryKind::BranchSummary(summary) => format!(
            "<span class=\"tree-branch-summary\">[branch summary]:</span> {}",
            short(&summary.summary)
        ),
        EntryKind::CustomMessage(custom) => format!(
            "<span class=\"tree-custom\">[{}]:</span> {}",
            escape(&custom.custom_type),
            short(&content_text(&custom.content))
        ),
        EntryKind::ModelChange { model_id, .. } => {
            format!("<span class=\"tree-muted\">[model: {}]</span>", escape(model_id))
        }
        EntryKind::ThinkingLevelChange { thinking_level } => {
            format!(
                "<span class=\"tree-muted\">[thinking: {}]</span>",
                escape(thinking_level)
            )
        }
        _ => format!("<span class=\"tree-muted\">[{}]</span>", escape(entry.entry_type())),
    };
    format!("{label_html}{body}")
}

/// Whether the tree shows an entry in pi's default filter: settings entries are hidden, and so
/// are assistant messages with nothing but tool calls (unless they failed).
pub(crate) fn shown_in_tree(entry: &SessionEntry) -> bool {
    match &entry.kind {
        EntryKind::Label { .. }
        | EntryKind::Custom { .. }
        | EntryKind::ModelChange { .. }
        | EntryKind::ThinkingLevelChange { .. } => false,
        EntryKind::Message(AgentMessage::Assistant(assistant)) => {
            let has_text = assistant
                .content
                .iter()
                .any(|b| matches!(b, ContentBlock::Text(t) if !t.text.trim().is_empty()));
            has_text || !matches!(assistant.stop_reason, StopReason::Stop | StopReason::ToolUse)
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skill_blocks_are_recognised() {
        let text = "<skill name=\"hello\" location=\"/s/SKILL.md\">\nSay hi.\n</skill>\n\nplease";
        let skill = skill_block(text).expect("a skill block");
        assert_eq!(
            (skill.name, skill.content, skill.user_message),
            ("hello", "Say hi.", Some("please"))
        );
        assert!(skill_block("plain text").is_none());
    }

    #[test]
    fn long_tree_text_is_cut_at_100_characters() {
        let long = "x".repeat(120);
        assert_eq!(truncated(&long, 100), format!("{}...", "x".repeat(100)));
    }
}
