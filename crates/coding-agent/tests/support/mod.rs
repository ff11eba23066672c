//! Shared pieces of the session tests: faux-model sessions and a preview-staging tool.

#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use pi_agent_core::faux::FauxModel;
use pi_agent_core::{AgentMessage, FnTool, ToolChoice, ToolResult};
use pi_coding_agent::resolve::{PendingAction, PendingActionStore, PendingError};
use pi_coding_agent::{AgentSession, RegisteredTool, SessionEvent, SessionOptions, SessionSettings};
use pi_test_support::scripted::forced;
use serde_json::json;

pub(crate) use pi_test_support::scripted::forced_choices;

/// A session on a faux model in `cwd` with these active tools (nothing else).
pub(crate) fn faux_session(cwd: &Path, faux: &FauxModel, tools: &[&str]) -> AgentSession {
    let options = SessionOptions::new(cwd, faux.model())
        .stream_fn(faux.stream_fn())
        .tools(tools.iter().copied());
    AgentSession::new(options).unwrap()
}

/// A session on a faux model in `cwd` with these active tools (plus the `stage` tool).
pub(crate) fn session(cwd: &Path, faux: &FauxModel, tools: &[&str]) -> AgentSession {
    session_with(cwd, faux, tools, SessionSettings::default())
}

/// [`session`] with these settings (e.g. the global tool execution mode).
pub(crate) fn session_with(cwd: &Path, faux: &FauxModel, tools: &[&str], settings: SessionSettings) -> AgentSession {
    let options = SessionOptions::new(cwd, faux.model())
        .stream_fn(faux.stream_fn())
        .tools(tools.iter().copied())
        .settings(settings);
    let session = AgentSession::new(options).unwrap();
    let stage = stage_tool(session.pending_actions().clone(), Arc::new(AtomicUsize::new(0)));
    session
        .register_tool(RegisteredTool::custom(stage.into_arc(), None))
        .unwrap();
    let mut active: Vec<String> = tools.iter().map(|s| (*s).to_owned()).collect();
    active.push("stage".into());
    session.set_active_tools(active).unwrap();
    session
}

/// `stage {path, content, fail?, rejectFail?}`: stages writing `content` to `path`; the apply
/// fails while `fail` apply attempts remain, the discard while `rejectFail` discard attempts
/// remain. `applies` counts apply attempts.
pub(crate) fn stage_tool(store: PendingActionStore, applies: Arc<AtomicUsize>) -> FnTool {
    FnTool::new(
        "stage",
        "Stage writing a file; resolve applies it.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "content": {"type": "string"},
                "fail": {"type": "integer"},
                "rejectFail": {"type": "integer"}
            },
            "required": ["path", "content"]
        }),
        move |_id, args, _ctx| {
            let store = store.clone();
            let applies = applies.clone();
            async move {
                let path = PathBuf::from(args["path"].as_str().unwrap_or_default());
                let content = args["content"].as_str().unwrap_or_default().to_owned();
                let failures = args["fail"].as_u64().unwrap_or(0) as usize;
                let reject_failures = args["rejectFail"].as_u64().unwrap_or(0) as usize;
                let label = format!("Stage: write {}", path.file_name().unwrap().to_string_lossy());
                let attempts = Arc::new(AtomicUsize::new(0));
                let reject_attempts = Arc::new(AtomicUsize::new(0));
                let action = PendingAction::new(label, "stage", move |_reason, _extra| {
                    let (path, content) = (path.clone(), content.clone());
                    applies.fetch_add(1, Ordering::SeqCst);
                    let attempt = attempts.fetch_add(1, Ordering::SeqCst);
                    async move {
                        if attempt < failures {
                            return Err(PendingError::Other("disk full".into()));
                        }
                        std::fs::write(&path, &content).map_err(|e| PendingError::Other(e.to_string()))?;
                        Ok(ToolResult::text(format!("Wrote {}", path.display())))
                    }
                });
                let action = if reject_failures == 0 {
                    action
                } else {
                    action.with_reject(move |_reason, _extra| {
                        let attempt = reject_attempts.fetch_add(1, Ordering::SeqCst);
                        async move {
                            if attempt < reject_failures {
                                return Err(PendingError::Other("cleanup failed".into()));
                            }
                            Ok(None)
                        }
                    })
                };
                store.push(action);
                Ok(ToolResult::text("Staged. Call resolve to apply or discard."))
            }
        },
    )
}

/// `Some(resolve)`: a call forced to resolve, as [`forced_choices`] lists it.
pub(crate) fn resolve_choice() -> Option<ToolChoice> {
    forced("resolve")
}

/// Records every session event.
pub(crate) fn record(session: &AgentSession) -> Arc<Mutex<Vec<SessionEvent>>> {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    session.subscribe(move |event| sink.lock().unwrap().push(event.clone()));
    events
}

/// A compact view of a transcript: `role` or `custom:<customType>`, with tool names for results.
pub(crate) fn roles(messages: &[AgentMessage]) -> Vec<String> {
    messages
        .iter()
        .map(|m| match m {
            AgentMessage::Custom(custom) => format!(
                "{}:{}",
                custom.role,
                custom.fields.get("customType").and_then(|v| v.as_str()).unwrap_or("")
            ),
            AgentMessage::ToolResult(result) => format!("toolResult:{}", result.tool_name),
            AgentMessage::Assistant(assistant) => {
                let calls: Vec<&str> = assistant.tool_calls().map(|c| c.name.as_str()).collect();
                if calls.is_empty() {
                    "assistant".to_owned()
                } else {
                    format!("assistant[{}]", calls.join(","))
                }
            }
            other => other.role().to_owned(),
        })
        .collect()
}
