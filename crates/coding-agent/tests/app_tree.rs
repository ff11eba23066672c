//! Tree navigation with a branch summary (issue 17), against pi 0.73.1's own recording
//! (`crates/cli/tests/data/pi-0.73.1/`, "Branch summary" in its README): the same summary request,
//! the same `branch_summary` and `label` entries, the same context after; and the [`TreeHook`]
//! seam (`session_before_tree` / `session_tree`), abort, errors.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::{Arc, Mutex};

use pi_agent_core::faux::{FauxModel, FauxResponse, faux_assistant_text};
use pi_agent_core::{AgentMessage, ContentBlock, UserContent};
use pi_coding_agent::compaction::{
    BeforeTree, BeforeTreeEvent, BranchSummarySettings, SuppliedBranchSummary, TreeEvent, TreeHook,
};
use pi_coding_agent::{App, AppError, NavigateOptions, NavigateOutcome, convert_to_llm};
use pi_session_store::{EntryKind, SessionManager};
use serde_json::{Value, json};

use crate::support::faux_session;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../cli/tests/data/pi-0.73.1");

fn data(name: &str) -> String {
    std::fs::read_to_string(format!("{DATA}/{name}")).unwrap()
}

/// `<entry N>` of the recording as a real id.
fn id(n: usize) -> String {
    format!("{n:08x}")
}

/// A faux model like the recording's: `mock/mock-model`, context window 20 000.
fn faux() -> FauxModel {
    faux_at(None)
}

fn faux_at(tokens_per_second: Option<f64>) -> FauxModel {
    let mut model = FauxModel::new().model();
    model.provider = "mock".into();
    model.id = "mock-model".into();
    model.context_window = 20_000;
    let builder = FauxModel::builder().model(model);
    match tokens_per_second {
        Some(rate) => builder.tokens_per_second(rate).build(),
        None => builder.build(),
    }
}

/// pi's session file up to the last answer before the navigation (its first `lines` lines), ids
/// and placeholders made real, opened in an app over `faux`.
fn pi_session(dir: &Path, faux: &FauxModel, lines: usize) -> App {
    let mut text = String::new();
    for line in data("branch-session.jsonl").lines().take(lines) {
        let mut line = line
            .replace("\"<time>\"", "\"2026-11-26T18:41:40.000Z\"")
            .replace("\"<cwd>\"", &format!("{:?}", dir.display().to_string()))
            .replace("\"<session-id>\"", "\"01a21929-d11c-76fa-a275-be81326c3eff\"");
        for n in (1..lines).rev() {
            line = line.replace(&format!("\"<entry {n}>\""), &format!("\"{}\"", id(n)));
        }
        text.push_str(&line);
        text.push('\n');
    }
    let file = dir.join("session.jsonl");
    std::fs::write(&file, text).unwrap();
    let (store, warnings) = SessionManager::open(&file).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let app = App::new(
        faux_session(dir, faux, &["read", "write"]),
        store,
        Arc::new(pi_ai::ModelRegistry::builtin()),
        None,
        Arc::new(|warning| panic!("{warning}")),
    );
    app.start(true, true);
    app.set_branch_summary_settings(BranchSummarySettings {
        reserve_tokens: 19_900,
        skip_prompt: false,
    });
    app
}

/// The file's entries, ids back to `<entry N>` (N: the line), times to `<time>`.
fn normalized(file: &Path) -> Vec<Value> {
    let entries: Vec<Value> = std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: std::collections::HashMap<String, String> = entries
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, e)| (e["id"].as_str().unwrap().to_owned(), format!("<entry {i}>")))
        .collect();
    entries
        .into_iter()
        .map(|mut entry| {
            fn walk(value: &mut Value, ids: &std::collections::HashMap<String, String>) {
                match value {
                    Value::Object(map) => {
                        for (key, field) in map.iter_mut() {
                            match field {
                                Value::String(text) if key == "timestamp" => *text = "<time>".into(),
                                Value::Number(_) if key == "timestamp" => *field = json!(0),
                                Value::String(text) if ids.contains_key(text.as_str()) => {
                                    *text = ids[text.as_str()].clone()
                                }
                                _ => walk(field, ids),
                            }
                        }
                    }
                    Value::Array(items) => items.iter_mut().for_each(|item| walk(item, ids)),
                    _ => {}
                }
            }
            walk(&mut entry, &ids);
            entry
        })
        .collect()
}

