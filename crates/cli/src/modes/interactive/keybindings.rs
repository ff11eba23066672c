//! The application's key bindings (pi's `app.*` keybinding ids) with pi's defaults, and
//! `~/.pi/agent/keybindings.json` remapping them: each id takes one key or an array of keys in
//! pi's syntax (`ctrl+shift+p`, `alt+enter`, `shift+tab`, `f5`, `escape`).

use std::collections::BTreeMap;
use std::path::Path;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// An application action a key can be bound to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AppAction {
    /// `app.interrupt`: cancel / abort (and, twice on an empty editor, `doubleEscapeAction`).
    Interrupt,
    /// `app.clear`: clear the editor; twice, exit.
    Clear,
    /// `app.exit`: exit when the editor is empty.
    Exit,
    /// `app.suspend`: suspend to the background.
    Suspend,
    /// `app.editor.external`: edit the message in `$VISUAL` / `$EDITOR`.
    ExternalEditor,
    /// `app.clipboard.pasteImage`.
    PasteImage,
    /// `app.model.select`: the model picker.
    ModelSelect,
    /// `app.model.cycleForward`.
    ModelCycleForward,
    /// `app.model.cycleBackward`.
    ModelCycleBackward,
    /// `app.thinking.cycle`.
    ThinkingCycle,
    /// `app.thinking.toggle`: collapse or expand thinking blocks.
    ThinkingToggle,
    /// `app.tools.expand`.
    ToolsExpand,
    /// `app.message.followUp`.
    FollowUp,
    /// `app.message.dequeue`.
    Dequeue,
    /// `app.session.new`.
    SessionNew,
    /// `app.session.tree`.
    SessionTree,
    /// `app.session.fork`.
    SessionFork,
    /// `app.session.resume`.
    SessionResume,
}

/// Every action with its id and pi's default keys, in pi's documented order.
const ACTIONS: &[(AppAction, &str, &[&str])] = &[
    (AppAction::Interrupt, "app.interrupt", &["escape"]),
    (AppAction::Clear, "app.clear", &["ctrl+c"]),
    (AppAction::Exit, "app.exit", &["ctrl+d"]),
    (AppAction::Suspend, "app.suspend", &["ctrl+z"]),
    (AppAction::ExternalEditor, "app.editor.external", &["ctrl+g"]),
    (AppAction::PasteImage, "app.clipboard.pasteImage", &["ctrl+v"]),
    (AppAction::SessionNew, "app.session.new", &[]),
    (AppAction::SessionTree, "app.session.tree", &[]),
    (AppAction::SessionFork, "app.session.fork", &[]),
    (AppAction::SessionResume, "app.session.resume", &[]),
    (AppAction::ModelSelect, "app.model.select", &["ctrl+l"]),
    (AppAction::ModelCycleForward, "app.model.cycleForward", &["ctrl+p"]),
    (
        AppAction::ModelCycleBackward,
        "app.model.cycleBackward",
        &["shift+ctrl+p"],
    ),
    (AppAction::ThinkingCycle, "app.thinking.cycle", &["shift+tab"]),
    (AppAction::ThinkingToggle, "app.thinking.toggle", &["ctrl+t"]),
    (AppAction::ToolsExpand, "app.tools.expand", &["ctrl+o"]),
    (AppAction::FollowUp, "app.message.followUp", &["alt+enter"]),
    (AppAction::Dequeue, "app.message.dequeue", &["alt+up"]),
];

/// pi's older ids, migrated to the namespaced ones (its `keybindings.json` migration).
const LEGACY_IDS: &[(&str, &str)] = &[
    ("interrupt", "app.interrupt"),
    ("clear", "app.clear"),
    ("exit", "app.exit"),
    ("suspend", "app.suspend"),
    ("externalEditor", "app.editor.external"),
    ("pasteImage", "app.clipboard.pasteImage"),
    ("selectModel", "app.model.select"),
    ("cycleModelForward", "app.model.cycleForward"),
    ("cycleModelBackward", "app.model.cycleBackward"),
    ("cycleThinkingLevel", "app.thinking.cycle"),
    ("toggleThinking", "app.thinking.toggle"),
    ("expandTools", "app.tools.expand"),
    ("followUp", "app.message.followUp"),
    ("dequeue", "app.message.dequeue"),
];

impl AppAction {
    /// pi's keybinding id (`app.model.cycleForward`).
    pub fn id(self) -> &'static str {
        ACTIONS.iter().find(|(a, _, _)| *a == self).map_or("", |(_, id, _)| id)
    }
}

/// A key in pi's syntax: modifiers and one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeySpec {
    code: KeyCode,
    modifiers: KeyModifiers,
}

/// A key that pi's syntax does not describe.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid key \"{0}\"")]
pub struct InvalidKey(pub String);

