//! Property: random assistant messages mixing preview-staging calls, `resolve` and other tools, in
//! both global dispatch modes (and with a per-tool sequential tool), never apply or discard a
//! preview before the model has seen it, send the reminder only while something is pending (and
//! always after a preview is staged), and give every call exactly one result, in order (issue 13,
//! defect 4; SPEC §9).

#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_agent_core::faux::{FauxModel, FauxResponse, faux_assistant_message, faux_assistant_text, faux_tool_call};
use pi_agent_core::{AgentMessage, ContentBlock, FnTool, ToolExecutionMode, ToolResult};
use pi_coding_agent::resolve::{NO_PENDING_ACTION, PendingAction, PendingActionStore, RESOLVE_REMINDER};
use pi_coding_agent::{AgentSession, RegisteredTool, SessionOptions, SessionSettings};
use proptest::prelude::*;
use serde_json::json;

#[derive(Debug, Clone, Copy)]
enum Call {
    /// Stages a preview.
    Stage,
    /// `resolve` apply (true) or discard (false).
    Resolve(bool),
    /// A tool that sleeps this many milliseconds.
    Other(u8),
    /// The same, declared `executionMode: sequential` (the whole message runs sequentially).
    SequentialOther(u8),
}

fn call() -> impl Strategy<Value = Call> {
    prop_oneof![
        3 => Just(Call::Stage),
        2 => Just(Call::Resolve(true)),
        1 => Just(Call::Resolve(false)),
        2 => (0u8..3).prop_map(Call::Other),
        1 => (0u8..3).prop_map(Call::SequentialOther),
    ]
}

/// What the tools and the model saw.
#[derive(Default)]
struct World {
    /// Previews staged so far (the n-th is labelled `Stage n`).
    staged: usize,
    /// Previews staged before the latest model call: the ones the model has seen.
    seen: usize,
    /// Previews applied or discarded before the model saw them.
    violations: Vec<String>,
    /// Per model call: reminders in the request, pending actions, previews staged so far.
    requests: Vec<(usize, usize, usize)>,
}

type Shared = Arc<Mutex<World>>;

fn stage_tool(store: PendingActionStore, world: Shared) -> FnTool {
    FnTool::new(
        "stage",
        "Stage a preview.",
        json!({"type": "object"}),
        move |_, _, _| {
            let (store, world) = (store.clone(), world.clone());
            async move {
                let n = {
                    let mut w = world.lock().unwrap();
                    w.staged += 1;
                    w.staged - 1
                };
                let check = move |world: &Shared, verb: &str| {
                    let mut w = world.lock().unwrap();
                    if n >= w.seen {
                        w.violations.push(format!("Stage {n} {verb} before the model saw it"));
                    }
                };
                let (on_apply, on_reject) = (world.clone(), world.clone());
                store.push(
                    PendingAction::new(format!("Stage {n}"), "stage", move |_, _| {
                        check(&on_apply, "applied");
                        async { Ok(ToolResult::text("applied")) }
                    })
                    .with_reject(move |_, _| {
                        check(&on_reject, "discarded");
                        async { Ok(None) }
                    }),
                );
                Ok(ToolResult::text(format!("Staged Stage {n}.")))
            }
        },
    )
}

fn sleeper(name: &str) -> FnTool {
    FnTool::new(
        name,
        "Sleeps.",
        json!({"type": "object", "properties": {"ms": {"type": "integer"}}}),
        |_, args, _| async move {
            tokio::time::sleep(Duration::from_millis(args["ms"].as_u64().unwrap_or(0))).await;
            Ok(ToolResult::text("slept"))
        },
    )
}

fn block(id: String, call: Call) -> ContentBlock {
    match call {
        Call::Stage => faux_tool_call(&id, "stage", json!({})),
        Call::Resolve(apply) => faux_tool_call(
            &id,
            "resolve",
            json!({"action": if apply { "apply" } else { "discard" }, "reason": "Checked."}),
        ),
        Call::Other(ms) => faux_tool_call(&id, "other", json!({"ms": ms})),
        Call::SequentialOther(ms) => faux_tool_call(&id, "other_seq", json!({"ms": ms})),
    }
}

/// Reminders in a request (they reach the model as user messages).
fn reminders(messages: &[AgentMessage]) -> usize {
    messages
        .iter()
        .filter_map(AgentMessage::as_user)
        .filter(|user| user.content.text() == RESOLVE_REMINDER)
        .count()
}

/// The refusal of a `resolve` in the message that staged the top action.
fn refusal(label: &str) -> String {
    format!(
        "Cannot resolve \"{label}\" in the message that staged it: the preview has not been shown to you yet. \
         Read it, then call resolve in your next message."
    )
}

