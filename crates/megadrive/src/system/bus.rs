//! The 68000's side of the console: everything its bus reaches ([`Hw`]),
//! the memory map with its wait states, and [`Bus68k`], the bus the core
//! runs against (which also takes the core's reports: `observe.rs`).

use retroprof_m68k::{
    Boundary, Bus, FetchWindow, FunctionCode, IntAck, PollPass, PollSkip, Read, Write,
};

use super::observe::Seam;
use super::BusCounters;
use crate::cart::Cart;
use crate::io::Io;
use crate::observer::{Clock, DmaEvent, InstrCost, MdObserver, VdpPort};
use crate::render::{Image, Renderer};
use crate::timing::{
    mclk_to_m68k_ceil, DmaBandwidth, Refresh, M68K_DIVIDER, MCLK_PER_LINE, REFRESH_INTERVAL_CYCLES,
    REFRESH_PENALTY_CYCLES, Z80_AREA_WAIT_CYCLES,
};
use crate::vdp::{ControlAction, DmaKind, DmaTarget, Vdp};
use crate::z80::Z80Sys;

/// Everything the 68000's bus reaches.
pub(crate) struct Hw {
    pub(super) cart: Cart,
    pub(super) wram: Box<[u8; 0x10000]>,
    pub(super) vdp: Vdp,
    pub(super) io: Io,
    pub(super) z80: Z80Sys,
    pub(super) refresh: Refresh,
    /// The console's one timebase: CPU cycle 0's mclk, the last
    /// instruction boundary, the frame in progress (number, origin,
    /// geometry). Observers read it as `&Clock`.
    pub(super) clock: Clock,
    /// What the bus collected about the instruction in progress.
    pub(super) seam: Seam,
    pub(super) ipl: u8,
    /// Last word fetched (open bus value).
    pub(super) open_bus: u16,
    pub(super) counters: BusCounters,
    pub(super) fetches_this_frame: u64,
    // ---- line events of the frame in progress (processed at instruction
    // boundaries, so an interrupt raised at its exact time is seen by the
    // 68000 at the first boundary after it; frame origin and geometry are
    // the clock's) ----
    /// The last slow-path boundary (CPU cycle) and the cycles it charged.
    pub(super) boundary_extra: (u64, u64),
    /// Index (0 = first VBlank line) of the next line to start.
    pub(super) next_line: u16,
    /// mclk of VINT in this frame (`u64::MAX` once raised).
    pub(super) vint_at: u64,
    /// mclk of the earliest pending event.
    pub(super) next_event: u64,
    /// The first CPU cycle at which `next_event` is due (kept with it by
    /// [`Hw::update_next_event`]: the boundary's slow path asks for it at
    /// every refresh penalty, and it costs a division by 7).
    pub(super) next_event_at: u64,
    /// CPU cycle at or after which an instruction boundary has work to do
    /// (a line event due, a refresh penalty due, or a Z80 stall to charge):
    /// the boundary's fast path is this one compare. Kept up to date by
    /// [`Hw::update_check`].
    pub(super) check_at: u64,
    /// The idle-poll skip may run line events in place (`Bus68k::poll_skip`;
    /// off only for the both-ways test).
    pub(super) poll_lines: bool,
    /// Line events it ran so (for tests).
    pub(super) poll_lines_crossed: u64,
    /// The slow boundary may take a refresh penalty alone on its short path
    /// (`Bus68k::boundary_work`; off only for the both-ways test).
    pub(super) quick_refresh: bool,
    pub(super) renderer: Renderer,
    /// Second renderer for the odd rows of an interlace mode 2 picture
    /// (each field keeps its own previous-line sprite state).
    pub(super) renderer_odd: Renderer,
    /// Frame buffer being drawn for a requested screenshot.
    pub(super) shot: Option<Image>,
}

impl Hw {
    #[inline(always)]
    pub(super) fn mclk(&self, now: u64) -> u64 {
        self.clock.mclk_at(now)
    }

    /// Charge `cycles` 68000 cycles to one cost part during an instruction
    /// (a bus access's wait; zero charges nothing): the instruction's
    /// boundary then takes the slow path (`check_at` 0, kept so by
    /// [`Hw::update_check`] while the part is pending), whose report passes
    /// the parts on, so the quick boundary's report
    /// (`Bus68k::instruction_quick`) never has one to pass.
    #[inline(always)]
    pub(super) fn charge_access(&mut self, part: fn(&mut InstrCost) -> &mut u32, cycles: u32) {
        if cycles != 0 {
            self.seam.charge(part, cycles);
            self.check_at = 0;
        }
    }

    /// Side-effect-free word read for DMA sources; `open_bus`: the latch
    /// (the running bus's, [`Bus68k::open_bus`]).
    pub(super) fn peek_word(&self, addr: u32, open_bus: u16) -> u16 {
        let a = addr & 0xFF_FFFF;
        if a < 0x40_0000 {
            self.cart.read_word(a & !1).unwrap_or(0xFFFF)
        } else if a >= 0xE0_0000 {
            let i = (a & 0xFFFE) as usize;
            u16::from_be_bytes([self.wram[i], self.wram[i + 1]])
        } else {
            open_bus
        }
    }
}

