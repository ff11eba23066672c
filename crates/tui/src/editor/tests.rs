use crossterm::event::{KeyEventKind, KeyEventState};
use proptest::prelude::*;

use super::*;
use crate::testing::{plain, styled};

const NONE: KeyModifiers = KeyModifiers::NONE;
const CTRL: KeyModifiers = KeyModifiers::CONTROL;
const ALT: KeyModifiers = KeyModifiers::ALT;
const SHIFT: KeyModifiers = KeyModifiers::SHIFT;

fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, modifiers)
}

fn press(editor: &mut Editor, code: KeyCode, modifiers: KeyModifiers) -> EditorAction {
    editor.handle_key(key(code, modifiers))
}

fn ctrl(editor: &mut Editor, c: char) -> EditorAction {
    press(editor, KeyCode::Char(c), CTRL)
}

fn alt(editor: &mut Editor, c: char) -> EditorAction {
    press(editor, KeyCode::Char(c), ALT)
}

fn typed(text: &str) -> Editor {
    let mut editor = Editor::new(&Theme::plain());
    for c in text.chars() {
        press(&mut editor, KeyCode::Char(c), NONE);
    }
    editor
}

/// The text with `|` at the cursor.
fn shown(editor: &Editor) -> String {
    let mut text = editor.text().to_owned();
    text.insert(editor.cursor(), '|');
    text
}

#[test]
fn typing_inserts_at_the_cursor() {
    let mut editor = typed("helo");
    press(&mut editor, KeyCode::Left, NONE);
    assert_eq!(press(&mut editor, KeyCode::Char('l'), NONE), EditorAction::Changed);
    assert_eq!(shown(&editor), "hell|o");
    press(&mut editor, KeyCode::Char('!'), SHIFT);
    assert_eq!(shown(&editor), "hell!|o");
}

#[test]
fn altgr_symbols_are_typed() {
    let mut editor = typed("a");
    assert_eq!(
        press(&mut editor, KeyCode::Char('@'), CTRL | ALT),
        EditorAction::Changed
    );
    assert_eq!(press(&mut editor, KeyCode::Char('q'), CTRL | ALT), EditorAction::None);
    assert_eq!(editor.text(), "a@");
}

#[test]
fn backspace_delete_and_ctrl_h_remove_one_character() {
    let mut editor = typed("abcd");
    press(&mut editor, KeyCode::Backspace, NONE);
    assert_eq!(shown(&editor), "abc|");
    ctrl(&mut editor, 'h');
    assert_eq!(shown(&editor), "ab|");
    press(&mut editor, KeyCode::Home, NONE);
    press(&mut editor, KeyCode::Delete, NONE);
    assert_eq!(shown(&editor), "|b");
    assert_eq!(press(&mut editor, KeyCode::Backspace, NONE), EditorAction::None);
}

#[test]
fn backspace_removes_an_accent_with_its_letter() {
    let mut editor = typed("cafe\u{301}");
    press(&mut editor, KeyCode::Backspace, NONE);
    assert_eq!(editor.text(), "caf");
}

#[test]
fn shift_enter_ctrl_j_and_backslash_enter_insert_a_newline() {
    let mut editor = typed("a");
    assert_eq!(press(&mut editor, KeyCode::Enter, SHIFT), EditorAction::Changed);
    press(&mut editor, KeyCode::Char('b'), NONE);
    assert_eq!(ctrl(&mut editor, 'j'), EditorAction::Changed);
    press(&mut editor, KeyCode::Char('c'), NONE);
    press(&mut editor, KeyCode::Char('\\'), NONE);
    assert_eq!(press(&mut editor, KeyCode::Enter, NONE), EditorAction::Changed);
    assert_eq!(shown(&editor), "a\nb\nc\n|");
}

#[test]
fn alt_enter_and_ctrl_enter_are_left_to_the_app() {
    let mut editor = typed("queued");
    assert_eq!(press(&mut editor, KeyCode::Enter, ALT), EditorAction::None);
    assert_eq!(press(&mut editor, KeyCode::Enter, CTRL), EditorAction::None);
    assert_eq!(editor.text(), "queued");
    assert_eq!(editor.submit(), Some("queued".to_owned()));
    assert_eq!(editor.history(), &["queued".to_owned()]);
}

