//! Drawing the transcript's items: user messages, assistant text and thinking, tool blocks (call
//! and result merged, one background per state), notices.
//!
//! A tool block asks, in order, the custom tool's own renderers, the built-in renderer of that
//! name ([`super::tools`]) and the fallback (bold name, JSON arguments, raw text). A custom
//! renderer that returns `None` or panics falls back silently, as in pi.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use pi_tui::Padding;
use pi_tui::{BlockState, BoxView, Component, Line, Markdown, Slot, Spacer, Text, Theme, pad_line, wrap_line};
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;
use serde_json::Value;

use super::images::{self, InlineImages};
use super::panic_hook;
use super::tools::{self, RenderOptions, result_text};
use super::transcript::{Item, NoticeKind, ToolBlock};
use pi_coding_agent::custom_tools::{CustomTool, RenderResultOptions};

/// Custom tools by name, for their renderers.
pub type Renderers = HashMap<String, Arc<dyn CustomTool>>;

/// What drawing an item needs besides the item.
#[derive(Clone, Copy)]
pub struct RenderContext<'a> {
    /// The theme.
    pub theme: &'a Theme,
    /// Ctrl+O: tool blocks show everything.
    pub expanded: bool,
    /// Custom tools with their renderers.
    pub renderers: &'a Renderers,
    /// How tool results' images are shown.
    pub images: InlineImages,
}

