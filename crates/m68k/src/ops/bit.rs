//! BTST/BCHG/BCLR/BSET with a register or immediate bit number.
//!
//! Timing (68000 UM table 8-11): BTST Dn,Dn 6, #,Dn 10, `Dn,<ea>` 4+ea,
//! `#,<ea>` 8+ea; BCHG/BSET Dn,Dn 8 (6 for bit numbers below 16), BCLR 10
//! (8); immediate forms 4 more; memory forms 8+ea / 12+ea.

use crate::bus::{Bus, Observer};
use crate::core::{Ctx, R, Z};
use crate::decode::BitK;
use crate::ea::Loc;

impl<B: Bus + Observer> Ctx<'_, B> {
    pub(crate) fn op_bit(&mut self, op: u16, k: BitK, dynamic: bool) -> R<()> {
        // `#n`,Dn: the bit number's word and the final prefetch both in
        // the fetch window take one paired fetch (nothing between them
        // can fault or be seen: the register update only).
        let paired = if !dynamic && (op >> 3) & 7 == 0 {
            self.win_ext_prefetch()
        } else {
            None
        };
        let bit = if dynamic {
            self.c.d[((op >> 9) & 7) as usize]
        } else if let Some(w) = paired {
            w as u32
        } else {
            self.ext()? as u32
        };
        if (op >> 3) & 7 == 0 {
            let r = (op & 7) as usize;
            let b = bit & 31;
            let v = self.c.d[r];
            self.set_z(v & (1 << b) == 0);
            let nv = match k {
                BitK::Tst => v,
                BitK::Chg => v ^ (1 << b),
                BitK::Clr => v & !(1 << b),
                BitK::Set => v | (1 << b),
            };
            self.c.d[r] = nv;
            if paired.is_none() {
                self.prefetch()?;
            }
            let extra = match k {
                BitK::Tst => 2,
                BitK::Clr => 4,
                _ => 2,
            } + if b >= 16 && k != BitK::Tst { 2 } else { 0 };
            self.idle(extra);
            return Ok(());
        }
        let loc = self.resolve::<1, true>(op & 0x3F)?;
        let b = bit & 7;
        let v = self.read_loc::<1>(loc)?;
        self.set_z(v & (1 << b) == 0);
        let nv = match k {
            BitK::Tst => v,
            BitK::Chg => v ^ (1 << b),
            BitK::Clr => v & !(1 << b),
            BitK::Set => v | (1 << b),
        };
        self.prefetch()?;
        if matches!(loc, Loc::Imm(_)) {
            // BTST Dn,#imm: 10 cycles.
            self.idle(2);
        } else if k != BitK::Tst {
            self.write_loc::<1>(loc, nv)?;
        }
        Ok(())
    }

    #[inline(always)]
    fn set_z(&mut self, z: bool) {
        if z {
            self.c.sr |= Z;
        } else {
            self.c.sr &= !Z;
        }
    }
}
