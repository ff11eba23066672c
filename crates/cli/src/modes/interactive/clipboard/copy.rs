//! `/copy`'s clipboard, as pi 0.73.1 reaches it: the platform's tool (`pbcopy`, `clip`, and on
//! Linux `termux-clipboard-set`, `wl-copy` on Wayland, `xclip` or `xsel` on X11), and OSC 52 —
//! the terminal's own clipboard sequence — when none of them worked or the session is remote
//! (SSH, mosh), where the tools would fill the remote machine's clipboard.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

/// pi does not send OSC 52 payloads longer than this (base64 characters): very large ones can
/// desynchronise the terminal.
const MAX_OSC52_ENCODED: usize = 100_000;

/// How long a clipboard tool may take.
const TOOL_TIMEOUT: Duration = Duration::from_secs(5);

/// pi's message when nothing could take the text.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("Failed to copy to clipboard")]
pub(crate) struct ClipboardError;

/// Where the interactive mode reads environment variables: the process's by default, a map of
/// a test's own with [`Environment::from_fn`].
#[derive(Clone)]
pub struct Environment(Arc<Lookup>);

/// Reads one variable.
type Lookup = dyn Fn(&str) -> Option<String> + Send + Sync;

impl Environment {
    /// Variables read through `lookup`.
    pub fn from_fn(lookup: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        Environment(Arc::new(lookup))
    }

    /// The variable `name`.
    pub fn var(&self, name: &str) -> Option<String> {
        (self.0)(name)
    }
}

impl Default for Environment {
    fn default() -> Self {
        Environment::from_fn(|name| std::env::var(name).ok())
    }
}

impl std::fmt::Debug for Environment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Environment(..)")
    }
}

/// Copies `text`; returns the OSC 52 sequence to write to the terminal, if one is due.
pub(crate) async fn copy(text: &str, env: &Environment) -> Result<Option<String>, ClipboardError> {
    let env = |name: &str| env.var(name);
    let set = |name: &str| env(name).is_some_and(|v| !v.is_empty());
    let remote = set("SSH_CONNECTION") || set("SSH_CLIENT") || set("MOSH_CONNECTION");
    let copied = copy_with_tools(text, &env).await;
    let osc52 = if remote || !copied { osc52(text) } else { None };
    if !copied && osc52.is_none() {
        return Err(ClipboardError);
    }
    Ok(osc52)
}

/// `ESC ] 52 ; c ; <base64> BEL`, or `None` when the text is too long for it.
fn osc52(text: &str) -> Option<String> {
    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
    (encoded.len() <= MAX_OSC52_ENCODED).then(|| format!("\x1b]52;c;{encoded}\x07"))
}

async fn copy_with_tools(text: &str, env: &(dyn Fn(&str) -> Option<String> + Sync)) -> bool {
    let set = |name: &str| env(name).is_some_and(|v| !v.is_empty());
    let path = env("PATH");
    if cfg!(target_os = "macos") {
        return run(&["pbcopy"], text, path.as_deref(), true).await;
    }
    if cfg!(windows) {
        return run(&["clip"], text, path.as_deref(), true).await;
    }
    if set("TERMUX_VERSION") && run(&["termux-clipboard-set"], text, path.as_deref(), true).await {
        return true;
    }
    let wayland = env("XDG_SESSION_TYPE").as_deref() == Some("wayland") || set("WAYLAND_DISPLAY");
    // wl-copy stays in the background to own the selection: it is not waited for.
    if wayland && set("WAYLAND_DISPLAY") && run(&["wl-copy"], text, path.as_deref(), false).await {
        return true;
    }
    if set("DISPLAY") {
        return run(&["xclip", "-selection", "clipboard"], text, path.as_deref(), true).await
            || run(&["xsel", "--clipboard", "--input"], text, path.as_deref(), true).await;
    }
    false
}

/// Runs `argv` with `text` on its stdin; true when it started (and, if `wait`, exited with 0
/// within [`TOOL_TIMEOUT`]).
async fn run(argv: &[&str], text: &str, path: Option<&str>, wait: bool) -> bool {
    let mut command = Command::new(argv[0]);
    command
        .args(&argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(wait);
    if let Some(path) = path {
        command.env("PATH", path);
    }
    let Ok(mut child) = command.spawn() else {
        return false;
    };
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(text.as_bytes()).await;
    }
    if !wait {
        return true;
    }
    matches!(
        tokio::time::timeout(TOOL_TIMEOUT, child.wait()).await,
        Ok(Ok(status)) if status.success()
    )
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn env(vars: &[(&str, String)]) -> Environment {
        let vars: HashMap<String, String> = vars.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
        Environment::from_fn(move |name: &str| vars.get(name).cloned())
    }

    /// A directory with a fake `xclip` that saves its stdin to `clipboard.txt`.
    fn fake_xclip() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("xclip");
        let target = dir.path().join("clipboard.txt");
        std::fs::write(&script, format!("#!/bin/sh\nexec /bin/cat > '{}'\n", target.display())).unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        dir
    }

    #[tokio::test]
    async fn x11_uses_xclip_and_sends_no_osc52() {
        let dir = fake_xclip();
        let path = dir.path().display().to_string();
        let env = env(&[("DISPLAY", ":1".into()), ("PATH", path)]);
        assert_eq!(copy("hello", &env).await, Ok(None));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("clipboard.txt")).unwrap(),
            "hello"
        );
    }

    #[tokio::test]
    async fn a_remote_session_also_gets_osc52() {
        let dir = fake_xclip();
        let path = dir.path().display().to_string();
        let env = env(&[
            ("DISPLAY", ":1".into()),
            ("PATH", path),
            ("SSH_CONNECTION", "1 2 3 4".into()),
        ]);
        assert_eq!(copy("hi", &env).await, Ok(Some("\x1b]52;c;aGk=\x07".to_owned())));
    }

    #[tokio::test]
    async fn without_a_display_or_tool_osc52_is_the_clipboard() {
        let empty = tempfile::tempdir().unwrap();
        let env = env(&[("DISPLAY", ":1".into()), ("PATH", empty.path().display().to_string())]);
        assert_eq!(copy("hi", &env).await, Ok(Some("\x1b]52;c;aGk=\x07".to_owned())));
    }

    #[tokio::test]
    async fn too_long_for_osc52_and_no_tool_fails_with_pis_message() {
        let empty = tempfile::tempdir().unwrap();
        let env = env(&[("PATH", empty.path().display().to_string())]);
        let long = "x".repeat(80_000);
        let error = copy(&long, &env).await.unwrap_err();
        assert_eq!(error.to_string(), "Failed to copy to clipboard");
    }
}
