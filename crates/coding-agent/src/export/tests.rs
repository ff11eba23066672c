use pi_agent_core::{
    AgentMessage, AssistantMessage, ContentBlock, CustomMessage, ImageContent, StopReason, ThinkingContent, ToolCall,
    ToolResultMessage, UserContent, UserMessage,
};
use pi_session_store::{Compaction, SessionManager};
use serde_json::json;

use super::*;

/// A 1×1 PNG.
const PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

fn call(id: &str, name: &str, arguments: Value) -> ContentBlock {
    ContentBlock::ToolCall(ToolCall {
        id: id.into(),
        name: name.into(),
        arguments,
        thought_signature: None,
        namespace: None,
    })
}

fn result(id: &str, name: &str, content: Vec<ContentBlock>, details: Option<Value>) -> AgentMessage {
    AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: name.into(),
        content,
        details,
        usage: None,
        added_tool_names: None,
        is_error: false,
        timestamp: 0,
    })
}

fn assistant(content: Vec<ContentBlock>, stop: StopReason) -> AgentMessage {
    let mut message = AssistantMessage {
        content,
        provider: "anthropic".into(),
        model: "claude-sonnet-4-5".into(),
        stop_reason: stop,
        ..Default::default()
    };
    message.usage.input = 1200;
    message.usage.output = 34;
    message.usage.cost.input = 0.0036;
    message.usage.cost.output = 0.00051;
    message.into()
}

/// A session with every kind of entry and two branches.
fn everything() -> SessionManager {
    let mut s = SessionManager::in_memory("/home/ann/app");
    s.append_model_change("anthropic", "claude-sonnet-4-5").unwrap();
    s.append_thinking_level_change("high").unwrap();
    let first = s
        .append_message(AgentMessage::User(UserMessage {
            content: UserContent::Blocks(vec![
                ContentBlock::text("Look at **this** picture"),
                ContentBlock::Image(ImageContent {
                    data: PIXEL.into(),
                    mime_type: "image/png".into(),
                }),
            ]),
            timestamp: 0,
        }))
        .unwrap();
    s.append_message(assistant(
        vec![
            ContentBlock::Thinking(ThinkingContent {
                thinking: "The user wants files.".into(),
                thinking_signature: None,
                redacted: None,
            }),
            ContentBlock::text("Here is code:\n\n```rust\nfn main() { println!(\"hi\"); }\n```"),
            call("c1", "bash", json!({"command": "ls -la"})),
            call("c2", "read", json!({"path": "/home/ann/app/src/main.rs"})),
            call("c3", "write", json!({"path": "notes.md", "content": "# Notes"})),
            call("c4", "edit", json!({"path": "src/lib.rs"})),
            call("c5", "ls", json!({"path": "src"})),
            call("c6", "grep", json!({"pattern": "TODO"})),
            call("c7", "read", json!({"path": "shot.png"})),
        ],
        StopReason::ToolUse,
    ))
    .unwrap();
    s.append_message(result(
        "c1",
        "bash",
        vec![ContentBlock::text("total 0\nfile-a\nfile-b")],
        None,
    ))
    .unwrap();
    s.append_message(result(
        "c2",
        "read",
        vec![ContentBlock::text("fn main() {\n    let answer = 42;\n}")],
        None,
    ))
    .unwrap();
    s.append_message(result("c3", "write", vec![ContentBlock::text("Wrote 7 bytes")], None))
        .unwrap();
    s.append_message(result(
        "c4",
        "edit",
        vec![ContentBlock::text("Edited")],
        Some(json!({"diff": "-old line\n+new line"})),
    ))
    .unwrap();
    s.append_message(result("c5", "ls", vec![ContentBlock::text("main.rs\nlib.rs")], None))
        .unwrap();
    s.append_message(result("c6", "grep", vec![ContentBlock::text("a.rs:1: TODO")], None))
        .unwrap();
    s.append_message(result(
        "c7",
        "read",
        vec![ContentBlock::Image(ImageContent {
            data: PIXEL.into(),
            mime_type: "image/png".into(),
        })],
        None,
    ))
    .unwrap();
    let done = s
        .append_message(assistant(vec![ContentBlock::text("All done.")], StopReason::Stop))
        .unwrap();
    s.append_message(AgentMessage::Custom(CustomMessage {
        role: "bashExecution".into(),
        fields: serde_json::from_value(
            json!({"command": "false", "output": "", "exitCode": 1, "cancelled": false, "timestamp": 0}),
        )
        .unwrap(),
    }))
    .unwrap();
    s.append_custom_message("reminder", UserContent::Text("Remember the *tests*".into()), true, None)
        .unwrap();
    s.append_compaction(Compaction {
        summary: "We listed files.".into(),
        first_kept_entry_id: done.clone(),
        tokens_before: 12345,
        details: None,
        from_hook: None,
    })
    .unwrap();
    s.append_label(&first, Some("start")).unwrap();
    s.append_session_info("demo session").unwrap();
    s.append_message(AgentMessage::user("Newest question on the main branch"))
        .unwrap();
    // A second branch from the first answer, with a summary of the branch left.
    s.branch_with_summary(Some(&done), "Tried the other way.", None, None)
        .unwrap();
    s.append_message(AgentMessage::user("Question on the side branch"))
        .unwrap();
    s.append_message(assistant(vec![], StopReason::Aborted)).unwrap();
    s
}

