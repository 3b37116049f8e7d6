//! Sprite evaluation (link list, per-line limits, masking) and the sprite line
//! buffer.
//!
//! Facts used (Charles MacDonald, genvdp.txt; Sega Genesis Software Manual;
//! hardware notes by Nemesis on the SpritesMind forum, "sprite masking" thread,
//! viewtopic.php?t=541):
//! - Attribute table entry, 8 bytes: `y` (word 0: 9 bits, 10 bits in
//!   interlace mode 2), size (byte 2: bits 3-2 width-1, bits 1-0 height-1, in
//!   cells), link (byte 3, 7 bits), attributes (word 2: priority, palette,
//!   vflip, hflip, 11-bit pattern index), `x` (word 3, 9 bits). Screen (0,0) is
//!   sprite (128,128); in interlace mode 2 the top is y=256 in double-height
//!   lines.
//! - The list starts at entry 0 and follows the links; it ends at a link of 0,
//!   a link past the table (64 entries in H32, 80 in H40), or after visiting as
//!   many entries as the table holds.
//! - Per line at most 16 (H32) / 20 (H40) sprites; one more on the line sets
//!   the overflow flag and is not shown.
//! - Per line at most 32 (H32) / 40 (H40) cells of sprite pattern (256 / 320
//!   pixels) are fetched, in list order; the sprite that crosses the limit is
//!   cut at the cell boundary, later ones are dropped, and the overflow flag is
//!   set ("dot overflow").
//! - A sprite with x = 0 masks every later sprite on that line, but only if an
//!   earlier sprite on the same line has x != 0, or the previous line ended in
//!   a dot overflow. Masked sprites still use up their cells of the dot limit.
//! - Sprite tiles are laid out column-major: cell (cx, cy) of a sprite w x h
//!   cells is pattern `index + cx * h + cy`; flips mirror the cell order too.
//! - The collision flag is set when two sprites' non-transparent pixels meet.
//!   We look only at pixels inside the active width.

use super::{Mode, VdpSnapshot};

/// Sprite status figures for one line (the VDP status register's SOVR and
/// SCOL bits are `overflow` and `collision`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpriteLineStatus {
    /// More sprites on the line than the per-line limit.
    pub count_overflow: bool,
    /// More sprite cells on the line than the per-line pixel limit.
    pub dot_overflow: bool,
    /// `count_overflow || dot_overflow` (status bit 6).
    pub overflow: bool,
    /// Two opaque sprite pixels met on the line (status bit 5).
    pub collision: bool,
    /// Sprites found on the line (at most 16 / 20).
    pub sprites: u8,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LineSprite {
    /// Raw 9-bit x.
    x: u16,
    /// Width and height in cells.
    w: u8,
    h: u8,
    /// Pixel row within the sprite (0-based, before flipping).
    row: u16,
    /// Attribute word (priority, palette, flips, pattern).
    attr: u16,
}

impl LineSprite {
    /// The sprite of table entry `base` (size byte `size`) at pixel row
    /// `row`.
    #[inline]
    fn at(v: &VdpSnapshot, base: usize, size: u8, row: u32) -> Self {
        LineSprite {
            x: v.word(base + 6) & 0x1FF,
            w: ((size >> 2) & 3) + 1,
            h: (size & 3) + 1,
            row: row as u16,
            attr: v.word(base + 4),
        }
    }
}

/// (y mask, y of the screen's top, pixel rows per cell as a shift) of the
/// sprite table's y coordinates.
fn sprite_geometry(m: &Mode) -> (u32, u32, u32) {
    if m.im2 {
        (0x3FF, 256, 4)
    } else {
        (0x1FF, 128, 3)
    }
}

/// A sprite attribute table entry met on the link list.
#[derive(Debug, Clone, Copy)]
struct SatEntry {
    idx: usize,
    /// Byte offset of the entry in VRAM.
    base: usize,
    /// Y position (masked to the mode's range).
    y: u32,
    /// Size byte (bits 0-1 height - 1 in cells, bits 2-3 width - 1).
    size: u8,
}

