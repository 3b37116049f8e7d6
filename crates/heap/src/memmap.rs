//! The memory map picture, as in the Daedalus article: one pixel per N
//! bytes, 64x64-pixel tiles, 4x4 tiles per block (65,536 pixels: 64 KB at
//! one byte per pixel, 1 MB at 16), black where nothing tracked is allocated,
//! each call site in its own stable colour, with labels drawn
//! automatically: call-site names on their largest regions, an address
//! ruler per block, a title and a legend.
//!
//! The scale, unless given, fits the address range the log uses
//! ([`fit_bytes_per_pixel`]): the finest power-of-two bytes per pixel at
//! which that range lies in at most [`FIT_BLOCKS`] aligned blocks. A Mega
//! Drive heap (64 KB at 0xFF0000) gets one byte per pixel and fills one
//! block; a PSP heap spread over 4 MB gets 16 bytes per pixel, four blocks.

use std::collections::BTreeSet;
use std::io::Write;

use crate::font::{self, ADVANCE, GLYPH_H, LINE_H};
use crate::replay::{Analysis, LiveBlock};
use crate::report::{num, site_label};
use crate::Error;

/// Pixels per tile side.
pub const TILE: usize = 64;
/// Tiles per block side.
pub const TILES: usize = 4;
const TILE_GAP: usize = 1;
const BLOCK_PX: usize = TILE * TILES + TILE_GAP * (TILES - 1);
const BLOCK_GAP: usize = 14;
const MARGIN: usize = 8;
/// At most this many blocks are drawn.
pub const MAX_BLOCKS: usize = 64;
/// Blocks the fitted scale aims for at most (one row of the picture).
pub const FIT_BLOCKS: u64 = 4;
/// Pixels per block.
const BLOCK_PIXELS: u64 = (TILE * TILE * TILES * TILES) as u64;
/// The coarsest fitted scale (a block of 2^62 bytes: any 64-bit range).
const MAX_FIT_BPP: u64 = 1 << 46;

const BACKGROUND: [u8; 3] = [28, 28, 32];
const FREE: [u8; 3] = [0, 0, 0];
const TEXT: [u8; 3] = [235, 235, 235];
const DIM_TEXT: [u8; 3] = [160, 160, 170];

/// A stable palette of distinguishable colours.
const PALETTE: [[u8; 3]; 20] = [
    [230, 25, 75],
    [60, 180, 75],
    [255, 225, 25],
    [67, 99, 216],
    [245, 130, 49],
    [145, 30, 180],
    [66, 212, 244],
    [240, 50, 230],
    [191, 239, 69],
    [250, 190, 212],
    [70, 153, 144],
    [220, 190, 255],
    [154, 99, 36],
    [255, 250, 200],
    [128, 0, 0],
    [170, 255, 195],
    [128, 128, 0],
    [255, 216, 177],
    [0, 0, 117],
    [169, 169, 169],
];

/// Options for [`render`].
#[derive(Clone, Debug)]
pub struct MapOptions {
    /// Bytes per pixel; 0 (the default) fits the scale to the log's address
    /// range ([`fit_bytes_per_pixel`]).
    pub bytes_per_pixel: u64,
    /// Title line (e.g. the log name and the moment shown).
    pub title: String,
    /// Call-site labels drawn on the map (the legend lists more).
    pub max_labels: usize,
    /// Rows in the legend.
    pub legend_rows: usize,
}

impl Default for MapOptions {
    fn default() -> Self {
        MapOptions {
            bytes_per_pixel: 0,
            title: String::new(),
            max_labels: 24,
            legend_rows: 16,
        }
    }
}

/// An RGB picture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    pub width: usize,
    pub height: usize,
    pub rgb: Vec<u8>,
}

impl Image {
    fn new(width: usize, height: usize, fill: [u8; 3]) -> Self {
        let mut rgb = Vec::with_capacity(width * height * 3);
        for _ in 0..width * height {
            rgb.extend_from_slice(&fill);
        }
        Image { width, height, rgb }
    }