fn page(session: &SessionManager) -> String {
    render_html(session, &ExportExtras::default(), &ExportColors::default())
}

#[test]
fn every_kind_of_entry_is_rendered() {
    let html = page(&everything());
    for needle in [
        "Session: ",
        "<strong>this</strong>",
        "<img src=\"data:image/png;base64,iVBOR",
        "class=\"message-image\"",
        "class=\"tool-image\"",
        "The user wants files.",
        "Thinking ...",
        "$ ls -la",
        "<span class=\"tool-name\">read</span>",
        "<span class=\"tool-name\">write</span>",
        "<span class=\"tool-name\">edit</span>",
        "<span class=\"tool-name\">ls</span>",
        "<span class=\"tool-name\">grep</span>",
        "<div class=\"diff-added\">+new line</div>",
        "$ false",
        "(exit 1)",
        "[reminder]",
        "Compacted from 12,345 tokens",
        "Branch Summary",
        "Switched to model: <span class=\"model-name\">anthropic/claude-sonnet-4-5</span>",
        "<div class=\"error-text\">Aborted</div>",
        "<span class=\"tree-label\">[start]</span>",
        "Session Export: demo session",
    ] {
        assert!(html.contains(needle), "missing {needle:?}");
    }
    assert!(html.contains("hl-"), "no highlighted code");
}

#[test]
fn the_header_counts_messages_tokens_and_cost_as_pi_does() {
    let html = page(&everything());
    assert!(
        html.contains("<span class=\"info-value\">3 user, 3 assistant, 7 tool results, 1 custom, 1 compactions, 1 branch summaries</span>"),
        "{html}"
    );
    assert!(html.contains("<span class=\"info-value\">↑3.6k ↓102</span>"), "{html}");
    assert!(html.contains("<span class=\"info-value\">$0.012</span>"), "{html}");
    assert!(html.contains("<span class=\"info-label\">Tool Calls:</span><span class=\"info-value\">7</span>"));
}

#[test]
fn only_the_leafs_branch_is_shown_and_the_other_is_hidden() {
    let session = everything();
    let page = page(&session);
    let html = &page[page.find("<div id=\"messages\">").unwrap()..];
    let side = html.find("Question on the side branch").expect("side branch rendered");
    let main = html
        .find("Newest question on the main branch")
        .expect("main branch rendered");
    let entry_start = |at: usize| html[..at].rfind("<div class=\"entry\"").unwrap();
    let visible = |at: usize| {
        let start = entry_start(at);
        let tag_end = start + html[start..].find('>').unwrap();
        !html[start..tag_end].contains(" hidden")
    };
    assert!(visible(side), "the leaf's branch is shown");
    assert!(!visible(main), "the other branch is hidden until picked in the tree");
}

#[test]
fn the_tree_of_two_branches_as_pi_draws_it() {
    let session = everything();
    let tree = session.tree();
    let leaf = session.entries().len() - 1;
    let lookup = entries::Lookup::new(session.entries());
    let (rows, status) = tree::render(&tree, Some(leaf), &lookup);
    let text: String = rows
        .lines()
        .map(|row| {
            let strip = regex::Regex::new("<[^>]+>").unwrap();
            let classes = if row.contains("active") {
                "* "
            } else if row.contains("in-path") {
                "+ "
            } else {
                "  "
            };
            let text = strip.replace_all(row, "");
            let text = text
                .replace("&quot;", "\"")
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&amp;", "&");
            format!("{classes}{text}\n")
        })
        .collect();
    insta::assert_snapshot!(text);
    assert_eq!(
        status,
        format!("{} / {} entries", text.lines().count(), session.entries().len())
    );
}

