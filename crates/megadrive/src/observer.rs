//! The profiler's view of the console.
//!
//! Implement [`MdObserver`] (every method has an empty default body) and pass
//! it to [`crate::System::run_frame`], which takes it as `&mut dyn
//! MdObserver`: one compiled 68000 core serves every tool and test (one
//! dynamic call per event). The production profiler alone takes
//! [`crate::System::run_frame_mono`], where its methods are inlined into
//! the emulation loop (each new observer type there costs a whole core of
//! build time); [`crate::System::run_frame_unobserved`] runs with the no-op
//! observer `()`, which compiles to nothing. Keep the methods cheap either
//! way (no allocation or hashing per instruction).
//!
//! # Event order and time
//! - [`frame_start`](MdObserver::frame_start) opens each frame (see
//!   [`crate::system`] for where a frame begins: the first VBlank line).
//! - For each instruction the 68000 finishes:
//!   [`instruction`](MdObserver::instruction) with its full cost in master
//!   clocks (mclk): the bus cycles, wait states, the DMA freeze of a 68000
//!   -> VDP DMA it started, FIFO waits and the DRAM refresh penalty charged
//!   at the boundary after it. [`InstrCost`] also says how much of that was
//!   freeze, FIFO wait and refresh.
//! - Exception processing (interrupt entry included) is reported apart with
//!   [`exception`](MdObserver::exception) and is NOT part of any
//!   instruction's cost: charge it to the handler or to an
//!   "[interrupt entry]" pseudo-function.
//! - [`call`](MdObserver::call) / [`ret`](MdObserver::ret) come straight
//!   from the 68000 core (JSR/BSR, RTS/RTR/RTE), before the `instruction`
//!   event of the same instruction.
//! - [`vdp_write`](MdObserver::vdp_write) for each CPU write to the VDP data
//!   or control port, [`dma`](MdObserver::dma) once per DMA when it starts
//!   (its [`DmaSpan`] already tells when it ends and how its bytes split
//!   between VBlank and active display).
//! - Every event gets a [`Clock`] (or can read the time from the
//!   [`SystemView`]): `clock.mclk()` is the time of the instruction boundary
//!   that ended the last instruction, `clock.line()` the scanline then.
//!
//! The sum of `instruction` costs plus `exception` costs plus time spent in
//! STOP equals the elapsed master clocks.
//!
//! # Reading memory and registers at chosen PCs
//! Give the system a [`PcSet`] with [`crate::System::set_breakpoints`]: then,
//! before the instruction at any of those addresses executes,
//! [`at_pc`](MdObserver::at_pc) is called with a [`SystemView`] holding the
//! CPU registers and read access to all memory. Use it for SGDK's
//! `MEM_alloc` (size at 4(SP) as a 32-bit slot, return address at 0(SP)):
//! add the function's address; and for its return: add the return address
//! read at entry, and read `d0` there. With no breakpoints the CPU runs in
//! its fast loop; with breakpoints each instruction boundary tests one bit.
//! [`frame_start`](MdObserver::frame_start) also gets a [`SystemView`], for
//! values watched once per frame.

use retroprof_m68k::{ExceptionKind, Registers};

use crate::cart::Cart;
use crate::timing::{m68k_to_mclk, FrameGeometry, MCLK_PER_LINE};
use crate::vdp::{DmaKind, DmaSpan, Vdp};

/// Cost of one instruction, in master clocks. `total` includes the other
/// fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InstrCost {
    pub total: u32,
    /// 68000 frozen by a 68000 -> VDP DMA this instruction started.
    pub dma_freeze: u32,
    /// Waiting on a full VDP FIFO, or on a fill/copy in progress, at a
    /// data-port access.
    pub fifo_wait: u32,
    /// DRAM refresh penalty (md-timing.md, GPGX model).
    pub refresh: u32,
    /// The 68000 waiting while the Z80 used its bus (banked accesses made
    /// by the Z80 since the previous instruction boundary).
    pub z80_stall: u32,
}

