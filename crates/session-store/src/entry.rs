//! The lines of a session file: the header and the entries, with pi's exact JSON shapes.
//!
//! Every entry has `type`, `id` (8 lowercase hex characters, unique in the file), `parentId` (the
//! entry it follows, `null` for a root) and `timestamp` (ISO 8601). Fields this crate does not know
//! are kept in [`SessionEntry::extra`] and written back after the known ones; an entry of an
//! unknown type is kept whole as [`EntryKind::Other`], so nothing pi (or a later pi) wrote is lost.
//!
//! ```
//! use pi_session_store::{EntryKind, SessionEntry};
//!
//! let line = r#"{"type":"model_change","id":"a1b2c3d4","parentId":null,"timestamp":"2026-11-23T15:26:59.123Z","provider":"anthropic","modelId":"claude-sonnet-4-5"}"#;
//! let entry: SessionEntry = serde_json::from_str(line).unwrap();
//! assert!(matches!(&entry.kind, EntryKind::ModelChange { provider, .. } if provider == "anthropic"));
//! assert_eq!(serde_json::to_string(&entry).unwrap(), line);
//! ```

use pi_agent_core::{AgentMessage, UserContent};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// The session format version this crate writes (pi's `CURRENT_SESSION_VERSION`).
pub const CURRENT_VERSION: u32 = 3;

/// Line 1 of a session file: `{"type":"session","version":3,"id","timestamp","cwd"[,"parentSession"]}`.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionHeader {
    /// Format version; files older than [`CURRENT_VERSION`] are migrated on load.
    pub version: u32,
    /// The session id (a UUID v4).
    pub id: String,
    /// When the session was created (ISO 8601).
    pub timestamp: String,
    /// The working directory of the session (empty in very old files).
    pub cwd: String,
    /// The session file this one was forked from, or the parent given to a new session.
    pub parent_session: Option<String>,
    /// Header fields this crate does not know, written back after the known ones.
    pub extra: Map<String, Value>,
}

impl SessionHeader {
    /// A current-version header.
    pub fn new(
        id: impl Into<String>,
        timestamp: impl Into<String>,
        cwd: impl Into<String>,
        parent_session: Option<String>,
    ) -> Self {
        SessionHeader {
            version: CURRENT_VERSION,
            id: id.into(),
            timestamp: timestamp.into(),
            cwd: cwd.into(),
            parent_session,
            extra: Map::new(),
        }
    }

    /// Reads a header object; the reason is returned when it is not one.
    pub(crate) fn from_object(mut obj: Map<String, Value>) -> Result<Self, String> {
        match obj.shift_remove("type") {
            Some(Value::String(t)) if t == "session" => {}
            Some(Value::String(t)) => {
                let t = super::error::brief(&t, 80);
                return Err(format!("line 1 is a {t:?} entry, not the session header"));
            }
            _ => return Err("line 1 has no \"type\":\"session\"".into()),
        }
        let id = match obj.shift_remove("id") {
            Some(Value::String(id)) => id,
            _ => return Err("the header has no string \"id\"".into()),
        };
        // A header without a version is a version 1 file.
        let version = match obj.shift_remove("version") {
            None | Some(Value::Null) => 1,
            Some(Value::Number(n)) => n
                .as_u64()
                .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0).map(|f| f as u64))
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(|| format!("the header version {n} is not a whole number"))?,
            Some(other) => return Err(format!("the header version {other} is not a number")),
        };
        let mut string = |key: &str| match obj.shift_remove(key) {
            Some(Value::String(s)) => Ok(Some(s)),
            None | Some(Value::Null) => Ok(None),
            Some(other) => Err(format!("the header field {key:?} is {other}, not a string")),
        };
        let timestamp = string("timestamp")?.unwrap_or_default();
        let cwd = string("cwd")?.unwrap_or_default();
        let parent_session = string("parentSession")?;
        Ok(SessionHeader {
            version,
            id,
            timestamp,
            cwd,
            parent_session,
            extra: obj,
        })
    }
}

