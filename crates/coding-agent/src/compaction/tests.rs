//! Cut points, preparation and serialization against hand-built branches.

use pi_agent_core::{AgentMessage, ContentBlock, Model, StopReason};
use pi_session_store::{SessionEntry, SessionManager};
use pi_test_support::messages::{assistant, tool_result, user};
use serde_json::json;

use super::*;
use crate::resolve::resolve_reminder;

fn model() -> Model {
    Model::unknown()
}

/// `n` characters of text: `n / 4` tokens.
fn chars(n: usize) -> String {
    "x".repeat(n)
}

fn text(n: usize) -> AgentMessage {
    assistant(&model(), vec![ContentBlock::text(chars(n))], StopReason::Stop)
}

fn call(id: &str, name: &str, path: &str) -> AgentMessage {
    assistant(
        &model(),
        vec![ContentBlock::ToolCall(pi_agent_core::ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: json!({"path": path}),
            thought_signature: None,
            namespace: None,
        })],
        StopReason::ToolUse,
    )
}

fn result(id: &str, name: &str, n: usize) -> AgentMessage {
    tool_result(id, name, vec![ContentBlock::text(chars(n))], false)
}

fn store(messages: Vec<AgentMessage>) -> SessionManager {
    let mut store = SessionManager::in_memory("/tmp");
    for message in messages {
        store.append_message(message).unwrap();
    }
    store
}

fn settings(keep: u64) -> CompactionSettings {
    CompactionSettings {
        enabled: true,
        reserve_tokens: 1000,
        keep_recent_tokens: keep,
    }
}

fn prepare(store: &SessionManager, keep: u64, protected: &Protected) -> Option<CompactionPreparation> {
    let path: Vec<&SessionEntry> = store.path_to_leaf();
    prepare_compaction(&path, &settings(keep), protected)
}

fn index_of(store: &SessionManager, id: &str) -> usize {
    store.entries().iter().position(|e| e.id == id).unwrap()
}

#[test]
fn the_cut_lands_on_the_user_message_where_the_budget_is_reached() {
    // u0 a1 u2 a3 u4 a5, 100 tokens each.
    let s = store(vec![
        user(&chars(400)),
        text(400),
        user(&chars(400)),
        text(400),
        user(&chars(400)),
        text(400),
    ]);
    let p = prepare(&s, 150, &Protected::default()).unwrap();
    assert_eq!(index_of(&s, &p.first_kept_entry_id), 4);
    assert!(!p.is_split_turn);
    assert_eq!(p.messages_to_summarize.len(), 4);
    assert!(p.turn_prefix_messages.is_empty());
    assert_eq!(p.previous_summary, None);
}

#[test]
fn a_cut_never_separates_a_tool_call_from_its_result() {
    // u0 a1(call) r2 a3(call) r4 a5: the budget is reached at the result r4, which is not a cut
    // point; the next valid one after it is a5 — the calls stay with their results.
    let s = store(vec![
        user(&chars(40)),
        call("c1", "read", "a.txt"),
        result("c1", "read", 400),
        call("c2", "read", "b.txt"),
        result("c2", "read", 800),
        text(40),
    ]);
    let p = prepare(&s, 100, &Protected::default()).unwrap();
    let kept = index_of(&s, &p.first_kept_entry_id);
    assert_eq!(kept, 5);
    // A split turn: its beginning (u0 … r4) is summarized on its own.
    assert!(p.is_split_turn);
    assert!(p.messages_to_summarize.is_empty());
    assert_eq!(p.turn_prefix_messages.len(), 5);
    assert_eq!(
        p.file_ops.file_lists(),
        (vec!["a.txt".to_owned(), "b.txt".to_owned()], vec![])
    );
}

