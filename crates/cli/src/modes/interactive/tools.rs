//! One renderer per built-in tool (pi's `ToolExecutionComponent` renderers, `reference/pi-mono.md`
//! §10; `ast_edit` and `resolve` after oh-my-pi, `reference/omp.md` §1.9, §2.7): a call line and a
//! result body, collapsed by default and expanded with Ctrl+O.

use pi_agent_core::ToolResult;
use pi_tui::{Component, DiffView, Line, Slot, Theme};
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;
use serde_json::Value;

use super::transcript::ToolBlock;

/// How a result body is drawn.
#[derive(Debug, Clone, Copy)]
pub(super) struct RenderOptions<'a> {
    /// Ctrl+O: show everything.
    pub expanded: bool,
    /// The theme.
    pub theme: &'a Theme,
    /// The columns the body is drawn in (inside the block's padding).
    pub width: u16,
}

/// The text blocks of a result, joined.
pub(super) fn result_text(result: &ToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|b| b.as_text())
        .collect::<Vec<_>>()
        .join("\n")
}

fn arg<'a>(args: &'a Value, name: &str) -> Option<&'a str> {
    args.get(name).and_then(Value::as_str)
}

fn title(theme: &Theme, name: &str) -> Span<'static> {
    Span::styled(
        name.to_owned(),
        theme.style(Slot::ToolTitle).add_modifier(Modifier::BOLD),
    )
}

/// pi's `... (N more lines, ctrl+o to expand)` (`keyHint("app.tools.expand", "to expand")`).
fn more_hint(theme: &Theme, what: String) -> Line {
    Line::from(vec![
        theme.fg(Slot::Muted, format!("... ({what},")),
        Span::raw(" "),
        theme.fg(Slot::Dim, "ctrl+o"),
        theme.fg(Slot::Muted, " to expand"),
        Span::raw(")"),
    ])
}

/// `lines` after a blank row, the first `limit` unless expanded, then pi's hint for the rest.
fn first_lines(mut lines: Vec<Line>, limit: usize, options: RenderOptions<'_>) -> Vec<Line> {
    let total = lines.len();
    let mut out = vec![Line::from("")];
    if options.expanded || total <= limit {
        out.append(&mut lines);
        return out;
    }
    lines.truncate(limit);
    out.append(&mut lines);
    out.push(more_hint(options.theme, format!("{} more lines", total - limit)));
    out
}

/// The result's text, trimmed, as `toolOutput` lines after a blank row, at most `limit` unless
/// expanded (pi's grep, find and ls results); nothing for an empty output.
fn capped(text: &str, limit: usize, options: RenderOptions<'_>, slot: Slot) -> Vec<Line> {
    let text = text.trim();
    if text.is_empty() {
        return Vec::new();
    }
    let lines = text
        .split('\n')
        .map(|l| Line::from(options.theme.fg(slot, l.to_owned())))
        .collect();
    first_lines(lines, limit, options)
}

/// pi's `[Truncated: …]` warning of grep, find and ls from the result's details.
fn limit_warning(details: &Value, limit_key: &str, noun: &str, theme: &Theme) -> Option<Line> {
    let mut warnings = Vec::new();
    if let Some(limit) = details
        .get(limit_key)
        .filter(|v| !v.is_null() && v.as_bool() != Some(false))
    {
        warnings.push(format!("{limit} {noun} limit"));
    }
    if truncated(details) {
        warnings.push(format!("{} limit", max_bytes(details)));
    }
    if details.get("linesTruncated").and_then(Value::as_bool) == Some(true) {
        warnings.push("some lines truncated".to_owned());
    }
    (!warnings.is_empty()).then(|| Line::from(theme.fg(Slot::Warning, format!("[Truncated: {}]", warnings.join(", ")))))
}

fn truncated(details: &Value) -> bool {
    details.pointer("/truncation/truncated").and_then(Value::as_bool) == Some(true)
}

fn max_bytes(details: &Value) -> String {
    let bytes = details
        .pointer("/truncation/maxBytes")
        .and_then(Value::as_u64)
        .unwrap_or(pi_agent_core::DEFAULT_MAX_BYTES as u64);
    pi_agent_core::format_size(usize::try_from(bytes).unwrap_or(usize::MAX))
}

