//! The interactive mode's loop on a vt100 terminal: keys in, screen out. A response streams while
//! the terminal is resized; a pending preview is applied from the keyboard.

#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use futures::StreamExt;
use pi_agent_core::faux::{FauxModel, faux_assistant_message, faux_assistant_text, faux_tool_call};
use pi_agent_core::{AssistantMessageEvent, AssistantMessageStream, LlmContext, Model, StreamFn, StreamOptions};
use pi_ai::ModelRegistry;
use pi_cli::modes::interactive::{InteractiveOptions, Terminal, run_with_terminal};
use pi_coding_agent::App;
use pi_coding_agent::{AgentSession, SessionOptions};
use pi_session_store::SessionManager;
use pi_test_support::wait::until_limit;
use serde_json::json;
use tokio::sync::{mpsc, watch};

/// A terminal emulator the loop writes to; each flush is one frame.
#[derive(Clone)]
pub(crate) struct Vt {
    parser: Arc<Mutex<vt100::Parser>>,
    frame: Vec<u8>,
    /// A size to take at the end of the next frame ([`Vt::resize`]).
    resize_to: Arc<Mutex<Option<(u16, u16)>>>,
    /// Frames drawn so far (flushes).
    frames: Arc<std::sync::atomic::AtomicUsize>,
    /// Every byte written, as written (sequences the emulator does not keep, such as OSC 52).
    pub(crate) raw: Arc<Mutex<Vec<u8>>>,
}

impl Vt {
    pub(crate) fn new(width: u16, height: u16) -> Self {
        Vt {
            parser: Arc::new(Mutex::new(vt100::Parser::new(nz(height), nz(width), 10_000))),
            frame: Vec::new(),
            resize_to: Arc::new(Mutex::new(None)),
            frames: Arc::default(),
            raw: Arc::default(),
        }
    }

    /// Reads the emulated terminal's size, as the real terminal's is read.
    pub(crate) fn probe(&self) -> pi_cli::modes::interactive::SizeProbe {
        let parser = self.parser.clone();
        Arc::new(move || {
            let (rows, columns) = parser.lock().unwrap().screen().size();
            Some((columns.get(), rows.get()))
        })
    }

    /// Resizes the terminal as the user does, but between two frames: at the end of the next
    /// frame the program draws (a frame cut in two by a resize cannot come out right in any
    /// program). Returns once the terminal has its new size.
    async fn resize(&self, width: u16, height: u16) {
        *self.resize_to.lock().unwrap() = Some((width, height));
        wait_for("the terminal to take its new size at the end of a frame", || {
            self.resize_to.lock().unwrap().is_none()
        })
        .await;
    }

