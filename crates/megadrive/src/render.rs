//! Mega Drive VDP (315-5313) mode 5 line renderer and PNG screenshots.
//!
//! Headless profiling never calls this; the console calls
//! [`Renderer::render_line`] once per active line only when a picture is
//! wanted, with a [`VdpSnapshot`] of the VDP memories and registers as they are
//! at that line (so mid-frame palette, scroll and register changes show).
//!
//! # What is drawn
//! Facts from Charles MacDonald's "Sega Genesis VDP documentation"
//! (genvdp.txt), the Sega Genesis Software Manual, plutiedev.com, and the
//! SpritesMind forum; no emulator code was used.
//!
//! - Layers, back to front: backdrop (register 7), plane B low, plane A/window
//!   low, sprites low, plane B high, plane A/window high, sprites high.
//!   Colour index 0 of any palette is transparent.
//! - Name table entry: bit 15 priority, 14-13 palette, 12 vflip, 11 hflip,
//!   10-0 pattern (32 bytes, 4 bits per pixel, high nibble first; 64 bytes and
//!   16 rows in interlace mode 2).
//! - Addresses: plane A `(r2 & 0x38) << 10`; window `(r3 & 0x3E) << 10`
//!   (`0x3C` in H40); plane B `(r4 & 7) << 13`; sprites `(r5 & 0x7F) << 9`
//!   (`0x7E` in H40); H scroll table `(r13 & 0x3F) << 10`.
//! - Width: H40 (320 pixels) when register 12 bit 0 (RS1) is set, else H32
//!   (256). Height: 240 lines when register 1 bit 3 is set (V30), else 224.
//! - Plane size (register 16): bits 1-0 width, 5-4 height, 0 = 32 cells,
//!   1 = 64, 3 = 128. Name table offsets wrap at 8 KB, so 128x64 and 128x128
//!   behave as 128x32 and 64x128 as 64x64. Width code 2 is invalid: the plane is
//!   32 cells wide and every line reads name table row 0 (the effect Charles
//!   MacDonald's window-bug test shows); height code 2 is taken as 32 rows
//!   (not verified).
//! - Horizontal scroll (register 11 bits 1-0): 0 full screen (table entry 0),
//!   2 per cell (entry `line & !7`), 3 per line (entry `line`), 1 (invalid)
//!   per line of the first 8 lines (`line & 7`). Entry n is at
//!   `table + 4n` (plane A) and `+ 2` (plane B); 10 bits.
//! - Vertical scroll (register 11 bit 2): full screen uses VSRAM 0 (A) and 1
//!   (B); 2-cell mode uses VSRAM `2j` / `2j + 1` for the j-th 16-pixel column
//!   of the plane as it lies on screen (the columns move with the fine
//!   horizontal scroll). The partly shown column at the left edge (fine
//!   scroll not a multiple of 16) uses 0 in H32 and VSRAM 38 AND VSRAM 39 for
//!   both planes in H40: documented hardware behaviour (tested on a PAL
//!   Mega Drive 2 by an emulator author; visible in Gynoug, Formula One).
//!   Values are 10 bits (11 in interlace mode 2).
//! - Window (registers 17, 18; only the low 5 bits of the positions count):
//!   lines above `8 * (r18 & 0x1F)` (below it when r18 bit 7 is set) are
//!   entirely window; on other lines the window covers `x < 16 * (r17 & 0x1F)`
//!   (or `x >=` it when r17 bit 7 is set). The window replaces plane A, does
//!   not scroll, and its name table is 32 cells wide in H32, 64 in H40.
//!   Window bug (Charles MacDonald; his test program shows it): with the
//!   window on the left and plane A's fine scroll `f = hscroll & 15` not 0,
//!   the first `f` pixels of plane A right of the window show the plane data
//!   of the next 2-cell column (16 pixels further right).
//! - Sprites: see `sprites.rs` (link list, 16/20 per line, 256/320 pixels per
//!   line, x = 0 masking, collision).
//! - Shadow/highlight (register 12 bit 3): a pixel is shadowed unless plane A
//!   or plane B has its priority bit set there (transparent or not; this
//!   includes the backdrop). Sprite colour 14 of palette 3 (highlight) and 15
//!   (shadow) are operators: they are not drawn, but raise or lower the
//!   intensity of what is under them (shadow + highlight = normal). A visible
//!   high-priority sprite pixel is normal; a low-priority one takes the
//!   planes' shadow state, except colour 14 of palettes 0-2, which is always
//!   normal. Operators act only where the sprite pixel would be shown (a
//!   high-priority opaque plane pixel above a low-priority operator hides it).
//! - Display off (register 1 bit 6 clear): the whole line is the backdrop
//!   colour and no sprites are evaluated.
//! - Left column blank (register 0 bit 5): pixels 0-7 show the backdrop colour.
//! - Register 0 bit 2 clear: only the lowest bit of each colour channel is
//!   used (the undocumented reduced palette).
//! - Interlace mode 2 (register 12 bits 2-1 = 3): patterns are 8x16; the caller
//!   passes `line = 2 * active_line + field` (0..448 in V28); H scroll uses
//!   `line / 2`, vertical scroll and sprite y are in double-height lines, sprite
//!   screen top is y = 256. Interlace mode 1 (bits = 1) and the invalid
//!   value 2 render like progressive lines.
//! - Mode 4 (register 1 bit 2 clear, Master System mode) is not emulated: the
//!   line is drawn as mode 5.
//!
//! Colours: see [`cram_to_rgb_with`] and [`LEVEL_RB`] for the CRAM to RGB
//! mapping (it matches the Genesis Plus GX reference pictures exactly).
//!
//! # Calling it
//! One [`Renderer`] per console; per active line call
//! [`Renderer::render_line`] (it also evaluates that line's sprites, see
//! [`Renderer::last_line_status`]); on lines not drawn,
//! [`Renderer::sprite_line_status`] gives the sprite overflow/collision flags
//! without drawing pixels (it only draws sprite pixels when two shown
//! sprites overlap). Sprite masking depends on the previous line's dot
//! overflow, which the renderer remembers between consecutive calls
//! ([`Renderer::reset_line_state`] forgets it); the free function
//! [`sprite_line_status`] assumes none. In interlace mode 2 pass
//! [`Renderer::line_number`]`(regs, active_line, odd_field)`.
//!
//! Speed (`cargo run --release -p retroprof-megadrive --example
//! render_bench`): a busy H40 frame (both planes, line scroll, 2-cell
//! vertical scroll, window, 80 sprites) is about 4.5 million instructions;
//! no allocation per line or pixel.

