//! The transcript through the interactive mode's loop on a vt100 terminal, as pi 0.73.1 shows it:
//! Esc with queued messages, Ctrl+O over earlier turns, the collapsed tool views, provider errors
//! and the footer. Screens are insta snapshots, with the test's temporary folder as `<dir>`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use pi_agent_core::faux::{FauxModel, faux_assistant_message, faux_assistant_text, faux_tool_call};
use pi_cli::modes::interactive::InteractiveOptions;
use serde_json::json;
use tokio::sync::watch;

use crate::interactive_loop::{Vt, app, app_streaming, end_of, held, key, start, type_line, wait_for};

/// The screen with `dir` (and its canonical form) as `<dir>`, trailing blanks trimmed.
fn screen_of(vt: &Vt, dir: &Path) -> String {
    normalise(&vt.screen(), dir)
}

fn normalise(text: &str, dir: &Path) -> String {
    let mut text = text.to_owned();
    let canonical = dir.canonicalize().unwrap();
    for path in [canonical.as_path(), dir] {
        text = text.replace(&path.display().to_string(), "<dir>");
    }
    text.lines().map(str::trim_end).collect::<Vec<_>>().join("\n")
}

/// Waits until `ready` holds for the screen; on a timeout, fails showing the screen.
async fn wait_screen(vt: &Vt, what: &str, ready: impl Fn(&str) -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let screen = vt.screen();
        if ready(&screen) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}; screen:\n{screen}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

fn ctrl(c: char) -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

fn idle(vt: &Vt) -> bool {
    !vt.screen().contains("Working")
}

/// Defect 2: Esc while a follow-up waits puts it back into the editor (pi's
/// `restoreQueuedMessagesToEditor({ abort: true })`); it never reaches the model.
#[tokio::test(flavor = "multi_thread")]
async fn esc_puts_queued_messages_back_into_the_editor() {
    let dir = tempfile::tempdir().unwrap();
    let words: Vec<String> = (1..=40).map(|i| format!("word{i}")).collect();
    let answer = words.join(" ");
    // Slow enough (about 7 s) for the keys to land while it streams; Esc cuts it short.
    let faux = FauxModel::builder().tokens_per_second(10.0).build();
    faux.set_responses([faux_assistant_text(answer.clone()), faux_assistant_text("Later.")]);
    let app = app(dir.path(), &faux, &[]);
    let (vt, keys, run) = start(&app, InteractiveOptions::default(), (80, 24));

    type_line(&keys, "first question");
    wait_for("the answer to stream", || vt.screen().contains("word2")).await;
    // A steering message (Enter) and a follow-up (Alt+Enter) while it streams.
    type_line(&keys, "steer this way");
    for c in "then the changelog".chars() {
        keys.send(key(KeyCode::Char(c))).unwrap();
    }
    keys.send(Event::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT)))
        .unwrap();
    wait_for("both queued", || {
        vt.screen().contains("Follow-up: then the changelog") && vt.screen().contains("Steering: steer this way")
    })
    .await;
    keys.send(key(KeyCode::Esc)).unwrap();
    wait_screen(&vt, "the abort", |s| !s.contains("Working") && s.contains("Operation aborted")).await;
    assert!(!app.session().agent().has_queued_messages(), "the queues are empty");
    // From the editor down (how much of the answer streamed before Esc varies).
    let screen = screen_of(&vt, dir.path());
    let editor = &screen[screen.find("────").unwrap()..];
    insta::assert_snapshot!("esc_with_queued_messages", editor);

    // The next message sent is what the editor holds, nothing more reaches the model.
    keys.send(key(KeyCode::Enter)).unwrap();
    wait_for("the second answer", || vt.screen().contains("Later.") && idle(&vt)).await;
    let sent: Vec<String> = app.user_messages().into_iter().map(|m| m.text).collect();
    assert_eq!(
        sent,
        vec!["first question".to_owned(), "steer this way\n\nthen the changelog".to_owned()]
    );
    keys.send(ctrl('d')).unwrap();
    assert_eq!(run.await.unwrap(), 0);
}