#[test]
fn enter_submits_clears_and_remembers() {
    let mut editor = typed("first");
    assert_eq!(
        press(&mut editor, KeyCode::Enter, NONE),
        EditorAction::Submit("first".into())
    );
    assert!(editor.is_empty());
    assert_eq!(editor.history(), &["first".to_owned()]);
    assert_eq!(press(&mut editor, KeyCode::Enter, NONE), EditorAction::None);
    let mut blank = typed("   ");
    assert_eq!(press(&mut blank, KeyCode::Enter, NONE), EditorAction::None);
    assert_eq!(blank.text(), "   ");
}

#[test]
fn arrows_ctrl_b_and_ctrl_f_move_one_character_across_lines() {
    let mut editor = typed("ab");
    ctrl(&mut editor, 'j');
    press(&mut editor, KeyCode::Char('c'), NONE);
    press(&mut editor, KeyCode::Left, NONE);
    press(&mut editor, KeyCode::Left, NONE);
    assert_eq!(shown(&editor), "ab|\nc");
    ctrl(&mut editor, 'b');
    assert_eq!(shown(&editor), "a|b\nc");
    ctrl(&mut editor, 'f');
    press(&mut editor, KeyCode::Right, NONE);
    assert_eq!(shown(&editor), "ab\n|c");
    press(&mut editor, KeyCode::Right, NONE);
    assert_eq!(press(&mut editor, KeyCode::Right, NONE), EditorAction::None);
}

#[test]
fn home_end_ctrl_a_and_ctrl_e_go_to_the_line_ends() {
    let mut editor = Editor::new(&Theme::plain());
    editor.set_text("one\ntwo three\nfour");
    press(&mut editor, KeyCode::Up, NONE);
    assert_eq!(shown(&editor), "one\ntwo |three\nfour");
    press(&mut editor, KeyCode::Home, NONE);
    assert_eq!(shown(&editor), "one\n|two three\nfour");
    ctrl(&mut editor, 'e');
    assert_eq!(shown(&editor), "one\ntwo three|\nfour");
    ctrl(&mut editor, 'a');
    assert_eq!(shown(&editor), "one\n|two three\nfour");
    press(&mut editor, KeyCode::End, NONE);
    assert_eq!(shown(&editor), "one\ntwo three|\nfour");
    press(&mut editor, KeyCode::Home, CTRL);
    assert_eq!(shown(&editor), "|one\ntwo three\nfour");
    press(&mut editor, KeyCode::End, CTRL);
    assert_eq!(shown(&editor), "one\ntwo three\nfour|");
}

#[test]
fn word_motions_alt_ctrl_arrows_and_alt_b_f() {
    let mut editor = typed("git commit -m fix");
    press(&mut editor, KeyCode::Left, ALT);
    assert_eq!(shown(&editor), "git commit -m |fix");
    press(&mut editor, KeyCode::Left, CTRL);
    assert_eq!(shown(&editor), "git commit -|m fix");
    alt(&mut editor, 'b');
    assert_eq!(shown(&editor), "git commit |-m fix");
    alt(&mut editor, 'b');
    assert_eq!(shown(&editor), "git |commit -m fix");
    press(&mut editor, KeyCode::Right, ALT);
    assert_eq!(shown(&editor), "git commit| -m fix");
    press(&mut editor, KeyCode::Right, CTRL);
    assert_eq!(shown(&editor), "git commit -|m fix");
    alt(&mut editor, 'f');
    assert_eq!(shown(&editor), "git commit -m| fix");
}

#[test]
fn ctrl_w_and_alt_backspace_delete_a_word_as_pi_does() {
    let mut editor = typed("cargo test --all-targets");
    assert_eq!(ctrl(&mut editor, 'w'), EditorAction::Changed);
    assert_eq!(shown(&editor), "cargo test --all-|");
    ctrl(&mut editor, 'w');
    assert_eq!(shown(&editor), "cargo test --all|");
    let mut editor = typed("cargo test --all-targets");
    press(&mut editor, KeyCode::Backspace, ALT);
    assert_eq!(shown(&editor), "cargo test --all-|");
    press(&mut editor, KeyCode::Backspace, CTRL);
    assert_eq!(shown(&editor), "cargo test --all|");
}

