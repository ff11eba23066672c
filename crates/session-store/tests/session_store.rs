//! Sessions on disk: pi-format fixtures (versions 1, 2 and 3), round trips, torn and garbage
//! lines, branching, forking, listing and finding, persistence timing, and a property test over
//! random appends and branches.
//!
//! Longer than 800 lines on purpose: one scenario per test, all built on the same fixture and
//! normalising helpers at the top; split by topic, each part would copy those helpers.

#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use pi_agent_core::{
    AgentMessage, AssistantMessage, ContentBlock, CustomMessage, StopReason, ToolCall, ToolResultMessage, Usage,
    UserContent, UserMessage,
};
use pi_session_store::{
    Compaction, EntryKind, SessionContext, SessionManager, StoreError, cwd_dir_name, session_file_name,
};
use serde_json::{Map, Value, json};

// ----- helpers -------------------------------------------------------------------------------------

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/sessions")
        .join(name)
}

/// Copies a fixture into `dir` (opening migrates old files in place, so fixtures are never
/// opened where they are).
fn copy_fixture(name: &str, dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let target = dir.join(name);
    std::fs::copy(fixture(name), &target).unwrap();
    target
}

fn user(text: &str) -> AgentMessage {
    AgentMessage::User(UserMessage {
        content: UserContent::Blocks(vec![ContentBlock::text(text)]),
        timestamp: 1_767_225_600_000,
    })
}

fn assistant(content: Vec<ContentBlock>, stop_reason: StopReason) -> AgentMessage {
    AssistantMessage {
        content,
        api: "openai-completions".into(),
        provider: "faux".into(),
        model: "faux-1".into(),
        response_id: None,
        response_model: None,
        usage: Usage {
            input: 100,
            output: 20,
            total_tokens: 120,
            ..Usage::default()
        },
        stop_reason,
        error_message: None,
        timestamp: 1_767_225_601_000,
    }
    .into()
}

fn answer(text: &str) -> AgentMessage {
    assistant(vec![ContentBlock::text(text)], StopReason::Stop)
}

fn tool_result(call_id: &str, text: &str, details: Value) -> AgentMessage {
    ToolResultMessage {
        tool_call_id: call_id.into(),
        tool_name: "bash".into(),
        content: vec![ContentBlock::text(text)],
        details: Some(details),
        usage: None,
        added_tool_names: None,
        is_error: false,
        timestamp: 1_767_225_602_000,
    }
    .into()
}

/// One short line per context message: role and text.
fn describe(context: &SessionContext) -> Vec<String> {
    context
        .messages
        .iter()
        .map(|message| match message {
            AgentMessage::User(m) => format!("user: {}", m.content.text()),
            AgentMessage::Assistant(m) => format!("assistant: {}", m.text()),
            AgentMessage::ToolResult(m) => format!("toolResult: {}", m.text()),
            AgentMessage::Custom(m) => m.role.clone(),
        })
        .collect()
}

fn ids(entries: &[&pi_session_store::SessionEntry]) -> Vec<String> {
    entries.iter().map(|e| e.id.clone()).collect()
}

/// A written session file with the session id, entry ids and ISO timestamps replaced by
/// placeholders, one JSON line per line (key order kept).
fn normalise(text: &str) -> String {
    let mut names: HashMap<String, String> = HashMap::new();
    let mut out = String::new();
    for (n, line) in text.lines().enumerate() {
        let mut value: Map<String, Value> = serde_json::from_str(line).unwrap();
        if n == 0 {
            value.insert("id".into(), json!("<session-id>"));
        }
        for (key, field) in value.iter_mut() {
            match (key.as_str(), &*field) {
                ("timestamp", Value::String(t)) => {
                    assert!(pi_session_store::parse_iso_ms(t).is_some(), "{t}");
                    *field = json!("<timestamp>");
                }
                ("id" | "parentId" | "targetId" | "firstKeptEntryId" | "fromId", Value::String(id)) if n > 0 => {
                    if id == "root" {
                        continue;
                    }
                    assert!(
                        id.len() == 8 && id.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f')),
                        "{id}"
                    );
                    let next = format!("<id{}>", names.len() + 1);
                    *field = json!(names.entry(id.clone()).or_insert(next).clone());
                }
                _ => {}
            }
        }
        out.push_str(&serde_json::to_string(&value).unwrap());
        out.push('\n');
    }
    out
}