/// The link list from entry 0, as the VDP walks it: at most
/// `sprites_total` entries, ending at a link of 0 or one outside the table.
fn sat_walk<'a>(v: &'a VdpSnapshot, m: &'a Mode) -> impl Iterator<Item = SatEntry> + 'a {
    let ymask = sprite_geometry(m).0;
    let mut next = Some(0usize);
    let mut left = m.sprites_total;
    std::iter::from_fn(move || {
        let idx = next?;
        if left == 0 {
            return None;
        }
        left -= 1;
        let base = m.sat + idx * 8;
        let link = (v.byte(base + 3) & 0x7F) as usize;
        next = (link != 0 && link < m.sprites_total).then_some(link);
        Some(SatEntry {
            idx,
            base,
            y: v.word(base) as u32 & ymask,
            size: v.byte(base + 2),
        })
    })
}

/// Per-line sprite scratch space (no allocation per line).
#[derive(Debug, Clone)]
pub(crate) struct SpriteScratch {
    list: [LineSprite; 20],
    count: usize,
}

impl SpriteScratch {
    pub(crate) fn new() -> Self {
        SpriteScratch {
            list: [LineSprite::default(); 20],
            count: 0,
        }
    }

    /// Find the sprites on `line`; returns true on a count overflow.
    pub(crate) fn scan(&mut self, v: &VdpSnapshot, m: &Mode, line: u16) -> bool {
        self.count = 0;
        let (ymask, top, cell_shift) = sprite_geometry(m);
        let line = line as u32;
        for e in sat_walk(v, m) {
            let h = ((e.size & 3) + 1) as u32;
            let d = (line + top).wrapping_sub(e.y) & ymask;
            if d < h << cell_shift {
                if self.count == m.sprites_per_line {
                    return true;
                }
                self.list[self.count] = LineSprite::at(v, e.base, e.size, d);
                self.count += 1;
            }
        }
        false
    }

    /// The line's status from the sprites found (`count_overflow`: the scan
    /// found more than the per-line limit). With `draw`, `buf` receives the
    /// sprite line; without it the pixels are drawn (into `buf` as scratch)
    /// only when shown sprites overlap, as the collision flag needs them.
    fn evaluate(
        &self,
        v: &VdpSnapshot,
        m: &Mode,
        count_overflow: bool,
        prev_dot_overflow: bool,
        buf: &mut [u8],
        draw: bool,
    ) -> SpriteLineStatus {
        let (dot_overflow, collision) = if draw {
            self.draw(v, m, prev_dot_overflow, buf)
        } else {
            match self.spans(m, prev_dot_overflow) {
                (dot, false) => (dot, false),
                (_, true) => self.draw(v, m, prev_dot_overflow, buf),
            }
        };
        SpriteLineStatus {
            count_overflow,
            dot_overflow,
            overflow: count_overflow || dot_overflow,
            collision,
            sprites: self.count as u8,
        }
    }

    /// Without drawing: the dot overflow, and whether any two shown sprite
    /// cells overlap on screen (a collision needs that).
    fn spans(&self, m: &Mode, prev_dot_overflow: bool) -> (bool, bool) {
        let width = m.width as i32;
        let mut covered = [0u64; 5];
        let mut cells_left = m.sprite_cells;
        let mut seen_nonzero_x = false;
        let mut masked = false;
        let mut overlap = false;
        for s in &self.list[..self.count] {
            if s.x == 0 {
                if seen_nonzero_x || prev_dot_overflow {
                    masked = true;
                }
            } else {
                seen_nonzero_x = true;
            }
            let cells = (s.w as usize).min(cells_left);
            let cut = cells < s.w as usize;
            cells_left -= cells;
            if !masked && !overlap {
                let x0 = (s.x as i32 - 128).max(0);
                let x1 = (s.x as i32 - 128 + cells as i32 * 8).min(width);
                // Pixels x0..x1 as bit masks, one 64-pixel word at a time.
                let mut x = x0 as usize;
                let end = x1.max(0) as usize;
                while x < end {
                    let w = x >> 6;
                    let stop = end.min((w + 1) << 6);
                    let n = stop - x;
                    let mask = if n == 64 {
                        !0u64
                    } else {
                        ((1u64 << n) - 1) << (x & 63)
                    };
                    overlap |= covered[w] & mask != 0;
                    covered[w] |= mask;
                    x = stop;
                }
            }
            if cut {
                return (true, overlap);
            }
        }
        (false, overlap)
    }

