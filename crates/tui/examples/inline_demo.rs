//! A scripted session on the inline renderer: markdown streams into the live region under a
//! loader, an editor and a footer, and each finished message is committed to the scrollback.
//! Resize the terminal while it runs; scroll back afterwards. `cargo run -p pi-tui --example
//! inline_demo [seconds]`.

use std::io;
use std::time::{Duration, Instant};

use crossterm::event::{self, Event};
use pi_tui::{Component, Editor, InlineRenderer, KeyHint, Line, Loader, Markdown, StatusLine, Theme};

const MESSAGE: &str = "## Step\n\nThe renderer prints **finished** blocks once, so they live in the terminal's own \
                       scrollback; only the live region is redrawn.\n\n```rust\nfn main() {\n    println!(\"hello\");\n}\n```\n\n- one\n- two\n";

fn main() -> io::Result<()> {
    let seconds: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(10);
    let (width, height) = crossterm::terminal::size()?;
    let theme = Theme::dark();
    let mut renderer = InlineRenderer::new(io::stdout(), width, height);
    let mut loader = Loader::new("Working…", &theme).with_hint("esc to interrupt");
    let mut editor = Editor::new(&theme).with_placeholder("Ask anything");
    editor.insert_str("a draft prompt");
    let status = StatusLine::new(Line::from("~/work/pi-rust"), Line::from("faux-model"));
    let hints = KeyHint::new(&theme).key("Esc", "abort").key("Enter", "steer");
    let started = Instant::now();
    let mut message = Markdown::new("", &theme);
    let mut shown = 0;
    let mut count = 0;
    while started.elapsed() < Duration::from_secs(seconds) {
        if event::poll(Duration::from_millis(40))?
            && let Event::Resize(w, h) = event::read()?
        {
            renderer.resize(w, h)?;
        }
        loader.tick();
        let chars: Vec<char> = MESSAGE.chars().collect();
        shown = (shown + 3).min(chars.len());
        message.set_source(chars[..shown].iter().collect::<String>());
        let width = renderer.width();
        if shown == chars.len() {
            count += 1;
            let mut done = vec![Line::from(format!("message {count}"))];
            done.extend(message.render(width));
            done.push(Line::default());
            renderer.commit(&done)?;
            shown = 0;
            message.set_source("");
        }
        let mut live = message.render(width);
        live.push(Line::default());
        live.extend(loader.render(width));
        live.extend(editor.render(width));
        live.extend(status.render(width));
        live.extend(hints.render(width));
        renderer.draw(&live)?;
    }
    renderer.finish()
}