/// Which VDP port a CPU write went to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VdpPort {
    Data,
    Control,
}

/// One DMA, reported when it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DmaEvent {
    pub kind: DmaKind,
    /// Bytes moved (words x 2 for 68000 -> VDP).
    pub bytes: u32,
    /// 68000 source address (68000 -> VDP only).
    pub source: u32,
    /// When it runs and how its bytes split between VBlank and active
    /// display.
    pub span: DmaSpan,
    /// Frame number when it started.
    pub frame: u64,
}

/// The console's timebase: the current time and scanline, readable from
/// any event. [`crate::System`] owns the one `Clock` (the frame in
/// progress, its origin and geometry are held here and nowhere else in the
/// console); observers get it by reference. 68000 cycles become master
/// clocks only through [`crate::timing::m68k_to_mclk`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Clock {
    /// 68000 cycles at the last instruction boundary.
    pub(crate) cpu_cycles: u64,
    /// mclk of CPU cycle 0.
    pub(crate) base: u64,
    /// mclk at which the frame in progress (between frames: the next one)
    /// starts.
    pub(crate) frame_origin: u64,
    /// Lines of the frame in progress; its first line is the first VBlank
    /// line (`geom.active`).
    pub(crate) geom: FrameGeometry,
    /// Frame in progress (between frames: the next one).
    pub(crate) frame: u64,
}

impl Clock {
    /// When the instruction just reported to
    /// [`MdObserver::instruction`] with `cost` ended: the boundary
    /// ([`mclk`](Self::mclk)) plus what the boundary charged after it, the
    /// DRAM refresh penalty and the Z80's use of the 68000 bus. It started
    /// `cost.total` earlier.
    #[inline(always)]
    pub fn instruction_end(&self, cost: &InstrCost) -> u64 {
        self.mclk() + cost.refresh as u64 + cost.z80_stall as u64
    }

    /// Master clocks since power-on at the last instruction boundary.
    #[inline]
    pub fn mclk(&self) -> u64 {
        self.mclk_at(self.cpu_cycles)
    }

    /// Master clocks at 68000 cycle `cycles`.
    #[inline(always)]
    pub(crate) fn mclk_at(&self, cycles: u64) -> u64 {
        self.base + m68k_to_mclk(cycles)
    }

    /// Scanline (0 = first active line) at [`mclk`](Self::mclk).
    pub fn line(&self) -> u16 {
        let rel = self.mclk().saturating_sub(self.frame_origin) / MCLK_PER_LINE;
        ((self.geom.active as u64 + rel) % self.geom.lines.max(1) as u64) as u16
    }

    /// Whether [`line`](Self::line) is a VBlank line.
    pub fn in_vblank(&self) -> bool {
        self.line() >= self.geom.active
    }

    /// Frame in progress.
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// mclk at which the frame in progress started.
    pub fn frame_start_mclk(&self) -> u64 {
        self.frame_origin
    }

    /// Lines of the frame in progress.
    pub fn geometry(&self) -> FrameGeometry {
        self.geom
    }
}

/// A set of 68000 addresses (even, 24-bit), one bit each.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PcSet {
    bits: Vec<u64>,
}

impl PcSet {
    pub fn new() -> Self {
        PcSet::default()
    }

    pub fn insert(&mut self, pc: u32) {
        let i = ((pc & 0xFF_FFFF) >> 1) as usize;
        if self.bits.len() <= i / 64 {
            self.bits.resize(i / 64 + 1, 0);
        }
        self.bits[i / 64] |= 1 << (i % 64);
    }

    pub fn remove(&mut self, pc: u32) {
        let i = ((pc & 0xFF_FFFF) >> 1) as usize;
        if let Some(w) = self.bits.get_mut(i / 64) {
            *w &= !(1 << (i % 64));
        }
    }

    #[inline(always)]
    pub fn contains(&self, pc: u32) -> bool {
        let i = ((pc & 0xFF_FFFF) >> 1) as usize;
        match self.bits.get(i / 64) {
            Some(w) => w & (1 << (i % 64)) != 0,
            None => false,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|&w| w == 0)
    }
}

