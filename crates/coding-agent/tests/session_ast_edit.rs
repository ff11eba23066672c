//! `ast_edit` through the whole session with the faux model: preview, forced `resolve`, apply or
//! discard; a stale preview; a multi-file apply whose write fails (issue: "resolve" acceptance).

#![allow(clippy::unwrap_used)]

use crate::support;

use std::path::Path;
use std::sync::Arc;

use pi_agent_core::faux::{FauxModel, FauxResponse, faux_assistant_message, faux_assistant_text, faux_tool_call};
use pi_agent_core::{AgentMessage, ContentBlock};
use pi_coding_agent::ast::AstEditTool;
use pi_coding_agent::{AgentSession, RegisteredTool, SessionOptions, SessionSettings};
use pi_tools::atomic::BatchHooks;
use serde_json::json;
use support::{faux_session, forced_choices, resolve_choice};

const LEGACY: &str = "export function run(x: number, value: string) {\n  return legacyWrap(x, value);\n}\n";
const MODERN: &str = "export function run(x: number, value: string) {\n  return modernWrap(x, value);\n}\n";

fn ast_edit_call(id: &str, paths: serde_json::Value) -> ContentBlock {
    faux_tool_call(
        id,
        "ast_edit",
        json!({"ops": [{"pat": "legacyWrap($A, $B)", "out": "modernWrap($A, $B)"}], "paths": paths}),
    )
}

fn resolve_call(id: &str, action: &str) -> ContentBlock {
    let reason = match action {
        "apply" => "The preview is what I want.",
        _ => "The preview is not what I want.",
    };
    faux_tool_call(id, "resolve", json!({"action": action, "reason": reason}))
}

fn session(dir: &Path, faux: &FauxModel) -> AgentSession {
    faux_session(dir, faux, &["read", "ast_edit"])
}

/// The tool results of the transcript, `<tool>: <text>` with the temp dir replaced by `<tmp>`.
fn results(session: &AgentSession, dir: &Path) -> String {
    let dir = dir.display().to_string();
    session
        .agent()
        .messages()
        .iter()
        .filter_map(AgentMessage::as_tool_result)
        .map(|r| {
            let flag = if r.is_error { " (error)" } else { "" };
            format!("--- {}{flag}\n{}", r.tool_name, r.text().replace(&dir, "<tmp>"))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread")]
async fn preview_then_forced_resolve_then_apply_changes_the_file_only_at_apply() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("legacy.ts");
    std::fs::write(&file, LEGACY).unwrap();
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux);
    let observed = file.clone();
    faux.set_responses([
        FauxResponse::from(faux_assistant_message(vec![ast_edit_call("c1", json!(["legacy.ts"]))])),
        FauxResponse::factory(move |_| {
            assert_eq!(
                std::fs::read_to_string(&observed).unwrap(),
                LEGACY,
                "the preview wrote nothing"
            );
            faux_assistant_message(vec![resolve_call("c2", "apply")])
        }),
        faux_assistant_text("Renamed the call.").into(),
    ]);
    session.prompt("use modernWrap").await.unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), MODERN);
    assert_eq!(forced_choices(&faux), [None, resolve_choice(), None]);
    assert!(!session.pending_actions().has_pending());
    insta::assert_snapshot!("session_ast_edit_apply", results(&session, dir.path()));
}

