use super::*;
use crate::testing::plain;

/// A line as the terminal receives it, escapes spelled out.
fn escaped(lines: &[Line]) -> String {
    lines
        .iter()
        .map(|line| crate::ansi::line_to_ansi(line).escape_debug().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

const PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

#[test]
fn detects_the_terminals_pi_tui_knows() {
    let detect = |vars: &[(&str, &str)]| {
        let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        detect_capabilities(move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())).images
    };
    assert_eq!(detect(&[("KITTY_WINDOW_ID", "1")]), Some(ImageProtocol::Kitty));
    assert_eq!(detect(&[("TERM_PROGRAM", "ghostty")]), Some(ImageProtocol::Kitty));
    assert_eq!(detect(&[("TERM", "xterm-ghostty")]), Some(ImageProtocol::Kitty));
    assert_eq!(detect(&[("WEZTERM_PANE", "0")]), Some(ImageProtocol::Kitty));
    assert_eq!(detect(&[("ITERM_SESSION_ID", "w0t0p0")]), Some(ImageProtocol::ITerm2));
    assert_eq!(detect(&[("TERM_PROGRAM", "iTerm.app")]), Some(ImageProtocol::ITerm2));
    // tmux and screen first: no images even inside kitty.
    assert_eq!(
        detect(&[("KITTY_WINDOW_ID", "1"), ("TMUX", "/tmp/tmux-0/default,1,0")]),
        None
    );
    assert_eq!(detect(&[("TERM_PROGRAM", "kitty"), ("TERM", "screen-256color")]), None);
    assert_eq!(detect(&[("TERM_PROGRAM", "vscode")]), None);
    assert_eq!(detect(&[("TERM", "xterm-256color")]), None);
}

#[test]
fn rows_follow_the_aspect_ratio_at_nine_by_eighteen_pixel_cells() {
    assert_eq!(image_rows((800, 600), 60, DEFAULT_CELL_PIXELS), 23);
    assert_eq!(image_rows((2000, 100), 60, DEFAULT_CELL_PIXELS), 2);
    assert_eq!(image_rows((1, 1), 1, DEFAULT_CELL_PIXELS), 1);
}

#[test]
fn kitty_sequences() {
    let view = ImageView::new(PIXEL, "image/png", Some((90, 54)))
        .with_protocol(Some(ImageProtocol::Kitty))
        .with_image_id(7)
        .with_max_width(10);
    let lines = view.render(80);
    assert_eq!(lines.len(), 3);
    assert!(is_image_line(&lines[2]));
    insta::assert_snapshot!("kitty_image", escaped(&lines));
    // Long data goes in chunks of 4096 characters: m=1 … m=0.
    let long = "A".repeat(9000);
    insta::assert_snapshot!(
        "kitty_chunks",
        encode_kitty(
            &long,
            KittyOptions {
                columns: Some(4),
                rows: Some(2),
                image_id: Some(3),
                move_cursor: false
            }
        )
        .replace(&"A".repeat(4096), "<4096 A>")
        .replace(&"A".repeat(808), "<808 A>")
        .escape_debug()
        .to_string()
    );
    assert_eq!(delete_kitty_image(7), "\x1b_Ga=d,d=I,i=7,q=2\x1b\\");
}

#[test]
fn iterm2_sequence() {
    let view = ImageView::new(PIXEL, "image/jpeg", Some((180, 36)))
        .with_protocol(Some(ImageProtocol::ITerm2))
        .with_max_width(60);
    // Never wider than the width less 2.
    let lines = view.render(22);
    assert_eq!(lines.len(), 2);
    insta::assert_snapshot!("iterm2_image", escaped(&lines));
}

#[test]
fn placeholder_without_a_protocol_and_for_kitty_without_png() {
    let view = ImageView::new(PIXEL, "image/png", Some((2000, 1000))).with_protocol(None);
    let jpeg_in_kitty = ImageView::new(PIXEL, "image/jpeg", None)
        .with_protocol(Some(ImageProtocol::Kitty))
        .with_filename("photo.jpg");
    insta::assert_snapshot!(
        "image_placeholder",
        format!("{}\n{}", plain(&view.render(80)), plain(&jpeg_in_kitty.render(80)))
    );
}

#[test]
fn text_that_contains_the_sequences_is_not_an_image_line() {
    assert!(!is_image_line(&Line::from("\x1b_Ga=T,f=100;AAAA\x1b\\")));
    assert!(!is_image_line(&Line::from("\x1b]1337;File=inline=1:AAAA\x07")));
    assert!(!is_image_line(&image_line("plain text".to_owned())));
}