// ----- pi-format fixtures ----------------------------------------------------------------------

#[test]
fn v3_fixture_lines_are_read_and_written_back_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_fixture("v3_branched.jsonl", dir.path());
    let (session, warnings) = SessionManager::open(&path).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let text = std::fs::read_to_string(fixture("v3_branched.jsonl")).unwrap();
    let mut lines = text.lines();
    assert_eq!(serde_json::to_string(session.header()).unwrap(), lines.next().unwrap());
    for (entry, line) in session.entries().iter().zip(lines) {
        assert!(!matches!(entry.kind, EntryKind::Other(_)), "{line}");
        assert_eq!(serde_json::to_string(entry).unwrap(), line);
    }
    assert_eq!(session.entries().len(), 24);
    // Opening a current-version file never rewrites it.
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

#[test]
fn v3_fixture_context_follows_the_leaf_through_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_fixture("v3_branched.jsonl", dir.path());
    let (mut session, _) = SessionManager::open(&path).unwrap();
    assert_eq!(session.id(), "5d1f0c8e-2b7a-4c39-9e61-0a7b3c2d4e5f");
    assert_eq!(session.cwd(), Path::new("/home/ana/src/parser"));
    assert_eq!(session.leaf_id(), Some("b000000c"));
    assert_eq!(session.name(), Some("tokenizer fix"));
    assert_eq!(session.label("b0000003"), Some("second-approach"));
    assert_eq!(session.label("a0000004"), None, "cleared by a later label entry");

    let context = session.build_context();
    assert_eq!(context.model, Some(("openai".into(), "gpt-5.1-codex".into())));
    assert_eq!(context.thinking_level.as_deref(), Some("high"));
    let lines: Vec<String> = context
        .messages
        .iter()
        .map(|m| serde_json::to_string(m).unwrap())
        .collect();
    insta::assert_snapshot!("v3_fixture_context_at_leaf", lines.join("\n"));

    // The first branch: bashExecution and the custom_message entry are part of its context.
    session.branch("a000000c").unwrap();
    let context = session.build_context();
    assert_eq!(
        describe(&context),
        [
            "user: The tokenizer test `splits_on_unicode_whitespace` fails. Fix it.",
            "assistant: I'll read the tokenizer.",
            "toolResult: pub fn tokenize(input: &str) -> Vec<&str> {\n    input.split(' ').filter(|t| !t.is_empty()).collect()\n}\n",
            "assistant: ",
            "toolResult: Successfully replaced 1 block(s) in src/tokenizer.rs.",
            "assistant: Fixed: the tokenizer now splits on any Unicode whitespace.",
            "bashExecution",
            "custom",
        ]
    );
    assert_eq!(context.model, Some(("anthropic".into(), "claude-sonnet-4-5".into())));
    assert_eq!(context.thinking_level.as_deref(), Some("medium"));
    let AgentMessage::Custom(custom) = &context.messages[7] else {
        panic!("{:?}", context.messages[7])
    };
    assert_eq!(
        serde_json::to_value(AgentMessage::Custom(custom.clone())).unwrap(),
        json!({
            "role": "custom",
            "customType": "test-watch",
            "content": "1 test still fails: splits_on_unicode_whitespace",
            "display": true,
            "details": {"failed": ["splits_on_unicode_whitespace"]},
            "timestamp": 1_772_442_865_201_i64
        })
    );
    let edit = context.messages[4].as_tool_result().unwrap();
    assert_eq!(edit.details.as_ref().unwrap()["firstChangedLine"], 2);

    // The second branch before its compaction: the branch summary replaces the abandoned branch.
    session.branch("b0000004").unwrap();
    assert_eq!(
        describe(&session.build_context()),
        [
            "user: The tokenizer test `splits_on_unicode_whitespace` fails. Fix it.",
            "branchSummary",
            "assistant: Let me run the test to see the actual input.",
            "toolResult: input: \"a\\u{a0}b\"\ntest splits_on_unicode_whitespace ... FAILED",
        ]
    );
}

