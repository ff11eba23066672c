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
