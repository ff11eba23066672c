//! The application's keys through the interactive loop on a vt100 terminal: Ctrl+P /
//! Shift+Ctrl+P model cycling over the scoped models, Shift+Tab thinking levels, Ctrl+L's picker
//! of the models with credentials, `!cmd` / `!!cmd`, Esc twice, Ctrl+T and a `keybindings.json`
//! remapping.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use pi_agent_core::AgentMessage;
use pi_agent_core::faux::{FauxModel, faux_assistant_message, faux_text, faux_thinking};
use pi_ai::ModelRegistry;
use pi_cli::modes::interactive::{InteractiveOptions, Keybindings};
use pi_coding_agent::{AgentSession, App, ScopedModel, SessionOptions};
use pi_session_store::SessionManager;

use crate::interactive_loop::{key, start, type_line, wait_for};

fn with(code: KeyCode, modifiers: KeyModifiers) -> Event {
    Event::Key(KeyEvent::new(code, modifiers))
}

/// An app whose registry has keys for Anthropic and OpenAI only.
fn app_with_keys(dir: &Path, faux: &FauxModel) -> App {
    let options = SessionOptions::new(dir, faux.model()).stream_fn(faux.stream_fn());
    let session = AgentSession::new(options).unwrap();
    let registry = ModelRegistry::builtin()
        .with_env(|name| matches!(name, "ANTHROPIC_API_KEY" | "OPENAI_API_KEY").then(|| "test-key".to_owned()));
    App::new(
        session,
        SessionManager::in_memory(dir),
        Arc::new(registry),
        None,
        Arc::new(|_| {}),
    )
}

fn scope(app: &App, models: &[(&str, &str)]) {
    let scoped = models
        .iter()
        .map(|(provider, id)| ScopedModel {
            model: app.registry().find(provider, id).unwrap().clone(),
            thinking: None,
        })
        .collect();
    app.set_scoped_models(scoped);
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_p_cycles_the_scoped_models_and_shift_tab_the_thinking_levels() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let app = app_with_keys(dir.path(), &faux);
    scope(&app, &[("anthropic", "claude-sonnet-4-5"), ("openai", "gpt-4o")]);
    let (vt, keys, run) = start(&app, InteractiveOptions::default(), (100, 30));
    let model = || app.session().agent().model().id;

    // The faux model cannot reason.
    keys.send(with(KeyCode::BackTab, KeyModifiers::SHIFT)).unwrap();
    wait_for("no thinking", || {
        vt.screen().contains("Current model does not support thinking")
    })
    .await;

    // Not in the scope: the cycle starts after its first model.
    keys.send(with(KeyCode::Char('p'), KeyModifiers::CONTROL)).unwrap();
    wait_for("gpt-4o", || model() == "gpt-4o").await;
    wait_for("the notice", || vt.screen().contains("Switched to GPT-4o")).await;
    keys.send(with(KeyCode::Char('p'), KeyModifiers::CONTROL)).unwrap();
    wait_for("sonnet", || model() == "claude-sonnet-4-5").await;
    // Shift+Ctrl+P goes back.
    keys.send(with(KeyCode::Char('p'), KeyModifiers::CONTROL | KeyModifiers::SHIFT))
        .unwrap();
    wait_for("gpt-4o again", || model() == "gpt-4o").await;
    keys.send(with(KeyCode::Char('P'), KeyModifiers::CONTROL)).unwrap();
    wait_for("sonnet again", || model() == "claude-sonnet-4-5").await;

    // Sonnet reasons: Shift+Tab steps through its levels.
    let before = app.session().agent().thinking_level();
    keys.send(with(KeyCode::BackTab, KeyModifiers::SHIFT)).unwrap();
    wait_for("a new level", || app.session().agent().thinking_level() != before).await;
    wait_for("the level notice", || vt.screen().contains("Thinking level: ")).await;

    keys.send(with(KeyCode::Char('d'), KeyModifiers::CONTROL)).unwrap();
    assert_eq!(run.await.unwrap(), 0);
}