#[test]
fn v3_fixture_tree_has_both_branches_with_labels() {
    let dir = tempfile::tempdir().unwrap();
    let (session, _) = SessionManager::open(copy_fixture("v3_branched.jsonl", dir.path())).unwrap();
    let tree = session.tree();
    assert_eq!(tree.roots().len(), 1);
    let rendered: Vec<String> = tree
        .depth_first()
        .map(|(depth, node)| {
            let label = node.label.map(|l| format!(" [{l}]")).unwrap_or_default();
            let role = node
                .entry
                .message()
                .map(|m| format!(" {}", m.role()))
                .unwrap_or_default();
            format!(
                "{}{} {}{role}{label}",
                "  ".repeat(depth),
                node.entry.id,
                node.entry.entry_type()
            )
        })
        .collect();
    insta::assert_snapshot!("v3_fixture_tree", rendered.join("\n"));
    let children = session.children("a0000003");
    assert_eq!(ids(&children), ["a0000004", "b0000001"]);
    assert_eq!(
        ids(&session.branch_path("a0000005").unwrap()),
        ["a0000001", "a0000002", "a0000003", "a0000004", "a0000005"]
    );
}

#[test]
fn v2_fixture_is_migrated_and_rewritten_as_v3() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_fixture("v2_hook_message.jsonl", dir.path());
    let (session, warnings) = SessionManager::open(&path).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(session.header().version, 3);
    assert_eq!(session.entry("c0000002").unwrap().message().unwrap().role(), "custom");

    let context = session.build_context();
    assert_eq!(
        describe(&context),
        [
            "user: Summarise notes.md",
            "custom",
            "assistant: notes.md lists three open tasks.",
            "custom"
        ]
    );
    assert_eq!(context.model, Some(("ollama".into(), "qwen3:8b".into())));
    // What the model sees of these custom messages is checked in pi-coding-agent's
    // `messages::migrated_v2_custom_messages_reach_the_model_as_user_messages`.

    let rewritten = std::fs::read_to_string(&path).unwrap();
    let original = std::fs::read_to_string(fixture("v2_hook_message.jsonl")).unwrap();
    assert!(rewritten.starts_with(r#"{"type":"session","version":3,"id":"0c5e7d2a-91f3-4b6e-8d40-3f2a1b9c8e77""#));
    assert!(!rewritten.contains("hookMessage"));
    assert_eq!(
        rewritten,
        original
            .replace("\"version\":2", "\"version\":3")
            .replace("hookMessage", "custom")
    );
    let (again, _) = SessionManager::open(&path).unwrap();
    assert_eq!(again.entries(), session.entries());
}

#[test]
fn v1_fixture_gets_ids_parents_and_a_first_kept_id() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy_fixture("v1_linear.jsonl", dir.path());
    let (session, warnings) = SessionManager::open(&path).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let entries = session.entries();
    assert_eq!(entries.len(), 7);
    for pair in entries.windows(2) {
        assert_eq!(pair[1].parent_id.as_deref(), Some(pair[0].id.as_str()));
    }
    assert_eq!(entries[0].parent_id, None);
    // firstKeptEntryIndex 4 counted the header as 0: the fourth entry, "Two files".
    let EntryKind::Compaction(compaction) = &entries[5].kind else {
        panic!("{:?}", entries[5])
    };
    assert_eq!(compaction.first_kept_entry_id, entries[3].id);
    assert_eq!(session.header().extra["modelId"], "claude-3-5-sonnet-20241022");

    let context = session.build_context();
    assert_eq!(
        describe(&context),
        [
            "compactionSummary",
            "assistant: Two files: a.txt and b.txt.",
            "user: Delete b.txt"
        ]
    );
    assert_eq!(context.thinking_level.as_deref(), Some("low"));
    assert_eq!(
        context.model,
        Some(("anthropic".into(), "claude-3-5-sonnet-20241022".into()))
    );

    let rewritten = std::fs::read_to_string(&path).unwrap();
    assert!(rewritten.lines().next().unwrap().contains(r#""version":3"#));
    assert!(!rewritten.contains("firstKeptEntryIndex"));
    let (again, _) = SessionManager::open(&path).unwrap();
    assert_eq!(again.entries(), session.entries());
}

// ----- writing -----------------------------------------------------------------------------------

/// Appends one entry of every kind, a branch, and a summary branch.
fn populate(session: &mut SessionManager) -> (String, String) {
    session.append_model_change("faux", "faux-1").unwrap();
    session.append_thinking_level_change("medium").unwrap();
    let question = session.append_message(user("List the files")).unwrap();
    let call = ToolCall::new("call_1", "bash", json!({"command": "ls"}));
    session
        .append_message(assistant(
            vec![ContentBlock::text("Listing."), ContentBlock::ToolCall(call)],
            StopReason::ToolUse,
        ))
        .unwrap();
    session
        .append_message(tool_result("call_1", "a.txt\nb.txt", json!({"exitCode": 0})))
        .unwrap();
    let listed = session.append_message(answer("Two files.")).unwrap();
    session.append_label(&question, Some("start")).unwrap();
    let mut bash = Map::new();
    bash.insert("command".into(), json!("wc -l a.txt"));
    bash.insert("output".into(), json!("3 a.txt"));
    bash.insert("exitCode".into(), json!(0));
    bash.insert("cancelled".into(), json!(false));
    bash.insert("truncated".into(), json!(false));
    bash.insert("timestamp".into(), json!(1_767_225_603_000_i64));
    session
        .append_message(AgentMessage::Custom(CustomMessage {
            role: "bashExecution".into(),
            fields: bash,
        }))
        .unwrap();
    session.append_custom("todo", Some(json!({"open": 2}))).unwrap();
    session
        .append_custom_message("reminder", UserContent::Text("Run the tests.".into()), true, None)
        .unwrap();
    session
        .append_compaction(Compaction {
            summary: "Listed the files.".into(),
            first_kept_entry_id: listed.clone(),
            tokens_before: 1234,
            details: Some(json!({"readFiles": []})),
            from_hook: None,
        })
        .unwrap();
    session.append_session_info("  files  ").unwrap();
    session
        .branch_with_summary(Some(&question), "Listed with ls.", None, None)
        .unwrap();
    let last = session.append_message(answer("Another way: find.")).unwrap();
    (question, last)
}

#[test]
fn a_written_session_reopens_to_the_same_entries_and_context() {
    let root = tempfile::tempdir().unwrap();
    let mut session = SessionManager::create("/work/app", root.path()).unwrap();
    let (question, last) = populate(&mut session);
    let file = session.file().unwrap().to_path_buf();
    assert_eq!(
        file.parent().unwrap(),
        root.path().join("--work-app--"),
        "pi's directory for the cwd"
    );
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(name, session_file_name(&session.header().timestamp, session.id()));

    let (reopened, warnings) = SessionManager::open(&file).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(reopened.header(), session.header());
    assert_eq!(reopened.entries(), session.entries());
    assert_eq!(reopened.leaf_id(), Some(last.as_str()));
    assert_eq!(reopened.build_context(), session.build_context());
    assert_eq!(reopened.label(&question), Some("start"));
    assert_eq!(reopened.name(), Some("files"));
    assert_eq!(
        describe(&reopened.build_context()),
        ["user: List the files", "branchSummary", "assistant: Another way: find."]
    );
}

#[test]
fn a_written_file_has_pi_shapes() {
    let root = tempfile::tempdir().unwrap();
    let mut session = SessionManager::create("/work/app", root.path()).unwrap();
    populate(&mut session);
    let text = std::fs::read_to_string(session.file().unwrap()).unwrap();
    insta::assert_snapshot!("written_session_file", normalise(&text));
}

#[test]
fn nothing_is_written_before_the_first_assistant_message() {
    let root = tempfile::tempdir().unwrap();
    let mut session = SessionManager::create("/work/app", root.path()).unwrap();
    session.append_model_change("faux", "faux-1").unwrap();
    session.append_message(user("hi")).unwrap();
    session.append_custom("state", None).unwrap();
    let file = session.file().unwrap().to_path_buf();
    assert!(!file.exists());
    assert!(!session.is_written());
    let dir = root.path().join("--work-app--");
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "the directory exists but is empty"
    );

    session.append_message(answer("hello")).unwrap();
    assert!(session.is_written());
    let text = std::fs::read_to_string(&file).unwrap();
    let types: Vec<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(types, ["session", "model_change", "message", "custom", "message"]);
    session.append_thinking_level_change("low").unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 6);
}

