//! pi's command line: flags, positional messages and `@file` arguments.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

/// How the run talks to its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// Text for people (the interactive mode, or the final answer with `-p`).
    Text,
    /// Every event as one JSON line.
    Json,
    /// pi's JSONL command protocol on stdin/stdout.
    Rpc,
}

const AFTER_HELP: &str = "\
Examples:
  pi                                   Start an interactive session
  pi \"List the files here\"             Start with a first message
  pi -p \"Summarize @README.md\"         Answer once and exit (a file's content is included)
  git diff | pi -p \"Review this diff\"  Piped input is added to the prompt
  pi -c                                Continue the most recent session in this directory
  pi --model anthropic/claude-sonnet-4-5:high
  pi --provider ollama --model qwen3:8b
  pi --tools read,grep,find,ls -p \"Where is the config parsed?\"
  pi --models sonnet:high,haiku:low    Models to cycle through (RPC cycle_model)
  pi --fork 0193a1b2                   Continue a copy of a session in a new session
  pi --demo                            Run the offline demo (no API key, no network)
  pi --export session.jsonl output.html
                                       Export a session file to HTML

Environment:
  ANTHROPIC_API_KEY, OPENAI_API_KEY, …   API keys of the providers
  PI_CODING_AGENT_DIR                   pi's directory (default ~/.pi/agent: settings.json, models.json,
                                        sessions/, tools/, AGENTS.md)
  PI_CODING_AGENT_SESSION_DIR           Session storage directory (overridden by --session-dir)

Commands:
  pi install <source> [-l]     Install extension source and add to settings
  pi remove <source> [-l]      Remove extension source from settings
  pi uninstall <source> [-l]   Alias for remove
  pi update [source|self|pi]   Update pi and installed extensions
  pi list                      List installed extensions from settings
  pi config                    Open TUI to enable/disable package resources
  pi <command> --help          Show help for install/remove/uninstall/update/list

Tools (default: read, bash, edit, write):
  read, bash, edit, write, grep, find, ls, ast_grep, ast_edit";

/// The parsed command line.
#[derive(Debug, Clone, Default, Parser)]
#[command(
    name = "pi",
    about = "pi: an AI coding agent with read, bash, edit and write tools",
    override_usage = "pi [options] [@files...] [messages...]",
    after_help = AFTER_HELP,
    disable_version_flag = true
)]
pub struct Args {
    /// Provider (anthropic, openai, or one from models.json)
    #[arg(long, value_name = "name")]
    pub provider: Option<String>,

    /// Model id or pattern (also provider/id, id:level)
    #[arg(long, value_name = "id")]
    pub model: Option<String>,

    /// API key (default: environment or models.json)
    #[arg(long = "api-key", value_name = "key")]
    pub api_key: Option<String>,

    /// Replace the system prompt (text or file)
    #[arg(long = "system-prompt", value_name = "text")]
    pub system_prompt: Option<String>,

    /// Append text or file contents to the system prompt (can be used multiple times)
    #[arg(long = "append-system-prompt", value_name = "text")]
    pub append_system_prompt: Vec<String>,

    /// Output mode: text (default), json or rpc
    #[arg(long, value_enum, value_name = "mode", hide_possible_values = true)]
    pub mode: Option<Mode>,

    /// Answer the messages and exit (non-interactive)
    #[arg(short = 'p', long = "print")]
    pub print: bool,

    /// Continue the most recent session of this directory
    #[arg(short = 'c', long = "continue")]
    pub continue_session: bool,

    /// Pick a session of this directory to resume
    #[arg(short = 'r', long)]
    pub resume: bool,

    /// Use this session (file path, or id prefix)
    #[arg(long, value_name = "path|id")]
    pub session: Option<String>,

    /// Fork specific session file or partial UUID into a new session
    #[arg(long, value_name = "path|id")]
    pub fork: Option<String>,

    /// Directory for session storage and lookup
    #[arg(long = "session-dir", value_name = "dir")]
    pub session_dir: Option<PathBuf>,

    /// Keep the session in memory only
    #[arg(long = "no-session")]
    pub no_session: bool,

