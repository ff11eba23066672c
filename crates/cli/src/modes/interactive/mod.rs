//! The interactive mode: pi's terminal interface on `pi-tui`.
//!
//! The conversation is printed into the terminal's own scrollback as it finishes — scroll, search
//! and copy work as in a shell — while a live region at the bottom is redrawn in place: the
//! answer being streamed, running tool blocks, the loader, the pending-preview banner, dialogs,
//! the editor and the footer.
//!
//! | key | does |
//! | --- | --- |
//! | Enter | send; while a run streams, steer it |
//! | Alt+Enter | while a run streams, queue a follow-up |
//! | Alt+Up | put the queued steering / follow-up messages back into the editor |
//! | Esc | abort the run; queued messages go back into the editor |
//! | Alt+Y / Alt+N | apply / discard the pending preview |
//! | Ctrl+O | expand or collapse every tool block (the transcript is drawn again) |
//! | Ctrl+C | clear the editor; twice on an empty one, exit |
//! | Ctrl+D | exit (on an empty editor) |
//!
//! Slash commands: see [`SlashCommand`] and [`parse_slash_command`].
//!
//! The parts: [`Screen`] is the state and draws lines (pure, snapshot-tested); the
//! [`Transcript`] turns session events into items; [`Renderers`] (and one renderer per built-in
//! tool) draw the items; [`TuiUi`] answers tools' questions; [`run_with_terminal`] is the loop, on any writer and event
//! source (the tests drive it through a vt100 terminal); [`run_interactive`] runs it on the real
//! terminal.

mod autocomplete;
mod background;
mod bash;
mod clipboard;
mod commands;
mod dialogs;
mod footer;
mod images;
mod keybindings;
mod login;
mod panic_hook;
mod picked;
mod render;
mod screen;
mod session_commands;
mod sync;
mod terminal;
mod theme_watch;
mod tools;
mod transcript;
mod tree;

pub use autocomplete::FileIndex;
pub use clipboard::Environment;
pub use commands::{SlashCommand, command_word, parse_slash_command, path_argument};
pub use dialogs::{TuiUi, UiRequest};
pub use footer::FooterInfo;
pub use keybindings::{AppAction, DoubleEscape, InvalidKey, KeySettings, KeySpec, Keybindings};
pub use render::{RenderContext, Renderers, render_tool};
pub use screen::{Action, Screen};
pub use theme_watch::ThemeWatch;
pub use transcript::{Item, NoticeKind, ToolBlock, Transcript, error_text};

use std::io::Write;
use std::sync::Arc;

use crossterm::event::Event;
use pi_agent_core::{AgentError, AgentEvent, AgentMessage};
use pi_tui::{InlineRenderer, Loader, SelectItem, Theme};
use tokio::sync::mpsc;

pub use clipboard::{Clipboard, ClipboardImage};
use commands::COMMANDS;
pub use images::InlineImages;
use pi_coding_agent::App;
use pi_coding_agent::SessionEvent;
use pi_coding_agent::extensions::events::InputSource;
use pi_coding_agent::resolve::ResolveAction;
use picked::picked;
use screen::PickerKind;
use sync::{busy, refresh, renderers};
use tree::{TreeMessage, ask_summary, start_navigation};

pub use terminal::restore as restore_terminal;