#[test]
fn in_memory_sessions_write_nothing() {
    let cwd = tempfile::tempdir().unwrap();
    let mut session = SessionManager::in_memory(cwd.path());
    let (question, _) = populate(&mut session);
    assert!(session.file().is_none());
    assert!(!session.is_persisted());
    assert!(!session.is_written());
    assert_eq!(std::fs::read_dir(cwd.path()).unwrap().count(), 0);
    let fork = session.fork(&question, cwd.path()).unwrap();
    assert!(fork.file().is_none());
    assert_eq!(fork.entries().len(), 4, "model, thinking, question, and its label");
    assert_eq!(std::fs::read_dir(cwd.path()).unwrap().count(), 0);
    session.new_session(None);
    assert!(session.entries().is_empty() && session.file().is_none());
}

#[test]
fn branching_then_appending_keeps_both_branches_in_one_file() {
    let root = tempfile::tempdir().unwrap();
    let mut session = SessionManager::create("/w", root.path()).unwrap();
    let q = session.append_message(user("2+2?")).unwrap();
    let a1 = session.append_message(answer("4")).unwrap();
    session.branch(&q).unwrap();
    assert_eq!(session.leaf_id(), Some(q.as_str()));
    let a2 = session.append_message(answer("four")).unwrap();
    assert_eq!(session.entry(&a2).unwrap().parent_id.as_deref(), Some(q.as_str()));
    let follow = session.append_message(user("thanks")).unwrap();

    let (reopened, _) = SessionManager::open(session.file().unwrap()).unwrap();
    assert_eq!(reopened.leaf_id(), Some(follow.as_str()));
    assert_eq!(ids(&reopened.path_to_leaf()), [q.clone(), a2.clone(), follow]);
    assert_eq!(ids(&reopened.children(&q)), [a1, a2]);
    assert!(matches!(
        session.branch("nope"),
        Err(StoreError::EntryNotFound { ref id, .. }) if id == "nope"
    ));

    // Back to before the first entry: the next append is a second root.
    session.reset_leaf();
    let root2 = session.append_message(user("start over")).unwrap();
    assert_eq!(session.entry(&root2).unwrap().parent_id, None);
    assert_eq!(session.tree().roots().len(), 2);
    assert_eq!(describe(&session.build_context()), ["user: start over"]);
}

