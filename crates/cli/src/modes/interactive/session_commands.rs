//! The slash commands about the session itself, with pi's texts: `/session`, `/name`, `/export`,
//! `/share`, `/copy`.

use std::path::Path;

use pi_coding_agent::export::export_branch_jsonl;
use pi_coding_agent::{App, grouped};

use super::clipboard;
use super::commands::path_argument;
use super::screen::Screen;
use super::transcript::NoticeKind;

/// `/session`: pi's "Session Info" — name, file, id, message counts, tokens and cost.
pub(super) fn session_info(app: &App) -> String {
    let stats = app.stats();
    let name = app.with_store(|store| store.name().map(str::to_owned));
    let file = app
        .session_file()
        .map_or_else(|| "In-memory".to_owned(), |f| f.display().to_string());
    let id = app.with_store(|store| store.id().to_owned());
    let mut info = String::from("Session Info\n\n");
    if let Some(name) = name {
        info.push_str(&format!("Name: {name}\n"));
    }
    info.push_str(&format!("File: {file}\nID: {id}\n\n"));
    info.push_str(&format!(
        "Messages\nUser: {}\nAssistant: {}\nTool Calls: {}\nTool Results: {}\nTotal: {}\n\n",
        stats.user_messages, stats.assistant_messages, stats.tool_calls, stats.tool_results, stats.total_messages
    ));
    info.push_str(&format!(
        "Tokens\nInput: {}\nOutput: {}\n",
        grouped(stats.input),
        grouped(stats.output)
    ));
    if stats.cache_read > 0 {
        info.push_str(&format!("Cache Read: {}\n", grouped(stats.cache_read)));
    }
    if stats.cache_write > 0 {
        info.push_str(&format!("Cache Write: {}\n", grouped(stats.cache_write)));
    }
    let total = stats.input + stats.output + stats.cache_read + stats.cache_write;
    info.push_str(&format!("Total: {}", grouped(total)));
    if stats.cost > 0.0 {
        info.push_str(&format!("\n\nCost\nTotal: {:.4}", stats.cost));
    }
    info
}

/// `/name [name]`: names the session (`Session name set: …`), or shows the name.
pub(super) fn name(screen: &mut Screen, app: &App, name: &str) {
    let name = name.trim();
    if name.is_empty() {
        match app.with_store(|store| store.name().map(str::to_owned)) {
            Some(current) => screen.notice(format!("Session name: {current}"), NoticeKind::Info),
            None => screen.notice("Usage: /name <name>", NoticeKind::Warning),
        }
        return;
    }
    app.set_session_name(name);
    screen.notice(format!("Session name set: {name}"), NoticeKind::Info);
}

/// `/export [file]`: the session as HTML (pi's `pi-session-<file>.html` without a file), or the
/// current branch as a session file when the file ends in `.jsonl`.
pub(super) async fn export(screen: &mut Screen, app: &App, rest: &str) {
    let output = path_argument(rest).map(Path::new);
    let result = match output {
        Some(path) if path.to_string_lossy().ends_with(".jsonl") => {
            app.with_store(|store| export_branch_jsonl(store, path))
        }
        // pi exports with the theme it shows.
        _ => {
            app.export_html(output, &crate::themes::export_colors(screen.theme()))
                .await
        }
    };
    match result {
        Ok(path) => screen.notice(format!("Session exported to: {}", path.display()), NoticeKind::Info),
        Err(error) => screen.notice(format!("Failed to export session: {error}"), NoticeKind::Error),
    }
}

/// pi's viewer of shared sessions (`PI_SHARE_VIEWER_URL` replaces it).
const SHARE_VIEWER_URL: &str = "https://pi.dev/session/";

/// `/share`: the session's HTML export (with the theme shown) as a secret gist through the GitHub
/// CLI, as pi does: `gh auth status`, then `gh gist create --public=false <tmp>/session.html`;
/// pi's viewer URL and the gist's. `env` gives `PATH` and `PI_SHARE_VIEWER_URL`.
pub(super) async fn share(screen: &mut Screen, app: &App, env: &clipboard::Environment) {
    let gh = |args: &[&str]| {
        let mut command = tokio::process::Command::new("gh");
        command.args(args).stdin(std::process::Stdio::null()).kill_on_drop(true);
        if let Some(path) = env.var("PATH") {
            command.env("PATH", path);
        }
        command
    };
    match gh(&["auth", "status"]).output().await {
        Err(_) => {
            let text = "GitHub CLI (gh) is not installed. Install it from https://cli.github.com/";
            return screen.notice(text, NoticeKind::Error);
        }
        Ok(status) if !status.status.success() => {
            let text = "GitHub CLI is not logged in. Run 'gh auth login' first.";
            return screen.notice(text, NoticeKind::Error);
        }
        Ok(_) => {}
    }
    let file = std::env::temp_dir().join("session.html");
    if let Err(error) = app
        .export_html(Some(&file), &crate::themes::export_colors(screen.theme()))
        .await
    {
        return screen.notice(format!("Failed to export session: {error}"), NoticeKind::Error);
    }
    let file_arg = file.display().to_string();
    let created = gh(&["gist", "create", "--public=false", &file_arg]).output().await;
    let _ = std::fs::remove_file(&file);
    let output = match created {
        Err(error) => return screen.notice(format!("Failed to create gist: {error}"), NoticeKind::Error),
        Ok(output) if !output.status.success() => {
            let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
            let why = if stderr.is_empty() {
                "Unknown error".to_owned()
            } else {
                stderr
            };
            return screen.notice(format!("Failed to create gist: {why}"), NoticeKind::Error);
        }
        Ok(output) => output,
    };
    let url = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let Some(id) = url.rsplit('/').next().filter(|id| !id.is_empty()) else {
        return screen.notice("Failed to parse gist ID from gh output", NoticeKind::Error);
    };
    let viewer = env
        .var("PI_SHARE_VIEWER_URL")
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| SHARE_VIEWER_URL.to_owned());
    screen.notice(format!("Share URL: {viewer}#{id}\nGist: {url}"), NoticeKind::Info);
}

/// `/copy`: the last agent message's text to the clipboard (`env` reads the environment).
pub(super) async fn copy(screen: &mut Screen, app: &App, env: &clipboard::Environment) {
    let Some(text) = app.last_assistant_text() else {
        screen.notice("No agent messages to copy yet.", NoticeKind::Error);
        return;
    };
    match clipboard::copy(&text, env).await {
        Ok(sequence) => {
            if let Some(sequence) = sequence {
                screen.send_to_terminal(&sequence);
            }
            screen.notice("Copied last agent message to clipboard", NoticeKind::Info);
        }
        Err(error) => screen.notice(error.to_string(), NoticeKind::Error),
    }
}
