//! The prompts of a run: positional messages, `@file` arguments and piped stdin.
//!
//! `@path` arguments are read and put before the first message, each as
//! `<file name="path">…</file>`; images become image attachments, resized as pi resizes them (pi's
//! dimension note inside the `<file>` tag) unless `images.autoResize` is off. Piped stdin comes first. The
//! first message (with all of that) starts the run; later messages are sent one after another.

use std::path::Path;

use base64::Engine;
use pi_agent_core::{AgentMessage, ContentBlock, ImageContent, UserContent, UserMessage, now_ms};
use pi_tools::images::{IMAGE_OMITTED, ResizeOptions, format_dimension_note, resize_image};

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
/// `@paths` resolve against `cwd`; `auto_resize_images` is pi's `images.autoResize`. Blocking
/// (and CPU-bound for large images).
///
/// ```
/// use pi_cli::build_prompts;
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("notes.txt"), "buy milk").unwrap();
/// let prompts = build_prompts(&["@notes.txt".into(), "Summarize".into(), "Thanks".into()], None, dir.path(), true).unwrap();
/// assert_eq!(prompts.messages.len(), 2);
/// let first = prompts.messages[0].as_user().unwrap().content.text();
/// assert_eq!(first, "<file name=\"notes.txt\">\nbuy milk\n</file>\n\nSummarize");
/// ```
pub fn build_prompts(
    args: &[String],
    stdin: Option<&str>,
    cwd: &Path,
    auto_resize_images: bool,
) -> Result<Prompts, InputError> {
    let mut preamble: Vec<String> = Vec::new();
    let mut images: Vec<ContentBlock> = Vec::new();
    let mut texts: Vec<String> = Vec::new();
    if let Some(stdin) = stdin.map(str::trim_end).filter(|s| !s.is_empty()) {
        preamble.push(stdin.to_owned());
    }
    for arg in args {
        match arg.strip_prefix('@').filter(|p| !p.is_empty()) {
            Some(path) => {
                let (text, image) = read_file_argument(path, cwd, auto_resize_images)?;
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
fn read_file_argument(path: &str, cwd: &Path, resize: bool) -> Result<(String, Option<ContentBlock>), InputError> {
    let full = pi_tools::path::resolve_path(cwd, path);
    let bytes = std::fs::read(&full).map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => InputError::NotFound(path.to_owned()),
        _ => InputError::Unreadable {
            path: path.to_owned(),
            message: error.to_string(),
        },
    })?;
    if let Some(mime) = pi_tools::sniff_image(&bytes) {
        return Ok(image_argument(path, &bytes, mime, resize));
    }
    let text = String::from_utf8_lossy(&bytes);
    let body = text.strip_suffix('\n').unwrap_or(&text);
    Ok((format!("<file name=\"{path}\">\n{body}\n</file>"), None))
}

/// An image `@file` as pi attaches it: resized (the note inside the tag), or only a note when it
/// cannot be made small enough.
fn image_argument(path: &str, bytes: &[u8], mime: &str, resize: bool) -> (String, Option<ContentBlock>) {
    let (data, mime_type, note) = if resize {
        match resize_image(bytes, mime, &ResizeOptions::default()) {
            None => return (format!("<file name=\"{path}\">{IMAGE_OMITTED}</file>"), None),
            Some(resized) => {
                let note = format_dimension_note(&resized).unwrap_or_default();
                (resized.data, resized.mime_type, note)
            }
        }
    } else {
        let data = base64::engine::general_purpose::STANDARD.encode(bytes);
        (data, mime.to_owned(), String::new())
    };
    let image = ContentBlock::Image(ImageContent { data, mime_type });
    (format!("<file name=\"{path}\">{note}</file>"), Some(image))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdin_comes_first_and_messages_follow() {
        let dir = tempfile::tempdir().unwrap();
        let prompts = build_prompts(
            &["Review".into(), "Then fix".into()],
            Some("diff text\n"),
            dir.path(),
            true,
        )
        .unwrap();
        assert_eq!(
            prompts.messages[0].as_user().unwrap().content.text(),
            "diff text\n\nReview"
        );
        assert_eq!(prompts.messages[1].as_user().unwrap().content.text(), "Then fix");
    }

    #[test]
    fn a_missing_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let error = build_prompts(&["@nope.md".into()], None, dir.path(), true).unwrap_err();
        assert_eq!(error.to_string(), "File not found: nope.md");
    }

    fn png(width: u32, height: u32) -> Vec<u8> {
        let pixels = image::RgbaImage::from_pixel(width, height, image::Rgba([200, 100, 50, 255]));
        let mut bytes = Vec::new();
        pixels
            .write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png)
            .unwrap();
        bytes
    }

    fn blocks(prompts: &Prompts) -> Vec<ContentBlock> {
        match &prompts.messages[0].as_user().unwrap().content {
            UserContent::Blocks(blocks) => blocks.clone(),
            UserContent::Text(_) => panic!("blocks expected"),
        }
    }

    #[test]
    fn images_are_attached() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.png"), png(4, 3)).unwrap();
        let prompts = build_prompts(&["@a.png".into(), "What is this?".into()], None, dir.path(), true).unwrap();
        let blocks = blocks(&prompts);
        assert_eq!(blocks.len(), 2);
        assert_eq!(
            blocks[0].as_text(),
            Some("<file name=\"a.png\"></file>\n\nWhat is this?")
        );
        assert!(matches!(&blocks[1], ContentBlock::Image(image) if image.mime_type == "image/png"));
    }

    #[test]
    fn large_images_are_resized_with_pi_s_note_unless_auto_resize_is_off() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("big.png"), png(2400, 600)).unwrap();
        let args = ["@big.png".to_owned()];
        let resized = blocks(&build_prompts(&args, None, dir.path(), true).unwrap());
        assert_eq!(
            resized[0].as_text(),
            Some(
                "<file name=\"big.png\">[Image: original 2400x600, displayed at 2000x500. \
Multiply coordinates by 1.20 to map to original image.]</file>"
            )
        );
        let ContentBlock::Image(image) = &resized[1] else {
            panic!("image expected")
        };
        let bytes = base64::engine::general_purpose::STANDARD.decode(&image.data).unwrap();
        assert_eq!(pi_tools::images::image_dimensions(&bytes), Some((2000, 500)));

        let kept = blocks(&build_prompts(&args, None, dir.path(), false).unwrap());
        assert_eq!(kept[0].as_text(), Some("<file name=\"big.png\"></file>"));
        let ContentBlock::Image(image) = &kept[1] else {
            panic!("image expected")
        };
        assert_eq!(
            image.data,
            base64::engine::general_purpose::STANDARD.encode(png(2400, 600))
        );
    }

    #[test]
    fn an_image_that_cannot_be_decoded_is_omitted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.png"), b"\x89PNG\r\n\x1a\nrest").unwrap();
        let prompts = build_prompts(&["@a.png".into()], None, dir.path(), true).unwrap();
        assert_eq!(
            blocks(&prompts)[0].as_text(),
            Some(
                "<file name=\"a.png\">[Image omitted: could not be resized below the inline image size limit.]</file>"
            )
        );
        assert_eq!(blocks(&prompts).len(), 1);
    }

    #[test]
    fn nothing_to_send() {
        let dir = tempfile::tempdir().unwrap();
        assert!(build_prompts(&[], None, dir.path(), true).unwrap().is_empty());
        assert!(build_prompts(&[], Some("  \n"), dir.path(), true).unwrap().is_empty());
    }
}
