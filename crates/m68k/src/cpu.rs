//! The CPU state and its public API.
//!
//! Behaviour summary (details in the module of each part):
//! - Every instruction is executed with its exact bus-cycle sequence (order,
//!   function code, data, start time) and internal idle periods, as
//!   recorded by the SingleStepTests/m68000 collection; waits returned by
//!   the bus delay everything after them.
//! - A step is one instruction, one exception entry taken between
//!   instructions (trace, interrupt) or one STOP wait. After each
//!   instruction [`Bus::boundary`] is called: its `extra` cycles are charged
//!   to that instruction and its `ipl` is compared with the SR mask (level 7
//!   is edge-triggered); a pending interrupt is entered at the next step.
//! - The observer hears `instruction(pc, cycles)` for every instruction
//!   (including its boundary `extra`; a STOP wait is reported as time in the
//!   STOP instruction) and `exception(..)` for every exception entry; the
//!   two never count the same cycle twice, so their sum is the elapsed time.
//! - STOP does not spin: while stopped the core jumps to
//!   [`Bus::next_event`] (or to the `run_until` target).
//! - A bus or address error during group-0 exception processing is a
//!   double bus fault: the core halts, calls [`Bus::halted`], `step` returns
//!   0 and `run_until` returns [`Stop::Halted`] until the next `reset`.

use crate::bus::{Bus, Observer, WithObserver};
use crate::core::{Ctx, SR_MASK, S_BIT, T_BIT};
use crate::decode::{self, Entry};

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

/// A 68000.
#[derive(Clone, Debug)]
pub struct Cpu {
    pub(crate) d: [u32; 8],
    /// a0-a7 with a7 the active stack pointer.
    pub(crate) a: [u32; 8],
    /// The inactive stack pointer (USP in supervisor mode, SSP in user mode).
    pub(crate) other_sp: u32,
    pub(crate) sr: u16,
    pub(crate) pc: u32,
    pub(crate) ird: u16,
    pub(crate) irc: u16,
    pub(crate) cycles: u64,
    pub(crate) halted: bool,
    pub(crate) stopped: bool,
    /// A trace exception is due before the next instruction.
    pub(crate) trace_pending: bool,
    /// Interrupt level sampled at the last boundary.
    pub(crate) ipl: u8,
    /// Something other than "execute the next untraced instruction" may be
    /// due (trace, interrupt, STOP, halt, or the T bit is set): the step
    /// takes its slow path. Invariant: true whenever `halted`,
    /// `trace_pending`, `nmi_pending`, `stopped` or SR's T bit is set, or
    /// `ipl` exceeds the SR mask.
    pub(crate) attention: bool,
    pub(crate) nmi_pending: bool,
    /// IR and the PC adjustment of a group-0 frame (see [`Ir`]), set
    /// together at the start of every instruction.
    pub(crate) ir: Ir,
    /// Cycles spent in exception entry during the current step (reported to
    /// the observer separately from the instruction's own cycles). Only an
    /// instruction that ends through its error path (a group-0 fault, or
    /// a group 1/2 exception it took: `exc_taken`) reads it, then clears
    /// it; `attend` clears what trace and interrupt entries added.
    pub(crate) exc_cycles: u64,
    /// The instruction took a group 1/2 exception (TRAP, TRAPV, CHK, zero
    /// divide, illegal, line A/F, privilege violation) and returned
    /// `Err(Fault)` for it ([`Ctx::taken`]): not a fault.
    pub(crate) exc_taken: bool,
    /// (An)+ register of a pending long read (undone if the read faults).
    pub(crate) pi_reg: u8,
    pub(crate) pi_old: u32,
    /// Start time of a group 1/2 exception entry in progress (u64::MAX:
    /// none).
    pub(crate) exc_start: u64,
    /// Details of the last bus/address error.
    pub(crate) fault: crate::core::FaultInfo,
    /// Set by group-1 exceptions (illegal, line A/F, privilege violation),
    /// which are not followed by a trace exception.
    pub(crate) no_trace: bool,
    /// Head of a short backward loop the last taken `Bcc.s` jumped to, for
    /// the polling fast path ([`crate::poll`]); `NO_POLL`: none.
    pub(crate) poll_head: u32,
    /// A loop head found not to be a polling loop (not analysed again).
    pub(crate) poll_reject: u32,
    table: &'static [Entry; 65536],
}