    #[inline]
    fn set(&mut self, x: usize, y: usize, c: [u8; 3]) {
        if x < self.width && y < self.height {
            let i = (y * self.width + x) * 3;
            self.rgb[i..i + 3].copy_from_slice(&c);
        }
    }

    fn fill(&mut self, x: usize, y: usize, w: usize, h: usize, c: [u8; 3]) {
        for yy in y..(y + h).min(self.height) {
            for xx in x..(x + w).min(self.width) {
                self.set(xx, yy, c);
            }
        }
    }

    /// Draws `text` with its top-left at (x, y).
    pub fn text(&mut self, x: usize, y: usize, text: &str, c: [u8; 3]) {
        for (i, ch) in text.chars().enumerate() {
            let g = font::glyph(ch);
            for (row, bits) in g.iter().enumerate() {
                for col in 0..font::GLYPH_W {
                    if bits & (1 << (font::GLYPH_W - 1 - col)) != 0 {
                        self.set(x + i * ADVANCE + col, y + row, c);
                    }
                }
            }
        }
    }

    /// A hash of the pixels (FNV-1a 64), for golden tests.
    pub fn pixel_hash(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for v in [self.width as u64, self.height as u64] {
            for b in v.to_le_bytes() {
                h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
            }
        }
        for &b in &self.rgb {
            h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
        h
    }

    /// Encodes as PNG (8-bit RGB).
    pub fn write_png<W: Write>(&self, w: W) -> Result<(), Error> {
        let mut enc = png::Encoder::new(w, self.width as u32, self.height as u32);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut wr = enc
            .write_header()
            .map_err(|e| Error::Invalid(format!("PNG encoding failed: {e}")))?;
        wr.write_image_data(&self.rgb)
            .map_err(|e| Error::Invalid(format!("PNG encoding failed: {e}")))?;
        wr.finish()
            .map_err(|e| Error::Invalid(format!("PNG encoding failed: {e}")))?;
        Ok(())
    }

    /// Decodes an 8-bit RGB or RGBA PNG (for golden tests).
    pub fn read_png(data: &[u8]) -> Result<Image, Error> {
        let dec = png::Decoder::new(std::io::Cursor::new(data));
        let mut r = dec
            .read_info()
            .map_err(|e| Error::Invalid(format!("PNG decoding failed: {e}")))?;
        let mut buf = vec![0; r.output_buffer_size().unwrap_or(0)];
        let info = r
            .next_frame(&mut buf)
            .map_err(|e| Error::Invalid(format!("PNG decoding failed: {e}")))?;
        let (w, h) = (info.width as usize, info.height as usize);
        let rgb = match info.color_type {
            png::ColorType::Rgb => buf[..w * h * 3].to_vec(),
            png::ColorType::Rgba => buf[..w * h * 4]
                .chunks(4)
                .flat_map(|p| [p[0], p[1], p[2]])
                .collect(),
            other => {
                return Err(Error::Invalid(format!(
                    "PNG colour type {other:?} not supported"
                )))
            }
        };
        Ok(Image {
            width: w,
            height: h,
            rgb,
        })
    }
}

fn fnv(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    h
}

/// Colours for all sites of the analysis (so every picture of it agrees):
/// by a hash of the site's name, collisions moved to the next free palette
/// entry in name order; past the palette's size, shaded hashed colours.
pub fn assign_colours(a: &Analysis) -> Vec<[u8; 3]> {
    let mut out = vec![[128, 128, 128]; a.sites.len()];
    let mut named: Vec<(String, u32)> = (0..a.sites.len() as u32)
        .map(|s| (crate::report::site_name(&a.sites[s as usize]), s))
        .collect();
    named.sort();
    let mut used = [false; PALETTE.len()];
    let mut n_used = 0;
    for (name, s) in named {
        let mut i = (fnv(&name) % PALETTE.len() as u64) as usize;
        if n_used < PALETTE.len() {
            while used[i] {
                i = (i + 1) % PALETTE.len();
            }
            used[i] = true;
            n_used += 1;
            out[s as usize] = PALETTE[i];
        } else {
            // More sites than colours: shade the hashed colour.
            let c = PALETTE[i];
            let f = 0.55 + (fnv(&format!("{name}#")) % 40) as f32 / 100.0;
            out[s as usize] = [
                (c[0] as f32 * f) as u8,
                (c[1] as f32 * f) as u8,
                (c[2] as f32 * f) as u8,
            ];
        }
    }
    out
}

/// Which blocks (of `block_bytes`) to draw, in address order: all between
/// the lowest and highest used one when there are at most [`MAX_BLOCKS`],
/// else the [`MAX_BLOCKS`] holding the most live bytes. Also returns the
/// number of used blocks.
fn choose_blocks(blocks: &[LiveBlock], block_bytes: u64) -> (Vec<u64>, usize) {
    let mut used: std::collections::BTreeMap<u64, u64> = std::collections::BTreeMap::new();
    for b in blocks {
        let end = b.ptr + b.size.max(1); // cannot overflow: checked on replay
        let first = b.ptr / block_bytes;
        let last = (end - 1) / block_bytes;
        // A huge block counts in its first blocks only (bounded work).
        for k in first..=last.min(first + 4 * MAX_BLOCKS as u64) {
            let lo = (k * block_bytes).max(b.ptr);
            let hi = (k + 1).saturating_mul(block_bytes).min(end);
            *used.entry(k).or_insert(0) += hi - lo;
        }
    }
    let n = used.len();
    let (Some((&lo, _)), Some((&hi, _))) = (used.first_key_value(), used.last_key_value()) else {
        return (Vec::new(), 0);
    };
    if hi - lo < MAX_BLOCKS as u64 {
        return ((lo..=hi).collect(), n);
    }
    let mut v: Vec<(u64, u64)> = used.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.truncate(MAX_BLOCKS);
    let mut keys: Vec<u64> = v.into_iter().map(|(k, _)| k).collect();
    keys.sort_unstable();
    (keys, n)
}

/// The finest power-of-two bytes per pixel (1, 2, 4, ...) at which the
/// address range `[lo, hi)` lies in at most [`FIT_BLOCKS`] blocks (blocks
/// are 65,536 pixels, aligned to their size); 1 for an empty range.
pub fn fit_bytes_per_pixel(lo: u64, hi: u64) -> u64 {
    if hi <= lo {
        return 1;
    }
    let mut bpp = 1u64;
    while bpp < MAX_FIT_BPP {
        let block = BLOCK_PIXELS * bpp;
        if (hi - 1) / block - lo / block < FIT_BLOCKS {
            break;
        }
        bpp *= 2;
    }
    bpp
}

/// The address range the analysis's live sets use: `blocks` (the one
/// drawn), the end of the log and the snapshot, so every picture of one log
/// gets the same scale.
fn used_range(a: &Analysis, blocks: &[LiveBlock]) -> (u64, u64) {
    let snap: &[LiveBlock] = a.snapshot.as_ref().map_or(&[], |s| &s.blocks);
    let mut lo = u64::MAX;
    let mut hi = 0u64;
    for b in blocks.iter().chain(&a.end).chain(snap) {
        lo = lo.min(b.ptr);
        hi = hi.max(b.ptr.saturating_add(b.size.max(1)));
    }
    (lo, hi)
}

struct Layout {
    bpp: u64,
    block_bytes: u64,
    blocks: Vec<u64>,
    cols: usize,
    top: usize,
    cell_h: usize,
}

impl Layout {
    /// Top-left corner of block number `i` (its map area).
    fn block_origin(&self, i: usize) -> (usize, usize) {
        let col = i % self.cols;
        let row = i / self.cols;
        (
            MARGIN + col * (BLOCK_PX + BLOCK_GAP),
            self.top + row * self.cell_h + LINE_H + 2,
        )
    }

