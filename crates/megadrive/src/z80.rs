//! The Z80 side: CPU (our `retroprof-z80` core, checked instruction by
//! instruction against `rustzx-z80`), 8 KB RAM, YM2612, bank register, PSG,
//! and the BUSREQ/RESET lines the 68000 controls.
//!
//! Z80 memory map (Sega Genesis Software Manual; genvdp.txt / plutiedev
//! "Z80 memory map"): 0000-1FFF RAM (mirrored at 2000-3FFF), 4000-5FFF YM2612
//! (4 ports, mirrored), 6000-60FF bank register (each write shifts data bit 0
//! into bit 8 of the 9-bit bank, which selects 68000 address bits 23-15),
//! 7F11 PSG, 7F00-7F1F VDP, 8000-FFFF the 32 KB window into the 68000 bus.

use retroprof_z80::{Bus, T_MEM, Z80};

use crate::cart::Cart;
pub use crate::reference::ReferenceRules;
use crate::timing::{z80_bank_m68k_stall_mclk, M68K_DIVIDER, Z80_BANK_WAIT_TSTATES, Z80_DIVIDER};
use crate::ym2612::Ym2612;

pub struct Z80Sys {
    pub cpu: Z80,
    pub ram: Box<[u8; 0x2000]>,
    pub ym: Ym2612,
    /// 9-bit bank register.
    pub bank: u32,
    /// RESET line held (the Z80 does not run).
    pub reset: bool,
    /// BUSREQ asserted by the 68000 (the Z80 does not run).
    pub busreq: bool,
    /// IRQ line (raised at VINT, cleared at the end of that line).
    pub irq: bool,
    /// The Z80's own time in mclk.
    pub clock: u64,
    /// Z80 accesses to 68000 addresses that are not ROM or work RAM.
    pub bad_bank_accesses: u64,
    pub psg_writes: u64,
    /// mclk the 68000 owes for Z80 accesses to its bus (charged at its next
    /// instruction boundary).
    pub m68k_stall: u64,
    /// Z80 accesses to the 68000 bus so far.
    pub bank_accesses: u64,
    /// Z80 accesses to the 68000 bus that waited for a 68000 -> VDP DMA.
    pub dma_waits: u64,
    /// mclk window `[start, end)` in which a 68000 -> VDP DMA owns the
    /// 68000 bus (the latest one; a new DMA can only start after the 68000
    /// is released, and the Z80 is caught up to its start first).
    pub m68k_bus_busy: (u64, u64),
    /// Reference-emulator timing rules in force (default: none).
    pub rules: ReferenceRules,
    /// A run keeps the bank window's 32 KB of plain ROM as a slice, so a
    /// bank-window read there is one load (see `Z80Ctx::bank_rom`); on by
    /// default. Tests clear it to make every access take the full path.
    pub bank_cache: bool,
    /// PC at the start of the last run. A run that starts at the same PC
    /// made no way (an idle loop, `HALT`), and only then (or halted) does
    /// the core look for an idle loop to pass over; a busy driver (the XGM
    /// mixer) saves the look-up every run. Stepping an idle loop gives the
    /// same state as passing over it, so this only moves time.
    last_run_pc: u16,
    /// Look for an idle loop at every run, as without `last_run_pc`; off
    /// by default. Tests set it to run both ways.
    pub idle_pass_always: bool,
}

/// The grid of [`ReferenceRules::z80_restart_grid`]: one Z80 clock.
const Z80_GRID_MCLK: u64 = Z80_DIVIDER;

/// The Z80 after /RESET (retroprof-z80 `Z80::reset`).
fn reset_cpu() -> Z80 {
    let mut cpu = Z80::new();
    cpu.reset();
    cpu
}

impl Default for Z80Sys {
    fn default() -> Self {
        Self::new()
    }
}

impl Z80Sys {
    pub fn new() -> Self {
        Z80Sys {
            cpu: reset_cpu(),
            ram: Box::new([0; 0x2000]),
            ym: Ym2612::default(),
            bank: 0,
            // Power-on: the Z80 is held in reset until the 68000 releases it
            // (0xA11200), and its bus is not requested.
            reset: true,
            busreq: false,
            irq: false,
            clock: 0,
            bad_bank_accesses: 0,
            psg_writes: 0,
            m68k_stall: 0,
            bank_accesses: 0,
            dma_waits: 0,
            m68k_bus_busy: (0, 0),
            rules: ReferenceRules::default(),
            bank_cache: true,
            last_run_pc: 0,
            idle_pass_always: false,
        }
    }