#[test]
fn alt_d_and_ctrl_delete_delete_the_next_word() {
    let mut editor = typed("one two three");
    press(&mut editor, KeyCode::Home, NONE);
    alt(&mut editor, 'd');
    assert_eq!(shown(&editor), "| two three");
    press(&mut editor, KeyCode::Delete, CTRL);
    assert_eq!(shown(&editor), "| three");
    press(&mut editor, KeyCode::Delete, ALT);
    assert_eq!(shown(&editor), "|");
}

#[test]
fn ctrl_u_and_ctrl_k_kill_to_the_line_ends_and_ctrl_y_yanks() {
    let mut editor = Editor::new(&Theme::plain());
    editor.set_text("first\nsecond line");
    press(&mut editor, KeyCode::Left, ALT);
    ctrl(&mut editor, 'u');
    assert_eq!(shown(&editor), "first\n|line");
    ctrl(&mut editor, 'u');
    assert_eq!(shown(&editor), "first|line");
    ctrl(&mut editor, 'k');
    assert_eq!(shown(&editor), "first|");
    // Consecutive kills are one entry (backward ones before it, forward ones after).
    ctrl(&mut editor, 'y');
    assert_eq!(shown(&editor), "first\nsecond line|");
    ctrl(&mut editor, 'a');
    ctrl(&mut editor, 'k');
    assert_eq!(shown(&editor), "first\n|");
    ctrl(&mut editor, 'u');
    assert_eq!(shown(&editor), "first|");
    ctrl(&mut editor, 'u');
    assert_eq!(shown(&editor), "|");
    ctrl(&mut editor, 'y');
    assert_eq!(shown(&editor), "first\nsecond line|");
    press(&mut editor, KeyCode::Home, NONE);
    ctrl(&mut editor, 'k');
    ctrl(&mut editor, 'j');
    ctrl(&mut editor, 'j');
    press(&mut editor, KeyCode::Up, NONE);
    assert_eq!(shown(&editor), "first\n\n|\n");
    ctrl(&mut editor, 'k');
    assert_eq!(shown(&editor), "first\n\n|");
}

#[test]
fn paste_is_inserted_as_is() {
    let mut editor = typed("say: ");
    assert_eq!(
        editor.handle_paste("line 1\r\nline 2\n\tindented\x1b[0m"),
        EditorAction::Changed
    );
    assert_eq!(editor.text(), "say: line 1\nline 2\n\tindented[0m");
    assert_eq!(editor.handle_paste(""), EditorAction::None);
}

#[test]
fn up_and_down_walk_the_history_and_restore_the_draft() {
    let mut editor = Editor::new(&Theme::plain());
    editor.add_history("old");
    editor.add_history("newer\ntwo lines");
    for c in "draft".chars() {
        press(&mut editor, KeyCode::Char(c), NONE);
    }
    press(&mut editor, KeyCode::Up, NONE);
    assert_eq!(shown(&editor), "newer\ntwo lines|");
    // Up inside a multi-line entry moves up a row first.
    press(&mut editor, KeyCode::Up, NONE);
    assert_eq!(shown(&editor), "newer|\ntwo lines");
    press(&mut editor, KeyCode::Up, NONE);
    assert_eq!(shown(&editor), "old|");
    assert_eq!(press(&mut editor, KeyCode::Up, NONE), EditorAction::None);
    press(&mut editor, KeyCode::Down, NONE);
    assert_eq!(shown(&editor), "newer\ntwo lines|");
    press(&mut editor, KeyCode::Down, NONE);
    assert_eq!(shown(&editor), "draft|");
    assert_eq!(press(&mut editor, KeyCode::Down, NONE), EditorAction::None);
}

#[test]
fn submitted_texts_join_the_history_without_repeats() {
    let mut editor = typed("same");
    press(&mut editor, KeyCode::Enter, NONE);
    for c in "same".chars() {
        press(&mut editor, KeyCode::Char(c), NONE);
    }
    press(&mut editor, KeyCode::Enter, NONE);
    assert_eq!(editor.history().len(), 1);
    press(&mut editor, KeyCode::Up, NONE);
    assert_eq!(editor.text(), "same");
}

