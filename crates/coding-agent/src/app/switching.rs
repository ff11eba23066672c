//! Replacing the session an [`App`] holds: a new one, another file, a fork, a clone; and what
//! the pickers that choose them list (user messages of the tree, sessions of the directory).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_agent_core::AgentMessage;
use pi_session_store::{EntryKind, LoadWarning, SessionInfo, SessionManager};

use super::{App, AppError, SessionStartReason, ShutdownReason, UserMessageEntry, lock};
use crate::custom_tools::{SessionReason, ToolSessionEvent};

impl App {
    /// The event custom tools get for `reason`: the entries of the current branch (from the root
    /// to the leaf, pi's `getBranch()`, so entries of branches left by `/tree` are not in it) and
    /// the session file.
    pub fn tool_session_event(&self, reason: SessionReason, previous: Option<PathBuf>) -> ToolSessionEvent {
        self.with_store(|store| ToolSessionEvent {
            reason,
            entries: Arc::new(store.path_to_leaf().into_iter().cloned().collect()),
            session_file: store.file().filter(|_| store.is_written()).map(Path::to_path_buf),
            previous_session_file: previous,
        })
    }

    /// Tells every custom tool about the session (`on_session`).
    pub async fn notify_tools(&self, reason: SessionReason, previous: Option<PathBuf>) {
        let event = self.tool_session_event(reason, previous);
        self.inner.session.emit_tool_session_event(&event).await;
    }

    /// Starts a new empty session (in the same place); pending previews of the old one are
    /// rejected (reason `New session started.`) and queued messages dropped, custom tools get
    /// `new`. Fails while a run is active.
    pub async fn new_session(&self, parent_session: Option<String>) -> Result<(), AppError> {
        if self.before_switch("new", None).await {
            return Err(AppError::Cancelled);
        }
        let agent = self.inner.session.agent();
        agent.reset()?;
        self.drop_pending("New session started.").await;
        let previous = self.session_file();
        self.with_store(|store| {
            store.new_session(parent_session);
        });
        self.sync_session_id();
        self.record_model_and_thinking_level();
        self.replaced(ShutdownReason::New, SessionStartReason::New, previous.clone())
            .await;
        self.notify_tools(SessionReason::New, previous).await;
        Ok(())
    }

    /// Opens another session file and loads it as [`start`](Self::start) does (a file whose branch
    /// has no `thinking_level_change` gets one, as in pi); pending previews are rejected (`Session
    /// switched.`), custom tools get `switch`. Fails while a run is active.
    pub async fn switch_session(&self, path: &Path) -> Result<Vec<LoadWarning>, AppError> {
        if self.before_switch("resume", Some(path)).await {
            return Err(AppError::Cancelled);
        }
        let (store, warnings) = SessionManager::open(path)?;
        self.inner.session.agent().reset()?;
        self.drop_pending("Session switched.").await;
        let previous = self.session_file();
        *lock(&self.inner.store) = store;
        self.sync_session_id();
        self.start(false, false);
        self.replaced(ShutdownReason::Resume, SessionStartReason::Resume, previous.clone())
            .await;
        self.notify_tools(SessionReason::Switch, previous).await;
        Ok(warnings)
    }

    /// pi's fork: a new session holding the history before the user message `entry_id`; returns
    /// that message's text (for the editor). Custom tools get `branch`. Fails while a run is
    /// active.
    pub async fn fork(&self, entry_id: &str) -> Result<String, AppError> {
        if self.before_fork(entry_id, "before").await {
            return Err(AppError::Cancelled);
        }
        let previous = self.session_file();
        let (text, parent) = self.with_store(|store| {
            let entry = store
                .entry(entry_id)
                .ok_or_else(|| AppError::EntryNotFound(entry_id.to_owned()))?;
            let EntryKind::Message(AgentMessage::User(user)) = &entry.kind else {
                return Err(AppError::NotUserMessage(entry_id.to_owned()));
            };
            Ok((user.content.text(), entry.parent_id.clone()))
        })?;
        self.inner.session.agent().reset()?;
        self.drop_pending("Session forked.").await;
        let forked = self.with_store(|store| store.fork_to(parent.as_deref(), self.inner.root.clone()))?;
        *lock(&self.inner.store) = forked;
        self.sync_session_id();
        self.restore(true, true);
        self.replaced(ShutdownReason::Fork, SessionStartReason::Fork, previous.clone())
            .await;
        self.notify_tools(SessionReason::Branch, previous).await;
        Ok(text)
    }

    /// pi's clone (RPC `clone`): a new session holding the current branch, its leaf included (the
    /// labels on it re-created), whose header names this session as its parent; the model and
    /// thinking level stay, custom tools get `branch`. Fails while a run is active. As in pi, a
    /// session file not written yet (no assistant message so far) has nothing to clone: the leaf
    /// is reported as not found.
    pub async fn clone_session(&self) -> Result<(), AppError> {
        let previous = self.session_file();
        let leaf = self.with_store(|store| {
            let leaf = store.leaf_id().ok_or(AppError::NothingToClone)?.to_owned();
            // pi clones from the file on disk.
            if store.file().is_some() && !store.is_written() {
                return Err(AppError::EntryNotFound(leaf));
            }
            Ok(leaf)
        })?;
        if self.before_fork(&leaf, "at").await {
            return Err(AppError::Cancelled);
        }
        self.inner.session.agent().reset()?;
        self.drop_pending("Session cloned.").await;
        let cloned = self.with_store(|store| store.fork_to(Some(&leaf), self.inner.root.clone()))?;
        *lock(&self.inner.store) = cloned;
        self.sync_session_id();
        self.restore(true, true);
        self.replaced(ShutdownReason::Fork, SessionStartReason::Fork, previous.clone())
            .await;
        self.notify_tools(SessionReason::Branch, previous).await;
        Ok(())
    }

    /// The user messages of the session's tree in depth-first order (`/tree`, `/fork`), each with
    /// its indentation (one level per fork above it) and whether it is on the current branch.
    pub fn user_messages(&self) -> Vec<UserMessageEntry> {
        self.with_store(|store| {
            let on_branch: std::collections::HashSet<&str> =
                store.path_to_leaf().iter().map(|e| e.id.as_str()).collect();
            let tree = store.tree();
            let mut out = Vec::new();
            // Depth-first without recursion: (index, level).
            let mut stack: Vec<(usize, usize)> = tree.roots().iter().rev().map(|&r| (r, 0)).collect();
            while let Some((index, level)) = stack.pop() {
                let Some(node) = tree.node(index) else { continue };
                if let EntryKind::Message(AgentMessage::User(user)) = &node.entry.kind {
                    out.push(UserMessageEntry {
                        id: node.entry.id.clone(),
                        text: user.content.text(),
                        level,
                        on_branch: on_branch.contains(node.entry.id.as_str()),
                    });
                }
                let fork = usize::from(node.children.len() > 1);
                stack.extend(node.children.iter().rev().map(|&child| (child, level + fork)));
            }
            out
        })
    }

    /// The sessions of this working directory, newest activity first (`/resume`); empty with
    /// `--no-session`.
    pub async fn sessions(&self) -> Result<Vec<SessionInfo>, AppError> {
        let Some(root) = self.inner.root.clone() else {
            return Ok(Vec::new());
        };
        let cwd = self.with_store(|store| store.cwd().to_path_buf());
        // Reads every session file of the directory.
        Ok(tokio::task::spawn_blocking(move || SessionManager::list(&cwd, root)).await??)
    }
}
