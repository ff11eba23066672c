//! The editor's completion, as pi's `CombinedAutocompleteProvider` offers it: the `/` menu of
//! commands (built-ins, prompt templates, extension commands, skills) with their arguments'
//! completions, `@` fuzzy file search over the working directory (`.gitignore` respected), and
//! Tab completion of the path at the cursor.
//!
//! Everything here is pure except [`FileIndex`] (which walks the tree on a blocking thread) and
//! [`directory_suggestions`] (one directory listing, run by the loop off the runtime).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nucleo_matcher::pattern::{AtomKind, CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

/// Characters that end a path token (pi's `PATH_DELIMITERS`).
const PATH_DELIMITERS: &[char] = &[' ', '\t', '"', '\'', '='];

/// How many `@` file suggestions are shown at most (pi's 20).
const MAX_FILE_SUGGESTIONS: usize = 20;

/// How old the file index may be before a new `@` search walks the tree again.
const INDEX_MAX_AGE: Duration = Duration::from_secs(10);

/// One entry of the `/` menu.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CommandEntry {
    /// The name without `/` (`model`, `review`, `skill:pdf`).
    pub name: String,
    /// The one-line description (templates and skills carry pi's `[u]` / `[p]` source tag).
    pub description: String,
    /// A template's argument hint, shown before the description.
    pub argument_hint: Option<String>,
    /// Where its arguments' completions come from.
    pub arguments: Arguments,
}

/// Where a command's argument completions come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Arguments {
    /// It has none.
    None,
    /// `/model`: `provider/id` of these models (pi: the scoped models, else those with
    /// credentials), fuzzy-matched by `id provider`.
    Models(Vec<(String, String)>),
    /// An extension command with `getArgumentCompletions`: asked through the extension host.
    Extension,
}

impl CommandEntry {
    /// A command without argument completions.
    pub(super) fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        CommandEntry {
            name: name.into(),
            description: description.into(),
            argument_hint: None,
            arguments: Arguments::None,
        }
    }
}

/// One item of the completion menu.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Suggestion {
    /// What replaces the prefix.
    pub value: String,
    /// What the menu shows.
    pub label: String,
    /// Shown beside the label.
    pub description: Option<String>,
}

/// Suggestions for the text before the cursor: `prefix` is the text they replace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Suggestions {
    /// The items, best first.
    pub items: Vec<Suggestion>,
    /// The text before the cursor that an item replaces (`/mo`, `@src/ma`, `gpt`).
    pub prefix: String,
}

/// What the text before the cursor asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Request {
    /// Suggestions computed at once.
    Ready(Suggestions),
    /// `@query`: fuzzy file search (`quoted`: the token opened with `@"`).
    Files {
        /// The `@…` token.
        prefix: String,
        /// The query after `@` / `@"`.
        query: String,
    },
    /// An extension command's arguments: ask its host.
    ExtensionArguments {
        /// The command's invocation name.
        command: String,
        /// The text after `/command `.
        prefix: String,
    },
    /// Nothing to suggest.
    Nothing,
}

/// Ranks `items` by how well `text_of(item)` matches `query` with nucleo's fuzzy matcher; every
/// whitespace-separated word of `query` has to match (as in pi). An empty query keeps every item
/// in its order; equal scores keep their order too.
pub(super) fn rank<T>(items: Vec<T>, query: &str, paths: bool, text_of: impl Fn(&T) -> &str) -> Vec<T> {
    if query.trim().is_empty() {
        return items;
    }
    let config = if paths {
        Config::DEFAULT.match_paths()
    } else {
        Config::DEFAULT
    };
    let mut matcher = Matcher::new(config);
    let pattern = Pattern::new(query, CaseMatching::Ignore, Normalization::Smart, AtomKind::Fuzzy);
    let mut buffer = Vec::new();
    let mut scored: Vec<(u32, usize, T)> = items
        .into_iter()
        .enumerate()
        .filter_map(|(index, item)| {
            let score = pattern.score(Utf32Str::new(text_of(&item), &mut buffer), &mut matcher)?;
            Some((score, index, item))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, _, item)| item).collect()
}

/// The current line's text before the cursor (pi completes within one line).
pub(super) fn line_before_cursor(text: &str, cursor: usize) -> &str {
    let before = text.get(..cursor).unwrap_or(text);
    before.rsplit('\n').next().unwrap_or(before)
}