/// Read access to the machine between two instructions.
pub struct SystemView<'a> {
    /// CPU registers (`regs.pc` follows the prefetch convention: the next
    /// instruction is at `pc - 4`; use [`SystemView::pc`]).
    pub regs: Registers,
    pub wram: &'a [u8; 0x10000],
    pub vdp: &'a Vdp,
    pub(crate) cart: &'a Cart,
    pub clock: &'a Clock,
}

impl SystemView<'_> {
    /// Address of the next instruction.
    pub fn pc(&self) -> u32 {
        self.regs.pc.wrapping_sub(4) & 0xFF_FFFF
    }

    /// The active stack pointer (a7).
    pub fn sp(&self) -> u32 {
        if self.regs.sr & 0x2000 != 0 {
            self.regs.ssp
        } else {
            self.regs.usp
        }
    }

    /// Byte at a 68000 address: ROM/SRAM, work RAM; 0xFF elsewhere (no side
    /// effects on I/O).
    pub fn read_byte(&self, addr: u32) -> u8 {
        let a = addr & 0xFF_FFFF;
        if a < 0x40_0000 {
            self.cart.read_byte(a).unwrap_or(0xFF)
        } else if a >= 0xE0_0000 {
            self.wram[(a & 0xFFFF) as usize]
        } else {
            0xFF
        }
    }

    pub fn read_word(&self, addr: u32) -> u16 {
        u16::from_be_bytes([self.read_byte(addr), self.read_byte(addr.wrapping_add(1))])
    }

    pub fn read_long(&self, addr: u32) -> u32 {
        (self.read_word(addr) as u32) << 16 | self.read_word(addr.wrapping_add(2)) as u32
    }

    pub fn mclk(&self) -> u64 {
        self.clock.mclk()
    }

    pub fn line(&self) -> u16 {
        self.clock.line()
    }

    pub fn frame(&self) -> u64 {
        self.clock.frame()
    }
}

/// Events from the running console. See the module documentation.
#[allow(unused_variables)]
pub trait MdObserver {
    /// A frame begins (`frame` counts from 0). Called at the first
    /// instruction boundary at or after the frame's start, so `view.mclk()`
    /// may be past it by part of an instruction;
    /// `view.clock.frame_start_mclk()` is the exact start.
    #[inline(always)]
    fn frame_start(&mut self, frame: u64, view: &SystemView) {}

    /// The instruction at `pc` finished; `cost` in mclk.
    #[inline(always)]
    fn instruction(&mut self, pc: u32, cost: InstrCost, clock: &Clock) {}

    /// Exception processing for `kind` through `vector` took `mclk` master
    /// clocks; execution continues at `handler`.
    #[inline(always)]
    fn exception(
        &mut self,
        kind: ExceptionKind,
        vector: u8,
        handler: u32,
        mclk: u32,
        clock: &Clock,
    ) {
    }

    /// JSR/BSR at `from_pc` to `target`; `return_addr` pushed at `sp`.
    #[inline(always)]
    fn call(&mut self, from_pc: u32, target: u32, return_addr: u32, sp: u32) {}

    /// RTS/RTR/RTE at `from_pc` to `target`; `sp` after the return.
    #[inline(always)]
    fn ret(&mut self, from_pc: u32, target: u32, sp: u32) {}

    /// CPU write to a VDP port.
    #[inline(always)]
    fn vdp_write(&mut self, port: VdpPort, value: u16, clock: &Clock) {}

    /// A DMA started.
    #[inline(always)]
    fn dma(&mut self, event: &DmaEvent) {}

    /// Execution reached a breakpoint (see [`crate::System::set_breakpoints`]);
    /// called before the instruction at `pc` runs.
    #[inline(always)]
    fn at_pc(&mut self, pc: u32, view: &SystemView) {}

