//! `/tree`'s navigation with pi's "Summarize branch?": the question, and the navigation run in the
//! background (a summary is a model call), reported to the loop as [`TreeMessage`]s.

use pi_coding_agent::App;
use pi_tui::SelectItem;
use tokio::sync::mpsc;

use super::screen::{PickerKind, Screen};

/// Separates the choice from the entry id in the ids of the "Summarize branch?" picker.
pub(super) const TREE_CHOICE_SEPARATOR: char = '\u{1f}';

/// pi's "Summarize branch?" after `/tree` chose `target`.
pub(super) fn ask_summary(screen: &mut Screen, target: &str) {
    let items = [
        ("none", "No summary"),
        ("summarize", "Summarize"),
        ("custom", "Summarize with custom prompt"),
    ]
    .into_iter()
    .map(|(choice, label)| {
        (
            format!("{choice}{TREE_CHOICE_SEPARATOR}{target}"),
            SelectItem::new(label),
        )
    })
    .collect();
    screen.open_picker(PickerKind::TreeSummary, "Summarize branch?", items, 0);
}

/// What the background part of `/tree` reports to the loop.
#[derive(Debug)]
pub(super) enum TreeMessage {
    /// The custom instructions were given: summarize with them.
    Instructions { target: String, instructions: String },
    /// The instructions were cancelled: ask again.
    AskAgain { target: String },
    /// The navigation ended.
    Done(Box<Result<pi_coding_agent::NavigateOutcome, pi_coding_agent::AppError>>),
}

/// Navigates to `target` in the background (a summary takes a model call; Esc aborts it).
pub(super) fn start_navigation(
    screen: &mut Screen,
    app: &App,
    target: &str,
    summarize: bool,
    instructions: Option<String>,
    trees: &mpsc::UnboundedSender<TreeMessage>,
) {
    if summarize {
        screen.set_busy_with("Summarizing branch... (esc to cancel)");
    }
    let (app, trees, target) = (app.clone(), trees.clone(), target.to_owned());
    tokio::spawn(async move {
        let options = pi_coding_agent::NavigateOptions {
            summarize,
            custom_instructions: instructions,
            ..Default::default()
        };
        let result = app.navigate_tree(&target, options).await;
        let _ = trees.send(TreeMessage::Done(Box::new(result)));
    });
}
