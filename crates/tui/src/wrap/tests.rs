use proptest::prelude::*;
use ratatui::style::{Color, Style, Stylize};
use ratatui::text::Span;

use super::*;
use crate::line_width;
use crate::testing::plain;
use crate::text::clusters;

fn rows(text: &str, width: u16) -> String {
    plain(&wrap_text(text, Style::default(), width))
}

#[test]
fn wraps_at_spaces_and_drops_them_at_the_break() {
    assert_eq!(rows("aaa bbb ccc", 7), "aaa bbb\nccc");
    assert_eq!(rows("aaa   bbb", 4), "aaa\nbbb");
}

#[test]
fn keeps_indentation_of_the_first_row_only() {
    assert_eq!(rows("    indented text here", 12), "    indented\ntext here");
}

#[test]
fn breaks_words_longer_than_the_width() {
    assert_eq!(rows("abcdefghij", 4), "abcd\nefgh\nij");
    assert_eq!(rows("xy abcdefghij", 4), "xy\nabcd\nefgh\nij");
}

#[test]
fn newlines_start_rows_and_empty_text_is_one_row() {
    assert_eq!(wrap_text("", Style::default(), 10).len(), 1);
    assert_eq!(rows("a\n\nb", 10), "a\n\nb");
}

#[test]
fn words_longer_than_a_row_break_between_wide_characters() {
    assert_eq!(rows("日本語のテキスト", 6), "日本語\nのテキ\nスト");
    assert_eq!(rows("ab日本", 3), "ab\n日\n本");
}

/// pi breaks CJK text at spaces like any other (its rows, from pi-tui's `wrapTextWithAnsi`).
#[test]
fn cjk_text_breaks_at_spaces_as_pi_breaks_it() {
    let text = "hello 日本語のテキストです and 中文 文本 测试 wrapping here";
    assert_eq!(
        rows(text, 14),
        "hello\n日本語のテキス\nトです and\n中文 文本 测试\nwrapping here"
    );
    assert_eq!(rows("これは 日本語 です", 10), "これは\n日本語\nです");
}

#[test]
fn width_one_replaces_wide_characters() {
    assert_eq!(rows("a日b", 1), "a\n\u{FFFD}\nb");
}

#[test]
fn width_zero_is_treated_as_one() {
    assert_eq!(rows("ab", 0), "a\nb");
}

#[test]
fn tabs_expand_to_tab_stops() {
    assert_eq!(rows("a\tb", 20), "a   b");
    assert_eq!(rows("ab\tc", 20), "ab  c");
}

#[test]
fn control_characters_are_dropped() {
    assert_eq!(rows("a\x1b[31mb\x07c", 20), "a[31mbc");
}

#[test]
fn styles_survive_wrapping() {
    let line = Line::from(vec![Span::raw("plain "), "bold words".bold(), Span::raw(" end")]);
    let wrapped = wrap_line(&line, 10);
    assert_eq!(plain(&wrapped), "plain bold\nwords end");
    assert_eq!(wrapped[0].spans[1].content, "bold");
    assert!(
        wrapped[0].spans[1]
            .style
            .add_modifier
            .contains(ratatui::style::Modifier::BOLD)
    );
    assert_eq!(wrapped[1].spans[0].content, "words");
    assert!(
        wrapped[1].spans[0]
            .style
            .add_modifier
            .contains(ratatui::style::Modifier::BOLD)
    );
}

#[test]
fn line_style_is_kept_on_every_row() {
    let line = Line::from("one two three").style(Style::default().fg(Color::Red));
    for row in wrap_line(&line, 4) {
        assert_eq!(row.style.fg, Some(Color::Red));
    }
}

#[test]
fn truncation_adds_the_ellipsis_in_the_cut_style() {
    let line = Line::from(vec![Span::raw("ab"), "cdef".red()]);
    let cut = truncate_line(&line, 4, "…");
    assert_eq!(plain(std::slice::from_ref(&cut)), "abc…");
    assert_eq!(cut.spans.last().map(|s| s.style.fg), Some(Some(Color::Red)));
}