fn count(details: &Value, key: &str) -> u64 {
    details
        .pointer(&format!("/truncation/{key}"))
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

/// The last `limit` rows of `text` as drawn at the body's width (pi counts visual lines, so one
/// long line does not fill the block), all when expanded, with pi's bash hint.
fn tail(text: &str, limit: usize, options: RenderOptions<'_>) -> Vec<Line> {
    let text = text.trim();
    if text.is_empty() {
        return Vec::new();
    }
    let rows: Vec<Line> = text
        .lines()
        .flat_map(|l| {
            pi_tui::wrap_line(
                &Line::from(options.theme.fg(Slot::ToolOutput, l.to_owned())),
                options.width,
            )
        })
        .collect();
    let skip = if options.expanded {
        0
    } else {
        rows.len().saturating_sub(limit)
    };
    let mut out = vec![Line::from("")];
    if skip > 0 {
        out.push(more_hint(options.theme, format!("{skip} earlier lines")));
    }
    out.extend(rows.into_iter().skip(skip));
    out
}

fn seconds(duration: std::time::Duration) -> String {
    format!("{:.1}s", duration.as_secs_f64())
}

/// The call line of a built-in tool, or `None` for a tool without its own renderer.
pub(super) fn call_line(block: &ToolBlock, theme: &Theme) -> Option<Line> {
    let args = &block.args;
    let muted = |text: String| theme.fg(Slot::Muted, text);
    let accent = |text: String| theme.fg(Slot::Accent, text);
    let spans: Vec<Span<'static>> = match block.name.as_str() {
        "read" => {
            let mut spans = vec![
                title(theme, "read "),
                accent(arg(args, "path").unwrap_or("…").to_owned()),
            ];
            let offset = args.get("offset").and_then(Value::as_u64);
            let limit = args.get("limit").and_then(Value::as_u64);
            match (offset, limit) {
                (Some(from), Some(count)) => spans.push(muted(format!(":{from}-{}", from + count.saturating_sub(1)))),
                (Some(from), None) => spans.push(muted(format!(":{from}-"))),
                (None, Some(count)) => spans.push(muted(format!(":1-{count}"))),
                (None, None) => {}
            }
            spans
        }
        "bash" => {
            let mut spans = vec![
                title(theme, "$ "),
                Span::raw(arg(args, "command").unwrap_or("…").to_owned()),
            ];
            if let Some(timeout) = args.get("timeout").and_then(Value::as_f64) {
                spans.push(muted(format!(" (timeout {timeout}s)")));
            }
            spans
        }
        "edit" | "write" => vec![
            title(theme, &format!("{} ", block.name)),
            accent(arg(args, "path").unwrap_or("…").to_owned()),
        ],
        "grep" => {
            let mut spans = vec![
                title(theme, "grep "),
                accent(format!("/{}/", arg(args, "pattern").unwrap_or(""))),
                muted(format!(" in {}", arg(args, "path").unwrap_or("."))),
            ];
            if let Some(glob) = arg(args, "glob") {
                spans.push(muted(format!(" ({glob})")));
            }
            spans
        }
        "find" => vec![
            title(theme, "find "),
            accent(arg(args, "pattern").unwrap_or("…").to_owned()),
            muted(format!(" in {}", arg(args, "path").unwrap_or("."))),
        ],
        "ls" => vec![title(theme, "ls "), accent(arg(args, "path").unwrap_or(".").to_owned())],
        "ast_edit" => {
            let ops = args.get("ops").and_then(Value::as_array).cloned().unwrap_or_default();
            let description = match ops.as_slice() {
                [op] => collapse_whitespace(op.get("pat").and_then(Value::as_str).unwrap_or("?")),
                [] => "?".to_owned(),
                many => format!("{} rewrites", many.len()),
            };
            vec![
                title(theme, "AST Edit "),
                accent(description),
                muted(format!(" in {}", paths(args))),
            ]
        }
        "ast_grep" => vec![
            title(theme, "AST Grep "),
            accent(collapse_whitespace(arg(args, "pat").unwrap_or("?"))),
            muted(format!(" in {}", paths(args))),
        ],
        "resolve" => return Some(resolve_call(args, theme)),
        _ => return None,
    };
    Some(Line::from(spans))
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn paths(args: &Value) -> String {
    args.get("paths")
        .and_then(Value::as_array)
        .map(|paths| paths.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", "))
        .unwrap_or_else(|| ".".to_owned())
}

