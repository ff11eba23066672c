//! The interactive mode's loop on a vt100 terminal: keys in, screen out. A response streams while
//! the terminal is resized; a pending preview is applied from the keyboard.

#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use futures::StreamExt;
use pi_agent_core::faux::{FauxModel, FauxResponse, faux_assistant_message, faux_assistant_text, faux_tool_call};
use pi_agent_core::{
    AgentMessage, AssistantMessageEvent, AssistantMessageStream, LlmContext, Model, StreamFn, StreamOptions,
};
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
struct Vt {
    parser: Arc<Mutex<vt100::Parser>>,
    frame: Vec<u8>,
    /// A size to take at the end of the next frame ([`Vt::resize`]).
    resize_to: Arc<Mutex<Option<(u16, u16)>>>,
    /// Frames drawn so far (flushes).
    frames: Arc<std::sync::atomic::AtomicUsize>,
    /// Every byte written, as written (sequences the emulator does not keep, such as OSC 52).
    raw: Arc<Mutex<Vec<u8>>>,
}

impl Vt {
    fn new(width: u16, height: u16) -> Self {
        Vt {
            parser: Arc::new(Mutex::new(vt100::Parser::new(nz(height), nz(width), 10_000))),
            frame: Vec::new(),
            resize_to: Arc::new(Mutex::new(None)),
            frames: Arc::default(),
            raw: Arc::default(),
        }
    }

