//! Looking at rendered lines in tests and snapshots.
//!
//! Two views of the same lines, one row per line:
//!
//! * [`plain`] — the text only, trailing spaces trimmed.
//! * [`styled`] — the text with every styled run written as `[attrs]text[/]`, where `attrs` is
//!   a space-separated list of `fg=NAME`, `bg=NAME` and the modifiers `bold`, `dim`, `italic`,
//!   `underline`, `blink`, `reverse`, `hidden`, `strike`. `NAME` is the theme slot whose colour it
//!   is (`accent`, `mdHeading`, `toolSuccessBg`, …; see [`Theme::slot_name`]) or, for a colour no
//!   slot has, ratatui's name of the colour (`Red`, `#ff0000`, `42`). Text in the default style is
//!   written as is. The effective style of a run is the line's style patched by the span's, as
//!   the renderer prints it. Render with [`Theme::indexed`] so every slot has its own colour.
//!
//! ```
//! use pi_tui::testing::{plain, styled};
//! use pi_tui::{Slot, Theme};
//! use pi_tui::Line;
//! use ratatui::style::Stylize;
//!
//! let theme = Theme::indexed();
//! let line = Line::from(vec!["ok ".into(), theme.fg(Slot::Success, "done").bold()]);
//! assert_eq!(plain(&[line.clone()]), "ok done");
//! assert_eq!(styled(&[line], &theme), "ok [fg=success bold]done[/]");
//! ```

use ratatui::style::{Color, Modifier, Style};

use crate::theme::Theme;
use crate::{Component, Line};

/// The text of `lines`, one row per line, trailing spaces trimmed.
pub fn plain(lines: &[Line]) -> String {
    lines
        .iter()
        .map(|line| crate::text::line_text(line).trim_end().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text of `lines` with styled runs marked `[attrs]text[/]` (see the module docs).
pub fn styled(lines: &[Line], theme: &Theme) -> String {
    lines
        .iter()
        .map(|line| styled_line(line, theme))
        .collect::<Vec<_>>()
        .join("\n")
}

fn styled_line(line: &Line, theme: &Theme) -> String {
    let mut runs: Vec<(Style, String)> = Vec::new();
    for span in &line.spans {
        let style = line.style.patch(span.style);
        match runs.last_mut() {
            Some((last, text)) if describe(*last, theme) == describe(style, theme) => text.push_str(&span.content),
            _ => runs.push((style, span.content.to_string())),
        }
    }
    let mut out = String::new();
    for (style, text) in runs {
        let attrs = describe(style, theme);
        if attrs.is_empty() {
            out.push_str(&text);
        } else {
            out.push_str(&format!("[{attrs}]{text}[/]"));
        }
    }
    if out.ends_with(' ') {
        out.truncate(out.trim_end_matches(' ').len());
    }
    out
}

/// The attributes of a style, as written in [`styled`] (empty for the default look).
fn describe(style: Style, theme: &Theme) -> String {
    let mut attrs = Vec::new();
    let name = |color: Color, background: bool| match theme.slot_name(color, background) {
        Some(name) => name.to_owned(),
        None => color.to_string(),
    };
    if let Some(fg) = style.fg.filter(|c| *c != Color::Reset) {
        attrs.push(format!("fg={}", name(fg, false)));
    }
    if let Some(bg) = style.bg.filter(|c| *c != Color::Reset) {
        attrs.push(format!("bg={}", name(bg, true)));
    }
    const MODIFIERS: [(Modifier, &str); 9] = [
        (Modifier::BOLD, "bold"),
        (Modifier::DIM, "dim"),
        (Modifier::ITALIC, "italic"),
        (Modifier::UNDERLINED, "underline"),
        (Modifier::SLOW_BLINK, "blink"),
        (Modifier::RAPID_BLINK, "blink"),
        (Modifier::REVERSED, "reverse"),
        (Modifier::HIDDEN, "hidden"),
        (Modifier::CROSSED_OUT, "strike"),
    ];
    for (modifier, word) in MODIFIERS {
        if style.add_modifier.contains(modifier) && !attrs.iter().any(|a| a == word) {
            attrs.push(word.to_owned());
        }
    }
    attrs.join(" ")
}

/// A component rendered at `width`, both views under headings — the layout of this crate's
/// snapshots.
///
/// ```
/// use pi_tui::testing::snapshot;
/// use pi_tui::{Text, Theme};
/// assert_eq!(
///     snapshot(&Text::new("hi"), 40, &Theme::indexed()),
///     "width 40\n-- plain --\nhi\n-- styled --\nhi\n"
/// );
/// ```
pub fn snapshot(component: &dyn Component, width: u16, theme: &Theme) -> String {
    let lines = component.render(width);
    format!(
        "width {width}\n-- plain --\n{}\n-- styled --\n{}\n",
        plain(&lines),
        styled(&lines, theme)
    )
}