    pub fn running(&self) -> bool {
        !self.reset && !self.busreq
    }

    /// Run the Z80 until its clock reaches `target` (mclk).
    #[inline]
    pub fn run_until(&mut self, target: u64, cart: &Cart, wram: &mut [u8; 0x10000]) {
        if self.clock >= target {
            return;
        }
        if !self.running() {
            self.clock = target;
            return;
        }
        self.run_to(target, cart, wram);
    }

    /// [`Z80Sys::run_until`] when the Z80 runs: out of line, so that a
    /// caught-up or held Z80 costs a few tests and no prologue of the run
    /// (the core is inlined here).
    #[inline(never)]
    fn run_to(&mut self, target: u64, cart: &Cart, wram: &mut [u8; 0x10000]) {
        let mut bus = Z80Ctx {
            ram: &mut self.ram,
            ym: &mut self.ym,
            bank: &mut self.bank,
            cart,
            wram,
            irq: self.irq,
            start: self.clock,
            bad: 0,
            psg: 0,
            stall: 0,
            bank_count: 0,
            busy_start: self.m68k_bus_busy.0,
            // A window that ended by this run's start holds no access of
            // it (every access is at or after `self.clock`): none.
            busy_len: if self.m68k_bus_busy.1 <= self.clock {
                0
            } else {
                self.m68k_bus_busy.1.saturating_sub(self.m68k_bus_busy.0)
            },
            dma_waits: 0,
            rules: self.rules,
            bank_rom: None,
            bank_cache: self.bank_cache,
            phase_start: self.clock + BANK_PHASE_SHIFT[self.rules.bank_stall_before_wait as usize],
        };
        bus.find_bank_rom();
        // `div_ceil` as one add and a division: mclk times stay far below
        // 2^63, so the add cannot overflow (`div_ceil` costs about 6 more
        // host instructions a call).
        #[allow(clippy::manual_div_ceil)]
        let target_t = (target - self.clock + (Z80_DIVIDER - 1)) / Z80_DIVIDER;
        let pc = self.cpu.pc;
        let idle_pass = pc == self.last_run_pc || self.cpu.halted || self.idle_pass_always;
        self.last_run_pc = pc;
        // The core's T-state counter is relative to this call's start.
        self.cpu.tstates = 0;
        self.cpu.run_until_with(&mut bus, target_t, idle_pass);
        let tstates = self.cpu.tstates;
        self.clock += tstates * Z80_DIVIDER;
        self.bad_bank_accesses += bus.bad;
        self.psg_writes += bus.psg;
        self.m68k_stall += bus.stall;
        self.bank_accesses += bus.bank_count;
        self.dma_waits += bus.dma_waits;
    }

    /// A frame starts at `origin` (mclk): the reference's YM busy grid, if
    /// in force, counts from there.
    pub fn frame_start(&mut self, origin: u64) {
        if self.rules.ym_busy_grid {
            self.ym.busy_grid = Some(origin);
        }
    }

    /// A 68000 -> VDP DMA owns the 68000 bus from `start` to `end` (mclk):
    /// a Z80 access to the 68000 bus in that window waits for its end.
    pub fn set_m68k_bus_busy(&mut self, start: u64, end: u64) {
        self.m68k_bus_busy = (start, end);
    }

    /// RESET line change (0xA11200 bit 0: 0 = hold in reset).
    pub fn set_reset(&mut self, hold: bool, now: u64) {
        if hold && !self.reset {
            self.cpu = reset_cpu();
            self.ym.reset();
        }
        let restart = self.reset && !hold && !self.busreq;
        self.reset = hold;
        self.resync(restart, now);
    }

    pub fn set_busreq(&mut self, req: bool, now: u64) {
        let restart = self.busreq && !req && !self.reset;
        self.busreq = req;
        self.resync(restart, now);
    }

    /// The Z80's clock after a BUSREQ/RESET change at `now`.
    fn resync(&mut self, restart: bool, now: u64) {
        let now = if restart && self.rules.z80_restart_grid {
            now.div_ceil(Z80_GRID_MCLK) * Z80_GRID_MCLK
        } else {
            now
        };
        self.clock = self.clock.max(now);
    }

    /// BUSACK as read at 0xA11100 bit 0: 0 when the 68000 has the bus.
    /// While the Z80 is held in reset its bus is free, so a request is
    /// granted as well (SGDK requests the bus while the Z80 is in reset).
    pub fn busack_bit(&self) -> u8 {
        if self.busreq {
            0
        } else {
            1
        }
    }