    /// Whether this observer takes the instructions of skipped passes of a
    /// VBlank polling loop (the 68000's fast path, m68k `poll.rs`) whose
    /// three instructions are at `pcs`, as one [`MdObserver::poll_passes`]
    /// report instead of one [`MdObserver::instruction`] each. Default:
    /// false, and every instruction is reported as usual.
    #[inline(always)]
    fn accepts_poll_passes(&mut self, pcs: &[u32; 3]) -> bool {
        false
    }

    /// `passes` passes of the polling loop at `pcs` ran (only after
    /// [`MdObserver::accepts_poll_passes`] said yes). `mclk[i]` is the full
    /// cost of the instruction at `pcs[i]` summed over the passes, and
    /// `refresh[i]` its DRAM refresh part: skipped passes have no other
    /// cost part (no DMA freeze, FIFO wait or Z80 stall), no interrupt, and
    /// never cross a line start. `clock` is at the last pass's end.
    #[inline(always)]
    fn poll_passes(
        &mut self,
        pcs: &[u32; 3],
        mclk: &[u64; 3],
        refresh: &[u64; 3],
        passes: u64,
        clock: &Clock,
    ) {
    }
}

impl MdObserver for () {
    #[inline(always)]
    fn accepts_poll_passes(&mut self, _pcs: &[u32; 3]) -> bool {
        true
    }
}

impl<T: MdObserver + ?Sized> MdObserver for &mut T {
    #[inline(always)]
    fn frame_start(&mut self, frame: u64, view: &SystemView) {
        (**self).frame_start(frame, view)
    }
    #[inline(always)]
    fn instruction(&mut self, pc: u32, cost: InstrCost, clock: &Clock) {
        (**self).instruction(pc, cost, clock)
    }
    #[inline(always)]
    fn exception(
        &mut self,
        kind: ExceptionKind,
        vector: u8,
        handler: u32,
        mclk: u32,
        clock: &Clock,
    ) {
        (**self).exception(kind, vector, handler, mclk, clock)
    }
    #[inline(always)]
    fn call(&mut self, from_pc: u32, target: u32, return_addr: u32, sp: u32) {
        (**self).call(from_pc, target, return_addr, sp)
    }
    #[inline(always)]
    fn ret(&mut self, from_pc: u32, target: u32, sp: u32) {
        (**self).ret(from_pc, target, sp)
    }
    #[inline(always)]
    fn vdp_write(&mut self, port: VdpPort, value: u16, clock: &Clock) {
        (**self).vdp_write(port, value, clock)
    }
    #[inline(always)]
    fn dma(&mut self, event: &DmaEvent) {
        (**self).dma(event)
    }
    #[inline(always)]
    fn at_pc(&mut self, pc: u32, view: &SystemView) {
        (**self).at_pc(pc, view)
    }
    #[inline(always)]
    fn accepts_poll_passes(&mut self, pcs: &[u32; 3]) -> bool {
        (**self).accepts_poll_passes(pcs)
    }
    #[inline(always)]
    fn poll_passes(
        &mut self,
        pcs: &[u32; 3],
        mclk: &[u64; 3],
        refresh: &[u64; 3],
        passes: u64,
        clock: &Clock,
    ) {
        (**self).poll_passes(pcs, mclk, refresh, passes, clock)
    }
}

