//! Snapshots of every component at widths 40 and 200, each as plain text and with styles
//! (`pi_tui::testing::snapshot`: `[fg=slot bold]text[/]`, slots named by `Theme::indexed`).

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;
use pi_tui::Padding;
use pi_tui::testing::snapshot;
use pi_tui::{
    BlockState, BoxView, Component, Container, DiffView, Editor, KeyHint, Line, Loader, Markdown, SelectItem,
    SelectList, Slot, Spacer, StatusLine, Text, Theme,
};
use ratatui::style::Stylize;
use ratatui::text::Span;

fn theme() -> Theme {
    Theme::indexed()
}

/// The component at widths 40 and 200.
fn both(component: &dyn Component) -> (String, String) {
    (snapshot(component, 40, &theme()), snapshot(component, 200, &theme()))
}

const PARAGRAPH: &str = "The inline renderer prints finished blocks once, as normal terminal output, so they live in \
                         the terminal's own scrollback; only the live region at the bottom is redrawn in place.";

#[test]
fn text() {
    let theme = theme();
    let column = Container::new()
        .with(Text::new(PARAGRAPH))
        .with(Spacer(1))
        .with(Text::from_lines(vec![Line::from(vec![
            theme.fg(Slot::Success, "✓ "),
            Span::raw("styled spans keep their style across "),
            "wrapped".bold(),
            Span::raw(" rows"),
        ])]))
        .with(Text::styled("padded by two columns on each side", theme.style(Slot::Muted)).padding_x(2));
    let (narrow, wide) = both(&column);
    assert_snapshot!("text_w40", narrow);
    assert_snapshot!("text_w200", wide);
}

#[test]
fn boxes() {
    let theme = theme();
    let tool = BoxView::new()
        .bg(theme.block_bg(BlockState::Success))
        .with(Text::from_lines(vec![Line::from(vec![
            theme.fg(Slot::ToolTitle, "bash").bold(),
            Span::raw(" "),
            theme.fg(Slot::Accent, "$ cargo test -p pi-tui"),
        ])]))
        .with(Spacer(1))
        .with(Text::styled(
            "running 105 tests\ntest result: ok. 105 passed; 0 failed; 0 ignored",
            theme.style(Slot::ToolOutput),
        ));
    let bare = BoxView::new()
        .padding(Padding {
            left: 4,
            right: 0,
            top: 0,
            bottom: 1,
        })
        .with(Text::new(PARAGRAPH));
    let column = Container::new().with(tool).with(bare);
    let (narrow, wide) = both(&column);
    assert_snapshot!("box_w40", narrow);
    assert_snapshot!("box_w200", wide);
}

const MARKDOWN: &str = r#"# Heading one

## Heading two

### Heading three

