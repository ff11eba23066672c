//! `pi install | remove | uninstall | update | list | config`: pi 0.73.1's package commands, with
//! its arguments, texts and exit codes. The work is `pi_coding_agent::packages`.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

use pi_coding_agent::config::AgentPaths;
use pi_coding_agent::packages::{PackageManager, PackageResources};

/// The first arguments that make `pi` a package command.
pub const PACKAGE_COMMANDS: [&str; 6] = ["install", "remove", "uninstall", "update", "list", "config"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Command {
    Install,
    Remove,
    Update,
    List,
}

impl Command {
    fn name(self) -> &'static str {
        match self {
            Command::Install => "install",
            Command::Remove => "remove",
            Command::Update => "update",
            Command::List => "list",
        }
    }

    fn usage(self) -> &'static str {
        match self {
            Command::Install => "pi install <source> [-l]",
            Command::Remove => "pi remove <source> [-l]",
            Command::Update => "pi update [source|self|pi] [--self] [--extensions] [--extension <source>] [--force]",
            Command::List => "pi list",
        }
    }

    fn help(self) -> String {
        let body = match self {
            Command::Install => {
                "Install a package and add it to settings.

Options:
  -l, --local    Install project-locally (.pi/settings.json)

Examples:
  pi install npm:@foo/bar
  pi install git:github.com/user/repo
  pi install git:git@github.com:user/repo
  pi install https://github.com/user/repo
  pi install ssh://git@github.com/user/repo
  pi install ./local/path
"
            }
            Command::Remove => {
                "Remove a package and its source from settings.
Alias: pi uninstall <source> [-l]

Options:
  -l, --local    Remove from project settings (.pi/settings.json)

Examples:
  pi remove npm:@foo/bar
  pi uninstall npm:@foo/bar
"
            }
            Command::Update => {
                "Update pi and installed packages.

Options:
  --self                  Update pi only
  --extensions            Update installed packages only
  --extension <source>    Update one package only
  --force                 Reinstall pi even if the current version is latest

Short forms:
  pi update                Update pi and all extensions
  pi update <source>       Update one package
  pi update pi             Update pi only (self works as alias to pi)
"
            }
            Command::List => {
                "List installed packages from user and project settings.
"
            }
        };
        format!("Usage:\n  {}\n\n{body}", self.usage())
    }
}

/// What `pi update` updates.
#[derive(Debug, Clone, PartialEq, Eq)]
enum UpdateTarget {
    All,
    SelfOnly,
    Packages(Option<String>),
}

/// A parsed package command, or the first mistake in it (pi reports one, in this order).
#[derive(Debug, Default)]
struct Parsed {
    source: Option<String>,
    local: bool,
    help: bool,
    invalid_option: Option<String>,
    invalid_argument: Option<String>,
    missing_value: Option<String>,
    conflict: Option<&'static str>,
    self_flag: bool,
    extensions_flag: bool,
    extension_source: Option<String>,
}

fn parse(command: Command, rest: &[String]) -> Parsed {
    let mut parsed = Parsed::default();
    let mut index = 0;
    while index < rest.len() {
        let arg = rest[index].as_str();
        index += 1;
        let only_for = |allowed: bool, parsed: &mut Parsed| {
            if !allowed {
                parsed.invalid_option.get_or_insert_with(|| arg.to_owned());
            }
            allowed
        };
        match arg {
            "-h" | "--help" => parsed.help = true,
            "-l" | "--local" => {
                if only_for(matches!(command, Command::Install | Command::Remove), &mut parsed) {
                    parsed.local = true;
                }
            }
            "--self" => {
                if only_for(command == Command::Update, &mut parsed) {
                    parsed.self_flag = true;
                }
            }
            "--extensions" => {
                if only_for(command == Command::Update, &mut parsed) {
                    parsed.extensions_flag = true;
                }
            }
            "--force" => {
                only_for(command == Command::Update, &mut parsed);
            }
            "--extension" => {
                if !only_for(command == Command::Update, &mut parsed) {
                    continue;
                }
                match rest.get(index) {
                    Some(value) if !value.starts_with('-') => {
                        if parsed.extension_source.is_some() {
                            parsed.conflict.get_or_insert("--extension can only be provided once");
                        } else {
                            parsed.extension_source = Some(value.clone());
                        }
                        index += 1;
                    }
                    _ => {
                        parsed.missing_value.get_or_insert_with(|| arg.to_owned());
                    }
                }
            }
            _ if arg.starts_with('-') => {
                parsed.invalid_option.get_or_insert_with(|| arg.to_owned());
            }
            _ if parsed.source.is_none() => parsed.source = Some(arg.to_owned()),
            _ => {
                parsed.invalid_argument.get_or_insert_with(|| arg.to_owned());
            }
        }
    }
    parsed
}

