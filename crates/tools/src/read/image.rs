//! Image detection for `read` by content sniffing: the file's first bytes, never its extension.
//!
//! pi 0.73.1 sends png, jpeg, gif and webp files as image attachments; anything else, a bmp
//! file too, is read as text (the providers take no `image/bmp`). Detection is a little stricter
//! than pi's `file-type` check for gif (which only looks at `GIF`), so a text file that happens
//! to start with those letters is still read as text.

/// Bytes of the file's start needed to recognise every supported format.
pub(crate) const SNIFF_BYTES: usize = 32;

/// The image MIME type of a file starting with `head` (PNG, JPEG, GIF, WebP), by its magic
/// bytes; `None` for anything else. The first 32 bytes are enough.
///
/// ```
/// use pi_tools::sniff_image;
/// assert_eq!(sniff_image(b"GIF89a\x01\x00"), Some("image/gif"));
/// assert_eq!(sniff_image(b"plain text"), None);
/// ```
pub fn sniff_image(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(&[0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A]) {
        return Some("image/png");
    }
    if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Some("image/jpeg");
    }
    if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        return Some("image/gif");
    }
    if head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"WEBP" {
        return Some("image/webp");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_each_format_by_its_magic_bytes() {
        assert_eq!(sniff_image(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"), Some("image/png"));
        assert_eq!(sniff_image(b"\xff\xd8\xff\xe0\0\x10JFIF"), Some("image/jpeg"));
        assert_eq!(sniff_image(b"GIF89a\x01\0\x01\0"), Some("image/gif"));
        assert_eq!(sniff_image(b"RIFF\x24\0\0\0WEBPVP8 "), Some("image/webp"));
        // pi 0.73.1 sends no bmp as an image.
        let mut bmp = b"BM\x3a\0\0\0\0\0\0\0\x36\0\0\0".to_vec();
        bmp.extend_from_slice(&40u32.to_le_bytes());
        assert_eq!(sniff_image(&bmp), None);
    }

    #[test]
    fn text_that_looks_like_a_header_stays_text() {
        assert_eq!(sniff_image(b"GIF support is planned\n"), None);
        assert_eq!(sniff_image(b"BMW owners club members list\n"), None);
        assert_eq!(sniff_image(b"RIFF"), None);
        assert_eq!(sniff_image(b""), None);
        assert_eq!(sniff_image(b"fn main() {}\n"), None);
    }
}
