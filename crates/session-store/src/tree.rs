//! The session as a tree: paths from the root, the model's context, and the whole tree for
//! `/tree` and RPC `get_tree`.
//!
//! The context of a leaf is built from the path root → leaf: model and thinking-level changes set
//! [`SessionContext::model`] and [`SessionContext::thinking_level`] (an assistant message also
//! sets the model); the latest compaction on the path replaces everything before its
//! `firstKeptEntryId` with a `compactionSummary` message; `branch_summary` entries become
//! `branchSummary` messages and `custom_message` entries `custom` messages; `custom`, `label`,
//! `session_info` and unknown entries are not messages.

use pi_agent_core::{AgentMessage, CustomMessage};
use serde_json::{Map, Value};

use super::SessionManager;
use super::entry::{CustomMessageEntry, EntryKind, SessionEntry};
use super::error::StoreError;
use super::time::parse_iso_ms;

/// What the model sees of a session, and the settings in force at its leaf.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SessionContext {
    /// The messages, oldest first (custom roles included; `messages::convert_to_llm` maps them).
    pub messages: Vec<AgentMessage>,
    /// `(provider, model_id)` of the latest model change or assistant message on the path.
    pub model: Option<(String, String)>,
    /// The latest thinking level on the path (pi uses `off` when there is none).
    pub thinking_level: Option<String>,
}

/// Text put before a compaction summary when it is sent to the model.
pub const COMPACTION_SUMMARY_PREFIX: &str =
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
/// Text put after a compaction summary.
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
/// Text put before a branch summary when it is sent to the model.
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
/// Text put after a branch summary.
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

/// The user text pi sends for a `compactionSummary` or `branchSummary` message; `None` for other
/// messages.
///
/// ```
/// use pi_session_store::{compaction_summary_message, summary_text_for_model};
///
/// let message = compaction_summary_message("We fixed the parser.", 12_000, "2026-01-01T00:00:00.000Z");
/// let text = summary_text_for_model(&message).unwrap();
/// assert!(text.ends_with("<summary>\nWe fixed the parser.\n</summary>"));
/// ```
pub fn summary_text_for_model(message: &AgentMessage) -> Option<String> {
    let AgentMessage::Custom(custom) = message else {
        return None;
    };
    let (prefix, suffix) = match custom.role.as_str() {
        "compactionSummary" => (COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX),
        "branchSummary" => (BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX),
        _ => return None,
    };
    let summary = custom.fields.get("summary").and_then(Value::as_str).unwrap_or_default();
    Some(format!("{prefix}{summary}{suffix}"))
}

/// Milliseconds of an entry timestamp, `null` when it does not parse (JavaScript's `NaN`).
fn timestamp_ms(timestamp: &str) -> Value {
    parse_iso_ms(timestamp).map_or(Value::Null, Value::from)
}

/// pi's `compactionSummary` message `{role, summary, tokensBefore, timestamp}`.
pub fn compaction_summary_message(summary: &str, tokens_before: u64, timestamp: &str) -> AgentMessage {
    let mut fields = Map::new();
    fields.insert("summary".into(), Value::String(summary.to_owned()));
    fields.insert("tokensBefore".into(), Value::from(tokens_before));
    fields.insert("timestamp".into(), timestamp_ms(timestamp));
    AgentMessage::Custom(CustomMessage {
        role: "compactionSummary".into(),
        fields,
    })
}

/// pi's `branchSummary` message `{role, summary, fromId, timestamp}`.
pub fn branch_summary_message(summary: &str, from_id: &str, timestamp: &str) -> AgentMessage {
    let mut fields = Map::new();
    fields.insert("summary".into(), Value::String(summary.to_owned()));
    fields.insert("fromId".into(), Value::String(from_id.to_owned()));
    fields.insert("timestamp".into(), timestamp_ms(timestamp));
    AgentMessage::Custom(CustomMessage {
        role: "branchSummary".into(),
        fields,
    })
}

/// pi's `custom` message `{role, customType, content, display, details?, timestamp}` for a
/// `custom_message` entry.
pub fn custom_message(entry: &CustomMessageEntry, timestamp: &str) -> AgentMessage {
    let mut fields = Map::new();
    fields.insert("customType".into(), Value::String(entry.custom_type.clone()));
    let content = serde_json::to_value(&entry.content).unwrap_or(Value::Null);
    fields.insert("content".into(), content);
    fields.insert("display".into(), Value::Bool(entry.display));
    if let Some(details) = &entry.details {
        fields.insert("details".into(), details.clone());
    }
    fields.insert("timestamp".into(), timestamp_ms(timestamp));
    AgentMessage::Custom(CustomMessage {
        role: "custom".into(),
        fields,
    })
}

/// The message an entry contributes to the context, if any.
fn context_message(entry: &SessionEntry) -> Option<AgentMessage> {
    match &entry.kind {
        EntryKind::Message(message) => Some(message.clone()),
        EntryKind::CustomMessage(custom) => Some(custom_message(custom, &entry.timestamp)),
        EntryKind::BranchSummary(b) if !b.summary.is_empty() => {
            Some(branch_summary_message(&b.summary, &b.from_id, &entry.timestamp))
        }
        _ => None,
    }
}

