//! The footer: where pi runs, which model, and what the session has cost so far.

use pi_agent_core::AgentMessage;
use pi_tui::{Component, Line, Slot, StatusLine, Theme, truncate_line};

use pi_coding_agent::AgentSession;
use pi_coding_agent::config::thinking_level_name;

/// What the footer shows.
#[derive(Debug, Clone, PartialEq)]
pub struct FooterInfo {
    /// The working directory, `~` for the home directory.
    pub cwd: String,
    /// `provider/model`.
    pub model: String,
    /// The thinking level (`off`, …).
    pub thinking: String,
    /// Input tokens of every answer so far (cache reads included).
    pub input: u64,
    /// Output tokens so far.
    pub output: u64,
    /// Dollars so far.
    pub cost: f64,
    /// The last request's share of the context window, in percent.
    pub context_percent: Option<f64>,
}

/// The footer of `session` now.
pub(super) fn footer_info(session: &AgentSession) -> FooterInfo {
    let agent = session.agent();
    let model = agent.model();
    let mut info = FooterInfo {
        cwd: home_relative(&session.cwd().display().to_string()),
        model: format!("{}/{}", model.provider, model.id),
        thinking: thinking_level_name(agent.thinking_level()).to_owned(),
        input: 0,
        output: 0,
        cost: 0.0,
        context_percent: None,
    };
    let mut last_context = None;
    for message in agent.messages() {
        if let AgentMessage::Assistant(assistant) = &message {
            let usage = &assistant.usage;
            info.input += usage.input + usage.cache_read;
            info.output += usage.output;
            info.cost += usage.cost.total;
            let used = usage.input + usage.cache_read + usage.cache_write + usage.output;
            if used > 0 {
                last_context = Some(used);
            }
        }
    }
    if model.context_window > 0 {
        info.context_percent = last_context.map(|used| used as f64 * 100.0 / model.context_window as f64);
    }
    info
}

fn home_relative(path: &str) -> String {
    match pi_tools::path::home_dir() {
        Some(home) => {
            let home = home.display().to_string();
            match path.strip_prefix(&home) {
                Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("~{rest}"),
                _ => path.to_owned(),
            }
        }
        None => path.to_owned(),
    }
}

/// A token count as pi prints it: `950`, `12.3k`, `1.2M`.
pub(super) fn tokens(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1}M", n as f64 / 1e6)
    } else if n >= 10_000 {
        format!("{}k", n / 1000)
    } else if n >= 1000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        n.to_string()
    }
}

/// The left part of the footer's second row: `↑in ↓out $cost ctx%`.
pub(super) fn usage_text(info: &FooterInfo) -> String {
    let mut text = format!("↑{} ↓{} ${:.3}", tokens(info.input), tokens(info.output), info.cost);
    if let Some(percent) = info.context_percent {
        text.push_str(&format!(" {percent:.0}% ctx"));
    }
    text
}

/// The right part of the footer's second row: `provider/model · thinking level`.
pub(super) fn model_text(info: &FooterInfo) -> String {
    if info.thinking == "off" {
        info.model.clone()
    } else {
        format!("{} · thinking {}", info.model, info.thinking)
    }
}

/// The footer's two rows: the working directory, then usage on the left and the model on the
/// right.
pub(super) fn footer_lines(info: &FooterInfo, theme: &Theme, width: u16) -> Vec<Line> {
    let cwd = Line::from(theme.fg(Slot::Dim, format!(" {}", info.cwd)));
    let stats = StatusLine::new(
        Line::from(theme.fg(Slot::Dim, format!(" {}", usage_text(info)))),
        Line::from(theme.fg(Slot::Dim, format!("{} ", model_text(info)))),
    );
    let mut lines = vec![truncate_line(&cwd, width, "…")];
    lines.extend(stats.render(width));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts() {
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(1234), "1.2k");
        assert_eq!(tokens(12_345), "12k");
        assert_eq!(tokens(1_234_567), "1.2M");
    }

    #[test]
    fn footer_texts() {
        let info = FooterInfo {
            cwd: "~/src/app".into(),
            model: "anthropic/claude-sonnet-4-5".into(),
            thinking: "high".into(),
            input: 12_000,
            output: 800,
            cost: 0.0421,
            context_percent: Some(6.0),
        };
        assert_eq!(usage_text(&info), "↑12k ↓800 $0.042 6% ctx");
        assert_eq!(model_text(&info), "anthropic/claude-sonnet-4-5 · thinking high");
        let lines = footer_lines(&info, &Theme::plain(), 80);
        assert_eq!(
            pi_tui::testing::plain(&lines),
            " ~/src/app\n ↑12k ↓800 $0.042 6% ctx            anthropic/claude-sonnet-4-5 · thinking high"
        );
    }
}