    /// Byte read by the 68000 from the Z80 area (offset within 0xA00000).
    pub fn m68k_read(&mut self, off: u32, now: u64) -> Option<u8> {
        match off {
            0x0000..=0x3FFF => Some(self.ram[(off & 0x1FFF) as usize]),
            0x4000..=0x5FFF => Some(self.ym.read(now)),
            0x6000..=0x7EFF => Some(0xFF),
            _ => None,
        }
    }

    /// Byte write by the 68000 into the Z80 area.
    pub fn m68k_write(&mut self, off: u32, v: u8, now: u64) -> bool {
        match off {
            0x0000..=0x3FFF => self.ram[(off & 0x1FFF) as usize] = v,
            0x4000..=0x5FFF => self.ym.write(off & 3, v, now),
            0x6000..=0x60FF => self.bank = (self.bank >> 1) | ((v as u32 & 1) << 8),
            0x7F11 | 0x7F13 | 0x7F15 | 0x7F17 => self.psg_writes += 1,
            _ => return false,
        }
        true
    }
}

/// [`z80_bank_m68k_stall_mclk`] by the Z80's mclk phase modulo 7, the only
/// thing it depends on: one table load per bank access instead of the
/// division.
const BANK_STALL_BY_PHASE: [u64; 7] = {
    let mut t = [0; 7];
    let mut i = 0;
    while i < 7 {
        t[i] = z80_bank_m68k_stall_mclk(i as u64);
        i += 1;
    }
    t
};

/// The T-states between a bank access's T-state and the one whose mclk
/// phase picks the 68000's loss when the access waits only its own 3 T:
/// after the wait, or before it ([`ReferenceRules::bank_stall_before_wait`]).
const BANK_PHASE_SHIFT: [u64; 2] = [Z80_BANK_WAIT_TSTATES as u64, 0];

/// The 68000's loss for the two accesses of a bank-window word read from
/// cached ROM, by the first one's phase: the second is 6 T (its own 3 T
/// and the first one's 3-T wait), 6 modulo 7, later.
const BANK_PAIR_STALL_BY_PHASE: [u64; 7] = {
    let mut t = [0; 7];
    let mut i = 0;
    while i < 7 {
        t[i] = BANK_STALL_BY_PHASE[i] + BANK_STALL_BY_PHASE[(i + 2 * T_MEM as usize) % 7];
        i += 1;
    }
    t
};

struct Z80Ctx<'a> {
    ram: &'a mut [u8; 0x2000],
    ym: &'a mut Ym2612,
    bank: &'a mut u32,
    cart: &'a Cart,
    wram: &'a mut [u8; 0x10000],
    irq: bool,
    start: u64,
    bad: u64,
    psg: u64,
    stall: u64,
    bank_count: u64,
    /// [`Z80Sys::m68k_bus_busy`] as its start and length (0: none, or
    /// the window ended before this run), so an access tests it with one
    /// unsigned compare.
    busy_start: u64,
    busy_len: u64,
    dma_waits: u64,
    rules: ReferenceRules,
    /// The bank window's 32 KB when they are plain ROM and no 68000 -> VDP
    /// DMA window can hold an access of this run: a read there waits its
    /// 3 T and costs the 68000 the loss of its phase, nothing else can
    /// happen. Set by `find_bank_rom` at the run's start and again after
    /// every Z80 write of the bank register.
    bank_rom: Option<&'a [u8; 0x8000]>,
    /// [`Z80Sys::bank_cache`].
    bank_cache: bool,
    /// `start` plus [`BANK_PHASE_SHIFT`] of the rules in force: the mclk
    /// phase that picks the 68000's loss for a read from `bank_rom` at
    /// T-state `t` is `(phase_start + t) % 7` (see `phase7`).
    phase_start: u64,
}

