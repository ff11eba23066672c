//! The `resolve` tool and its runtime (`reference/omp.md` §5.1 and §1.10, written fresh; the
//! decisions of SPEC §6 where the sources differ).

#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_agent_core::{AgentTool, ToolContext, ToolError, ToolResult, ToolUpdateSink};
use pi_coding_agent::resolve::{
    NO_PENDING_ACTION, RESOLVE_REMINDER, ResolveAction, ResolveParams, ResolveRuntime, ResolveTool, StandingHandler,
    resolve_reminder,
};
use pi_coding_agent::resolve::{PendingAction, PendingActionStore, PendingError};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn setup() -> (PendingActionStore, ResolveRuntime, ResolveTool) {
    let store = PendingActionStore::new();
    let runtime = ResolveRuntime::new(store.clone());
    let tool = ResolveTool::new(runtime.clone(), None);
    (store, runtime, tool)
}

async fn call(tool: &ResolveTool, args: Value) -> Result<ToolResult, ToolError> {
    tool.execute("call-1", args, ToolContext::detached()).await
}

/// The result as a person reads it: the text, then the details.
fn show(result: &Result<ToolResult, ToolError>) -> String {
    match result {
        Ok(result) => {
            let text: Vec<&str> = result.content.iter().filter_map(|b| b.as_text()).collect();
            format!(
                "ok: {}\ndetails: {}",
                text.join("\n"),
                serde_json::to_string_pretty(&result.details).unwrap()
            )
        }
        Err(error) => format!(
            "error: {}\ndetails: {}",
            error.message(),
            serde_json::to_string_pretty(&error.details().cloned().unwrap_or(Value::Null)).unwrap()
        ),
    }
}

fn applies(label: &str, text: &'static str) -> PendingAction {
    PendingAction::new(label, "ast_edit", move |_, _| async move { Ok(ToolResult::text(text)) })
}

#[test]
fn schema_requires_action_and_reason() {
    let (_, _, tool) = setup();
    let schema = tool.parameters().schema();
    assert_eq!(schema["required"], json!(["action", "reason"]));
    assert_eq!(schema["properties"]["action"]["enum"], json!(["apply", "discard"]));
    assert_eq!(schema["properties"]["reason"]["description"], "reason for action");
    assert_eq!(schema["properties"]["extra"]["type"], "object");
    assert_eq!(tool.name(), "resolve");
    assert_eq!(tool.label(), "Resolve");
}

#[tokio::test]
async fn nothing_pending_fails_for_both_actions() {
    let (_, _, tool) = setup();
    for action in ["apply", "discard"] {
        let error = call(&tool, json!({"action": action, "reason": "Looks correct."}))
            .await
            .unwrap_err();
        assert_eq!(error.message(), NO_PENDING_ACTION);
    }
    assert_eq!(
        NO_PENDING_ACTION,
        "No pending action to resolve. Nothing to apply or discard."
    );
}

#[tokio::test]
async fn apply_runs_the_callback_with_the_reason_and_merges_details() {
    let (store, _, tool) = setup();
    let seen = Arc::new(Mutex::new(None));
    let sink = seen.clone();
    store.push(PendingAction::new(
        "AST Edit: 1 replacement in 1 file",
        "ast_edit",
        move |reason, extra| {
            *sink.lock().unwrap() = Some((reason, extra));
            async {
                Ok(ToolResult::text("Applied 1 replacement in 1 file.")
                    .with_details(json!({"totalReplacements": 1, "applied": true})))
            }
        },
    ));
    let result = call(&tool, json!({"action": "apply", "reason": "Preview is correct."})).await;
    assert_eq!(*seen.lock().unwrap(), Some(("Preview is correct.".to_owned(), None)));
    assert!(!store.has_pending());
    insta::assert_snapshot!("apply", show(&result));
}

#[tokio::test]
async fn discard_runs_reject_and_keeps_its_text() {
    let (store, _, tool) = setup();
    let seen = Arc::new(Mutex::new(None));
    let sink = seen.clone();
    store.push(
        applies("AST Edit: 2 replacements in 1 file", "unused").with_reject(move |reason, _| {
            *sink.lock().unwrap() = Some(reason);
            async { Ok(Some(ToolResult::text("Rejected pending preview."))) }
        }),
    );
    let result = call(
        &tool,
        json!({"action": "discard", "reason": "Preview changed wrong callsites."}),
    )
    .await;
    assert_eq!(
        seen.lock().unwrap().as_deref(),
        Some("Preview changed wrong callsites.")
    );
    assert!(!store.has_pending());
    insta::assert_snapshot!("discard_with_reject", show(&result));
}

