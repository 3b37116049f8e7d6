//! ED-prefixed opcodes, the block instructions among them.

use crate::bus::{Bus, Hot};
use crate::flags::*;
use crate::registers::*;
use crate::Z80;

impl Z80 {
    /// Repeat cycle of LDIR/LDDR/CPIR/CPDR: X/Y from PC high byte (Young,
    /// and the 2018 block-instruction research summarised there).
    #[inline(always)]
    pub(crate) fn block_repeat_mem(&mut self, ts: &mut Hot) {
        self.memptr = self.pc.wrapping_sub(1);
        ts.t += 5;
        self.pc = self.pc.wrapping_sub(2);
        self.reg[F] = (self.reg[F] & !XY) | ((self.pc >> 8) as u8 & XY);
    }

    /// Repeat cycle of INIR/INDR/OTIR/OTDR: H, P/V, X, Y adjusted.
    #[inline(always)]
    pub(crate) fn block_repeat_io(&mut self, ts: &mut Hot, t: u8) {
        ts.t += 5;
        self.pc = self.pc.wrapping_sub(2);
        let f = self.reg[F];
        let b = self.reg[B];
        let tmp = if f & FLAG_C != 0 {
            if f & FLAG_N != 0 {
                b.wrapping_sub(1)
            } else {
                b.wrapping_add(1)
            }
        } else {
            b
        };
        let hf = (tmp ^ b) & FLAG_H;
        let pv = parity((t & 7) ^ b ^ (tmp & 7));
        let f = (f & !(FLAG_H | FLAG_PV | XY)) | ((self.pc >> 8) as u8 & XY) | hf | pv;
        self.setf(f);
    }

    /// The flags after INI/IND/OUTI/OUTD (and their repeats) moved `v` with
    /// B now `b`; `n` is the byte added to `v` for the carry (C+-1 for the
    /// inputs, L after the move for the outputs). A repeating form with B
    /// not zero goes on to its repeat cycle.
    #[inline(always)]
    fn block_io_end(&mut self, ts: &mut Hot, repeat: bool, b: u8, v: u8, n: u8) {
        let k = n as u16 + v as u16;
        let f = SZXY[b as usize]
            | ((v >> 6) & FLAG_N)
            | if k > 0xFF { FLAG_C | FLAG_H } else { 0 }
            | parity((k as u8 & 7) ^ b);
        self.setf(f);
        if repeat && b != 0 {
            self.block_repeat_io(ts, v.wrapping_add(n));
        }
    }

    /// LDI, LDD, LDIR, LDDR.
    #[inline(always)]
    pub(crate) fn ld_block<const INC: bool, const REPEAT: bool, Bs: Bus>(
        &mut self,
        bus: &mut Bs,
        ts: &mut Hot,
    ) {
        let hl = self.hl();
        let de = self.de();
        let bc = self.bc().wrapping_sub(1);
        let v = self.rd(bus, ts, hl);
        self.set_bc(bc);
        self.wr(bus, ts, de, v);
        ts.t += 2;
        if INC {
            self.set_hl(hl.wrapping_add(1));
            self.set_de(de.wrapping_add(1));
        } else {
            self.set_hl(hl.wrapping_sub(1));
            self.set_de(de.wrapping_sub(1));
        }
        let n = v.wrapping_add(self.reg[A]);
        let f = (self.reg[F] & (FLAG_S | FLAG_Z | FLAG_C))
            | if bc != 0 { FLAG_PV } else { 0 }
            | (n & FLAG_X)
            | ((n & 0x02) << 4);
        self.setf(f);
        if REPEAT && bc != 0 {
            self.block_repeat_mem(ts);
        }
    }