#[test]
fn up_and_down_move_through_wrapped_rows_keeping_the_column() {
    let mut editor = Editor::new(&Theme::plain());
    editor.set_text("aaaa bbbb cccc dddd");
    // "> " plus 10 columns of text: rows "aaaa bbbb ", "cccc dddd".
    assert_eq!(plain(&editor.render(12)), "> aaaa bbbb\n  cccc dddd");
    press(&mut editor, KeyCode::Left, NONE);
    press(&mut editor, KeyCode::Left, NONE);
    press(&mut editor, KeyCode::Up, NONE);
    assert_eq!(shown(&editor), "aaaa bb|bb cccc dddd");
    press(&mut editor, KeyCode::Down, NONE);
    assert_eq!(shown(&editor), "aaaa bbbb cccc dd|dd");
}

#[test]
fn the_goal_column_survives_short_rows() {
    let mut editor = Editor::new(&Theme::plain());
    editor.set_text("long line here\nab\nanother long");
    press(&mut editor, KeyCode::Up, NONE);
    press(&mut editor, KeyCode::Up, NONE);
    assert_eq!(shown(&editor), "long line he|re\nab\nanother long");
    let mut editor2 = Editor::new(&Theme::plain());
    editor2.set_text("long line here\nab\nanother long");
    press(&mut editor2, KeyCode::Up, NONE);
    assert_eq!(shown(&editor2), "long line here\nab|\nanother long");
}

#[test]
fn ctrl_c_clears_then_interrupts() {
    let mut editor = typed("something");
    assert_eq!(ctrl(&mut editor, 'c'), EditorAction::Changed);
    assert!(editor.is_empty());
    assert_eq!(ctrl(&mut editor, 'c'), EditorAction::Interrupt);
    assert_eq!(ctrl(&mut editor, 'c'), EditorAction::Interrupt);
}

#[test]
fn ctrl_d_exits_only_when_empty() {
    let mut editor = typed("ab");
    press(&mut editor, KeyCode::Home, NONE);
    assert_eq!(ctrl(&mut editor, 'd'), EditorAction::Changed);
    assert_eq!(editor.text(), "b");
    ctrl(&mut editor, 'd');
    assert_eq!(ctrl(&mut editor, 'd'), EditorAction::Exit);
}

#[test]
fn releases_and_unknown_keys_are_ignored() {
    let mut editor = typed("x");
    let release = KeyEvent {
        code: KeyCode::Char('y'),
        modifiers: NONE,
        kind: KeyEventKind::Release,
        state: KeyEventState::NONE,
    };
    assert_eq!(editor.handle_key(release), EditorAction::None);
    assert_eq!(press(&mut editor, KeyCode::Esc, NONE), EditorAction::None);
    assert_eq!(press(&mut editor, KeyCode::Tab, NONE), EditorAction::None);
    assert_eq!(press(&mut editor, KeyCode::F(5), NONE), EditorAction::None);
    assert_eq!(alt(&mut editor, 'x'), EditorAction::None);
    assert_eq!(editor.text(), "x");
}

#[test]
fn the_cursor_is_a_reverse_cell_and_its_position_is_reported() {
    let mut editor = typed("hello world");
    let theme = Theme::plain();
    for _ in 0..5 {
        press(&mut editor, KeyCode::Left, NONE);
    }
    assert_eq!(styled(&editor.render(40), &theme), "> hello [reverse]w[/]orld");
    assert_eq!(editor.cursor_position(40), (0, 8));
    press(&mut editor, KeyCode::End, NONE);
    assert_eq!(styled(&editor.render(40), &theme), "> hello world[reverse] [/]");
    assert_eq!(editor.cursor_position(40), (0, 13));
}

#[test]
fn the_last_column_is_kept_for_the_cursor() {
    let editor = typed("abcd");
    assert_eq!(plain(&editor.render(6)), "> abc\n  d");
    assert_eq!(editor.cursor_position(6), (1, 3));
    let editor = typed("abc");
    assert_eq!(plain(&editor.render(6)), "> abc");
    assert_eq!(editor.cursor_position(6), (0, 5));
}

