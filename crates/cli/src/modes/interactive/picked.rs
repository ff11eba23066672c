//! What happens when an item of a picker is chosen (`/model`, `/resume`, `/fork`, `/tree` and
//! `/tree`'s summary question).

use pi_coding_agent::App;
use tokio::sync::mpsc;

use super::dialogs::UiRequest;
use super::screen::{PickerKind, Screen};
use super::sync::{busy, refresh, renderers};
use super::transcript::NoticeKind;
use super::tree::{TREE_CHOICE_SEPARATOR, TreeMessage, ask_summary, start_navigation};

pub(super) async fn picked(
    kind: PickerKind,
    id: &str,
    screen: &mut Screen,
    app: &App,
    trees: &mpsc::UnboundedSender<TreeMessage>,
) {
    match kind {
        PickerKind::Model => {
            let Some((provider, model_id)) = id.split_once('/') else {
                return;
            };
            match app.registry().find(provider, model_id).cloned() {
                Some(model) => {
                    app.set_model(model);
                    screen.notice(format!("Model: {id}"), NoticeKind::Info);
                }
                None => screen.notice(format!("Unknown model {id}"), NoticeKind::Error),
            }
        }
        PickerKind::Resume => {
            if busy(screen) {
                return;
            }
            match app.switch_session(std::path::Path::new(id)).await {
                Ok(warnings) => {
                    screen.notice(format!("Resumed {id}"), NoticeKind::Info);
                    for warning in warnings {
                        screen.notice(warning.to_string(), NoticeKind::Warning);
                    }
                    screen.transcript_mut().load_messages(&app.session().agent().messages());
                    screen.set_renderers(renderers(app));
                }
                Err(error) => screen.notice(error.to_string(), NoticeKind::Error),
            }
        }
        PickerKind::Fork => {
            if busy(screen) {
                return;
            }
            match app.fork(id).await {
                Ok(text) => {
                    screen.notice(
                        "✓ Forked to a new session; edit the message and send it",
                        NoticeKind::Info,
                    );
                    screen.editor_mut().set_text(&text);
                }
                Err(error) => screen.notice(error.to_string(), NoticeKind::Error),
            }
        }
        PickerKind::Tree => {
            if busy(screen) {
                return;
            }
            if app.with_store(|store| store.leaf_id() == Some(id)) {
                screen.notice("Already at this point", NoticeKind::Info);
            } else if app.branch_summary_settings().skip_prompt {
                start_navigation(screen, app, id, false, None, trees);
            } else {
                ask_summary(screen, id);
            }
        }
        PickerKind::TreeSummary => {
            let Some((choice, target)) = id.split_once(TREE_CHOICE_SEPARATOR) else {
                return;
            };
            match choice {
                "custom" => {
                    // pi asks for the instructions in an editor; a cancel goes back to the choice.
                    let (reply, answer) = tokio::sync::oneshot::channel();
                    screen.push_request(UiRequest::Input {
                        title: "Custom summarization instructions".to_owned(),
                        placeholder: None,
                        reply,
                    });
                    let trees = trees.clone();
                    let target = target.to_owned();
                    tokio::spawn(async move {
                        let message = match answer.await {
                            Ok(Some(instructions)) => TreeMessage::Instructions { target, instructions },
                            _ => TreeMessage::AskAgain { target },
                        };
                        let _ = trees.send(message);
                    });
                }
                choice => start_navigation(screen, app, target, choice == "summarize", None, trees),
            }
            return;
        }
    }
    refresh(screen, app);
}