    /// Draw the scanned sprites into `dst` (cleared first; one byte per pixel:
    /// bit 7 priority, bits 5-4 palette, bits 3-0 colour, 0 = none).
    /// Returns (dot overflow, collision).
    pub(crate) fn draw(
        &self,
        v: &VdpSnapshot,
        m: &Mode,
        prev_dot_overflow: bool,
        dst: &mut [u8],
    ) -> (bool, bool) {
        let width = m.width.min(dst.len());
        let dst = &mut dst[..width];
        dst.fill(0);
        let (cell_h, tile_bytes) = if m.im2 { (16u16, 64usize) } else { (8, 32) };
        let mut cells_left = m.sprite_cells;
        let mut seen_nonzero_x = false;
        let mut masked = false;
        let mut collision = false;
        let mut dot_overflow = false;
        for s in &self.list[..self.count] {
            if s.x == 0 {
                if seen_nonzero_x || prev_dot_overflow {
                    masked = true;
                }
            } else {
                seen_nonzero_x = true;
            }
            let mut cells = s.w as usize;
            if cells > cells_left {
                cells = cells_left;
                dot_overflow = true;
            }
            cells_left -= cells;
            if !masked {
                let hflip = s.attr & 0x0800 != 0;
                let vflip = s.attr & 0x1000 != 0;
                let (mut cy, mut fy) = (s.row / cell_h, s.row % cell_h);
                if vflip {
                    cy = s.h as u16 - 1 - cy;
                    fy = cell_h - 1 - fy;
                }
                let pal = ((s.attr >> 8) & 0x80) as u8 | ((s.attr >> 9) & 0x30) as u8;
                let x0 = s.x as i32 - 128;
                for c in 0..cells {
                    let sx = x0 + (c as i32) * 8;
                    if sx >= width as i32 || sx + 8 <= 0 {
                        continue;
                    }
                    let cx = if hflip { s.w as usize - 1 - c } else { c };
                    let tile = (s.attr as usize + cx * s.h as usize + cy as usize) & 0x7FF;
                    let bits = v.pattern(tile * tile_bytes + fy as usize * 4);
                    if bits == 0 {
                        continue;
                    }
                    let row = super::expand_row(bits, pal, hflip);
                    if sx >= 0 && sx + 8 <= width as i32 {
                        // Whole cell on the line: merge 8 pixels at once.
                        // The first opaque pixel stays (bytes are 0 where
                        // nothing was drawn yet).
                        let cell = &mut dst[sx as usize..sx as usize + 8];
                        let old = u64::from_ne_bytes(cell.try_into().expect("8 bytes"));
                        let new = u64::from_ne_bytes(row);
                        let (old_nz, new_nz) = (opaque_bytes(old), opaque_bytes(new));
                        collision |= old_nz & new_nz != 0;
                        let take = ((new_nz & !old_nz) >> 7) * 0xFF;
                        cell.copy_from_slice(&(old | (new & take)).to_ne_bytes());
                        continue;
                    }
                    // Clip the cell to the line.
                    let first = (-sx).max(0) as usize;
                    let last = (width as i32 - sx).min(8) as usize;
                    for (i, &p) in row.iter().enumerate().take(last).skip(first) {
                        if p & 0x0F == 0 {
                            continue;
                        }
                        let d = &mut dst[sx as usize + i];
                        if *d & 0x0F != 0 {
                            collision = true;
                        } else {
                            *d = p;
                        }
                    }
                }
            }
            if dot_overflow {
                break;
            }
        }
        (dot_overflow, collision)
    }
}

/// Bit 7 of each byte set where that byte's colour (low nibble) is not 0.
#[inline(always)]
fn opaque_bytes(x: u64) -> u64 {
    let t = x & 0x0F0F_0F0F_0F0F_0F0F;
    (t + 0x7F7F_7F7F_7F7F_7F7F) & 0x8080_8080_8080_8080
}

