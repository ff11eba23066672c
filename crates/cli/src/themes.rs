//! pi's themes for the interactive mode (`docs/themes.md`): the theme files found (discovered by
//! [`pi_coding_agent::resources::theme_files`], parsed by pi-tui), deduplicated by name, and the
//! theme the `theme` setting names, with pi's fallback to `dark`.

use std::path::{Path, PathBuf};

use pi_coding_agent::config::{AgentPaths, Settings};
use pi_coding_agent::resources::{Diagnostic, ResourceOptions, theme_files};
use pi_tui::Theme;

/// The custom themes loaded, in precedence order, and the problems found.
#[derive(Debug, Clone, Default)]
pub struct Themes {
    /// The loaded themes; of two with one name, the first found.
    pub loaded: Vec<Theme>,
    /// Paths that are missing or not JSON, files that failed to load (pi's message), name
    /// collisions.
    pub diagnostics: Vec<Diagnostic>,
}

/// The theme to start with.
#[derive(Debug, Clone)]
pub struct ActiveTheme {
    /// Its colours.
    pub theme: Theme,
    /// The file to watch for changes (a custom theme's; `None` for the built-in ones).
    pub watch: Option<PathBuf>,
    /// Why the theme asked for could not be used (pi's words, the fallback included).
    pub error: Option<String>,
}

impl ActiveTheme {
    /// pi's `dark`, nothing watched.
    pub fn dark() -> Self {
        ActiveTheme {
            theme: Theme::dark(),
            watch: None,
            error: None,
        }
    }
}

impl Themes {
    /// Loads `files` in order (blocking); `diagnostics` are the discovery's.
    pub fn load(files: &[PathBuf], diagnostics: Vec<Diagnostic>) -> Self {
        let mut themes = Themes {
            loaded: Vec::new(),
            diagnostics,
        };
        let mut collisions = Vec::new();
        for file in files {
            match Theme::load(file) {
                Err(error) => themes.diagnostics.push(Diagnostic::warning(error.to_string(), file)),
                Ok(theme) => {
                    if let Some(first) = themes.loaded.iter().find(|t| t.name() == theme.name()) {
                        collisions.push(Diagnostic::collision(
                            "theme",
                            theme.name(),
                            format!("name \"{}\" collision", theme.name()),
                            first.source().unwrap_or(Path::new("<builtin>")),
                            file,
                        ));
                    } else {
                        themes.loaded.push(theme);
                    }
                }
            }
        }
        themes.diagnostics.extend(collisions);
        themes
    }

    /// The theme called `name`, as pi looks for it: a loaded theme of that name, a built-in one,
    /// then `<agent_dir>/themes/<name>.json` (blocking). Without a name, pi's default (`dark`, or
    /// `light` when `COLORFGBG` says the background is light). A theme that cannot be found or
    /// loaded falls back to `dark` with pi's message.
    pub fn choose(&self, name: Option<&str>, agent_dir: &Path, colorfgbg: Option<&str>) -> ActiveTheme {
        let name = name.unwrap_or_else(|| default_theme(colorfgbg));
        match self.find(name, agent_dir) {
            Ok(theme) => {
                let watch = if Theme::BUILT_IN.contains(&name) {
                    None
                } else {
                    theme.source().map(Path::to_path_buf)
                };
                ActiveTheme {
                    theme,
                    watch,
                    error: None,
                }
            }
            Err(error) => ActiveTheme {
                theme: Theme::dark(),
                watch: None,
                error: Some(format!(
                    "Failed to load theme \"{name}\": {error}\nFell back to dark theme."
                )),
            },
        }
    }

    fn find(&self, name: &str, agent_dir: &Path) -> Result<Theme, String> {
        if let Some(theme) = self.loaded.iter().find(|t| t.name() == name) {
            return Ok(theme.clone());
        }
        if let Some(theme) = Theme::built_in(name) {
            return Ok(theme);
        }
        let path = agent_dir.join("themes").join(format!("{name}.json"));
        if !path.is_file() {
            return Err(format!("Theme not found: {name}"));
        }
        Theme::load(&path).map_err(|error| error.to_string())
    }
}

/// The theme files found where `resources` says, loaded, and the theme the `theme` setting
/// names (pi's default without one), off the async runtime.
pub(crate) async fn load(
    mut resources: ResourceOptions,
    settings: &Settings,
    paths: &AgentPaths,
) -> (Themes, ActiveTheme) {
    let name = settings
        .raw
        .get("theme")
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned);
    let agent_dir = paths.agent_dir.clone();
    let colorfgbg = std::env::var("COLORFGBG").ok();
    let load = move || {
        // A settings file that cannot be read is reported by the session's own resource loading.
        let _ = resources.read_settings_files();
        let (files, diagnostics) = theme_files(&resources);
        let loaded = Themes::load(&files, diagnostics);
        let active = loaded.choose(name.as_deref(), &agent_dir, colorfgbg.as_deref());
        (loaded, active)
    };
    match tokio::task::spawn_blocking(load).await {
        Ok(found) => found,
        Err(_) => (Themes::default(), ActiveTheme::dark()),
    }
}

