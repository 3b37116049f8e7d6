//! The CPU state and its public API. (Placeholder body: the core is being
//! written; the API below is the contract the conformance runner and the
//! Mega Drive crate use.)

use crate::bus::{Bus, Observer};

/// Programmer-visible state, in the layout of the single-step tests.
///
/// `pc` follows the prefetch convention of those tests: it is the address of
/// the next word to be fetched, i.e. 4 bytes past the instruction whose first
/// two words are in `prefetch` and which will execute next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Registers {
    pub d: [u32; 8],
    /// a0-a6; the active a7 is `ssp` or `usp` depending on SR's S bit.
    pub a: [u32; 7],
    pub usp: u32,
    pub ssp: u32,
    pub sr: u16,
    pub pc: u32,
    pub prefetch: [u16; 2],
}

/// Why [`Cpu::run_until`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The target time was reached (at an instruction boundary).
    Target,
    /// The CPU is halted (double bus fault); it stays halted.
    Halted,
}

#[derive(Clone, Debug, Default)]
pub struct Cpu {
    regs: Registers,
    cycles: u64,
}

impl Cpu {
    pub fn new() -> Self {
        Self::default()
    }

    /// Current time in 68000 cycles.
    pub fn cycles(&self) -> u64 {
        self.cycles
    }

    pub fn registers(&self) -> Registers {
        self.regs
    }

    /// Load a full state (registers and prefetch queue), as the tests do.
    pub fn set_registers(&mut self, regs: &Registers) {
        self.regs = *regs;
    }

    /// Power-on reset: reads SSP and PC from vectors 0 and 1, fills the
    /// prefetch queue.
    pub fn reset<B: Bus>(&mut self, _bus: &mut B) {}

    /// Execute exactly one instruction (or one exception entry / interrupt,
    /// or one STOP wait step); returns the cycles it took.
    pub fn step<B: Bus, O: Observer>(&mut self, _bus: &mut B, _obs: &mut O) -> u32 {
        0
    }

    /// Run instructions until `cycles() >= target` at an instruction
    /// boundary, or the CPU halts.
    pub fn run_until<B: Bus, O: Observer>(&mut self, bus: &mut B, obs: &mut O, target: u64) -> Stop {
        while self.cycles < target {
            let c = self.step(bus, obs);
            if c == 0 {
                return Stop::Halted;
            }
        }
        Stop::Target
    }
}
