//! An image from the system clipboard, for the interactive mode's Ctrl+V (pi 0.73.1's
//! `readClipboardImage`), saved where pi saves it: `<tmp>/pi-clipboard-<uuid>.<ext>`. The editor
//! then gets the file's path, and the model reads it with `read`, as in pi.
//!
//! On Linux, pi asks `wl-paste` then `xclip` in a Wayland session or on WSL, and its native
//! clipboard module (arboard, X11) otherwise; here `xclip` stands in for the native module, so an
//! X11 session needs `xclip` installed (`docs/images.md`). Types are preferred in pi's order (png,
//! jpeg, webp, gif, then any `image/*`); an image of another type (BMP from WSLg) is converted to
//! PNG. Nothing is read under Termux, on WSL's Windows side (pi's PowerShell fallback is not done)
//! or on other systems.

use std::collections::HashMap;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The image types pi sends, in its order of preference.
const SUPPORTED: [&str; 4] = ["image/png", "image/jpeg", "image/webp", "image/gif"];
/// pi's timeouts: listing the clipboard's types, reading its data.
const LIST_TIMEOUT: Duration = Duration::from_millis(1000);
const READ_TIMEOUT: Duration = Duration::from_millis(3000);
/// pi's cap on a command's output.
const MAX_BYTES: usize = 50 * 1024 * 1024;

/// Where clipboard commands are found and which environment they see.
#[derive(Debug, Clone, Default)]
pub struct Clipboard {
    /// `None`: the process's environment; otherwise exactly these variables (`PATH` finds the
    /// commands).
    env: Option<HashMap<String, String>>,
}

/// An image read from the clipboard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClipboardImage {
    /// The image's bytes.
    pub bytes: Vec<u8>,
    /// Its MIME type (one of pi's four).
    pub mime_type: String,
}

impl Clipboard {
    /// The system clipboard, as the process's environment reaches it.
    pub fn system() -> Self {
        Clipboard { env: None }
    }

    /// A clipboard whose commands see only `vars` (tests put a fake `xclip` on its `PATH`).
    pub fn with_env(vars: impl IntoIterator<Item = (String, String)>) -> Self {
        Clipboard {
            env: Some(vars.into_iter().collect()),
        }
    }

    fn var(&self, name: &str) -> Option<String> {
        match &self.env {
            Some(env) => env.get(name).cloned(),
            None => std::env::var(name).ok(),
        }
        .filter(|value| !value.is_empty())
    }

    /// The clipboard's image, `None` when it holds none or it cannot be read (blocking: runs
    /// commands with pi's timeouts).
    pub fn read_image(&self) -> Option<ClipboardImage> {
        if self.var("TERMUX_VERSION").is_some() || !cfg!(target_os = "linux") {
            return None;
        }
        let wsl = self.is_wsl();
        let wayland =
            self.var("WAYLAND_DISPLAY").is_some() || self.var("XDG_SESSION_TYPE").as_deref() == Some("wayland");
        let image = if wayland || wsl {
            self.via_wl_paste().or_else(|| self.via_xclip())
        } else {
            self.via_xclip()
        }?;
        if SUPPORTED.contains(&image.mime_type.as_str()) {
            return Some(image);
        }
        let png = pi_tools::images::convert_to_png(&image.bytes)?;
        Some(ClipboardImage {
            bytes: png,
            mime_type: "image/png".to_owned(),
        })
    }

    /// Reads the clipboard's image and saves it as pi does; the file's path.
    pub fn paste_image_to_file(&self) -> Option<PathBuf> {
        let image = self.read_image()?;
        let extension = match image.mime_type.as_str() {
            "image/jpeg" => "jpg",
            "image/webp" => "webp",
            "image/gif" => "gif",
            _ => "png",
        };
        let path = std::env::temp_dir().join(format!("pi-clipboard-{}.{extension}", uuid::Uuid::new_v4()));
        std::fs::write(&path, &image.bytes).ok()?;
        Some(path)
    }

