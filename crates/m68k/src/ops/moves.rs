//! MOVE, MOVEA, MOVEQ, MOVEM, MOVEP, LEA, PEA, EXG, SWAP, EXT, CLR.
//!
//! Timing: 68000 UM tables 8-2/8-3 (MOVE), 8-9 (MOVEM/MOVEP), 8-7 (LEA,
//! PEA, EXG, SWAP, EXT), 8-5 (CLR); bus order per Yacht and the
//! single-step tests.

use crate::bus::{Bus, Observer};
use crate::core::{mask, sext, Ctx, R};
use crate::ea::{sets_pc_adj, Loc, IMM};

impl<B: Bus + Observer> Ctx<'_, B> {
    pub(crate) fn op_move<const S: u32, const M: u8>(&mut self, op: u16) -> R<()> {
        self.move_inline::<S, M>(op)
    }

    /// [`Self::op_move`]'s body, inlined into the dispatch for the word
    /// and long register sources.
    #[inline(always)]
    pub(crate) fn move_inline<const S: u32, const M: u8>(&mut self, op: u16) -> R<()> {
        if M == IMM && S != 4 {
            let dm = (op >> 6) & 7;
            let r = ((op >> 9) & 7) as usize;
            if dm == 5 || (dm == 7 && r == 0) {
                // `#imm` then d16(An) or (xxx).W: two consecutive extension
                // words, one paired window fetch (`ext_l`: otherwise the two
                // fetches in order, as below; `ir.pc_adj` stays 0 for both:
                // see `ea::sets_pc_adj`).
                let both = self.ext_l()?;
                let src = (both >> 16) & mask(S);
                let d = both as u16 as i16 as i32 as u32;
                let a = if dm == 5 {
                    self.c.a[r].wrapping_add(d)
                } else {
                    d
                };
                self.move_write::<S, M, false>(op, dm, false, a, src)?;
                return self.prefetch();
            }
        }
        let src = self.read_ea_m::<S, M>(op & 0x3F)?;
        let r = ((op >> 9) & 7) as usize;
        // A faulting write pushes PC ((An), (An)+) or PC - 2 (other modes):
        // `ir.pc_adj` 2 or 0, set in each destination's arm; the 0 is what
        // the instruction started with unless the source's mode changed it
        // (`ea::sets_pc_adj`, known at compile time).
        let dm = (op >> 6) & 7;
        if sets_pc_adj(M) && dm != 2 && dm != 3 {
            self.c.ir.pc_adj = 0;
        }
        match dm {
            0 => {
                self.set_logic::<S>(src);
                self.set_dreg::<S>(r, src);
                self.prefetch()
            }
            2 => {
                self.c.ir.pc_adj = 2;
                let a = self.c.a[r];
                self.move_write::<S, M, false>(op, 2, false, a, src)?;
                self.prefetch()
            }
            3 => self.move_postinc_write::<S, M>(op, r, src),
            4 => {
                let a = self.c.a[r].wrapping_sub(Self::step_size::<S>(r));
                if S != 4 {
                    self.c.a[r] = a;
                }
                self.prefetch()?;
                if S != 4 {
                    // A faulting word write stacks the prefetched word as IR.
                    self.c.ir.op = self.c.ird;
                }
                self.move_write::<S, M, true>(op, 4, false, a, src)?;
                self.c.a[r] = a;
                Ok(())
            }
            5 => {
                let d = self.ext()? as i16 as i32 as u32;
                let a = self.c.a[r].wrapping_add(d);
                self.move_write::<S, M, false>(op, 5, false, a, src)?;
                self.prefetch()
            }
            6 => {
                self.idle(2);
                let e = self.ext()?;
                let a = self.index(self.c.a[r], e);
                self.move_write::<S, M, false>(op, 6, false, a, src)?;
                self.prefetch()
            }
            _ => {
                let src_mem = !Self::move_reg_src::<M>(op);
                if r == 1 && src_mem {
                    // (xxx).L destination after a memory source: the write
                    // happens before the second extension word is replaced
                    // in the queue (Yacht; test collection).
                    let hi = self.ext()? as u32;
                    let a = hi << 16 | self.c.irc as u32;
                    self.move_write::<S, M, false>(op, 7, true, a, src)?;
                    self.ext()?;
                    return self.prefetch();
                }
                // (xxx).W or (xxx).L: one `move_write` each, so that its
                // flag steps fold for the mode.
                if r == 0 {
                    let a = self.ext()? as i16 as i32 as u32;
                    self.move_write::<S, M, false>(op, 7, false, a, src)?;
                } else {
                    let a = self.ext_l()?;
                    self.move_write::<S, M, false>(op, 7, true, a, src)?;
                }
                self.prefetch()
            }
        }
    }

    /// MOVE to (An)+: what [`Self::op_move`] does for that destination
    /// (the same steps in the same order), inlined into the dispatch for
    /// the copy loops' sources.
    #[inline(always)]
    pub(crate) fn move_to_postinc_inline<const S: u32, const M: u8>(&mut self, op: u16) -> R<()> {
        let src = self.read_ea_m::<S, M>(op & 0x3F)?;
        self.move_postinc_write::<S, M>(op, ((op >> 9) & 7) as usize, src)
    }

    /// A hot form (`ops::hot_forms!`) of the copy loops' MOVEs: to (An)+
    /// inline ([`Self::move_to_postinc_inline`]), any other destination
    /// through [`Self::op_move`]'s instance, as the dispatch did before,
    /// or with `inline_rest` through [`Self::move_inline`] (`op_move`'s
    /// body, inline).
    #[inline(always)]
    pub(crate) fn move_postinc_or<const S: u32, const M: u8>(
        &mut self,
        op: u16,
        inline_rest: bool,
    ) -> R<()> {
        if op & 0x01C0 == 0x00C0 {
            self.move_to_postinc_inline::<S, M>(op)
        } else if inline_rest {
            self.move_inline::<S, M>(op)
        } else {
            self.op_move::<S, M>(op)
        }
    }

    /// The (An)+ destination of a MOVE, its source `src` read: the write,
    /// An's step and the prefetch ([`Self::op_move`] and
    /// [`Self::move_to_postinc_inline`]).
    #[inline(always)]
    fn move_postinc_write<const S: u32, const M: u8>(
        &mut self,
        op: u16,
        r: usize,
        src: u32,
    ) -> R<()> {
        self.c.ir.pc_adj = 2;
        let a = self.c.a[r];
        let na = a.wrapping_add(Self::step_size::<S>(r));
        self.move_write::<S, M, false>(op, 3, false, a, src)?;
        // A faulting write leaves An unchanged.
        self.c.a[r] = na;
        self.prefetch()
    }

    /// MOVE to Dn: what [`Self::op_move`] does for that destination,
    /// inlined into the dispatch for register and immediate sources.
    #[inline(always)]
    pub(crate) fn move_to_d_inline<const S: u32, const M: u8>(&mut self, op: u16) -> R<()> {
        let r = ((op >> 9) & 7) as usize;
        if M == IMM {
            // `#imm` and the final prefetch both in the fetch window: one
            // paired fetch (nothing between them can fault or be seen).
            let imm = self.win_imm_prefetch::<S>();
            if let Some(src) = imm {
                self.set_logic::<S>(src);
                self.set_dreg::<S>(r, src);
                return Ok(());
            }
        }
        let src = self.read_ea_m::<S, M>(op & 0x3F)?;
        if sets_pc_adj(M) {
            self.c.ir.pc_adj = 0;
        }
        self.set_logic::<S>(src);
        self.set_dreg::<S>(r, src);
        self.prefetch()
    }

    /// Whether a MOVE's source is a register or `#imm` (known at compile
    /// time unless `M` is [`crate::ea::DYN`]).
    #[inline(always)]
    fn move_reg_src<const M: u8>(op: u16) -> bool {
        if M == crate::ea::DYN {
            (op >> 3) & 7 <= 1 || op & 0x3F == 0x3C
        } else {
            M <= 1 || M == IMM
        }
    }

    /// The flags a MOVE has set when its write faults (the microcode
    /// updates them in steps; values derived from the address-error frames
    /// of the test collection). The full result is set after the write.
    /// `dm`: the destination mode, `abs_l`: (xxx).L; the callers pass
    /// constants, so that the steps fold for their mode (and `M`).
    #[inline(always)]
    fn move_pre_flags<const S: u32, const M: u8>(&mut self, v: u32, op: u16, dm: u16, abs_l: bool) {
        let reg_src = Self::move_reg_src::<M>(op);
        if S != 4 {
            self.set_logic::<S>(v);
            return;
        }
        if reg_src && (dm == 2 || dm == 3) {
            return;
        }
        if reg_src && (dm == 5 || dm == 6) {
            let vc = self.c.sr & (crate::core::V | crate::core::C);
            self.set_logic::<2>(v >> 16);
            self.c.sr |= vc;
            return;
        }
        if dm == 2 || dm == 3 || (abs_l && !reg_src) {
            self.set_logic::<2>(v);
        } else {
            self.set_logic::<2>(v >> 16);
        }
    }

    /// (Byte and word: the flags set before the write are already the
    /// final ones, and a bus write cannot change SR; long: set them again.)
    /// `REV`: a long goes low word first (`-(An)`, `Ctx::write_rev`).
    #[inline(always)]
    fn move_write<const S: u32, const M: u8, const REV: bool>(
        &mut self,
        op: u16,
        dm: u16,
        abs_l: bool,
        a: u32,
        v: u32,
    ) -> R<()> {
        self.move_pre_flags::<S, M>(v, op, dm, abs_l);
        if REV {
            self.write_rev::<S>(a, v)?;
        } else {
            self.write::<S>(a, v)?;
        }
        if S == 4 {
            self.set_logic::<S>(v);
        }
        Ok(())
    }

    pub(crate) fn op_movea<const S: u32, const M: u8>(&mut self, op: u16) -> R<()> {
        self.movea_inline::<S, M>(op)
    }

    /// [`Self::op_movea`]'s body, inlined into the dispatch for register
    /// sources.
    #[inline(always)]
    pub(crate) fn movea_inline<const S: u32, const M: u8>(&mut self, op: u16) -> R<()> {
        if M == IMM {
            // `#imm` and the final prefetch in one paired window fetch.
            let imm = self.win_imm_prefetch::<S>();
            if let Some(src) = imm {
                self.c.a[((op >> 9) & 7) as usize] = sext(src, S);
                return Ok(());
            }
        }
        let src = self.read_ea_m::<S, M>(op & 0x3F)?;
        self.c.a[((op >> 9) & 7) as usize] = sext(src, S);
        self.prefetch()
    }

    #[inline(always)]
    pub(crate) fn op_moveq(&mut self, op: u16) -> R<()> {
        let v = op as u8 as i8 as i32 as u32;
        self.set_logic::<4>(v);
        self.c.d[((op >> 9) & 7) as usize] = v;
        self.prefetch()
    }

    #[inline(always)]
    fn reg_by_index(&self, i: usize) -> u32 {
        if i < 8 {
            self.c.d[i & 7]
        } else {
            self.c.a[i & 7]
        }
    }

    /// MOVEM registers to memory: 8+4n (word), 8+8n (long) plus EA time.
    pub(crate) fn op_movem_to_mem<const S: u32>(&mut self, op: u16) -> R<()> {
        let list = self.ext()?;
        let r = (op & 7) as usize;
        if (op >> 3) & 7 == 4 {
            // Predecrement: registers A7..A0, D7..D0 to decreasing addresses.
            // (A faulting MOVEM pushes PC, whatever the mode.)
            self.c.ir.pc_adj = 2;
            let mut addr = self.c.a[r];
            let mut m = list;
            while m != 0 {
                let i = m.trailing_zeros() as usize;
                m &= m - 1;
                let v = self.reg_by_index(15 - i);
                addr = addr.wrapping_sub(S);
                // Long: low word first (`write_rev`), one bus call for
                // work RAM.
                self.write_rev::<S>(addr, v)?;
            }
            self.c.a[r] = addr;
        } else {
            let mut addr = self.control_addr(op & 0x3F)?;
            self.c.ir.pc_adj = 2;
            let mut m = list;
            while m != 0 {
                let i = m.trailing_zeros() as usize;
                m &= m - 1;
                let v = self.reg_by_index(i);
                self.write::<S>(addr, v)?;
                addr = addr.wrapping_add(S);
            }
        }
        self.prefetch()
    }

    /// MOVEM memory to registers: 12+4n (word), 12+8n (long) plus EA time;
    /// one extra word is read after the last register.
    pub(crate) fn op_movem_to_reg<const S: u32>(&mut self, op: u16) -> R<()> {
        let list = self.ext()?;
        let r = (op & 7) as usize;
        let postinc = (op >> 3) & 7 == 3;
        let (mut addr, fc) = if postinc {
            (self.c.a[r], self.fc_data())
        } else {
            let loc = self.resolve::<4, false>(op & 0x3F)?;
            let fc = self.loc_fc(loc);
            match loc {
                Loc::Mem(a) | Loc::Prog(a) => (a, fc),
                _ => (0, fc),
            }
        };
        self.c.ir.pc_adj = 2;
        let mut m = list;
        while m != 0 {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            let v = sext(self.read_fc::<S>(addr, fc)?, S);
            if i < 8 {
                self.c.d[i & 7] = v;
            } else {
                self.c.a[i & 7] = v;
            }
            addr = addr.wrapping_add(S);
        }
        self.rw_fc(addr, fc)?;
        if postinc {
            self.c.a[r] = addr;
        }
        self.prefetch()
    }

    /// MOVEP: 16 (word) / 24 (long) cycles; bytes at every other address.
    pub(crate) fn op_movep(&mut self, op: u16, to_mem: bool, long: bool) -> R<()> {
        let d = self.ext()? as i16 as i32 as u32;
        let addr = self.c.a[(op & 7) as usize].wrapping_add(d);
        let dr = ((op >> 9) & 7) as usize;
        let n = if long { 4 } else { 2 };
        if to_mem {
            let v = self.c.d[dr];
            for i in 0..n {
                let shift = (n - 1 - i) * 8;
                self.write_b(addr.wrapping_add(i * 2), (v >> shift) as u8)?;
            }
        } else {
            let mut v = 0u32;
            for i in 0..n {
                v = v << 8 | self.read_b(addr.wrapping_add(i * 2))? as u32;
            }
            if long {
                self.c.d[dr] = v;
            } else {
                self.set_dreg::<2>(dr, v);
            }
        }
        self.prefetch()
    }

    pub(crate) fn op_lea(&mut self, op: u16) -> R<()> {
        let a = self.control_addr(op & 0x3F)?;
        if matches!(op & 0x3F, 0x30..=0x37 | 0x3B) {
            self.idle(2);
        }
        self.c.a[((op >> 9) & 7) as usize] = a;
        self.prefetch()
    }

    /// LEA with EA mode index `M` (see [`crate::ea::ea_index`]), inlined
    /// into the dispatch: what [`Self::op_lea`] does for that mode (the
    /// index modes' 2 idle cycles after the extension word).
    #[inline(always)]
    pub(crate) fn lea_inline<const M: u8>(&mut self, op: u16) -> R<()> {
        // The extension word(s) and the final prefetch both in the fetch
        // window: one paired fetch (what `resolve_m` does for these modes,
        // nothing between them can fault or be seen).
        let paired = if M == 5 || M == 9 {
            let base = if M == 5 {
                self.c.a[(op & 7) as usize]
            } else {
                self.c.pc.wrapping_sub(2)
            };
            self.win_ext_prefetch().map(|d| {
                self.c.ir.pc_adj = -2;
                base.wrapping_add(d as i16 as i32 as u32)
            })
        } else if M == 8 {
            self.win_ext_l_prefetch()
        } else {
            None
        };
        if let Some(a) = paired {
            self.c.a[((op >> 9) & 7) as usize] = a;
            return Ok(());
        }
        let a = match self.resolve_m::<4, false, M>(op & 0x3F)? {
            Loc::Mem(a) | Loc::Prog(a) => a,
            _ => 0,
        };
        if M == 6 || M == 10 {
            self.idle(2);
        }
        self.c.a[((op >> 9) & 7) as usize] = a;
        self.prefetch()
    }

    pub(crate) fn op_pea(&mut self, op: u16) -> R<()> {
        let a = self.control_addr(op & 0x3F)?;
        if matches!(op & 0x3F, 0x30..=0x37 | 0x3B) {
            self.idle(2);
        }
        let sp = self.c.a[7].wrapping_sub(4);
        self.c.a[7] = sp;
        // Absolute modes push before the prefetch, the others after it.
        let absolute = matches!(op & 0x3F, 0x38 | 0x39);
        if !absolute {
            self.prefetch()?;
        }
        self.write::<4>(sp, a)?;
        if absolute {
            self.prefetch()?;
        }
        Ok(())
    }

    #[inline(always)]
    pub(crate) fn op_exg(&mut self, op: u16) -> R<()> {
        let rx = ((op >> 9) & 7) as usize;
        let ry = (op & 7) as usize;
        match (op >> 3) & 0x1F {
            0x08 => self.c.d.swap(rx, ry),
            0x09 => self.c.a.swap(rx, ry),
            _ => std::mem::swap(&mut self.c.d[rx], &mut self.c.a[ry]),
        }
        self.prefetch()?;
        self.idle(2);
        Ok(())
    }

    #[inline(always)]
    pub(crate) fn op_swap(&mut self, op: u16) -> R<()> {
        let r = (op & 7) as usize;
        let v = self.c.d[r].rotate_left(16);
        self.c.d[r] = v;
        self.set_logic::<4>(v);
        self.prefetch()
    }

    #[inline(always)]
    pub(crate) fn op_ext(&mut self, op: u16, long: bool) -> R<()> {
        let r = (op & 7) as usize;
        if long {
            let v = self.c.d[r] as u16 as i16 as i32 as u32;
            self.c.d[r] = v;
            self.set_logic::<4>(v);
        } else {
            let v = self.c.d[r] as u8 as i8 as u16 as u32;
            self.set_dreg::<2>(r, v);
            self.set_logic::<2>(v);
        }
        self.prefetch()
    }

    /// CLR: the 68000 reads the operand before writing zero.
    pub(crate) fn op_clr<const S: u32, const M: u8>(&mut self, op: u16) -> R<()> {
        self.clr_inline::<S, M>(op)
    }

    /// [`Self::op_clr`]'s body, inlined into the dispatch for Dn.
    #[inline(always)]
    pub(crate) fn clr_inline<const S: u32, const M: u8>(&mut self, op: u16) -> R<()> {
        let loc = self.resolve_m::<S, true, M>(op & 0x3F)?;
        if let Loc::D(r) = loc {
            self.set_dreg::<S>(r, 0);
            self.set_logic::<S>(0);
            self.prefetch()?;
            if S == 4 {
                self.idle(2);
            }
            return Ok(());
        }
        self.read_loc::<S>(loc)?;
        self.prefetch()?;
        self.set_logic::<S>(0);
        self.write_loc::<S>(loc, 0)
    }
}
