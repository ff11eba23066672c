//! Inline images (pi-tui's `terminal-image.ts` and `Image` component): which image protocol the
//! terminal speaks, the protocols' escape sequences, and [`ImageView`], a component that draws an
//! image inline or, where the terminal cannot, pi's text placeholder.
//!
//! Detection is pi-tui's, from the environment only: kitty's graphics protocol in kitty, Ghostty
//! and WezTerm; iTerm2's inline images in iTerm2; none inside tmux or screen, in VS Code, Alacritty
//! or an unknown terminal. pi-tui has no sixel, and neither has this module.
//!
//! An image takes `rows` rows: `rows - 1` empty lines, then one *image line* that moves the cursor
//! up to the first of them, draws the image there and (kitty, whose cursor does not move) moves it
//! back down. The [`InlineRenderer`](crate::InlineRenderer) writes an image line as it is instead
//! of wrapping it and cleaning it of control characters; only lines made by this module are image
//! lines ([`is_image_line`]), never text that merely contains the sequences.
//!
//! ```
//! use pi_tui::image::{ImageProtocol, ImageView, image_fallback};
//! use pi_tui::{Component, testing::plain};
//!
//! let view = ImageView::new("iVBORw0KGgo=", "image/png", Some((800, 600))).with_protocol(None);
//! assert_eq!(plain(&view.render(80)), "[Image: [image/png] 800x600]");
//! assert_eq!(image_fallback("image/jpeg", None, Some("cat.jpg")), "[Image: cat.jpg [image/jpeg]]");
//! let kitty = ImageView::new("iVBORw0KGgo=", "image/png", Some((90, 18)))
//!     .with_protocol(Some(ImageProtocol::Kitty))
//!     .with_max_width(10);
//! assert_eq!(kitty.render(80).len(), 1);
//! ```

use std::sync::atomic::{AtomicU32, Ordering};

use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

use crate::{Component, Line};

/// The inline image protocol of a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageProtocol {
    /// kitty's graphics protocol (kitty, Ghostty, WezTerm).
    Kitty,
    /// iTerm2's inline images (`OSC 1337 ; File=`).
    ITerm2,
}

/// What a terminal can show, as pi-tui's `detectCapabilities` finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TerminalCapabilities {
    /// The image protocol, if any.
    pub images: Option<ImageProtocol>,
    /// 24-bit colour.
    pub true_color: bool,
    /// OSC 8 hyperlinks.
    pub hyperlinks: bool,
}

/// The terminal's capabilities from its environment variables (`get` reads one; pass
/// `|name| std::env::var(name).ok()` for the process's).
///
/// ```
/// use pi_tui::image::{ImageProtocol, detect_capabilities};
/// let env = |name: &str| (name == "TERM_PROGRAM").then(|| "iTerm.app".to_owned());
/// assert_eq!(detect_capabilities(env).images, Some(ImageProtocol::ITerm2));
/// assert_eq!(detect_capabilities(|_| None).images, None);
/// ```
pub fn detect_capabilities(get: impl Fn(&str) -> Option<String>) -> TerminalCapabilities {
    let lower = |name: &str| get(name).unwrap_or_default().to_lowercase();
    let (program, term, color_term) = (lower("TERM_PROGRAM"), lower("TERM"), lower("COLORTERM"));
    let set = |name: &str| get(name).is_some_and(|value| !value.is_empty());
    let true_color = color_term == "truecolor" || color_term == "24bit";
    let caps = |images, true_color, hyperlinks| TerminalCapabilities {
        images,
        true_color,
        hyperlinks,
    };
    // tmux and screen swallow the image protocols (and OSC 8) unless told to pass them through.
    if set("TMUX") || term.starts_with("tmux") || term.starts_with("screen") {
        return caps(None, true_color, false);
    }
    if set("KITTY_WINDOW_ID") || program == "kitty" {
        return caps(Some(ImageProtocol::Kitty), true, true);
    }
    if program == "ghostty" || term.contains("ghostty") || set("GHOSTTY_RESOURCES_DIR") {
        return caps(Some(ImageProtocol::Kitty), true, true);
    }
    if set("WEZTERM_PANE") || program == "wezterm" {
        return caps(Some(ImageProtocol::Kitty), true, true);
    }
    if set("ITERM_SESSION_ID") || program == "iterm.app" {
        return caps(Some(ImageProtocol::ITerm2), true, true);
    }
    if program == "vscode" || program == "alacritty" {
        return caps(None, true, true);
    }
    caps(None, true_color, false)
}

