//! The slash commands about the session itself, with pi's texts: `/session`, `/name`, `/export`,
//! `/share`, `/copy`, `/model`, `/clone`, `/hotkeys`.

use std::path::Path;

use pi_coding_agent::export::export_branch_jsonl;
use pi_coding_agent::{App, grouped};

use super::clipboard;
use super::commands::path_argument;
use super::keybindings::{AppAction, Keybindings};
use super::screen::{PickerKind, Screen};
use super::transcript::NoticeKind;
use pi_tui::SelectItem;

/// `/session`: pi's "Session Info" — name, file, id, message counts, tokens and cost.
pub(super) fn session_info(app: &App) -> String {
    let stats = app.stats();
    let name = app.with_store(|store| store.name().map(str::to_owned));
    let file = app
        .session_file()
        .map_or_else(|| "In-memory".to_owned(), |f| f.display().to_string());
    let id = app.with_store(|store| store.id().to_owned());
    let mut info = String::from("Session Info\n\n");
    if let Some(name) = name {
        info.push_str(&format!("Name: {name}\n"));
    }
    info.push_str(&format!("File: {file}\nID: {id}\n\n"));
    info.push_str(&format!(
        "Messages\nUser: {}\nAssistant: {}\nTool Calls: {}\nTool Results: {}\nTotal: {}\n\n",
        stats.user_messages, stats.assistant_messages, stats.tool_calls, stats.tool_results, stats.total_messages
    ));
    info.push_str(&format!(
        "Tokens\nInput: {}\nOutput: {}\n",
        grouped(stats.input),
        grouped(stats.output)
    ));
    if stats.cache_read > 0 {
        info.push_str(&format!("Cache Read: {}\n", grouped(stats.cache_read)));
    }
    if stats.cache_write > 0 {
        info.push_str(&format!("Cache Write: {}\n", grouped(stats.cache_write)));
    }
    let total = stats.input + stats.output + stats.cache_read + stats.cache_write;
    info.push_str(&format!("Total: {}", grouped(total)));
    if stats.cost > 0.0 {
        info.push_str(&format!("\n\nCost\nTotal: {:.4}", stats.cost));
    }
    info
}

/// `/name [name]`: names the session (`Session name set: …`), or shows the name.
pub(super) fn name(screen: &mut Screen, app: &App, name: &str) {
    let name = name.trim();
    if name.is_empty() {
        match app.with_store(|store| store.name().map(str::to_owned)) {
            Some(current) => screen.notice(format!("Session name: {current}"), NoticeKind::Info),
            None => screen.notice("Usage: /name <name>", NoticeKind::Warning),
        }
        return;
    }
    app.set_session_name(name);
    screen.notice(format!("Session name set: {name}"), NoticeKind::Info);
}

/// `/export [file]`: the session as HTML (pi's `pi-session-<file>.html` without a file), or the
/// current branch as a session file when the file ends in `.jsonl`.
pub(super) async fn export(screen: &mut Screen, app: &App, rest: &str) {
    let output = path_argument(rest).map(Path::new);
    let result = match output {
        Some(path) if path.to_string_lossy().ends_with(".jsonl") => {
            app.with_store(|store| export_branch_jsonl(store, path))
        }
        // pi exports with the theme it shows.
        _ => {
            app.export_html(output, &crate::themes::export_colors(screen.theme()))
                .await
        }
    };
    match result {
        Ok(path) => screen.notice(format!("Session exported to: {}", path.display()), NoticeKind::Info),
        Err(error) => screen.notice(format!("Failed to export session: {error}"), NoticeKind::Error),
    }
}

/// pi's viewer of shared sessions (`PI_SHARE_VIEWER_URL` replaces it).
const SHARE_VIEWER_URL: &str = "https://pi.dev/session/";

