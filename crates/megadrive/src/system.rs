//! The console: memory map, the master-clock timebase, the frame loop.
//!
//! # Timebase
//! One `u64` master clock (mclk) for the whole run. The 68000 leads: its
//! cycle counter `c` is at mclk `base + 7 c` ([`crate::timing::M68K_DIVIDER`]),
//! and it runs with `Cpu::run_until` to the next event (VINT, end of line);
//! the VDP computes its state from the time of each access, and the Z80 and
//! YM2612 catch up (the Z80 at each Z80-area access, BUSREQ/RESET change and
//! line end).
//!
//! # Frame boundary
//! A frame starts at the first VBlank line (line 224 in V28, 240 in V30) and
//! runs the VBlank lines, then active lines 0..223 (or 0..239): the same
//! boundary as Genesis Plus GX (md-timing.md), so our per-frame figures line
//! up with `shared/reference/*.frames.csv`. Frame N's picture is the active
//! lines drawn at the end of frame N. VINT is raised 788 (H40) / 770 (H32)
//! mclk into the frame's first line.
//!
//! # Power-on
//! GPGX starts the 68000 at a pseudo-random point of its first frame
//! ("68k & Z80 could restart anywhere in VDP frame": the start is a random
//! fraction of the frame length). In the reference runs frame 0 has 15,939.7
//! busy cycles of 128,005.7 for both ROMs, i.e. the CPU started 112,066 CPU
//! cycles = 784,462 mclk into frame 0. [`Config::cpu_start_mclk`] defaults to
//! that so frame figures compare directly; set it to 0 to start with the
//! frame.

use std::cell::{Cell, RefCell};

use retroprof_m68k::{
    Boundary, Bus, Cpu, ExceptionKind, FunctionCode, IntAck, Observer, PollPass, PollSkip, Read,
    Registers, Stop, Write,
};

use crate::cart::Cart;
use crate::input::Buttons;
use crate::io::{Io, PadKind};
use crate::observer::{Clock, DmaEvent, InstrCost, MdObserver, PcSet, SystemView, VdpPort};
use crate::render::{Image, Renderer};
use crate::rom::{Region, Rom};
use crate::timing::{DmaBandwidth, Refresh, M68K_DIVIDER, MCLK_PER_LINE, Z80_AREA_WAIT_CYCLES};
use crate::vdp::{ControlAction, DmaKind, DmaTarget, Vdp};
use crate::z80::{ReferenceRules, Z80Sys};

/// Default CPU start within frame 0 (see the module documentation).
pub const REFERENCE_CPU_START_MCLK: u64 = 784_462;

/// Number of recent instruction addresses kept for error reports.
pub const RECENT_PCS: usize = 32;

/// Options for [`System::new`].
#[derive(Clone, Debug)]
pub struct Config {
    /// Override the region the ROM header asks for.
    pub region: Option<Region>,
    /// Pads in ports 1 and 2. Default: 3-button pads, as in the reference
    /// runs (SGDK's read6Btn takes its 3-button path there: 487.5 cycles
    /// per call in vnmd.funcs.csv; a 6-button pad adds ~75).
    pub pads: [PadKind; 2],
    /// Stop with [`RunError::Exception`] on bus/address errors, illegal
    /// instructions, line A/F and privilege violations.
    pub stop_on_error_exception: bool,
    /// mclk into frame 0 at which the 68000 starts.
    pub cpu_start_mclk: u64,
    /// Stop with [`RunError::Runaway`] after this many instruction fetches
    /// from unmapped space within one frame.
    pub runaway_fetch_limit: u64,
    /// Timing rules of the reference emulator to apply instead of ours
    /// (default: none; a comparison aid, see [`ReferenceRules`]).
    pub reference_rules: ReferenceRules,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            region: None,
            pads: [PadKind::ThreeButton, PadKind::ThreeButton],
            stop_on_error_exception: true,
            cpu_start_mclk: REFERENCE_CPU_START_MCLK,
            runaway_fetch_limit: 1000,
            reference_rules: ReferenceRules::default(),
        }
    }
}

/// The last instruction addresses before a stop, oldest first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecentPcs(pub Vec<u32>);

impl std::fmt::Display for RecentPcs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, pc) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{pc:06X}")?;
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("the 68000 halted (double bus fault) in frame {frame} at PC {pc:06X}; last instructions: {recent}")]
    Halted {
        frame: u64,
        pc: u32,
        recent: RecentPcs,
    },
    #[error("the 68000 took a {kind:?} exception (vector {vector}) in frame {frame} at PC {pc:06X}; last instructions: {recent}")]
    Exception {
        frame: u64,
        kind: ExceptionKind,
        vector: u8,
        pc: u32,
        recent: RecentPcs,
    },
    #[error("the 68000 is executing unmapped memory ({fetches} instruction fetches from unmapped addresses) in frame {frame}, PC {pc:06X}; last instructions: {recent}")]
    Runaway {
        frame: u64,
        fetches: u64,
        pc: u32,
        recent: RecentPcs,
    },
}