/// The context of a path (root first), as [`SessionManager::build_context`] builds it for the
/// leaf's path.
pub fn build_context(path: &[&SessionEntry]) -> SessionContext {
    let mut context = SessionContext::default();
    let mut compaction = None;
    for (index, entry) in path.iter().enumerate() {
        match &entry.kind {
            EntryKind::ThinkingLevelChange { thinking_level } => context.thinking_level = Some(thinking_level.clone()),
            EntryKind::ModelChange { provider, model_id } => context.model = Some((provider.clone(), model_id.clone())),
            EntryKind::Message(AgentMessage::Assistant(message)) => {
                context.model = Some((message.provider.clone(), message.model.clone()));
            }
            EntryKind::Compaction(c) => compaction = Some((index, c)),
            _ => {}
        }
    }
    let kept = match compaction {
        Some((at, c)) => {
            context.messages.push(compaction_summary_message(
                &c.summary,
                c.tokens_before,
                &path[at].timestamp,
            ));
            let before = &path[..at];
            let first_kept = before.iter().position(|e| e.id == c.first_kept_entry_id);
            let kept_before = first_kept.map_or(&[][..], |start| &before[start..]);
            kept_before.iter().chain(&path[at + 1..]).copied().collect::<Vec<_>>()
        }
        None => path.to_vec(),
    };
    context.messages.reserve(kept.len());
    context.messages.extend(kept.into_iter().filter_map(context_message));
    context
}

/// The whole session as a tree, for `/tree` and RPC `get_tree`. Node `i` is entry `i` of
/// [`SessionManager::entries`]; children are ordered by timestamp, oldest first (as pi does).
/// Entries whose parent is missing (or that would close a cycle) are roots.
#[derive(Debug, Clone)]
pub struct SessionTree<'a> {
    nodes: Vec<TreeNode<'a>>,
    roots: Vec<usize>,
}

/// One node of a [`SessionTree`].
#[derive(Debug, Clone)]
pub struct TreeNode<'a> {
    /// The entry.
    pub entry: &'a SessionEntry,
    /// Index of the parent node.
    pub parent: Option<usize>,
    /// Indexes of the child nodes, oldest first.
    pub children: Vec<usize>,
    /// The entry's current label.
    pub label: Option<&'a str>,
}

impl<'a> SessionTree<'a> {
    /// Indexes of the root nodes (normally one).
    pub fn roots(&self) -> &[usize] {
        &self.roots
    }

    /// Every node; node `i` holds entry `i`.
    pub fn nodes(&self) -> &[TreeNode<'a>] {
        &self.nodes
    }

    /// Node `index`, if there is one.
    pub fn node(&self, index: usize) -> Option<&TreeNode<'a>> {
        self.nodes.get(index)
    }

    /// The nodes in depth-first pre-order (roots in file order) with their depth, without
    /// recursion (linear sessions are deep).
    pub fn depth_first(&self) -> impl Iterator<Item = (usize, &TreeNode<'a>)> + '_ {
        let mut stack: Vec<(usize, usize)> = self.roots.iter().rev().map(|&r| (0, r)).collect();
        std::iter::from_fn(move || {
            let (depth, index) = stack.pop()?;
            let node = &self.nodes[index];
            stack.extend(node.children.iter().rev().map(|&c| (depth + 1, c)));
            Some((depth, node))
        })
    }
}