#[test]
fn repeated_compaction_starts_at_the_previous_kept_entry_and_carries_its_files() {
    let mut s = store(vec![user(&chars(400)), text(400), user(&chars(400)), text(400)]);
    let first_kept = s.entries()[2].id.clone();
    s.append_compaction(pi_session_store::Compaction {
        summary: "old summary".into(),
        first_kept_entry_id: first_kept,
        tokens_before: 500,
        details: Some(json!({"readFiles": ["r.txt"], "modifiedFiles": ["m.txt"]})),
        from_hook: Some(false),
    })
    .unwrap();
    assert!(
        prepare(&s, 10, &Protected::default()).is_none(),
        "the branch ends with a compaction"
    );
    s.append_message(user(&chars(400))).unwrap();
    s.append_message(call("c", "edit", "e.txt")).unwrap();
    s.append_message(result("c", "edit", 4)).unwrap();
    s.append_message(text(400)).unwrap();
    // u0 a1 u2 a3 C u5 a6(call) r7 a8: the budget is reached at a8, which splits its turn.
    let p = prepare(&s, 50, &Protected::default()).unwrap();
    assert_eq!(p.previous_summary.as_deref(), Some("old summary"));
    // The span starts at the previous first kept entry (u2), not after the compaction.
    assert_eq!(p.messages_to_summarize.len(), 2);
    assert!(matches!(&p.messages_to_summarize[0], AgentMessage::User(_)));
    assert!(p.is_split_turn);
    assert_eq!(p.turn_prefix_messages.len(), 3);
    assert_eq!(
        p.file_ops.file_lists(),
        (vec!["r.txt".to_owned()], vec!["e.txt".to_owned(), "m.txt".to_owned()])
    );
}

#[test]
fn an_unanswered_tool_call_is_never_summarized() {
    // u0 a1 u2 a3(call, no result yet) u4 a5: the budget alone would cut at u4.
    let s = store(vec![
        user(&chars(400)),
        text(400),
        user(&chars(400)),
        call("open", "bash", "x"),
        user(&chars(400)),
        text(400),
    ]);
    let p = prepare(&s, 150, &Protected::default()).unwrap();
    assert_eq!(index_of(&s, &p.first_kept_entry_id), 3);
    let summarized = serialize_conversation(&p.messages_to_summarize);
    assert!(!summarized.contains("bash("), "{summarized}");
}

#[test]
fn a_pending_preview_its_staging_call_and_its_reminder_stay_in_the_context() {
    let mut s = store(vec![
        user(&chars(400)),
        text(400),
        user(&chars(400)),
        call("stage", "ast_edit", "src/lib.rs"),
        result("stage", "ast_edit", 40),
    ]);
    let reminder = resolve_reminder("ast_edit");
    let AgentMessage::Custom(custom) = &reminder else {
        unreachable!()
    };
    s.append_custom_message(
        "resolve-reminder",
        pi_agent_core::UserContent::Text(custom.fields["content"].as_str().unwrap().to_owned()),
        false,
        None,
    )
    .unwrap();
    s.append_message(text(400)).unwrap();
    s.append_message(user(&chars(400))).unwrap();
    s.append_message(text(400)).unwrap();
    // Without a pending preview the budget cuts at the last user message.
    let free = prepare(&s, 150, &Protected::default()).unwrap();
    assert_eq!(index_of(&s, &free.first_kept_entry_id), 7);
    // With one, the call that staged it (entry 3) is kept, and so everything after it.
    let protected = Protected {
        pending_sources: vec!["ast_edit".into()],
    };
    let p = prepare(&s, 150, &protected).unwrap();
    assert_eq!(index_of(&s, &p.first_kept_entry_id), 3);
    let path = s.path_to_leaf();
    let context = pi_session_store::build_context(&path[index_of(&s, &p.first_kept_entry_id)..]);
    assert!(context.messages.iter().any(|m| matches!(m, AgentMessage::Custom(c)
        if c.fields.get("customType").and_then(|v| v.as_str()) == Some("resolve-reminder"))));
    // Nothing left to summarize when the protected call is the first message.
    let s2 = store(vec![
        call("stage", "ast_edit", "a"),
        result("stage", "ast_edit", 4000),
        text(4000),
    ]);
    assert!(prepare(&s2, 10, &protected).is_none());
}