/// IR (the opcode of the instruction being executed, which a group-0
/// frame pushes) and `pc_adj`, the adjustment of the PC that frame pushes
/// relative to `pc - 2` (the hardware pushes its internal PC register, which
/// some microcode sequences have already advanced or not yet advanced; set
/// by the handlers before the access that may fault). One 4-byte value, so
/// that the start of every instruction sets both (`pc_adj` to 0) with one
/// store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(4))]
pub(crate) struct Ir {
    pub op: u16,
    pub pc_adj: i8,
    pad: u8,
}

impl Ir {
    /// The start of an instruction: IR = `op`, no PC adjustment.
    #[inline(always)]
    pub(crate) fn new(op: u16) -> Self {
        Ir {
            op,
            pc_adj: 0,
            pad: 0,
        }
    }
}

impl Default for Cpu {
    fn default() -> Self {
        Cpu {
            d: [0; 8],
            a: [0; 8],
            other_sp: 0,
            sr: 0x2700,
            pc: 0,
            ird: 0,
            irc: 0,
            cycles: 0,
            halted: false,
            stopped: false,
            trace_pending: false,
            ipl: 0,
            attention: true,
            nmi_pending: false,
            ir: Ir::default(),
            exc_cycles: 0,
            exc_taken: false,
            pi_reg: 0xFF,
            pi_old: 0,
            exc_start: u64::MAX,
            fault: crate::core::FaultInfo::default(),
            no_trace: false,
            poll_head: crate::poll::NO_POLL,
            poll_reject: crate::poll::NO_POLL,
            table: decode::table(),
        }
    }
}

impl Cpu {
    pub fn new() -> Self {
        Self::default()
    }

    /// Current time in 68000 cycles.
    pub fn cycles(&self) -> u64 {
        self.cycles
    }

    /// Whether the CPU is halted (double bus fault).
    pub fn is_halted(&self) -> bool {
        self.halted
    }

    /// Whether the CPU is stopped by STOP, waiting for an interrupt.
    pub fn is_stopped(&self) -> bool {
        self.stopped
    }

    pub fn registers(&self) -> Registers {
        let mut a = [0; 7];
        a.copy_from_slice(&self.a[..7]);
        let (usp, ssp) = if self.sr & S_BIT != 0 {
            (self.other_sp, self.a[7])
        } else {
            (self.a[7], self.other_sp)
        };
        Registers {
            d: self.d,
            a,
            usp,
            ssp,
            sr: self.sr,
            pc: self.pc,
            prefetch: [self.ird, self.irc],
        }
    }

    /// Load a full state (registers and prefetch queue), as the tests do.
    /// Clears any pending trace, STOP or halt state.
    pub fn set_registers(&mut self, regs: &Registers) {
        self.d = regs.d;
        self.a[..7].copy_from_slice(&regs.a);
        self.sr = regs.sr & SR_MASK;
        if self.sr & S_BIT != 0 {
            self.a[7] = regs.ssp;
            self.other_sp = regs.usp;
        } else {
            self.a[7] = regs.usp;
            self.other_sp = regs.ssp;
        }
        self.pc = regs.pc;
        self.ird = regs.prefetch[0];
        self.irc = regs.prefetch[1];
        self.halted = false;
        self.stopped = false;
        self.trace_pending = false;
        self.nmi_pending = false;
        self.attention = true;
    }

    /// Set the time counter (e.g. to align with a host clock).
    pub fn set_cycles(&mut self, cycles: u64) {
        self.cycles = cycles;
    }

    /// Recompute `attention` from the state (its invariant).
    #[inline(always)]
    pub(crate) fn update_attention(&mut self) {
        self.attention = self.trace_pending
            || self.nmi_pending
            || self.stopped
            || self.halted
            || self.sr & T_BIT != 0
            || self.ipl > ((self.sr >> 8) & 7) as u8;
    }

    /// Set SR, swapping the stack pointers when S changes.
    pub(crate) fn set_sr(&mut self, sr: u16) {
        let sr = sr & SR_MASK;
        if (sr ^ self.sr) & S_BIT != 0 {
            std::mem::swap(&mut self.a[7], &mut self.other_sp);
        }
        self.sr = sr;
        // Tracing and a lowered interrupt mask are handled on the slow
        // path; re-evaluated at the next step.
        self.attention = true;
    }

    /// Power-on reset: reads SSP and PC from vectors 0 and 1, fills the
    /// prefetch queue.
    pub fn reset<B: Bus>(&mut self, bus: &mut B) {
        self.halted = false;
        self.stopped = false;
        self.trace_pending = false;
        self.nmi_pending = false;
        self.attention = true;
        let mut host = WithObserver { bus, obs: &mut () };
        let mut cx = Ctx::new(self, &mut host, &[], 0);
        cx.reset_exception();
        cx.done(self);
    }

