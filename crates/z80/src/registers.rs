//! Register-file layout and register/condition/address helpers.

use crate::bus::{Bus, Hot};
use crate::flags::*;
use crate::Z80;

// Indices into `Z80::reg`: register pairs little-endian (low byte first),
// so a pair is one 16-bit load. `RIDX` maps the 3-bit register codes of the
// opcodes (B C D E H L (HL) A) onto them.
pub(crate) const C: usize = 0;
pub(crate) const B: usize = 1;
pub(crate) const E: usize = 2;
pub(crate) const D: usize = 3;
pub(crate) const L: usize = 4;
pub(crate) const H: usize = 5;
pub(crate) const F: usize = 6;
pub(crate) const A: usize = 7;
pub(crate) const IXL: usize = 8;
pub(crate) const IXH: usize = 9;
pub(crate) const IYL: usize = 10;
pub(crate) const IYH: usize = 11;

/// Register index of 3-bit code r, without prefix / with DD / with FD (code
/// 6, (HL), maps to F and is never used as a register).
pub(crate) const RIDX: [[u8; 8]; 3] = [
    [
        B as u8, C as u8, D as u8, E as u8, H as u8, L as u8, F as u8, A as u8,
    ],
    [
        B as u8, C as u8, D as u8, E as u8, IXH as u8, IXL as u8, F as u8, A as u8,
    ],
    [
        B as u8, C as u8, D as u8, E as u8, IYH as u8, IYL as u8, F as u8, A as u8,
    ],
];

impl Z80 {
    /// Register index of 3-bit code `r` under prefix P (0 none, 1 DD, 2 FD).
    #[inline(always)]
    pub(crate) fn ri<const P: u8>(r: u8) -> usize {
        RIDX[P as usize][(r & 7) as usize] as usize
    }
    #[inline(always)]
    pub(crate) fn get8<const P: u8>(&self, r: u8) -> u8 {
        self.reg[Self::ri::<P>(r)]
    }
    #[inline(always)]
    pub(crate) fn set8<const P: u8>(&mut self, r: u8, v: u8) {
        self.reg[Self::ri::<P>(r)] = v;
    }
    #[inline(always)]
    pub(crate) fn xy<const P: u8>(&self) -> u16 {
        match P {
            0 => self.hl(),
            1 => self.ix(),
            _ => self.iy(),
        }
    }
    #[inline(always)]
    pub(crate) fn set_xy<const P: u8>(&mut self, v: u16) {
        match P {
            0 => self.set_hl(v),
            1 => self.set_ix(v),
            _ => self.set_iy(v),
        }
    }
    /// rp table: BC, DE, HL/IX/IY, SP.
    #[inline(always)]
    pub(crate) fn rp<const P: u8>(&self, p: u8) -> u16 {
        match p {
            0 => self.bc(),
            1 => self.de(),
            2 => self.xy::<P>(),
            _ => self.sp,
        }
    }
    #[inline(always)]
    pub(crate) fn set_rp<const P: u8>(&mut self, p: u8, v: u16) {
        match p {
            0 => self.set_bc(v),
            1 => self.set_de(v),
            2 => self.set_xy::<P>(v),
            _ => self.sp = v,
        }
    }
    #[inline(always)]
    pub(crate) fn setf(&mut self, f: u8) {
        self.reg[F] = f;
        self.qs[crate::Q] = f;
    }
    #[inline(always)]
    pub(crate) fn cond(&self, c: u8) -> bool {
        let f = self.reg[F];
        match c & 7 {
            0 => f & FLAG_Z == 0,
            1 => f & FLAG_Z != 0,
            2 => f & FLAG_C == 0,
            3 => f & FLAG_C != 0,
            4 => f & FLAG_PV == 0,
            5 => f & FLAG_PV != 0,
            6 => f & FLAG_S == 0,
            _ => f & FLAG_S != 0,
        }
    }

    /// Address of `(HL)` or `(IX+d)`/`(IY+d)` for the common instruction
    /// shape: d read (3 T), 5 internal T-states (Young: `LD r,(IX+d)` is
    /// 4,4,3,5,3).
    #[inline(always)]
    pub(crate) fn ea<const P: u8, Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut Hot) -> u16 {
        if P == 0 {
            self.hl()
        } else {
            let d = self.rd(bus, ts, self.pc) as i8;
            ts.t += 5;
            self.pc = self.pc.wrapping_add(1);
            let a = self.xy::<P>().wrapping_add(d as u16);
            self.memptr = a;
            a
        }
    }
}
