//! A Z80 interpreter, generic over its bus and monomorphised (no dynamic
//! dispatch, no allocation in [`Z80::step`]).
//!
//! Timing: every instruction costs the T-states of the Zilog *Z80 CPU User
//! Manual* (UM0080) instruction tables, and every memory access happens at a
//! known T-state: the counter [`Z80::tstates`] already includes the machine
//! cycle of the access when the bus sees it (3 T for a memory read/write,
//! 4 T for an opcode fetch (M1), 4 T for an I/O cycle). The internal cycles
//! between accesses follow the per-machine-cycle breakdown of Sean Young,
//! *The Undocumented Z80 Documented* (v0.91), and are placed where
//! `rustzx-z80` 0.16 places them, which the differential tests in `tests/`
//! check access by access. The bus may add wait states by adding to the
//! counter it is handed.
//!
//! Undocumented behaviour (Young): flags bits 3/5 (X/Y), MEMPTR (WZ) and the
//! `BIT n,(HL)` X/Y flags, the Q register for `SCF`/`CCF`, the block
//! instruction flags (including the repeat-cycle X/Y/H/P rules), `SLL`,
//! `IXH`/`IXL`/`IYH`/`IYL`, DDCB/FDCB results copied to a register,
//! `OUT (C),0`, ED mirrors of `NEG`/`RETN`/`IM`.
//!
//! Modules: `bus` (the [`Bus`] trait, machine-cycle T-states, the CPU-side
//! access helpers, the run loop's `Hot` counters and interrupt gate), `flags` (flag bits, S/Z/X/Y/P tables), `registers`
//! (register-file layout, register/condition/`(IX+d)` helpers), `alu`,
//! `step` (interrupt acceptance, [`Z80::step`], [`Z80::run_until`] and its
//! idle-loop and countdown-loop passes, the DD/FD prefix chain) and `ops` (the opcode tables:
//! unprefixed and DD/FD, CB and DDCB/FDCB, ED); this file holds the register
//! file itself and its public accessors.

#![forbid(unsafe_code)]

mod alu;
mod bus;
mod flags;
mod ops;
mod registers;
mod step;

pub use bus::{Bus, T_MEM};
pub use flags::{FLAG_C, FLAG_H, FLAG_N, FLAG_PV, FLAG_S, FLAG_X, FLAG_Y, FLAG_Z};
use registers::{A, C, E, F, IXL, IYL, L};

/// Register file and control state of one Z80.
#[derive(Clone, PartialEq, Eq)]
pub struct Z80 {
    /// C B E D L H F A IXL IXH IYL IYH (pairs little-endian).
    reg: [u8; 12],
    /// C' B' E' D' L' H' F' A', same layout.
    alt: [u8; 8],
    pub pc: u16,
    pub sp: u16,
    pub i: u8,
    /// Refresh register R: bit 7 as last written (`r7`), low 7 bits from
    /// the fetch counter `rc` (see [`Z80::r`]).
    r7: u8,
    rc: u8,
    pub iff1: bool,
    pub iff2: bool,
    /// Interrupt mode 0, 1 or 2.
    pub im: u8,
    /// Executing HALT (PC stays on the HALT opcode until an interrupt).
    pub halted: bool,
    /// MEMPTR / WZ (internal; shows in the X/Y flags of `BIT n,(HL)`).
    pub memptr: u16,
    /// Q (affects X/Y of `SCF`/`CCF`), as `[last Q, Q]`: Q of the previous instruction, and the flags this
    /// instruction wrote (0 if none yet). One pair, so that the shift at
    /// every instruction's start (`begin`) is one 16-bit shift of memory
    /// instead of a byte load, a byte store and a zero store.
    qs: [u8; 2],
    /// No interrupt is accepted before the next instruction (after EI, DI,
    /// or between prefixes).
    int_blocked: bool,
    /// A DD/FD/ED prefix byte already fetched for the next step (0: none).
    prefix: u8,
    /// Free-running T-state counter; the host may reset or rebase it.
    pub tstates: u64,
}

/// Index of last Q in [`Z80::qs`].
pub(crate) const LAST_Q: usize = 0;
/// Index of Q in [`Z80::qs`].
pub(crate) const Q: usize = 1;