#[test]
fn serialization_is_pis_text() {
    let messages = vec![
        user("What is in a.txt?"),
        assistant(
            &model(),
            vec![
                ContentBlock::Thinking(pi_agent_core::ThinkingContent {
                    thinking: "Let me look.".into(),
                    ..Default::default()
                }),
                ContentBlock::text("Reading."),
                ContentBlock::ToolCall(pi_agent_core::ToolCall {
                    id: "c".into(),
                    name: "read".into(),
                    arguments: json!({"path": "a.txt", "limit": 5}),
                    thought_signature: None,
                    namespace: None,
                }),
            ],
            StopReason::ToolUse,
        ),
        tool_result("c", "read", vec![ContentBlock::text(chars(2005))], false),
    ];
    let text = serialize_conversation(&messages);
    insta::assert_snapshot!(text.replace(&chars(1990), "<1990 x>"));
}

#[test]
fn file_sections_are_appended_as_pi_writes_them() {
    assert_eq!(format_file_operations(&[], &[]), "");
    assert_eq!(
        format_file_operations(&["a".into()], &["b".into(), "c".into()]),
        "\n\n<read-files>\na\n</read-files>\n\n<modified-files>\nb\nc\n</modified-files>"
    );
}

#[test]
fn context_usage_json_writes_numbers_as_javascript() {
    let usage = ContextUsage {
        tokens: Some(405),
        context_window: 2000,
        percent: Some(20.25),
    };
    assert_eq!(
        usage.to_json(),
        json!({"tokens": 405, "contextWindow": 2000, "percent": 20.25})
    );
    let whole = ContextUsage {
        percent: Some(30.0),
        ..usage
    };
    assert_eq!(
        whole.to_json().to_string(),
        r#"{"tokens":405,"contextWindow":2000,"percent":30}"#
    );
    let unknown = ContextUsage {
        tokens: None,
        context_window: 2000,
        percent: None,
    };
    assert_eq!(
        unknown.to_json(),
        json!({"tokens": null, "contextWindow": 2000, "percent": null})
    );
}

// ----- branch summaries ------------------------------------------------------------------------

fn entries(store: &SessionManager) -> Vec<SessionEntry> {
    store.path_to_leaf().into_iter().cloned().collect()
}

#[test]
fn branch_entries_run_from_the_old_leaf_back_to_the_common_ancestor() {
    let mut store = store(vec![user("a"), text(4)]);
    let fork = store.leaf_id().unwrap().to_owned();
    store.append_message(user("b")).unwrap();
    let b_answer = store.append_message(text(8)).unwrap();
    store.branch(&fork).unwrap();
    let target = store.append_message(user("c")).unwrap();
    let collected = collect_entries_for_branch_summary(&store, Some(&b_answer), &target);
    assert_eq!(collected.common_ancestor_id.as_deref(), Some(fork.as_str()));
    assert_eq!(collected.entries.len(), 2);
    assert_eq!(collected.entries[1].id, b_answer);
    // Going back up the same branch: the entries below the target.
    let up = collect_entries_for_branch_summary(&store, Some(&b_answer), &fork);
    assert_eq!(up.entries.len(), 2);
    assert_eq!(
        collect_entries_for_branch_summary(&store, None, &fork),
        BranchEntries::default()
    );
}

