//! Hot reload of the active custom theme (pi's theme watcher): when its file changes, the screen
//! redraws with it; a file that no longer parses is reported in pi's words and the theme in use
//! stays.

use std::path::{Path, PathBuf};
use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher};
use pi_tui::{ColorMode, Theme};
use tokio::sync::mpsc;

use super::screen::Screen;
use super::transcript::NoticeKind;

/// The theme file to watch and how its colours reach the terminal.
#[derive(Debug, Clone)]
pub struct ThemeWatch {
    /// The active theme's file.
    pub path: PathBuf,
    /// The terminal's colour mode ([`ColorMode::from_env`] for a real terminal).
    pub mode: ColorMode,
}

/// pi waits this long after a change before reading the file (an editor's save is often a
/// truncation and a write, or a write and a rename).
const SETTLE: Duration = Duration::from_millis(100);

/// A watcher of `watch`'s directory that sends on the returned channel when the file is
/// created, written, renamed or removed. `None` (and no reloads) when the directory cannot be
/// watched.
pub(super) fn start(watch: &ThemeWatch) -> (Option<notify::RecommendedWatcher>, mpsc::UnboundedReceiver<()>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let (Some(dir), Some(name)) = (watch.path.parent(), watch.path.file_name()) else {
        return (None, rx);
    };
    let name = name.to_owned();
    let handler = move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else { return };
        // Reading the file (our own reload) is an access, not a change.
        let change = matches!(
            event.kind,
            EventKind::Create(_) | EventKind::Remove(_) | EventKind::Any | EventKind::Other
        ) || matches!(event.kind, EventKind::Modify(kind) if !matches!(kind, notify::event::ModifyKind::Metadata(_)));
        if change && event.paths.iter().any(|p| p.file_name() == Some(name.as_os_str())) {
            let _ = tx.send(());
        }
    };
    let watcher = notify::recommended_watcher(handler).and_then(|mut watcher| {
        watcher.watch(dir, RecursiveMode::NonRecursive)?;
        Ok(watcher)
    });
    (watcher.ok(), rx)
}

/// After a change: waits for the file to settle, then loads it into the screen, or reports why
/// it cannot (a file that is gone for the moment is not reported: an editor may be replacing it).
pub(super) async fn reload(screen: &mut Screen, watch: &ThemeWatch, changes: &mut mpsc::UnboundedReceiver<()>) {
    tokio::time::sleep(SETTLE).await;
    while changes.try_recv().is_ok() {}
    let path = watch.path.clone();
    let loaded = tokio::task::spawn_blocking(move || load(&path)).await;
    match loaded {
        Ok(Some(Ok(theme))) => screen.set_theme(theme.for_mode(watch.mode)),
        Ok(Some(Err(error))) => screen.notice(error.to_string(), NoticeKind::Error),
        Ok(None) | Err(_) => {}
    }
}

fn load(path: &Path) -> Option<Result<Theme, pi_tui::ThemeError>> {
    path.exists().then(|| Theme::load(path))
}