    pub(crate) fn frames(&self) -> usize {
        self.frames.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub(crate) fn screen(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// The terminal cursor: row, column, and whether it is shown.
    pub(crate) fn cursor(&self) -> (u16, u16, bool) {
        let parser = self.parser.lock().unwrap();
        let (row, col) = parser.screen().cursor_position();
        (row, col, !parser.screen().hide_cursor())
    }

    /// The colour of the editor's `> ` prompt on the screen (`None` while it is not shown).
    pub(crate) fn prompt_color(&self) -> Option<vt100::Color> {
        let parser = self.parser.lock().unwrap();
        let screen = parser.screen();
        let (_, columns) = screen.size();
        let row = screen.rows(0, columns.get()).position(|row| row.starts_with("> "))?;
        screen.cell(u16::try_from(row).ok()?, 0).map(|cell| cell.fgcolor())
    }

    /// Every row, scrollback first, trailing blanks trimmed.
    pub(crate) fn history(&self) -> Vec<String> {
        let mut parser = self.parser.lock().unwrap();
        let screen = parser.screen_mut();
        screen.set_scrollback(usize::MAX);
        let total = screen.scrollback();
        let mut rows = Vec::new();
        for offset in (1..=total).rev() {
            screen.set_scrollback(offset);
            rows.extend(screen.rows(0, 1000).take(1));
        }
        screen.set_scrollback(0);
        rows.extend(screen.rows(0, 1000));
        rows.into_iter().map(|r| r.trim_end().to_owned()).collect()
    }
}

impl Write for Vt {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.frame.extend_from_slice(bytes);
        self.raw.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let frame = std::mem::take(&mut self.frame);
        let mut parser = self.parser.lock().unwrap();
        parser.process(&frame);
        if let Some((width, height)) = self.resize_to.lock().unwrap().take() {
            parser.set_size(nz(height), nz(width));
        }
        self.frames.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }
}

/// The interactive loop of `app` on a virtual terminal of `size`, in a task of its own: the
/// screen, the keyboard, the loop's exit code.
pub(crate) fn start(
    app: &App,
    options: InteractiveOptions,
    size: (u16, u16),
) -> (Vt, mpsc::UnboundedSender<Event>, tokio::task::JoinHandle<i32>) {
    let vt = Vt::new(size.0, size.1);
    let (keys, events) = mpsc::unbounded_channel();
    let term = Terminal {
        out: vt.clone(),
        size,
        events,
        probe: Some(vt.probe()),
    };
    let app = app.clone();
    let run = tokio::spawn(async move { run_with_terminal(&app, options, term).await });
    (vt, keys, run)
}

pub(crate) fn nz(n: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(n).unwrap()
}

pub(crate) fn app(dir: &Path, faux: &FauxModel, tools: &[&str]) -> App {
    app_streaming(dir, faux, faux.stream_fn(), tools)
}

/// [`app`] with the model reached through `stream_fn` (e.g. [`held`]).
pub(crate) fn app_streaming(dir: &Path, faux: &FauxModel, stream_fn: Arc<dyn StreamFn>, tools: &[&str]) -> App {
    let options = SessionOptions::new(dir, faux.model())
        .stream_fn(stream_fn)
        .tools(tools.iter().copied());
    let session = AgentSession::new(options).unwrap();
    App::new(
        session,
        SessionManager::in_memory(dir),
        Arc::new(ModelRegistry::builtin()),
        None,
        Arc::new(|_| {}),
    )
}

/// The faux model's stream, holding each text delta until the text streamed so far fits within
/// the limit `allowed` says (in bytes): a test lets a response stream up to a point and keeps it
/// there. The delta that crosses the limit waits too, so the text shown stops a few characters
/// short of it.
pub(crate) fn held(faux: &FauxModel, allowed: watch::Receiver<usize>) -> Arc<dyn StreamFn> {
    let inner = faux.stream_fn();
    Arc::new(
        move |model: &Model, context: &LlmContext<'_>, options: &StreamOptions| -> AssistantMessageStream {
            let events = inner.stream(model, context, options);
            let state = (events, allowed.clone(), 0usize);
            Box::pin(futures::stream::unfold(
                state,
                |(mut events, mut allowed, mut streamed)| async move {
                    let event = events.next().await?;
                    if let AssistantMessageEvent::TextDelta { delta, .. } = &event {
                        streamed += delta.len();
                        // The test keeps the sender until the response is done.
                        let _ = allowed.wait_for(|limit| streamed <= *limit).await;
                    }
                    Some((event, (events, allowed, streamed)))
                },
            ))
        },
    )
}

/// Where `word` ends in `text`.
pub(crate) fn end_of(text: &str, word: &str) -> usize {
    text.find(&format!("{word} ")).map(|at| at + word.len()).unwrap()
}

pub(crate) fn key(code: KeyCode) -> Event {
    Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

pub(crate) fn type_line(keys: &mpsc::UnboundedSender<Event>, text: &str) {
    for c in text.chars() {
        keys.send(key(KeyCode::Char(c))).unwrap();
    }
    keys.send(key(KeyCode::Enter)).unwrap();
}

pub(crate) async fn wait_for(what: &str, ready: impl FnMut() -> bool) {
    until_limit(Duration::from_secs(20), what, ready).await;
}

pub(crate) fn count(rows: &[String], needle: &str) -> usize {
    rows.iter().filter(|row| row.contains(needle)).count()
}

#[tokio::test(flavor = "multi_thread")]
async fn resizing_while_a_response_streams_keeps_the_scrollback_intact() {
    let dir = tempfile::tempdir().unwrap();
    let words: Vec<String> = (1..=120).map(|i| format!("word{i}")).collect();
    let answer = words.join(" ");
    // The response is held twice, so both resizes land mid-stream however loaded the machine is.
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text(answer.clone())]);
    let (allow, allowed) = watch::channel(end_of(&answer, "word12"));
    // Scrollback included: a word may have scrolled off the screen by the time it is looked for.
    let shown = |vt: &Vt, word: &str| vt.history().iter().any(|row| row.split_whitespace().any(|w| w == word));
    let app = app_streaming(dir.path(), &faux, held(&faux, allowed), &[]);
    let session = app.session().clone();
    let options = InteractiveOptions {
        header: vec!["pi test".into()],
        ..Default::default()
    };
    let (vt, keys, run) = start(&app, options, (60, 20));

    type_line(&keys, "hello there");
    wait_for("the answer to start streaming", || shown(&vt, "word10")).await;
    assert!(
        session.agent().is_streaming(),
        "still streaming when the terminal is resized"
    );
    assert!(!shown(&vt, "word13"), "held within word12");
    vt.resize(34, 20).await;
    // The resize event comes late: the spinner's frames in between already have the new width
    // (a frame at the old width would wrap and push broken rows into the scrollback).
    let resized_at = vt.frames();
    wait_for("two frames before the resize event", || vt.frames() >= resized_at + 2).await;
    keys.send(Event::Resize(34, 20)).unwrap();
    allow.send_replace(end_of(&answer, "word42"));
    wait_for("more of the answer", || shown(&vt, "word40")).await;
    assert!(session.agent().is_streaming(), "still streaming at the second resize");
    vt.resize(90, 24).await;
    keys.send(Event::Resize(90, 24)).unwrap();
    allow.send_replace(usize::MAX);
    wait_for("the run to end", || !session.agent().is_streaming()).await;
    let ended = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let screen = vt.screen();
            if screen.contains("word120") && !screen.contains("Working") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(
        ended.is_ok(),
        "the answer in the scrollback; screen:\n{}\nhistory: {:#?}",
        vt.screen(),
        vt.history()
    );
    keys.send(Event::Key(KeyEvent::new(KeyCode::Char('d'), KeyModifiers::CONTROL)))
        .unwrap();
    assert_eq!(run.await.unwrap(), 0);

    let rows = vt.history();
    assert_eq!(count(&rows, "hello there"), 1, "{rows:#?}");
    assert_eq!(count(&rows, "pi test"), 1, "{rows:#?}");
    // One live region is left on screen: one footer, one editor (two borders).
    let cwd = dir.path().display().to_string();
    let cwd_tail = &cwd[cwd.len().saturating_sub(12)..];
    assert_eq!(count(&rows, cwd_tail), 1, "{rows:#?}");
    assert_eq!(count(&rows, "────────"), 2, "{rows:#?}");
    // The answer was committed once, whole and in order, at the final width.
    let text = rows.join(" ");
    let found: Vec<&str> = text.split_whitespace().filter(|w| w.starts_with("word")).collect();
    assert_eq!(found, words.iter().map(String::as_str).collect::<Vec<_>>(), "{rows:#?}");
    assert!(rows.iter().all(|row| unicode_width(row) <= 90), "{rows:#?}");
}

