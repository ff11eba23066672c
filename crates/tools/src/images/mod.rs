//! Images as pi 0.73.1 sends them to a model: resized to fit 2000×2000 pixels and 4.5 MB of base64,
//! with a note telling the model how the coordinates map back (`read`, `@file` arguments), and
//! converted to PNG where PNG is required (the kitty graphics protocol, clipboard formats the
//! providers take no other way).
//!
//! Decoding, the Lanczos3 resize and the encoders are the `image` crate's (pi uses photon, which is
//! built on the same crate). The strategy is pi's `resizeImage`:
//!
//! 1. an image already within the dimensions whose base64 is under the byte budget is returned
//!    unchanged (same bytes, same type);
//! 2. otherwise it is scaled to fit the dimensions (aspect kept, `Math.round`), then encoded as PNG
//!    and as JPEG at qualities 80, 85, 70, 55, 40; the first of these whose base64 is under the
//!    budget wins;
//! 3. if none fits, the dimensions shrink to 75% (floored, at least 1) and step 2 repeats, down
//!    to 1×1; an image that still does not fit gives `None`.
//!
//! The EXIF orientation of JPEG and WebP files is applied first, as pi does.
//!
//! ```
//! use pi_tools::images::{ResizeOptions, format_dimension_note, resize_image};
//!
//! let mut png = Vec::new();
//! image::RgbaImage::from_pixel(3000, 1500, image::Rgba([10, 20, 30, 255]))
//!     .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
//!     .unwrap();
//! let resized = resize_image(&png, "image/png", &ResizeOptions::default()).unwrap();
//! assert_eq!((resized.width, resized.height), (2000, 1000));
//! assert_eq!(
//!     format_dimension_note(&resized).as_deref(),
//!     Some("[Image: original 3000x1500, displayed at 2000x1000. Multiply coordinates by 1.50 to map to original image.]")
//! );
//! ```

use std::io::Cursor;

use base64::Engine;
use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::PngEncoder;
use image::imageops::FilterType;
use image::{DynamicImage, ExtendedColorType, ImageDecoder, ImageEncoder, ImageFormat, ImageReader, RgbaImage};

/// pi's byte budget: 4.5 MB of base64, headroom below Anthropic's 5 MB limit.
pub const DEFAULT_MAX_IMAGE_BYTES: usize = 4_718_592;

/// The text `read` and `@file` give instead of an image that could not be made small enough.
pub const IMAGE_OMITTED: &str = "[Image omitted: could not be resized below the inline image size limit.]";

/// The limits of [`resize_image`]; the default is pi's (2000×2000, 4.5 MB of base64, JPEG 80).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResizeOptions {
    /// Widest width in pixels.
    pub max_width: u32,
    /// Tallest height in pixels.
    pub max_height: u32,
    /// The base64 of the result stays strictly below this many bytes.
    pub max_bytes: usize,
    /// The first JPEG quality tried.
    pub jpeg_quality: u8,
}

impl Default for ResizeOptions {
    fn default() -> Self {
        ResizeOptions {
            max_width: 2000,
            max_height: 2000,
            max_bytes: DEFAULT_MAX_IMAGE_BYTES,
            jpeg_quality: 80,
        }
    }
}

/// An image ready for a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResizedImage {
    /// The image, base64.
    pub data: String,
    /// Its MIME type (`image/png` or `image/jpeg` once resized, else the input's).
    pub mime_type: String,
    /// Width of the input (after its EXIF orientation).
    pub original_width: u32,
    /// Height of the input (after its EXIF orientation).
    pub original_height: u32,
    /// Width sent.
    pub width: u32,
    /// Height sent.
    pub height: u32,
    /// False when the input was sent unchanged.
    pub was_resized: bool,
}

/// Resizes `bytes` (an image of type `mime_type`) to fit `options`, as pi's `resizeImage` does
/// (see the [module documentation](self)). `None` when the image cannot be decoded or cannot be
/// made small enough. CPU-bound: call it off the async runtime's threads.
pub fn resize_image(bytes: &[u8], mime_type: &str, options: &ResizeOptions) -> Option<ResizedImage> {
    let image = decode_oriented(bytes)?;
    let (original_width, original_height) = (image.width(), image.height());
    if original_width <= options.max_width
        && original_height <= options.max_height
        && base64_len(bytes.len()) < options.max_bytes
    {
        return Some(ResizedImage {
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
            mime_type: mime_type.to_owned(),
            original_width,
            original_height,
            width: original_width,
            height: original_height,
            was_resized: false,
        });
    }
    let (mut width, mut height) = fit_dimensions(original_width, original_height, options);
    let mut qualities = vec![options.jpeg_quality];
    for quality in [85, 70, 55, 40] {
        if !qualities.contains(&quality) {
            qualities.push(quality);
        }
    }
    // Photon resizes RGBA pixels. `DynamicImage`'s methods are compiled (optimized) in the image
    // crate, where a generic `imageops::resize` would be compiled in ours.
    let rgba = DynamicImage::ImageRgba8(image.into_rgba8());
    loop {
        let resized = rgba.resize_exact(width, height, FilterType::Lanczos3).into_rgba8();
        if let Some((data, mime)) = first_within_budget(&resized, &qualities, options.max_bytes) {
            return Some(ResizedImage {
                data,
                mime_type: mime.to_owned(),
                original_width,
                original_height,
                width,
                height,
                was_resized: true,
            });
        }
        if width == 1 && height == 1 {
            return None;
        }
        let next = (shrink(width), shrink(height));
        if next == (width, height) {
            return None;
        }
        (width, height) = next;
    }
}