A paragraph with *emphasis*, **strong text**, ~~struck~~ words, `inline code`, a [link](https://example.com/docs)
and an autolink <https://example.com>.
A hard break follows\
right here.

- first item
- second item with a long text that has to wrap onto the next row of the list
  - nested item
  - another nested item
    1. deeply nested number
- [x] a finished task
- [ ] an open task

3. third
4. fourth
10. tenth? no, fifth

> A block quote with **bold** inside.
>
> > And a nested quote.

---

| Tool | Mode | Description |
| :--- | :---: | ---: |
| read | parallel | Reads a file, with offset and limit |
| bash | sequential | Runs a shell command |

```rust
fn main() {
    // greet
    let name = "pi";
    println!("hello {name}: {}", 42);
}
```

<div>raw html</div>
"#;

#[test]
fn markdown_elements() {
    let (narrow, wide) = both(&Markdown::new(MARKDOWN, &theme()));
    assert_snapshot!("markdown_all_w40", narrow);
    assert_snapshot!("markdown_all_w200", wide);
}

const CODE: &str = r#"```ts
// TypeScript
export async function read(path: string): Promise<number> {
  const text = `template ${path}`;
  return text.length * 2; /* block */
}
```

```python
def greet(name: str) -> None:
    """Say hello."""
    print(f"hello {name}", 3.14)  # comment
```

```go
func main() {
	fmt.Println("tabs", 0x1F, nil)
}
```

```json
{"name": "pi", "tools": ["read", "bash"], "limit": 2000, "strict": true, "extra": null}
```

```bash
# install
export PATH="$HOME/bin:$PATH"
if [ -f ~/.pi ]; then echo 'found'; fi
```

```
plain text block without a language
```
"#;

#[test]
fn markdown_code_blocks() {
    let (narrow, wide) = both(&Markdown::new(CODE, &theme()));
    assert_snapshot!("markdown_code_w40", narrow);
    assert_snapshot!("markdown_code_w200", wide);
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

#[test]
fn select_list_scrolled_with_a_filter() {
    let models = [
        ("claude-opus-4", "anthropic"),
        ("claude-sonnet-4", "anthropic"),
        ("gpt-5", "openai"),
        ("gpt-5-mini", "openai"),
        ("o4-mini", "openai"),
        ("gemini-2.5-pro", "google"),
        (
            "llama-3.3-70b",
            "ollama, running locally on this machine with a long description",
        ),
        ("qwen3-coder", "ollama"),
        ("deepseek-r1", "openrouter"),
        ("mistral-large", "mistral"),
    ];
    let items = models
        .iter()
        .map(|(name, provider)| SelectItem::new(*name).with_description(*provider))
        .collect();
    let mut list = SelectList::new(items, &theme())
        .with_title("Select a model")
        .with_max_visible(4);
    let top = both(&list);
    for c in "o".chars() {
        list.handle_key(key(KeyCode::Char(c)));
    }
    for _ in 0..6 {
        list.handle_key(key(KeyCode::Down));
    }
    let filtered = both(&list);
    assert_snapshot!("select_list_w40", format!("{}\n{}", top.0, filtered.0));
    assert_snapshot!("select_list_w200", format!("{}\n{}", top.1, filtered.1));
}

#[test]
fn loader_frame() {
    let mut loader = Loader::new("Working…", &theme()).with_hint("esc to interrupt");
    for _ in 0..3 {
        loader.tick_at(Duration::from_secs(75));
    }
    let (narrow, wide) = both(&loader);
    assert_snapshot!("loader_w40", narrow);
    assert_snapshot!("loader_w200", wide);
}

const OLD: &str = "use std::io;\n\nfn main() {\n    let x = 1;\n    let y = 2;\n    println!(\"{}\", x + y);\n    \
                   io::stdout();\n    let unchanged_a = 0;\n    let unchanged_b = 0;\n    let unchanged_c = 0;\n    \
                   let unchanged_d = 0;\n    let unchanged_e = 0;\n    let unchanged_f = 0;\n    let z = 3;\n}\n";
const NEW: &str = "use std::io;\n\nfn main() {\n    let x = 10;\n    let y = 2;\n    println!(\"the sum of x and y, \
                   printed on one very long line: {}\", x + y);\n    io::stdout();\n    let unchanged_a = 0;\n    \
                   let unchanged_b = 0;\n    let unchanged_c = 0;\n    let unchanged_d = 0;\n    let unchanged_e = 0;\n    \
                   let unchanged_f = 0;\n    let z = 30;\n    let w = 4;\n}\n";

#[test]
fn diff_collapsed_and_expanded() {
    let mut diff = DiffView::from_texts(OLD, NEW, &theme()).with_max_lines(8);
    let collapsed = both(&diff);
    diff.set_expanded(true);
    let expanded = both(&diff);
    assert_snapshot!("diff_collapsed_w40", collapsed.0);
    assert_snapshot!("diff_collapsed_w200", collapsed.1);
    assert_snapshot!("diff_expanded_w40", expanded.0);
    assert_snapshot!("diff_expanded_w200", expanded.1);
}

#[test]
fn unified_diff() {
    let unified = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -10,3 +10,3 @@\n fn a() {}\n-fn b() {}\n+fn b() -> u8 { 0 }\n fn c() {}\n@@ -40,2 +40,3 @@\n fn d() {}\n+fn e() {}\n fn f() {}\n";
    let (narrow, wide) = both(&DiffView::from_unified(unified, &theme()));
    assert_snapshot!("diff_unified_w40", narrow);
    assert_snapshot!("diff_unified_w200", wide);
}

#[test]
fn editor_cursor_in_wrapped_text() {
    let mut editor = Editor::new(&theme());
    let text = "Refactor the renderer so that resizing the terminal in the middle of a stream never duplicates \
                committed lines, then add a proptest over random sequences of commit, draw and resize operations \
                against a vt100 terminal, and snapshot every component at widths forty and two hundred.\nSecond \
                line.";
    editor.handle_paste(text);
    // Into the middle of the first paragraph.
    for _ in 0..2 {
        editor.handle_key(key(KeyCode::Up));
    }
    for _ in 0..4 {
        editor.handle_key(KeyEvent::new(KeyCode::Left, KeyModifiers::ALT));
    }
    let narrow = format!(
        "{}cursor {:?}\n",
        snapshot(&editor, 40, &theme()),
        editor.cursor_position(40)
    );
    let wide = format!(
        "{}cursor {:?}\n",
        snapshot(&editor, 200, &theme()),
        editor.cursor_position(200)
    );
    assert_snapshot!("editor_wrapped_w40", narrow);
    assert_snapshot!("editor_wrapped_w200", wide);
}

#[test]
fn status_line_and_key_hints() {
    let theme = theme();
    let column = Container::new()
        .with(StatusLine::new(
            Line::from(theme.fg(Slot::Dim, "~/work/pi-rust (wip/tui-lib)")),
            Line::from(theme.fg(Slot::Dim, "anthropic/claude-sonnet-4")),
        ))
        .with(StatusLine::new(
            Line::from(theme.fg(Slot::Dim, "↑12k ↓3.4k R40k W2k $0.184 42.1%/200k (auto)")),
            Line::from(theme.fg(Slot::Dim, "gpt-5 • high")),
        ))
        .with(
            KeyHint::new(&theme)
                .key("Esc", "abort")
                .key("Enter", "steer")
                .key("Alt+Enter", "follow-up")
                .key("Ctrl+O", "expand"),
        );
    let (narrow, wide) = both(&column);
    assert_snapshot!("status_w40", narrow);
    assert_snapshot!("status_w200", wide);
}

/// A highlighted code block in pi's built-in themes, each colour written as its hex value.
#[test]
fn highlighted_code_block_in_both_themes() {
    let source = "```ts\n// Greets someone.\nexport function greet(name: string): string {\n  const times = 3;\n  return `hi ${name}`.repeat(times);\n}\n```";
    // Literal names: the snapshot check finds a snapshot's test by its name.
    let styled = |theme: &Theme| pi_tui::testing::styled(&Markdown::new(source, theme).render(60), &Theme::plain());
    assert_snapshot!("code_block_dark", styled(&Theme::dark()));
    assert_snapshot!("code_block_light", styled(&Theme::light()));
}
