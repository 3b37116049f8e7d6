//! ASL/ASR/LSL/LSR/ROXL/ROXR/ROL/ROR, register and memory forms.
//!
//! Timing (68000 UM table 8-8): register forms 6+2n (byte/word) and 8+2n
//! (long) with n the shift count (Dn count taken modulo 64); memory forms
//! (word, one bit) 8+ea. The prefetch comes first, then the idle time.

use crate::bus::{Bus, Observer};
use crate::core::{mask, msb, Ctx, C, N, R, V, X, Z};
use crate::decode::ShK;

impl<B: Bus + Observer> Ctx<'_, B> {
    /// Shift `v` (S bytes) by `n` (0-63), setting flags; returns the result.
    #[inline(always)]
    fn shift<const S: u32>(&mut self, k: ShK, left: bool, v: u32, n: u32) -> u32 {
        let bits = S * 8;
        let m = mask(S);
        let top = msb(S);
        let v = v & m;
        let xf = self.c.sr & X;
        let mut f = self.c.sr & 0xFF00;
        let r: u32;
        match (k, left) {
            (ShK::As, true) => {
                if n == 0 {
                    r = v;
                    f |= xf;
                } else {
                    // V: the sign bit changed at any time during the shift.
                    let wide = (v as u64) << n.min(40);
                    r = wide as u32 & m;
                    let last = if n <= bits { (v >> (bits - n)) & 1 } else { 0 };
                    if last != 0 {
                        f |= C | X;
                    }
                    // bits shifted through the sign position: top n+1 bits
                    // of the original must all be equal.
                    if n >= bits {
                        if v != 0 {
                            f |= V;
                        }
                    } else {
                        let span = n + 1;
                        let hm = (m >> (bits - span)) << (bits - span);
                        let hi = v & hm;
                        if hi != 0 && hi != hm {
                            f |= V;
                        }
                    }
                }
            }
            (ShK::As, false) => {
                let sv = crate::core::sext(v, S) as i32;
                if n == 0 {
                    r = v;
                    f |= xf;
                } else {
                    r = (sv >> n.min(31)) as u32 & m;
                    let last = if n <= bits {
                        ((sv >> (n - 1).min(31)) & 1) as u32
                    } else {
                        (v >> (bits - 1)) & 1
                    };
                    if last != 0 {
                        f |= C | X;
                    }
                }
            }
            (ShK::Ls, true) => {
                if n == 0 {
                    r = v;
                    f |= xf;
                } else {
                    r = if n >= bits { 0 } else { (v << n) & m };
                    let last = if n <= bits { (v >> (bits - n)) & 1 } else { 0 };
                    if last != 0 {
                        f |= C | X;
                    }
                }
            }
            (ShK::Ls, false) => {
                if n == 0 {
                    r = v;
                    f |= xf;
                } else {
                    r = if n >= bits { 0 } else { v >> n };
                    let last = if n <= bits { (v >> (n - 1)) & 1 } else { 0 };
                    if last != 0 {
                        f |= C | X;
                    }
                }
            }
            (ShK::Ro, _) => {
                if n == 0 {
                    r = v;
                    f |= xf;
                } else {
                    let s = n % bits;
                    r = if s == 0 {
                        v
                    } else if left {
                        ((v << s) | (v >> (bits - s))) & m
                    } else {
                        ((v >> s) | (v << (bits - s))) & m
                    };
                    f |= xf;
                    let cbit = if left { r & 1 } else { (r >> (bits - 1)) & 1 };
                    if cbit != 0 {
                        f |= C;
                    }
                }
            }
            (ShK::Rox, _) => {
                // Rotate through X over bits+1 positions.
                let s = n % (bits + 1);
                let mut x = (xf != 0) as u64;
                let mut w = v as u64;
                let total = bits as u64 + 1;
                if s != 0 {
                    let full = (x << bits) | w;
                    let fm = (1u64 << total) - 1;
                    let rot = if left {
                        ((full << s) | (full >> (total - s as u64))) & fm
                    } else {
                        ((full >> s) | (full << (total - s as u64))) & fm
                    };
                    x = rot >> bits;
                    w = rot & m as u64;
                }
                r = w as u32;
                if x != 0 {
                    f |= X | C;
                }
            }
        }
        if r & top != 0 {
            f |= N;
        }
        if r == 0 {
            f |= Z;
        }
        self.c.sr = f;
        r
    }

    pub(crate) fn op_shift_reg<const S: u32>(&mut self, op: u16, k: ShK) -> R<()> {
        self.shift_reg_inline::<S>(op, k)
    }

    /// [`Self::op_shift_reg`]'s body, inlined into the dispatch for the
    /// word and long ASx and LSx (`k` a constant there, so that
    /// [`Self::shift`] folds to that kind).
    #[inline(always)]
    pub(crate) fn shift_reg_inline<const S: u32>(&mut self, op: u16, k: ShK) -> R<()> {
        let dr = (op & 7) as usize;
        let cnt = ((op >> 9) & 7) as usize;
        let n = if op & 0x20 != 0 {
            self.c.d[cnt] & 63
        } else if cnt == 0 {
            8
        } else {
            cnt as u32
        };
        let left = op & 0x0100 != 0;
        let v = self.dreg::<S>(dr);
        let r = self.shift::<S>(k, left, v, n);
        self.set_dreg::<S>(dr, r);
        self.prefetch()?;
        self.idle(if S == 4 { 4 } else { 2 } + 2 * n);
        Ok(())
    }

    pub(crate) fn op_shift_mem(&mut self, op: u16, k: ShK) -> R<()> {
        let loc = self.resolve::<2, true>(op & 0x3F)?;
        let v = self.read_loc::<2>(loc)?;
        let r = self.shift::<2>(k, op & 0x0100 != 0, v, 1);
        self.prefetch()?;
        self.write_loc::<2>(loc, r)
    }
}