/// What to suggest for `text` with the cursor at byte `cursor`, without Tab (typing).
pub(super) fn request(text: &str, cursor: usize, commands: &[CommandEntry]) -> Request {
    let before = line_before_cursor(text, cursor);
    if let Some(prefix) = at_prefix(before) {
        let query = prefix
            .strip_prefix("@\"")
            .or_else(|| prefix.strip_prefix('@'))
            .unwrap_or_default()
            .to_owned();
        return Request::Files {
            prefix: prefix.to_owned(),
            query,
        };
    }
    // The `/` menu: only while the message starts with `/` on its first line.
    let first_line = !text.get(..cursor).unwrap_or(text).contains('\n');
    if first_line && before.starts_with('/') {
        return slash_request(before, commands);
    }
    Request::Nothing
}

fn slash_request(before: &str, commands: &[CommandEntry]) -> Request {
    let Some((name, argument)) = before[1..].split_once(' ') else {
        let query = &before[1..];
        let items: Vec<Suggestion> = rank(commands.to_vec(), query, false, |c| &c.name)
            .into_iter()
            .map(|command| {
                let description = match (&command.argument_hint, command.description.is_empty()) {
                    (Some(hint), true) => Some(hint.clone()),
                    (Some(hint), false) => Some(format!("{hint} — {}", command.description)),
                    (None, true) => None,
                    (None, false) => Some(command.description.clone()),
                };
                Suggestion {
                    value: command.name.clone(),
                    label: command.name,
                    description,
                }
            })
            .collect();
        if items.is_empty() {
            return Request::Nothing;
        }
        return Request::Ready(Suggestions {
            items,
            prefix: before.to_owned(),
        });
    };
    match commands.iter().find(|c| c.name == name).map(|c| &c.arguments) {
        Some(Arguments::Models(models)) => {
            let keyed: Vec<(String, &(String, String))> =
                models.iter().map(|m| (format!("{} {}", m.1, m.0), m)).collect();
            let items: Vec<Suggestion> = rank(keyed, argument, false, |(key, _)| key)
                .into_iter()
                .map(|(_, (provider, id))| Suggestion {
                    value: format!("{provider}/{id}"),
                    label: id.clone(),
                    description: Some(provider.clone()),
                })
                .collect();
            if items.is_empty() {
                Request::Nothing
            } else {
                Request::Ready(Suggestions {
                    items,
                    prefix: argument.to_owned(),
                })
            }
        }
        Some(Arguments::Extension) => Request::ExtensionArguments {
            command: name.to_owned(),
            prefix: argument.to_owned(),
        },
        Some(Arguments::None) | None => Request::Nothing,
    }
}

/// The `@…` token ending at the cursor (pi's `extractAtPrefix`): `@"` up to an unclosed quote, or
/// the last token when it starts with `@`.
fn at_prefix(before: &str) -> Option<&str> {
    if let Some(start) = unclosed_quote(before)
        && start > 0
        && before[..start].ends_with('@')
        && is_token_start(before, start - 1)
    {
        return Some(&before[start - 1..]);
    }
    let start = before.rfind(PATH_DELIMITERS).map(|i| i + 1).unwrap_or(0);
    before[start..].starts_with('@').then(|| &before[start..])
}

fn unclosed_quote(text: &str) -> Option<usize> {
    let mut start = None;
    for (index, c) in text.char_indices() {
        if c == '"' {
            start = if start.is_some() { None } else { Some(index) };
        }
    }
    start
}

fn is_token_start(text: &str, index: usize) -> bool {
    index == 0 || text[..index].ends_with(PATH_DELIMITERS)
}

/// The path token before the cursor for Tab (pi's forced `extractPathPrefix`): the text after the
/// last delimiter, or from an unclosed quote; `None` while a `/command` name is being typed
/// (Tab then completes the command).
pub(super) fn tab_path_prefix(text: &str, cursor: usize) -> Option<String> {
    let before = line_before_cursor(text, cursor);
    let trimmed = before.trim_start();
    if trimmed.starts_with('/') && !trimmed.contains(' ') {
        return None;
    }
    if let Some(start) = unclosed_quote(before)
        && is_token_start(before, start)
    {
        return Some(before[start..].to_owned());
    }
    let start = before.rfind(PATH_DELIMITERS).map(|i| i + 1).unwrap_or(0);
    Some(before[start..].to_owned())
}