/// What one frame did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameInfo {
    pub frame: u64,
    pub start_mclk: u64,
    pub end_mclk: u64,
    pub lines: u16,
    pub active_lines: u16,
    pub pal: bool,
}

/// Accesses that hit nothing: counted, never fatal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BusCounters {
    pub unmapped_reads: u64,
    pub unmapped_writes: u64,
    /// Instruction fetches from unmapped space.
    pub unmapped_fetches: u64,
    /// 68000 accesses to Z80 RAM while the Z80 had its bus.
    pub z80_ram_without_busreq: u64,
    pub vdp_reads: u64,
    pub vdp_writes: u64,
    pub tmss_writes: u64,
}

/// Everything the 68000's bus reaches.
pub(crate) struct Hw {
    pub cart: Cart,
    pub wram: Box<[u8; 0x10000]>,
    pub vdp: Vdp,
    pub io: Io,
    pub z80: Z80Sys,
    refresh: Refresh,
    /// mclk of CPU cycle 0.
    base: u64,
    ipl: u8,
    /// Last word fetched (open bus value).
    open_bus: u16,
    pub counters: BusCounters,
    fetches_this_frame: u64,
    // ---- line events of the frame in progress (processed at instruction
    // boundaries, so an interrupt raised at its exact time is seen by the
    // 68000 at the first boundary after it) ----
    frame_origin: u64,
    /// The last slow-path boundary (CPU cycle) and the cycles it charged.
    boundary_extra: (u64, u64),
    geom: crate::timing::FrameGeometry,
    /// Index (0 = first VBlank line) of the next line to start.
    next_line: u16,
    /// mclk of VINT in this frame (`u64::MAX` once raised).
    vint_at: u64,
    /// mclk of the earliest pending event.
    next_event: u64,
    /// CPU cycle at or after which an instruction boundary has work to do
    /// (a line event due, a refresh penalty due, or a Z80 stall to charge):
    /// the boundary's fast path is this one compare. Kept up to date by
    /// [`Hw::update_check`].
    check_at: u64,
    renderer: Renderer,
    /// Second renderer for the odd rows of an interlace mode 2 picture
    /// (each field keeps its own previous-line sprite state).
    renderer_odd: Renderer,
    /// Frame buffer being drawn for a requested screenshot.
    shot: Option<Image>,
}

impl Hw {
    fn update_next_event(&mut self) {
        let line = if self.next_line < self.geom.lines {
            self.frame_origin + self.next_line as u64 * MCLK_PER_LINE
        } else {
            u64::MAX
        };
        self.next_event = line.min(self.vint_at);
        self.update_check();
    }

    /// The first CPU cycle at which the next line event is due:
    /// mclk(now) >= next_event  <=>  now >= ceil((next_event - base) / 7).
    #[inline]
    fn next_event_cycle(&self) -> u64 {
        self.next_event
            .saturating_sub(self.base)
            .div_ceil(M68K_DIVIDER)
    }

    /// Recompute [`Hw::check_at`] from the next event (mclk), the refresh
    /// due time and the Z80's pending stall.
    #[inline]
    fn update_check(&mut self) {
        let event = self.next_event_cycle();
        self.check_at = if self.z80.m68k_stall != 0 {
            0
        } else {
            event.min(self.refresh.due)
        };
    }

    /// Process every line event due at or before `now` (mclk), in order.
    fn process_events(&mut self, now: u64) {
        while self.next_event <= now {
            let t = self.next_event;
            if self.vint_at == t {
                // md-timing.md: VINT and the Z80 IRQ at 788 (H40) / 770 (H32)
                // mclk into the first VBlank line.
                self.catch_up_z80(t);
                self.vdp.raise_vint();
                self.ipl = self.vdp.ipl();
                self.z80.irq = true;
                self.vint_at = u64::MAX;
            } else {
                let idx = self.next_line;
                self.catch_up_z80(t);
                if idx == 1 {
                    // md-timing.md: the Z80 IRQ "is cleared at the end of the
                    // line".
                    self.z80.irq = false;
                }
                let line = (self.geom.active + idx) % self.geom.lines;
                self.vdp.line_start(line);
                self.ipl = self.vdp.ipl();
                if idx == 0 {
                    // VINT offset by the dot clock in force now.
                    self.vint_at = t + if self.vdp.h40() {
                        crate::timing::VINT_MCLK_H40
                    } else {
                        crate::timing::VINT_MCLK_H32
                    };
                }
                if line < self.geom.active {
                    self.draw_line(line);
                }
                self.next_line += 1;
            }
            self.update_next_event();
        }
    }

    #[inline(always)]
    fn mclk(&self, now: u64) -> u64 {
        self.base + now * M68K_DIVIDER
    }

    /// Side-effect-free word read for DMA sources.
    fn peek_word(&self, addr: u32) -> u16 {
        let a = addr & 0xFF_FFFF;
        if a < 0x40_0000 {
            self.cart.read_word(a & !1).unwrap_or(0xFFFF)
        } else if a >= 0xE0_0000 {
            let i = (a & 0xFFFE) as usize;
            u16::from_be_bytes([self.wram[i], self.wram[i + 1]])
        } else {
            self.open_bus
        }
    }

