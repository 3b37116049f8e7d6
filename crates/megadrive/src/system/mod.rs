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

mod bus;
mod observe;
mod schedule;

use retroprof_m68k::{Cpu, ExceptionKind, Registers};

use self::bus::{Bus68k, Hw};
use self::observe::Seam;
use crate::cart::Cart;
use crate::input::Buttons;
use crate::io::{Io, PadKind};
use crate::observer::{Clock, MdObserver, PcSet, SystemView};
use crate::render::{Image, Renderer};
use crate::rom::{Region, Rom};
use crate::timing::{FrameGeometry, Refresh};
use crate::vdp::Vdp;
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

impl Region {
    /// Master clocks per second in this region (md-timing.md).
    pub fn mclk_hz(self) -> u64 {
        crate::timing::mclk_hz(self.is_pal())
    }
}

/// A Mega Drive.
pub struct System {
    cpu: Cpu,
    hw: Hw,
    config: Config,
    shot_requested: bool,
    last_shot: Option<(u64, Image)>,
    breakpoints: Option<PcSet>,
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
            clock: Clock {
                base,
                ..Clock::default()
            },
            seam: Seam {
                stop_on_error: config.stop_on_error_exception,
                ..Seam::default()
            },
            ipl: 0,
            open_bus: 0,
            counters: BusCounters::default(),
            fetches_this_frame: 0,
            boundary_extra: (u64::MAX, 0),
            next_line: u16::MAX,
            vint_at: u64::MAX,
            next_event: u64::MAX,
            next_event_at: crate::timing::mclk_to_m68k_ceil(u64::MAX - base),
            check_at: 0,
            poll_lines: true,
            poll_lines_crossed: 0,
            quick_refresh: true,
            renderer: Renderer::new(),
            renderer_odd: Renderer::new(),
            shot: None,
        };
        hw.z80.clock = base;
        hw.z80.rules = config.reference_rules;
        hw.clock.geom = FrameGeometry::new(region.is_pal(), false, false);
        let mut sys = System {
            cpu: Cpu::new(),
            hw,
            config,
            shot_requested: false,
            last_shot: None,
            breakpoints: None,
            region,
            halted: false,
        };
        // Reset: the CPU reads SSP and PC from the vectors.
        let mut no_observer = ();
        let mut bus = Bus68k::new(&mut sys.hw, &mut no_observer);
        sys.cpu.reset(&mut bus);
        drop(bus);
        sys
    }

    pub fn region(&self) -> Region {
        self.region
    }

    /// Frames run so far (the number of the next frame).
    pub fn frame(&self) -> u64 {
        self.hw.clock.frame
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

    /// The VDP status register as a read now would see it, without side
    /// effects (for identity checks between frames: on the clock of the
    /// frame last run).
    pub fn peek_vdp_status(&self) -> u16 {
        self.hw
            .vdp
            .peek_status(&self.ended_frame_clock(), self.mclk())
    }

    /// Between frames the clock already holds the next frame's origin and
    /// number, and still the lines of the frame that ended at that origin:
    /// this is the clock as it stood during that frame (before frame 0: the
    /// clock itself).
    fn ended_frame_clock(&self) -> Clock {
        let c = self.hw.clock;
        Clock {
            frame_origin: c.frame_origin.saturating_sub(c.geom.mclk_per_frame()),
            frame: c.frame.saturating_sub(1),
            ..c
        }
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
        self.hw.seam.instructions
    }

    /// Address of the last instruction executed, as the observer's
    /// `instruction` event (or the last of a `poll_passes` report) gave it;
    /// `None` before the first.
    pub fn last_pc(&self) -> Option<u32> {
        self.hw.seam.last_pc()
    }

    /// The last instruction addresses, oldest first.
    pub fn recent_pcs(&self) -> RecentPcs {
        self.hw.seam.recent_pcs()
    }

    /// A read-only view for tests and tools.
    pub fn view(&self) -> SystemView<'_> {
        SystemView {
            regs: self.cpu.registers(),
            wram: &self.hw.wram,
            vdp: &self.hw.vdp,
            cart: &self.hw.cart,
            clock: &self.hw.clock,
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
        let geom = self.hw.vdp.current_geometry();
        // The clock holds the frame to run next (number and origin), and
        // still the lines of the frame that ended at its origin: the VDP
        // finishes that frame (a fill still running) on the ended frame's
        // clock, then takes every time from this one.
        let origin = self.hw.clock.frame_origin;
        let frame = self.hw.clock.frame;
        let ended = self.ended_frame_clock();
        self.hw.vdp.begin_frame(&ended, origin);
        self.hw.fetches_this_frame = 0;
        self.hw.clock.geom = geom;
        self.hw.clock.cpu_cycles = self.cpu.cycles();
        obs.frame_start(frame, &self.view());
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
        self.hw.z80.frame_start(origin);
        self.hw.next_line = 0;
        self.hw.vint_at = u64::MAX;
        self.hw.update_next_event();
        self.hw.process_events(origin.max(self.mclk()));
        let frame_end = origin + geom.mclk_per_frame();
        if let Err(e) = self.run_cpu(frame_end, obs) {
            self.hw.vdp.settle_fill(&self.hw.clock);
            return Err(e);
        }
        self.hw.process_events(frame_end);
        self.hw.catch_up_z80(frame_end);
        // A fill's steps left by status reads, before anyone looks.
        self.hw.vdp.settle_fill(&self.hw.clock);
        if drawing {
            if let Some(img) = self.hw.shot.take() {
                self.last_shot = Some((frame, img));
            }
        }
        // The next frame starts where this one ends.
        self.hw.clock.frame_origin = frame_end;
        self.hw.clock.frame = frame + 1;
        Ok(FrameInfo {
            frame,
            start_mclk: origin,
            end_mclk: frame_end,
            lines: geom.lines,
            active_lines: geom.active,
            pal: geom.pal,
        })
    }
}

/// Hooks for this crate's own tests in `tests/unit/` (hidden; not API).
#[doc(hidden)]
pub mod test_support;
