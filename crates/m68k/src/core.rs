//! Execution context, bus access primitives, the prefetch queue and flag
//! helpers shared by every instruction group.
//!
//! Timing model (68000 User's Manual, section 8; Yacht "Yet Another Cycle
//! Hunting Table"; the single-step test collection): every bus access takes
//! 4 cycles plus the wait the bus returns; internal operations are "idle"
//! periods of 2 cycles each.  The prefetch queue holds IRD (the opcode being
//! executed) and IRC (the next word); `pc` is the address of the next word
//! to fetch, i.e. 4 bytes past the executing instruction when no extension
//! word has been consumed yet.

use crate::bus::{Bus, FunctionCode, Observer};
use crate::cpu::Cpu;

/// Details of a group-0 fault, kept in the CPU while the error unwinds
/// (so that `R<T>` stays as small as an `Option<T>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FaultInfo {
    pub bus_error: bool,
    pub addr: u32,
    pub write: bool,
    pub fc: FunctionCode,
    /// Instruction/not-instruction bit of the special status word.
    pub inst: bool,
}

impl Default for FaultInfo {
    fn default() -> Self {
        FaultInfo {
            bus_error: false,
            addr: 0,
            write: false,
            fc: FunctionCode::SupervisorData,
            inst: false,
        }
    }
}

/// Marker error: the instruction was abandoned by a bus or address error
/// whose details are in `Cpu::fault`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fault;

pub(crate) type R<T> = Result<T, Fault>;

pub(crate) const C: u16 = 0x01;
pub(crate) const V: u16 = 0x02;
pub(crate) const Z: u16 = 0x04;
pub(crate) const N: u16 = 0x08;
pub(crate) const X: u16 = 0x10;
pub(crate) const S_BIT: u16 = 0x2000;
pub(crate) const T_BIT: u16 = 0x8000;
/// The SR bits that exist on a 68000.
pub(crate) const SR_MASK: u16 = 0xA71F;

/// The 16 condition tests of the 68000 (PRM table 3-19) as truth tables:
/// bit `nzvc` (the low four CCR bits) of `COND[cc]` is the result of
/// condition `cc` for those flags.
pub(crate) static COND: [u16; 16] = {
    let mut t = [0u16; 16];
    let mut cc = 0;
    while cc < 16 {
        let mut f = 0;
        while f < 16 {
            let c = f & 1 != 0;
            let v = f & 2 != 0;
            let z = f & 4 != 0;
            let n = f & 8 != 0;
            let r = match cc {
                0 => true,
                1 => false,
                2 => !c && !z,
                3 => c || z,
                4 => !c,
                5 => c,
                6 => !z,
                7 => z,
                8 => !v,
                9 => v,
                10 => !n,
                11 => n,
                12 => n == v,
                13 => n != v,
                14 => !z && n == v,
                _ => z || n != v,
            };
            if r {
                t[cc] |= 1 << f;
            }
            f += 1;
        }
        cc += 1;
    }
    t
};

/// One execution of the core against a host: the bus, which also takes
/// the observer's reports (one object, so a console that owns its observer
/// reaches it from bus accesses and instruction reports alike; a separate
/// bus and observer run as a [`crate::bus::WithObserver`]).
pub(crate) struct Ctx<'a, B: Bus + Observer> {
    /// The CPU's state for this run, held here by value (copied in when
    /// the run starts, written back when it ends: [`Ctx::new`],
    /// [`Ctx::done`]): every handler takes `&mut Ctx`, so the compiler
    /// knows no bus access can touch the registers or the cycle counter
    /// and need not reload them after each inlined RAM store, as it had to
    /// through a `&mut Cpu` pointer.
    pub c: Cpu,
    pub b: &'a mut B,
    /// The bus's [`crate::FetchWindow`] for this run (empty: none):
    /// `win[i]` is the word at `win_base + 2 * i`.
    pub win: &'a [u16],
    pub win_base: u32,
}

impl<'a, B: Bus + Observer> Ctx<'a, B> {
    /// A run of `cpu` against `b`: takes a copy of the CPU's state, which
    /// [`Ctx::done`] writes back.
    #[inline(always)]
    pub fn new(cpu: &Cpu, b: &'a mut B, win: &'a [u16], win_base: u32) -> Self {
        Ctx {
            c: cpu.clone(),
            b,
            win,
            win_base,
        }
    }