impl KeySpec {
    /// Parses `ctrl+shift+p`, `alt+enter`, `shift+tab`, `f5`, `pageUp`, `ctrl+-`, `+`.
    ///
    /// ```
    /// use pi_cli::modes::interactive::KeySpec;
    /// assert!(KeySpec::parse("shift+ctrl+p").is_ok());
    /// assert!(KeySpec::parse("ctrl+shift+alt+x").is_ok());
    /// assert!(KeySpec::parse("ctrl+nothing").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<KeySpec, InvalidKey> {
        let invalid = || InvalidKey(text.to_owned());
        let lower = text.trim();
        // `+` itself is a key: the last `+` of `ctrl++` is it.
        let (mods_text, key) = if lower == "+" {
            ("", "+")
        } else if let Some(mods) = lower.strip_suffix("++") {
            (mods, "+")
        } else {
            match lower.rsplit_once('+') {
                Some((mods, key)) => (mods, key),
                None => ("", lower),
            }
        };
        let mut modifiers = KeyModifiers::NONE;
        for part in mods_text.split('+').filter(|p| !p.is_empty()) {
            modifiers |= match part.to_ascii_lowercase().as_str() {
                "ctrl" => KeyModifiers::CONTROL,
                "shift" => KeyModifiers::SHIFT,
                "alt" => KeyModifiers::ALT,
                _ => return Err(invalid()),
            };
        }
        let code = match key.to_ascii_lowercase().as_str() {
            "escape" | "esc" => KeyCode::Esc,
            "enter" | "return" => KeyCode::Enter,
            "tab" => KeyCode::Tab,
            "space" => KeyCode::Char(' '),
            "backspace" => KeyCode::Backspace,
            "delete" => KeyCode::Delete,
            "insert" => KeyCode::Insert,
            "clear" => KeyCode::KeypadBegin,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "pageup" => KeyCode::PageUp,
            "pagedown" => KeyCode::PageDown,
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            name if name.len() > 1 && name.starts_with('f') => match name[1..].parse::<u8>() {
                Ok(n @ 1..=12) => KeyCode::F(n),
                _ => return Err(invalid()),
            },
            name => {
                let mut chars = name.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) if c.is_ascii_alphanumeric() || "`-=[]\\;',./!@#$%^&*()_+|~{}:<>?".contains(c) => {
                        KeyCode::Char(c)
                    }
                    _ => return Err(invalid()),
                }
            }
        };
        Ok(KeySpec { code, modifiers })
    }

    /// Whether `key` is this key (Shift+Tab arrives as BackTab; a shifted letter may arrive in
    /// upper case; a symbol's own Shift is not part of it).
    pub fn matches(&self, key: &KeyEvent) -> bool {
        let mut modifiers = key.modifiers & (KeyModifiers::CONTROL | KeyModifiers::SHIFT | KeyModifiers::ALT);
        let code = match key.code {
            KeyCode::BackTab => {
                modifiers |= KeyModifiers::SHIFT;
                KeyCode::Tab
            }
            KeyCode::Char(c) if c.is_ascii_uppercase() => {
                modifiers |= KeyModifiers::SHIFT;
                KeyCode::Char(c.to_ascii_lowercase())
            }
            KeyCode::Char(c) if !c.is_ascii_alphanumeric() && c != ' ' => {
                if !self.modifiers.contains(KeyModifiers::SHIFT) {
                    modifiers -= KeyModifiers::SHIFT;
                }
                KeyCode::Char(c)
            }
            code => code,
        };
        code == self.code && modifiers == self.modifiers
    }
}

/// The application's bindings: pi's defaults with the user's `keybindings.json` over them.
#[derive(Debug, Clone)]
pub struct Keybindings {
    keys: BTreeMap<AppAction, Vec<KeySpec>>,
}

impl Default for Keybindings {
    fn default() -> Self {
        let keys = ACTIONS
            .iter()
            .map(|(action, _, defaults)| {
                let specs = defaults.iter().filter_map(|k| KeySpec::parse(k).ok()).collect();
                (*action, specs)
            })
            .collect();
        Keybindings { keys }
    }
}