mod colour;
mod image;
mod sprites;

pub use colour::{cram_to_rgb, cram_to_rgb_with, Intensity, LEVEL_G, LEVEL_RB};
pub use image::{decode_png, encode_png, read_png, write_png, Image, RenderError};
pub use sprites::{sprite_line_status, SpriteLineStatus};

pub(crate) use sprites::{FrameSprites, SpriteScratch};

/// The VDP state the renderer reads, borrowed from the console.
///
/// `vram` is big-endian bytes (the word at even address A has its high byte
/// at A); `cram` entries are `0000BBB0GGG0RRR0`; `vsram` 40 words; `regs` the
/// 24 VDP registers.
#[derive(Clone, Copy)]
pub struct VdpSnapshot<'a> {
    pub vram: &'a [u8; 0x10000],
    pub cram: &'a [u16; 64],
    pub vsram: &'a [u16; 40],
    pub regs: &'a [u8; 24],
}

impl VdpSnapshot<'_> {
    #[inline]
    fn byte(&self, addr: usize) -> u8 {
        self.vram[addr & 0xFFFF]
    }

    #[inline]
    fn word(&self, addr: usize) -> u16 {
        let a = addr & 0xFFFE;
        u16::from_be_bytes([self.vram[a], self.vram[a + 1]])
    }

    /// One 8-pixel pattern row (4 bytes), first pixel in the top nibble.
    #[inline]
    fn pattern(&self, addr: usize) -> u32 {
        let a = addr & 0xFFFC;
        u32::from_be_bytes([
            self.vram[a],
            self.vram[a + 1],
            self.vram[a + 2],
            self.vram[a + 3],
        ])
    }
}