    /// Comma-separated model patterns for Ctrl+P cycling (and RPC cycle_model). Supports globs
    /// (anthropic/*, *sonnet*) and fuzzy matching
    #[arg(long, value_delimiter = ',', value_name = "patterns")]
    pub models: Option<Vec<String>>,

    /// Tools to enable (default: read,bash,edit,write)
    #[arg(short = 't', long, value_delimiter = ',', value_name = "tools")]
    pub tools: Option<Vec<String>>,

    /// -nt: Disable all tools by default (built-in and custom)
    #[arg(long = "no-tools")]
    pub no_tools: bool,

    /// -nbt: Disable built-in tools by default but keep custom tools enabled
    #[arg(long = "no-builtin-tools")]
    pub no_builtin_tools: bool,

    /// Load a custom tool (a directory or file); repeatable
    #[arg(long = "tool", value_name = "path")]
    pub tool: Vec<PathBuf>,

    /// off, minimal, low, medium, high, xhigh
    #[arg(long, value_name = "level")]
    pub thinking: Option<String>,

    /// List available models (optionally filtered)
    #[arg(long = "list-models", value_name = "search", num_args = 0..=1, default_missing_value = "")]
    pub list_models: Option<String>,

    /// -nc: Disable AGENTS.md and CLAUDE.md discovery and loading
    #[arg(long = "no-context-files")]
    pub no_context_files: bool,

    /// Sandbox bash and tool processes: write only in the project and temp (Linux, Landlock)
    #[arg(long, conflicts_with = "no_sandbox")]
    pub sandbox: bool,

    /// Sandbox bash and tool processes, and take the network away (implies --sandbox)
    #[arg(long = "no-network", conflicts_with = "no_sandbox")]
    pub no_network: bool,

    /// Run bash and tool processes unsandboxed, whatever settings.json says
    #[arg(long = "no-sandbox")]
    pub no_sandbox: bool,

    /// Load an extension file (can be used multiple times)
    #[arg(short = 'e', long = "extension", value_name = "path")]
    pub extension: Vec<PathBuf>,

    /// -ne: Disable extension discovery (explicit -e paths still work)
    #[arg(long = "no-extensions")]
    pub no_extensions: bool,

    /// Load a skill file or directory (can be used multiple times)
    #[arg(long = "skill", value_name = "path")]
    pub skill: Vec<String>,

    /// -ns: Disable skills discovery and loading
    #[arg(long = "no-skills")]
    pub no_skills: bool,

    /// Load a prompt template file or directory (can be used multiple times)
    #[arg(long = "prompt-template", value_name = "path")]
    pub prompt_template: Vec<String>,

    /// -np: Disable prompt template discovery and loading
    #[arg(long = "no-prompt-templates")]
    pub no_prompt_templates: bool,

    /// Load a theme file or directory (can be used multiple times)
    #[arg(long = "theme", value_name = "path")]
    pub theme: Vec<String>,

    /// Disable theme discovery and loading
    #[arg(long = "no-themes")]
    pub no_themes: bool,

    /// Force verbose startup (overrides quietStartup setting)
    #[arg(long)]
    pub verbose: bool,

    /// Disable startup network operations (same as PI_OFFLINE=1)
    #[arg(long)]
    pub offline: bool,

    /// Run the offline demo (no key, no network)
    #[arg(long)]
    pub demo: bool,

    /// Export session file to HTML and exit
    #[arg(long = "export", value_name = "file")]
    pub export: Option<PathBuf>,

    /// Show the version number
    #[arg(short = 'v', long)]
    pub version: bool,

    /// Messages to send (`@path` includes a file)
    #[arg(value_name = "messages")]
    pub messages: Vec<String>,

    /// `--name [value]` arguments no flag of pi's names: extension flags (`registerFlag`), read
    /// by their registered types once the extensions loaded; an unregistered one is an error then.
    #[arg(skip)]
    pub extension_flags: Vec<pi_coding_agent::extensions::GivenFlag>,
}

/// Why the command line could not be used: one line for stderr, and whether it is a request for
/// help (exit 0) or a mistake (exit 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgsError {
    /// The text to print.
    pub message: String,
    /// `--help` was asked for.
    pub help: bool,
}

