//! Scenario tests for the `read` tool: plain text without line numbers, offset/limit windows and
//! each of pi's notices, offsets past the end, invalid limits, missing paths, directories,
//! binary and huge files, permissions, images of every supported format (sniffed from content,
//! not the extension), and `@` / `~` paths.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pi_agent_core::ToolContext;
use serde_json::{Value, json};
use support::{Fixture, Outcome};

async fn read(fx: &Fixture, args: Value) -> Outcome {
    fx.call(&fx.tool("read"), args).await
}

/// `n` lines `line 1` … `line n`, each ending with a newline.
fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

/// A rendering for large outputs: the first and last two lines of the text, the details with
/// `truncation.content` summarised, and the tree.
fn summary(fx: &Fixture, out: &Outcome) -> String {
    let text = out.text();
    let lines: Vec<&str> = text.split('\n').collect();
    let shown = if lines.len() > 6 {
        format!(
            "{}\n{}\n… {} lines …\n{}\n{}",
            lines[0],
            lines[1],
            lines.len() - 4,
            lines[lines.len() - 2],
            lines[lines.len() - 1]
        )
    } else {
        text.clone()
    };
    let mut details = out.ok().details.clone();
    if let Some(content) = details.pointer_mut("/truncation/content") {
        let size = content.as_str().unwrap().len();
        *content = json!(format!("<{size} bytes>"));
    }
    format!(
        "--- output ---\n{}\n--- details ---\n{}\n--- tree ---\n{}",
        fx.redact(&shown),
        serde_json::to_string_pretty(&details).unwrap(),
        fx.tree()
    )
}

/// Whether this process can open a file it has no permission for (root, CAP_DAC_OVERRIDE).
fn permissions_bypassed(path: &std::path::Path) -> bool {
    std::fs::File::open(path).is_ok()
}

#[tokio::test]
async fn whole_small_file_without_line_numbers() {
    let fx = Fixture::new(&[("src/a.txt", "alpha\nbeta\ngamma\n")]);
    let out = read(&fx, json!({"path": "src/a.txt"})).await;
    insta::assert_snapshot!("read_basic", fx.render(&out));
}

#[tokio::test]
async fn empty_file() {
    let fx = Fixture::new(&[("empty.txt", "")]);
    let out = read(&fx, json!({"path": "empty.txt"})).await;
    insta::assert_snapshot!("read_empty_file", fx.render(&out));
}

#[tokio::test]
async fn offset_and_limit_window_with_more_lines_notice() {
    let fx = Fixture::new(&[("a.txt", &numbered(5))]);
    let out = read(&fx, json!({"path": "a.txt", "offset": 2, "limit": 2})).await;
    insta::assert_snapshot!("read_offset_limit", fx.render(&out));
}

#[tokio::test]
async fn offset_alone_reads_to_the_end() {
    let fx = Fixture::new(&[("a.txt", &numbered(5))]);
    let out = read(&fx, json!({"path": "a.txt", "offset": 4})).await;
    insta::assert_snapshot!("read_offset_only", fx.render(&out));
}

#[tokio::test]
async fn limit_reaching_the_end_has_no_notice() {
    let fx = Fixture::new(&[("a.txt", "one\ntwo\nthree")]);
    let out = read(&fx, json!({"path": "a.txt", "offset": 2, "limit": 5})).await;
    assert_eq!(out.ok().content[0].as_text(), Some("two\nthree"));
}

#[tokio::test]
async fn trailing_newline_counts_as_a_line_in_the_notice() {
    // pi splits on "\n", so "a\nb\nc\n" has 4 lines and limit=3 leaves "1 more line".
    let fx = Fixture::new(&[("a.txt", "a\nb\nc\n")]);
    let out = read(&fx, json!({"path": "a.txt", "limit": 3})).await;
    assert_eq!(
        out.ok().content[0].as_text(),
        Some("a\nb\nc\n\n[1 more lines in file. Use offset=4 to continue.]")
    );
}

#[tokio::test]
async fn line_limit_notice() {
    let fx = Fixture::new(&[("long.txt", &numbered(2500))]);
    let out = read(&fx, json!({"path": "long.txt"})).await;
    insta::assert_snapshot!("read_line_limit", summary(&fx, &out));
}

#[tokio::test]
async fn line_limit_notice_from_an_offset() {
    let fx = Fixture::new(&[("long.txt", &numbered(2500))]);
    let out = read(&fx, json!({"path": "long.txt", "offset": 101})).await;
    let text = out.text();
    assert!(text.starts_with("line 101\n"));
    assert!(text.ends_with("line 2100\n\n[Showing lines 101-2100 of 2501. Use offset=2101 to continue.]"));
}