/// Register-derived settings for one line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mode {
    pub(crate) h40: bool,
    pub(crate) width: usize,
    pub(crate) im2: bool,
    pub(crate) display: bool,
    shadow_highlight: bool,
    left_blank: bool,
    full_palette: bool,
    plane_a: usize,
    plane_b: usize,
    window: usize,
    pub(crate) sat: usize,
    hscroll_table: usize,
    /// Plane width / height in cells; row stride in cells (0 for the invalid
    /// width code).
    plane_w: usize,
    plane_h: usize,
    row_stride: usize,
    /// Mask applied to the line number to pick the H scroll entry.
    hscroll_line_mask: u16,
    vscroll_2cell: bool,
    backdrop: u8,
    win_h: u8,
    win_v: u8,
    pub(crate) sprites_per_line: usize,
    pub(crate) sprites_total: usize,
    /// Sprite cells fetched per line (dot limit / 8).
    pub(crate) sprite_cells: usize,
}

impl Mode {
    pub(crate) fn decode(r: &[u8; 24]) -> Mode {
        let h40 = r[12] & 0x01 != 0;
        let (plane_w, row_stride) = match r[16] & 3 {
            0 => (32, 32),
            1 => (64, 64),
            2 => (32, 0),
            _ => (128, 128),
        };
        let plane_h = match (r[16] >> 4) & 3 {
            1 => 64,
            3 => 128,
            _ => 32,
        };
        Mode {
            h40,
            width: if h40 { 320 } else { 256 },
            im2: r[12] & 0x06 == 0x06,
            display: r[1] & 0x40 != 0,
            shadow_highlight: r[12] & 0x08 != 0,
            left_blank: r[0] & 0x20 != 0,
            full_palette: r[0] & 0x04 != 0,
            plane_a: ((r[2] & 0x38) as usize) << 10,
            plane_b: ((r[4] & 0x07) as usize) << 13,
            window: ((r[3] & if h40 { 0x3C } else { 0x3E }) as usize) << 10,
            sat: ((r[5] & if h40 { 0x7E } else { 0x7F }) as usize) << 9,
            hscroll_table: ((r[13] & 0x3F) as usize) << 10,
            plane_w,
            plane_h,
            row_stride,
            hscroll_line_mask: match r[11] & 3 {
                0 => 0,
                1 => 0x007,
                2 => !7,
                _ => !0,
            },
            vscroll_2cell: r[11] & 0x04 != 0,
            backdrop: r[7] & 0x3F,
            win_h: r[17],
            win_v: r[18],
            sprites_per_line: if h40 { 20 } else { 16 },
            sprites_total: if h40 { 80 } else { 64 },
            sprite_cells: if h40 { 40 } else { 32 },
        }
    }
}

/// Bytes per pixel in the line buffers: bit 7 priority, bits 5-4 palette,
/// bits 3-0 colour (0 = transparent, priority still recorded for planes).
const LINE_BUF: usize = 320;

/// Per-line renderer. Keeps only scratch space and the previous line's dot
/// overflow (needed for sprite masking); create one per console.
#[derive(Debug, Clone)]
pub struct Renderer {
    a: [u8; LINE_BUF],
    b: [u8; LINE_BUF],
    s: [u8; LINE_BUF],
    colours: [u32; 64 * 3],
    /// CRAM and (full palette, shadow/highlight) the colours were built from.
    colours_from: Option<([u16; 64], bool, bool)>,
    sprites: SpriteScratch,
    prev_line: Option<u16>,
    prev_dot_overflow: bool,
    last_status: SpriteLineStatus,
}

impl Default for Renderer {
    fn default() -> Self {
        Self::new()
    }
}