/// Two observers side by side (e.g. the profiler and the heap bridge):
/// every event goes to the first, then to the second. Nest pairs for more.
impl<A: MdObserver, B: MdObserver> MdObserver for (A, B) {
    #[inline(always)]
    fn frame_start(&mut self, frame: u64, view: &SystemView) {
        self.0.frame_start(frame, view);
        self.1.frame_start(frame, view);
    }
    #[inline(always)]
    fn instruction(&mut self, pc: u32, cost: InstrCost, clock: &Clock) {
        self.0.instruction(pc, cost, clock);
        self.1.instruction(pc, cost, clock);
    }
    #[inline(always)]
    fn exception(
        &mut self,
        kind: ExceptionKind,
        vector: u8,
        handler: u32,
        mclk: u32,
        clock: &Clock,
    ) {
        self.0.exception(kind, vector, handler, mclk, clock);
        self.1.exception(kind, vector, handler, mclk, clock);
    }
    #[inline(always)]
    fn call(&mut self, from_pc: u32, target: u32, return_addr: u32, sp: u32) {
        self.0.call(from_pc, target, return_addr, sp);
        self.1.call(from_pc, target, return_addr, sp);
    }
    #[inline(always)]
    fn ret(&mut self, from_pc: u32, target: u32, sp: u32) {
        self.0.ret(from_pc, target, sp);
        self.1.ret(from_pc, target, sp);
    }
    #[inline(always)]
    fn vdp_write(&mut self, port: VdpPort, value: u16, clock: &Clock) {
        self.0.vdp_write(port, value, clock);
        self.1.vdp_write(port, value, clock);
    }
    #[inline(always)]
    fn dma(&mut self, event: &DmaEvent) {
        self.0.dma(event);
        self.1.dma(event);
    }
    #[inline(always)]
    fn at_pc(&mut self, pc: u32, view: &SystemView) {
        self.0.at_pc(pc, view);
        self.1.at_pc(pc, view);
    }
    #[inline(always)]
    fn accepts_poll_passes(&mut self, pcs: &[u32; 3]) -> bool {
        self.0.accepts_poll_passes(pcs) && self.1.accepts_poll_passes(pcs)
    }
    #[inline(always)]
    fn poll_passes(
        &mut self,
        pcs: &[u32; 3],
        mclk: &[u64; 3],
        refresh: &[u64; 3],
        passes: u64,
        clock: &Clock,
    ) {
        self.0.poll_passes(pcs, mclk, refresh, passes, clock);
        self.1.poll_passes(pcs, mclk, refresh, passes, clock);
    }
}

/// An optional observer (e.g. `--heap` not given: `None`); one branch per
/// event.
impl<T: MdObserver> MdObserver for Option<T> {
    #[inline(always)]
    fn frame_start(&mut self, frame: u64, view: &SystemView) {
        if let Some(o) = self {
            o.frame_start(frame, view)
        }
    }
    #[inline(always)]
    fn instruction(&mut self, pc: u32, cost: InstrCost, clock: &Clock) {
        if let Some(o) = self {
            o.instruction(pc, cost, clock)
        }
    }
    #[inline(always)]
    fn exception(
        &mut self,
        kind: ExceptionKind,
        vector: u8,
        handler: u32,
        mclk: u32,
        clock: &Clock,
    ) {
        if let Some(o) = self {
            o.exception(kind, vector, handler, mclk, clock)
        }
    }
    #[inline(always)]
    fn call(&mut self, from_pc: u32, target: u32, return_addr: u32, sp: u32) {
        if let Some(o) = self {
            o.call(from_pc, target, return_addr, sp)
        }
    }
    #[inline(always)]
    fn ret(&mut self, from_pc: u32, target: u32, sp: u32) {
        if let Some(o) = self {
            o.ret(from_pc, target, sp)
        }
    }
    #[inline(always)]
    fn vdp_write(&mut self, port: VdpPort, value: u16, clock: &Clock) {
        if let Some(o) = self {
            o.vdp_write(port, value, clock)
        }
    }
    #[inline(always)]
    fn dma(&mut self, event: &DmaEvent) {
        if let Some(o) = self {
            o.dma(event)
        }
    }
    #[inline(always)]
    fn at_pc(&mut self, pc: u32, view: &SystemView) {
        if let Some(o) = self {
            o.at_pc(pc, view)
        }
    }
    #[inline(always)]
    fn accepts_poll_passes(&mut self, pcs: &[u32; 3]) -> bool {
        match self {
            Some(o) => o.accepts_poll_passes(pcs),
            None => true,
        }
    }
    #[inline(always)]
    fn poll_passes(
        &mut self,
        pcs: &[u32; 3],
        mclk: &[u64; 3],
        refresh: &[u64; 3],
        passes: u64,
        clock: &Clock,
    ) {
        if let Some(o) = self {
            o.poll_passes(pcs, mclk, refresh, passes, clock)
        }
    }
}
