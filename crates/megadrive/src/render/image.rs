//! Frame pictures and PNG files.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// A picture: `width * height` pixels, row-major, each `0x00RRGGBB`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<u32>,
}

/// Errors from building, encoding, decoding or writing pictures.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("image is {width}x{height} but holds {len} pixels (expected {expected}, and both sizes at least 1)")]
    BadImage {
        width: u32,
        height: u32,
        len: usize,
        expected: usize,
    },
    #[error("PNG encoding failed: {0}")]
    Encode(#[from] png::EncodingError),
    #[error("{path}: not a readable PNG: {source}")]
    Decode {
        path: String,
        #[source]
        source: png::DecodingError,
    },
    #[error("{path}: unsupported PNG layout ({what}); expected 8-bit grey, RGB or RGBA")]
    Unsupported { path: String, what: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Image {
    /// A black picture of the given size.
    pub fn new(width: u32, height: u32) -> Image {
        Image {
            width,
            height,
            pixels: vec![0; width as usize * height as usize],
        }
    }

    /// Row `y` (panics if out of range).
    pub fn row(&self, y: u32) -> &[u32] {
        let w = self.width as usize;
        &self.pixels[y as usize * w..(y as usize + 1) * w]
    }

    /// Mutable row `y` (panics if out of range).
    pub fn row_mut(&mut self, y: u32) -> &mut [u32] {
        let w = self.width as usize;
        &mut self.pixels[y as usize * w..(y as usize + 1) * w]
    }

    /// Pixel at (x, y), `None` outside the picture.
    pub fn get(&self, x: u32, y: u32) -> Option<u32> {
        if x < self.width && y < self.height {
            self.pixels
                .get(y as usize * self.width as usize + x as usize)
                .copied()
        } else {
            None
        }
    }

    /// FNV-1a 64 over width, height and the pixels' RGB bytes: a stable
    /// fingerprint for golden tests.
    pub fn fnv1a(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |b: u8| {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        };
        for b in self
            .width
            .to_le_bytes()
            .into_iter()
            .chain(self.height.to_le_bytes())
        {
            eat(b);
        }
        for &p in &self.pixels {
            eat((p >> 16) as u8);
            eat((p >> 8) as u8);
            eat(p as u8);
        }
        h
    }

    /// Number of pixels whose RGB differs from `other` (`None` if the sizes differ).
    pub fn count_differences(&self, other: &Image) -> Option<usize> {
        if self.width != other.width || self.height != other.height {
            return None;
        }
        Some(
            self.pixels
                .iter()
                .zip(&other.pixels)
                .filter(|(a, b)| (*a ^ *b) & 0x00FF_FFFF != 0)
                .count(),
        )
    }

    fn check(&self) -> Result<(), RenderError> {
        let expected = self.width as usize * self.height as usize;
        if self.width == 0 || self.height == 0 || self.pixels.len() != expected {
            return Err(RenderError::BadImage {
                width: self.width,
                height: self.height,
                len: self.pixels.len(),
                expected,
            });
        }
        Ok(())
    }
}

fn encode_into<W: Write>(img: &Image, w: W) -> Result<(), RenderError> {
    img.check()?;
    let mut enc = png::Encoder::new(w, img.width, img.height);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header()?;
    let mut data = Vec::with_capacity(img.pixels.len() * 3);
    for &p in &img.pixels {
        data.extend_from_slice(&[(p >> 16) as u8, (p >> 8) as u8, p as u8]);
    }
    writer.write_image_data(&data)?;
    writer.finish()?;
    Ok(())
}

/// Encode `img` as an 8-bit RGB PNG (deterministic: same pixels, same bytes).
pub fn encode_png(img: &Image) -> Result<Vec<u8>, RenderError> {
    let mut out = Vec::new();
    encode_into(img, &mut out)?;
    Ok(out)
}

/// Write `img` to `path` as PNG, whole or not at all: the data goes to a
/// temporary file in the same folder, which is then renamed over `path`.
/// An existing file at `path` is replaced (the caller decides whether the
/// user named it explicitly).
pub fn write_png(img: &Image, path: &Path) -> Result<(), RenderError> {
    let bytes = encode_png(img)?;
    let io_err = |p: &Path, source| RenderError::Io {
        path: p.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "image.png".to_string());
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let f = std::fs::File::create(&tmp).map_err(|e| io_err(&tmp, e))?;
        let mut w = BufWriter::new(f);
        w.write_all(&bytes).map_err(|e| io_err(&tmp, e))?;
        let f = w.into_inner().map_err(|e| io_err(&tmp, e.into_error()))?;
        f.sync_all().map_err(|e| io_err(&tmp, e))?;
        drop(f);
        std::fs::rename(&tmp, path).map_err(|e| io_err(path, e))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Decode PNG bytes (8-bit grey, grey+alpha, RGB, RGBA, palette or 16-bit,
/// which are reduced to 8-bit) into an [`Image`]; alpha is dropped.
/// `name` is used in error messages.
pub fn decode_png(bytes: &[u8], name: &str) -> Result<Image, RenderError> {
    let dec_err = |source| RenderError::Decode {
        path: name.to_string(),
        source,
    };
    let mut dec = png::Decoder::new(std::io::Cursor::new(bytes));
    dec.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = dec.read_info().map_err(dec_err)?;
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| RenderError::Unsupported {
            path: name.to_string(),
            what: "image too large".to_string(),
        })?;
    let mut buf = vec![0u8; size];
    let info = reader.next_frame(&mut buf).map_err(dec_err)?;
    let step = match (info.color_type, info.bit_depth) {
        (png::ColorType::Grayscale, png::BitDepth::Eight) => 1,
        (png::ColorType::GrayscaleAlpha, png::BitDepth::Eight) => 2,
        (png::ColorType::Rgb, png::BitDepth::Eight) => 3,
        (png::ColorType::Rgba, png::BitDepth::Eight) => 4,
        (c, d) => {
            return Err(RenderError::Unsupported {
                path: name.to_string(),
                what: format!("{c:?} at {d:?}"),
            })
        }
    };
    let (w, h) = (info.width as usize, info.height as usize);
    let mut pixels = Vec::with_capacity(w * h);
    for y in 0..h {
        let row = &buf[y * info.line_size..y * info.line_size + w * step];
        for px in row.chunks_exact(step) {
            let (r, g, b) = if step <= 2 {
                (px[0], px[0], px[0])
            } else {
                (px[0], px[1], px[2])
            };
            pixels.push((r as u32) << 16 | (g as u32) << 8 | b as u32);
        }
    }
    Ok(Image {
        width: info.width,
        height: info.height,
        pixels,
    })
}

/// Read and decode a PNG file (see [`decode_png`]).
pub fn read_png(path: &Path) -> Result<Image, RenderError> {
    let bytes = std::fs::read(path).map_err(|source| RenderError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    decode_png(&bytes, &path.display().to_string())
}
