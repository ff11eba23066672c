//! Markdown source to a tree of blocks with styled (unwrapped) inline text, via pulldown-cmark.

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

use crate::Line;
use crate::theme::{Slot, Theme};

/// A block of a markdown document. Inline text is kept as styled lines split only at hard breaks;
/// wrapping happens when the block is rendered for a width.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Block {
    Paragraph(Vec<Line>),
    Heading {
        level: u8,
        lines: Vec<Line>,
    },
    Code {
        lang: String,
        text: String,
    },
    List {
        start: Option<u64>,
        loose: bool,
        items: Vec<Item>,
    },
    Quote(Vec<Block>),
    Rule,
    Table {
        aligns: Vec<Alignment>,
        rows: Vec<Vec<Line>>,
        header_rows: usize,
    },
}

/// One list item: its task box, if any, and its blocks.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Item {
    pub(super) task: Option<bool>,
    pub(super) blocks: Vec<Block>,
    /// The item's text came in explicit paragraphs: the list is loose.
    explicit_paragraphs: bool,
}

/// A container being filled.
enum Frame {
    Blocks(Vec<Block>),
    Quote(Vec<Block>),
    List {
        start: Option<u64>,
        items: Vec<Item>,
    },
    Item(Item),
    Table {
        aligns: Vec<Alignment>,
        rows: Vec<Vec<Line>>,
        header_rows: usize,
        row: Vec<Line>,
    },
}

/// Inline text being collected, and where it goes when done.
enum InlineKind {
    Paragraph,
    Heading(u8),
    Cell,
}

struct Inline {
    kind: InlineKind,
    lines: Vec<Line>,
}

struct Builder<'t> {
    theme: &'t Theme,
    frames: Vec<Frame>,
    inline: Option<Inline>,
    /// Inline styles in effect (emphasis, strong, link, …), innermost last.
    styles: Vec<Style>,
    /// Open links: the target and the text seen so far.
    links: Vec<(String, String)>,
    /// An open code block: its language and text.
    code: Option<(String, String)>,
}

/// Parses `source` into blocks.
pub(super) fn parse(source: &str, theme: &Theme) -> Vec<Block> {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut builder = Builder {
        theme,
        frames: vec![Frame::Blocks(Vec::new())],
        inline: None,
        styles: Vec::new(),
        links: Vec::new(),
        code: None,
    };
    for event in Parser::new_ext(source, options) {
        builder.event(event);
    }
    builder.finish()
}

