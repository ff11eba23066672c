//! The inline renderer: finished output scrolls into the terminal's own scrollback, only a live
//! region at the bottom is redrawn in place (pi's main-screen renderer, codex's inline viewport).
//!
//! # Model
//!
//! ```text
//!  ┌──────────────────────────────┐
//!  │ $ pi                         │  the shell, before pi started
//!  │ > fix the tests              │  committed: printed once, then the
//!  │ ● read src/lib.rs            │  terminal's (scrollback, copy, search)
//!  │ ● edit src/lib.rs  +3 -1     │
//!  ├──────────────────────────────┤
//!  │ ⠹ Working… (4s)              │  live region: redrawn in place
//!  │ > next prompt▌               │  (streaming block, editor, footer)
//!  │ ~/project · gpt-5            │
//!  └──────────────────────────────┘
//! ```
//!
//! * [`commit`](InlineRenderer::commit) hands over finished lines. They are written with the next
//!   [`draw`](InlineRenderer::draw), in the same synchronized update: the live region is cleared,
//!   the committed lines are printed where it was (the terminal scrolls them up and, in time, into
//!   its scrollback) and the new live region is printed below them. So a finished streaming block
//!   turns into committed output in place, with no flicker and no gap; committed lines are never
//!   touched again. [`flush`](InlineRenderer::flush) writes them without a new live region.
//! * [`draw`](InlineRenderer::draw) replaces the live region, rewriting only the rows that
//!   changed (each cleared and printed again; rows it no longer has cleared below its end), as
//!   pi-tui's differential renderer does; an unchanged region writes nothing. A region taller than
//!   the terminal shows its last `height - 1` lines.
//! * Between calls the cursor rests at the start of the live region's first row (hidden), or where
//!   [`draw_with_cursor`](InlineRenderer::draw_with_cursor) put it. Everything is relative to that
//!   row, so the renderer never needs to know where on the screen it is.
//! * [`resize`](InlineRenderer::resize) redraws everything at the new size, as pi does: the
//!   screen and the scrollback are cleared and every committed line (kept, as committed) is
//!   printed again, wrapped at the new width, then the live region. Whatever the terminal's reflow
//!   did to the old rows (words split, padded rows doubled, live rows pushed into the scrollback
//!   by a shrink) is gone, and the conversation is still in the terminal's own scrollback.
//! * Each write is wrapped in synchronized output (`ESC[?2026h` … `ESC[?2026l`) and flushed once;
//!   every printed line ends with an SGR reset; every line is cut (live) or wrapped (committed) to
//!   the width and cleaned of control characters, so each line takes exactly one row — except an
//!   inline image's line ([`crate::image`]), which is written as it is.
//!
//! ```
//! use pi_tui::{InlineRenderer, Line};
//!
//! let mut out = Vec::new();
//! let mut renderer = InlineRenderer::new(&mut out, 80, 24);
//! renderer.draw(&[Line::from("⠋ Working…")])?;
//! renderer.commit(&[Line::from("● read src/lib.rs")])?; // written by the next draw
//! renderer.draw(&[Line::from("⠙ Working…")])?;
//! renderer.finish()?;
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io::{self, Write};

use crossterm::cursor::{Hide, MoveToColumn, MoveUp, Show};
use crossterm::queue;
use crossterm::terminal::{BeginSynchronizedUpdate, Clear, ClearType, EndSynchronizedUpdate};

use crate::image::is_image_line;
use crate::{Line, ansi, truncate_line, wrap_line};