impl Serialize for SessionHeader {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", "session")?;
        map.serialize_entry("version", &self.version)?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("timestamp", &self.timestamp)?;
        map.serialize_entry("cwd", &self.cwd)?;
        if let Some(parent) = &self.parent_session {
            map.serialize_entry("parentSession", parent)?;
        }
        for (key, value) in &self.extra {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// A `compaction` entry: everything on the path before `first_kept_entry_id` is replaced in the
/// model's context by `summary`.
#[derive(Debug, Clone, PartialEq)]
pub struct Compaction {
    /// The summary of the compacted history.
    pub summary: String,
    /// The first entry (on the path to this compaction) that stays in the context.
    pub first_kept_entry_id: String,
    /// Context tokens before the compaction.
    pub tokens_before: u64,
    /// Extension data (not sent to the model).
    pub details: Option<Value>,
    /// True when an extension produced the compaction.
    pub from_hook: Option<bool>,
}

/// A `branch_summary` entry: a summary of the branch the conversation came back from.
#[derive(Debug, Clone, PartialEq)]
pub struct BranchSummary {
    /// The entry the new branch starts from (`root` when it starts before the first entry).
    pub from_id: String,
    /// The summary of the abandoned branch.
    pub summary: String,
    /// Extension data (not sent to the model).
    pub details: Option<Value>,
    /// True when an extension produced the summary.
    pub from_hook: Option<bool>,
}

/// A `custom_message` entry: an extension's message that is part of the model's context.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomMessageEntry {
    /// The extension's identifier.
    pub custom_type: String,
    /// A string or text / image blocks.
    pub content: UserContent,
    /// Whether the UI shows the message (`false`: hidden).
    pub display: bool,
    /// Extension data (not sent to the model).
    pub details: Option<Value>,
}

/// What an entry records.
#[derive(Debug, Clone, PartialEq)]
pub enum EntryKind {
    /// `message`: a transcript message (`user`, `assistant`, `toolResult`, or a custom role such as
    /// `bashExecution` or `custom`).
    Message(AgentMessage),
    /// `model_change {provider, modelId}`.
    ModelChange {
        /// Provider name.
        provider: String,
        /// Model id.
        model_id: String,
    },
    /// `thinking_level_change {thinkingLevel}`.
    ThinkingLevelChange {
        /// `off`, `minimal`, `low`, `medium`, `high`, …
        thinking_level: String,
    },
    /// `compaction {summary, firstKeptEntryId, tokensBefore, details?, fromHook?}`.
    Compaction(Compaction),
    /// `branch_summary {fromId, summary, details?, fromHook?}`.
    BranchSummary(BranchSummary),
    /// `custom {customType, data?}`: extension or tool state, not part of the model's context.
    Custom {
        /// The extension's identifier.
        custom_type: String,
        /// Its data.
        data: Option<Value>,
    },
    /// `custom_message {customType, content, display, details?}`: part of the model's context.
    CustomMessage(CustomMessageEntry),
    /// `label {targetId, label?}`: sets (or, without `label`, clears) the label of an entry.
    Label {
        /// The labelled entry.
        target_id: String,
        /// The label; `None` clears it.
        label: Option<String>,
    },
    /// `session_info {name?}`: the session's display name.
    SessionInfo {
        /// The name.
        name: Option<String>,
    },
    /// An entry of a type this crate does not know, or of a known type whose fields do not parse:
    /// the whole JSON object as it was read, written back unchanged.
    Other(Map<String, Value>),
}

/// One entry of the session tree (every line of the file after the header).
#[derive(Debug, Clone, PartialEq)]
pub struct SessionEntry {
    /// 8 lowercase hex characters, unique in the file.
    pub id: String,
    /// The entry this one follows; `None` for a root.
    pub parent_id: Option<String>,
    /// When the entry was appended (ISO 8601).
    pub timestamp: String,
    /// What it records.
    pub kind: EntryKind,
    /// Fields of a known entry type that this crate does not know (always empty for
    /// [`EntryKind::Other`], which keeps its whole object).
    pub extra: Map<String, Value>,
}

impl SessionEntry {
    /// An entry without unknown fields.
    pub fn new(
        id: impl Into<String>,
        parent_id: Option<String>,
        timestamp: impl Into<String>,
        kind: EntryKind,
    ) -> Self {
        SessionEntry {
            id: id.into(),
            parent_id,
            timestamp: timestamp.into(),
            kind,
            extra: Map::new(),
        }
    }

