//! The editor's completion through the interactive loop on a vt100 terminal: an unknown
//! `/command` is reported and not sent, the `/` menu (built-ins, templates, skills) with its
//! filtering, Tab and Enter, `/model`'s argument completion, `@` fuzzy file search respecting
//! `.gitignore`, Tab path completion, and `/import`.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use pi_agent_core::faux::{FauxModel, faux_assistant_text};
use pi_cli::modes::interactive::InteractiveOptions;

use crate::interactive_loop::{Vt, app, key, start, type_line, wait_for};

fn type_text(keys: &tokio::sync::mpsc::UnboundedSender<Event>, text: &str) {
    for c in text.chars() {
        keys.send(key(KeyCode::Char(c))).unwrap();
    }
}

fn ctrl(c: char) -> Event {
    Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

/// The screen's rows from the editor's top border down, without the footer (its path differs
/// between runs): the editor and the menu under it.
fn editor_and_menu(vt: &Vt) -> String {
    let screen = vt.screen();
    let rows: Vec<&str> = screen.lines().collect();
    let Some(top) = rows.iter().position(|r| r.starts_with("────")) else {
        return screen;
    };
    let bottom = rows[top + 1..]
        .iter()
        .position(|r| r.starts_with("────"))
        .map_or(rows.len(), |i| top + 1 + i);
    // The menu: the indented rows after the bottom border, up to the footer (the working
    // directory, then the usage line).
    let menu = rows[bottom + 1..]
        .iter()
        .take_while(|r| r.starts_with(' ') && !r.starts_with(" /") && !r.contains("↑0"));
    rows[top..=bottom.min(rows.len() - 1)]
        .iter()
        .chain(menu)
        .map(|r| r.trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

/// pi 0.73.1 sends `/frobnicate` to the model as text; here a `/word` that names no command,
/// template, skill or extension command is reported and stays in the editor (a deliberate
/// difference, docs/differences-from-pi.md). Paths and text starting with a space still go.
#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_command_is_reported_and_never_sent() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("About hosts."), faux_assistant_text("About tmp.")]);
    let app = app(dir.path(), &faux, &[]);
    let (vt, keys, run) = start(&app, InteractiveOptions::default(), (100, 30));
    type_text(&keys, "/frobnicate now");
    // The menu has no match for it; Esc would close one anyway.
    keys.send(key(KeyCode::Enter)).unwrap();
    wait_for("the report", || vt.screen().contains("Unknown command: /frobnicate")).await;
    assert!(
        vt.screen().contains("> /frobnicate now"),
        "kept in the editor:\n{}",
        vt.screen()
    );
    assert_eq!(faux.call_count(), 0);
    keys.send(ctrl('u')).unwrap();

    type_line(&keys, "/etc/hosts is odd");
    wait_for("the answer about hosts", || vt.screen().contains("About hosts.")).await;
    wait_for("the run's end", || !vt.screen().contains("Working")).await;
    type_line(&keys, " /tmp is full");
    wait_for("the answer about tmp", || vt.screen().contains("About tmp.")).await;
    let sent: Vec<String> = app.user_messages().into_iter().map(|m| m.text).collect();
    assert_eq!(sent, ["/etc/hosts is odd", " /tmp is full"]);
    keys.send(ctrl('d')).unwrap();
    assert_eq!(run.await.unwrap(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_slash_menu_lists_commands_templates_and_skills_and_completes() {
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
    let app = app(&project, &faux, &[]);
    app.session().set_resources(Arc::new(resources));
    let (vt, keys, run) = start(&app, InteractiveOptions::default(), (100, 30));

    type_text(&keys, "/");
    wait_for("the menu", || vt.screen().contains("Select model (opens selector UI)")).await;
    insta::assert_snapshot!("slash_menu", editor_and_menu(&vt));

    // Typing filters (fuzzy, best first); the templates and skills are in the menu too.
    type_text(&keys, "re");
    // The frame of the last key: the editor shows all of `/re` (the menu of `/r` lists the template too).
    wait_for("the filtered menu", || {
        let shown = editor_and_menu(&vt);
        shown.lines().any(|line| line.trim_end() == "> /re") && shown.contains("<file> — [p] Review a file")
    })
    .await;
    insta::assert_snapshot!("slash_menu_re", editor_and_menu(&vt));
    keys.send(ctrl('u')).unwrap();
    type_text(&keys, "/skill");
    wait_for("the skill", || vt.screen().contains("skill:hello")).await;
    assert!(vt.screen().contains("[p] Greets."), "{}", vt.screen());

    // Tab completes the selected name with a space, and the menu closes.
    keys.send(ctrl('u')).unwrap();
    type_text(&keys, "/sess");
    wait_for("session in the menu", || {
        vt.screen().contains("Show session info and stats")
    })
    .await;
    keys.send(key(KeyCode::Tab)).unwrap();
    wait_for("the completed name", || vt.screen().contains("> /session ")).await;
    wait_for("the menu closed", || {
        !vt.screen().contains("Show session info and stats")
    })
    .await;

    // Enter on a name completes it and runs it.
    keys.send(ctrl('u')).unwrap();
    type_text(&keys, "/sess");
    wait_for("session in the menu", || {
        vt.screen().contains("Show session info and stats")
    })
    .await;
    keys.send(key(KeyCode::Enter)).unwrap();
    wait_for("the session info", || vt.screen().contains("Session Info")).await;

    // Down moves the selection; Esc closes the menu and keeps the text.
    type_text(&keys, "/");
    wait_for("the menu", || vt.screen().contains("Select model (opens selector UI)")).await;
    keys.send(key(KeyCode::Down)).unwrap();
    keys.send(key(KeyCode::Tab)).unwrap();
    wait_for("the second command", || vt.screen().contains("> /export ")).await;
    keys.send(ctrl('u')).unwrap();
    type_text(&keys, "/");
    wait_for("the menu", || vt.screen().contains("Select model (opens selector UI)")).await;
    keys.send(key(KeyCode::Esc)).unwrap();
    wait_for("the menu closed", || {
        !vt.screen().contains("Select model (opens selector UI)")
    })
    .await;
    assert_eq!(faux.call_count(), 0);
    keys.send(ctrl('u')).unwrap();
    keys.send(ctrl('d')).unwrap();
    assert_eq!(run.await.unwrap(), 0);
}

/// `/model <words>` completes the models pi offers (here: the scoped ones), every word matched
/// against `id provider`; choosing one and pressing Enter selects it.
#[tokio::test(flavor = "multi_thread")]
async fn model_arguments_complete_the_scoped_models() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let app = app(dir.path(), &faux, &[]);
    let registry = pi_ai::ModelRegistry::builtin();
    let scoped: Vec<pi_coding_agent::ScopedModel> = registry
        .all()
        .iter()
        .filter(|m| {
            (m.provider == "openai" && m.id == "gpt-4o") || (m.provider == "anthropic" && m.id == "claude-sonnet-4-5")
        })
        .map(|m| pi_coding_agent::ScopedModel {
            model: m.clone(),
            thinking: None,
        })
        .collect();
    assert_eq!(scoped.len(), 2, "the built-in registry has both models");
    app.set_scoped_models(scoped);
    let (vt, keys, run) = start(&app, InteractiveOptions::default(), (100, 30));
    type_text(&keys, "/model sonnet");
    // The whole search typed (the menu of each frame is the one for its text).
    wait_for("the model completion", || {
        vt.screen().contains("> /model sonnet") && vt.screen().contains("claude-sonnet-4-5")
    })
    .await;
    assert!(!vt.screen().contains("gpt-4o"), "{}", vt.screen());
    keys.send(key(KeyCode::Tab)).unwrap();
    wait_for("the completed model", || {
        vt.screen().contains("> /model anthropic/claude-sonnet-4-5")
    })
    .await;
    keys.send(key(KeyCode::Enter)).unwrap();
    wait_for("the model set", || vt.screen().contains("Model: claude-sonnet-4-5")).await;
    assert_eq!(app.session().agent().model().id, "claude-sonnet-4-5");
    keys.send(ctrl('d')).unwrap();
    assert_eq!(run.await.unwrap(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn at_searches_the_files_fuzzily_and_respects_gitignore() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("target/debug")).unwrap();
    std::fs::write(root.join("src/main.rs"), "").unwrap();
    std::fs::write(root.join("src/model.rs"), "").unwrap();
    std::fs::write(root.join("target/debug/main.d"), "").unwrap();
    std::fs::write(root.join("README.md"), "").unwrap();
    let faux = FauxModel::new();
    let app = app(root, &faux, &[]);
    let (vt, keys, run) = start(&app, InteractiveOptions::default(), (100, 30));
    type_text(&keys, "look at @mai");
    // The index is walked in the background; its end refreshes the menu.
    wait_for("the file menu", || {
        vt.screen().contains("> look at @mai") && vt.screen().contains("src/main.rs")
    })
    .await;
    insta::assert_snapshot!("at_menu", editor_and_menu(&vt));
    assert!(!vt.screen().contains("main.d"), "ignored:\n{}", vt.screen());
    keys.send(key(KeyCode::Tab)).unwrap();
    wait_for("the completed path", || vt.screen().contains("> look at @src/main.rs ")).await;

    // Tab on a plain path lists its directory; one match is put in at once.
    keys.send(ctrl('u')).unwrap();
    type_text(&keys, "cat src/mo");
    keys.send(key(KeyCode::Tab)).unwrap();
    wait_for("the completed file", || vt.screen().contains("> cat src/model.rs")).await;
    // Several: a menu, directories first.
    keys.send(ctrl('u')).unwrap();
    type_text(&keys, "ls ");
    keys.send(key(KeyCode::Tab)).unwrap();
    wait_for("the directory menu", || vt.screen().contains("README.md")).await;
    insta::assert_snapshot!("tab_menu", editor_and_menu(&vt));
    keys.send(key(KeyCode::Esc)).unwrap();
    keys.send(ctrl('u')).unwrap();
    keys.send(ctrl('d')).unwrap();
    assert_eq!(run.await.unwrap(), 0);
}

/// `/import <file>` asks pi's question, then replaces the session with a copy of the file in the
/// session directory (`Session imported from: <file>`); `n` cancels.
#[tokio::test(flavor = "multi_thread")]
async fn import_replaces_the_session_with_a_jsonl_file() {
    use pi_ai::ModelRegistry;
    use pi_coding_agent::{AgentSession, App, SessionOptions};
    use pi_session_store::SessionManager;
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("Imported answer.")]);
    let options = SessionOptions::new(dir.path(), faux.model()).stream_fn(faux.stream_fn());
    let session = AgentSession::new(options).unwrap();
    let store = SessionManager::create(dir.path(), dir.path().join("sessions")).unwrap();
    let app = App::new(
        session,
        store,
        Arc::new(ModelRegistry::builtin()),
        None,
        Arc::new(|_| {}),
    );
    let (vt, keys, run) = start(&app, InteractiveOptions::default(), (100, 40));
    type_line(&keys, "remember this question");
    wait_for("the answer", || vt.screen().contains("Imported answer.")).await;
    wait_for("the run's end", || !vt.screen().contains("Working")).await;
    let saved = dir.path().join("saved.jsonl");
    type_line(&keys, &format!("/export {}", saved.display()));
    wait_for("the export", || saved.exists()).await;
    type_line(&keys, "/new");
    wait_for("the new session", || vt.screen().contains("New session started")).await;
    assert!(app.session().agent().messages().is_empty());

    let question = format!("Replace current session with {}?", saved.display());
    type_line(&keys, &format!("/import {}", saved.display()));
    wait_for("the question", || vt.screen().contains(&question)).await;
    keys.send(key(KeyCode::Char('n'))).unwrap();
    wait_for("the cancel", || vt.screen().contains("Import cancelled")).await;
    type_line(&keys, &format!("/import {}", saved.display()));
    wait_for("the question again", || vt.screen().matches(&question).count() == 1).await;
    keys.send(key(KeyCode::Char('y'))).unwrap();
    let imported = format!("Session imported from: {}", saved.display());
    wait_for("the import", || vt.screen().contains(&imported)).await;
    let users: Vec<String> = app.user_messages().into_iter().map(|m| m.text).collect();
    assert_eq!(users, ["remember this question"]);
    let file = app.session_file().unwrap();
    assert_eq!(file.file_name().unwrap(), "saved.jsonl");
    assert!(file.starts_with(dir.path().join("sessions")), "{}", file.display());
    type_line(&keys, "/import");
    wait_for("the usage", || vt.screen().contains("Usage: /import <path.jsonl>")).await;
    keys.send(ctrl('u')).unwrap();
    keys.send(ctrl('d')).unwrap();
    assert_eq!(run.await.unwrap(), 0);
}