/// `/share`: the session's HTML export (with the theme shown) as a secret gist through the GitHub
/// CLI, as pi does: `gh auth status`, then `gh gist create --public=false <tmp>/session.html`;
/// pi's viewer URL and the gist's. `env` gives `PATH` and `PI_SHARE_VIEWER_URL`.
pub(super) async fn share(screen: &mut Screen, app: &App, env: &clipboard::Environment) {
    let gh = |args: &[&str]| {
        let mut command = tokio::process::Command::new("gh");
        command.args(args).stdin(std::process::Stdio::null()).kill_on_drop(true);
        if let Some(path) = env.var("PATH") {
            command.env("PATH", path);
        }
        command
    };
    match gh(&["auth", "status"]).output().await {
        Err(_) => {
            let text = "GitHub CLI (gh) is not installed. Install it from https://cli.github.com/";
            return screen.notice(text, NoticeKind::Error);
        }
        Ok(status) if !status.status.success() => {
            let text = "GitHub CLI is not logged in. Run 'gh auth login' first.";
            return screen.notice(text, NoticeKind::Error);
        }
        Ok(_) => {}
    }
    let file = std::env::temp_dir().join("session.html");
    if let Err(error) = app
        .export_html(Some(&file), &crate::themes::export_colors(screen.theme()))
        .await
    {
        return screen.notice(format!("Failed to export session: {error}"), NoticeKind::Error);
    }
    let file_arg = file.display().to_string();
    let created = gh(&["gist", "create", "--public=false", &file_arg]).output().await;
    let _ = std::fs::remove_file(&file);
    let output = match created {
        Err(error) => return screen.notice(format!("Failed to create gist: {error}"), NoticeKind::Error),
        Ok(output) if !output.status.success() => {
            let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
            let why = if stderr.is_empty() {
                "Unknown error".to_owned()
            } else {
                stderr
            };
            return screen.notice(format!("Failed to create gist: {why}"), NoticeKind::Error);
        }
        Ok(output) => output,
    };
    let url = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let Some(id) = url.rsplit('/').next().filter(|id| !id.is_empty()) else {
        return screen.notice("Failed to parse gist ID from gh output", NoticeKind::Error);
    };
    let viewer = env
        .var("PI_SHARE_VIEWER_URL")
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| SHARE_VIEWER_URL.to_owned());
    screen.notice(format!("Share URL: {viewer}#{id}\nGist: {url}"), NoticeKind::Info);
}

/// `/copy`: the last agent message's text to the clipboard (`env` reads the environment).
pub(super) async fn copy(screen: &mut Screen, app: &App, env: &clipboard::Environment) {
    let Some(text) = app.last_assistant_text() else {
        screen.notice("No agent messages to copy yet.", NoticeKind::Error);
        return;
    };
    match clipboard::copy(&text, env).await {
        Ok(sequence) => {
            if let Some(sequence) = sequence {
                screen.send_to_terminal(&sequence);
            }
            screen.notice("Copied last agent message to clipboard", NoticeKind::Info);
        }
        Err(error) => screen.notice(error.to_string(), NoticeKind::Error),
    }
}

/// The models `/model` offers (pi's `getModelCandidates`): the scoped models (`--models`,
/// `enabledModels`), else every model whose provider has credentials.
fn model_candidates(app: &App) -> Vec<pi_ai::Model> {
    let scoped = app.scoped_models();
    if scoped.is_empty() {
        app.registry().available().into_iter().cloned().collect()
    } else {
        scoped.into_iter().map(|s| s.model).collect()
    }
}

/// `/model [search]`: a search naming one model exactly (`provider/id`, or an id only one
/// provider has) selects it (`Model: <id>`); otherwise the picker opens over the candidates,
/// filtered by the search (empty when no provider has credentials, as pi's).
pub(super) fn model(screen: &mut Screen, app: &App, search: &str) {
    let candidates = model_candidates(app);
    let search = search.trim();
    if !search.is_empty() {
        let exact: Vec<&pi_ai::Model> = candidates
            .iter()
            .filter(|m| {
                format!("{}/{}", m.provider, m.id).eq_ignore_ascii_case(search) || m.id.eq_ignore_ascii_case(search)
            })
            .collect();
        if let [model] = exact.as_slice() {
            app.set_model((*model).clone());
            screen.notice(format!("Model: {}", model.id), NoticeKind::Info);
            return;
        }
    }
    // pi's order: the current model first, then by provider (the registry's order within one).
    let current = app.session().agent().model();
    let mut candidates = candidates;
    candidates.sort_by_key(|m| {
        (
            !(m.provider == current.provider && m.id == current.id),
            m.provider.clone(),
        )
    });
    let selected = 0;
    let items = candidates
        .iter()
        .map(|model| {
            let id = format!("{}/{}", model.provider, model.id);
            let mut item = SelectItem::new(id.clone());
            if !model.name.is_empty() && model.name != model.id {
                item = item.with_description(model.name.clone());
            }
            (id, item)
        })
        .collect();
    screen.open_picker(PickerKind::Model, "Select a model", items, selected);
    if !search.is_empty() {
        screen.filter_picker(search);
    }
}

/// `/clone`: pi's "Cloned to new session" (or "Nothing to clone yet").
pub(super) async fn clone(screen: &mut Screen, app: &App) {
    if app.with_store(|store| store.leaf_id().is_none()) {
        screen.notice("Nothing to clone yet", NoticeKind::Info);
        return;
    }
    match app.clone_session().await {
        Ok(()) => {
            screen.notice("Cloned to new session", NoticeKind::Info);
            screen.editor_mut().clear();
        }
        Err(pi_coding_agent::AppError::Cancelled) => {}
        Err(error) => screen.notice(error.to_string(), NoticeKind::Error),
    }
}

