use super::*;

/// One case of `testdata/pi-0.73.1-resize.json`, recorded by `testdata/record-goldens.mjs` with
/// pi 0.73.1's own `resizeImage` (photon) on the same generated pixels.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Golden {
    name: String,
    kind: String,
    w: u32,
    h: u32,
    format: String,
    max_bytes: Option<usize>,
    result: Option<GoldenResult>,
    note: Option<String>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct GoldenResult {
    mime_type: String,
    width: u32,
    height: u32,
    original_width: u32,
    original_height: u32,
    was_resized: bool,
    encoded_size: usize,
}

fn goldens() -> Vec<Golden> {
    serde_json::from_str(include_str!("testdata/pi-0.73.1-resize.json")).expect("goldens parse")
}

/// The generator of `record-goldens.mjs`: a gradient, or xorshift32 noise.
fn pixels(kind: &str, w: u32, h: u32, seed: u32) -> RgbaImage {
    let mut state = seed;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state
    };
    let mut image = RgbaImage::new(w, h);
    for y in 0..h {
        for x in 0..w {
            let pixel = if kind == "gradient" {
                let r = x * 255 / (w - 1).max(1);
                let g = y * 255 / (h - 1).max(1);
                [r as u8, g as u8, 128, 255]
            } else {
                let r = next();
                [r as u8, (r >> 8) as u8, (r >> 16) as u8, 255]
            };
            image.put_pixel(x, y, image::Rgba(pixel));
        }
    }
    image
}

fn encode(image: &RgbaImage, format: &str) -> Vec<u8> {
    match format {
        "png" => encode_png(image).expect("png"),
        _ => {
            let mut jpeg = Vec::new();
            let rgb = DynamicImage::ImageRgba8(image.clone()).into_rgb8();
            JpegEncoder::new_with_quality(&mut jpeg, 90)
                .write_image(rgb.as_raw(), rgb.width(), rgb.height(), ExtendedColorType::Rgb8)
                .expect("jpeg");
            jpeg
        }
    }
}

#[test]
fn resizes_as_pi_does_on_the_recorded_cases() {
    for golden in goldens() {
        let input = encode(&pixels(&golden.kind, golden.w, golden.h, 0x9e37_79b9), &golden.format);
        let mut options = ResizeOptions::default();
        if let Some(max_bytes) = golden.max_bytes {
            options.max_bytes = max_bytes;
        }
        let ours = resize_image(&input, &format!("image/{}", golden.format), &options);
        let name = &golden.name;
        let (Some(ours), Some(pi)) = (ours, golden.result) else {
            panic!("{name}: one side gave no image");
        };
        assert_eq!(ours.mime_type, pi.mime_type, "{name}");
        assert_eq!((ours.width, ours.height), (pi.width, pi.height), "{name}");
        assert_eq!(
            (ours.original_width, ours.original_height),
            (pi.original_width, pi.original_height),
            "{name}"
        );
        assert_eq!(ours.was_resized, pi.was_resized, "{name}");
        assert_eq!(format_dimension_note(&ours), golden.note, "{name}");
        let budget = options.max_bytes;
        assert!(ours.data.len() < budget, "{name}: {} bytes of base64", ours.data.len());
        // The encoders are photon's own (the image crate), a few versions on: sizes agree within 2%.
        let (ours_len, pi_len) = (ours.data.len() as f64, pi.encoded_size as f64);
        assert!(
            (ours_len - pi_len).abs() / pi_len < 0.02,
            "{name}: ours {ours_len} bytes, pi {pi_len}"
        );
    }
}

#[test]
fn an_image_within_the_limits_is_sent_unchanged() {
    let input = encode(&pixels("gradient", 40, 30, 1), "png");
    let resized = resize_image(&input, "image/png", &ResizeOptions::default()).unwrap();
    assert_eq!(resized.data, base64::engine::general_purpose::STANDARD.encode(&input));
    assert!(!resized.was_resized);
    assert_eq!(format_dimension_note(&resized), None);
}

#[test]
fn an_image_that_cannot_fit_gives_none() {
    let input = encode(&pixels("noise", 64, 64, 7), "png");
    let options = ResizeOptions {
        max_bytes: 100,
        ..ResizeOptions::default()
    };
    assert_eq!(resize_image(&input, "image/png", &options), None);
    assert_eq!(
        resize_image(b"not an image", "image/png", &ResizeOptions::default()),
        None
    );
}

#[test]
fn the_exif_orientation_of_a_jpeg_turns_it_first() {
    // A 40x20 JPEG with an APP1 Exif segment saying "rotate 90° clockwise" (orientation 6).
    let jpeg = encode(&pixels("gradient", 40, 20, 1), "jpeg");
    let mut tiff = b"MM\0\x2a\0\0\0\x08".to_vec();
    tiff.extend_from_slice(&[0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0]);
    let mut app1 = b"Exif\0\0".to_vec();
    app1.extend_from_slice(&tiff);
    let length = u16::try_from(app1.len() + 2).unwrap();
    let mut with_exif = vec![0xFF, 0xD8, 0xFF, 0xE1];
    with_exif.extend_from_slice(&length.to_be_bytes());
    with_exif.extend_from_slice(&app1);
    with_exif.extend_from_slice(&jpeg[2..]);
    let options = ResizeOptions {
        max_width: 10,
        ..ResizeOptions::default()
    };
    let resized = resize_image(&with_exif, "image/jpeg", &options).unwrap();
    assert_eq!((resized.original_width, resized.original_height), (20, 40));
    assert_eq!((resized.width, resized.height), (10, 20));
}

#[test]
fn converts_to_png_and_reads_dimensions() {
    let jpeg = encode(&pixels("gradient", 33, 17, 1), "jpeg");
    assert_eq!(image_dimensions(&jpeg), Some((33, 17)));
    let png = convert_to_png(&jpeg).unwrap();
    assert!(png.starts_with(b"\x89PNG"));
    assert_eq!(image_dimensions(&png), Some((33, 17)));
    assert_eq!(image_dimensions(b"plain text"), None);
}