/// How the interactive mode starts.
#[derive(Debug)]
pub struct InteractiveOptions {
    /// The colours.
    pub theme: Theme,
    /// Lines shown first (pi's version, model and working directory).
    pub header: Vec<String>,
    /// Notices shown after the header (a theme that could not be loaded).
    pub notices: Vec<(String, NoticeKind)>,
    /// The active custom theme's file: its changes redraw the screen (pi's hot reload).
    pub theme_watch: Option<ThemeWatch>,
    /// Messages sent as soon as the screen is up (the command line's prompt).
    pub initial: Vec<AgentMessage>,
    /// The tools' questions ([`new_ui`] makes the channel).
    pub requests: Option<mpsc::UnboundedReceiver<UiRequest>>,
    /// Warnings to show as notices (the session file could not be written).
    pub warnings: Option<mpsc::UnboundedReceiver<String>>,
    /// Show the session's earlier messages (a continued or resumed session).
    pub show_history: bool,
    /// `/help` lists the skills' `/skill:name` commands (pi's `enableSkillCommands`).
    pub skill_commands: bool,
    /// The loaded extensions: a sent `/name args` naming one of their commands runs it.
    pub extensions: Option<Arc<pi_coding_agent::extensions::Extensions>>,
    /// Where `/copy` reads `DISPLAY`, `SSH_CONNECTION`, `PATH` … (the process's environment).
    pub environment: Environment,
    /// `auth.json`, where `/login` stores and `/logout` removes credentials (`None`: neither
    /// works).
    pub auth: Option<Arc<pi_coding_agent::auth::AuthStorage>>,
    /// How tool results' images are shown (detected from the environment by default).
    pub images: InlineImages,
    /// Where Ctrl+V reads an image from (the system clipboard by default).
    pub clipboard: Clipboard,
    /// The application's keys (`~/.pi/agent/keybindings.json` over pi's defaults).
    pub keybindings: Keybindings,
    /// What Esc twice on an empty editor opens (`doubleEscapeAction`).
    pub double_escape: DoubleEscape,
    /// Thinking blocks start collapsed (`hideThinkingBlock`).
    pub hide_thinking: bool,
}

impl Default for InteractiveOptions {
    fn default() -> Self {
        InteractiveOptions {
            theme: Theme::dark(),
            header: Vec::new(),
            notices: Vec::new(),
            theme_watch: None,
            initial: Vec::new(),
            requests: None,
            warnings: None,
            show_history: true,
            skill_commands: true,
            extensions: None,
            auth: None,
            environment: Environment::default(),
            images: InlineImages::detect(),
            clipboard: Clipboard::system(),
            keybindings: Keybindings::default(),
            double_escape: DoubleEscape::default(),
            hide_thinking: false,
        }
    }
}

/// The interactive mode's user interface for tools, and the dialog requests it sends to the
/// screen: give the first to a [`SessionBuilder`](pi_coding_agent::SessionBuilder) (before custom
/// tools load, so they see `hasUI`) and the receiver to [`InteractiveOptions::requests`].
pub fn new_ui() -> (Arc<dyn pi_coding_agent::ToolUi>, mpsc::UnboundedReceiver<UiRequest>) {
    let (tx, rx) = mpsc::unbounded_channel();
    (Arc::new(TuiUi::new(tx)), rx)
}

/// Reads a terminal's size (columns, rows) as it is now; `None` when it cannot be read.
pub type SizeProbe = Arc<dyn Fn() -> Option<(u16, u16)> + Send + Sync>;

/// A terminal for [`run_with_terminal`]: where output goes, its size, and its events (keys,
/// pastes, resizes). The channel closing ends the mode.
pub struct Terminal<W: Write> {
    /// The output.
    pub out: W,
    /// Columns and rows.
    pub size: (u16, u16),
    /// The input events.
    pub events: mpsc::UnboundedReceiver<Event>,
    /// Read before every frame, as pi-tui reads the terminal's `columns` at every render: a frame
    /// drawn after the terminal changed size but before its resize event arrived (a spinner tick)
    /// is drawn at the new size instead of wrapping and pushing stale rows into the scrollback.
    /// `None`: only resize events change the size.
    pub probe: Option<SizeProbe>,
}

impl<W: Write> std::fmt::Debug for Terminal<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Terminal")
            .field("size", &self.size)
            .field("probe", &self.probe.is_some())
            .finish_non_exhaustive()
    }
}