impl Args {
    /// Parses `argv` (including the program name). `--help` returns the help text as an
    /// [`ArgsError`] with `help` set; mistakes return one line such as
    /// `pi: unexpected argument '--frobnicate' (see pi --help)`.
    ///
    /// ```
    /// use pi_cli::Args;
    /// let args = Args::parse_from_argv(["pi", "-p", "--model", "openai/gpt-5:high", "hello", "@a.rs"]).unwrap();
    /// assert!(args.print);
    /// assert_eq!(args.messages, ["hello", "@a.rs"]);
    /// let error = Args::parse_from_argv(["pi", "--mode", "yaml"]).unwrap_err();
    /// assert!(error.message.starts_with("pi: invalid value 'yaml' for '--mode <mode>'"));
    /// // A long flag pi does not know may be an extension's: kept until the extensions loaded.
    /// let args = Args::parse_from_argv(["pi", "--plan", "--level=3", "-p", "hi"]).unwrap();
    /// assert_eq!(args.extension_flags.len(), 2);
    /// assert_eq!(args.messages, ["hi"]);
    /// ```
    pub fn parse_from_argv<I, T>(argv: I) -> Result<Args, ArgsError>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let argv: Vec<std::ffi::OsString> = argv.into_iter().map(Into::into).collect();
        if let Some(command) = argv.get(1).and_then(|a| a.to_str()).filter(|a| SUBCOMMANDS.contains(a)) {
            return Err(ArgsError {
                message: format!(
                    "pi: `pi {command}` is a package command: `pi_cli::run_package_command` runs it (nothing was sent to the model)"
                ),
                help: false,
            });
        }
        let argv = expand_short_forms(argv);
        let (argv, extension_flags) = split_extension_flags(argv);
        match Args::try_parse_from(argv) {
            Ok(args) => Ok(Args {
                extension_flags,
                ..args
            }),
            Err(error) if error.kind() == clap::error::ErrorKind::DisplayHelp => Err(ArgsError {
                message: error.render().to_string(),
                help: true,
            }),
            Err(error) => Err(ArgsError {
                message: one_line(&error),
                help: false,
            }),
        }
    }

    /// Applies `--sandbox`, `--no-network` and `--no-sandbox` to the `sandbox` settings.
    pub fn apply_sandbox_flags(&self, sandbox: &mut pi_coding_agent::config::SandboxSettings) {
        if self.no_sandbox {
            sandbox.enabled = Some(false);
        }
        if self.sandbox || self.no_network {
            sandbox.enabled = Some(true);
        }
        if self.no_network {
            sandbox.network = Some(false);
        }
    }

    /// The output mode: `--mode`, else text.
    pub fn mode(&self) -> Mode {
        self.mode.unwrap_or(Mode::Text)
    }
}

/// pi's package and configuration commands (`pi install <source>`, …): recognised as the first
/// argument, as pi does, so that they never reach the model as a prompt.
pub(crate) const SUBCOMMANDS: [&str; 6] = crate::packages::PACKAGE_COMMANDS;

/// pi's multi-letter short flags and the long flag each one stands for.
const SHORT_FORMS: [(&str, &str); 6] = [
    ("-nt", "--no-tools"),
    ("-nbt", "--no-builtin-tools"),
    ("-nc", "--no-context-files"),
    ("-ne", "--no-extensions"),
    ("-ns", "--no-skills"),
    ("-np", "--no-prompt-templates"),
];

/// Replaces pi's multi-letter short flags (`-nt`, …), which clap cannot declare, by their long
/// flags; nothing after `--` is touched.
fn expand_short_forms(argv: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut after_separator = false;
    argv.into_iter()
        .map(|arg| {
            if after_separator {
                return arg;
            }
            if arg == "--" {
                after_separator = true;
                return arg;
            }
            match SHORT_FORMS.iter().find(|(short, _)| arg == *short) {
                Some((_, long)) => (*long).into(),
                None => arg,
            }
        })
        .collect()
}