    /// Pixel position of byte offset `pix` (in pixels) inside a block.
    fn pixel_in_block(&self, pix: u64) -> (usize, usize) {
        let tile = (pix / (TILE * TILE) as u64) as usize;
        let p = (pix % (TILE * TILE) as u64) as usize;
        let tx = tile % TILES;
        let ty = tile / TILES;
        (
            tx * (TILE + TILE_GAP) + p % TILE,
            ty * (TILE + TILE_GAP) + p / TILE,
        )
    }

    /// Image position of an address, if its block is drawn.
    fn pos(&self, addr: u64) -> Option<(usize, usize)> {
        let k = addr / self.block_bytes;
        let i = self.blocks.binary_search(&k).ok()?;
        let (ox, oy) = self.block_origin(i);
        let (x, y) = self.pixel_in_block((addr - k * self.block_bytes) / self.bpp);
        Some((ox + x, oy + y))
    }
}

fn hex_addr(a: u64) -> String {
    if a > u32::MAX as u64 {
        format!("0x{a:016X}")
    } else {
        format!("0x{a:08X}")
    }
}

fn size_text(b: u64) -> String {
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{} MB", b >> 20)
    } else if b >= 1 << 10 && b.is_multiple_of(1 << 10) {
        format!("{} KB", b >> 10)
    } else {
        format!("{b} B")
    }
}

