//! pi's themes as data: the 51 colour tokens of pi's theme files ([`Slot`]), the built-in `dark`
//! and `light` themes (our JSON files, embedded), custom theme files in pi's format
//! ([`Theme::from_json`], [`Theme::load`]) and the palette fallback for terminals without 24-bit
//! colour ([`ColorMode`]).
//!
//! ```
//! use pi_tui::{Slot, Theme};
//! let theme = Theme::dark();
//! let span = theme.fg(Slot::ToolTitle, "read");
//! assert_eq!(span.content, "read");
//! assert_eq!(Slot::from_name("mdHeading"), Some(Slot::MdHeading));
//! assert_eq!(theme.name(), "dark");
//! ```

mod color;
mod json;
mod slot;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;

pub use color::{ColorMode, css_color};
pub use json::ThemeError;
pub(crate) use slot::SLOT_COUNT;
pub use slot::Slot;

/// The state of a tool block, which picks its background.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockState {
    /// Running, or its arguments still streaming.
    Pending,
    /// Finished.
    Success,
    /// Failed.
    Error,
}

impl BlockState {
    /// The background token of a block in this state.
    pub fn slot(self) -> Slot {
        match self {
            BlockState::Pending => Slot::ToolPendingBg,
            BlockState::Success => Slot::ToolSuccessBg,
            BlockState::Error => Slot::ToolErrorBg,
        }
    }
}

/// A theme: its name, where it was loaded from, and a colour for every token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    name: String,
    source: Option<PathBuf>,
    colors: [Color; SLOT_COUNT],
    /// The `export` section: the HTML export's page, card and info backgrounds.
    export: [Option<Color>; 3],
}

impl Default for Theme {
    fn default() -> Self {
        Theme::dark()
    }
}

const DARK_JSON: &str = include_str!("dark.json");
const LIGHT_JSON: &str = include_str!("light.json");

fn built_in(cell: &'static OnceLock<Theme>, label: &str, json: &str) -> Theme {
    cell.get_or_init(|| match json::parse(label, json) {
        Ok(parsed) => Theme {
            name: parsed.name,
            source: None,
            colors: parsed.colors,
            export: parsed.export,
        },
        // The embedded files are checked by this module's tests; a broken one shows no colours.
        Err(_) => Theme::plain(),
    })
    .clone()
}

