//! Images end to end (pi 0.73.1's `docs/usage.md`, `settings.md` "Terminal & Images"): `pi @image.png`
//! attaches the image, resized as pi resizes it; `images.blockImages` keeps every image from the
//! provider; the model reads a pasted image's path with `read` and receives the image.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::Engine;
use pi_test_support::sandbox::{Sandbox, text};
use pi_test_support::{MockServer, openai};
use serde_json::{Value, json};

/// A sandbox whose mock model takes images.
fn sandbox(server: &MockServer) -> Sandbox {
    let sandbox = Sandbox::new(env!("CARGO_BIN_EXE_pi"));
    let mut models: Value = serde_json::from_str(&openai::models_json(&server.url("/v1"))).unwrap();
    for provider in models["providers"].as_object_mut().unwrap().values_mut() {
        for model in provider["models"].as_array_mut().unwrap() {
            model["input"] = json!(["text", "image"]);
        }
    }
    sandbox.write_models_json(&models.to_string());
    sandbox
}

pub(crate) fn png(width: u32, height: u32) -> Vec<u8> {
    let pixels = image::RgbaImage::from_fn(width, height, |x, y| {
        image::Rgba([(x % 256) as u8, (y % 256) as u8, 90, 255])
    });
    let mut bytes = Vec::new();
    pixels
        .write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png)
        .unwrap();
    bytes
}

/// The parts of the first user message of a chat-completions request.
fn user_parts(body: &Value) -> Vec<Value> {
    let user = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap();
    user["content"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| vec![user["content"].clone()])
}

/// The pixel size of a `data:` URL's image.
fn data_url_dimensions(url: &str) -> (u32, u32) {
    let (_, data) = url.split_once(";base64,").unwrap();
    let bytes = base64::engine::general_purpose::STANDARD.decode(data).unwrap();
    pi_tools::images::image_dimensions(&bytes).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_at_image_argument_reaches_the_model_resized_with_pi_s_note() {
    let server = MockServer::start(vec![openai::text("A gradient.")]).await;
    let sandbox = sandbox(&server);
    std::fs::write(sandbox.project.join("shot.png"), png(3000, 1500)).unwrap();
    let output = sandbox.run(&["-p", "@shot.png", "What is in it?"]).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let parts = user_parts(&server.requests()[0].json());
    assert_eq!(parts.len(), 2, "{parts:?}");
    assert_eq!(
        parts[0]["text"],
        "<file name=\"shot.png\">[Image: original 3000x1500, displayed at 2000x1000. \
Multiply coordinates by 1.50 to map to original image.]</file>\n\nWhat is in it?"
    );
    assert_eq!(parts[1]["type"], "image_url");
    let url = parts[1]["image_url"]["url"].as_str().unwrap();
    assert!(url.starts_with("data:image/png;base64,"), "{url:.40}");
    assert_eq!(data_url_dimensions(url), (2000, 1000));
}

#[tokio::test(flavor = "multi_thread")]
async fn images_auto_resize_false_sends_the_file_unchanged() {
    let server = MockServer::start(vec![openai::text("ok")]).await;
    let sandbox = sandbox(&server);
    std::fs::write(
        sandbox.agent_dir().join("settings.json"),
        r#"{"images": {"autoResize": false}}"#,
    )
    .unwrap();
    let original = png(2100, 50);
    std::fs::write(sandbox.project.join("wide.png"), &original).unwrap();
    let output = sandbox.run(&["-p", "@wide.png", "Describe"]).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let parts = user_parts(&server.requests()[0].json());
    assert_eq!(parts[0]["text"], "<file name=\"wide.png\"></file>\n\nDescribe");
    let url = parts[1]["image_url"]["url"].as_str().unwrap();
    let expected = base64::engine::general_purpose::STANDARD.encode(&original);
    assert_eq!(url, format!("data:image/png;base64,{expected}"));
}

#[tokio::test(flavor = "multi_thread")]
async fn images_block_images_keeps_every_image_from_the_provider() {
    let server = MockServer::start(vec![
        openai::tool_calls(&[("call-1", "read", json!({"path": "pic.png"}))]),
        openai::text("done"),
    ])
    .await;
    let sandbox = sandbox(&server);
    std::fs::write(
        sandbox.agent_dir().join("settings.json"),
        r#"{"images": {"blockImages": true}}"#,
    )
    .unwrap();
    std::fs::write(sandbox.project.join("pic.png"), png(8, 8)).unwrap();
    let output = sandbox.run(&["-p", "@pic.png", "Read it again"]).await;
    assert!(output.status.success(), "{}", text(&output.stderr));
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        let body = &request.body;
        assert!(
            !body.contains("image_url"),
            "an image reached the provider: {body:.300}"
        );
    }
    let parts = user_parts(&requests[0].json());
    assert_eq!(parts[1]["text"], "Image reading is disabled.");
    let second = requests[1].json();
    let tool = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()
        .to_string();
    assert!(tool.contains("Read image file [image/png]"), "{tool}");
    assert!(tool.contains("Image reading is disabled."), "{tool}");
}

