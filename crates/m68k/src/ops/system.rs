//! TRAP, TRAPV, CHK, LINK, UNLK, MOVE USP, MOVE from/to SR and CCR,
//! RESET, STOP, TAS.
//!
//! Timing (68000 UM tables 8-12/8-14): TRAP 34, TRAPV 4 (34 when taken),
//! CHK 10+ea (40+ea when taken), LINK 16, UNLK 12, MOVE USP 4, MOVE from SR
//! 6 / 8+ea, MOVE to SR/CCR 12+ea, RESET 132, STOP 4, TAS 4 / 14+ea.

use crate::bus::{Bus, ExceptionKind, Observer};
use crate::core::{Ctx, C, N, R, V, Z};
use crate::ea::Loc;

impl<B: Bus + Observer> Ctx<'_, B> {
    pub(crate) fn op_trap(&mut self, op: u16) -> R<()> {
        let start = self.c.cycles;
        self.idle(4);
        let n = (op & 15) as u8;
        let pc = self.c.pc.wrapping_sub(2);
        let r = self.exception(ExceptionKind::Trap(n), 32 + n, pc, start);
        self.taken(r)
    }

    pub(crate) fn op_trapv(&mut self) -> R<()> {
        if self.c.sr & V == 0 {
            return self.prefetch();
        }
        let start = self.c.cycles;
        let pc = self.c.pc.wrapping_sub(2);
        // Supervisor mode is entered before the prefetch (it runs with the
        // supervisor program function code).
        let old = self.enter_supervisor();
        self.prefetch()?;
        let r = self.exception_frame(ExceptionKind::Trapv, 7, pc, old, start);
        self.taken(r)
    }

    pub(crate) fn op_chk(&mut self, op: u16) -> R<()> {
        let src = self.read_ea::<2>(op & 0x3F)? as u16 as i16;
        let d = self.c.d[((op >> 9) & 7) as usize] as u16 as i16;
        let mut f = self.c.sr & !(N | Z | V | C);
        if d < 0 {
            f |= N;
        }
        let start = self.c.cycles;
        if d < 0 || d > src {
            self.c.sr = f;
            // The microcode subtracts the bound in 16 bits: a positive
            // difference costs 8 idle cycles, otherwise 10 (test collection).
            self.idle(if d > src || d.wrapping_sub(src) > 0 {
                8
            } else {
                10
            });
            let pc = self.c.pc.wrapping_sub(2);
            let r = self.exception(ExceptionKind::Chk, 6, pc, start);
            return self.taken(r);
        }
        self.c.sr = f;
        self.idle(6);
        self.prefetch()
    }

    pub(crate) fn op_link(&mut self, op: u16) -> R<()> {
        let r = (op & 7) as usize;
        let d = self.ext()? as i16 as i32 as u32;
        // LINK A7 pushes the value before the decrement.
        let v = self.c.a[r];
        let sp = self.c.a[7].wrapping_sub(4);
        self.c.a[7] = sp;
        self.write::<4>(sp, v)?;
        self.c.a[r] = sp;
        self.c.a[7] = self.c.a[7].wrapping_add(d);
        self.prefetch()
    }

    pub(crate) fn op_unlk(&mut self, op: u16) -> R<()> {
        let r = (op & 7) as usize;
        let sp = self.c.a[r];
        self.c.ir.pc_adj = 2;
        let v = self.read::<4>(sp)?;
        self.c.a[7] = sp.wrapping_add(4);
        self.c.a[r] = v;
        self.prefetch()
    }

    pub(crate) fn op_move_usp(&mut self, op: u16, to_usp: bool) -> R<()> {
        if !self.supervisor() {
            return self.privilege();
        }
        let r = (op & 7) as usize;
        if to_usp {
            self.c.other_sp = self.c.a[r];
        } else {
            self.c.a[r] = self.c.other_sp;
        }
        self.prefetch()
    }

    pub(crate) fn op_move_from_sr(&mut self, op: u16) -> R<()> {
        let loc = self.resolve::<2, true>(op & 0x3F)?;
        let sr = self.c.sr as u32;
        if let Loc::D(r) = loc {
            self.set_dreg::<2>(r, sr);
            self.prefetch()?;
            self.idle(2);
            return Ok(());
        }
        self.read_loc::<2>(loc)?;
        self.prefetch()?;
        self.write_loc::<2>(loc, sr)
    }

    /// MOVE to SR (privileged) / CCR: 12+ea; the queue is refetched.
    pub(crate) fn op_move_to_sr(&mut self, op: u16, sr: bool) -> R<()> {
        if sr && !self.supervisor() {
            return self.privilege();
        }
        let v = self.read_ea::<2>(op & 0x3F)? as u16;
        if sr {
            self.set_sr(v);
        } else {
            self.set_ccr(v);
        }
        self.idle(4);
        let pc = self.c.pc.wrapping_sub(2);
        self.c.irc = self.read_prog(pc)?;
        self.prefetch()
    }

    pub(crate) fn op_reset(&mut self) -> R<()> {
        if !self.supervisor() {
            return self.privilege();
        }
        self.b.reset_instruction(self.c.cycles);
        self.idle(128);
        self.prefetch()
    }

    /// STOP #imm: loads SR and waits for an interrupt; the queue is left
    /// as it is (the tests show PC and prefetch unchanged).
    pub(crate) fn op_stop(&mut self) -> R<()> {
        if !self.supervisor() {
            return self.privilege();
        }
        let v = self.c.irc;
        self.set_sr(v);
        self.idle(4);
        self.c.stopped = true;
        self.c.attention = true;
        Ok(())
    }

    /// TAS: read-modify-write; the write is suppressed when the bus says so.
    pub(crate) fn op_tas(&mut self, op: u16) -> R<()> {
        let loc = self.resolve::<1, true>(op & 0x3F)?;
        let v = self.read_loc::<1>(loc)?;
        self.set_logic::<1>(v);
        if let Loc::D(r) = loc {
            self.set_dreg::<1>(r, v | 0x80);
            return self.prefetch();
        }
        self.idle(2);
        if self.b.tas_writeback() {
            self.write_loc::<1>(loc, v | 0x80)?;
        } else {
            self.idle(4);
        }
        self.prefetch()
    }
}