/// The completion value of `path`: `@` kept, quoted when the token was quoted or the path has a
/// space (pi's `buildCompletionValue`).
fn completion_value(path: &str, at: bool, quoted: bool) -> String {
    let at = if at { "@" } else { "" };
    if quoted || path.contains(' ') {
        format!("{at}\"{path}\"")
    } else {
        format!("{at}{path}")
    }
}

/// Tab completion of `prefix` (a path token) from one directory listing, directories first then
/// by name (pi's `getFileSuggestions`). Blocking: one `read_dir`.
pub(super) fn directory_suggestions(prefix: &str, cwd: &Path, home: Option<&Path>) -> Suggestions {
    let (raw, at, quoted) = if let Some(rest) = prefix.strip_prefix("@\"") {
        (rest, true, true)
    } else if let Some(rest) = prefix.strip_prefix('"') {
        (rest, false, true)
    } else if let Some(rest) = prefix.strip_prefix('@') {
        (rest, true, false)
    } else {
        (prefix, false, false)
    };
    let expand = |path: &str| -> PathBuf {
        match (path.strip_prefix('~'), home) {
            (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
                home.join(rest.trim_start_matches('/'))
            }
            _ if path.starts_with('/') => PathBuf::from(path),
            _ => cwd.join(path),
        }
    };
    // The directory listed, what the names must start with, and what goes before a name.
    let (dir, start, shown_dir) = match raw.rfind('/') {
        Some(slash) => (expand(&raw[..=slash]), &raw[slash + 1..], &raw[..=slash]),
        None if raw == "~" => (expand("~/"), "", "~/"),
        None => (cwd.to_path_buf(), raw, ""),
    };
    let mut found: Vec<(bool, String)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.to_lowercase().starts_with(&start.to_lowercase()) {
                continue;
            }
            // A symbolic link to a directory counts as one.
            let is_dir = std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir());
            found.push((is_dir, name));
        }
    }
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let items = found
        .into_iter()
        .map(|(is_dir, name)| {
            let slash = if is_dir { "/" } else { "" };
            Suggestion {
                value: completion_value(&format!("{shown_dir}{name}{slash}"), at, quoted),
                label: format!("{name}{slash}"),
                description: None,
            }
        })
        .collect();
    Suggestions {
        items,
        prefix: prefix.to_owned(),
    }
}

/// The editor's text and cursor after choosing `item` for `prefix` (pi's `applyCompletion`): a
/// command name gets `/` and a space, a file (not a directory) a space, anything else is put in
/// as it is.
pub(super) fn apply(text: &str, cursor: usize, prefix: &str, item: &Suggestion) -> (String, usize) {
    let cursor = cursor.min(text.len());
    let start = cursor.saturating_sub(prefix.len());
    let (head, after) = (&text[..start], &text[cursor..]);
    let line_head = head.rsplit('\n').next().unwrap_or(head);
    // A closing quote already after the cursor is not doubled.
    let after = if (prefix.starts_with('"') || prefix.starts_with("@\"")) && item.value.ends_with('"') {
        after.strip_prefix('"').unwrap_or(after)
    } else {
        after
    };
    let is_dir = item.label.ends_with('/');
    let quoted_end = item.value.ends_with('"');
    let (insert, cursor_in_insert) =
        if prefix.starts_with('/') && line_head.trim().is_empty() && !prefix[1..].contains('/') {
            let insert = format!("/{} ", item.value);
            let len = insert.len();
            (insert, len)
        } else if prefix.starts_with('@') && !is_dir {
            let insert = format!("{} ", item.value);
            let len = insert.len();
            (insert, len)
        } else {
            let len = item.value.len() - usize::from(is_dir && quoted_end);
            (item.value.clone(), len)
        };
    let new_text = format!("{head}{insert}{after}");
    (new_text, head.len() + cursor_in_insert)
}

/// The index of the item to select first (pi's `getBestAutocompleteMatchIndex`): an exact match
/// of the prefix, else the first that starts with it.
pub(super) fn best_match(items: &[Suggestion], prefix: &str) -> Option<usize> {
    if prefix.is_empty() {
        return None;
    }
    items
        .iter()
        .position(|item| item.value == prefix)
        .or_else(|| items.iter().position(|item| item.value.starts_with(prefix)))
}