/// Draws a live region at the bottom of the terminal's normal screen, above which committed lines
/// accumulate in the scrollback (`docs/tui.md` describes the model).
///
/// ```no_run
/// use std::io;
/// use pi_tui::{Component, Editor, InlineRenderer, Theme};
///
/// let (width, height) = crossterm::terminal::size()?;
/// let mut renderer = InlineRenderer::new(io::stdout(), width, height);
/// let editor = Editor::new(&Theme::dark());
/// let (lines, (row, col)) = editor.render_with_cursor(width);
/// renderer.draw_with_cursor(&lines, Some((row, col)))?;
/// renderer.finish()?;
/// # Ok::<(), io::Error>(())
/// ```
#[derive(Debug)]
pub struct InlineRenderer<W: Write> {
    out: W,
    width: u16,
    height: u16,
    /// The live lines on screen, as printed (cut to the width, at most `height - 1`).
    shown: Vec<Line>,
    /// The live lines as last given, before cutting: kept so a resize can show them again.
    live: Vec<Line>,
    /// Row of the cursor, counted from the live region's first row.
    cursor_row: usize,
    /// Where the terminal cursor is shown (row in `shown`, column), if it is.
    cursor: Option<(usize, u16)>,
    /// Committed lines not written yet.
    pending: Vec<Line>,
    /// Every committed line written so far, as given (before wrapping): a resize prints them
    /// again at the new size.
    history: Vec<Line>,
}

impl<W: Write> InlineRenderer<W> {
    /// A renderer writing to `out`, a terminal of `width` × `height` (each at least 1) whose
    /// cursor is at the start of an empty row.
    pub fn new(out: W, width: u16, height: u16) -> Self {
        InlineRenderer {
            out,
            width: width.max(1),
            height: height.max(1),
            shown: Vec::new(),
            live: Vec::new(),
            cursor_row: 0,
            cursor: None,
            pending: Vec::new(),
            history: Vec::new(),
        }
    }

    /// The width lines are fitted to.
    pub fn width(&self) -> u16 {
        self.width
    }

    /// The terminal's height.
    pub fn height(&self) -> u16 {
        self.height
    }

    /// The most live rows shown: `height - 1` (at least 1).
    pub fn max_live_rows(&self) -> usize {
        usize::from(self.height.saturating_sub(1).max(1))
    }

    /// The live lines on screen.
    pub fn live_lines(&self) -> &[Line] {
        &self.shown
    }

    /// The writer.
    pub fn writer(&self) -> &W {
        &self.out
    }

    /// The writer (tests read what was written through it). Anything written to it directly
    /// lands wherever the renderer left the cursor, inside its live region; commit lines instead.
    pub fn writer_mut(&mut self) -> &mut W {
        &mut self.out
    }

    /// Gives the writer back.
    pub fn into_inner(self) -> W {
        self.out
    }

    /// Commits `lines`: they go above the live region for good and scroll into the terminal's
    /// scrollback. They are written by the next [`draw`](InlineRenderer::draw) (or
    /// [`flush`](InlineRenderer::flush), [`resize`](InlineRenderer::resize),
    /// [`finish`](InlineRenderer::finish)), together with the live region, in one synchronized
    /// update; call `draw` in the same frame. Lines wider than the terminal are wrapped.
    pub fn commit(&mut self, lines: &[Line]) -> io::Result<()> {
        self.pending.extend_from_slice(lines);
        Ok(())
    }

    /// Lines committed and not written yet.
    pub fn pending(&self) -> &[Line] {
        &self.pending
    }

    /// Every committed line written so far, as committed (a resize prints them again).
    pub fn history(&self) -> &[Line] {
        &self.history
    }