#[tokio::test]
async fn discard_without_reject_uses_the_default_text() {
    let (store, _, tool) = setup();
    let applied = Arc::new(AtomicBool::new(false));
    let flag = applied.clone();
    store.push(PendingAction::new(
        "Batch rename: 3 files",
        "batch_rename",
        move |_, _| {
            flag.store(true, Ordering::SeqCst);
            async { Ok(ToolResult::text("renamed")) }
        },
    ));
    let result = call(&tool, json!({"action": "discard", "reason": "Wrong directory."})).await;
    assert!(!applied.load(Ordering::SeqCst), "discard never applies");
    assert!(!store.has_pending());
    insta::assert_snapshot!("discard_default", show(&result));
}

#[tokio::test]
async fn a_reject_returning_nothing_falls_back_to_the_default_text() {
    let (store, _, tool) = setup();
    store.push(applies("Cleanup", "unused").with_reject(|_, _| async { Ok(None) }));
    let result = call(&tool, json!({"action": "discard", "reason": "Not needed."}))
        .await
        .unwrap();
    assert_eq!(
        result.content[0].as_text(),
        Some("Discarded: Cleanup. Reason: Not needed.")
    );
}

#[tokio::test]
async fn extra_reaches_the_callbacks_and_the_details() {
    let (store, _, tool) = setup();
    let seen = Arc::new(Mutex::new(None));
    let sink = seen.clone();
    store.push(PendingAction::new("Plan ready", "plan", move |_, extra| {
        *sink.lock().unwrap() = extra;
        async { Ok(ToolResult::text("ok")) }
    }));
    let result = call(
        &tool,
        json!({"action": "apply", "reason": "Approved.", "extra": {"title": "words-counter"}}),
    )
    .await
    .unwrap();
    assert_eq!(*seen.lock().unwrap(), Some(json!({"title": "words-counter"})));
    assert_eq!(result.details["extra"], json!({"title": "words-counter"}));
    let keys: Vec<&String> = result.details.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["action", "reason", "extra", "sourceToolName", "label"]);
}

#[tokio::test]
async fn pending_actions_resolve_in_lifo_order() {
    let (store, _, tool) = setup();
    store.push(applies("First action", "first applied"));
    store.push(applies("Second action", "second applied"));
    let result = call(&tool, json!({"action": "apply", "reason": "Yes."})).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("second applied"));
    assert_eq!(store.labels(), ["First action"]);
    let result = call(&tool, json!({"action": "apply", "reason": "Yes."})).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("first applied"));
    assert!(!store.has_pending());
}

#[tokio::test]
async fn a_failing_apply_is_wrapped_and_leaves_the_action_on_top() {
    let (store, _, tool) = setup();
    store.push(applies("Older", "older applied"));
    store.push(PendingAction::new(
        "AST Edit: 2 replacements in 1 file",
        "ast_edit",
        |_, _| async { Err(PendingError::Other("Failed to write src/a.ts: disk full".into())) },
    ));
    let result = call(&tool, json!({"action": "apply", "reason": "Go."})).await;
    assert_eq!(store.labels(), ["Older", "AST Edit: 2 replacements in 1 file"]);
    insta::assert_snapshot!("apply_failed", show(&result));
}

#[tokio::test]
async fn a_tool_error_from_apply_passes_through_with_its_details() {
    let (store, _, tool) = setup();
    store.push(PendingAction::new(
        "AST Edit: 1 replacement in 1 file",
        "ast_edit",
        |_, _| async {
            Err(PendingError::Tool(
                ToolError::new("Preview is stale / no longer matches; no replacements were applied.")
                    .with_details(json!({"totalReplacements": 0, "applied": false})),
            ))
        },
    ));
    let result = call(&tool, json!({"action": "apply", "reason": "Go."})).await;
    assert!(store.has_pending(), "a failed apply leaves the action pending");
    insta::assert_snapshot!("apply_tool_error", show(&result));
}

#[tokio::test]
async fn a_failing_reject_is_not_wrapped_and_keeps_the_action() {
    let (store, _, tool) = setup();
    store.push(
        applies("Lock", "unused").with_reject(|_, _| async { Err(PendingError::Other("lock file is busy".into())) }),
    );
    let error = call(&tool, json!({"action": "discard", "reason": "No."}))
        .await
        .unwrap_err();
    assert_eq!(error.message(), "lock file is busy");
    assert!(store.has_pending());
}

#[tokio::test]
async fn a_panicking_apply_becomes_apply_failed() {
    let (store, _, tool) = setup();
    store.push(PendingAction::new("Boom", "custom_tool", |_, _| async {
        panic!("exploded");
        #[allow(unreachable_code)]
        Ok(ToolResult::text(""))
    }));
    let error = call(&tool, json!({"action": "apply", "reason": "Go."}))
        .await
        .unwrap_err();
    assert_eq!(error.message(), "Apply failed: exploded");
    assert!(store.has_pending());
}