/// The 68000's bus and observer in one: the console's hardware and the
/// `MdObserver` it reports to (VDP writes and DMAs from bus accesses,
/// instructions and exceptions from the core).
pub(super) struct Bus68k<'a, O: MdObserver + ?Sized> {
    pub(super) hw: &'a mut Hw,
    pub(super) obs: &'a mut O,
    /// The open-bus latch while this bus exists ([`Hw::open_bus`] taken
    /// by [`Bus68k::new`] and written back when the bus is dropped): one
    /// pointer away from the core's context instead of two, for the store
    /// at every fetch-window word and work-RAM read.
    pub(super) open_bus: u16,
}

impl<'a, O: MdObserver + ?Sized> Bus68k<'a, O> {
    /// The bus of `hw` reporting to `obs`; `hw`'s open-bus latch is
    /// carried in the bus until it is dropped.
    pub(super) fn new(hw: &'a mut Hw, obs: &'a mut O) -> Self {
        let open_bus = hw.open_bus;
        Bus68k { hw, obs, open_bus }
    }
}

impl<O: MdObserver + ?Sized> Drop for Bus68k<'_, O> {
    fn drop(&mut self) {
        self.hw.open_bus = self.open_bus;
    }
}

impl<O: MdObserver + ?Sized> Bus68k<'_, O> {
    #[inline(always)]
    pub(super) fn is_vdp(addr: u32) -> bool {
        // VDP ports at 0xC00000-0xC0001F, mirrored where A18-A16 and A7-A5
        // are 0 within 0xC00000-0xDFFFFF (genvdp.txt); other addresses lock
        // the machine up on hardware: we count them.
        addr & 0xE7_00E0 == 0xC0_0000
    }

    /// The VDP status port or one of its mirrors.
    pub(super) fn is_vdp_status(addr: u32) -> bool {
        Self::is_vdp(addr) && addr & 0x1C == 0x04
    }

    fn unmapped_read(&mut self, fc: FunctionCode) -> u16 {
        self.hw.counters.unmapped_reads += 1;
        if matches!(
            fc,
            FunctionCode::SupervisorProgram | FunctionCode::UserProgram
        ) {
            self.hw.counters.unmapped_fetches += 1;
            self.hw.fetches_this_frame += 1;
        }
        self.open_bus
    }

    fn io_read_byte(&mut self, addr: u32, now: u64) -> u8 {
        let m = self.hw.mclk(now);
        match addr {
            0xA1_0000..=0xA1_001F => self.hw.io.read((addr >> 1) & 0xF, m),
            0xA1_1100 => {
                self.hw.catch_up_z80(m);
                (self.open_bus >> 8) as u8 & 0xFE | self.hw.z80.busack_bit()
            }
            0xA1_1101 => self.open_bus as u8,
            _ => {
                self.hw.counters.unmapped_reads += 1;
                (self.open_bus >> if addr & 1 == 0 { 8 } else { 0 }) as u8
            }
        }
    }

    /// mclk at which the current instruction started: its boundary plus
    /// the cycles charged there ([`ReferenceRules::busreq_at_insn_start`]).
    fn insn_start_mclk(&self) -> u64 {
        let at = self.hw.clock.cpu_cycles;
        let extra = if self.hw.boundary_extra.0 == at {
            self.hw.boundary_extra.1
        } else {
            0
        };
        self.hw.mclk(at + extra)
    }

    fn io_write_byte(&mut self, addr: u32, v: u8, now: u64) {
        let m = self.hw.mclk(now);
        match addr {
            0xA1_0000..=0xA1_001F => self.hw.io.write((addr >> 1) & 0xF, v, m),
            0xA1_1100 => {
                let m = if self.hw.z80.rules.busreq_at_insn_start {
                    self.insn_start_mclk()
                } else {
                    m
                };
                self.hw.catch_up_z80(m);
                self.hw.z80.set_busreq(v & 1 != 0, m);
            }
            0xA1_1200 => {
                let m = if self.hw.z80.rules.reset_at_insn_start {
                    self.insn_start_mclk()
                } else {
                    m
                };
                self.hw.catch_up_z80(m);
                self.hw.z80.set_reset(v & 1 == 0, m);
            }
            0xA1_1101 | 0xA1_1201 | 0xA1_1000..=0xA1_10FF => {}
            0xA1_30F1..=0xA1_30FF if addr & 1 == 1 => self.hw.cart.write_mapper(addr, v),
            0xA1_4000..=0xA1_4003 | 0xA1_4101 => self.hw.counters.tmss_writes += 1,
            _ => self.hw.counters.unmapped_writes += 1,
        }
    }

    fn z80_read_byte(&mut self, addr: u32, now: u64) -> u8 {
        let m = self.hw.mclk(now);
        self.hw.catch_up_z80(m);
        let off = addr & 0xFFFF;
        if off < 0x4000 && !self.hw.z80.busreq && !self.hw.z80.reset {
            self.hw.counters.z80_ram_without_busreq += 1;
        }
        match self.hw.z80.m68k_read(off, m) {
            Some(v) => v,
            None => {
                self.hw.counters.unmapped_reads += 1;
                0xFF
            }
        }
    }

    fn z80_write_byte(&mut self, addr: u32, v: u8, now: u64) {
        let m = self.hw.mclk(now);
        self.hw.catch_up_z80(m);
        let off = addr & 0xFFFF;
        if off < 0x4000 && !self.hw.z80.busreq && !self.hw.z80.reset {
            self.hw.counters.z80_ram_without_busreq += 1;
        }
        if !self.hw.z80.m68k_write(off, v, m) {
            self.hw.counters.unmapped_writes += 1;
        }
    }

    fn vdp_read_word(&mut self, addr: u32, now: u64) -> (u16, u32) {
        let m = self.hw.mclk(now);
        self.hw.counters.vdp_reads += 1;
        match addr & 0x1C {
            0x00 => {
                let (v, w) = self.hw.vdp.read_data(&self.hw.clock, m);
                let cycles = mclk_to_m68k_ceil(w) as u32;
                self.hw.charge_access(|p| &mut p.fifo_wait, cycles);
                (v, cycles)
            }
            0x04 => (self.hw.vdp.read_status(&self.hw.clock, m, self.open_bus), 0),
            0x08 | 0x0C => (self.hw.vdp.read_hv(&self.hw.clock, m), 0),
            _ => {
                self.hw.counters.unmapped_reads += 1;
                (self.open_bus, 0)
            }
        }
    }

    fn vdp_write_word(&mut self, addr: u32, v: u16, now: u64) -> u32 {
        let m = self.hw.mclk(now);
        self.hw.counters.vdp_writes += 1;
        match addr & 0x1C {
            0x00 => {
                self.obs.vdp_write(VdpPort::Data, v, &self.hw.clock);
                let r = self.hw.vdp.write_data(&self.hw.clock, v, m);
                if let Some((span, bytes, target)) = r.fill {
                    self.obs.dma(&DmaEvent {
                        kind: DmaKind::Fill(target),
                        bytes,
                        source: 0,
                        span,
                        frame: self.hw.clock.frame,
                    });
                }
                // No wait, the common write: no division.
                let cycles = if r.wait == 0 {
                    0
                } else {
                    mclk_to_m68k_ceil(r.wait) as u32
                };
                self.hw.charge_access(|p| &mut p.fifo_wait, cycles);
                cycles
            }
            0x04 => {
                self.obs.vdp_write(VdpPort::Control, v, &self.hw.clock);
                let action = self.hw.vdp.write_control(&self.hw.clock, v, m);
                let cycles = match action {
                    ControlAction::None => 0,
                    ControlAction::DmaFromCpu {
                        source,
                        words,
                        target,
                    } => self.cpu_dma(source, words, target, m),
                    ControlAction::CopyStarted(span, bytes) => {
                        self.obs.dma(&DmaEvent {
                            kind: DmaKind::Copy,
                            bytes,
                            source: 0,
                            span,
                            frame: self.hw.clock.frame,
                        });
                        0
                    }
                };
                self.hw.ipl = self.hw.vdp.ipl();
                cycles
            }
            0x10 | 0x14 => 0, // PSG (0xC00011) and its mirrors: accepted
            _ => {
                self.hw.counters.unmapped_writes += 1;
                0
            }
        }
    }

    /// The boundary's slow path: line events, DRAM refresh, Z80 stall. Its
    /// common case, a refresh penalty alone (no line event due, no Z80
    /// stall to charge; about two thirds of the slow boundaries on the
    /// shared ROMs), is taken here without a stack frame; the rest, and the
    /// same case with `quick_refresh` off, is `boundary_full`, which does
    /// exactly the same for it.
    #[inline(never)]
    fn boundary_work(&mut self, now: u64) -> Boundary {
        let hw = &mut *self.hw;
        if now < hw.next_event_cycle()
            && hw.z80.m68k_stall == 0
            && now >= hw.refresh.due
            && hw.quick_refresh
        {
            // `boundary_full` with no event due and no stall: the penalty
            // (`Refresh::at_boundary`), its charge, `check_at` (no stall:
            // the event or the next refresh), the boundary's extra.
            hw.refresh.due = now + REFRESH_INTERVAL_CYCLES;
            hw.seam.charge(|p| &mut p.refresh, REFRESH_PENALTY_CYCLES);
            hw.check_at = hw.next_event_cycle().min(hw.refresh.due);
            hw.boundary_extra = (now, REFRESH_PENALTY_CYCLES as u64);
            return Boundary {
                extra: REFRESH_PENALTY_CYCLES,
                ipl: hw.ipl,
            };
        }
        self.boundary_full(now)
    }

    /// [`Bus68k::boundary_work`], all of it.
    #[inline(never)]
    fn boundary_full(&mut self, now: u64) -> Boundary {
        // `mclk(now) >= next_event`, in CPU cycles (`Hw::next_event_cycle`).
        if now >= self.hw.next_event_cycle() {
            let m = self.hw.mclk(now);
            self.hw.process_events(m);
        }
        let mut extra = self.hw.refresh.at_boundary(now);
        if extra != 0 {
            self.hw.seam.charge(|p| &mut p.refresh, extra);
        }
        if self.hw.z80.m68k_stall != 0 {
            // The Z80 took the 68000's bus while catching up. Its stall is
            // a sum of `z80_bank_m68k_stall_mclk`s, each a multiple of 7
            // mclk, so the exact division is the rounding up (and cheaper).
            let stall = self.hw.z80.m68k_stall;
            debug_assert_eq!(stall % M68K_DIVIDER, 0);
            let c = (stall / M68K_DIVIDER) as u32;
            self.hw.z80.m68k_stall = 0;
            self.hw.seam.charge(|p| &mut p.z80_stall, c);
            extra += c;
        }
        // The parts charged (here and during the instruction) go with the
        // report that follows at once: no need to keep the next boundary
        // slow for them (`Hw::update_check`).
        self.hw.check_at = self.hw.check_time();
        self.hw.boundary_extra = (now, extra as u64);
        Boundary {
            extra,
            ipl: self.hw.ipl,
        }
    }

    /// 68000 -> VDP DMA: copy the words now and freeze the CPU until the
    /// transfer's end (md-timing.md: "GPGX jumps the CPU clock to the DMA
    /// end"); the freeze is the `wait` of the control-port write.
    fn cpu_dma(&mut self, source: u32, words: u32, target: DmaTarget, m: u64) -> u32 {
        // The source address wraps within its 128 KB window (genvdp.txt:
        // register 23's bits do not increment): after n words its low 17
        // bits have moved by 2n modulo 128 KB.
        let src = (source & 0xFE_0000) | (source.wrapping_add(2 * words) & 0x1_FFFF);
        let hw = &mut *self.hw;
        match Self::dma_source_slice(&hw.wram, &hw.cart, source, words) {
            // The words as `peek_word` reads them one by one.
            Some(bytes) => hw.vdp.store_words(bytes),
            None => {
                let mut s = source;
                for _ in 0..words {
                    let w = hw.peek_word(s, self.open_bus);
                    hw.vdp.store(w);
                    s = (s & 0xFE_0000) | (s.wrapping_add(2) & 0x1_FFFF);
                }
                debug_assert_eq!(s, src);
            }
        }
        self.hw.vdp.finish_cpu_dma(src);
        let kind = match target {
            DmaTarget::Vram => DmaBandwidth::ToVram,
            _ => DmaBandwidth::ToCramVsram,
        };
        let span = self
            .hw
            .vdp
            .schedule_dma(&self.hw.clock, m, words as u64 * 2, kind);
        // The Z80 runs up to the DMA's start with the 68000 bus free, and
        // then meets the DMA's window if it reaches for the 68000 bus.
        self.hw.catch_up_z80(m);
        self.hw.z80.set_m68k_bus_busy(span.start, span.end);
        let cycles = mclk_to_m68k_ceil(span.end - m) as u32;
        self.hw.charge_access(|p| &mut p.dma_freeze, cycles);
        self.obs.dma(&DmaEvent {
            kind: DmaKind::FromCpu(target),
            bytes: words * 2,
            source,
            span,
            frame: self.hw.clock.frame,
        });
        cycles
    }
}