/// Ctrl+L opens the model picker with the models whose provider has credentials only (pi's
/// `getAvailable`); typing searches it.
#[tokio::test(flavor = "multi_thread")]
async fn ctrl_l_lists_only_models_with_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let app = app_with_keys(dir.path(), &faux);
    let (vt, keys, run) = start(&app, InteractiveOptions::default(), (100, 30));
    keys.send(with(KeyCode::Char('l'), KeyModifiers::CONTROL)).unwrap();
    wait_for("the picker", || vt.screen().contains("Select a model")).await;
    for c in "gemini".chars() {
        keys.send(key(KeyCode::Char(c))).unwrap();
    }
    // No Google key: no Gemini model, whatever the search.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(!vt.screen().contains("google/"), "{}", vt.screen());
    for _ in 0..6 {
        keys.send(key(KeyCode::Backspace)).unwrap();
    }
    for c in "sonnet-4-5".chars() {
        keys.send(key(KeyCode::Char(c))).unwrap();
    }
    wait_for("sonnet in the picker", || {
        vt.screen().contains("anthropic/claude-sonnet-4-5")
    })
    .await;
    keys.send(key(KeyCode::Enter)).unwrap();
    wait_for("the model", || app.session().agent().model().id == "claude-sonnet-4-5").await;
    keys.send(with(KeyCode::Char('d'), KeyModifiers::CONTROL)).unwrap();
    assert_eq!(run.await.unwrap(), 0);
}

/// `!cmd` runs the command and records a `bashExecution` message for the model's context;
/// `!!cmd` records it marked `excludeFromContext`.
#[tokio::test(flavor = "multi_thread")]
async fn bang_runs_bash_and_double_bang_keeps_it_out_of_the_context() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let app = app_with_keys(dir.path(), &faux);
    let (vt, keys, run) = start(&app, InteractiveOptions::default(), (100, 30));
    type_line(&keys, "!echo visible-output");
    let ran = tokio::time::timeout(std::time::Duration::from_secs(20), async {
        while !(vt.screen().contains("$ echo visible-output") && vt.screen().matches("visible-output").count() >= 2) {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(ran.is_ok(), "the output:\n{}", vt.screen());
    type_line(&keys, "!!echo hidden-output; exit 3");
    wait_for("the second output", || vt.screen().contains("(exit 3)")).await;
    assert!(vt.screen().contains("(not sent to the model)"), "{}", vt.screen());
    let bash: Vec<serde_json::Map<String, serde_json::Value>> = app
        .session()
        .agent()
        .messages()
        .into_iter()
        .filter_map(|m| match m {
            AgentMessage::Custom(custom) if custom.role == "bashExecution" => Some(custom.fields),
            _ => None,
        })
        .collect();
    assert_eq!(bash.len(), 2);
    assert_eq!(bash[0]["command"], "echo visible-output");
    assert_eq!(bash[0]["output"], "visible-output\n");
    assert_eq!(bash[0]["exitCode"], 0);
    assert!(bash[0].get("excludeFromContext").is_none());
    assert_eq!(bash[1]["exitCode"], 3);
    assert_eq!(bash[1]["excludeFromContext"], true);
    assert_eq!(faux.call_count(), 0, "nothing was sent to the model");
    keys.send(with(KeyCode::Char('d'), KeyModifiers::CONTROL)).unwrap();
    assert_eq!(run.await.unwrap(), 0);
}

/// Esc twice on an empty editor opens `/tree` (pi's `doubleEscapeAction` default); a remapped
/// `app.model.select` answers its new key only; Ctrl+T collapses thinking to `Thinking...`.
#[tokio::test(flavor = "multi_thread")]
async fn double_escape_remapped_keys_and_the_thinking_toggle() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    faux.set_responses([faux_assistant_message(vec![
        faux_thinking("secret deliberation"),
        faux_text("Visible answer."),
    ])]);
    let app = app_with_keys(dir.path(), &faux);
    let (keybindings, warnings) = Keybindings::from_json(r#"{"app.model.select": "f2"}"#);
    assert!(warnings.is_empty());
    let options = InteractiveOptions {
        keybindings,
        ..InteractiveOptions::default()
    };
    let (vt, keys, run) = start(&app, options, (100, 30));
    keys.send(key(KeyCode::Esc)).unwrap();
    keys.send(key(KeyCode::Esc)).unwrap();
    wait_for("the tree", || vt.screen().contains("No messages yet.")).await;

    keys.send(with(KeyCode::Char('l'), KeyModifiers::CONTROL)).unwrap();
    keys.send(key(KeyCode::F(2))).unwrap();
    wait_for("the picker on F2", || vt.screen().contains("Select a model")).await;
    keys.send(key(KeyCode::Esc)).unwrap();
    wait_for("the picker closed", || !vt.screen().contains("Select a model")).await;

    keys.send(with(KeyCode::Char('t'), KeyModifiers::CONTROL)).unwrap();
    type_line(&keys, "think");
    wait_for("the answer", || vt.screen().contains("Visible answer.")).await;
    assert!(vt.screen().contains("Thinking..."), "{}", vt.screen());
    assert!(!vt.screen().contains("secret deliberation"), "{}", vt.screen());
    keys.send(with(KeyCode::Char('d'), KeyModifiers::CONTROL)).unwrap();
    assert_eq!(run.await.unwrap(), 0);
}
