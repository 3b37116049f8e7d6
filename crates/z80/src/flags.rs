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
        if parity && v.count_ones().is_multiple_of(2) {
            f |= FLAG_PV;
        }
        t[i] = f;
        i += 1;
    }
    t
}
/// Flags of `INC r` (all but C) by the operand: S/Z/X/Y of the result,
/// H on a carry out of bit 3, P/V when 0x7F becomes 0x80 (Young, "8-bit
/// arithmetic"); N clear.
const fn build_incdec(dec: bool) -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let v = i as u8;
        let r = if dec {
            v.wrapping_sub(1)
        } else {
            v.wrapping_add(1)
        };
        let mut f = r & (FLAG_S | XY);
        if r == 0 {
            f |= FLAG_Z;
        }
        f |= (v ^ r) & FLAG_H;
        if dec {
            f |= FLAG_N;
            if v == 0x80 {
                f |= FLAG_PV;
            }
        } else if v == 0x7F {
            f |= FLAG_PV;
        }
        t[i] = f;
        i += 1;
    }
    t
}
/// H, P/V (overflow) and C of an 8-bit add or subtract, by the carry vector
/// `(a ^ v ^ r) & 0x1FF` (`r` the 9-bit result): bit k of it is the carry
/// (or borrow) into bit k, so bit 4 is H, bit 8 is C, and overflow is the
/// carry into bit 7 differing from the carry out of it (Young, "8-bit
/// arithmetic": V set when the signed result is out of range). One lookup
/// instead of three flag computations in `ADD`/`ADC`/`SUB`/`SBC`/`CP`.
const fn build_hvc() -> [u8; 512] {
    let mut t = [0u8; 512];
    let mut i = 0;
    while i < 512 {
        let mut f = (i as u8) & FLAG_H;
        f |= ((i >> 8) & 1) as u8;
        if ((i >> 8) ^ (i >> 7)) & 1 != 0 {
            f |= FLAG_PV;
        }
        t[i] = f;
        i += 1;
    }
    t
}
/// H, P/V and C of an 8-bit add or subtract by its carry vector (see
/// `build_hvc`).
pub(crate) const HVC: [u8; 512] = build_hvc();
/// Flags of `INC` by operand, C excluded (the instruction keeps it).
pub(crate) const INC_FLAGS: [u8; 256] = build_incdec(false);
/// Flags of `DEC` by operand, C excluded (the instruction keeps it).
pub(crate) const DEC_FLAGS: [u8; 256] = build_incdec(true);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The tables against the flag formula of each bit.
    #[test]
    fn inc_dec_tables_match_the_formula() {
        for v in 0..=255u8 {
            let r = v.wrapping_add(1);
            let f = SZXY[r as usize] | ((v ^ r) & FLAG_H) | if v == 0x7F { FLAG_PV } else { 0 };
            assert_eq!(INC_FLAGS[v as usize], f, "inc {v:02X}");
            let r = v.wrapping_sub(1);
            let f = SZXY[r as usize]
                | ((v ^ r) & FLAG_H)
                | FLAG_N
                | if v == 0x80 { FLAG_PV } else { 0 };
            assert_eq!(DEC_FLAGS[v as usize], f, "dec {v:02X}");
        }
    }
}
