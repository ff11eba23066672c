//! The editor at the keyboard of a virtual terminal: Shift+Enter as terminals encode it, the
//! terminal's cursor at the typing position, large pastes behind pi's marker.

#![allow(clippy::unwrap_used)]

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use pi_agent_core::faux::{FauxModel, faux_assistant_text};
use pi_cli::modes::interactive::InteractiveOptions;
use pi_tui::input::{Input, InputDecoder};
use tokio::sync::mpsc;

use crate::interactive_loop::{app, key, start, wait_for};

/// Sends `bytes` as the terminal would: through the decoder the input thread uses.
fn type_bytes(keys: &mpsc::UnboundedSender<Event>, bytes: &[u8]) {
    let mut decoder = InputDecoder::new();
    let mut inputs = decoder.feed(bytes);
    inputs.extend(decoder.flush());
    for input in inputs {
        if let Input::Event(event) = input {
            keys.send(event).unwrap();
        }
    }
}

fn exit(keys: &mpsc::UnboundedSender<Event>) {
    keys.send(Event::Key(KeyEvent::new(KeyCode::Char('d'), KeyModifiers::CONTROL)))
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn shift_enter_in_the_kitty_and_modify_other_keys_encodings_makes_a_newline() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("Got it.")]);
    let app = app(dir.path(), &faux, &[]);
    let (vt, keys, run) = start(&app, InteractiveOptions::default(), (60, 20));

    type_bytes(&keys, b"first\x1b[27;2;13~second\x1b[13;2uthird");
    wait_for("three rows in the editor", || {
        let screen = vt.screen();
        screen.contains("> first") && screen.contains("  second") && screen.contains("  third")
    })
    .await;
    type_bytes(&keys, b"\r");
    wait_for("the answer", || vt.screen().contains("Got it.")).await;
    let users: Vec<String> = app.user_messages().into_iter().map(|m| m.text).collect();
    assert_eq!(users, ["first\nsecond\nthird"]);
    exit(&keys);
    assert_eq!(run.await.unwrap(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_terminal_cursor_is_shown_at_the_typing_position() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let app = app(dir.path(), &faux, &[]);
    let (vt, keys, run) = start(&app, InteractiveOptions::default(), (60, 20));

    type_bytes(&keys, "héllo 日本".as_bytes());
    wait_for("the text", || vt.screen().contains("> héllo 日本")).await;
    let row_of_prompt = || {
        vt.screen()
            .lines()
            .position(|row| row.starts_with("> héllo"))
            .map(|row| u16::try_from(row).unwrap())
    };
    // "> " + "héllo " (6) + "日本" (4 columns)
    wait_for("the cursor after the text", || {
        vt.cursor() == (row_of_prompt().unwrap(), 12, true)
    })
    .await;
    keys.send(key(KeyCode::Left)).unwrap();
    keys.send(key(KeyCode::Left)).unwrap();
    keys.send(key(KeyCode::Left)).unwrap();
    wait_for("the cursor before the space", || {
        vt.cursor() == (row_of_prompt().unwrap(), 7, true)
    })
    .await;
    exit(&keys);
    keys.send(Event::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)))
        .unwrap();
    exit(&keys);
    assert_eq!(run.await.unwrap(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_large_paste_shows_pis_marker_and_its_text_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("Read it.")]);
    let app = app(dir.path(), &faux, &[]);
    let (vt, keys, run) = start(&app, InteractiveOptions::default(), (60, 20));

    let pasted: String = (1..=60).map(|i| format!("log line {i}")).collect::<Vec<_>>().join("\n");
    type_bytes(&keys, b"check ");
    // Bracketed, as the terminal sends it (CRLF line ends included).
    let bracketed = format!("\x1b[200~{}\x1b[201~", pasted.replace('\n', "\r\n"));
    type_bytes(&keys, bracketed.as_bytes());
    wait_for("the marker", || vt.screen().contains("> check [paste #1 +60 lines]")).await;
    assert!(!vt.screen().contains("log line 2"), "{}", vt.screen());
    type_bytes(&keys, b"\r");
    wait_for("the answer", || vt.screen().contains("Read it.")).await;
    let users: Vec<String> = app.user_messages().into_iter().map(|m| m.text).collect();
    assert_eq!(users, [format!("check {pasted}")]);
    exit(&keys);
    assert_eq!(run.await.unwrap(), 0);
}

/// The real binary in a real terminal (tmux with `extended-keys`, which forwards Shift+Enter once
/// the program asks for modifyOtherKeys, as pi does when no kitty answer comes): Shift+Enter makes
/// a newline, and the terminal's cursor is shown after the typed text.
#[test]
fn shift_enter_and_the_cursor_in_tmux() {
    use crate::tmux::{Tmux, shell_quote, tmux_available};
    use std::path::Path;
    use std::time::Duration;

    if !tmux_available() {
        assert!(
            std::env::var_os("PI_REQUIRE_TMUX").is_none(),
            "PI_REQUIRE_TMUX is set but tmux is not installed"
        );
        eprintln!("skipped: tmux not found (install it, or run .ci/run)");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let pi = Path::new(env!("CARGO_BIN_EXE_pi"));
    let tmux = Tmux {
        socket: format!("pi-editor-test-{}", std::process::id()),
    };
    // A first session keeps the server up while the option is set, before pi starts.
    let out = tmux.command(&["new-session", "-d", "-s", "setup", "sleep", "120"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = tmux.command(&["set-option", "-s", "extended-keys", "on"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let script = format!(
        "env TERM=xterm-256color HOME={home} PI_CODING_AGENT_DIR={home}/agent {pi} --demo; echo \"pi exited with $?\"; sleep 30",
        home = shell_quote(home.path()),
        pi = shell_quote(pi),
    );
    let out = tmux.command(&[
        "new-session",
        "-d",
        "-s",
        "pi",
        "-x",
        "100",
        "-y",
        "30",
        "sh",
        "-c",
        &script,
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    tmux.wait_for("Send any message", Duration::from_secs(30));
    // Well past pi's 150 ms wait for a kitty answer (a busy CI machine too): modifyOtherKeys is on.
    std::thread::sleep(Duration::from_millis(1500));
    tmux.send(&["-l", "first line"]);
    tmux.send(&["S-Enter"]);
    tmux.send(&["-l", "second"]);
    let pane = tmux.wait_for("  second", Duration::from_secs(20));
    assert!(pane.contains("> first line"), "{pane}");
    let visible = String::from_utf8_lossy(&tmux.command(&["capture-pane", "-p", "-t", "pi"]).stdout).into_owned();
    let row = visible
        .lines()
        .position(|line| line.starts_with("  second"))
        .unwrap_or_else(|| panic!("no row \"  second\" in:\n{visible}"));
    let cursor = tmux.command(&[
        "display-message",
        "-p",
        "-t",
        "pi",
        "#{cursor_x} #{cursor_y} #{cursor_flag}",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&cursor.stdout).trim(),
        format!("8 {row} 1"),
        "the cursor after \"second\", shown; the pane:\n{visible}"
    );

    tmux.send(&["Enter"]);
    let pane = tmux.wait_for("Done: the typo is fixed", Duration::from_secs(60));
    let lines: Vec<&str> = pane.lines().map(str::trim).collect();
    let at = lines
        .iter()
        .position(|l| *l == "first line")
        .unwrap_or_else(|| panic!("{pane}"));
    assert_eq!(lines.get(at + 1), Some(&"second"), "the message has two lines:\n{pane}");
    tmux.send(&["-l", "/quit"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("pi exited with 0", Duration::from_secs(20));
}