#[test]
fn the_system_prompt_and_tools_of_a_running_session_are_listed() {
    let extras = ExportExtras {
        system_prompt: Some((1..=12).map(|i| format!("line {i}")).collect::<Vec<_>>().join("\n")),
        tools: vec![ExportTool {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string", "description": "The file"}}, "required": ["path"]}),
        }],
    };
    let html = render_html(&everything(), &extras, &ExportColors::default());
    assert!(html.contains("... (2 more lines, click to expand)"), "{html}");
    assert!(html.contains("<span class=\"tool-param-name\">path</span> <span class=\"tool-param-type\">string</span> <span class=\"tool-param-required\">required</span>"));
}

#[test]
fn theme_colors_become_css_variables() {
    let colors = ExportColors::default().with_token("toolSuccessBg", "#012345");
    let html = render_html(&everything(), &ExportExtras::default(), &colors);
    assert!(html.contains("--toolSuccessBg: #012345;"));
    assert!(html.contains("--exportPageBg: #18181e;"));
}

#[test]
fn nothing_is_fetched_and_no_message_text_becomes_markup() {
    let mut s = SessionManager::in_memory("/w");
    s.append_message(AgentMessage::user(
        "</script><script>alert(1)</script> ![x](https://example.com/x.png)",
    ))
    .unwrap();
    let html = page(&s);
    assert_eq!(html.matches("<script").count(), 2, "only the page's own two scripts");
    assert!(!html.contains("src=\"http"), "nothing is loaded from the network");
    assert!(!html.contains("<link"), "no external style sheets");
}

#[test]
fn exporting_a_file_that_does_not_exist_names_it() {
    let error = export_file(Path::new("/no/such/session.jsonl"), None, &ExportColors::default()).unwrap_err();
    assert_eq!(error.to_string(), "File not found: /no/such/session.jsonl");
}

#[test]
fn an_in_memory_or_unwritten_session_cannot_be_exported() {
    let s = SessionManager::in_memory("/w");
    let error = export_session(&s, &ExportExtras::default(), None, &ExportColors::default()).unwrap_err();
    assert_eq!(error.to_string(), "Cannot export in-memory session to HTML");
    let dir = tempfile::tempdir().unwrap();
    let mut s = SessionManager::create("/w", dir.path()).unwrap();
    s.append_message(AgentMessage::user("hi")).unwrap();
    let error = export_session(&s, &ExportExtras::default(), None, &ExportColors::default()).unwrap_err();
    assert_eq!(error.to_string(), "Nothing to export yet - start a conversation first");
}

#[test]
fn a_written_session_is_exported_next_to_the_given_path() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = SessionManager::create("/w", dir.path()).unwrap();
    s.append_message(AgentMessage::user("hi")).unwrap();
    s.append_message(assistant(vec![ContentBlock::text("hello")], StopReason::Stop))
        .unwrap();
    let out = dir.path().join("out.html");
    let written = export_session(&s, &ExportExtras::default(), Some(&out), &ExportColors::default()).unwrap();
    assert_eq!(written, out);
    assert!(std::fs::read_to_string(&out).unwrap().contains("hello"));
    let from_file = export_file(
        s.file().unwrap(),
        Some(&dir.path().join("2.html")),
        &ExportColors::default(),
    )
    .unwrap();
    assert!(std::fs::read_to_string(from_file).unwrap().contains("hello"));
}

#[test]
fn token_counts_are_formatted_as_pi_does() {
    assert_eq!(format_tokens(999), "999");
    assert_eq!(format_tokens(1234), "1.2k");
    assert_eq!(format_tokens(12_345), "12k");
    assert_eq!(format_tokens(1_234_567), "1.2M");
}

#[test]
fn the_branch_is_exported_as_a_linear_session_file() {
    let session = everything();
    let dir = tempfile::tempdir().unwrap();
    let path = export_branch_jsonl(&session, &dir.path().join("sub/branch.jsonl")).unwrap();
    let (reopened, warnings) = SessionManager::open(&path).unwrap();
    assert!(warnings.is_empty());
    assert_eq!(reopened.id(), session.id());
    let ids: Vec<&str> = reopened.entries().iter().map(|e| e.id.as_str()).collect();
    let branch: Vec<&str> = session.path_to_leaf().iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, branch);
    for pair in reopened.entries().windows(2) {
        assert_eq!(pair[1].parent_id.as_deref(), Some(pair[0].id.as_str()));
    }
    assert_eq!(reopened.entries()[0].parent_id, None);
}