/// The body of a built-in tool's result (partial while running), or `None` for other tools.
pub(super) fn body(block: &ToolBlock, options: RenderOptions<'_>) -> Option<Vec<Line>> {
    let theme = options.theme;
    let result = block.result.as_ref().or(block.partial.as_ref());
    let text = result.map(result_text).unwrap_or_default();
    if block.name == "resolve" {
        return Some(match block.result.as_ref() {
            Some(result) => resolve_result(&block.args, result, block.is_error, theme),
            None => Vec::new(),
        });
    }
    if block.is_error {
        return Some(capped(&text, 10, options, Slot::Error));
    }
    let details = result.map_or(&Value::Null, |r| &r.details);
    let lines = match block.name.as_str() {
        // pi's read: the output highlighted for the path's language, its first 10 lines.
        "read" if result.is_some() => {
            let (content, notice) = split_notice(&text);
            let mut lines = highlighted(content, arg(&block.args, "path").unwrap_or(""), theme);
            if let Some(notice) = notice {
                lines.push(Line::from(""));
                lines.push(Line::from(theme.fg(Slot::ToolOutput, notice.to_owned())));
            }
            while lines.last().is_some_and(|line| line.width() == 0) {
                lines.pop();
            }
            let mut lines = first_lines(lines, 10, options);
            if truncated(details) {
                let warning = if details
                    .pointer("/truncation/firstLineExceedsLimit")
                    .and_then(Value::as_bool)
                    == Some(true)
                {
                    format!("[First line exceeds {} limit]", max_bytes(details))
                } else if details.pointer("/truncation/truncatedBy").and_then(Value::as_str) == Some("lines") {
                    let max_lines = details
                        .pointer("/truncation/maxLines")
                        .and_then(Value::as_u64)
                        .unwrap_or(pi_agent_core::DEFAULT_MAX_LINES as u64);
                    format!(
                        "[Truncated: showing {} of {} lines ({max_lines} line limit)]",
                        count(details, "outputLines"),
                        count(details, "totalLines")
                    )
                } else {
                    format!(
                        "[Truncated: {} lines shown ({} limit)]",
                        count(details, "outputLines"),
                        max_bytes(details)
                    )
                };
                lines.push(Line::from(theme.fg(Slot::Warning, warning)));
            }
            lines
        }
        "read" => Vec::new(),
        // pi's bash: the last 5 rows, the truncation warning, then the time.
        "bash" => {
            let mut lines = tail(&text, 5, options);
            let mut warnings = Vec::new();
            if let Some(path) = details.get("fullOutputPath").and_then(Value::as_str) {
                warnings.push(format!("Full output: {path}"));
            }
            if truncated(details) {
                if details.pointer("/truncation/truncatedBy").and_then(Value::as_str) == Some("lines") {
                    warnings.push(format!(
                        "Truncated: showing {} of {} lines",
                        count(details, "outputLines"),
                        count(details, "totalLines")
                    ));
                } else {
                    warnings.push(format!(
                        "Truncated: {} lines shown ({} limit)",
                        count(details, "outputLines"),
                        max_bytes(details)
                    ));
                }
            }
            if !warnings.is_empty() {
                lines.push(Line::from(""));
                lines.push(Line::from(
                    theme.fg(Slot::Warning, format!("[{}]", warnings.join(". "))),
                ));
            }
            let time = match (block.elapsed, block.started) {
                (Some(took), _) => Some(format!("Took {}", seconds(took))),
                (None, Some(started)) => Some(format!("Elapsed {}", seconds(started.elapsed()))),
                (None, None) => None,
            };
            if let Some(time) = time {
                lines.push(Line::from(""));
                lines.push(Line::from(theme.fg(Slot::Muted, time)));
            }
            lines
        }
        // pi's edit: the whole diff, collapsed or not.
        "edit" => {
            // The tool's unified patch, without its `---` / `+++` file header (the call line
            // names the file).
            let patch = details.get("patch").and_then(Value::as_str).unwrap_or_default();
            let hunks = patch.find("@@").map_or("", |at| &patch[at..]);
            if hunks.is_empty() {
                Vec::new()
            } else {
                let mut diff = DiffView::from_unified(hunks, theme);
                diff.set_expanded(true);
                let mut lines = vec![Line::from("")];
                lines.extend(diff.render(options.width));
                lines
            }
        }
        // pi's write: the content highlighted, its first 10 lines, and the total.
        "write" => {
            let content = arg(&block.args, "content").unwrap_or_default();
            let mut lines = highlighted(content, arg(&block.args, "path").unwrap_or(""), theme);
            while lines.last().is_some_and(|line| line.width() == 0) {
                lines.pop();
            }
            let total = lines.len();
            if lines.is_empty() {
                Vec::new()
            } else if options.expanded || total <= 10 {
                std::iter::once(Line::from("")).chain(lines).collect()
            } else {
                lines.truncate(10);
                let mut out = vec![Line::from("")];
                out.extend(lines);
                out.push(more_hint(theme, format!("{} more lines, {total} total", total - 10)));
                out
            }
        }
        "grep" => {
            let mut lines = capped(&text, 15, options, Slot::ToolOutput);
            lines.extend(limit_warning(details, "matchLimitReached", "matches", theme));
            lines
        }
        "find" => {
            let mut lines = capped(&text, 20, options, Slot::ToolOutput);
            lines.extend(limit_warning(details, "resultLimitReached", "results", theme));
            lines
        }
        "ls" => {
            let mut lines = capped(&text, 20, options, Slot::ToolOutput);
            lines.extend(limit_warning(details, "entryLimitReached", "entries", theme));
            lines
        }
        "ast_grep" => capped(&text, 10, options, Slot::ToolOutput),
        "ast_edit" => ast_edit_body(result, options),
        _ => return None,
    };
    Some(lines)
}

