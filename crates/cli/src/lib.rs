//! The `pi` command: parse the command line, load the configuration, choose the model, build the
//! session and hand it to a mode.

mod args;
mod config_selector;
pub mod demo;
mod error;
mod extension_help;
mod input;
mod io;
pub mod logging;
mod model;
pub mod modes;
mod package_setup;
mod packages;
mod resources_header;
mod sessions;
mod startup;
mod terminal;
pub mod themes;

pub use args::{Args, ArgsError, Mode};
pub use error::CliError;
pub use input::{InputError, Prompts, build_prompts};
pub use io::Io;
pub use model::{list_models, no_model_help};
pub use packages::{PACKAGE_COMMANDS, run_package_command};
pub use sessions::{SESSION_DIR_ENV, session_root};

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use pi_ai::{ModelRegistry, SharedRegistry};
use pi_coding_agent::config::{AgentPaths, Settings, project_settings_file};
use pi_coding_agent::custom_tools::{NamedFactory, SessionReason};
use pi_coding_agent::extensions::{ExtensionError, Extensions};
use pi_coding_agent::resources::ResourceOptions;
use pi_coding_agent::{AgentSession, PromptRecipe};
use pi_coding_agent::{App, SessionStartReason, ShutdownReason, WarnFn};
use pi_coding_agent::{ModelChoice, SessionBuilder, ToolSelection};
use pi_session_store::SessionManager;

use crate::io::say;
pub use crate::resources_header::resource_notices;

