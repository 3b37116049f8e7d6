//! ABCD, SBCD, NBCD.
//!
//! Timing (68000 UM table 8-10/8-6): ABCD/SBCD Dn 6, -(An) 18; NBCD Dn 6,
//! memory 8+ea. Flag behaviour for invalid BCD digits and V follows the
//! published analyses of the real chip (the undocumented N and V results
//! are those of the binary correction step).

use crate::bus::{Bus, Observer};
use crate::core::{Ctx, C, N, R, V, X, Z};
use crate::ea::Loc;

impl<B: Bus + Observer> Ctx<'_, B> {
    /// d + s + X in BCD; sets X C N V, clears Z if non-zero. The low digit
    /// is corrected first, then the high digits are added and the carry
    /// decided on the corrected sum (V: the correction turned bit 7 on
    /// relative to the binary sum).
    fn bcd_add(&mut self, s: u32, d: u32) -> u32 {
        let x = ((self.c.sr & X) != 0) as u32;
        let bin = s + d + x;
        let mut r = (s & 0x0F) + (d & 0x0F) + x;
        if r > 9 {
            r += 6;
        }
        r += (s & 0xF0) + (d & 0xF0);
        // Decimal carry out of the high digit.
        let carry = r > 0x9F;
        if carry {
            r = r.wrapping_sub(0xA0);
        }
        let r8 = r & 0xFF;
        let mut f = self.c.sr & (0xFF00 | Z);
        if carry {
            f |= X | C;
        }
        if r8 & 0x80 != 0 {
            f |= N;
        }
        if !bin & r8 & 0x80 != 0 {
            f |= V;
        }
        if r8 != 0 {
            f &= !Z;
        }
        self.c.sr = f;
        r8
    }

    /// d - s - X in BCD.
    fn bcd_sub(&mut self, s: u32, d: u32) -> u32 {
        let x = ((self.c.sr & X) != 0) as u32;
        let bin = d.wrapping_sub(s).wrapping_sub(x);
        let mut r = bin;
        let low = (d & 0x0F).wrapping_sub(s & 0x0F).wrapping_sub(x);
        if low & 0x10 != 0 {
            r = r.wrapping_sub(6);
        }
        let borrow = bin & 0x100 != 0;
        if borrow {
            r = r.wrapping_sub(0x60);
        }
        let carry = borrow || (low & 0x10 != 0 && (bin & 0xFF) < 6);
        let r8 = r & 0xFF;
        let mut f = self.c.sr & (0xFF00 | Z);
        if carry {
            f |= X | C;
        }
        if r8 & 0x80 != 0 {
            f |= N;
        }
        if bin & !r8 & 0x80 != 0 {
            f |= V;
        }
        if r8 != 0 {
            f &= !Z;
        }
        self.c.sr = f;
        r8
    }

    pub(crate) fn op_bcd(&mut self, op: u16, mem: bool, sub: bool) -> R<()> {
        let rx = ((op >> 9) & 7) as usize;
        let ry = (op & 7) as usize;
        if !mem {
            let s = self.dreg::<1>(ry);
            let d = self.dreg::<1>(rx);
            let r = if sub {
                self.bcd_sub(s, d)
            } else {
                self.bcd_add(s, d)
            };
            self.set_dreg::<1>(rx, r);
            self.prefetch()?;
            self.idle(2);
            return Ok(());
        }
        self.idle(2);
        let s = self.read_predec::<1>(ry)?;
        let d = self.read_predec::<1>(rx)?;
        let r = if sub {
            self.bcd_sub(s, d)
        } else {
            self.bcd_add(s, d)
        };
        self.prefetch()?;
        let a = self.c.a[rx];
        self.write_b(a, r as u8)
    }

    pub(crate) fn op_nbcd(&mut self, op: u16) -> R<()> {
        let loc = self.resolve::<1, true>(op & 0x3F)?;
        let d = self.read_loc::<1>(loc)?;
        let r = self.bcd_sub(d, 0);
        if let Loc::D(rr) = loc {
            self.set_dreg::<1>(rr, r);
            self.prefetch()?;
            self.idle(2);
            return Ok(());
        }
        self.prefetch()?;
        self.write_loc::<1>(loc, r)
    }
}