    /// Execute exactly one instruction (or one exception entry / interrupt,
    /// or one STOP wait step); returns the cycles it took (0 when halted).
    pub fn step<B: Bus, O: Observer>(&mut self, bus: &mut B, obs: &mut O) -> u32 {
        self.step_on(&mut WithObserver { bus, obs })
    }

    /// [`step`](Self::step) against a host that is its own observer.
    pub fn step_on<H: Bus + Observer>(&mut self, host: &mut H) -> u32 {
        if self.halted {
            return 0;
        }
        // `step` never runs the polling-loop fast path: forget a loop head
        // a branch marked (here or in `run_until`), so `attend` neither
        // runs the loop nor is called for it.
        if self.poll_head != crate::poll::NO_POLL {
            self.poll_head = crate::poll::NO_POLL;
            self.update_attention();
        }
        let start = self.cycles;
        // One step fetches exactly: no window (asking for it per step would
        // cost more than it saves).
        let mut cx = Ctx::new(self, host, &[], 0);
        cx.step(u64::MAX);
        cx.done(self);
        (self.cycles - start) as u32
    }

    /// Run instructions until `cycles() >= target` at an instruction
    /// boundary, or the CPU halts.
    pub fn run_until<B: Bus, O: Observer>(
        &mut self,
        bus: &mut B,
        obs: &mut O,
        target: u64,
    ) -> Stop {
        self.run_on(&mut WithObserver { bus, obs }, target)
    }

    /// [`run_until`](Self::run_until) against a host that is its own
    /// observer (the console's bus owning the profiler: one object reached
    /// from bus accesses and instruction reports alike, no shared cells).
    pub fn run_on<H: Bus + Observer>(&mut self, host: &mut H, target: u64) -> Stop {
        let window = host.fetch_window();
        let (win, win_base) = crate::core::usable_window(&window);
        let mut cx = Ctx::new(self, host, win, win_base);
        while cx.c.cycles < target {
            if cx.c.attention {
                if cx.c.halted {
                    break;
                }
                if cx.attend(target) {
                    continue;
                }
                if cx.c.sr & T_BIT != 0 {
                    cx.instruction::<true>();
                    continue;
                }
            }
            cx.instruction::<false>();
        }
        cx.done(self);
        if self.halted {
            Stop::Halted
        } else {
            Stop::Target
        }
    }
}