    /// The entry's `type` string (`message`, `compaction`, …, or an unknown type).
    pub fn entry_type(&self) -> &str {
        match &self.kind {
            EntryKind::Message(_) => "message",
            EntryKind::ModelChange { .. } => "model_change",
            EntryKind::ThinkingLevelChange { .. } => "thinking_level_change",
            EntryKind::Compaction(_) => "compaction",
            EntryKind::BranchSummary(_) => "branch_summary",
            EntryKind::Custom { .. } => "custom",
            EntryKind::CustomMessage(_) => "custom_message",
            EntryKind::Label { .. } => "label",
            EntryKind::SessionInfo { .. } => "session_info",
            EntryKind::Other(raw) => raw.get("type").and_then(Value::as_str).unwrap_or_default(),
        }
    }

    /// The message of a `message` entry.
    pub fn message(&self) -> Option<&AgentMessage> {
        match &self.kind {
            EntryKind::Message(message) => Some(message),
            _ => None,
        }
    }

    /// Reads an entry object (its `type` is a string). A known type whose fields do not parse
    /// yields [`EntryError::Invalid`]; the caller keeps the raw object with
    /// [`SessionEntry::other`].
    pub(crate) fn from_object(mut obj: Map<String, Value>) -> Result<Self, EntryError> {
        match obj.get("type") {
            Some(Value::String(t)) if KNOWN_TYPES.contains(&t.as_str()) => {}
            // Unknown type: keep the whole object, in its order.
            Some(Value::String(_)) => return SessionEntry::other(obj).ok_or(EntryError::NoId),
            _ => return Err(EntryError::NoType),
        }
        let entry_type = match obj.shift_remove("type") {
            Some(Value::String(t)) => t,
            _ => return Err(EntryError::NoType),
        };
        let id = match obj.shift_remove("id") {
            Some(Value::String(id)) => id,
            _ => return Err(EntryError::NoId),
        };
        let parent_id = match obj.shift_remove("parentId") {
            Some(Value::String(p)) => Some(p),
            None | Some(Value::Null) => None,
            Some(_) => return Err(EntryError::Invalid("\"parentId\" is neither a string nor null".into())),
        };
        let timestamp = match obj.shift_remove("timestamp") {
            Some(Value::String(t)) => t,
            _ => return Err(EntryError::Invalid("no string \"timestamp\"".into())),
        };
        let fields = &mut obj;
        let kind = match entry_type.as_str() {
            "message" => {
                let message = fields
                    .shift_remove("message")
                    .ok_or_else(|| EntryError::Invalid("no \"message\"".into()))?;
                EntryKind::Message(
                    AgentMessage::deserialize(message).map_err(|e| EntryError::Invalid(format!("message: {e}")))?,
                )
            }
            "model_change" => EntryKind::ModelChange {
                provider: required_string(fields, "provider")?,
                model_id: required_string(fields, "modelId")?,
            },
            "thinking_level_change" => EntryKind::ThinkingLevelChange {
                thinking_level: required_string(fields, "thinkingLevel")?,
            },
            "compaction" => EntryKind::Compaction(Compaction {
                summary: required_string(fields, "summary")?,
                first_kept_entry_id: required_string(fields, "firstKeptEntryId")?,
                tokens_before: whole_number(fields, "tokensBefore")?,
                details: fields.shift_remove("details"),
                from_hook: optional_bool(fields, "fromHook")?,
            }),
            "branch_summary" => EntryKind::BranchSummary(BranchSummary {
                from_id: required_string(fields, "fromId")?,
                summary: required_string(fields, "summary")?,
                details: fields.shift_remove("details"),
                from_hook: optional_bool(fields, "fromHook")?,
            }),
            "custom" => EntryKind::Custom {
                custom_type: required_string(fields, "customType")?,
                data: fields.shift_remove("data"),
            },
            "custom_message" => {
                let custom_type = required_string(fields, "customType")?;
                let content = fields
                    .shift_remove("content")
                    .ok_or_else(|| EntryError::Invalid("no \"content\"".into()))?;
                let content = UserContent::deserialize(content)
                    .map_err(|_| EntryError::Invalid("\"content\" is neither a string nor content blocks".into()))?;
                let display = match fields.shift_remove("display") {
                    Some(Value::Bool(b)) => b,
                    // pi treats a missing `display` as falsy.
                    None | Some(Value::Null) => false,
                    Some(_) => return Err(EntryError::Invalid("\"display\" is not a boolean".into())),
                };
                EntryKind::CustomMessage(CustomMessageEntry {
                    custom_type,
                    content,
                    display,
                    details: fields.shift_remove("details"),
                })
            }
            "label" => EntryKind::Label {
                target_id: required_string(fields, "targetId")?,
                label: optional_string(fields, "label")?,
            },
            "session_info" => EntryKind::SessionInfo {
                name: optional_string(fields, "name")?,
            },
            _ => return Err(EntryError::NoType),
        };
        Ok(SessionEntry {
            id,
            parent_id,
            timestamp,
            kind,
            extra: obj,
        })
    }

