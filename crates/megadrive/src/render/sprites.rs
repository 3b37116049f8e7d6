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

#[derive(Debug, Clone, Copy, Default)]
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
        let (ymask, top, cell_shift) = if m.im2 {
            (0x3FFu32, 256u32, 4)
        } else {
            (0x1FF, 128, 3)
        };
        let line = line as u32;
        let mut idx = 0usize;
        for _ in 0..m.sprites_total {
            let base = m.sat + idx * 8;
            let y = v.word(base) as u32 & ymask;
            let size = v.byte(base + 2);
            let link = (v.byte(base + 3) & 0x7F) as usize;
            let h = ((size & 3) + 1) as u32;
            let d = (line + top).wrapping_sub(y) & ymask;
            if d < h << cell_shift {
                if self.count == m.sprites_per_line {
                    return true;
                }
                self.list[self.count] = LineSprite {
                    x: v.word(base + 6) & 0x1FF,
                    w: ((size >> 2) & 3) + 1,
                    h: h as u8,
                    row: d as u16,
                    attr: v.word(base + 4),
                };
                self.count += 1;
            }
            if link == 0 || link >= m.sprites_total {
                break;
            }
            idx = link;
        }
        false
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
                for x in x0..x1 {
                    let (w, bit) = ((x >> 6) as usize, 1u64 << (x & 63));
                    overlap |= covered[w] & bit != 0;
                    covered[w] |= bit;
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
    let (dot_overflow, collision) = if draw {
        scratch.draw(v, m, prev_dot_overflow, buf)
    } else {
        match scratch.spans(m, prev_dot_overflow) {
            (dot, false) => (dot, false),
            (_, true) => scratch.draw(v, m, prev_dot_overflow, buf),
        }
    };
    SpriteLineStatus {
        count_overflow,
        dot_overflow,
        overflow: count_overflow || dot_overflow,
        collision,
        sprites: scratch.count as u8,
    }
}