impl Keybindings {
    /// pi's defaults with `json` (a `keybindings.json`'s text) over them; each problem (not JSON,
    /// an invalid key) is a warning, and what could be read still applies. Ids of the editor
    /// (`tui.*`) and unknown ids are left alone.
    ///
    /// ```
    /// use pi_cli::modes::interactive::{AppAction, Keybindings};
    /// let (bindings, warnings) = Keybindings::from_json(r#"{"app.model.select": ["ctrl+k", "f2"], "app.tools.expand": "alt+o"}"#);
    /// assert!(warnings.is_empty());
    /// assert_eq!(bindings.keys_of(AppAction::ModelSelect), ["ctrl+k", "f2"]);
    /// ```
    pub fn from_json(json: &str) -> (Keybindings, Vec<String>) {
        let mut bindings = Keybindings::default();
        let mut warnings = Vec::new();
        let value: serde_json::Value = match serde_json::from_str(json) {
            Ok(value) => value,
            Err(error) => return (bindings, vec![format!("Invalid keybindings.json: {error}")]),
        };
        let Some(object) = value.as_object() else {
            return (bindings, vec!["Invalid keybindings.json: not an object".to_owned()]);
        };
        for (id, keys) in object {
            let id = LEGACY_IDS
                .iter()
                .find(|(old, _)| old == id)
                .map_or(id.as_str(), |(_, new)| new);
            let Some((action, _, _)) = ACTIONS.iter().find(|(_, known, _)| *known == id) else {
                continue;
            };
            let texts: Vec<&str> = match keys {
                serde_json::Value::String(key) => vec![key.as_str()],
                serde_json::Value::Array(keys) => keys.iter().filter_map(|k| k.as_str()).collect(),
                _ => {
                    warnings.push(format!("keybindings.json: {id} must be a key or an array of keys"));
                    continue;
                }
            };
            let mut specs = Vec::new();
            for text in texts {
                match KeySpec::parse(text) {
                    Ok(spec) => specs.push(spec),
                    Err(error) => warnings.push(format!("keybindings.json: {id}: {error}")),
                }
            }
            bindings.keys.insert(*action, specs);
        }
        (bindings, warnings)
    }

    /// [`Keybindings::from_json`] of `<agent dir>/keybindings.json`; the defaults when there is
    /// no such file.
    pub fn load(agent_dir: &Path) -> (Keybindings, Vec<String>) {
        match std::fs::read_to_string(agent_dir.join("keybindings.json")) {
            Ok(text) => Keybindings::from_json(&text),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => (Keybindings::default(), Vec::new()),
            Err(error) => (
                Keybindings::default(),
                vec![format!("Cannot read keybindings.json: {error}")],
            ),
        }
    }

    /// Whether `key` is bound to `action`.
    pub fn matches(&self, action: AppAction, key: &KeyEvent) -> bool {
        self.keys
            .get(&action)
            .is_some_and(|specs| specs.iter().any(|s| s.matches(key)))
    }

    /// The keys of `action` in pi's syntax (for `/hotkeys`): `ctrl+p`, `shift+ctrl+p`.
    pub fn keys_of(&self, action: AppAction) -> Vec<String> {
        self.keys
            .get(&action)
            .map(|specs| specs.iter().map(display).collect())
            .unwrap_or_default()
    }
}

/// A key in pi's syntax.
fn display(spec: &KeySpec) -> String {
    let mut text = String::new();
    if spec.modifiers.contains(KeyModifiers::SHIFT) && spec.modifiers.contains(KeyModifiers::CONTROL) {
        text.push_str("shift+ctrl+");
    } else {
        if spec.modifiers.contains(KeyModifiers::CONTROL) {
            text.push_str("ctrl+");
        }
        if spec.modifiers.contains(KeyModifiers::SHIFT) {
            text.push_str("shift+");
        }
    }
    if spec.modifiers.contains(KeyModifiers::ALT) {
        text.push_str("alt+");
    }
    let key = match spec.code {
        KeyCode::Esc => "escape".to_owned(),
        KeyCode::Enter => "enter".to_owned(),
        KeyCode::Tab => "tab".to_owned(),
        KeyCode::Char(' ') => "space".to_owned(),
        KeyCode::Char(c) => c.to_string(),
        KeyCode::Backspace => "backspace".to_owned(),
        KeyCode::Delete => "delete".to_owned(),
        KeyCode::Insert => "insert".to_owned(),
        KeyCode::KeypadBegin => "clear".to_owned(),
        KeyCode::Home => "home".to_owned(),
        KeyCode::End => "end".to_owned(),
        KeyCode::PageUp => "pageUp".to_owned(),
        KeyCode::PageDown => "pageDown".to_owned(),
        KeyCode::Up => "up".to_owned(),
        KeyCode::Down => "down".to_owned(),
        KeyCode::Left => "left".to_owned(),
        KeyCode::Right => "right".to_owned(),
        KeyCode::F(n) => format!("f{n}"),
        other => format!("{other:?}").to_lowercase(),
    };
    text.push_str(&key);
    text
}

/// What two presses of Esc on an empty editor open (pi's `doubleEscapeAction` setting).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DoubleEscape {
    /// `/tree` (pi's default).
    #[default]
    Tree,
    /// `/fork`.
    Fork,
    /// Nothing.
    None,
}