    /// Reads the emulated terminal's size, as the real terminal's is read.
    fn probe(&self) -> pi_cli::modes::interactive::SizeProbe {
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

    fn frames(&self) -> usize {
        self.frames.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn screen(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// The colour of the editor's `> ` prompt on the screen (`None` while it is not shown).
    fn prompt_color(&self) -> Option<vt100::Color> {
        let parser = self.parser.lock().unwrap();
        let screen = parser.screen();
        let (_, columns) = screen.size();
        let row = screen.rows(0, columns.get()).position(|row| row.starts_with("> "))?;
        screen.cell(u16::try_from(row).ok()?, 0).map(|cell| cell.fgcolor())
    }

    /// Every row, scrollback first, trailing blanks trimmed.
    fn history(&self) -> Vec<String> {
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
fn start(
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

fn nz(n: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(n).unwrap()
}

fn app(dir: &Path, faux: &FauxModel, tools: &[&str]) -> App {
    app_streaming(dir, faux, faux.stream_fn(), tools)
}

/// [`app`] with the model reached through `stream_fn` (e.g. [`held`]).
fn app_streaming(dir: &Path, faux: &FauxModel, stream_fn: Arc<dyn StreamFn>, tools: &[&str]) -> App {
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
fn held(faux: &FauxModel, allowed: watch::Receiver<usize>) -> Arc<dyn StreamFn> {
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
fn end_of(text: &str, word: &str) -> usize {
    text.find(&format!("{word} ")).map(|at| at + word.len()).unwrap()
}

fn key(code: KeyCode) -> Event {
    Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn type_line(keys: &mpsc::UnboundedSender<Event>, text: &str) {
    for c in text.chars() {
        keys.send(key(KeyCode::Char(c))).unwrap();
    }
    keys.send(key(KeyCode::Enter)).unwrap();
}

async fn wait_for(what: &str, ready: impl FnMut() -> bool) {
    until_limit(Duration::from_secs(20), what, ready).await;
}

fn count(rows: &[String], needle: &str) -> usize {
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

/// The process extensions at `paths` (folders with an `extension.json`), loaded and attached to
/// `app`.
async fn load_process_extensions(
    app: &App,
    paths: Vec<std::path::PathBuf>,
) -> Arc<pi_coding_agent::extensions::Extensions> {
    use pi_coding_agent::extensions::{EntryKind, ExtensionEntry, Extensions, LoadOptions, Origin};
    let entries = paths
        .into_iter()
        .map(|path| ExtensionEntry {
            kind: EntryKind::Process {
                manifest: path.join("extension.json"),
            },
            path,
            origin: Origin::Cli,
            base_dir: None,
        })
        .collect();
    let extensions = Extensions::load(entries, &app.session().tool_api(), LoadOptions::default()).await;
    assert!(extensions.load_errors().is_empty(), "{:?}", extensions.load_errors());
    extensions.attach(app);
    Arc::new(extensions)
}

#[tokio::test(flavor = "multi_thread")]
async fn ctx_shutdown_from_a_command_ends_the_interactive_mode() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let app = app(dir.path(), &faux, &[]);
    let body = "@ext.command('bye', description='Leave')\ndef bye(args, ctx):\n    ctx.shutdown()\n";
    let bye = pi_test_support::extensions::python_extension(dir.path(), "bye", body, None);
    let extensions = load_process_extensions(&app, vec![bye]).await;
    let options = InteractiveOptions {
        extensions: Some(extensions.clone()),
        ..InteractiveOptions::default()
    };
    let (_vt, keys, run) = start(&app, options, (80, 30));
    type_line(&keys, "/bye");
    // pi leaves once idle; the keyboard stays open (dropping `keys` would end the loop too).
    let code = tokio::time::timeout(std::time::Duration::from_secs(20), run)
        .await
        .expect("the interactive mode ends after ctx.shutdown()")
        .unwrap();
    assert_eq!(code, 0);
    drop(keys);
    extensions.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_extension_command_typed_in_the_editor_runs_and_help_lists_it() {
    use pi_coding_agent::extensions::ExtensionError;
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let app = app(dir.path(), &faux, &[]);
    let body =
        "@ext.command('boom', description='Fails')\ndef boom(args, ctx):\n    raise RuntimeError('cmd failed')\n";
    let failing = pi_test_support::extensions::python_extension(dir.path(), "failing", body, None);
    let guard = pi_test_support::extensions::examples_dir().join("python-guard");
    let extensions = load_process_extensions(&app, vec![guard, failing]).await;
    let reported = Arc::new(Mutex::new(Vec::new()));
    let sink = reported.clone();
    extensions.set_report(Arc::new(move |error: &ExtensionError| {
        sink.lock()
            .unwrap()
            .push(format!("Extension error ({}): {}", error.extension(), error.message()));
    }));
    let options = InteractiveOptions {
        extensions: Some(extensions.clone()),
        ..InteractiveOptions::default()
    };
    let (vt, keys, run) = start(&app, options, (80, 30));

    type_line(&keys, "/greet Ada");
    wait_for("the greeting entry", || {
        app.with_store(|store| {
            store
                .entries()
                .iter()
                .any(|entry| matches!(&entry.kind, pi_session_store::EntryKind::Custom { custom_type, .. } if custom_type == "python-guard.greeting"))
        })
    })
    .await;
    type_line(&keys, "/boom");
    wait_for("the command's error", || !reported.lock().unwrap().is_empty()).await;
    assert_eq!(
        *reported.lock().unwrap(),
        ["Extension error (command:boom): cmd failed"]
    );
    type_line(&keys, "/help");
    wait_for("the extension commands in /help", || {
        let screen = vt.screen();
        screen.contains("/greet     Greet someone") && screen.contains("/boom      Fails")
    })
    .await;
    assert_eq!(faux.call_count(), 0, "a command never reaches the model");
    keys.send(key(KeyCode::Char('/'))).unwrap();
    type_line(&keys, "quit");
    assert_eq!(run.await.unwrap(), 0);
    extensions.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn tree_summarizes_the_branch_left_with_custom_instructions() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let prompts: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = prompts.clone();
    faux.set_responses([
        FauxResponse::from(faux_assistant_text("Answer one.")),
        FauxResponse::from(faux_assistant_text("Answer two.")),
        FauxResponse::factory(move |request| {
            if let Some(AgentMessage::User(user)) = request.context.messages.first() {
                seen.lock().unwrap().push(user.content.text());
            }
            faux_assistant_text("## Goal\nSecond question explored.")
        }),
    ]);
    let app = app(dir.path(), &faux, &[]);
    let (vt, keys, run) = start(&app, InteractiveOptions::default(), (100, 40));
    let idle = |vt: &Vt| !vt.screen().contains("Working");
    type_line(&keys, "first question");
    wait_for("answer one", || vt.screen().contains("Answer one.") && idle(&vt)).await;
    type_line(&keys, "second question");
    wait_for("answer two", || vt.screen().contains("Answer two.") && idle(&vt)).await;

    // Back to the second question, summarizing what came after it with instructions.
    type_line(&keys, "/tree");
    wait_for("the tree picker", || {
        vt.screen().contains("Continue from an earlier message")
    })
    .await;
    keys.send(key(KeyCode::Enter)).unwrap();
    wait_for("the summary question", || vt.screen().contains("Summarize branch?")).await;
    assert!(vt.screen().contains("Summarize with custom prompt"), "{}", vt.screen());
    keys.send(key(KeyCode::Down)).unwrap();
    keys.send(key(KeyCode::Down)).unwrap();
    keys.send(key(KeyCode::Enter)).unwrap();
    wait_for("the instructions", || {
        vt.screen().contains("Custom summarization instructions")
    })
    .await;
    type_line(&keys, "Keep the names");
    wait_for("the move", || vt.screen().contains("Navigated to selected point")).await;
    assert!(vt.screen().contains("Second question explored."), "{}", vt.screen());
    assert!(vt.screen().contains("> second question"), "{}", vt.screen());
    let prompts = prompts.lock().unwrap().clone();
    assert_eq!(prompts.len(), 1);
    // What lies below the target (it is on both branches, as pi counts the common ancestor).
    assert!(
        prompts[0].starts_with("<conversation>\n[Assistant]: Answer two.\n</conversation>"),
        "{}",
        prompts[0]
    );
    assert!(
        prompts[0].ends_with("\n\nAdditional focus: Keep the names"),
        "{}",
        prompts[0]
    );
    // The summary is the new leaf, below the first answer, and in the context.
    let (summary, parent) = app.with_store(|store| {
        let leaf = store.entry(store.leaf_id().unwrap()).unwrap().clone();
        let pi_session_store::EntryKind::BranchSummary(summary) = leaf.kind else {
            panic!("{leaf:?}")
        };
        (summary.summary, leaf.parent_id)
    });
    assert!(summary.starts_with("The user explored a different conversation branch before returning here."));
    let messages = app.session().agent().messages();
    assert_eq!(messages.len(), 3, "first question, its answer, the summary");
    let first_answer = app.with_store(|store| {
        store
            .entries()
            .iter()
            .find(|e| matches!(e.message(), Some(AgentMessage::Assistant(a)) if a.text() == "Answer one."))
            .map(|e| e.id.clone())
    });
    assert_eq!(parent, first_answer);

    keys.send(Event::Key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL)))
        .unwrap();
    keys.send(Event::Key(KeyEvent::new(KeyCode::Char('d'), KeyModifiers::CONTROL)))
        .unwrap();
    assert_eq!(run.await.unwrap(), 0);
}

/// `branchSummary.skipPrompt`: `/tree` moves at once, without asking "Summarize branch?" and
/// without a summary request.
#[tokio::test(flavor = "multi_thread")]
async fn tree_with_skip_prompt_navigates_without_asking() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("Answer one."), faux_assistant_text("Answer two.")]);
    let app = app(dir.path(), &faux, &[]);
    app.set_branch_summary_settings(pi_coding_agent::compaction::BranchSummarySettings {
        skip_prompt: true,
        ..Default::default()
    });
    let (vt, keys, run) = start(&app, InteractiveOptions::default(), (100, 40));
    let idle = |vt: &Vt| !vt.screen().contains("Working");
    type_line(&keys, "first question");
    wait_for("answer one", || vt.screen().contains("Answer one.") && idle(&vt)).await;
    type_line(&keys, "second question");
    wait_for("answer two", || vt.screen().contains("Answer two.") && idle(&vt)).await;

    type_line(&keys, "/tree");
    wait_for("the tree picker", || {
        vt.screen().contains("Continue from an earlier message")
    })
    .await;
    keys.send(key(KeyCode::Up)).unwrap();
    keys.send(key(KeyCode::Enter)).unwrap();
    wait_for("the move", || vt.screen().contains("Navigated to selected point")).await;
    let everything = vt.history().join("\n") + &vt.screen();
    assert!(!everything.contains("Summarize branch?"), "{everything}");
    assert!(vt.screen().contains("> first question"), "{}", vt.screen());
    assert_eq!(app.session().agent().messages().len(), 0);
    assert_eq!(faux.call_count(), 2, "no summary request");
    let branch_summaries = app.with_store(|store| {
        store
            .entries()
            .iter()
            .filter(|e| e.entry_type() == "branch_summary")
            .count()
    });
    assert_eq!(branch_summaries, 0);

    // The editor holds the message moved to: emptied first, or Ctrl+D would not leave.
    keys.send(Event::Key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL)))
        .unwrap();
    keys.send(Event::Key(KeyEvent::new(KeyCode::Char('d'), KeyModifiers::CONTROL)))
        .unwrap();
    let code = tokio::time::timeout(Duration::from_secs(20), run)
        .await
        .expect("Ctrl+D on an empty editor leaves");
    assert_eq!(code.unwrap(), 0);
}

/// pi's hot reload: editing the active custom theme's file recolours the screen; a version that
/// does not parse is reported in pi's words and the colours stay.
#[tokio::test(flavor = "multi_thread")]
async fn editing_the_active_theme_file_recolours_the_screen() {
    use pi_cli::modes::interactive::ThemeWatch;
    use vt100::Color::Rgb;
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let app = app(dir.path(), &faux, &[]);
    let file = dir.path().join("mine.json");
    std::fs::write(&file, crate::themes::theme_json("mine", "#112233")).unwrap();
    let options = InteractiveOptions {
        theme: pi_tui::Theme::load(&file).unwrap(),
        theme_watch: Some(ThemeWatch {
            path: file.clone(),
            mode: pi_tui::ColorMode::TrueColor,
        }),
        ..Default::default()
    };
    let (vt, keys, run) = start(&app, options, (60, 20));
    wait_for("the prompt in the theme's accent", || {
        vt.prompt_color() == Some(Rgb(0x11, 0x22, 0x33))
    })
    .await;

    std::fs::write(&file, crate::themes::theme_json("mine", "#445566")).unwrap();
    wait_for("the prompt in the edited accent", || {
        vt.prompt_color() == Some(Rgb(0x44, 0x55, 0x66))
    })
    .await;

    std::fs::write(&file, "{ \"name\": ").unwrap();
    let error = format!("Failed to parse theme {}: ", file.display());
    wait_for("the parse error", || vt.screen().contains(&error)).await;
    assert_eq!(vt.prompt_color(), Some(Rgb(0x44, 0x55, 0x66)), "{}", vt.screen());

    keys.send(Event::Key(KeyEvent::new(KeyCode::Char('d'), KeyModifiers::CONTROL)))
        .unwrap();
    assert_eq!(run.await.unwrap(), 0);
}

/// `/name`, `/session`, `/export` (HTML and JSONL) and `/copy` with pi's texts.
#[tokio::test(flavor = "multi_thread")]
async fn session_commands_name_session_export_and_copy() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("The **answer** is 42.")]);
    let options = SessionOptions::new(dir.path(), faux.model()).stream_fn(faux.stream_fn());
    let session = AgentSession::new(options).unwrap();
    let store = SessionManager::create(dir.path(), dir.path().join("sessions")).unwrap();
    let file = store.file().unwrap().to_path_buf();
    let app = App::new(
        session,
        store,
        Arc::new(ModelRegistry::builtin()),
        None,
        Arc::new(|_| {}),
    );
    // No display and no clipboard tool: OSC 52 is the clipboard.
    let empty = tempfile::tempdir().unwrap();
    let path = empty.path().display().to_string();
    let options = InteractiveOptions {
        environment: pi_cli::modes::interactive::Environment::from_fn(move |name| {
            (name == "PATH").then(|| path.clone())
        }),
        ..InteractiveOptions::default()
    };
    let (vt, keys, run) = start(&app, options, (100, 60));