    /// Writes committed lines now, with the live region as last drawn below them.
    pub fn flush(&mut self) -> io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        queue!(self.out, BeginSynchronizedUpdate)?;
        self.write_pending()?;
        let (shown, _) = self.fit(&self.live, None);
        self.shown = shown;
        self.print_from(0)?;
        self.place_cursor()?;
        self.end()
    }

    /// Clears the live region and prints the pending committed lines where it was; the cursor
    /// ends at the start of the row below them, the new (empty) live region's first row.
    fn write_pending(&mut self) -> io::Result<()> {
        self.move_to_row(0)?;
        queue!(self.out, Clear(ClearType::FromCursorDown))?;
        let pending = std::mem::take(&mut self.pending);
        for line in &pending {
            self.write_committed(line)?;
        }
        self.history.extend(pending);
        self.shown.clear();
        self.cursor_row = 0;
        Ok(())
    }

    /// Prints one committed line, wrapped to the width, and moves to the start of the next row.
    fn write_committed(&mut self, line: &Line) -> io::Result<()> {
        if is_image_line(line) {
            // An inline image: its escape sequence as it is (it takes the rows before it).
            ansi::write_line(&mut self.out, line)?;
            return self.out.write_all(b"\r\n");
        }
        for row in wrap_line(line, self.width) {
            ansi::write_line(&mut self.out, &row)?;
            self.out.write_all(b"\r\n")?;
        }
        Ok(())
    }

    /// Replaces the live region with `live`, redrawing only from the first line that changed
    /// (pending commits are written first, in the same update, and the region after them in
    /// full). The terminal cursor is hidden.
    pub fn draw(&mut self, live: &[Line]) -> io::Result<()> {
        self.draw_with_cursor(live, None)
    }

    /// Like [`draw`](InlineRenderer::draw), and shows the terminal cursor at `(row, column)` of
    /// `live` (e.g. [`Editor::cursor_position`](crate::Editor::cursor_position) offset by the rows
    /// above the editor), for input methods and the terminal's own cursor blink. While it is shown
    /// the cursor rests there, not at the region's first row.
    pub fn draw_with_cursor(&mut self, live: &[Line], cursor: Option<(u16, u16)>) -> io::Result<()> {
        self.live = live.to_vec();
        let (new, cursor) = self.fit(live, cursor);
        if !self.pending.is_empty() {
            queue!(self.out, BeginSynchronizedUpdate)?;
            self.write_pending()?;
            self.shown = new;
            self.print_from(0)?;
            self.cursor = cursor;
            self.place_cursor()?;
            return self.end();
        }
        let same_lines = self.shown == new;
        if same_lines && cursor == self.cursor {
            return Ok(());
        }
        queue!(self.out, BeginSynchronizedUpdate)?;
        if !same_lines {
            self.rewrite_changed(new)?;
        }
        self.cursor = cursor;
        self.place_cursor()?;
        self.end()
    }

    /// Replaces the shown live region with `new` by rewriting only the rows that differ (pi-tui's
    /// differential render): each is cleared and printed again; rows the region no longer has are
    /// cleared once, below its new end. Nothing else on screen is touched.
    fn rewrite_changed(&mut self, new: Vec<Line>) -> io::Result<()> {
        let old = std::mem::replace(&mut self.shown, new);
        for row in 0..self.shown.len() {
            if old.get(row) == self.shown.get(row) {
                continue;
            }
            self.move_to_row(row)?;
            queue!(self.out, Clear(ClearType::CurrentLine))?;
            ansi::write_line(&mut self.out, &self.shown[row])?;
        }
        if old.len() > self.shown.len() {
            self.move_to_row(self.shown.len())?;
            queue!(self.out, Clear(ClearType::FromCursorDown))?;
        }
        Ok(())
    }

    /// The live lines as they will be shown (the last `height - 1`, cut to the width) and the
    /// cursor cell moved along, if it is among them.
    fn fit(&self, live: &[Line], cursor: Option<(u16, u16)>) -> (Vec<Line>, Option<(usize, u16)>) {
        let skipped = live.len().saturating_sub(self.max_live_rows());
        let shown: Vec<Line> = live[skipped..]
            .iter()
            .map(|line| {
                if is_image_line(line) {
                    line.clone()
                } else {
                    truncate_line(line, self.width, "")
                }
            })
            .collect();
        let cursor = cursor.and_then(|(row, col)| {
            let row = usize::from(row).checked_sub(skipped)?;
            (row < shown.len()).then_some((row, col.min(self.width - 1)))
        });
        (shown, cursor)
    }

    /// Takes a new terminal size and redraws everything at it, as pi does: the screen and the
    /// scrollback are cleared and every committed line is printed again, wrapped at the new width,
    /// followed by the live region (cut to the new width until the next draw). So the
    /// conversation stays in the terminal's own scrollback, wrapped where it would have been had
    /// the terminal always had this size: no word split by the terminal's reflow, no padded row
    /// turned into two, no stale copy of the live region pushed up by a shrink — wherever the
    /// cursor rested and whatever the terminal did to its rows. (What was on the terminal before
    /// pi started is cleared with the scrollback, as pi clears it.) The terminal cursor is hidden
    /// until the next [`draw_with_cursor`](Self::draw_with_cursor).
    pub fn resize(&mut self, width: u16, height: u16) -> io::Result<()> {
        let (width, height) = (width.max(1), height.max(1));
        if (width, height) == (self.width, self.height) {
            return Ok(());
        }
        self.width = width;
        self.height = height;
        queue!(self.out, BeginSynchronizedUpdate)?;
        // Clear the screen, home, then the scrollback (pi-tui's order: some terminals push a
        // cleared screen into the scrollback first).
        self.out.write_all(b"\x1b[2J\x1b[H\x1b[3J")?;
        let history = std::mem::take(&mut self.history);
        for line in &history {
            self.write_committed(line)?;
        }
        self.history = history;
        self.shown.clear();
        self.cursor_row = 0;
        self.write_pending()?;
        let (shown, _) = self.fit(&self.live, None);
        self.shown = shown;
        self.cursor = None;
        self.print_from(0)?;
        self.place_cursor()?;
        self.end()
    }

    /// Leaves the live region on screen and puts the cursor, shown, at the start of the row below
    /// it (for the shell, after pi exits). The renderer starts over with an empty live region.
    pub fn finish(&mut self) -> io::Result<()> {
        self.flush()?;
        queue!(self.out, BeginSynchronizedUpdate)?;
        if !self.shown.is_empty() {
            let last = self.shown.len() - 1;
            self.move_to_row(last)?;
            self.out.write_all(b"\r\n")?;
        } else {
            self.move_to_row(0)?;
        }
        queue!(self.out, Show)?;
        self.shown.clear();
        self.live.clear();
        self.cursor_row = 0;
        self.cursor = None;
        self.end()
    }

    /// Moves the cursor to column 0 of live row `row`, scrolling the terminal if that row is
    /// below the screen.
    fn move_to_row(&mut self, row: usize) -> io::Result<()> {
        if row < self.cursor_row {
            let up = u16::try_from(self.cursor_row - row).unwrap_or(u16::MAX);
            queue!(self.out, MoveUp(up))?;
        }
        self.out.write_all(b"\r")?;
        for _ in self.cursor_row..row {
            self.out.write_all(b"\n")?;
        }
        self.cursor_row = row;
        Ok(())
    }

    /// Prints the shown lines from `first` on, the cursor being at column 0 of row `first`.
    fn print_from(&mut self, first: usize) -> io::Result<()> {
        for (i, line) in self.shown.iter().enumerate().skip(first) {
            if i > first {
                self.out.write_all(b"\r\n")?;
            }
            ansi::write_line(&mut self.out, line)?;
            self.cursor_row = i;
        }
        Ok(())
    }

    /// Rests the cursor: at the requested cell (shown), or at the region's first row (hidden).
    fn place_cursor(&mut self) -> io::Result<()> {
        match self.cursor {
            Some((row, col)) => {
                self.move_to_row(row)?;
                if col > 0 {
                    queue!(self.out, MoveToColumn(col))?;
                }
                queue!(self.out, Show)?;
            }
            None => {
                queue!(self.out, Hide)?;
                self.move_to_row(0)?;
            }
        }
        Ok(())
    }

    /// Closes the synchronized update and flushes.
    fn end(&mut self) -> io::Result<()> {
        queue!(self.out, EndSynchronizedUpdate)?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests;
