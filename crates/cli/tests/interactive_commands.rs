//! Commands through the interactive mode's loop on a vt100 terminal: extension commands and
//! `ctx.shutdown()`, `/tree` with and without a branch summary, the theme file's hot reload,
//! `/name` / `/session` / `/export` / `/copy`, and Ctrl+V's clipboard image.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use pi_agent_core::AgentMessage;
use pi_agent_core::faux::{FauxModel, FauxResponse, faux_assistant_message, faux_assistant_text, faux_tool_call};
use pi_ai::ModelRegistry;
use pi_cli::modes::interactive::InteractiveOptions;
use pi_coding_agent::App;
use pi_coding_agent::{AgentSession, SessionOptions};
use pi_session_store::SessionManager;
use serde_json::json;

use crate::interactive_loop::{Vt, app, app_streaming, end_of, held, key, start, type_line, wait_for};

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

/// pi runs an extension command typed while the agent streams at once; it is not queued as a
/// steering message for the model.
#[tokio::test(flavor = "multi_thread")]
async fn an_extension_command_typed_while_streaming_runs_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let words: Vec<String> = (1..=40).map(|i| format!("word{i}")).collect();
    let answer = words.join(" ");
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text(answer.clone())]);
    let (allow, allowed) = tokio::sync::watch::channel(end_of(&answer, "word3"));
    let app = app_streaming(dir.path(), &faux, held(&faux, allowed), &[]);
    let guard = pi_test_support::extensions::examples_dir().join("python-guard");
    let extensions = load_process_extensions(&app, vec![guard]).await;
    let options = InteractiveOptions {
        extensions: Some(extensions.clone()),
        ..InteractiveOptions::default()
    };
    let (vt, keys, run) = start(&app, options, (80, 30));
    type_line(&keys, "a question");
    wait_for("the answer streaming", || vt.screen().contains("word2")).await;
    type_line(&keys, "/greet Ada");
    let greeted = || {
        app.with_store(|store| {
            store.entries().iter().any(|entry| {
                matches!(&entry.kind, pi_session_store::EntryKind::Custom { custom_type, .. } if custom_type == "python-guard.greeting")
            })
        })
    };
    // The response is still held: the command ran beside it.
    wait_for("the greeting while the answer streams", greeted).await;
    allow.send(usize::MAX).unwrap();
    wait_for("the whole answer", || vt.screen().contains("word40")).await;
    wait_for("the run's end", || !vt.screen().contains("Working")).await;
    assert_eq!(faux.call_count(), 1, "the command never reached the model");
    let users: Vec<String> = app.user_messages().into_iter().map(|m| m.text).collect();
    assert_eq!(users, ["a question"]);
    keys.send(Event::Key(KeyEvent::new(KeyCode::Char('d'), KeyModifiers::CONTROL)))
        .unwrap();
    assert_eq!(run.await.unwrap(), 0);
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
    wait_for("the command's end", || !vt.screen().contains("Working")).await;
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

/// `/share` as pi: without `gh`, pi's hint; with a `gh` that is logged in, the session's HTML as
/// a secret gist and pi's viewer URL.
#[tokio::test(flavor = "multi_thread")]
async fn share_makes_a_secret_gist_of_the_export_with_gh() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_text("Shared answer.")]);
    let options = SessionOptions::new(dir.path(), faux.model()).stream_fn(faux.stream_fn());
    let store = SessionManager::create(dir.path(), dir.path().join("sessions")).unwrap();
    let app = App::new(
        AgentSession::new(options).unwrap(),
        store,
        Arc::new(ModelRegistry::builtin()),
        None,
        Arc::new(|_| {}),
    );
    let bin = tempfile::tempdir().unwrap();
    let path = bin.path().display().to_string();
    let env_path = path.clone();
    let options = InteractiveOptions {
        environment: pi_cli::modes::interactive::Environment::from_fn(move |name| {
            (name == "PATH").then(|| env_path.clone())
        }),
        ..InteractiveOptions::default()
    };
    let (vt, keys, run) = start(&app, options, (100, 40));
    type_line(&keys, "a question");
    wait_for("the answer", || vt.screen().contains("Shared answer.")).await;

    type_line(&keys, "/share");
    wait_for("no gh", || {
        vt.screen()
            .contains("GitHub CLI (gh) is not installed. Install it from https://cli.github.com/")
    })
    .await;

    // A gh that is not logged in.
    let gh = bin.path().join("gh");
    std::fs::write(&gh, "#!/bin/sh\nexit 1\n").unwrap();
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
    type_line(&keys, "/share");
    wait_for("gh logged out", || {
        vt.screen()
            .contains("GitHub CLI is not logged in. Run 'gh auth login' first.")
    })
    .await;

    // A gh that is logged in and checks what it is asked to upload.
    let seen = bin.path().join("uploaded.html");
    std::fs::write(
        &gh,
        format!(
            "#!/bin/sh\nif [ \"$1\" = auth ]; then exit 0; fi\n[ \"$1 $2 $3\" = \"gist create --public=false\" ] || exit 3\n/bin/cp \"$4\" {}\necho https://gist.github.com/ada/abc123\n",
            seen.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
    type_line(&keys, "/share");
    wait_for("the share URL", || {
        let screen = vt.screen();
        screen.contains("Share URL: https://pi.dev/session/#abc123")
            && screen.contains("Gist: https://gist.github.com/ada/abc123")
    })
    .await;
    let uploaded = std::fs::read_to_string(&seen).unwrap();
    assert!(uploaded.contains("Shared answer."), "the export was uploaded");
    assert!(
        uploaded.starts_with("<!DOCTYPE html>"),
        "{}",
        &uploaded[..40.min(uploaded.len())]
    );

    keys.send(Event::Key(KeyEvent::new(KeyCode::Char('d'), KeyModifiers::CONTROL)))
        .unwrap();
    assert_eq!(run.await.unwrap(), 0);
}