/// Sprite status of `line` (same line numbering as
/// [`Renderer::render_line`](super::Renderer::render_line)) without drawing
/// the planes, assuming the previous line had no dot overflow (see
/// [`Renderer::sprite_line_status`](super::Renderer::sprite_line_status) for
/// the exact, stateful version). Returns (overflow, collision). A disabled
/// display reports no sprites.
pub fn sprite_line_status(v: &VdpSnapshot, line: u16) -> (bool, bool) {
    let m = Mode::decode(v.regs);
    let mut scratch = SpriteScratch::new();
    let mut buf = [0u8; 320];
    let st = status_with(&mut scratch, v, &m, line, false, &mut buf, false);
    (st.overflow, st.collision)
}

/// Lines [`FrameSprites`] covers (the status computation asks for active
/// lines only: at most 240).
const FRAME_LINES: usize = 256;

/// Every line's sprite list from one walk of the sprite table: for each
/// line, the entries [`SpriteScratch::scan`] would find there (link order,
/// at most the per-line limit), whether more were found, and the cells
/// (widths) of those found. One walk instead of one per line keeps the
/// status flags cheap on screens full of sprites; each entry adds itself to
/// the lines of its rows that are in `0..lines` only (a range, or two where
/// its rows wrap past the y range's end), with no per-row tests.
#[derive(Clone)]
pub(crate) struct FrameSprites {
    ids: [[u8; 20]; FRAME_LINES],
    count: [u8; FRAME_LINES],
    overflow: [bool; FRAME_LINES],
    /// Sum of the widths in cells of the line's found sprites (at most 20 x
    /// 4).
    cells: [u8; FRAME_LINES],
    lines: usize,
}

impl FrameSprites {
    pub(crate) fn new() -> Self {
        FrameSprites {
            ids: [[0; 20]; FRAME_LINES],
            count: [0; FRAME_LINES],
            overflow: [false; FRAME_LINES],
            cells: [0; FRAME_LINES],
            lines: 0,
        }
    }

    /// Walk the table for lines `0..lines` (same line numbering as `scan`).
    pub(crate) fn scan(&mut self, v: &VdpSnapshot, m: &Mode, lines: usize) {
        let lines = lines.min(FRAME_LINES);
        self.lines = lines;
        self.count[..lines].fill(0);
        self.overflow[..lines].fill(false);
        self.cells[..lines].fill(0);
        let (ymask, top, cell_shift) = sprite_geometry(m);
        let span = ymask as usize + 1;
        let limit = m.sprites_per_line.min(20);
        for e in sat_walk(v, m) {
            let rows = (((e.size & 3) + 1) as usize) << cell_shift;
            let w = ((e.size >> 2) & 3) + 1;
            // `scan` takes the sprite on line L when (L + top - y) & ymask
            // is below its height: row d is on line (y - top + d) & ymask,
            // so the rows cover start..start + rows modulo the y range.
            let start = (e.y.wrapping_sub(top) & ymask) as usize;
            let end = start + rows;
            let idx = e.idx as u8;
            self.add(start.min(lines), end.min(span).min(lines), idx, w, limit);
            if end > span {
                self.add(0, (end - span).min(lines), idx, w, limit);
            }
        }
    }

    /// Entry `idx` (`w` cells wide) is on lines `a..b` (`b <= self.lines`).
    #[inline(always)]
    fn add(&mut self, a: usize, b: usize, idx: u8, w: u8, limit: usize) {
        if a >= b {
            return;
        }
        let lines = self.ids[a..b]
            .iter_mut()
            .zip(&mut self.count[a..b])
            .zip(&mut self.cells[a..b])
            .zip(&mut self.overflow[a..b]);
        for (((ids, count), cells), overflow) in lines {
            let c = *count as usize;
            if c < limit {
                ids[c] = idx;
                *count += 1;
                *cells += w;
            } else {
                *overflow = true;
            }
        }
    }

