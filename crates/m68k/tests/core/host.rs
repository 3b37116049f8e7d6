//! The one instantiation of the 68000 core in the tests.
//!
//! The core is generic over its host (`Bus + Observer`): every bus or
//! observer type that calls `Cpu::step`/`Cpu::run_until` directly gets its
//! own copy of the whole core, which costs tens of seconds of release
//! build per copy. The tests' `Cpu` wraps the real one and runs it with
//! `&mut dyn Bus` and `&mut dyn Observer` (through
//! [`WithObserver`]), so each test keeps its own bus and observer types
//! while the core is compiled once for the test binary (plus the small
//! reset-exception path for [`Cpu::reset`]). Everything else goes to the
//! real CPU (`Deref`). The calls look like the real API's:
//! `cpu.step(&mut bus, &mut obs)`, `cpu.run_until(&mut bus, &mut (), t)`.

use retroprof_m68k::{Bus, Observer, Stop, WithObserver};

/// A 68000 whose `step`/`run_until`/`reset` take trait objects.
#[derive(Clone, Debug, Default)]
pub struct Cpu(retroprof_m68k::Cpu);

impl Cpu {
    pub fn new() -> Self {
        Cpu(retroprof_m68k::Cpu::new())
    }

    /// [`retroprof_m68k::Cpu::reset`].
    pub fn reset(&mut self, bus: &mut dyn Bus) {
        self.0.reset(&mut WithObserver {
            bus,
            obs: &mut () as &mut dyn Observer,
        });
    }

    /// [`retroprof_m68k::Cpu::step`].
    pub fn step(&mut self, bus: &mut dyn Bus, obs: &mut dyn Observer) -> u32 {
        self.0.step_on(&mut WithObserver { bus, obs })
    }

    /// [`retroprof_m68k::Cpu::run_until`].
    pub fn run_until(&mut self, bus: &mut dyn Bus, obs: &mut dyn Observer, target: u64) -> Stop {
        self.0.run_on(&mut WithObserver { bus, obs }, target)
    }
}

impl std::ops::Deref for Cpu {
    type Target = retroprof_m68k::Cpu;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Cpu {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}
