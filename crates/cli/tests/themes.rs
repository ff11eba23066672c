//! pi's themes: our built-in `dark` and `light` against pi 0.73.1's own theme files and schema,
//! and what `pi` says at start-up about its themes (`[Themes]`, `[Theme conflicts]`, an unknown
//! `theme` setting), in a real terminal under tmux. Hot reload is in `interactive_loop`.

#![allow(clippy::unwrap_used)]

use pi_test_support::pi073;
use pi_tui::{Slot, Theme};

/// Every colour token of pi's theme files resolves to the same colour in our built-in theme of
/// that name, and pi's schema requires exactly our tokens.
#[test]
fn pis_built_in_themes_are_ours() {
    let Some(dir) = pi073::or_skip(
        "pi 0.73.1's theme files",
        pi073::package(&pi073::process_env),
        &pi073::process_env,
    ) else {
        return;
    };
    let theme_dir = dir.join("dist/modes/interactive/theme");
    for name in Theme::BUILT_IN {
        let pis = Theme::load(&theme_dir.join(format!("{name}.json"))).unwrap();
        let ours = Theme::built_in(name).unwrap();
        assert_eq!(pis.name(), name);
        for slot in Slot::ALL {
            assert_eq!(pis.color(slot), ours.color(slot), "{name}: {}", slot.name());
        }
    }
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(theme_dir.join("theme-schema.json")).unwrap()).unwrap();
    let required: Vec<&str> = schema["properties"]["colors"]["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let ours: Vec<&str> = Slot::ALL.iter().map(|s| s.name()).collect();
    assert_eq!(required, ours);
}

/// A theme file named `name` with every token black but `accent`.
pub(crate) fn theme_json(name: &str, accent: &str) -> String {
    let mut colors = serde_json::Map::new();
    for slot in Slot::ALL {
        colors.insert(slot.name().to_owned(), "#000000".into());
    }
    colors.insert("accent".into(), accent.into());
    serde_json::json!({ "name": name, "colors": colors }).to_string()
}

/// `pi <args>` in the sandbox's project, in a tmux pane of its own; returns the pane once `ready`
/// is on it, after leaving pi with `/quit`.
fn start_up_pane(sandbox: &pi_test_support::sandbox::Sandbox, args: &str, ready: &str) -> String {
    use crate::tmux::{Tmux, shell_quote};
    use std::time::Duration;
    let tmux = Tmux {
        socket: format!("pi-themes-{}-{}", std::process::id(), args.len()),
    };
    let script = format!(
        "cd {project} && env -i PATH=\"$PATH\" TERM=xterm-256color HOME={home} {pi} {args}; echo \"pi exited with $?\"; sleep 30",
        project = shell_quote(&sandbox.project),
        home = shell_quote(&sandbox.home),
        pi = shell_quote(std::path::Path::new(env!("CARGO_BIN_EXE_pi"))),
    );
    let out = tmux.command(&[
        "new-session",
        "-d",
        "-s",
        "pi",
        "-x",
        "120",
        "-y",
        "40",
        "sh",
        "-c",
        &script,
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let pane = tmux.wait_for(ready, Duration::from_secs(60));
    tmux.send(&["-l", "/quit"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("pi exited with 0", Duration::from_secs(20));
    pane
}

/// A theme file that fails to parse is reported as pi reports it and pi starts anyway; the
/// custom themes are listed; an unknown `theme` falls back to `dark` with pi's message;
/// `--no-themes` loads none of the discovered files.
#[test]
fn start_up_reports_bad_and_unknown_themes_without_failing() {
    if !crate::tmux::tmux_available() {
        assert!(
            std::env::var_os("PI_REQUIRE_TMUX").is_none(),
            "PI_REQUIRE_TMUX is set but tmux is not installed"
        );
        eprintln!("skipped: tmux not found (install it, or run .ci/run)");
        return;
    }
    let sandbox = pi_test_support::sandbox::Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    sandbox.write_models_json(&pi_test_support::openai::models_json("http://127.0.0.1:9/v1"));
    let agent = sandbox.agent_dir();
    std::fs::create_dir_all(agent.join("themes")).unwrap();
    std::fs::write(agent.join("themes/mine.json"), theme_json("mine", "#123456")).unwrap();
    std::fs::write(agent.join("settings.json"), r#"{"theme": "nope"}"#).unwrap();
    let broken = sandbox.project.join(".pi/themes/broken.json");
    std::fs::create_dir_all(broken.parent().unwrap()).unwrap();
    std::fs::write(&broken, "{\"name\": ").unwrap();

    let fallback = "Failed to load theme \"nope\": Theme not found: nope";
    let pane = start_up_pane(&sandbox, "", "Fell back to dark theme.");
    for expected in [
        "[Themes]",
        "  mine",
        "[Theme conflicts]",
        &format!("  {}", broken.display()),
        &format!("    Failed to parse theme {}: ", broken.display()),
        fallback,
    ] {
        assert!(pane.contains(expected), "missing {expected:?} in the pane:\n{pane}");
    }

    let pane = start_up_pane(&sandbox, "--no-themes", "Fell back to dark theme.");
    assert!(pane.contains(fallback), "{pane}");
    for absent in ["[Themes]", "[Theme conflicts]"] {
        assert!(!pane.contains(absent), "{absent:?} with --no-themes:\n{pane}");
    }
}