impl<'a> Z80Ctx<'a> {
    /// A Z80 access to the 68000 bus at Z80 T-state `t`: its own wait
    /// (returned), and the 68000's loss.
    #[inline]
    fn bank_access(&mut self, t: u64) -> u64 {
        // md-timing.md: about +3 Z80 cycles.
        let mut wait = Z80_BANK_WAIT_TSTATES as u64;
        // While a 68000 -> VDP DMA runs, the VDP is the 68000 bus's master
        // (the 68000 itself is halted: md-timing.md, DMA), so a Z80 access
        // to that bus waits until the transfer releases it. GPGX holds the
        // Z80 to the DMA end the same way (fact from its Z80 bank access
        // handler).
        // Most runs have no window (`busy_len` 0: none, or it ended
        // before the run): one test, no mclk time.
        if self.busy_len != 0 {
            let into_busy = self.now(t).wrapping_sub(self.busy_start);
            if into_busy < self.busy_len {
                wait += (self.busy_len - into_busy).div_ceil(Z80_DIVIDER);
                self.dma_waits += 1;
            }
        }
        let phase_at = if self.rules.bank_stall_before_wait {
            t + wait - Z80_BANK_WAIT_TSTATES as u64
        } else {
            t + wait
        };
        self.stall += BANK_STALL_BY_PHASE[self.phase7(phase_at)];
        self.bank_count += 1;
        wait
    }

    /// mclk time of the access at Z80 T-state `t` of this run.
    #[inline(always)]
    fn now(&self, t: u64) -> u64 {
        self.start + t * Z80_DIVIDER
    }

    /// `self.now(t) % M68K_DIVIDER` without the multiplication: a Z80 clock
    /// is 15 mclk, 1 modulo 7, so every T-state moves the phase by one.
    #[inline(always)]
    fn phase7(&self, t: u64) -> usize {
        const _: () = assert!(Z80_DIVIDER % M68K_DIVIDER == 1);
        ((self.start + t) % M68K_DIVIDER) as usize
    }

    fn m68k_addr(&self, addr: u16) -> u32 {
        (*self.bank << 15) | (addr as u32 & 0x7FFF)
    }

    /// Accesses outside Z80 RAM; they return the wait states they add (the
    /// time goes in and out by value so the CPU's counter can stay in a
    /// host register). The bank window first: the XGM driver's mixer
    /// reads its samples there, by far the most frequent access that gets
    /// here; from [`Z80Ctx::bank_rom`] it is the 68000's loss, the count
    /// and one load, and everything else is a tail call, so that this
    /// path needs no stack frame.
    #[cold]
    #[inline(never)]
    fn read_slow(&mut self, addr: u16, t: u64) -> (u8, u64) {
        if addr >= 0x8000 {
            if let Some(rom) = self.bank_rom {
                self.stall += BANK_STALL_BY_PHASE[((self.phase_start + t) % M68K_DIVIDER) as usize];
                self.bank_count += 1;
                return (rom[(addr & 0x7FFF) as usize], Z80_BANK_WAIT_TSTATES as u64);
            }
        }
        self.read_other(addr, t)
    }

    /// [`Z80Ctx::read_slow`] but a read from `bank_rom`.
    #[cold]
    #[inline(never)]
    fn read_other(&mut self, addr: u16, t: u64) -> (u8, u64) {
        if addr >= 0x8000 {
            self.read_bank_full(addr, t)
        } else if addr < 0x6000 {
            let now = self.now(t);
            (self.ym.read(now), 0)
        } else if addr >= 0x7F00 && self.rules.z80_7f_waits {
            (0xFF, self.bank_access(t))
        } else {
            (0xFF, 0)
        }
    }

    /// Sets [`Z80Ctx::bank_rom`] for the bank register's value: the
    /// window's 32 KB if they are plain ROM and no DMA window can hold an
    /// access, else `None`. At the run's start and after each Z80 write of
    /// the bank register (the 68000 cannot write it during a run).
    #[inline(always)]
    fn find_bank_rom(&mut self) {
        self.bank_rom = if self.bank_cache && self.busy_len == 0 {
            self.cart
                .plain_rom(*self.bank << 15, 0x8000)
                .and_then(|s| s.try_into().ok())
        } else {
            None
        };
    }

    /// A bank-window read (8000-FFFF) without [`Z80Ctx::bank_rom`]: the
    /// full access (out of line, so that `read_slow`'s common path needs no
    /// saved registers).
    #[cold]
    #[inline(never)]
    fn read_bank_full(&mut self, addr: u16, t: u64) -> (u8, u64) {
        let wait = self.bank_access(t);
        let v = self.bank_byte(self.m68k_addr(addr));
        (v, wait)
    }

    /// The byte at 68000 address `a` as a bank-window read sees it: the
    /// cartridge, work RAM, or 0xFF (counted as a bad access) elsewhere.
    #[inline(always)]
    fn bank_byte(&mut self, a: u32) -> u8 {
        if a < 0x400000 {
            self.cart.read_byte(a).unwrap_or(0xFF)
        } else if a >= 0xE00000 {
            self.wram[(a & 0xFFFF) as usize]
        } else {
            self.bad += 1;
            0xFF
        }
    }