    type_line(&keys, "/copy");
    wait_for("nothing to copy", || {
        vt.screen().contains("No agent messages to copy yet.")
    })
    .await;
    type_line(&keys, "/export");
    wait_for("nothing to export", || {
        vt.screen()
            .contains("Failed to export session: Nothing to export yet - start a conversation first")
    })
    .await;
    type_line(&keys, "/name");
    wait_for("the usage", || vt.screen().contains("Usage: /name <name>")).await;

    type_line(&keys, "a question");
    wait_for("the answer", || {
        vt.screen().contains("is 42.") && !vt.screen().contains("Working")
    })
    .await;

    type_line(&keys, "/name  my  session ");
    wait_for("the name set", || vt.screen().contains("Session name set: my  session")).await;
    assert_eq!(
        app.with_store(|s| s.name().map(str::to_owned)).as_deref(),
        Some("my  session")
    );
    type_line(&keys, "/name");
    wait_for("the name shown", || vt.screen().contains("Session name: my  session")).await;

    type_line(&keys, "/session");
    wait_for("the session info", || vt.screen().contains("Session Info")).await;
    let screen = vt.screen();
    // The long path wraps: joined without the rows' padding it reads as one line.
    let joined: String = screen.lines().map(str::trim).collect();
    assert!(joined.contains(&format!("File:{}ID:", file.display())), "{screen}");
    let id = app.with_store(|s| s.id().to_owned());
    for line in [
        "Name: my  session".to_owned(),
        format!("ID: {id}"),
        "User: 1".to_owned(),
        "Assistant: 1".to_owned(),
        "Tool Calls: 0".to_owned(),
        "Tool Results: 0".to_owned(),
        "Total: 2".to_owned(),
    ] {
        assert!(screen.contains(&line), "{line:?} missing:\n{screen}");
    }

