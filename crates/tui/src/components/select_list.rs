//! A list to choose one item from, with filter-as-you-type (pi's `SelectList`).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::Stylize;
use ratatui::text::Span;

use crate::keys;
use crate::text::display_width;
use crate::theme::{Slot, Theme};
use crate::{Component, Line, truncate_line};

/// One entry of a [`SelectList`].
///
/// ```
/// use pi_tui::SelectItem;
/// let item = SelectItem::new("gpt-5").with_description("OpenAI");
/// assert_eq!(item.description.as_deref(), Some("OpenAI"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SelectItem {
    /// What the row shows.
    pub label: String,
    /// Shown after the label, dimmed.
    pub description: Option<String>,
}

impl SelectItem {
    /// An item without description.
    pub fn new(label: impl Into<String>) -> Self {
        SelectItem {
            label: label.into(),
            description: None,
        }
    }

    /// Adds a description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

impl From<&str> for SelectItem {
    fn from(label: &str) -> Self {
        SelectItem::new(label)
    }
}

/// What a key did to a [`SelectList`].
///
/// ```
/// use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
/// use pi_tui::{SelectList, Selection, Theme};
///
/// let mut list = SelectList::new(vec!["only".into()], &Theme::plain());
/// match list.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)) {
///     Selection::Chosen(index) => assert_eq!(list.items()[index].label, "only"),
///     other => panic!("{other:?}"),
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Selection {
    /// The selection or the filter changed: draw again.
    Changed,
    /// Enter on an item: its index in the list given to [`SelectList::new`].
    Chosen(usize),
    /// Esc or Ctrl+C.
    Cancelled,
    /// The key means nothing to the list.
    Ignored,
}

/// A titled list of items, one selected, showing a window of at most `max_visible` rows that
/// scrolls with the selection. Typing filters the items: every space-separated word of the filter
/// must occur in the label or the description, ignoring case.
///
/// Keys: Up / Ctrl+P and Down / Ctrl+N move (wrapping around), PageUp / PageDown move a window,
/// Home / End go to the first / last item, Enter chooses, Esc / Ctrl+C cancel, printable
/// characters extend the filter, Backspace shortens it and Ctrl+U clears it.
///
/// ```
/// use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
/// use pi_tui::{SelectItem, SelectList, Selection, Theme};
///
/// let mut list = SelectList::new(vec!["alpha".into(), "beta".into(), "gamma".into()], &Theme::dark());
/// let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
/// assert_eq!(list.handle_key(key(KeyCode::Down)), Selection::Changed);
/// assert_eq!(list.handle_key(key(KeyCode::Enter)), Selection::Chosen(1));
/// list.handle_key(key(KeyCode::Char('g')));
/// assert_eq!(list.selected_index(), Some(2));
/// ```
#[derive(Debug, Clone)]
pub struct SelectList {
    title: Option<String>,
    items: Vec<SelectItem>,
    filter: String,
    /// Indices (into `items`) of the items the filter lets through, in order.
    matches: Vec<usize>,
    /// Position of the selected item in `matches`.
    selected: usize,
    /// Position in `matches` of the first visible row.
    scroll: usize,
    max_visible: usize,
    theme: Theme,
}

impl SelectList {
    /// A list of `items`, the first selected, showing up to 10 rows.
    pub fn new(items: Vec<SelectItem>, theme: &Theme) -> Self {
        let matches = (0..items.len()).collect();
        SelectList {
            title: None,
            items,
            filter: String::new(),
            matches,
            selected: 0,
            scroll: 0,
            max_visible: 10,
            theme: theme.clone(),
        }
    }

    /// Adds a title row.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Shows at most `rows` items at a time (at least 1).
    pub fn with_max_visible(mut self, rows: usize) -> Self {
        self.max_visible = rows.max(1);
        self.keep_selection_visible();
        self
    }

    /// The items.
    pub fn items(&self) -> &[SelectItem] {
        &self.items
    }

