//! [`Screen`]'s input beyond the editor: the completion menu (`/` commands, `@` files, Tab
//! paths, arguments) and the application's keys (`keybindings.json`'s `app.*`), with the
//! unknown-command check.

use crossterm::event::{KeyCode, KeyEvent};
use pi_tui::{SelectItem, SelectList};

use super::super::autocomplete::{self, CommandEntry, FileIndex, Request, Suggestion, Suggestions};
use super::super::commands::{self, SlashCommand};
use super::super::keybindings::{AppAction, DoubleEscape, Keybindings};
use super::super::transcript::NoticeKind;
use super::{Action, Menu, Screen};

impl Screen {
    /// The commands of the `/` menu, in its order: [`builtin_commands`] then the prompt
    /// templates, extension commands and skills. A `/word` naming none of them is reported
    /// instead of being sent.
    pub(in super::super) fn set_commands(&mut self, commands: Vec<CommandEntry>) {
        self.completion.commands = commands;
    }

    /// The files `@` searches.
    pub fn set_file_index(&mut self, index: FileIndex) {
        self.completion.files = Some(index);
    }

    /// Whether the completion menu is open.
    pub fn has_menu(&self) -> bool {
        self.completion.menu.is_some()
    }

    /// The file index walked again: an open `@` menu is refreshed.
    pub fn files_walked(&mut self) {
        let request = autocomplete::request(self.editor.text(), self.editor.cursor(), &self.completion.commands);
        if matches!(request, Request::Files { .. }) {
            let _ = self.update_completion();
        }
    }

    /// Suggestions that arrived for `text` (a directory listing for Tab, an extension's argument
    /// completions): shown when the editor still holds `text`; Tab's single suggestion is put in
    /// at once, as pi does.
    pub(in super::super) fn show_suggestions(&mut self, text: &str, suggestions: Suggestions, tab: bool) {
        if self.editor.text() != text || suggestions.items.is_empty() {
            return;
        }
        if tab && suggestions.items.len() == 1 {
            self.apply_suggestion(&suggestions.prefix, &suggestions.items[0]);
            return;
        }
        self.open_menu(suggestions);
    }

    pub(super) fn open_menu(&mut self, suggestions: Suggestions) {
        let items: Vec<SelectItem> = suggestions
            .items
            .iter()
            .map(|item| {
                let select = SelectItem::new(item.label.clone());
                match &item.description {
                    Some(description) => select.with_description(description.clone()),
                    None => select,
                }
            })
            .collect();
        let mut list = SelectList::new(items, &self.theme).with_max_visible(5);
        if let Some(best) = autocomplete::best_match(&suggestions.items, &suggestions.prefix) {
            list.set_selected(best);
        }
        self.completion.menu = Some(Menu {
            list,
            items: suggestions.items,
            prefix: suggestions.prefix,
        });
    }

    pub(super) fn apply_suggestion(&mut self, prefix: &str, item: &Suggestion) {
        let (text, cursor) = autocomplete::apply(self.editor.text(), self.editor.cursor(), prefix, item);
        self.editor.set_text(&text);
        self.editor.set_cursor(cursor);
    }

    /// Recomputes the menu for the editor's text as it is now (after an edit).
    pub(super) fn update_completion(&mut self) -> Option<Action> {
        let text = self.editor.text().to_owned();
        match autocomplete::request(&text, self.editor.cursor(), &self.completion.commands) {
            Request::Ready(suggestions) => self.open_menu(suggestions),
            Request::Files { prefix, query } => {
                let entries = self.completion.files.as_ref().and_then(FileIndex::entries);
                let suggestions = entries
                    .map(|entries| autocomplete::file_suggestions(&entries, &prefix, &query))
                    .filter(|s| !s.items.is_empty());
                match suggestions {
                    Some(suggestions) => self.open_menu(suggestions),
                    None => self.completion.menu = None,
                }
            }
            Request::ExtensionArguments { command, prefix } => {
                self.completion.menu = None;
                return Some(Action::CompleteArguments { command, prefix, text });
            }
            Request::Nothing => self.completion.menu = None,
        }
        None
    }

    /// Keys of the open completion menu; `Some` when the key was the menu's, with what the loop
    /// should do. Enter on a command name completes it and then submits (`None`: go on).
    pub(super) fn menu_key(&mut self, key: &KeyEvent) -> Option<Option<Action>> {
        let plain = key.modifiers.is_empty();
        let menu = self.completion.menu.as_mut()?;
        match key.code {
            KeyCode::Esc => {
                self.completion.menu = None;
                Some(None)
            }
            KeyCode::Up | KeyCode::Down if plain => {
                menu.list.handle_key(*key);
                Some(None)
            }
            KeyCode::Tab if plain => {
                let chosen = menu.list.selected_index().and_then(|i| menu.items.get(i).cloned());
                let prefix = menu.prefix.clone();
                self.completion.menu = None;
                if let Some(item) = chosen {
                    self.apply_suggestion(&prefix, &item);
                }
                Some(None)
            }
            KeyCode::Enter if plain => {
                let chosen = menu.list.selected_index().and_then(|i| menu.items.get(i).cloned());
                let prefix = menu.prefix.clone();
                self.completion.menu = None;
                if let Some(item) = chosen {
                    self.apply_suggestion(&prefix, &item);
                }
                // A command name chosen with Enter runs at once (pi falls through to submit).
                if prefix.starts_with('/') { None } else { Some(None) }
            }
            _ => None,
        }
    }