impl<O: MdObserver + ?Sized> Bus68k<'_, O> {
    /// The bytes a 68000 -> VDP DMA of `words` words from `source` (even,
    /// 24-bit) reads, as one slice, when it does not wrap in its 128 KB
    /// window and lies in one 64 KB mirror of work RAM or in plain ROM
    /// (`Cart::plain_rom`, where `Cart::read_word` reads the same bytes):
    /// there [`Hw::peek_word`] of each word reads the slice's next two.
    /// `None` otherwise (the caller reads word by word).
    fn dma_source_slice<'h>(
        wram: &'h [u8; 0x10000],
        cart: &'h Cart,
        source: u32,
        words: u32,
    ) -> Option<&'h [u8]> {
        let len = 2 * words as usize;
        let a = source & 0xFF_FFFF;
        if a & 1 != 0 || (source & 0x1_FFFF) as usize + len > 0x2_0000 {
            return None;
        }
        if a >= 0xE0_0000 {
            let i = (a & 0xFFFF) as usize;
            wram.get(i..i + len)
        } else if a < 0x40_0000 {
            cart.plain_rom(a, len)
        } else {
            None
        }
    }

    // The bus accesses outside work RAM and the cartridge (reads) or work
    // RAM (writes): out of line, so that the core's handlers, which inline
    // the fast cases at every access, stay small and save fewer registers.
    // Work RAM and the cartridge's mapped reads are handled only by the
    // inline `Bus` methods below, which call these for everything else (a
    // cartridge read reaches the read functions only when it is unmapped,
    // and then takes their unmapped arm).

    #[inline(never)]
    fn read_byte_slow(&mut self, addr: u32, fc: FunctionCode, now: u64) -> Read<u8> {
        let addr = addr & 0xFF_FFFF;
        match addr >> 16 {
            0xA0 => Read {
                data: self.z80_read_byte(addr, now),
                wait: Z80_AREA_WAIT_CYCLES,
                bus_error: false,
            },
            0xA1 => Read::ok(self.io_read_byte(addr, now)),
            0xC0..=0xDF if Self::is_vdp(addr) => {
                let (w, wait) = self.vdp_read_word(addr & !1, now);
                let v = if addr & 1 == 0 {
                    (w >> 8) as u8
                } else {
                    w as u8
                };
                Read {
                    data: v,
                    wait,
                    bus_error: false,
                }
            }
            _ => {
                let ob = self.unmapped_read(fc);
                Read::ok((ob >> if addr & 1 == 0 { 8 } else { 0 }) as u8)
            }
        }
    }

    #[inline(never)]
    fn read_word_slow(&mut self, addr: u32, fc: FunctionCode, now: u64) -> Read<u16> {
        let addr = addr & 0xFF_FFFE;
        match addr >> 16 {
            0xA0 => {
                // Z80 RAM/YM as words: the byte appears in both halves
                // (public 68000/Z80 bus documentation).
                let b = self.z80_read_byte(addr, now);
                Read {
                    data: u16::from_be_bytes([b, b]),
                    wait: Z80_AREA_WAIT_CYCLES,
                    bus_error: false,
                }
            }
            0xA1 => {
                let hi = self.io_read_byte(addr, now);
                let lo = self.io_read_byte(addr | 1, now);
                let v = if (0xA1_0000..=0xA1_001F).contains(&addr) {
                    // I/O registers are on odd addresses; the word reads the
                    // register in both halves.
                    u16::from_be_bytes([lo, lo])
                } else {
                    u16::from_be_bytes([hi, lo])
                };
                Read::ok(v)
            }
            0xC0..=0xDF if Self::is_vdp(addr) => {
                let (v, wait) = self.vdp_read_word(addr, now);
                Read {
                    data: v,
                    wait,
                    bus_error: false,
                }
            }
            _ => Read::ok(self.unmapped_read(fc)),
        }
    }

    #[inline(never)]
    fn write_byte_slow(&mut self, addr: u32, data: u8, _fc: FunctionCode, now: u64) -> Write {
        let addr = addr & 0xFF_FFFF;
        match addr >> 16 {
            0x00..=0x3F => {
                if !self.hw.cart.write_byte(addr, data) {
                    self.hw.counters.unmapped_writes += 1;
                }
                Write::OK
            }
            0xA0 => {
                self.z80_write_byte(addr, data, now);
                Write {
                    wait: Z80_AREA_WAIT_CYCLES,
                    bus_error: false,
                }
            }
            0xA1 => {
                self.io_write_byte(addr, data, now);
                Write::OK
            }
            0xC0..=0xDF if Self::is_vdp(addr) => {
                // Byte writes to the VDP ports put the byte on both halves
                // of the data bus (genvdp.txt).
                let wait = if addr & 0x1F == 0x11 {
                    0 // PSG
                } else {
                    self.vdp_write_word(addr & !1, u16::from_be_bytes([data, data]), now)
                };
                Write {
                    wait,
                    bus_error: false,
                }
            }
            _ => {
                self.hw.counters.unmapped_writes += 1;
                Write::OK
            }
        }
    }

    #[inline(never)]
    fn write_word_slow(&mut self, addr: u32, data: u16, _fc: FunctionCode, now: u64) -> Write {
        let addr = addr & 0xFF_FFFE;
        match addr >> 16 {
            0xC0..=0xDF if Self::is_vdp(addr) => Write {
                wait: self.vdp_write_word(addr, data, now),
                bus_error: false,
            },
            0x00..=0x3F => {
                let [hi, lo] = data.to_be_bytes();
                let a = self.hw.cart.write_byte(addr, hi);
                let b = self.hw.cart.write_byte(addr | 1, lo);
                if !a && !b {
                    self.hw.counters.unmapped_writes += 1;
                }
                Write::OK
            }
            0xA0 => {
                // Word writes to the Z80 area store the high byte.
                self.z80_write_byte(addr, (data >> 8) as u8, now);
                Write {
                    wait: Z80_AREA_WAIT_CYCLES,
                    bus_error: false,
                }
            }
            0xA1 => {
                let [hi, lo] = data.to_be_bytes();
                if (0xA1_0000..=0xA1_001F).contains(&addr) {
                    self.io_write_byte(addr | 1, lo, now);
                } else {
                    // BUSREQ / RESET take bit 8 of a word write (bit 0 of
                    // the even byte).
                    self.io_write_byte(addr, hi, now);
                    if !matches!(addr, 0xA1_1100 | 0xA1_1200) {
                        self.io_write_byte(addr | 1, lo, now);
                    }
                }
                Write::OK
            }
            _ => {
                self.hw.counters.unmapped_writes += 1;
                Write::OK
            }
        }
    }
}