impl Renderer {
    pub fn new() -> Self {
        Renderer {
            a: [0; LINE_BUF],
            b: [0; LINE_BUF],
            s: [0; LINE_BUF],
            colours: [0; 64 * 3],
            colours_from: None,
            sprites: SpriteScratch::new(),
            prev_line: None,
            prev_dot_overflow: false,
            last_status: SpriteLineStatus::default(),
        }
    }

    /// Active width in pixels: 320 in H40 (register 12 bit 0), else 256.
    pub fn active_width(regs: &[u8; 24]) -> u32 {
        if regs[12] & 0x01 != 0 {
            320
        } else {
            256
        }
    }

    /// Active lines per field: 240 with register 1 bit 3 (V30), else 224;
    /// doubled in interlace mode 2 (the `line` numbers `render_line` takes).
    pub fn active_height(regs: &[u8; 24]) -> u32 {
        let h = if regs[1] & 0x08 != 0 { 240 } else { 224 };
        if regs[12] & 0x06 == 0x06 {
            h * 2
        } else {
            h
        }
    }

    /// The `line` argument of [`render_line`](Self::render_line) for active
    /// line `active_line` of the current field: `2 * active_line + 1` on odd
    /// fields and `2 * active_line` on even ones in interlace mode 2 (a
    /// full picture then has `2 * active lines` rows), else `active_line`.
    pub fn line_number(regs: &[u8; 24], active_line: u16, odd_field: bool) -> u16 {
        if regs[12] & 0x06 == 0x06 {
            active_line * 2 + odd_field as u16
        } else {
            active_line
        }
    }

    /// Sprite status of the line drawn last by [`render_line`](Self::render_line).
    pub fn last_line_status(&self) -> SpriteLineStatus {
        self.last_status
    }

    /// Forget the previous line (call at the start of a frame if lines may be
    /// skipped; masking after a dot overflow needs consecutive lines).
    pub fn reset_line_state(&mut self) {
        self.prev_line = None;
        self.prev_dot_overflow = false;
    }

    fn prev_overflow_for(&self, line: u16, im2: bool) -> bool {
        let step = if im2 { 2 } else { 1 };
        self.prev_dot_overflow && self.prev_line == Some(line.wrapping_sub(step))
    }

    /// Sprite status (overflow, collision) of `line` without drawing the
    /// planes, with the same previous-line state as `render_line` (so a
    /// console can call this on lines it does not draw and `render_line` on
    /// the others).
    pub fn sprite_line_status(&mut self, v: &VdpSnapshot, line: u16) -> SpriteLineStatus {
        self.sprite_line(v, line, false)
    }

    fn sprite_line(&mut self, v: &VdpSnapshot, line: u16, draw: bool) -> SpriteLineStatus {
        let m = Mode::decode(v.regs);
        let prev = self.prev_overflow_for(line, m.im2);
        let st = sprites::status_with(&mut self.sprites, v, &m, line, prev, &mut self.s, draw);
        self.prev_line = Some(line);
        self.prev_dot_overflow = st.dot_overflow;
        self.last_status = st;
        st
    }

