//! Work the loop starts and does not wait for: Tab's directory listing, an extension command's
//! argument completions, `!command`; and the keys' actions that need the app (model and thinking
//! cycling). What ends in the background comes back to the loop as a [`Background`].

use std::sync::{Arc, Mutex};

use pi_coding_agent::App;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::screen::{Action, Screen};
use super::transcript::NoticeKind;
use super::{autocomplete, bash, session_commands};

/// What work done in the background reports to the loop.
pub(super) enum Background {
    /// Completions found for the editor's `text`.
    Completed {
        text: String,
        suggestions: autocomplete::Suggestions,
        /// Asked by Tab (a single suggestion is put in at once).
        tab: bool,
    },
    /// A `!command` ended: what to show.
    Bash(String, NoticeKind),
    /// `/import`'s question was answered: import the file (`None`: cancelled).
    Import(Option<std::path::PathBuf>),
}

/// Where background work reports, and the running `!command`'s cancellation.
#[derive(Debug, Clone)]
pub(super) struct Work {
    sender: mpsc::UnboundedSender<Background>,
    bash: Arc<Mutex<Option<CancellationToken>>>,
}

impl Work {
    pub(super) fn new(sender: mpsc::UnboundedSender<Background>) -> Self {
        Work {
            sender,
            bash: Arc::default(),
        }
    }
}

/// Shows what background work reported; `true` when the session was replaced (the transcript
/// and footer are reloaded).
pub(super) async fn done(done: Background, screen: &mut Screen, app: &App) -> bool {
    match done {
        Background::Import(None) => screen.notice("Import cancelled", NoticeKind::Info),
        Background::Import(Some(path)) => {
            if screen.is_running() {
                screen.notice(
                    "Wait for the run to finish, or press Esc to abort it.",
                    NoticeKind::Warning,
                );
                return false;
            }
            return import(screen, app, &path).await;
        }
        Background::Completed { text, suggestions, tab } => screen.show_suggestions(&text, suggestions, tab),
        Background::Bash(text, kind) => {
            screen.set_bash_running(false);
            screen.notice(text, kind);
        }
    }
    false
}

/// `/import <path.jsonl>`: asks pi's `Replace current session with <path>?`; the answer comes
/// back as [`Background::Import`].
pub(super) fn ask_import(screen: &mut Screen, rest: &str, work: &Work) {
    let Some(path) = super::commands::path_argument(rest).filter(|p| !p.is_empty()) else {
        screen.notice("Usage: /import <path.jsonl>", NoticeKind::Error);
        return;
    };
    let (reply, answer) = tokio::sync::oneshot::channel();
    screen.push_request(super::dialogs::UiRequest::Confirm {
        title: "Import session".to_owned(),
        message: format!("Replace current session with {path}?"),
        reply,
    });
    let (sender, path) = (work.sender.clone(), std::path::PathBuf::from(path));
    tokio::spawn(async move {
        let confirmed = answer.await.unwrap_or(false);
        let _ = sender.send(Background::Import(confirmed.then_some(path)));
    });
}

