//! Every test of the Z80 core that runs it, in one test binary.
//!
//! ```text
//! cargo test --release -p retroprof-z80 --test core
//! cargo test --release -p retroprof-z80 --test core diff_rustzx::
//! ```
//!
//! Each bus type that runs the generic core gets a whole copy of it
//! compiled, and each test binary compiles its own: `behaviour`,
//! `diff_rustzx` and `runloop` used to be 3 binaries with 4 bus types
//! (`Flat`, `OurBus`, `LogBus<false>`, `LogBus<true>`). Here every test
//! keeps its own bus but runs the core through [`host::Z80`]
//! (`&mut dyn TestBus`): two copies of the core, one per value of the
//! steady-line promise.
//!
//! Build time, `cargo test --release --no-run -p retroprof-m68k -p
//! retroprof-z80 --timings` after touching `src/lib.rs`, warm dependencies,
//! on the shared 2-core machine under load; rustc CPU seconds per unit
//! (user + sys, a `RUSTC_WRAPPER` around `/usr/bin/time`), wall-clock unit
//! durations of the timings report in brackets (inflated by the other
//! builds): behaviour 54.8 (190.1) + runloop 21.4 (65.1) + diff_rustzx 6.2
//! (24.8) = 82.4 (280.0) -> this binary 18.4 (52.5). Running: 1.9 s (before
//! 0.0 + 1.9 + 0.5 s in three binaries).

mod host;

/// The run-loop checks' logging bus (`gate`, `idle`).
mod bus;

mod behaviour;
mod diff_rustzx;
mod gate;
mod idle;