/// The version `pi --version` prints.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The whole `pi` process: parses the command line, starts the runtime, runs, and returns the exit
/// code. The `pi` binary is `main_with(RunOptions::default())`; a program that embeds pi with its
/// own native tools calls it with its factories.
pub fn main_with(options: RunOptions) -> std::process::ExitCode {
    use std::process::ExitCode;
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // `pi install|remove|uninstall|update|list|config …`: pi's package commands.
    if argv
        .get(1)
        .and_then(|a| a.to_str())
        .is_some_and(|a| PACKAGE_COMMANDS.contains(&a))
    {
        return run_package_process(&argv, &options);
    }
    let args = match Args::parse_from_argv(argv) {
        Ok(args) => args,
        Err(error) if error.help => {
            print!("{}", error.message);
            print!(
                "{}",
                extension_help::extension_flags_help(options.cwd.clone(), options.agent_dir.clone())
            );
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            eprintln!("{}", error.message);
            return ExitCode::from(2);
        }
    };
    // `--version` answers before any runtime, file or thread is touched (SPEC §8: startup budget).
    if args.version {
        println!("{VERSION}");
        return ExitCode::SUCCESS;
    }
    // `--api-key` is a secret from the start.
    if let Some(key) = &args.api_key {
        pi_ai::register_secret(key);
    }
    // The debug log (`PI_LOG` / `RUST_LOG`), before anything that logs; nothing without them.
    logging::init_for_process(args.api_key.as_deref(), options.agent_dir.as_deref());
    let io = Io::process(&args);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("pi: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(run_with(args, io, options));
    // Background tasks (a tool process being killed, the stdin reader) must not keep the process
    // alive once the run is over.
    runtime.shutdown_background();
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// `pi --export <session.jsonl> [output.html]`: pi's `Exported to: <path>`, or `Error: <why>`
/// and exit code 1.
async fn export_file(input: &Path, output: Option<PathBuf>, io: &Io) -> i32 {
    let input = input.to_path_buf();
    let colors = pi_coding_agent::export::ExportColors::default();
    let result =
        tokio::task::spawn_blocking(move || pi_coding_agent::export::export_file(&input, output.as_deref(), &colors))
            .await
            .map_err(pi_coding_agent::export::ExportError::from)
            .and_then(|result| result);
    match result {
        Ok(path) => {
            say(&io.stdout, &format!("Exported to: {}", path.display()));
            0
        }
        Err(error) => {
            say(&io.stderr, &format!("Error: {error}"));
            1
        }
    }
}

/// A package command as the whole process: its own runtime, its exit code.
fn run_package_process(argv: &[std::ffi::OsString], options: &RunOptions) -> std::process::ExitCode {
    let words: Vec<String> = argv.iter().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("pi: cannot start the async runtime: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let run = run_package_command(&words, options.agent_dir.clone(), options.cwd.clone());
    let code = runtime.block_on(run).unwrap_or(1);
    runtime.shutdown_background();
    std::process::ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// Everything a mode needs.
pub struct Prepared {
    /// The session and its file.
    pub app: App,
    /// The chosen model.
    pub choice: ModelChoice,
    /// The prompts to send first.
    pub prompts: Prompts,
    /// RPC mode's user interface, installed before the custom tools loaded.
    pub rpc_ui: Option<crate::modes::rpc::RpcUi>,
    /// The interactive mode's dialog requests (its user interface was installed before the
    /// custom tools loaded).
    pub tui_requests: Option<tokio::sync::mpsc::UnboundedReceiver<crate::modes::interactive::UiRequest>>,
    /// Warnings for the interactive mode to show (a failed session write).
    pub tui_warnings: Option<tokio::sync::mpsc::UnboundedReceiver<String>>,
    /// Whether the interactive mode shows its start-up header (`quietStartup` hides it unless
    /// `--verbose`).
    pub show_header: bool,
    /// `enableSkillCommands` (default on): the skills' `/skill:name` commands are listed.
    pub skill_commands: bool,
    /// pi's image settings (`terminal.showImages` and `terminal.imageWidthCells` for the interactive mode).
    pub images: pi_coding_agent::config::ImageSettings,
    /// The loaded extensions (`docs/extensions.md`), attached to the app.
    pub extensions: Arc<Extensions>,
    /// What the session's resources and system prompt were built from (extended with the paths
    /// of `resources_discover`).
    pub prompt_recipe: PromptRecipe,
    /// The interactive mode's themes and the one to start with (`None` in the other modes).
    pub themes: Option<(themes::Themes, themes::ActiveTheme)>,
    /// `auth.json` (`/login`, `/logout`); `None` when it could not be read (a warning said why).
    pub auth: Option<Arc<pi_coding_agent::auth::AuthStorage>>,
    /// The interactive mode's keys (`keybindings.json`, `doubleEscapeAction`, `hideThinkingBlock`).
    pub key_settings: crate::modes::interactive::KeySettings,
}

/// What a program embedding `pi` adds to it or changes.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Native custom-tool factories: the highest-priority custom tools (loaded after every other
    /// one, `--tool` included, so they win a name conflict, as the tools of pi's SDK `customTools`
    /// do).
    pub factories: Vec<NamedFactory>,
    /// The working directory (default: the process's).
    pub cwd: Option<PathBuf>,
    /// pi's directory (default: `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`).
    pub agent_dir: Option<PathBuf>,
}

/// Runs `pi` with `args` and `io`; returns the process exit code.
pub async fn run(args: Args, io: Io) -> i32 {
    run_with(args, io, RunOptions::default()).await
}

/// [`run`] with native custom tools: the entry point of a program that embeds pi.
///
/// ```no_run
/// use pi_cli::{Args, Io, RunOptions, run_with};
/// use pi_coding_agent::custom_tools::NamedFactory;
///
/// # async fn demo(my_factory: NamedFactory) {
/// let args = Args::parse_from_argv(std::env::args_os()).unwrap_or_default();
/// let io = Io::process(&args);
/// let options = RunOptions { factories: vec![my_factory], ..Default::default() };
/// let code = run_with(args, io, options).await;
/// std::process::exit(code);
/// # }
/// ```
pub async fn run_with(args: Args, io: Io, extensions: RunOptions) -> i32 {
    if args.version {
        say(&io.stdout, VERSION);
        return 0;
    }
    if let Some(input) = &args.export {
        return export_file(input, args.messages.first().map(PathBuf::from), &io).await;
    }
    if args.demo && io.interactive && !args.print && args.mode() == Mode::Text {
        return run_demo_interactive().await;
    }
    if args.demo {
        let stdout = io.stdout.clone();
        let options = crate::demo::DemoOptions { paced: io.interactive };
        return match crate::demo::run(options, move |text| {
            let mut out = stdout.lock().unwrap_or_else(|p| p.into_inner());
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        })
        .await
        {
            Ok(_) => 0,
            Err(error) => {
                say(&io.stderr, &format!("pi: {error}"));
                1
            }
        };
    }
    let mut prepared = match prepare(&args, &io, &extensions).await {
        Ok(Some(prepared)) => prepared,
        Ok(None) => return 0,
        Err(error) => {
            say(&io.stderr, &error.to_string());
            return 1;
        }
    };
    let app = prepared.app.clone();
    let extensions = prepared.extensions.clone();
    let stop = watch_signals(app.session().clone());
    app.notify_tools(SessionReason::Start, None).await;
    // The extensions' start (nothing without a runner), then pi loads the skills and prompt
    // templates `resources_discover` added (after all others) and rebuilds the system prompt;
    // themes have nothing to join yet.
    app.emit_session_start(SessionStartReason::Startup, None).await;
    let discovered = app.emit_resources_discover(SessionStartReason::Startup).await;
    if let Err(error) = prepared
        .prompt_recipe
        .extend(app.session(), &extensions, &discovered)
        .await
    {
        say(&io.stderr, &format!("pi: {error}"));
    }
    let code = run_mode(&args, &io, prepared).await;
    app.emit_session_shutdown(ShutdownReason::Quit, None).await;
    app.notify_tools(SessionReason::Shutdown, None).await;
    extensions.shutdown().await;
    app.wait_for_saved_choices().await;
    stop.abort();
    code
}

async fn run_mode(args: &Args, io: &Io, prepared: Prepared) -> i32 {
    let Prepared {
        app,
        choice,
        prompts,
        rpc_ui,
        tui_requests,
        tui_warnings,
        show_header,
        skill_commands,
        images,
        extensions,
        prompt_recipe: _,
        themes,
        auth,
        key_settings,
    } = prepared;
    let session = app.session().clone();
    match args.mode() {
        Mode::Rpc => {
            let ui = rpc_ui.unwrap_or_else(|| crate::modes::rpc::install_ui(&app, io.stdout.clone()));
            crate::modes::rpc::run_rpc_extended(app, ui, extensions).await
        }
        Mode::Json => {
            if prompts.is_empty() {
                say(&io.stderr, "pi: no prompt given (pass a message or pipe input)");
                return 1;
            }
            crate::modes::print::run_json_with(
                &app,
                &extensions,
                app.header_json(),
                prompts.messages,
                io.stdout.clone(),
                io.stderr.clone(),
            )
            .await
        }
        Mode::Text if args.print || !io.interactive => {
            if prompts.is_empty() {
                say(&io.stderr, "pi: no prompt given (pass a message or pipe input)");
                return 1;
            }
            let (stdout, stderr) = (io.stdout.clone(), io.stderr.clone());
            crate::modes::print::run_text_with(&app, &extensions, prompts.messages, stdout, stderr).await
        }
        Mode::Text if uses_tui(args, io) => {
            let mut header = if show_header {
                vec![
                    format!("pi {VERSION} · {} · {}", choice, session.cwd().display()),
                    "Enter sends · Esc aborts · /help lists commands and keys".to_owned(),
                ]
            } else {
                Vec::new()
            };
            header.extend(resource_notices(&session.resources(), show_header));
            let (themes, active) = themes.unwrap_or_else(|| (themes::Themes::default(), themes::ActiveTheme::dark()));
            header.extend(resources_header::theme_notices(&themes, show_header));
            let mode = pi_tui::ColorMode::from_env();
            let options = crate::modes::interactive::InteractiveOptions {
                header,
                theme: active.theme.for_mode(mode),
                theme_watch: (active
                    .watch
                    .map(|path| crate::modes::interactive::ThemeWatch { path, mode })),
                notices: (active.error.into_iter())
                    .map(|error| (error, crate::modes::interactive::NoticeKind::Error))
                    .chain(
                        (key_settings.warnings.into_iter())
                            .map(|warning| (warning, crate::modes::interactive::NoticeKind::Warning)),
                    )
                    .collect(),
                keybindings: key_settings.keybindings,
                double_escape: key_settings.double_escape,
                hide_thinking: key_settings.hide_thinking,
                skill_commands,
                initial: prompts.messages,
                requests: tui_requests,
                warnings: tui_warnings,
                extensions: Some(extensions),
                auth,
                images: crate::modes::interactive::InlineImages {
                    show: images.show_images,
                    width_cells: images.image_width_cells,
                    ..crate::modes::interactive::InlineImages::detect()
                },
                ..Default::default()
            };
            crate::modes::interactive::run_interactive(app, options).await
        }
        Mode::Text => {
            let banner = format!(
                "pi {VERSION} · {} · {}\nType a message; /apply or /discard a pending preview; /compact to summarize; /quit to leave.\n",
                choice,
                session.cwd().display()
            );
            crate::modes::line::run_line(&app, &banner, prompts.messages, io.stdout.clone()).await
        }
    }
}

/// Whether this run is the full-screen interactive mode.
fn uses_tui(args: &Args, io: &Io) -> bool {
    args.mode() == Mode::Text && !args.print && io.interactive && !terminal::dumb_terminal()
}

/// `pi --demo` on a terminal: the interactive mode on the demo's session; whatever the user sends,
/// the scripted model plays the demo.
async fn run_demo_interactive() -> i32 {
    let demo = match crate::demo::demo_session(crate::demo::DemoOptions { paced: true }).await {
        Ok(demo) => demo,
        Err(error) => {
            eprintln!("pi: {error}");
            return 1;
        }
    };
    let over = || pi_agent_core::faux::faux_assistant_text(crate::demo::SCRIPT_OVER);
    demo.faux.append_responses((0..100).map(|_| over()));
    let store = SessionManager::in_memory(&demo.root);
    let registry = Arc::new(ModelRegistry::builtin());
    let app = App::new(demo.session.clone(), store, registry, None, Arc::new(|_| {}));
    let header = vec![
        format!(
            "pi demo: a scripted model (no network) working on a copy of a small project in {}",
            demo.root.display()
        ),
        format!(
            "Send any message (for example: {}) and watch the script play; /quit leaves.",
            crate::demo::DEMO_PROMPT
        ),
    ];
    let options = crate::modes::interactive::InteractiveOptions {
        header,
        show_history: false,
        ..Default::default()
    };
    crate::modes::interactive::run_interactive(app, options).await
}

/// SIGINT, SIGTERM and SIGHUP: the first one during a run aborts the run (the mode then ends as
/// usual, the session file holding everything that finished); one while idle, or a second one,
/// exits with 128 + the signal number.
fn watch_signals(session: AgentSession) -> tokio::task::JoinHandle<()> {
    // The handlers are installed before this returns (not when the task first runs), so a signal
    // that arrives right after start-up is ours, not the default action.
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let handlers = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        );
        tokio::spawn(async move {
            let (Ok(mut int), Ok(mut term), Ok(mut hup)) = handlers else {
                return;
            };
            let aborting = Arc::new(AtomicBool::new(false));
            loop {
                let code = tokio::select! {
                    _ = int.recv() => 130,
                    _ = term.recv() => 143,
                    _ = hup.recv() => 129,
                };
                abort_or_exit(&session, &aborting, code);
            }
        })
    }
    #[cfg(not(unix))]
    {
        tokio::spawn(async move {
            let aborting = Arc::new(AtomicBool::new(false));
            while tokio::signal::ctrl_c().await.is_ok() {
                abort_or_exit(&session, &aborting, 130);
            }
        })
    }
}

/// Aborts the active run in the background, or exits when idle or already aborting.
fn abort_or_exit(session: &AgentSession, aborting: &Arc<AtomicBool>, code: i32) {
    if aborting.swap(true, Ordering::SeqCst) || !session.agent().is_streaming() {
        crate::modes::interactive::restore_terminal();
        std::process::exit(code);
    }
    let (session, aborting) = (session.clone(), aborting.clone());
    tokio::spawn(async move {
        session.abort().await;
        aborting.store(false, Ordering::SeqCst);
    });
}

/// Loads settings and models, chooses the model, builds the prompts and the session. `Ok(None)`
/// when the run is complete already (`--list-models`).
pub async fn prepare(args: &Args, io: &Io, extensions: &RunOptions) -> Result<Option<Prepared>, CliError> {
    let cwd = match &extensions.cwd {
        Some(cwd) => cwd.clone(),
        None => std::env::current_dir().map_err(CliError::WorkingDirectory)?,
    };
    let paths = match &extensions.agent_dir {
        Some(dir) => AgentPaths::new(dir.clone()),
        None => AgentPaths::from_process_env().ok_or(CliError::NoAgentDir)?,
    };
    let (mut settings, registry, auth) = {
        let paths = paths.clone();
        let cwd = cwd.clone();
        tokio::task::spawn_blocking(move || startup::load_config(&paths, &cwd)).await??
    };
    args.apply_sandbox_flags(&mut settings.sandbox);
    if args.list_models.is_none() {
        sessions::fork_conflicts(args)?;
    }
    // Extensions may register providers while they load, and pi chooses the model after that
    // (`--model proxy/…`, `--list-models`): the session is built with the model chosen now (a
    // placeholder when none is found yet), and the choice is made again once their providers are in.
    let registry = SharedRegistry::new(registry);
    let provisional = startup::choose(args, &settings, &registry.current(), None)
        .ok()
        .map(|(_, choice)| choice)
        .unwrap_or(ModelChoice {
            model: pi_agent_core::Model::unknown(),
            thinking: pi_agent_core::ThinkingLevel::Off,
        });
    let prompts = if args.list_models.is_some() {
        Prompts::default()
    } else {
        let messages = args.messages.clone();
        let stdin = io.stdin.clone();
        let cwd = cwd.clone();
        let resize = settings.images.auto_resize;
        tokio::task::spawn_blocking(move || build_prompts(&messages, stdin.as_deref(), &cwd, resize)).await??
    };
    // The interactive mode shows warnings (custom tools that failed to load, a failed session
    // write) as notices: stderr would tear through its screen.
    let (warn, tui_warnings): (WarnFn, _) = if uses_tui(args, io) && args.list_models.is_none() {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        (Arc::new(move |warning| drop(tx.send(warning))), Some(rx))
    } else {
        let warn_to = io.stderr.clone();
        (Arc::new(move |warning| say(&warn_to, &warning)), None)
    };
    if let Some(error) = &auth.1 {
        warn(format!("Warning: {error}"));
    }
    let (session, rpc_ui, tui_requests, extensions, prompt_recipe, themes) = build_session(
        args,
        &settings,
        &provisional,
        registry.clone(),
        &cwd,
        &paths,
        extensions,
        io,
        &warn,
    )
    .await?;
    for error in extensions.register_providers(&registry) {
        warn(format!("Error: {error}"));
    }
    if let Some(search) = &args.list_models {
        say(&io.stdout, &list_models(&registry.current(), search));
        extensions.shutdown().await;
        return Ok(None);
    }
    let (scope, choice) = match startup::choose(args, &settings, &registry.current(), Some(io)) {
        Ok(chosen) => chosen,
        Err(error) => {
            extensions.shutdown().await;
            return Err(error);
        }
    };
    if choice != provisional {
        let agent = session.agent();
        agent.set_model(choice.model.clone());
        agent.set_thinking_level(choice.thinking);
    }
    let env_session_dir = std::env::var(SESSION_DIR_ENV).ok();
    let root = session_root(args, env_session_dir.as_deref(), &settings, &cwd, &paths);
    let store = sessions::open_store(args, &cwd, &root, io).await?;
    let app = App::new(
        session,
        store,
        registry,
        (!args.no_session).then_some(root),
        warn.clone(),
    );
    extensions.attach(&app);
    if !extensions.is_empty() {
        app.set_extension_runner(Some(extensions.runner()));
    }
    extensions.set_report(extension_report(args, rpc_ui.as_ref(), &warn));
    if let Err(errors) = extensions.apply_flags(&args.extension_flags).await {
        let lines: Vec<String> = errors.iter().map(|error| format!("Error: {error}")).collect();
        extensions.shutdown().await;
        return Err(CliError::ExtensionFlags(lines.join("\n")));
    }
    app.set_scoped_models(scope);
    app.set_compaction_settings(pi_coding_agent::compaction::CompactionSettings::from_settings(
        &settings.raw,
    ));
    app.set_branch_summary_settings(pi_coding_agent::compaction::BranchSummarySettings::from_settings(
        &settings.raw,
    ));
    // A session with history gets its model and thinking level back (unless the command line
    // names them); a new one records the ones it starts with.
    app.start(args.model.is_some() || args.provider.is_some(), args.thinking.is_some());
    // Choices made from now on (`/model`, RPC `set_model`, cycling) become the defaults; the
    // command line's do not (pi writes neither `--model` nor `--thinking`).
    app.save_choices_to(paths.settings_file(), settings.default_thinking_level);
    Ok(Some(Prepared {
        app,
        choice,
        prompts,
        rpc_ui,
        tui_requests,
        tui_warnings,
        show_header: shows_header(args, &settings),
        skill_commands: skill_commands_enabled(&settings),
        images: settings.images,
        extensions,
        prompt_recipe,
        themes,
        auth: auth.0,
        key_settings: crate::modes::interactive::KeySettings::load(&paths.agent_dir, &settings.raw),
    }))
}

/// pi's `enableSkillCommands` (default on; the older `skills.enableSkillCommands` counts when
/// the top-level key is absent).
fn skill_commands_enabled(settings: &Settings) -> bool {
    let raw = &settings.raw;
    let value = raw
        .get("enableSkillCommands")
        .or_else(|| raw.get("skills").and_then(|s| s.get("enableSkillCommands")));
    value.and_then(serde_json::Value::as_bool).unwrap_or(true)
}

/// Where extension errors go: an `extension_error` line in RPC mode (pi's
/// `{"type":"extension_error","extensionPath","event","error"}`), else the warnings
/// (`Extension error (<path>): <message>`, pi's print-mode line).
fn extension_report(
    args: &Args,
    rpc_ui: Option<&crate::modes::rpc::RpcUi>,
    warn: &WarnFn,
) -> pi_coding_agent::extensions::ReportFn {
    if args.mode() == Mode::Rpc
        && let Some(ui) = rpc_ui
    {
        let writer = ui.writer().clone();
        return Arc::new(move |error: &ExtensionError| {
            writer.line(&crate::modes::rpc::extension_error_line(error));
        });
    }
    let warn = warn.clone();
    Arc::new(move |error: &ExtensionError| {
        warn(format!("Extension error ({}): {}", error.extension(), error.message()));
    })
}

/// Whether the interactive mode shows its start-up header: not with `quietStartup`, unless
/// `--verbose` (pi's rule).
fn shows_header(args: &Args, settings: &Settings) -> bool {
    args.verbose || settings.quiet_startup != Some(true)
}

/// The tools the flags ask for: pi's defaults plus every custom tool; `--tools` exactly those
/// listed; `--no-builtin-tools` only the custom tools; `--no-tools` none (and no custom tools).
fn tool_selection(args: &Args) -> ToolSelection {
    if args.no_tools {
        ToolSelection::None
    } else if args.no_builtin_tools {
        ToolSelection::CustomOnly
    } else if let Some(names) = &args.tools {
        ToolSelection::Only(names.clone())
    } else {
        ToolSelection::Default
    }
}

/// Where pi's skills, prompt templates and themes are looked for: the default places, both
/// settings files' `skills` / `prompts` / `themes`, `--skill`, `--prompt-template` and `--theme`
/// (`--no-skills`, `--no-prompt-templates` and `--no-themes` keep only these).
fn resource_options(args: &Args, cwd: &Path, paths: &AgentPaths) -> ResourceOptions {
    ResourceOptions {
        cwd: cwd.to_path_buf(),
        agent_dir: Some(paths.agent_dir.clone()),
        home: std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from),
        global_settings_file: Some(paths.settings_file()),
        project_settings_file: Some(project_settings_file(cwd)),
        skill_paths: args.skill.clone(),
        prompt_paths: args.prompt_template.clone(),
        theme_paths: args.theme.clone(),
        no_skills: args.no_skills,
        no_prompt_templates: args.no_prompt_templates,
        no_themes: args.no_themes,
        ..ResourceOptions::default()
    }
}