#[test]
fn truncation_drops_spaces_before_the_ellipsis() {
    assert_eq!(plain(&[truncate_line(&Line::from("ab    cdef"), 5, "…")]), "ab…");
}

#[test]
fn a_too_wide_ellipsis_is_cut() {
    assert_eq!(plain(&[truncate_line(&Line::from("abcdef"), 2, "...")]), "..");
}

#[test]
fn truncation_never_splits_a_wide_character() {
    let cut = truncate_line(&Line::from("a日本"), 4, "");
    assert_eq!(plain(std::slice::from_ref(&cut)), "a日");
    assert_eq!(line_width(&cut), 3);
}

#[test]
fn padding_fills_the_width() {
    let style = Style::default().bg(Color::Blue);
    let line = pad_line(&Line::from("abc"), 6, style);
    assert_eq!(line_width(&line), 6);
    assert_eq!(line.spans[1].style, style);
    let cut = pad_line(&Line::from("abcdefgh"), 6, style);
    assert_eq!(plain(&[cut]), "abcdef");
}

/// Characters a wrap must keep: everything printable but plain spaces, with a character wider
/// than a one-column row replaced.
fn visible(text: &str, width: usize) -> String {
    let mut out = String::new();
    for cluster in clusters(text) {
        match cluster.kind {
            ClusterKind::Text if cluster.width > width => out.push_str(REPLACEMENT),
            ClusterKind::Text => out.extend(cluster.text.chars().filter(|c| *c != ' ')),
            _ => {}
        }
    }
    out
}

fn arbitrary_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => "[a-z]{1,12}",
        3 => Just(" ".to_owned()),
        1 => Just("  ".to_owned()),
        1 => Just("\t".to_owned()),
        1 => Just("\n".to_owned()),
        1 => "[日本語中文字]{1,6}",
        1 => prop::sample::select(vec!["😀", "👍🏽", "👨\u{200D}👩", "☁\u{FE0F}", "🇺🇸"]).prop_map(str::to_owned),
        1 => prop::sample::select(vec!["e\u{301}", "\u{301}", "a\u{20DD}", "\u{200B}", " \u{308}"]).prop_map(str::to_owned),
        1 => prop::sample::select(vec!["\x1b", "\x07", "\r", "\u{7f}", "\u{9b}", "\0"]).prop_map(str::to_owned),
        1 => "[a-z]{20,60}",
        1 => any::<String>(),
    ];
    prop::collection::vec(piece, 0..30).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn wrapped_rows_fit_and_lose_no_visible_character(text in arbitrary_text(), width in 1u16..=300) {
        let line = Line::from(vec![Span::raw(text.clone()), Span::styled("x", Style::default().bold())]);
        let wrapped = wrap_line(&line, width);
        let mut seen = String::new();
        for row in &wrapped {
            prop_assert!(line_width(row) <= usize::from(width), "row {:?} wider than {}", row, width);
            seen.push_str(&visible(&crate::text::line_text(row), usize::from(width)));
        }
        let expected = visible(&format!("{text}x"), usize::from(width));
        prop_assert_eq!(seen, expected);
    }

    #[test]
    fn truncated_and_padded_lines_fit(text in arbitrary_text(), width in 1u16..=300, ellipsis in prop::sample::select(vec!["", "…", "...", "日"])) {
        let line = Line::from(text.clone());
        let cut = truncate_line(&line, width, ellipsis);
        prop_assert!(line_width(&cut) <= usize::from(width));
        let padded = pad_line(&line, width, Style::default());
        prop_assert_eq!(line_width(&padded), usize::from(width));
        if line_width(&line) <= usize::from(width) && !text.contains('\n') {
            prop_assert_eq!(visible(&crate::text::line_text(&cut), usize::from(width)), visible(&text, usize::from(width)));
        }
    }

    #[test]
    fn output_contains_no_control_characters(text in arbitrary_text(), width in 1u16..=80) {
        for row in wrap_text(&text, Style::default(), width) {
            prop_assert!(!crate::text::line_text(&row).chars().any(char::is_control));
        }
        prop_assert!(!crate::text::line_text(&truncate_line(&Line::from(text), width, "…")).chars().any(char::is_control));
    }
}
