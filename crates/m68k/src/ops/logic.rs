//! NOT and the immediate logic operations on CCR/SR.
//! (AND/OR/EOR share the generic ALU paths in arith.rs.)
//!
//! Timing: 68000 UM table 8-6 (NOT: Dn 4 / 6, memory 8+ea / 12+ea) and
//! table 8-12 (ORI/ANDI/EORI to CCR/SR: 20).

use crate::bus::{Bus, Observer};
use crate::core::{mask, Ctx, R};
use crate::decode::Alu;
use crate::ea::Loc;

impl<B: Bus + Observer> Ctx<'_, B> {
    pub(crate) fn op_not<const S: u32>(&mut self, op: u16) -> R<()> {
        let loc = self.resolve::<S, true>(op & 0x3F)?;
        let d = self.read_loc::<S>(loc)?;
        let v = !d & mask(S);
        self.set_logic::<S>(v);
        if let Loc::D(r) = loc {
            self.set_dreg::<S>(r, v);
            self.prefetch()?;
            if S == 4 {
                self.idle(2);
            }
            return Ok(());
        }
        self.prefetch()?;
        self.write_loc::<S>(loc, v)
    }

    /// ORI/ANDI/EORI #imm to CCR or SR (SR forms are privileged).
    pub(crate) fn op_logic_sr(&mut self, a: Alu, sr: bool) -> R<()> {
        if sr && !self.supervisor() {
            return self.privilege();
        }
        let imm = self.ext()?;
        let cur = self.c.sr;
        let v = match a {
            Alu::And => cur & imm,
            Alu::Or => cur | imm,
            _ => cur ^ imm,
        };
        if sr {
            self.set_sr(v);
        } else {
            self.set_ccr(v);
        }
        self.idle(8);
        // The queue is refilled from the current PC after the change.
        let pc = self.c.pc.wrapping_sub(2);
        self.c.irc = self.read_prog(pc)?;
        self.prefetch()
    }
}
