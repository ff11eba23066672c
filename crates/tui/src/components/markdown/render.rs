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

/// A heading: bold in `mdHeading`, level 1 also underlined, levels 3 and up after their `### `
/// marker (pi's). The style is on the spans, not the line, so whatever is put beside the heading
/// later (a margin, a background's padding) is not underlined with it.
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
            let mut line = flatten(line.clone().patch_style(style));
            if level >= 3 {
                line.spans
                    .insert(0, Span::styled(format!("{} ", "#".repeat(usize::from(level))), style));
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

/// Longest word a table column is kept wide enough for, when there is room (pi's).
const MAX_UNBROKEN_WORD: usize = 30;

/// The width of the longest word of `line` (at most [`MAX_UNBROKEN_WORD`]), at least 1.
fn longest_word(line: &Line) -> usize {
    crate::text::line_text(line)
        .split_whitespace()
        .map(crate::display_width)
        .max()
        .unwrap_or(0)
        .clamp(1, MAX_UNBROKEN_WORD)
}

/// Column widths summing to at most `available`, as pi sizes them: every column its natural
/// width when the table fits; else each keeps room for its longest word (up to 30 columns; when
/// even those do not fit, the room is shared out by them) and the rest is shared out in
/// proportion to what each still lacks.
fn column_widths(natural: &[usize], words: &[usize], available: usize) -> Vec<usize> {
    let columns = natural.len();
    let mut min = words.to_vec();
    if min.iter().sum::<usize>() > available {
        min = vec![1; columns];
        let remaining = available.saturating_sub(columns);
        let weight: usize = words.iter().map(|w| w.saturating_sub(1)).sum();
        if remaining > 0 && weight > 0 {
            for (m, w) in min.iter_mut().zip(words) {
                *m += w.saturating_sub(1) * remaining / weight;
            }
        }
        let mut leftover = available.saturating_sub(min.iter().sum());
        for m in &mut min {
            if leftover == 0 {
                break;
            }
            *m += 1;
            leftover -= 1;
        }
    }
    if natural.iter().sum::<usize>() <= available {
        return natural.iter().zip(&min).map(|(n, m)| (*n).max(*m)).collect();
    }
    let lacking: Vec<usize> = natural.iter().zip(&min).map(|(n, m)| n.saturating_sub(*m)).collect();
    let total_lacking: usize = lacking.iter().sum();
    let extra = available.saturating_sub(min.iter().sum());
    let mut widths: Vec<usize> = min
        .iter()
        .zip(&lacking)
        .map(|(m, l)| m + (l * extra).checked_div(total_lacking).unwrap_or(0))
        .collect();
    let mut remaining = available.saturating_sub(widths.iter().sum());
    while remaining > 0 {
        let mut grew = false;
        for (w, n) in widths.iter_mut().zip(natural) {
            if remaining > 0 && *w < *n {
                *w += 1;
                remaining -= 1;
                grew = true;
            }
        }
        if !grew {
            break;
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

/// A border row of the table's box: `left`, each column's `─`, `cross` between, `right`.
fn border_row(widths: &[usize], [left, cross, right]: [&str; 3]) -> Line {
    let cells: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
    Line::from(format!("{left}─{}─{right}", cells.join(&format!("─{cross}─"))))
}

/// A table in pi's box: `┌─┬─┐` above, `│` around and between the cells, `├─┼─┤` under the header
/// and between rows, `└─┴─┘` below (drawn in the text's colour, as pi draws it); cells wrapped in
/// their columns, the header bold. Too narrow for a column each, rows become lines of text.
fn table(aligns: &[Alignment], rows: &[Vec<Line>], header_rows: usize, width: u16, theme: &Theme) -> Vec<Line> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    if columns == 0 {
        return Vec::new();
    }
    let borders = 3 * columns + 1;
    let available = usize::from(width).saturating_sub(borders);
    if available < columns {
        // Too narrow for columns: each row as a paragraph.
        let bar = theme.style(Slot::MdCodeBlockBorder);
        return rows
            .iter()
            .flat_map(|row| {
                let mut spans = Vec::new();
                for (i, cell) in row.iter().enumerate() {
                    if i > 0 {
                        spans.push(Span::styled(" │ ", bar));
                    }
                    spans.extend(flatten(cell.clone()).spans);
                }
                wrap_line(&Line::from(spans), width)
            })
            .collect();
    }
    let column = |c: usize| rows.iter().filter_map(move |row| row.get(c));
    let natural: Vec<usize> = (0..columns)
        .map(|c| column(c).map(line_width).max().unwrap_or(0))
        .collect();
    let words: Vec<usize> = (0..columns)
        .map(|c| column(c).map(longest_word).max().unwrap_or(1))
        .collect();
    let widths = column_widths(&natural, &words, available);
    let separator = border_row(&widths, ["├", "┼", "┤"]);
    let mut out = vec![border_row(&widths, ["┌", "┬", "┐"])];
    for (r, row) in rows.iter().enumerate() {
        let header = r < header_rows;
        let cells: Vec<Vec<Line>> = (0..columns)
            .map(|c| {
                let mut cell = row.get(c).cloned().unwrap_or_default();
                if header {
                    cell = cell.patch_style(Style::default().add_modifier(Modifier::BOLD));
                }
                wrap_line(&cell, widths[c].max(1) as u16)
            })
            .collect();
        let height = cells.iter().map(Vec::len).max().unwrap_or(1);
        for sub in 0..height {
            let mut spans = vec![Span::raw("│ ")];
            for (c, cell) in cells.iter().enumerate() {
                if c > 0 {
                    spans.push(Span::raw(" │ "));
                }
                let part = cell.get(sub).cloned().unwrap_or_default();
                spans.extend(aligned(
                    part,
                    widths[c],
                    aligns.get(c).copied().unwrap_or(Alignment::None),
                ));
            }
            spans.push(Span::raw(" │"));
            out.push(Line::from(spans));
        }
        if r + 1 < rows.len() {
            out.push(separator.clone());
        }
    }
    out.push(border_row(&widths, ["└", "┴", "┘"]));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_sized_as_pi_sizes_them() {
        // Everything fits: natural widths.
        assert_eq!(column_widths(&[3, 10, 4], &[3, 10, 4], 20), vec![3, 10, 4]);
        // Each keeps its longest word; the room left goes to what still lacks.
        assert_eq!(column_widths(&[3, 10, 4], &[3, 4, 4], 12), vec![3, 5, 4]);
        // Even the words do not fit: the room is shared out by them.
        assert_eq!(column_widths(&[10, 10], &[10, 10], 9), vec![5, 4]);
        assert_eq!(column_widths(&[1, 1, 1], &[1, 1, 1], 3), vec![1, 1, 1]);
        assert_eq!(column_widths(&[0, 5], &[1, 5], 10), vec![1, 5]);
    }
}