    fn draw_line(&mut self, line: u16) {
        let Some(img) = self.shot.as_mut() else {
            return;
        };
        let snap = self.vdp.snapshot();
        if self.vdp.interlace() == 3 {
            // Interlace mode 2: a picture has both fields' rows (2l and
            // 2l + 1), drawn here from the same VDP state, as a static
            // double-resolution screen shows them.
            let (even, odd) = (2 * line as u32, 2 * line as u32 + 1);
            if odd >= img.height {
                return;
            }
            self.renderer
                .render_line(&snap, even as u16, img.row_mut(even));
            self.renderer_odd
                .render_line(&snap, odd as u16, img.row_mut(odd));
            return;
        }
        if (line as u32) >= img.height {
            return;
        }
        let row = img.row_mut(line as u32);
        self.renderer.render_line(&snap, line, row);
    }

    fn catch_up_z80(&mut self, mclk: u64) {
        self.z80.run_until(mclk, &self.cart, &mut self.wram);
        if self.z80.m68k_stall != 0 {
            // Charged at the next instruction boundary.
            self.check_at = 0;
        }
    }
}

/// Per-instruction cost parts, shared between the bus and the observer
/// adapter (both are borrowed by the CPU at once; `Cell`s keep it safe).
#[derive(Default)]
struct Stall {
    freeze: Cell<u32>,
    fifo: Cell<u32>,
    refresh: Cell<u32>,
    z80_stall: Cell<u32>,
    error: Cell<Option<(ExceptionKind, u8)>>,
    halted: Cell<bool>,
    /// Instructions executed since the flag was last cleared.
    instructions: Cell<u64>,
    /// Some of `freeze`, `fifo`, `refresh`, `z80_stall` may be non-zero.
    pending: Cell<bool>,
}

impl Stall {
    /// Add `v` mclk to one of the cost parts.
    #[inline(always)]
    fn add(&self, part: &Cell<u32>, v: u32) {
        part.set(part.get() + v);
        self.pending.set(true);
    }
}

struct Bus68k<'a, O: MdObserver> {
    hw: &'a mut Hw,
    obs: &'a RefCell<O>,
    stall: &'a Stall,
    clock: &'a Clock,
    frame: u64,
}

