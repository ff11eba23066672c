//! Session events for custom tools: a tool that keeps state rebuilds it from the `details` of its
//! earlier results whenever the session starts, switches, branches, is replaced, or moves in its
//! tree — and cleans up at `shutdown` (the seed's state-management pattern).

use std::path::PathBuf;
use std::sync::Arc;

use pi_agent_core::AgentMessage;
use serde::Serialize;
use serde_json::Value;

use pi_session_store::{EntryKind, SessionEntry};

/// Why a session event is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionReason {
    /// The session was loaded at startup.
    Start,
    /// Another session was opened (`/resume`, RPC `switch_session`).
    Switch,
    /// A new session was forked from an earlier message or cloned (`/fork`, RPC `fork`, `clone`).
    Branch,
    /// A new empty session started (`/new`, RPC `new_session`).
    New,
    /// The leaf moved to another point of the tree (`/tree`).
    Tree,
    /// The process is exiting: release resources.
    Shutdown,
}

impl SessionReason {
    /// `start`, `switch`, …
    pub fn as_str(self) -> &'static str {
        match self {
            SessionReason::Start => "start",
            SessionReason::Switch => "switch",
            SessionReason::Branch => "branch",
            SessionReason::New => "new",
            SessionReason::Tree => "tree",
            SessionReason::Shutdown => "shutdown",
        }
    }
}

/// What a custom tool's `on_session` receives (pi's `SessionEvent` for tools).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSessionEvent {
    /// Why.
    pub reason: SessionReason,
    /// The entries of the current branch, from the root to the leaf (pi's
    /// `sessionManager.getBranch()`): after `/tree` moved the leaf, entries of the branch left
    /// behind are not here, although they stay in the session file.
    pub entries: Arc<Vec<SessionEntry>>,
    /// The session file (`None` with `--no-session` or before it is written).
    pub session_file: Option<PathBuf>,
    /// The session file before a switch, branch or new session.
    pub previous_session_file: Option<PathBuf>,
}

impl ToolSessionEvent {
    /// An event with no entries and no files (tests, tools used outside a session).
    pub fn empty(reason: SessionReason) -> Self {
        ToolSessionEvent {
            reason,
            entries: Arc::new(Vec::new()),
            session_file: None,
            previous_session_file: None,
        }
    }

    /// The `details` of this tool's results along the branch ([`Self::entries`]), oldest first —
    /// what a tool scans to rebuild its state.
    ///
    /// ```
    /// use pi_coding_agent::custom_tools::{SessionReason, ToolSessionEvent};
    /// let event = ToolSessionEvent::empty(SessionReason::Start);
    /// assert_eq!(event.result_details("todo").count(), 0);
    /// ```
    pub fn result_details<'a>(&'a self, tool_name: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.entries.iter().filter_map(move |entry| match &entry.kind {
            EntryKind::Message(AgentMessage::ToolResult(result)) if result.tool_name == tool_name => {
                result.details.as_ref().filter(|d| !d.is_null())
            }
            _ => None,
        })
    }
}
