//! Sessions on disk: pi's JSONL session tree (format version 3), read and written so that files
//! pi wrote load here and files written here load in pi. `docs/sessions.md` describes the format.
//!
//! * [`SessionManager`]: one session — its header, its entries (a tree linked by `parentId`), the
//!   leaf that appends continue from, and the file it appends to (or none, in memory).
//! * entries: [`SessionHeader`], [`SessionEntry`] and [`EntryKind`], with pi's JSON shapes.
//! * the tree: paths, the model's [`SessionContext`] (compaction, summaries, custom messages) and
//!   the [`SessionTree`].
//! * paths: `~/.pi/agent/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl` and [`SessionRoot`];
//!   listing and finding sessions are [`SessionManager::list`], [`SessionManager::list_all`],
//!   [`SessionManager::find`] and [`SessionManager::continue_recent`].
//!
//! **When files are written.** A new session writes nothing until it has its first assistant
//! message: that append writes the header and every entry so far in one write, and every later
//! append writes its one line (one `write` on a file opened for appending; no `fsync`). A session
//! that never got an answer leaves no file. An opened or forked file already exists, so its appends
//! are written at once. The file is never rewritten, except once when an old (version 1 or 2) file
//! is migrated on load (an atomic replace). An in-memory session ([`SessionManager::in_memory`],
//! `--no-session`) writes nothing, ever.
//!
//! **Failures.** An append whose write fails returns the error and changes nothing: the entry is
//! not added, the leaf stays, and the file is truncated back to what it held. Loading skips torn and
//! garbage lines with a [`LoadWarning`] naming the file and line, keeps everything else, and fails
//! only when the header (line 1) is missing or invalid. The calls are blocking: use
//! `spawn_blocking` (or accept a small write) in async code.
//!
//! ```
//! use pi_agent_core::{AgentMessage, AssistantMessage, ContentBlock};
//! use pi_session_store::SessionManager;
//!
//! let root = tempfile::tempdir().unwrap();
//! let mut session = SessionManager::create("/work/app", root.path()).unwrap();
//! let question = session.append_message(AgentMessage::user("What is 2 + 2?")).unwrap();
//! let file = session.file().unwrap().to_path_buf();
//! assert!(!file.exists()); // nothing written before the first assistant message
//!
//! let answer = AssistantMessage { content: vec![ContentBlock::text("4")], ..Default::default() };
//! session.append_message(answer.into()).unwrap();
//! assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 3);
//!
//! // Branch: go back to the question and answer differently; both answers stay in the file.
//! session.branch(&question).unwrap();
//! let other = AssistantMessage { content: vec![ContentBlock::text("four")], ..Default::default() };
//! session.append_message(other.into()).unwrap();
//!
//! let (reopened, warnings) = SessionManager::open(&file).unwrap();
//! assert!(warnings.is_empty());
//! assert_eq!(reopened.entries().len(), 3);
//! assert_eq!(reopened.build_context(), session.build_context());
//! ```

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use pi_agent_core::AgentMessage;
use pi_agent_core::UserContent;
use serde_json::Value;

mod entry;
mod error;
mod fast;
mod file;
mod ids;
mod list;
mod paths;
mod persist;
mod time;
mod tree;

pub use entry::{
    BranchSummary, CURRENT_VERSION, Compaction, CustomMessageEntry, EntryKind, SessionEntry, SessionHeader,
};
pub use error::{LoadWarning, StoreError};
pub use list::{SessionInfo, looks_like_path};
pub use paths::{SessionRoot, cwd_dir_name, session_file_name};
pub use time::{format_iso_ms, now_iso, parse_iso_ms};
pub use tree::{
    BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX, COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX, SessionContext,
    SessionTree, TreeNode, branch_summary_message, build_context, compaction_summary_message, custom_message,
    summary_text_for_model,
};

use persist::Writer;

/// What [`SessionManager::continue_recent`] found: the newest session of the directory, if any,
/// and every warning on the way — its torn lines, and newer files that were skipped because their
/// header is damaged (`-c` says so and names them rather than silently starting elsewhere).
#[derive(Debug)]
pub struct Recent {
    /// The session, opened.
    pub session: Option<SessionManager>,
    /// What the user should hear about.
    pub warnings: Vec<LoadWarning>,
}