/// pi's default theme: `light` when `COLORFGBG`'s background colour is 8 or more, else `dark`.
pub fn default_theme(colorfgbg: Option<&str>) -> &'static str {
    let background = colorfgbg
        .and_then(|value| value.split(';').nth(1))
        .and_then(|bg| bg.trim().parse::<i64>().ok());
    match background {
        Some(bg) if bg >= 8 => "light",
        _ => "dark",
    }
}

/// The HTML export's colours from `theme` (pi exports with the active theme): every token as a
/// CSS colour, and the theme's `export` backgrounds (derived from `userMessageBg` when unset).
pub fn export_colors(theme: &Theme) -> pi_coding_agent::export::ExportColors {
    let colors =
        pi_tui::Slot::ALL
            .into_iter()
            .fold(
                pi_coding_agent::export::ExportColors::default(),
                |colors, slot| match pi_tui::css_color(theme.color(slot)) {
                    Some(css) => colors.with_token(slot.name(), css),
                    None => colors,
                },
            );
    let [page, card, info] = theme
        .export_backgrounds()
        .map(|color| color.and_then(pi_tui::css_color));
    colors.with_export_backgrounds(page, card, info)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_export_takes_the_themes_colours_and_backgrounds() {
        let light = export_colors(&Theme::light());
        assert_eq!(light.token("accent"), Some("#5a8080"));
        assert_eq!(light.token("userMessageBg"), Some("#e8e8e8"));
        assert_eq!(light.page_bg(), "#f8f8f8");
        assert_eq!(light.card_bg(), "#ffffff");
        assert_eq!(light.info_bg(), "#fffae6");
        // A theme without an `export` section: pi derives the backgrounds from userMessageBg.
        let dir = tempfile::tempdir().unwrap();
        let file = theme_file(dir.path(), "mine.json", "mine", "#123456");
        let mine = export_colors(&Theme::load(&file).unwrap());
        assert_eq!(mine.token("accent"), Some("#123456"));
        let derived = pi_coding_agent::export::ExportColors::default()
            .with_token("userMessageBg", "#000000")
            .with_export_backgrounds(None, None, None);
        assert_eq!(mine.page_bg(), derived.page_bg());
        // Palette colours (a 256-colour terminal's theme) become their xterm RGB.
        let indexed = export_colors(&Theme::dark().for_mode(pi_tui::ColorMode::Color256));
        assert_eq!(indexed.token("muted"), Some("#808080"));
    }

    fn theme_file(dir: &Path, file: &str, name: &str, accent: &str) -> PathBuf {
        let mut colors = serde_json::Map::new();
        for slot in pi_tui::Slot::ALL {
            colors.insert(slot.name().to_owned(), "#000000".into());
        }
        colors.insert("accent".into(), accent.into());
        let path = dir.join(file);
        std::fs::write(&path, serde_json::json!({ "name": name, "colors": colors }).to_string()).unwrap();
        path
    }

    #[test]
    fn the_first_theme_of_a_name_wins_and_bad_files_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let first = theme_file(dir.path(), "a.json", "mine", "#111111");
        let second = theme_file(dir.path(), "b.json", "mine", "#222222");
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, "{").unwrap();
        let themes = Themes::load(&[first.clone(), bad.clone(), second.clone()], Vec::new());
        assert_eq!(themes.loaded.len(), 1);
        assert_eq!(themes.loaded[0].source(), Some(first.as_path()));
        assert_eq!(themes.diagnostics.len(), 2);
        assert_eq!(themes.diagnostics[0].path.as_deref(), Some(bad.as_path()));
        assert!(
            themes.diagnostics[0]
                .message
                .starts_with(&format!("Failed to parse theme {}: ", bad.display()))
        );
        assert_eq!(themes.diagnostics[1].message, "name \"mine\" collision");
        let active = themes.choose(Some("mine"), dir.path(), None);
        assert_eq!(
            active.theme.color(pi_tui::Slot::Accent),
            ratatui::style::Color::Rgb(0x11, 0x11, 0x11)
        );
        assert_eq!(active.watch, Some(first));
        assert!(active.error.is_none());
    }

    #[test]
    fn unknown_names_fall_back_to_dark_with_pis_message() {
        let dir = tempfile::tempdir().unwrap();
        let active = Themes::default().choose(Some("nope"), dir.path(), None);
        assert_eq!(active.theme, Theme::dark());
        assert_eq!(
            active.error.as_deref(),
            Some("Failed to load theme \"nope\": Theme not found: nope\nFell back to dark theme.")
        );
        assert!(active.watch.is_none());
    }

    #[test]
    fn the_agent_themes_directory_is_the_last_place_looked() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("themes")).unwrap();
        let file = theme_file(&dir.path().join("themes"), "late.json", "late", "#333333");
        let active = Themes::default().choose(Some("late"), dir.path(), None);
        assert_eq!(active.watch, Some(file));
        let builtin = Themes::default().choose(Some("light"), dir.path(), None);
        assert_eq!((builtin.theme, builtin.watch), (Theme::light(), None));
    }

    #[test]
    fn the_default_follows_colorfgbg() {
        assert_eq!(default_theme(None), "dark");
        assert_eq!(default_theme(Some("15;0")), "dark");
        assert_eq!(default_theme(Some("0;15")), "light");
        assert_eq!(default_theme(Some("0;default")), "dark");
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            Themes::default().choose(None, dir.path(), Some("0;15")).theme,
            Theme::light()
        );
    }
}
