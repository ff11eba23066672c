//! Which session file a run uses: the session directory (`--session-dir`,
//! `PI_CODING_AGENT_SESSION_DIR`, `sessionDir`), and `--fork`, `--session`, `-c`, `-r`.

use std::path::{Path, PathBuf};

use pi_coding_agent::config::{AgentPaths, Settings, expand_home};
use pi_session_store::{LoadWarning, SessionManager, SessionRoot};

use crate::args::Args;
use crate::error::CliError;
use crate::io::{Io, say};

/// The environment variable that moves the session directory (pi's `PI_CODING_AGENT_SESSION_DIR`).
pub const SESSION_DIR_ENV: &str = "PI_CODING_AGENT_SESSION_DIR";

/// Where sessions are stored and looked up: `--session-dir`, else `$PI_CODING_AGENT_SESSION_DIR`,
/// else the `sessionDir` setting (these three hold the session files directly; a leading `~` of
/// the variable or the setting is expanded, a relative path is relative to the working
/// directory), else one directory per working directory under the agent directory's `sessions/`.
pub fn session_root(
    args: &Args,
    env_session_dir: Option<&str>,
    settings: &Settings,
    cwd: &Path,
    paths: &AgentPaths,
) -> SessionRoot {
    let home = |name: &str| std::env::var(name).ok();
    let chosen = args
        .session_dir
        .clone()
        .or_else(|| env_session_dir.filter(|d| !d.is_empty()).map(|d| expand_home(d, &home)))
        .or_else(|| {
            settings
                .session_dir
                .as_deref()
                .filter(|d| !d.is_empty())
                .map(|d| expand_home(d, &home))
        });
    match chosen {
        Some(dir) => SessionRoot::Flat(cwd.join(dir)),
        None => SessionRoot::PerCwd(paths.sessions_dir()),
    }
}

/// pi refuses `--fork` with a flag that picks a session itself.
pub(crate) fn fork_conflicts(args: &Args) -> Result<(), CliError> {
    if args.fork.is_none() {
        return Ok(());
    }
    let conflicting: Vec<&str> = [
        (args.session.is_some(), "--session"),
        (args.continue_session, "--continue"),
        (args.resume, "--resume"),
        (args.no_session, "--no-session"),
    ]
    .into_iter()
    .filter_map(|(set, flag)| set.then_some(flag))
    .collect();
    if conflicting.is_empty() {
        Ok(())
    } else {
        Err(CliError::ForkConflict(conflicting.join(", ")))
    }
}

/// The session file the flags ask for.
pub(crate) async fn open_store(
    args: &Args,
    cwd: &Path,
    root: &SessionRoot,
    io: &Io,
) -> Result<SessionManager, CliError> {
    if args.no_session {
        return Ok(SessionManager::in_memory(cwd));
    }
    let opened = |(store, warnings): (SessionManager, Vec<LoadWarning>)| {
        for warning in warnings {
            say(&io.stderr, &format!("pi: warning: {warning}"));
        }
        store
    };
    if let Some(wanted) = &args.fork {
        // `--fork <path|id>`: a copy of that session (found as `--session` finds it) in a new
        // session of this directory, whose header names it as `parentSession`.
        let is_path = pi_session_store::looks_like_path(wanted);
        let query = if is_path {
            pi_tools::path::resolve_path(cwd, wanted).to_string_lossy().into_owned()
        } else {
            wanted.clone()
        };
        let (cwd_owned, root_owned) = (cwd.to_path_buf(), root.clone());
        let forked = tokio::task::spawn_blocking(move || {
            let source = SessionManager::find(root_owned.clone(), &cwd_owned, &query)?;
            SessionManager::fork_from(source, &cwd_owned, root_owned)
        })
        .await??;
        return Ok(opened(forked));
    }
    let (args_session, cwd_owned, root_owned) = (args.session.clone(), cwd.to_path_buf(), root.clone());
    if let Some(wanted) = args_session {
        // A path (not an id prefix) is resolved here, `~` and `@` included, as the tools resolve theirs.
        let is_path = pi_session_store::looks_like_path(&wanted);
        let wanted = if is_path {
            pi_tools::path::resolve_path(cwd, &wanted)
        } else {
            PathBuf::from(wanted)
        };
        let query = wanted.to_string_lossy().into_owned();
        let found = tokio::task::spawn_blocking(move || {
            match SessionManager::find(root_owned, &cwd_owned, &query) {
                Ok(path) => SessionManager::open(path).map(Some),
                // A path that does not exist yet names the file of a new session.
                Err(_) if is_path => Ok(None),
                Err(error) => Err(error),
            }
        })
        .await??;
        return Ok(match found {
            Some(loaded) => opened(loaded),
            None => SessionManager::create_at(cwd, wanted),
        });
    }
    if args.continue_session {
        let recent =
            tokio::task::spawn_blocking(move || SessionManager::continue_recent(&cwd_owned, root_owned)).await??;
        match recent.session {
            Some(session) => return Ok(opened((session, recent.warnings))),
            None => {
                for warning in recent.warnings {
                    say(&io.stderr, &format!("pi: warning: {warning}"));
                }
            }
        }
    }
    if args.resume
        && let Some(path) = pick_session(cwd, root, io).await?
    {
        let loaded = tokio::task::spawn_blocking(move || SessionManager::open(path)).await??;
        return Ok(opened(loaded));
    }
    let (cwd_owned, root_owned) = (cwd.to_path_buf(), root.clone());
    let created = tokio::task::spawn_blocking(move || SessionManager::create(cwd_owned, root_owned)).await??;
    Ok(created)
}