#[tokio::test(flavor = "multi_thread")]
async fn discard_leaves_the_file_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("legacy.ts");
    std::fs::write(&file, LEGACY).unwrap();
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux);
    faux.set_responses([
        faux_assistant_message(vec![ast_edit_call("c1", json!(["legacy.ts"]))]),
        faux_assistant_message(vec![resolve_call("c2", "discard")]),
        faux_assistant_text("Left it alone."),
    ]);
    session.prompt("try modernWrap").await.unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), LEGACY);
    assert!(!session.pending_actions().has_pending());
    insta::assert_snapshot!("session_ast_edit_discard", results(&session, dir.path()));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stale_preview_writes_nothing_and_stays_pending() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.ts"), dir.path().join("b.ts"));
    std::fs::write(&a, LEGACY).unwrap();
    std::fs::write(&b, LEGACY).unwrap();
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux);
    let edited = b.clone();
    faux.set_responses([
        FauxResponse::from(faux_assistant_message(vec![ast_edit_call("c1", json!(["."]))])),
        FauxResponse::factory(move |_| {
            // Someone edits b.ts between the preview and the apply.
            std::fs::write(&edited, format!("{LEGACY}// edited by hand\n")).unwrap();
            faux_assistant_message(vec![resolve_call("c2", "apply")])
        }),
        faux_assistant_message(vec![resolve_call("c3", "discard")]).into(),
        faux_assistant_text("The files changed; I dropped the preview.").into(),
    ]);
    session.prompt("rename everywhere").await.unwrap();
    assert_eq!(
        std::fs::read_to_string(&a).unwrap(),
        LEGACY,
        "a.ts was not written either"
    );
    assert_eq!(
        std::fs::read_to_string(&b).unwrap(),
        format!("{LEGACY}// edited by hand\n")
    );
    let messages = session.agent().messages();
    let stale = messages[5].as_tool_result().unwrap();
    assert!(stale.is_error);
    assert!(
        stale
            .text()
            .starts_with("Preview is stale / no longer matches; no replacements were applied.")
    );
    assert_eq!(
        stale.details.as_ref().unwrap()["label"],
        "AST Edit: 2 replacements in 2 files"
    );
    // The failed apply left the preview pending, so the model was forced again and discarded it.
    assert_eq!(forced_choices(&faux), [None, resolve_choice(), resolve_choice(), None]);
    assert!(!session.pending_actions().has_pending());
    insta::assert_snapshot!("session_ast_edit_stale", results(&session, dir.path()));
}

/// Fails the rename of the second file of the batch.
struct FailSecondRename;

impl BatchHooks for FailSecondRename {
    fn before_rename(&self, index: usize, _path: &Path) -> std::io::Result<()> {
        if index == 1 {
            Err(std::io::Error::other("injected rename failure"))
        } else {
            Ok(())
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_multi_file_apply_whose_write_fails_leaves_every_file_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let names = ["a.ts", "b.ts", "c.ts"];
    for name in names {
        std::fs::write(dir.path().join(name), LEGACY).unwrap();
    }
    let faux = FauxModel::new();
    let settings = SessionSettings {
        ast_edit: false,
        ..Default::default()
    };
    let options = SessionOptions::new(dir.path(), faux.model())
        .stream_fn(faux.stream_fn())
        .settings(settings)
        .tools(["read"]);
    let session = AgentSession::new(options).unwrap();
    let tool = AstEditTool::new(dir.path().to_path_buf(), session.pending_actions().clone())
        .with_batch_hooks(Arc::new(FailSecondRename));
    session
        .register_tool(RegisteredTool::builtin(Arc::new(tool)).deferrable())
        .unwrap();
    session.set_active_tools(["read", "ast_edit"]).unwrap();
    assert_eq!(session.active_tool_names(), ["read", "ast_edit", "resolve"]);
    faux.set_responses([
        faux_assistant_message(vec![ast_edit_call("c1", json!(["."]))]),
        faux_assistant_message(vec![resolve_call("c2", "apply")]),
        faux_assistant_message(vec![resolve_call("c3", "discard")]),
        faux_assistant_text("Could not write; dropped it."),
    ]);
    session.prompt("rename everywhere").await.unwrap();
    for name in names {
        assert_eq!(
            std::fs::read_to_string(dir.path().join(name)).unwrap(),
            LEGACY,
            "{name}"
        );
    }
    let leftovers: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !names.contains(&n.as_str()))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    let failed = session.agent().messages()[5].as_tool_result().unwrap().clone();
    assert!(failed.is_error);
    assert!(
        failed.text().starts_with("Apply failed: Failed to write "),
        "{}",
        failed.text()
    );
    assert!(failed.text().contains("injected rename failure"));
    assert!(!session.pending_actions().has_pending(), "discarded after the failure");
}

#[tokio::test(flavor = "multi_thread")]
async fn overlapping_rewrites_are_rejected_at_preview_and_nothing_is_pending() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("n.ts"), "wrap(wrap(1));\n").unwrap();
    let faux = FauxModel::new();
    let session = session(dir.path(), &faux);
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call(
            "c1",
            "ast_edit",
            json!({"ops": [{"pat": "wrap($A)", "out": "$A"}, {"pat": "wrap(1)", "out": "2"}], "paths": ["n.ts"]}),
        )]),
        faux_assistant_text("I will split it."),
    ]);
    session.prompt("unwrap").await.unwrap();
    let result = session.agent().messages()[2].as_tool_result().unwrap().clone();
    assert!(result.is_error);
    assert!(
        result.text().starts_with("Overlapping replacements detected"),
        "{}",
        result.text()
    );
    assert!(!session.pending_actions().has_pending());
    assert_eq!(forced_choices(&faux), [None, None]);
}