#[test]
fn forking_before_the_first_entry_gives_a_saved_session_naming_its_parent() {
    let root = tempfile::tempdir().unwrap();
    let mut session = SessionManager::create("/work/app", root.path()).unwrap();
    populate(&mut session);
    let mut fork = session.fork_to(None, Some(root.path().into())).unwrap();
    assert!(fork.entries().is_empty());
    assert!(fork.is_persisted(), "the fork of a saved session is saved too");
    assert_eq!(
        fork.header().parent_session.as_deref(),
        Some(session.file().unwrap().to_string_lossy().as_ref())
    );
    fork.append_message(user("again")).unwrap();
    fork.append_message(assistant(vec![ContentBlock::text("answer")], StopReason::Stop))
        .unwrap();
    let (reopened, _) = SessionManager::open(fork.file().unwrap()).unwrap();
    assert_eq!(reopened.entries(), fork.entries());
    // Without a root (pi --no-session), or from an in-memory session, the fork stays in memory.
    assert!(!session.fork_to(None, None).unwrap().is_persisted());
}

#[test]
fn fork_writes_the_path_to_a_new_file_naming_its_parent() {
    let root = tempfile::tempdir().unwrap();
    let mut session = SessionManager::create("/work/app", root.path()).unwrap();
    let (question, _) = populate(&mut session);
    let original = std::fs::read(session.file().unwrap()).unwrap();
    let middle = session.path_to_leaf()[3].id.clone();
    let branch: Vec<_> = session.branch_path(&middle).unwrap();
    assert_eq!(branch.len(), 4);

    let fork = session.fork(&middle, root.path()).unwrap();
    let fork_file = fork.file().unwrap().to_path_buf();
    assert_ne!(fork_file, session.file().unwrap());
    assert_eq!(fork_file.parent(), session.file().unwrap().parent());
    assert_ne!(fork.id(), session.id());
    assert_eq!(
        fork.header().parent_session.as_deref(),
        Some(session.file().unwrap().to_string_lossy().as_ref())
    );
    assert!(fork.is_written(), "a fork is written at once");
    // The path, then the label of the question re-created at the end.
    let fork_ids: Vec<_> = fork.entries().iter().map(|e| e.id.clone()).collect();
    assert_eq!(fork_ids[..4], ids(&branch)[..]);
    assert_eq!(fork.entries().len(), 5);
    assert_eq!(fork.label(&question), Some("start"));
    assert_eq!(fork.leaf_id(), Some(fork_ids[4].as_str()));
    assert_eq!(std::fs::read(session.file().unwrap()).unwrap(), original);

    let (reopened, warnings) = SessionManager::open(&fork_file).unwrap();
    assert!(warnings.is_empty());
    assert_eq!(reopened.entries(), fork.entries());
    assert!(matches!(
        session.fork("nope", root.path()),
        Err(StoreError::EntryNotFound { .. })
    ));
}