    #[inline(always)]
    pub(crate) fn exec_ed<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut Hot, op: u8) {
        let y = (op >> 3) & 7;
        let z = op & 7;
        let p = y >> 1;
        match op {
            0x40..=0x7F => match z {
                0 => {
                    let bc = self.bc();
                    self.memptr = bc.wrapping_add(1);
                    let v = self.io_rd(bus, ts, bc);
                    if y != 6 {
                        self.reg[Self::ri::<0>(y)] = v;
                    }
                    let f = (self.reg[F] & FLAG_C) | SZPXY[v as usize];
                    self.setf(f);
                }
                1 => {
                    let bc = self.bc();
                    self.memptr = bc.wrapping_add(1);
                    let v = if y == 6 {
                        0
                    } else {
                        self.reg[Self::ri::<0>(y)]
                    };
                    self.io_wr(bus, ts, bc, v);
                }
                2 => {
                    ts.t += 7;
                    let hl = self.hl();
                    let v = self.rp::<0>(p);
                    let c = (self.reg[F] & FLAG_C) as u32;
                    self.memptr = hl.wrapping_add(1);
                    let (r32, mut f) = if y & 1 == 0 {
                        let r32 = (hl as u32).wrapping_sub(v as u32).wrapping_sub(c);
                        let r = r32 as u16;
                        (r32, (((hl ^ v) & (hl ^ r) & 0x8000) >> 13) as u8 | FLAG_N)
                    } else {
                        let r32 = hl as u32 + v as u32 + c;
                        let r = r32 as u16;
                        (r32, (((hl ^ r) & (v ^ r) & 0x8000) >> 13) as u8)
                    };
                    let r = r32 as u16;
                    f |= (((hl ^ v ^ r) >> 8) as u8 & FLAG_H)
                        | (r32 > 0xFFFF) as u8
                        | (SZXY[(r >> 8) as usize] & !FLAG_Z)
                        | if r == 0 { FLAG_Z } else { 0 };
                    self.setf(f);
                    self.set_hl(r);
                }
                3 => {
                    let a = self.imm16(bus, ts);
                    if y & 1 == 0 {
                        let v = self.rp::<0>(p);
                        self.wr(bus, ts, a, v as u8);
                        self.wr(bus, ts, a.wrapping_add(1), (v >> 8) as u8);
                    } else {
                        let lo = self.rd(bus, ts, a) as u16;
                        let hi = self.rd(bus, ts, a.wrapping_add(1)) as u16;
                        self.set_rp::<0>(p, (hi << 8) | lo);
                    }
                    self.memptr = a.wrapping_add(1);
                }
                4 => {
                    let a = self.reg[A];
                    let r = 0u8.wrapping_sub(a);
                    self.reg[A] = r;
                    let f = FLAG_N
                        | SZXY[r as usize]
                        | ((a ^ r) & FLAG_H)
                        | if a == 0x80 { FLAG_PV } else { 0 }
                        | (a != 0) as u8;
                    self.setf(f);
                }
                5 => {
                    // RETN, RETI (and mirrors): IFF1 <- IFF2.
                    self.iff1 = self.iff2;
                    ts.open_gate();
                    self.pc = self.pop(bus, ts);
                    self.memptr = self.pc;
                }
                6 => {
                    self.im = match y & 3 {
                        0 | 1 => 0,
                        2 => 1,
                        _ => 2,
                    };
                }
                _ => match y {
                    0 => {
                        ts.t += 1;
                        self.i = self.reg[A];
                    }
                    1 => {
                        ts.t += 1;
                        self.set_r(self.reg[A]);
                    }
                    2 | 3 => {
                        ts.t += 1;
                        let v = if y == 2 { self.i } else { self.r() };
                        self.reg[A] = v;
                        let f = (self.reg[F] & FLAG_C)
                            | SZXY[v as usize]
                            | if self.iff2 { FLAG_PV } else { 0 };
                        self.setf(f);
                    }
                    4 | 5 => {
                        let hl = self.hl();
                        let acc = self.reg[A];
                        let m = self.rd(bus, ts, hl);
                        let (na, nm) = if y == 4 {
                            ((acc & 0xF0) | (m & 0x0F), (m >> 4) | (acc << 4))
                        } else {
                            ((acc & 0xF0) | (m >> 4), (m << 4) | (acc & 0x0F))
                        };
                        self.reg[A] = na;
                        ts.t += 4;
                        self.wr(bus, ts, hl, nm);
                        self.memptr = hl.wrapping_add(1);
                        let f = (self.reg[F] & FLAG_C) | SZPXY[na as usize];
                        self.setf(f);
                    }
                    _ => {}
                },
            },
            0xA0 => self.ld_block::<true, false, Bs>(bus, ts),
            0xA8 => self.ld_block::<false, false, Bs>(bus, ts),
            0xB0 => self.ld_block::<true, true, Bs>(bus, ts),
            0xB8 => self.ld_block::<false, true, Bs>(bus, ts),
            0xA1 | 0xA9 | 0xB1 | 0xB9 => {
                // CPI CPD CPIR CPDR
                let inc = y & 1 == 0;
                let hl = self.hl();
                let v = self.rd(bus, ts, hl);
                ts.t += 5;
                if inc {
                    self.set_hl(hl.wrapping_add(1));
                    self.memptr = self.memptr.wrapping_add(1);
                } else {
                    self.set_hl(hl.wrapping_sub(1));
                    self.memptr = self.memptr.wrapping_sub(1);
                }
                let bc = self.bc().wrapping_sub(1);
                self.set_bc(bc);
                let a = self.reg[A];
                let r = a.wrapping_sub(v);
                let h = (a ^ v ^ r) & FLAG_H;
                let n = r.wrapping_sub((h != 0) as u8);
                let f = (self.reg[F] & FLAG_C)
                    | FLAG_N
                    | if bc != 0 { FLAG_PV } else { 0 }
                    | (SZXY[r as usize] & (FLAG_S | FLAG_Z))
                    | h
                    | (n & FLAG_X)
                    | ((n & 0x02) << 4);
                self.setf(f);
                if y >= 6 && bc != 0 && r != 0 {
                    self.block_repeat_mem(ts);
                }
            }
            0xA2 | 0xAA | 0xB2 | 0xBA => {
                // INI IND INIR INDR
                let inc = y & 1 == 0;
                ts.t += 1;
                let bc = self.bc();
                let v = self.io_rd(bus, ts, bc);
                let hl = self.hl();
                self.wr(bus, ts, hl, v);
                if inc {
                    self.set_hl(hl.wrapping_add(1));
                    self.memptr = bc.wrapping_add(1);
                } else {
                    self.set_hl(hl.wrapping_sub(1));
                    self.memptr = bc.wrapping_sub(1);
                }
                let b = self.reg[B].wrapping_sub(1);
                self.reg[B] = b;
                let c = if inc {
                    self.reg[C].wrapping_add(1)
                } else {
                    self.reg[C].wrapping_sub(1)
                };
                self.block_io_end(ts, y >= 6, b, v, c);
            }
            0xA3 | 0xAB | 0xB3 | 0xBB => {
                // OUTI OUTD OTIR OTDR
                let inc = y & 1 == 0;
                ts.t += 1;
                let hl = self.hl();
                let v = self.rd(bus, ts, hl);
                let b = self.reg[B].wrapping_sub(1);
                self.reg[B] = b;
                if inc {
                    self.set_hl(hl.wrapping_add(1));
                    self.memptr = self.bc().wrapping_add(1);
                } else {
                    self.set_hl(hl.wrapping_sub(1));
                    self.memptr = self.bc().wrapping_sub(1);
                }
                let bc = self.bc();
                self.io_wr(bus, ts, bc, v);
                let l = self.reg[L];
                self.block_io_end(ts, y >= 6, b, v, l);
            }
            // Everything else is an 8 T no-op (Young, "ED prefix").
            _ => {}
        }
    }
}