/// `-r`: lists this directory's sessions and reads the number of one from the terminal.
async fn pick_session(cwd: &Path, root: &SessionRoot, io: &Io) -> Result<Option<PathBuf>, CliError> {
    if !io.interactive {
        return Err(CliError::ResumeNeedsTerminal);
    }
    let (cwd_owned, root_owned) = (cwd.to_path_buf(), root.clone());
    let sessions = tokio::task::spawn_blocking(move || SessionManager::list(cwd_owned, root_owned)).await??;
    if sessions.is_empty() {
        say(&io.stderr, "pi: no sessions in this directory yet; starting a new one");
        return Ok(None);
    }
    let mut menu = String::from("Sessions of this directory, newest first:\n");
    for (index, info) in sessions.iter().enumerate().take(30) {
        let title = info
            .name
            .clone()
            .or_else(|| info.first_message.clone())
            .unwrap_or_default()
            .replace('\n', " ");
        let title: String = title.chars().take(70).collect();
        menu.push_str(&format!(
            "{:>3}) {title} ({} messages)\n",
            index + 1,
            info.message_count
        ));
    }
    menu.push_str("Number (empty for a new session): ");
    {
        let mut out = io.stderr.lock().unwrap_or_else(|p| p.into_inner());
        let _ = out.write_all(menu.as_bytes());
        let _ = out.flush();
    }
    let line = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).map(|_| line)
    })
    .await??;
    let choice = line.trim();
    if choice.is_empty() {
        return Ok(None);
    }
    match choice
        .parse::<usize>()
        .ok()
        .and_then(|n| sessions.get(n.wrapping_sub(1)))
    {
        Some(info) => Ok(Some(info.path.clone())),
        None => Err(CliError::NoSuchSession(choice.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(argv: &[&str]) -> Args {
        Args::parse_from_argv(std::iter::once("pi").chain(argv.iter().copied())).unwrap()
    }

    #[test]
    fn session_directory_precedence() {
        let paths = AgentPaths::new("/agent");
        let cwd = Path::new("/project");
        let setting = Settings::from_json(r#"{"sessionDir": "from-settings"}"#, "s.json").unwrap();
        let flat = |dir: &str| SessionRoot::Flat(PathBuf::from(dir));
        assert_eq!(
            session_root(&args(&[]), None, &Settings::default(), cwd, &paths),
            SessionRoot::PerCwd(PathBuf::from("/agent/sessions"))
        );
        assert_eq!(
            session_root(&args(&[]), None, &setting, cwd, &paths),
            flat("/project/from-settings")
        );
        assert_eq!(
            session_root(&args(&[]), Some("/env"), &setting, cwd, &paths),
            flat("/env")
        );
        assert_eq!(
            session_root(&args(&["--session-dir", "flag"]), Some("/env"), &setting, cwd, &paths),
            flat("/project/flag")
        );
        // An empty variable counts as unset.
        assert_eq!(
            session_root(&args(&[]), Some(""), &setting, cwd, &paths),
            flat("/project/from-settings")
        );
    }
}
