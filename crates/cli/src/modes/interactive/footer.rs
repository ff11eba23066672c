//! The footer, as pi 0.73.1's `FooterComponent` draws it: the working directory with the git
//! branch and the session's name, then the session's usage and cost, the context usage
//! (`12.3%/128k (auto)`) and the model.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use pi_agent_core::AgentMessage;
use pi_tui::{Line, Slot, Theme, display_width, truncate_line};
use ratatui::text::Span;

use pi_coding_agent::App;
use pi_coding_agent::config::thinking_level_name;

/// What the footer shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FooterInfo {
    /// The working directory, `~` for the home directory.
    pub cwd: String,
    /// The git branch of the working directory (`detached` for a detached HEAD).
    pub git_branch: Option<String>,
    /// The session's name (`/name`).
    pub session_name: Option<String>,
    /// The model's id.
    pub model: String,
    /// The model reasons: the thinking level is shown.
    pub reasoning: bool,
    /// The thinking level (`off`, …).
    pub thinking: String,
    /// Input tokens of every answer of the session.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Cache reads.
    pub cache_read: u64,
    /// Cache writes.
    pub cache_write: u64,
    /// Dollars.
    pub cost: f64,
    /// The model's context window, in tokens.
    pub context_window: u64,
    /// How full the context is, in percent; `None` when unknown (after a compaction).
    pub context_percent: Option<f64>,
    /// Automatic compaction is on: ` (auto)` after the context usage.
    pub auto_compact: bool,
}

/// The footer of `app`'s session now.
pub(super) fn footer_info(app: &App) -> FooterInfo {
    let session = app.session();
    let agent = session.agent();
    let model = agent.model();
    let cwd = session.cwd();
    let mut info = FooterInfo {
        cwd: home_relative(&cwd.display().to_string()),
        git_branch: git_branch(cwd),
        model: model.id.clone(),
        reasoning: model.reasoning,
        thinking: thinking_level_name(agent.thinking_level()).to_owned(),
        context_window: model.context_window,
        auto_compact: app.auto_compaction_enabled(),
        ..FooterInfo::default()
    };
    // Every assistant message of the session file (not only the context after a compaction).
    app.with_store(|store| {
        info.session_name = store.name().map(str::to_owned);
        for entry in store.entries() {
            if let pi_session_store::EntryKind::Message(AgentMessage::Assistant(assistant)) = &entry.kind {
                let usage = &assistant.usage;
                info.input += usage.input;
                info.output += usage.output;
                info.cache_read += usage.cache_read;
                info.cache_write += usage.cache_write;
                info.cost += usage.cost.total;
            }
        }
    });
    match app.context_usage() {
        Some(usage) => {
            info.context_window = usage.context_window;
            info.context_percent = usage.percent;
        }
        None => info.context_percent = Some(0.0),
    }
    info
}

/// The branch of the repository `cwd` is in, read once per directory (pi's footer data provider
/// caches it too): `HEAD`'s branch, `detached` for a detached HEAD, `None` outside a repository.
fn git_branch(cwd: &Path) -> Option<String> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Option<String>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    let mut cache = cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    cache
        .entry(cwd.to_path_buf())
        .or_insert_with(|| read_branch(cwd))
        .clone()
}

fn read_branch(cwd: &Path) -> Option<String> {
    let head = cwd.ancestors().find_map(|dir| {
        let git = dir.join(".git");
        if git.is_dir() {
            return Some(git.join("HEAD"));
        }
        // A worktree or submodule: `gitdir: <path>`.
        let file = std::fs::read_to_string(&git).ok()?;
        let gitdir = file.trim().strip_prefix("gitdir:")?.trim();
        Some(dir.join(gitdir).join("HEAD"))
    })?;
    let content = std::fs::read_to_string(head).ok()?;
    match content.trim().strip_prefix("ref: refs/heads/") {
        Some(branch) if branch != ".invalid" => Some(branch.to_owned()),
        _ => Some("detached".to_owned()),
    }
}