/// As `#[derive(Debug)]` printed the register file when Q and last Q were
/// two fields (`statehash` prints it): the same names, order and values.
impl std::fmt::Debug for Z80 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Z80")
            .field("reg", &self.reg)
            .field("alt", &self.alt)
            .field("pc", &self.pc)
            .field("sp", &self.sp)
            .field("i", &self.i)
            .field("r7", &self.r7)
            .field("rc", &self.rc)
            .field("iff1", &self.iff1)
            .field("iff2", &self.iff2)
            .field("im", &self.im)
            .field("halted", &self.halted)
            .field("memptr", &self.memptr)
            .field("q", &self.qs[Q])
            .field("last_q", &self.qs[LAST_Q])
            .field("int_blocked", &self.int_blocked)
            .field("prefix", &self.prefix)
            .field("tstates", &self.tstates)
            .finish()
    }
}

impl Default for Z80 {
    fn default() -> Self {
        Self::new()
    }
}

macro_rules! pair_accessors {
    ($($get:ident $set:ident $lo:ident;)*) => {$(
        /// One 16-bit load (two byte loads joined let LLVM test the high
        /// byte alone and keep both loads: `ADD A,(HL)` read H and L apart).
        #[inline(always)]
        pub fn $get(&self) -> u16 {
            let pair: &[u8; 2] = self.reg[$lo..$lo + 2].try_into().unwrap();
            u16::from_le_bytes(*pair)
        }
        #[inline(always)]
        pub fn $set(&mut self, v: u16) {
            let [lo, hi] = v.to_le_bytes();
            self.reg[$lo] = lo;
            self.reg[$lo + 1] = hi;
        }
    )*};
}

macro_rules! alt_accessors {
    ($($get:ident $set:ident $lo:ident;)*) => {$(
        pub fn $get(&self) -> u16 {
            u16::from_le_bytes([self.alt[$lo], self.alt[$lo + 1]])
        }
        pub fn $set(&mut self, v: u16) {
            let [lo, hi] = v.to_le_bytes();
            self.alt[$lo] = lo;
            self.alt[$lo + 1] = hi;
        }
    )*};
}

impl Z80 {
    /// All registers zero, PC 0, IM 0, interrupts disabled.
    pub const fn new() -> Self {
        Z80 {
            reg: [0; 12],
            alt: [0; 8],
            pc: 0,
            sp: 0,
            i: 0,
            r7: 0,
            rc: 0,
            iff1: false,
            iff2: false,
            im: 0,
            halted: false,
            memptr: 0,
            qs: [0, 0],
            int_blocked: false,
            prefix: 0,
            tstates: 0,
        }
    }

    pair_accessors! {
        bc set_bc C;
        de set_de E;
        hl set_hl L;
        ix set_ix IXL;
        iy set_iy IYL;
        af set_af F;
    }
    alt_accessors! {
        alt_bc set_alt_bc C;
        alt_de set_alt_de E;
        alt_hl set_alt_hl L;
        alt_af set_alt_af F;
    }

    #[inline(always)]
    pub fn a(&self) -> u8 {
        self.reg[A]
    }
    #[inline(always)]
    pub fn f(&self) -> u8 {
        self.reg[F]
    }

    /// /RESET: PC, I and R cleared, interrupts disabled, IM 0 (Zilog
    /// UM0080, "Reset"); AF and SP set to 0xFFFF (Young, "Power on
    /// defaults"); the other registers keep their contents.
    pub fn reset(&mut self) {
        self.pc = 0;
        self.i = 0;
        self.set_r(0);
        self.iff1 = false;
        self.iff2 = false;
        self.im = 0;
        self.halted = false;
        self.int_blocked = false;
        self.prefix = 0;
        self.set_af(0xFFFF);
        self.sp = 0xFFFF;
    }

    /// Would the next step refuse an interrupt (just after EI/DI or between
    /// prefix bytes)?
    pub fn int_blocked(&self) -> bool {
        self.int_blocked
    }

    /// Is a prefix byte pending (the step stopped between prefixes)?
    pub fn prefix_pending(&self) -> bool {
        self.prefix != 0
    }

    /// The pending prefix byte (DD, FD or ED), if any.
    pub fn pending_prefix(&self) -> Option<u8> {
        (self.prefix != 0).then_some(self.prefix)
    }

    /// The refresh register R.
    #[inline(always)]
    pub fn r(&self) -> u8 {
        (self.r7 & 0x80) | (self.rc & 0x7F)
    }

    #[inline(always)]
    pub fn set_r(&mut self, v: u8) {
        self.r7 = v;
        self.rc = v;
    }

    /// Q: the flags the last instruction wrote, 0 if it wrote none (affects
    /// X/Y of `SCF`/`CCF`; Young, "SCF/CCF").
    pub fn q(&self) -> u8 {
        self.qs[Q]
    }

    pub fn set_q(&mut self, q: u8) {
        self.qs[Q] = q;
    }
}
