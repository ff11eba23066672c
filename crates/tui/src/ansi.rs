//! Styled lines to ANSI escape sequences, through crossterm's style commands.
//!
//! A line is written span by span; a span whose look differs from the one before starts with an
//! SGR reset followed by its colours and attributes, and every line ends with an SGR reset, so no
//! style ever leaks into the next row or into the shell after pi exits. The style of a span is the
//! line's style patched by the span's (ratatui's rule). Span texts are written as they are: pass
//! lines through [`wrap_line`](crate::wrap_line) first (the [`InlineRenderer`](crate::InlineRenderer) does) so
//! no control character from content reaches the terminal.
//!
//! ```
//! use pi_tui::ansi::line_to_ansi;
//! use pi_tui::Line;
//! use ratatui::style::Stylize;
//!
//! assert_eq!(line_to_ansi(&Line::from("plain")), "plain\x1b[0m");
//! assert_eq!(line_to_ansi(&Line::from("bold".bold())), "\x1b[0m\x1b[1mbold\x1b[0m");
//! ```

use std::io::{self, Write};

use crossterm::queue;
use crossterm::style::{Attribute, Color as CtColor, Print, SetAttribute, SetBackgroundColor, SetForegroundColor};
use ratatui::style::{Color, Modifier, Style};

use crate::Line;

/// The SGR reset sequence that ends every line.
pub const SGR_RESET: &str = "\x1b[0m";

/// Writes `line` as ANSI (no newline), ending with an SGR reset.
///
/// ```
/// use pi_tui::{ansi::write_line, Line};
/// let mut out = Vec::new();
/// write_line(&mut out, &Line::from("hi"))?;
/// assert_eq!(out, b"hi\x1b[0m");
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn write_line<W: Write>(out: &mut W, line: &Line) -> io::Result<()> {
    let mut current = Style::default();
    for span in &line.spans {
        if span.content.is_empty() {
            continue;
        }
        let style = line.style.patch(span.style);
        if !same_look(style, current) {
            write_style(out, style)?;
            current = style;
        }
        queue!(out, Print(&span.content))?;
    }
    out.write_all(SGR_RESET.as_bytes())
}

/// `line` as an ANSI string (see [`write_line`]).
pub fn line_to_ansi(line: &Line) -> String {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = write_line(&mut out, line);
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether two styles print the same.
fn same_look(a: Style, b: Style) -> bool {
    let colour = |c: Option<Color>| c.filter(|c| *c != Color::Reset);
    colour(a.fg) == colour(b.fg) && colour(a.bg) == colour(b.bg) && a.add_modifier == b.add_modifier
}

/// Resets the terminal's style and sets `style`.
fn write_style<W: Write>(out: &mut W, style: Style) -> io::Result<()> {
    out.write_all(SGR_RESET.as_bytes())?;
    if let Some(fg) = style.fg.filter(|c| *c != Color::Reset) {
        queue!(out, SetForegroundColor(to_crossterm(fg)))?;
    }
    if let Some(bg) = style.bg.filter(|c| *c != Color::Reset) {
        queue!(out, SetBackgroundColor(to_crossterm(bg)))?;
    }
    const ATTRIBUTES: [(Modifier, Attribute); 9] = [
        (Modifier::BOLD, Attribute::Bold),
        (Modifier::DIM, Attribute::Dim),
        (Modifier::ITALIC, Attribute::Italic),
        (Modifier::UNDERLINED, Attribute::Underlined),
        (Modifier::SLOW_BLINK, Attribute::SlowBlink),
        (Modifier::RAPID_BLINK, Attribute::RapidBlink),
        (Modifier::REVERSED, Attribute::Reverse),
        (Modifier::HIDDEN, Attribute::Hidden),
        (Modifier::CROSSED_OUT, Attribute::CrossedOut),
    ];
    for (modifier, attribute) in ATTRIBUTES {
        if style.add_modifier.contains(modifier) {
            queue!(out, SetAttribute(attribute))?;
        }
    }
    Ok(())
}

/// ratatui's colour as crossterm's (the mapping ratatui's crossterm backend uses).
///
/// ```
/// use pi_tui::ansi::to_crossterm;
/// use ratatui::style::Color;
/// assert_eq!(to_crossterm(Color::Red), crossterm::style::Color::DarkRed);
/// assert_eq!(to_crossterm(Color::Rgb(1, 2, 3)), crossterm::style::Color::Rgb { r: 1, g: 2, b: 3 });
/// ```
pub fn to_crossterm(color: Color) -> CtColor {
    match color {
        Color::Reset => CtColor::Reset,
        Color::Black => CtColor::Black,
        Color::Red => CtColor::DarkRed,
        Color::Green => CtColor::DarkGreen,
        Color::Yellow => CtColor::DarkYellow,
        Color::Blue => CtColor::DarkBlue,
        Color::Magenta => CtColor::DarkMagenta,
        Color::Cyan => CtColor::DarkCyan,
        Color::Gray => CtColor::Grey,
        Color::DarkGray => CtColor::DarkGrey,
        Color::LightRed => CtColor::Red,
        Color::LightGreen => CtColor::Green,
        Color::LightYellow => CtColor::Yellow,
        Color::LightBlue => CtColor::Blue,
        Color::LightMagenta => CtColor::Magenta,
        Color::LightCyan => CtColor::Cyan,
        Color::White => CtColor::White,
        Color::Rgb(r, g, b) => CtColor::Rgb { r, g, b },
        Color::Indexed(i) => CtColor::AnsiValue(i),
    }
}

#[cfg(test)]
mod tests {
    use ratatui::style::Stylize;
    use ratatui::text::Span;

    use super::*;

    #[test]
    fn every_line_ends_with_a_reset() {
        assert!(line_to_ansi(&Line::from("")).ends_with(SGR_RESET));
        assert!(line_to_ansi(&Line::from("x".red())).ends_with(SGR_RESET));
    }

    #[test]
    fn colours_and_attributes_are_written() {
        let line = Line::from(vec![
            Span::raw("a"),
            Span::styled("b", Style::default().fg(Color::Rgb(1, 2, 3)).bold()),
        ]);
        assert_eq!(line_to_ansi(&line), "a\x1b[0m\x1b[38;2;1;2;3m\x1b[1mb\x1b[0m");
    }

    #[test]
    fn the_line_style_is_the_base_of_each_span() {
        let line = Line::from(vec![Span::raw("a"), "b".bold()]).style(Style::default().bg(Color::Indexed(4)));
        assert_eq!(
            line_to_ansi(&line),
            "\x1b[0m\x1b[48;5;4ma\x1b[0m\x1b[48;5;4m\x1b[1mb\x1b[0m"
        );
    }

    #[test]
    fn neighbours_of_the_same_look_share_one_sequence() {
        let line = Line::from(vec!["a".red(), "b".red()]);
        assert_eq!(line_to_ansi(&line), "\x1b[0m\x1b[38;5;1mab\x1b[0m");
    }
}