fn unicode_width(text: &str) -> usize {
    pi_tui::display_width(text)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pending_preview_is_applied_from_the_keyboard() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.ts"), "oldCall(1);\n").unwrap();
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_message(vec![faux_tool_call(
            "c1",
            "ast_edit",
            json!({"ops": [{"pat": "oldCall($A)", "out": "newCall($A)"}], "paths": ["a.ts"]}),
        )]),
        // Forced to resolve, the model answers in text instead; the user decides.
        faux_assistant_text("Please review the preview."),
    ]);
    let app = app(dir.path(), &faux, &["ast_edit"]);
    let (vt, keys, run) = start(&app, InteractiveOptions::default(), (80, 30));

    type_line(&keys, "rename it");
    wait_for("the pending banner", || {
        vt.screen()
            .contains("pending  AST Edit: 1 replacement in 1 file · alt+y apply · alt+n discard")
    })
    .await;
    wait_for("the answer", || vt.screen().contains("Please review the preview.")).await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.ts")).unwrap(),
        "oldCall(1);\n"
    );
    keys.send(Event::Key(KeyEvent::new(KeyCode::Char('y'), KeyModifiers::ALT)))
        .unwrap();
    wait_for("the accept block", || {
        vt.screen().contains("✓ Accept: 1 replacement in 1 file [AST Edit]")
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.ts")).unwrap(),
        "newCall(1);\n"
    );
    assert!(vt.screen().contains("Decided by the user."));
    assert!(!vt.screen().contains("alt+y apply"), "the banner is gone");
    keys.send(key(KeyCode::Char('/'))).unwrap();
    type_line(&keys, "quit");
    assert_eq!(run.await.unwrap(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_commands_tree_fork_session_model_and_new() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    faux.set_responses([
        faux_assistant_text("Answer one."),
        faux_assistant_text("Answer two."),
        faux_assistant_text("Answer three."),
    ]);
    let app = app(dir.path(), &faux, &[]);
    let (vt, keys, run) = start(&app, InteractiveOptions::default(), (100, 40));
    let idle = |vt: &Vt| !vt.screen().contains("Working");

    type_line(&keys, "first question");
    wait_for("answer one", || vt.screen().contains("Answer one.") && idle(&vt)).await;
    type_line(&keys, "second question");
    wait_for("answer two", || vt.screen().contains("Answer two.") && idle(&vt)).await;

    // /tree: the picker starts on the newest message of the branch; Up, Enter picks the first.
    type_line(&keys, "/tree");
    wait_for("the tree picker", || {
        vt.screen().contains("Continue from an earlier message")
    })
    .await;
    keys.send(key(KeyCode::Up)).unwrap();
    keys.send(key(KeyCode::Enter)).unwrap();
    // pi asks whether to summarize the branch left; Enter: "No summary".
    wait_for("the summary question", || vt.screen().contains("Summarize branch?")).await;
    keys.send(key(KeyCode::Enter)).unwrap();
    wait_for("the move", || vt.screen().contains("Navigated to selected point")).await;
    assert!(
        vt.screen().contains("> first question"),
        "the message is back in the editor:\n{}",
        vt.screen()
    );
    assert_eq!(
        app.session().agent().messages().len(),
        0,
        "the context is before the first message"
    );
    keys.send(key(KeyCode::Enter)).unwrap();
    wait_for("answer three", || vt.screen().contains("Answer three.") && idle(&vt)).await;
    let messages = app.user_messages();
    let summary: Vec<(String, usize, bool)> = messages
        .iter()
        .map(|m| (m.text.clone(), m.level, m.on_branch))
        .collect();
    assert_eq!(
        summary,
        vec![
            ("first question".to_owned(), 0, false),
            ("second question".to_owned(), 0, false),
            ("first question".to_owned(), 0, true),
        ],
        "two roots now: the old branch and the new one"
    );

    // /fork lists the current branch only; forking puts the message back in the editor.
    type_line(&keys, "/fork");
    wait_for("the fork picker", || {
        vt.screen().contains("Fork a new session from a message")
    })
    .await;
    keys.send(key(KeyCode::Enter)).unwrap();
    wait_for("the fork", || vt.screen().contains("Forked to a new session")).await;
    assert!(vt.screen().contains("> first question"), "{}", vt.screen());
    keys.send(Event::Key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL)))
        .unwrap();

    type_line(&keys, "/session");
    wait_for("the session notice", || {
        vt.screen().contains("Session Info") && vt.screen().contains("User: 0")
    })
    .await;

    type_line(&keys, "/model");
    wait_for("the model picker", || vt.screen().contains("Select a model")).await;
    keys.send(key(KeyCode::Esc)).unwrap();
    wait_for("the editor again", || !vt.screen().contains("Select a model")).await;

    type_line(&keys, "/new");
    wait_for("the new session", || vt.screen().contains("New session started")).await;

    type_line(&keys, "/help");
    wait_for("the help", || vt.screen().contains("/resume")).await;

    keys.send(Event::Key(KeyEvent::new(KeyCode::Char('d'), KeyModifiers::CONTROL)))
        .unwrap();
    assert_eq!(run.await.unwrap(), 0);
}

