//! CRAM colour to 24-bit RGB conversion.
//!
//! A CRAM entry is `0000 BBB0 GGG0 RRR0`: three bits per channel (9-bit colour).
//! Shadow/highlight mode gives each channel one of 15 levels on a 4-bit scale
//! (the usual description of the VDP's output DAC, e.g. Charles MacDonald's
//! genvdp.txt and plutiedev "Shadow and highlight"):
//!
//! | intensity | 4-bit level for channel value `c` (0..7) |
//! |-----------|------------------------------------------|
//! | normal    | `2c`      (0, 2, ..., 14)                |
//! | shadow    | `c`       (0 ..= 7, half brightness)     |
//! | highlight | `c + 7`   (7 ..= 14, half plus half)     |
//!
//! **Mapping to 8 bits (chosen to match the reference screenshots exactly).**
//! The pictures in `shared/reference/*.png` come from Genesis Plus GX through an
//! RGB565 frame buffer, widened to 8 bits. Their channel values are
//! red/blue `0, 33, 66, 99, 140, 173, 206, 239` and green
//! `0, 32, 69, 101, 138, 170, 207, 239` (measured over all 8 files). That is
//! exactly: 4-bit level `L` -> 5 bits `(L << 1) | (L >> 3)` (red, blue) or
//! 6 bits `(L << 2) | (L >> 2)` (green), then the usual bit-replicating widening
//! to 8 bits (`(v5 << 3) | (v5 >> 2)`, `(v6 << 2) | (v6 >> 4)`). We use that
//! mapping for all three intensities so our pictures can be compared with the
//! reference byte for byte; the test `render_reference_colours` checks every
//! pixel of the reference pictures is a colour this mapping can produce.

/// Brightness a pixel is shown at (shadow/highlight mode, VDP register 12 bit 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intensity {
    Normal = 0,
    Shadow = 1,
    Highlight = 2,
}

/// 8-bit red/blue value for a 4-bit output level (0..=14).
const fn level_rb(level: u32) -> u32 {
    let v5 = (level << 1) | (level >> 3);
    (v5 << 3) | (v5 >> 2)
}

/// 8-bit green value for a 4-bit output level (0..=14).
const fn level_g(level: u32) -> u32 {
    let v6 = (level << 2) | (level >> 2);
    (v6 << 2) | (v6 >> 4)
}

const fn build_table(green: bool) -> [u8; 16] {
    let mut t = [0u8; 16];
    let mut i = 0;
    while i < 16 {
        t[i] = if green {
            level_g(i as u32)
        } else {
            level_rb(i as u32)
        } as u8;
        i += 1;
    }
    t
}

/// 4-bit level -> 8-bit value, red and blue channels.
pub const LEVEL_RB: [u8; 16] = build_table(false);
/// 4-bit level -> 8-bit value, green channel.
pub const LEVEL_G: [u8; 16] = build_table(true);

#[inline]
fn level(c: u32, intensity: Intensity) -> usize {
    (match intensity {
        Intensity::Normal => c << 1,
        Intensity::Shadow => c,
        Intensity::Highlight => c + 7,
    }) as usize
}

/// Convert a CRAM word to `0x00RRGGBB` at the given intensity.
#[inline]
pub fn cram_to_rgb_with(cram: u16, intensity: Intensity) -> u32 {
    let c = cram as u32;
    let r = (c >> 1) & 7;
    let g = (c >> 5) & 7;
    let b = (c >> 9) & 7;
    (LEVEL_RB[level(r, intensity)] as u32) << 16
        | (LEVEL_G[level(g, intensity)] as u32) << 8
        | LEVEL_RB[level(b, intensity)] as u32
}

/// Convert a CRAM word to `0x00RRGGBB` at normal intensity.
#[inline]
pub fn cram_to_rgb(cram: u16) -> u32 {
    cram_to_rgb_with(cram, Intensity::Normal)
}