    /// Keeps a whole object (with a string `type` and `id`) as an [`EntryKind::Other`] entry.
    pub(crate) fn other(raw: Map<String, Value>) -> Option<Self> {
        let id = raw.get("id")?.as_str()?.to_owned();
        let parent_id = raw.get("parentId").and_then(Value::as_str).map(str::to_owned);
        let timestamp = raw
            .get("timestamp")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        Some(SessionEntry {
            id,
            parent_id,
            timestamp,
            kind: EntryKind::Other(raw),
            extra: Map::new(),
        })
    }
}

/// The entry types this crate reads into typed [`EntryKind`] variants.
const KNOWN_TYPES: [&str; 9] = [
    "message",
    "model_change",
    "thinking_level_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
];

/// Why an entry object could not be read as its type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EntryError {
    /// No string `type`.
    NoType,
    /// No string `id`: the entry cannot be placed in the tree.
    NoId,
    /// A known type with missing or mistyped fields.
    Invalid(String),
}

fn required_string(fields: &mut Map<String, Value>, key: &str) -> Result<String, EntryError> {
    match fields.shift_remove(key) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(EntryError::Invalid(format!("{key:?} is not a string"))),
        None => Err(EntryError::Invalid(format!("no {key:?}"))),
    }
}

fn optional_string(fields: &mut Map<String, Value>, key: &str) -> Result<Option<String>, EntryError> {
    match fields.shift_remove(key) {
        Some(Value::String(s)) => Ok(Some(s)),
        None | Some(Value::Null) => Ok(None),
        Some(_) => Err(EntryError::Invalid(format!("{key:?} is not a string"))),
    }
}

fn optional_bool(fields: &mut Map<String, Value>, key: &str) -> Result<Option<bool>, EntryError> {
    match fields.shift_remove(key) {
        Some(Value::Bool(b)) => Ok(Some(b)),
        None | Some(Value::Null) => Ok(None),
        Some(_) => Err(EntryError::Invalid(format!("{key:?} is not a boolean"))),
    }
}

fn whole_number(fields: &mut Map<String, Value>, key: &str) -> Result<u64, EntryError> {
    let invalid = || EntryError::Invalid(format!("{key:?} is not a whole number"));
    match fields.shift_remove(key) {
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0).map(|f| f as u64))
            .ok_or_else(invalid),
        Some(_) => Err(invalid()),
        None => Err(EntryError::Invalid(format!("no {key:?}"))),
    }
}