/// One session: header, entry tree, leaf, and the file it is appended to (if any).
///
/// ```
/// use pi_session_store::SessionManager;
///
/// let mut session = SessionManager::in_memory("/work/app");
/// let model = session.append_model_change("anthropic", "claude-sonnet-4-5").unwrap();
/// session.append_thinking_level_change("high").unwrap();
/// session.append_label(&model, Some("start")).unwrap();
/// assert_eq!(session.label(&model), Some("start"));
/// let context = session.build_context();
/// assert_eq!(context.thinking_level.as_deref(), Some("high"));
/// assert!(session.file().is_none());
/// ```
#[derive(Debug)]
pub struct SessionManager {
    header: SessionHeader,
    /// Where new sessions made from this one go (`None` in memory).
    dir: Option<PathBuf>,
    /// `None` in memory.
    writer: Option<Writer>,
    entries: Vec<SessionEntry>,
    /// Entry id → position in `entries` (the later entry for a duplicated id).
    index: HashMap<String, usize>,
    /// Entry id → current label.
    labels: HashMap<String, String>,
    /// Position of the leaf; `None` before the first entry (or after [`Self::reset_leaf`]).
    leaf: Option<usize>,
    has_assistant: bool,
}

/// What an append changed, to take it back if the write fails.
struct Undo {
    leaf: Option<usize>,
    label: Option<(String, Option<String>)>,
    had_assistant: bool,
}

impl SessionManager {
    fn fresh(cwd: &Path, dir: Option<PathBuf>, file: Option<PathBuf>, parent_session: Option<String>) -> Self {
        let id = ids::new_session_id();
        let timestamp = time::now_iso();
        let file = file.or_else(|| {
            dir.as_ref()
                .map(|dir| dir.join(paths::session_file_name(&timestamp, &id)))
        });
        SessionManager {
            header: SessionHeader::new(id, timestamp, cwd.to_string_lossy(), parent_session),
            dir,
            writer: file.map(Writer::new_file),
            entries: Vec::new(),
            index: HashMap::new(),
            labels: HashMap::new(),
            leaf: None,
            has_assistant: false,
        }
    }

    /// A new session of `cwd` in `root`'s directory for it (created if needed). Nothing is written
    /// until the first assistant message.
    pub fn create(cwd: impl AsRef<Path>, root: impl Into<SessionRoot>) -> Result<Self, StoreError> {
        let cwd = cwd.as_ref();
        let dir = root.into().dir_for(cwd);
        create_dir(&dir)?;
        Ok(Self::fresh(cwd, Some(dir), None, None))
    }

    /// A new session that will be written to `file` (pi's `--session <path>` for a path that does
    /// not exist yet). Appending fails if `file` exists and is not empty by then.
    pub fn create_at(cwd: impl AsRef<Path>, file: impl Into<PathBuf>) -> Self {
        let file = absolute(file.into());
        let dir = file.parent().map(Path::to_path_buf);
        Self::fresh(cwd.as_ref(), dir, Some(file), None)
    }

    /// A session that is never written (`--no-session`).
    pub fn in_memory(cwd: impl AsRef<Path>) -> Self {
        Self::fresh(cwd.as_ref(), None, None, None)
    }

    /// Loads a session file. Torn or garbage lines are skipped and reported in the warnings; a
    /// version 1 or 2 file is migrated and rewritten as version 3. The leaf is the last entry.
    pub fn open(path: impl AsRef<Path>) -> Result<(Self, Vec<LoadWarning>), StoreError> {
        let path = absolute(path.as_ref().to_path_buf());
        let mut loaded = file::load(&path)?;
        let persisted = loaded.entries.len();
        let mut manager = SessionManager {
            header: loaded.header,
            dir: path.parent().map(Path::to_path_buf),
            writer: Some(Writer::existing(path.clone(), persisted, loaded.ends_with_newline)),
            entries: loaded.entries,
            index: HashMap::new(),
            labels: HashMap::new(),
            leaf: None,
            has_assistant: false,
        };
        for (earlier, later) in manager.rebuild_index() {
            let (id, line) = (&manager.entries[later].id, loaded.entry_lines[later]);
            let id = error::brief(id, 80);
            loaded.warnings.push(LoadWarning {
                message: format!(
                    "entry id {id} is also used on line {}; this later entry wins",
                    loaded.entry_lines[earlier]
                ),
                path: path.clone(),
                line,
            });
        }
        loaded.warnings.sort_by_key(|w| w.line);
        Ok((manager, loaded.warnings))
    }

