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

#![forbid(unsafe_code)]

pub const FLAG_C: u8 = 0x01;
pub const FLAG_N: u8 = 0x02;
pub const FLAG_PV: u8 = 0x04;
pub const FLAG_X: u8 = 0x08;
pub const FLAG_H: u8 = 0x10;
pub const FLAG_Y: u8 = 0x20;
pub const FLAG_Z: u8 = 0x40;
pub const FLAG_S: u8 = 0x80;
const XY: u8 = FLAG_X | FLAG_Y;

/// T-states of a memory read or write machine cycle (Zilog UM0080: MRD/MWR
/// cycles are 3 T).
const T_MEM: u64 = 3;
/// T-states of an opcode fetch (M1) cycle (Zilog UM0080: 4 T).
const T_M1: u64 = 4;
/// T-states of an I/O cycle (Zilog UM0080: 4 T including the automatic wait
/// state TW).
const T_IO: u64 = 4;
/// T-states of the interrupt-acknowledge M1 cycle in modes 0/1/2 (Young,
/// "Interrupts": M1 with two extra wait states, 7 T; IM 1 = 13 T, IM 2 = 19 T
/// in total).
const T_INT_ACK: u64 = 7;

/// What the Z80 sees around it. `t` is the CPU's T-state counter
/// ([`Z80::tstates`]) at the access, already including the machine cycle of
/// this access; the bus adds wait states by adding to it.
pub trait Bus {
    /// Memory read (MREQ, RD).
    fn read(&mut self, addr: u16, t: &mut u64) -> u8;
    /// Memory write (MREQ, WR).
    fn write(&mut self, addr: u16, value: u8, t: &mut u64);
    /// Opcode fetch (M1); by default a plain read.
    #[inline(always)]
    fn fetch(&mut self, addr: u16, t: &mut u64) -> u8 {
        self.read(addr, t)
    }
    /// I/O read (IORQ, RD).
    #[inline(always)]
    fn read_io(&mut self, _port: u16, _t: &mut u64) -> u8 {
        0xFF
    }
    /// I/O write (IORQ, WR).
    #[inline(always)]
    fn write_io(&mut self, _port: u16, _value: u8, _t: &mut u64) {}
    /// Level of the /INT line (true = asserted).
    fn int_line(&self) -> bool;
    /// The byte at `addr` when fetching or reading it is plain memory: no
    /// side effect on the bus (its state, [`Bus::int_line`], any log) and
    /// no wait state; `None` otherwise. [`Z80::run_until`] uses it to pass
    /// over idle loops (`HALT`, `JR $`, `JP $`) without making those
    /// accesses one by one. By default nothing can be peeked (every access
    /// is made).
    #[inline(always)]
    fn peek(&self, _addr: u16) -> Option<u8> {
        None
    }
    /// Byte on the data bus during the interrupt acknowledge (IM 2 vector
    /// low byte). Mode 0 always executes `RST 38h`, i.e. assumes 0xFF.
    #[inline(always)]
    fn int_vector(&mut self) -> u8 {
        0xFF
    }
}

// Indices into `Z80::reg`: register pairs little-endian (low byte first),
// so a pair is one 16-bit load. `RIDX` maps the 3-bit register codes of the
// opcodes (B C D E H L (HL) A) onto them.
const C: usize = 0;
const B: usize = 1;
const E: usize = 2;
const D: usize = 3;
const L: usize = 4;
const H: usize = 5;
const F: usize = 6;
const A: usize = 7;
const IXL: usize = 8;
const IXH: usize = 9;
const IYL: usize = 10;
const IYH: usize = 11;

/// Register index of 3-bit code r, without prefix / with DD / with FD (code
/// 6, (HL), maps to F and is never used as a register).
const RIDX: [[u8; 8]; 3] = [
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

const fn build_szxy(parity: bool) -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let v = i as u8;
        let mut f = v & (FLAG_S | XY);
        if v == 0 {
            f |= FLAG_Z;
        }
        if parity && v.count_ones() % 2 == 0 {
            f |= FLAG_PV;
        }
        t[i] = f;
        i += 1;
    }
    t
}
/// S, Z, X, Y of a result.
const SZXY: [u8; 256] = build_szxy(false);
/// S, Z, X, Y and even parity of a result.
const SZPXY: [u8; 256] = build_szxy(true);

#[inline(always)]
fn parity(v: u8) -> u8 {
    if v.count_ones() & 1 == 0 {
        FLAG_PV
    } else {
        0
    }
}