impl<B: Bus + Observer> Ctx<'_, B> {
    /// The slow part of a step, taken only when `attention` is set: a
    /// pending trace or interrupt entry, or a STOP wait. Returns true when
    /// it used up the step.
    #[inline(never)]
    fn attend(&mut self, target: u64) -> bool {
        let used = self.attend_inner(target);
        self.c.update_attention();
        used
    }

    #[inline(always)]
    fn attend_inner(&mut self, target: u64) -> bool {
        if self.c.trace_pending {
            self.c.trace_pending = false;
            self.trace_exception();
            // The entry's cycles were reported on their own.
            self.c.exc_cycles = 0;
            return true;
        }
        let level = self.c.ipl;
        if level > ((self.c.sr >> 8) & 7) as u8 || self.c.nmi_pending {
            self.c.nmi_pending = false;
            if level > 0 {
                self.interrupt(level);
                // The entry's cycles were reported on their own.
                self.c.exc_cycles = 0;
                return true;
            }
        }
        if self.c.stopped {
            // Nothing to do until an interrupt: jump to the next event the
            // bus knows of (bounded by the run target) instead of spinning.
            let now = self.c.cycles;
            let next = self.b.next_event(now).min(target);
            let next = if next <= now || next == u64::MAX {
                now + 4
            } else {
                next
            };
            self.c.cycles = next;
            // The wait is reported as time spent in the STOP instruction
            // (PC and queue still point just past it).
            let pc = self.c.pc.wrapping_sub(4);
            self.boundary(now, Some(pc));
            return true;
        }
        if self.c.poll_head != crate::poll::NO_POLL {
            let head = std::mem::replace(&mut self.c.poll_head, crate::poll::NO_POLL);
            if head == self.c.pc.wrapping_sub(4) && self.c.sr & T_BIT == 0 {
                return self.poll_loop(head, target);
            }
        }
        false
    }

    /// One step: a pending trace or interrupt entry, a STOP wait, or one
    /// instruction followed by its boundary.
    #[inline(always)]
    fn step(&mut self, target: u64) {
        if self.c.attention && self.attend(target) {
            return;
        }
        if self.c.sr & T_BIT != 0 {
            self.instruction::<true>();
        } else {
            self.instruction::<false>();
        }
    }

    /// One instruction followed by its boundary; `TRACING`: SR's T bit is
    /// set (a trace exception follows the instruction).
    #[inline(always)]
    fn instruction<const TRACING: bool>(&mut self) {
        let start = self.c.cycles;
        let pc = self.c.pc.wrapping_sub(4);
        let tracing = TRACING;
        if tracing {
            self.c.no_trace = false;
        }
        let op = self.c.ird;
        // IR and no PC adjustment: one store. (The instruction's address
        // is not stored: the handlers that need it take `pc - 4` before
        // their first fetch.)
        self.c.ir = crate::cpu::Ir::new(op);
        // A u16 index into a 65536-entry array: no bounds check. By
        // reference: each arm of the dispatch loads the fields it uses
        // (a copy made the compiler unpack all four bytes before the jump).
        let table: &'static [Entry; 65536] = self.c.table;
        let d = &table[op as usize];
        let start = match self.exec(op, d) {
            Ok(()) => {
                if tracing {
                    // UM 6.3.8: TRAP/TRAPV/CHK/zero-divide entries are
                    // followed by the trace exception; illegal-instruction
                    // and privilege-violation entries are not.
                    self.c.trace_pending = !self.c.no_trace && !self.c.halted;
                    self.c.attention |= self.c.trace_pending;
                }
                start
            }
            Err(f) => self.instruction_err::<TRACING>(f, start),
        };
        self.boundary(start, Some(pc));
    }

    /// The end of an instruction that returned `Err`: a group-0 fault
    /// (its exception entry now), or a group 1/2 exception the instruction
    /// took (`exc_taken`). Returns the start of the instruction's own
    /// cycles for its report: the exception entries' cycles are reported
    /// apart (so the common path neither clears nor adds `exc_cycles`).
    #[inline(never)]
    #[cold]
    fn instruction_err<const TRACING: bool>(&mut self, f: crate::core::Fault, start: u64) -> u64 {
        if self.c.exc_taken {
            self.c.exc_taken = false;
            if TRACING {
                // As on the `Ok` path (UM 6.3.8, see `instruction`).
                self.c.trace_pending = !self.c.no_trace && !self.c.halted;
                self.c.attention |= self.c.trace_pending;
            }
        } else {
            self.group0(f);
        }
        let start = start + self.c.exc_cycles;
        self.c.exc_cycles = 0;
        start
    }

    /// After an instruction (or a STOP wait): the bus's extra cycles, the
    /// observer report, interrupt sampling.
    #[inline(always)]
    pub(crate) fn boundary(&mut self, start: u64, pc: Option<u32>) {
        // Two copies of the rest: the common boundary (nothing to do, the
        // bus's `boundary_quick`) neither adds nor stores the time (with
        // one copy, the fast path's zero went through the merge with the
        // slow path's result and was added and stored).
        if let Some(ipl) = self.b.boundary_quick(self.c.cycles) {
            self.boundary_rest::<true>(start, pc, ipl);
        } else {
            let bd = self.b.boundary(self.c.cycles);
            self.c.cycles += bd.extra as u64;
            self.boundary_rest::<false>(start, pc, bd.ipl);
        }
    }

    /// The observer report and the interrupt sampling of [`Self::boundary`];
    /// `QUICK`: the boundary was `boundary_quick`'s (reported with
    /// `instruction_quick`).
    #[inline(always)]
    fn boundary_rest<const QUICK: bool>(&mut self, start: u64, pc: Option<u32>, ipl: u8) {
        if let Some(pc) = pc {
            let cycles = (self.c.cycles - start) as u32;
            if QUICK {
                self.b.instruction_quick(pc, cycles, self.c.cycles);
            } else {
                self.b.instruction(pc, cycles);
            }
        }
        // `boundary_quick`'s level is 0-7 already (its contract): one
        // instruction fewer on the common path.
        let ipl = if QUICK {
            debug_assert!(ipl <= 7, "boundary_quick's level {ipl}");
            ipl
        } else {
            ipl & 7
        };
        if ipl != self.c.ipl {
            if ipl == 7 {
                // Level 7 is edge-triggered (non-maskable).
                self.c.nmi_pending = true;
                self.c.attention = true;
            }
            self.c.ipl = ipl;
            if ipl > ((self.c.sr >> 8) & 7) as u8 {
                self.c.attention = true;
            }
        }
        // An unchanged level needs no test against the mask: `attention`
        // already holds for it (its invariant), and every change of the
        // mask goes through `Cpu::set_sr` or `set_registers`, which set
        // `attention`, so `attend` re-evaluates it at the next step. (A
        // pending NMI has already set `attention` too.)
    }
}