impl std::fmt::Debug for RenderContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderContext")
            .field("expanded", &self.expanded)
            .field("renderers", &self.renderers.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// The lines of `item` at `width`, starting with the blank row that separates items.
pub(super) fn render_item(item: &Item, context: RenderContext<'_>, width: u16) -> Vec<Line> {
    let theme = context.theme;
    let mut lines = Spacer(1).render(width);
    match item {
        Item::User { text } => {
            let block = BoxView::new()
                .padding(Padding::symmetric(1, 1))
                .bg(theme.color(Slot::UserMessageBg))
                .with(Text::new(text.clone()));
            lines.extend(block.render(width));
        }
        Item::Assistant {
            text,
            thinking,
            error,
            aborted,
            ..
        } => {
            let mut body: Vec<Line> = Vec::new();
            if !thinking.trim().is_empty() {
                let style = theme.style(Slot::Muted).add_modifier(Modifier::ITALIC);
                body.extend(
                    Text::styled(thinking.trim().to_owned(), style)
                        .padding_x(1)
                        .render(width),
                );
            }
            if !text.trim().is_empty() {
                if !body.is_empty() {
                    body.extend(Spacer(1).render(width));
                }
                body.extend(
                    Markdown::new(text.trim().to_owned(), theme)
                        .render(width.saturating_sub(2).max(1))
                        .into_iter()
                        .map(indent),
                );
            }
            let failure = match (error, aborted) {
                // `Aborted after 2 retry attempts` (pi's text while a retry is in progress).
                (Some(text), true) => Some(text.clone()),
                (None, true) => Some(pi_agent_core::OPERATION_ABORTED.to_owned()),
                (Some(error), false) => Some(format!("Error: {error}")),
                (None, false) => None,
            };
            if let Some(message) = failure {
                if !body.is_empty() {
                    body.extend(Spacer(1).render(width));
                }
                body.extend(
                    Text::styled(message, theme.style(Slot::Error))
                        .padding_x(1)
                        .render(width),
                );
            }
            if body.is_empty() {
                return Vec::new();
            }
            lines.extend(body);
        }
        Item::Tool(block) => lines.extend(render_tool(block, context, width)),
        Item::Notice { text, kind } => {
            let slot = match kind {
                NoticeKind::Info => Slot::Muted,
                NoticeKind::Warning => Slot::Warning,
                NoticeKind::Error => Slot::Error,
            };
            lines.extend(Text::styled(text.clone(), theme.style(slot)).padding_x(1).render(width));
        }
    }
    lines
}

fn indent(mut line: Line) -> Line {
    line.spans.insert(0, Span::raw(" "));
    line
}

/// Calls a custom renderer, treating a panic like `None`.
fn guarded<T>(render: impl FnOnce() -> Option<T>) -> Option<T> {
    panic_hook::quietly(|| catch_unwind(AssertUnwindSafe(render)).ok().flatten())
}

/// The block of one tool call.
pub fn render_tool(block: &ToolBlock, context: RenderContext<'_>, width: u16) -> Vec<Line> {
    let theme = context.theme;
    if block.name == "resolve"
        && let Some(result) = &block.result
    {
        return tools::resolve_result(&block.args, result, block.is_error, theme)
            .into_iter()
            .flat_map(|line| {
                // Continuation rows keep the block's one-column inner padding.
                let style = line.style;
                wrap_line(&line, width.saturating_sub(1).max(1))
                    .into_iter()
                    .enumerate()
                    .map(move |(row, mut text)| {
                        if row > 0 {
                            text.spans.insert(0, Span::styled(" ", style));
                        }
                        pad_line(&text.style(style), width, style)
                    })
            })
            .collect();
    }
    let custom = context.renderers.get(&block.name);
    let call = custom
        .and_then(|tool| guarded(|| tool.render_call(&block.args, theme)))
        .or_else(|| tools::call_line(block, theme).map(|line| vec![line]))
        .unwrap_or_else(|| fallback_call(block, context));
    let options = RenderOptions {
        expanded: context.expanded,
        theme,
        width: width.saturating_sub(2).max(1),
    };
    let shown = block.result.as_ref().or(block.partial.as_ref());
    let body = custom
        .zip(shown)
        .and_then(|(tool, result)| {
            let options = RenderResultOptions {
                expanded: context.expanded,
                is_partial: block.result.is_none(),
                is_error: block.result.is_some() && block.is_error,
            };
            guarded(|| tool.render_result(result, options, theme))
        })
        .or_else(|| tools::body(block, options))
        .unwrap_or_else(|| fallback_body(block, options));
    let placeholders = block
        .result
        .as_ref()
        .map(|result| images::placeholders(result, context.images, theme));
    let state = match (&block.result, block.is_error) {
        (None, _) => BlockState::Pending,
        (Some(_), true) => BlockState::Error,
        (Some(_), false) => BlockState::Success,
    };
    let mut content = call;
    content.extend(body);
    content.extend(placeholders.unwrap_or_default());
    let mut lines = BoxView::new()
        .padding(Padding::symmetric(1, 1))
        .bg(theme.block_bg(state))
        .with(Text::from_lines(content))
        .render(width);
    if let Some(result) = &block.result {
        lines.extend(images::drawn(&block.call_id, result, context.images, width));
    }
    lines
}

/// pi's fallback call: the tool's name in bold and its arguments as JSON (pretty when expanded).
fn fallback_call(block: &ToolBlock, context: RenderContext<'_>) -> Vec<Line> {
    let theme = context.theme;
    let name = Span::styled(
        block.name.clone(),
        theme.style(Slot::ToolTitle).add_modifier(Modifier::BOLD),
    );
    let args = match &block.args {
        Value::Null => String::new(),
        Value::Object(map) if map.is_empty() => String::new(),
        args if context.expanded => serde_json::to_string_pretty(args).unwrap_or_default(),
        args => args.to_string(),
    };
    if args.is_empty() {
        return vec![Line::from(name)];
    }
    let mut lines = args.lines().map(|l| Line::from(theme.fg(Slot::Muted, l.to_owned())));
    let first = lines.next().map(|l| l.spans).unwrap_or_default();
    let mut head = vec![name, Span::raw(" ")];
    head.extend(first);
    std::iter::once(Line::from(head)).chain(lines).collect()
}

/// pi's fallback result: the text, 10 lines unless expanded, red for an error.
fn fallback_body(block: &ToolBlock, options: RenderOptions<'_>) -> Vec<Line> {
    let Some(result) = block.result.as_ref().or(block.partial.as_ref()) else {
        return Vec::new();
    };
    let slot = if block.is_error { Slot::Error } else { Slot::ToolOutput };
    let text = result_text(result);
    let all: Vec<&str> = text.lines().collect();
    let shown = if options.expanded { all.len() } else { all.len().min(10) };
    let mut lines: Vec<Line> = all[..shown]
        .iter()
        .map(|l| Line::from(options.theme.fg(slot, (*l).to_owned())))
        .collect();
    if shown < all.len() {
        lines.push(Line::from(Span::styled(
            format!("… {} more lines (ctrl+o to expand)", all.len() - shown),
            Style::default().fg(options.theme.color(Slot::Muted)),
        )));
    }
    lines
}
