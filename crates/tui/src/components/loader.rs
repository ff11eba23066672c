//! A spinner with a message and the time elapsed (pi's `Loader`).

use std::time::{Duration, Instant};

use ratatui::text::Span;

use crate::theme::{Slot, Theme};
use crate::{Component, Line, truncate_line};

/// A spinner frame, a message, the elapsed time and an optional hint, on one row:
/// `⠹ Working… (12s) · esc to interrupt`.
///
/// The loader draws whatever state it was last given: call [`tick`](Loader::tick) every
/// [`Loader::INTERVAL`] to advance the spinner and take the elapsed time from the clock, or
/// [`tick_at`](Loader::tick_at) with an elapsed time of your own (tests, replays).
///
/// ```
/// use std::time::Duration;
/// use pi_tui::{Component, Loader, Theme};
/// use pi_tui::testing::plain;
///
/// let mut loader = Loader::new("Working…", &Theme::dark());
/// loader.tick_at(Duration::from_secs(75));
/// assert_eq!(plain(&loader.render(40)), "⠙ Working… (1m 15s)");
/// ```
#[derive(Debug, Clone)]
pub struct Loader {
    message: String,
    hint: Option<String>,
    frame: usize,
    started: Instant,
    elapsed: Duration,
    show_elapsed: bool,
    theme: Theme,
}

impl Loader {
    /// The spinner's frames, in order.
    pub const FRAMES: [&'static str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

    /// How often to [`tick`](Loader::tick).
    pub const INTERVAL: Duration = Duration::from_millis(80);

    /// A loader started now, on the first frame.
    pub fn new(message: impl Into<String>, theme: &Theme) -> Self {
        Loader {
            message: message.into(),
            hint: None,
            frame: 0,
            started: Instant::now(),
            elapsed: Duration::ZERO,
            show_elapsed: true,
            theme: theme.clone(),
        }
    }

    /// Draws with `theme` from now on.
    pub fn set_theme(&mut self, theme: &Theme) {
        self.theme = theme.clone();
    }

    /// Adds a hint after the time (`esc to interrupt`).
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Leaves the elapsed time out (a message that counts down on its own, such as pi's
    /// `Retrying (1/3) in 2s...`).
    ///
    /// ```
    /// use pi_tui::{Component, Loader, Theme};
    /// use pi_tui::testing::plain;
    /// let loader = Loader::new("Retrying (1/3) in 2s...", &Theme::dark()).without_elapsed();
    /// assert_eq!(plain(&loader.render(40)), "⠋ Retrying (1/3) in 2s...");
    /// ```
    pub fn without_elapsed(mut self) -> Self {
        self.show_elapsed = false;
        self
    }

    /// Replaces the message.
    pub fn set_message(&mut self, message: impl Into<String>) {
        self.message = message.into();
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Advances the spinner and reads the elapsed time from the clock.
    pub fn tick(&mut self) {
        let elapsed = self.started.elapsed();
        self.tick_at(elapsed);
    }

    /// Advances the spinner and sets the elapsed time shown.
    pub fn tick_at(&mut self, elapsed: Duration) {
        self.frame = (self.frame + 1) % Self::FRAMES.len();
        self.elapsed = elapsed;
    }

    /// The index of the frame shown.
    pub fn frame(&self) -> usize {
        self.frame
    }

    /// The elapsed time shown.
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }
}

/// `12s`, `1m 05s`, `1h 02m`.
fn format_elapsed(elapsed: Duration) -> String {
    let secs = elapsed.as_secs();
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m {:02}s", secs / 60, secs % 60),
        _ => format!("{}h {:02}m", secs / 3600, secs / 60 % 60),
    }
}

impl Component for Loader {
    fn render(&self, width: u16) -> Vec<Line> {
        let theme = &self.theme;
        let mut spans = vec![
            theme.fg(Slot::Accent, Self::FRAMES[self.frame % Self::FRAMES.len()]),
            Span::raw(" "),
            theme.fg(Slot::Muted, self.message.clone()),
        ];
        if self.show_elapsed {
            spans.push(theme.fg(Slot::Dim, format!(" ({})", format_elapsed(self.elapsed))));
        }
        if let Some(hint) = &self.hint {
            spans.push(theme.fg(Slot::Dim, format!(" · {hint}")));
        }
        vec![truncate_line(&Line::from(spans), width, "…")]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elapsed_times_read_naturally() {
        assert_eq!(format_elapsed(Duration::from_millis(900)), "0s");
        assert_eq!(format_elapsed(Duration::from_secs(59)), "59s");
        assert_eq!(format_elapsed(Duration::from_secs(65)), "1m 05s");
        assert_eq!(format_elapsed(Duration::from_secs(3725)), "1h 02m");
    }

    #[test]
    fn tick_cycles_through_the_frames() {
        let mut loader = Loader::new("x", &Theme::plain());
        for _ in 0..Loader::FRAMES.len() {
            loader.tick_at(Duration::ZERO);
        }
        assert_eq!(loader.frame(), 0);
        loader.tick();
        assert_eq!(loader.frame(), 1);
    }
}
