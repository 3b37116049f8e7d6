//! ADD/SUB/CMP/AND/OR/EOR in all their forms (register, memory,
//! immediate, quick, address), ADDX/SUBX, CMPM, NEG/NEGX, TST.
//!
//! Timing: 68000 UM tables 8-4 (standard), 8-5 (immediate), 8-6 (single
//! operand), 8-10 (multi-precision); long register forms take 2 or 4 idle
//! cycles after the prefetch.

use crate::bus::{Bus, Observer};
use crate::core::{mask, sext, Ctx, R};
use crate::decode::Alu;
use crate::ea::{Loc, IMM};

impl<B: Bus + Observer> Ctx<'_, B> {
    /// Apply a binary operation, setting flags; returns the result (for CMP
    /// the destination is returned unchanged).
    #[inline(always)]
    pub(crate) fn alu<const S: u32>(&mut self, a: Alu, s: u32, d: u32) -> u32 {
        match a {
            Alu::Add => self.add::<S, false>(s, d),
            Alu::Sub => self.sub::<S, false>(s, d),
            Alu::Cmp => {
                self.cmp::<S>(s, d);
                d
            }
            Alu::And => {
                let r = s & d & mask(S);
                self.set_logic::<S>(r);
                r
            }
            Alu::Or => {
                let r = (s | d) & mask(S);
                self.set_logic::<S>(r);
                r
            }
            Alu::Eor => {
                let r = (s ^ d) & mask(S);
                self.set_logic::<S>(r);
                r
            }
        }
    }

    /// <ea> op Dn -> Dn (ADD, SUB, CMP, AND, OR): 4+ea; long 6+ea, or 8 for
    /// register/immediate sources (CMP.L always 6+ea).
    pub(crate) fn op_alu_to_d<const S: u32, const M: u8>(&mut self, op: u16, a: Alu) -> R<()> {
        self.alu_to_d_inline::<S, M>(op, a)
    }

    /// [`Self::op_alu_to_d`]'s body, inlined into the dispatch for register
    /// sources (the common case: no call, no register saves).
    #[inline(always)]
    pub(crate) fn alu_to_d_inline<const S: u32, const M: u8>(&mut self, op: u16, a: Alu) -> R<()> {
        if M == IMM {
            // `#imm` and the final prefetch both in the fetch window: one
            // paired fetch (nothing between them can fault or be seen).
            let imm = self.win_imm_prefetch::<S>();
            if let Some(s) = imm {
                let r = ((op >> 9) & 7) as usize;
                let d = self.dreg::<S>(r);
                let v = self.alu::<S>(a, s, d);
                if a != Alu::Cmp {
                    self.set_dreg::<S>(r, v);
                }
                if S == 4 {
                    self.idle(if a == Alu::Cmp { 2 } else { 4 });
                }
                return Ok(());
            }
        }
        let loc = self.resolve_m::<S, true, M>(op & 0x3F)?;
        let s = self.read_loc::<S>(loc)?;
        let r = ((op >> 9) & 7) as usize;
        let d = self.dreg::<S>(r);
        let v = self.alu::<S>(a, s, d);
        if a != Alu::Cmp {
            self.set_dreg::<S>(r, v);
        }
        self.prefetch()?;
        if S == 4 {
            let reg_src = matches!(loc, Loc::D(_) | Loc::A(_) | Loc::Imm(_));
            self.idle(if a == Alu::Cmp || !reg_src { 2 } else { 4 });
        }
        Ok(())
    }

    /// Dn op <ea> -> <ea> (ADD, SUB, AND, OR, EOR): 8+ea, long 12+ea
    /// (read, prefetch, write); EOR Dn,Dn 4 / 8.
    pub(crate) fn op_alu_to_ea<const S: u32, const M: u8>(&mut self, op: u16, a: Alu) -> R<()> {
        self.alu_to_ea_inline::<S, M>(op, a)
    }

    /// [`Self::op_alu_to_ea`]'s body, inlined into the dispatch for the
    /// (An) destination.
    #[inline(always)]
    pub(crate) fn alu_to_ea_inline<const S: u32, const M: u8>(&mut self, op: u16, a: Alu) -> R<()> {
        let s = self.dreg::<S>(((op >> 9) & 7) as usize);
        let loc = self.resolve_m::<S, true, M>(op & 0x3F)?;
        if let Loc::D(r) = loc {
            let d = self.dreg::<S>(r);
            let v = self.alu::<S>(a, s, d);
            self.set_dreg::<S>(r, v);
            self.prefetch()?;
            if S == 4 {
                self.idle(4);
            }
            return Ok(());
        }
        let d = self.read_loc::<S>(loc)?;
        let v = self.alu::<S>(a, s, d);
        self.prefetch()?;
        self.write_loc::<S>(loc, v)
    }

    /// #imm op <ea>: Dn 8 / 16 (CMPI.L 14); memory 12+ea /
    /// 20+ea (CMPI 8+ea / 12+ea).
    pub(crate) fn op_alu_imm<const S: u32, const M: u8>(&mut self, op: u16, a: Alu) -> R<()> {
        self.alu_imm_inline::<S, M>(op, a)
    }

    /// [`Self::op_alu_imm`]'s body, inlined into the dispatch for a Dn
    /// destination.
    #[inline(always)]
    pub(crate) fn alu_imm_inline<const S: u32, const M: u8>(&mut self, op: u16, a: Alu) -> R<()> {
        if M == 0 {
            // To Dn with `#imm` and the final prefetch both in the fetch
            // window: one paired fetch (nothing between them can fault or
            // be seen).
            let imm = self.win_imm_prefetch::<S>();
            if let Some(s) = imm {
                let r = (op & 7) as usize;
                let d = self.dreg::<S>(r);
                let v = self.alu::<S>(a, s, d);
                self.set_dreg::<S>(r, v);
                if S == 4 {
                    self.idle(if a == Alu::Cmp { 2 } else { 4 });
                }
                return Ok(());
            }
        }
        // `#imm.B/.W` then d16(An) or (xxx).W: both extension words in
        // the fetch window take one paired fetch (what `resolve_m` does
        // for these modes, `ir.pc_adj` included).
        let paired = if S != 4 && (M == 5 || M == 7) {
            self.win_ext_l().map(|both| {
                let d = both as u16 as i16 as i32 as u32;
                let a = if M == 5 {
                    self.c.ir.pc_adj = -2;
                    self.c.a[(op & 7) as usize].wrapping_add(d)
                } else {
                    d
                };
                ((both >> 16) & mask(S), Loc::Mem(a))
            })
        } else {
            None
        };
        let (s, loc) = match paired {
            Some(p) => p,
            None => {
                let s = if S == 4 {
                    self.ext_l()?
                } else {
                    self.ext()? as u32 & mask(S)
                };
                (s, self.resolve_m::<S, true, M>(op & 0x3F)?)
            }
        };
        if let Loc::D(r) = loc {
            let d = self.dreg::<S>(r);
            let v = self.alu::<S>(a, s, d);
            self.set_dreg::<S>(r, v);
            self.prefetch()?;
            if S == 4 {
                self.idle(if a == Alu::Cmp { 2 } else { 4 });
            }
            return Ok(());
        }
        let d = self.read_loc::<S>(loc)?;
        let v = self.alu::<S>(a, s, d);
        self.prefetch()?;
        if a != Alu::Cmp {
            self.write_loc::<S>(loc, v)?;
        }
        Ok(())
    }

    /// ADDA/SUBA/CMPA: word 8+ea, long 6+ea (8 register/immediate); CMPA
    /// 6+ea.
    pub(crate) fn op_alu_a<const S: u32, const M: u8>(&mut self, op: u16, a: Alu) -> R<()> {
        self.alu_a_inline::<S, M>(op, a)
    }

    /// [`Self::op_alu_a`]'s body, inlined into the dispatch for register
    /// sources (the common case: no call, no register saves).
    #[inline(always)]
    pub(crate) fn alu_a_inline<const S: u32, const M: u8>(&mut self, op: u16, a: Alu) -> R<()> {
        if M == IMM {
            // `#imm` and the final prefetch in one paired window fetch.
            let imm = self.win_imm_prefetch::<S>();
            if let Some(s) = imm {
                self.alu_a_apply(op, a, sext(s, S));
                self.idle(if a == Alu::Cmp { 2 } else { 4 });
                return Ok(());
            }
        }
        let loc = self.resolve_m::<S, true, M>(op & 0x3F)?;
        let s = sext(self.read_loc::<S>(loc)?, S);
        self.alu_a_apply(op, a, s);
        self.prefetch()?;
        let reg_src = matches!(loc, Loc::D(_) | Loc::A(_) | Loc::Imm(_));
        self.idle(if a == Alu::Cmp || (S == 4 && !reg_src) {
            2
        } else {
            4
        });
        Ok(())
    }

    /// ADDA/SUBA/CMPA with the source `s` (sign-extended) on the register
    /// of `op`'s bits 9-11 (CMPA sets the flags, the others none).
    #[inline(always)]
    fn alu_a_apply(&mut self, op: u16, a: Alu, s: u32) {
        let r = ((op >> 9) & 7) as usize;
        let d = self.c.a[r];
        match a {
            Alu::Add => self.c.a[r] = d.wrapping_add(s),
            Alu::Sub => self.c.a[r] = d.wrapping_sub(s),
            _ => self.cmp::<4>(s, d),
        }
    }

    /// ADDQ/SUBQ to Dn or memory: Dn 4 / 8, memory 8+ea / 12+ea.
    pub(crate) fn op_addq<const S: u32, const M: u8>(&mut self, op: u16, sub: bool) -> R<()> {
        self.addq_inline::<S, M>(op, sub)
    }

    /// [`Self::op_addq`]'s body, inlined into the dispatch for Dn (no
    /// call, no register saves).
    #[inline(always)]
    pub(crate) fn addq_inline<const S: u32, const M: u8>(&mut self, op: u16, sub: bool) -> R<()> {
        let q = match (op >> 9) & 7 {
            0 => 8,
            n => n as u32,
        };
        let a = if sub { Alu::Sub } else { Alu::Add };
        let loc = self.resolve_m::<S, true, M>(op & 0x3F)?;
        if let Loc::D(r) = loc {
            let d = self.dreg::<S>(r);
            let v = self.alu::<S>(a, q, d);
            self.set_dreg::<S>(r, v);
            self.prefetch()?;
            if S == 4 {
                self.idle(4);
            }
            return Ok(());
        }
        let d = self.read_loc::<S>(loc)?;
        let v = self.alu::<S>(a, q, d);
        self.prefetch()?;
        self.write_loc::<S>(loc, v)
    }

    /// ADDQ/SUBQ to An: whole register, no flags, 8 cycles.
    #[inline(always)]
    pub(crate) fn op_addq_a(&mut self, op: u16, sub: bool) -> R<()> {
        let q = match (op >> 9) & 7 {
            0 => 8,
            n => n as u32,
        };
        let r = (op & 7) as usize;
        self.c.a[r] = if sub {
            self.c.a[r].wrapping_sub(q)
        } else {
            self.c.a[r].wrapping_add(q)
        };
        self.prefetch()?;
        self.idle(4);
        Ok(())
    }

    /// ADDX/SUBX: Dn 4 / 8; -(Ay),-(Ax) 18 / 30.
    pub(crate) fn op_addx<const S: u32>(&mut self, op: u16, mem: bool, sub: bool) -> R<()> {
        let rx = ((op >> 9) & 7) as usize;
        let ry = (op & 7) as usize;
        if !mem {
            return self.addx_reg_inline::<S>(op, sub);
        }
        self.idle(2);
        let s = self.read_predec::<S>(ry)?;
        let d = self.read_predec::<S>(rx)?;
        let v = if sub {
            self.sub::<S, true>(s, d)
        } else {
            self.add::<S, true>(s, d)
        };
        let a = self.c.a[rx];
        if S == 4 {
            self.write_w(a.wrapping_add(2), v as u16)?;
            self.prefetch()?;
            self.write_w(a, (v >> 16) as u16)
        } else {
            self.prefetch()?;
            self.write::<S>(a, v)
        }
    }

    /// ADDX/SUBX Dy,Dx: [`Self::op_addx`]'s register form, inlined into
    /// the dispatch for the word and long sizes.
    #[inline(always)]
    pub(crate) fn addx_reg_inline<const S: u32>(&mut self, op: u16, sub: bool) -> R<()> {
        let rx = ((op >> 9) & 7) as usize;
        let ry = (op & 7) as usize;
        let s = self.dreg::<S>(ry);
        let d = self.dreg::<S>(rx);
        let v = if sub {
            self.sub::<S, true>(s, d)
        } else {
            self.add::<S, true>(s, d)
        };
        self.set_dreg::<S>(rx, v);
        self.prefetch()?;
        if S == 4 {
            self.idle(4);
        }
        Ok(())
    }

    /// Read through -(An) for the multi-precision forms: a long is read low
    /// word first, decrementing An by 2 before each word.
    #[inline(always)]
    pub(crate) fn read_predec<const S: u32>(&mut self, r: usize) -> R<u32> {
        // A faulting access here pushes PC (not PC - 2).
        self.c.ir.pc_adj = 2;
        if S == 4 {
            // A long read that faults leaves An unchanged.
            let a = self.c.a[r].wrapping_sub(2);
            let lo = self.read_w(a)? as u32;
            let a = a.wrapping_sub(2);
            let hi = self.read_w(a)? as u32;
            self.c.a[r] = a;
            Ok(hi << 16 | lo)
        } else {
            let a = self.c.a[r].wrapping_sub(Self::step_size::<S>(r));
            self.c.a[r] = a;
            self.read::<S>(a)
        }
    }

    /// CMPM (Ay)+,(Ax)+: 12 / 20.
    pub(crate) fn op_cmpm<const S: u32>(&mut self, op: u16) -> R<()> {
        let rx = ((op >> 9) & 7) as usize;
        let ry = (op & 7) as usize;
        // A faulting read pushes PC; a faulting long read leaves An as is.
        self.c.ir.pc_adj = 2;
        let sa = self.c.a[ry];
        let na = sa.wrapping_add(Self::step_size::<S>(ry));
        // (A faulting long source read leaves Ay advanced by 2 only.)
        self.c.a[ry] = if S == 4 { sa.wrapping_add(2) } else { na };
        let s = self.read::<S>(sa)?;
        self.c.a[ry] = na;
        let da = self.c.a[rx];
        let na = da.wrapping_add(Self::step_size::<S>(rx));
        let d = self.read::<S>(da)?;
        self.c.a[rx] = na;
        self.cmp::<S>(s, d);
        self.prefetch()
    }

    /// NEG/NEGX: Dn 4 / 6, memory 8+ea / 12+ea.
    pub(crate) fn op_neg<const S: u32>(&mut self, op: u16, x: bool) -> R<()> {
        let loc = self.resolve::<S, true>(op & 0x3F)?;
        let d = self.read_loc::<S>(loc)?;
        let v = if x {
            self.sub::<S, true>(d, 0)
        } else {
            self.sub::<S, false>(d, 0)
        };
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

    /// TST: 4+ea.
    pub(crate) fn op_tst<const S: u32, const M: u8>(&mut self, op: u16) -> R<()> {
        self.tst_inline::<S, M>(op)
    }

    /// [`Self::op_tst`]'s body, inlined into the dispatch for Dn, and for
    /// (An) and d16(An) in bytes and words.
    #[inline(always)]
    pub(crate) fn tst_inline<const S: u32, const M: u8>(&mut self, op: u16) -> R<()> {
        let v = self.read_ea_m::<S, M>(op & 0x3F)?;
        self.set_logic::<S>(v);
        self.prefetch()
    }
}