#[test]
fn the_branch_budget_keeps_the_newest_messages_and_skips_tool_results() {
    // Newest first: 10 + 0 (tool result) + 10 + 100 tokens; a budget of 50 stops at the 100.
    let store = store(vec![
        user(&chars(400)),
        call("c1", "read", "old.rs"),
        result("c1", "read", 4000),
        text(40),
    ]);
    let prepared = prepare_branch_entries(&entries(&store), 50);
    assert_eq!(prepared.messages.len(), 2, "{:?}", prepared.messages);
    assert!(prepared.messages.iter().all(|m| m.as_assistant().is_some()));
    assert_eq!(prepared.file_ops.read.iter().collect::<Vec<_>>(), ["old.rs"]);
    // No budget: everything but the tool result.
    assert_eq!(prepare_branch_entries(&entries(&store), 0).messages.len(), 3);
}

#[test]
fn a_summary_over_the_budget_still_fits_while_under_ninety_percent() {
    // A compaction of ~100 tokens, then `newest` characters of answer.
    let branch = |newest: usize| {
        let mut store = store(vec![user("a")]);
        let first = store.leaf_id().unwrap().to_owned();
        store
            .append_compaction(pi_session_store::Compaction {
                summary: chars(400),
                first_kept_entry_id: first,
                tokens_before: 5,
                details: None,
                from_hook: None,
            })
            .unwrap();
        store.append_message(text(newest)).unwrap();
        entries(&store)[1..].to_vec()
    };
    // 10 tokens used of 50 (< 45): the compaction goes in anyway, then it stops.
    let prepared = prepare_branch_entries(&branch(40), 50);
    assert_eq!(prepared.messages.len(), 2);
    assert!(matches!(&prepared.messages[0], AgentMessage::Custom(c) if c.role == "compactionSummary"));
    // 46 of 50 used: it does not.
    let prepared = prepare_branch_entries(&branch(184), 50);
    assert_eq!(prepared.messages.len(), 1, "{:?}", prepared.messages);
    assert!(prepared.messages[0].as_assistant().is_some());
}

#[test]
fn file_lists_accumulate_from_earlier_branch_summaries_but_not_from_hooks() {
    let mut store = store(vec![user("a")]);
    let first = store.leaf_id().unwrap().to_owned();
    store
        .branch_with_summary(
            Some(&first),
            "earlier",
            Some(json!({"readFiles": ["r.txt"], "modifiedFiles": ["m.txt"]})),
            Some(false),
        )
        .unwrap();
    store
        .branch_with_summary(
            store.leaf_id().map(str::to_owned).as_deref(),
            "hooked",
            Some(json!({"readFiles": ["hook.txt"]})),
            Some(true),
        )
        .unwrap();
    store.append_message(call("c1", "edit", "e.rs")).unwrap();
    let prepared = prepare_branch_entries(&entries(&store), 0);
    assert_eq!(
        prepared.file_ops.file_lists(),
        (vec!["r.txt".to_owned()], vec!["e.rs".to_owned(), "m.txt".to_owned()])
    );
}

/// A damaged file whose parent ids close a loop (`a` ↔ `b`): collecting the abandoned entries
/// used to walk parent ids by hand and never ended, so `/tree` hung.
#[test]
fn branch_entries_end_on_a_cyclic_damaged_file() {
    let line = |id: &str, parent: Option<&str>| {
        json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": id, "timestamp": 1}})
        .to_string()
    };
    let header = json!({"type": "session", "version": 3, "id": "s1",
        "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"});
    let text = format!(
        "{header}\n{}\n{}\n{}\n{}\n",
        line("r", None),
        line("a", Some("b")),
        line("b", Some("a")),
        line("s", Some("s"))
    );
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
    let (store, _) = SessionManager::open(&path).unwrap_or_else(|e| panic!("{e}"));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let ids = |leaf: &str| -> Vec<String> {
            collect_entries_for_branch_summary(&store, Some(leaf), "r")
                .entries
                .into_iter()
                .map(|e| e.id)
                .collect()
        };
        let _ = tx.send((ids("b"), ids("s")));
    });
    let (cyclic, self_parented) = rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .unwrap_or_else(|_| panic!("collecting the branch entries did not end"));
    assert_eq!(cyclic, ["a", "b"]);
    assert_eq!(self_parented, ["s"]);
}