    /// Sprites found on `line` (at most the per-line limit; 0 outside the
    /// scanned lines).
    pub(crate) fn count(&self, line: usize) -> usize {
        if line < self.lines {
            self.count[line] as usize
        } else {
            0
        }
    }

    /// Fill `scratch` with `line`'s sprites as `SpriteScratch::scan` would;
    /// returns its count overflow.
    fn fill(&self, v: &VdpSnapshot, m: &Mode, line: usize, scratch: &mut SpriteScratch) -> bool {
        scratch.count = 0;
        if line >= self.lines {
            return false;
        }
        let (ymask, top, _) = sprite_geometry(m);
        for &id in &self.ids[line][..self.count[line] as usize] {
            let base = m.sat + id as usize * 8;
            let y = v.word(base) as u32 & ymask;
            let row = (line as u32 + top).wrapping_sub(y) & ymask;
            scratch.list[scratch.count] = LineSprite::at(v, base, v.byte(base + 2), row);
            scratch.count += 1;
        }
        self.overflow[line]
    }

    /// (overflow, collision) of `line`, as [`sprite_line_status`] gives
    /// them, from the scanned lists; `buf` is scratch space of the line's
    /// width.
    pub(crate) fn line_status(
        &self,
        v: &VdpSnapshot,
        m: &Mode,
        line: usize,
        scratch: &mut SpriteScratch,
        buf: &mut [u8],
    ) -> (bool, bool) {
        if !m.display {
            return (false, false);
        }
        let count_overflow = self.fill(v, m, line, scratch);
        let st = scratch.evaluate(v, m, count_overflow, false, buf, false);
        (st.overflow, st.collision)
    }

    /// The overflow answer of [`Self::line_status`] alone, without drawing
    /// a pixel or looking at a sprite: the count overflow, or the dot
    /// overflow, which `draw` (and the span walk) find exactly when the
    /// found sprites' cells add up to more than the per-line budget (each
    /// takes `min(width, cells left)`; the first that does not fit whole
    /// is the overflow). What the status flags need on lines whose
    /// collision answer no longer matters.
    pub(crate) fn line_overflow(&self, m: &Mode, line: usize) -> bool {
        if !m.display || line >= self.lines {
            return false;
        }
        self.overflow[line] || self.cells[line] as usize > m.sprite_cells
    }
}

