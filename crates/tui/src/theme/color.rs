//! How colours reach the terminal: 24-bit when it can show them, else the nearest of the xterm
//! 256-colour palette, decided from the environment the way pi 0.73.1 decides it.

use ratatui::style::Color;

/// How a theme's hex colours are sent to the terminal.
///
/// ```
/// use pi_tui::ColorMode;
/// let env = |vars: &'static [(&'static str, &'static str)]| {
///     move |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
/// };
/// assert_eq!(ColorMode::detect(env(&[("COLORTERM", "truecolor")])), ColorMode::TrueColor);
/// assert_eq!(ColorMode::detect(env(&[("TERM", "screen-256color")])), ColorMode::Color256);
/// assert_eq!(ColorMode::detect(env(&[("TERM", "xterm-256color")])), ColorMode::TrueColor);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ColorMode {
    /// 24-bit colour (`\x1b[38;2;r;g;bm`).
    #[default]
    TrueColor,
    /// The nearest colour of the 256-colour palette (`\x1b[38;5;nm`).
    Color256,
}

impl ColorMode {
    /// pi's rule: `COLORTERM` `truecolor` / `24bit` or Windows Terminal (`WT_SESSION`) are
    /// 24-bit; `TERM` unset, empty, `dumb` or `linux`, Apple's Terminal.app and GNU screen
    /// (`screen`, `screen-…`, `screen.…`) get 256 colours; every other terminal is taken as 24-bit.
    /// `var` reads an environment variable.
    pub fn detect(var: impl Fn(&str) -> Option<String>) -> Self {
        let colorterm = var("COLORTERM").unwrap_or_default();
        if colorterm == "truecolor" || colorterm == "24bit" || var("WT_SESSION").is_some() {
            return ColorMode::TrueColor;
        }
        let term = var("TERM").unwrap_or_default();
        if term.is_empty() || term == "dumb" || term == "linux" {
            return ColorMode::Color256;
        }
        if var("TERM_PROGRAM").as_deref() == Some("Apple_Terminal") {
            return ColorMode::Color256;
        }
        if term == "screen" || term.starts_with("screen-") || term.starts_with("screen.") {
            return ColorMode::Color256;
        }
        ColorMode::TrueColor
    }

    /// [`ColorMode::detect`] on this process's environment.
    pub fn from_env() -> Self {
        ColorMode::detect(|name| std::env::var(name).ok())
    }

    /// `color` as this mode sends it: 24-bit colours become palette indices in
    /// [`ColorMode::Color256`]; palette indices and the default colour stay as they are.
    pub fn convert(self, color: Color) -> Color {
        match (self, color) {
            (ColorMode::Color256, Color::Rgb(r, g, b)) => Color::Indexed(rgb_to_256(r, g, b)),
            _ => color,
        }
    }
}

/// The channel values of the palette's 6×6×6 colour cube (indices 16–231).
const CUBE: [u8; 6] = [0, 95, 135, 175, 215, 255];

/// The grey ramp (indices 232–255): 8, 18, … 238.
fn gray_value(index: usize) -> i32 {
    8 + 10 * index as i32
}

fn nearest(values: impl Iterator<Item = i32>, target: i32) -> usize {
    let mut best = (i32::MAX, 0);
    for (i, v) in values.enumerate() {
        let distance = (target - v).abs();
        if distance < best.0 {
            best = (distance, i);
        }
    }
    best.1
}

/// Squared distance weighted for the eye's sensitivity (green most, blue least).
fn distance(a: (i32, i32, i32), b: (i32, i32, i32)) -> f64 {
    let (dr, dg, db) = (f64::from(a.0 - b.0), f64::from(a.1 - b.1), f64::from(a.2 - b.2));
    dr * dr * 0.299 + dg * dg * 0.587 + db * db * 0.114
}

/// The palette index pi picks for a 24-bit colour: the nearest colour of the cube, unless the
/// colour is nearly grey (its channels within 10 of each other) and a step of the grey ramp is
/// closer.
pub(crate) fn rgb_to_256(r: u8, g: u8, b: u8) -> u8 {
    let rgb = (i32::from(r), i32::from(g), i32::from(b));
    let cube = |v: i32| nearest(CUBE.iter().map(|c| i32::from(*c)), v);
    let (ri, gi, bi) = (cube(rgb.0), cube(rgb.1), cube(rgb.2));
    let cube_rgb = (i32::from(CUBE[ri]), i32::from(CUBE[gi]), i32::from(CUBE[bi]));
    let cube_index = 16 + 36 * ri + 6 * gi + bi;
    let gray = (0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b)).round() as i32;
    let gray_index = nearest((0..24).map(gray_value), gray);
    let step = gray_value(gray_index);
    let spread = i32::from(r.max(g).max(b)) - i32::from(r.min(g).min(b));
    let index = if spread < 10 && distance(rgb, (step, step, step)) < distance(rgb, cube_rgb) {
        232 + gray_index
    } else {
        cube_index
    };
    u8::try_from(index).unwrap_or(u8::MAX)
}