#[test]
fn a_cursor_after_a_full_row_of_spaces_gets_a_row_of_its_own() {
    let editor = typed("abc ");
    assert_eq!(plain(&editor.render(6)), "> abc\n");
    assert_eq!(editor.render(6).len(), 2);
    assert_eq!(editor.cursor_position(6), (1, 2));
}

#[test]
fn tall_text_scrolls_to_keep_the_cursor_visible() {
    let mut editor = Editor::new(&Theme::plain()).with_max_rows(2);
    editor.set_text("1\n2\n3\n4");
    assert_eq!(plain(&editor.render(10)), "  3\n  4");
    assert_eq!(editor.cursor_position(10), (1, 3));
    press(&mut editor, KeyCode::Home, CTRL);
    assert_eq!(plain(&editor.render(10)), "> 1\n  2");
    press(&mut editor, KeyCode::Down, NONE);
    press(&mut editor, KeyCode::Down, NONE);
    assert_eq!(plain(&editor.render(10)), "  2\n  3");
}

#[test]
fn placeholder_and_focus() {
    let mut editor = Editor::new(&Theme::plain()).with_placeholder("Ask anything");
    assert_eq!(plain(&editor.render(30)), ">  Ask anything");
    editor.set_focused(false);
    assert_eq!(styled(&editor.render(30), &Theme::plain()), "> Ask anything");
    let narrow = Editor::new(&Theme::plain()).with_prompt(Line::from("pi> "));
    assert_eq!(plain(&narrow.render(3)), "");
    assert_eq!(narrow.cursor_position(3), (0, 0));
}

fn any_key() -> impl Strategy<Value = KeyEvent> {
    let code = prop_oneof![
        6 => prop::sample::select(vec!['a', 'b', ' ', '日', 'é', '\u{301}', '\t', '\\', 'x']).prop_map(KeyCode::Char),
        1 => prop::sample::select(vec!['a', 'e', 'b', 'f', 'u', 'k', 'w', 'y', 'j', 'h', 'd']).prop_map(KeyCode::Char),
        4 => prop::sample::select(vec![
            KeyCode::Enter, KeyCode::Backspace, KeyCode::Delete, KeyCode::Left, KeyCode::Right, KeyCode::Up,
            KeyCode::Down, KeyCode::Home, KeyCode::End,
        ]),
    ];
    let modifiers = prop::sample::select(vec![NONE, NONE, NONE, CTRL, ALT, SHIFT]);
    (code, modifiers).prop_map(|(code, modifiers)| KeyEvent::new(code, modifiers))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_keys_keep_the_editor_consistent(keys in prop::collection::vec(any_key(), 0..80), width in 1u16..=30, paste in "[a-z \n\t日]{0,20}") {
        let mut editor = Editor::new(&Theme::plain()).with_max_rows(5);
        editor.handle_paste(&paste);
        for key in keys {
            editor.handle_key(key);
            prop_assert!(editor.text().is_char_boundary(editor.cursor()));
            let (lines, (row, col)) = editor.render_with_cursor(width);
            prop_assert!(lines.len() <= 5 && !lines.is_empty());
            for line in &lines {
                prop_assert!(line_width(line) <= usize::from(width), "{:?} wider than {}", line, width);
            }
            prop_assert!(usize::from(row) < lines.len());
            prop_assert!(col < width.max(1));
        }
    }
}

#[test]
fn alt_y_after_a_yank_cycles_the_kill_ring_and_is_left_to_the_app_otherwise() {
    let mut editor = typed("one two");
    ctrl(&mut editor, 'w'); // kills "two"
    press(&mut editor, KeyCode::Left, NONE); // not a kill: the next one is a new entry
    ctrl(&mut editor, 'w'); // kills "one"
    assert_eq!(shown(&editor), "| ");
    assert_eq!(alt(&mut editor, 'y'), EditorAction::None);
    ctrl(&mut editor, 'y');
    assert_eq!(shown(&editor), "one| ");
    assert_eq!(alt(&mut editor, 'y'), EditorAction::Changed);
    assert_eq!(shown(&editor), "two| ");
    alt(&mut editor, 'y');
    assert_eq!(shown(&editor), "one| ");
}

