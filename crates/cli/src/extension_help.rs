//! `pi --help`'s section of the flags the extensions register.

use std::path::PathBuf;

use pi_coding_agent::config::AgentPaths;
use pi_coding_agent::extensions::Extensions;

use crate::args::Args;

/// `--help`'s "Extension CLI Flags:" section (pi lists the flags the extensions register): the
/// extensions of this directory and the command line's `-e` paths are loaded for it, then
/// stopped. Empty without extensions or flags.
pub(crate) fn extension_flags_help(cwd: Option<PathBuf>, agent_dir: Option<PathBuf>) -> String {
    let argv: Vec<std::ffi::OsString> = std::env::args_os()
        .filter(|arg| arg != "--help" && arg != "-h")
        .collect();
    let Ok(args) = Args::parse_from_argv(argv) else {
        return String::new();
    };
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
        return String::new();
    };
    let cwd = cwd.or_else(|| std::env::current_dir().ok());
    let agent_dir = agent_dir.or_else(|| AgentPaths::from_process_env().map(|paths| paths.agent_dir));
    let Some(cwd) = cwd else { return String::new() };
    // Read before the runtime runs: nothing else is happening yet.
    let discover = pi_coding_agent::extensions::DiscoverOptions {
        cwd: cwd.clone(),
        agent_dir: agent_dir.clone(),
        cli: args.extension.clone(),
        no_extensions: args.no_extensions,
        resolved: Vec::new(),
        home: std::env::var("HOME").ok(),
    };
    let (entries, _) = pi_coding_agent::extensions::discover(&discover);
    if entries.is_empty() {
        return String::new();
    }
    let section = runtime.block_on(async move {
        let load = pi_coding_agent::extensions::LoadOptions {
            agent_dir,
            ..Default::default()
        };
        let api = pi_coding_agent::custom_tools::ToolApi::new(cwd);
        let extensions = Extensions::load(entries, &api, load).await;
        let section = pi_coding_agent::extensions::help_section(&extensions.flags());
        extensions.shutdown().await;
        section
    });
    runtime.shutdown_background();
    if section.is_empty() {
        section
    } else {
        format!("\n{section}")
    }
}