fn home_relative(path: &str) -> String {
    match pi_tools::path::home_dir() {
        Some(home) => {
            let home = home.display().to_string();
            match path.strip_prefix(&home) {
                Some(rest) => format!("~{rest}"),
                None => path.to_owned(),
            }
        }
        None => path.to_owned(),
    }
}

/// A token count as pi prints it (`formatTokens`): `950`, `1.2k`, `12k`, `1.2M`, `12M`.
pub(super) fn tokens(n: u64) -> String {
    if n < 1000 {
        n.to_string()
    } else if n < 10_000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else if n < 1_000_000 {
        format!("{}k", (n as f64 / 1000.0).round())
    } else if n < 10_000_000 {
        format!("{:.1}M", n as f64 / 1e6)
    } else {
        format!("{}M", (n as f64 / 1e6).round())
    }
}

/// The first row: `~/src/app (main) • my session`.
pub(super) fn location_text(info: &FooterInfo) -> String {
    let mut text = info.cwd.clone();
    if let Some(branch) = &info.git_branch {
        text.push_str(&format!(" ({branch})"));
    }
    if let Some(name) = &info.session_name {
        text.push_str(&format!(" • {name}"));
    }
    text
}

/// The stats of the second row, each part with its slot: `↑12k ↓800 R3.0k W1.2k $0.042
/// 6.0%/200k (auto)`; the context usage turns `warning` above 70 %, `error` above 90 %.
pub(super) fn stats(info: &FooterInfo) -> Vec<(String, Slot)> {
    let mut parts = Vec::new();
    for (count, mark) in [
        (info.input, "↑"),
        (info.output, "↓"),
        (info.cache_read, "R"),
        (info.cache_write, "W"),
    ] {
        if count > 0 {
            parts.push((format!("{mark}{}", tokens(count)), Slot::Dim));
        }
    }
    if info.cost != 0.0 {
        parts.push((format!("${:.3}", info.cost), Slot::Dim));
    }
    let auto = if info.auto_compact { " (auto)" } else { "" };
    let window = tokens(info.context_window);
    let (context, slot) = match info.context_percent {
        Some(percent) => (
            format!("{percent:.1}%/{window}{auto}"),
            if percent > 90.0 {
                Slot::Error
            } else if percent > 70.0 {
                Slot::Warning
            } else {
                Slot::Dim
            },
        ),
        None => (format!("?/{window}{auto}"), Slot::Dim),
    };
    parts.push((context, slot));
    parts
}

/// The right of the second row: the model's id, with the thinking level for a reasoning model
/// (`claude-sonnet-4-5 • high`, `… • thinking off`).
pub(super) fn model_text(info: &FooterInfo) -> String {
    let model = if info.model.is_empty() { "no-model" } else { &info.model };
    match (info.reasoning, info.thinking.as_str()) {
        (false, _) => model.to_owned(),
        (true, "off" | "") => format!("{model} • thinking off"),
        (true, level) => format!("{model} • {level}"),
    }
}

