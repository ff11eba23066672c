//! Unit tests of [`SessionManager`] that need its insides (injected write failures).

use pi_agent_core::{AgentMessage, AssistantMessage, ContentBlock, ToolResultMessage};
use proptest::prelude::*;
use serde_json::json;

use super::*;

fn assistant(text: &str) -> AgentMessage {
    AssistantMessage {
        content: vec![ContentBlock::text(text)],
        provider: "faux".into(),
        model: "m".into(),
        ..Default::default()
    }
    .into()
}

fn tool_result(text: &str) -> AgentMessage {
    ToolResultMessage {
        tool_call_id: "c".into(),
        tool_name: "bash".into(),
        content: vec![ContentBlock::text(text)],
        details: Some(json!({"t": text})),
        usage: None,
        added_tool_names: None,
        is_error: false,
        timestamp: 3,
    }
    .into()
}

fn fail_next_write(session: &mut SessionManager, after_bytes: usize) {
    if let Some(writer) = session.writer.as_mut() {
        writer.fail_next_write_after = Some(after_bytes);
    }
}

#[test]
fn a_failed_append_changes_nothing_and_the_next_one_works() {
    let root = tempfile::tempdir().unwrap();
    let mut session = SessionManager::create("/w", root.path()).unwrap();
    let first = session.append_message(AgentMessage::user("hi")).unwrap();
    session.append_message(assistant("hello")).unwrap();
    let file = session.file().unwrap().to_path_buf();
    let before = std::fs::read(&file).unwrap();

    // A full disk in the middle of a line: the torn bytes are cut off again.
    fail_next_write(&mut session, 17);
    let leaf = session.leaf_id().map(str::to_owned);
    let error = session.append_label(&first, Some("greeting")).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "cannot write session file {}: No space left on device (injected)",
            file.display()
        )
    );
    assert_eq!(std::fs::read(&file).unwrap(), before);
    assert_eq!(session.entries().len(), 2);
    assert_eq!(session.leaf_id().map(str::to_owned), leaf);
    assert_eq!(session.label(&first), None);

    session.append_label(&first, Some("greeting")).unwrap();
    let (reopened, warnings) = SessionManager::open(&file).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(reopened.entries(), session.entries());
    assert_eq!(reopened.label(&first), Some("greeting"));
}

#[test]
fn a_failed_first_write_leaves_no_file_and_keeps_earlier_entries() {
    let root = tempfile::tempdir().unwrap();
    let mut session = SessionManager::create("/w", root.path()).unwrap();
    session.append_message(AgentMessage::user("hi")).unwrap();
    let file = session.file().unwrap().to_path_buf();
    fail_next_write(&mut session, 40);
    assert!(session.append_message(assistant("hello")).is_err());
    assert!(!file.exists());
    assert!(!session.is_written());
    assert_eq!(session.entries().len(), 1);
    assert!(!session.has_assistant);

    session.append_message(assistant("hello")).unwrap();
    let (reopened, warnings) = SessionManager::open(&file).unwrap();
    assert!(warnings.is_empty());
    assert_eq!(reopened.entries(), session.entries());
}

#[test]
fn a_failed_branch_with_summary_keeps_the_leaf() {
    let root = tempfile::tempdir().unwrap();
    let mut session = SessionManager::create("/w", root.path()).unwrap();
    let first = session.append_message(AgentMessage::user("hi")).unwrap();
    let answer = session.append_message(assistant("hello")).unwrap();
    fail_next_write(&mut session, 0);
    assert!(session.branch_with_summary(Some(&first), "left", None, None).is_err());
    assert_eq!(session.leaf_id(), Some(answer.as_str()));
    let summary = session.branch_with_summary(Some(&first), "left", None, None).unwrap();
    assert_eq!(
        session.entry(&summary).unwrap().parent_id.as_deref(),
        Some(first.as_str())
    );
}

#[test]
fn appends_to_a_file_with_a_torn_last_line_start_on_a_new_line() {
    let root = tempfile::tempdir().unwrap();
    let mut session = SessionManager::create("/w", root.path()).unwrap();
    session.append_message(AgentMessage::user("hi")).unwrap();
    session.append_message(assistant("hello")).unwrap();
    let file = session.file().unwrap().to_path_buf();
    let mut bytes = std::fs::read(&file).unwrap();
    bytes.extend_from_slice(br#"{"type":"message","id":"torn","#);
    std::fs::write(&file, &bytes).unwrap();

    let (mut reopened, warnings) = SessionManager::open(&file).unwrap();
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].line, 4);
    let id = reopened.append_message(AgentMessage::user("again")).unwrap();
    let (again, warnings) = SessionManager::open(&file).unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].line, 4);
    assert_eq!(again.leaf_id(), Some(id.as_str()));
    assert_eq!(again.entries().len(), 3);
}