    /// Render active display line `line` into `out` as `0x00RRGGBB`, writing
    /// the active width (256 or 320 pixels; fewer if `out` is shorter).
    ///
    /// `line` is 0-based within the active area. In interlace mode 2 it is
    /// the double-resolution line `2 * active_line + field` (field 0 = even
    /// lines). The sprite status of the line is available afterwards from
    /// [`last_line_status`](Self::last_line_status).
    pub fn render_line(&mut self, v: &VdpSnapshot, line: u16, out: &mut [u32]) {
        let m = Mode::decode(v.regs);
        let width = m.width.min(out.len());
        let out = &mut out[..width];
        self.build_colours(v, &m);
        let backdrop = self.colours[m.backdrop as usize];
        if !m.display {
            out.fill(backdrop);
            self.prev_line = Some(line);
            self.prev_dot_overflow = false;
            self.last_status = SpriteLineStatus::default();
            return;
        }

        self.sprite_line(v, line, true);

        // Horizontal scroll values (line number without the field bit in IM2).
        let hline = if m.im2 { line >> 1 } else { line };
        let hs_entry = m.hscroll_table + ((hline & m.hscroll_line_mask) as usize) * 4;
        let hs_a = v.word(hs_entry) & 0x3FF;
        let hs_b = v.word(hs_entry + 2) & 0x3FF;

        draw_plane(
            v,
            &m,
            line,
            1,
            m.plane_b,
            hs_b,
            &mut self.b[..m.width],
            0,
            m.width,
            0,
        );

        // Window span on this line.
        let (win_x0, win_x1) = window_span(&m, hline);
        let a = &mut self.a[..m.width];
        if win_x0 > 0 {
            draw_plane(v, &m, line, 0, m.plane_a, hs_a, a, 0, win_x0, 0);
        }
        if win_x1 < m.width {
            draw_plane(v, &m, line, 0, m.plane_a, hs_a, a, win_x1, m.width, 0);
            // Window bug: window on the left, plane A partly scrolled.
            let f = (hs_a & 15) as usize;
            if win_x0 == 0 && win_x1 > 0 && f != 0 {
                let end = (win_x1 + f).min(m.width);
                draw_plane(v, &m, line, 0, m.plane_a, hs_a, a, win_x1, end, 16);
            }
        }
        if win_x1 > win_x0 {
            draw_window(v, &m, line, a, win_x0, win_x1);
        }

        self.mix(&m, out);
        if m.left_blank {
            for p in out.iter_mut().take(8) {
                *p = backdrop;
            }
        }
    }

    /// Render a whole frame (every active line, unchanged state) into an
    /// [`Image`]. For tests and static screens; the console renders line by
    /// line instead. In interlace mode 2 both fields are drawn, interleaved.
    pub fn render_frame(&mut self, v: &VdpSnapshot) -> Image {
        let width = Self::active_width(v.regs);
        let height = Self::active_height(v.regs);
        let mut img = Image::new(width, height);
        self.reset_line_state();
        let im2 = v.regs[12] & 0x06 == 0x06;
        if im2 {
            // Draw each field in order so the previous-line state follows it.
            for field in 0..2u32 {
                self.reset_line_state();
                for y in (field..height).step_by(2) {
                    self.render_line(v, y as u16, img.row_mut(y));
                }
            }
        } else {
            for y in 0..height {
                self.render_line(v, y as u16, img.row_mut(y));
            }
        }
        img
    }

    fn build_colours(&mut self, v: &VdpSnapshot, m: &Mode) {
        if let Some((cram, full, sh)) = &self.colours_from {
            if cram == v.cram && *full == m.full_palette && *sh == m.shadow_highlight {
                return;
            }
        }
        self.colours_from = Some((*v.cram, m.full_palette, m.shadow_highlight));
        let mask = if m.full_palette { 0x0EEE } else { 0x0222 };
        for (i, &c) in v.cram.iter().enumerate() {
            let c = c & mask;
            self.colours[i] = cram_to_rgb_with(c, Intensity::Normal);
            if m.shadow_highlight {
                self.colours[64 + i] = cram_to_rgb_with(c, Intensity::Shadow);
                self.colours[128 + i] = cram_to_rgb_with(c, Intensity::Highlight);
            }
        }
    }

