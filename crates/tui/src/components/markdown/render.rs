//! Blocks to lines for a width.

use pulldown_cmark::Alignment;
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

use super::parse::{Block, Item};
use crate::highlight::highlight;
use crate::theme::{Slot, Theme};
use crate::{Line, line_width, truncate_line, wrap_line};

/// Longest horizontal rule.
const RULE_MAX: u16 = 80;

/// How blocks are laid out: the theme, and the style text inherits (a quote's).
#[derive(Clone, Copy)]
pub(super) struct Context<'t> {
    pub(super) theme: &'t Theme,
    pub(super) base: Style,
}

/// Renders blocks one below the other, a blank line between them unless `tight`.
pub(super) fn render_blocks(blocks: &[Block], width: u16, cx: Context<'_>, tight: bool) -> Vec<Line> {
    let mut out = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        if i > 0 && !tight {
            out.push(Line::default());
        }
        out.extend(render_block(block, width, cx));
    }
    out
}

fn render_block(block: &Block, width: u16, cx: Context<'_>) -> Vec<Line> {
    let theme = cx.theme;
    match block {
        Block::Paragraph(lines) => lines
            .iter()
            .flat_map(|line| wrap_line(&line.clone().style(cx.base.patch(line.style)), width))
            .collect(),
        Block::Heading { level, lines } => heading(*level, lines, width, cx),
        Block::Code { lang, text } => code_block(lang, text, width, theme),
        Block::List { start, loose, items } => list(*start, *loose, items, width, cx),
        Block::Quote(blocks) => {
            let bar = vec![Span::styled("│ ", theme.style(Slot::MdQuoteBorder))];
            let quote = Context {
                base: cx.base.patch(theme.style(Slot::MdQuote).add_modifier(Modifier::ITALIC)),
                ..cx
            };
            prefixed(width, &bar, &bar, |inner| render_blocks(blocks, inner, quote, false))
        }
        Block::Rule => vec![Line::from(Span::styled(
            "─".repeat(usize::from(width.min(RULE_MAX))),
            theme.style(Slot::MdHr),
        ))],
        Block::Table {
            aligns,
            rows,
            header_rows,
        } => table(aligns, rows, *header_rows, width, theme),
    }
}

/// The line with its own style moved into its spans, so spans put before it keep their look.
fn flatten(line: Line) -> Line {
    let base = line.style;
    let spans = line
        .spans
        .into_iter()
        .map(|span| Span::styled(span.content, base.patch(span.style)))
        .collect();
    Line {
        spans,
        style: Style::default(),
        alignment: line.alignment,
    }
}