    /// End of the run: the state goes back to `cpu`.
    #[inline(always)]
    pub fn done(self, cpu: &mut Cpu) {
        *cpu = self.c;
    }
}

/// The fetch window of a run: checked (the whole window below 16 MB, base
/// even), else none.
pub(crate) fn usable_window(w: &Option<crate::bus::FetchWindow>) -> (&[u16], u32) {
    match w {
        Some(w)
            if w.base & 1 == 0 && (w.base as u64) + 2 * (w.words.len() as u64) <= 0x100_0000 =>
        {
            (&w.words, w.base)
        }
        _ => (&[], 0),
    }
}

/// Operand sizes as const-generic byte counts.
#[inline(always)]
pub(crate) const fn mask(s: u32) -> u32 {
    match s {
        1 => 0xFF,
        2 => 0xFFFF,
        _ => 0xFFFF_FFFF,
    }
}
#[inline(always)]
pub(crate) const fn msb(s: u32) -> u32 {
    match s {
        1 => 0x80,
        2 => 0x8000,
        _ => 0x8000_0000,
    }
}
#[inline(always)]
pub(crate) const fn sext(v: u32, s: u32) -> u32 {
    match s {
        1 => v as u8 as i8 as i32 as u32,
        2 => v as u16 as i16 as i32 as u32,
        _ => v,
    }
}