impl<O: MdObserver> Bus68k<'_, O> {
    #[inline(always)]
    fn is_vdp(addr: u32) -> bool {
        // VDP ports at 0xC00000-0xC0001F, mirrored where A18-A16 and A7-A5
        // are 0 within 0xC00000-0xDFFFFF (genvdp.txt); other addresses lock
        // the machine up on hardware: we count them.
        addr & 0xE7_00E0 == 0xC0_0000
    }

    /// The VDP status port or one of its mirrors.
    fn is_vdp_status(addr: u32) -> bool {
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
        self.hw.open_bus
    }

    fn io_read_byte(&mut self, addr: u32, now: u64) -> u8 {
        let m = self.hw.mclk(now);
        match addr {
            0xA1_0000..=0xA1_001F => self.hw.io.read((addr >> 1) & 0xF, m),
            0xA1_1100 => {
                self.hw.catch_up_z80(m);
                (self.hw.open_bus >> 8) as u8 & 0xFE | self.hw.z80.busack_bit()
            }
            0xA1_1101 => self.hw.open_bus as u8,
            _ => {
                self.hw.counters.unmapped_reads += 1;
                (self.hw.open_bus >> if addr & 1 == 0 { 8 } else { 0 }) as u8
            }
        }
    }

    /// mclk at which the current instruction started: its boundary plus
    /// the cycles charged there ([`ReferenceRules::busreq_at_insn_start`]).
    fn insn_start_mclk(&self) -> u64 {
        let at = self.clock.cpu_cycles.get();
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
                let (v, w) = self.hw.vdp.read_data(m);
                let cycles = w.div_ceil(M68K_DIVIDER) as u32;
                self.stall
                    .add(&self.stall.fifo, cycles * M68K_DIVIDER as u32);
                (v, cycles)
            }
            0x04 => (self.hw.vdp.read_status(m, self.hw.open_bus), 0),
            0x08 | 0x0C => (self.hw.vdp.read_hv(m), 0),
            _ => {
                self.hw.counters.unmapped_reads += 1;
                (self.hw.open_bus, 0)
            }
        }
    }

    fn vdp_write_word(&mut self, addr: u32, v: u16, now: u64) -> u32 {
        let m = self.hw.mclk(now);
        self.hw.counters.vdp_writes += 1;
        match addr & 0x1C {
            0x00 => {
                self.obs
                    .borrow_mut()
                    .vdp_write(VdpPort::Data, v, self.clock);
                let r = self.hw.vdp.write_data(v, m);
                if let Some((span, bytes, target)) = r.fill {
                    self.obs.borrow_mut().dma(&DmaEvent {
                        kind: DmaKind::Fill(target),
                        bytes,
                        source: 0,
                        span,
                        frame: self.frame,
                    });
                }
                let cycles = r.wait.div_ceil(M68K_DIVIDER) as u32;
                self.stall
                    .add(&self.stall.fifo, cycles * M68K_DIVIDER as u32);
                cycles
            }
            0x04 => {
                self.obs
                    .borrow_mut()
                    .vdp_write(VdpPort::Control, v, self.clock);
                let action = self.hw.vdp.write_control(v, m);
                let cycles = match action {
                    ControlAction::None => 0,
                    ControlAction::DmaFromCpu {
                        source,
                        words,
                        target,
                    } => self.cpu_dma(source, words, target, m),
                    ControlAction::CopyStarted(span, bytes) => {
                        self.obs.borrow_mut().dma(&DmaEvent {
                            kind: DmaKind::Copy,
                            bytes,
                            source: 0,
                            span,
                            frame: self.frame,
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

    /// The boundary's slow path: line events, DRAM refresh, Z80 stall.
    #[inline(never)]
    fn boundary_work(&mut self, now: u64) -> Boundary {
        let m = self.hw.mclk(now);
        if m >= self.hw.next_event {
            self.hw.process_events(m);
        }
        let mut extra = self.hw.refresh.at_boundary(now);
        if extra != 0 {
            self.stall
                .add(&self.stall.refresh, extra * M68K_DIVIDER as u32);
        }
        if self.hw.z80.m68k_stall != 0 {
            // The Z80 took the 68000's bus while catching up (its stall is
            // always a multiple of 7 mclk).
            let c = self.hw.z80.m68k_stall.div_ceil(M68K_DIVIDER) as u32;
            self.hw.z80.m68k_stall = 0;
            self.stall
                .add(&self.stall.z80_stall, c * M68K_DIVIDER as u32);
            extra += c;
        }
        self.hw.update_check();
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
        let mut src = source;
        for _ in 0..words {
            let w = self.hw.peek_word(src);
            self.hw.vdp.store(w);
            // The source address wraps within its 128 KB window
            // (genvdp.txt: register 23's bits do not increment).
            src = (src & 0xFE_0000) | (src.wrapping_add(2) & 0x1_FFFF);
        }
        self.hw.vdp.finish_cpu_dma(src);
        let kind = match target {
            DmaTarget::Vram => DmaBandwidth::ToVram,
            _ => DmaBandwidth::ToCramVsram,
        };
        let span = self.hw.vdp.schedule_dma(m, words as u64 * 2, kind);
        // The Z80 runs up to the DMA's start with the 68000 bus free, and
        // then meets the DMA's window if it reaches for the 68000 bus.
        self.hw.catch_up_z80(m);
        self.hw.z80.set_m68k_bus_busy(span.start, span.end);
        let cycles = (span.end - m).div_ceil(M68K_DIVIDER) as u32;
        self.stall
            .add(&self.stall.freeze, cycles * M68K_DIVIDER as u32);
        self.obs.borrow_mut().dma(&DmaEvent {
            kind: DmaKind::FromCpu(target),
            bytes: words * 2,
            source,
            span,
            frame: self.frame,
        });
        cycles
    }
}

impl<O: MdObserver> Bus for Bus68k<'_, O> {
    #[inline(always)]
    fn read_byte(&mut self, addr: u32, fc: FunctionCode, now: u64) -> Read<u8> {
        let addr = addr & 0xFF_FFFF;
        match addr >> 16 {
            0x00..=0x3F => match self.hw.cart.read_byte(addr) {
                Some(v) => Read::ok(v),
                None => {
                    let ob = self.unmapped_read(fc);
                    Read::ok((ob >> if addr & 1 == 0 { 8 } else { 0 }) as u8)
                }
            },
            0xE0..=0xFF => Read::ok(self.hw.wram[(addr & 0xFFFF) as usize]),
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

    #[inline(always)]
    fn read_word(&mut self, addr: u32, fc: FunctionCode, now: u64) -> Read<u16> {
        let addr = addr & 0xFF_FFFE;
        match addr >> 16 {
            0x00..=0x3F => match self.hw.cart.read_word(addr) {
                Some(v) => {
                    self.hw.open_bus = v;
                    Read::ok(v)
                }
                None => Read::ok(self.unmapped_read(fc)),
            },
            0xE0..=0xFF => {
                let i = (addr & 0xFFFE) as usize;
                let v = u16::from_be_bytes([self.hw.wram[i], self.hw.wram[i + 1]]);
                self.hw.open_bus = v;
                Read::ok(v)
            }
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

    #[inline(always)]
    fn write_byte(&mut self, addr: u32, data: u8, _fc: FunctionCode, now: u64) -> Write {
        let addr = addr & 0xFF_FFFF;
        match addr >> 16 {
            0xE0..=0xFF => {
                self.hw.wram[(addr & 0xFFFF) as usize] = data;
                Write::OK
            }
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

    #[inline(always)]
    fn write_word(&mut self, addr: u32, data: u16, _fc: FunctionCode, now: u64) -> Write {
        let addr = addr & 0xFF_FFFE;
        match addr >> 16 {
            0xE0..=0xFF => {
                let i = (addr & 0xFFFE) as usize;
                let [hi, lo] = data.to_be_bytes();
                self.hw.wram[i] = hi;
                self.hw.wram[i + 1] = lo;
                Write::OK
            }
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

    #[inline(always)]
    fn boundary(&mut self, now: u64) -> Boundary {
        self.clock.cpu_cycles.set(now);
        if now >= self.hw.check_at {
            return self.boundary_work(now);
        }
        Boundary {
            extra: 0,
            ipl: self.hw.ipl,
        }
    }

    fn next_event(&mut self, _now: u64) -> u64 {
        // STOP: wake at the next line event (the only times the interrupt
        // level can change without the CPU).
        self.hw.next_event_cycle()
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
        let w = self.hw.vdp.read_status(m, bus_word);
        Some(match (size, addr & 1) {
            (2, _) => w as u32,
            (_, 0) => (w >> 8) as u32,
            _ => w as u32 & 0xFF,
        })
    }

    fn poll_skip(&mut self, p: &PollPass, now: u64, limit: u64) -> PollSkip {
        let mut s = PollSkip::none(now);
        // Only VBlank-flag polls of the status port (SGDK's VDP_waitVBlank):
        // bit 3 of the word, or of the odd (low) byte.
        let a = p.addr;
        if p.bit != 3
            || !Self::is_vdp_status(a)
            || (p.size == 1 && a & 1 == 0)
            || self.hw.z80.m68k_stall != 0
        {
            return s;
        }
        // The reads and the flag stay as they are until the next line event
        // (every line start and VINT are events), and boundaries before it
        // only charge refresh: both checks use this one limit (CPU cycles;
        // see `update_check`).
        let event = self.hw.next_event_cycle();
        if event <= now + p.read_offset
            || self
                .hw
                .vdp
                .status_read_repeats(self.hw.mclk(now + p.read_offset))
                != Some(p.continue_if)
        {
            return s;
        }
        let mut refresh = self.hw.refresh;
        let mut last_boundary = now;
        let pass_len: u64 = p.cycles.iter().sum();
        let stop = event.min(limit);
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
            self.clock.cpu_cycles.set(last_boundary);
        }
        s
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
        self.stall.halted.set(true);
    }
}

struct ObsAdapter<'a, O: MdObserver> {
    obs: &'a RefCell<O>,
    stall: &'a Stall,
    clock: &'a Clock,
    recent: &'a mut [u32; RECENT_PCS],
    recent_pos: &'a mut usize,
    stop_on_error: bool,
}

impl<O: MdObserver> Observer for ObsAdapter<'_, O> {
    #[inline(always)]
    fn instruction(&mut self, pc: u32, cycles: u32) {
        self.recent[*self.recent_pos % RECENT_PCS] = pc;
        *self.recent_pos = self.recent_pos.wrapping_add(1);
        self.stall
            .instructions
            .set(self.stall.instructions.get() + 1);
        let total = cycles * M68K_DIVIDER as u32;
        let cost = if self.stall.pending.get() {
            self.stall.pending.set(false);
            InstrCost {
                total,
                dma_freeze: self.stall.freeze.take(),
                fifo_wait: self.stall.fifo.take(),
                refresh: self.stall.refresh.take(),
                z80_stall: self.stall.z80_stall.take(),
            }
        } else {
            InstrCost {
                total,
                ..InstrCost::default()
            }
        };
        self.obs.borrow_mut().instruction(pc, cost, self.clock);
    }

    #[inline(always)]
    fn exception(&mut self, kind: ExceptionKind, vector: u8, handler: u32, cycles: u32) {
        if self.stop_on_error
            && matches!(
                kind,
                ExceptionKind::BusError
                    | ExceptionKind::AddressError
                    | ExceptionKind::IllegalInstruction
                    | ExceptionKind::LineA
                    | ExceptionKind::LineF
                    | ExceptionKind::PrivilegeViolation
            )
            && self.stall.error.get().is_none()
        {
            self.stall.error.set(Some((kind, vector)));
        }
        self.obs.borrow_mut().exception(
            kind,
            vector,
            handler,
            cycles * M68K_DIVIDER as u32,
            self.clock,
        );
    }

    #[inline(always)]
    fn call(&mut self, from_pc: u32, target: u32, return_addr: u32, sp: u32) {
        self.obs.borrow_mut().call(from_pc, target, return_addr, sp);
    }

    #[inline(always)]
    fn accepts_poll_passes(&mut self, pcs: &[u32; 3]) -> bool {
        self.obs.borrow_mut().accepts_poll_passes(pcs)
    }

    fn poll_passes(&mut self, pcs: &[u32; 3], cycles: &[u64; 3], extra: &[u64; 3], passes: u64) {
        // The instructions the passes would have reported, as `instruction`
        // keeps them: the last RECENT_PCS PCs and the count.
        let n = 3 * passes;
        let kept = n.min(RECENT_PCS as u64) as usize;
        let skipped = (n as usize).wrapping_sub(kept);
        let at = self.recent_pos.wrapping_add(skipped);
        // Entry k of the kept run is pcs[(skipped + k) % 3]: lay the
        // 3-periodic run out once, then copy it into the ring (at most two
        // pieces, as the ring wraps).
        let phase = skipped % 3;
        let p = [pcs[phase], pcs[(phase + 1) % 3], pcs[(phase + 2) % 3]];
        let mut run = [0u32; RECENT_PCS];
        for c in run.chunks_mut(3) {
            c.copy_from_slice(&p[..c.len()]);
        }
        let start = at % RECENT_PCS;
        let first = kept.min(RECENT_PCS - start);
        self.recent[start..start + first].copy_from_slice(&run[..first]);
        self.recent[..kept - first].copy_from_slice(&run[first..kept]);
        *self.recent_pos = self.recent_pos.wrapping_add(n as usize);
        self.stall
            .instructions
            .set(self.stall.instructions.get() + n);
        // The bus skips only passes whose boundary extras are refresh
        // penalties (`Bus68k::poll_skip`).
        let d = M68K_DIVIDER;
        self.obs.borrow_mut().poll_passes(
            pcs,
            &cycles.map(|c| c * d),
            &extra.map(|c| c * d),
            passes,
            self.clock,
        );
    }

    #[inline(always)]
    fn ret(&mut self, from_pc: u32, target: u32, sp: u32) {
        self.obs.borrow_mut().ret(from_pc, target, sp);
    }
}

impl Region {
    /// Master clocks per second in this region (md-timing.md).
    pub fn mclk_hz(self) -> u64 {
        if self.is_pal() {
            crate::timing::MCLK_HZ_PAL
        } else {
            crate::timing::MCLK_HZ_NTSC
        }
    }
}

/// A Mega Drive.
pub struct System {
    cpu: Cpu,
    hw: Hw,
    clock: Clock,
    stall: Stall,
    config: Config,
    frame: u64,
    next_frame_origin: u64,
    shot_requested: bool,
    last_shot: Option<(u64, Image)>,
    breakpoints: Option<PcSet>,
    recent: [u32; RECENT_PCS],
    recent_pos: usize,
    region: Region,
    halted: bool,
}

impl System {
    pub fn new(rom: &Rom, config: Config) -> Self {
        let region = config.region.unwrap_or_else(|| rom.region());
        let cart = Cart::new(rom);
        let mut io = Io::new(region.is_overseas(), region.is_pal());
        io.ports[0].kind = config.pads[0];
        io.ports[1].kind = config.pads[1];
        let base = config.cpu_start_mclk;
        let mut hw = Hw {
            cart,
            wram: Box::new([0; 0x10000]),
            vdp: Vdp::new(region.is_pal()),
            io,
            z80: Z80Sys::new(),
            refresh: Refresh::default(),
            base,
            ipl: 0,
            open_bus: 0,
            counters: BusCounters::default(),
            fetches_this_frame: 0,
            frame_origin: 0,
            boundary_extra: (u64::MAX, 0),
            geom: crate::timing::FrameGeometry::new(region.is_pal(), false, false),
            next_line: u16::MAX,
            vint_at: u64::MAX,
            next_event: u64::MAX,
            check_at: 0,
            renderer: Renderer::new(),
            renderer_odd: Renderer::new(),
            shot: None,
        };
        hw.z80.clock = base;
        hw.z80.rules = config.reference_rules;
        let mut sys = System {
            cpu: Cpu::new(),
            hw,
            clock: Clock::default(),
            stall: Stall::default(),
            config,
            frame: 0,
            next_frame_origin: 0,
            shot_requested: false,
            last_shot: None,
            breakpoints: None,
            recent: [0; RECENT_PCS],
            recent_pos: 0,
            region,
            halted: false,
        };
        sys.clock.base.set(base);
        // Reset: the CPU reads SSP and PC from the vectors.
        let obs = RefCell::new(());
        let mut bus = Bus68k {
            hw: &mut sys.hw,
            obs: &obs,
            stall: &sys.stall,
            clock: &sys.clock,
            frame: 0,
        };
        sys.cpu.reset(&mut bus);
        sys
    }

    pub fn region(&self) -> Region {
        self.region
    }

    /// Frames run so far (the number of the next frame).
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// Master clock now (the 68000's time).
    pub fn mclk(&self) -> u64 {
        self.hw.mclk(self.cpu.cycles())
    }

    /// Master clocks per second for this region.
    pub fn mclk_hz(&self) -> u64 {
        self.region.mclk_hz()
    }

    pub fn set_pad(&mut self, port: usize, buttons: Buttons) {
        self.hw.io.ports[port & 1].buttons = buttons;
    }

    /// Call [`MdObserver::at_pc`] before the instructions at these
    /// addresses (`None`: no breakpoints, fastest).
    pub fn set_breakpoints(&mut self, set: Option<PcSet>) {
        self.breakpoints = set.filter(|s| !s.is_empty());
    }

    /// Ask for a picture of the next frame run; get it with
    /// [`take_screenshot`](Self::take_screenshot) after that frame.
    pub fn request_screenshot(&mut self) {
        self.shot_requested = true;
    }

    /// The picture of the last frame for which one was requested.
    pub fn take_screenshot(&mut self) -> Option<(u64, Image)> {
        self.last_shot.take()
    }

    pub fn registers(&self) -> Registers {
        self.cpu.registers()
    }

    pub fn wram(&self) -> &[u8; 0x10000] {
        &self.hw.wram
    }

    pub fn wram_mut(&mut self) -> &mut [u8; 0x10000] {
        &mut self.hw.wram
    }

    pub fn vdp(&self) -> &Vdp {
        &self.hw.vdp
    }

    pub fn vdp_mut(&mut self) -> &mut Vdp {
        &mut self.hw.vdp
    }

    pub fn z80(&self) -> &Z80Sys {
        &self.hw.z80
    }

    pub fn counters(&self) -> BusCounters {
        self.hw.counters
    }

    /// Total 68000 instructions executed.
    pub fn instructions(&self) -> u64 {
        self.stall.instructions.get()
    }

    /// The last instruction addresses, oldest first.
    pub fn recent_pcs(&self) -> RecentPcs {
        let n = self.recent_pos.min(RECENT_PCS);
        let start = self.recent_pos - n;
        RecentPcs(
            (start..self.recent_pos)
                .map(|i| self.recent[i % RECENT_PCS])
                .collect(),
        )
    }

    /// A read-only view for tests and tools.
    pub fn view(&self) -> SystemView<'_> {
        SystemView {
            regs: self.cpu.registers(),
            wram: &self.hw.wram,
            vdp: &self.hw.vdp,
            cart: &self.hw.cart,
            clock: &self.clock,
        }
    }

    /// The battery-backed SRAM the ROM header declares (empty if none).
    /// Files are the caller's business (the CLI's `run --sram`).
    pub fn sram(&self) -> &[u8] {
        &self.hw.cart.sram
    }

    /// Whether the game wrote SRAM since the start or the last
    /// [`System::mark_sram_saved`].
    pub fn sram_dirty(&self) -> bool {
        self.hw.cart.sram_dirty
    }

    /// The caller saved [`System::sram`]: clear the dirty flag.
    pub fn mark_sram_saved(&mut self) {
        self.hw.cart.sram_dirty = false;
    }

    /// Load saved SRAM contents (before running); bytes beyond the SRAM's
    /// size are ignored, a shorter image leaves the rest as it was.
    pub fn load_sram(&mut self, data: &[u8]) {
        let n = data.len().min(self.hw.cart.sram.len());
        self.hw.cart.sram[..n].copy_from_slice(&data[..n]);
    }

    fn pc_now(&self) -> u32 {
        self.cpu.registers().pc.wrapping_sub(4) & 0xFF_FFFF
    }

    /// Run the 68000 until mclk `target`.
    fn run_cpu<O: MdObserver>(&mut self, target: u64, obs: &RefCell<O>) -> Result<(), RunError> {
        if self.halted {
            return Err(RunError::Halted {
                frame: self.frame,
                pc: self.pc_now(),
                recent: self.recent_pcs(),
            });
        }
        if target <= self.hw.base {
            return Ok(());
        }
        let target_cycles = (target - self.hw.base).div_ceil(M68K_DIVIDER);
        let mut bus = Bus68k {
            hw: &mut self.hw,
            obs,
            stall: &self.stall,
            clock: &self.clock,
            frame: self.frame,
        };
        let mut adapter = ObsAdapter {
            obs,
            stall: &self.stall,
            clock: &self.clock,
            recent: &mut self.recent,
            recent_pos: &mut self.recent_pos,
            stop_on_error: self.config.stop_on_error_exception,
        };
        let stop = match &self.breakpoints {
            None => self.cpu.run_until(&mut bus, &mut adapter, target_cycles),
            Some(set) => {
                let mut reported: Option<u32> = None;
                let mut stop = Stop::Target;
                while self.cpu.cycles() < target_cycles {
                    let regs = self.cpu.registers();
                    let pc = regs.pc.wrapping_sub(4) & 0xFF_FFFF;
                    if set.contains(pc) && reported != Some(pc) {
                        self.clock.cpu_cycles.set(self.cpu.cycles());
                        let view = SystemView {
                            regs,
                            wram: &bus.hw.wram,
                            vdp: &bus.hw.vdp,
                            cart: &bus.hw.cart,
                            clock: &self.clock,
                        };
                        obs.borrow_mut().at_pc(pc, &view);
                        reported = Some(pc);
                    }
                    let before = self.stall.instructions.get();
                    if self.cpu.step(&mut bus, &mut adapter) == 0 {
                        stop = Stop::Halted;
                        break;
                    }
                    // Forget the report once an instruction ran (an
                    // interrupt taken first returns to the same PC).
                    if self.stall.instructions.get() != before {
                        reported = None;
                    }
                    if self.stall.error.get().is_some() || self.stall.halted.get() {
                        break;
                    }
                }
                stop
            }
        };
        if stop == Stop::Halted || self.stall.halted.get() {
            self.halted = true;
            return Err(RunError::Halted {
                frame: self.frame,
                pc: self.pc_now(),
                recent: self.recent_pcs(),
            });
        }
        if let Some((kind, vector)) = self.stall.error.take() {
            return Err(RunError::Exception {
                frame: self.frame,
                kind,
                vector,
                pc: self.pc_now(),
                recent: self.recent_pcs(),
            });
        }
        if self.hw.fetches_this_frame > self.config.runaway_fetch_limit {
            return Err(RunError::Runaway {
                frame: self.frame,
                fetches: self.hw.fetches_this_frame,
                pc: self.pc_now(),
                recent: self.recent_pcs(),
            });
        }
        Ok(())
    }

    /// Run one frame (from the first VBlank line to the end of the active
    /// display; see the module documentation), reporting to `obs` through
    /// dynamic dispatch.
    ///
    /// This entry point and [`run_frame_unobserved`](Self::run_frame_unobserved)
    /// are compiled once, in this crate: tests, examples and tools of every
    /// other crate call them without compiling another 68000 core.
    /// [`run_frame_mono`](Self::run_frame_mono) is the monomorphised path
    /// for the production profiler only.
    pub fn run_frame(&mut self, obs: &mut dyn MdObserver) -> Result<FrameInfo, RunError> {
        self.run_frame_mono(obs)
    }

    /// [`run_frame`](Self::run_frame) with no observer: the fastest run
    /// (the no-op observer compiles to nothing and takes every skippable
    /// polling pass), compiled once in this crate.
    pub fn run_frame_unobserved(&mut self) -> Result<FrameInfo, RunError> {
        self.run_frame_mono(&mut ())
    }

    /// [`run_frame`](Self::run_frame) monomorphised for `O`: the observer's
    /// methods are inlined into the emulation loop, with no dynamic
    /// dispatch per instruction. Every distinct `O` compiles a whole 68000
    /// core (and the console's bus) into the calling crate, minutes of
    /// release build each: it is meant for the production profiler
    /// (`retroprof-mdprof`'s `Profiler`) alone. Everything else takes
    /// [`run_frame`](Self::run_frame) or
    /// [`run_frame_unobserved`](Self::run_frame_unobserved).
    pub fn run_frame_mono<O: MdObserver + ?Sized>(
        &mut self,
        obs: &mut O,
    ) -> Result<FrameInfo, RunError> {
        let obs = RefCell::new(obs);
        let geom = self.hw.vdp.current_geometry();
        let origin = self.next_frame_origin;
        let frame = self.frame;
        self.hw.vdp.begin_frame(origin, geom, frame);
        self.hw.fetches_this_frame = 0;
        self.clock.frame_origin.set(origin);
        self.clock.first_line.set(geom.active);
        self.clock.lines.set(geom.lines);
        self.clock.active.set(geom.active);
        self.clock.frame.set(frame);
        self.clock.cpu_cycles.set(self.cpu.cycles());
        {
            let view = self.view();
            obs.borrow_mut().frame_start(frame, &view);
        }
        let drawing = std::mem::take(&mut self.shot_requested);
        if drawing {
            let regs = &self.hw.vdp.regs;
            let w = Renderer::active_width(regs);
            // Interlace mode 2 pictures have twice the rows (both fields).
            let h = if self.hw.vdp.interlace() == 3 {
                2 * geom.active as u32
            } else {
                geom.active as u32
            };
            self.hw.shot = Some(Image::new(w, h));
            self.hw.renderer.reset_line_state();
            self.hw.renderer_odd.reset_line_state();
        }
        // Line events of this frame: line starts (HINT counter, drawing),
        // VINT, Z80 IRQ and catch-up; processed at the 68000's instruction
        // boundaries as their times pass.
        self.hw.frame_origin = origin;
        self.hw.z80.frame_start(origin);
        self.hw.geom = geom;
        self.hw.next_line = 0;
        self.hw.vint_at = u64::MAX;
        self.hw.update_next_event();
        self.hw.process_events(origin.max(self.mclk()));
        let frame_end = origin + geom.mclk_per_frame();
        self.run_cpu(frame_end, &obs)?;
        self.hw.process_events(frame_end);
        self.hw.catch_up_z80(frame_end);
        if drawing {
            if let Some(img) = self.hw.shot.take() {
                self.last_shot = Some((frame, img));
            }
        }
        self.next_frame_origin = origin + geom.mclk_per_frame();
        self.frame += 1;
        Ok(FrameInfo {
            frame,
            start_mclk: origin,
            end_mclk: self.next_frame_origin,
            lines: geom.lines,
            active_lines: geom.active,
            pal: geom.pal,
        })
    }
}

#[cfg(test)]
mod tests;