impl Parsed {
    fn update_target(&mut self) -> UpdateTarget {
        if let Some(source) = self.extension_source.clone() {
            if self.self_flag || self.extensions_flag {
                self.conflict
                    .get_or_insert("--extension cannot be combined with --self or --extensions");
            }
            if self.source.is_some() {
                self.conflict
                    .get_or_insert("--extension cannot be combined with a positional source");
            }
            return UpdateTarget::Packages(Some(source));
        }
        if let Some(source) = self.source.clone() {
            if source == "self" || source == "pi" {
                return if self.extensions_flag {
                    UpdateTarget::All
                } else {
                    UpdateTarget::SelfOnly
                };
            }
            if self.extensions_flag || self.self_flag {
                self.conflict
                    .get_or_insert("positional update targets cannot be combined with --self or --extensions");
            }
            return UpdateTarget::Packages(Some(source));
        }
        match (self.self_flag, self.extensions_flag) {
            (true, false) => UpdateTarget::SelfOnly,
            (false, true) => UpdateTarget::Packages(None),
            _ => UpdateTarget::All,
        }
    }
}

/// Styled lines to stdout and stderr: pi's colours (chalk's) on a terminal, plain text otherwise.
struct Out {
    stdout_color: bool,
    stderr_color: bool,
}

#[derive(Clone, Copy)]
enum Style {
    Plain,
    Dim,
    Red,
    Green,
    Bold,
}

fn styled(text: &str, style: Style, color: bool) -> String {
    let code = match style {
        Style::Plain => return text.to_owned(),
        Style::Dim => ("\x1b[2m", "\x1b[22m"),
        Style::Red => ("\x1b[31m", "\x1b[39m"),
        Style::Green => ("\x1b[32m", "\x1b[39m"),
        Style::Bold => ("\x1b[1m", "\x1b[22m"),
    };
    if color {
        format!("{}{text}{}", code.0, code.1)
    } else {
        text.to_owned()
    }
}

impl Out {
    fn process() -> Out {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Out {
            stdout_color: !no_color && std::io::stdout().is_terminal(),
            stderr_color: !no_color && std::io::stderr().is_terminal(),
        }
    }

    fn out(&self, text: &str, style: Style) {
        let line = pi_ai::redact(&styled(text, style, self.stdout_color), None);
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{line}");
        let _ = stdout.flush();
    }

    fn err(&self, text: &str, style: Style) {
        let line = pi_ai::redact(&styled(text, style, self.stderr_color), None);
        let _ = writeln!(std::io::stderr().lock(), "{line}");
    }

    fn mistake(&self, first: &str, second: &str) -> i32 {
        self.err(first, Style::Red);
        self.err(second, Style::Dim);
        1
    }
}