    /// The filter typed so far.
    pub fn filter(&self) -> &str {
        &self.filter
    }

    /// Replaces the filter; the selection moves to the first match.
    pub fn set_filter(&mut self, filter: impl Into<String>) {
        self.filter = filter.into();
        self.refilter();
    }

    /// Indices of the items the filter lets through.
    pub fn matches(&self) -> &[usize] {
        &self.matches
    }

    /// The index of the selected item, `None` when nothing matches the filter.
    pub fn selected_index(&self) -> Option<usize> {
        self.matches.get(self.selected).copied()
    }

    /// The selected item.
    pub fn selected_item(&self) -> Option<&SelectItem> {
        self.selected_index().and_then(|index| self.items.get(index))
    }

    /// Selects the item at `index` (into the items), if the filter shows it.
    pub fn set_selected(&mut self, index: usize) {
        if let Some(position) = self.matches.iter().position(|i| *i == index) {
            self.selected = position;
            self.keep_selection_visible();
        }
    }

    /// Handles a key press (see the type's docs for the keys).
    pub fn handle_key(&mut self, key: KeyEvent) -> Selection {
        if !keys::is_press(&key) {
            return Selection::Ignored;
        }
        if keys::is_ctrl(&key, 'c') {
            return Selection::Cancelled;
        }
        if keys::is_ctrl(&key, 'p') {
            return self.step(-1, true);
        }
        if keys::is_ctrl(&key, 'n') {
            return self.step(1, true);
        }
        if keys::is_ctrl(&key, 'u') {
            if self.filter.is_empty() {
                return Selection::Ignored;
            }
            self.set_filter("");
            return Selection::Changed;
        }
        if let Some(c) = keys::printable(&key) {
            self.filter.push(c);
            self.refilter();
            return Selection::Changed;
        }
        // Modified keys (Alt+Up, Ctrl+End …) are the application's, not the list's.
        if !key
            .modifiers
            .intersection(KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SUPER)
            .is_empty()
        {
            return Selection::Ignored;
        }
        let page = self.max_visible as isize;
        match key.code {
            KeyCode::Up => self.step(-1, true),
            KeyCode::Down => self.step(1, true),
            KeyCode::PageUp => self.step(-page, false),
            KeyCode::PageDown => self.step(page, false),
            KeyCode::Home => self.step(isize::MIN / 2, false),
            KeyCode::End => self.step(isize::MAX / 2, false),
            KeyCode::Enter => match self.selected_index() {
                Some(index) => Selection::Chosen(index),
                None => Selection::Ignored,
            },
            KeyCode::Esc => Selection::Cancelled,
            KeyCode::Backspace => {
                if self.filter.pop().is_none() {
                    return Selection::Ignored;
                }
                self.refilter();
                Selection::Changed
            }
            _ => Selection::Ignored,
        }
    }

    /// Moves the selection by `delta`, wrapping around at the ends or stopping there.
    fn step(&mut self, delta: isize, wrap: bool) -> Selection {
        let len = self.matches.len() as isize;
        if len == 0 {
            return Selection::Ignored;
        }
        let target = self.selected as isize + delta;
        let next = if wrap {
            target.rem_euclid(len)
        } else {
            target.clamp(0, len - 1)
        };
        if next as usize == self.selected {
            return Selection::Ignored;
        }
        self.selected = next as usize;
        self.keep_selection_visible();
        Selection::Changed
    }

    fn refilter(&mut self) {
        let words: Vec<String> = self.filter.split_whitespace().map(str::to_lowercase).collect();
        self.matches = self
            .items
            .iter()
            .enumerate()
            .filter(|(_, item)| {
                let haystack = format!("{} {}", item.label, item.description.as_deref().unwrap_or("")).to_lowercase();
                words.iter().all(|word| haystack.contains(word.as_str()))
            })
            .map(|(index, _)| index)
            .collect();
        self.selected = 0;
        self.scroll = 0;
    }

