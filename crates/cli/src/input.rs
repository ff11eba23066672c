//! The prompts of a run: positional messages, `@file` arguments and piped stdin.
//!
//! `@path` arguments are read and put before the first message, each as
//! `<file name="path">…</file>`; images become image attachments. Piped stdin comes first. The
//! first message (with all of that) starts the run; later messages are sent one after another.

use std::path::Path;

use base64::Engine;
use pi_agent_core::{AgentMessage, ContentBlock, ImageContent, UserContent, UserMessage, now_ms};

/// A prompt that could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// An `@file` that does not exist.
    #[error("File not found: {0}")]
    NotFound(String),
    /// An `@file` that could not be read.
    #[error("Cannot read {path}: {message}")]
    Unreadable {
        /// The path as given.
        path: String,
        /// Why.
        message: String,
    },
}

/// The prompts of a run, in order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Prompts {
    /// The user messages to send one after another; the first holds stdin and the files.
    pub messages: Vec<AgentMessage>,
}

impl Prompts {
    /// True when there is nothing to send.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }
}

/// Builds the prompts from the positional arguments (in order) and piped stdin. Relative
/// `@paths` resolve against `cwd`. Blocking.
///
/// ```
/// use pi_cli::build_prompts;
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("notes.txt"), "buy milk").unwrap();
/// let prompts = build_prompts(&["@notes.txt".into(), "Summarize".into(), "Thanks".into()], None, dir.path()).unwrap();
/// assert_eq!(prompts.messages.len(), 2);
/// let first = prompts.messages[0].as_user().unwrap().content.text();
/// assert_eq!(first, "<file name=\"notes.txt\">\nbuy milk\n</file>\n\nSummarize");
/// ```
pub fn build_prompts(args: &[String], stdin: Option<&str>, cwd: &Path) -> Result<Prompts, InputError> {
    let mut preamble: Vec<String> = Vec::new();
    let mut images: Vec<ContentBlock> = Vec::new();
    let mut texts: Vec<String> = Vec::new();
    if let Some(stdin) = stdin.map(str::trim_end).filter(|s| !s.is_empty()) {
        preamble.push(stdin.to_owned());
    }
    for arg in args {
        match arg.strip_prefix('@').filter(|p| !p.is_empty()) {
            Some(path) => {
                let (text, image) = read_file_argument(path, cwd)?;
                preamble.push(text);
                images.extend(image);
            }
            None => texts.push(arg.clone()),
        }
    }
    let mut messages = Vec::new();
    let mut rest = texts.into_iter();
    let first_text = rest.next();
    if !preamble.is_empty() || first_text.is_some() || !images.is_empty() {
        let mut parts = preamble;
        parts.extend(first_text);
        let text = parts.join("\n\n");
        // One text block, then the images: pi's `[{type:"text",text}, …]`.
        let mut blocks = vec![ContentBlock::text(text)];
        blocks.extend(images);
        let content = UserContent::Blocks(blocks);
        messages.push(AgentMessage::User(UserMessage {
            content,
            timestamp: now_ms(),
        }));
    }
    messages.extend(rest.map(AgentMessage::user));
    Ok(Prompts { messages })
}

/// An `@file`: its `<file>` text block and, for an image, the attachment.
fn read_file_argument(path: &str, cwd: &Path) -> Result<(String, Option<ContentBlock>), InputError> {
    let full = pi_tools::path::resolve_path(cwd, path);
    let bytes = std::fs::read(&full).map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => InputError::NotFound(path.to_owned()),
        _ => InputError::Unreadable {
            path: path.to_owned(),
            message: error.to_string(),
        },
    })?;
    if let Some(mime) = pi_tools::sniff_image(&bytes) {
        let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
        let image = ContentBlock::Image(ImageContent {
            data,
            mime_type: mime.to_owned(),
        });
        return Ok((format!("<file name=\"{path}\"></file>"), Some(image)));
    }
    let text = String::from_utf8_lossy(&bytes);
    let body = text.strip_suffix('\n').unwrap_or(&text);
    Ok((format!("<file name=\"{path}\">\n{body}\n</file>"), None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdin_comes_first_and_messages_follow() {
        let dir = tempfile::tempdir().unwrap();
        let prompts = build_prompts(&["Review".into(), "Then fix".into()], Some("diff text\n"), dir.path()).unwrap();
        assert_eq!(
            prompts.messages[0].as_user().unwrap().content.text(),
            "diff text\n\nReview"
        );
        assert_eq!(prompts.messages[1].as_user().unwrap().content.text(), "Then fix");
    }

    #[test]
    fn a_missing_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let error = build_prompts(&["@nope.md".into()], None, dir.path()).unwrap_err();
        assert_eq!(error.to_string(), "File not found: nope.md");
    }

    #[test]
    fn images_are_attached() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.png"), b"\x89PNG\r\n\x1a\nrest").unwrap();
        let prompts = build_prompts(&["@a.png".into(), "What is this?".into()], None, dir.path()).unwrap();
        let UserContent::Blocks(blocks) = &prompts.messages[0].as_user().unwrap().content else {
            panic!("blocks expected");
        };
        assert_eq!(blocks.len(), 2);
        assert!(matches!(&blocks[1], ContentBlock::Image(image) if image.mime_type == "image/png"));
    }

    #[test]
    fn nothing_to_send() {
        let dir = tempfile::tempdir().unwrap();
        assert!(build_prompts(&[], None, dir.path()).unwrap().is_empty());
        assert!(build_prompts(&[], Some("  \n"), dir.path()).unwrap().is_empty());
    }
}
