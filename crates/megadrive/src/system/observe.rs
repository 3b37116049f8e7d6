//! The observer side of the bus: what the bus collects about each
//! instruction ([`Seam`]), the core's reports turned into [`MdObserver`]
//! events (the bus owns the observer: no shared cells), and breakpoints.

use retroprof_m68k::{Cpu, ExceptionKind, Observer, Stop};

use super::bus::Bus68k;
use super::{RecentPcs, RECENT_PCS};
use crate::observer::{InstrCost, MdObserver, PcSet, SystemView};
use crate::timing::{m68k_to_mclk, m68k_to_mclk32};

/// What the bus collects about the instruction in progress and the run,
/// as plain values: the bus owns the observer (`Bus68k` is both the
/// 68000's bus and its observer), so the cost parts reach the observer's
/// `instruction` report as values, with no shared cells.
pub(super) struct Seam {
    /// Cost parts (mclk) of the instruction in progress; `total` unused.
    pub(super) parts: InstrCost,
    /// Some part of `parts` may be non-zero.
    pub(super) pending: bool,
    /// Instructions executed since power-on; also the position of the
    /// next entry of `recent` (modulo its length).
    pub(super) instructions: u64,
    pub(super) error: Option<(ExceptionKind, u8)>,
    pub(super) halted: bool,
    pub(super) stop_on_error: bool,
    /// The last instruction addresses: entry `ring(i)` holds the PC of
    /// instruction number `i` for the last [`RECENT_PCS`] instructions,
    /// except those of `poll_run`. [`RING`] entries, more than are read:
    /// the index is the count's low byte, with no mask to apply.
    pub(super) recent: [u32; RING],
    /// The latest skipped polling passes, kept as their description: the
    /// instructions numbered `start..end` ran `pcs[(i - start) % 3]`. Their
    /// entries of `recent` are not written (`poll_passes` makes about 120
    /// reports a frame on an idling game, each as long as the ring or
    /// longer); [`Seam::recent_pcs`] reads them from here.
    pub(super) poll_run: PollRun,
}

/// Length of [`Seam::recent`]: 256, indexed by the low byte of the
/// instruction count (at least [`RECENT_PCS`]).
pub(super) const RING: usize = 256;
const _: () = assert!(RING >= RECENT_PCS && RING == u8::MAX as usize + 1);

/// Instructions `start..end` (numbers since power-on) were skipped polling
/// passes over the three PCs of `pcs`, starting with `pcs[0]`.
#[derive(Clone, Copy, Default)]
pub(super) struct PollRun {
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) pcs: [u32; 3],
}

impl PollRun {
    /// The PC of instruction `i`, if it is one of this run's.
    #[inline(always)]
    fn pc(&self, i: u64) -> Option<u32> {
        (self.start..self.end)
            .contains(&i)
            .then(|| self.pcs[((i - self.start) % 3) as usize])
    }
}

impl Default for Seam {
    fn default() -> Self {
        Seam {
            parts: InstrCost::default(),
            pending: false,
            instructions: 0,
            error: None,
            halted: false,
            stop_on_error: false,
            recent: [0; RING],
            poll_run: PollRun::default(),
        }
    }
}

impl Seam {
    /// Charge `cycles` 68000 cycles to one cost part (as mclk).
    #[inline(always)]
    pub(super) fn charge(&mut self, part: fn(&mut InstrCost) -> &mut u32, cycles: u32) {
        *part(&mut self.parts) += m68k_to_mclk32(cycles);
        self.pending = true;
    }

    /// The last instruction addresses, oldest first.
    pub(super) fn recent_pcs(&self) -> RecentPcs {
        let end = self.instructions;
        let n = end.min(RECENT_PCS as u64);
        RecentPcs(
            (end - n..end)
                .map(|i| self.poll_run.pc(i).unwrap_or(self.recent[Self::ring(i)]))
                .collect(),
        )
    }

    /// Address of the last instruction executed (`None` before the first).
    pub(super) fn last_pc(&self) -> Option<u32> {
        let i = self.instructions.checked_sub(1)?;
        Some(self.poll_run.pc(i).unwrap_or(self.recent[Self::ring(i)]))
    }

    /// `n` more instructions were skipped polling passes over `pcs`
    /// (starting with `pcs[0]`): kept as [`Seam::poll_run`]. The previous
    /// run's entries go into the ring first where they can still be among
    /// the last [`RECENT_PCS`] once the new run is over, i.e. when the new
    /// run is shorter than the ring.
    #[inline]
    pub(super) fn skipped(&mut self, pcs: &[u32; 3], n: u64) {
        let at = self.instructions;
        let old = self.poll_run;
        if n < RECENT_PCS as u64 && old.end > old.start {
            // Entries older than `at - RECENT_PCS` may have been overwritten
            // by later instructions (and are out of reach anyway).
            for i in old.start.max(at.saturating_sub(RECENT_PCS as u64))..old.end {
                self.recent[Self::ring(i)] = old.pcs[((i - old.start) % 3) as usize];
            }
        }
        self.poll_run = PollRun {
            start: at,
            end: at + n,
            pcs: *pcs,
        };
        self.instructions = at + n;
    }

    /// Index in `recent` of the entry of instruction number `i`.
    #[inline(always)]
    fn ring(i: u64) -> usize {
        i as u8 as usize
    }
}