/// The footer's two rows at `width`, laid out as pi does: the location cut with `...`; the stats
/// on the left (cut with `...` when they alone are too wide) and the model right-aligned at least
/// two columns after them, cut, or left out when there is no room.
pub(super) fn footer_lines(info: &FooterInfo, theme: &Theme, width: u16) -> Vec<Line> {
    let location = Line::from(theme.fg(Slot::Dim, location_text(info)));
    let location = if location.width() > usize::from(width) {
        let cut = truncate_line(&location, width.saturating_sub(3), "");
        let mut spans = cut.spans;
        spans.push(theme.fg(Slot::Dim, "..."));
        truncate_line(&Line::from(spans), width, "")
    } else {
        location
    };
    let mut spans: Vec<Span<'static>> = Vec::new();
    for (i, (text, slot)) in stats(info).into_iter().enumerate() {
        if i > 0 {
            spans.push(theme.fg(Slot::Dim, " "));
        }
        spans.push(theme.fg(slot, text));
    }
    let mut left = Line::from(spans);
    if left.width() > usize::from(width) {
        let cut = truncate_line(&left, width.saturating_sub(3), "");
        let mut spans = cut.spans;
        spans.push(theme.fg(Slot::Dim, "..."));
        left = Line::from(spans);
    }
    let left_width = left.width();
    let right = model_text(info);
    let room = usize::from(width).saturating_sub(left_width + 2);
    let mut row = left.spans;
    if room > 0 {
        let right = if display_width(&right) <= room {
            right
        } else {
            truncate_line(&Line::from(right), u16::try_from(room).unwrap_or(u16::MAX), "")
                .spans
                .into_iter()
                .map(|span| span.content.into_owned())
                .collect()
        };
        let padding = usize::from(width).saturating_sub(left_width + display_width(&right));
        row.push(theme.fg(Slot::Dim, format!("{}{right}", " ".repeat(padding))));
    }
    vec![location, Line::from(row)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_as_pi_formats_them() {
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(1234), "1.2k");
        assert_eq!(tokens(12_500), "13k");
        assert_eq!(tokens(128_000), "128k");
        assert_eq!(tokens(1_234_567), "1.2M");
        assert_eq!(tokens(12_345_678), "12M");
    }

    fn info() -> FooterInfo {
        FooterInfo {
            cwd: "~/src/app".into(),
            git_branch: Some("main".into()),
            model: "claude-sonnet-4-5".into(),
            reasoning: true,
            thinking: "high".into(),
            input: 12_000,
            output: 800,
            cost: 0.0421,
            context_window: 200_000,
            context_percent: Some(6.0),
            auto_compact: true,
            ..FooterInfo::default()
        }
    }

    #[test]
    fn footer_rows_as_pi_lays_them_out() {
        let lines = footer_lines(&info(), &Theme::plain(), 80);
        let stats = "↑12k ↓800 $0.042 6.0%/200k (auto)";
        let model = "claude-sonnet-4-5 • high";
        let gap = " ".repeat(80 - display_width(stats) - display_width(model));
        assert_eq!(
            pi_tui::testing::plain(&lines),
            format!("~/src/app (main)\n{stats}{gap}{model}")
        );
        // Narrow: the model is cut after two columns of space; the location gets `...`.
        let lines = footer_lines(&info(), &Theme::plain(), 40);
        assert_eq!(
            pi_tui::testing::plain(&lines),
            "~/src/app (main)\n↑12k ↓800 $0.042 6.0%/200k (auto)  claud"
        );
        let long = FooterInfo {
            cwd: "~/a/very/long/path/to/some/project".into(),
            ..info()
        };
        let lines = footer_lines(&long, &Theme::plain(), 30);
        assert_eq!(pi_tui::testing::plain(&lines[..1]), "~/a/very/long/path/to/some/...");
    }

    #[test]
    fn unknown_context_no_cost_and_thinking_off() {
        let fresh = FooterInfo {
            input: 0,
            output: 0,
            cost: 0.0,
            context_percent: None,
            thinking: "off".into(),
            auto_compact: false,
            session_name: Some("refactor".into()),
            ..info()
        };
        assert_eq!(location_text(&fresh), "~/src/app (main) • refactor");
        let parts: Vec<String> = stats(&fresh).into_iter().map(|(text, _)| text).collect();
        assert_eq!(parts, vec!["?/200k"]);
        assert_eq!(model_text(&fresh), "claude-sonnet-4-5 • thinking off");
        let warm = FooterInfo {
            context_percent: Some(75.0),
            ..info()
        };
        assert_eq!(stats(&warm).last().map(|(_, slot)| *slot), Some(Slot::Warning));
    }

    #[test]
    fn the_branch_of_a_repository_and_of_a_worktree() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(repo.join("src")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/feature/x\n").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read_branch(&repo.join("src")).as_deref(), Some("feature/x"));
        let worktree = dir.path().join("wt");
        std::fs::create_dir_all(dir.path().join("gitdirs/wt")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(&worktree).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(worktree.join(".git"), "gitdir: ../gitdirs/wt\n").unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join("gitdirs/wt/HEAD"), "0123abcd\n").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read_branch(&worktree).as_deref(), Some("detached"));
    }
}