/// One file or directory of the working directory, its path relative to it (`src/main.rs`,
/// `src/` for a directory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FileEntry {
    /// The path, `/`-separated, a directory's ending in `/`.
    pub path: String,
}

/// The files under the working directory for `@` search: walked with the `ignore` crate (as `fd`
/// does for pi: `.gitignore`, `.ignore` and git's excludes respected, hidden files listed, `.git`
/// left out), on a blocking thread, again when a search starts and the list is older than
/// ten seconds. Searches use the list as it is meanwhile.
#[derive(Debug, Clone)]
pub struct FileIndex {
    root: PathBuf,
    state: Arc<Mutex<IndexState>>,
    built: Arc<tokio::sync::Notify>,
}

#[derive(Debug, Default)]
struct IndexState {
    entries: Option<Arc<Vec<FileEntry>>>,
    walked_at: Option<Instant>,
    walking: bool,
}

impl FileIndex {
    /// An index of `root`, not walked yet.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        FileIndex {
            root: root.into(),
            state: Arc::new(Mutex::new(IndexState::default())),
            built: Arc::new(tokio::sync::Notify::new()),
        }
    }

    /// The entries as last walked (`None` before the first walk ended); starts a walk when there
    /// is none yet or the last is old.
    pub(super) fn entries(&self) -> Option<Arc<Vec<FileEntry>>> {
        let Ok(mut state) = self.state.lock() else {
            return None;
        };
        let stale = state.walked_at.is_none_or(|at| at.elapsed() > INDEX_MAX_AGE);
        if stale && !state.walking {
            state.walking = true;
            let (root, shared, built) = (self.root.clone(), self.state.clone(), self.built.clone());
            let walk = move || {
                let entries = walk(&root);
                if let Ok(mut state) = shared.lock() {
                    state.entries = Some(Arc::new(entries));
                    state.walked_at = Some(Instant::now());
                    state.walking = false;
                }
                built.notify_one();
            };
            match tokio::runtime::Handle::try_current() {
                Ok(handle) => drop(handle.spawn_blocking(walk)),
                // Outside a runtime (unit tests of the screen): walked here.
                Err(_) => {
                    drop(state);
                    walk();
                    return self.state.lock().ok().and_then(|s| s.entries.clone());
                }
            }
        }
        state.entries.clone()
    }

    /// Resolves when a walk has ended (the loop then refreshes the open `@` menu).
    pub async fn walked(&self) {
        self.built.notified().await;
    }
}

/// Every file and directory under `root`, as `fd --hidden --follow --exclude .git` lists them.
fn walk(root: &Path) -> Vec<FileEntry> {
    let mut entries = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .follow_links(true)
        .require_git(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build();
    for entry in walker.flatten() {
        let Ok(relative) = entry.path().strip_prefix(root) else {
            continue;
        };
        if relative.as_os_str().is_empty() {
            continue;
        }
        let mut path = relative.to_string_lossy().replace('\\', "/");
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            path.push('/');
        }
        entries.push(FileEntry { path });
    }
    entries
}

