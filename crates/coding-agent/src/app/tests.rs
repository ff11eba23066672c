//! Unit tests of [`App`](super::App): saved choices and the session id of model calls.

use super::*;
use crate::session::SessionOptions;
use pi_agent_core::faux::FauxModel;

const MODELS: &str = r#"{"providers": {"local": {"baseUrl": "http://127.0.0.1:1/v1", "api": "openai-completions",
    "apiKey": "k", "models": [{"id": "plain"}, {"id": "think", "reasoning": true}]}}}"#;

/// An app on a faux model that cannot reason, saving its choices to `dir/settings.json`.
fn app(dir: &Path) -> (App, ModelRegistry) {
    let faux = FauxModel::new();
    let session = AgentSession::new(SessionOptions::new(dir, faux.model()).stream_fn(faux.stream_fn())).unwrap();
    let registry = ModelRegistry::from_json(MODELS, "models.json").unwrap();
    let app = App::new(
        session,
        SessionManager::in_memory(dir),
        Arc::new(registry.clone()),
        None,
        Arc::new(|warning| panic!("{warning}")),
    );
    app.save_choices_to(dir.join("settings.json"), None);
    (app, registry)
}

fn saved(dir: &Path) -> Value {
    std::fs::read_to_string(dir.join("settings.json"))
        .map(|text| serde_json::from_str(&text).unwrap())
        .unwrap_or(Value::Null)
}

#[test]
fn model_and_thinking_choices_are_saved_as_pis_defaults() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("settings.json"), r#"{"theme": "dark"}"#).unwrap();
    let (app, registry) = app(dir.path());
    // Switching from a model that cannot reason to one that can starts it at pi's `medium`.
    app.set_model(registry.find("local", "think").unwrap().clone());
    assert_eq!(app.session().agent().thinking_level(), ThinkingLevel::Medium);
    assert_eq!(
        saved(dir.path()),
        json!({"theme": "dark", "defaultProvider": "local", "defaultModel": "think", "defaultThinkingLevel": "medium"})
    );
    // `xhigh` is not offered without a `thinkingLevelMap` naming it: it becomes `high`.
    assert_eq!(app.set_thinking_level(ThinkingLevel::Xhigh), ThinkingLevel::High);
    assert_eq!(saved(dir.path())["defaultThinkingLevel"], "high");
    // A model that cannot reason is at `off`, which is not saved as the default level.
    app.set_model(registry.find("local", "plain").unwrap().clone());
    assert_eq!(app.session().agent().thinking_level(), ThinkingLevel::Off);
    assert_eq!(
        saved(dir.path()),
        json!({"theme": "dark", "defaultProvider": "local", "defaultModel": "plain", "defaultThinkingLevel": "high"})
    );
    // Back to the reasoning model: the saved default level comes back.
    app.set_model(registry.find("local", "think").unwrap().clone());
    assert_eq!(app.session().agent().thinking_level(), ThinkingLevel::High);
    let levels: Vec<String> = app
        .with_store(|store| store.entries().to_vec())
        .into_iter()
        .filter_map(|entry| match entry.kind {
            EntryKind::ThinkingLevelChange { thinking_level } => Some(thinking_level),
            _ => None,
        })
        .collect();
    assert_eq!(levels, ["medium", "high", "off", "high"], "one entry per change");
}

#[test]
fn a_level_given_with_the_model_replaces_the_carried_one_in_one_change() {
    let dir = tempfile::tempdir().unwrap();
    let (app, registry) = app(dir.path());
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    let _subscription = app.session().subscribe(move |event| {
        if let SessionEvent::ThinkingLevelChanged(level) = event {
            seen.lock().unwrap().push(*level);
        }
    });
    // Without the level, the switch would carry `medium` over first (see above).
    app.set_model_and_thinking(
        registry.find("local", "think").unwrap().clone(),
        Some(ThinkingLevel::Low),
    );
    assert_eq!(app.session().agent().thinking_level(), ThinkingLevel::Low);
    assert_eq!(*events.lock().unwrap(), [ThinkingLevel::Low]);
    assert_eq!(saved(dir.path())["defaultThinkingLevel"], "low");
    // Without one, the switch from the model that cannot reason brings back the saved default.
    app.set_model_and_thinking(registry.find("local", "plain").unwrap().clone(), None);
    app.set_model_and_thinking(registry.find("local", "think").unwrap().clone(), None);
    assert_eq!(app.session().agent().thinking_level(), ThinkingLevel::Low);
    let levels: Vec<String> = app
        .with_store(|store| store.entries().to_vec())
        .into_iter()
        .filter_map(|entry| match entry.kind {
            EntryKind::ThinkingLevelChange { thinking_level } => Some(thinking_level),
            _ => None,
        })
        .collect();
    assert_eq!(levels, ["low", "off", "low"]);
}

#[tokio::test]
async fn model_calls_carry_the_session_id() {
    let dir = tempfile::tempdir().unwrap();
    let faux = FauxModel::new();
    let session = AgentSession::new(SessionOptions::new(dir.path(), faux.model()).stream_fn(faux.stream_fn())).unwrap();
    let app = App::new(
        session,
        SessionManager::in_memory(dir.path()),
        Arc::new(ModelRegistry::builtin()),
        None,
        Arc::new(|warning| panic!("{warning}")),
    );
    let id = || app.with_store(|store| store.header().id.clone());
    faux.set_responses([
        pi_agent_core::faux::faux_assistant_text("a"),
        pi_agent_core::faux::faux_assistant_text("b"),
    ]);
    app.session().prompt("one").await.unwrap();
    let first = id();
    app.new_session(None).await.unwrap();
    app.session().prompt("two").await.unwrap();
    let sent: Vec<Option<String>> = faux.calls().into_iter().map(|call| call.session_id).collect();
    assert_eq!(sent, [Some(first), Some(id())]);
    assert_ne!(sent[0], sent[1]);
}

#[test]
fn nothing_is_saved_without_a_settings_file_or_a_change() {
    let dir = tempfile::tempdir().unwrap();
    let (app, _) = app(dir.path());
    assert_eq!(app.set_thinking_level(ThinkingLevel::High), ThinkingLevel::Off);
    assert_eq!(
        saved(dir.path()),
        Value::Null,
        "off for a model that cannot reason is not a choice"
    );
}

/// A choice saved on the runtime is in the file once `wait_for_saved_choices` returns, however
/// long the write takes (here: another writer holds the settings file). Without the wait, a
/// process that ends right after an RPC `set_model` lost it (the conformance flake of
/// `rpc-models` / `rpc-thinking`).
#[tokio::test(flavor = "multi_thread")]
async fn the_saved_choices_are_written_before_the_wait_returns() {
    let dir = tempfile::tempdir().unwrap();
    let (app, registry) = app(dir.path());
    let (held, holding) = std::sync::mpsc::channel();
    let release = std::thread::spawn(move || {
        let _busy = SETTINGS_WRITE.lock().unwrap();
        held.send(()).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
    });
    holding.recv().unwrap();
    app.set_model(registry.find("local", "think").unwrap().clone());
    app.wait_for_saved_choices().await;
    assert_eq!(saved(dir.path())["defaultModel"], "think");
    release.join().unwrap();
}
