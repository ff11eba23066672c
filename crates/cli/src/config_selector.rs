//! `pi config` on a terminal: pi 0.73.1's resource selector for the packages' resources — groups by
//! package, `[x]` / `[ ]` rows, type to filter, ↑/↓ (page up/down) to move, space or enter to turn a
//! resource on or off (written to settings at once), esc to close, ctrl+c to exit.

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use pi_coding_agent::packages::{PackageManager, PackageResource, PackageResources, ResourceKind, Scope};
use pi_tui::{InlineRenderer, Line};

/// Rows shown at once, as pi.
const MAX_VISIBLE: usize = 15;

/// One row of the list.
#[derive(Debug, Clone)]
enum Entry {
    Group(String),
    Subgroup(&'static str),
    Item {
        kind: ResourceKind,
        name: String,
        resource: PackageResource,
    },
}

/// What a key asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Action {
    Nothing,
    /// Turn the item at this entry on (`true`) or off.
    Toggle(usize, bool),
    Close,
}

/// The selector's state, without the terminal.
#[derive(Debug)]
pub(crate) struct Selector {
    entries: Vec<Entry>,
    /// Indices into `entries` that the filter shows.
    shown: Vec<usize>,
    /// Index into `shown`.
    selected: usize,
    query: String,
}

impl Selector {
    pub(crate) fn new(resources: &PackageResources) -> Selector {
        let mut entries = Vec::new();
        for group in groups(resources) {
            entries.push(Entry::Group(group.label));
            let mut last = None;
            for (kind, name, resource) in group.items {
                if last != Some(kind) {
                    entries.push(Entry::Subgroup(kind.label()));
                    last = Some(kind);
                }
                entries.push(Entry::Item { kind, name, resource });
            }
        }
        let mut selector = Selector {
            shown: (0..entries.len()).collect(),
            entries,
            selected: 0,
            query: String::new(),
        };
        selector.select_first();
        selector
    }

    /// Every row as plain text, unfiltered and without a selection (what `pi config` prints when
    /// it is not on a terminal); `None` when there is nothing to list.
    pub(crate) fn plain_lines(&self) -> Option<Vec<String>> {
        if self.entries.is_empty() {
            return None;
        }
        let lines = self.entries.iter().map(|entry| match entry {
            Entry::Group(label) => label.clone(),
            Entry::Subgroup(title) => format!("  {title}"),
            Entry::Item { name, resource, .. } => {
                format!("    [{}] {name}", if resource.enabled { "x" } else { " " })
            }
        });
        Some(lines.collect())
    }

    fn is_item(&self, shown: usize) -> bool {
        self.shown
            .get(shown)
            .is_some_and(|i| matches!(self.entries[*i], Entry::Item { .. }))
    }

    fn select_first(&mut self) {
        self.selected = (0..self.shown.len()).find(|i| self.is_item(*i)).unwrap_or(0);
    }

    fn step(&mut self, direction: isize) {
        let mut index = self.selected as isize + direction;
        while index >= 0 && (index as usize) < self.shown.len() {
            if self.is_item(index as usize) {
                self.selected = index as usize;
                return;
            }
            index += direction;
        }
    }

    fn page(&mut self, down: bool) {
        let len = self.shown.len();
        if len == 0 {
            return;
        }
        if down {
            let mut target = (self.selected + MAX_VISIBLE).min(len - 1) as isize;
            while target >= 0 && !self.is_item(target as usize) {
                target -= 1;
            }
            if target >= 0 {
                self.selected = target as usize;
            }
        } else {
            let mut target = self.selected.saturating_sub(MAX_VISIBLE);
            while target < len && !self.is_item(target) {
                target += 1;
            }
            if target < len {
                self.selected = target;
            }
        }
    }

    /// pi's filter: items whose name, kind or path contains the query (case-insensitive), with
    /// their group and subgroup headers.
    fn filter(&mut self) {
        let query = self.query.trim().to_lowercase();
        if query.is_empty() {
            self.shown = (0..self.entries.len()).collect();
            self.select_first();
            return;
        }
        let mut shown = Vec::new();
        let (mut group, mut subgroup) = (None, None);
        for (index, entry) in self.entries.iter().enumerate() {
            match entry {
                Entry::Group(_) => (group, subgroup) = (Some(index), None),
                Entry::Subgroup(_) => subgroup = Some(index),
                Entry::Item { kind, name, resource } => {
                    let matches = name.to_lowercase().contains(&query)
                        || kind.key().contains(&query)
                        || resource.path.to_string_lossy().to_lowercase().contains(&query);
                    if matches {
                        for header in [group.take(), subgroup.take()].into_iter().flatten() {
                            shown.push(header);
                        }
                        shown.push(index);
                    }
                }
            }
        }
        self.shown = shown;
        self.select_first();
    }