#[tokio::test]
async fn the_standing_handler_is_consulted_only_when_nothing_is_pending() {
    let (store, runtime, tool) = setup();
    let handled = Arc::new(AtomicUsize::new(0));
    let counter = handled.clone();
    let handler: StandingHandler = Arc::new(move |params: ResolveParams| {
        counter.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            Ok(ToolResult::text(format!(
                "Plan ready for approval. ({})",
                params.reason
            )))
        })
    });
    runtime.set_standing_handler(Some(handler));
    store.push(applies("Preview", "preview applied"));
    let result = call(&tool, json!({"action": "apply", "reason": "First."}))
        .await
        .unwrap();
    assert_eq!(result.content[0].as_text(), Some("preview applied"));
    assert_eq!(handled.load(Ordering::SeqCst), 0);
    let result = call(&tool, json!({"action": "apply", "reason": "Second."}))
        .await
        .unwrap();
    assert_eq!(result.content[0].as_text(), Some("Plan ready for approval. (Second.)"));
    assert_eq!(handled.load(Ordering::SeqCst), 1);
    runtime.set_standing_handler(None);
    let error = call(&tool, json!({"action": "apply", "reason": "Third."}))
        .await
        .unwrap_err();
    assert_eq!(error.message(), NO_PENDING_ACTION);
}

#[tokio::test]
async fn abort_returns_promptly_and_the_invocation_still_settles() {
    let (store, _, tool) = setup();
    let release = Arc::new(tokio::sync::Notify::new());
    let gate = release.clone();
    store.push(PendingAction::new("Slow", "custom_tool", move |_, _| {
        let gate = gate.clone();
        async move {
            gate.notified().await;
            Ok(ToolResult::text("applied late"))
        }
    }));
    let cancel = CancellationToken::new();
    let ctx = ToolContext {
        cancel: cancel.clone(),
        updates: ToolUpdateSink::discard(),
    };
    let args = json!({"action": "apply", "reason": "Go."});
    let running = tokio::spawn(async move { tool.execute("call-1", args, ctx).await });
    tokio::task::yield_now().await;
    cancel.cancel();
    let error = tokio::time::timeout(Duration::from_secs(5), running)
        .await
        .unwrap()
        .unwrap()
        .unwrap_err();
    assert_eq!(error.message(), "Operation aborted");
    assert!(store.has_pending(), "the apply has not finished");
    release.notify_one();
    for _ in 0..500 {
        if !store.has_pending() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert!(
        !store.has_pending(),
        "the abandoned apply finished and removed its action"
    );
}

#[tokio::test]
async fn an_already_aborted_call_does_nothing() {
    let (store, _, tool) = setup();
    store.push(applies("Preview", "applied"));
    let cancel = CancellationToken::new();
    cancel.cancel();
    let ctx = ToolContext {
        cancel,
        updates: ToolUpdateSink::discard(),
    };
    let error = tool
        .execute("c", json!({"action": "apply", "reason": "Go."}), ctx)
        .await
        .unwrap_err();
    assert_eq!(error.message(), "Operation aborted");
    assert!(store.has_pending());
}

#[tokio::test]
async fn two_resolve_calls_at_once_act_on_successive_tops() {
    let (store, runtime, _) = setup();
    store.push(applies("First", "first"));
    store.push(applies("Second", "second"));
    let a = runtime.resolve(ResolveParams::new(ResolveAction::Apply, "a"));
    let b = runtime.resolve(ResolveParams::new(ResolveAction::Apply, "b"));
    let (a, b) = tokio::join!(a, b);
    let mut texts = vec![
        a.unwrap().content[0].as_text().unwrap().to_owned(),
        b.unwrap().content[0].as_text().unwrap().to_owned(),
    ];
    texts.sort();
    assert_eq!(texts, ["first", "second"]);
    assert!(!store.has_pending());
}

#[tokio::test]
async fn outcomes_are_reported() {
    let (store, runtime, _) = setup();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    runtime.subscribe(move |outcome| sink.lock().unwrap().push(outcome.clone()));
    store.push(applies("A", "a"));
    runtime
        .resolve(ResolveParams::new(ResolveAction::Discard, "No."))
        .await
        .unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].label, "A");
    assert_eq!(seen[0].action, ResolveAction::Discard);
    assert!(seen[0].succeeded());
    assert_eq!(seen[0].remaining, 0);
}

#[test]
fn the_reminder_is_the_seed_text() {
    assert_eq!(
        RESOLVE_REMINDER,
        "<system-reminder>\nThis is a preview. Call the `resolve` tool to apply or discard these changes.\n</system-reminder>"
    );
    let message = resolve_reminder("ast_edit");
    let json = serde_json::to_value(&message).unwrap();
    assert_eq!(json["role"], "custom");
    assert_eq!(json["customType"], "resolve-reminder");
    assert_eq!(json["display"], false);
    assert_eq!(json["details"], json!({"toolName": "ast_edit"}));
    assert_eq!(json["content"], RESOLVE_REMINDER);
}