/// Register file and control state of one Z80.
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// Q: the flags the last instruction wrote, 0 if it wrote none (affects
    /// X/Y of `SCF`/`CCF`).
    /// Q: the flags this instruction wrote, 0 if none yet.
    q: u8,
    /// Q of the previous instruction.
    last_q: u8,
    /// No interrupt is accepted before the next instruction (after EI, DI,
    /// or between prefixes).
    int_blocked: bool,
    /// A DD/FD/ED prefix byte already fetched for the next step (0: none).
    prefix: u8,
    /// Free-running T-state counter; the host may reset or rebase it.
    pub tstates: u64,
}

impl Default for Z80 {
    fn default() -> Self {
        Self::new()
    }
}

macro_rules! pair_accessors {
    ($($get:ident $set:ident $lo:ident;)*) => {$(
        #[inline(always)]
        pub fn $get(&self) -> u16 {
            u16::from_le_bytes([self.reg[$lo], self.reg[$lo + 1]])
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
            q: 0,
            last_q: 0,
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

    // ---------------------------------------------------------------- access

    #[inline(always)]
    fn rd<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64, a: u16) -> u8 {
        *ts += T_MEM;
        bus.read(a, ts)
    }
    #[inline(always)]
    fn wr<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64, a: u16, v: u8) {
        *ts += T_MEM;
        bus.write(a, v, ts)
    }
    #[inline(always)]
    fn io_rd<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64, port: u16) -> u8 {
        *ts += T_IO;
        bus.read_io(port, ts)
    }
    #[inline(always)]
    fn io_wr<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64, port: u16, v: u8) {
        *ts += T_IO;
        bus.write_io(port, v, ts)
    }
    /// R increment (one per M1 cycle; the low 7 bits count, bit 7 stays).
    #[inline(always)]
    fn inc_r(&mut self) {
        self.rc = self.rc.wrapping_add(1);
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
    /// M1: opcode fetch, R increment.
    #[inline(always)]
    fn fetch_op<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64) -> u8 {
        let pc = self.pc;
        self.pc = pc.wrapping_add(1);
        self.inc_r();
        *ts += T_M1;
        bus.fetch(pc, ts)
    }
    #[inline(always)]
    fn imm8<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64) -> u8 {
        let pc = self.pc;
        self.pc = pc.wrapping_add(1);
        self.rd(bus, ts, pc)
    }
    #[inline(always)]
    fn imm16<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64) -> u16 {
        let lo = self.imm8(bus, ts) as u16;
        let hi = self.imm8(bus, ts) as u16;
        (hi << 8) | lo
    }
    #[inline(always)]
    fn push<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64, v: u16) {
        self.sp = self.sp.wrapping_sub(1);
        self.wr(bus, ts, self.sp, (v >> 8) as u8);
        self.sp = self.sp.wrapping_sub(1);
        self.wr(bus, ts, self.sp, v as u8);
    }
    #[inline(always)]
    fn pop<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64) -> u16 {
        let lo = self.rd(bus, ts, self.sp) as u16;
        self.sp = self.sp.wrapping_add(1);
        let hi = self.rd(bus, ts, self.sp) as u16;
        self.sp = self.sp.wrapping_add(1);
        (hi << 8) | lo
    }

    // ------------------------------------------------------------- registers

    /// Register index of 3-bit code `r` under prefix P (0 none, 1 DD, 2 FD).
    #[inline(always)]
    fn ri<const P: u8>(r: u8) -> usize {
        RIDX[P as usize][(r & 7) as usize] as usize
    }
    #[inline(always)]
    fn get8<const P: u8>(&self, r: u8) -> u8 {
        self.reg[Self::ri::<P>(r)]
    }
    #[inline(always)]
    fn set8<const P: u8>(&mut self, r: u8, v: u8) {
        self.reg[Self::ri::<P>(r)] = v;
    }
    #[inline(always)]
    fn xy<const P: u8>(&self) -> u16 {
        match P {
            0 => self.hl(),
            1 => self.ix(),
            _ => self.iy(),
        }
    }
    #[inline(always)]
    fn set_xy<const P: u8>(&mut self, v: u16) {
        match P {
            0 => self.set_hl(v),
            1 => self.set_ix(v),
            _ => self.set_iy(v),
        }
    }
    /// rp table: BC, DE, HL/IX/IY, SP.
    #[inline(always)]
    fn rp<const P: u8>(&self, p: u8) -> u16 {
        match p {
            0 => self.bc(),
            1 => self.de(),
            2 => self.xy::<P>(),
            _ => self.sp,
        }
    }
    #[inline(always)]
    fn set_rp<const P: u8>(&mut self, p: u8, v: u16) {
        match p {
            0 => self.set_bc(v),
            1 => self.set_de(v),
            2 => self.set_xy::<P>(v),
            _ => self.sp = v,
        }
    }
    #[inline(always)]
    fn setf(&mut self, f: u8) {
        self.reg[F] = f;
        self.q = f;
    }
    #[inline(always)]
    fn cond(&self, c: u8) -> bool {
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
    fn ea<const P: u8, Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64) -> u16 {
        if P == 0 {
            self.hl()
        } else {
            let d = self.rd(bus, ts, self.pc) as i8;
            *ts += 5;
            self.pc = self.pc.wrapping_add(1);
            let a = self.xy::<P>().wrapping_add(d as u16);
            self.memptr = a;
            a
        }
    }

    // ------------------------------------------------------------------- ALU

    #[inline(always)]
    fn alu(&mut self, op: u8, v: u8) {
        let a = self.reg[A];
        let cin = (self.reg[F] & FLAG_C) as u16;
        match op & 7 {
            0 | 1 => {
                let c = if op & 7 == 1 { cin } else { 0 };
                let r16 = a as u16 + v as u16 + c;
                let r = r16 as u8;
                let f = SZXY[r as usize]
                    | ((a ^ v ^ r) & FLAG_H)
                    | (((a ^ r) & (v ^ r) & 0x80) >> 5)
                    | (r16 >> 8) as u8;
                self.reg[A] = r;
                self.setf(f);
            }
            2 | 3 | 7 => {
                let c = if op & 7 == 3 { cin } else { 0 };
                let r16 = (a as u16).wrapping_sub(v as u16).wrapping_sub(c);
                let r = r16 as u8;
                let mut f = ((a ^ v ^ r) & FLAG_H)
                    | (((a ^ v) & (a ^ r) & 0x80) >> 5)
                    | ((r16 >> 8) as u8 & FLAG_C)
                    | FLAG_N;
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
    fn inc8(&mut self, v: u8) -> u8 {
        let r = v.wrapping_add(1);
        let f = (self.reg[F] & FLAG_C)
            | SZXY[r as usize]
            | ((v ^ r) & FLAG_H)
            | if v == 0x7F { FLAG_PV } else { 0 };
        self.setf(f);
        r
    }
    #[inline(always)]
    fn dec8(&mut self, v: u8) -> u8 {
        let r = v.wrapping_sub(1);
        let f = (self.reg[F] & FLAG_C)
            | SZXY[r as usize]
            | ((v ^ r) & FLAG_H)
            | FLAG_N
            | if v == 0x80 { FLAG_PV } else { 0 };
        self.setf(f);
        r
    }

    /// CB rotate/shift `op` (0..7) with flags.
    #[inline(always)]
    fn rot(&mut self, op: u8, v: u8) -> u8 {
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
    fn bit_flags(&mut self, n: u8, v: u8, xy_src: u8) {
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

    // ------------------------------------------------------------------ step

    /// Accept the maskable interrupt (IFF1 set, /INT asserted).
    #[inline(always)]
    fn interrupt<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64) {
        self.q = 0;
        if self.halted {
            self.halted = false;
            self.pc = self.pc.wrapping_add(1);
        }
        self.inc_r();
        self.iff1 = false;
        self.iff2 = false;
        // The acknowledge M1 cycle comes first, then the pushes (and in IM 2
        // the vector reads): Young, "Interrupts", and Zilog UM0080 figures
        // "Interrupt Request/Acknowledge Cycle" / "Mode 2 Interrupt".
        *ts += T_INT_ACK;
        let pc = self.pc;
        if self.im == 2 {
            let v = bus.int_vector();
            self.push(bus, ts, pc);
            let a = ((self.i as u16) << 8) | v as u16;
            let lo = self.rd(bus, ts, a) as u16;
            let hi = self.rd(bus, ts, a.wrapping_add(1)) as u16;
            self.pc = (hi << 8) | lo;
        } else {
            // IM 0 with 0xFF on the data bus (the Mega Drive) is RST 38h,
            // same as IM 1.
            self.push(bus, ts, pc);
            self.pc = 0x0038;
        }
        self.memptr = self.pc;
    }

    /// One step: accept a pending interrupt if allowed, then execute one
    /// instruction (or one more prefix byte of a DD/FD chain).
    #[inline(always)]
    pub fn step<Bs: Bus>(&mut self, bus: &mut Bs) {
        let mut ts = self.tstates;
        self.step_t(bus, &mut ts);
        self.tstates = ts;
    }

    /// [`Z80::step`] with the T-state counter apart from the registers
    /// (`ts`, in place of [`Z80::tstates`]): in `run_until` it is a local
    /// of its own, which the compiler keeps in a host register even though
    /// the rest of the register file stays in memory.
    #[inline(always)]
    fn step_t<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64) {
        if self.int_blocked {
            self.int_blocked = false;
            if self.prefix != 0 {
                self.step_pending_prefix(bus, ts);
                return;
            }
        } else if self.iff1 && bus.int_line() {
            self.interrupt(bus, ts);
        }
        let op = self.fetch_op(bus, ts);
        self.begin();
        self.exec_main::<0, Bs>(bus, ts, op);
    }

    /// The step after a DD/FD that was followed by another prefix: that
    /// prefix was fetched already.
    #[inline(always)]
    fn step_pending_prefix<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64) {
        let op = self.prefix;
        self.prefix = 0;
        self.begin();
        match op {
            0xDD => self.prefixed::<1, Bs>(bus, ts),
            0xFD => self.prefixed::<2, Bs>(bus, ts),
            _ => {
                let op2 = self.fetch_op(bus, ts);
                self.exec_ed(bus, ts, op2);
            }
        }
    }

    /// Run steps until the T-state counter reaches `until`. The registers
    /// live in a local copy meanwhile, and the T-state counter in a local of
    /// its own: the copy stays in memory (the CB/ED decoders index the
    /// register file at run time, so LLVM cannot split it into scalars),
    /// the counter in a host register.
    ///
    /// A CPU that starts the call idle (halted, or on `JR $` / `JP $`) with
    /// no interrupt to accept and code the bus lets it [`Bus::peek`] jumps
    /// to the end of the call in one go: same T-states, R, MEMPTR and Q as
    /// stepping there (see `skip_idle`).
    #[inline]
    pub fn run_until<Bs: Bus>(&mut self, bus: &mut Bs, until: u64) {
        let mut cpu = self.clone();
        if cpu.tstates < until {
            cpu.skip_idle(bus, until);
        }
        let mut ts = cpu.tstates;
        while ts < until {
            cpu.step_t(bus, &mut ts);
        }
        cpu.tstates = ts;
        *self = cpu;
    }

    /// Pass over the idle loop at PC up to `until`, if there is one:
    /// `HALT` while halted (each pass re-fetches the HALT opcode: one M1
    /// cycle, 4 T, Zilog UM0080), `JR $` (18 FE: 4 + 3 + 5 = 12 T, UM0080
    /// "JR e") or `JP $` (C3 nn with nn = PC: 4 + 3 + 3 = 10 T, UM0080
    /// "JP nn"). Only when stepping would take no interrupt (IFF1 clear or
    /// /INT high; the line cannot change during these passes since they make
    /// no bus access that has an effect) and no prefix or EI/DI delay is
    /// pending. Every pass starts as many T-states later as it lasts, so the
    /// steps that `run_until` would make are the passes starting before
    /// `until`: n = ceil((until - now) / period). Each pass has one M1 (R + 1),
    /// writes no flags (Q: 0, the previous Q moves to "last" once), and a
    /// jump sets MEMPTR to its target, PC itself.
    #[inline]
    fn skip_idle<Bs: Bus>(&mut self, bus: &mut Bs, until: u64) {
        if self.int_blocked || self.prefix != 0 || (self.iff1 && bus.int_line()) {
            return;
        }
        let pc = self.pc;
        let Some(op) = bus.peek(pc) else {
            return;
        };
        let period = if self.halted {
            if op != 0x76 {
                return;
            }
            T_M1
        } else if op == 0x18 && bus.peek(pc.wrapping_add(1)) == Some(0xFE) {
            T_M1 + T_MEM + 5
        } else if op == 0xC3
            && bus.peek(pc.wrapping_add(1)) == Some(pc as u8)
            && bus.peek(pc.wrapping_add(2)) == Some((pc >> 8) as u8)
        {
            T_M1 + 2 * T_MEM
        } else {
            return;
        };
        let n = (until - self.tstates).div_ceil(period);
        self.tstates += n * period;
        // R counts M1 cycles modulo 128 (bit 7 kept apart): adding n mod 256
        // to the counter is n single increments.
        self.rc = self.rc.wrapping_add(n as u8);
        self.last_q = if n == 1 { self.q } else { 0 };
        self.q = 0;
        if !self.halted {
            self.memptr = pc;
        }
    }

    /// Start of an instruction: Q moves to "previous", the new Q is 0
    /// until the instruction writes the flags.
    #[inline(always)]
    fn begin(&mut self) {
        self.last_q = self.q;
        self.q = 0;
    }

    /// Q: the flags the last instruction wrote, 0 if it wrote none (affects
    /// X/Y of `SCF`/`CCF`; Young, "SCF/CCF").
    pub fn q(&self) -> u8 {
        self.q
    }

    pub fn set_q(&mut self, q: u8) {
        self.q = q;
    }

    /// After a DD (P = 1) or FD (P = 2) prefix; `begin` has run.
    #[inline(always)]
    fn prefixed<const P: u8, Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64) {
        let op = self.fetch_op(bus, ts);
        match op {
            // Another prefix: the first one acted as a 4 T no-op; no
            // interrupt is accepted in between (Young, "DD and FD prefixes").
            // No instruction ran: Q is as before.
            0xDD | 0xFD | 0xED => {
                self.prefix = op;
                self.int_blocked = true;
                self.q = self.last_q;
            }
            0xCB => self.exec_xycb::<P, Bs>(bus, ts),
            _ => self.exec_main::<P, Bs>(bus, ts, op),
        }
    }

    /// Dispatch of unprefixed or DD/FD-prefixed opcodes: one arm per
    /// opcode, so every opcode gets its own code with its register fields
    /// known at compile time.
    #[inline(always)]
    fn exec_main<const P: u8, Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64, op: u8) {
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
    fn op<const OP: u8, const P: u8, Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64) {
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
                *ts += 1;
                let d = self.rd(bus, ts, self.pc) as i8;
                let b = self.reg[B].wrapping_sub(1);
                self.reg[B] = b;
                if b != 0 {
                    *ts += 5;
                    self.pc = self.pc.wrapping_add(d as u16);
                    self.memptr = self.pc.wrapping_add(1);
                }
                self.pc = self.pc.wrapping_add(1);
            }
            0x18 => {
                let d = self.rd(bus, ts, self.pc) as i8;
                *ts += 5;
                self.pc = self.pc.wrapping_add(d as u16).wrapping_add(1);
                self.memptr = self.pc;
            }
            0x20 | 0x28 | 0x30 | 0x38 => {
                let d = self.rd(bus, ts, self.pc) as i8;
                if self.cond(y!() - 4) {
                    *ts += 5;
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
                *ts += 7;
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
                self.memptr = (a.wrapping_add(1) & 0xFF) | ((acc as u16) << 8);
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
                let lo = self.rd(bus, ts, a) as u16;
                let hi = self.rd(bus, ts, a.wrapping_add(1)) as u16;
                self.set_xy::<P>((hi << 8) | lo);
                self.memptr = a.wrapping_add(1);
            }
            0x3A => {
                let a = self.imm16(bus, ts);
                self.reg[A] = self.rd(bus, ts, a);
                self.memptr = a.wrapping_add(1);
            }
            0x03 | 0x13 | 0x23 | 0x33 => {
                *ts += 2;
                let v = self.rp::<P>(p!()).wrapping_add(1);
                self.set_rp::<P>(p!(), v);
            }
            0x0B | 0x1B | 0x2B | 0x3B => {
                *ts += 2;
                let v = self.rp::<P>(p!()).wrapping_sub(1);
                self.set_rp::<P>(p!(), v);
            }
            0x34 | 0x35 => {
                let a = self.ea::<P, Bs>(bus, ts);
                let v = self.rd(bus, ts, a);
                *ts += 1;
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
                    *ts += 2;
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
                *ts += 1;
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
                *ts += 2;
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
                *ts += 1;
                let v = self.xy::<P>();
                self.wr(bus, ts, a.wrapping_add(1), (v >> 8) as u8);
                self.wr(bus, ts, a, v as u8);
                *ts += 2;
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
                self.iff1 = false;
                self.iff2 = false;
            }
            0xFB => {
                self.int_blocked = true;
                self.iff1 = true;
                self.iff2 = true;
            }
            0xC4 | 0xCC | 0xD4 | 0xDC | 0xE4 | 0xEC | 0xF4 | 0xFC => {
                let lo = self.imm8(bus, ts) as u16;
                let hi = self.rd(bus, ts, self.pc) as u16;
                let a = (hi << 8) | lo;
                self.memptr = a;
                if self.cond(y!()) {
                    *ts += 1;
                    self.pc = self.pc.wrapping_add(1);
                    self.push(bus, ts, self.pc);
                    self.pc = a;
                } else {
                    self.pc = self.pc.wrapping_add(1);
                }
            }
            0xC5 | 0xD5 | 0xE5 | 0xF5 => {
                *ts += 1;
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
                *ts += 1;
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
                *ts += 1;
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

    /// CB-prefixed opcodes (the opcode fetch is a second M1 cycle).
    #[inline(always)]
    fn exec_cb<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64) {
        let op = self.fetch_op(bus, ts);
        let y = (op >> 3) & 7;
        let z = op & 7;
        if z == 6 {
            let a = self.hl();
            let v = self.rd(bus, ts, a);
            *ts += 1;
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
    fn exec_xycb<const P: u8, Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64) {
        let d = self.imm8(bus, ts) as i8;
        let a = self.xy::<P>().wrapping_add(d as u16);
        self.memptr = a;
        let op = self.rd(bus, ts, self.pc);
        *ts += 2;
        self.pc = self.pc.wrapping_add(1);
        let y = (op >> 3) & 7;
        let z = op & 7;
        let v = self.rd(bus, ts, a);
        *ts += 1;
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

    /// Repeat cycle of LDIR/LDDR/CPIR/CPDR: X/Y from PC high byte (Young,
    /// and the 2018 block-instruction research summarised there).
    #[inline(always)]
    fn block_repeat_mem(&mut self, ts: &mut u64) {
        self.memptr = self.pc.wrapping_sub(1);
        *ts += 5;
        self.pc = self.pc.wrapping_sub(2);
        self.reg[F] = (self.reg[F] & !XY) | ((self.pc >> 8) as u8 & XY);
    }

    /// Repeat cycle of INIR/INDR/OTIR/OTDR: H, P/V, X, Y adjusted.
    #[inline(always)]
    fn block_repeat_io(&mut self, ts: &mut u64, t: u8) {
        *ts += 5;
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

    /// LDI, LDD, LDIR, LDDR.
    #[inline(always)]
    fn ld_block<const INC: bool, const REPEAT: bool, Bs: Bus>(
        &mut self,
        bus: &mut Bs,
        ts: &mut u64,
    ) {
        let hl = self.hl();
        let de = self.de();
        let bc = self.bc().wrapping_sub(1);
        let v = self.rd(bus, ts, hl);
        self.set_bc(bc);
        self.wr(bus, ts, de, v);
        *ts += 2;
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
    fn exec_ed<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64, op: u8) {
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
                    *ts += 7;
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
                        *ts += 1;
                        self.i = self.reg[A];
                    }
                    1 => {
                        *ts += 1;
                        self.set_r(self.reg[A]);
                    }
                    2 | 3 => {
                        *ts += 1;
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
                        *ts += 4;
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
                *ts += 5;
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
                *ts += 1;
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
                let k = c as u16 + v as u16;
                let f = SZXY[b as usize]
                    | ((v >> 6) & FLAG_N)
                    | if k > 0xFF { FLAG_C | FLAG_H } else { 0 }
                    | parity((k as u8 & 7) ^ b);
                self.setf(f);
                if y >= 6 && b != 0 {
                    self.block_repeat_io(ts, v.wrapping_add(c));
                }
            }
            0xA3 | 0xAB | 0xB3 | 0xBB => {
                // OUTI OUTD OTIR OTDR
                let inc = y & 1 == 0;
                *ts += 1;
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
                let k = l as u16 + v as u16;
                let f = SZXY[b as usize]
                    | ((v >> 6) & FLAG_N)
                    | if k > 0xFF { FLAG_C | FLAG_H } else { 0 }
                    | parity((k as u8 & 7) ^ b);
                self.setf(f);
                if y >= 6 && b != 0 {
                    self.block_repeat_io(ts, v.wrapping_add(l));
                }
            }
            // Everything else is an 8 T no-op (Young, "ED prefix").
            _ => {}
        }
    }
}