    /// [`Bus::read_pair`] when a byte is outside Z80 RAM or the pair
    /// crosses its end. Both in the bank window (8000-FFFE: the second
    /// byte at the next 68000 address, in the same 32 KB bank; the XGM
    /// driver's `POP DE` of its sample pointers) and [`Z80Ctx::bank_rom`]
    /// set: the two accesses here, each with its own T-state, wait and
    /// 68000 loss as `read_slow` would charge them; everything else is a
    /// tail call of `read_pair_other`, so that this path needs no stack
    /// frame (time by value, as in `read_slow`).
    #[cold]
    #[inline(never)]
    fn read_pair_slow(&mut self, addr: u16, t: u64) -> (u16, u64) {
        if let (Some(rom), 0x8000..=0xFFFE) = (self.bank_rom, addr) {
            // The first read at t + 3, its wait 3, the second at t + 9
            // with its wait 3 (as the two `bank_access`es of
            // `read_pair_other`).
            let a = (addr - 0x8000) as usize;
            let first = self.phase_start + t + T_MEM;
            self.stall += BANK_PAIR_STALL_BY_PHASE[(first % M68K_DIVIDER) as usize];
            self.bank_count += 2;
            let wait = Z80_BANK_WAIT_TSTATES as u64;
            return (
                u16::from_le_bytes([rom[a], rom[a + 1]]),
                t + 2 * (T_MEM + wait),
            );
        }
        self.read_pair_other(addr, t)
    }

    /// [`Z80Ctx::read_pair_slow`] but a word from `bank_rom`: a word in
    /// the bank window (8000-FFFE) makes both accesses here, without going
    /// through `read_slow` twice; other words take the two single reads.
    #[cold]
    #[inline(never)]
    fn read_pair_other(&mut self, addr: u16, mut t: u64) -> (u16, u64) {
        if (0x8000..0xFFFF).contains(&addr) {
            t += T_MEM;
            t += self.bank_access(t);
            let a = self.m68k_addr(addr);
            let lo = self.bank_byte(a);
            t += T_MEM;
            t += self.bank_access(t);
            let hi = self.bank_byte(a + 1);
            return (u16::from_le_bytes([lo, hi]), t);
        }
        t += T_MEM;
        let lo = self.read(addr, &mut t);
        t += T_MEM;
        let hi = self.read(addr.wrapping_add(1), &mut t);
        (u16::from_le_bytes([lo, hi]), t)
    }

    #[cold]
    #[inline(never)]
    fn write_slow(&mut self, addr: u16, data: u8, t: u64) -> u64 {
        match addr {
            0x4000..=0x5FFF => {
                let now = self.now(t);
                self.ym.write((addr & 3) as u32, data, now)
            }
            0x7F00..=0x7FFF if self.rules.z80_7f_waits => {
                if addr == 0x7F11 {
                    self.psg += 1;
                }
                return self.bank_access(t);
            }
            0x6000..=0x60FF => {
                *self.bank = (*self.bank >> 1) | ((data as u32 & 1) << 8);
                self.find_bank_rom();
            }
            0x7F11 => self.psg += 1,
            0x6100..=0x7FFF => {}
            _ => {
                let wait = self.bank_access(t);
                let a = self.m68k_addr(addr);
                if a >= 0xE00000 {
                    self.wram[(a & 0xFFFF) as usize] = data;
                } else {
                    self.bad += 1;
                }
                return wait;
            }
        }
        0
    }
}

