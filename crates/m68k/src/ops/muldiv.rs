//! MULU, MULS, DIVU, DIVS with data-dependent timing.
//!
//! MULU: 38+2n, n = number of ones in the source; MULS: 38+2n, n = number
//! of 01/10 pairs in the source with a 0 appended below bit 0 (68000 UM
//! table 8-7). DIVU/DIVS: the per-bit microcode loop as analysed by Jorge
//! Cwik ("68000 division timing", 2006; also used by Moira and CLK):
//! DIVU 76..136, DIVS 120..156 cycles plus EA; overflow detected early.

use crate::bus::{Bus, ExceptionKind, Observer};
use crate::core::{Ctx, C, N, R, V, Z};

/// DIVU cycles (register source, including the final prefetch).
pub(crate) fn divu_cycles(dividend: u32, divisor: u16) -> u32 {
    let divisor = divisor as u32;
    if (dividend >> 16) >= divisor {
        return 10;
    }
    let mut mcycles = 38u32;
    let hdivisor = divisor << 16;
    let mut dividend = dividend;
    for _ in 0..15 {
        if (dividend as i32) < 0 {
            dividend <<= 1;
            dividend = dividend.wrapping_sub(hdivisor);
        } else {
            dividend <<= 1;
            if dividend >= hdivisor {
                dividend = dividend.wrapping_sub(hdivisor);
                mcycles += 1;
            } else {
                mcycles += 2;
            }
        }
    }
    mcycles * 2
}

/// DIVS cycles (register source, including the final prefetch).
pub(crate) fn divs_cycles(dividend: i32, divisor: i16) -> u32 {
    let mut mcycles = 6u32;
    if dividend < 0 {
        mcycles += 1;
    }
    let adividend = dividend.unsigned_abs();
    let adivisor = (divisor as i32).unsigned_abs();
    if (adividend >> 16) >= adivisor {
        return (mcycles + 2) * 2;
    }
    mcycles += 55;
    if divisor >= 0 {
        if dividend >= 0 {
            mcycles -= 1;
        } else {
            mcycles += 1;
        }
    }
    let mut aquot = adividend / adivisor;
    for _ in 0..15 {
        if (aquot as i16) >= 0 {
            mcycles += 1;
        }
        aquot <<= 1;
    }
    mcycles * 2
}

impl<B: Bus + Observer> Ctx<'_, B> {
    pub(crate) fn op_mulu(&mut self, op: u16) -> R<()> {
        let s = self.read_ea::<2>(op & 0x3F)?;
        let r = ((op >> 9) & 7) as usize;
        let v = (self.c.d[r] & 0xFFFF).wrapping_mul(s);
        self.c.d[r] = v;
        self.set_logic::<4>(v);
        self.prefetch()?;
        self.idle(34 + 2 * s.count_ones());
        Ok(())
    }

    pub(crate) fn op_muls(&mut self, op: u16) -> R<()> {
        let s = self.read_ea::<2>(op & 0x3F)?;
        let r = ((op >> 9) & 7) as usize;
        let v = ((self.c.d[r] as i16 as i32).wrapping_mul(s as i16 as i32)) as u32;
        self.c.d[r] = v;
        self.set_logic::<4>(v);
        self.prefetch()?;
        let n = ((s ^ (s << 1)) & 0xFFFF).count_ones();
        self.idle(34 + 2 * n);
        Ok(())
    }

    /// Division by zero: 8 idle cycles, then the exception; the pushed PC is
    /// that of the next instruction.
    fn div_zero(&mut self) -> R<()> {
        let start = self.c.cycles;
        self.c.sr &= !(N | Z | V | C);
        self.idle(8);
        let pc = self.c.pc.wrapping_sub(2);
        let r = self.exception(ExceptionKind::ZeroDivide, 5, pc, start);
        self.taken(r)
    }

    pub(crate) fn op_divu(&mut self, op: u16) -> R<()> {
        let s = self.read_ea::<2>(op & 0x3F)?;
        if s == 0 {
            return self.div_zero();
        }
        let r = ((op >> 9) & 7) as usize;
        let d = self.c.d[r];
        let cyc = divu_cycles(d, s as u16);
        let q = d / s;
        let rem = d % s;
        let mut f = self.c.sr & 0xFF10;
        if q > 0xFFFF {
            f |= V | N;
        } else {
            self.c.d[r] = rem << 16 | q;
            if q & 0x8000 != 0 {
                f |= N;
            }
            if q == 0 {
                f |= Z;
            }
        }
        self.c.sr = f;
        self.idle(cyc - 4);
        self.prefetch()
    }

    pub(crate) fn op_divs(&mut self, op: u16) -> R<()> {
        let s = self.read_ea::<2>(op & 0x3F)? as u16 as i16;
        if s == 0 {
            return self.div_zero();
        }
        let r = ((op >> 9) & 7) as usize;
        let d = self.c.d[r] as i32;
        let cyc = divs_cycles(d, s);
        let q = (d as i64) / (s as i64);
        let rem = (d as i64) % (s as i64);
        let mut f = self.c.sr & 0xFF10;
        if q > i16::MAX as i64 || q < i16::MIN as i64 {
            f |= V | N;
        } else {
            self.c.d[r] = (rem as u32) << 16 | (q as u32 & 0xFFFF);
            if q < 0 {
                f |= N;
            }
            if q == 0 {
                f |= Z;
            }
        }
        self.c.sr = f;
        self.idle(cyc - 4);
        self.prefetch()
    }
}