/// Runs the interactive mode on the process's terminal until the user leaves; returns the exit
/// code.
pub async fn run_interactive(app: App, options: InteractiveOptions) -> i32 {
    let guard = match terminal::TerminalGuard::enter() {
        Ok(guard) => guard,
        Err(error) => {
            eprintln!("pi: cannot use the terminal: {error}");
            return 1;
        }
    };
    let hook = panic_hook::install(std::thread::current().id(), terminal::restore);
    let (events, input_stop) = terminal::spawn_input();
    let term = Terminal {
        out: std::io::stdout(),
        size: terminal::size(),
        events,
        probe: Some(Arc::new(|| crossterm::terminal::size().ok())),
    };
    let code = run_with_terminal(&app, options, term).await;
    drop(input_stop);
    drop(hook);
    drop(guard);
    code
}

/// What a finished run reports.
type RunResult = Result<(), AgentError>;

/// The loop of the interactive mode, on any terminal.
pub async fn run_with_terminal<W: Write>(app: &App, options: InteractiveOptions, term: Terminal<W>) -> i32 {
    // The code highlighter's syntaxes load beside the first frames, not before them.
    pi_tui::highlight::preload();
    let session = app.session().clone();
    let mut screen = Screen::new(options.theme);
    screen.set_images(options.images);
    let (width, height) = term.size;
    let mut renderer = InlineRenderer::new(term.out, width, height);
    let mut input = term.events;
    let probe = term.probe;
    let (event_tx, mut events) = mpsc::unbounded_channel::<SessionEvent>();
    let subscription = session.subscribe(move |event| {
        let _ = event_tx.send(event.clone());
    });
    let (run_tx, mut runs) = mpsc::unbounded_channel::<RunResult>();
    let (tree_tx, mut trees) = mpsc::unbounded_channel::<TreeMessage>();
    let mut requests = options.requests.unwrap_or_else(|| mpsc::unbounded_channel().1);
    let mut warnings = options.warnings.unwrap_or_else(|| mpsc::unbounded_channel().1);
    let (completion_tx, mut completions) = mpsc::unbounded_channel::<background::Background>();
    screen.set_keybindings(options.keybindings.clone());
    screen.set_double_escape(options.double_escape);
    screen.set_hide_thinking(options.hide_thinking);
    let context = CommandContext {
        skill_commands: options.skill_commands,
        environment: options.environment.clone(),
        auth: options.auth.clone(),
        background: background::Work::new(completion_tx),
    };
    screen.set_commands(commands::catalog(
        app,
        options.extensions.as_ref(),
        options.skill_commands,
    ));
    let files = FileIndex::new(session.cwd());
    screen.set_file_index(files.clone());
    screen.set_clipboard(options.clipboard);
    let mut ticker = tokio::time::interval(Loader::INTERVAL);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);

    for line in &options.header {
        screen.notice(line.clone(), NoticeKind::Info);
    }
    for (text, kind) in &options.notices {
        screen.notice(text.clone(), *kind);
    }
    let (_theme_watcher, mut theme_changes) = options.theme_watch.as_ref().map(theme_watch::start).unzip();
    if options.show_history {
        screen.transcript_mut().load_messages(&session.agent().messages());
    }
    screen.set_renderers(renderers(app));
    refresh(&mut screen, app);
    let extensions = options.extensions.clone();
    if !options.initial.is_empty() {
        start_run(&mut screen, app, extensions.as_ref(), options.initial, &run_tx);
    }

    let mut code = 0;
    loop {
        for message in panic_hook::take_reported() {
            screen.notice(format!("pi: {message}"), NoticeKind::Error);
        }
        if let Some((width, height)) = probe.as_ref().and_then(|probe| probe()) {
            // Does nothing while the size is unchanged.
            let _ = renderer.resize(width, height);
        }
        if draw(&mut screen, &mut renderer).is_err() {
            code = 1;
            break;
        }
        let mut action = None;
        tokio::select! {
            event = input.recv() => match event {
                Some(Event::Key(key)) => action = screen.handle_key(key),
                Some(Event::Paste(text)) => screen.handle_paste(&text),
                Some(Event::Resize(width, height)) => {
                    let _ = renderer.resize(width, height);
                }
                Some(_) => {}
                None => action = Some(Action::Exit),
            },
            Some(event) = events.recv() => {
                let mut stale = changes_footer(&event);
                screen.apply(&event);
                while let Ok(event) = events.try_recv() {
                    stale |= changes_footer(&event);
                    screen.apply(&event);
                }
                if stale {
                    refresh(&mut screen, app);
                }
            }
            Some(request) = requests.recv() => screen.push_request(request),
            Some(warning) = warnings.recv() => screen.notice(warning, NoticeKind::Warning),
            Some(result) = runs.recv() => {
                // Events still on their way belong to the run that just ended.
                while let Ok(event) = events.try_recv() {
                    screen.apply(&event);
                }
                screen.set_running(false);
                if let Err(error) = result {
                    screen.notice(error.to_string(), NoticeKind::Error);
                }
                refresh(&mut screen, app);
            }
            Some(message) = trees.recv() => tree_message(message, &mut screen, app, &tree_tx).await,
            Some(done) = completions.recv() => if background::done(done, &mut screen, app).await {
                screen.set_renderers(renderers(app));
                refresh(&mut screen, app);
            },
            () = files.walked() => screen.files_walked(),
            _ = ticker.tick(), if screen.is_running() => screen.tick(),
            // `ctx.shutdown()`: pi leaves once idle (after the run and its queued messages).
            () = shutdown_wanted(extensions.as_ref()), if !screen.is_running() => action = Some(Action::Exit),
            Some(()) = async { theme_changes.as_mut()?.recv().await } => if let (Some(watch), Some(changes)) = (&options.theme_watch, theme_changes.as_mut()) {
                theme_watch::reload(&mut screen, watch, changes).await;
            },
        }
        if let Some(action) = action
            && !perform(
                action,
                &mut screen,
                app,
                extensions.as_ref(),
                &run_tx,
                &tree_tx,
                &context,
            )
            .await
        {
            break;
        }
    }
    if screen.is_running() {
        session.abort().await;
        // Let the aborted run end, so its last events reach the screen.
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), runs.recv()).await;
        while let Ok(event) = events.try_recv() {
            screen.apply(&event);
        }
        screen.set_running(false);
    }
    subscription.unsubscribe();
    let _ = draw(&mut screen, &mut renderer);
    let _ = renderer.finish();
    code
}

