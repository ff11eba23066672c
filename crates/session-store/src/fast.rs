//! A fast path for the most common line, a `message` entry as pi (and this crate) writes it: `type`
//! first, and `role` first in the message. Such a line is deserialized straight into a
//! [`SessionEntry`] without building a JSON tree of the message first. Any other line, and any
//! line the fast path cannot read, goes the general way (`file::parse_line`), which gives the same
//! result for the lines both can read.

use std::fmt;

use pi_agent_core::{AgentMessage, AssistantMessage, CustomMessage, ToolResultMessage, UserMessage};
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::{Map, Value};

use super::entry::{EntryKind, SessionEntry};

/// Reads a `message` entry line; `None` when the line is not one the fast path reads.
pub(crate) fn parse_message_line(bytes: &[u8]) -> Option<SessionEntry> {
    serde_json::from_slice::<FastEntry>(bytes).ok().map(|fast| fast.0)
}

struct FastEntry(SessionEntry);

/// The keys of an entry, compared without allocating.
enum EntryKey {
    Type,
    Id,
    ParentId,
    Timestamp,
    Message,
    Other(String),
}

impl<'de> Deserialize<'de> for EntryKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = EntryKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an entry key")
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<EntryKey, E> {
                Ok(match key {
                    "type" => EntryKey::Type,
                    "id" => EntryKey::Id,
                    "parentId" => EntryKey::ParentId,
                    "timestamp" => EntryKey::Timestamp,
                    "message" => EntryKey::Message,
                    other => EntryKey::Other(other.to_owned()),
                })
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// Accepts exactly the string `message` (the entry type of the fast path).
struct MessageType;

impl<'de> Deserialize<'de> for MessageType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TypeVisitor;
        impl Visitor<'_> for TypeVisitor {
            type Value = MessageType;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("\"message\"")
            }
            fn visit_str<E: de::Error>(self, value: &str) -> Result<MessageType, E> {
                if value == "message" {
                    Ok(MessageType)
                } else {
                    Err(E::custom("not a message entry"))
                }
            }
        }
        deserializer.deserialize_str(TypeVisitor)
    }
}

impl<'de> Deserialize<'de> for FastEntry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EntryVisitor)
    }
}

struct EntryVisitor;

impl<'de> Visitor<'de> for EntryVisitor {
    type Value = FastEntry;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a message entry")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FastEntry, A::Error> {
        let not_fast = || de::Error::custom("not a fast-path line");
        match map.next_key::<EntryKey>()? {
            Some(EntryKey::Type) => map.next_value::<MessageType>()?,
            _ => return Err(not_fast()),
        };
        let (mut id, mut parent_id, mut timestamp, mut message) = (None, None, None, None);
        let mut extra = Map::new();
        while let Some(key) = map.next_key::<EntryKey>()? {
            match key {
                EntryKey::Id => id = Some(map.next_value::<String>()?),
                EntryKey::ParentId => parent_id = map.next_value::<Option<String>>()?,
                EntryKey::Timestamp => timestamp = Some(map.next_value::<String>()?),
                EntryKey::Message => message = Some(map.next_value::<FastMessage>()?.0),
                EntryKey::Other(key) => {
                    extra.insert(key, map.next_value::<Value>()?);
                }
                EntryKey::Type => return Err(not_fast()),
            }
        }
        match (id, timestamp, message) {
            (Some(id), Some(timestamp), Some(message)) => Ok(FastEntry(SessionEntry {
                id,
                parent_id,
                timestamp,
                kind: EntryKind::Message(message),
                extra,
            })),
            _ => Err(not_fast()),
        }
    }
}

/// A message whose first key is `role`.
struct FastMessage(AgentMessage);

impl<'de> Deserialize<'de> for FastMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(MessageVisitor)
    }
}

struct MessageVisitor;

impl<'de> Visitor<'de> for MessageVisitor {
    type Value = FastMessage;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FastMessage, A::Error> {
        match map.next_key::<EntryKey>()? {
            Some(EntryKey::Other(key)) if key == "role" => {}
            _ => return Err(de::Error::custom("message without a leading role")),
        }
        let role = map.next_value::<String>()?;
        // The typed messages ignore their `role` tag when reading, so the rest of the map is all
        // they need.
        let rest = MapAccessDeserializer::new(map);
        let message = match role.as_str() {
            "user" => AgentMessage::User(UserMessage::deserialize(rest)?),
            "assistant" => AgentMessage::Assistant(AssistantMessage::deserialize(rest)?),
            "toolResult" => AgentMessage::ToolResult(ToolResultMessage::deserialize(rest)?),
            _ => {
                let mut fields = Map::<String, Value>::deserialize(rest)?;
                fields.shift_remove("role");
                AgentMessage::Custom(CustomMessage { role, fields })
            }
        };
        Ok(FastMessage(message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The general path, for comparison.
    fn slow(line: &str) -> SessionEntry {
        let obj = serde_json::from_str::<Map<String, Value>>(line).unwrap();
        SessionEntry::from_object(obj).unwrap()
    }

    #[test]
    fn fast_and_general_paths_agree() {
        for line in [
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi","timestamp":1}}"#,
            r#"{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"ls","arguments":{"x":[1,{"y":null}]}}],"api":"a","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0.5,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.5}},"stopReason":"toolUse","timestamp":2,"unknownField":true}}"#,
            r#"{"type":"message","id":"c","parentId":"b","timestamp":"t","message":{"role":"toolResult","toolCallId":"c","toolName":"ls","content":[{"type":"text","text":"a\u00e9\n"}],"details":{"k":"v"},"isError":false,"timestamp":3},"extra":{"z":1}}"#,
            r#"{"type":"message","id":"d","parentId":"c","timestamp":"t","message":{"role":"bashExecution","command":"ls","output":"","exitCode":null,"cancelled":false,"truncated":false,"timestamp":4}}"#,
        ] {
            let fast = parse_message_line(line.as_bytes()).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(fast, slow(line));
            assert!(!matches!(fast.kind, EntryKind::Other(_)));
        }
    }

    #[test]
    fn other_lines_take_the_general_path() {
        for line in [
            r#"{"type":"label","id":"a","parentId":null,"timestamp":"t","targetId":"b"}"#,
            r#"{"id":"a","type":"message","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi","timestamp":1}}"#,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"content":"hi","role":"user","timestamp":1}}"#,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","timestamp":1}}"#,
            r#"{"type":"message","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi","timestamp":1}}"#,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi","timestamp":1}"#,
        ] {
            assert_eq!(parse_message_line(line.as_bytes()), None, "{line}");
        }
    }
}
