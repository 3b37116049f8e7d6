//! 8-bit ALU operations, INC/DEC, rotates and shifts, BIT flags.

use crate::flags::*;
use crate::registers::*;
use crate::Z80;

impl Z80 {
    #[inline(always)]
    pub(crate) fn alu(&mut self, op: u8, v: u8) {
        let a = self.reg[A];
        let cin = (self.reg[F] & FLAG_C) as u16;
        match op & 7 {
            0 | 1 => {
                let c = if op & 7 == 1 { cin } else { 0 };
                let r16 = a as u16 + v as u16 + c;
                let r = r16 as u8;
                // r16 < 0x200: the carry vector needs no mask.
                let f = SZXY[r as usize] | HVC[(a as u16 ^ v as u16 ^ r16) as usize];
                self.reg[A] = r;
                self.setf(f);
            }
            2 | 3 | 7 => {
                let c = if op & 7 == 3 { cin } else { 0 };
                let r16 = (a as u16).wrapping_sub(v as u16).wrapping_sub(c);
                let r = r16 as u8;
                // A borrow makes r16 0xFFxx: bit 8 of the vector is C.
                let mut f = HVC[((a as u16 ^ v as u16 ^ r16) & 0x1FF) as usize] | FLAG_N;
                if op & 7 == 7 {
                    f |= (SZXY[r as usize] & !XY) | (v & XY);
                } else {
                    f |= SZXY[r as usize];
                    self.reg[A] = r;
                }
                self.setf(f);
            }
            4 => {
                let r = a & v;
                self.reg[A] = r;
                self.setf(SZPXY[r as usize] | FLAG_H);
            }
            5 => {
                let r = a ^ v;
                self.reg[A] = r;
                self.setf(SZPXY[r as usize]);
            }
            _ => {
                let r = a | v;
                self.reg[A] = r;
                self.setf(SZPXY[r as usize]);
            }
        }
    }

    #[inline(always)]
    pub(crate) fn inc8(&mut self, v: u8) -> u8 {
        let f = (self.reg[F] & FLAG_C) | INC_FLAGS[v as usize];
        self.setf(f);
        v.wrapping_add(1)
    }
    #[inline(always)]
    pub(crate) fn dec8(&mut self, v: u8) -> u8 {
        let f = (self.reg[F] & FLAG_C) | DEC_FLAGS[v as usize];
        self.setf(f);
        v.wrapping_sub(1)
    }

    /// CB rotate/shift `op` (0..7) with flags.
    #[inline(always)]
    pub(crate) fn rot(&mut self, op: u8, v: u8) -> u8 {
        let cin = self.reg[F] & FLAG_C;
        let (r, c) = match op & 7 {
            0 => (v.rotate_left(1), v >> 7),
            1 => (v.rotate_right(1), v & 1),
            2 => ((v << 1) | cin, v >> 7),
            3 => ((v >> 1) | (cin << 7), v & 1),
            4 => (v << 1, v >> 7),
            5 => ((v >> 1) | (v & 0x80), v & 1),
            6 => ((v << 1) | 1, v >> 7),
            _ => (v >> 1, v & 1),
        };
        self.setf(SZPXY[r as usize] | c);
        r
    }

    #[inline(always)]
    pub(crate) fn bit_flags(&mut self, n: u8, v: u8, xy_src: u8) {
        let set = v & (1 << n) != 0;
        let mut f = (self.reg[F] & FLAG_C) | FLAG_H | (xy_src & XY);
        if !set {
            f |= FLAG_Z | FLAG_PV;
        }
        if set && n == 7 {
            f |= FLAG_S;
        }
        self.setf(f);
    }
}