/// Resolves once an extension called `ctx.shutdown()`; never without extensions.
async fn shutdown_wanted(extensions: Option<&Arc<pi_coding_agent::extensions::Extensions>>) {
    match extensions {
        Some(extensions) => extensions.shutdown_wanted().await,
        None => std::future::pending().await,
    }
}

/// Commits what finished and redraws the live region, with the terminal's cursor shown at the
/// typing position (the editor's or a dialog's input; pi-tui's CURSOR_MARKER), so input methods
/// and screen readers follow it; hidden while nothing takes typing (a picker).
fn draw<W: Write>(screen: &mut Screen, renderer: &mut InlineRenderer<W>) -> std::io::Result<()> {
    let raw = screen.take_terminal_output();
    if !raw.is_empty() {
        renderer.writer_mut().write_all(raw.as_bytes())?;
        renderer.writer_mut().flush()?;
    }
    if screen.wants_redraw() {
        // Ctrl+O: the whole transcript is drawn again (pi's full render): the live region is
        // left, the screen and the scrollback cleared, and everything committed is printed
        // anew below, in the same synchronized update as the frame that follows.
        renderer.finish()?;
        renderer
            .writer_mut()
            .write_all(b"\x1b[?2026h\x1b[2J\x1b[H\x1b[3J\x1b[?25l")?;
    }
    let width = renderer.width();
    let committed = screen.take_commit(width);
    renderer.commit(&committed)?;
    let (live, cursor) = screen.render_live(width);
    renderer.draw_with_cursor(&live, cursor)
}