/// Runs `argv` (without the program name) when it is a package command: `None` when it is not
/// one, else the exit code. `agent_dir` and `cwd` default to pi's (`PI_CODING_AGENT_DIR` or
/// `~/.pi/agent`, and the process's directory).
pub async fn run_package_command(argv: &[String], agent_dir: Option<PathBuf>, cwd: Option<PathBuf>) -> Option<i32> {
    let (first, rest) = argv.split_first()?;
    let command = match first.as_str() {
        "install" => Command::Install,
        "remove" | "uninstall" => Command::Remove,
        "update" => Command::Update,
        "list" => Command::List,
        "config" => return Some(run_config(agent_dir, cwd).await),
        _ => return None,
    };
    let out = Out::process();
    let mut parsed = parse(command, rest);
    let target = (command == Command::Update).then(|| parsed.update_target());
    if parsed.help {
        out.out(&command.help(), Style::Plain);
        return Some(0);
    }
    let usage = command.usage();
    if let Some(option) = &parsed.invalid_option {
        let first = format!("Unknown option {option} for \"{}\".", command.name());
        return Some(out.mistake(&first, &format!("Use \"pi --help\" or \"{usage}\".")));
    }
    if let Some(option) = &parsed.missing_value {
        return Some(out.mistake(&format!("Missing value for {option}."), &format!("Usage: {usage}")));
    }
    if let Some(argument) = &parsed.invalid_argument {
        return Some(out.mistake(&format!("Unexpected argument {argument}."), &format!("Usage: {usage}")));
    }
    if let Some(conflict) = parsed.conflict {
        return Some(out.mistake(conflict, &format!("Usage: {usage}")));
    }
    let source = parsed.source.clone();
    if matches!(command, Command::Install | Command::Remove) && source.is_none() {
        let first = format!("Missing {} source.", command.name());
        return Some(out.mistake(&first, &format!("Usage: {usage}")));
    }
    let Some(manager) = manager(agent_dir, cwd) else {
        out.err(
            "Error: cannot find pi's directory (set HOME or PI_CODING_AGENT_DIR)",
            Style::Red,
        );
        return Some(1);
    };
    let progress_color = out.stdout_color;
    let manager = manager.on_progress(Arc::new(move |line: &str| {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{}", styled(line, Style::Dim, progress_color));
        let _ = stdout.flush();
    }));
    let result = match (command, source) {
        (Command::Install, Some(source)) => manager.install_and_persist(&source, parsed.local).await.map(|()| {
            out.out(&format!("Installed {source}"), Style::Green);
            0
        }),
        (Command::Remove, Some(source)) => manager.remove_and_persist(&source, parsed.local).await.map(|removed| {
            if removed {
                out.out(&format!("Removed {source}"), Style::Green);
                0
            } else {
                out.err(&format!("No matching package found for {source}"), Style::Red);
                1
            }
        }),
        (Command::List, _) => manager.list_configured().await.map(|packages| {
            print_list(&out, &packages);
            0
        }),
        _ => return Some(update(&out, &manager, target.unwrap_or(UpdateTarget::All)).await),
    };
    Some(match result {
        Ok(code) => code,
        Err(error) => {
            out.err(&format!("Error: {error}"), Style::Red);
            1
        }
    })
}

fn manager(agent_dir: Option<PathBuf>, cwd: Option<PathBuf>) -> Option<PackageManager> {
    let agent_dir = match agent_dir {
        Some(dir) => dir,
        None => AgentPaths::from_process_env()?.agent_dir,
    };
    let cwd = cwd.or_else(|| std::env::current_dir().ok())?;
    Some(PackageManager::new(cwd, agent_dir))
}

fn print_list(out: &Out, packages: &[pi_coding_agent::packages::ConfiguredPackage]) {
    use pi_coding_agent::packages::Scope;
    if packages.is_empty() {
        out.out("No packages installed.", Style::Dim);
        return;
    }
    let print = |scope: Scope, title: &str, gap: bool| {
        let of_scope: Vec<_> = packages.iter().filter(|p| p.scope == scope).collect();
        if of_scope.is_empty() {
            return false;
        }
        if gap {
            out.out("", Style::Plain);
        }
        out.out(title, Style::Bold);
        for package in of_scope {
            let display = if package.filtered {
                format!("{} (filtered)", package.source)
            } else {
                package.source.clone()
            };
            out.out(&format!("  {display}"), Style::Plain);
            if let Some(path) = &package.installed_path {
                out.out(&format!("    {}", path.display()), Style::Dim);
            }
        }
        true
    };
    let users = print(Scope::User, "User packages:", false);
    print(Scope::Project, "Project packages:", users);
}