    pub(crate) fn handle_key(&mut self, key: KeyEvent) -> Action {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Up => self.step(-1),
            KeyCode::Down => self.step(1),
            KeyCode::PageUp => self.page(false),
            KeyCode::PageDown => self.page(true),
            KeyCode::Esc => return Action::Close,
            KeyCode::Char('c') if ctrl => return Action::Close,
            KeyCode::Char(' ') | KeyCode::Enter => {
                if let Some(index) = self.shown.get(self.selected).copied()
                    && let Entry::Item { resource, .. } = &self.entries[index]
                {
                    return Action::Toggle(index, !resource.enabled);
                }
            }
            KeyCode::Backspace => {
                self.query.pop();
                self.filter();
            }
            KeyCode::Char(c) if !ctrl => {
                self.query.push(c);
                self.filter();
            }
            _ => {}
        }
        Action::Nothing
    }

    /// The resource of an item entry, and its kind.
    fn item(&self, index: usize) -> Option<(&PackageResource, ResourceKind)> {
        match self.entries.get(index)? {
            Entry::Item { resource, kind, .. } => Some((resource, *kind)),
            _ => None,
        }
    }

    fn set_enabled(&mut self, index: usize, enabled: bool) {
        if let Some(Entry::Item { resource, .. }) = self.entries.get_mut(index) {
            resource.enabled = enabled;
        }
    }

    /// The selector's lines at `width`.
    pub(crate) fn render(&self, width: usize) -> Vec<String> {
        let fit = |text: String| -> String { text.chars().take(width).collect() };
        let title = "Resource Configuration";
        let hint = "space toggle · esc close";
        let spacing = width
            .saturating_sub(title.chars().count() + hint.chars().count())
            .max(1);
        let mut lines = vec![
            "─".repeat(width),
            fit(format!("{title}{}{hint}", " ".repeat(spacing))),
            fit("Type to filter resources".to_owned()),
            String::new(),
            fit(format!("> {}", self.query)),
            String::new(),
        ];
        if self.shown.is_empty() {
            lines.push("  No resources found".to_owned());
        } else {
            let len = self.shown.len();
            let start = self
                .selected
                .saturating_sub(MAX_VISIBLE / 2)
                .min(len.saturating_sub(MAX_VISIBLE));
            let end = (start + MAX_VISIBLE).min(len);
            for (position, index) in self.shown[start..end].iter().enumerate() {
                lines.push(fit(match &self.entries[*index] {
                    Entry::Group(label) => format!("  {label}"),
                    Entry::Subgroup(label) => format!("    {label}"),
                    Entry::Item { name, resource, .. } => {
                        let cursor = if start + position == self.selected { "> " } else { "  " };
                        let check = if resource.enabled { "[x]" } else { "[ ]" };
                        format!("{cursor}    {check} {name}")
                    }
                }));
            }
            if start > 0 || end < len {
                let items = (0..len).filter(|i| self.is_item(*i)).count();
                let current = (0..self.selected).filter(|i| self.is_item(*i)).count() + 1;
                lines.push(format!("  ({current}/{items})"));
            }
        }
        lines.push(String::new());
        lines.push("─".repeat(width));
        lines
    }
}

/// One package in `pi config`: its label and its resources (kind, pi's display name, resource),
/// sorted by kind and name.
struct ConfigGroup {
    label: String,
    items: Vec<(ResourceKind, String, PackageResource)>,
}

/// The groups `pi config` shows: one per package (`<source> (<scope>)`), user before project.
fn groups(resources: &PackageResources) -> Vec<ConfigGroup> {
    let mut groups: Vec<(bool, ConfigGroup)> = Vec::new();
    for kind in ResourceKind::ALL {
        for resource in resources.of(kind) {
            let package = &resource.package;
            let label = format!("{} ({})", package.source, package.scope.as_str());
            let item = (kind, display_name(kind, &resource.path), resource.clone());
            match groups.iter_mut().find(|g| g.1.label == label) {
                Some(group) => group.1.items.push(item),
                None => groups.push((
                    package.scope != Scope::User,
                    ConfigGroup {
                        label,
                        items: vec![item],
                    },
                )),
            }
        }
    }
    groups.sort_by(|a, b| (a.0, &a.1.label).cmp(&(b.0, &b.1.label)));
    groups
        .into_iter()
        .map(|(_, mut group)| {
            group.items.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
            group
        })
        .collect()
}

/// pi's display name: `<folder>/<file>` for an extension outside an `extensions` folder, the
/// folder of a `SKILL.md`, else the file name.
fn display_name(kind: ResourceKind, path: &std::path::Path) -> String {
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parent = path
        .parent()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match kind {
        ResourceKind::Extensions if parent != "extensions" => format!("{parent}/{file}"),
        ResourceKind::Skills if file == "SKILL.md" => parent,
        _ => file,
    }
}

/// Raw mode for as long as it lives.
struct Raw;

