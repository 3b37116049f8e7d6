//! retroprof-megadrive: a Mega Drive / Genesis built for profiling.
//!
//! - [`Rom`]: loading and validating cartridge images, header parsing.
//! - [`System`]: the console (68000 from `retroprof-m68k`, VDP, Z80, YM2612
//!   timers, I/O, cartridge mapper and SRAM) on one master-clock timebase,
//!   run frame by frame with [`System::run_frame`].
//! - [`MdObserver`]: the profiler's hook (see [`observer`]).
//! - [`timing`]: every hardware timing constant, with its source.
//! - [`input`]: pad buttons and input scripts (`FROM-TO:BUTTONS`).
//! - [`render`]: the VDP line renderer and PNG output (used only when a
//!   screenshot is asked for).

pub mod cart;
pub mod input;
pub mod io;
pub mod observer;
pub mod reference;
pub mod render;
pub mod rom;
pub mod system;
pub mod timing;
pub mod vdp;
pub mod ym2612;
pub mod z80;

pub use input::{Buttons, InputParseError, InputScript, InputSpan};
pub use io::PadKind;
pub use observer::{Clock, DmaEvent, InstrCost, MdObserver, PcSet, SystemView, VdpPort};
pub use reference::ReferenceRules;
/// The 68000 core's types that appear in this crate's API (the observer's
/// exception events, [`SystemView::regs`]): users need no direct
/// dependency on `retroprof-m68k`.
pub use retroprof_m68k::{ExceptionKind, Registers};
pub use rom::{Region, Rom, RomError};
pub use system::{BusCounters, Config, FrameInfo, RecentPcs, RunError, System};
pub use vdp::{DmaKind, DmaSpan, DmaTarget};
