//! The transcript through the interactive mode's loop on a vt100 terminal, as pi 0.73.1 shows it:
//! Esc with queued messages, Ctrl+O over earlier turns, the collapsed tool views, provider errors
//! and the footer. Screens are insta snapshots, with the test's temporary folder as `<dir>`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use pi_agent_core::faux::{FauxModel, faux_assistant_message, faux_assistant_text, faux_tool_call};
use pi_cli::modes::interactive::InteractiveOptions;
use serde_json::json;

use crate::interactive_loop::{Vt, app, count, key, start, type_line, wait_for};

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
    wait_screen(&vt, "the abort", |s| {
        !s.contains("Working") && s.contains("Operation aborted")
    })
    .await;
    assert!(!app.session().agent().has_queued_messages(), "the queues are empty");
    // The editor (how much of the answer streamed before Esc, and its usage, varies).
    let screen = screen_of(&vt, dir.path());
    let top = screen.find("────").unwrap();
    let bottom = top + 3 + screen[top + 3..].rfind("────").unwrap() + 3;
    let editor = &screen[top..screen[bottom..].find('\n').map_or(screen.len(), |end| bottom + end)];
    insta::assert_snapshot!("esc_with_queued_messages", editor);

    // The next message sent is what the editor holds, nothing more reaches the model.
    keys.send(key(KeyCode::Enter)).unwrap();
    wait_for("the second answer", || vt.screen().contains("Later.") && idle(&vt)).await;
    let sent: Vec<String> = app.user_messages().into_iter().map(|m| m.text).collect();
    assert_eq!(
        sent,
        vec![
            "first question".to_owned(),
            "steer this way\n\nthen the changelog".to_owned()
        ]
    );
    keys.send(ctrl('d')).unwrap();
    assert_eq!(run.await.unwrap(), 0);
}

/// A file of `n` numbered lines.
fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("let line{i} = {i};\n")).collect()
}

/// Defect 4: a collapsed `read` shows the file's first 10 lines (highlighted) and pi's
/// `... (N more lines, ctrl+o to expand)`; defect 3: Ctrl+O expands every tool block, the
/// earlier turn's too, redrawn in place (no second copy anywhere, scrollback included), and
/// collapses them again.
#[tokio::test(flavor = "multi_thread")]
async fn ctrl_o_expands_every_turn_in_place_and_read_shows_its_first_lines() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("one.rs"), numbered(15)).unwrap();
    std::fs::write(dir.path().join("two.rs"), numbered(12)).unwrap();
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call("c1", "read", json!({"path": "one.rs"}))]),
        faux_assistant_text("Read one."),
        faux_assistant_message(vec![faux_tool_call("c1", "read", json!({"path": "two.rs"}))]),
        faux_assistant_text("Read two."),
    ]);
    let app = app(dir.path(), &faux, &["read"]);
    let (vt, keys, run) = start(&app, InteractiveOptions::default(), (70, 60));

    type_line(&keys, "read one");
    wait_for("the first answer", || vt.screen().contains("Read one.") && idle(&vt)).await;
    type_line(&keys, "read two");
    wait_for("the second answer", || vt.screen().contains("Read two.") && idle(&vt)).await;
    let collapsed = normalise(&vt.history().join("\n"), dir.path());
    assert!(collapsed.contains("let line10 = 10;"), "{collapsed}");
    assert!(!collapsed.contains("let line11 = 11;"), "{collapsed}");
    assert!(
        collapsed.contains("... (5 more lines, ctrl+o to expand)"),
        "{collapsed}"
    );
    assert!(
        collapsed.contains("... (2 more lines, ctrl+o to expand)"),
        "{collapsed}"
    );
    let transcript = |text: &str| text[..text.find("Read two.").unwrap() + "Read two.".len()].to_owned();
    insta::assert_snapshot!("read_collapsed", transcript(&collapsed));

    keys.send(ctrl('o')).unwrap();
    wait_for("both blocks expanded", || {
        let rows = vt.history();
        count(&rows, "let line15 = 15;") == 1 && count(&rows, "let line12 = 12;") == 2
    })
    .await;
    let rows = vt.history();
    assert_eq!(count(&rows, "read one.rs"), 1, "one copy of each block: {rows:#?}");
    assert_eq!(count(&rows, "read two.rs"), 1, "{rows:#?}");
    assert_eq!(count(&rows, "more lines"), 0, "{rows:#?}");
    assert_eq!(count(&rows, "read one"), 2, "the message and the call, once: {rows:#?}");
    let expanded = normalise(&rows.join("\n"), dir.path());
    insta::assert_snapshot!("read_expanded", transcript(&expanded));

    keys.send(ctrl('o')).unwrap();
    wait_for("collapsed again", || count(&vt.history(), "more lines") == 2).await;
    assert_eq!(count(&vt.history(), "let line15 = 15;"), 0);
    keys.send(ctrl('d')).unwrap();
    assert_eq!(run.await.unwrap(), 0);
}