/// pi re-creates a fork's labels in the order they were set (a label changed later keeps its
/// place, one cleared and set again moves to the end), each with the time of the entry that set
/// it — not in path order, not stamped anew.
#[test]
fn fork_recreates_labels_in_pis_order_with_their_times() {
    let root = tempfile::tempdir().unwrap();
    let mut session = SessionManager::create("/w", root.path()).unwrap();
    let q = session.append_message(user("q")).unwrap();
    let a = session.append_message(answer("a")).unwrap();
    let q2 = session.append_message(user("q2")).unwrap();
    let a2 = session.append_message(answer("a2")).unwrap();
    session.append_label(&a2, Some("second")).unwrap();
    std::thread::sleep(Duration::from_millis(3));
    let set_q = session.append_label(&q, Some("first")).unwrap();
    session.append_label(&q2, Some("dropped")).unwrap();
    session.append_label(&a2, None).unwrap();
    session.append_label(&q2, Some("")).unwrap();
    std::thread::sleep(Duration::from_millis(3));
    let set_a2 = session.append_label(&a2, Some("again")).unwrap();
    session.append_label(&a, Some("ans")).unwrap();
    std::thread::sleep(Duration::from_millis(3));
    let set_a = session.append_label(&a, Some("ans2")).unwrap();
    let leaf = session.leaf_id().unwrap().to_owned();
    std::thread::sleep(Duration::from_millis(3));

    let fork = session.fork(&leaf, root.path()).unwrap();
    let labels: Vec<(String, String, String)> = fork.entries()[4..]
        .iter()
        .map(|entry| match &entry.kind {
            EntryKind::Label { target_id, label } => {
                (target_id.clone(), label.clone().unwrap(), entry.timestamp.clone())
            }
            other => panic!("not a label: {other:?}"),
        })
        .collect();
    let time = |id: &str| session.entry(id).unwrap().timestamp.clone();
    assert_eq!(
        labels,
        [
            (q.clone(), "first".to_owned(), time(&set_q)),
            (a2.clone(), "again".to_owned(), time(&set_a2)),
            (a.clone(), "ans2".to_owned(), time(&set_a)),
        ]
    );
    assert_eq!(fork.entries().len(), 7);
}

#[test]
fn new_session_starts_empty_with_a_parent() {
    let root = tempfile::tempdir().unwrap();
    let mut session = SessionManager::create("/w", root.path()).unwrap();
    session.append_message(user("hi")).unwrap();
    session.append_message(answer("hello")).unwrap();
    let old = session.file().unwrap().to_path_buf();
    let old_id = session.id().to_owned();
    let new_file = session
        .new_session(Some(old.to_string_lossy().into_owned()))
        .unwrap()
        .to_path_buf();
    assert_ne!(new_file, old);
    assert_eq!(new_file.parent(), old.parent());
    assert_ne!(session.id(), old_id);
    assert!(session.entries().is_empty() && session.leaf_id().is_none());
    session.append_message(user("again")).unwrap();
    session.append_message(answer("hi again")).unwrap();
    let header: Value =
        serde_json::from_str(std::fs::read_to_string(&new_file).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(header["parentSession"], old.to_string_lossy().as_ref());
}

// ----- torn files ----------------------------------------------------------------------------------

fn written_session(root: &Path, turns: usize) -> (SessionManager, PathBuf) {
    let mut session = SessionManager::create("/w", root).unwrap();
    for turn in 0..turns {
        session.append_message(user(&format!("question {turn}"))).unwrap();
        session.append_message(answer(&format!("answer {turn}"))).unwrap();
    }
    let file = session.file().unwrap().to_path_buf();
    (session, file)
}

#[test]
fn a_torn_last_line_loses_nothing_before_it() {
    let root = tempfile::tempdir().unwrap();
    let (session, file) = written_session(root.path(), 3);
    let text = std::fs::read_to_string(&file).unwrap();
    // A crash in the middle of the last write.
    let torn = &text[..text.len() - 25];
    std::fs::write(&file, torn).unwrap();

    let (reopened, warnings) = SessionManager::open(&file).unwrap();
    assert_eq!(reopened.entries(), &session.entries()[..5]);
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].path, file);
    assert_eq!(warnings[0].line, 7);
    assert!(
        warnings[0].to_string().starts_with(&format!(
            "{}:7: skipped a line that is not valid JSON (EOF while parsing",
            file.display()
        )),
        "{}",
        warnings[0]
    );
}

