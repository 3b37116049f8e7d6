//! Unprefixed and DD/FD-prefixed opcodes: one match arm per opcode.

use crate::bus::{Bus, Hot};
use crate::flags::*;
use crate::registers::*;
use crate::Z80;

impl Z80 {
    /// Dispatch of unprefixed or DD/FD-prefixed opcodes: one arm per
    /// opcode, so every opcode gets its own code with its register fields
    /// known at compile time.
    #[inline(always)]
    pub(crate) fn exec_main<const P: u8, Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut Hot, op: u8) {
        macro_rules! arm {
            ($n:literal) => {
                self.op::<$n, P, Bs>(bus, ts)
            };
        }
        by_opcode!(op, arm)
    }

    /// Unprefixed opcodes, or DD/FD-prefixed ones (P = 1/2: HL becomes
    /// IX/IY, H/L become IXH/IXL or IYH/IYL, (HL) becomes (IX+d)/(IY+d)).
    #[inline(always)]
    pub(crate) fn op<const OP: u8, const P: u8, Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut Hot) {
        let op = OP;
        // Opcode fields, computed only in the arms that use them.
        macro_rules! y {
            () => {
                ((op >> 3) & 7)
            };
        }
        macro_rules! z {
            () => {
                (op & 7)
            };
        }
        macro_rules! p {
            () => {
                ((op >> 4) & 3)
            };
        }
        match op {
            0x00 => {}
            0x08 => {
                let (a, f) = (self.reg[A], self.reg[F]);
                self.reg[A] = self.alt[A];
                self.reg[F] = self.alt[F];
                self.alt[A] = a;
                self.alt[F] = f;
            }
            0x10 => {
                ts.t += 1;
                let d = self.rd(bus, ts, self.pc) as i8;
                let b = self.reg[B].wrapping_sub(1);
                self.reg[B] = b;
                if b != 0 {
                    ts.t += 5;
                    self.pc = self.pc.wrapping_add(d as u16);
                    self.memptr = self.pc.wrapping_add(1);
                }
                self.pc = self.pc.wrapping_add(1);
            }
            0x18 => {
                let d = self.rd(bus, ts, self.pc) as i8;
                ts.t += 5;
                self.pc = self.pc.wrapping_add(d as u16).wrapping_add(1);
                self.memptr = self.pc;
            }
            0x20 | 0x28 | 0x30 | 0x38 => {
                let d = self.rd(bus, ts, self.pc) as i8;
                if self.cond(y!() - 4) {
                    ts.t += 5;
                    self.pc = self.pc.wrapping_add(d as u16);
                    self.memptr = self.pc.wrapping_add(1);
                }
                self.pc = self.pc.wrapping_add(1);
            }
            0x01 | 0x11 | 0x21 | 0x31 => {
                let v = self.imm16(bus, ts);
                self.set_rp::<P>(p!(), v);
            }
            0x09 | 0x19 | 0x29 | 0x39 => {
                ts.t += 7;
                let acc = self.xy::<P>();
                self.memptr = acc.wrapping_add(1);
                let v = self.rp::<P>(p!());
                let r32 = acc as u32 + v as u32;
                let r = r32 as u16;
                let f = (self.reg[F] & (FLAG_S | FLAG_Z | FLAG_PV))
                    | (((acc ^ v ^ r) >> 8) as u8 & FLAG_H)
                    | (r32 >> 16) as u8
                    | ((r >> 8) as u8 & XY);
                self.setf(f);
                self.set_xy::<P>(r);
            }
            0x02 | 0x12 => {
                let a = if op == 0x02 { self.bc() } else { self.de() };
                let acc = self.reg[A];
                self.wr(bus, ts, a, acc);
                // Low byte (addr + 1) & 0xFF, high byte A (Young).
                self.memptr = u16::from_le_bytes([(a as u8).wrapping_add(1), acc]);
            }
            0x22 => {
                let a = self.imm16(bus, ts);
                let v = self.xy::<P>();
                self.wr(bus, ts, a, v as u8);
                self.wr(bus, ts, a.wrapping_add(1), (v >> 8) as u8);
                self.memptr = a.wrapping_add(1);
            }
            0x32 => {
                let a = self.imm16(bus, ts);
                let acc = self.reg[A];
                self.wr(bus, ts, a, acc);
                // Young / "MEMPTR" notes: low = (addr+1) & 0xFF, high = A.
                // (rustzx-z80 0.16 ORs A into the high byte of addr+1.)
                self.memptr = (a.wrapping_add(1) & 0xFF) | ((acc as u16) << 8);
            }
            0x0A | 0x1A => {
                let a = if op == 0x0A { self.bc() } else { self.de() };
                self.reg[A] = self.rd(bus, ts, a);
                self.memptr = a.wrapping_add(1);
            }
            0x2A => {
                let a = self.imm16(bus, ts);
                let v = bus.read_pair(a, &mut ts.t);
                self.set_xy::<P>(v);
                self.memptr = a.wrapping_add(1);
            }
            0x3A => {
                let a = self.imm16(bus, ts);
                self.reg[A] = self.rd(bus, ts, a);
                self.memptr = a.wrapping_add(1);
            }
            0x03 | 0x13 | 0x23 | 0x33 => {
                ts.t += 2;
                let v = self.rp::<P>(p!()).wrapping_add(1);
                self.set_rp::<P>(p!(), v);
            }
            0x0B | 0x1B | 0x2B | 0x3B => {
                ts.t += 2;
                let v = self.rp::<P>(p!()).wrapping_sub(1);
                self.set_rp::<P>(p!(), v);
            }
            0x34 | 0x35 => {
                let a = self.ea::<P, Bs>(bus, ts);
                let v = self.rd(bus, ts, a);
                ts.t += 1;
                let r = if op == 0x34 {
                    self.inc8(v)
                } else {
                    self.dec8(v)
                };
                self.wr(bus, ts, a, r);
            }
            0x04 | 0x0C | 0x14 | 0x1C | 0x24 | 0x2C | 0x3C => {
                let v = self.get8::<P>(y!());
                let r = self.inc8(v);
                self.set8::<P>(y!(), r);
            }
            0x05 | 0x0D | 0x15 | 0x1D | 0x25 | 0x2D | 0x3D => {
                let v = self.get8::<P>(y!());
                let r = self.dec8(v);
                self.set8::<P>(y!(), r);
                // A countdown loop (`DEC A; JR NZ,-3`) behind a shut gate.
                if op == 0x3D && P == 0 && r != 0 && !ts.gate {
                    ts.t = self.dec_a_loop(bus, ts.t, ts.until);
                }
            }
            0x36 => {
                if P == 0 {
                    let a = self.hl();
                    let n = self.imm8(bus, ts);
                    self.wr(bus, ts, a, n);
                } else {
                    let d = self.imm8(bus, ts) as i8;
                    let a = self.xy::<P>().wrapping_add(d as u16);
                    self.memptr = a;
                    let n = self.rd(bus, ts, self.pc);
                    ts.t += 2;
                    self.pc = self.pc.wrapping_add(1);
                    self.wr(bus, ts, a, n);
                }
            }
            0x06 | 0x0E | 0x16 | 0x1E | 0x26 | 0x2E | 0x3E => {
                let n = self.imm8(bus, ts);
                self.set8::<P>(y!(), n);
            }
            0x07 | 0x0F | 0x17 | 0x1F => {
                let v = self.reg[A];
                let cin = self.reg[F] & FLAG_C;
                let (r, c) = match y!() {
                    0 => (v.rotate_left(1), v >> 7),
                    1 => (v.rotate_right(1), v & 1),
                    2 => ((v << 1) | cin, v >> 7),
                    _ => ((v >> 1) | (cin << 7), v & 1),
                };
                self.reg[A] = r;
                let f = (self.reg[F] & (FLAG_S | FLAG_Z | FLAG_PV)) | c | (r & XY);
                self.setf(f);
            }
            0x27 => {
                let a = self.reg[A];
                let old = self.reg[F];
                let mut f = old & FLAG_N;
                let mut corr = 0u8;
                if a > 0x99 || old & FLAG_C != 0 {
                    corr = 0x60;
                    f |= FLAG_C;
                }
                if (a & 0x0F) > 9 || old & FLAG_H != 0 {
                    corr |= 0x06;
                }
                let r = if old & FLAG_N == 0 {
                    a.wrapping_add(corr)
                } else {
                    a.wrapping_sub(corr)
                };
                f |= ((a ^ corr ^ r) & FLAG_H) | SZPXY[r as usize];
                self.reg[A] = r;
                self.setf(f);
            }
            0x2F => {
                let r = !self.reg[A];
                self.reg[A] = r;
                let f = (self.reg[F] & !XY) | FLAG_H | FLAG_N | (r & XY);
                self.setf(f);
            }
            0x37 => {
                let f0 = self.reg[F];
                let f = (f0 & (FLAG_S | FLAG_Z | FLAG_PV))
                    | (((self.qs[crate::LAST_Q] ^ f0) | self.reg[A]) & XY)
                    | FLAG_C;
                self.setf(f);
            }
            0x3F => {
                let f0 = self.reg[F];
                let c = f0 & FLAG_C;
                let f = (f0 & (FLAG_S | FLAG_Z | FLAG_PV))
                    | (((self.qs[crate::LAST_Q] ^ f0) | self.reg[A]) & XY)
                    | (c << 4)
                    | (c ^ FLAG_C);
                self.setf(f);
            }
            0x76 => {
                self.halted = true;
                self.pc = self.pc.wrapping_sub(1);
            }
            0x46 | 0x4E | 0x56 | 0x5E | 0x66 | 0x6E | 0x7E => {
                let a = self.ea::<P, Bs>(bus, ts);
                let v = self.rd(bus, ts, a);
                self.reg[Self::ri::<0>(y!())] = v;
            }
            0x70..=0x75 | 0x77 => {
                let a = self.ea::<P, Bs>(bus, ts);
                let v = self.reg[Self::ri::<0>(z!())];
                self.wr(bus, ts, a, v);
            }
            0x40..=0x7F => {
                let v = self.get8::<P>(z!());
                self.set8::<P>(y!(), v);
            }
            0x86 | 0x8E | 0x96 | 0x9E | 0xA6 | 0xAE | 0xB6 | 0xBE => {
                let a = self.ea::<P, Bs>(bus, ts);
                let v = self.rd(bus, ts, a);
                self.alu(y!(), v);
            }
            0x80..=0xBF => {
                let v = self.get8::<P>(z!());
                self.alu(y!(), v);
            }
            0xC0 | 0xC8 | 0xD0 | 0xD8 | 0xE0 | 0xE8 | 0xF0 | 0xF8 => {
                ts.t += 1;
                if self.cond(y!()) {
                    self.pc = self.pop(bus, ts);
                    self.memptr = self.pc;
                }
            }
            0xC1 | 0xD1 | 0xE1 | 0xF1 => {
                let v = self.pop(bus, ts);
                if p!() == 3 {
                    self.set_af(v);
                } else {
                    self.set_rp::<P>(p!(), v);
                }
            }
            0xC9 => {
                self.pc = self.pop(bus, ts);
                self.memptr = self.pc;
            }
            0xD9 => {
                for k in 0..6 {
                    std::mem::swap(&mut self.reg[k], &mut self.alt[k]);
                }
            }
            0xE9 => self.pc = self.xy::<P>(),
            0xF9 => {
                ts.t += 2;
                self.sp = self.xy::<P>();
            }
            0xC2 | 0xCA | 0xD2 | 0xDA | 0xE2 | 0xEA | 0xF2 | 0xFA => {
                let a = self.imm16(bus, ts);
                if self.cond(y!()) {
                    self.pc = a;
                }
                self.memptr = a;
            }
            0xC3 => {
                let a = self.imm16(bus, ts);
                self.pc = a;
                self.memptr = a;
            }
            0xD3 => {
                let n = self.imm8(bus, ts);
                let acc = self.reg[A];
                self.io_wr(bus, ts, ((acc as u16) << 8) | n as u16, acc);
                // Young / "MEMPTR" notes: low = (n+1) & 0xFF, high = A.
                self.memptr = (n.wrapping_add(1) as u16) | ((acc as u16) << 8);
            }
            0xDB => {
                let n = self.imm8(bus, ts);
                let port = ((self.reg[A] as u16) << 8) | n as u16;
                self.reg[A] = self.io_rd(bus, ts, port);
                self.memptr = port.wrapping_add(1);
            }
            0xE3 => {
                let a = self.sp;
                let lo = self.rd(bus, ts, a) as u16;
                let hi = self.rd(bus, ts, a.wrapping_add(1)) as u16;
                ts.t += 1;
                let v = self.xy::<P>();
                self.wr(bus, ts, a.wrapping_add(1), (v >> 8) as u8);
                self.wr(bus, ts, a, v as u8);
                ts.t += 2;
                let n = (hi << 8) | lo;
                self.set_xy::<P>(n);
                self.memptr = n;
            }
            0xEB => {
                let (de, hl) = (self.de(), self.hl());
                self.set_de(hl);
                self.set_hl(de);
            }
            0xF3 => {
                self.int_blocked = true;
                ts.open_gate();
                self.iff1 = false;
                self.iff2 = false;
            }
            0xFB => {
                self.int_blocked = true;
                ts.open_gate();
                self.iff1 = true;
                self.iff2 = true;
            }
            0xC4 | 0xCC | 0xD4 | 0xDC | 0xE4 | 0xEC | 0xF4 | 0xFC => {
                let lo = self.imm8(bus, ts) as u16;
                let hi = self.rd(bus, ts, self.pc) as u16;
                let a = (hi << 8) | lo;
                self.memptr = a;
                if self.cond(y!()) {
                    ts.t += 1;
                    self.pc = self.pc.wrapping_add(1);
                    self.push(bus, ts, self.pc);
                    self.pc = a;
                } else {
                    self.pc = self.pc.wrapping_add(1);
                }
            }
            0xC5 | 0xD5 | 0xE5 | 0xF5 => {
                ts.t += 1;
                let v = if p!() == 3 {
                    self.af()
                } else {
                    self.rp::<P>(p!())
                };
                self.push(bus, ts, v);
            }
            0xCD => {
                let lo = self.imm8(bus, ts) as u16;
                let hi = self.rd(bus, ts, self.pc) as u16;
                let a = (hi << 8) | lo;
                ts.t += 1;
                self.pc = self.pc.wrapping_add(1);
                self.push(bus, ts, self.pc);
                self.pc = a;
                self.memptr = a;
            }
            0xC6 | 0xCE | 0xD6 | 0xDE | 0xE6 | 0xEE | 0xF6 | 0xFE => {
                let n = self.imm8(bus, ts);
                self.alu(y!(), n);
            }
            0xC7 | 0xCF | 0xD7 | 0xDF | 0xE7 | 0xEF | 0xF7 | 0xFF => {
                ts.t += 1;
                self.push(bus, ts, self.pc);
                self.pc = (y!() as u16) * 8;
                self.memptr = self.pc;
            }
            // With a DD/FD prefix, CB/DD/ED/FD never get here (`prefixed`).
            0xCB => {
                if P == 0 {
                    self.exec_cb(bus, ts);
                }
            }
            0xED => {
                if P == 0 {
                    let op2 = self.fetch_op(bus, ts);
                    // The block copies inline, the rest of ED out of line.
                    match op2 {
                        0xB0 => self.ld_block::<true, true, Bs>(bus, ts),
                        0xA0 => self.ld_block::<true, false, Bs>(bus, ts),
                        0xB8 => self.ld_block::<false, true, Bs>(bus, ts),
                        0xA8 => self.ld_block::<false, false, Bs>(bus, ts),
                        _ => self.exec_ed(bus, ts, op2),
                    }
                }
            }
            0xDD => {
                if P == 0 {
                    self.prefixed::<1, Bs>(bus, ts);
                }
            }
            0xFD => {
                if P == 0 {
                    self.prefixed::<2, Bs>(bus, ts);
                }
            }
        }
    }
}