/// pi's note for a resized image, telling the model how to map coordinates back; `None` for an
/// image sent unchanged.
pub fn format_dimension_note(image: &ResizedImage) -> Option<String> {
    if !image.was_resized {
        return None;
    }
    let scale = f64::from(image.original_width) / f64::from(image.width);
    Some(format!(
        "[Image: original {}x{}, displayed at {}x{}. Multiply coordinates by {scale:.2} to map to original image.]",
        image.original_width, image.original_height, image.width, image.height
    ))
}

/// The image re-encoded as PNG (after its EXIF orientation), `None` when it cannot be decoded.
/// CPU-bound.
pub fn convert_to_png(bytes: &[u8]) -> Option<Vec<u8>> {
    encode_png(&decode_oriented(bytes)?.into_rgba8())
}

/// The size in pixels of a PNG, JPEG, GIF or WebP image, read from its header (pi-tui's
/// `getImageDimensions`); `None` for anything else.
pub fn image_dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    let reader = ImageReader::new(Cursor::new(bytes)).with_guessed_format().ok()?;
    reader.into_dimensions().ok()
}

/// Length of the base64 of `n` bytes (padded).
fn base64_len(n: usize) -> usize {
    n.div_ceil(3) * 4
}

/// Decodes an image and applies the EXIF orientation of a JPEG or WebP file (pi reads it from those two).
fn decode_oriented(bytes: &[u8]) -> Option<DynamicImage> {
    let reader = ImageReader::new(Cursor::new(bytes)).with_guessed_format().ok()?;
    let format = reader.format()?;
    let mut decoder = reader.into_decoder().ok()?;
    let orientation = match format {
        ImageFormat::Jpeg | ImageFormat::WebP => decoder.orientation().ok(),
        _ => None,
    };
    let mut image = DynamicImage::from_decoder(decoder).ok()?;
    if let Some(orientation) = orientation {
        image.apply_orientation(orientation);
    }
    Some(image)
}

/// The dimensions fitting the limits, width first then height, each rounded as `Math.round` does.
fn fit_dimensions(width: u32, height: u32, options: &ResizeOptions) -> (u32, u32) {
    let (mut w, mut h) = (f64::from(width), f64::from(height));
    let (max_w, max_h) = (f64::from(options.max_width), f64::from(options.max_height));
    if w > max_w {
        h = js_round(h * max_w / w);
        w = max_w;
    }
    if h > max_h {
        w = js_round(w * max_h / h);
        h = max_h;
    }
    (to_u32(w), to_u32(h))
}

/// JavaScript's `Math.round`: halves go up.
fn js_round(value: f64) -> f64 {
    (value + 0.5).floor()
}

fn to_u32(value: f64) -> u32 {
    // Values here are between 0 and the input's dimensions.
    value.clamp(0.0, f64::from(u32::MAX)) as u32
}

/// 75% of a dimension, floored, at least 1 (1 stays 1).
fn shrink(size: u32) -> u32 {
    if size == 1 { 1 } else { (size * 3 / 4).max(1) }
}

/// PNG, then JPEG at each quality: the first whose base64 is under `max_bytes`.
fn first_within_budget(image: &RgbaImage, qualities: &[u8], max_bytes: usize) -> Option<(String, &'static str)> {
    let encode = |bytes: Vec<u8>| base64::engine::general_purpose::STANDARD.encode(bytes);
    if let Some(png) = encode_png(image)
        && base64_len(png.len()) < max_bytes
    {
        return Some((encode(png), "image/png"));
    }
    // JPEG has no alpha: the pixels are flattened to RGB once.
    let rgb = DynamicImage::ImageRgba8(image.clone()).into_rgb8();
    for &quality in qualities {
        let mut jpeg = Vec::new();
        let encoder = JpegEncoder::new_with_quality(&mut jpeg, quality);
        if encoder
            .write_image(rgb.as_raw(), rgb.width(), rgb.height(), ExtendedColorType::Rgb8)
            .is_err()
        {
            continue;
        }
        if base64_len(jpeg.len()) < max_bytes {
            return Some((encode(jpeg), "image/jpeg"));
        }
    }
    None
}

fn encode_png(image: &RgbaImage) -> Option<Vec<u8>> {
    let mut png = Vec::new();
    PngEncoder::new(&mut png)
        .write_image(image.as_raw(), image.width(), image.height(), ExtendedColorType::Rgba8)
        .ok()?;
    Some(png)
}

#[cfg(test)]
mod tests;