/// Whether `event` can change the footer or the pending banner: streamed deltas and partial tool
/// results cannot (usage arrives with `message_end`), and they are most events, so the footer,
/// which walks the whole history, is not rebuilt for them.
fn changes_footer(event: &SessionEvent) -> bool {
    !matches!(
        event,
        SessionEvent::Agent(AgentEvent::MessageUpdate { .. } | AgentEvent::ToolExecutionUpdate { .. })
    )
}

/// Starts a run of `messages` in the background; a message naming an extension command runs the
/// command instead (pi checks extension commands first), its failure reported as a notice.
fn start_run(
    screen: &mut Screen,
    app: &App,
    extensions: Option<&Arc<pi_coding_agent::extensions::Extensions>>,
    messages: Vec<AgentMessage>,
    done: &mpsc::UnboundedSender<RunResult>,
) {
    screen.set_running(true);
    let app = app.clone();
    let done = done.clone();
    let extensions = extensions.cloned();
    tokio::spawn(async move {
        let mut result = Ok(());
        for message in messages {
            if let Some(extensions) = &extensions
                && let Some(text) = message.as_user().map(|user| user.content.text())
                && let Some(outcome) = extensions.run_command(&text).await
            {
                if let Err(error) = outcome {
                    extensions.report(&error);
                }
                continue;
            }
            result = app.prompt_from(message, InputSource::Interactive).await.map(drop);
            if result.is_err() {
                break;
            }
        }
        let _ = done.send(result);
    });
}

/// What the commands need from the options.
struct CommandContext {
    skill_commands: bool,
    environment: Environment,
    auth: Option<Arc<pi_coding_agent::auth::AuthStorage>>,
    /// Completions and `!commands` in the background.
    background: background::Work,
}

/// Carries out `action`; `false` to leave.
async fn perform(
    action: Action,
    screen: &mut Screen,
    app: &App,
    extensions: Option<&Arc<pi_coding_agent::extensions::Extensions>>,
    runs: &mpsc::UnboundedSender<RunResult>,
    trees: &mpsc::UnboundedSender<TreeMessage>,
    context: &CommandContext,
) -> bool {
    let session = app.session();
    match action {
        Action::Exit => return false,
        Action::PasteImage => screen.paste_image().await,
        Action::Prompt(text) => start_run(screen, app, extensions, vec![AgentMessage::user(text)], runs),
        // pi runs an extension command at once, even while the agent streams.
        Action::Steer(text) | Action::FollowUp(text)
            if extensions.is_some_and(|extensions| extensions.is_command(&text)) =>
        {
            if let Some(extensions) = extensions.cloned() {
                tokio::spawn(async move {
                    if let Some(Err(error)) = extensions.run_command(&text).await {
                        extensions.report(&error);
                    }
                });
            }
        }
        Action::Steer(text) => session.steer(session.expand_message(AgentMessage::user(text)).await),
        Action::FollowUp(text) => session.follow_up(session.expand_message(AgentMessage::user(text)).await),
        Action::RestoreQueued => {
            let queued = session.clear_queues();
            let texts = queued.iter().filter_map(AgentMessage::as_user);
            screen.restore_queued(texts.map(|message| message.content.text()).collect());
        }
        Action::Abort => {
            // pi's Esc while streaming: the queued messages go back into the editor first, so
            // none of them reaches the model in a later turn.
            let queued = session.clear_queues();
            let texts: Vec<String> = queued
                .iter()
                .filter_map(AgentMessage::as_user)
                .map(|message| message.content.text())
                .collect();
            if !texts.is_empty() {
                screen.restore_queued(texts);
            }
            app.abort_branch_summary();
            let session = session.clone();
            tokio::spawn(async move { session.abort().await });
        }
        Action::Resolve { action, reason } => {
            if session.pending_actions().peek().is_none() {
                screen.notice("Nothing is pending.", NoticeKind::Warning);
                return true;
            }
            let verb = match action {
                ResolveAction::Apply => "apply",
                ResolveAction::Discard => "discard",
            };
            let (result, is_error) = match session.resolve_pending(action, &reason).await {
                Ok(result) => (result, false),
                Err(error) => (error.into_result(), true),
            };
            screen.transcript_mut().user_resolution(verb, &reason, result, is_error);
            refresh(screen, app);
        }
        Action::Command(command) => command_action(command, screen, app, extensions, context).await,
        Action::Pick { kind, id } => picked(kind, &id, screen, app, trees).await,
        other => {
            if background::perform(other, screen, app, extensions, &context.background) {
                refresh(screen, app);
            }
        }
    }
    true
}

