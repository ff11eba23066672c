use super::*;

/// A theme file with every token set to `#000000`, then `edit` applied to its JSON.
fn theme_json(edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut colors = serde_json::Map::new();
    for slot in Slot::ALL {
        colors.insert(slot.name().to_owned(), "#000000".into());
    }
    let mut value = serde_json::json!({ "name": "t", "colors": colors });
    edit(&mut value);
    value.to_string()
}

fn error(json: &str) -> String {
    match Theme::from_json("t.json", json) {
        Ok(_) => panic!("accepted: {json}"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn slot_lists_follow_the_declaration_order() {
    for (i, slot) in Slot::ALL.into_iter().enumerate() {
        assert_eq!(slot as usize, i);
        assert_eq!(Slot::from_name(slot.name()), Some(slot));
    }
    assert_eq!(Slot::ALL.iter().filter(|s| s.is_background()).count(), 6);
    let mut theme = Theme::plain();
    for (state, color) in [
        (BlockState::Pending, Color::Indexed(1)),
        (BlockState::Success, Color::Indexed(2)),
        (BlockState::Error, Color::Indexed(3)),
    ] {
        theme.set_block_bg(state, color);
        assert_eq!(theme.block_bg(state), color);
    }
    theme.set(Slot::Dim, Color::Indexed(9));
    assert_eq!(theme.color(Slot::Dim), Color::Indexed(9));
    assert_ne!(theme.color(Slot::Muted), Color::Indexed(9));
}

#[test]
fn the_embedded_themes_are_valid_and_complete() {
    for (label, text) in [("dark", DARK_JSON), ("light", LIGHT_JSON)] {
        let parsed = json::parse(label, text).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(parsed.name, label);
        assert_eq!(Theme::built_in(label).map(|t| t.colors), Some(parsed.colors));
    }
    let dark = Theme::dark();
    assert_eq!(dark.color(Slot::Accent), Color::Rgb(0x8a, 0xbe, 0xb7));
    assert_eq!(dark.color(Slot::Text), Color::Reset);
    assert_eq!(dark.color(Slot::SyntaxKeyword), Color::Rgb(0x56, 0x9c, 0xd6));
    assert_eq!(Theme::light().color(Slot::SyntaxKeyword), Color::Rgb(0, 0, 0xff));
    assert_eq!(Theme::built_in("nope"), None);
}

#[test]
fn colours_are_hex_palette_indices_variables_or_the_default() {
    let json = theme_json(|v| {
        v["vars"] = serde_json::json!({ "primary": "#00aaff", "alias": "primary", "gray": 242 });
        v["colors"]["accent"] = "alias".into();
        v["colors"]["muted"] = "gray".into();
        v["colors"]["dim"] = 240.into();
        v["colors"]["text"] = "".into();
        v["colors"]["error"] = "#FF0000".into();
    });
    let theme = Theme::from_json("t.json", &json).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(theme.name(), "t");
    assert_eq!(theme.color(Slot::Accent), Color::Rgb(0, 0xaa, 0xff));
    assert_eq!(theme.color(Slot::Muted), Color::Indexed(242));
    assert_eq!(theme.color(Slot::Dim), Color::Indexed(240));
    assert_eq!(theme.color(Slot::Text), Color::Reset);
    assert_eq!(theme.color(Slot::Error), Color::Rgb(0xff, 0, 0));
    assert_eq!(theme.style(Slot::ToolErrorBg).bg, Some(Color::Rgb(0, 0, 0)));
    assert_eq!(theme.style(Slot::ToolErrorBg).fg, None);
    let palette = theme.clone().for_mode(ColorMode::Color256);
    assert_eq!(palette.color(Slot::Accent), Color::Indexed(39));
    assert_eq!(palette.color(Slot::Muted), Color::Indexed(242));
}

/// The messages pi 0.73.1 gives for the same files (recorded from its `loadThemeFromPath`).
#[test]
fn bad_themes_are_reported_in_pis_words() {
    let json = theme_json(|v| {
        let colors = v["colors"].as_object_mut().map(|c| {
            c.remove("mdHr");
            c.remove("bashMode");
        });
        assert!(colors.is_some());
        v["colors"]["accent"] = true.into();
        v["colors"]["border"] = 300.into();
        v["name"] = 5.into();
    });
    assert_eq!(
        error(&json),
        "Invalid theme \"t.json\":\n\nMissing required color tokens:\n  - bashMode\n  - mdHr\n\n\
         Please add these colors to your theme's \"colors\" object.\n\
         See the built-in themes (dark.json, light.json) for reference values.\n\nOther errors:\n\
         \x20 - /name: must be string\n  - /colors/accent: must be string\n  - /colors/accent: must be integer\n\
         \x20 - /colors/accent: must match a schema in anyOf\n  - /colors/border: must be string\n\
         \x20 - /colors/border: must be <= 255\n  - /colors/border: must match a schema in anyOf"
    );
    assert_eq!(
        error(r#"{"vars": {"a": -1}}"#),
        "Invalid theme \"t.json\":\n\n\nOther errors:\n  - /: must have required properties name, colors\n\
         \x20 - /vars/a: must be string\n  - /vars/a: must be >= 0\n  - /vars/a: must match a schema in anyOf"
    );
    assert_eq!(
        error("[]"),
        "Invalid theme \"t.json\":\n\n\nOther errors:\n  - /: must be object"
    );
    assert_eq!(
        error(&theme_json(|v| v["colors"]["accent"] = "nope".into())),
        "Variable reference not found: nope"
    );
    assert_eq!(
        error(&theme_json(|v| {
            v["vars"] = serde_json::json!({ "a": "b", "b": "a" });
            v["colors"]["accent"] = "a".into();
        })),
        "Circular variable reference detected: a"
    );
    assert_eq!(
        error(&theme_json(|v| v["colors"]["accent"] = "#12345".into())),
        "Invalid hex color: #12345"
    );
    assert!(error(r#"{"name": "x","#).starts_with("Failed to parse theme t.json: "));
}

#[test]
fn a_missing_file_is_an_error_naming_it() {
    let missing = Path::new("/nonexistent/theme.json");
    let message = Theme::load(missing).map(|_| ()).unwrap_err().to_string();
    assert!(
        message.starts_with("Failed to read theme /nonexistent/theme.json: "),
        "{message}"
    );
}

#[test]
fn slot_names_prefer_the_asked_kind() {
    let mut theme = Theme::indexed();
    theme.set(Slot::Accent, Color::Indexed(99));
    theme.set(Slot::SelectedBg, Color::Indexed(99));
    assert_eq!(theme.slot_name(Color::Indexed(99), false), Some("accent"));
    assert_eq!(theme.slot_name(Color::Indexed(99), true), Some("selectedBg"));
    assert_eq!(theme.slot_name(Color::Reset, false), None);
}