/// `@` suggestions for `query` among `entries` (pi's menu: the name as label, the path as
/// description, at most 20, directories ending in `/`). A query with a `/` searches the whole
/// path, one without it the name first: the best name matches come before path-only matches.
pub(super) fn file_suggestions(entries: &[FileEntry], prefix: &str, query: &str) -> Suggestions {
    let quoted = prefix.starts_with("@\"");
    let name_of = |path: &str| -> String {
        let trimmed = path.trim_end_matches('/');
        trimmed.rsplit('/').next().unwrap_or(trimmed).to_owned()
    };
    let ranked: Vec<&FileEntry> = if query.is_empty() {
        // pi lists the first results in the walk's order.
        entries.iter().take(MAX_FILE_SUGGESTIONS).collect()
    } else if query.contains('/') {
        rank(entries.iter().collect(), query, true, |e| e.path.as_str())
    } else {
        let by_name = rank(entries.iter().collect(), query, true, |e| {
            let trimmed = e.path.trim_end_matches('/');
            trimmed.rsplit('/').next().unwrap_or(trimmed)
        });
        if by_name.len() >= MAX_FILE_SUGGESTIONS {
            by_name
        } else {
            let mut all = by_name;
            let more = rank(entries.iter().collect(), query, true, |e| e.path.as_str());
            for entry in more {
                if !all.iter().any(|e| std::ptr::eq(*e, entry)) {
                    all.push(entry);
                }
                if all.len() >= MAX_FILE_SUGGESTIONS {
                    break;
                }
            }
            all
        }
    };
    let items = ranked
        .into_iter()
        .take(MAX_FILE_SUGGESTIONS)
        .map(|entry| {
            let is_dir = entry.path.ends_with('/');
            let shown = entry.path.trim_end_matches('/');
            let name = name_of(&entry.path);
            Suggestion {
                value: completion_value(&entry.path, true, quoted),
                label: if is_dir { format!("{name}/") } else { name },
                description: Some(shown.to_owned()),
            }
        })
        .collect();
    Suggestions {
        items,
        prefix: prefix.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(paths: &[&str]) -> Vec<FileEntry> {
        paths.iter().map(|p| FileEntry { path: (*p).to_owned() }).collect()
    }

    fn commands() -> Vec<CommandEntry> {
        vec![
            CommandEntry::new("settings", "Open settings menu"),
            CommandEntry {
                arguments: Arguments::Models(vec![
                    ("anthropic".into(), "claude-opus-4".into()),
                    ("openai".into(), "gpt-5".into()),
                ]),
                ..CommandEntry::new("model", "Select model (opens selector UI)")
            },
            CommandEntry::new("session", "Show session info and stats"),
            CommandEntry {
                argument_hint: Some("<file>".into()),
                ..CommandEntry::new("review", "[p] Review a file")
            },
        ]
    }

    #[test]
    fn a_slash_lists_every_command_in_order_with_descriptions() {
        let Request::Ready(suggestions) = request("/", 1, &commands()) else {
            panic!("a menu")
        };
        let names: Vec<_> = suggestions.items.iter().map(|i| i.label.as_str()).collect();
        assert_eq!(names, ["settings", "model", "session", "review"]);
        assert_eq!(
            suggestions.items[3].description.as_deref(),
            Some("<file> — [p] Review a file")
        );
        assert_eq!(suggestions.prefix, "/");
    }

    #[test]
    fn typing_filters_the_commands_fuzzily_best_first() {
        let Request::Ready(suggestions) = request("/se", 3, &commands()) else {
            panic!("a menu")
        };
        let names: Vec<_> = suggestions.items.iter().map(|i| i.label.as_str()).collect();
        assert_eq!(names, ["settings", "session"]);
        assert_eq!(request("/zzz", 4, &commands()), Request::Nothing);
        // Not at the start of the message: no menu.
        assert_eq!(request("say /se", 7, &commands()), Request::Nothing);
    }

    #[test]
    fn model_arguments_complete_provider_and_id() {
        let Request::Ready(suggestions) = request("/model opus", 11, &commands()) else {
            panic!("a menu")
        };
        assert_eq!(suggestions.prefix, "opus");
        assert_eq!(suggestions.items.len(), 1);
        assert_eq!(suggestions.items[0].value, "anthropic/claude-opus-4");
        assert_eq!(suggestions.items[0].description.as_deref(), Some("anthropic"));
        // pi's "opus anthropic": every word matches.
        let Request::Ready(both) = request("/model gpt openai", 17, &commands()) else {
            panic!("a menu")
        };
        assert_eq!(both.items[0].value, "openai/gpt-5");
    }

    #[test]
    fn applying_a_command_adds_the_slash_and_a_space() {
        let item = Suggestion {
            value: "model".into(),
            label: "model".into(),
            description: None,
        };
        assert_eq!(apply("/mo", 3, "/mo", &item), ("/model ".to_owned(), 7));
    }

    #[test]
    fn applying_a_file_keeps_the_at_and_the_text_after_the_cursor() {
        let file = Suggestion {
            value: "@src/main.rs".into(),
            label: "main.rs".into(),
            description: None,
        };
        assert_eq!(
            apply("look at @ma please", 11, "@ma", &file),
            ("look at @src/main.rs  please".to_owned(), 21)
        );
        let dir = Suggestion {
            value: "@src/".into(),
            label: "src/".into(),
            description: None,
        };
        assert_eq!(apply("@sr", 3, "@sr", &dir), ("@src/".to_owned(), 5));
    }

    #[test]
    fn the_at_token_is_found_after_a_delimiter_or_in_quotes() {
        assert_eq!(at_prefix("look at @src/ma"), Some("@src/ma"));
        assert_eq!(at_prefix("mail me@home"), None);
        assert_eq!(at_prefix("see @\"my fi"), Some("@\"my fi"));
        assert_eq!(at_prefix("plain words"), None);
    }

    #[test]
    fn file_ranking_prefers_name_matches_and_word_starts() {
        let all = entries(&[
            "docs/readme-old/notes.txt",
            "src/",
            "src/main.rs",
            "src/domain/",
            "tests/main_test.rs",
            "crates/manifest.toml",
        ]);
        let suggestions = file_suggestions(&all, "@main", "main");
        let paths: Vec<_> = suggestions.items.iter().map(|i| i.value.as_str()).collect();
        assert_eq!(paths[0], "@src/main.rs");
        assert!(paths.contains(&"@tests/main_test.rs"));
        assert!(!paths.contains(&"@docs/readme-old/notes.txt"));
        assert_eq!(suggestions.items[0].label, "main.rs");
        assert_eq!(suggestions.items[0].description.as_deref(), Some("src/main.rs"));
        let dirs = file_suggestions(&all, "@src/d", "src/d");
        assert_eq!(dirs.items[0].value, "@src/domain/");
        assert_eq!(dirs.items[0].label, "domain/");
        // Quoted tokens stay quoted.
        let quoted = file_suggestions(&entries(&["my file.md"]), "@\"my", "my");
        assert_eq!(quoted.items[0].value, "@\"my file.md\"");
    }

    #[test]
    fn rank_keeps_the_order_of_equal_scores_and_of_an_empty_query() {
        let items = vec!["b", "a", "c"];
        assert_eq!(rank(items.clone(), "", false, |s| s), items);
        assert_eq!(rank(vec!["ab", "ab2", "xyz"], "ab", false, |s| s)[..2], ["ab", "ab2"]);
    }

    #[test]
    fn the_index_respects_gitignore_and_leaves_out_git() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/config"), "").unwrap();
        std::fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
        std::fs::create_dir_all(root.join("target/debug")).unwrap();
        std::fs::write(root.join("target/debug/pi"), "").unwrap();
        std::fs::write(root.join("run.log"), "").unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/lib.rs"), "").unwrap();
        std::fs::write(root.join(".env.example"), "").unwrap();
        let mut paths: Vec<String> = walk(root).into_iter().map(|e| e.path).collect();
        paths.sort();
        assert_eq!(paths, [".env.example", ".gitignore", "src/", "src/lib.rs"]);
    }

    #[test]
    fn tab_lists_a_directory_directories_first() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/bin")).unwrap();
        std::fs::write(root.join("src/lib.rs"), "").unwrap();
        std::fs::write(root.join("src/build.rs"), "").unwrap();
        let suggestions = directory_suggestions("src/b", root, None);
        let values: Vec<_> = suggestions.items.iter().map(|i| i.value.as_str()).collect();
        assert_eq!(values, ["src/bin/", "src/build.rs"]);
        assert_eq!(tab_path_prefix("cat src/b", 9).as_deref(), Some("src/b"));
        assert_eq!(tab_path_prefix("/mod", 4), None);
        let (text, cursor) = apply("cat src/b", 9, "src/b", &suggestions.items[1]);
        assert_eq!((text.as_str(), cursor), ("cat src/build.rs", 16));
    }

    #[test]
    fn fifty_thousand_files_are_ranked_quickly() {
        let all: Vec<FileEntry> = (0..50_000)
            .map(|i| FileEntry {
                path: format!("pkg{}/module{}/file{i}.rs", i % 97, i % 13),
            })
            .collect();
        let start = Instant::now();
        let suggestions = file_suggestions(&all, "@file4999", "file4999");
        let elapsed = start.elapsed();
        assert_eq!(suggestions.items[0].label, "file4999.rs");
        // Generous for a debug build on a shared machine; release ranks this in a few ms.
        assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");
    }
}
