//! Flag bits and the precomputed S/Z/X/Y(/P) result tables.

pub const FLAG_C: u8 = 0x01;
pub const FLAG_N: u8 = 0x02;
pub const FLAG_PV: u8 = 0x04;
pub const FLAG_X: u8 = 0x08;
pub const FLAG_H: u8 = 0x10;
pub const FLAG_Y: u8 = 0x20;
pub const FLAG_Z: u8 = 0x40;
pub const FLAG_S: u8 = 0x80;
pub(crate) const XY: u8 = FLAG_X | FLAG_Y;

const fn build_szxy(parity: bool) -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let v = i as u8;
        let mut f = v & (FLAG_S | XY);
        if v == 0 {
            f |= FLAG_Z;
        }
        if parity && v.count_ones() % 2 == 0 {
            f |= FLAG_PV;
        }
        t[i] = f;
        i += 1;
    }
    t
}
/// S, Z, X, Y of a result.
pub(crate) const SZXY: [u8; 256] = build_szxy(false);
/// S, Z, X, Y and even parity of a result.
pub(crate) const SZPXY: [u8; 256] = build_szxy(true);

#[inline(always)]
pub(crate) fn parity(v: u8) -> u8 {
    if v.count_ones() & 1 == 0 {
        FLAG_PV
    } else {
        0
    }
}