#[test]
fn ctrl_minus_undoes_word_by_word_and_every_edit() {
    let mut editor = typed("hello big world");
    let undo = |editor: &mut Editor| ctrl(editor, '-');
    undo(&mut editor);
    assert_eq!(shown(&editor), "hello big|");
    undo(&mut editor);
    assert_eq!(shown(&editor), "hello|");
    ctrl(&mut editor, 'w');
    assert_eq!(shown(&editor), "|");
    undo(&mut editor);
    assert_eq!(shown(&editor), "hello|");
    editor.handle_paste("pasted");
    assert_eq!(shown(&editor), "hellopasted|");
    // Ctrl+_ is the same key in the legacy encoding.
    press(&mut editor, KeyCode::Char('_'), CTRL);
    assert_eq!(shown(&editor), "hello|");
    undo(&mut editor);
    assert_eq!(shown(&editor), "|");
    assert_eq!(undo(&mut editor), EditorAction::Changed);
    assert_eq!(shown(&editor), "|");
}

#[test]
fn ctrl_bracket_jumps_to_a_character() {
    let mut editor = typed("a,b,c");
    press(&mut editor, KeyCode::Home, NONE);
    assert_eq!(press(&mut editor, KeyCode::Char(']'), CTRL), EditorAction::None);
    press(&mut editor, KeyCode::Char(','), NONE);
    assert_eq!(shown(&editor), "a|,b,c");
    press(&mut editor, KeyCode::Char(']'), CTRL);
    press(&mut editor, KeyCode::Char(','), NONE);
    assert_eq!(shown(&editor), "a,b|,c");
    press(&mut editor, KeyCode::Char(']'), CTRL | ALT);
    press(&mut editor, KeyCode::Char('a'), NONE);
    assert_eq!(shown(&editor), "|a,b,c");
}

#[test]
fn backspace_and_arrows_move_by_grapheme() {
    // A flag (two regional indicators), a ZWJ sequence, a wide character.
    let mut editor = typed("🇫🇷👩\u{200d}💻日");
    press(&mut editor, KeyCode::Backspace, NONE);
    assert_eq!(editor.text(), "🇫🇷👩\u{200d}💻");
    press(&mut editor, KeyCode::Left, NONE);
    assert_eq!(shown(&editor), "🇫🇷|👩\u{200d}💻");
    press(&mut editor, KeyCode::Left, NONE);
    assert_eq!(shown(&editor), "|🇫🇷👩\u{200d}💻");
    press(&mut editor, KeyCode::Delete, NONE);
    assert_eq!(shown(&editor), "|👩\u{200d}💻");
    press(&mut editor, KeyCode::Right, NONE);
    assert_eq!(shown(&editor), "👩\u{200d}💻|");
    press(&mut editor, KeyCode::Backspace, NONE);
    assert_eq!(shown(&editor), "|");
}

#[test]
fn the_cursor_cell_after_wide_graphemes_is_where_the_terminal_puts_it() {
    let editor = typed("日🇫🇷x");
    // "> " + 日 (2) + 🇫🇷 (2) + x (1)
    assert_eq!(editor.cursor_position(40), (0, 7));
    let mut editor = typed("日🇫🇷x");
    press(&mut editor, KeyCode::Left, NONE);
    press(&mut editor, KeyCode::Left, NONE);
    assert_eq!(editor.cursor_position(40), (0, 4));
}

#[test]
fn large_pastes_show_pis_marker_and_are_expanded_on_submit() {
    let mut editor = typed("look: ");
    let sixty: String = (1..=60).map(|i| format!("line {i}")).collect::<Vec<_>>().join("\n");
    assert_eq!(editor.handle_paste(&sixty), EditorAction::Changed);
    assert_eq!(shown(&editor), "look: [paste #1 +60 lines]|");
    let long = "x".repeat(1200);
    editor.handle_paste(&long);
    assert_eq!(shown(&editor), "look: [paste #1 +60 lines][paste #2 1200 chars]|");
    // The marker is one unit for the cursor and for Backspace.
    press(&mut editor, KeyCode::Backspace, NONE);
    assert_eq!(shown(&editor), "look: [paste #1 +60 lines]|");
    press(&mut editor, KeyCode::Left, NONE);
    assert_eq!(shown(&editor), "look: |[paste #1 +60 lines]");
    press(&mut editor, KeyCode::End, NONE);
    press(&mut editor, KeyCode::Char('!'), NONE);
    assert_eq!(
        press(&mut editor, KeyCode::Enter, NONE),
        EditorAction::Submit(format!("look: {sixty}!"))
    );
    // The history keeps the marker text; the pastes are forgotten.
    assert_eq!(editor.history(), &["look: [paste #1 +60 lines]!".to_owned()]);
    editor.handle_paste(&sixty);
    assert_eq!(editor.text(), "[paste #1 +60 lines]");
    assert_eq!(editor.submit(), Some(sixty.clone()));
}

