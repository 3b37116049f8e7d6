//! Hooks into the console's internals for this crate's own tests
//! (`tests/unit/`), where no public path reaches what they check. Not part
//! of the API: hidden from the documentation, may change at any time.
//!
//! The tests live in `tests/` rather than in `#[cfg(test)]` modules so
//! that they link the library as built instead of compiling it (and its
//! 68000 and Z80 cores) a second time in test mode (see the crate README,
//! "Build time of the tests").

use retroprof_m68k::FetchWindow;

use super::System;
use crate::cart::Cart;
use crate::observer::Clock;
use crate::timing::FrameGeometry;

/// The clock a [`System`] holds in frame `frame`, begun at mclk `origin`
/// with lines `geom` (CPU cycle 0 at mclk 0): for driving a
/// [`crate::vdp::Vdp`] alone.
pub fn clock(origin: u64, geom: FrameGeometry, frame: u64) -> Clock {
    Clock {
        frame_origin: origin,
        geom,
        frame,
        ..Clock::default()
    }
}

/// The 68000's fetch window over the cartridge's fixed ROM.
pub fn fetch_window(cart: &Cart) -> Option<FetchWindow> {
    cart.fetch_window()
}

/// Whether the system's cartridge gives the 68000 a fetch window.
pub fn has_fetch_window(sys: &System) -> bool {
    sys.hw.cart.code.is_some()
}

/// Take the fetch window away: every 68000 fetch goes through the bus.
pub fn drop_fetch_window(sys: &mut System) {
    sys.hw.cart.code = None;
}

/// Let the idle-poll skip run line events in place (the default) or stop
/// before each (the slow path it must match).
pub fn set_poll_lines(sys: &mut System, on: bool) {
    sys.hw.poll_lines = on;
}

/// Let the slow boundary take a refresh penalty alone on its short path
/// (the default) or through the whole boundary (the path it must match).
pub fn set_quick_refresh(sys: &mut System, on: bool) {
    sys.hw.quick_refresh = on;
}

/// Line events the idle-poll skip ran in place since power-on.
pub fn poll_lines_crossed(sys: &System) -> u64 {
    sys.hw.poll_lines_crossed
}

/// The open-bus latch (the last word the 68000 fetched).
pub fn open_bus(sys: &System) -> u16 {
    sys.hw.open_bus
}
