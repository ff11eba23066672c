//! Mutations of one file in one assistant message land in source order, for `ast_edit`'s apply
//! (through `resolve`) and for custom tools that declare `mutatedPaths`, next to the built-in
//! `write` (issue 14, item 2).

#![allow(clippy::unwrap_used)]

use crate::process_support::probe;
use crate::support::faux_session;

use std::path::Path;
use std::sync::Arc;

use pi_agent_core::faux::{FauxModel, faux_assistant_message, faux_assistant_text, faux_tool_call};
use pi_agent_core::{AgentContext, AgentLoopConfig, AgentMessage, AgentTool, ContentBlock, run_agent_loop};
use pi_coding_agent::AgentSession;
use pi_coding_agent::custom_tools::ToolApi;
use pi_tools::ToolEnv;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const LEGACY: &str = "export function run(x: number, value: string) {\n  return legacyWrap(x, value);\n}\n";
const MODERN: &str = "export function run(x: number, value: string) {\n  return modernWrap(x, value);\n}\n";
const REWRITTEN: &str = "// rewritten by write\n";

fn ast_edit_call(id: &str) -> ContentBlock {
    faux_tool_call(
        id,
        "ast_edit",
        json!({"ops": [{"pat": "legacyWrap($A, $B)", "out": "modernWrap($A, $B)"}], "paths": ["legacy.ts"]}),
    )
}

fn resolve_call(id: &str, action: &str) -> ContentBlock {
    faux_tool_call(
        id,
        "resolve",
        json!({"action": action, "reason": "The preview is right."}),
    )
}

fn write_call(id: &str, content: &str) -> ContentBlock {
    faux_tool_call(id, "write", json!({"path": "legacy.ts", "content": content}))
}

/// `(tool, text, is_error)` of every tool result of the session.
fn results(session: &AgentSession) -> Vec<(String, String, bool)> {
    session
        .agent()
        .messages()
        .iter()
        .filter_map(AgentMessage::as_tool_result)
        .map(|r| (r.tool_name.clone(), r.text(), r.is_error))
        .collect()
}

/// A preview of `legacy.ts`, then one message with `second` calls; returns the session.
async fn preview_then(dir: &Path, second: Vec<ContentBlock>, rest: Vec<ContentBlock>) -> AgentSession {
    std::fs::write(dir.join("legacy.ts"), LEGACY).unwrap();
    let faux = FauxModel::new();
    let session = faux_session(dir, &faux, &["read", "ast_edit", "write"]);
    let mut responses = vec![
        faux_assistant_message(vec![ast_edit_call("c1")]),
        faux_assistant_message(second),
    ];
    responses.extend(rest.into_iter().map(|call| faux_assistant_message(vec![call])));
    responses.push(faux_assistant_text("done"));
    faux.set_responses(responses);
    session.prompt("use modernWrap").await.unwrap();
    session
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_apply_before_a_write_of_its_file_lands_first() {
    for round in 0..10 {
        let dir = tempfile::tempdir().unwrap();
        let session = preview_then(
            dir.path(),
            vec![resolve_call("c2", "apply"), write_call("c3", REWRITTEN)],
            vec![],
        )
        .await;
        let results = results(&session);
        assert_eq!(
            results[1],
            (
                "resolve".to_owned(),
                "Applied 1 replacement in 1 file.".to_owned(),
                false
            ),
            "round {round}"
        );
        assert!(!results[2].2, "round {round}: {results:?}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("legacy.ts")).unwrap(),
            REWRITTEN
        );
        assert!(!session.pending_actions().has_pending());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_write_before_an_apply_of_its_file_makes_the_preview_stale() {
    for round in 0..10 {
        let dir = tempfile::tempdir().unwrap();
        let session = preview_then(
            dir.path(),
            vec![write_call("c2", REWRITTEN), resolve_call("c3", "apply")],
            vec![resolve_call("c4", "discard")],
        )
        .await;
        let results = results(&session);
        assert!(!results[1].2, "round {round}: {results:?}");
        assert!(
            results[2]
                .1
                .starts_with("Preview is stale / no longer matches; no replacements were applied."),
            "round {round}: {results:?}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("legacy.ts")).unwrap(),
            REWRITTEN
        );
        assert_ne!(std::fs::read_to_string(dir.path().join("legacy.ts")).unwrap(), MODERN);
    }
}

/// The probe's `append` declares `mutatedPaths: ["path"]`: a slow append, a write and another
/// append of one file land in source order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_custom_tool_declaring_its_path_parameter_lands_in_source_order() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let api = ToolApi::new(&cwd);
    let tools = probe(&api).await;
    let append = tools.get("append");
    assert_eq!(
        append.mutated_files(&json!({"path": "@notes.txt", "text": "x"})),
        [cwd.join("notes.txt")]
    );
    for round in 0..3 {
        std::fs::remove_file(cwd.join("notes.txt")).ok();
        let faux = FauxModel::new();
        faux.set_responses([
            faux_assistant_message(vec![
                faux_tool_call(
                    "c1",
                    "append",
                    json!({"path": "notes.txt", "text": "1", "delayMs": 150}),
                ),
                faux_tool_call("c2", "write", json!({"path": "notes.txt", "content": "2"})),
                faux_tool_call("c3", "append", json!({"path": "notes.txt", "text": "3"})),
            ]),
            faux_assistant_text("done"),
        ]);
        let config = AgentLoopConfig::new(faux.model()).with_stream_fn(faux.stream_fn());
        let write = pi_tools::create_tool("write", &ToolEnv::new(&cwd)).unwrap();
        let context = AgentContext {
            tools: vec![append.clone() as Arc<dyn AgentTool>, write],
            ..AgentContext::default()
        };
        let (mut sink, cancel) = (|_| {}, CancellationToken::new());
        let run = run_agent_loop(vec![AgentMessage::user("go")], context, &config, &cancel, &mut sink);
        let messages = run.await.unwrap();
        let failed: Vec<_> = messages
            .iter()
            .filter_map(AgentMessage::as_tool_result)
            .filter(|r| r.is_error)
            .map(|r| r.text())
            .collect();
        assert!(failed.is_empty(), "round {round}: {failed:?}");
        assert_eq!(
            std::fs::read_to_string(cwd.join("notes.txt")).unwrap(),
            "23",
            "round {round}"
        );
    }
}