/// What reqwest's chain looks like for a closed port (`pi_ai`'s `Connection error: …`).
const REFUSED: &str = "Connection error: error sending request for url (http://127.0.0.1:9/v1/chat/completions): client error (Connect): tcp connect error: Connection refused (os error 111)";

/// Defect 11: each retry's countdown is on the screen, and the final error reads as pi's
/// `Connection error.` with the cause, not the raw `error sending request for url (…)`.
#[test]
fn provider_errors_read_as_pi_words_them() {
    use pi_agent_core::{AgentEvent, AgentMessage, StopReason};
    use pi_cli::modes::interactive::{Screen, error_text};
    use pi_coding_agent::SessionEvent;

    assert_eq!(
        error_text(REFUSED),
        "Connection error. Connection refused (os error 111)"
    );
    assert_eq!(
        error_text("Connection error: error sending request"),
        "Connection error."
    );
    assert_eq!(error_text("503 Service Unavailable"), "503 Service Unavailable");

    let mut screen = Screen::new(pi_tui::Theme::plain());
    screen.transcript_mut().user("hello");
    screen.set_running(true);
    screen.apply(&SessionEvent::Agent(AgentEvent::AgentStart));
    let mut failed = faux_assistant_message(vec![]);
    failed.stop_reason = StopReason::Error;
    failed.error_message = Some(REFUSED.to_owned());
    screen.apply(&SessionEvent::Agent(AgentEvent::MessageEnd {
        message: AgentMessage::Assistant(failed.clone()),
    }));
    screen.apply(&SessionEvent::AutoRetryStart {
        attempt: 1,
        max_attempts: 3,
        delay_ms: 2000,
        error_message: REFUSED.to_owned(),
    });
    let mut rows = pi_tui::testing::plain(&screen.take_commit(100));
    rows.push_str("\n-- live --\n");
    rows.push_str(&pi_tui::testing::plain(&screen.render_live(100).0));
    assert!(rows.contains("Retrying (1/3) in 2s... (escape to cancel)"), "{rows}");
    screen.apply(&SessionEvent::Agent(AgentEvent::AgentStart));
    screen.apply(&SessionEvent::Agent(AgentEvent::MessageEnd {
        message: AgentMessage::Assistant(failed),
    }));
    screen.apply(&SessionEvent::AutoRetryEnd {
        success: false,
        attempt: 3,
        final_error: Some(REFUSED.to_owned()),
    });
    screen.set_running(false);
    rows.push_str("\n-- after the retries --\n");
    rows.push_str(&pi_tui::testing::plain(&screen.take_commit(100)));
    assert!(!rows.contains("error sending request"), "{rows}");
    let rows: Vec<&str> = rows.lines().map(str::trim_end).collect();
    insta::assert_snapshot!("provider_errors", rows.join("\n"));
}