/// Evaluate the sprites of `line`. With `draw`, `buf` receives the sprite
/// line; without it `buf` is only scratch space, used when shown sprites
/// overlap (the collision flag needs their pixels).
pub(crate) fn status_with(
    scratch: &mut SpriteScratch,
    v: &VdpSnapshot,
    m: &Mode,
    line: u16,
    prev_dot_overflow: bool,
    buf: &mut [u8],
    draw: bool,
) -> SpriteLineStatus {
    if !m.display {
        return SpriteLineStatus::default();
    }
    let count_overflow = scratch.scan(v, m, line);
    scratch.evaluate(v, m, count_overflow, prev_dot_overflow, buf, draw)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A xorshift generator: `next(n)` gives a number below `n`.
    fn xorshift(mut seed: u64) -> impl FnMut(u64) -> u64 {
        move |n| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        }
    }

    /// `spans` pixel by pixel, as the definition reads: a collision needs
    /// two shown sprite pixels' cells on the same screen x.
    fn spans_per_pixel(list: &[LineSprite], m: &Mode, prev: bool) -> (bool, bool) {
        let mut covered = [false; 320];
        let mut cells_left = m.sprite_cells;
        let (mut seen_nonzero_x, mut masked, mut overlap) = (false, false, false);
        for s in list {
            if s.x == 0 {
                masked |= seen_nonzero_x || prev;
            } else {
                seen_nonzero_x = true;
            }
            let cells = (s.w as usize).min(cells_left);
            cells_left -= cells;
            if !masked {
                for c in 0..cells as i32 * 8 {
                    let x = s.x as i32 - 128 + c;
                    if (0..m.width as i32).contains(&x) {
                        overlap |= covered[x as usize];
                        covered[x as usize] = true;
                    }
                }
            }
            if cells < s.w as usize {
                return (true, overlap);
            }
        }
        (false, overlap)
    }

    #[test]
    fn frame_walk_finds_what_each_line_scan_finds() {
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15u64);
        let mut vram = Box::new([0u8; 0x10000]);
        let (cram, vsram) = ([0u16; 64], [0u16; 40]);
        let mut fs = FrameSprites::new();
        let (mut overflows, mut collisions, mut shown) = (0, 0, 0);
        for round in 0..400 {
            let mut regs = [0u8; 24];
            regs[1] = 0x44;
            regs[5] = 0x78; // table at 0xF000
            regs[12] = match round % 3 {
                0 => 0x81,
                1 => 0x00,
                _ => 0x87, // H40, interlace mode 2
            };
            let m = Mode::decode(&regs);
            for b in vram.iter_mut() {
                *b = next(256) as u8;
            }
            // Sprites mostly on screen and tall, so lines fill up; links a
            // random chain that sometimes ends early or loops.
            for i in 0..m.sprites_total {
                let e = m.sat + i * 8;
                let y = if m.im2 {
                    200 + next(560)
                } else {
                    100 + next(300)
                };
                vram[e..e + 2].copy_from_slice(&(y as u16).to_be_bytes());
                vram[e + 2] = next(16) as u8;
                vram[e + 3] = if next(40) == 0 {
                    0
                } else {
                    next(m.sprites_total as u64) as u8
                };
                let x = 100 + next(360);
                vram[e + 6..e + 8].copy_from_slice(&(x as u16).to_be_bytes());
            }
            let v = VdpSnapshot {
                vram: &vram,
                cram: &cram,
                vsram: &vsram,
                regs: &regs,
            };
            let lines = if m.im2 { 240 } else { 224 };
            fs.scan(&v, &m, lines);
            let (mut a, mut b) = (SpriteScratch::new(), SpriteScratch::new());
            let mut buf = [0u8; 320];
            for line in 0..lines {
                let over = a.scan(&v, &m, line as u16);
                assert_eq!(
                    fs.fill(&v, &m, line, &mut b),
                    over,
                    "round {round} line {line}"
                );
                assert_eq!(
                    &a.list[..a.count],
                    &b.list[..b.count],
                    "round {round} line {line}"
                );
                let want = sprite_line_status(&v, line as u16);
                let got = fs.line_status(&v, &m, line, &mut b, &mut buf);
                assert_eq!(got, want, "round {round} line {line}");
                assert_eq!(
                    fs.line_overflow(&m, line),
                    want.0,
                    "overflow alone, round {round} line {line}"
                );
                overflows += got.0 as u32;
                collisions += got.1 as u32;
                shown += (a.count > 0) as u32;
            }
        }
        // The layouts exercise every answer.
        assert!(overflows > 1_000 && collisions > 1_000 && shown > 10_000);
    }

    #[test]
    fn span_masks_match_pixel_by_pixel() {
        let mut next = xorshift(0x2545_F491_4F6C_DD1Du64);
        let mut tried = [0u32; 2];
        for h40 in [false, true] {
            let mut regs = [0u8; 24];
            regs[1] = 0x40; // display on
            regs[12] = if h40 { 0x81 } else { 0 };
            let m = Mode::decode(&regs);
            for _ in 0..20_000 {
                let mut sc = SpriteScratch::new();
                sc.count = 1 + next(m.sprites_per_line as u64) as usize;
                for s in &mut sc.list[..sc.count] {
                    // Mostly on or near the screen, some at x = 0 (masks).
                    let x = match next(8) {
                        0 => 0,
                        1 => next(512),
                        _ => 96 + next(m.width as u64 + 48),
                    };
                    s.x = x as u16;
                    s.w = 1 + next(4) as u8;
                }
                let prev = next(4) == 0;
                let got = sc.spans(&m, prev);
                assert_eq!(got, spans_per_pixel(&sc.list[..sc.count], &m, prev));
                tried[got.1 as usize] += 1;
            }
        }
        // Both answers occur often enough to mean something.
        assert!(tried[0] > 1_000 && tried[1] > 1_000, "{tried:?}");
    }
}