/// The size of a terminal cell in pixels pi-tui assumes until the terminal tells it (9 × 18).
pub const DEFAULT_CELL_PIXELS: (u32, u32) = (9, 18);

/// Rows an image of `pixels` (width, height) takes at `width_cells` columns: pi-tui's
/// `calculateImageRows` (at least 1).
pub fn image_rows(pixels: (u32, u32), width_cells: u16, cell: (u32, u32)) -> u16 {
    let target_width = f64::from(width_cells) * f64::from(cell.0);
    let scale = target_width / f64::from(pixels.0.max(1));
    let rows = (f64::from(pixels.1) * scale / f64::from(cell.1.max(1))).ceil();
    rows.clamp(1.0, f64::from(u16::MAX)) as u16
}

/// kitty graphics protocol options (pi-tui's `encodeKitty`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KittyOptions {
    /// Columns to scale the image to (`c=`).
    pub columns: Option<u16>,
    /// Rows to scale it to (`r=`).
    pub rows: Option<u16>,
    /// The image id (`i=`).
    pub image_id: Option<u32>,
    /// False adds `C=1`: the cursor stays where it was.
    pub move_cursor: bool,
}

/// The kitty sequence transmitting and showing a PNG (`a=T,f=100,q=2`), in chunks of 4096 base64
/// characters.
pub fn encode_kitty(base64: &str, options: KittyOptions) -> String {
    const CHUNK: usize = 4096;
    let mut params = vec!["a=T".to_owned(), "f=100".to_owned(), "q=2".to_owned()];
    if !options.move_cursor {
        params.push("C=1".to_owned());
    }
    if let Some(columns) = options.columns.filter(|c| *c > 0) {
        params.push(format!("c={columns}"));
    }
    if let Some(rows) = options.rows.filter(|r| *r > 0) {
        params.push(format!("r={rows}"));
    }
    if let Some(id) = options.image_id.filter(|id| *id > 0) {
        params.push(format!("i={id}"));
    }
    let params = params.join(",");
    if base64.len() <= CHUNK {
        return format!("\x1b_G{params};{base64}\x1b\\");
    }
    // Base64 is ASCII: every byte offset is a character boundary.
    let chunks: Vec<&str> = base64
        .as_bytes()
        .chunks(CHUNK)
        .map(|chunk| std::str::from_utf8(chunk).unwrap_or_default())
        .collect();
    let last = chunks.len() - 1;
    let mut out = String::with_capacity(base64.len() + chunks.len() * 16);
    for (i, chunk) in chunks.iter().enumerate() {
        match i {
            0 => out.push_str(&format!("\x1b_G{params},m=1;{chunk}\x1b\\")),
            _ if i == last => out.push_str(&format!("\x1b_Gm=0;{chunk}\x1b\\")),
            _ => out.push_str(&format!("\x1b_Gm=1;{chunk}\x1b\\")),
        }
    }
    out
}

/// The kitty sequence deleting image `id` and freeing its data.
pub fn delete_kitty_image(id: u32) -> String {
    format!("\x1b_Ga=d,d=I,i={id},q=2\x1b\\")
}

/// The iTerm2 inline-image sequence at `width` cells (height `auto`, aspect ratio kept).
pub fn encode_iterm2(base64: &str, width: u16) -> String {
    format!("\x1b]1337;File=inline=1;width={width};height=auto:{base64}\x07")
}

/// pi-tui's placeholder for an image it does not draw: `[Image: name [mime] WxH]`.
pub fn image_fallback(mime_type: &str, dimensions: Option<(u32, u32)>, filename: Option<&str>) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(name) = filename {
        parts.push(name.to_owned());
    }
    parts.push(format!("[{mime_type}]"));
    if let Some((w, h)) = dimensions {
        parts.push(format!("{w}x{h}"));
    }
    format!("[Image: {}]", parts.join(" "))
}

/// The style that marks an image line: a modifier removal no text style uses. Together with the
/// sequence at the line's start it tells the renderer to write the line as it is.
fn image_line_style() -> Style {
    Style::new().remove_modifier(Modifier::SLOW_BLINK | Modifier::RAPID_BLINK | Modifier::HIDDEN)
}

/// Whether `line` is an image line made by [`ImageView`] (written raw by the renderer).
pub fn is_image_line(line: &Line) -> bool {
    if line.style != image_line_style() || line.spans.len() != 1 {
        return false;
    }
    let content = line.spans[0].content.as_ref();
    let sequence = match content.strip_prefix("\x1b[") {
        Some(rest) => rest
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .strip_prefix('A')
            .unwrap_or(""),
        None => content,
    };
    sequence.starts_with("\x1b_G") || sequence.starts_with("\x1b]1337;File=")
}