#[test]
fn a_pasted_path_after_a_word_gets_a_space() {
    let mut editor = typed("see");
    editor.handle_paste("/tmp/file");
    assert_eq!(editor.text(), "see /tmp/file");
}

fn grapheme_key() -> impl Strategy<Value = KeyEvent> {
    let codes = prop_oneof![
        prop::sample::select(vec![
            'a', ' ', '-', '日', 'e', '\u{301}', '\u{200d}', '🇫', '🇷', '👩', '💻', ']', 'w', 'u', 'k', 'y', 'd', 'b',
            'f', 'h'
        ])
        .prop_map(KeyCode::Char),
        prop::sample::select(vec![
            KeyCode::Backspace,
            KeyCode::Delete,
            KeyCode::Left,
            KeyCode::Right,
            KeyCode::Up,
            KeyCode::Down,
            KeyCode::Home,
            KeyCode::End,
            KeyCode::Enter,
        ]),
    ];
    let mods = prop::sample::select(vec![NONE, CTRL, ALT, SHIFT, CTRL | ALT]);
    (codes, mods).prop_map(|(code, mods)| key(code, mods))
}

proptest! {
    #[test]
    fn any_edit_sequence_keeps_the_cursor_on_a_grapheme_boundary(
        steps in proptest::collection::vec((grapheme_key(), proptest::option::of("[a-z\n🇫🇷👩\u{200d}💻]{0,30}")), 0..60)
    ) {
        use unicode_segmentation::UnicodeSegmentation;
        let mut editor = Editor::new(&Theme::plain());
        for (key, paste) in steps {
            match paste {
                Some(text) if key.code == KeyCode::Enter => {
                    editor.handle_paste(&text);
                }
                _ => {
                    editor.handle_key(key);
                }
            }
            let text = editor.text();
            let cursor = editor.cursor();
            prop_assert!(cursor <= text.len());
            let boundaries: Vec<usize> = text.grapheme_indices(true).map(|(i, _)| i).chain([text.len()]).collect();
            prop_assert!(boundaries.contains(&cursor), "cursor {} inside a grapheme of {:?}", cursor, text);
            let (row, col) = editor.cursor_position(12);
            let lines = editor.render(12);
            prop_assert!(usize::from(row) < lines.len().max(1));
            prop_assert!(col <= 12);
        }
    }
}

#[test]
fn page_keys_move_a_page_of_rows() {
    let mut editor = Editor::new(&Theme::plain());
    editor.set_text(&(0..12).map(|i| format!("row{i}")).collect::<Vec<_>>().join("\n"));
    assert_eq!(press(&mut editor, KeyCode::PageUp, NONE), EditorAction::Changed);
    assert!(shown(&editor).contains("\nrow6|\n"), "{}", shown(&editor));
    press(&mut editor, KeyCode::PageUp, NONE);
    press(&mut editor, KeyCode::PageUp, NONE);
    assert!(shown(&editor).starts_with("row0|"), "{}", shown(&editor));
    press(&mut editor, KeyCode::PageDown, NONE);
    assert!(shown(&editor).contains("\nrow5|\n"), "{}", shown(&editor));
}

#[test]
fn a_paste_with_csi_u_line_feeds_keeps_its_lines() {
    let mut editor = Editor::new(&Theme::plain());
    editor.handle_paste("one\x1b[106;5utwo\x1b[77;5uthree\x1b[1;5u");
    assert_eq!(editor.text(), "one\ntwo\nthree[1;5u");
}