    fn mix(&self, m: &Mode, out: &mut [u32]) {
        let bd = m.backdrop as u16;
        let n = out.len();
        let (a, b, s) = (&self.a[..n], &self.b[..n], &self.s[..n]);
        let (ts, ta, tb) = (&RANKED[0], &RANKED[1], &RANKED[2]);
        if !m.shadow_highlight {
            // Two passes: colour indices (plain arithmetic the compiler can
            // vectorise), then the palette lookup.
            #[inline(always)]
            fn key(p: u8, low: u16) -> u16 {
                let p = p as u16;
                let opaque = 0u16.wrapping_sub((p & 0x0F != 0) as u16);
                (((low + 3 * (p >> 7)) << 8) | (p & 0x3F)) & opaque
            }
            let mut idx = [0u8; LINE_BUF];
            let idx = &mut idx[..n];
            for (((i, &ps), &pa), &pb) in idx.iter_mut().zip(s).zip(a).zip(b) {
                let top = key(ps, 3).max(key(pa, 2)).max(key(pb, 1)).max(bd);
                *i = top as u8;
            }
            for (o, &i) in out.iter_mut().zip(idx.iter()) {
                *o = self.colours[(i & 0x3F) as usize];
            }
            return;
        }
        const NORMAL: usize = 0;
        const SHADOW: usize = 64;
        const HIGHLIGHT: usize = 128;
        for (x, o) in out.iter_mut().enumerate() {
            let (pa, pb, ps) = (a[x], b[x], s[x]);
            let plane = ta[pa as usize].max(tb[pb as usize]).max(bd);
            let sprite = ts[ps as usize];
            // Planes are shadowed unless either has its priority bit set.
            let base = if (pa | pb) & 0x80 != 0 {
                NORMAL
            } else {
                SHADOW
            };
            let (idx, bank) = if sprite > plane {
                // The sprite pixel is on top.
                let c = (sprite & 0x3F) as usize;
                match c {
                    0x3E => (
                        (plane & 0x3F) as usize,
                        if base == SHADOW { NORMAL } else { HIGHLIGHT },
                    ),
                    0x3F => ((plane & 0x3F) as usize, SHADOW),
                    _ if ps & 0x80 != 0 || c & 0x0F == 0x0E => (c, NORMAL),
                    _ => (c, base),
                }
            } else {
                ((plane & 0x3F) as usize, base)
            };
            *o = self.colours[bank + idx];
        }
    }
}

/// Line-buffer byte -> `rank << 8 | colour` for the sprite, plane A and
/// plane B layers; the highest value is the pixel shown. Ranks: sprite high
/// 6, A high 5, B high 4, sprite low 3, A low 2, B low 1; transparent pixels
/// are 0, below the backdrop (rank 0, its colour index).
static RANKED: [[u16; 256]; 3] = build_ranked();

const fn build_ranked() -> [[u16; 256]; 3] {
    let mut t = [[0u16; 256]; 3];
    let mut layer = 0;
    while layer < 3 {
        let low = 3 - layer as u16;
        let mut p = 0;
        while p < 256 {
            if p & 0x0F != 0 {
                let rank = low + 3 * (p as u16 >> 7);
                t[layer][p] = rank << 8 | (p as u16 & 0x3F);
            }
            p += 1;
        }
        layer += 1;
    }
    t
}

/// Expand a pattern row (8 nibbles, first pixel on top) to 8 line-buffer
/// bytes `attr | colour`, mirrored when `hflip`.
#[inline]
pub(crate) fn expand_row(bits: u32, attr: u8, hflip: bool) -> [u8; 8] {
    let mut x = bits as u64;
    x = ((x & 0xFFFF_0000) << 16) | (x & 0xFFFF);
    x = ((x & 0x0000_FF00_0000_FF00) << 8) | (x & 0x0000_00FF_0000_00FF);
    x = ((x & 0x00F0_00F0_00F0_00F0) << 4) | (x & 0x000F_000F_000F_000F);
    x |= attr as u64 * 0x0101_0101_0101_0101;
    if hflip {
        x.to_le_bytes()
    } else {
        x.to_be_bytes()
    }
}

/// Copy `row[fx..fx + run]` to `dst[x..]` (a whole row in one store).
#[inline(always)]
fn put_run(dst: &mut [u8], x: usize, row: &[u8; 8], fx: usize, run: usize) {
    if run == 8 {
        dst[x..x + 8].copy_from_slice(row);
    } else {
        for (d, &p) in dst[x..x + run].iter_mut().zip(&row[fx..]) {
            *d = p;
        }
    }
}

