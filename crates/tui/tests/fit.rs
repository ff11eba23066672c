//! Every component, for any content and any width, returns no line wider than the width.

use std::time::Duration;

use pi_tui::{
    BoxView, Component, DiffView, Editor, KeyHint, Line, Loader, Markdown, SelectItem, SelectList, StatusLine, Text,
    Theme, line_width,
};
use pi_tui::{Padding, Slot};
use proptest::prelude::*;

fn assert_fits(name: &str, component: &dyn Component, width: u16) -> Result<(), TestCaseError> {
    for line in component.render(width) {
        prop_assert!(
            line_width(&line) <= usize::from(width.max(1)),
            "{} at {}: {:?}",
            name,
            width,
            line
        );
        let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
        prop_assert!(
            !text.chars().any(char::is_control),
            "{} printed a control character: {:?}",
            name,
            text
        );
    }
    Ok(())
}

/// Markdown-ish text: markup, code fences, tables, wide characters, tabs and controls.
fn content() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => "[a-z]{1,10}",
        3 => Just(" ".to_owned()),
        2 => Just("\n".to_owned()),
        1 => prop::sample::select(vec![
            "# ", "## ", "#### ", "- ", "  - ", "1. ", "> ", "> > ", "**", "*", "~~", "`", "\n```rust\n", "\n```\n",
            "\n| a | b |\n|---|:-:|\n| c | d |\n", "[l](http://x.y)", "<https://a.b>", "---\n", "- [ ] ", "\\\n",
            "<div>", "\t", "日本語", "😀", "e\u{301}", "\x1b[31m", "\r",
        ])
        .prop_map(str::to_owned),
        1 => "[a-z]{30,80}",
    ];
    prop::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn components_fit_any_width(text in content(), width in 0u16..=120) {
        let theme = Theme::dark();
        assert_fits("markdown", &Markdown::new(text.clone(), &theme), width)?;
        assert_fits("text", &Text::new(text.clone()).padding_x(2), width)?;
        let boxed = BoxView::new().padding(Padding::symmetric(3, 1)).bg(theme.color(Slot::UserMessageBg)).with(Text::new(text.clone()));
        assert_fits("box", &boxed, width)?;
        let old: String = text.lines().step_by(2).collect::<Vec<_>>().join("\n");
        assert_fits("diff", &DiffView::from_texts(&old, &text, &theme), width)?;
        assert_fits("unified diff", &DiffView::from_unified(&text, &theme), width)?;
        let items = text.split_whitespace().map(|w| SelectItem::new(w).with_description(text.clone())).collect();
        assert_fits("select list", &SelectList::new(items, &theme).with_title(text.clone()), width)?;
        let mut loader = Loader::new(text.clone(), &theme).with_hint(text.clone());
        loader.tick_at(Duration::from_secs(4000));
        assert_fits("loader", &loader, width)?;
        assert_fits("status", &StatusLine::new(Line::from(text.clone()), Line::from(text.clone())), width)?;
        assert_fits("hints", &KeyHint::new(&theme).key(text.clone(), text.clone()), width)?;
        let mut editor = Editor::new(&theme).with_placeholder(text.clone());
        assert_fits("empty editor", &editor, width)?;
        editor.handle_paste(&text);
        assert_fits("editor", &editor, width)?;
    }
}
