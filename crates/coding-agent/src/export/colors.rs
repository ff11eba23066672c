//! The colors of an export: pi's theme tokens (`accent`, `toolSuccessBg`, `syntaxKeyword`, …) as
//! CSS colors, and the three page backgrounds pi's theme JSON may give in its `export` section.

use std::collections::BTreeMap;

/// pi's `dark` theme with its variables resolved and its empty ("terminal default") colors given
/// the text color pi's exporter uses for them (`#e5e5e7`).
const DARK: &[(&str, &str)] = &[
    ("accent", "#8abeb7"),
    ("border", "#5f87ff"),
    ("borderAccent", "#00d7ff"),
    ("borderMuted", "#505050"),
    ("success", "#b5bd68"),
    ("error", "#cc6666"),
    ("warning", "#ffff00"),
    ("muted", "#808080"),
    ("dim", "#666666"),
    ("text", "#e5e5e7"),
    ("thinkingText", "#808080"),
    ("selectedBg", "#3a3a4a"),
    ("userMessageBg", "#343541"),
    ("userMessageText", "#e5e5e7"),
    ("customMessageBg", "#2d2838"),
    ("customMessageText", "#e5e5e7"),
    ("customMessageLabel", "#9575cd"),
    ("toolPendingBg", "#282832"),
    ("toolSuccessBg", "#283228"),
    ("toolErrorBg", "#3c2828"),
    ("toolTitle", "#e5e5e7"),
    ("toolOutput", "#808080"),
    ("mdHeading", "#f0c674"),
    ("mdLink", "#81a2be"),
    ("mdLinkUrl", "#666666"),
    ("mdCode", "#8abeb7"),
    ("mdCodeBlock", "#b5bd68"),
    ("mdCodeBlockBorder", "#808080"),
    ("mdQuote", "#808080"),
    ("mdQuoteBorder", "#808080"),
    ("mdHr", "#808080"),
    ("mdListBullet", "#8abeb7"),
    ("toolDiffAdded", "#b5bd68"),
    ("toolDiffRemoved", "#cc6666"),
    ("toolDiffContext", "#808080"),
    ("syntaxComment", "#6A9955"),
    ("syntaxKeyword", "#569CD6"),
    ("syntaxFunction", "#DCDCAA"),
    ("syntaxVariable", "#9CDCFE"),
    ("syntaxString", "#CE9178"),
    ("syntaxNumber", "#B5CEA8"),
    ("syntaxType", "#4EC9B0"),
    ("syntaxOperator", "#D4D4D4"),
    ("syntaxPunctuation", "#D4D4D4"),
    ("thinkingOff", "#505050"),
    ("thinkingMinimal", "#6e6e6e"),
    ("thinkingLow", "#5f87af"),
    ("thinkingMedium", "#81a2be"),
    ("thinkingHigh", "#b294bb"),
    ("thinkingXhigh", "#d183e8"),
    ("bashMode", "#b5bd68"),
];

/// The colors of an export. [`ExportColors::default`] is pi's `dark` theme; a theme's colors are
/// laid over it with [`ExportColors::with_token`] (tokens it does not set keep dark's value).
///
/// ```
/// use pi_coding_agent::export::ExportColors;
///
/// let colors = ExportColors::default().with_token("accent", "#ff0000");
/// assert_eq!(colors.token("accent"), Some("#ff0000"));
/// assert_eq!(colors.token("syntaxKeyword"), Some("#569CD6"));
/// assert_eq!(colors.page_bg(), "#18181e");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportColors {
    tokens: BTreeMap<String, String>,
    page_bg: Option<String>,
    card_bg: Option<String>,
    info_bg: Option<String>,
}

impl Default for ExportColors {
    fn default() -> Self {
        ExportColors {
            tokens: DARK.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
            // dark.json's `export` section.
            page_bg: Some("#18181e".into()),
            card_bg: Some("#1e1e24".into()),
            info_bg: Some("#3c3728".into()),
        }
    }
}

impl ExportColors {
    /// Sets one theme token (pi's name, e.g. `toolSuccessBg`) to a CSS color. Values that could
    /// break out of the style sheet (`;`, `{`, `}`, `<`, quotes) are ignored.
    pub fn with_token(mut self, name: impl Into<String>, css_color: impl Into<String>) -> Self {
        let name = name.into();
        let css_color = css_color.into();
        if is_safe_name(&name) && is_safe_value(&css_color) {
            self.tokens.insert(name, css_color);
        }
        self
    }

    /// Sets the page, card and info backgrounds (a theme's `export` section); `None` derives each
    /// from `userMessageBg` as pi does.
    pub fn with_export_backgrounds(
        mut self,
        page_bg: Option<String>,
        card_bg: Option<String>,
        info_bg: Option<String>,
    ) -> Self {
        let safe = |v: Option<String>| v.filter(|v| is_safe_value(v));
        self.page_bg = safe(page_bg);
        self.card_bg = safe(card_bg);
        self.info_bg = safe(info_bg);
        self
    }

    /// A token's CSS color.
    pub fn token(&self, name: &str) -> Option<&str> {
        self.tokens.get(name).map(String::as_str)
    }

    /// The page background.
    pub fn page_bg(&self) -> String {
        self.page_bg.clone().unwrap_or_else(|| self.derived().0)
    }

