//! Tool calls with their results, rendered as pi's export renders them: `bash` as `$ command` with
//! its output, `read` / `write` with the file highlighted by its extension, `edit` as its diff,
//! `ls` with its listing; every other tool as its name, its arguments as JSON and its output.
//! Long outputs show their first lines and expand on click.

use pi_agent_core::{ContentBlock, ToolCall, ToolResultMessage};
use serde_json::Value;

use super::highlight::{highlight, language_of_path};
use super::html::escape;

/// `/home/<user>/…` and `/Users/<user>/…` as `~/…`.
pub(crate) fn shorten_path(path: &str) -> String {
    for prefix in ["/Users/", "/home/"] {
        if let Some(rest) = path.strip_prefix(prefix) {
            if let Some(slash) = rest.find('/') {
                return format!("~{}", &rest[slash..]);
            }
            return "~".to_owned();
        }
    }
    path.to_owned()
}

fn replace_tabs(text: &str) -> String {
    text.replace('\t', "   ")
}

/// The text blocks of a result, joined by newlines.
fn result_text(result: &ToolResultMessage) -> String {
    result
        .content
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect::<Vec<_>>()
        .join("\n")
}

pub(crate) fn image_tag(mime_type: &str, data: &str, class: &str) -> String {
    let mime = if mime_type.is_empty() { "image/png" } else { mime_type };
    format!(
        "<img src=\"data:{};base64,{}\" class=\"{class}\" alt=\"\">",
        escape(mime),
        escape(data)
    )
}

fn result_images(result: &ToolResultMessage) -> String {
    let images: String = result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Image(image) => Some(image_tag(&image.mime_type, &image.data, "tool-image")),
            _ => None,
        })
        .collect();
    if images.is_empty() {
        String::new()
    } else {
        format!("<div class=\"tool-images\">{images}</div>")
    }
}

/// Output that shows `max_lines` lines and expands to all of them on click; highlighted when
/// `language` is given.
pub(crate) fn expandable_output(text: &str, max_lines: usize, language: Option<&str>) -> String {
    let text = replace_tabs(text);
    let lines: Vec<&str> = text.split('\n').collect();
    let remaining = lines.len().saturating_sub(max_lines);
    let shown = lines[..lines.len().min(max_lines)].join("\n");
    if let Some(language) = language {
        let full = format!(
            "<pre><code class=\"hl\">{}</code></pre>",
            highlight(&text, Some(language))
        );
        if remaining == 0 {
            return format!("<div class=\"tool-output\">{full}</div>");
        }
        let preview = format!(
            "<pre><code class=\"hl\">{}</code></pre>",
            highlight(&shown, Some(language))
        );
        return format!(
            "<div class=\"tool-output expandable\"><div class=\"output-preview\">{preview}<div class=\"expand-hint\">... ({remaining} more lines)</div></div><div class=\"output-full\">{full}</div></div>"
        );
    }
    let as_divs = |lines: &[&str]| -> String {
        lines
            .iter()
            .map(|line| format!("<div>{}</div>", escape(line)))
            .collect()
    };
    if remaining == 0 {
        return format!("<div class=\"tool-output\">{}</div>", as_divs(&lines));
    }
    format!(
        "<div class=\"tool-output expandable\"><div class=\"output-preview\">{}<div class=\"expand-hint\">... ({remaining} more lines)</div></div><div class=\"output-full\">{}</div></div>",
        as_divs(&lines[..max_lines]),
        as_divs(&lines)
    )
}

/// A string argument: `Some("")` when absent or null, `None` when it has another type.
fn string_arg<'a>(args: &'a Value, keys: &[&str]) -> Option<&'a str> {
    for key in keys {
        match args.get(*key) {
            Some(Value::String(s)) => return Some(s),
            Some(Value::Null) | None => continue,
            Some(_) => return None,
        }
    }
    Some("")
}

const INVALID_ARG: &str = "<span class=\"tool-error\">[invalid arg]</span>";