/// The 68000's reports, in master clocks, with the cost parts the bus
/// collected for the instruction (as values), to the console's observer.
impl<O: MdObserver + ?Sized> Observer for Bus68k<'_, O> {
    #[inline(always)]
    fn instruction(&mut self, pc: u32, cycles: u32) {
        let seam = &mut self.hw.seam;
        seam.recent[Seam::ring(seam.instructions)] = pc;
        seam.instructions += 1;
        let total = m68k_to_mclk32(cycles);
        // Two calls, not one call with a merged `cost`: the observer's
        // `instruction` is inlined into each, and in the common one (no
        // part charged) its per-part sums of zero fold away.
        if seam.pending {
            seam.pending = false;
            let cost = InstrCost {
                total,
                ..std::mem::take(&mut seam.parts)
            };
            self.obs.instruction(pc, cost, &self.hw.clock);
        } else {
            let cost = InstrCost {
                total,
                ..InstrCost::default()
            };
            self.obs.instruction(pc, cost, &self.hw.clock);
        }
    }

    #[inline(always)]
    fn instruction_quick(&mut self, pc: u32, cycles: u32, now: u64) {
        // The boundary was `boundary_quick`'s, which left the time's store
        // to this report (one `hw` for both: the seam's stores need no
        // reload of it after that store). No cost part is pending: a part
        // charged during the instruction made its boundary slow
        // (`Hw::charge_access`), and the slow boundary's report takes them.
        let hw = &mut *self.hw;
        hw.clock.cpu_cycles = now;
        let seam = &mut hw.seam;
        seam.recent[Seam::ring(seam.instructions)] = pc;
        seam.instructions += 1;
        debug_assert!(!seam.pending, "a part pending at a quick boundary");
        let cost = InstrCost {
            total: m68k_to_mclk32(cycles),
            ..InstrCost::default()
        };
        self.obs.instruction(pc, cost, &hw.clock);
    }

    #[inline(always)]
    fn exception(&mut self, kind: ExceptionKind, vector: u8, handler: u32, cycles: u32) {
        let seam = &mut self.hw.seam;
        if seam.stop_on_error
            && matches!(
                kind,
                ExceptionKind::BusError
                    | ExceptionKind::AddressError
                    | ExceptionKind::IllegalInstruction
                    | ExceptionKind::LineA
                    | ExceptionKind::LineF
                    | ExceptionKind::PrivilegeViolation
            )
            && seam.error.is_none()
        {
            seam.error = Some((kind, vector));
        }
        self.obs.exception(
            kind,
            vector,
            handler,
            m68k_to_mclk32(cycles),
            &self.hw.clock,
        );
    }

    #[inline(always)]
    fn call(&mut self, from_pc: u32, target: u32, return_addr: u32, sp: u32) {
        self.obs.call(from_pc, target, return_addr, sp);
    }

    #[inline(always)]
    fn accepts_poll_passes(&mut self, pcs: &[u32; 3]) -> bool {
        self.obs.accepts_poll_passes(pcs)
    }

    fn poll_passes(&mut self, pcs: &[u32; 3], cycles: &[u64; 3], extra: &[u64; 3], passes: u64) {
        // The instructions the passes would have reported, as `instruction`
        // keeps them (the last RECENT_PCS PCs and the count), described in
        // one piece.
        self.hw.seam.skipped(pcs, 3 * passes);
        // The bus skips only passes whose boundary extras are refresh
        // penalties (`Bus68k::poll_skip`).
        self.obs.poll_passes(
            pcs,
            &cycles.map(m68k_to_mclk),
            &extra.map(m68k_to_mclk),
            passes,
            &self.hw.clock,
        );
    }

    #[inline(always)]
    fn ret(&mut self, from_pc: u32, target: u32, sp: u32) {
        self.obs.ret(from_pc, target, sp);
    }
}

impl<O: MdObserver + ?Sized> Bus68k<'_, O> {
    /// Run to `target_cycles` one instruction at a time, calling
    /// [`MdObserver::at_pc`] before the instructions at the addresses of
    /// `set` (once per arrival: an interrupt taken first returns to the
    /// same PC without a second report).
    pub(super) fn run_with_breakpoints(
        &mut self,
        cpu: &mut Cpu,
        set: &PcSet,
        target_cycles: u64,
    ) -> Stop {
        let mut reported: Option<u32> = None;
        let mut stop = Stop::Target;
        while cpu.cycles() < target_cycles {
            let regs = cpu.registers();
            let pc = regs.pc.wrapping_sub(4) & 0xFF_FFFF;
            if set.contains(pc) && reported != Some(pc) {
                self.hw.clock.cpu_cycles = cpu.cycles();
                self.hw.vdp.settle_fill(&self.hw.clock);
                let view = SystemView {
                    regs,
                    wram: &self.hw.wram,
                    vdp: &self.hw.vdp,
                    cart: &self.hw.cart,
                    clock: &self.hw.clock,
                };
                self.obs.at_pc(pc, &view);
                reported = Some(pc);
            }
            let before = self.hw.seam.instructions;
            if cpu.step_on(self) == 0 {
                stop = Stop::Halted;
                break;
            }
            // Forget the report once an instruction ran (an
            // interrupt taken first returns to the same PC).
            if self.hw.seam.instructions != before {
                reported = None;
            }
            if self.hw.seam.error.is_some() || self.hw.seam.halted {
                break;
            }
        }
        stop
    }
}