async fn update(out: &Out, manager: &PackageManager, target: UpdateTarget) -> i32 {
    if let UpdateTarget::All | UpdateTarget::Packages(_) = &target {
        let source = match &target {
            UpdateTarget::Packages(source) => source.clone(),
            _ => None,
        };
        if let Err(error) = manager.update(source.as_deref()).await {
            out.err(&format!("Error: {error}"), Style::Red);
            return 1;
        }
        match source {
            Some(source) => out.out(&format!("Updated {source}"), Style::Green),
            None => out.out("Updated packages", Style::Green),
        }
    }
    if let UpdateTarget::All | UpdateTarget::SelfOnly = target {
        // This pi is not an npm package: it cannot replace itself (pi's answer for an
        // installation no package manager of its own manages).
        out.err("error: pi cannot self-update this installation.", Style::Plain);
        out.err(
            "Update pi using the package manager, wrapper, or source checkout that provides this installation.",
            Style::Plain,
        );
        if let Ok(exe) = std::env::current_exe() {
            out.err("", Style::Plain);
            out.err(&format!("Location of pi executable: {}", exe.display()), Style::Plain);
        }
        return 1;
    }
    0
}

/// `pi config`: on a terminal, pi's selector of the packages' resources
/// ([`crate::config_selector`]); otherwise the list the selector shows — every resource of the
/// installed packages, `[x]` when enabled — and how to change it.
async fn run_config(agent_dir: Option<PathBuf>, cwd: Option<PathBuf>) -> i32 {
    let out = Out::process();
    let Some(manager) = manager(agent_dir, cwd) else {
        out.err(
            "Error: cannot find pi's directory (set HOME or PI_CODING_AGENT_DIR)",
            Style::Red,
        );
        return 1;
    };
    let resources = match manager.resolve().await {
        Ok(resources) => resources,
        Err(error) => {
            out.err(&format!("Error: {error}"), Style::Red);
            return 1;
        }
    };
    let terminal =
        std::io::stdin().is_terminal() && std::io::stdout().is_terminal() && !crate::terminal::dumb_terminal();
    if terminal {
        return match crate::config_selector::run(&manager, &resources).await {
            Ok(()) => 0,
            Err(error) => {
                out.err(&format!("Error: {error}"), Style::Red);
                1
            }
        };
    }
    for line in config_lines(&resources) {
        out.out(&line, Style::Plain);
    }
    out.err(
        "Not a terminal: the list only. Turn a resource off with \"-<path>\" (on with \"+<path>\") in its package's entry in settings.json, or run `pi config` in a terminal (docs/packages.md).",
        Style::Dim,
    );
    0
}

/// The selector's list as text: a group's label, its kinds, `[x]` / `[ ]` and the names.
fn config_lines(resources: &PackageResources) -> Vec<String> {
    crate::config_selector::Selector::new(resources)
        .plain_lines()
        .unwrap_or_else(|| vec!["No package resources.".to_owned()])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| (*a).to_owned()).collect()
    }

    #[test]
    fn update_targets_as_pi_reads_them() {
        let target = |args: &[&str]| {
            let mut parsed = parse(Command::Update, &words(args));
            let target = parsed.update_target();
            (target, parsed.conflict)
        };
        assert_eq!(target(&[]), (UpdateTarget::All, None));
        assert_eq!(target(&["pi"]), (UpdateTarget::SelfOnly, None));
        assert_eq!(target(&["self", "--extensions"]), (UpdateTarget::All, None));
        assert_eq!(target(&["--extensions"]), (UpdateTarget::Packages(None), None));
        assert_eq!(target(&["--self", "--extensions"]), (UpdateTarget::All, None));
        assert_eq!(
            target(&["npm:x"]),
            (UpdateTarget::Packages(Some("npm:x".to_owned())), None)
        );
        assert_eq!(
            target(&["--extension", "a", "--self"]).1,
            Some("--extension cannot be combined with --self or --extensions")
        );
        assert_eq!(
            target(&["a", "--self"]).1,
            Some("positional update targets cannot be combined with --self or --extensions")
        );
        assert_eq!(
            target(&["--extension", "a", "--extension", "b"]).1,
            Some("--extension can only be provided once")
        );
    }

    #[test]
    fn the_first_mistake_is_kept() {
        let parsed = parse(Command::List, &words(&["-l", "--bogus", "x", "y"]));
        assert_eq!(parsed.invalid_option.as_deref(), Some("-l"));
        assert_eq!(parsed.invalid_argument.as_deref(), Some("y"));
        let parsed = parse(Command::Update, &words(&["--extension"]));
        assert_eq!(parsed.missing_value.as_deref(), Some("--extension"));
    }
}
