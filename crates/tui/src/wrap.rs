//! Fitting styled lines into a width: word wrap, truncation with an ellipsis, padding.
//!
//! Every function here guarantees that no line it returns is wider than `width` columns as
//! measured by [`line_width`](crate::line_width) (a `width` of 0 is treated as 1). Tabs come back
//! expanded to spaces and control characters removed, so the result is safe to print.
//!
//! Wrapping breaks at spaces only, as pi's does (CJK text without spaces is one word), drops the
//! spaces at a break, keeps a paragraph's leading indentation on its first row, and breaks words
//! longer than the width wherever they must. No visible character is lost, with one exception: at width 1 a
//! two-column character cannot be shown at all and becomes `�` (U+FFFD).
//!
//! ```
//! use pi_tui::{wrap_text, truncate_line, pad_line, line_width, Line};
//! use pi_tui::testing::plain;
//! use ratatui::style::Style;
//!
//! let rows = wrap_text("the quick brown fox", Style::default(), 10);
//! assert_eq!(plain(&rows), "the quick\nbrown fox");
//!
//! let cut = truncate_line(&Line::from("a long status line"), 10, "…");
//! assert_eq!(plain(&[cut]), "a long st…");
//!
//! let padded = pad_line(&Line::from("ok"), 6, Style::default());
//! assert_eq!(line_width(&padded), 6);
//! ```

use std::borrow::Cow;

use ratatui::style::Style;
use ratatui::text::Span;

use crate::Line;
use crate::text::{ClusterKind, clusters, tab_advance};

/// What a character too wide for a one-column row is shown as.
const REPLACEMENT: &str = "\u{FFFD}";

/// One printable piece of a line: a cluster, or one column of an expanded tab.
#[derive(Debug, Clone)]
struct Unit<'a> {
    text: Cow<'a, str>,
    width: usize,
    style: Style,
    /// A space: a break opportunity, dropped at a break.
    space: bool,
}

/// The units of `line`, split into rows at newlines; tabs expand by the column in the row.
fn unit_rows<'a>(line: &'a Line) -> Vec<Vec<Unit<'a>>> {
    let mut rows = vec![Vec::new()];
    let mut col = 0;
    for span in &line.spans {
        for cluster in clusters(&span.content) {
            let Some(row) = rows.last_mut() else { break };
            match cluster.kind {
                ClusterKind::Text | ClusterKind::Space => {
                    col += cluster.width;
                    row.push(Unit {
                        text: Cow::Borrowed(cluster.text),
                        width: cluster.width,
                        style: span.style,
                        space: cluster.kind == ClusterKind::Space,
                    });
                }
                ClusterKind::Tab => {
                    let n = tab_advance(col);
                    col += n;
                    row.extend((0..n).map(|_| Unit {
                        text: Cow::Borrowed(" "),
                        width: 1,
                        style: span.style,
                        space: true,
                    }));
                }
                ClusterKind::Newline => {
                    rows.push(Vec::new());
                    col = 0;
                }
                ClusterKind::Control => {}
            }
        }
    }
    rows
}

/// All units of `line` on one row (newlines dropped like other control characters).
fn flat_units<'a>(line: &'a Line) -> Vec<Unit<'a>> {
    unit_rows(line).into_iter().flatten().collect()
}

/// Builds a line from units, merging neighbours of the same style into one span.
fn build_line<'a>(template: &Line, units: impl IntoIterator<Item = Unit<'a>>) -> Line {
    let mut spans: Vec<Span<'static>> = Vec::new();
    for unit in units {
        match spans.last_mut() {
            Some(last) if last.style == unit.style => last.content.to_mut().push_str(&unit.text),
            _ => spans.push(Span::styled(unit.text.into_owned(), unit.style)),
        }
    }
    Line {
        style: template.style,
        alignment: template.alignment,
        spans,
    }
}

