//! Images of tool results in the transcript, as pi's `ToolExecutionComponent` shows them: below the
//! tool block, each after a blank row, drawn inline where the terminal has an image protocol and
//! `terminal.showImages` is on; otherwise pi's placeholder (`[Image: [image/png] 2000x1000]`) at
//! the end of the block's text.

use base64::Engine;
use pi_agent_core::{ContentBlock, ImageContent, ToolResult};
use pi_tui::image::{ImageProtocol, ImageView, detect_capabilities, image_fallback};
use pi_tui::{Component, Line, Slot, Spacer, Theme};

/// How images are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InlineImages {
    /// The terminal's image protocol (`None`: placeholders only).
    pub protocol: Option<ImageProtocol>,
    /// `terminal.showImages`.
    pub show: bool,
    /// `terminal.imageWidthCells`.
    pub width_cells: u16,
}

impl InlineImages {
    /// The process's terminal, detected as pi-tui detects it, with pi's defaults.
    pub fn detect() -> Self {
        InlineImages {
            protocol: detect_capabilities(|name| std::env::var(name).ok()).images,
            show: true,
            width_cells: 60,
        }
    }

    /// Whether images are drawn (else placeholders).
    fn drawn(&self) -> bool {
        self.show && self.protocol.is_some()
    }
}

impl Default for InlineImages {
    fn default() -> Self {
        InlineImages::detect()
    }
}

fn images_of(result: &ToolResult) -> impl Iterator<Item = &ImageContent> {
    result.content.iter().filter_map(|block| match block {
        ContentBlock::Image(image) => Some(image),
        _ => None,
    })
}

fn decode(image: &ImageContent) -> Option<Vec<u8>> {
    base64::engine::general_purpose::STANDARD.decode(&image.data).ok()
}

/// The placeholders pi adds to a result's text when it does not draw its images.
pub(super) fn placeholders(result: &ToolResult, images: InlineImages, theme: &Theme) -> Vec<Line> {
    if images.drawn() {
        return Vec::new();
    }
    images_of(result)
        .map(|image| {
            let dimensions = decode(image).and_then(|bytes| pi_tools::images::image_dimensions(&bytes));
            Line::from(theme.fg(Slot::ToolOutput, image_fallback(&image.mime_type, dimensions, None)))
        })
        .collect()
}

/// The images drawn below a tool block (nothing when they are not drawn). The kitty protocol
/// takes PNG only: other images are converted first, and one that cannot be is left out, as pi
/// leaves it out.
pub(super) fn drawn(call_id: &str, result: &ToolResult, images: InlineImages, width: u16) -> Vec<Line> {
    let Some(protocol) = images.protocol.filter(|_| images.show) else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    for (index, image) in images_of(result).enumerate() {
        let Some(bytes) = decode(image) else { continue };
        let (data, mime, bytes) = if protocol == ImageProtocol::Kitty && image.mime_type != "image/png" {
            let Some(png) = pi_tools::images::convert_to_png(&bytes) else {
                continue;
            };
            let data = base64::engine::general_purpose::STANDARD.encode(&png);
            (data, "image/png".to_owned(), png)
        } else {
            (image.data.clone(), image.mime_type.clone(), bytes)
        };
        let view = ImageView::new(data, mime, pi_tools::images::image_dimensions(&bytes))
            .with_protocol(Some(protocol))
            .with_max_width(images.width_cells)
            .with_image_id(image_id(call_id, index));
        lines.extend(Spacer(1).render(width));
        lines.extend(view.render(width));
    }
    lines
}

/// The same kitty id for an image each time its block is drawn (FNV-1a of the call id and the
/// image's index: stable across builds, unlike std's hasher).
fn image_id(call_id: &str, index: usize) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in call_id.bytes().chain((index as u32).to_le_bytes()) {
        hash = (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193);
    }
    hash.max(1)
}