/// `read`'s text without its trailing continuation notice (`[12 more lines in file. Use
/// offset=…]`, `[Showing lines …]`), and the notice.
fn split_notice(text: &str) -> (&str, Option<&str>) {
    match text.rsplit_once("\n\n[") {
        Some((content, notice)) if notice.ends_with(']') && !notice.contains('\n') => {
            (content, Some(&text[content.len() + 2..]))
        }
        _ => (text, None),
    }
}

/// `code` highlighted for the language pi gives `path`'s extension (`getLanguageFromPath`); the
/// plain tool output colour when pi knows no language for it.
fn highlighted(code: &str, path: &str, theme: &Theme) -> Vec<Line> {
    if code.is_empty() {
        return Vec::new();
    }
    match pi_tui::highlight::language_for_path(path) {
        Some(lang) => pi_tui::highlight::highlight(code, lang, theme),
        None => code
            .lines()
            .map(|line| Line::from(theme.fg(Slot::ToolOutput, line.to_owned())))
            .collect(),
    }
}

/// `ast_edit`'s preview: the `proposed` badge and counts, then `+`/`-` lines by file.
fn ast_edit_body(result: Option<&ToolResult>, options: RenderOptions<'_>) -> Vec<Line> {
    let theme = options.theme;
    let Some(result) = result else {
        return Vec::new();
    };
    let details = &result.details;
    let total = details.get("totalReplacements").and_then(Value::as_u64).unwrap_or(0);
    let files = details.get("filesTouched").and_then(Value::as_u64).unwrap_or(0);
    let searched = details.get("filesSearched").and_then(Value::as_u64).unwrap_or(0);
    let parse_errors = details.get("parseErrorsTotal").and_then(Value::as_u64).unwrap_or(0);
    let plural = |n: u64, word: &str| {
        if n == 1 {
            format!("1 {word}")
        } else {
            format!("{n} {word}s")
        }
    };
    if total == 0 {
        let mut lines = vec![Line::from(vec![
            theme.fg(Slot::Warning, "0 replacements"),
            theme.fg(Slot::Muted, format!(" · searched {searched}")),
        ])];
        if parse_errors > 0 {
            lines.push(Line::from(theme.fg(Slot::Warning, plural(parse_errors, "parse issue"))));
        }
        return lines;
    }
    let mut meta = vec![
        Span::styled(
            " proposed ".to_owned(),
            Style::default()
                .fg(theme.color(Slot::Warning))
                .add_modifier(Modifier::REVERSED | Modifier::BOLD),
        ),
        theme.fg(
            Slot::Muted,
            format!(
                " {} · {} · searched {searched}",
                plural(total, "replacement"),
                plural(files, "file")
            ),
        ),
    ];
    if details.get("limitReached").and_then(Value::as_bool) == Some(true) {
        meta.push(theme.fg(Slot::Warning, " · limit reached"));
    }
    let mut lines = vec![Line::from(meta)];
    let changes = details
        .get("changes")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let budget = if options.expanded { usize::MAX } else { 12 };
    let mut current_path = String::new();
    let mut shown = 0;
    for change in &changes {
        if lines.len() >= budget {
            break;
        }
        let path = change.get("path").and_then(Value::as_str).unwrap_or("");
        if path != current_path {
            current_path = path.to_owned();
            lines.push(Line::from(theme.fg(Slot::Accent, current_path.clone())));
        }
        let line = change.get("line").and_then(Value::as_u64).unwrap_or(0);
        let first = |key: &str| {
            change
                .get(key)
                .and_then(Value::as_str)
                .and_then(|t| t.lines().next())
                .unwrap_or("")
                .to_owned()
        };
        lines.push(Line::from(
            theme.fg(Slot::Error, format!("-{line} {}", first("before"))),
        ));
        lines.push(Line::from(
            theme.fg(Slot::Success, format!("+{line} {}", first("after"))),
        ));
        shown += 1;
    }
    if shown < changes.len() {
        lines.push(Line::from(theme.fg(
            Slot::Muted,
            format!("… {} more changes (ctrl+o to expand)", changes.len() - shown),
        )));
    }
    if parse_errors > 0 {
        lines.push(Line::from(theme.fg(Slot::Warning, plural(parse_errors, "parse issue"))));
    }
    lines
}

