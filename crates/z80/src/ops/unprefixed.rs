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
        match op {
            0x00 => self.op::<0x00, P, Bs>(bus, ts),
            0x01 => self.op::<0x01, P, Bs>(bus, ts),
            0x02 => self.op::<0x02, P, Bs>(bus, ts),
            0x03 => self.op::<0x03, P, Bs>(bus, ts),
            0x04 => self.op::<0x04, P, Bs>(bus, ts),
            0x05 => self.op::<0x05, P, Bs>(bus, ts),
            0x06 => self.op::<0x06, P, Bs>(bus, ts),
            0x07 => self.op::<0x07, P, Bs>(bus, ts),
            0x08 => self.op::<0x08, P, Bs>(bus, ts),
            0x09 => self.op::<0x09, P, Bs>(bus, ts),
            0x0A => self.op::<0x0A, P, Bs>(bus, ts),
            0x0B => self.op::<0x0B, P, Bs>(bus, ts),
            0x0C => self.op::<0x0C, P, Bs>(bus, ts),
            0x0D => self.op::<0x0D, P, Bs>(bus, ts),
            0x0E => self.op::<0x0E, P, Bs>(bus, ts),
            0x0F => self.op::<0x0F, P, Bs>(bus, ts),
            0x10 => self.op::<0x10, P, Bs>(bus, ts),
            0x11 => self.op::<0x11, P, Bs>(bus, ts),
            0x12 => self.op::<0x12, P, Bs>(bus, ts),
            0x13 => self.op::<0x13, P, Bs>(bus, ts),
            0x14 => self.op::<0x14, P, Bs>(bus, ts),
            0x15 => self.op::<0x15, P, Bs>(bus, ts),
            0x16 => self.op::<0x16, P, Bs>(bus, ts),
            0x17 => self.op::<0x17, P, Bs>(bus, ts),
            0x18 => self.op::<0x18, P, Bs>(bus, ts),
            0x19 => self.op::<0x19, P, Bs>(bus, ts),
            0x1A => self.op::<0x1A, P, Bs>(bus, ts),
            0x1B => self.op::<0x1B, P, Bs>(bus, ts),
            0x1C => self.op::<0x1C, P, Bs>(bus, ts),
            0x1D => self.op::<0x1D, P, Bs>(bus, ts),
            0x1E => self.op::<0x1E, P, Bs>(bus, ts),
            0x1F => self.op::<0x1F, P, Bs>(bus, ts),
            0x20 => self.op::<0x20, P, Bs>(bus, ts),
            0x21 => self.op::<0x21, P, Bs>(bus, ts),
            0x22 => self.op::<0x22, P, Bs>(bus, ts),
            0x23 => self.op::<0x23, P, Bs>(bus, ts),
            0x24 => self.op::<0x24, P, Bs>(bus, ts),
            0x25 => self.op::<0x25, P, Bs>(bus, ts),
            0x26 => self.op::<0x26, P, Bs>(bus, ts),
            0x27 => self.op::<0x27, P, Bs>(bus, ts),
            0x28 => self.op::<0x28, P, Bs>(bus, ts),
            0x29 => self.op::<0x29, P, Bs>(bus, ts),
            0x2A => self.op::<0x2A, P, Bs>(bus, ts),
            0x2B => self.op::<0x2B, P, Bs>(bus, ts),
            0x2C => self.op::<0x2C, P, Bs>(bus, ts),
            0x2D => self.op::<0x2D, P, Bs>(bus, ts),
            0x2E => self.op::<0x2E, P, Bs>(bus, ts),
            0x2F => self.op::<0x2F, P, Bs>(bus, ts),
            0x30 => self.op::<0x30, P, Bs>(bus, ts),
            0x31 => self.op::<0x31, P, Bs>(bus, ts),
            0x32 => self.op::<0x32, P, Bs>(bus, ts),
            0x33 => self.op::<0x33, P, Bs>(bus, ts),
            0x34 => self.op::<0x34, P, Bs>(bus, ts),
            0x35 => self.op::<0x35, P, Bs>(bus, ts),
            0x36 => self.op::<0x36, P, Bs>(bus, ts),
            0x37 => self.op::<0x37, P, Bs>(bus, ts),
            0x38 => self.op::<0x38, P, Bs>(bus, ts),
            0x39 => self.op::<0x39, P, Bs>(bus, ts),
            0x3A => self.op::<0x3A, P, Bs>(bus, ts),
            0x3B => self.op::<0x3B, P, Bs>(bus, ts),
            0x3C => self.op::<0x3C, P, Bs>(bus, ts),
            0x3D => self.op::<0x3D, P, Bs>(bus, ts),
            0x3E => self.op::<0x3E, P, Bs>(bus, ts),
            0x3F => self.op::<0x3F, P, Bs>(bus, ts),
            0x40 => self.op::<0x40, P, Bs>(bus, ts),
            0x41 => self.op::<0x41, P, Bs>(bus, ts),
            0x42 => self.op::<0x42, P, Bs>(bus, ts),
            0x43 => self.op::<0x43, P, Bs>(bus, ts),
            0x44 => self.op::<0x44, P, Bs>(bus, ts),
            0x45 => self.op::<0x45, P, Bs>(bus, ts),
            0x46 => self.op::<0x46, P, Bs>(bus, ts),
            0x47 => self.op::<0x47, P, Bs>(bus, ts),
            0x48 => self.op::<0x48, P, Bs>(bus, ts),
            0x49 => self.op::<0x49, P, Bs>(bus, ts),
            0x4A => self.op::<0x4A, P, Bs>(bus, ts),
            0x4B => self.op::<0x4B, P, Bs>(bus, ts),
            0x4C => self.op::<0x4C, P, Bs>(bus, ts),
            0x4D => self.op::<0x4D, P, Bs>(bus, ts),
            0x4E => self.op::<0x4E, P, Bs>(bus, ts),
            0x4F => self.op::<0x4F, P, Bs>(bus, ts),
            0x50 => self.op::<0x50, P, Bs>(bus, ts),
            0x51 => self.op::<0x51, P, Bs>(bus, ts),
            0x52 => self.op::<0x52, P, Bs>(bus, ts),
            0x53 => self.op::<0x53, P, Bs>(bus, ts),
            0x54 => self.op::<0x54, P, Bs>(bus, ts),
            0x55 => self.op::<0x55, P, Bs>(bus, ts),
            0x56 => self.op::<0x56, P, Bs>(bus, ts),
            0x57 => self.op::<0x57, P, Bs>(bus, ts),
            0x58 => self.op::<0x58, P, Bs>(bus, ts),
            0x59 => self.op::<0x59, P, Bs>(bus, ts),
            0x5A => self.op::<0x5A, P, Bs>(bus, ts),
            0x5B => self.op::<0x5B, P, Bs>(bus, ts),
            0x5C => self.op::<0x5C, P, Bs>(bus, ts),
            0x5D => self.op::<0x5D, P, Bs>(bus, ts),
            0x5E => self.op::<0x5E, P, Bs>(bus, ts),
            0x5F => self.op::<0x5F, P, Bs>(bus, ts),
            0x60 => self.op::<0x60, P, Bs>(bus, ts),
            0x61 => self.op::<0x61, P, Bs>(bus, ts),
            0x62 => self.op::<0x62, P, Bs>(bus, ts),
            0x63 => self.op::<0x63, P, Bs>(bus, ts),
            0x64 => self.op::<0x64, P, Bs>(bus, ts),
            0x65 => self.op::<0x65, P, Bs>(bus, ts),
            0x66 => self.op::<0x66, P, Bs>(bus, ts),
            0x67 => self.op::<0x67, P, Bs>(bus, ts),
            0x68 => self.op::<0x68, P, Bs>(bus, ts),
            0x69 => self.op::<0x69, P, Bs>(bus, ts),
            0x6A => self.op::<0x6A, P, Bs>(bus, ts),
            0x6B => self.op::<0x6B, P, Bs>(bus, ts),
            0x6C => self.op::<0x6C, P, Bs>(bus, ts),
            0x6D => self.op::<0x6D, P, Bs>(bus, ts),
            0x6E => self.op::<0x6E, P, Bs>(bus, ts),
            0x6F => self.op::<0x6F, P, Bs>(bus, ts),
            0x70 => self.op::<0x70, P, Bs>(bus, ts),
            0x71 => self.op::<0x71, P, Bs>(bus, ts),
            0x72 => self.op::<0x72, P, Bs>(bus, ts),
            0x73 => self.op::<0x73, P, Bs>(bus, ts),
            0x74 => self.op::<0x74, P, Bs>(bus, ts),
            0x75 => self.op::<0x75, P, Bs>(bus, ts),
            0x76 => self.op::<0x76, P, Bs>(bus, ts),
            0x77 => self.op::<0x77, P, Bs>(bus, ts),
            0x78 => self.op::<0x78, P, Bs>(bus, ts),
            0x79 => self.op::<0x79, P, Bs>(bus, ts),
            0x7A => self.op::<0x7A, P, Bs>(bus, ts),
            0x7B => self.op::<0x7B, P, Bs>(bus, ts),
            0x7C => self.op::<0x7C, P, Bs>(bus, ts),
            0x7D => self.op::<0x7D, P, Bs>(bus, ts),
            0x7E => self.op::<0x7E, P, Bs>(bus, ts),
            0x7F => self.op::<0x7F, P, Bs>(bus, ts),
            0x80 => self.op::<0x80, P, Bs>(bus, ts),
            0x81 => self.op::<0x81, P, Bs>(bus, ts),
            0x82 => self.op::<0x82, P, Bs>(bus, ts),
            0x83 => self.op::<0x83, P, Bs>(bus, ts),
            0x84 => self.op::<0x84, P, Bs>(bus, ts),
            0x85 => self.op::<0x85, P, Bs>(bus, ts),
            0x86 => self.op::<0x86, P, Bs>(bus, ts),
            0x87 => self.op::<0x87, P, Bs>(bus, ts),
            0x88 => self.op::<0x88, P, Bs>(bus, ts),
            0x89 => self.op::<0x89, P, Bs>(bus, ts),
            0x8A => self.op::<0x8A, P, Bs>(bus, ts),
            0x8B => self.op::<0x8B, P, Bs>(bus, ts),
            0x8C => self.op::<0x8C, P, Bs>(bus, ts),
            0x8D => self.op::<0x8D, P, Bs>(bus, ts),
            0x8E => self.op::<0x8E, P, Bs>(bus, ts),
            0x8F => self.op::<0x8F, P, Bs>(bus, ts),
            0x90 => self.op::<0x90, P, Bs>(bus, ts),
            0x91 => self.op::<0x91, P, Bs>(bus, ts),
            0x92 => self.op::<0x92, P, Bs>(bus, ts),
            0x93 => self.op::<0x93, P, Bs>(bus, ts),
            0x94 => self.op::<0x94, P, Bs>(bus, ts),
            0x95 => self.op::<0x95, P, Bs>(bus, ts),
            0x96 => self.op::<0x96, P, Bs>(bus, ts),
            0x97 => self.op::<0x97, P, Bs>(bus, ts),
            0x98 => self.op::<0x98, P, Bs>(bus, ts),
            0x99 => self.op::<0x99, P, Bs>(bus, ts),
            0x9A => self.op::<0x9A, P, Bs>(bus, ts),
            0x9B => self.op::<0x9B, P, Bs>(bus, ts),
            0x9C => self.op::<0x9C, P, Bs>(bus, ts),
            0x9D => self.op::<0x9D, P, Bs>(bus, ts),
            0x9E => self.op::<0x9E, P, Bs>(bus, ts),
            0x9F => self.op::<0x9F, P, Bs>(bus, ts),
            0xA0 => self.op::<0xA0, P, Bs>(bus, ts),
            0xA1 => self.op::<0xA1, P, Bs>(bus, ts),
            0xA2 => self.op::<0xA2, P, Bs>(bus, ts),
            0xA3 => self.op::<0xA3, P, Bs>(bus, ts),
            0xA4 => self.op::<0xA4, P, Bs>(bus, ts),
            0xA5 => self.op::<0xA5, P, Bs>(bus, ts),
            0xA6 => self.op::<0xA6, P, Bs>(bus, ts),
            0xA7 => self.op::<0xA7, P, Bs>(bus, ts),
            0xA8 => self.op::<0xA8, P, Bs>(bus, ts),
            0xA9 => self.op::<0xA9, P, Bs>(bus, ts),
            0xAA => self.op::<0xAA, P, Bs>(bus, ts),
            0xAB => self.op::<0xAB, P, Bs>(bus, ts),
            0xAC => self.op::<0xAC, P, Bs>(bus, ts),
            0xAD => self.op::<0xAD, P, Bs>(bus, ts),
            0xAE => self.op::<0xAE, P, Bs>(bus, ts),
            0xAF => self.op::<0xAF, P, Bs>(bus, ts),
            0xB0 => self.op::<0xB0, P, Bs>(bus, ts),
            0xB1 => self.op::<0xB1, P, Bs>(bus, ts),
            0xB2 => self.op::<0xB2, P, Bs>(bus, ts),
            0xB3 => self.op::<0xB3, P, Bs>(bus, ts),
            0xB4 => self.op::<0xB4, P, Bs>(bus, ts),
            0xB5 => self.op::<0xB5, P, Bs>(bus, ts),
            0xB6 => self.op::<0xB6, P, Bs>(bus, ts),
            0xB7 => self.op::<0xB7, P, Bs>(bus, ts),
            0xB8 => self.op::<0xB8, P, Bs>(bus, ts),
            0xB9 => self.op::<0xB9, P, Bs>(bus, ts),
            0xBA => self.op::<0xBA, P, Bs>(bus, ts),
            0xBB => self.op::<0xBB, P, Bs>(bus, ts),
            0xBC => self.op::<0xBC, P, Bs>(bus, ts),
            0xBD => self.op::<0xBD, P, Bs>(bus, ts),
            0xBE => self.op::<0xBE, P, Bs>(bus, ts),
            0xBF => self.op::<0xBF, P, Bs>(bus, ts),
            0xC0 => self.op::<0xC0, P, Bs>(bus, ts),
            0xC1 => self.op::<0xC1, P, Bs>(bus, ts),
            0xC2 => self.op::<0xC2, P, Bs>(bus, ts),
            0xC3 => self.op::<0xC3, P, Bs>(bus, ts),
            0xC4 => self.op::<0xC4, P, Bs>(bus, ts),
            0xC5 => self.op::<0xC5, P, Bs>(bus, ts),
            0xC6 => self.op::<0xC6, P, Bs>(bus, ts),
            0xC7 => self.op::<0xC7, P, Bs>(bus, ts),
            0xC8 => self.op::<0xC8, P, Bs>(bus, ts),
            0xC9 => self.op::<0xC9, P, Bs>(bus, ts),
            0xCA => self.op::<0xCA, P, Bs>(bus, ts),
            0xCB => self.op::<0xCB, P, Bs>(bus, ts),
            0xCC => self.op::<0xCC, P, Bs>(bus, ts),
            0xCD => self.op::<0xCD, P, Bs>(bus, ts),
            0xCE => self.op::<0xCE, P, Bs>(bus, ts),
            0xCF => self.op::<0xCF, P, Bs>(bus, ts),
            0xD0 => self.op::<0xD0, P, Bs>(bus, ts),
            0xD1 => self.op::<0xD1, P, Bs>(bus, ts),
            0xD2 => self.op::<0xD2, P, Bs>(bus, ts),
            0xD3 => self.op::<0xD3, P, Bs>(bus, ts),
            0xD4 => self.op::<0xD4, P, Bs>(bus, ts),
            0xD5 => self.op::<0xD5, P, Bs>(bus, ts),
            0xD6 => self.op::<0xD6, P, Bs>(bus, ts),
            0xD7 => self.op::<0xD7, P, Bs>(bus, ts),
            0xD8 => self.op::<0xD8, P, Bs>(bus, ts),
            0xD9 => self.op::<0xD9, P, Bs>(bus, ts),
            0xDA => self.op::<0xDA, P, Bs>(bus, ts),
            0xDB => self.op::<0xDB, P, Bs>(bus, ts),
            0xDC => self.op::<0xDC, P, Bs>(bus, ts),
            0xDD => self.op::<0xDD, P, Bs>(bus, ts),
            0xDE => self.op::<0xDE, P, Bs>(bus, ts),
            0xDF => self.op::<0xDF, P, Bs>(bus, ts),
            0xE0 => self.op::<0xE0, P, Bs>(bus, ts),
            0xE1 => self.op::<0xE1, P, Bs>(bus, ts),
            0xE2 => self.op::<0xE2, P, Bs>(bus, ts),
            0xE3 => self.op::<0xE3, P, Bs>(bus, ts),
            0xE4 => self.op::<0xE4, P, Bs>(bus, ts),
            0xE5 => self.op::<0xE5, P, Bs>(bus, ts),
            0xE6 => self.op::<0xE6, P, Bs>(bus, ts),
            0xE7 => self.op::<0xE7, P, Bs>(bus, ts),
            0xE8 => self.op::<0xE8, P, Bs>(bus, ts),
            0xE9 => self.op::<0xE9, P, Bs>(bus, ts),
            0xEA => self.op::<0xEA, P, Bs>(bus, ts),
            0xEB => self.op::<0xEB, P, Bs>(bus, ts),
            0xEC => self.op::<0xEC, P, Bs>(bus, ts),
            0xED => self.op::<0xED, P, Bs>(bus, ts),
            0xEE => self.op::<0xEE, P, Bs>(bus, ts),
            0xEF => self.op::<0xEF, P, Bs>(bus, ts),
            0xF0 => self.op::<0xF0, P, Bs>(bus, ts),
            0xF1 => self.op::<0xF1, P, Bs>(bus, ts),
            0xF2 => self.op::<0xF2, P, Bs>(bus, ts),
            0xF3 => self.op::<0xF3, P, Bs>(bus, ts),
            0xF4 => self.op::<0xF4, P, Bs>(bus, ts),
            0xF5 => self.op::<0xF5, P, Bs>(bus, ts),
            0xF6 => self.op::<0xF6, P, Bs>(bus, ts),
            0xF7 => self.op::<0xF7, P, Bs>(bus, ts),
            0xF8 => self.op::<0xF8, P, Bs>(bus, ts),
            0xF9 => self.op::<0xF9, P, Bs>(bus, ts),
            0xFA => self.op::<0xFA, P, Bs>(bus, ts),
            0xFB => self.op::<0xFB, P, Bs>(bus, ts),
            0xFC => self.op::<0xFC, P, Bs>(bus, ts),
            0xFD => self.op::<0xFD, P, Bs>(bus, ts),
            0xFE => self.op::<0xFE, P, Bs>(bus, ts),
            0xFF => self.op::<0xFF, P, Bs>(bus, ts),
        }
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
                    | (((self.last_q ^ f0) | self.reg[A]) & XY)
                    | FLAG_C;
                self.setf(f);
            }
            0x3F => {
                let f0 = self.reg[F];
                let c = f0 & FLAG_C;
                let f = (f0 & (FLAG_S | FLAG_Z | FLAG_PV))
                    | (((self.last_q ^ f0) | self.reg[A]) & XY)
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
