//! From an MCP `tools/call` result to pi's [`ToolResult`] (or [`ToolError`] for `isError`).
//!
//! | MCP | pi |
//! |---|---|
//! | `{"type":"text","text"}` | a text block |
//! | `{"type":"image","data","mimeType"}` | an image block |
//! | `{"type":"resource","resource":{"uri","text"}}` | text: `[resource <uri>]` and the text |
//! | `{"type":"resource","resource":{"uri","blob"}}` | text: `[resource <uri> (<mimeType>): binary content not shown]` |
//! | `{"type":"resource_link","uri","name"}` | text: `[resource link <name>: <uri>]` (and the description) |
//! | `{"type":"audio","mimeType"}` | text: `[audio (<mimeType>): not shown]` |
//! | any other block | text: `[unsupported MCP content "<type>"]` |
//! | `structuredContent` | `details` (and, when there is no content at all, a text block with its JSON) |
//! | `isError: true` | a failed call whose message is the text of the content |

use pi_agent_core::{ContentBlock, ToolError, ToolResult};
use serde_json::{Map, Value};

/// Converts the result of calling `tool` into what the model reads. Takes the result by value:
/// the text of its blocks moves into the result instead of being copied (a tool may answer with
/// many megabytes).
pub(super) fn convert(mut result: Value, tool: &str, server: &str) -> Result<ToolResult, ToolError> {
    let blocks = match result.get_mut("content").map(Value::take) {
        Some(Value::Array(blocks)) => blocks,
        _ => Vec::new(),
    };
    let mut content: Vec<ContentBlock> = blocks.into_iter().map(block).collect();
    let structured = result
        .get_mut("structuredContent")
        .map(Value::take)
        .filter(|v| !v.is_null());
    if content.is_empty()
        && let Some(structured) = &structured
    {
        content.push(ContentBlock::text(structured.to_string()));
    }
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        let text: Vec<&str> = content.iter().filter_map(ContentBlock::as_text).collect();
        // No text, or only empty text: the model still needs to read that the call failed.
        let message = if text.iter().all(|text| text.trim().is_empty()) {
            format!("MCP tool \"{tool}\" of server \"{server}\" failed")
        } else {
            text.join("\n")
        };
        let error = ToolError::new(message);
        return Err(match structured {
            Some(details) => error.with_details(details),
            None => error,
        });
    }
    Ok(ToolResult {
        content,
        details: structured.unwrap_or_else(|| Value::Object(Map::new())),
        ..ToolResult::default()
    })
}

/// One MCP content block (a text block's text is moved, not copied).
fn block(mut block: Value) -> ContentBlock {
    if block.get("type").and_then(Value::as_str) == Some("text") {
        return match block.get_mut("text").map(Value::take) {
            Some(Value::String(text)) => ContentBlock::text(text),
            _ => ContentBlock::text(""),
        };
    }
    let field = |name: &str| block.get(name).and_then(Value::as_str);
    match field("type").unwrap_or_default() {
        "image" => match (field("data"), field("mimeType")) {
            (Some(data), Some(mime_type)) => ContentBlock::image(data, mime_type),
            _ => ContentBlock::text("[image without data or mimeType]"),
        },
        "resource" => resource(block.get("resource").unwrap_or(&Value::Null)),
        "resource_link" => {
            let uri = field("uri").unwrap_or_default();
            let name = field("title").or(field("name")).unwrap_or(uri);
            let mut text = format!("[resource link {name}: {uri}]");
            if let Some(description) = field("description") {
                text.push('\n');
                text.push_str(description);
            }
            ContentBlock::text(text)
        }
        "audio" => ContentBlock::text(format!(
            "[audio ({}): not shown]",
            field("mimeType").unwrap_or("unknown type")
        )),
        other => ContentBlock::text(format!("[unsupported MCP content \"{other}\"]")),
    }
}

/// An embedded resource: its text, or a note for binary content.
fn resource(resource: &Value) -> ContentBlock {
    let field = |name: &str| resource.get(name).and_then(Value::as_str);
    let uri = field("uri").unwrap_or_default();
    match field("text") {
        Some(text) => ContentBlock::text(format!("[resource {uri}]\n{text}")),
        None => ContentBlock::text(format!(
            "[resource {uri} ({}): binary content not shown]",
            field("mimeType").unwrap_or("unknown type")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn texts(result: &ToolResult) -> Vec<&str> {
        result.content.iter().filter_map(ContentBlock::as_text).collect()
    }

    #[test]
    fn every_kind_of_content_reaches_the_model() {
        let result = json!({
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "inside"}},
                {"type": "resource", "resource": {"uri": "file:///b.bin", "mimeType": "application/zip", "blob": "UEs="}},
                {"type": "resource_link", "uri": "file:///c", "name": "c", "description": "the c file"},
                {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
                {"type": "video"}
            ],
            "structuredContent": {"n": 1}
        });
        let converted = convert(result, "t", "s").unwrap();
        assert_eq!(converted.content[1], ContentBlock::image("AAAA", "image/png"));
        assert_eq!(
            texts(&converted),
            [
                "hello",
                "[resource file:///a.txt]\ninside",
                "[resource file:///b.bin (application/zip): binary content not shown]",
                "[resource link c: file:///c]\nthe c file",
                "[audio (audio/wav): not shown]",
                "[unsupported MCP content \"video\"]"
            ]
        );
        assert_eq!(converted.details, json!({"n": 1}));
    }

    #[test]
    fn structured_content_alone_is_shown_as_json_and_errors_carry_their_text() {
        let converted = convert(json!({"content": [], "structuredContent": {"a": [1]}}), "t", "s").unwrap();
        assert_eq!(texts(&converted), [r#"{"a":[1]}"#]);
        assert_eq!(convert(json!({}), "t", "s").unwrap().details, json!({}));

        let error = convert(
            json!({"content": [{"type": "text", "text": "no such file"}], "isError": true}),
            "read",
            "files",
        )
        .unwrap_err();
        assert_eq!(error.message(), "no such file");
        let error = convert(json!({"isError": true}), "read", "files").unwrap_err();
        assert_eq!(error.message(), "MCP tool \"read\" of server \"files\" failed");
    }
}
