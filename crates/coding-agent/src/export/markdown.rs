//! Markdown to HTML for the export (pulldown-cmark, GitHub's tables, strikethrough and task
//! lists), with fenced code highlighted. Raw HTML in a message is shown as text, `javascript:`
//! links are disarmed, and images that are not `data:` URIs become links: the page never runs
//! what a message carries and never fetches anything.

use pulldown_cmark::{CodeBlockKind, CowStr, Event, Options, Parser, Tag, TagEnd};

use super::highlight::highlight;
use super::html::escape;

/// `text` (markdown) as HTML.
pub(crate) fn to_html(text: &str) -> String {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut events: Vec<Event<'_>> = Vec::new();
    let mut code: Option<(Option<String>, String)> = None;
    let mut image_depth = 0usize;
    for event in Parser::new_ext(text, options) {
        if let Some((language, buffer)) = &mut code {
            match event {
                Event::Text(t) => buffer.push_str(&t),
                Event::End(TagEnd::CodeBlock) => {
                    let class = language
                        .as_deref()
                        .map(|l| format!(" class=\"language-{}\"", escape(l)))
                        .unwrap_or_default();
                    let html = format!(
                        "<pre><code{class}>{}</code></pre>\n",
                        highlight(buffer, language.as_deref())
                    );
                    events.push(Event::Html(CowStr::from(html)));
                    code = None;
                }
                _ => {}
            }
            continue;
        }
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let language = match kind {
                    CodeBlockKind::Fenced(info) => info.split_whitespace().next().map(str::to_owned),
                    CodeBlockKind::Indented => None,
                };
                code = Some((language, String::new()));
            }
            // Raw HTML is shown as written, never interpreted.
            Event::Html(raw) | Event::InlineHtml(raw) => events.push(Event::Text(raw)),
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => events.push(Event::Start(Tag::Link {
                link_type,
                dest_url: safe_url(dest_url),
                title,
                id,
            })),
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                if dest_url.trim_start().to_ascii_lowercase().starts_with("data:image/") {
                    events.push(Event::Start(Tag::Image {
                        link_type,
                        dest_url,
                        title,
                        id,
                    }));
                } else {
                    // Not fetched: a link to it instead, whose text is the alt text.
                    image_depth += 1;
                    events.push(Event::Start(Tag::Link {
                        link_type,
                        dest_url: safe_url(dest_url),
                        title,
                        id,
                    }));
                }
            }
            Event::End(TagEnd::Image) if image_depth > 0 => {
                image_depth -= 1;
                events.push(Event::End(TagEnd::Link));
            }
            other => events.push(other),
        }
    }
    let mut html = String::with_capacity(text.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut html, events.into_iter());
    html
}

/// `url`, or `#` when it would run script (`javascript:`, `vbscript:`) or is a `data:` URI
/// other than an image.
fn safe_url(url: CowStr<'_>) -> CowStr<'_> {
    let lower: String = url
        .chars()
        .filter(|c| !c.is_whitespace() && !c.is_control())
        .collect::<String>()
        .to_ascii_lowercase();
    let dangerous = lower.starts_with("javascript:")
        || lower.starts_with("vbscript:")
        || (lower.starts_with("data:") && !lower.starts_with("data:image/"));
    if dangerous { CowStr::from("#") } else { url }
}

#[cfg(test)]
mod tests {
    use super::to_html;

    #[test]
    fn renders_common_markdown_and_tables() {
        let html = to_html("# Title\n\n**bold** and `code`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n");
        assert!(html.contains("<h1>Title</h1>"), "{html}");
        assert!(html.contains("<strong>bold</strong>"), "{html}");
        assert!(html.contains("<code>code</code>"), "{html}");
        assert!(html.contains("<table>"), "{html}");
    }

    #[test]
    fn fenced_code_is_highlighted() {
        let html = to_html("```rust\nfn main() {}\n```\n");
        assert!(html.contains("class=\"language-rust\""), "{html}");
        assert!(html.contains("hl-"), "{html}");
    }

    #[test]
    fn raw_html_and_script_links_are_disarmed() {
        let html = to_html("<script>alert(1)</script>\n\n[x](javascript:alert(1)) <img src=x onerror=alert(1)>");
        assert!(!html.contains("<script>"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(!html.contains("javascript:"), "{html}");
    }

    #[test]
    fn remote_images_become_links_and_data_images_stay() {
        let html = to_html("![logo](https://example.com/logo.png) ![dot](data:image/png;base64,AAAA)");
        assert!(
            html.contains("<a href=\"https://example.com/logo.png\">logo</a>"),
            "{html}"
        );
        assert!(html.contains("<img src=\"data:image/png;base64,AAAA\""), "{html}");
    }
}