/// Takes out the long flags clap does not declare (extension flags), as pi's parser reads them:
/// `--name=value`, or `--name` followed by its value unless the next argument starts with `-` or
/// `@`. The arguments of declared flags are left alone; nothing after `--` is touched.
fn split_extension_flags(
    argv: Vec<std::ffi::OsString>,
) -> (Vec<std::ffi::OsString>, Vec<pi_coding_agent::extensions::GivenFlag>) {
    use clap::CommandFactory;
    let command = Args::command();
    let declared = |name: &str| {
        command
            .get_arguments()
            .find(|arg| arg.get_long() == Some(name))
            .map(|arg| arg.get_action().takes_values())
    };
    let short_takes_value = |letter: char| {
        command
            .get_arguments()
            .find(|arg| arg.get_short() == Some(letter))
            .is_some_and(|arg| arg.get_action().takes_values())
    };
    let mut kept = Vec::with_capacity(argv.len());
    let mut flags = Vec::new();
    let mut args = argv.into_iter().peekable();
    if let Some(program) = args.next() {
        kept.push(program);
    }
    while let Some(arg) = args.next() {
        let Some(text) = arg.to_str().map(str::to_owned) else {
            kept.push(arg);
            continue;
        };
        if text == "--" {
            kept.push(arg);
            kept.extend(args);
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value.to_owned())),
                None => (long, None),
            };
            if name == "help" || name == "version" {
                kept.push(arg);
                continue;
            }
            match declared(name) {
                Some(takes_value) => {
                    kept.push(arg);
                    if takes_value
                        && inline.is_none()
                        && let Some(value) = args.next()
                    {
                        kept.push(value);
                    }
                }
                None => {
                    let value = inline.or_else(|| {
                        let next = args.peek()?.to_str()?;
                        if next.starts_with('-') || next.starts_with('@') {
                            return None;
                        }
                        args.next().and_then(|v| v.into_string().ok())
                    });
                    flags.push(pi_coding_agent::extensions::GivenFlag {
                        name: name.to_owned(),
                        value,
                    });
                }
            }
            continue;
        }
        let short_value =
            text.len() == 2 && text.starts_with('-') && text.chars().nth(1).is_some_and(short_takes_value);
        kept.push(arg);
        if short_value && let Some(value) = args.next() {
            kept.push(value);
        }
    }
    (kept, flags)
}