fn resolve_call(args: &Value, theme: &Theme) -> Line {
    let action = arg(args, "action").unwrap_or("?");
    let (badge, slot) = if action == "apply" {
        ("proposed -> resolved", Slot::Success)
    } else {
        ("proposed -> rejected", Slot::Warning)
    };
    let reason: String = arg(args, "reason").unwrap_or("").trim().chars().take(72).collect();
    Line::from(vec![
        title(theme, "Resolve "),
        Span::raw(format!("{action} ")),
        theme.fg(slot, badge),
        theme.fg(Slot::Muted, format!(" {reason}")),
    ])
}

/// The result of `resolve` (and of a resolution from the keyboard): oh-my-pi's inverse block —
/// blank, `<icon> Accept|Failed|Discard: <summary> [<source>]`, blank, the reason in italics,
/// blank — coloured `error` when it failed, `success` for an applied action, `warning` otherwise.
/// The lines are padded to the width by the caller (they carry the block's style).
pub(super) fn resolve_result(args: &Value, result: &ToolResult, is_error: bool, theme: &Theme) -> Vec<Line> {
    let details = &result.details;
    let action = details
        .get("action")
        .and_then(Value::as_str)
        .or_else(|| arg(args, "action"))
        .unwrap_or("");
    let failed = is_error;
    let (verb, icon, slot) = match (action, failed) {
        ("apply", false) => ("Accept", "✓", Slot::Success),
        ("apply", true) => ("Failed", "✗", Slot::Error),
        (_, true) => ("Discard", "✗", Slot::Error),
        _ => ("Discard", "✗", Slot::Warning),
    };
    let label = details
        .get("label")
        .and_then(Value::as_str)
        .filter(|l| !l.is_empty())
        .unwrap_or("pending action")
        .replace('\t', " ");
    let reason = details
        .get("reason")
        .and_then(Value::as_str)
        .or_else(|| arg(args, "reason"))
        .filter(|r| !r.trim().is_empty())
        .unwrap_or("No reason provided")
        .replace('\t', " ");
    let block = Style::default().fg(theme.color(slot)).add_modifier(Modifier::REVERSED);
    let mut header = vec![Span::styled(format!(" {icon} {verb}: "), block)];
    match label.split_once(": ") {
        Some((source, summary)) => {
            header.push(Span::styled(format!("{summary} "), block));
            header.push(Span::styled(format!("[{source}]"), block.add_modifier(Modifier::BOLD)));
        }
        None => header.push(Span::styled(label, block)),
    }
    vec![
        Line::from(Span::styled(" ", block)).style(block),
        Line::from(header).style(block),
        Line::from(Span::styled(" ", block)).style(block),
        Line::from(Span::styled(format!(" {reason}"), block.add_modifier(Modifier::ITALIC))).style(block),
        Line::from(Span::styled(" ", block)).style(block),
    ]
}