impl SessionManager {
    /// Index of each entry's parent (`None` for roots, orphans and entries that would close a
    /// cycle).
    fn parent_indexes(&self) -> Vec<Option<usize>> {
        let mut parents: Vec<Option<usize>> = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                e.parent_id
                    .as_ref()
                    .and_then(|p| self.index.get(p))
                    .copied()
                    .filter(|p| *p != i)
            })
            .collect();
        // 0 = unvisited, 1 = on the current walk, 2 = known to reach a root.
        let mut state = vec![0u8; parents.len()];
        let mut walk = Vec::new();
        for start in 0..parents.len() {
            let mut current = start;
            loop {
                match state[current] {
                    2 => break,
                    1 => {
                        parents[current] = None; // cut the cycle here
                        break;
                    }
                    _ => {}
                }
                state[current] = 1;
                walk.push(current);
                match parents[current] {
                    Some(parent) => current = parent,
                    None => break,
                }
            }
            for index in walk.drain(..) {
                state[index] = 2;
            }
        }
        parents
    }

    /// Entries from the root down to entry `start` (empty for `None`).
    pub(super) fn path_from(&self, start: Option<usize>) -> Vec<&SessionEntry> {
        let mut path = Vec::new();
        let mut on_path = vec![false; self.entries.len()];
        let mut current = start;
        while let Some(index) = current {
            // A cycle in a damaged file ends the walk where it closes: no entry twice.
            if std::mem::replace(&mut on_path[index], true) {
                break;
            }
            let entry = &self.entries[index];
            path.push(entry);
            current = entry
                .parent_id
                .as_ref()
                .and_then(|p| self.index.get(p))
                .copied()
                .filter(|p| *p != index);
        }
        path.reverse();
        path
    }

    /// The entries from the root to the leaf (every type: messages, changes, labels, …).
    pub fn path_to_leaf(&self) -> Vec<&SessionEntry> {
        self.path_from(self.leaf)
    }

    /// The entries from the root to `entry_id`.
    pub fn branch_path(&self, entry_id: &str) -> Result<Vec<&SessionEntry>, StoreError> {
        let index = self.require(entry_id)?;
        Ok(self.path_from(Some(index)))
    }

    /// The model's context at the leaf (compaction, branch summaries and custom messages as
    /// `docs/sessions.md` describes; see [`build_context`]). Each message in
    /// it is cloned once; compacted-away messages are not touched.
    pub fn build_context(&self) -> SessionContext {
        build_context(&self.path_to_leaf())
    }

    /// The direct children of an entry, in file order.
    pub fn children(&self, entry_id: &str) -> Vec<&SessionEntry> {
        self.entries
            .iter()
            .filter(|e| e.parent_id.as_deref() == Some(entry_id) && e.id != entry_id)
            .collect()
    }

    /// The whole tree with labels.
    pub fn tree(&self) -> SessionTree<'_> {
        let parents = self.parent_indexes();
        let mut nodes: Vec<TreeNode<'_>> = self
            .entries
            .iter()
            .zip(&parents)
            .map(|(entry, parent)| TreeNode {
                entry,
                parent: *parent,
                children: Vec::new(),
                label: self.labels.get(&entry.id).map(String::as_str),
            })
            .collect();
        let mut roots = Vec::new();
        for (index, parent) in parents.iter().enumerate() {
            match parent {
                Some(parent) => nodes[*parent].children.push(index),
                None => roots.push(index),
            }
        }
        for node in nodes.iter_mut().filter(|n| n.children.len() > 1) {
            node.children
                .sort_by_key(|&c| parse_iso_ms(&self.entries[c].timestamp).unwrap_or(i64::MAX));
        }
        SessionTree { nodes, roots }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::Compaction;

    fn entry(id: &str, parent: Option<&str>, kind: EntryKind) -> SessionEntry {
        SessionEntry::new(id, parent.map(str::to_owned), "2026-01-01T00:00:00.000Z", kind)
    }

    fn user(id: &str, parent: Option<&str>, text: &str) -> SessionEntry {
        entry(id, parent, EntryKind::Message(AgentMessage::user(text)))
    }

    fn texts(context: &SessionContext) -> Vec<String> {
        context
            .messages
            .iter()
            .map(|m| match m {
                AgentMessage::User(u) => u.content.text(),
                AgentMessage::Custom(c) => format!("<{}>", c.role),
                other => other.role().to_owned(),
            })
            .collect()
    }

    #[test]
    fn compaction_keeps_from_first_kept_entry() {
        let entries = [
            user("a", None, "one"),
            user("b", Some("a"), "two"),
            user("c", Some("b"), "three"),
            entry(
                "d",
                Some("c"),
                EntryKind::Compaction(Compaction {
                    summary: "s".into(),
                    first_kept_entry_id: "b".into(),
                    tokens_before: 9,
                    details: None,
                    from_hook: None,
                }),
            ),
            user("e", Some("d"), "four"),
        ];
        let path: Vec<_> = entries.iter().collect();
        let context = build_context(&path);
        assert_eq!(texts(&context), ["<compactionSummary>", "two", "three", "four"]);
        let summary = &context.messages[0];
        assert_eq!(
            serde_json::to_string(summary).unwrap(),
            r#"{"role":"compactionSummary","summary":"s","tokensBefore":9,"timestamp":1767225600000}"#
        );
        // A first-kept id not on the path keeps nothing before the compaction.
        let mut other = entries.clone();
        if let EntryKind::Compaction(c) = &mut other[3].kind {
            c.first_kept_entry_id = "zz".into();
        }
        let path: Vec<_> = other.iter().collect();
        assert_eq!(texts(&build_context(&path)), ["<compactionSummary>", "four"]);
    }

    #[test]
    fn settings_follow_the_path() {
        let entries = [
            entry(
                "a",
                None,
                EntryKind::ModelChange {
                    provider: "p".into(),
                    model_id: "m".into(),
                },
            ),
            entry(
                "b",
                Some("a"),
                EntryKind::ThinkingLevelChange {
                    thinking_level: "high".into(),
                },
            ),
            entry(
                "c",
                Some("b"),
                EntryKind::Custom {
                    custom_type: "t".into(),
                    data: None,
                },
            ),
        ];
        let path: Vec<_> = entries.iter().collect();
        let context = build_context(&path);
        assert!(context.messages.is_empty());
        assert_eq!(context.model, Some(("p".into(), "m".into())));
        assert_eq!(context.thinking_level.as_deref(), Some("high"));
    }
}