fn image_line(content: String) -> Line {
    Line::from(Span::raw(content)).style(image_line_style())
}

/// A new kitty image id: random-looking and distinct within the process, as pi-tui's random ids
/// keep images of different parts of the program apart.
fn allocate_image_id() -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let seed = std::process::id().wrapping_mul(2_654_435_761);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    (seed ^ n.wrapping_mul(0x9e37_79b9)).max(1)
}

/// An image drawn inline (pi-tui's `Image` component): at most `max_width_cells` columns (60 by
/// default; never wider than the width less 2), as tall as its aspect ratio needs at 9 × 18 pixel
/// cells; pi's placeholder text where the terminal has no image protocol. The kitty protocol
/// needs PNG: give it PNG data (convert first), or it shows the placeholder.
#[derive(Debug, Clone)]
pub struct ImageView {
    base64: String,
    mime_type: String,
    dimensions: (u32, u32),
    max_width_cells: u16,
    filename: Option<String>,
    protocol: Option<ImageProtocol>,
    image_id: u32,
    fallback_style: Style,
}

impl ImageView {
    /// An image of `mime_type` given as base64, `dimensions` in pixels (pi-tui assumes 800 × 600
    /// when they are unknown). The protocol is detected from the process's environment.
    pub fn new(base64: impl Into<String>, mime_type: impl Into<String>, dimensions: Option<(u32, u32)>) -> Self {
        ImageView {
            base64: base64.into(),
            mime_type: mime_type.into(),
            dimensions: dimensions.unwrap_or((800, 600)),
            max_width_cells: 60,
            filename: None,
            protocol: detect_capabilities(|name| std::env::var(name).ok()).images,
            image_id: allocate_image_id(),
            fallback_style: Style::default(),
        }
    }

    /// Draws with `protocol` (`None`: the placeholder) instead of the detected one.
    #[must_use]
    pub fn with_protocol(mut self, protocol: Option<ImageProtocol>) -> Self {
        self.protocol = protocol;
        self
    }

    /// The widest the image is drawn, in cells (`terminal.imageWidthCells`).
    #[must_use]
    pub fn with_max_width(mut self, cells: u16) -> Self {
        self.max_width_cells = cells.max(1);
        self
    }

    /// A file name for the placeholder.
    #[must_use]
    pub fn with_filename(mut self, name: impl Into<String>) -> Self {
        self.filename = Some(name.into());
        self
    }

    /// The kitty image id (for tests; each view gets its own otherwise).
    #[must_use]
    pub fn with_image_id(mut self, id: u32) -> Self {
        self.image_id = id.max(1);
        self
    }

    /// The style of the placeholder.
    #[must_use]
    pub fn with_fallback_style(mut self, style: Style) -> Self {
        self.fallback_style = style;
        self
    }

    /// The kitty image id.
    pub fn image_id(&self) -> u32 {
        self.image_id
    }

    fn fallback(&self) -> Vec<Line> {
        let text = image_fallback(&self.mime_type, Some(self.dimensions), self.filename.as_deref());
        crate::wrap_text(&text, self.fallback_style, u16::MAX)
    }
}

impl Component for ImageView {
    fn render(&self, width: u16) -> Vec<Line> {
        let Some(protocol) = self.protocol else {
            return self
                .fallback()
                .iter()
                .map(|line| crate::truncate_line(line, width, "…"))
                .collect();
        };
        if protocol == ImageProtocol::Kitty && self.mime_type != "image/png" {
            return self.fallback();
        }
        let columns = width.saturating_sub(2).min(self.max_width_cells).max(1);
        let rows = image_rows(self.dimensions, columns, DEFAULT_CELL_PIXELS);
        let sequence = match protocol {
            ImageProtocol::Kitty => encode_kitty(
                &self.base64,
                KittyOptions {
                    columns: Some(columns),
                    rows: Some(rows),
                    image_id: Some(self.image_id),
                    move_cursor: false,
                },
            ),
            ImageProtocol::ITerm2 => encode_iterm2(&self.base64, columns),
        };
        let offset = rows - 1;
        let up = if offset > 0 {
            format!("\x1b[{offset}A")
        } else {
            String::new()
        };
        let down = if protocol == ImageProtocol::Kitty && offset > 0 {
            format!("\x1b[{offset}B")
        } else {
            String::new()
        };
        let mut lines = vec![Line::default(); usize::from(offset)];
        lines.push(image_line(format!("{up}{sequence}{down}")));
        lines
    }
}

#[cfg(test)]
mod tests;