    fn keep_selection_visible(&mut self) {
        if self.selected < self.scroll {
            self.scroll = self.selected;
        } else if self.selected >= self.scroll + self.max_visible {
            self.scroll = self.selected + 1 - self.max_visible;
        }
    }

    fn item_row(&self, index: usize, selected: bool, label_col: Option<usize>, width: u16) -> Line {
        let theme = &self.theme;
        let Some(item) = self.items.get(index) else {
            return Line::default();
        };
        let mut spans = if selected {
            vec![
                theme.fg(Slot::Accent, "→ "),
                theme.fg(Slot::Accent, item.label.clone()).bold(),
            ]
        } else {
            vec![Span::raw("  "), Span::raw(item.label.clone())]
        };
        if let (Some(col), Some(description)) = (label_col, &item.description) {
            let gap = col.saturating_sub(display_width(&item.label)).max(2);
            spans.push(Span::raw(" ".repeat(gap)));
            spans.push(theme.fg(Slot::Muted, description.clone()));
        }
        truncate_line(&Line::from(spans), width, "…")
    }
}

impl Component for SelectList {
    fn render(&self, width: u16) -> Vec<Line> {
        let theme = &self.theme;
        let mut lines = Vec::new();
        if let Some(title) = &self.title {
            lines.push(truncate_line(
                &Line::from(theme.fg(Slot::Accent, title.clone()).bold()),
                width,
                "…",
            ));
        }
        if !self.filter.is_empty() {
            let row = Line::from(vec![theme.fg(Slot::Muted, "Filter: "), Span::raw(self.filter.clone())]);
            lines.push(truncate_line(&row, width, "…"));
        }
        if self.matches.is_empty() {
            lines.push(truncate_line(
                &Line::from(theme.fg(Slot::Muted, "  No matching items")),
                width,
                "…",
            ));
            return lines;
        }
        let visible = &self.matches[self.scroll..(self.scroll + self.max_visible).min(self.matches.len())];
        // Descriptions line up in a column after the longest visible label, when there is room.
        let longest = visible
            .iter()
            .filter_map(|i| self.items.get(*i))
            .map(|item| display_width(&item.label))
            .max();
        let label_col = longest.map(|w| w + 2).filter(|col| col + 2 + 10 <= usize::from(width));
        for (offset, index) in visible.iter().enumerate() {
            let selected = self.scroll + offset == self.selected;
            lines.push(self.item_row(*index, selected, label_col, width));
        }
        if self.matches.len() > self.max_visible {
            let position = format!("  ({}/{})", self.selected + 1, self.matches.len());
            lines.push(truncate_line(&Line::from(theme.fg(Slot::Muted, position)), width, "…"));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn list(n: usize) -> SelectList {
        let items = (0..n).map(|i| SelectItem::new(format!("item {i}"))).collect();
        SelectList::new(items, &Theme::plain()).with_max_visible(3)
    }

    #[test]
    fn up_and_down_wrap_around() {
        let mut list = list(4);
        assert_eq!(list.handle_key(key(KeyCode::Up)), Selection::Changed);
        assert_eq!(list.selected_index(), Some(3));
        assert_eq!(list.handle_key(key(KeyCode::Down)), Selection::Changed);
        assert_eq!(list.selected_index(), Some(0));
        list.handle_key(KeyEvent::new(KeyCode::Char('n'), KeyModifiers::CONTROL));
        assert_eq!(list.selected_index(), Some(1));
        list.handle_key(KeyEvent::new(KeyCode::Char('p'), KeyModifiers::CONTROL));
        assert_eq!(list.selected_index(), Some(0));
    }

    #[test]
    fn modified_keys_are_left_to_the_application() {
        let mut list = list(4);
        assert_eq!(
            list.handle_key(KeyEvent::new(KeyCode::Up, KeyModifiers::ALT)),
            Selection::Ignored
        );
        assert_eq!(list.selected_index(), Some(0));
        let super_x = KeyEvent::new(KeyCode::Char('x'), KeyModifiers::SUPER);
        assert_eq!(list.handle_key(super_x), Selection::Ignored);
        assert_eq!(
            list.handle_key(key(KeyCode::Char('\u{7}'))),
            Selection::Ignored,
            "control characters"
        );
        assert_eq!(list.filter(), "");
        let shifted = KeyEvent::new(KeyCode::Char('I'), KeyModifiers::SHIFT);
        assert_eq!(list.handle_key(shifted), Selection::Changed);
        assert_eq!(list.filter(), "I");
    }

    #[test]
    fn pages_and_ends_stop_at_the_edges() {
        let mut list = list(8);
        list.handle_key(key(KeyCode::PageDown));
        assert_eq!(list.selected_index(), Some(3));
        list.handle_key(key(KeyCode::End));
        assert_eq!(list.selected_index(), Some(7));
        assert_eq!(list.handle_key(key(KeyCode::PageDown)), Selection::Ignored);
        list.handle_key(key(KeyCode::Home));
        assert_eq!(list.selected_index(), Some(0));
        assert_eq!(list.handle_key(key(KeyCode::PageUp)), Selection::Ignored);
    }

    #[test]
    fn the_window_scrolls_with_the_selection() {
        let mut list = list(6);
        for _ in 0..4 {
            list.handle_key(key(KeyCode::Down));
        }
        let rows = crate::testing::plain(&list.render(40));
        assert_eq!(rows, "  item 2\n  item 3\n→ item 4\n  (5/6)");
        list.handle_key(key(KeyCode::Home));
        assert_eq!(
            crate::testing::plain(&list.render(40)),
            "→ item 0\n  item 1\n  item 2\n  (1/6)"
        );
    }

    #[test]
    fn typing_filters_and_backspace_widens_again() {
        let mut list = list(12);
        list.handle_key(key(KeyCode::Char('1')));
        assert_eq!(list.matches(), &[1, 10, 11]);
        list.handle_key(key(KeyCode::Char('1')));
        assert_eq!(list.matches(), &[11]);
        assert_eq!(list.handle_key(key(KeyCode::Enter)), Selection::Chosen(11));
        list.handle_key(key(KeyCode::Backspace));
        assert_eq!(list.matches().len(), 3);
        list.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
        assert_eq!(list.matches().len(), 12);
        assert_eq!(list.handle_key(key(KeyCode::Backspace)), Selection::Ignored);
    }

    #[test]
    fn filter_words_match_label_or_description_ignoring_case() {
        let items = vec![
            SelectItem::new("Claude Sonnet").with_description("anthropic"),
            SelectItem::new("GPT-5").with_description("openai"),
        ];
        let mut list = SelectList::new(items, &Theme::plain());
        list.set_filter("OPENai gpt");
        assert_eq!(list.matches(), &[1]);
        list.set_filter("nothing");
        assert_eq!(list.selected_index(), None);
        assert_eq!(list.handle_key(key(KeyCode::Enter)), Selection::Ignored);
        assert_eq!(
            crate::testing::plain(&list.render(40)),
            "Filter: nothing\n  No matching items"
        );
    }

    #[test]
    fn escape_and_ctrl_c_cancel() {
        let mut list = list(2);
        assert_eq!(list.handle_key(key(KeyCode::Esc)), Selection::Cancelled);
        assert_eq!(
            list.handle_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Selection::Cancelled
        );
        assert_eq!(list.handle_key(key(KeyCode::F(1))), Selection::Ignored);
    }

    #[test]
    fn set_selected_scrolls_to_the_item() {
        let mut list = list(10);
        list.set_selected(8);
        assert_eq!(list.selected_index(), Some(8));
        assert!(crate::testing::plain(&list.render(40)).contains("→ item 8"));
    }
}
