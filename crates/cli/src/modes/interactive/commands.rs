//! Slash commands of the interactive mode: the `/` menu's catalog and parsing them (`session_commands` carries out the ones
//! about the session itself).

use super::autocomplete::{Arguments, CommandEntry};

/// A command typed in the editor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlashCommand {
    /// `/model [search]`: pick another model; a search naming exactly one model selects it, any
    /// other opens the picker filtered by it.
    Model(String),
    /// `/new`: start a new session.
    New,
    /// `/resume`: open another session of this directory.
    Resume,
    /// `/tree`: go back to an earlier message of this session (a new branch in the same file).
    Tree,
    /// `/fork`: a new session from an earlier message.
    Fork,
    /// `/clone`: a copy of this session at the current position, continued in place.
    Clone,
    /// `/hotkeys`: list the keyboard shortcuts.
    Hotkeys,
    /// `/import <path.jsonl>`: replace the current session with a copy of that file.
    Import(String),
    /// `/session`: show the session's name, file, id, message counts, tokens and cost.
    Session,
    /// `/export [file]`: write the session as HTML (or the branch as JSONL for a `.jsonl` file).
    Export(String),
    /// `/copy`: the last agent message to the clipboard.
    Copy,
    /// `/share`: the session's HTML export as a secret GitHub gist (needs `gh`).
    Share,
    /// `/name [name]`: name the session, or show its name.
    Name(String),
    /// `/compact [instructions]`: summarize the history now, focused by the instructions.
    Compact(String),
    /// `/apply [reason]`: apply the pending preview.
    Apply(String),
    /// `/discard [reason]`: discard the pending preview.
    Discard(String),
    /// `/login`: log in to a subscription or store an API key in `auth.json`.
    Login,
    /// `/logout`: remove credentials `/login` stored.
    Logout,
    /// `/quit` (or `/exit`).
    Quit,
    /// `/help`: list the commands and keys.
    Help,
}

/// The built-in commands with their one-line help, in pi's order (its `BUILTIN_SLASH_COMMANDS`,
/// those this interactive mode has) followed by ours, for the `/` menu and `/help`.
pub(super) const COMMANDS: &[(&str, &str)] = &[
    ("/model", "Select model (opens selector UI)"),
    (
        "/export",
        "Export session (HTML default, or specify path: .html/.jsonl)",
    ),
    ("/import", "Import and resume a session from a JSONL file"),
    ("/share", "Share session as a secret GitHub gist"),
    ("/copy", "Copy last agent message to clipboard"),
    ("/name", "Set session display name"),
    ("/session", "Show session info and stats"),
    ("/hotkeys", "Show all keyboard shortcuts"),
    ("/fork", "Create a new fork from a previous user message"),
    ("/clone", "Duplicate the current session at the current position"),
    ("/tree", "Navigate session tree (switch branches)"),
    ("/login", "Configure provider authentication"),
    ("/logout", "Remove provider authentication"),
    ("/new", "Start a new session"),
    ("/compact", "Manually compact the session context"),
    ("/resume", "Resume a different session"),
    ("/quit", "Quit pi"),
    ("/apply", "Apply the pending preview [reason]"),
    ("/discard", "Discard the pending preview [reason]"),
    ("/help", "Show the commands and keys"),
];

/// The name of the command `text` starts with (`/name args` → `name`), when its first word looks
/// like one: `/` and a name without another `/` (so `/etc/hosts …` is a path, sent as text).
/// Text that starts with a space is never a command.
///
/// ```
/// use pi_cli::modes::interactive::command_word;
/// assert_eq!(command_word("/frobnicate now"), Some("frobnicate"));
/// assert_eq!(command_word("/skill:pdf a.pdf"), Some("skill:pdf"));
/// assert_eq!(command_word("/etc/hosts is odd"), None);
/// assert_eq!(command_word(" /tmp is full"), None);
/// assert_eq!(command_word("/"), None);
/// ```
pub fn command_word(text: &str) -> Option<&str> {
    let rest = text.strip_prefix('/')?;
    let word = rest.split(char::is_whitespace).next().unwrap_or(rest);
    (!word.is_empty() && !word.contains('/')).then_some(word)
}