/// A unit that fits a row of `width`: a character too wide becomes the replacement character.
fn fitted(unit: Unit<'_>, width: usize) -> Unit<'_> {
    if unit.width > width {
        Unit {
            text: Cow::Borrowed(REPLACEMENT),
            width: 1,
            ..unit
        }
    } else {
        unit
    }
}

/// Greedy word wrap of one row of units.
fn wrap_units(units: Vec<Unit<'_>>, width: usize) -> Vec<Vec<Unit<'_>>> {
    let mut rows = Vec::new();
    let mut cur: Vec<Unit<'_>> = Vec::new();
    let mut cur_w = 0;
    // Spaces seen since the last word; placed only if a word follows on the same row.
    let mut pending: Vec<Unit<'_>> = Vec::new();
    let mut first_row = true;
    let mut units = units.into_iter().peekable();
    while let Some(unit) = units.next() {
        if unit.space {
            // Leading spaces of a continuation row are dropped; a first row keeps its indentation.
            if first_row || !cur.is_empty() {
                pending.push(unit);
            }
            continue;
        }
        // A word runs to the next space, CJK included (pi breaks only at spaces, and inside a
        // word only when it is longer than a row).
        let mut word = vec![unit];
        while let Some(next) = units.next_if(|u| !u.space) {
            word.push(next);
        }
        let word_w: usize = word.iter().map(|u| u.width).sum();
        let pending_w = pending.len();
        if cur_w + pending_w + word_w <= width {
            cur_w += pending_w + word_w;
            cur.append(&mut pending);
            cur.extend(word);
        } else if word_w <= width {
            if cur.is_empty() {
                // Only indentation before it: keep what fits beside the word.
                let keep = pending_w.min(width - word_w);
                cur.extend(pending.drain(..).take(keep));
                cur_w = keep + word_w;
            } else {
                rows.push(std::mem::take(&mut cur));
                first_row = false;
                cur_w = word_w;
            }
            pending.clear();
            cur.extend(word);
        } else {
            // Longer than a row: start it on a row of its own and break it where it must.
            if cur.is_empty() {
                let keep = pending_w.min(width.saturating_sub(1));
                cur.extend(pending.drain(..).take(keep));
                cur_w = keep;
            } else {
                rows.push(std::mem::take(&mut cur));
                first_row = false;
                cur_w = 0;
            }
            pending.clear();
            for unit in word {
                let unit = fitted(unit, width);
                if cur_w + unit.width > width {
                    rows.push(std::mem::take(&mut cur));
                    first_row = false;
                    cur_w = 0;
                }
                cur_w += unit.width;
                cur.push(unit);
            }
        }
    }
    let room = width - cur_w;
    cur.extend(pending.into_iter().take(room));
    rows.push(cur);
    rows
}

/// Word-wraps a styled line into rows of at most `width` columns, keeping every span's style.
///
/// Newlines inside the line start a new row; the line's own style and alignment are kept on
/// every row. An empty line gives one empty row.
///
/// ```
/// use pi_tui::{wrap_line, Line};
/// use pi_tui::testing::plain;
/// use ratatui::style::Stylize;
/// use ratatui::text::Span;
///
/// let line = Line::from(vec![Span::raw("see "), "supercalifragilistic".bold()]);
/// assert_eq!(plain(&wrap_line(&line, 8)), "see\nsupercal\nifragili\nstic");
/// ```
pub fn wrap_line(line: &Line, width: u16) -> Vec<Line> {
    let width = usize::from(width.max(1));
    unit_rows(line)
        .into_iter()
        .flat_map(|row| wrap_units(row, width))
        .map(|row| build_line(line, row))
        .collect()
}

/// Wraps plain text in one style: each `\n`-separated paragraph is word-wrapped to `width`.
///
/// ```
/// use pi_tui::wrap_text;
/// use pi_tui::testing::plain;
/// use ratatui::style::Style;
/// assert_eq!(plain(&wrap_text("one two\nthree", Style::default(), 4)), "one\ntwo\nthre\ne");
/// ```
pub fn wrap_text(text: &str, style: Style, width: u16) -> Vec<Line> {
    let line = Line::from(Span::styled(text.to_owned(), style));
    wrap_line(&line, width)
}

/// Cuts a line to at most `width` columns, ending it with `ellipsis` when anything was cut.
///
/// A line that fits comes back unchanged (apart from tabs expanded and control characters
/// removed). Spaces just before the ellipsis are dropped; the ellipsis takes the style of the
/// first character that was cut. An ellipsis wider than `width` is itself cut.
///
/// ```
/// use pi_tui::{truncate_line, Line};
/// use pi_tui::testing::plain;
/// assert_eq!(plain(&[truncate_line(&Line::from("hello world"), 8, "...")]), "hello...");
/// assert_eq!(plain(&[truncate_line(&Line::from("hello"), 8, "...")]), "hello");
/// assert_eq!(plain(&[truncate_line(&Line::from("日本語"), 5, "")]), "日本");
/// ```
pub fn truncate_line(line: &Line, width: u16, ellipsis: &str) -> Line {
    let width = usize::from(width.max(1));
    let units = flat_units(line);
    let total: usize = units.iter().map(|u| u.width).sum();
    if total <= width {
        return build_line(line, units);
    }
    let ellipsis_units: Vec<Unit<'_>> = clusters(ellipsis)
        .filter(|c| matches!(c.kind, ClusterKind::Text | ClusterKind::Space))
        .map(|c| Unit {
            text: Cow::Borrowed(c.text),
            width: c.width,
            style: Style::default(),
            space: false,
        })
        .collect();
    let ellipsis_w: usize = ellipsis_units.iter().map(|u| u.width).sum();
    if ellipsis_w >= width {
        let mut used = 0;
        let kept = ellipsis_units.into_iter().take_while(|u| {
            used += u.width;
            used <= width
        });
        return build_line(line, kept.collect::<Vec<_>>());
    }
    let room = width - ellipsis_w;
    let mut kept = Vec::new();
    let mut used = 0;
    let mut cut_style = None;
    for unit in units {
        if used + unit.width > room {
            cut_style = Some(unit.style);
            break;
        }
        used += unit.width;
        kept.push(unit);
    }
    if ellipsis_w > 0 {
        while kept.last().is_some_and(|u| u.space) {
            kept.pop();
        }
    }
    let style = cut_style.unwrap_or_default();
    kept.extend(ellipsis_units.into_iter().map(|u| Unit { style, ..u }));
    build_line(line, kept)
}

/// Fills a line to exactly `width` columns with spaces in `style` (cutting it first if it is
/// wider), e.g. to paint a background across the whole width.
///
/// ```
/// use pi_tui::{pad_line, line_width, Line};
/// use ratatui::style::{Color, Style};
/// let line = pad_line(&Line::from("ok"), 5, Style::default().bg(Color::Blue));
/// assert_eq!(line_width(&line), 5);
/// assert_eq!(line.spans[1].content, "   ");
/// ```
pub fn pad_line(line: &Line, width: u16, style: Style) -> Line {
    let width_cols = usize::from(width.max(1));
    let mut line = truncate_line(line, width, "");
    let used = crate::line_width(&line);
    if used < width_cols {
        line.spans.push(Span::styled(" ".repeat(width_cols - used), style));
    }
    line
}

/// Cuts every line wider than `width` (no ellipsis): the last guard components use so that
/// nothing they return overflows.
pub(crate) fn fit_lines(lines: Vec<Line>, width: u16) -> Vec<Line> {
    let max = usize::from(width.max(1));
    lines
        .into_iter()
        .map(|line| {
            if crate::line_width(&line) <= max {
                line
            } else {
                truncate_line(&line, width, "")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