#[test]
fn create_at_refuses_to_append_to_another_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("taken.jsonl");
    std::fs::write(&path, "someone else's\n").unwrap();
    let mut session = SessionManager::create_at("/w", &path);
    session.append_message(AgentMessage::user("hi")).unwrap();
    let error = session.append_message(assistant("hello")).unwrap_err();
    assert!(matches!(error, StoreError::Write { .. }), "{error}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "someone else's\n");
}

#[test]
fn duplicate_ids_are_reported_and_the_later_entry_wins() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dup.jsonl");
    let line = |id: &str, text: &str| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
        )
    };
    let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
    let text = format!("{header}\n{}\n{{bad\n{}\n", line("a", "one"), line("a", "two"));
    std::fs::write(&path, text).unwrap();
    let (session, warnings) = SessionManager::open(&path).unwrap();
    assert_eq!(session.entries().len(), 2);
    let lines: Vec<_> = warnings.iter().map(|w| (w.line, w.message.as_str())).collect();
    assert_eq!(
        lines,
        [
            (
                3,
                "skipped a line that is not valid JSON (key must be a string at column 2)"
            ),
            (4, "entry id a is also used on line 2; this later entry wins"),
        ]
    );
    let AgentMessage::User(user) = session.entry("a").unwrap().message().unwrap() else {
        panic!()
    };
    assert_eq!(user.content.text(), "two");
}

#[test]
fn a_flat_session_dir_holds_every_cwd() {
    let dir = tempfile::tempdir().unwrap();
    let flat = SessionRoot::Flat(dir.path().to_path_buf());
    for cwd in ["/a", "/b"] {
        let mut session = SessionManager::create(cwd, &flat).unwrap();
        session.append_message(AgentMessage::user("hi")).unwrap();
        session.append_message(assistant("hello")).unwrap();
        assert_eq!(session.file().unwrap().parent(), Some(dir.path()));
    }
    assert_eq!(SessionManager::list("/a", &flat).unwrap().len(), 2);
    assert_eq!(SessionManager::list_all(&flat).unwrap().len(), 2);
}

#[test]
fn fork_from_copies_another_cwds_session() {
    let root = tempfile::tempdir().unwrap();
    let mut source = SessionManager::create("/w", root.path()).unwrap();
    source.append_message(AgentMessage::user("hi")).unwrap();
    source.append_message(assistant("hello")).unwrap();
    let file = source.file().unwrap().to_path_buf();
    let (copy, warnings) = SessionManager::fork_from(&file, "/other", root.path()).unwrap();
    assert!(warnings.is_empty());
    assert_eq!(copy.cwd(), Path::new("/other"));
    assert_eq!(copy.entries(), source.entries());
    assert_eq!(copy.file().unwrap().parent().unwrap(), root.path().join("--other--"));
    assert_eq!(copy.header().parent_session.as_deref(), file.to_str());
}

#[test]
fn branch_summary_entries_name_where_they_came_from() {
    let mut session = SessionManager::in_memory("/w");
    let summary = session
        .branch_with_summary(None, "nothing yet", None, Some(true))
        .unwrap();
    let entry = session.entry(&summary).unwrap();
    assert_eq!(entry.parent_id, None);
    let EntryKind::BranchSummary(BranchSummary { from_id, from_hook, .. }) = &entry.kind else {
        panic!("{entry:?}")
    };
    assert_eq!((from_id.as_str(), *from_hook), ("root", Some(true)));
    assert!(matches!(
        session.append_label("missing", Some("x")),
        Err(StoreError::EntryNotFound { .. })
    ));
}

// ----- property: appends and branches reload to the same tree and context -----------------------

#[derive(Debug, Clone)]
enum Op {
    User(String),
    Answer(String),
    Tool(String),
    Model(String),
    Thinking(String),
    Custom(u8),
    CustomMessage(String, bool),
    Label(usize, Option<String>),
    Compaction(usize, u32),
    Branch(usize),
    BranchWithSummary(Option<usize>, String),
    Name(String),
}