#[tokio::test]
async fn byte_limit_notice() {
    let line = "x".repeat(100);
    let content: String = (0..1000).map(|_| format!("{line}\n")).collect();
    let fx = Fixture::new(&[("wide.txt", &content)]);
    let out = read(&fx, json!({"path": "wide.txt"})).await;
    insta::assert_snapshot!("read_byte_limit", summary(&fx, &out));
}

#[tokio::test]
async fn user_limit_above_the_line_cap_still_truncates() {
    let fx = Fixture::new(&[("long.txt", &numbered(2500))]);
    let out = read(&fx, json!({"path": "long.txt", "limit": 2200})).await;
    assert!(
        out.text()
            .ends_with("line 2000\n\n[Showing lines 1-2000 of 2501. Use offset=2001 to continue.]")
    );
}

#[tokio::test]
async fn ten_megabyte_single_line() {
    let fx = Fixture::empty();
    fx.write("big.txt", &vec![b'a'; 10 * 1024 * 1024]);
    let out = read(&fx, json!({"path": "big.txt"})).await;
    insta::assert_snapshot!("read_first_line_too_big", fx.render(&out));
}

#[tokio::test]
async fn huge_line_at_the_offset_names_that_line() {
    let fx = Fixture::empty();
    let mut content = b"short\n".to_vec();
    content.extend(std::iter::repeat_n(b'b', 60 * 1024));
    content.extend_from_slice(b"\nafter\n");
    fx.write("mixed.txt", &content);
    let out = read(&fx, json!({"path": "@mixed.txt", "offset": 2})).await;
    assert_eq!(
        out.text(),
        "[Line 2 is 60.0KB, exceeds 50.0KB limit. Use bash: sed -n '2p' @mixed.txt | head -c 51200]"
    );
    // The line before it is still readable on its own.
    let out = read(&fx, json!({"path": "mixed.txt"})).await;
    assert!(
        out.text()
            .starts_with("short\n\n[Showing lines 1-1 of 4 (50.0KB limit). Use offset=2 to continue.]")
    );
}

#[tokio::test]
async fn offset_past_the_end() {
    let fx = Fixture::new(&[("a.txt", "one\ntwo\nthree\n")]);
    let out = read(&fx, json!({"path": "a.txt", "offset": 10})).await;
    insta::assert_snapshot!("read_offset_beyond_end", fx.render(&out));
    // One past the last line is also out of range (the file has 4 "lines", the last empty).
    let out = read(&fx, json!({"path": "a.txt", "offset": 5})).await;
    assert_eq!(out.err(), "Offset 5 is beyond end of file (4 lines total)");
    let out = read(&fx, json!({"path": "a.txt", "offset": 4})).await;
    assert_eq!(out.ok().content[0].as_text(), Some(""));
}

#[tokio::test]
async fn zero_and_negative_offsets_start_at_the_top() {
    let fx = Fixture::new(&[("a.txt", "one\ntwo\n")]);
    for offset in [0, -5] {
        let out = read(&fx, json!({"path": "a.txt", "offset": offset})).await;
        assert_eq!(out.ok().content[0].as_text(), Some("one\ntwo\n"), "offset {offset}");
    }
}

#[tokio::test]
async fn zero_or_negative_limit_is_an_error() {
    let fx = Fixture::new(&[("a.txt", "one\ntwo\n")]);
    let out = read(&fx, json!({"path": "a.txt", "limit": 0})).await;
    insta::assert_snapshot!("read_zero_limit", fx.render(&out));
    let out = read(&fx, json!({"path": "a.txt", "limit": -3})).await;
    assert_eq!(out.err(), "Invalid limit: must be a positive number");
}

#[tokio::test]
async fn missing_file() {
    let fx = Fixture::new(&[("a.txt", "x\n")]);
    let out = read(&fx, json!({"path": "src/../missing.txt"})).await;
    insta::assert_snapshot!("read_missing", fx.render(&out));
}

#[tokio::test]
async fn directory_instead_of_a_file() {
    let fx = Fixture::new(&[("src/a.txt", "x\n")]);
    let out = read(&fx, json!({"path": "src"})).await;
    insta::assert_snapshot!("read_directory", fx.render(&out));
}

#[tokio::test]
async fn binary_file_is_decoded_lossily() {
    let fx = Fixture::empty();
    fx.write("blob.bin", b"ab\xff\xfe\n\xc3(\xe2\x82\nok \xf0\x9f\x98\x80\n");
    let out = read(&fx, json!({"path": "blob.bin"})).await;
    insta::assert_snapshot!("read_binary", fx.render(&out));
}