    /// Tab without a menu: the `/` menu while a command name is typed, else the path at the
    /// cursor (the loop lists its directory).
    pub(super) fn tab(&mut self) -> Option<Action> {
        let text = self.editor.text().to_owned();
        let cursor = self.editor.cursor();
        match autocomplete::tab_path_prefix(&text, cursor) {
            None => {
                if let Request::Ready(suggestions) = autocomplete::request(&text, cursor, &self.completion.commands) {
                    self.open_menu(suggestions);
                }
                None
            }
            Some(prefix) => Some(Action::CompletePath { prefix, text }),
        }
    }

    /// The application's keys (`keybindings.json`'s `app.*`); `Some` when `key` was one.
    pub(super) fn app_key(
        &mut self,
        key: &KeyEvent,
        armed: bool,
        escape_at: Option<std::time::Instant>,
    ) -> Option<Option<Action>> {
        let bound = |action| self.keybindings.matches(action, key);
        if bound(AppAction::Interrupt) {
            if self.running {
                return Some(Some(Action::Abort));
            }
            if self.bash_running {
                return Some(Some(Action::AbortBash));
            }
            // pi: Esc leaves bash mode (a message starting with `!`) by clearing it.
            if self.editor.text().trim_start().starts_with('!') {
                self.editor.clear();
                return Some(None);
            }
            if self.editor.text().trim().is_empty() && self.double_escape != DoubleEscape::None {
                let now = std::time::Instant::now();
                if escape_at.is_some_and(|at| now.duration_since(at) < DOUBLE_ESCAPE) {
                    let command = match self.double_escape {
                        DoubleEscape::Fork => SlashCommand::Fork,
                        _ => SlashCommand::Tree,
                    };
                    return Some(Some(Action::Command(command)));
                }
                self.last_escape = Some(now);
            }
            return Some(None);
        }
        if bound(AppAction::Clear) {
            if self.editor.is_empty() {
                if armed {
                    return Some(Some(Action::Exit));
                }
                self.exit_armed = true;
            } else {
                self.editor.clear();
                self.completion.menu = None;
            }
            return Some(None);
        }
        if bound(AppAction::Exit) && self.editor.is_empty() {
            return Some(Some(Action::Exit));
        }
        let action = if bound(AppAction::ToolsExpand) {
            self.toggle_expanded();
            None
        } else if bound(AppAction::ThinkingToggle) {
            self.hide_thinking = !self.hide_thinking;
            None
        } else if bound(AppAction::PasteImage) {
            Some(Action::PasteImage)
        } else if bound(AppAction::Dequeue) && !self.queued.is_empty() {
            Some(Action::RestoreQueued)
        } else if bound(AppAction::ModelSelect) {
            Some(Action::Command(SlashCommand::Model(String::new())))
        } else if bound(AppAction::ModelCycleForward) {
            Some(Action::CycleModel { forward: true })
        } else if bound(AppAction::ModelCycleBackward) {
            Some(Action::CycleModel { forward: false })
        } else if bound(AppAction::ThinkingCycle) {
            Some(Action::CycleThinking)
        } else if bound(AppAction::SessionNew) {
            Some(Action::Command(SlashCommand::New))
        } else if bound(AppAction::SessionTree) {
            Some(Action::Command(SlashCommand::Tree))
        } else if bound(AppAction::SessionFork) {
            Some(Action::Command(SlashCommand::Fork))
        } else if bound(AppAction::SessionResume) {
            Some(Action::Command(SlashCommand::Resume))
        } else if bound(AppAction::ExternalEditor) {
            Some(Action::ExternalEditor(self.editor.text().to_owned()))
        } else if bound(AppAction::Suspend) {
            Some(Action::Suspend)
        } else {
            return None;
        };
        Some(action)
    }

    /// The key bindings (`~/.pi/agent/keybindings.json` over pi's defaults).
    pub fn set_keybindings(&mut self, keybindings: Keybindings) {
        self.keybindings = keybindings;
    }

    /// The key bindings.
    pub fn keybindings(&self) -> &Keybindings {
        &self.keybindings
    }

    /// What two presses of Esc on an empty editor open (pi's `doubleEscapeAction`).
    pub fn set_double_escape(&mut self, action: DoubleEscape) {
        self.double_escape = action;
    }

    /// Whether thinking blocks are collapsed (Ctrl+T, pi's `hideThinkingBlock`).
    pub fn set_hide_thinking(&mut self, hide: bool) {
        self.hide_thinking = hide;
    }

    /// Whether thinking blocks are collapsed.
    pub fn hides_thinking(&self) -> bool {
        self.hide_thinking
    }

    /// A `!command` started (`true`) or ended: while it runs, Esc cancels it.
    pub fn set_bash_running(&mut self, running: bool) {
        self.bash_running = running;
    }

    /// `Some` when `text` is `/word …` and no command, template, skill or extension command is
    /// called `word`: the message is not sent (the text goes back into the editor) and the
    /// screen says so.
    pub(super) fn unknown_command(&mut self, text: &str) -> Option<Option<Action>> {
        let word = commands::command_word(text)?;
        if word == "exit" || self.completion.commands.iter().any(|c| c.name == word) {
            return None;
        }
        self.notice(format!("Unknown command: /{word}"), NoticeKind::Error);
        self.editor.set_text(text);
        Some(None)
    }
}

/// How soon a second Esc has to follow the first (pi's 500 ms).
const DOUBLE_ESCAPE: std::time::Duration = std::time::Duration::from_millis(500);