    /// Opens the session of `cwd` whose file was modified last (`-c`); [`Recent::session`] is
    /// `None` when it has none. Newer files with a damaged header are named in the warnings.
    pub fn continue_recent(cwd: impl AsRef<Path>, root: impl Into<SessionRoot>) -> Result<Recent, StoreError> {
        let (newest, mut warnings) = list::most_recent(cwd.as_ref(), &root.into())?;
        let session = match newest {
            Some(path) => {
                let (session, load_warnings) = Self::open(path)?;
                warnings.extend(load_warnings);
                Some(session)
            }
            None => None,
        };
        Ok(Recent { session, warnings })
    }

    /// The sessions of `cwd`, newest activity first (`/resume`, `-r`).
    pub fn list(cwd: impl AsRef<Path>, root: impl Into<SessionRoot>) -> Result<Vec<SessionInfo>, StoreError> {
        list::list(cwd.as_ref(), &root.into())
    }

    /// Every session under `root`, newest activity first.
    pub fn list_all(root: impl Into<SessionRoot>) -> Result<Vec<SessionInfo>, StoreError> {
        list::list_all(&root.into())
    }

    /// The file for `--session <path|id>`: a path (it contains `/` or `\`, or ends in `.jsonl`;
    /// relative to `cwd`) that exists, or the one session whose id starts with the text — looked
    /// for among `cwd`'s sessions first, then among all. No match or several are errors.
    pub fn find(root: impl Into<SessionRoot>, cwd: impl AsRef<Path>, path_or_id: &str) -> Result<PathBuf, StoreError> {
        list::find(&root.into(), cwd.as_ref(), path_or_id)
    }

    /// Copies a whole session (of another working directory) into a new session of `target_cwd`
    /// whose header names it as `parentSession`; written at once.
    pub fn fork_from(
        source: impl AsRef<Path>,
        target_cwd: impl AsRef<Path>,
        root: impl Into<SessionRoot>,
    ) -> Result<(Self, Vec<LoadWarning>), StoreError> {
        let source = absolute(source.as_ref().to_path_buf());
        let (from, warnings) = Self::open(&source)?;
        let target_cwd = target_cwd.as_ref();
        let dir = root.into().dir_for(target_cwd);
        let parent = Some(source.to_string_lossy().into_owned());
        let manager = Self::write_new(target_cwd, dir, parent, from.entries)?;
        Ok((manager, warnings))
    }

    /// A session of `cwd` with `entries`, written at once to a new file in `dir`.
    fn write_new(
        cwd: &Path,
        dir: PathBuf,
        parent_session: Option<String>,
        entries: Vec<SessionEntry>,
    ) -> Result<Self, StoreError> {
        create_dir(&dir)?;
        let mut manager = Self::fresh(cwd, Some(dir), None, parent_session);
        manager.entries = entries;
        manager.rebuild_index();
        let path = manager
            .writer
            .as_ref()
            .map(|w| w.path().to_path_buf())
            .unwrap_or_default();
        let write_error = |source| StoreError::Write {
            path: path.clone(),
            source,
        };
        let bytes = file::render(&manager.header, &manager.entries).map_err(write_error)?;
        crate::file::replace_file(&path, &bytes).map_err(write_error)?;
        manager.writer = Some(Writer::existing(path, manager.entries.len(), true));
        Ok(manager)
    }

    /// Starts over with a new, empty session in the same directory (or in memory), with
    /// `parent_session` in its header (`/new`, RPC `new_session`). Returns the new file path.
    pub fn new_session(&mut self, parent_session: Option<String>) -> Option<&Path> {
        let cwd = PathBuf::from(&self.header.cwd);
        *self = Self::fresh(&cwd, self.dir.take(), None, parent_session);
        self.file()
    }

    /// Indexes the entries; returns the positions `(earlier, later)` of entries that share an id
    /// (the later one is the one the tree sees, as in pi).
    fn rebuild_index(&mut self) -> Vec<(usize, usize)> {
        self.index = HashMap::with_capacity(self.entries.len());
        self.labels.clear();
        self.has_assistant = false;
        let mut duplicates = Vec::new();
        for (position, entry) in self.entries.iter().enumerate() {
            if let Some(earlier) = self.index.insert(entry.id.clone(), position) {
                duplicates.push((earlier, position));
            }
            match &entry.kind {
                EntryKind::Label { target_id, label } => match label.as_deref().filter(|l| !l.is_empty()) {
                    Some(label) => {
                        self.labels.insert(target_id.clone(), label.to_owned());
                    }
                    None => {
                        self.labels.remove(target_id);
                    }
                },
                EntryKind::Message(AgentMessage::Assistant(_)) => self.has_assistant = true,
                _ => {}
            }
        }
        self.leaf = self.entries.len().checked_sub(1);
        duplicates
    }