/// The session, the user interface installed for RPC or interactive mode before the custom
/// tools loaded, and the extensions.
type PreparedSession = (
    AgentSession,
    Option<crate::modes::rpc::RpcUi>,
    Option<tokio::sync::mpsc::UnboundedReceiver<crate::modes::interactive::UiRequest>>,
    Arc<Extensions>,
    PromptRecipe,
    Option<(themes::Themes, themes::ActiveTheme)>,
);

/// Builds the session with [`SessionBuilder`] from the flags and settings; custom tools that fail
/// to load are reported through `warn`.
#[allow(clippy::too_many_arguments)]
async fn build_session(
    args: &Args,
    settings: &Settings,
    choice: &ModelChoice,
    registry: SharedRegistry,
    cwd: &Path,
    paths: &AgentPaths,
    extensions: &RunOptions,
    io: &Io,
    warn: &WarnFn,
) -> Result<PreparedSession, CliError> {
    let packages = package_setup::package_resources(args, cwd, paths, io, warn).await;
    let mut resources = resource_options(args, cwd, paths);
    resources.package_skills = packages.extras(pi_coding_agent::packages::ResourceKind::Skills);
    resources.package_prompts = packages.extras(pi_coding_agent::packages::ResourceKind::Prompts);
    resources.package_themes = packages.extras(pi_coding_agent::packages::ResourceKind::Themes);
    // Only the interactive mode draws with a theme.
    let themes = if uses_tui(args, io) {
        Some(themes::load(resources.clone(), settings, paths).await)
    } else {
        None
    };
    let mut builder = SessionBuilder::new(cwd, choice.model.clone())
        .thinking(choice.thinking)
        .settings(settings.clone())
        .agent_paths(paths.clone())
        .registry(registry)
        .api_key(args.api_key.clone())
        .tools(tool_selection(args))
        .system_prompt(args.system_prompt.clone())
        .append_system_prompts(args.append_system_prompt.clone())
        .context_files(!args.no_context_files)
        .resources(resources);
    for path in &args.tool {
        builder = builder.tool_path(path);
    }
    for factory in &extensions.factories {
        builder = builder.factory(factory.clone());
    }
    // Extensions (`-e`, `--no-extensions`, the discovered ones) load while the custom tools do;
    // packages (`npm:` / `git:` sources) add their entries through `resolved`.
    builder = builder.extensions(pi_coding_agent::ExtensionSetup {
        paths: args
            .extension
            .iter()
            .filter(|path| !package_setup::is_package_source(path))
            .cloned()
            .collect(),
        no_extensions: args.no_extensions,
        resolved: packages.extensions,
    });
    // RPC mode answers tools' questions, and so does the interactive mode with dialogs: the
    // builder installs their user interface before the tools load, so that they see `hasUI`.
    let mut rpc_ui = None;
    let mut tui_requests = None;
    if args.mode() == Mode::Rpc {
        let ui = crate::modes::rpc::RpcUi::for_stdout(io.stdout.clone());
        builder = builder.ui(Arc::new(ui.clone()));
        rpc_ui = Some(ui);
    } else if uses_tui(args, io) {
        let (ui, requests) = crate::modes::interactive::new_ui();
        builder = builder.ui(ui);
        tui_requests = Some(requests);
    } else {
        // Print and JSON modes: no one answers, but the tools' warnings go to stderr.
        builder = builder.ui(Arc::new(crate::modes::stderr_ui::StderrUi::new(io.stderr.clone())));
    }
    let built = builder.build().await?;
    for error in &built.load_errors {
        warn(format!("pi: custom tool {error}"));
    }
    // pi's words: `Error: Failed to load extension "<path>": <why>`.
    for error in &built.extension_errors {
        warn(format!("Error: {error}"));
    }
    Ok((
        built.session,
        rpc_ui,
        tui_requests,
        Arc::new(built.extensions),
        built.prompt_recipe,
        themes,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(argv: &[&str]) -> Args {
        Args::parse_from_argv(std::iter::once("pi").chain(argv.iter().copied())).unwrap()
    }

    #[test]
    fn quiet_startup_hides_the_header_unless_verbose() {
        let quiet = Settings::from_json(r#"{"quietStartup": true}"#, "s.json").unwrap();
        assert!(shows_header(&args(&[]), &Settings::default()));
        assert!(!shows_header(&args(&[]), &quiet));
        assert!(shows_header(&args(&["--verbose"]), &quiet));
    }
}