/// `color` as a CSS colour (`#rrggbb`): 24-bit colours as they are, palette indices by the xterm
/// palette (as pi's export converts them); `None` for the terminal's default colour.
///
/// ```
/// use pi_tui::css_color;
/// use ratatui::style::Color;
/// assert_eq!(css_color(Color::Rgb(0x8a, 0xbe, 0xb7)).as_deref(), Some("#8abeb7"));
/// assert_eq!(css_color(Color::Indexed(244)).as_deref(), Some("#808080"));
/// assert_eq!(css_color(Color::Reset), None);
/// ```
pub fn css_color(color: Color) -> Option<String> {
    let (r, g, b) = match color {
        Color::Rgb(r, g, b) => (r, g, b),
        Color::Indexed(index) => palette_rgb(index),
        Color::Reset => return None,
        Color::Black => palette_rgb(0),
        Color::Red => palette_rgb(1),
        Color::Green => palette_rgb(2),
        Color::Yellow => palette_rgb(3),
        Color::Blue => palette_rgb(4),
        Color::Magenta => palette_rgb(5),
        Color::Cyan => palette_rgb(6),
        Color::Gray => palette_rgb(7),
        Color::DarkGray => palette_rgb(8),
        Color::LightRed => palette_rgb(9),
        Color::LightGreen => palette_rgb(10),
        Color::LightYellow => palette_rgb(11),
        Color::LightBlue => palette_rgb(12),
        Color::LightMagenta => palette_rgb(13),
        Color::LightCyan => palette_rgb(14),
        Color::White => palette_rgb(15),
    };
    Some(format!("#{r:02x}{g:02x}{b:02x}"))
}

/// The xterm palette's colour `index`: the 16 system colours, the 6×6×6 cube, the 24 greys.
fn palette_rgb(index: u8) -> (u8, u8, u8) {
    const SYSTEM: [(u8, u8, u8); 16] = [
        (0x00, 0x00, 0x00),
        (0x80, 0x00, 0x00),
        (0x00, 0x80, 0x00),
        (0x80, 0x80, 0x00),
        (0x00, 0x00, 0x80),
        (0x80, 0x00, 0x80),
        (0x00, 0x80, 0x80),
        (0xc0, 0xc0, 0xc0),
        (0x80, 0x80, 0x80),
        (0xff, 0x00, 0x00),
        (0x00, 0xff, 0x00),
        (0xff, 0xff, 0x00),
        (0x00, 0x00, 0xff),
        (0xff, 0x00, 0xff),
        (0x00, 0xff, 0xff),
        (0xff, 0xff, 0xff),
    ];
    const CUBE: [u8; 6] = [0, 95, 135, 175, 215, 255];
    match index {
        0..=15 => SYSTEM[usize::from(index)],
        16..=231 => {
            let i = index - 16;
            (
                CUBE[usize::from(i / 36)],
                CUBE[usize::from((i / 6) % 6)],
                CUBE[usize::from(i % 6)],
            )
        }
        _ => {
            let grey = 8 + 10 * (index - 232);
            (grey, grey, grey)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn palette_indices_match_pis_choices() {
        // Values pi 0.73.1's `hexTo256` gives.
        assert_eq!(rgb_to_256(0x80, 0x80, 0x80), 244);
        assert_eq!(rgb_to_256(0x8a, 0xbe, 0xb7), 109);
        assert_eq!(rgb_to_256(0xff, 0xff, 0x00), 226);
        assert_eq!(rgb_to_256(0x34, 0x35, 0x41), 59);
        assert_eq!(rgb_to_256(0x0a, 0x0a, 0x0a), 232);
        assert_eq!(rgb_to_256(0x7f, 0x7f, 0x85), 244);
        assert_eq!(rgb_to_256(0xd7, 0x00, 0x5f), 161);
        assert_eq!(rgb_to_256(0, 0, 0), 16);
        assert_eq!(rgb_to_256(0xff, 0xff, 0xff), 231);
    }

    #[test]
    fn the_mode_converts_only_24_bit_colours() {
        assert_eq!(
            ColorMode::Color256.convert(Color::Rgb(0xff, 0xff, 0)),
            Color::Indexed(226)
        );
        assert_eq!(ColorMode::Color256.convert(Color::Indexed(3)), Color::Indexed(3));
        assert_eq!(ColorMode::Color256.convert(Color::Reset), Color::Reset);
        assert_eq!(ColorMode::TrueColor.convert(Color::Rgb(1, 2, 3)), Color::Rgb(1, 2, 3));
    }

    #[test]
    fn detection_follows_pis_order() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
        };
        assert_eq!(ColorMode::detect(env(&[])), ColorMode::Color256);
        assert_eq!(ColorMode::detect(env(&[("TERM", "dumb")])), ColorMode::Color256);
        assert_eq!(
            ColorMode::detect(env(&[("TERM", "dumb"), ("COLORTERM", "24bit")])),
            ColorMode::TrueColor
        );
        assert_eq!(ColorMode::detect(env(&[("WT_SESSION", "1")])), ColorMode::TrueColor);
        assert_eq!(
            ColorMode::detect(env(&[("TERM", "xterm-256color"), ("TERM_PROGRAM", "Apple_Terminal")])),
            ColorMode::Color256
        );
        assert_eq!(
            ColorMode::detect(env(&[("TERM", "screen.xterm-256color")])),
            ColorMode::Color256
        );
        assert_eq!(ColorMode::detect(env(&[("TERM", "linux")])), ColorMode::Color256);
        assert_eq!(ColorMode::detect(env(&[("TERM", "alacritty")])), ColorMode::TrueColor);
    }
}