#[tokio::test]
async fn large_binary_file_stays_bounded() {
    let fx = Fixture::empty();
    // 2 MB of bytes that are never valid UTF-8 and contain a newline every 4 KB.
    let chunk: Vec<u8> = (0..4096u32)
        .map(|i| if i == 4095 { b'\n' } else { 0x80 | (i % 64) as u8 })
        .collect();
    fx.write("noise.bin", &chunk.repeat(512));
    let out = read(&fx, json!({"path": "noise.bin"})).await;
    let text = out.text();
    // Each invalid byte decodes to U+FFFD (3 bytes): a 4095-byte line becomes 12285 bytes, so four fit.
    assert!(text.len() < 60 * 1024, "{} bytes", text.len());
    assert!(text.ends_with("\n\n[Showing lines 1-4 of 513 (50.0KB limit). Use offset=5 to continue.]"));
    assert_eq!(out.ok().details["truncation"]["totalBytes"], 512 * (4095 * 3 + 1));
}

#[tokio::test]
async fn permission_denied() {
    use std::os::unix::fs::PermissionsExt;
    let fx = Fixture::new(&[("secret.txt", "top secret\n")]);
    let path = fx.path("secret.txt");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    let out = read(&fx, json!({"path": "secret.txt"})).await;
    if permissions_bypassed(&path) {
        // Running as root (or with CAP_DAC_OVERRIDE): the kernel grants access, as it would to pi.
        assert_eq!(out.ok().content[0].as_text(), Some("top secret\n"));
    } else {
        assert_eq!(
            fx.redact(out.err()),
            "EACCES: permission denied, access '<root>/secret.txt'"
        );
    }
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
}

/// A real 2x2 image of `format`, as the image crate encodes it.
fn tiny_image(format: image::ImageFormat) -> Vec<u8> {
    let pixels = image::RgbaImage::from_fn(2, 2, |x, y| image::Rgba([x as u8 * 200, y as u8 * 200, 90, 255]));
    let image = match format {
        image::ImageFormat::Jpeg => image::DynamicImage::ImageRgb8(image::DynamicImage::ImageRgba8(pixels).into_rgb8()),
        _ => image::DynamicImage::ImageRgba8(pixels),
    };
    let mut bytes = Vec::new();
    image.write_to(&mut std::io::Cursor::new(&mut bytes), format).unwrap();
    bytes
}

/// A `width` x `height` gradient PNG.
fn gradient_png(width: u32, height: u32) -> Vec<u8> {
    let pixels = image::RgbaImage::from_fn(width, height, |x, y| {
        image::Rgba([(x % 256) as u8, (y % 256) as u8, 128, 255])
    });
    let mut bytes = Vec::new();
    pixels
        .write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png)
        .unwrap();
    bytes
}

#[tokio::test]
async fn images_of_every_format() {
    let mut bmp = b"BM\x46\0\0\0\0\0\0\0\x36\0\0\0".to_vec();
    bmp.extend_from_slice(&40u32.to_le_bytes());
    bmp.extend_from_slice(&[1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 24, 0]);
    let fx = Fixture::empty();
    fx.write("a.png", &tiny_image(image::ImageFormat::Png));
    fx.write("b.jpg", &tiny_image(image::ImageFormat::Jpeg));
    fx.write("c.gif", &tiny_image(image::ImageFormat::Gif));
    fx.write("d.webp", &tiny_image(image::ImageFormat::WebP));
    fx.write("e.bmp", &bmp);
    let mut rendered = String::new();
    for name in ["a.png", "b.jpg", "c.gif", "d.webp"] {
        let out = read(&fx, json!({"path": name})).await;
        rendered.push_str(&format!("== {name}\n{}\n", out.text()));
        assert!(out.ok().details.is_null());
    }
    insta::assert_snapshot!("read_images", rendered);
    // pi 0.73.1 knows these four only: a bmp file is read as text, as pi reads it.
    let bmp_read = read(&fx, json!({"path": "e.bmp"})).await;
    let out = bmp_read.ok();
    assert!(
        matches!(out.content.as_slice(), [pi_agent_core::ContentBlock::Text(_)]),
        "{:?}",
        out.content
    );
    assert!(out.content[0].as_text().unwrap().starts_with("BM"));
}

#[tokio::test]
async fn an_image_that_cannot_be_decoded_is_omitted_as_pi_omits_it() {
    let fx = Fixture::empty();
    fx.write(
        "broken.png",
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x02\0\0\0",
    );
    let out = read(&fx, json!({"path": "broken.png"})).await;
    assert_eq!(
        out.text(),
        "Read image file [image/png]\n[Image omitted: could not be resized below the inline image size limit.]"
    );
}

