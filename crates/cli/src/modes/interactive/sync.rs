//! Keeping the screen in step with the app: the footer and pending banner, the custom tools'
//! renderers, and the "wait for the run" check of commands that change the session.

use pi_coding_agent::App;

use super::footer;
use super::render::Renderers;
use super::screen::Screen;
use super::transcript::NoticeKind;

/// The custom tools with their renderers.
pub(super) fn renderers(app: &App) -> Renderers {
    let session = app.session();
    session
        .agent()
        .tools()
        .iter()
        .filter_map(|tool| {
            session
                .custom_tool(tool.name())
                .map(|custom| (tool.name().to_owned(), custom))
        })
        .collect()
}

/// Footer and pending banner from the session as it is now.
pub(super) fn refresh(screen: &mut Screen, app: &App) {
    let session = app.session();
    screen.set_footer(footer::footer_info(app));
    screen.set_pending(session.pending_actions().peek().map(|action| action.label.clone()));
}

/// Whether `command` has to wait for the run to end; says so on screen.
pub(super) fn busy(screen: &mut Screen) -> bool {
    if screen.is_running() {
        screen.notice(
            "Wait for the run to finish, or press Esc to abort it.",
            NoticeKind::Warning,
        );
    }
    screen.is_running()
}
