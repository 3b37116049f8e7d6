//! PNG output of the renderer, and the colour mapping checked against the
//! Genesis Plus GX reference pictures in ../shared/reference.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use retroprof_megadrive::render::{
    cram_to_rgb_with, decode_png, encode_png, read_png, write_png, Image, Intensity, RenderError,
};

fn test_image() -> Image {
    let mut img = Image::new(37, 11);
    for (i, p) in img.pixels.iter_mut().enumerate() {
        *p = (i as u32).wrapping_mul(0x9E37_79B9) & 0x00FF_FFFF;
    }
    img
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("render_png_{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

#[test]
fn png_round_trip_in_memory() {
    let img = test_image();
    let bytes = encode_png(&img).expect("encode");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let back = decode_png(&bytes, "memory").expect("decode");
    assert_eq!(back, img);
    // Deterministic bytes.
    assert_eq!(encode_png(&img).expect("encode again"), bytes);
    // Also readable by the png crate directly as 8-bit RGB.
    let dec = png::Decoder::new(std::io::Cursor::new(&bytes));
    let reader = dec.read_info().expect("png info");
    let info = reader.info();
    assert_eq!((info.width, info.height), (37, 11));
    assert_eq!(info.color_type, png::ColorType::Rgb);
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
}

#[test]
fn write_png_is_atomic_and_replaces() {
    let dir = scratch_dir("write");
    let path = dir.join("shot.png");
    std::fs::write(&path, b"old contents").expect("seed file");
    let img = test_image();
    write_png(&img, &path).expect("write");
    assert_eq!(read_png(&path).expect("read back"), img);
    // No temporary file left behind.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["shot.png"]);
}

#[test]
fn write_png_errors_name_the_path_and_leave_nothing() {
    let dir = scratch_dir("errors");
    let missing = dir.join("no-such-dir").join("shot.png");
    let err = write_png(&test_image(), &missing).expect_err("missing folder");
    assert!(matches!(err, RenderError::Io { .. }), "{err:?}");
    assert!(err.to_string().contains("no-such-dir"), "{err}");
    // A bad image is refused before any file is created.
    let bad = Image {
        width: 4,
        height: 4,
        pixels: vec![0; 15],
    };
    let path = dir.join("bad.png");
    let err = write_png(&bad, &path).expect_err("bad image");
    assert!(matches!(err, RenderError::BadImage { .. }), "{err}");
    assert!(!path.exists());
    let empty = Image::new(0, 5);
    assert!(matches!(
        encode_png(&empty),
        Err(RenderError::BadImage { .. })
    ));
    assert_eq!(std::fs::read_dir(&dir).expect("list").count(), 0);
}

#[test]
fn decode_rejects_garbage_with_name() {
    let err = decode_png(b"not a png at all", "junk.png").expect_err("garbage");
    assert!(matches!(err, RenderError::Decode { .. }), "{err:?}");
    assert!(err.to_string().starts_with("junk.png:"), "{err}");
    let err = read_png(Path::new("/nonexistent/dir/x.png")).expect_err("missing file");
    assert!(err.to_string().contains("/nonexistent/dir/x.png"), "{err}");
    // Truncated PNG.
    let bytes = encode_png(&test_image()).expect("encode");
    let err = decode_png(&bytes[..bytes.len() / 2], "half.png").expect_err("truncated");
    assert!(err.to_string().starts_with("half.png:"), "{err}");
}

fn reference_dir() -> PathBuf {
    let dir = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/reference"
    ));
    assert!(
        dir.is_dir(),
        "{} is missing: the shared reference material must be present next to the repository",
        dir.display()
    );
    dir.to_path_buf()
}

/// Every colour in the reference screenshots must be one our CRAM mapping
/// produces (all 512 colours at normal intensity; shadow and highlight
/// allowed too), and the normal-intensity levels must actually occur, so the
/// mapping matches the reference byte for byte.
#[test]
fn render_reference_colours() {
    let mut producible = BTreeSet::new();
    let mut normal = BTreeSet::new();
    for c in 0..0x1000u16 {
        let c = c & 0x0EEE;
        normal.insert(cram_to_rgb_with(c, Intensity::Normal));
        for k in [Intensity::Normal, Intensity::Shadow, Intensity::Highlight] {
            producible.insert(cram_to_rgb_with(c, k));
        }
    }
    assert_eq!(normal.len(), 512);
    let dir = reference_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("list reference dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 8,
        "expected the 8 reference PNGs in {}",
        dir.display()
    );
    let mut seen_normal = BTreeSet::new();
    for f in &files {
        let img = read_png(f).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            img.width == 320 || img.width == 256,
            "{}: width {}",
            f.display(),
            img.width
        );
        for (i, &p) in img.pixels.iter().enumerate() {
            assert!(
                producible.contains(&p),
                "{}: pixel ({}, {}) = #{p:06x} is not a colour our mapping produces",
                f.display(),
                i as u32 % img.width,
                i as u32 / img.width
            );
            if normal.contains(&p) {
                seen_normal.insert(p);
            }
        }
    }
    // The references use many colours; all of them are normal-intensity ones.
    assert!(
        seen_normal.len() >= 40,
        "only {} colours",
        seen_normal.len()
    );
}