/// A finished `read` block whose result carries a small PNG (and, when `jpeg`, a JPEG too).
fn read_block(jpeg: bool) -> pi_cli::modes::interactive::ToolBlock {
    use pi_agent_core::{ContentBlock, ToolResult};
    let encode = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let mut content = vec![
        ContentBlock::text("Read image file [image/png]"),
        ContentBlock::image(encode(&png(36, 18)), "image/png"),
    ];
    if jpeg {
        let mut bytes = Vec::new();
        image::RgbImage::from_pixel(18, 18, image::Rgb([10, 20, 30]))
            .write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Jpeg)
            .unwrap();
        content.push(ContentBlock::image(encode(&bytes), "image/jpeg"));
    }
    pi_cli::modes::interactive::ToolBlock {
        call_id: "call-1".into(),
        name: "read".into(),
        args: json!({"path": "shot.png"}),
        partial: None,
        result: Some(ToolResult {
            content,
            ..ToolResult::default()
        }),
        is_error: false,
        started: None,
        elapsed: None,
    }
}

/// The block as the terminal receives it, escapes spelled out and long base64 shortened.
fn rendered(block: &pi_cli::modes::interactive::ToolBlock, images: pi_cli::modes::interactive::InlineImages) -> String {
    use pi_cli::modes::interactive::{RenderContext, Renderers, render_tool};
    let theme = pi_tui::Theme::indexed();
    let renderers = Renderers::new();
    let context = RenderContext {
        theme: &theme,
        expanded: false,
        renderers: &renderers,
        images,
    };
    let lines = render_tool(block, context, 50);
    let base64 = regex_free_shorten;
    lines
        .iter()
        .map(|line| base64(&pi_tui::ansi::line_to_ansi(line)).escape_debug().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Replaces each run of 40 or more base64 characters with its length.
fn regex_free_shorten(text: &str) -> String {
    let mut out = String::new();
    let mut run = String::new();
    let is_base64 = |c: char| c.is_ascii_alphanumeric() || c == '+' || c == '/' || c == '=';
    for c in text.chars().chain(std::iter::once('\0')) {
        if is_base64(c) {
            run.push(c);
            continue;
        }
        if run.len() >= 40 {
            out.push_str(&format!("<{} base64 chars>", run.len()));
        } else {
            out.push_str(&run);
        }
        run.clear();
        if c != '\0' {
            out.push(c);
        }
    }
    out
}

fn inline(protocol: Option<pi_tui::image::ImageProtocol>, show: bool) -> pi_cli::modes::interactive::InlineImages {
    pi_cli::modes::interactive::InlineImages {
        protocol,
        show,
        width_cells: 8,
    }
}

#[test]
fn tool_result_images_inline_in_kitty_converted_to_png() {
    let shown = rendered(
        &read_block(true),
        inline(Some(pi_tui::image::ImageProtocol::Kitty), true),
    );
    // The JPEG is sent as PNG (f=100), as kitty requires.
    assert_eq!(shown.matches("f=100").count(), 2, "{shown}");
    insta::assert_snapshot!("tool_result_image_kitty", shown);
}

#[test]
fn tool_result_images_inline_in_iterm2() {
    let shown = rendered(
        &read_block(false),
        inline(Some(pi_tui::image::ImageProtocol::ITerm2), true),
    );
    insta::assert_snapshot!("tool_result_image_iterm2", shown);
}

#[test]
fn tool_result_images_as_placeholders_without_a_protocol_or_with_show_images_off() {
    let none = rendered(&read_block(true), inline(None, true));
    let off = rendered(
        &read_block(true),
        inline(Some(pi_tui::image::ImageProtocol::Kitty), false),
    );
    assert_eq!(none, off);
    assert!(!off.contains("\\u{1b}_G"), "{off}");
    insta::assert_snapshot!("tool_result_image_placeholder", none);
}