async fn command_action(
    command: SlashCommand,
    screen: &mut Screen,
    app: &App,
    extensions: Option<&Arc<pi_coding_agent::extensions::Extensions>>,
    context: &CommandContext,
) {
    match command {
        SlashCommand::Compact(instructions) => {
            let messages = app.with_store(|store| {
                store
                    .entries()
                    .iter()
                    .filter(|e| matches!(e.kind, pi_session_store::EntryKind::Message(_)))
                    .count()
            });
            if messages < 2 {
                screen.notice("Nothing to compact (no messages yet)", NoticeKind::Warning);
                return;
            }
            // In the background: its events tell the screen how it went.
            let app = app.clone();
            tokio::spawn(async move {
                let instructions = (!instructions.is_empty()).then_some(instructions);
                let _ = app.compact(instructions.as_deref()).await;
            });
        }
        SlashCommand::Model(search) => session_commands::model(screen, app, &search),
        SlashCommand::Clone => {
            if busy(screen) {
                return;
            }
            session_commands::clone(screen, app).await;
        }
        SlashCommand::Import(rest) => background::ask_import(screen, &rest, &context.background),
        SlashCommand::Hotkeys => {
            let text = session_commands::hotkeys(extensions, screen.keybindings());
            screen.notice(text, NoticeKind::Info)
        }
        SlashCommand::New => {
            if busy(screen) {
                return;
            }
            match app.new_session(None).await {
                Ok(()) => screen.notice("✓ New session started", NoticeKind::Info),
                Err(error) => screen.notice(error.to_string(), NoticeKind::Error),
            }
            refresh(screen, app);
        }
        SlashCommand::Resume => match app.sessions().await {
            Ok(sessions) if sessions.is_empty() => {
                screen.notice("No other sessions in this directory.", NoticeKind::Info)
            }
            Ok(sessions) => {
                let items = sessions
                    .iter()
                    .map(|info| {
                        let title = info
                            .name
                            .clone()
                            .or_else(|| info.first_message.clone())
                            .unwrap_or_else(|| "(no messages)".to_owned());
                        let title = title.lines().next().unwrap_or_default().to_owned();
                        let item = SelectItem::new(title).with_description(format!(
                            "{} messages · {}",
                            info.message_count,
                            commands::ago(info.modified)
                        ));
                        (info.path.display().to_string(), item)
                    })
                    .collect();
                screen.open_picker(PickerKind::Resume, "Resume a session", items, 0);
            }
            Err(error) => screen.notice(error.to_string(), NoticeKind::Error),
        },
        SlashCommand::Tree | SlashCommand::Fork => {
            let fork = command == SlashCommand::Fork;
            let messages: Vec<_> = app
                .user_messages()
                .into_iter()
                .filter(|m| !fork || m.on_branch)
                .collect();
            if messages.is_empty() {
                screen.notice("No messages yet.", NoticeKind::Info);
                return;
            }
            let selected = messages.iter().rposition(|m| m.on_branch).unwrap_or(0);
            let items = messages
                .into_iter()
                .map(|message| {
                    let first = message.text.lines().next().unwrap_or_default().to_owned();
                    let marker = if message.on_branch && !fork { "• " } else { "  " };
                    let label = format!("{}{marker}{first}", "  ".repeat(message.level));
                    (message.id, SelectItem::new(label))
                })
                .collect();
            let (kind, title) = if fork {
                (PickerKind::Fork, "Fork a new session from a message")
            } else {
                (PickerKind::Tree, "Continue from an earlier message (• current branch)")
            };
            screen.open_picker(kind, title, items, selected);
        }
        SlashCommand::Session => screen.notice(session_commands::session_info(app), NoticeKind::Info),
        SlashCommand::Name(name) => session_commands::name(screen, app, &name),
        SlashCommand::Export(rest) => session_commands::export(screen, app, &rest).await,
        SlashCommand::Copy => session_commands::copy(screen, app, &context.environment).await,
        SlashCommand::Share => session_commands::share(screen, app, &context.environment).await,
        SlashCommand::Login | SlashCommand::Logout => match &context.auth {
            Some(auth) => {
                let dialogs = login::LoginDialogs::new(app.session().ui(), auth.clone(), (*app.registry()).clone());
                let logout = command == SlashCommand::Logout;
                tokio::spawn(async move {
                    if logout {
                        dialogs.logout().await;
                    } else {
                        dialogs.login().await;
                    }
                });
            }
            None => screen.notice(
                "auth.json could not be read: see the warning at start-up.",
                NoticeKind::Error,
            ),
        },
        SlashCommand::Help => {
            let mut text = String::from("Commands:");
            for (name, help) in COMMANDS {
                text.push_str(&format!("\n  {name:<10} {help}"));
            }
            text.push_str(&commands::resource_commands(
                &app.session().resources(),
                context.skill_commands,
            ));
            // The extensions' commands, by their invocation names.
            for command in extensions.map(|e| e.commands()).unwrap_or_default() {
                let name = format!("/{}", command.invocation_name);
                let help = command.description.unwrap_or_default();
                text.push_str(&format!("\n  {name:<10} {help}"));
            }
            text.push_str(
                "\nKeys: enter send (steer while running) · alt+enter follow-up · alt+up restore queued · esc abort · alt+y / alt+n apply / discard the pending preview · ctrl+o expand · ctrl+c twice or ctrl+d exit",
            );
            screen.notice(text, NoticeKind::Info);
        }
        // Handled by the screen itself.
        SlashCommand::Quit | SlashCommand::Apply(_) | SlashCommand::Discard(_) => {}
    }
}