impl Serialize for SessionEntry {
    /// Writes the entry with pi's key order (pi builds `custom` and `custom_message` entries with
    /// their payload first), then any unknown fields.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if let EntryKind::Other(raw) = &self.kind {
            return raw.serialize(serializer);
        }
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", self.entry_type())?;
        let base = |map: &mut S::SerializeMap| -> Result<(), S::Error> {
            map.serialize_entry("id", &self.id)?;
            map.serialize_entry("parentId", &self.parent_id)?;
            map.serialize_entry("timestamp", &self.timestamp)
        };
        match &self.kind {
            EntryKind::Message(message) => {
                base(&mut map)?;
                map.serialize_entry("message", message)?;
            }
            EntryKind::ModelChange { provider, model_id } => {
                base(&mut map)?;
                map.serialize_entry("provider", provider)?;
                map.serialize_entry("modelId", model_id)?;
            }
            EntryKind::ThinkingLevelChange { thinking_level } => {
                base(&mut map)?;
                map.serialize_entry("thinkingLevel", thinking_level)?;
            }
            EntryKind::Compaction(c) => {
                base(&mut map)?;
                map.serialize_entry("summary", &c.summary)?;
                map.serialize_entry("firstKeptEntryId", &c.first_kept_entry_id)?;
                map.serialize_entry("tokensBefore", &c.tokens_before)?;
                if let Some(details) = &c.details {
                    map.serialize_entry("details", details)?;
                }
                if let Some(from_hook) = c.from_hook {
                    map.serialize_entry("fromHook", &from_hook)?;
                }
            }
            EntryKind::BranchSummary(b) => {
                base(&mut map)?;
                map.serialize_entry("fromId", &b.from_id)?;
                map.serialize_entry("summary", &b.summary)?;
                if let Some(details) = &b.details {
                    map.serialize_entry("details", details)?;
                }
                if let Some(from_hook) = b.from_hook {
                    map.serialize_entry("fromHook", &from_hook)?;
                }
            }
            EntryKind::Custom { custom_type, data } => {
                map.serialize_entry("customType", custom_type)?;
                if let Some(data) = data {
                    map.serialize_entry("data", data)?;
                }
                base(&mut map)?;
            }
            EntryKind::CustomMessage(m) => {
                map.serialize_entry("customType", &m.custom_type)?;
                map.serialize_entry("content", &m.content)?;
                map.serialize_entry("display", &m.display)?;
                if let Some(details) = &m.details {
                    map.serialize_entry("details", details)?;
                }
                base(&mut map)?;
            }
            EntryKind::Label { target_id, label } => {
                base(&mut map)?;
                map.serialize_entry("targetId", target_id)?;
                if let Some(label) = label {
                    map.serialize_entry("label", label)?;
                }
            }
            EntryKind::SessionInfo { name } => {
                base(&mut map)?;
                if let Some(name) = name {
                    map.serialize_entry("name", name)?;
                }
            }
            EntryKind::Other(_) => {}
        }
        for (key, value) in &self.extra {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for SessionEntry {
    /// Reads an entry object. A known type with unreadable fields becomes [`EntryKind::Other`];
    /// an object without a string `type` or `id` is an error.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let obj = Map::<String, Value>::deserialize(deserializer)?;
        let backup = obj.clone();
        match SessionEntry::from_object(obj) {
            Ok(entry) => Ok(entry),
            Err(EntryError::NoType) => Err(D::Error::custom("session entry has no string \"type\"")),
            Err(EntryError::NoId) => Err(D::Error::custom("session entry has no string \"id\"")),
            Err(EntryError::Invalid(_)) => {
                SessionEntry::other(backup).ok_or_else(|| D::Error::custom("session entry has no string \"id\""))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(line: &str) -> SessionEntry {
        let entry: SessionEntry = serde_json::from_str(line).unwrap();
        assert_eq!(serde_json::to_string(&entry).unwrap(), line);
        entry
    }

    #[test]
    fn every_known_type_round_trips_in_pi_key_order() {
        let base = r#""id":"00000001","parentId":"00000000","timestamp":"2026-01-01T00:00:00.000Z""#;
        let lines = [
            format!(r#"{{"type":"message",{base},"message":{{"role":"user","content":"hi","timestamp":1}}}}"#),
            format!(r#"{{"type":"model_change",{base},"provider":"openai","modelId":"gpt-5"}}"#),
            format!(r#"{{"type":"thinking_level_change",{base},"thinkingLevel":"high"}}"#),
            format!(
                r#"{{"type":"compaction",{base},"summary":"s","firstKeptEntryId":"0000000a","tokensBefore":1200,"details":{{"files":[]}},"fromHook":false}}"#
            ),
            format!(r#"{{"type":"compaction",{base},"summary":"s","firstKeptEntryId":"0000000a","tokensBefore":5}}"#),
            format!(r#"{{"type":"branch_summary",{base},"fromId":"root","summary":"tried X"}}"#),
            format!(r#"{{"type":"custom","customType":"todo",{base}}}"#),
            format!(r#"{{"type":"custom","customType":"todo","data":{{"n":1}},{base}}}"#),
            format!(
                r#"{{"type":"custom_message","customType":"note","content":"hello","display":true,"details":null,{base}}}"#
            ),
            format!(
                r#"{{"type":"custom_message","customType":"note","content":[{{"type":"text","text":"x"}}],"display":false,{base}}}"#
            ),
            r#"{"type":"label","id":"00000001","parentId":null,"timestamp":"t","targetId":"00000000","label":"start"}"#
                .to_owned(),
            format!(r#"{{"type":"label",{base},"targetId":"00000000"}}"#),
            format!(r#"{{"type":"session_info",{base},"name":"refactor"}}"#),
        ];
        for line in &lines {
            let entry = round_trip(line);
            assert!(!matches!(entry.kind, EntryKind::Other(_)), "{line}");
        }
    }

    #[test]
    fn unknown_fields_and_types_are_kept() {
        let entry = round_trip(
            r#"{"type":"model_change","id":"a","parentId":null,"timestamp":"t","provider":"p","modelId":"m","future":[1,2]}"#,
        );
        assert_eq!(entry.extra["future"], serde_json::json!([1, 2]));
        let entry = round_trip(r#"{"type":"hologram","payload":{"x":1},"id":"b","parentId":"a","timestamp":"t"}"#);
        assert_eq!(entry.entry_type(), "hologram");
        assert_eq!(entry.parent_id.as_deref(), Some("a"));
    }

    #[test]
    fn invalid_known_type_is_kept_raw() {
        let line = r#"{"type":"compaction","id":"a","parentId":null,"timestamp":"t","summary":3}"#;
        let entry = round_trip(line);
        assert!(matches!(entry.kind, EntryKind::Other(_)));
        assert_eq!(entry.entry_type(), "compaction");
        let obj = serde_json::from_str::<Map<String, Value>>(line).unwrap();
        assert_eq!(
            SessionEntry::from_object(obj),
            Err(EntryError::Invalid("\"summary\" is not a string".into()))
        );
    }

    #[test]
    fn header_round_trips_and_defaults_version_one() {
        let line = r#"{"type":"session","version":3,"id":"u","timestamp":"t","cwd":"/w","parentSession":"/p.jsonl"}"#;
        let header = SessionHeader::from_object(serde_json::from_str(line).unwrap()).unwrap();
        assert_eq!(serde_json::to_string(&header).unwrap(), line);
        let v1 = SessionHeader::from_object(serde_json::from_str(r#"{"type":"session","id":"u"}"#).unwrap()).unwrap();
        assert_eq!((v1.version, v1.cwd.as_str()), (1, ""));
        let err = SessionHeader::from_object(serde_json::from_str(r#"{"type":"message","id":"u"}"#).unwrap());
        assert_eq!(err, Err("line 1 is a \"message\" entry, not the session header".into()));
    }
}