/// Window columns `[x0, x1)` on a line (`hline` without the IM2 field bit).
fn window_span(m: &Mode, hline: u16) -> (usize, usize) {
    let vpos = (m.win_v & 0x1F) as u16 * 8;
    let in_v = if m.win_v & 0x80 != 0 {
        hline >= vpos
    } else {
        hline < vpos
    };
    if in_v {
        return (0, m.width);
    }
    let hpos = ((m.win_h & 0x1F) as usize * 16).min(m.width);
    if m.win_h & 0x80 != 0 {
        (hpos, m.width)
    } else {
        (0, hpos)
    }
}

/// Draw screen pixels `[x0, x1)` of plane `plane` (0 = A, 1 = B) into `dst`.
/// `xoff` shifts the sampled position (used for the window bug).
#[allow(clippy::too_many_arguments)]
fn draw_plane(
    v: &VdpSnapshot,
    m: &Mode,
    line: u16,
    plane: usize,
    base: usize,
    hscroll: u16,
    dst: &mut [u8],
    x0: usize,
    x1: usize,
    xoff: usize,
) {
    let (cell_shift, tile_bytes, vmask) = if m.im2 {
        (4u32, 64usize, 0x7FFu16)
    } else {
        (3, 32, 0x3FF)
    };
    let cell_h = 1usize << cell_shift;
    let wmask = m.plane_w * 8 - 1;
    let hmask = (m.plane_h << cell_shift) - 1;
    let fine = (hscroll & 15) as usize;
    let full_vs = v.vsram[plane] & vmask;
    let left_vs = if m.h40 {
        (v.vsram[38] & v.vsram[39]) & vmask
    } else {
        0
    };
    let mut x = x0;
    while x < x1 {
        let sx = x + xoff;
        let px = (sx + 0x400 - hscroll as usize) & wmask;
        let fx = px & 7;
        let run = (8 - fx).min(x1 - x);
        let vs = if !m.vscroll_2cell {
            full_vs
        } else if sx < fine {
            left_vs
        } else {
            let idx = ((sx - fine) >> 4) * 2 + plane;
            v.vsram.get(idx).copied().unwrap_or(0) & vmask
        };
        let vy = (line as usize + vs as usize) & hmask;
        let row = vy >> cell_shift;
        let fy = vy & (cell_h - 1);
        let off = ((row * m.row_stride + (px >> 3)) * 2) & 0x1FFF;
        let entry = v.word(base + off);
        let fy = if entry & 0x1000 != 0 {
            cell_h - 1 - fy
        } else {
            fy
        };
        let bits = v.pattern((entry as usize & 0x7FF) * tile_bytes + fy * 4);
        let attr = ((entry >> 8) & 0x80) as u8 | ((entry >> 9) & 0x30) as u8;
        let row = expand_row(bits, attr, entry & 0x0800 != 0);
        put_run(dst, x, &row, fx, run);
        x += run;
    }
}

/// Draw window pixels `[x0, x1)` (multiples of 8) into `dst`.
fn draw_window(v: &VdpSnapshot, m: &Mode, line: u16, dst: &mut [u8], x0: usize, x1: usize) {
    let (cell_shift, tile_bytes) = if m.im2 { (4u32, 64usize) } else { (3, 32) };
    let cell_h = 1usize << cell_shift;
    let row = (line as usize >> cell_shift) & 31;
    let fy = line as usize & (cell_h - 1);
    let cols = if m.h40 { 64 } else { 32 };
    let mut x = x0;
    while x < x1 {
        let col = x >> 3;
        let entry = v.word(m.window + (row * cols + col) * 2);
        let fy = if entry & 0x1000 != 0 {
            cell_h - 1 - fy
        } else {
            fy
        };
        let bits = v.pattern((entry as usize & 0x7FF) * tile_bytes + fy * 4);
        let attr = ((entry >> 8) & 0x80) as u8 | ((entry >> 9) & 0x30) as u8;
        let row = expand_row(bits, attr, entry & 0x0800 != 0);
        let fx = x & 7;
        let run = (8 - fx).min(x1 - x);
        put_run(dst, x, &row, fx, run);
        x += run;
    }
}