impl<O: MdObserver + ?Sized> Bus68k<'_, O> {
    /// `Bus::poll_skip` up to the next line event: the whole passes before
    /// the pass in which it (or `limit`) falls, with the bus's state
    /// updated as their boundaries would have; whether it stopped because
    /// of the event; and whether it found the status read repeating in the
    /// line before the event (`status_read_repeats`, whose answer depends on
    /// the line alone while the passes change nothing it reads).
    fn poll_segment(&mut self, p: &PollPass, now: u64, limit: u64) -> (PollSkip, bool, bool) {
        let mut s = PollSkip::none(now);
        // Only VBlank-flag polls of the status port (SGDK's VDP_waitVBlank):
        // bit 3 of the word, or of the odd (low) byte.
        let a = p.addr;
        if p.bit != 3
            || !Self::is_vdp_status(a)
            || (p.size == 1 && a & 1 == 0)
            || self.hw.z80.m68k_stall != 0
        {
            return (s, false, false);
        }
        // The reads and the flag stay as they are until the next line event
        // (every line start and VINT are events), and boundaries before it
        // only charge refresh: both checks use this one limit (CPU cycles;
        // see `update_check`).
        let event = self.hw.next_event_cycle();
        if event <= now + p.read_offset {
            // The first pass reads after the event (its boundary is the
            // MOVE's end or later).
            return (s, true, false);
        }
        if self
            .hw
            .vdp
            .status_read_repeats(&self.hw.clock, self.hw.mclk(now + p.read_offset))
            != Some(p.continue_if)
        {
            return (s, false, false);
        }
        let mut refresh = self.hw.refresh;
        let mut last_boundary = now;
        let pass_len: u64 = p.cycles.iter().sum();
        let stop = event.min(limit);
        let mut at_event = false;
        'pass: loop {
            // Whole passes before the next refresh penalty: their boundaries
            // charge nothing, so they end at multiples of the pass length.
            let free_end = refresh.due.min(stop);
            if free_end > s.end + pass_len {
                let k = (free_end - s.end - 1) / pass_len;
                s.passes += k;
                s.end += k * pass_len;
                last_boundary = s.end;
            }
            // Then one pass instruction by instruction (a refresh falls in
            // it, or it is the last).
            let mut t = s.end;
            let mut r = refresh;
            let mut extra = [0u64; 3];
            let mut lb = last_boundary;
            for (i, c) in p.cycles.iter().enumerate() {
                let b = t + c;
                if b >= event {
                    at_event = true;
                    break 'pass;
                }
                let x = r.at_boundary(b) as u64;
                lb = b;
                t = b + x;
                extra[i] = x;
                if t >= limit {
                    break 'pass;
                }
            }
            s.passes += 1;
            s.end = t;
            refresh = r;
            last_boundary = lb;
            for (e, x) in s.extra.iter_mut().zip(extra) {
                *e += x;
            }
        }
        if s.passes != 0 {
            self.hw.refresh = refresh;
            self.hw.update_check();
            self.hw.counters.vdp_reads += s.passes;
            self.hw.clock.cpu_cycles = last_boundary;
        }
        (s, at_event, true)
    }

    /// Whether the pass starting at `start`, in whose boundaries the next
    /// line event falls, can run in place (`poll_cross`) with the same
    /// effects and reports as the core running it, and without the core
    /// having to stop inside it or at its end: the event is a line start
    /// other than the frame's first (which schedules VINT and raises the
    /// VBlank flag) and not VINT, and it and the next line start change no
    /// interrupt level and run no fill (`Vdp::line_start_is_quiet`); the
    /// pass's read repeats (it may fall after the event; before it, in the
    /// line `poll_segment` found it repeating in (`checked`), it does, as
    /// nothing `status_read_repeats` reads but the line has changed since);
    /// and the pass ends
    /// well before `limit`. Its boundaries charge the refresh and the Z80's
    /// stall from its catch-up to the event: the Z80 was caught up at the
    /// previous line event, at most a line earlier, and each of its
    /// 68000-bus accesses costs the 68000 at most 77 mclk
    /// (`z80_bank_m68k_stall_mclk`) and the Z80 at least 90 (a 3-T memory
    /// cycle and the 3-T wait), so the stall stays below 77/90 of a line
    /// plus one Z80 instruction (the catch-up's overshoot): it may carry
    /// the pass's last boundaries past the next line start (hence the
    /// second quiet line start), never two, nor within two lines of
    /// `limit`.
    fn poll_cross_ok(&self, p: &PollPass, start: u64, limit: u64, checked: bool) -> bool {
        let hw = &*self.hw;
        let idx = hw.next_line;
        if !hw.poll_lines
            || hw.vint_at == hw.next_event
            || idx == 0
            || idx >= hw.clock.geom.lines
            || limit <= start + 2 * (MCLK_PER_LINE / 7 + 1)
        {
            return false;
        }
        let line = hw.clock.geom.line_of_start(idx);
        let read = start + p.read_offset;
        hw.vdp.line_start_is_quiet(&hw.clock, line)
            && ((checked && read < hw.next_event_cycle())
                || hw.vdp.status_read_repeats(&hw.clock, hw.mclk(read)) == Some(p.continue_if))
    }

    /// Run the pass starting at `start` in place (`poll_cross_ok` said
    /// yes): each instruction's boundary as the core makes it
    /// (`Bus::boundary`, which processes the line event at its time and
    /// charges refresh and Z80 stall) and its report with its cycles and
    /// extras; the read is counted (it repeats: no other effect). Returns
    /// the pass's end.
    fn poll_cross(&mut self, p: &PollPass, start: u64) -> u64 {
        let ipl = self.hw.ipl;
        self.hw.counters.vdp_reads += 1;
        self.hw.poll_lines_crossed += 1;
        let mut t = start;
        for (&pc, &c) in p.pcs.iter().zip(&p.cycles) {
            let b = t + c;
            // As the core's boundary: the quick one and its report when it
            // has nothing to do, else `Bus::boundary` and the full report.
            if Bus::boundary_quick(self, b).is_some() {
                retroprof_m68k::Observer::instruction_quick(self, pc, c as u32, b);
                t = b;
            } else {
                let x = Bus::boundary(self, b).extra as u64;
                retroprof_m68k::Observer::instruction(self, pc, (c + x) as u32);
                t = b + x;
            }
        }
        debug_assert_eq!(self.hw.ipl, ipl, "a quiet line event");
        debug_assert_eq!(self.hw.z80.m68k_stall, 0);
        t
    }
}