async fn tree_message(
    message: TreeMessage,
    screen: &mut Screen,
    app: &App,
    trees: &mpsc::UnboundedSender<TreeMessage>,
) {
    match message {
        TreeMessage::Instructions { target, instructions } => {
            start_navigation(screen, app, &target, true, Some(instructions), trees)
        }
        TreeMessage::AskAgain { target } => ask_summary(screen, &target),
        TreeMessage::Done(result) => {
            screen.set_running(false);
            match *result {
                Ok(outcome) if outcome.aborted => {
                    screen.notice("Branch summarization cancelled", NoticeKind::Info);
                    // `/tree` again: neither the extensions nor the context matter to it.
                    let context = CommandContext {
                        skill_commands: false,
                        environment: Environment::default(),
                        auth: None,
                        background: background::Work::new(mpsc::unbounded_channel().0),
                    };
                    command_action(SlashCommand::Tree, screen, app, None, &context).await;
                }
                Ok(outcome) if outcome.cancelled => screen.notice("Navigation cancelled", NoticeKind::Info),
                Ok(outcome) => {
                    if let Some(entry) = &outcome.summary_entry
                        && let pi_session_store::EntryKind::BranchSummary(summary) = &entry.kind
                    {
                        screen.notice(summary.summary.clone(), NoticeKind::Info);
                    }
                    screen.notice("Navigated to selected point", NoticeKind::Info);
                    if let Some(text) = outcome.editor_text
                        && screen.editor_mut().text().trim().is_empty()
                    {
                        screen.editor_mut().set_text(&text);
                    }
                }
                Err(error) => screen.notice(error.to_string(), NoticeKind::Error),
            }
        }
    }
    refresh(screen, app);
}