    let html = dir.path().join("my export.html");
    type_line(&keys, &format!("/export \"{}\" ignored", html.display()));
    let said = format!("Session exported to: {}", html.display());
    wait_for("the export", || vt.history().concat().contains(&said)).await;
    assert!(
        std::fs::read_to_string(&html)
            .unwrap()
            .contains("<strong>answer</strong>")
    );
    let jsonl = dir.path().join("out/branch.jsonl");
    type_line(&keys, &format!("/export {}", jsonl.display()));
    let said = format!("Session exported to: {}", jsonl.display());
    wait_for("the JSONL export", || vt.history().concat().contains(&said)).await;
    let types: Vec<String> = std::fs::read_to_string(&jsonl)
        .unwrap()
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(types, ["session", "message", "message", "session_info"]);

    type_line(&keys, "/copy");
    wait_for("copied", || {
        vt.screen().contains("Copied last agent message to clipboard")
    })
    .await;
    let raw = String::from_utf8_lossy(&vt.raw.lock().unwrap()).into_owned();
    // base64 of "The **answer** is 42."
    assert!(
        raw.contains("\x1b]52;c;VGhlICoqYW5zd2VyKiogaXMgNDIu\x07"),
        "no OSC 52 sequence"
    );

    keys.send(Event::Key(KeyEvent::new(KeyCode::Char('d'), KeyModifiers::CONTROL)))
        .unwrap();
    assert_eq!(run.await.unwrap(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_v_pastes_the_clipboard_image_path_and_the_model_reads_the_image() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    // A fake `xclip` holding a PNG, found on the clipboard's own PATH.
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let png = super::images::png(12, 6);
    let png_file = dir.path().join("clip.png");
    std::fs::write(&png_file, &png).unwrap();
    let script = format!(
        "#!/bin/sh\ncase \"$*\" in\n  *TARGETS*) printf 'TARGETS\\ntext/plain\\nimage/png\\n' ;;\n  \
*'-t image/png -o'*) cat '{}' ;;\n  *) exit 1 ;;\nesac\n",
        png_file.display()
    );
    std::fs::write(bin.join("xclip"), script).unwrap();
    std::fs::set_permissions(bin.join("xclip"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let clipboard = pi_cli::modes::interactive::Clipboard::with_env([(
        "PATH".to_owned(),
        format!("{}:/usr/bin:/bin", bin.display()),
    )]);

    // The model reads the path it was given; what it then receives is kept.
    let received: Arc<std::sync::Mutex<Vec<pi_agent_core::ContentBlock>>> = Arc::default();
    let faux = FauxModel::new();
    let kept = received.clone();
    faux.set_responses([
        FauxResponse::factory(|request| {
            let text = request
                .context
                .messages
                .iter()
                .rev()
                .find_map(AgentMessage::as_user)
                .unwrap()
                .content
                .text();
            let path = text
                .split_whitespace()
                .find(|word| word.contains("pi-clipboard-"))
                .unwrap_or_default()
                .to_owned();
            faux_assistant_message(vec![faux_tool_call("c1", "read", json!({ "path": path }))])
        }),
        FauxResponse::factory(move |request| {
            if let Some(AgentMessage::ToolResult(result)) = request.context.messages.last() {
                kept.lock().unwrap().extend(result.content.clone());
            }
            faux_assistant_text("A small gradient.")
        }),
    ]);
    let app = app(dir.path(), &faux, &["read"]);
    let options = InteractiveOptions {
        clipboard,
        ..InteractiveOptions::default()
    };
    let (vt, keys, run) = start(&app, options, (100, 30));

    keys.send(Event::Key(KeyEvent::new(KeyCode::Char('v'), KeyModifiers::CONTROL)))
        .unwrap();
    wait_for("the pasted path", || vt.screen().contains("pi-clipboard-")).await;
    type_line(&keys, " what is this?");
    wait_for("the answer", || vt.screen().contains("A small gradient.")).await;
    let received = received.lock().unwrap().clone();
    assert_eq!(received[0].as_text(), Some("Read image file [image/png]"));
    let pi_agent_core::ContentBlock::Image(image) = &received[1] else {
        panic!("the model got no image: {received:?}");
    };
    use base64::Engine;
    assert_eq!(
        base64::engine::general_purpose::STANDARD.decode(&image.data).unwrap(),
        png
    );
    keys.send(Event::Key(KeyEvent::new(KeyCode::Char('d'), KeyModifiers::CONTROL)))
        .unwrap();
    assert_eq!(run.await.unwrap(), 0);
}