impl<B: Bus + Observer> Ctx<'_, B> {
    // ----- time -----
    #[inline(always)]
    pub fn idle(&mut self, n: u32) {
        self.c.cycles += n as u64;
    }

    #[inline(always)]
    pub fn supervisor(&self) -> bool {
        self.c.sr & S_BIT != 0
    }
    #[inline(always)]
    pub fn fc_data(&self) -> FunctionCode {
        if self.supervisor() {
            FunctionCode::SupervisorData
        } else {
            FunctionCode::UserData
        }
    }
    #[inline(always)]
    pub fn fc_prog(&self) -> FunctionCode {
        if self.supervisor() {
            FunctionCode::SupervisorProgram
        } else {
            FunctionCode::UserProgram
        }
    }

    // ----- raw accesses with a given function code -----
    #[inline(always)]
    fn addr_err(&mut self, addr: u32, fc: FunctionCode, write: bool, inst: bool) -> Fault {
        self.b
            .address_error(addr & 0xFF_FFFE, fc, write, self.c.cycles);
        // The aborted bus cycle still takes its 4 cycles.
        self.c.cycles += 4;
        self.c.fault = FaultInfo {
            bus_error: false,
            addr,
            write,
            fc,
            inst,
        };
        Fault
    }

    #[inline(always)]
    pub fn rw_fc(&mut self, addr: u32, fc: FunctionCode) -> R<u16> {
        if addr & 1 != 0 {
            return Err(self.addr_err(addr, fc, false, false));
        }
        let r = self.b.read_word(addr & 0xFF_FFFF, fc, self.c.cycles);
        self.c.cycles += 4 + r.wait as u64;
        if r.bus_error {
            self.c.fault = FaultInfo {
                bus_error: true,
                addr,
                write: false,
                fc,
                inst: false,
            };
            return Err(Fault);
        }
        Ok(r.data)
    }
    #[inline(always)]
    pub fn rb_fc(&mut self, addr: u32, fc: FunctionCode) -> R<u8> {
        let r = self.b.read_byte(addr & 0xFF_FFFF, fc, self.c.cycles);
        self.c.cycles += 4 + r.wait as u64;
        if r.bus_error {
            self.c.fault = FaultInfo {
                bus_error: true,
                addr,
                write: false,
                fc,
                inst: false,
            };
            return Err(Fault);
        }
        Ok(r.data)
    }
    #[inline(always)]
    pub fn ww_fc(&mut self, addr: u32, v: u16, fc: FunctionCode) -> R<()> {
        if addr & 1 != 0 {
            return Err(self.addr_err(addr, fc, true, false));
        }
        let w = self.b.write_word(addr & 0xFF_FFFF, v, fc, self.c.cycles);
        self.c.cycles += 4 + w.wait as u64;
        if w.bus_error {
            self.c.fault = FaultInfo {
                bus_error: true,
                addr,
                write: true,
                fc,
                inst: false,
            };
            return Err(Fault);
        }
        Ok(())
    }
    #[inline(always)]
    pub fn wb_fc(&mut self, addr: u32, v: u8, fc: FunctionCode) -> R<()> {
        let w = self.b.write_byte(addr & 0xFF_FFFF, v, fc, self.c.cycles);
        self.c.cycles += 4 + w.wait as u64;
        if w.bus_error {
            self.c.fault = FaultInfo {
                bus_error: true,
                addr,
                write: true,
                fc,
                inst: false,
            };
            return Err(Fault);
        }
        Ok(())
    }

    // ----- data-space accesses -----
    #[inline(always)]
    pub fn read_w(&mut self, addr: u32) -> R<u16> {
        let fc = self.fc_data();
        self.rw_fc(addr, fc)
    }
    #[inline(always)]
    pub fn read_b(&mut self, addr: u32) -> R<u8> {
        let fc = self.fc_data();
        self.rb_fc(addr, fc)
    }
    #[inline(always)]
    pub fn write_w(&mut self, addr: u32, v: u16) -> R<()> {
        let fc = self.fc_data();
        self.ww_fc(addr, v, fc)
    }
    #[inline(always)]
    pub fn write_b(&mut self, addr: u32, v: u8) -> R<()> {
        let fc = self.fc_data();
        self.wb_fc(addr, v, fc)
    }

    /// Read an operand of `S` bytes (long: high word first) in space `fc`.
    #[inline(always)]
    pub fn read_fc<const S: u32>(&mut self, addr: u32, fc: FunctionCode) -> R<u32> {
        match S {
            1 => Ok(self.rb_fc(addr, fc)? as u32),
            2 => Ok(self.rw_fc(addr, fc)? as u32),
            _ => {
                // Both words in plain memory (work RAM): one call, the two
                // bus cycles' time at once.
                if addr & 1 == 0 {
                    if let Some(v) = self.b.read_long_plain(addr & 0xFF_FFFF, fc, self.c.cycles) {
                        self.c.cycles += 8;
                        return Ok(v);
                    }
                }
                let hi = self.rw_fc(addr, fc)? as u32;
                let lo = self.rw_fc(addr.wrapping_add(2), fc)? as u32;
                Ok(hi << 16 | lo)
            }
        }
    }
    #[inline(always)]
    pub fn read<const S: u32>(&mut self, addr: u32) -> R<u32> {
        let fc = self.fc_data();
        self.read_fc::<S>(addr, fc)
    }
    /// A long write in one bus call ([`Bus::write_long_plain`]) when `addr`
    /// is even and the bus takes it (work RAM): the two bus cycles' time at
    /// once. `false` (nothing done) otherwise.
    #[inline(always)]
    fn write_long_plain(&mut self, addr: u32, v: u32, low_first: bool) -> bool {
        if addr & 1 != 0 {
            return false;
        }
        let fc = self.fc_data();
        if self
            .b
            .write_long_plain(addr & 0xFF_FFFF, v, low_first, fc, self.c.cycles)
        {
            self.c.cycles += 8;
            return true;
        }
        false
    }
    /// Write an operand; long: high word first.
    #[inline(always)]
    pub fn write<const S: u32>(&mut self, addr: u32, v: u32) -> R<()> {
        match S {
            1 => self.write_b(addr, v as u8),
            2 => self.write_w(addr, v as u16),
            _ => {
                if self.write_long_plain(addr, v, false) {
                    return Ok(());
                }
                self.write_w(addr, (v >> 16) as u16)?;
                self.write_w(addr.wrapping_add(2), v as u16)
            }
        }
    }
    /// Write an operand; long: low word first (predecrement destinations).
    #[inline(always)]
    pub fn write_rev<const S: u32>(&mut self, addr: u32, v: u32) -> R<()> {
        match S {
            1 => self.write_b(addr, v as u8),
            2 => self.write_w(addr, v as u16),
            _ => {
                if self.write_long_plain(addr, v, true) {
                    return Ok(());
                }
                self.write_w(addr.wrapping_add(2), v as u16)?;
                self.write_w(addr, (v >> 16) as u16)
            }
        }
    }

    // ----- program-space accesses and the prefetch queue -----
    /// An instruction-stream fetch: from the fetch window when `addr` is
    /// in it (an odd address never is: it rotates to an index past any
    /// window), else a bus access.
    #[inline(always)]
    pub fn read_prog(&mut self, addr: u32) -> R<u16> {
        if let Some(w) = self.win_fetch(addr) {
            return Ok(w);
        }
        let fc = self.fc_prog();
        self.read_prog_bus(addr, fc)
    }

    /// An instruction-stream fetch from the fetch window only: the word at
    /// `addr` with the window fetch's report and time ([`Self::read_prog`]'s
    /// window case), or `None` (nothing done) when `addr` is not in it.
    #[inline(always)]
    fn win_fetch(&mut self, addr: u32) -> Option<u16> {
        let i = addr.wrapping_sub(self.win_base).rotate_right(1) as usize;
        let &w = self.win.get(i)?;
        let fc = self.fc_prog();
        self.b.window_fetch(addr, w, fc, self.c.cycles);
        self.c.cycles += 4;
        Some(w)
    }

    /// IRC refilled from `pc` through the bus, then `pc` advanced
    /// ([`Self::ext`] and [`Self::prefetch`] outside the fetch window); a
    /// fault leaves both as they were. Out of line and returning only
    /// `R<()>`, so that the window case's `Ok` is a constant the caller's
    /// `?` folds (with the word in the `Result`, the window's `Ok` went
    /// through the merge with this path's result and was tested).
    #[inline(never)]
    fn refill_irc_bus(&mut self) -> R<()> {
        let fc = self.fc_prog();
        self.c.irc = self.rw_fc(self.c.pc, fc)?;
        self.c.pc = self.c.pc.wrapping_add(2);
        Ok(())
    }

    /// A program fetch outside the fetch window (work-RAM code, the
    /// cartridge's banked or SRAM area, an odd address): the whole bus
    /// read, out of line, so that each handler's fetches stay small (with
    /// the bus's whole `read_word` inlined at every fetch, the handlers
    /// were several KB each and saved six registers).
    #[inline(never)]
    fn read_prog_bus(&mut self, addr: u32, fc: FunctionCode) -> R<u16> {
        self.rw_fc(addr, fc)
    }

    /// Consume IRC as an extension word and refill it.
    #[inline(always)]
    pub fn ext(&mut self) -> R<u16> {
        let v = self.c.irc;
        if let Some(w) = self.win_fetch(self.c.pc) {
            self.c.irc = w;
            self.c.pc = self.c.pc.wrapping_add(2);
            return Ok(v);
        }
        self.refill_irc_bus()?;
        Ok(v)
    }
    /// Two extension words as a long, only when both refills are in the
    /// fetch window (what [`Self::ext_l`] does then); `None` (nothing
    /// done) otherwise, for callers whose slow path does more between the
    /// two words than the fetches (see [`Self::win_ext_prefetch`]).
    #[inline(always)]
    pub fn win_ext_l(&mut self) -> Option<u32> {
        let (w0, w1) = self.win_pair_at(self.c.pc)?;
        let v = (self.c.irc as u32) << 16 | w0 as u32;
        self.c.irc = w1;
        Some(v)
    }
    /// The two words at `addr` from the fetch window, when both are in it:
    /// one range test, one report to the bus ([`Bus::window_fetch_pair`],
    /// the times of two fetches), the time advanced by both and PC set to
    /// `addr + 4`. `None` (nothing done) otherwise. The caller puts the
    /// words in the queue.
    #[inline(always)]
    fn win_pair_at(&mut self, addr: u32) -> Option<(u16, u16)> {
        let i = addr.wrapping_sub(self.win_base).rotate_right(1) as usize;
        let &[w0, w1] = self.win.get(i..i.wrapping_add(2))? else {
            return None;
        };
        let fc = self.fc_prog();
        self.b.window_fetch_pair(addr, w0, w1, fc, self.c.cycles);
        self.c.cycles += 8;
        self.c.pc = addr.wrapping_add(4);
        Some((w0, w1))
    }
    /// Two extension words as a long.
    #[inline(always)]
    pub fn ext_l(&mut self) -> R<u32> {
        // Both refills in the fetch window (the common case): one range
        // test, one report to the bus, one time update, as in `jump`.
        if let Some(v) = self.win_ext_l() {
            return Ok(v);
        }
        let hi = self.ext()? as u32;
        let lo = self.ext()? as u32;
        Ok(hi << 16 | lo)
    }
    /// An extension word then the final prefetch with no other bus access
    /// between ([`Self::ext`], [`Self::prefetch`]; an immediate source of
    /// a register destination, a branch not taken), when both refills are
    /// in the fetch window: one range test, one report to the bus
    /// ([`Bus::window_fetch_pair`], the same times as the two fetches),
    /// one time update, as in [`Self::jump`]. `None` (nothing done) when
    /// they are not: the caller then runs the two steps as before, so its
    /// order of register updates and possible faults is unchanged.
    #[inline(always)]
    pub fn win_ext_prefetch(&mut self) -> Option<u16> {
        let (w0, w1) = self.win_pair_at(self.c.pc)?;
        let v = self.c.irc;
        self.c.ird = w0;
        self.c.irc = w1;
        Some(v)
    }
    /// Two extension words as a long then the final prefetch
    /// ([`Self::ext_l`], [`Self::prefetch`]), when all three refills are
    /// in the fetch window: one range test, the first two reported as a
    /// pair and the third as one fetch (times as the three fetches), one
    /// time update. `None` (nothing done) otherwise, as
    /// [`Self::win_ext_prefetch`].
    #[inline(always)]
    pub fn win_ext_l_prefetch(&mut self) -> Option<u32> {
        let pc = self.c.pc;
        let i = pc.wrapping_sub(self.win_base).rotate_right(1) as usize;
        let &[w0, w1, w2] = self.win.get(i..i.wrapping_add(3))? else {
            return None;
        };
        let fc = self.fc_prog();
        let now = self.c.cycles;
        self.b.window_fetch_pair(pc, w0, w1, fc, now);
        self.b.window_fetch(pc.wrapping_add(4), w2, fc, now + 8);
        self.c.cycles = now + 12;
        let v = (self.c.irc as u32) << 16 | w0 as u32;
        self.c.ird = w1;
        self.c.irc = w2;
        self.c.pc = pc.wrapping_add(6);
        Some(v)
    }
    /// An immediate source of size `S` (`#imm` word or long) and the final
    /// prefetch from the fetch window ([`Self::win_ext_prefetch`] or
    /// [`Self::win_ext_l_prefetch`]), the word masked to `S`; `None`
    /// (nothing done) when they are not all in the window.
    #[inline(always)]
    pub(crate) fn win_imm_prefetch<const S: u32>(&mut self) -> Option<u32> {
        if S == 4 {
            self.win_ext_l_prefetch()
        } else {
            self.win_ext_prefetch().map(|w| w as u32 & mask(S))
        }
    }
    /// The final prefetch of an instruction ("np"): IRC moves to IRD and
    /// the next word is fetched.
    #[inline(always)]
    pub fn prefetch(&mut self) -> R<()> {
        self.c.ird = self.c.irc;
        if let Some(w) = self.win_fetch(self.c.pc) {
            self.c.irc = w;
            self.c.pc = self.c.pc.wrapping_add(2);
            return Ok(());
        }
        self.refill_irc_bus()
    }
    /// Refill the whole queue from `target` (branches, jumps, returns): two
    /// program reads; afterwards `pc` = target + 4.
    #[inline(always)]
    /// A fault on the target fetch leaves `pc` as it was (the pushed PC is
    /// then `pc - 2`, as the test collection shows for JMP/Bcc).
    pub fn jump(&mut self, target: u32) -> R<()> {
        // Both words in the fetch window (the common case): one range test,
        // one report to the bus, one time update.
        if let Some((w0, w1)) = self.win_pair_at(target) {
            self.c.ird = w0;
            self.c.irc = w1;
            return Ok(());
        }
        self.c.ird = self.read_prog(target)?;
        self.c.irc = self.read_prog(target.wrapping_add(2))?;
        self.c.pc = target.wrapping_add(4);
        Ok(())
    }

    // ----- registers -----
    #[inline(always)]
    pub fn dreg<const S: u32>(&self, r: usize) -> u32 {
        self.c.d[r & 7] & mask(S)
    }
    #[inline(always)]
    pub fn set_dreg<const S: u32>(&mut self, r: usize, v: u32) {
        let m = mask(S);
        let d = &mut self.c.d[r & 7];
        *d = (*d & !m) | (v & m);
    }

    // ----- status register -----
    #[inline(always)]
    pub fn set_ccr(&mut self, ccr: u16) {
        self.c.sr = (self.c.sr & 0xFF00) | (ccr & 0x1F);
    }
    /// Set the whole SR, switching stacks if S changes.
    #[inline(always)]
    pub fn set_sr(&mut self, sr: u16) {
        self.c.set_sr(sr);
    }
    /// N and Z from a result, V and C cleared, X kept.
    #[inline(always)]
    pub fn set_logic<const S: u32>(&mut self, r: u32) {
        let mut f = self.c.sr & (0xFF00 | X);
        if r & msb(S) != 0 {
            f |= N;
        }
        if r & mask(S) == 0 {
            f |= Z;
        }
        self.c.sr = f;
    }

    /// Condition code test (cc field 0-15): a bit lookup in [`COND`]
    /// (no branch on the condition).
    #[inline(always)]
    pub fn cond(&self, cc: u16) -> bool {
        (COND[(cc & 15) as usize] >> (self.c.sr & 15)) & 1 != 0
    }

    // ----- arithmetic with flags -----
    /// d + s (+ x); sets X N Z V C (for ADDX, Z is only cleared).
    #[inline(always)]
    pub fn add<const S: u32, const EXT: bool>(&mut self, s: u32, d: u32) -> u32 {
        let x = if EXT { (self.c.sr >> 4) as u32 & 1 } else { 0 };
        let m = mask(S);
        let (s, d) = (s & m, d & m);
        let r64 = s as u64 + d as u64 + x as u64;
        let r = r64 as u32 & m;
        let mut f = self.c.sr & 0xFF00;
        let sm = msb(S);
        if (r64 >> (S * 8)) & 1 != 0 {
            f |= X | C;
        }
        if (s ^ r) & (d ^ r) & sm != 0 {
            f |= V;
        }
        if r & sm != 0 {
            f |= N;
        }
        if EXT {
            if r == 0 {
                f |= self.c.sr & Z;
            }
        } else if r == 0 {
            f |= Z;
        }
        self.c.sr = f;
        r
    }
    /// d - s (- x); sets X N Z V C.
    #[inline(always)]
    pub fn sub<const S: u32, const EXT: bool>(&mut self, s: u32, d: u32) -> u32 {
        let x = if EXT { (self.c.sr >> 4) as u32 & 1 } else { 0 };
        let m = mask(S);
        let (s, d) = (s & m, d & m);
        let r64 = (d as u64).wrapping_sub(s as u64).wrapping_sub(x as u64);
        let r = r64 as u32 & m;
        let mut f = self.c.sr & 0xFF00;
        let sm = msb(S);
        if (r64 >> (S * 8)) & 1 != 0 {
            f |= X | C;
        }
        if (s ^ d) & (r ^ d) & sm != 0 {
            f |= V;
        }
        if r & sm != 0 {
            f |= N;
        }
        if EXT {
            if r == 0 {
                f |= self.c.sr & Z;
            }
        } else if r == 0 {
            f |= Z;
        }
        self.c.sr = f;
        r
    }
    /// d - s for CMP: N Z V C, X kept.
    #[inline(always)]
    pub fn cmp<const S: u32>(&mut self, s: u32, d: u32) {
        let x = self.c.sr & X;
        self.sub::<S, false>(s, d);
        self.c.sr = (self.c.sr & !X) | x;
    }
}