fn short_bytes(b: u64) -> String {
    if b >= 1 << 20 {
        format!("{:.1} MB", b as f64 / (1 << 20) as f64)
    } else if b >= 1 << 10 {
        format!("{:.1} KB", b as f64 / 1024.0)
    } else {
        format!("{b} B")
    }
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let t: String = s.chars().take(max.saturating_sub(2)).collect();
        format!("{t}..")
    }
}

/// Draws the live set `blocks` (from `a.end` or a snapshot).
pub fn render(a: &Analysis, blocks: &[LiveBlock], o: &MapOptions) -> Image {
    let bpp = match o.bytes_per_pixel {
        0 => {
            let (lo, hi) = used_range(a, blocks);
            fit_bytes_per_pixel(lo, hi)
        }
        n => n,
    };
    let block_bytes = BLOCK_PIXELS * bpp;
    let (chosen, used_blocks) = choose_blocks(blocks, block_bytes);
    let sparse = used_blocks > chosen.len();
    let cols = chosen.len().clamp(1, 4);
    let rows = chosen.len().div_ceil(cols).max(1);
    let cell_h = LINE_H + 2 + BLOCK_PX + BLOCK_GAP;
    let top = MARGIN + 2 * LINE_H + 4;
    let layout = Layout {
        bpp,
        block_bytes,
        blocks: chosen.clone(),
        cols,
        top,
        cell_h,
    };

    // Per-site bytes in this live set, for the legend and label order.
    let mut per_site: Vec<(u64, u64)> = vec![(0, 0); a.sites.len()];
    let mut present = BTreeSet::new();
    for b in blocks {
        per_site[b.site as usize].0 += b.size;
        per_site[b.site as usize].1 += 1;
        present.insert(b.site);
    }
    let colours = assign_colours(a);
    let mut order: Vec<u32> = present.iter().copied().collect();
    order.sort_by(|&x, &y| {
        per_site[y as usize]
            .0
            .cmp(&per_site[x as usize].0)
            .then(x.cmp(&y))
    });

    let legend_rows = order.len().min(o.legend_rows) + usize::from(order.len() > o.legend_rows);
    let map_w = cols * BLOCK_PX + (cols - 1) * BLOCK_GAP;
    let legend_w = 12 + ADVANCE * 60;

    let legend_top = top + rows * cell_h;
    let height = legend_top + (legend_rows + 1) * LINE_H + MARGIN;
    let total: u64 = blocks.iter().map(|b| b.size).sum();
    let mut sub = format!(
        "{} live in {} block{}; 1 pixel = {} byte{}, tile = {}, block = {}",
        short_bytes(total),
        num(blocks.len() as u64),
        if blocks.len() == 1 { "" } else { "s" },
        bpp,
        if bpp == 1 { "" } else { "s" },
        size_text(block_bytes / 16),
        size_text(block_bytes)
    );
    if sparse {
        sub.push_str(&format!(
            "; the {} fullest of {} used blocks shown",
            chosen.len(),
            used_blocks
        ));
    }
    let width = 2 * MARGIN
        + map_w
            .max(legend_w)
            .max(font::text_width(&o.title))
            .max(font::text_width(&sub));
    let mut img = Image::new(width, height, BACKGROUND);
    img.text(MARGIN, MARGIN, &o.title, TEXT);
    img.text(MARGIN, MARGIN + LINE_H, &sub, DIM_TEXT);

    if chosen.is_empty() {
        img.text(
            MARGIN,
            top + LINE_H,
            "nothing tracked is live at this point",
            TEXT,
        );
    }

    // Blocks: ruler and empty tiles.
    for (i, &k) in chosen.iter().enumerate() {
        let (ox, oy) = layout.block_origin(i);
        let start = k * block_bytes;
        let ruler = format!(
            "{} - {}",
            hex_addr(start),
            hex_addr(start.saturating_add(block_bytes - 1))
        );
        img.text(ox, oy - LINE_H - 1, &ruler, DIM_TEXT);
        for ty in 0..TILES {
            for tx in 0..TILES {
                img.fill(
                    ox + tx * (TILE + TILE_GAP),
                    oy + ty * (TILE + TILE_GAP),
                    TILE,
                    TILE,
                    FREE,
                );
            }
        }
    }

    // Paint: each pixel takes the site covering most of its bytes.
    let mut painted: std::collections::HashMap<(usize, usize), u64> =
        std::collections::HashMap::new();
    for b in blocks {
        let extent = b.size.max(1);
        let first_pix = b.ptr / bpp;
        let last_pix = (b.ptr + extent - 1) / bpp;
        let mut p = first_pix;
        while p <= last_pix {
            let lo = (p * bpp).max(b.ptr);
            let hi = (p + 1).saturating_mul(bpp).min(b.ptr + extent);
            let c = hi - lo;
            if let Some((x, y)) = layout.pos(p * bpp) {
                let full = c == bpp;
                let better = if full {
                    true
                } else {
                    match painted.get(&(x, y)) {
                        Some(&prev) => c > prev,
                        None => true,
                    }
                };
                if better {
                    if !full {
                        painted.insert((x, y), c);
                    } else {
                        painted.remove(&(x, y));
                    }
                    img.set(x, y, colours[b.site as usize]);
                }
            } else if layout
                .blocks
                .last()
                .is_some_and(|&l| p * bpp / block_bytes > l)
            {
                break;
            }
            p += 1;
        }
    }

    // Labels: each of the top sites on its largest region (a run of its
    // blocks with no other site's block between them).
    let mut best_run: Vec<Option<(u64, u64)>> = vec![None; a.sites.len()];
    {
        let mut run: Option<(u32, u64, u64)> = None; // site, start, end
        let flush = |r: (u32, u64, u64), best: &mut Vec<Option<(u64, u64)>>| {
            let (s, lo, hi) = r;
            let e = &mut best[s as usize];
            if e.is_none_or(|(_, bytes)| hi - lo > bytes) {
                *e = Some((lo, hi - lo));
            }
        };
        for b in blocks {
            if layout.pos(b.ptr).is_none() {
                // Not drawn: ends the current run.
                if let Some(r) = run.take() {
                    flush(r, &mut best_run);
                }
                continue;
            }
            let end = b.ptr + b.size.max(1);
            run = match run {
                Some((s, lo, _)) if s == b.site => Some((s, lo, end)),
                Some(r) => {
                    flush(r, &mut best_run);
                    Some((b.site, b.ptr, end))
                }
                None => Some((b.site, b.ptr, end)),
            };
        }
        if let Some(r) = run {
            flush(r, &mut best_run);
        }
    }
    let mut taken: Vec<(usize, usize, usize, usize)> = Vec::new();
    for i in 0..chosen.len() {
        let (ox, oy) = layout.block_origin(i);
        taken.push((ox, oy - LINE_H - 1, BLOCK_PX, LINE_H));
    }
    let img_w = img.width;
    for &s in order.iter().take(o.max_labels) {
        let Some((start, len)) = best_run[s as usize] else {
            continue;
        };
        let label = truncate(&site_label(&a.sites[s as usize]), 28);
        let w = font::text_width(&label) + 4;
        let h = GLYPH_H + 4;
        let Some((bx, by)) = layout.pos(start) else {
            continue;
        };
        // A region of at least a dozen rows holds its label; a smaller one
        // gets the label beside it with a leader line.
        let span_rows = (len / bpp) as usize / TILE;
        let mut candidates: Vec<(usize, usize, bool)> = Vec::new();
        if span_rows >= 12 {
            let rows_here = span_rows.min(TILE);
            for dy in [2usize, rows_here / 2, 14, 28] {
                candidates.push((bx + 2, by + dy, false));
            }
            if let Some((mx, my)) = layout.pos(start + len / 2) {
                candidates.push((mx, my, false));
            }
        }
        for (dx, dy) in [
            (4isize, 4isize),
            (4, -4 - h as isize),
            (-4 - w as isize, 4),
            (-4 - w as isize, -4 - h as isize),
            (4, 16),
            (4, -16 - h as isize),
        ] {
            let x = bx as isize + dx;
            let y = by as isize + dy;
            if x >= 0 && y >= 0 {
                candidates.push((x as usize, y as usize, true));
            }
        }
        let fits = |x: usize, y: usize, taken: &[(usize, usize, usize, usize)]| {
            x + w < img_w
                && y >= top
                && y + h < legend_top
                && taken.iter().all(|&(tx, ty, tw, th)| {
                    x + w <= tx || tx + tw <= x || y + h <= ty || ty + th <= y
                })
        };
        let Some(&(x, y, leader)) = candidates.iter().find(|&&(x, y, _)| fits(x, y, &taken)) else {
            continue;
        };
        let col = colours[s as usize];
        if leader {
            // From the region's first pixel to the nearest corner of the box.
            let cx = if x > bx { x } else { x + w - 1 };
            let cy = if y > by { y } else { y + h - 1 };
            let (x0, x1) = (bx.min(cx), bx.max(cx));
            for xx in x0..=x1 {
                img.set(xx, by, col);
            }
            let (y0, y1) = (by.min(cy), by.max(cy));
            for yy in y0..=y1 {
                img.set(cx, yy, col);
            }
        }
        // Dark box with a border in the site's colour, then the text.
        img.fill(x, y, w, h, [0, 0, 0]);
        for xx in x..x + w {
            img.set(xx, y, col);
            img.set(xx, y + h - 1, col);
        }
        for yy in y..y + h {
            img.set(x, yy, col);
            img.set(x + w - 1, yy, col);
        }
        img.text(x + 2, y + 2, &label, TEXT);
        taken.push((x, y, w, h));
    }

    // Legend.
    let mut y = legend_top;
    img.text(MARGIN, y, "call sites (live bytes, blocks):", DIM_TEXT);
    y += LINE_H;
    let mut other = (0u64, 0u64, 0usize);
    for (n, &s) in order.iter().enumerate() {
        let (bytes, count) = per_site[s as usize];
        if n >= o.legend_rows {
            other.0 += bytes;
            other.1 += count;
            other.2 += 1;
            continue;
        }
        img.fill(MARGIN, y, 8, 7, colours[s as usize]);
        let text = format!(
            "{}  {} in {}",
            truncate(&crate::report::site_name(&a.sites[s as usize]), 40),
            short_bytes(bytes),
            num(count)
        );
        img.text(MARGIN + 12, y, &text, TEXT);
        y += LINE_H;
    }
    if other.2 > 0 {
        img.text(
            MARGIN + 12,
            y,
            &format!(
                "and {} more sites: {} in {}",
                other.2,
                short_bytes(other.0),
                num(other.1)
            ),
            DIM_TEXT,
        );
    }
    img
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(ptr: u64, size: u64) -> LiveBlock {
        LiveBlock {
            ptr,
            size,
            site: 0,
            event: 1,
            frame: 0,
            line: 1,
            array: false,
        }
    }

    #[test]
    fn fitted_scale() {
        // Mega Drive work RAM, 64 KB at 0xFF0000: one byte per pixel, one
        // block; a part of it too.
        assert_eq!(fit_bytes_per_pixel(0xFF_0000, 0x100_0000), 1);
        assert_eq!(fit_bytes_per_pixel(0xFF_2000, 0xFF_B000), 1);
        // 64 KB straddling two blocks still fits (two of four).
        assert_eq!(fit_bytes_per_pixel(0xFF_8000, 0x100_8000), 1);
        // 4 blocks of 64 KB fit, 5 do not.
        assert_eq!(fit_bytes_per_pixel(0, 0x4_0000), 1);
        assert_eq!(fit_bytes_per_pixel(0, 0x4_0001), 2);
        // PSP user RAM 0x08800000-0x09FFFFFF (24 MB): 8 MB blocks, three.
        assert_eq!(fit_bytes_per_pixel(0x0880_0000, 0x0A00_0000), 128);
        // The old fixed scale for 4 MB aligned: 16 bytes per pixel.
        assert_eq!(fit_bytes_per_pixel(0x08A0_0000, 0x08E0_0000), 16);
        // Degenerate and huge ranges.
        assert_eq!(fit_bytes_per_pixel(5, 5), 1);
        assert_eq!(fit_bytes_per_pixel(0, u64::MAX), MAX_FIT_BPP);
        assert_eq!(fit_bytes_per_pixel(1 << 63, u64::MAX), 1 << 45);
        // Always the finest that fits.
        for (lo, hi) in [
            (0x1234u64, 0x9_8765u64),
            (0xFF_0000, 0xFF_0010),
            (1 << 40, (1 << 40) + 12345678),
        ] {
            let b = fit_bytes_per_pixel(lo, hi);
            let fits =
                |b: u64| (hi - 1) / (BLOCK_PIXELS * b) - lo / (BLOCK_PIXELS * b) < FIT_BLOCKS;
            assert!(fits(b));
            assert!(b == 1 || !fits(b / 2));
        }
    }

    #[test]
    fn contiguous_blocks_when_few_fullest_when_many() {
        let mb = 1 << 20;
        // Two used blocks 3 MB apart: the four blocks between are drawn.
        let (v, n) = choose_blocks(&[block(0x0900_0000, 16), block(0x0930_0010, 16)], mb);
        assert_eq!(v, [0x90, 0x91, 0x92, 0x93]);
        assert_eq!(n, 2);
        // 100 used blocks far apart, one of them full: it is kept.
        let mut live: Vec<LiveBlock> = (0..100).map(|i| block(i * 4 * mb, 16)).collect();
        live.push(block(399 * mb, mb));
        live.sort_by_key(|b| b.ptr);
        let (v, n) = choose_blocks(&live, mb);
        assert_eq!(n, 101);
        assert_eq!(v.len(), MAX_BLOCKS);
        assert!(v.contains(&399));
        assert!(v.windows(2).all(|w| w[0] < w[1]));
        // A block spanning everything counts in its first blocks only.
        let (v, _) = choose_blocks(&[block(0, u64::MAX / 2)], mb);
        assert_eq!(v.len(), MAX_BLOCKS);
        assert_eq!(v[0], 0);
    }
}