/// pi's import: the file is copied into this project's session directory (unless it is there
/// already) and opened as `/resume` opens a session: `Session imported from: <path>`.
async fn import(screen: &mut Screen, app: &App, input: &std::path::Path) -> bool {
    // As pi's `resolve(inputPath)` (and `/export`): relative to the process's directory.
    let resolved = std::path::absolute(input).unwrap_or_else(|_| input.to_path_buf());
    if !tokio::fs::try_exists(&resolved).await.unwrap_or(false) {
        screen.notice(
            format!("Session file not found: {}", resolved.display()),
            NoticeKind::Error,
        );
        return false;
    }
    let dir = app.with_store(|store| store.dir().map(std::path::Path::to_path_buf));
    let destination = match (&dir, resolved.file_name()) {
        (Some(dir), Some(name)) => dir.join(name),
        _ => resolved.clone(),
    };
    if destination != resolved {
        let copied = async {
            if let Some(dir) = &dir {
                tokio::fs::create_dir_all(dir).await?;
            }
            tokio::fs::copy(&resolved, &destination).await
        };
        if let Err(error) = copied.await {
            screen.notice(format!("Failed to import session: {error}"), NoticeKind::Error);
            return false;
        }
    }
    match app.switch_session(&destination).await {
        Ok(warnings) => {
            for warning in warnings {
                screen.notice(warning.to_string(), NoticeKind::Warning);
            }
            screen.transcript_mut().load_messages(&app.session().agent().messages());
            screen.notice(format!("Session imported from: {}", input.display()), NoticeKind::Info);
            true
        }
        Err(pi_coding_agent::AppError::Cancelled) => {
            screen.notice("Import cancelled", NoticeKind::Info);
            false
        }
        Err(error) => {
            screen.notice(error.to_string(), NoticeKind::Error);
            false
        }
    }
}

/// Carries out the actions of completion and of the application's keys; `true` when the footer
/// has to be refreshed (the model or thinking level changed).
pub(super) fn perform(
    action: Action,
    screen: &mut Screen,
    app: &App,
    extensions: Option<&Arc<pi_coding_agent::extensions::Extensions>>,
    work: &Work,
) -> bool {
    let sender = work.sender.clone();
    match action {
        Action::CompletePath { prefix, text } => {
            let cwd = app.session().cwd().to_path_buf();
            tokio::task::spawn_blocking(move || {
                let home = pi_tools::path::home_dir();
                let suggestions = autocomplete::directory_suggestions(&prefix, &cwd, home.as_deref());
                let _ = sender.send(Background::Completed {
                    text,
                    suggestions,
                    tab: true,
                });
            });
        }
        Action::CompleteArguments { command, prefix, text } => {
            let Some(extensions) = extensions.cloned() else {
                return false;
            };
            tokio::spawn(async move {
                let items = extensions.complete(&command, &prefix).await.unwrap_or_default();
                let items = items
                    .iter()
                    .filter_map(|item| {
                        let value = item.get("value")?.as_str()?.to_owned();
                        let label = item.get("label").and_then(|l| l.as_str()).unwrap_or(&value).to_owned();
                        let description = item.get("description").and_then(|d| d.as_str()).map(str::to_owned);
                        Some(autocomplete::Suggestion {
                            value,
                            label,
                            description,
                        })
                    })
                    .collect();
                let suggestions = autocomplete::Suggestions { items, prefix };
                let _ = sender.send(Background::Completed {
                    text,
                    suggestions,
                    tab: false,
                });
            });
        }
        Action::CycleModel { forward } => {
            let (text, kind) = session_commands::cycle_model(app, forward);
            screen.notice(text, kind);
            return true;
        }
        Action::CycleThinking => {
            screen.notice(session_commands::cycle_thinking(app), NoticeKind::Info);
            return true;
        }
        Action::Bash { command, exclude } => {
            let cancel = CancellationToken::new();
            *work.bash.lock().unwrap_or_else(|p| p.into_inner()) = Some(cancel.clone());
            let (app, slot) = (app.clone(), work.bash.clone());
            tokio::spawn(async move {
                let (text, kind) = bash::run(&app, &command, exclude, cancel).await;
                // Only one `!command` runs at a time: the finished one's token goes with it.
                *slot.lock().unwrap_or_else(|p| p.into_inner()) = None;
                let _ = sender.send(Background::Bash(text, kind));
            });
        }
        Action::AbortBash => {
            if let Some(cancel) = work.bash.lock().unwrap_or_else(|p| p.into_inner()).take() {
                cancel.cancel();
            }
        }
        Action::ExternalEditor(_) | Action::Suspend => {
            screen.notice("Not available in this terminal yet.", NoticeKind::Warning)
        }
        // The loop carries out the others itself.
        _ => {}
    }
    false
}
