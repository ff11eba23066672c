//! The renderer against a `vt100` terminal: bytes go into the parser, the screen and the
//! scrollback are read back.

use std::num::NonZeroU16;

use proptest::prelude::*;
use ratatui::style::{Style, Stylize};

use super::*;
use crate::testing::plain;

/// A renderer and the terminal it draws on.
struct Harness {
    term: vt100::Parser,
    renderer: InlineRenderer<Vec<u8>>,
}

fn size(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n.max(1)).unwrap_or(NonZeroU16::MIN)
}

fn lines(texts: &[&str]) -> Vec<Line> {
    texts.iter().map(|t| Line::from(t.to_string())).collect()
}

impl Harness {
    fn new(width: u16, height: u16) -> Self {
        Harness {
            term: vt100::Parser::new(size(height), size(width), 10_000),
            renderer: InlineRenderer::new(Vec::new(), width, height),
        }
    }

    /// Feeds what the renderer wrote to the terminal, and returns it.
    fn pump(&mut self) -> String {
        let bytes = std::mem::take(self.renderer.writer_mut());
        self.term.process(&bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// Commits and writes at once (`flush`).
    fn commit(&mut self, texts: &[&str]) -> String {
        self.renderer.commit(&lines(texts)).unwrap();
        self.renderer.flush().unwrap();
        self.pump()
    }

    fn draw(&mut self, texts: &[&str]) -> String {
        self.renderer.draw(&lines(texts)).unwrap();
        self.pump()
    }

    /// The terminal is resized, then the renderer is told.
    fn resize(&mut self, width: u16, height: u16) -> String {
        self.term.set_size(size(height), size(width));
        self.renderer.resize(width, height).unwrap();
        self.pump()
    }

    /// Every row, scrollback first, trailing blank rows dropped.
    fn transcript(&mut self) -> Vec<String> {
        let screen = self.term.screen_mut();
        screen.set_scrollback(usize::MAX);
        let total = screen.scrollback();
        let mut rows = Vec::new();
        for offset in (1..=total).rev() {
            screen.set_scrollback(offset);
            rows.extend(screen.rows(0, 1000).take(1));
        }
        screen.set_scrollback(0);
        rows.extend(screen.rows(0, 1000));
        let rows: Vec<String> = rows.into_iter().map(|r| r.trim_end().to_owned()).collect();
        let keep = rows.iter().rposition(|r| !r.is_empty()).map_or(0, |i| i + 1);
        rows[..keep].to_vec()
    }

    /// The visible rows, trailing blank rows dropped.
    fn screen(&self) -> Vec<String> {
        let rows: Vec<String> = self
            .term
            .screen()
            .rows(0, 1000)
            .map(|r| r.trim_end().to_owned())
            .collect();
        let keep = rows.iter().rposition(|r| !r.is_empty()).map_or(0, |i| i + 1);
        rows[..keep].to_vec()
    }
}

#[test]
fn commits_land_in_the_scrollback_in_order() {
    let mut h = Harness::new(30, 6);
    h.draw(&["live 1", "live 2"]);
    let mut expected = Vec::new();
    for i in 0..20 {
        let line = format!("committed {i}");
        h.commit(&[&line]);
        expected.push(line);
        h.draw(&[&format!("working {i}"), "editor"]);
    }
    expected.extend(["working 19".to_owned(), "editor".to_owned()]);
    assert_eq!(h.transcript(), expected);
    assert!(h.term.screen().scrollback_len() > 0);
}

#[test]
fn the_live_region_is_redrawn_in_place() {
    let mut h = Harness::new(30, 10);
    h.commit(&["above"]);
    h.draw(&["one", "two", "three"]);
    h.draw(&["uno", "dos"]);
    assert_eq!(h.screen(), vec!["above", "uno", "dos"]);
    h.draw(&["uno", "dos", "tres", "cuatro"]);
    assert_eq!(h.screen(), vec!["above", "uno", "dos", "tres", "cuatro"]);
    h.draw(&[]);
    assert_eq!(h.screen(), vec!["above"]);
    h.draw(&["again"]);
    assert_eq!(h.screen(), vec!["above", "again"]);
}

#[test]
fn commits_are_written_with_the_next_draw_in_place_of_the_stream() {
    let mut h = Harness::new(30, 8);
    h.draw(&["> prompt"]);
    h.draw(&["streamed 1", "streamed 2", "streamed 3", "⠋ working", "> editor"]);
    h.renderer.commit(&lines(&["final 1", "final 2", "final 3"])).unwrap();
    assert_eq!(h.pump(), "", "commit alone writes nothing");
    assert_eq!(h.renderer.pending().len(), 3);
    let written = h.draw(&["> editor"]);
    assert_eq!(
        written.matches("\x1b[?2026h").count(),
        1,
        "one synchronized update: {written:?}"
    );
    // The finished lines took the streaming block's rows: no gap, nothing scrolled.
    assert_eq!(h.screen(), vec!["final 1", "final 2", "final 3", "> editor"]);
    assert_eq!(h.term.screen().scrollback_len(), 0);
    assert!(h.renderer.pending().is_empty());
}

#[test]
fn flush_writes_commits_under_the_last_live_region() {
    let mut h = Harness::new(30, 8);
    h.draw(&["live"]);
    h.renderer.commit(&lines(&["done"])).unwrap();
    h.renderer.flush().unwrap();
    h.pump();
    assert_eq!(h.screen(), vec!["done", "live"]);
    assert_eq!(h.pump(), "");
    h.renderer.flush().unwrap();
    assert_eq!(h.pump(), "", "nothing pending, nothing written");
}

#[test]
fn finish_and_resize_write_pending_commits() {
    let mut h = Harness::new(30, 8);
    h.draw(&["live"]);
    h.renderer.commit(&lines(&["a"])).unwrap();
    h.resize(20, 8);
    assert_eq!(h.screen(), vec!["a", "live"]);
    h.renderer.commit(&lines(&["b"])).unwrap();
    h.renderer.finish().unwrap();
    h.pump();
    assert_eq!(h.screen(), vec!["a", "b", "live"]);
}

#[test]
fn an_unchanged_region_writes_nothing() {
    let mut h = Harness::new(30, 10);
    h.draw(&["a", "b"]);
    assert_eq!(h.draw(&["a", "b"]), "");
}

#[test]
fn only_the_rows_that_changed_are_written() {
    let mut h = Harness::new(30, 10);
    h.draw(&["first line", "streaming", "third line", "footer"]);
    let written = h.draw(&["first line", "streaming more", "third line", "footer"]);
    assert!(written.contains("streaming more"), "{written:?}");
    for unchanged in ["first line", "third line", "footer"] {
        assert!(!written.contains(unchanged), "{unchanged:?} written again: {written:?}");
    }
    // No clear to the end of the screen: only the changed row is cleared.
    assert!(!written.contains("\x1b[J"), "{written:?}");
    assert_eq!(h.screen(), vec!["first line", "streaming more", "third line", "footer"]);
    // A shorter row leaves nothing of the longer one; a region that shrinks clears below its end.
    h.draw(&["first line", "s", "third line"]);
    assert_eq!(h.screen(), vec!["first line", "s", "third line"]);
    h.draw(&["first", "s", "third line", "footer", "more"]);
    assert_eq!(h.screen(), vec!["first", "s", "third line", "footer", "more"]);
    h.draw(&[]);
    assert!(h.screen().is_empty(), "{:?}", h.screen());
}

/// A streamed reply: the bytes written stay within a small multiple of the text's size (each
/// frame rewrites the rows that changed, not everything below the first change).
#[test]
fn a_streamed_reply_writes_a_small_multiple_of_its_text() {
    let mut h = Harness::new(80, 24);
    let words: Vec<String> = (0..150).map(|i| format!("word{i}")).collect();
    let mut text = String::new();
    let mut total = 0;
    let footer = [
        "",
        "> ",
        "~/project (main)",
        "↑1.2k ↓300 $0.004 0.9%/128k (auto)   faux-1",
    ];
    for word in &words {
        text.push_str(word);
        text.push(' ');
        let mut live: Vec<Line> = crate::wrap_text(&text, Style::default(), 80);
        live.push(Line::from("⠋ Working… (1s)"));
        live.extend(footer.iter().map(|t| Line::from(*t)));
        h.renderer.draw(&live).unwrap();
        total += h.pump().len();
    }
    // 150 frames over about 1 KB of text: rewriting every row from the first change on took 28
    // times the text (30.7 KB); rewriting the rows that changed takes about 14 times.
    assert!(
        total < 20 * text.len(),
        "{total} bytes for {} bytes of text",
        text.len()
    );
    let screen = h.screen();
    assert_eq!(screen.last().map(String::as_str), Some(footer[3]));
    assert!(screen.iter().any(|row| row.ends_with("word149")), "{screen:?}");
}

#[test]
fn every_write_is_synchronized_and_every_line_reset() {
    let mut h = Harness::new(30, 10);
    let styled = vec![Line::from("red".red()), Line::from("plain")];
    h.renderer.draw(&styled).unwrap();
    let draw = h.pump();
    let commit = h.commit(&["x"]);
    let resize = h.resize(20, 8);
    let finish = {
        h.renderer.finish().unwrap();
        h.pump()
    };
    for written in [&draw, &commit, &resize, &finish] {
        assert!(written.starts_with("\x1b[?2026h"), "{written:?}");
        assert!(written.ends_with("\x1b[?2026l"), "{written:?}");
    }
    assert!(draw.matches("\x1b[0m").count() >= 2);
    assert!(draw.contains("red\x1b[0m") && draw.contains("plain\x1b[0m"), "{draw:?}");
}

#[test]
fn a_region_taller_than_the_terminal_shows_its_last_rows() {
    let mut h = Harness::new(20, 5);
    let tall: Vec<String> = (0..12).map(|i| format!("row {i}")).collect();
    let tall: Vec<&str> = tall.iter().map(String::as_str).collect();
    h.draw(&tall);
    assert_eq!(h.screen(), vec!["row 8", "row 9", "row 10", "row 11"]);
    assert_eq!(h.transcript(), vec!["row 8", "row 9", "row 10", "row 11"]);
}

#[test]
fn lines_are_fitted_to_the_width() {
    let mut h = Harness::new(10, 6);
    h.commit(&["committed lines wrap at the width"]);
    h.draw(&["live lines are cut at the width", "\x1b[31mno escapes\x07"]);
    assert_eq!(
        h.transcript(),
        vec!["committed", "lines wrap", "at the", "width", "live lines", "[31mno esc"]
    );
}

#[test]
fn resizing_in_the_middle_of_a_stream_keeps_every_committed_line_once() {
    let mut h = Harness::new(40, 8);
    let mut committed = Vec::new();
    for step in 0..30 {
        let line = format!("c{step:02}");
        h.commit(&[&line]);
        committed.push(line);
        h.draw(&[&format!("stream {step}"), "> editor"]);
        match step {
            5 => drop(h.resize(20, 8)),
            10 => drop(h.resize(60, 12)),
            15 => drop(h.resize(10, 4)),
            20 => drop(h.resize(80, 3)),
            25 => drop(h.resize(30, 20)),
            _ => {}
        }
    }
    let mut expected = committed.clone();
    expected.extend(["stream 29".to_owned(), "> editor".to_owned()]);
    assert_eq!(h.transcript(), expected);
}

#[test]
fn resize_redraws_the_kept_region_at_the_new_width() {
    let mut h = Harness::new(30, 10);
    h.draw(&["a long live line of text", "short"]);
    h.resize(10, 10);
    assert_eq!(h.screen(), vec!["a long liv", "short"]);
    h.resize(30, 10);
    assert_eq!(h.screen(), vec!["a long live line of text", "short"]);
}

#[test]
fn tiny_terminals_do_not_panic() {
    for (w, hgt) in [(1, 1), (1, 5), (5, 1), (2, 2)] {
        let mut h = Harness::new(w, hgt);
        h.draw(&["hello", "world"]);
        h.commit(&["日本語", "abc"]);
        h.draw(&["x"]);
        h.resize(1, 1);
        h.draw(&["yz"]);
        h.resize(3, 2);
        h.renderer.finish().unwrap();
        h.pump();
    }
    let mut zero = InlineRenderer::new(Vec::new(), 0, 0);
    zero.draw(&lines(&["a"])).unwrap();
    zero.resize(0, 0).unwrap();
    assert_eq!(zero.width(), 1);
}

#[test]
fn finish_leaves_the_region_and_the_cursor_below_it() {
    let mut h = Harness::new(20, 10);
    h.commit(&["done"]);
    h.draw(&["last state", "footer"]);
    h.renderer.finish().unwrap();
    h.pump();
    assert_eq!(h.screen(), vec!["done", "last state", "footer"]);
    assert_eq!(h.term.screen().cursor_position(), (3, 0));
    assert!(!h.term.screen().hide_cursor());
    // The renderer starts over below.
    h.draw(&["next"]);
    assert_eq!(h.screen(), vec!["done", "last state", "footer", "next"]);
}

#[test]
fn the_terminal_cursor_goes_where_asked() {
    let mut h = Harness::new(20, 10);
    h.commit(&["above"]);
    h.renderer
        .draw_with_cursor(&lines(&["status", "> hello"]), Some((1, 7)))
        .unwrap();
    h.pump();
    assert_eq!(h.term.screen().cursor_position(), (2, 7));
    assert!(!h.term.screen().hide_cursor());
    // Moving only the cursor rewrites no line.
    h.renderer
        .draw_with_cursor(&lines(&["status", "> hello"]), Some((1, 3)))
        .unwrap();
    let written = h.pump();
    assert!(!written.contains("hello"), "{written:?}");
    assert_eq!(h.term.screen().cursor_position(), (2, 3));
    // Commits and draws start from wherever the cursor rests.
    h.commit(&["more"]);
    h.draw(&["status 2", "> hello"]);
    assert!(h.term.screen().hide_cursor());
    assert_eq!(h.screen(), vec!["above", "more", "status 2", "> hello"]);
    assert_eq!(h.term.screen().cursor_position(), (2, 0));
}

#[test]
fn a_resize_with_the_terminal_cursor_shown_keeps_committed_lines() {
    let mut h = Harness::new(30, 10);
    h.commit(&["kept 1", "kept 2"]);
    h.renderer
        .draw_with_cursor(&lines(&["streaming text", "> input"]), Some((1, 4)))
        .unwrap();
    h.pump();
    h.resize(12, 10);
    assert_eq!(h.screen(), vec!["kept 1", "kept 2", "streaming te", "> input"]);
}

#[test]
fn shrinking_below_a_shown_cursor_leaves_no_stale_copies() {
    let mut h = Harness::new(20, 10);
    h.commit(&["kept 1", "kept 2"]);
    let live = lines(&["s1", "s2", "s3", "s4", "s5", "> input"]);
    h.renderer.draw_with_cursor(&live, Some((5, 3))).unwrap();
    h.pump();
    // The terminal pushes the rows above the cursor into its scrollback; the renderer redraws
    // everything at the new size.
    h.resize(20, 3);
    h.renderer.draw(&live).unwrap();
    h.pump();
    assert_eq!(h.transcript(), vec!["kept 1", "kept 2", "s5", "> input"]);
}

#[test]
fn narrowing_rewraps_the_committed_output() {
    let mut h = Harness::new(40, 6);
    let text = "the quick brown fox jumps over the lazy dog and keeps on running far away";
    h.commit(&[text, "second line"]);
    h.draw(&["> editor"]);
    h.resize(16, 6);
    let mut expected: Vec<String> = crate::wrap_text(text, Style::default(), 16)
        .iter()
        .map(|row| crate::text::line_text(row).trim_end().to_owned())
        .collect();
    expected.extend(["second line".to_owned(), "> editor".to_owned()]);
    assert_eq!(h.transcript(), expected);
    // And widening joins them again.
    h.resize(80, 6);
    assert_eq!(h.transcript(), vec![text, "second line", "> editor"]);
}

#[test]
fn styles_reach_the_terminal() {
    let mut h = Harness::new(20, 5);
    h.renderer
        .draw(&[Line::from(vec!["bold".bold(), " plain".into()]).style(Style::default())])
        .unwrap();
    h.pump();
    let screen = h.term.screen();
    assert!(screen.cell(0, 0).is_some_and(|c| c.bold()));
    assert!(screen.cell(0, 5).is_some_and(|c| !c.bold()));
    assert_eq!(plain(h.renderer.live_lines()), "bold plain");
}

/// One step of a random session.
#[derive(Debug, Clone)]
enum Op {
    Commit(Vec<String>),
    Draw(Vec<String>),
    DrawWithCursor(Vec<String>, u16, u16),
    Resize(u16, u16),
}

fn op() -> impl Strategy<Value = Op> {
    let text = "[a-z]{1,8}( [a-z]{1,12}){0,6}";
    prop_oneof![
        3 => prop::collection::vec(text, 1..4).prop_map(Op::Commit),
        4 => prop::collection::vec(text, 0..8).prop_map(Op::Draw),
        2 => (prop::collection::vec(text, 1..8), 0u16..8, 0u16..70).prop_map(|(t, r, c)| Op::DrawWithCursor(t, r, c)),
        1 => (1u16..=60, 1u16..=12).prop_map(|(w, h)| Op::Resize(w, h)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Whatever the sequence of commits, draws and resizes, the terminal holds every committed row
    /// exactly once, in order, wrapped at the width it was printed at (after a resize, the
    /// current one: everything is printed again), followed by the live region.
    #[test]
    fn commits_are_never_lost_or_duplicated(ops in prop::collection::vec(op(), 1..40), width in 1u16..=60, height in 1u16..=12) {
        let mut h = Harness::new(width, height);
        // Every committed text written so far and the width its rows were printed at.
        let mut committed: Vec<(String, u16)> = Vec::new();
        // Committed texts the renderer has not written yet.
        let mut pending: Vec<String> = Vec::new();
        // The pending texts are written (at the renderer's width) by every call but `commit`.
        let written = |pending: &mut Vec<String>, committed: &mut Vec<(String, u16)>, w: u16| {
            committed.extend(pending.drain(..).map(|text| (text, w)));
        };
        let mut live: Vec<String> = Vec::new();
        for op in ops {
            match op {
                Op::Commit(texts) => {
                    pending.extend(texts.iter().cloned());
                    h.renderer.commit(&lines(&texts.iter().map(String::as_str).collect::<Vec<_>>())).unwrap();
                    if texts.len() % 2 == 0 {
                        h.renderer.flush().unwrap();
                        written(&mut pending, &mut committed, h.renderer.width());
                    }
                    h.pump();
                }
                Op::Draw(texts) => {
                    live = texts.clone();
                    h.renderer.draw(&lines(&texts.iter().map(String::as_str).collect::<Vec<_>>())).unwrap();
                    written(&mut pending, &mut committed, h.renderer.width());
                    h.pump();
                }
                Op::DrawWithCursor(texts, row, col) => {
                    live = texts.clone();
                    let drawn = lines(&texts.iter().map(String::as_str).collect::<Vec<_>>());
                    h.renderer.draw_with_cursor(&drawn, Some((row, col))).unwrap();
                    written(&mut pending, &mut committed, h.renderer.width());
                    h.pump();
                }
                Op::Resize(w, hgt) => {
                    let before = (h.renderer.width(), h.renderer.height());
                    h.resize(w, hgt);
                    // (A resize to the same size writes nothing.)
                    if before != (h.renderer.width(), h.renderer.height()) {
                        let w = h.renderer.width();
                        for (_, at) in &mut committed {
                            *at = w;
                        }
                        written(&mut pending, &mut committed, w);
                    }
                }
            }
            prop_assert_eq!(h.renderer.pending().len(), pending.len());
        }
        h.renderer.flush().unwrap();
        written(&mut pending, &mut committed, h.renderer.width());
        h.pump();
        let rows = h.transcript();
        let w = usize::from(h.renderer.width());
        let committed_rows: Vec<String> = committed
            .iter()
            .flat_map(|(text, at)| crate::wrap_text(text, Style::default(), *at))
            .map(|row| crate::text::line_text(&row).trim_end().to_owned())
            .collect();
        let shown_live: Vec<String> = live
            .iter()
            .skip(live.len().saturating_sub(h.renderer.max_live_rows()))
            .map(|t| t.chars().take(w).collect::<String>().trim_end().to_owned())
            .collect();
        prop_assert_eq!(&rows[..committed_rows.len().min(rows.len())], &committed_rows[..], "rows: {:?}", rows);
        prop_assert_eq!(&rows[committed_rows.len().min(rows.len())..], &shown_live[..]);
    }
}

#[test]
fn a_committed_image_line_is_written_as_it_is_and_text_with_escapes_is_cleaned() {
    use crate::Component;
    use crate::image::{ImageProtocol, ImageView};
    let mut h = Harness::new(40, 10);
    let image = ImageView::new("QUJD", "image/png", Some((90, 36)))
        .with_protocol(Some(ImageProtocol::Kitty))
        .with_image_id(5)
        .with_max_width(10);
    let mut committed = vec![Line::from("before")];
    committed.extend(image.render(40));
    committed.push(Line::from("\x1b_Ga=T,f=100;QUJD\x1b\\ sneaked in"));
    h.renderer.commit(&committed).unwrap();
    h.renderer.draw(&lines(&["live"])).unwrap();
    let written = h.pump();
    assert!(
        written.contains("\r\n\x1b[1A\x1b_Ga=T,f=100,q=2,C=1,c=10,r=2,i=5;QUJD\x1b\\\x1b[1B\x1b[0m\r\n"),
        "{written:?}"
    );
    // Text is cleaned of control characters: only the image's sequence reaches the terminal.
    assert_eq!(written.matches("\x1b_G").count(), 1, "{written:?}");
}