    fn is_wsl(&self) -> bool {
        if self.var("WSL_DISTRO_NAME").is_some() || self.var("WSLENV").is_some() {
            return true;
        }
        std::fs::read_to_string("/proc/version").is_ok_and(|release| {
            let release = release.to_lowercase();
            release.contains("microsoft") || release.contains("wsl")
        })
    }

    fn via_wl_paste(&self) -> Option<ClipboardImage> {
        let types = self.run("wl-paste", &["--list-types"], LIST_TIMEOUT)?;
        let types = lines(&types);
        let chosen = preferred(&types)?;
        let data = self.run("wl-paste", &["--type", &chosen, "--no-newline"], READ_TIMEOUT)?;
        (!data.is_empty()).then(|| ClipboardImage {
            bytes: data,
            mime_type: base_type(&chosen),
        })
    }

    fn via_xclip(&self) -> Option<ClipboardImage> {
        let targets = self
            .run(
                "xclip",
                &["-selection", "clipboard", "-t", "TARGETS", "-o"],
                LIST_TIMEOUT,
            )
            .map(|out| lines(&out))
            .unwrap_or_default();
        let mut tries: Vec<String> = preferred(&targets).into_iter().collect();
        tries.extend(SUPPORTED.iter().map(|t| (*t).to_owned()));
        tries.into_iter().find_map(|mime| {
            let data = self.run("xclip", &["-selection", "clipboard", "-t", &mime, "-o"], READ_TIMEOUT)?;
            (!data.is_empty()).then(|| ClipboardImage {
                bytes: data,
                mime_type: base_type(&mime),
            })
        })
    }

    /// Runs `program` with `args`: its standard output when it exits with 0 within `timeout`.
    fn run(&self, program: &str, args: &[&str], timeout: Duration) -> Option<Vec<u8>> {
        let mut command = Command::new(program);
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if let Some(env) = &self.env {
            command.env_clear().envs(env);
        }
        let mut child = command.spawn().ok()?;
        let mut stdout = child.stdout.take()?;
        // Read on a thread so a large image never fills the pipe while we wait.
        let reader = std::thread::spawn(move || {
            let mut out = Vec::new();
            let read = (&mut stdout).take(MAX_BYTES as u64 + 1).read_to_end(&mut out);
            read.ok().map(|_| out)
        });
        let started = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if started.elapsed() < timeout => std::thread::sleep(Duration::from_millis(5)),
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return None;
                }
            }
        };
        let out = reader.join().ok()??;
        (status.success() && out.len() <= MAX_BYTES).then_some(out)
    }
}

fn lines(out: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(out)
        .lines()
        .map(|line| line.trim().to_owned())
        .filter(|line| !line.is_empty())
        .collect()
}

/// `image/png; charset=…` → `image/png`.
fn base_type(mime: &str) -> String {
    mime.split(';').next().unwrap_or(mime).trim().to_lowercase()
}

/// pi's choice among the clipboard's types: the first of its four, else any `image/*`.
fn preferred(types: &[String]) -> Option<String> {
    SUPPORTED
        .iter()
        .find_map(|wanted| types.iter().find(|t| base_type(t) == *wanted))
        .or_else(|| types.iter().find(|t| base_type(t).starts_with("image/")))
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefers_pi_s_types_in_pi_s_order() {
        let types = |list: &[&str]| list.iter().map(|t| (*t).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            preferred(&types(&["TARGETS", "image/gif", "image/png"])).as_deref(),
            Some("image/png")
        );
        assert_eq!(
            preferred(&types(&["image/bmp", "text/plain"])).as_deref(),
            Some("image/bmp")
        );
        assert_eq!(preferred(&types(&["text/plain;charset=utf-8"])), None);
        assert_eq!(base_type("image/JPEG; q=1"), "image/jpeg");
    }

    #[test]
    fn nothing_under_termux_or_without_clipboard_commands() {
        let termux = Clipboard::with_env([("TERMUX_VERSION".to_owned(), "0.118".to_owned())]);
        assert_eq!(termux.read_image(), None);
        let dir = tempfile::tempdir().unwrap();
        let empty_path = Clipboard::with_env([("PATH".to_owned(), dir.path().display().to_string())]);
        assert_eq!(empty_path.read_image(), None);
    }
}
