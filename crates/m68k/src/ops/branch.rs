//! Bcc/BRA, BSR, DBcc, Scc, JMP, JSR, RTS, RTR, RTE.
//!
//! Timing (68000 UM table 8-9/8-12): Bcc taken 10, not taken 8 (.B) / 12
//! (.W); BSR 18; DBcc 10 (branch), 12 (condition true), 14 (counter
//! expired); Scc Dn 4/6, memory 8+ea; JMP 8/10/14/10/12/10/14 and JSR
//! 16/18/22/18/20/18/22 for (An)/(d16,An)/(d8,An,Xn)/.W/.L/(d16,PC)/
//! (d8,PC,Xn); RTS 16, RTR 20, RTE 20. A taken branch refills the queue
//! from the target after 2 idle cycles.

use crate::bus::{Bus, Observer};
use crate::core::{Ctx, R};
use crate::ea::Loc;

impl<B: Bus + Observer> Ctx<'_, B> {
    #[inline(always)]
    pub(crate) fn op_bcc(&mut self, op: u16) -> R<()> {
        // The instruction's address + 2 (PC is 4 past it: no fetch yet).
        let base = self.c.pc.wrapping_sub(2);
        let d8 = op as u8;
        if self.cond(op >> 8) {
            let disp = if d8 == 0 {
                self.c.irc as i16 as i32 as u32
            } else {
                d8 as i8 as i32 as u32
            };
            self.idle(2);
            let target = base.wrapping_add(disp);
            // A short backward branch may close a polling loop: let the
            // next step look at it (crate::poll).
            if d8 >= crate::poll::MIN_D8 && target != self.c.poll_reject {
                self.c.poll_head = target;
                self.c.attention = true;
            }
            self.jump(target)
        } else {
            self.idle(4);
            if d8 == 0 {
                // The displacement word skipped and the final prefetch:
                // one paired fetch when both are in the fetch window.
                if self.win_ext_prefetch().is_some() {
                    return Ok(());
                }
                self.ext()?;
            }
            self.prefetch()
        }
    }

    #[inline(always)]
    fn push_l(&mut self, v: u32) -> R<()> {
        let sp = self.c.a[7].wrapping_sub(4);
        self.c.a[7] = sp;
        // High word first (one bus call for work RAM).
        self.write::<4>(sp, v)
    }

    pub(crate) fn op_bsr(&mut self, op: u16) -> R<()> {
        let inst_pc = self.c.pc.wrapping_sub(4);
        let base = inst_pc.wrapping_add(2);
        let d8 = op as u8;
        let (disp, ret) = if d8 == 0 {
            (self.c.irc as i16 as i32 as u32, base.wrapping_add(2))
        } else {
            (d8 as i8 as i32 as u32, base)
        };
        let target = base.wrapping_add(disp);
        self.idle(2);
        self.push_l(ret)?;
        self.b.call(inst_pc, target, ret, self.c.a[7]);
        // A faulting target fetch pushes the target itself.
        self.c.pc = target.wrapping_add(2);
        self.jump(target)
    }

    #[inline(always)]
    pub(crate) fn op_dbcc(&mut self, op: u16) -> R<()> {
        if self.cond(op >> 8) {
            self.idle(4);
            if self.win_ext_prefetch().is_some() {
                return Ok(());
            }
            self.ext()?;
            return self.prefetch();
        }
        let r = (op & 7) as usize;
        let cnt = (self.c.d[r] as u16).wrapping_sub(1);
        self.idle(2);
        if cnt != 0xFFFF {
            // The instruction's address + 2 (no fetch yet).
            let target = self
                .c
                .pc
                .wrapping_sub(2)
                .wrapping_add(self.c.irc as i16 as i32 as u32);
            // A faulting target fetch leaves Dn unchanged and pushes PC.
            self.c.ir.pc_adj = 2;
            self.jump(target)?;
            self.set_dreg::<2>(r, cnt as u32);
            Ok(())
        } else {
            self.set_dreg::<2>(r, cnt as u32);
            self.idle(2);
            if self.win_ext_prefetch().is_some() {
                return Ok(());
            }
            self.ext()?;
            self.prefetch()
        }
    }

    pub(crate) fn op_scc(&mut self, op: u16) -> R<()> {
        let t = self.cond(op >> 8);
        let v = if t { 0xFF } else { 0 };
        let loc = self.resolve::<1, true>(op & 0x3F)?;
        if let Loc::D(r) = loc {
            self.set_dreg::<1>(r, v);
            self.prefetch()?;
            if t {
                self.idle(2);
            }
            return Ok(());
        }
        self.read_loc::<1>(loc)?;
        self.prefetch()?;
        self.write_loc::<1>(loc, v)
    }

    /// Target of JMP/JSR: extension words are taken from IRC without
    /// refilling it (the queue is about to be reloaded). Returns the target
    /// and the return address (the next instruction).
    fn jump_target(&mut self, op: u16) -> R<(u32, u32)> {
        let r = (op & 7) as usize;
        let pc = self.c.pc;
        Ok(match (op >> 3) & 7 {
            2 => (self.c.a[r], pc.wrapping_sub(2)),
            5 => {
                self.idle(2);
                (
                    self.c.a[r].wrapping_add(self.c.irc as i16 as i32 as u32),
                    pc,
                )
            }
            6 => {
                self.idle(6);
                (self.index(self.c.a[r], self.c.irc), pc)
            }
            _ => match r {
                0 => {
                    self.idle(2);
                    (self.c.irc as i16 as i32 as u32, pc)
                }
                1 => {
                    self.c.ir.pc_adj = -2;
                    let hi = self.ext()? as u32;
                    (hi << 16 | self.c.irc as u32, self.c.pc)
                }
                2 => {
                    self.idle(2);
                    (
                        pc.wrapping_sub(2)
                            .wrapping_add(self.c.irc as i16 as i32 as u32),
                        pc,
                    )
                }
                _ => {
                    self.idle(6);
                    (self.index(pc.wrapping_sub(2), self.c.irc), pc)
                }
            },
        })
    }

    pub(crate) fn op_jmp(&mut self, op: u16) -> R<()> {
        let (t, _) = self.jump_target(op)?;
        self.jump(t)
    }

    pub(crate) fn op_jsr(&mut self, op: u16) -> R<()> {
        // Before `jump_target`'s fetch of a (xxx).L target.
        let inst_pc = self.c.pc.wrapping_sub(4);
        let (t, ret) = self.jump_target(op)?;
        // A faulting target fetch pushes the return address.
        self.c.ir.pc_adj = (ret.wrapping_sub(self.c.pc.wrapping_sub(2))) as i8;
        // The first word at the target is fetched before the push.
        self.c.ird = self.read_prog(t)?;
        self.push_l(ret)?;
        self.b.call(inst_pc, t, ret, self.c.a[7]);
        self.c.irc = self.read_prog(t.wrapping_add(2))?;
        self.c.pc = t.wrapping_add(4);
        Ok(())
    }

    #[inline(always)]
    fn pop_w(&mut self) -> R<u16> {
        let sp = self.c.a[7];
        let v = self.read_w(sp)?;
        self.c.a[7] = sp.wrapping_add(2);
        Ok(v)
    }

    #[inline(always)]
    fn pop_l(&mut self) -> R<u32> {
        let sp = self.c.a[7];
        // High word first (one bus call for work RAM).
        let v = self.read::<4>(sp)?;
        self.c.a[7] = sp.wrapping_add(4);
        Ok(v)
    }

    pub(crate) fn op_rts(&mut self) -> R<()> {
        let t = self.pop_l()?;
        // The pops leave PC 4 past the instruction.
        self.b.ret(self.c.pc.wrapping_sub(4), t, self.c.a[7]);
        self.jump(t)
    }

    pub(crate) fn op_rtr(&mut self) -> R<()> {
        let ccr = self.pop_w()?;
        let t = self.pop_l()?;
        self.set_ccr(ccr);
        // The pops leave PC 4 past the instruction.
        self.b.ret(self.c.pc.wrapping_sub(4), t, self.c.a[7]);
        self.jump(t)
    }

    pub(crate) fn op_rte(&mut self) -> R<()> {
        if !self.supervisor() {
            return self.privilege();
        }
        let sr = self.pop_w()?;
        let t = self.pop_l()?;
        self.set_sr(sr);
        // The pops leave PC 4 past the instruction.
        self.b.ret(self.c.pc.wrapping_sub(4), t, self.c.a[7]);
        self.jump(t)
    }
}