    // ----- accessors ---------------------------------------------------------------------------

    /// The header (line 1 of the file).
    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.header.id
    }

    /// The working directory of the session.
    pub fn cwd(&self) -> &Path {
        Path::new(&self.header.cwd)
    }

    /// The session file (it may not exist yet); `None` in memory.
    pub fn file(&self) -> Option<&Path> {
        self.writer.as_ref().map(Writer::path)
    }

    /// The directory new sessions made from this one go to; `None` in memory.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Whether the session is written to a file (false for [`Self::in_memory`]).
    pub fn is_persisted(&self) -> bool {
        self.writer.is_some()
    }

    /// Whether the file exists with the header on disk (false before the first assistant message).
    pub fn is_written(&self) -> bool {
        self.writer.as_ref().is_some_and(Writer::is_written)
    }

    /// The session's name: the latest non-empty `session_info` name.
    pub fn name(&self) -> Option<&str> {
        self.entries.iter().rev().find_map(|e| match &e.kind {
            EntryKind::SessionInfo { name: Some(name) } if !name.is_empty() => Some(name.as_str()),
            _ => None,
        })
    }

    /// Every entry, in file order (the header excluded).
    pub fn entries(&self) -> &[SessionEntry] {
        &self.entries
    }

    /// The entry with this id.
    pub fn entry(&self, id: &str) -> Option<&SessionEntry> {
        self.index.get(id).map(|&i| &self.entries[i])
    }

    /// The id of the leaf (the entry the next append follows); `None` before the first entry.
    pub fn leaf_id(&self) -> Option<&str> {
        self.leaf.map(|i| self.entries[i].id.as_str())
    }

    /// The leaf entry.
    pub fn leaf_entry(&self) -> Option<&SessionEntry> {
        self.leaf.map(|i| &self.entries[i])
    }

    /// The current label of an entry.
    pub fn label(&self, entry_id: &str) -> Option<&str> {
        self.labels.get(entry_id).map(String::as_str)
    }

    fn require(&self, entry_id: &str) -> Result<usize, StoreError> {
        self.index
            .get(entry_id)
            .copied()
            .ok_or_else(|| StoreError::EntryNotFound {
                id: entry_id.to_owned(),
                session: self
                    .file()
                    .map_or_else(|| "(in memory)".to_owned(), |p| p.display().to_string()),
            })
    }

    // ----- appends -----------------------------------------------------------------------------

    /// Adds an entry as a child of the leaf, makes it the leaf and writes what is due.
    fn append(&mut self, kind: EntryKind) -> Result<String, StoreError> {
        let id = ids::new_entry_id(|candidate| self.index.contains_key(candidate));
        let parent_id = self.leaf_id().map(str::to_owned);
        let entry = SessionEntry::new(id.clone(), parent_id, time::now_iso(), kind);
        let undo = self.push(entry);
        if let Err(error) = self.write_due() {
            self.pop(undo);
            return Err(error);
        }
        Ok(id)
    }

    fn push(&mut self, entry: SessionEntry) -> Undo {
        let mut undo = Undo {
            leaf: self.leaf,
            label: None,
            had_assistant: self.has_assistant,
        };
        match &entry.kind {
            EntryKind::Label { target_id, label } => {
                let previous = match label.as_deref().filter(|l| !l.is_empty()) {
                    Some(label) => self.labels.insert(target_id.clone(), label.to_owned()),
                    None => self.labels.remove(target_id),
                };
                undo.label = Some((target_id.clone(), previous));
            }
            EntryKind::Message(AgentMessage::Assistant(_)) => self.has_assistant = true,
            _ => {}
        }
        self.index.insert(entry.id.clone(), self.entries.len());
        self.leaf = Some(self.entries.len());
        self.entries.push(entry);
        undo
    }

    fn pop(&mut self, undo: Undo) {
        if let Some(entry) = self.entries.pop() {
            self.index.remove(&entry.id);
        }
        if let Some((target, previous)) = undo.label {
            match previous {
                Some(label) => self.labels.insert(target, label),
                None => self.labels.remove(&target),
            };
        }
        self.leaf = undo.leaf;
        self.has_assistant = undo.had_assistant;
    }

    /// Writes the entries not on disk yet, once the session has an assistant message (or its file
    /// already exists).
    fn write_due(&mut self) -> Result<(), StoreError> {
        let Some(writer) = &mut self.writer else {
            return Ok(());
        };
        if !writer.is_written() && !self.has_assistant {
            return Ok(());
        }
        writer.write_pending(&self.header, &self.entries)
    }

    /// Appends a message (`user`, `assistant`, `toolResult`, `bashExecution`, `custom`, …).
    /// Compaction and branch summaries have their own entries
    /// ([`Self::append_compaction`], [`Self::append_branch_summary`]).
    pub fn append_message(&mut self, message: AgentMessage) -> Result<String, StoreError> {
        self.append(EntryKind::Message(message))
    }

    /// Appends a `model_change`.
    pub fn append_model_change(&mut self, provider: &str, model_id: &str) -> Result<String, StoreError> {
        self.append(EntryKind::ModelChange {
            provider: provider.to_owned(),
            model_id: model_id.to_owned(),
        })
    }

    /// Appends a `thinking_level_change`.
    pub fn append_thinking_level_change(&mut self, thinking_level: &str) -> Result<String, StoreError> {
        self.append(EntryKind::ThinkingLevelChange {
            thinking_level: thinking_level.to_owned(),
        })
    }

    /// Appends a `compaction`.
    pub fn append_compaction(&mut self, compaction: Compaction) -> Result<String, StoreError> {
        self.append(EntryKind::Compaction(compaction))
    }

    /// Appends a `branch_summary` as a child of the leaf (see also [`Self::branch_with_summary`]).
    pub fn append_branch_summary(&mut self, summary: BranchSummary) -> Result<String, StoreError> {
        self.append(EntryKind::BranchSummary(summary))
    }

    /// Appends a `custom` entry: extension or tool state, not part of the model's context.
    pub fn append_custom(&mut self, custom_type: &str, data: Option<Value>) -> Result<String, StoreError> {
        self.append(EntryKind::Custom {
            custom_type: custom_type.to_owned(),
            data,
        })
    }

    /// Appends a `custom_message`: an extension's message that is part of the model's context
    /// (`display`: whether the UI shows it).
    pub fn append_custom_message(
        &mut self,
        custom_type: &str,
        content: UserContent,
        display: bool,
        details: Option<Value>,
    ) -> Result<String, StoreError> {
        self.append(EntryKind::CustomMessage(CustomMessageEntry {
            custom_type: custom_type.to_owned(),
            content,
            display,
            details,
        }))
    }

    /// Sets (`Some`) or clears (`None` or empty) the label of an entry.
    pub fn append_label(&mut self, target_id: &str, label: Option<&str>) -> Result<String, StoreError> {
        self.require(target_id)?;
        self.append(EntryKind::Label {
            target_id: target_id.to_owned(),
            label: label.map(str::to_owned),
        })
    }

    /// Names the session (RPC `set_session_name`); the name is trimmed.
    pub fn append_session_info(&mut self, name: &str) -> Result<String, StoreError> {
        self.append(EntryKind::SessionInfo {
            name: Some(name.trim().to_owned()),
        })
    }

    // ----- branching ---------------------------------------------------------------------------

    /// Moves the leaf to an earlier entry: the next append starts a new branch there, in the same
    /// file. Nothing is written.
    pub fn branch(&mut self, entry_id: &str) -> Result<(), StoreError> {
        self.leaf = Some(self.require(entry_id)?);
        Ok(())
    }

    /// Moves the leaf before the first entry: the next append is a new root (re-editing the first
    /// user message).
    pub fn reset_leaf(&mut self) {
        self.leaf = None;
    }

    /// Branches to `entry_id` (`None`: before the first entry) and appends a `branch_summary` of
    /// the branch being left there (its `fromId` is the entry id, or `root`). If the write fails,
    /// the leaf stays where it was.
    pub fn branch_with_summary(
        &mut self,
        entry_id: Option<&str>,
        summary: &str,
        details: Option<Value>,
        from_hook: Option<bool>,
    ) -> Result<String, StoreError> {
        let target = entry_id.map(|id| self.require(id)).transpose()?;
        let previous = self.leaf;
        self.leaf = target;
        let result = self.append(EntryKind::BranchSummary(BranchSummary {
            from_id: entry_id.unwrap_or("root").to_owned(),
            summary: summary.to_owned(),
            details,
            from_hook,
        }));
        if result.is_err() {
            self.leaf = previous;
        }
        result
    }

    /// A new session holding the path from the root to `entry_id` (labels on it are re-created at
    /// the end), whose header names this session's file as `parentSession` (`/fork`, `/clone`,
    /// RPC `fork`). It is written at once to a new file in `root`'s directory for this session's
    /// cwd; forking an in-memory session gives an in-memory session.
    pub fn fork(&self, entry_id: &str, root: impl Into<SessionRoot>) -> Result<SessionManager, StoreError> {
        self.fork_to(Some(entry_id), Some(root.into()))
    }

    /// [`fork`](Self::fork) in full: `entry_id` `None` forks before the first entry (an empty
    /// session that still names this one as its parent, written from its first assistant message
    /// on, like [`new_session`](Self::new_session)); `root` `None`, or an in-memory session, gives an
    /// in-memory fork.
    pub fn fork_to(&self, entry_id: Option<&str>, root: Option<SessionRoot>) -> Result<SessionManager, StoreError> {
        let entries = match entry_id {
            Some(entry_id) => self.fork_entries(entry_id)?,
            None => Vec::new(),
        };
        let cwd = self.cwd().to_path_buf();
        let (Some(writer), Some(root)) = (&self.writer, root) else {
            let mut manager = Self::in_memory(&cwd);
            manager.entries = entries;
            manager.rebuild_index();
            return Ok(manager);
        };
        let parent_session = Some(writer.path().to_string_lossy().into_owned());
        let dir = root.dir_for(&cwd);
        if entries.is_empty() {
            create_dir(&dir)?;
            return Ok(Self::fresh(&cwd, Some(dir), None, parent_session));
        }
        Self::write_new(&cwd, dir, parent_session, entries)
    }

    /// The entries of a fork at `entry_id`: the path to it, then its labels re-created as pi does
    /// (in the order the labels were set, each with the time of the entry that set it).
    fn fork_entries(&self, entry_id: &str) -> Result<Vec<SessionEntry>, StoreError> {
        let path = self.branch_path(entry_id)?;
        let mut entries: Vec<SessionEntry> = path
            .iter()
            .filter(|e| !matches!(e.kind, EntryKind::Label { .. }))
            .map(|e| (*e).clone())
            .collect();
        let mut taken: std::collections::HashSet<String> = entries.iter().map(|e| e.id.clone()).collect();
        let mut parent = entries.last().map(|e| e.id.clone());
        let labelled: Vec<(String, String, String)> = self
            .labels_in_force()
            .into_iter()
            .filter(|(target, _, _)| taken.contains(*target))
            .map(|(target, label, timestamp)| (target.to_owned(), label.to_owned(), timestamp.to_owned()))
            .collect();
        for (target_id, label, timestamp) in labelled {
            let id = ids::new_entry_id(|candidate| taken.contains(candidate));
            taken.insert(id.clone());
            let kind = EntryKind::Label {
                target_id,
                label: Some(label),
            };
            entries.push(SessionEntry::new(id.clone(), parent.replace(id), timestamp, kind));
        }
        Ok(entries)
    }

    /// The labels in force as `(target, label, timestamp of the entry that set it)`, in pi's order:
    /// a label keeps the place it was first set at; a cleared one starts over when set again.
    fn labels_in_force(&self) -> Vec<(&str, &str, &str)> {
        let mut order: Vec<Option<(&str, &str, &str)>> = Vec::new();
        let mut at: HashMap<&str, usize> = HashMap::new();
        for entry in &self.entries {
            let EntryKind::Label { target_id, label } = &entry.kind else {
                continue;
            };
            match label.as_deref().filter(|label| !label.is_empty()) {
                Some(label) => {
                    let item = Some((target_id.as_str(), label, entry.timestamp.as_str()));
                    match at.get(target_id.as_str()) {
                        Some(&position) => order[position] = item,
                        None => {
                            at.insert(target_id, order.len());
                            order.push(item);
                        }
                    }
                }
                None => {
                    if let Some(position) = at.remove(target_id.as_str()) {
                        order[position] = None;
                    }
                }
            }
        }
        order.into_iter().flatten().collect()
    }
}

fn create_dir(dir: &Path) -> Result<(), StoreError> {
    std::fs::create_dir_all(dir).map_err(|source| StoreError::Directory {
        path: dir.to_path_buf(),
        source,
    })
}

fn absolute(path: PathBuf) -> PathBuf {
    std::path::absolute(&path).unwrap_or(path)
}

#[cfg(test)]
mod tests;