/// The command in `text`, or `None` when it is a message (or an unknown `/word`, sent as is).
///
/// ```
/// use pi_cli::modes::interactive::{SlashCommand, parse_slash_command};
/// assert_eq!(parse_slash_command("/apply Looks right."), Some(SlashCommand::Apply("Looks right.".into())));
/// assert_eq!(parse_slash_command("/quit"), Some(SlashCommand::Quit));
/// assert_eq!(parse_slash_command("/compact keep the API notes"), Some(SlashCommand::Compact("keep the API notes".into())));
/// assert_eq!(parse_slash_command("/name  my session "), Some(SlashCommand::Name("my session".into())));
/// assert_eq!(parse_slash_command("/etc/hosts is odd"), None);
/// ```
pub fn parse_slash_command(text: &str) -> Option<SlashCommand> {
    let text = text.trim();
    let (word, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    let rest = rest.trim().to_owned();
    Some(match word {
        "/model" => SlashCommand::Model(rest),
        "/clone" => SlashCommand::Clone,
        "/hotkeys" => SlashCommand::Hotkeys,
        "/import" => SlashCommand::Import(rest),
        "/new" => SlashCommand::New,
        "/resume" => SlashCommand::Resume,
        "/tree" => SlashCommand::Tree,
        "/fork" => SlashCommand::Fork,
        "/session" => SlashCommand::Session,
        "/export" => SlashCommand::Export(rest),
        "/copy" => SlashCommand::Copy,
        "/share" => SlashCommand::Share,
        "/name" => SlashCommand::Name(rest),
        "/compact" => SlashCommand::Compact(rest),
        "/apply" => SlashCommand::Apply(rest),
        "/discard" => SlashCommand::Discard(rest),
        "/login" => SlashCommand::Login,
        "/logout" => SlashCommand::Logout,
        "/quit" | "/exit" => SlashCommand::Quit,
        "/help" => SlashCommand::Help,
        _ => return None,
    })
}

/// The prompt templates (`/name [hint] description`) and, when `skill_commands`, the skills'
/// `/skill:name` commands, for `/help`.
pub(super) fn resource_commands(resources: &pi_coding_agent::resources::Resources, skill_commands: bool) -> String {
    let mut text = String::new();
    for template in &resources.prompts {
        let hint = template
            .argument_hint
            .as_deref()
            .map(|h| format!(" {h}"))
            .unwrap_or_default();
        text.push_str(&format!("\n  /{}{hint} — {}", template.name, template.description));
    }
    if skill_commands {
        for skill in &resources.skills {
            text.push_str(&format!("\n  /skill:{} — {}", skill.name, skill.description));
        }
    }
    text
}

/// `just now`, `5m ago`, `3h ago`, `2d ago`.
pub(super) fn ago(time: std::time::SystemTime) -> String {
    let seconds = time.elapsed().map(|d| d.as_secs()).unwrap_or(0);
    match seconds {
        0..60 => "just now".to_owned(),
        60..3600 => format!("{}m ago", seconds / 60),
        3600..86_400 => format!("{}h ago", seconds / 3600),
        _ => format!("{}d ago", seconds / 86_400),
    }
}

/// The path argument of `/export`, as pi reads it: the first word, or the text between a pair of
/// quotes; `None` without one (or with an unclosed quote).
///
/// ```
/// use pi_cli::modes::interactive::path_argument;
/// assert_eq!(path_argument("out.html more words"), Some("out.html"));
/// assert_eq!(path_argument("\"my file.html\" x"), Some("my file.html"));
/// assert_eq!(path_argument("'unclosed"), None);
/// assert_eq!(path_argument(""), None);
/// ```
pub fn path_argument(rest: &str) -> Option<&str> {
    let rest = rest.trim_start();
    let first = rest.chars().next()?;
    if first == '"' || first == '\'' {
        let inner = &rest[1..];
        return inner.find(first).map(|end| &inner[..end]);
    }
    Some(rest.split(char::is_whitespace).next().unwrap_or(rest))
}

/// pi's source tag of a resource in the `/` menu: `u` (user), `p` (project), `t` (temporary: the
/// command line), with a package's `npm:` source after it.
fn source_tag(info: &pi_coding_agent::resources::SourceInfo) -> String {
    let scope = match info.metadata.scope.as_str() {
        "user" => "u",
        "project" => "p",
        _ => "t",
    };
    let source = info.metadata.source.trim();
    if source.starts_with("npm:") {
        format!("{scope}:{source}")
    } else {
        scope.to_owned()
    }
}

fn tagged(description: &str, info: &pi_coding_agent::resources::SourceInfo) -> String {
    let tag = source_tag(info);
    if description.is_empty() {
        format!("[{tag}]")
    } else {
        format!("[{tag}] {description}")
    }
}

/// Every command of the `/` menu in pi's order: the built-ins (`/model` completing the models
/// pi offers: the scoped ones, else those with credentials), the prompt templates, the
/// extension commands (those not named like a built-in) and, with `skill_commands`, the skills.
pub(super) fn catalog(
    app: &pi_coding_agent::App,
    extensions: Option<&std::sync::Arc<pi_coding_agent::extensions::Extensions>>,
    skill_commands: bool,
) -> Vec<CommandEntry> {
    let mut commands = builtin_commands();
    let scoped = app.scoped_models();
    let models: Vec<(String, String)> = if scoped.is_empty() {
        app.registry()
            .available()
            .into_iter()
            .map(|m| (m.provider.clone(), m.id.clone()))
            .collect()
    } else {
        scoped
            .iter()
            .map(|s| (s.model.provider.clone(), s.model.id.clone()))
            .collect()
    };
    if let Some(model) = commands.iter_mut().find(|c| c.name == "model") {
        model.arguments = Arguments::Models(models);
    }
    let resources = app.session().resources();
    for template in &resources.prompts {
        commands.push(CommandEntry {
            argument_hint: template.argument_hint.clone(),
            ..CommandEntry::new(
                template.name.clone(),
                tagged(&template.description, &template.source_info),
            )
        });
    }
    let builtins: Vec<String> = COMMANDS.iter().map(|(n, _)| n[1..].to_owned()).collect();
    for command in extensions.map(|e| e.commands()).unwrap_or_default() {
        if builtins.contains(&command.name) {
            continue;
        }
        commands.push(CommandEntry {
            arguments: if command.has_completions {
                Arguments::Extension
            } else {
                Arguments::None
            },
            ..CommandEntry::new(command.invocation_name, command.description.unwrap_or_default())
        });
    }
    if skill_commands {
        for skill in &resources.skills {
            commands.push(CommandEntry::new(
                format!("skill:{}", skill.name),
                tagged(&skill.description, &skill.source_info),
            ));
        }
    }
    commands
}

/// The built-in commands of the `/` menu (pi's order, then ours).
pub(super) fn builtin_commands() -> Vec<CommandEntry> {
    COMMANDS
        .iter()
        .map(|(name, help)| CommandEntry::new(name.trim_start_matches('/'), *help))
        .collect()
}
