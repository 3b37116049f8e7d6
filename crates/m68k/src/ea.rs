//! Effective-address calculation (68000 UM section 8.1 "Effective Address
//! Calculation Times"): (An) and (An)+ cost nothing beyond the operand
//! access, -(An) adds 2 idle cycles, (d16,An)/(d16,PC)/(xxx).W one extension
//! fetch, (d8,An,Xn)/(d8,PC,Xn) 2 idle cycles plus one extension fetch,
//! (xxx).L and `#<long>` two extension fetches.

use crate::bus::{Bus, FunctionCode, Observer};
use crate::core::{Ctx, R};

/// A resolved operand location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Loc {
    D(usize),
    A(usize),
    /// Data-space memory.
    Mem(u32),
    /// Program-space memory (PC-relative operands).
    Prog(u32),
    Imm(u32),
}

/// "Mode not known at compile time" for the `M` parameter of
/// [`Ctx::resolve_m`].
pub(crate) const DYN: u8 = 0xFF;

/// The [`ea_index`] of `#imm` (mode 7, register 4).
pub(crate) const IMM: u8 = 11;

/// Compile-time mode index of an effective-address field: the mode (0-6)
/// for register modes, 7 + register for mode 7 (7..=11); 12 for the
/// invalid mode-7 registers 5-7 (never decoded as valid).
#[inline(always)]
pub(crate) fn ea_index(ea: u16) -> u8 {
    let mode = ((ea >> 3) & 7) as u8;
    if mode == 7 {
        7 + ((ea & 7) as u8).min(5)
    } else {
        mode
    }
}

/// Whether resolving a source of mode index `M` (see [`ea_index`]; [`DYN`]:
/// any) may set `ir.pc_adj` (-(An), the displacement and index modes:
/// [`Ctx::resolve_m`]); with the other modes it keeps the 0 every
/// instruction starts with, so a handler need not store 0 after them.
#[inline(always)]
pub(crate) const fn sets_pc_adj(m: u8) -> bool {
    matches!(m, 4 | 5 | 6 | 9 | 10 | DYN)
}