    /// The background of the header and cards.
    pub fn card_bg(&self) -> String {
        self.card_bg.clone().unwrap_or_else(|| self.derived().1)
    }

    /// The background of the info panels.
    pub fn info_bg(&self) -> String {
        self.info_bg.clone().unwrap_or_else(|| self.derived().2)
    }

    /// The CSS custom properties: `--<token>: <color>;` for each token, then the three
    /// backgrounds as `--exportPageBg`, `--exportCardBg`, `--exportInfoBg`.
    pub(crate) fn css_variables(&self) -> String {
        let mut css = String::new();
        for (name, value) in &self.tokens {
            css.push_str(&format!("  --{name}: {value};\n"));
        }
        css.push_str(&format!("  --exportPageBg: {};\n", self.page_bg()));
        css.push_str(&format!("  --exportCardBg: {};\n", self.card_bg()));
        css.push_str(&format!("  --exportInfoBg: {};\n", self.info_bg()));
        css
    }

    /// pi's backgrounds derived from `userMessageBg`: lighter or darker variants of it.
    fn derived(&self) -> (String, String, String) {
        let base = self.token("userMessageBg").unwrap_or("#343541");
        let Some((r, g, b)) = parse_color(base) else {
            return (
                "rgb(24, 24, 30)".into(),
                "rgb(30, 30, 36)".into(),
                "rgb(60, 55, 40)".into(),
            );
        };
        let scale = |factor: f64| {
            let c = |v: u8| (f64::from(v) * factor).round().clamp(0.0, 255.0) as u8;
            format!("rgb({}, {}, {})", c(r), c(g), c(b))
        };
        if luminance(r, g, b) > 0.5 {
            let info = format!(
                "rgb({}, {}, {})",
                r.saturating_add(10),
                g.saturating_add(5),
                b.saturating_sub(20)
            );
            (scale(0.96), base.to_owned(), info)
        } else {
            let info = format!("rgb({}, {}, {})", r.saturating_add(20), g.saturating_add(15), b);
            (scale(0.7), scale(0.85), info)
        }
    }
}

fn is_safe_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn is_safe_value(value: &str) -> bool {
    !value.trim().is_empty()
        && !value
            .chars()
            .any(|c| matches!(c, ';' | '{' | '}' | '<' | '>' | '"' | '\'' | '\\'))
}

/// `#rrggbb` or `rgb(r, g, b)`.
fn parse_color(color: &str) -> Option<(u8, u8, u8)> {
    if let Some(hex) = color.strip_prefix('#').filter(|h| h.len() == 6) {
        let channel = |i: usize| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok();
        return Some((channel(0)?, channel(2)?, channel(4)?));
    }
    let inner = color
        .trim()
        .strip_prefix("rgb")?
        .trim()
        .strip_prefix('(')?
        .strip_suffix(')')?;
    let mut parts = inner.split(',').map(|p| p.trim().parse::<u8>().ok());
    let rgb = (parts.next()??, parts.next()??, parts.next()??);
    parts.next().is_none().then_some(rgb)
}

fn luminance(r: u8, g: u8, b: u8) -> f64 {
    let linear = |c: u8| {
        let s = f64::from(c) / 255.0;
        if s <= 0.03928 {
            s / 12.92
        } else {
            ((s + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dark_backgrounds_are_the_themes_export_section() {
        let colors = ExportColors::default();
        assert_eq!(
            (colors.page_bg(), colors.card_bg(), colors.info_bg()),
            ("#18181e".to_owned(), "#1e1e24".to_owned(), "#3c3728".to_owned())
        );
    }

    #[test]
    fn backgrounds_are_derived_from_the_user_message_background_as_pi_does() {
        let dark = ExportColors::default()
            .with_export_backgrounds(None, None, None)
            .with_token("userMessageBg", "#343541");
        assert_eq!(dark.page_bg(), "rgb(36, 37, 46)");
        assert_eq!(dark.card_bg(), "rgb(44, 45, 55)");
        assert_eq!(dark.info_bg(), "rgb(72, 68, 65)");
        let light = dark.with_token("userMessageBg", "#e8e8e8");
        assert_eq!(light.page_bg(), "rgb(223, 223, 223)");
        assert_eq!(light.card_bg(), "#e8e8e8");
        assert_eq!(light.info_bg(), "rgb(242, 237, 212)");
    }

    #[test]
    fn values_that_would_escape_the_style_sheet_are_ignored() {
        let colors = ExportColors::default()
            .with_token("accent", "red;} body{display:none")
            .with_token("bad name", "#fff")
            .with_token("x</style>", "#fff");
        assert_eq!(colors.token("accent"), Some("#8abeb7"));
        assert!(!colors.css_variables().contains("bad name"));
        assert!(!colors.css_variables().contains("</style>"));
    }

    #[test]
    fn parses_hex_and_rgb() {
        assert_eq!(parse_color("#0a0B0c"), Some((10, 11, 12)));
        assert_eq!(parse_color("rgb( 1, 2 ,3)"), Some((1, 2, 3)));
        assert_eq!(parse_color("rgb(1,2)"), None);
        assert_eq!(parse_color("blue"), None);
    }
}