/// clap's error as one line: its first line without the `error: ` prefix and the trailing `found`.
fn one_line(error: &clap::Error) -> String {
    let rendered = error.render().to_string();
    let first = rendered.lines().next().unwrap_or("invalid arguments");
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let first = first.strip_suffix(" found").unwrap_or(first);
    format!("pi: {first} (see pi --help)")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(argv: &[&str]) -> Args {
        let mut full = vec!["pi"];
        full.extend_from_slice(argv);
        Args::parse_from_argv(full).unwrap()
    }

    #[test]
    fn flags() {
        let args = parse(&[
            "-c",
            "--no-session",
            "-t",
            "read,ls",
            "--thinking",
            "high",
            "--mode",
            "json",
        ]);
        assert!(args.continue_session && args.no_session);
        assert_eq!(args.tools.as_deref(), Some(&["read".to_owned(), "ls".to_owned()][..]));
        assert_eq!(args.thinking.as_deref(), Some("high"));
        assert_eq!(args.mode(), Mode::Json);
    }

    #[test]
    fn sandbox_flags_override_the_settings() {
        use pi_coding_agent::config::SandboxSettings;
        let on = SandboxSettings {
            enabled: Some(true),
            network: Some(true),
            writable_paths: vec!["~/.cache".into()],
        };
        let apply = |argv: &[&str], mut settings: SandboxSettings| {
            parse(argv).apply_sandbox_flags(&mut settings);
            settings
        };
        assert_eq!(apply(&[], on.clone()), on);
        let off = apply(&["--no-sandbox"], on.clone());
        assert_eq!(off.enabled, Some(false));
        assert_eq!(off.writable_paths, on.writable_paths);
        let sandboxed = apply(&["--sandbox"], SandboxSettings::default());
        assert_eq!((sandboxed.enabled, sandboxed.network), (Some(true), None));
        let offline = apply(&["--no-network"], on.clone());
        assert_eq!((offline.enabled, offline.network), (Some(true), Some(false)));
        assert!(Args::parse_from_argv(["pi", "--sandbox", "--no-sandbox"]).is_err());
    }

    #[test]
    fn list_models_takes_an_optional_search() {
        assert_eq!(parse(&["--list-models"]).list_models.as_deref(), Some(""));
        assert_eq!(
            parse(&["--list-models", "sonnet"]).list_models.as_deref(),
            Some("sonnet")
        );
        assert_eq!(parse(&[]).list_models, None);
    }

    #[test]
    fn mistakes_are_one_line() {
        let error = Args::parse_from_argv(["pi", "--mode", "yaml"]).unwrap_err();
        assert!(!error.help);
        assert!(!error.message.contains('\n'), "{}", error.message);
        assert!(
            error
                .message
                .starts_with("pi: invalid value 'yaml' for '--mode <mode>'"),
            "{}",
            error.message
        );
    }

    #[test]
    fn short_forms_map_to_their_long_flags() {
        let args = parse(&["-nt", "-nbt", "-nc", "-ne", "-ns", "-np", "--", "-nt"]);
        assert!(args.no_tools && args.no_builtin_tools && args.no_context_files);
        assert!(args.no_extensions && args.no_skills && args.no_prompt_templates);
        assert_eq!(args.messages, ["-nt"]);
    }

    #[test]
    fn new_flags() {
        let args = parse(&[
            "--append-system-prompt",
            "one",
            "--append-system-prompt",
            "two",
            "--fork",
            "abc",
            "--models",
            "sonnet:high,haiku",
            "--verbose",
            "--offline",
        ]);
        assert_eq!(args.append_system_prompt, ["one", "two"]);
        assert_eq!(args.fork.as_deref(), Some("abc"));
        assert_eq!(
            args.models.as_deref(),
            Some(&["sonnet:high".to_owned(), "haiku".to_owned()][..])
        );
        assert!(args.verbose && args.offline);
    }

    #[test]
    fn package_commands_never_become_prompts() {
        for command in SUBCOMMANDS {
            let error = Args::parse_from_argv(["pi", command, "npm:x"]).unwrap_err();
            assert!(!error.help);
            assert!(
                error.message.starts_with(&format!("pi: `pi {command}` ")),
                "{}",
                error.message
            );
        }
        // Elsewhere on the line the word is a message.
        assert_eq!(parse(&["-p", "list"]).messages, ["list"]);
    }

    #[test]
    fn unknown_long_flags_are_kept_for_extensions() {
        let args = parse(&[
            "--plan",
            "--level",
            "3",
            "--model",
            "x",
            "-e",
            "ext.ts",
            "--quiet=yes",
            "--solo",
            "@file.md",
            "-t",
            "read",
            "hello",
            "--",
            "--not-a-flag",
        ]);
        let flags: Vec<(String, Option<String>)> = args
            .extension_flags
            .iter()
            .map(|f| (f.name.clone(), f.value.clone()))
            .collect();
        assert_eq!(
            flags,
            [
                ("plan".to_owned(), None),
                ("level".to_owned(), Some("3".to_owned())),
                ("quiet".to_owned(), Some("yes".to_owned())),
                ("solo".to_owned(), None),
            ]
        );
        assert_eq!(args.model.as_deref(), Some("x"));
        assert_eq!(args.extension, [PathBuf::from("ext.ts")]);
        assert_eq!(args.messages, ["@file.md", "hello", "--not-a-flag"]);
    }

    #[test]
    fn help_is_not_an_error() {
        let help = Args::parse_from_argv(["pi", "--help"]).unwrap_err();
        assert!(help.help);
        assert!(help.message.contains("--list-models"));
        assert!(help.message.contains("PI_CODING_AGENT_DIR"));
        for needle in [
            "--fork <path|id>",
            "--models <patterns>",
            "-nt: Disable all tools",
            "-nbt: ",
            "-nc: ",
            "-ne: ",
            "-ns: ",
            "-np: ",
            "--verbose",
            "--offline",
            "(can be used multiple times)",
            "PI_CODING_AGENT_SESSION_DIR",
        ] {
            assert!(help.message.contains(needle), "{needle}");
        }
    }
}