fn text_of(message: &AgentMessage) -> String {
    match message {
        AgentMessage::User(user) => match &user.content {
            UserContent::Text(text) => text.clone(),
            UserContent::Blocks(blocks) => blocks.iter().filter_map(ContentBlock::as_text).collect(),
        },
        _ => panic!("a user message: {message:?}"),
    }
}

/// What a summary request held: system prompt, prompt text, output limit, whether reasoning.
type SummaryRequest = (String, String, Option<u64>, bool);

#[tokio::test]
async fn a_summarized_navigation_sends_pis_request_and_writes_pis_entries() {
    let dir = tempfile::tempdir().unwrap();
    let faux = faux();
    // (system prompt, prompt text, max tokens, reasoning) of the summary request; the context of
    // the prompt after.
    let summary_request: Arc<Mutex<Option<SummaryRequest>>> = Arc::default();
    let after: Arc<Mutex<Vec<String>>> = Arc::default();
    let (seen, seen_after) = (summary_request.clone(), after.clone());
    faux.set_responses([
        FauxResponse::factory(move |request| {
            assert!(request.context.tools.is_empty(), "no tools in a summary request");
            *seen.lock().unwrap() = Some((
                request.context.system_prompt.to_owned(),
                text_of(&request.context.messages[0]),
                request.options.max_tokens,
                request.options.reasoning.is_some(),
            ));
            faux_assistant_text("## Goal\nRead a.txt and write b.txt.")
        }),
        FauxResponse::factory(move |request| {
            *seen_after.lock().unwrap() = convert_to_llm(request.context.messages).iter().map(text_of).collect();
            faux_assistant_text("Starting over.")
        }),
    ]);
    let app = pi_session(dir.path(), &faux, 11);
    let outcome = app
        .navigate_tree(
            &id(3),
            NavigateOptions {
                summarize: true,
                custom_instructions: Some("Keep the file names".into()),
                replace_instructions: false,
                label: Some("explored".into()),
            },
        )
        .await
        .unwrap();
    assert_eq!(outcome.editor_text.as_deref(), Some("Read a.txt"));
    assert!(!outcome.cancelled && !outcome.aborted);
    assert!(matches!(
        outcome.summary_entry.map(|e| e.kind),
        Some(EntryKind::BranchSummary(_))
    ));
    // The summary request is pi's: system prompt, the serialized branch within the budget (the
    // long second prompt does not fit 20 000 − 19 900), the prompt with the instructions, 2 048
    // tokens, no reasoning.
    let recorded: Value = serde_json::from_str(&data("branch-requests.json")).unwrap();
    let (system, prompt, max_tokens, reasoning) = summary_request.lock().unwrap().clone().unwrap();
    assert_eq!(system, recorded[0]["messages"][0]["content"].as_str().unwrap());
    assert_eq!(
        prompt,
        recorded[0]["messages"][1]["content"][0]["text"].as_str().unwrap()
    );
    assert_eq!(Some(2048), max_tokens);
    assert_eq!(recorded[0]["max_completion_tokens"], 2048);
    assert!(!reasoning);
    // The agent's context is the summary alone, and the next prompt sends what pi sends.
    app.prompt(AgentMessage::user("Start over")).await.unwrap();
    let expected: Vec<String> = recorded[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"][0]["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(*after.lock().unwrap(), expected);
    // The file: pi's entries, line for line (the answers' own fields aside).
    let ours = normalized(&dir.path().join("session.jsonl"));
    let theirs: Vec<Value> = data("branch-session.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(ours.len(), theirs.len());
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate().skip(11).take(3) {
        let mut b = b.clone();
        if b["type"] == "message" {
            b["message"]["timestamp"] = json!(0);
        }
        assert_eq!(a, &b, "entry {i}");
    }
    assert_eq!(ours[14]["type"], "message");
    assert_eq!(ours[14]["parentId"], "<entry 13>");
}

#[tokio::test]
async fn without_a_summary_the_leaf_moves_and_the_label_goes_on_the_target() {
    let dir = tempfile::tempdir().unwrap();
    let faux = faux();
    let app = pi_session(dir.path(), &faux, 11);
    let outcome = app
        .navigate_tree(
            &id(6),
            NavigateOptions {
                label: Some("here".into()),
                ..NavigateOptions::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(outcome.editor_text, None, "an assistant message is the new leaf itself");
    assert_eq!(faux.call_count(), 0, "no model call");
    let (leaf_parent, label) = app.with_store(|store| {
        let leaf = store.entry(store.leaf_id().unwrap()).unwrap().clone();
        (leaf.parent_id.clone(), store.label(&id(6)).map(str::to_owned))
    });
    assert_eq!(
        leaf_parent.as_deref(),
        Some(id(6).as_str()),
        "the label entry hangs below it"
    );
    assert_eq!(label.as_deref(), Some("here"));
    // Navigating to where it already is changes nothing.
    let before = app.with_store(|store| store.entries().len());
    let leaf = app.with_store(|store| store.leaf_id().unwrap().to_owned());
    let again = app.navigate_tree(&leaf, NavigateOptions::default()).await.unwrap();
    assert!(!again.cancelled);
    assert_eq!(app.with_store(|store| store.entries().len()), before);
    // An unknown entry is pi's error.
    let error = app.navigate_tree("nope", NavigateOptions::default()).await.unwrap_err();
    assert_eq!(error.to_string(), "Entry nope not found");
}

/// Records what the hook saw and answers with `answer`.
struct Hook {
    answer: BeforeTree,
    seen: Arc<Mutex<Vec<String>>>,
}

#[async_trait::async_trait]
impl TreeHook for Hook {
    async fn before_tree(&self, event: BeforeTreeEvent<'_>) -> BeforeTree {
        let p = event.preparation;
        self.seen.lock().unwrap().push(format!(
            "before target={} old={:?} ancestor={:?} entries={} wants={} instructions={:?}",
            p.target_id,
            p.old_leaf_id,
            p.common_ancestor_id,
            p.entries_to_summarize.len(),
            p.user_wants_summary,
            p.custom_instructions
        ));
        self.answer.clone()
    }

    async fn after_tree(&self, event: TreeEvent<'_>) {
        self.seen.lock().unwrap().push(format!(
            "after new={:?} old={:?} summary={} fromExtension={:?}",
            event.new_leaf_id,
            event.old_leaf_id,
            event.summary_entry.is_some(),
            event.from_extension
        ));
    }
}

#[tokio::test]
async fn a_hook_can_cancel_the_navigation() {
    let dir = tempfile::tempdir().unwrap();
    let faux = faux();
    let app = pi_session(dir.path(), &faux, 11);
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    app.add_tree_hook(Arc::new(Hook {
        answer: BeforeTree {
            cancel: true,
            ..BeforeTree::default()
        },
        seen: seen.clone(),
    }));
    let leaf = app.with_store(|store| store.leaf_id().unwrap().to_owned());
    let outcome = app.navigate_tree(&id(3), summarize()).await.unwrap();
    assert!(outcome.cancelled && !outcome.aborted);
    assert_eq!(app.with_store(|store| store.leaf_id().unwrap().to_owned()), leaf);
    assert_eq!(faux.call_count(), 0);
    assert_eq!(
        *seen.lock().unwrap(),
        [format!(
            "before target={} old=Some(\"{}\") ancestor=Some(\"{}\") entries=7 wants=true instructions=None",
            id(3),
            id(10),
            id(3)
        )]
    );
}

#[tokio::test]
async fn a_hook_can_supply_the_summary_and_change_the_label() {
    let dir = tempfile::tempdir().unwrap();
    let faux = faux();
    let app = pi_session(dir.path(), &faux, 11);
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    app.add_tree_hook(Arc::new(Hook {
        answer: BeforeTree {
            summary: Some(SuppliedBranchSummary {
                summary: "Hook summary.".into(),
                details: Some(json!({"mine": 1})),
            }),
            label: Some("hooked".into()),
            ..BeforeTree::default()
        },
        seen: seen.clone(),
    }));
    let outcome = app.navigate_tree(&id(7), summarize()).await.unwrap();
    assert_eq!(faux.call_count(), 0, "the hook's summary, no model call");
    let entry = outcome.summary_entry.unwrap();
    let EntryKind::BranchSummary(summary) = &entry.kind else {
        panic!("{entry:?}")
    };
    assert_eq!(summary.summary, "Hook summary.");
    assert_eq!(summary.details, Some(json!({"mine": 1})));
    assert_eq!(summary.from_hook, Some(true));
    // A user message: the summary hangs below its parent.
    assert_eq!(entry.parent_id.as_deref(), Some(id(6).as_str()));
    assert_eq!(summary.from_id, id(6));
    assert_eq!(
        app.with_store(|store| store.label(&entry.id).map(str::to_owned)),
        Some("hooked".into())
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert!(
        seen[1].ends_with("summary=true fromExtension=Some(true)"),
        "{}",
        seen[1]
    );
    // The context is the path to the summary: the first turn, then the summary.
    let messages = app.session().agent().messages();
    let last = convert_to_llm(&messages).pop().unwrap();
    assert!(text_of(&last).ends_with("<summary>\nHook summary.</summary>"));
}

/// Navigation options asking for a summary.
fn summarize() -> NavigateOptions {
    NavigateOptions {
        summarize: true,
        ..NavigateOptions::default()
    }
}

/// `count` summary answers of 550 characters (at the rate of `faux`), each saying on the channel
/// when it was asked for.
fn slow_summaries(faux: &FauxModel, count: usize) -> std::sync::mpsc::Receiver<()> {
    let (started_tx, started_rx) = std::sync::mpsc::channel::<()>();
    let started_tx = Arc::new(Mutex::new(started_tx));
    faux.set_responses((0..count).map(|_| {
        let started_tx = started_tx.clone();
        FauxResponse::factory(move |_| {
            let _ = started_tx.lock().unwrap().send(());
            faux_assistant_text("never used ".repeat(50))
        })
    }));
    started_rx
}

/// A navigation to `<entry target>` with a summary, in a task of its own.
fn spawn_summarized(app: &App, target: usize) -> tokio::task::JoinHandle<Result<NavigateOutcome, AppError>> {
    let app = app.clone();
    tokio::spawn(async move { app.navigate_tree(&id(target), summarize()).await })
}

/// Until the summary request of a navigation reached the model (at most 10 s).
async fn wait_for_summary(app: &App, started_rx: &std::sync::mpsc::Receiver<()>) {
    let waited = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        while !app.is_summarizing_branch() || started_rx.try_recv().is_err() {
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert!(waited.is_ok(), "the summary request never started");
}

/// A second navigation while one summarizes used to take over the abort slot (aborting then
/// missed the first) and cleared it when done; a dropped navigation left it set for good.
#[tokio::test]
async fn one_navigation_at_a_time_and_a_dropped_one_frees_its_slot() {
    let dir = tempfile::tempdir().unwrap();
    let faux = faux_at(Some(2.0));
    let app = pi_session(dir.path(), &faux, 11);
    let started_rx = slow_summaries(&faux, 2);
    let first = spawn_summarized(&app, 3);
    wait_for_summary(&app, &started_rx).await;
    let second = app.navigate_tree(&id(7), summarize()).await;
    assert!(matches!(second, Err(AppError::Navigating)), "{second:?}");
    assert!(app.is_summarizing_branch());
    app.abort_branch_summary();
    let outcome = first.await.unwrap().unwrap();
    assert!(outcome.cancelled && outcome.aborted);
    assert!(!app.is_summarizing_branch());
    // A navigation whose future is dropped mid-summary frees the slot.
    let dropped = spawn_summarized(&app, 3);
    wait_for_summary(&app, &started_rx).await;
    dropped.abort();
    assert!(dropped.await.unwrap_err().is_cancelled());
    assert!(!app.is_summarizing_branch());
}

#[tokio::test]
async fn an_aborted_summary_leaves_everything_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    // Two chunks a second: the summary streams for a minute.
    let faux = faux_at(Some(2.0));
    let app = pi_session(dir.path(), &faux, 11);
    let started_rx = slow_summaries(&faux, 1);
    let leaf = app.with_store(|store| store.leaf_id().unwrap().to_owned());
    let entries = app.with_store(|store| store.entries().len());
    let running = spawn_summarized(&app, 3);
    wait_for_summary(&app, &started_rx).await;
    app.abort_branch_summary();
    let outcome = running.await.unwrap().unwrap();
    assert!(outcome.cancelled && outcome.aborted);
    assert_eq!(app.with_store(|store| store.leaf_id().unwrap().to_owned()), leaf);
    assert_eq!(app.with_store(|store| store.entries().len()), entries);
    assert!(!app.is_summarizing_branch());
}

#[tokio::test]
async fn a_failed_summary_is_pis_error_and_nothing_moves() {
    let dir = tempfile::tempdir().unwrap();
    let faux = faux();
    let mut failed = faux_assistant_text("");
    failed.stop_reason = pi_agent_core::StopReason::Error;
    failed.error_message = Some("503 overloaded".into());
    faux.set_responses([failed]);
    let app = pi_session(dir.path(), &faux, 11);
    let leaf = app.with_store(|store| store.leaf_id().unwrap().to_owned());
    let error = app.navigate_tree(&id(3), summarize()).await.unwrap_err();
    assert!(matches!(error, AppError::BranchSummary(_)));
    assert_eq!(error.to_string(), "503 overloaded");
    assert_eq!(app.with_store(|store| store.leaf_id().unwrap().to_owned()), leaf);
}