impl<B: Bus + Observer> Ctx<'_, B> {
    /// Brief-format index extension word: disp8 + Xn.
    #[inline(always)]
    pub fn index(&self, base: u32, ext: u16) -> u32 {
        let r = (ext >> 12) as usize & 15;
        let x = if r < 8 { self.c.d[r] } else { self.c.a[r & 7] };
        let x = if ext & 0x0800 != 0 {
            x
        } else {
            x as u16 as i16 as i32 as u32
        };
        base.wrapping_add(ext as u8 as i8 as i32 as u32)
            .wrapping_add(x)
    }

    /// Post-increment / pre-decrement step: 1 for bytes except A7 (2).
    #[inline(always)]
    pub fn step_size<const S: u32>(r: usize) -> u32 {
        if S == 1 && r == 7 {
            2
        } else {
            S
        }
    }

    /// Resolve the effective address `ea` (mode<<3|reg) of an `S`-byte
    /// operand, doing the extension fetches and idle cycles, updating An for
    /// (An)+ / -(An). `PD_IDLE`: whether -(An) costs its 2 idle cycles
    /// (it does for reads and read-modify-writes, not for MOVE destinations).
    #[inline(always)]
    pub fn resolve<const S: u32, const PD_IDLE: bool>(&mut self, ea: u16) -> R<Loc> {
        self.resolve_m::<S, PD_IDLE, DYN>(ea)
    }

    /// [`Self::resolve`] with the mode known at compile time: `M` is an
    /// [`ea_index`] value (or [`DYN`]: taken from `ea` at run time), so
    /// that handlers specialised per addressing mode do no mode dispatch.
    #[inline(always)]
    pub fn resolve_m<const S: u32, const PD_IDLE: bool, const M: u8>(&mut self, ea: u16) -> R<Loc> {
        let (mode, r) = if M == DYN {
            ((ea >> 3) & 7, (ea & 7) as usize)
        } else if M >= 7 {
            (7, (M - 7) as usize)
        } else {
            (M as u16, (ea & 7) as usize)
        };
        Ok(match mode {
            0 => Loc::D(r),
            1 => Loc::A(r),
            2 => Loc::Mem(self.c.a[r]),
            3 => {
                let a = self.c.a[r];
                if S == 4 {
                    // A long read that faults leaves An unincremented.
                    self.c.pi_reg = r as u8;
                    self.c.pi_old = a;
                }
                self.c.a[r] = a.wrapping_add(Self::step_size::<S>(r));
                Loc::Mem(a)
            }
            4 => {
                // A word/byte access through -(An) that faults pushes a PC
                // 2 higher than usual (test collection, address-error frames).
                self.c.ir.pc_adj = if S == 4 { 0 } else { 2 };
                if PD_IDLE {
                    self.idle(2);
                }
                let a = self.c.a[r].wrapping_sub(Self::step_size::<S>(r));
                self.c.a[r] = a;
                Loc::Mem(a)
            }
            5 => {
                // Modes with a displacement word push a PC 2 lower.
                self.c.ir.pc_adj = -2;
                let d = self.ext()? as i16 as i32 as u32;
                Loc::Mem(self.c.a[r].wrapping_add(d))
            }
            6 => {
                self.c.ir.pc_adj = -2;
                self.idle(2);
                let e = self.ext()?;
                Loc::Mem(self.index(self.c.a[r], e))
            }
            _ => match r & 7 {
                0 => Loc::Mem(self.ext()? as i16 as i32 as u32),
                1 => Loc::Mem(self.ext_l()?),
                2 => {
                    self.c.ir.pc_adj = -2;
                    let base = self.c.pc.wrapping_sub(2);
                    let d = self.ext()? as i16 as i32 as u32;
                    Loc::Prog(base.wrapping_add(d))
                }
                3 => {
                    self.c.ir.pc_adj = -2;
                    let base = self.c.pc.wrapping_sub(2);
                    self.idle(2);
                    let e = self.ext()?;
                    Loc::Prog(self.index(base, e))
                }
                _ => {
                    if S == 4 {
                        Loc::Imm(self.ext_l()?)
                    } else {
                        Loc::Imm(self.ext()? as u32 & crate::core::mask(S))
                    }
                }
            },
        })
    }

    /// Read the operand at a resolved location.
    #[inline(always)]
    pub fn read_loc<const S: u32>(&mut self, loc: Loc) -> R<u32> {
        match loc {
            Loc::D(r) => Ok(self.dreg::<S>(r)),
            Loc::A(r) => Ok(self.c.a[r] & crate::core::mask(S)),
            Loc::Mem(a) => {
                let r = self.read::<S>(a);
                if S == 4 {
                    if r.is_err() && self.c.pi_reg < 8 {
                        self.c.a[self.c.pi_reg as usize] = self.c.pi_old;
                    }
                    self.c.pi_reg = 0xFF;
                }
                r
            }
            Loc::Prog(a) => {
                let fc = self.fc_prog();
                self.read_fc::<S>(a, fc)
            }
            Loc::Imm(v) => Ok(v),
        }
    }

    /// Write the result of a read-modify-write at a resolved location
    /// (long: low word first, as the test collection records).
    #[inline(always)]
    pub fn write_loc<const S: u32>(&mut self, loc: Loc, v: u32) -> R<()> {
        match loc {
            Loc::D(r) => {
                self.set_dreg::<S>(r, v);
                Ok(())
            }
            Loc::A(r) => {
                self.c.a[r] = v;
                Ok(())
            }
            Loc::Mem(a) | Loc::Prog(a) => self.write_rev::<S>(a, v),
            Loc::Imm(_) => Ok(()),
        }
    }

    /// Resolve and read in one go (source operands).
    #[inline(always)]
    pub fn read_ea<const S: u32>(&mut self, ea: u16) -> R<u32> {
        self.read_ea_m::<S, DYN>(ea)
    }

    /// [`Self::read_ea`] with the mode known at compile time (see
    /// [`Self::resolve_m`]).
    #[inline(always)]
    pub fn read_ea_m<const S: u32, const M: u8>(&mut self, ea: u16) -> R<u32> {
        let loc = self.resolve_m::<S, true, M>(ea)?;
        self.read_loc::<S>(loc)
    }

    /// The address of a control-mode effective address (LEA, PEA, MOVEM):
    /// normal extension fetches and index idle time.
    #[inline(always)]
    pub fn control_addr(&mut self, ea: u16) -> R<u32> {
        match self.resolve::<4, false>(ea)? {
            Loc::Mem(a) | Loc::Prog(a) => Ok(a),
            _ => Ok(0),
        }
    }

    /// Function code for a location (program space for PC-relative).
    #[inline(always)]
    pub fn loc_fc(&self, loc: Loc) -> FunctionCode {
        match loc {
            Loc::Prog(_) => self.fc_prog(),
            _ => self.fc_data(),
        }
    }
}