/// The results a sequential message must give: a model of the stack (label, seen).
fn predict(stack: &mut Vec<(String, bool)>, staged: &mut usize, calls: &[Call]) -> Vec<String> {
    for entry in stack.iter_mut() {
        entry.1 = true;
    }
    calls
        .iter()
        .map(|call| match call {
            Call::Stage => {
                stack.push((format!("Stage {staged}"), false));
                *staged += 1;
                format!("Staged Stage {}.", *staged - 1)
            }
            Call::Resolve(apply) => match stack.last() {
                None => NO_PENDING_ACTION.to_owned(),
                Some((label, false)) => refusal(label),
                Some((label, true)) => {
                    let text = if *apply {
                        "applied".to_owned()
                    } else {
                        format!("Discarded: {label}. Reason: Checked.")
                    };
                    stack.pop();
                    text
                }
            },
            Call::Other(_) | Call::SequentialOther(_) => "slept".to_owned(),
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn previews_are_resolved_only_once_seen_and_reminded_only_while_pending(
        sequential in any::<bool>(),
        batches in prop::collection::vec(prop::collection::vec(call(), 1..5), 1..6),
    ) {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(async {
            let dir = tempfile::tempdir().unwrap();
            let faux = FauxModel::new();
            let settings = SessionSettings {
                tool_execution: if sequential { ToolExecutionMode::Sequential } else { ToolExecutionMode::Parallel },
                ..Default::default()
            };
            let options = SessionOptions::new(dir.path(), faux.model())
                .stream_fn(faux.stream_fn())
                .tools(Vec::<String>::new())
                .settings(settings);
            let session = AgentSession::new(options).unwrap();
            let world: Shared = Arc::default();
            let store = session.pending_actions().clone();
            let tools = [
                stage_tool(store.clone(), world.clone()),
                sleeper("other"),
                sleeper("other_seq").with_execution_mode(ToolExecutionMode::Sequential),
            ];
            for tool in tools {
                session.register_tool(RegisteredTool::custom(tool.into_arc(), None)).unwrap();
            }
            session.set_active_tools(["stage", "other", "other_seq"]).unwrap();

            let mut responses = Vec::new();
            let messages: Vec<Option<Vec<ContentBlock>>> = batches
                .iter()
                .enumerate()
                .map(|(b, calls)| {
                    Some(calls.iter().enumerate().map(|(c, call)| block(format!("b{b}c{c}"), *call)).collect())
                })
                .chain([None])
                .collect();
            for content in messages {
                let (world, store) = (world.clone(), store.clone());
                responses.push(FauxResponse::factory(move |request| {
                    let mut w = world.lock().unwrap();
                    w.seen = w.staged;
                    let entry = (reminders(request.context.messages), store.len(), w.staged);
                    w.requests.push(entry);
                    match &content {
                        Some(blocks) => faux_assistant_message(blocks.clone()),
                        None => faux_assistant_text("done"),
                    }
                }));
            }
            faux.set_responses(responses);
            session.prompt("go").await.unwrap();

            let w = world.lock().unwrap();
            prop_assert!(w.violations.is_empty(), "{:?}", w.violations);
            prop_assert_eq!(w.requests.len(), batches.len() + 1);
            prop_assert_eq!(w.requests[0].0, 0);
            for pair in w.requests.windows(2) {
                let ((before, _, staged_before), (after, pending, staged)) = (pair[0], pair[1]);
                let new = after - before;
                prop_assert!(new <= 1, "{} reminders at one boundary", new);
                prop_assert!(new == 0 || pending > 0, "reminded with nothing pending");
                prop_assert!(staged == staged_before || new == 1, "staged a preview, not reminded");
            }

            // One result per call, in the calls' order; sequential messages give exactly the
            // results of the stack model.
            let transcript = session.agent().messages();
            // The stack model, known until a message runs in parallel (its order is not).
            let mut model = Some((Vec::new(), 0));
            let mut index = 0;
            for calls in &batches {
                while transcript[index].as_assistant().is_none_or(|a| a.tool_calls().count() == 0) {
                    index += 1;
                }
                let assistant = transcript[index].as_assistant().unwrap();
                let ids: Vec<String> = assistant.tool_calls().map(|c| c.id.clone()).collect();
                let results: Vec<_> = transcript[index + 1..=index + ids.len()]
                    .iter()
                    .map(|m| m.as_tool_result().expect("a result per call").clone())
                    .collect();
                let result_ids: Vec<String> = results.iter().map(|r| r.tool_call_id.clone()).collect();
                prop_assert_eq!(&result_ids, &ids);
                let runs_sequentially = sequential || calls.iter().any(|c| matches!(c, Call::SequentialOther(_)));
                match (&mut model, runs_sequentially) {
                    (Some((stack, staged)), true) => {
                        let texts: Vec<String> = results.iter().map(|r| r.text()).collect();
                        prop_assert_eq!(texts, predict(stack, staged, calls));
                    }
                    _ => model = None,
                }
                index += 1 + ids.len();
            }
            if let Some((stack, _)) = model {
                let labels: Vec<String> = stack.iter().map(|(l, _)| l.clone()).collect();
                prop_assert_eq!(store.labels(), labels);
            }
            Ok(())
        })?;
    }
}