impl DoubleEscape {
    /// The setting's value: `tree`, `fork`, `none`; anything else is the default.
    pub fn from_setting(value: Option<&str>) -> Self {
        match value {
            Some("fork") => DoubleEscape::Fork,
            Some("none") => DoubleEscape::None,
            _ => DoubleEscape::Tree,
        }
    }
}

/// The interactive mode's settings about keys: the bindings (with the problems reading
/// `keybindings.json`), `doubleEscapeAction` and `hideThinkingBlock`.
#[derive(Debug, Clone, Default)]
pub struct KeySettings {
    /// The application's keys.
    pub keybindings: Keybindings,
    /// What could not be read in `keybindings.json`.
    pub warnings: Vec<String>,
    /// `doubleEscapeAction`: `tree` (default), `fork` or `none`.
    pub double_escape: DoubleEscape,
    /// `hideThinkingBlock` (default false).
    pub hide_thinking: bool,
}

impl KeySettings {
    /// Reads `<agent dir>/keybindings.json` and the two settings from the merged settings.
    pub fn load(agent_dir: &Path, settings: &serde_json::Map<String, serde_json::Value>) -> Self {
        let (keybindings, warnings) = Keybindings::load(agent_dir);
        KeySettings {
            keybindings,
            warnings,
            double_escape: DoubleEscape::from_setting(settings.get("doubleEscapeAction").and_then(|v| v.as_str())),
            hide_thinking: settings
                .get("hideThinkingBlock")
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    #[test]
    fn the_defaults_are_pis() {
        let bindings = Keybindings::default();
        assert!(bindings.matches(
            AppAction::ModelCycleForward,
            &event(KeyCode::Char('p'), KeyModifiers::CONTROL)
        ));
        let shift_ctrl = KeyModifiers::CONTROL | KeyModifiers::SHIFT;
        assert!(bindings.matches(
            AppAction::ModelCycleBackward,
            &event(KeyCode::Char('P'), KeyModifiers::CONTROL)
        ));
        assert!(bindings.matches(AppAction::ModelCycleBackward, &event(KeyCode::Char('p'), shift_ctrl)));
        assert!(!bindings.matches(AppAction::ModelCycleForward, &event(KeyCode::Char('p'), shift_ctrl)));
        assert!(bindings.matches(AppAction::ThinkingCycle, &event(KeyCode::BackTab, KeyModifiers::SHIFT)));
        assert!(bindings.matches(AppAction::FollowUp, &event(KeyCode::Enter, KeyModifiers::ALT)));
        assert!(bindings.matches(AppAction::Interrupt, &event(KeyCode::Esc, KeyModifiers::NONE)));
        assert!(bindings.keys_of(AppAction::SessionTree).is_empty());
        assert_eq!(bindings.keys_of(AppAction::ModelCycleBackward), ["shift+ctrl+p"]);
    }

    #[test]
    fn the_user_file_replaces_an_actions_keys_and_warns_about_bad_ones() {
        let (bindings, warnings) = Keybindings::from_json(
            r#"{"app.model.cycleForward": ["alt+n", "ctrl+hyper"], "app.session.tree": "f5", "tui.editor.cursorUp": "ctrl+k", "expandTools": "alt+e"}"#,
        );
        assert_eq!(
            warnings,
            ["keybindings.json: app.model.cycleForward: Invalid key \"ctrl+hyper\""]
        );
        assert!(bindings.matches(
            AppAction::ModelCycleForward,
            &event(KeyCode::Char('n'), KeyModifiers::ALT)
        ));
        assert!(!bindings.matches(
            AppAction::ModelCycleForward,
            &event(KeyCode::Char('p'), KeyModifiers::CONTROL)
        ));
        assert!(bindings.matches(AppAction::SessionTree, &event(KeyCode::F(5), KeyModifiers::NONE)));
        // pi's pre-namespaced id, migrated.
        assert!(bindings.matches(AppAction::ToolsExpand, &event(KeyCode::Char('e'), KeyModifiers::ALT)));
        let (_, warnings) = Keybindings::from_json("{not json");
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].starts_with("Invalid keybindings.json"), "{warnings:?}");
    }

    #[test]
    fn key_syntax() {
        for good in [
            "ctrl+-",
            "+",
            "ctrl++",
            "alt+ctrl+x",
            "pageUp",
            "f12",
            "esc",
            "return",
            "ctrl+1",
            "?",
        ] {
            assert!(KeySpec::parse(good).is_ok(), "{good}");
        }
        for bad in ["", "f13", "hyper+x", "ctrl+", "ctrl+ab"] {
            assert!(KeySpec::parse(bad).is_err(), "{bad}");
        }
        let bang = KeySpec::parse("!").unwrap();
        assert!(bang.matches(&event(KeyCode::Char('!'), KeyModifiers::SHIFT)));
    }
}