fn op() -> impl Strategy<Value = Op> {
    let text = "[a-z \\n\"\\\\é😀]{0,12}";
    prop_oneof![
        3 => text.prop_map(Op::User),
        3 => text.prop_map(Op::Answer),
        1 => text.prop_map(Op::Tool),
        1 => "[a-z0-9-]{1,8}".prop_map(Op::Model),
        1 => prop_oneof![Just("off"), Just("low"), Just("high")].prop_map(|s| Op::Thinking(s.to_owned())),
        1 => any::<u8>().prop_map(Op::Custom),
        1 => (text, any::<bool>()).prop_map(|(t, d)| Op::CustomMessage(t, d)),
        1 => (any::<usize>(), proptest::option::of("[a-z]{0,5}")).prop_map(|(i, l)| Op::Label(i, l)),
        1 => (any::<usize>(), any::<u32>()).prop_map(|(i, t)| Op::Compaction(i, t)),
        2 => any::<usize>().prop_map(Op::Branch),
        1 => (proptest::option::of(any::<usize>()), text).prop_map(|(i, s)| Op::BranchWithSummary(i, s)),
        1 => text.prop_map(Op::Name),
    ]
}

fn apply(session: &mut SessionManager, op: &Op) {
    let pick = |session: &SessionManager, i: usize| session.entries()[i % session.entries().len()].id.clone();
    match op {
        Op::User(t) => drop(session.append_message(AgentMessage::user(t.as_str())).unwrap()),
        Op::Answer(t) => drop(session.append_message(assistant(t)).unwrap()),
        Op::Tool(t) => drop(session.append_message(tool_result(t)).unwrap()),
        Op::Model(m) => drop(session.append_model_change("p", m).unwrap()),
        Op::Thinking(l) => drop(session.append_thinking_level_change(l).unwrap()),
        Op::Custom(n) => drop(session.append_custom("state", Some(json!({"n": n}))).unwrap()),
        Op::CustomMessage(t, d) => drop(
            session
                .append_custom_message("note", UserContent::Text(t.clone()), *d, None)
                .unwrap(),
        ),
        Op::Label(i, l) if !session.entries().is_empty() => {
            let target = pick(session, *i);
            session.append_label(&target, l.as_deref()).unwrap();
        }
        Op::Compaction(i, tokens) if !session.entries().is_empty() => {
            let kept = pick(session, *i);
            let compaction = Compaction {
                summary: format!("summary {tokens}"),
                first_kept_entry_id: kept,
                tokens_before: u64::from(*tokens),
                details: None,
                from_hook: Some(false),
            };
            session.append_compaction(compaction).unwrap();
        }
        Op::Branch(i) if !session.entries().is_empty() => {
            let target = pick(session, *i);
            session.branch(&target).unwrap();
        }
        Op::BranchWithSummary(i, s) => {
            let target = match i {
                Some(i) if !session.entries().is_empty() => Some(pick(session, *i)),
                _ => None,
            };
            session.branch_with_summary(target.as_deref(), s, None, None).unwrap();
        }
        Op::Name(n) => drop(session.append_session_info(n).unwrap()),
        _ => {}
    }
}

/// One tree node as plain data: id, parent node, children, label.
type NodeShape = (String, Option<usize>, Vec<usize>, Option<String>);

/// The tree as plain data.
fn tree_shape(session: &SessionManager) -> Vec<NodeShape> {
    let tree = session.tree();
    tree.nodes()
        .iter()
        .map(|n| {
            (
                n.entry.id.clone(),
                n.parent,
                n.children.clone(),
                n.label.map(str::to_owned),
            )
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn appends_and_branches_reload_to_the_same_tree_and_context(
        ops in proptest::collection::vec(op(), 0..40),
        last in "[a-z]{1,6}",
    ) {
        let root = tempfile::tempdir().unwrap();
        let mut session = SessionManager::create("/p", root.path()).unwrap();
        session.append_message(assistant("first answer: the file exists from here on")).unwrap();
        for op in &ops {
            apply(&mut session, op);
        }
        // The leaf of a reopened file is its last entry: end with an append.
        session.append_message(AgentMessage::user(last.as_str())).unwrap();

        let (reopened, warnings) = SessionManager::open(session.file().unwrap()).unwrap();
        prop_assert!(warnings.is_empty(), "{:?}", warnings);
        prop_assert_eq!(reopened.entries(), session.entries());
        prop_assert_eq!(reopened.leaf_id(), session.leaf_id());
        prop_assert_eq!(reopened.build_context(), session.build_context());
        prop_assert_eq!(tree_shape(&reopened), tree_shape(&session));
        prop_assert_eq!(reopened.name(), session.name());
        let in_memory_ids: std::collections::HashSet<_> = session.entries().iter().map(|e| e.id.clone()).collect();
        prop_assert_eq!(in_memory_ids.len(), session.entries().len(), "ids are unique");
    }
}
