//! Slash commands of the interactive mode: parsing them (`session_commands` carries out the ones
//! about the session itself).

/// A command typed in the editor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlashCommand {
    /// `/model`: pick another model.
    Model,
    /// `/new`: start a new session.
    New,
    /// `/resume`: open another session of this directory.
    Resume,
    /// `/tree`: go back to an earlier message of this session (a new branch in the same file).
    Tree,
    /// `/fork`: a new session from an earlier message.
    Fork,
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

/// Every command with its one-line help, for `/help` and completion.
pub(super) const COMMANDS: &[(&str, &str)] = &[
    ("/model", "pick another model"),
    ("/new", "start a new session"),
    ("/resume", "open another session of this directory"),
    ("/tree", "continue from an earlier message (a new branch)"),
    ("/fork", "a new session from an earlier message"),
    ("/session", "show session info and stats"),
    (
        "/export",
        "export session (HTML default, or specify path: .html/.jsonl)",
    ),
    ("/share", "share session as a secret GitHub gist"),
    ("/copy", "copy last agent message to clipboard"),
    ("/name", "set session display name"),
    ("/compact", "summarize the history now [instructions]"),
    ("/apply", "apply the pending preview [reason]"),
    ("/discard", "discard the pending preview [reason]"),
    ("/login", "Configure provider authentication"),
    ("/logout", "Remove provider authentication"),
    ("/help", "commands and keys"),
    ("/quit", "leave pi"),
];

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
        "/model" => SlashCommand::Model,
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