/// `/hotkeys`: the keys of this interactive mode (pi's table, with the keys it has here and
/// the user's `keybindings.json`), then the extensions' shortcuts.
pub(super) fn hotkeys(
    extensions: Option<&std::sync::Arc<pi_coding_agent::extensions::Extensions>>,
    keys: &Keybindings,
) -> String {
    let key = |action: AppAction| {
        let keys = keys.keys_of(action);
        if keys.is_empty() {
            "(none)".to_owned()
        } else {
            keys.join(" / ")
        }
    };
    let rows: Vec<(String, &str)> = vec![
        ("enter".to_owned(), "Send message (steer while streaming)"),
        ("shift+enter".to_owned(), "New line"),
        ("tab".to_owned(), "Path completion / accept autocomplete"),
        (
            key(AppAction::Interrupt),
            "Cancel autocomplete / abort streaming (twice: /tree)",
        ),
        (key(AppAction::Clear), "Clear editor (first) / exit (second)"),
        (key(AppAction::Exit), "Exit (when editor is empty)"),
        (key(AppAction::ThinkingCycle), "Cycle thinking level"),
        (
            format!(
                "{} / {}",
                key(AppAction::ModelCycleForward),
                key(AppAction::ModelCycleBackward)
            ),
            "Cycle models",
        ),
        (key(AppAction::ModelSelect), "Open model selector"),
        (key(AppAction::ToolsExpand), "Toggle tool output expansion"),
        (key(AppAction::ThinkingToggle), "Toggle thinking block visibility"),
        (key(AppAction::FollowUp), "Queue follow-up message"),
        (key(AppAction::Dequeue), "Restore queued messages"),
        (key(AppAction::PasteImage), "Paste image from clipboard"),
        ("alt+y / alt+n".to_owned(), "Apply / discard the pending preview"),
        ("/".to_owned(), "Slash commands"),
        ("@".to_owned(), "Fuzzy file search"),
        ("!".to_owned(), "Run bash command"),
        ("!!".to_owned(), "Run bash command (excluded from context)"),
    ];
    let mut text = String::from("Keyboard shortcuts");
    for (key, action) in rows {
        text.push_str(&format!("\n  {key:<18} {action}"));
    }
    let shortcuts = extensions.map(|e| e.shortcuts()).unwrap_or_default();
    if !shortcuts.is_empty() {
        text.push_str("\nExtensions");
        for (_, shortcut) in shortcuts {
            let description = shortcut.description.clone().unwrap_or_default();
            text.push_str(&format!("\n  {:<18} {description}", shortcut.shortcut));
        }
    }
    text
}

/// Ctrl+P / Shift+Ctrl+P: the next or previous model of the scope (its models with
/// credentials, each with its pattern's thinking level), else of the models with credentials;
/// pi's `Switched to <name>[ (thinking: <level>)]`, or `Only one model in scope` / `Only one
/// model available`.
pub(super) fn cycle_model(app: &App, forward: bool) -> (String, NoticeKind) {
    let registry = app.registry();
    let scoped: Vec<(pi_ai::Model, Option<pi_agent_core::ThinkingLevel>)> = app
        .scoped_models()
        .into_iter()
        .filter(|s| registry.is_available(&s.model))
        .map(|s| (s.model, s.thinking))
        .collect();
    let is_scoped = !app.scoped_models().is_empty();
    let models = if is_scoped {
        scoped
    } else {
        registry.available().into_iter().map(|m| (m.clone(), None)).collect()
    };
    if models.len() <= 1 {
        let text = if is_scoped {
            "Only one model in scope"
        } else {
            "Only one model available"
        };
        return (text.to_owned(), NoticeKind::Info);
    }
    let current = app.session().agent().model();
    let index = models
        .iter()
        .position(|(m, _)| m.provider == current.provider && m.id == current.id)
        .unwrap_or(0);
    let next = if forward {
        (index + 1) % models.len()
    } else {
        (index + models.len() - 1) % models.len()
    };
    let (model, thinking) = &models[next];
    app.select_model(model.clone(), *thinking, pi_coding_agent::ModelSelectSource::Cycle);
    let level = app.session().agent().thinking_level();
    let name = if model.name.is_empty() { &model.id } else { &model.name };
    let thinking = if model.reasoning && level != pi_agent_core::ThinkingLevel::Off {
        format!(" (thinking: {})", pi_coding_agent::config::thinking_level_name(level))
    } else {
        String::new()
    };
    (format!("Switched to {name}{thinking}"), NoticeKind::Info)
}

/// Shift+Tab: the model's next thinking level (`Thinking level: <level>`), or pi's `Current
/// model does not support thinking`.
pub(super) fn cycle_thinking(app: &App) -> String {
    let model = app.session().agent().model();
    if !model.reasoning {
        return "Current model does not support thinking".to_owned();
    }
    let levels = model.thinking_levels();
    let current = app.session().agent().thinking_level();
    let next = levels
        .iter()
        .position(|l| *l == current)
        .map(|index| levels[(index + 1) % levels.len()])
        .or_else(|| levels.first().copied())
        .unwrap_or(pi_agent_core::ThinkingLevel::Off);
    let level = app.set_thinking_level(next);
    format!(
        "Thinking level: {}",
        pi_coding_agent::config::thinking_level_name(level)
    )
}