/// Content rendered at the width left after a prefix: `first` before its first line, `rest`
/// before the others. Without room for both, the content is rendered unprefixed.
fn prefixed(
    width: u16,
    first: &[Span<'static>],
    rest: &[Span<'static>],
    render: impl FnOnce(u16) -> Vec<Line>,
) -> Vec<Line> {
    let prefix_w = |spans: &[Span<'static>]| line_width(&Line::from(spans.to_vec()));
    let used = prefix_w(first).max(prefix_w(rest));
    if used >= usize::from(width) {
        return render(width);
    }
    render(width - used as u16)
        .into_iter()
        .enumerate()
        .map(|(i, line)| {
            let mut line = flatten(line);
            let prefix = if i == 0 { first } else { rest };
            line.spans.splice(0..0, prefix.iter().cloned());
            line
        })
        .collect()
}

fn heading(level: u8, lines: &[Line], width: u16, cx: Context<'_>) -> Vec<Line> {
    let mut style = cx
        .base
        .patch(cx.theme.style(Slot::MdHeading).add_modifier(Modifier::BOLD));
    if level == 1 {
        style = style.add_modifier(Modifier::UNDERLINED);
    }
    lines
        .iter()
        .flat_map(|line| {
            let mut line = line.clone().style(style);
            if level >= 3 {
                line.spans
                    .insert(0, Span::raw(format!("{} ", "#".repeat(usize::from(level)))));
            }
            wrap_line(&line, width)
        })
        .collect()
}

fn code_block(lang: &str, text: &str, width: u16, theme: &Theme) -> Vec<Line> {
    let border = theme.style(Slot::MdCodeBlockBorder);
    let mut out = vec![truncate_line(
        &Line::from(Span::styled(format!("```{lang}"), border)),
        width,
        "…",
    )];
    for line in highlight(text, lang, theme) {
        // Rows a long line wraps into stay under its own indentation.
        let (indent, rest) = split_indent(line, usize::from(width.saturating_sub(2)) / 2);
        let lead = [Span::raw(format!("  {}", " ".repeat(indent)))];
        out.extend(prefixed(width, &lead, &lead, |inner| wrap_line(&rest, inner)));
    }
    out.push(Line::from(Span::styled("```", border)));
    crate::wrap::fit_lines(out, width)
}

/// Splits a code line into the columns of its leading whitespace (when at most `max`) and the
/// rest.
fn split_indent(line: Line, max: usize) -> (usize, Line) {
    let text = crate::text::line_text(&line);
    let trimmed = text.trim_start_matches([' ', '\t']);
    let indent = crate::display_width(&text[..text.len() - trimmed.len()]);
    if indent == 0 || indent > max {
        return (0, line);
    }
    let mut skip = text.len() - trimmed.len();
    let mut spans = Vec::new();
    for span in line.spans {
        if skip >= span.content.len() {
            skip -= span.content.len();
            continue;
        }
        spans.push(Span::styled(span.content[skip..].to_owned(), span.style));
        skip = 0;
    }
    (
        indent,
        Line {
            spans,
            ..Line::default()
        },
    )
}

fn list(start: Option<u64>, loose: bool, items: &[Item], width: u16, cx: Context<'_>) -> Vec<Line> {
    let bullet = cx.theme.style(Slot::MdListBullet);
    let number = |k: usize| start.map(|s| format!("{}.", s.saturating_add(k as u64)));
    let marker_w = (0..items.len())
        .filter_map(number)
        .map(|n| n.len())
        .max()
        .map_or(2, |w| w + 1);
    let mut out = Vec::new();
    for (k, item) in items.iter().enumerate() {
        if k > 0 && loose {
            out.push(Line::default());
        }
        let marker = match number(k) {
            Some(n) => format!("{n:<marker_w$}"),
            None => "- ".to_owned(),
        };
        let mut first = vec![Span::styled(marker, bullet)];
        if let Some(checked) = item.task {
            first.push(Span::styled(if checked { "[x] " } else { "[ ] " }, bullet));
        }
        let rest = vec![Span::raw(" ".repeat(line_width(&Line::from(first.clone()))))];
        let mut body = prefixed(width, &first, &rest, |inner| {
            render_blocks(&item.blocks, inner, cx, !loose)
        });
        if body.is_empty() {
            body.push(truncate_line(&Line::from(first), width, ""));
        }
        out.extend(body);
    }
    out
}

/// Column widths summing to at most `available`: every column its natural width if they fit,
/// else the widest ones narrowed first.
fn column_widths(natural: &[usize], available: usize) -> Vec<usize> {
    if natural.iter().sum::<usize>() <= available {
        return natural.to_vec();
    }
    // The largest cap that makes the capped widths fit, then the room left to the capped ones.
    let fits = |cap: usize| natural.iter().map(|w| (*w).min(cap)).sum::<usize>() <= available;
    let (mut low, mut high) = (1, natural.iter().copied().max().unwrap_or(1));
    while low < high {
        let mid = (low + high).div_ceil(2);
        if fits(mid) { low = mid } else { high = mid - 1 }
    }
    let mut widths: Vec<usize> = natural.iter().map(|w| (*w).min(low).max(1)).collect();
    let mut left = available.saturating_sub(widths.iter().sum());
    for (width, natural) in widths.iter_mut().zip(natural) {
        if left == 0 {
            break;
        }
        if *natural > *width {
            *width += 1;
            left -= 1;
        }
    }
    widths
}

/// A cell's row padded to its column width, aligned.
fn aligned(line: Line, width: usize, align: Alignment) -> Vec<Span<'static>> {
    let line = flatten(line);
    let gap = width.saturating_sub(line_width(&line));
    let (before, after) = match align {
        Alignment::Right => (gap, 0),
        Alignment::Center => (gap / 2, gap - gap / 2),
        Alignment::Left | Alignment::None => (0, gap),
    };
    let mut spans = vec![Span::raw(" ".repeat(before))];
    spans.extend(line.spans);
    spans.push(Span::raw(" ".repeat(after)));
    spans
}

fn table(aligns: &[Alignment], rows: &[Vec<Line>], header_rows: usize, width: u16, theme: &Theme) -> Vec<Line> {
    let border = theme.style(Slot::MdCodeBlockBorder);
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    if columns == 0 {
        return Vec::new();
    }
    let separators = 3 * (columns - 1);
    let available = usize::from(width).saturating_sub(separators);
    if available < columns {
        // Too narrow for columns: each row as a paragraph.
        return rows
            .iter()
            .flat_map(|row| {
                let mut spans = Vec::new();
                for (i, cell) in row.iter().enumerate() {
                    if i > 0 {
                        spans.push(Span::styled(" │ ", border));
                    }
                    spans.extend(flatten(cell.clone()).spans);
                }
                wrap_line(&Line::from(spans), width)
            })
            .collect();
    }
    let natural: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|row| row.get(c))
                .map(line_width)
                .max()
                .unwrap_or(0)
                .max(1)
        })
        .collect();
    let widths = column_widths(&natural, available);
    let mut out = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        let header = r < header_rows;
        let cells: Vec<Vec<Line>> = (0..columns)
            .map(|c| {
                let mut cell = row.get(c).cloned().unwrap_or_default();
                if header {
                    cell = cell.patch_style(Style::default().add_modifier(Modifier::BOLD));
                }
                wrap_line(&cell, widths[c] as u16)
            })
            .collect();
        let height = cells.iter().map(Vec::len).max().unwrap_or(1);
        for sub in 0..height {
            let mut spans = Vec::new();
            for (c, cell) in cells.iter().enumerate() {
                if c > 0 {
                    spans.push(Span::styled(" │ ", border));
                }
                let part = cell.get(sub).cloned().unwrap_or_default();
                spans.extend(aligned(
                    part,
                    widths[c],
                    aligns.get(c).copied().unwrap_or(Alignment::None),
                ));
            }
            out.push(Line::from(spans));
        }
        if header && r + 1 == header_rows {
            let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
            out.push(Line::from(Span::styled(rule.join("─┼─"), border)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_shrink_widest_first() {
        assert_eq!(column_widths(&[3, 10, 4], 20), vec![3, 10, 4]);
        assert_eq!(column_widths(&[3, 10, 4], 12), vec![3, 5, 4]);
        assert_eq!(column_widths(&[10, 10], 9), vec![5, 4]);
        assert_eq!(column_widths(&[1, 1, 1], 3), vec![1, 1, 1]);
    }
}