impl<O: MdObserver + ?Sized> Bus for Bus68k<'_, O> {
    #[inline(always)]
    fn read_byte(&mut self, addr: u32, fc: FunctionCode, now: u64) -> Read<u8> {
        let addr = addr & 0xFF_FFFF;
        match addr >> 16 {
            0xE0..=0xFF => Read::ok(self.hw.wram[(addr & 0xFFFF) as usize]),
            0x00..=0x3F => match self.hw.cart.read_byte(addr) {
                Some(v) => Read::ok(v),
                None => self.read_byte_slow(addr, fc, now),
            },
            _ => self.read_byte_slow(addr, fc, now),
        }
    }

    #[inline(always)]
    fn read_word(&mut self, addr: u32, fc: FunctionCode, now: u64) -> Read<u16> {
        let addr = addr & 0xFF_FFFE;
        match addr >> 16 {
            0xE0..=0xFF => {
                let i = (addr & 0xFFFE) as usize;
                let v = u16::from_be_bytes([self.hw.wram[i], self.hw.wram[i + 1]]);
                self.open_bus = v;
                Read::ok(v)
            }
            0x00..=0x3F => match self.hw.cart.read_word(addr) {
                Some(v) => {
                    self.open_bus = v;
                    Read::ok(v)
                }
                None => self.read_word_slow(addr, fc, now),
            },
            _ => self.read_word_slow(addr, fc, now),
        }
    }

    #[inline(always)]
    fn write_byte(&mut self, addr: u32, data: u8, fc: FunctionCode, now: u64) -> Write {
        let addr = addr & 0xFF_FFFF;
        if addr >= 0xE0_0000 {
            self.hw.wram[(addr & 0xFFFF) as usize] = data;
            return Write::OK;
        }
        self.write_byte_slow(addr, data, fc, now)
    }

    #[inline(always)]
    fn write_word(&mut self, addr: u32, data: u16, fc: FunctionCode, now: u64) -> Write {
        let addr = addr & 0xFF_FFFE;
        if addr >= 0xE0_0000 {
            // One two-byte store (two byte stores each reload the RAM's
            // address, the first store might have changed it).
            let i = (addr & 0xFFFE) as usize;
            self.hw.wram[i..i + 2].copy_from_slice(&data.to_be_bytes());
            return Write::OK;
        }
        self.write_word_slow(addr, data, fc, now)
    }

    #[inline(always)]
    fn read_long_plain(&mut self, addr: u32, _fc: FunctionCode, _now: u64) -> Option<u32> {
        // Both words in work RAM, not across the end of a 64 KB mirror
        // (`addr` is even and 24-bit): `read_word`'s RAM branch twice, the
        // latch left at the second word.
        if addr < 0xE0_0000 {
            return None;
        }
        let i = (addr & 0xFFFF) as usize;
        let b: [u8; 4] = self.hw.wram.get(i..i + 4)?.try_into().ok()?;
        let v = u32::from_be_bytes(b);
        self.open_bus = v as u16;
        Some(v)
    }

    #[inline(always)]
    fn write_long_plain(
        &mut self,
        addr: u32,
        data: u32,
        _low_first: bool,
        _fc: FunctionCode,
        _now: u64,
    ) -> bool {
        // `write_word`'s RAM branch twice (work RAM has no wait state and
        // no other effect, so the order of the two words does not show).
        if addr < 0xE0_0000 {
            return false;
        }
        let i = (addr & 0xFFFF) as usize;
        match self.hw.wram.get_mut(i..i + 4) {
            Some(w) => {
                w.copy_from_slice(&data.to_be_bytes());
                true
            }
            None => false,
        }
    }

    #[inline(always)]
    fn boundary(&mut self, now: u64) -> Boundary {
        self.hw.clock.cpu_cycles = now;
        if now >= self.hw.check_at {
            return self.boundary_work(now);
        }
        Boundary {
            extra: 0,
            ipl: self.hw.ipl,
        }
    }

    #[inline(always)]
    fn boundary_quick(&mut self, now: u64) -> Option<u8> {
        // `boundary`'s fast path; the time's store is left to the report
        // that the core makes at once (`instruction_quick`, observe.rs).
        if now >= self.hw.check_at {
            return None;
        }
        // The VDP's level (`Vdp::ipl`: 0, 4 or 6), within the 0-7 the core
        // takes unmasked from here.
        Some(self.hw.ipl)
    }

    fn next_event(&mut self, _now: u64) -> u64 {
        // STOP: wake at the next line event (the only times the interrupt
        // level can change without the CPU).
        self.hw.next_event_cycle()
    }

    fn fetch_window(&mut self) -> Option<FetchWindow> {
        self.hw.cart.fetch_window()
    }

    #[inline(always)]
    fn window_fetch(&mut self, _addr: u32, word: u16, _fc: FunctionCode, _now: u64) {
        // What `read_word`'s cartridge branch does besides the read.
        self.open_bus = word;
    }

    #[inline(always)]
    fn window_fetch_pair(&mut self, _addr: u32, _w0: u16, w1: u16, _fc: FunctionCode, _now: u64) {
        // The second word is the latch's value after both.
        self.open_bus = w1;
    }

    fn program_word(&mut self, addr: u32) -> Option<u16> {
        // Code fetches from the cartridge take no wait states; their only
        // side effect is the open-bus latch, which the next fetch overwrites
        // (m68k poll.rs). Not work RAM: the Z80, catching up during the
        // loop, could rewrite code there.
        match addr >> 16 {
            0x00..=0x3F => self.hw.cart.read_word(addr & 0xFF_FFFE),
            _ => None,
        }
    }

    fn poll_read(
        &mut self,
        addr: u32,
        size: u32,
        _fc: FunctionCode,
        now: u64,
        bus_word: u16,
    ) -> Option<u32> {
        // Only the VDP status port (SGDK's VDP_waitVBlank/VSync polls): the
        // same read the normal path makes (no wait states), with the
        // open-bus bits the normal path would have latched from the last
        // code fetch.
        if !Self::is_vdp_status(addr) {
            return None;
        }
        let m = self.hw.mclk(now);
        self.hw.counters.vdp_reads += 1;
        let w = self.hw.vdp.read_status(&self.hw.clock, m, bus_word);
        Some(match (size, addr & 1) {
            (2, _) => w as u32,
            (_, 0) => (w >> 8) as u32,
            _ => w as u32 & 0xFF,
        })
    }

    fn poll_skip(&mut self, p: &PollPass, now: u64, limit: u64) -> PollSkip {
        // Runs of passes between line events (`poll_segment`), and in place
        // the pass in which a quiet line event falls (`poll_cross`): its
        // boundaries through `Bus::boundary` and its reports through the
        // seam, as the core would have made them. The runs before the last
        // are reported here, in order; the core reports the last.
        let mut cur = now;
        loop {
            let (seg, at_event, checked) = self.poll_segment(p, cur, limit);
            if !at_event || !self.poll_cross_ok(p, seg.end, limit, checked) {
                return seg;
            }
            if seg.passes != 0 {
                let mut cycles = [0u64; 3];
                for (i, c) in cycles.iter_mut().enumerate() {
                    *c = p.cycles[i] * seg.passes + seg.extra[i];
                }
                retroprof_m68k::Observer::poll_passes(
                    self, &p.pcs, &cycles, &seg.extra, seg.passes,
                );
            }
            cur = self.poll_cross(p, seg.end);
        }
    }

    fn interrupt_ack(&mut self, level: u8, _now: u64) -> IntAck {
        self.hw.vdp.acknowledge(level);
        self.hw.ipl = self.hw.vdp.ipl();
        IntAck::Autovector
    }

    fn tas_writeback(&self) -> bool {
        // md: the bus arbiter ignores TAS's write cycle (bus.rs).
        false
    }

    fn halted(&mut self, _now: u64) {
        self.hw.seam.halted = true;
    }
}