#[test]
fn a_garbage_middle_line_is_skipped_and_the_rest_kept() {
    let root = tempfile::tempdir().unwrap();
    let (session, file) = written_session(root.path(), 2);
    let mut lines: Vec<String> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    lines.insert(3, "\u{0}\u{1}binary garbage".into());
    lines.insert(4, r#"{"type":42}"#.into());
    lines.insert(5, r#""just a string""#.into());
    lines.insert(6, r#"{"type":"message","parentId":null}"#.into());
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();

    let (reopened, warnings) = SessionManager::open(&file).unwrap();
    assert_eq!(reopened.entries(), session.entries());
    let found: Vec<(usize, &str)> = warnings.iter().map(|w| (w.line, w.message.as_str())).collect();
    assert_eq!(
        found,
        [
            (4, "skipped a line that is not valid JSON (expected value at column 1)"),
            (5, "skipped an object without a string \"type\""),
            (6, "skipped a line that is not a JSON object"),
            (7, "skipped a \"message\" entry without a string \"id\""),
        ]
    );
}

#[test]
fn a_missing_or_broken_header_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let no_header = dir.path().join("no-header.jsonl");
    std::fs::write(
        &no_header,
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"x","timestamp":1}}"#,
    )
    .unwrap();
    let error = SessionManager::open(&no_header).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "session file {} has no valid session header: line 1 is a \"message\" entry, not the session header",
            no_header.display()
        )
    );
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    assert!(matches!(
        SessionManager::open(&empty),
        Err(StoreError::InvalidHeader { .. })
    ));
    let no_id = dir.path().join("no-id.jsonl");
    std::fs::write(&no_id, r#"{"type":"session","version":3}"#).unwrap();
    assert!(
        SessionManager::open(&no_id)
            .unwrap_err()
            .to_string()
            .ends_with("the header has no string \"id\"")
    );
    let missing = dir.path().join("missing.jsonl");
    let error = SessionManager::open(&missing).unwrap_err();
    assert!(matches!(error, StoreError::Read { .. }));
    assert!(error.to_string().contains("missing.jsonl"), "{error}");
}

#[test]
fn unknown_entry_types_are_kept_in_the_tree_and_written_back() {
    let root = tempfile::tempdir().unwrap();
    let (_, file) = written_session(root.path(), 1);
    let (session, _) = SessionManager::open(&file).unwrap();
    let leaf = session.leaf_id().unwrap().to_owned();
    let unknown = format!(
        r#"{{"type":"artifact_index","files":["a.rs"],"id":"feedbeef","parentId":"{leaf}","timestamp":"2026-01-01T00:00:09.000Z","v":2}}"#
    );
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str(&unknown);
    text.push('\n');
    std::fs::write(&file, &text).unwrap();

    let (mut session, warnings) = SessionManager::open(&file).unwrap();
    assert!(warnings.is_empty());
    let entry = session.entry("feedbeef").unwrap();
    assert_eq!(entry.entry_type(), "artifact_index");
    assert_eq!(serde_json::to_string(entry).unwrap(), unknown);
    let next = session.append_message(user("after the unknown entry")).unwrap();
    assert_eq!(session.entry(&next).unwrap().parent_id.as_deref(), Some("feedbeef"));
    assert_eq!(
        describe(&session.build_context()).len(),
        3,
        "not a message, but on the path"
    );

    let fork = session.fork(&next, root.path()).unwrap();
    let forked = std::fs::read_to_string(fork.file().unwrap()).unwrap();
    assert!(forked.lines().any(|line| line == unknown));
    assert!(std::fs::read_to_string(&file).unwrap().contains(&unknown));
}

// ----- listing and finding -------------------------------------------------------------------------

fn set_mtime(path: &Path, seconds_after_epoch: u64) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(seconds_after_epoch))
        .unwrap();
}