impl Theme {
    /// The names of the built-in themes.
    pub const BUILT_IN: [&'static str; 2] = ["dark", "light"];

    /// pi's `dark` theme (24-bit colours).
    pub fn dark() -> Self {
        static DARK: OnceLock<Theme> = OnceLock::new();
        built_in(&DARK, "dark", DARK_JSON)
    }

    /// pi's `light` theme (24-bit colours).
    pub fn light() -> Self {
        static LIGHT: OnceLock<Theme> = OnceLock::new();
        built_in(&LIGHT, "light", LIGHT_JSON)
    }

    /// The built-in theme called `name` (`dark`, `light`).
    pub fn built_in(name: &str) -> Option<Self> {
        match name {
            "dark" => Some(Theme::dark()),
            "light" => Some(Theme::light()),
            _ => None,
        }
    }

    /// A theme in pi's JSON format; `label` names it in errors (pi uses the file's path).
    ///
    /// ```
    /// use pi_tui::Theme;
    /// let error = Theme::from_json("mine.json", r#"{"name": "mine", "colors": {}}"#).unwrap_err();
    /// assert!(error.to_string().starts_with("Invalid theme \"mine.json\":\n\nMissing required color tokens:\n  - accent\n"));
    /// ```
    ///
    /// # Errors
    /// pi's: the text is not JSON, tokens are missing or of the wrong type, a variable is
    /// unknown or circular, a hex colour is malformed.
    pub fn from_json(label: &str, text: &str) -> Result<Self, ThemeError> {
        let parsed = json::parse(label, text)?;
        Ok(Theme {
            name: parsed.name,
            source: None,
            colors: parsed.colors,
            export: parsed.export,
        })
    }

    /// The theme file at `path` (blocking: call it off the async runtime).
    ///
    /// # Errors
    /// The file cannot be read, or [`Theme::from_json`]'s errors (labelled with the path).
    pub fn load(path: &Path) -> Result<Self, ThemeError> {
        let parsed = json::load(path)?;
        Ok(Theme {
            name: parsed.name,
            source: Some(path.to_path_buf()),
            colors: parsed.colors,
            export: parsed.export,
        })
    }

    /// The theme's `name`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file the theme was loaded from (`None` for the built-in ones).
    pub fn source(&self) -> Option<&Path> {
        self.source.as_deref()
    }

    /// The theme as `mode` shows it: in [`ColorMode::Color256`] every 24-bit colour becomes the
    /// nearest palette colour, as pi does on terminals without 24-bit colour.
    ///
    /// ```
    /// use pi_tui::{ColorMode, Slot, Theme};
    /// use ratatui::style::Color;
    /// assert_eq!(Theme::dark().for_mode(ColorMode::Color256).color(Slot::Muted), Color::Indexed(244));
    /// ```
    pub fn for_mode(mut self, mode: ColorMode) -> Self {
        for color in &mut self.colors {
            *color = mode.convert(*color);
        }
        self
    }

    /// A theme without colours (for dumb terminals and plain snapshots): every token is the
    /// terminal's default colour.
    pub fn plain() -> Self {
        Theme {
            name: "plain".to_owned(),
            source: None,
            colors: [Color::Reset; SLOT_COUNT],
            export: [None; 3],
        }
    }

    /// A theme whose every token is a different palette colour (token `i` of [`Slot::ALL`] is
    /// `Color::Indexed(i + 1)`), so that [`testing::styled`](crate::testing::styled) can name each
    /// colour's token unambiguously. Meant for snapshots.
    ///
    /// ```
    /// use pi_tui::{Slot, Theme};
    /// use ratatui::style::Color;
    /// assert_eq!(Theme::indexed().color(Slot::Accent), Color::Indexed(1));
    /// ```
    pub fn indexed() -> Self {
        let mut colors = [Color::Reset; SLOT_COUNT];
        for (i, color) in colors.iter_mut().enumerate() {
            *color = Color::Indexed(1 + i as u8);
        }
        Theme {
            name: "indexed".to_owned(),
            source: None,
            colors,
            export: [None; 3],
        }
    }

    /// The `export` section's page, card and info backgrounds (pi's `pageBg`, `cardBg`, `infoBg`),
    /// each `None` when the theme does not set it.
    ///
    /// ```
    /// use pi_tui::Theme;
    /// use ratatui::style::Color;
    /// assert_eq!(Theme::dark().export_backgrounds()[0], Some(Color::Rgb(0x18, 0x18, 0x1e)));
    /// ```
    pub fn export_backgrounds(&self) -> [Option<Color>; 3] {
        self.export
    }

    /// The colour of `slot`.
    pub fn color(&self, slot: Slot) -> Color {
        self.colors[slot as usize]
    }

    /// Sets the colour of `slot`.
    pub fn set(&mut self, slot: Slot, color: Color) {
        self.colors[slot as usize] = color;
    }

    /// The style of `slot`: its colour as the background for a background token
    /// ([`Slot::is_background`]), else as the foreground.
    pub fn style(&self, slot: Slot) -> Style {
        if slot.is_background() {
            Style::default().bg(self.color(slot))
        } else {
            Style::default().fg(self.color(slot))
        }
    }

    /// `text` in `slot`'s colour (pi's `theme.fg(slot, text)`).
    pub fn fg(&self, slot: Slot, text: impl Into<String>) -> Span<'static> {
        Span::styled(text.into(), Style::default().fg(self.color(slot)))
    }

    /// `text` in bold (pi's `theme.bold`).
    pub fn bold(&self, text: impl Into<String>) -> Span<'static> {
        Span::styled(text.into(), Style::default().add_modifier(Modifier::BOLD))
    }

    /// `text` in italics (pi's `theme.italic`).
    pub fn italic(&self, text: impl Into<String>) -> Span<'static> {
        Span::styled(text.into(), Style::default().add_modifier(Modifier::ITALIC))
    }

    /// Sets the background of tool blocks in `state`.
    pub fn set_block_bg(&mut self, state: BlockState, color: Color) {
        self.set(state.slot(), color);
    }

    /// The background of a tool block in `state`.
    pub fn block_bg(&self, state: BlockState) -> Color {
        self.color(state.slot())
    }

    /// The name of the token whose colour is `color`, looking at text tokens first or, with
    /// `background`, at background tokens first. `None` for the terminal's default colour or a
    /// colour no token has.
    ///
    /// ```
    /// use pi_tui::{BlockState, Theme};
    /// let theme = Theme::indexed();
    /// assert_eq!(theme.slot_name(theme.block_bg(BlockState::Error), true), Some("toolErrorBg"));
    /// ```
    pub fn slot_name(&self, color: Color, background: bool) -> Option<&'static str> {
        if color == Color::Reset {
            return None;
        }
        let find = |want_background: bool| {
            Slot::ALL
                .into_iter()
                .filter(|slot| slot.is_background() == want_background)
                .find(|slot| self.color(*slot) == color)
                .map(Slot::name)
        };
        find(background).or_else(|| find(!background))
    }
}

#[cfg(test)]
mod tests;