/// A prompt template and a skill command typed in the editor reach the model expanded, and
/// `/help` lists the template and (with `skill_commands`, pi's `enableSkillCommands`) the skill.
#[tokio::test(flavor = "multi_thread")]
async fn templates_and_skill_commands_expand_in_the_editor() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join(".pi/prompts")).unwrap();
    std::fs::create_dir_all(project.join(".pi/skills/hello")).unwrap();
    std::fs::write(
        project.join(".pi/prompts/review.md"),
        "---\ndescription: Review a file\nargument-hint: <file>\n---\nReview $1 now.",
    )
    .unwrap();
    std::fs::write(
        project.join(".pi/skills/hello/SKILL.md"),
        "---\nname: hello\ndescription: Greets.\n---\nSay hello.",
    )
    .unwrap();
    let resources = pi_coding_agent::resources::Resources::load(&pi_coding_agent::resources::ResourceOptions {
        cwd: project.clone(),
        ..Default::default()
    });
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("Reviewed."), faux_assistant_text("Hello!")]);
    let app = app(&project, &faux, &[]);
    app.session().set_resources(Arc::new(resources));
    let (vt, keys, run) = start(&app, InteractiveOptions::default(), (100, 40));
    let idle = |vt: &Vt| !vt.screen().contains("Working");

    type_line(&keys, "/review src/main.rs");
    wait_for("the review answer", || vt.screen().contains("Reviewed.") && idle(&vt)).await;
    type_line(&keys, "/skill:hello Ada");
    wait_for("the hello answer", || vt.screen().contains("Hello!") && idle(&vt)).await;
    let sent: Vec<String> = app.user_messages().into_iter().map(|m| m.text).collect();
    assert_eq!(sent[0], "Review src/main.rs now.");
    assert!(sent[1].starts_with("<skill name=\"hello\""), "{}", sent[1]);
    assert!(sent[1].ends_with("Say hello.\n</skill>\n\nAda"), "{}", sent[1]);

    type_line(&keys, "/help");
    wait_for("the help", || vt.screen().contains("/skill:hello — Greets.")).await;
    assert!(
        vt.screen().contains("/review <file> — Review a file"),
        "{}",
        vt.screen()
    );

    keys.send(Event::Key(KeyEvent::new(KeyCode::Char('d'), KeyModifiers::CONTROL)))
        .unwrap();
    assert_eq!(run.await.unwrap(), 0);
}