/// One tool call with its result (if any).
pub(crate) fn render_tool_call(call: &ToolCall, result: Option<&ToolResultMessage>) -> String {
    let status = match result {
        None => "pending",
        Some(r) if r.is_error => "error",
        Some(_) => "success",
    };
    let args = &call.arguments;
    let name = call.name.as_str();
    let mut html = format!("<div class=\"tool-execution {status}\" data-tool=\"{}\">", escape(name));
    match name {
        "bash" => {
            let command = match string_arg(args, &["command"]) {
                Some("") => "...".to_owned(),
                Some(command) => escape(command),
                None => INVALID_ARG.to_owned(),
            };
            html.push_str(&format!("<div class=\"tool-command\">$ {command}</div>"));
            if let Some(result) = result {
                let output = result_text(result);
                let output = output.trim();
                if !output.is_empty() {
                    html.push_str(&expandable_output(output, 5, None));
                }
            }
        }
        "read" => {
            let path = string_arg(args, &["file_path", "path"]);
            let mut path_html = path.map_or_else(|| INVALID_ARG.to_owned(), |p| escape(&shorten_path(p)));
            let offset = args.get("offset").and_then(Value::as_i64);
            let limit = args.get("limit").and_then(Value::as_i64);
            if path.is_some() && (offset.is_some() || limit.is_some()) {
                let start = offset.unwrap_or(1);
                let end = limit.map(|l| format!("-{}", start + l - 1)).unwrap_or_default();
                path_html.push_str(&format!("<span class=\"line-numbers\">:{start}{end}</span>"));
            }
            html.push_str(&format!(
                "<div class=\"tool-header\"><span class=\"tool-name\">read</span> <span class=\"tool-path\">{path_html}</span></div>"
            ));
            if let Some(result) = result {
                html.push_str(&result_images(result));
                let output = result_text(result);
                if !output.is_empty() {
                    let language = path.and_then(language_of_path);
                    html.push_str(&expandable_output(&output, 10, language));
                }
            }
        }
        "write" => {
            let path = string_arg(args, &["file_path", "path"]);
            let content = string_arg(args, &["content"]);
            let path_html = path.map_or_else(|| INVALID_ARG.to_owned(), |p| escape(&shorten_path(p)));
            html.push_str(&format!(
                "<div class=\"tool-header\"><span class=\"tool-name\">write</span> <span class=\"tool-path\">{path_html}</span>"
            ));
            if let Some(content) = content {
                let lines = content.split('\n').count();
                if !content.is_empty() && lines > 10 {
                    html.push_str(&format!(" <span class=\"line-count\">({lines} lines)</span>"));
                }
            }
            html.push_str("</div>");
            match content {
                None => html.push_str("<div class=\"tool-error\">[invalid content arg - expected string]</div>"),
                Some("") => {}
                Some(content) => {
                    let language = path.and_then(language_of_path);
                    html.push_str(&expandable_output(content, 10, language));
                }
            }
            if let Some(result) = result {
                let output = result_text(result);
                let output = output.trim();
                if !output.is_empty() {
                    html.push_str(&format!(
                        "<div class=\"tool-output\"><div>{}</div></div>",
                        escape(output)
                    ));
                }
            }
        }
        "edit" => {
            let path = string_arg(args, &["file_path", "path"]);
            let path_html = path.map_or_else(|| INVALID_ARG.to_owned(), |p| escape(&shorten_path(p)));
            html.push_str(&format!(
                "<div class=\"tool-header\"><span class=\"tool-name\">edit</span> <span class=\"tool-path\">{path_html}</span></div>"
            ));
            let diff = result
                .and_then(|r| r.details.as_ref())
                .and_then(|d| d.get("diff"))
                .and_then(Value::as_str)
                .filter(|d| !d.is_empty());
            if let Some(diff) = diff {
                html.push_str("<div class=\"tool-diff\">");
                for line in diff.split('\n') {
                    let class = if line.starts_with('+') {
                        "diff-added"
                    } else if line.starts_with('-') {
                        "diff-removed"
                    } else {
                        "diff-context"
                    };
                    html.push_str(&format!("<div class=\"{class}\">{}</div>", escape(&replace_tabs(line))));
                }
                html.push_str("</div>");
            } else if let Some(result) = result {
                let output = result_text(result);
                let output = output.trim();
                if !output.is_empty() {
                    html.push_str(&format!(
                        "<div class=\"tool-output\"><pre>{}</pre></div>",
                        escape(output)
                    ));
                }
            }
        }
        "ls" => {
            let path = match args.get("path") {
                Some(Value::String(p)) if !p.is_empty() => Some(p.as_str()),
                Some(Value::String(_)) | Some(Value::Null) | None => Some("."),
                Some(_) => None,
            };
            let mut path_html = path.map_or_else(|| INVALID_ARG.to_owned(), |p| escape(&shorten_path(p)));
            if let Some(limit) = args.get("limit").filter(|l| !l.is_null()) {
                let limit = match limit {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                path_html.push_str(&format!(
                    " <span class=\"line-count\">(limit {})</span>",
                    escape(&limit)
                ));
            }
            html.push_str(&format!(
                "<div class=\"tool-header\"><span class=\"tool-name\">ls</span> <span class=\"tool-path\">{path_html}</span></div>"
            ));
            if let Some(result) = result {
                let output = result_text(result);
                let output = output.trim();
                if !output.is_empty() {
                    html.push_str(&expandable_output(output, 20, None));
                }
            }
        }
        _ => {
            let pretty = serde_json::to_string_pretty(args).unwrap_or_else(|_| args.to_string());
            html.push_str(&format!(
                "<div class=\"tool-header\"><span class=\"tool-name\">{}</span></div><div class=\"tool-output\"><pre>{}</pre></div>",
                escape(name),
                escape(&pretty)
            ));
            if let Some(result) = result {
                html.push_str(&result_images(result));
                let output = result_text(result);
                if !output.is_empty() {
                    html.push_str(&expandable_output(&output, 10, None));
                }
            }
        }
    }
    html.push_str("</div>");
    html
}

/// The one-line description of a tool call in the session tree (`[read: ~/a.rs:5-10]`).
pub(crate) fn tree_label(name: &str, args: &Value) -> String {
    let text = |keys: &[&str]| -> String {
        keys.iter()
            .find_map(|k| args.get(*k).filter(|v| !v.is_null()))
            .map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .unwrap_or_default()
    };
    match name {
        "read" => {
            let mut display = shorten_path(&text(&["path", "file_path"]));
            let offset = args.get("offset").and_then(Value::as_i64);
            let limit = args.get("limit").and_then(Value::as_i64);
            if offset.is_some() || limit.is_some() {
                let start = offset.unwrap_or(1);
                display.push_str(&format!(":{start}"));
                if let Some(limit) = limit {
                    display.push_str(&format!("-{}", start + limit - 1));
                }
            }
            format!("[read: {display}]")
        }
        "write" | "edit" => format!("[{name}: {}]", shorten_path(&text(&["path", "file_path"]))),
        "bash" => {
            let raw = text(&["command"]);
            let flat = raw.replace(['\n', '\t'], " ");
            let flat = flat.trim();
            let cut: String = flat.chars().take(50).collect();
            let more = if raw.chars().count() > 50 { "..." } else { "" };
            format!("[bash: {cut}{more}]")
        }
        "grep" => {
            let path = text(&["path"]);
            let path = if path.is_empty() { ".".to_owned() } else { path };
            format!("[grep: /{}/ in {}]", text(&["pattern"]), shorten_path(&path))
        }
        "find" => {
            let path = text(&["path"]);
            let path = if path.is_empty() { ".".to_owned() } else { path };
            format!("[find: {} in {}]", text(&["pattern"]), shorten_path(&path))
        }
        "ls" => {
            let path = text(&["path"]);
            let path = if path.is_empty() { ".".to_owned() } else { path };
            format!("[ls: {}]", shorten_path(&path))
        }
        _ => {
            let json = args.to_string();
            let cut: String = json.chars().take(40).collect();
            let more = if json.chars().count() > 40 { "..." } else { "" };
            format!("[{name}: {cut}{more}]")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(name: &str, arguments: Value) -> ToolCall {
        ToolCall {
            id: "call_1".into(),
            name: name.into(),
            arguments,
            thought_signature: None,
            namespace: None,
        }
    }

    fn result(text: &str, details: Option<Value>) -> ToolResultMessage {
        ToolResultMessage {
            tool_call_id: "call_1".into(),
            tool_name: "x".into(),
            content: vec![ContentBlock::text(text)],
            details,
            usage: None,
            added_tool_names: None,
            is_error: false,
            timestamp: 0,
        }
    }

    #[test]
    fn paths_under_home_are_shortened() {
        assert_eq!(shorten_path("/home/ann/src/a.rs"), "~/src/a.rs");
        assert_eq!(shorten_path("/Users/bo/x"), "~/x");
        assert_eq!(shorten_path("/etc/hosts"), "/etc/hosts");
    }

    #[test]
    fn bash_shows_the_command_and_five_lines_of_output() {
        let output = (1..=8).map(|i| format!("line {i}")).collect::<Vec<_>>().join("\n");
        let html = render_tool_call(&call("bash", json!({"command": "seq 8"})), Some(&result(&output, None)));
        assert!(html.contains("$ seq 8"), "{html}");
        assert!(html.contains("... (3 more lines)"), "{html}");
        assert!(html.contains("tool-execution success"), "{html}");
    }

    #[test]
    fn read_highlights_by_extension_and_shows_the_line_range() {
        let html = render_tool_call(
            &call("read", json!({"path": "/home/ann/main.rs", "offset": 5, "limit": 3})),
            Some(&result("fn main() {}", None)),
        );
        assert!(
            html.contains("~/main.rs<span class=\"line-numbers\">:5-7</span>"),
            "{html}"
        );
        assert!(html.contains("hl-"), "{html}");
    }

    #[test]
    fn edit_shows_the_diff_of_its_details() {
        let html = render_tool_call(
            &call("edit", json!({"path": "a.txt"})),
            Some(&result("ok", Some(json!({"diff": "-old\n+new\n ctx"})))),
        );
        assert!(html.contains("<div class=\"diff-removed\">-old</div>"), "{html}");
        assert!(html.contains("<div class=\"diff-added\">+new</div>"), "{html}");
        assert!(html.contains("<div class=\"diff-context\"> ctx</div>"), "{html}");
    }

    #[test]
    fn other_tools_show_their_arguments_as_json_and_invalid_args_are_marked() {
        let html = render_tool_call(&call("grep", json!({"pattern": "<x>"})), None);
        assert!(html.contains("tool-execution pending"), "{html}");
        assert!(html.contains("&quot;pattern&quot;: &quot;&lt;x&gt;&quot;"), "{html}");
        let html = render_tool_call(&call("write", json!({"path": 3, "content": "x"})), None);
        assert!(html.contains("[invalid arg]"), "{html}");
    }

    #[test]
    fn tree_labels_as_pi_writes_them() {
        assert_eq!(
            tree_label("read", &json!({"path": "/home/a/x.rs", "offset": 2})),
            "[read: ~/x.rs:2]"
        );
        assert_eq!(tree_label("grep", &json!({"pattern": "fn"})), "[grep: /fn/ in .]");
        assert_eq!(tree_label("bash", &json!({"command": "ls\n-la"})), "[bash: ls -la]");
        assert_eq!(tree_label("custom", &json!({"a": 1})), "[custom: {\"a\":1}]");
    }
}