impl Raw {
    fn enter() -> std::io::Result<Raw> {
        crossterm::terminal::enable_raw_mode()?;
        Ok(Raw)
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

/// Runs the selector on the terminal until esc or ctrl+c; each toggle is saved at once.
pub(crate) async fn run(manager: &PackageManager, resources: &PackageResources) -> std::io::Result<()> {
    let mut selector = Selector::new(resources);
    let (width, height) = crossterm::terminal::size().unwrap_or((80, 24));
    let raw = Raw::enter()?;
    let mut renderer = InlineRenderer::new(std::io::stdout(), width, height);
    let mut error: Option<String> = None;
    loop {
        let mut lines: Vec<Line> = selector
            .render(usize::from(renderer.width()))
            .into_iter()
            .map(Line::from)
            .collect();
        if let Some(error) = &error {
            lines.push(Line::from(format!("Error: {error}")));
        }
        renderer.draw(&lines)?;
        let event = tokio::task::spawn_blocking(crossterm::event::read)
            .await
            .map_err(std::io::Error::other)??;
        let key = match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => key,
            Event::Resize(width, height) => {
                renderer.resize(width, height)?;
                continue;
            }
            _ => continue,
        };
        match selector.handle_key(key) {
            Action::Nothing => {}
            Action::Close => break,
            Action::Toggle(index, enabled) => {
                let Some((resource, kind)) = selector.item(index) else {
                    continue;
                };
                match manager.set_enabled(resource, kind, enabled).await {
                    Ok(()) => {
                        selector.set_enabled(index, enabled);
                        error = None;
                    }
                    Err(failed) => error = Some(failed.to_string()),
                }
            }
        }
    }
    renderer.draw(&[])?;
    renderer.finish()?;
    drop(raw);
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use pi_coding_agent::packages::PackageOrigin;

    use super::*;

    fn resources() -> PackageResources {
        let package = |source: &str, scope| {
            Arc::new(PackageOrigin {
                source: source.to_owned(),
                scope,
                root: PathBuf::from("/p"),
            })
        };
        let (user, project) = (package("npm:tools", Scope::User), package("../pkg", Scope::Project));
        let item = |path: &str, enabled, package: &Arc<PackageOrigin>| PackageResource {
            path: PathBuf::from(path),
            enabled,
            package: package.clone(),
        };
        PackageResources {
            extensions: vec![
                item("/p/extensions/main.ts", true, &user),
                item("/p/sub/index.ts", false, &user),
                item("/q/extensions/gate.ts", true, &project),
            ],
            skills: vec![item("/p/skills/review/SKILL.md", true, &user)],
            prompts: vec![item("/q/prompts/hi.md", true, &project)],
            themes: vec![],
        }
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn the_list_as_pi_shows_it() {
        let selector = Selector::new(&resources());
        insta::assert_snapshot!(selector.render(50).join("\n"));
    }

    #[test]
    fn the_plain_list_follows_the_selector() {
        let lines = Selector::new(&resources()).plain_lines().unwrap();
        assert_eq!(
            lines,
            [
                "npm:tools (user)",
                "  Extensions",
                "    [x] main.ts",
                "    [ ] sub/index.ts",
                "  Skills",
                "    [x] review",
                "../pkg (project)",
                "  Extensions",
                "    [x] gate.ts",
                "  Prompts",
                "    [x] hi.md",
            ]
        );
        assert_eq!(Selector::new(&PackageResources::default()).plain_lines(), None);
    }

    #[test]
    fn moving_toggling_and_filtering() {
        let mut selector = Selector::new(&resources());
        assert_eq!(selector.handle_key(key(KeyCode::Down)), Action::Nothing);
        // The second item (sub/index.ts, off) is turned on.
        let Action::Toggle(index, enabled) = selector.handle_key(key(KeyCode::Char(' '))) else {
            panic!("no toggle")
        };
        assert!(enabled);
        assert_eq!(selector.item(index).unwrap().0.path, PathBuf::from("/p/sub/index.ts"));
        selector.set_enabled(index, true);
        assert!(selector.render(50).iter().any(|l| l == ">     [x] sub/index.ts"));
        // Up from the first item stays there; headers are never selected.
        for _ in 0..5 {
            selector.handle_key(key(KeyCode::Up));
        }
        assert!(selector.render(50).iter().any(|l| l == ">     [x] main.ts"));
        for c in "hi".chars() {
            selector.handle_key(key(KeyCode::Char(c)));
        }
        let shown = selector.render(50);
        assert_eq!(shown[4], "> hi");
        assert_eq!(&shown[6..9], ["  ../pkg (project)", "    Prompts", ">     [x] hi.md"]);
        selector.handle_key(key(KeyCode::Char('z')));
        assert!(selector.render(50).contains(&"  No resources found".to_owned()));
        assert_eq!(selector.handle_key(key(KeyCode::Char(' '))), Action::Nothing);
        assert_eq!(selector.handle_key(key(KeyCode::Esc)), Action::Close);
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(selector.handle_key(ctrl_c), Action::Close);
    }
}
