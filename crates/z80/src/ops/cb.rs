//! CB-prefixed and DDCB/FDCB-prefixed opcodes.

use crate::bus::{Bus, Hot};
use crate::Z80;

impl Z80 {
    /// CB-prefixed opcodes (the opcode fetch is a second M1 cycle).
    #[inline(always)]
    pub(crate) fn exec_cb<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut Hot) {
        let op = self.fetch_op(bus, ts);
        // One arm per opcode (`by_opcode`), as the unprefixed table: the
        // register index, bit number and operation are constants in each (#17).
        macro_rules! arm {
            ($n:literal) => {
                self.cb_op::<$n, Bs>(bus, ts)
            };
        }
        by_opcode!(op, arm)
    }

    /// One CB-prefixed opcode, its second M1 fetch made.
    #[inline(always)]
    fn cb_op<const OP: u8, Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut Hot) {
        let op = OP;
        let y = (op >> 3) & 7;
        let z = op & 7;
        if z == 6 {
            let a = self.hl();
            let v = self.rd(bus, ts, a);
            ts.t += 1;
            match op >> 6 {
                0 => {
                    let r = self.rot(y, v);
                    self.wr(bus, ts, a, r);
                }
                1 => self.bit_flags(y, v, (self.memptr >> 8) as u8),
                2 => self.wr(bus, ts, a, v & !(1 << y)),
                _ => self.wr(bus, ts, a, v | (1 << y)),
            }
        } else {
            let v = self.reg[Self::ri::<0>(z)];
            match op >> 6 {
                0 => self.reg[Self::ri::<0>(z)] = self.rot(y, v),
                1 => self.bit_flags(y, v, v),
                2 => self.reg[Self::ri::<0>(z)] = v & !(1 << y),
                _ => self.reg[Self::ri::<0>(z)] = v | (1 << y),
            }
        }
    }

    /// DDCB/FDCB: `DD CB d op`; d and op are plain reads, not M1 cycles.
    #[inline(always)]
    pub(crate) fn exec_xycb<const P: u8, Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut Hot) {
        let d = self.imm8(bus, ts) as i8;
        let a = self.xy::<P>().wrapping_add(d as u16);
        self.memptr = a;
        let op = self.rd(bus, ts, self.pc);
        ts.t += 2;
        self.pc = self.pc.wrapping_add(1);
        let y = (op >> 3) & 7;
        let z = op & 7;
        let v = self.rd(bus, ts, a);
        ts.t += 1;
        let r = match op >> 6 {
            0 => self.rot(y, v),
            1 => {
                self.bit_flags(y, v, (a >> 8) as u8);
                return;
            }
            2 => v & !(1 << y),
            _ => v | (1 << y),
        };
        self.wr(bus, ts, a, r);
        if z != 6 {
            self.reg[Self::ri::<0>(z)] = r;
        }
    }
}
