//! Markdown, themed (pi's `Markdown`): the assistant's text.
//!
//! | element | shown as |
//! | --- | --- |
//! | `# Heading` | bold in `mdHeading`, level 1 also underlined; levels 3–6 keep their `###` |
//! | `*em*`, `**strong**`, `~~strike~~` | italic, bold, crossed out |
//! | `` `code` `` | in `mdCode` |
//! | fenced code | between `` ```lang `` fences in `mdCodeBlockBorder`, indented two columns, highlighted ([`highlight`](crate::highlight)) |
//! | lists | `- ` bullets or `1. ` numbers in `mdListBullet`, nested lists indented under their item, `[x]` / `[ ]` tasks |
//! | `> quote` | `│ ` in `mdQuoteBorder` before each line, text italic in `mdQuote` |
//! | `[text](url)` | `text (url)`, text underlined in `mdLink`, url in `mdLinkUrl`; an autolink shows its url once |
//! | `---` | a rule of `─` (at most 80 columns) in `mdHr` |
//! | tables | cells separated by ` │ `, a `─┼─` rule under the header, columns narrowed (widest first) and cells wrapped to fit |
//! | HTML | shown as text, muted |

mod parse;
mod render;

use crate::theme::Theme;
use crate::{Component, Line};

/// A markdown document, parsed once and laid out for any width.
///
/// ```
/// use pi_tui::{Component, Markdown, Theme};
/// use pi_tui::testing::plain;
///
/// let md = Markdown::new("# Title\n\nSee [docs](https://example.com).\n\n- one\n- two", &Theme::dark());
/// assert_eq!(plain(&md.render(40)), "Title\n\nSee docs (https://example.com).\n\n- one\n- two");
/// ```
#[derive(Debug, Clone)]
pub struct Markdown {
    source: String,
    blocks: Vec<parse::Block>,
    theme: Theme,
}

impl Markdown {
    /// Parses `source`.
    pub fn new(source: impl Into<String>, theme: &Theme) -> Self {
        let source = source.into();
        let blocks = parse::parse(&source, theme);
        Markdown {
            source,
            blocks,
            theme: theme.clone(),
        }
    }

    /// The markdown source.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Replaces the source.
    pub fn set_source(&mut self, source: impl Into<String>) {
        self.source = source.into();
        self.blocks = parse::parse(&self.source, &self.theme);
    }

    /// Appends to the source (a streaming message's next chunk).
    pub fn push_str(&mut self, more: &str) {
        self.source.push_str(more);
        self.blocks = parse::parse(&self.source, &self.theme);
    }
}

impl Component for Markdown {
    fn render(&self, width: u16) -> Vec<Line> {
        let width = width.max(1);
        let cx = render::Context {
            theme: &self.theme,
            base: ratatui::style::Style::default(),
        };
        crate::wrap::fit_lines(render::render_blocks(&self.blocks, width, cx, false), width)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{plain, styled};

    fn show(source: &str, width: u16) -> String {
        plain(&Markdown::new(source, &Theme::plain()).render(width))
    }

    #[test]
    fn an_html_block_keeps_its_lines() {
        assert_eq!(show("<div>\n<p>x</p>\n</div>", 20), "<div>\n<p>x</p>\n</div>");
        assert_eq!(
            show("a <b>bold</b> c", 20),
            "a <b>bold</b> c",
            "inline HTML stays inline"
        );
    }

    #[test]
    fn loose_lists_get_blank_lines_between_items() {
        assert_eq!(show("- a\n- b", 20), "- a\n- b");
        assert_eq!(show("- a\n\n- b", 20), "- a\n\n- b");
    }

    #[test]
    fn wrapped_list_items_hang_under_their_text() {
        assert_eq!(show("10. one two three four", 12), "10. one two\n    three\n    four");
    }

    #[test]
    fn links_show_their_target_unless_it_is_the_text() {
        assert_eq!(
            show("[pi](https://pi.dev) <https://pi.dev> <me@x.org>", 80),
            "pi (https://pi.dev) https://pi.dev me@x.org"
        );
    }

    #[test]
    fn images_show_their_alt_text_and_target() {
        assert_eq!(show("![logo](logo.png)", 80), "logo (logo.png)");
    }

    /// The document of `pi073/release_notes_w*.txt`: pi 0.73.1's Markdown (pi-tui, from node,
    /// plain theme) rendered it as those files hold.
    const RELEASE_NOTES: &str = "# Release notes\n\n## Tables\n\n| Crate | Lines | What it does |\n| --- | --- | --- |\n| tui | 4200 | the terminal interface, renderer and editor |\n| ai | 9100 | providers |\n\n### CJK\n\n日本語のテキストです and 中文 文本 测试 wrapping here, then more words.";

    /// Tables in pi's box, headings, CJK wrapped at spaces: row for row what pi draws.
    #[test]
    fn tables_headings_and_cjk_render_as_pi_renders_them() {
        for (width, pi) in [
            (40, include_str!("pi073/release_notes_w40.txt")),
            (28, include_str!("pi073/release_notes_w28.txt")),
        ] {
            let ours: Vec<String> = show(RELEASE_NOTES, width)
                .lines()
                .map(|row| row.trim_end().to_owned())
                .collect();
            assert_eq!(ours.join("\n"), pi.trim_end(), "at width {width}");
        }
        let theme = Theme::indexed();
        let md = Markdown::new(RELEASE_NOTES, &theme);
        insta::assert_snapshot!("release_notes_w28", crate::testing::snapshot(&md, 28, &theme));
    }

    /// pi underlines a level-1 heading's text only: a margin put before it (the transcript
    /// indents assistant text by one column) is not underlined.
    #[test]
    fn the_heading_underline_does_not_cover_the_margin() {
        let theme = Theme::indexed();
        let mut lines = Markdown::new("# Title", &theme).render(20);
        lines[0].spans.insert(0, ratatui::text::Span::raw(" "));
        assert_eq!(styled(&lines, &theme), " [fg=mdHeading bold underline]Title[/]");
    }

    #[test]
    fn tables_too_narrow_for_columns_become_rows_of_text() {
        assert_eq!(
            show("| a | b | c |\n|---|---|---|\n| 1 | 2 | 3 |", 5),
            "a │ b\n│ c\n1 │ 2\n│ 3"
        );
    }

    #[test]
    fn streaming_text_is_parsed_again() {
        let mut md = Markdown::new("```rust\nlet", &Theme::plain());
        assert_eq!(plain(&md.render(20)), "```rust\n  let\n```");
        md.push_str(" x = 1;\n```\n\ndone");
        assert_eq!(plain(&md.render(20)), "```rust\n  let x = 1;\n```\n\ndone");
        assert_eq!(md.source(), "```rust\nlet x = 1;\n```\n\ndone");
    }

    #[test]
    fn quote_style_does_not_reach_nested_bars() {
        let theme = Theme::indexed();
        let lines = Markdown::new("> > deep", &theme).render(20);
        assert_eq!(
            styled(&lines, &theme),
            "[fg=mdQuoteBorder]│ │ [/][fg=mdQuote italic]deep[/]"
        );
    }

    #[test]
    fn prefixes_are_dropped_when_nothing_would_fit() {
        assert_eq!(show("> > - x", 3), "│ x");
    }
}