#[test]
fn continue_recent_picks_the_newest_file_of_the_cwd() {
    let root = tempfile::tempdir().unwrap();
    assert!(
        SessionManager::continue_recent("/w", root.path())
            .unwrap()
            .session
            .is_none()
    );
    let mut files = Vec::new();
    for _ in 0..3 {
        let (session, file) = written_session(root.path(), 1);
        files.push((session.id().to_owned(), file));
    }
    let (_, other_cwd) = {
        let mut s = SessionManager::create("/elsewhere", root.path()).unwrap();
        s.append_message(user("x")).unwrap();
        s.append_message(answer("y")).unwrap();
        (s.id().to_owned(), s.file().unwrap().to_path_buf())
    };
    set_mtime(&files[0].1, 3_000_000);
    set_mtime(&files[1].1, 1_000_000);
    set_mtime(&files[2].1, 2_000_000);
    set_mtime(&other_cwd, 9_000_000);
    // A newer file without a valid header is not a session.
    let bogus = files[0].1.with_file_name("zzz.jsonl");
    std::fs::write(&bogus, "garbage\n").unwrap();
    set_mtime(&bogus, 8_000_000);

    let session = SessionManager::continue_recent("/w", root.path())
        .unwrap()
        .session
        .unwrap();
    assert_eq!(session.id(), files[0].0);
    set_mtime(&files[2].1, 4_000_000);
    let session = SessionManager::continue_recent("/w", root.path())
        .unwrap()
        .session
        .unwrap();
    assert_eq!(session.id(), files[2].0);
}

#[test]
fn list_and_find_by_id_prefix() {
    let root = tempfile::tempdir().unwrap();
    let (mut a, a_file) = written_session(root.path(), 2);
    a.append_session_info("first session").unwrap();
    let (_, b_file) = written_session(root.path(), 1);
    let v3 = copy_fixture(
        "v3_branched.jsonl",
        &root.path().join(cwd_dir_name(Path::new("/home/ana/src/parser"))),
    );

    let listed = SessionManager::list("/w", root.path()).unwrap();
    assert_eq!(listed.len(), 2);
    let info = listed.iter().find(|i| i.path == a_file).unwrap();
    assert_eq!(info.id, a.id());
    assert_eq!(info.cwd, "/w");
    assert_eq!(info.message_count, 4);
    assert_eq!(info.first_message.as_deref(), Some("question 0"));
    assert_eq!(info.name.as_deref(), Some("first session"));
    assert!(listed[0].modified >= listed[1].modified);

    let all = SessionManager::list_all(root.path()).unwrap();
    assert_eq!(all.len(), 3);
    let fixture_info = all.iter().find(|i| i.path == v3).unwrap();
    assert_eq!(fixture_info.message_count, 12);
    assert_eq!(fixture_info.name.as_deref(), Some("tokenizer fix"));
    assert_eq!(
        fixture_info.first_message.as_deref(),
        Some("The tokenizer test `splits_on_unicode_whitespace` fails. Fix it.")
    );
    assert_eq!(
        fixture_info.modified,
        SystemTime::UNIX_EPOCH + Duration::from_millis(1_772_442_877_198),
        "the newest user or assistant message"
    );
    assert_eq!(all[0].path, v3, "newest activity first");

    // By unique id prefix, in this cwd first, then everywhere.
    let found = SessionManager::find(root.path(), "/w", &a.id()[..8]).unwrap();
    assert_eq!(found, a_file);
    let found = SessionManager::find(root.path(), "/w", "5d1f0c").unwrap();
    assert_eq!(found, v3);
    let found = SessionManager::find(root.path(), "/", b_file.to_str().unwrap()).unwrap();
    assert_eq!(found, b_file);
    let error = SessionManager::find(root.path(), "/w", "").unwrap_err();
    assert!(matches!(error, StoreError::NoMatch { .. }), "{error}");
    let error = SessionManager::find(root.path(), "/w", "nothing-like-this").unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("no session matches \"nothing-like-this\" in {}", root.path().display())
    );
    // A prefix that both sessions of /w share is ambiguous (ids are random: use the longest one).
    let b_id = SessionManager::open(&b_file).unwrap().0.id().to_owned();
    let common: String = a
        .id()
        .chars()
        .zip(b_id.chars())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect();
    if !common.is_empty() {
        assert!(matches!(
            SessionManager::find(root.path(), "/w", &common),
            Err(StoreError::Ambiguous { .. })
        ));
    }
}