impl Bus for Z80Ctx<'_> {
    #[inline(always)]
    fn read(&mut self, addr: u16, t: &mut u64) -> u8 {
        if addr < 0x4000 {
            self.ram[(addr & 0x1FFF) as usize]
        } else {
            let (v, wait) = self.read_slow(addr, *t);
            *t += wait;
            v
        }
    }

    /// Both bytes in Z80 RAM (0000-3FFF with the mirror folded onto
    /// 0000-1FFF by clearing bit 13) and the pair not across its end: one
    /// 16-bit load, no wait state (the XGM driver's `JP cc,nn` and other
    /// immediate words; its `POP DE` reads the bank window and takes the
    /// slow path).
    #[inline(always)]
    fn read_pair(&mut self, addr: u16, t: &mut u64) -> u16 {
        let a = (addr & 0xDFFF) as usize;
        if a < 0x1FFF {
            *t += 2 * T_MEM;
            u16::from_le_bytes([self.ram[a], self.ram[a + 1]])
        } else {
            let (v, after) = self.read_pair_slow(addr, *t);
            *t = after;
            v
        }
    }

    #[inline(always)]
    fn write(&mut self, addr: u16, data: u8, t: &mut u64) {
        if addr < 0x4000 {
            self.ram[(addr & 0x1FFF) as usize] = data;
        } else {
            *t += self.write_slow(addr, data, *t);
        }
    }

    /// Z80 RAM reads have no side effect and no wait state: the core may
    /// pass over an idle loop (HALT, `JR $`) there without fetching it.
    #[inline(always)]
    fn peek(&self, addr: u16) -> Option<u8> {
        (addr < 0x4000).then(|| self.ram[(addr & 0x1FFF) as usize])
    }

    // I/O: nothing is mapped on the Mega Drive's Z80 I/O space (reads 0xFF,
    // writes ignored): the trait's defaults.

    #[inline(always)]
    fn int_line(&self) -> bool {
        self.irq
    }

    /// The IRQ is a copy taken when the run starts: no Z80 access moves it.
    const INT_LINE_STEADY: bool = true;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rom::Rom;
    use std::path::Path;

    fn cart() -> Cart {
        let mut d = vec![0u8; 0x10000];
        d[0x100..0x104].copy_from_slice(b"SEGA");
        d[0x8123] = 0x5A;
        Cart::new(&Rom::from_bytes(Path::new("t.bin"), d).unwrap())
    }

    #[test]
    fn bank_stall_table_matches_the_formula() {
        for now in 0..10_000u64 {
            assert_eq!(
                BANK_STALL_BY_PHASE[(now % 7) as usize],
                z80_bank_m68k_stall_mclk(now),
                "{now}"
            );
        }
        let big = u64::MAX - 3;
        assert_eq!(
            BANK_STALL_BY_PHASE[(big % 7) as usize],
            z80_bank_m68k_stall_mclk(big)
        );
    }

    /// `bank_access` (phase by T-state, busy window as start + length)
    /// against the mclk formulas it replaces: `now(t) % 7` for the phase,
    /// `busy.0 <= now(t) < busy.1` for the DMA window and
    /// `(busy.1 - now(t)) / 15` rounded up for the wait.
    #[test]
    fn bank_access_matches_the_mclk_formulas() {
        let c = cart();
        let mut wram = [0u8; 0x10000];
        let mut ram = [0u8; 0x2000];
        let mut ym = Ym2612::default();
        let mut bank = 0;
        let windows = [(0, 0), (100, 50), (0, 400), (1_000, 1_600), (7, 8)];
        for start in [0u64, 1, 6, 7, 13, 998, 1_000_003, (u32::MAX as u64) * 5 + 3] {
            for (w0, w1) in windows {
                let busy = (
                    start.saturating_sub(200) + w0,
                    start.saturating_sub(200) + w1,
                );
                for before_wait in [false, true] {
                    let rules = ReferenceRules {
                        bank_stall_before_wait: before_wait,
                        ..ReferenceRules::default()
                    };
                    let mut z = Z80Ctx {
                        ram: &mut ram,
                        ym: &mut ym,
                        bank: &mut bank,
                        cart: &c,
                        wram: &mut wram,
                        irq: false,
                        start,
                        bad: 0,
                        psg: 0,
                        stall: 0,
                        bank_count: 0,
                        busy_start: busy.0,
                        busy_len: busy.1.saturating_sub(busy.0),
                        dma_waits: 0,
                        rules,
                        bank_rom: None,
                        bank_cache: true,
                        phase_start: start + BANK_PHASE_SHIFT[before_wait as usize],
                    };
                    for t in 0..200u64 {
                        let at = start + t * Z80_DIVIDER;
                        let held = at >= busy.0 && at < busy.1;
                        let mut wait = Z80_BANK_WAIT_TSTATES as u64;
                        if held {
                            wait += (busy.1 - at).div_ceil(Z80_DIVIDER);
                        }
                        let pa = if before_wait {
                            t + wait - Z80_BANK_WAIT_TSTATES as u64
                        } else {
                            t + wait
                        };
                        let stall = z80_bank_m68k_stall_mclk(start + pa * Z80_DIVIDER);
                        let (s0, d0) = (z.stall, z.dma_waits);
                        assert_eq!(z.bank_access(t), wait, "start {start} t {t} {busy:?}");
                        assert_eq!(z.stall - s0, stall, "start {start} t {t} {busy:?}");
                        assert_eq!(z.dma_waits - d0, held as u64);
                    }
                }
            }
        }
    }
}