fn heading_number(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

impl Builder<'_> {
    fn event(&mut self, event: Event<'_>) {
        let is_block_html = matches!(event, Event::Html(_));
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => {
                if let Some((_, code)) = &mut self.code {
                    code.push_str(&text);
                } else {
                    self.text(&text, self.style());
                }
            }
            Event::Code(code) => {
                let style = self.style().patch(self.theme.style(Slot::MdCode));
                self.text(&code, style);
            }
            Event::InlineMath(math) | Event::DisplayMath(math) => {
                let style = self.style().patch(self.theme.style(Slot::MdCode));
                self.text(&math, style);
            }
            Event::Html(html) | Event::InlineHtml(html) => {
                let style = self.theme.style(Slot::Muted);
                // An HTML block arrives one line per event: each after the first starts a row.
                let block_continues = is_block_html
                    && self
                        .inline
                        .as_ref()
                        .and_then(|inline| inline.lines.last())
                        .is_some_and(|line| !line.spans.is_empty());
                if block_continues {
                    self.hard_break();
                }
                for (i, part) in html.trim_end_matches('\n').split('\n').enumerate() {
                    if i > 0 {
                        self.hard_break();
                    }
                    self.text(part, style);
                }
            }
            Event::FootnoteReference(name) => self.text(&format!("[^{name}]"), self.style()),
            Event::SoftBreak => self.text(" ", self.style()),
            Event::HardBreak => self.hard_break(),
            Event::Rule => {
                self.flush_inline();
                self.push_block(Block::Rule);
            }
            Event::TaskListMarker(checked) => {
                if let Some(Frame::Item(item)) = self.frames.last_mut() {
                    item.task = Some(checked);
                }
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => {
                self.flush_inline();
                if let Some(Frame::Item(item)) = self.frames.last_mut() {
                    item.explicit_paragraphs = true;
                }
                self.inline = Some(Inline {
                    kind: InlineKind::Paragraph,
                    lines: vec![Line::default()],
                });
            }
            Tag::Heading { level, .. } => {
                self.flush_inline();
                let kind = InlineKind::Heading(heading_number(level));
                self.inline = Some(Inline {
                    kind,
                    lines: vec![Line::default()],
                });
            }
            Tag::HtmlBlock => {
                self.flush_inline();
                self.inline = Some(Inline {
                    kind: InlineKind::Paragraph,
                    lines: vec![Line::default()],
                });
            }
            Tag::BlockQuote(_) => {
                self.flush_inline();
                self.frames.push(Frame::Quote(Vec::new()));
            }
            Tag::CodeBlock(kind) => {
                self.flush_inline();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info.trim().to_owned(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(start) => {
                self.flush_inline();
                self.frames.push(Frame::List {
                    start,
                    items: Vec::new(),
                });
            }
            Tag::Item => {
                self.flush_inline();
                self.frames.push(Frame::Item(Item::default()));
            }
            Tag::Table(aligns) => {
                self.flush_inline();
                self.frames.push(Frame::Table {
                    aligns,
                    rows: Vec::new(),
                    header_rows: 0,
                    row: Vec::new(),
                });
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(Frame::Table { row, .. }) = self.frames.last_mut() {
                    row.clear();
                }
            }
            Tag::TableCell => {
                self.inline = Some(Inline {
                    kind: InlineKind::Cell,
                    lines: vec![Line::default()],
                })
            }
            Tag::Emphasis => self.styles.push(Style::default().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.styles.push(Style::default().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.styles.push(Style::default().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Superscript | Tag::Subscript => self.styles.push(Style::default()),
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                self.styles
                    .push(self.theme.style(Slot::MdLink).add_modifier(Modifier::UNDERLINED));
                self.links.push((dest_url.to_string(), String::new()));
            }
            Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_) => self.flush_inline(),
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::Heading(_) | TagEnd::HtmlBlock => self.flush_inline(),
            TagEnd::BlockQuote(_) => {
                self.flush_inline();
                if let Some(Frame::Quote(blocks)) = self.frames.pop() {
                    self.push_block(Block::Quote(blocks));
                }
            }
            TagEnd::CodeBlock => {
                if let Some((lang, text)) = self.code.take() {
                    self.push_block(Block::Code { lang, text });
                }
            }
            TagEnd::Item => {
                self.flush_inline();
                if let Some(Frame::Item(item)) = self.frames.pop()
                    && let Some(Frame::List { items, .. }) = self.frames.last_mut()
                {
                    items.push(item);
                }
            }
            TagEnd::List(_) => {
                self.flush_inline();
                if let Some(Frame::List { start, items }) = self.frames.pop() {
                    let loose = items.iter().any(|item| item.explicit_paragraphs);
                    self.push_block(Block::List { start, loose, items });
                }
            }
            TagEnd::TableCell => {
                let cell = self
                    .inline
                    .take()
                    .and_then(|inline| inline.lines.into_iter().next())
                    .unwrap_or_default();
                if let Some(Frame::Table { row, .. }) = self.frames.last_mut() {
                    row.push(cell);
                }
            }
            TagEnd::TableHead | TagEnd::TableRow => {
                if let Some(Frame::Table {
                    rows, row, header_rows, ..
                }) = self.frames.last_mut()
                {
                    rows.push(std::mem::take(row));
                    if tag == TagEnd::TableHead {
                        *header_rows += 1;
                    }
                }
            }
            TagEnd::Table => {
                if let Some(Frame::Table {
                    aligns,
                    rows,
                    header_rows,
                    ..
                }) = self.frames.pop()
                {
                    self.push_block(Block::Table {
                        aligns,
                        rows,
                        header_rows,
                    });
                }
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough | TagEnd::Superscript | TagEnd::Subscript => {
                self.styles.pop();
            }
            TagEnd::Link | TagEnd::Image => {
                self.styles.pop();
                if let Some((url, text)) = self.links.pop() {
                    let bare = url.strip_prefix("mailto:").unwrap_or(&url);
                    if !url.is_empty() && text != url && text != bare {
                        let style = self.theme.style(Slot::MdLinkUrl);
                        self.text(&format!(" ({url})"), style);
                    }
                }
            }
            TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::MetadataBlock(_) => self.flush_inline(),
        }
    }

    /// The inline style in effect.
    fn style(&self) -> Style {
        self.styles.iter().fold(Style::default(), |acc, s| acc.patch(*s))
    }

    /// Appends inline text, starting an implicit paragraph (a tight list item's text) if needed.
    fn text(&mut self, text: &str, style: Style) {
        if text.is_empty() {
            return;
        }
        for (_, link_text) in &mut self.links {
            link_text.push_str(text);
        }
        let inline = self.inline.get_or_insert_with(|| Inline {
            kind: InlineKind::Paragraph,
            lines: vec![Line::default()],
        });
        if let Some(line) = inline.lines.last_mut() {
            match line.spans.last_mut() {
                Some(last) if last.style == style => last.content.to_mut().push_str(text),
                _ => line.spans.push(Span::styled(text.to_owned(), style)),
            }
        }
    }

    fn hard_break(&mut self) {
        if let Some(inline) = &mut self.inline {
            inline.lines.push(Line::default());
        }
    }

    /// Ends the inline text being collected and adds its block.
    fn flush_inline(&mut self) {
        let Some(inline) = self.inline.take() else { return };
        let block = match inline.kind {
            InlineKind::Paragraph => Block::Paragraph(inline.lines),
            InlineKind::Heading(level) => Block::Heading {
                level,
                lines: inline.lines,
            },
            InlineKind::Cell => return,
        };
        self.push_block(block);
    }

    fn push_block(&mut self, block: Block) {
        match self.frames.last_mut() {
            Some(Frame::Blocks(blocks) | Frame::Quote(blocks)) => blocks.push(block),
            Some(Frame::Item(item)) => item.blocks.push(block),
            // A block directly in a list or a table cannot happen; keep it in a new item.
            Some(Frame::List { items, .. }) => items.push(Item {
                blocks: vec![block],
                ..Item::default()
            }),
            Some(Frame::Table { .. }) | None => {}
        }
    }

    fn finish(mut self) -> Vec<Block> {
        self.flush_inline();
        if let Some((lang, text)) = self.code.take() {
            self.push_block(Block::Code { lang, text });
        }
        // Close whatever the source left open (it cannot, but stay total).
        while self.frames.len() > 1 {
            match self.frames.pop() {
                Some(Frame::Quote(blocks)) => self.push_block(Block::Quote(blocks)),
                Some(Frame::Item(item)) => {
                    if let Some(Frame::List { items, .. }) = self.frames.last_mut() {
                        items.push(item);
                    }
                }
                Some(Frame::List { start, items }) => self.push_block(Block::List {
                    start,
                    loose: false,
                    items,
                }),
                Some(Frame::Table {
                    aligns,
                    rows,
                    header_rows,
                    ..
                }) => self.push_block(Block::Table {
                    aligns,
                    rows,
                    header_rows,
                }),
                Some(Frame::Blocks(blocks)) => blocks.into_iter().for_each(|b| self.push_block(b)),
                None => break,
            }
        }
        match self.frames.pop() {
            Some(Frame::Blocks(blocks)) => blocks,
            _ => Vec::new(),
        }
    }
}