#[tokio::test]
async fn a_large_image_is_resized_with_pi_s_note() {
    let fx = Fixture::empty();
    fx.write("wide.png", &gradient_png(3000, 1500));
    let out = read(&fx, json!({"path": "wide.png"})).await;
    let result = out.ok();
    assert_eq!(
        result.content[0].as_text(),
        Some(
            "Read image file [image/png]\n[Image: original 3000x1500, displayed at 2000x1000. \
Multiply coordinates by 1.50 to map to original image.]"
        )
    );
    let pi_agent_core::ContentBlock::Image(image) = &result.content[1] else {
        panic!("expected an image block, got {:?}", result.content);
    };
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD.decode(&image.data).unwrap();
    assert_eq!(pi_tools::images::image_dimensions(&bytes), Some((2000, 1000)));
}

#[tokio::test]
async fn images_auto_resize_off_sends_the_file_as_it_is() {
    let fx = Fixture::empty();
    let png = gradient_png(2100, 10);
    fx.write("wide.png", &png);
    let mut env = pi_tools::ToolEnv::new(fx.root());
    env.auto_resize_images = false;
    let tool = pi_tools::ReadTool::new(env);
    let result = pi_agent_core::AgentTool::execute(
        &tool,
        "call-1",
        json!({"path": "wide.png"}),
        pi_agent_core::ToolContext::detached(),
    )
    .await
    .unwrap();
    assert_eq!(result.content[0].as_text(), Some("Read image file [image/png]"));
    let pi_agent_core::ContentBlock::Image(image) = &result.content[1] else {
        panic!("expected an image block, got {:?}", result.content);
    };
    use base64::Engine;
    assert_eq!(
        base64::engine::general_purpose::STANDARD.decode(&image.data).unwrap(),
        png
    );
}

#[tokio::test]
async fn image_block_carries_the_whole_file_in_base64() {
    let png = tiny_image(image::ImageFormat::Png);
    let fx = Fixture::empty();
    fx.write("pic.png", &png);
    let out = read(&fx, json!({"path": "pic.png"})).await;
    let result = out.ok();
    let pi_agent_core::ContentBlock::Image(image) = &result.content[1] else {
        panic!("expected an image block, got {:?}", result.content);
    };
    use base64::Engine;
    assert_eq!(
        base64::engine::general_purpose::STANDARD.decode(&image.data).unwrap(),
        png
    );
    assert_eq!(image.mime_type, "image/png");
}

#[tokio::test]
async fn images_are_sniffed_not_judged_by_extension() {
    let fx = Fixture::empty();
    fx.write("notes.png", b"just text, despite the name\n");
    fx.write("photo.txt", b"\xff\xd8\xff\xe0\0\x10JFIF\0");
    fx.write("gif.md", b"GIF support is planned\n");
    let mut rendered = String::new();
    for name in ["notes.png", "photo.txt", "gif.md"] {
        let out = read(&fx, json!({"path": name})).await;
        rendered.push_str(&format!("== {name}\n{}\n", out.text()));
    }
    insta::assert_snapshot!("read_sniffing", rendered);
}

#[tokio::test]
async fn at_prefixed_and_absolute_paths() {
    let fx = Fixture::new(&[("src/lib.rs", "pub fn f() {}\n")]);
    let out = read(&fx, json!({"path": "@src/lib.rs"})).await;
    assert_eq!(out.ok().content[0].as_text(), Some("pub fn f() {}\n"));
    let absolute = fx.path("src/lib.rs").to_string_lossy().into_owned();
    let out = read(&fx, json!({"path": absolute})).await;
    assert_eq!(out.ok().content[0].as_text(), Some("pub fn f() {}\n"));
}

#[tokio::test]
async fn tilde_paths_expand_to_home() {
    let Some(home) = pi_tools::path::home_dir() else {
        return; // No $HOME in this environment.
    };
    let Ok(dir) = tempfile::Builder::new().prefix(".pi-read-test-").tempdir_in(&home) else {
        return; // $HOME is not writable here.
    };
    std::fs::write(dir.path().join("note.txt"), "from home\n").unwrap();
    let name = dir.path().file_name().unwrap().to_string_lossy().into_owned();
    let fx = Fixture::empty();
    let out = read(&fx, json!({"path": format!("~/{name}/note.txt")})).await;
    assert_eq!(out.ok().content[0].as_text(), Some("from home\n"));
}

#[tokio::test]
async fn cancelled_before_start() {
    let fx = Fixture::new(&[("a.txt", "x\n")]);
    let ctx = ToolContext::detached();
    ctx.cancel.cancel();
    let out = fx.call_with(&fx.tool("read"), json!({"path": "a.txt"}), ctx).await;
    assert_eq!(out.err(), "Operation aborted");
}

#[tokio::test]
async fn crlf_is_kept() {
    let fx = Fixture::new(&[("win.txt", "one\r\ntwo\r\n")]);
    let out = read(&fx, json!({"path": "win.txt", "limit": 1})).await;
    assert_eq!(
        out.ok().content[0].as_text(),
        Some("one\r\n\n[2 more lines in file. Use offset=2 to continue.]")
    );
}
