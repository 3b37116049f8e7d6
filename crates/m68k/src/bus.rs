//! The contract between the 68000 core and the machine around it.
//!
//! The core is generic over [`Bus`] and [`Observer`]; both are monomorphised,
//! so a no-op observer compiles to nothing. Times are in 68000 clock cycles
//! counted from the core's creation (`u64`, never wraps in practice). A bus
//! access starts at the time given in `now`; a normal access takes 4 cycles,
//! and the bus may ask for more by returning a wait (extra cycles), which the
//! core adds before its next bus activity, so later accesses in the same
//! instruction see the right time.
//!
//! This file is the interface the Mega Drive crate and the conformance
//! runner build on. Methods may be added with default bodies; existing ones
//! are not renamed.

use std::sync::Arc;

/// 68000 function codes (FC2..FC0) as they appear on the bus.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum FunctionCode {
    UserData = 1,
    UserProgram = 2,
    SupervisorData = 5,
    SupervisorProgram = 6,
    InterruptAck = 7,
}

/// Result of a bus read: the value and the extra wait cycles the bus imposed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Read<T> {
    pub data: T,
    /// Extra cycles beyond the normal 4-cycle bus cycle (wait states).
    pub wait: u32,
    /// The bus asserted BERR: the core takes a bus error exception.
    pub bus_error: bool,
}

impl<T> Read<T> {
    #[inline(always)]
    pub fn ok(data: T) -> Self {
        Read {
            data,
            wait: 0,
            bus_error: false,
        }
    }
}

/// Result of a bus write: extra wait cycles, bus error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Write {
    pub wait: u32,
    pub bus_error: bool,
}

impl Write {
    pub const OK: Write = Write {
        wait: 0,
        bus_error: false,
    };
}

/// Code the core may fetch without asking the bus ([`Bus::fetch_window`]):
/// `words[i]` is the word at address `base + 2 * i`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchWindow {
    /// Address (24-bit, even) of `words[0]`.
    pub base: u32,
    pub words: Arc<[u16]>,
}

/// Answer to an interrupt acknowledge cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntAck {
    /// VPA asserted: vector 24 + level.
    Autovector,
    /// A device put a vector number on the bus.
    Vector(u8),
    /// BERR during acknowledge: spurious interrupt (vector 24).
    Spurious,
}

/// What the host tells the core at each instruction boundary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Boundary {
    /// Extra cycles to charge before the next instruction (e.g. DRAM refresh
    /// delay, or time the CPU was frozen by the host). Charged to the
    /// instruction just finished.
    pub extra: u32,
    /// Current interrupt priority level on IPL0-2 (0 = none, 7 = NMI).
    pub ipl: u8,
}

/// The machine seen by the 68000. Addresses are 24-bit (the core masks).
/// Word accesses are always to even addresses (the core raises address
/// errors itself before touching the bus).
pub trait Bus {
    fn read_byte(&mut self, addr: u32, fc: FunctionCode, now: u64) -> Read<u8>;
    fn read_word(&mut self, addr: u32, fc: FunctionCode, now: u64) -> Read<u16>;
    fn write_byte(&mut self, addr: u32, data: u8, fc: FunctionCode, now: u64) -> Write;
    fn write_word(&mut self, addr: u32, data: u16, fc: FunctionCode, now: u64) -> Write;

    /// Called at every instruction boundary (before the next instruction
    /// starts, and before interrupts are sampled). Monomorphised: keep it
    /// cheap. Default: no extra cycles, no interrupt.
    #[inline(always)]
    fn boundary(&mut self, _now: u64) -> Boundary {
        Boundary::default()
    }

    /// The common case of [`Bus::boundary`], asked first at every
    /// instruction boundary: `Some(ipl)` when the boundary at `now` has
    /// nothing to do (what `boundary` would do then, done, and it would
    /// return no extra cycles and this interrupt level); `None`: the core
    /// calls `boundary`. Lets a host whose boundary is usually one compare
    /// keep that case apart from the one that charges cycles (the core then
    /// neither adds nor stores the time). The core reports the instruction
    /// of a `Some` boundary with [`Observer::instruction_quick`] at once, so
    /// a host that is its own observer may leave part of the boundary's
    /// work to that report. The level is 0-7 (the core does not mask it, as
    /// it masks [`Boundary::ipl`]). Default: `None`.
    #[inline(always)]
    fn boundary_quick(&mut self, _now: u64) -> Option<u8> {
        None
    }

    /// Interrupt acknowledge for `level` (1-7). Default: autovector.
    #[inline(always)]
    fn interrupt_ack(&mut self, _level: u8, _now: u64) -> IntAck {
        IntAck::Autovector
    }

    /// The RESET instruction asserted the RESET line.
    #[inline(always)]
    fn reset_instruction(&mut self, _now: u64) {}

    /// Whether TAS writes its result back (false on the Mega Drive, whose
    /// bus arbiter ignores the read-modify-write cycle's write).
    #[inline(always)]
    fn tas_writeback(&self) -> bool {
        true
    }

    /// The core detected an address error on an access it was about to make
    /// (odd address for a word/long access): the real chip starts the bus
    /// cycle without asserting AS. Nothing is read or written; this exists
    /// so that a recording bus (the conformance runner) sees the attempt.
    #[inline(always)]
    fn address_error(&mut self, _addr: u32, _fc: FunctionCode, _is_write: bool, _now: u64) {}

    /// The CPU halted (double bus fault). It stays halted until reset.
    #[inline(always)]
    fn halted(&mut self, _now: u64) {}

    /// While the CPU is stopped (STOP instruction) nothing happens on its
    /// side until an interrupt: the core asks the bus for the earliest time
    /// at which the interrupt level may change and jumps there instead of
    /// spinning. Default: `u64::MAX`, "not known" (the core then jumps to the
    /// run target of `run_until`, or advances 4 cycles per `step`).
    #[inline(always)]
    fn next_event(&mut self, _now: u64) -> u64 {
        u64::MAX
    }

    /// For the program-fetch fast path: addresses where, for the whole of
    /// one [`crate::Cpu::run_until`] / [`crate::Cpu::run_on`] call, every
    /// instruction-stream fetch (program space, either function code)
    /// returns the window's word, takes no wait state and has no effect
    /// other than the one [`Bus::window_fetch`] reproduces. The core asks
    /// once per call and then serves such fetches itself: a bounds test
    /// and a load, no address decoding (4 cycles each, as on the bus).
    /// Other accesses to those addresses (data reads, writes, PC-relative
    /// operand reads) still go to the bus. Windows reaching past 16 MB are
    /// ignored. Default: `None` (every fetch goes to the bus).
    #[inline(always)]
    fn fetch_window(&mut self) -> Option<FetchWindow> {
        None
    }

    /// A fetch of `word` at `addr` (in space `fc`, starting at `now`) was
    /// served from the [`Bus::fetch_window`]: a bus with a latch of the
    /// last word read (open bus) stores it here. Default: nothing.
    #[inline(always)]
    fn window_fetch(&mut self, _addr: u32, _word: u16, _fc: FunctionCode, _now: u64) {}

    /// Two fetches served from the [`Bus::fetch_window`] one after the
    /// other (a jump's queue refill): `w0` at `addr` starting at `now`,
    /// then `w1` at `addr + 2` at `now + 4`. Default: [`Bus::window_fetch`]
    /// for each, in that order.
    #[inline(always)]
    fn window_fetch_pair(&mut self, addr: u32, w0: u16, w1: u16, fc: FunctionCode, now: u64) {
        self.window_fetch(addr, w0, fc, now);
        self.window_fetch(addr.wrapping_add(2), w1, fc, now + 4);
    }

    /// A long (two-word) data read at even `addr` (24-bit, in space `fc`)
    /// as one call: `Some(value)` only when the two word reads
    /// ([`Bus::read_word`] at `addr` from `now`, then at `addr + 2` (24-bit)
    /// from `now + 4`) would take no wait state, raise no bus error and
    /// have no effect besides what this call does; the core then charges
    /// the two bus cycles (8 cycles) itself. `None` (nothing done): the core
    /// makes the two word reads. Default: `None`.
    #[inline(always)]
    fn read_long_plain(&mut self, _addr: u32, _fc: FunctionCode, _now: u64) -> Option<u32> {
        None
    }

    /// A long data write of `data` at even `addr` (24-bit, in space `fc`) as
    /// one call: the two word writes ([`Bus::write_word`]) are the high
    /// word at `addr` from `now` then the low word at `addr + 2` (24-bit)
    /// from `now + 4`, or with `low_first` (predecrement destinations) the
    /// low word at `addr + 2` from `now` then the high word at `addr` from
    /// `now + 4`. `true` when it was done with the effect of those two
    /// writes and they would take no wait state and raise no bus error;
    /// `false` (nothing done): the core makes the two word writes.
    /// Default: `false`.
    #[inline(always)]
    fn write_long_plain(
        &mut self,
        _addr: u32,
        _data: u32,
        _low_first: bool,
        _fc: FunctionCode,
        _now: u64,
    ) -> bool {
        false
    }

    /// For the polling-loop fast path (`poll.rs`): the word an instruction
    /// fetch at `addr` returns, if such fetches take no wait states and
    /// have no side effect that the next fetch would not overwrite; `None`
    /// otherwise. The core then runs loops made of such code without
    /// fetching it again each pass. Default: `None` (no fast path).
    #[inline(always)]
    fn program_word(&mut self, _addr: u32) -> Option<u16> {
        None
    }

    /// For the polling-loop fast path: perform the data read of `size`
    /// bytes (1 or 2) at `addr` at time `now` and return its value, but
    /// only if it takes no wait states and reading it again and again has
    /// no effect beyond what one read has (counters aside); otherwise do
    /// nothing and return `None`, and the core makes the read on its
    /// normal path. `bus_word` is the last word the CPU fetched before the
    /// read, for buses that return it in bits nothing drives.
    /// Default: `None`.
    #[inline(always)]
    fn poll_read(
        &mut self,
        _addr: u32,
        _size: u32,
        _fc: FunctionCode,
        _now: u64,
        _bus_word: u16,
    ) -> Option<u32> {
        None
    }

    /// For the polling-loop fast path: skip whole passes of the loop
    /// described by `pass`, the first starting at `now` (the head's MOVE
    /// about to run). The bus may answer `passes > 0` only if running those
    /// passes one by one would have: every read of `pass.addr` give
    /// `pass.continue_if` in bit `pass.bit` and no effect beyond what one
    /// read has (counters aside, which the bus updates itself); every
    /// instruction boundary charge no extra cycles other than those the bus
    /// returns in `extra` (summed per instruction of the pass) and leave
    /// the interrupt level as it is; and every boundary end before `limit`
    /// (the fast path would stop there). It then updates its own state as
    /// the skipped boundaries would have, and the core continues at `end`.
    /// The bus may itself make the observer reports of passes it skipped
    /// before the last `passes` ones (the same reports, in the same order,
    /// as running those passes would have made); the core reports the last
    /// `passes`, and continues at `end` even when `passes` is 0.
    /// Default: skip nothing.
    #[inline(always)]
    fn poll_skip(&mut self, _pass: &PollPass, now: u64, _limit: u64) -> PollSkip {
        PollSkip::none(now)
    }
}

/// One pass of a polling loop `MOVE <ea>,Dn; BTST #bit,Dn; Bcc head`, as
/// the fast path describes it to [`Bus::poll_skip`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PollPass {
    /// Addresses of the pass's three instructions (MOVE, BTST, Bcc).
    pub pcs: [u32; 3],
    /// Address (24-bit) and size in bytes (1 or 2) of the data read.
    pub addr: u32,
    pub size: u32,
    /// The bit tested, and its value that keeps the loop going.
    pub bit: u32,
    pub continue_if: bool,
    /// Cycles from the start of the pass to the start of the data read.
    pub read_offset: u64,
    /// Cycles of the pass's three instructions, without boundary extras.
    pub cycles: [u64; 3],
}

/// What [`Bus::poll_skip`] skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PollSkip {
    pub passes: u64,
    /// Time at the end of the last skipped pass (after its extras).
    pub end: u64,
    /// Boundary extra cycles charged to each instruction of the pass,
    /// summed over the skipped passes.
    pub extra: [u64; 3],
}

impl PollSkip {
    /// Nothing skipped.
    #[inline(always)]
    pub fn none(now: u64) -> Self {
        PollSkip {
            passes: 0,
            end: now,
            extra: [0; 3],
        }
    }
}

/// Kinds of exception the observer is told about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExceptionKind {
    Reset,
    BusError,
    AddressError,
    IllegalInstruction,
    ZeroDivide,
    Chk,
    Trapv,
    PrivilegeViolation,
    Trace,
    LineA,
    LineF,
    /// Interrupt at this level (1-7).
    Interrupt(u8),
    /// TRAP #n.
    Trap(u8),
}

/// A profiler's view of the core. Every method has an empty default body;
/// the unit type `()` implements it as a no-op, which compiles to nothing.
pub trait Observer {
    /// An instruction that started at `pc` finished; `cycles` is its full
    /// cost including bus waits and the boundary's `extra` cycles.
    #[inline(always)]
    fn instruction(&mut self, _pc: u32, _cycles: u32) {}

    /// [`Observer::instruction`] for an instruction whose boundary at `now`
    /// was [`Bus::boundary_quick`]'s (it returned `Some`): the core calls it
    /// right after that answer, so a host that is both the bus and the
    /// observer may finish the quick boundary here and rely on what it saw
    /// then. Default: `instruction(pc, cycles)`.
    #[inline(always)]
    fn instruction_quick(&mut self, pc: u32, cycles: u32, _now: u64) {
        self.instruction(pc, cycles)
    }

    /// Exception processing (including interrupt entry) for `kind` through
    /// `vector` took `cycles`; execution continues at `handler`.
    #[inline(always)]
    fn exception(&mut self, _kind: ExceptionKind, _vector: u8, _handler: u32, _cycles: u32) {}

    /// JSR/BSR from the instruction at `from_pc` to `target`; `return_addr`
    /// was pushed at `sp` (the new stack pointer).
    #[inline(always)]
    fn call(&mut self, _from_pc: u32, _target: u32, _return_addr: u32, _sp: u32) {}

    /// RTS/RTR/RTE at `from_pc` returning to `target`; `sp` is the stack
    /// pointer after the return.
    #[inline(always)]
    fn ret(&mut self, _from_pc: u32, _target: u32, _sp: u32) {}

    /// Whether this observer takes the instructions of skipped polling-loop
    /// passes at `pcs` as one [`Observer::poll_passes`] report instead of
    /// one [`Observer::instruction`] call each. Default: false (the fast
    /// path then runs every pass and reports every instruction).
    #[inline(always)]
    fn accepts_poll_passes(&mut self, _pcs: &[u32; 3]) -> bool {
        false
    }

    /// `passes` passes of the polling loop whose instructions are at `pcs`
    /// ran; `cycles[i]` is the instruction at `pcs[i]`'s full cost summed
    /// over the passes, of which `extra[i]` were boundary extras. Called
    /// only when [`Observer::accepts_poll_passes`] said yes for `pcs`.
    #[inline(always)]
    fn poll_passes(
        &mut self,
        _pcs: &[u32; 3],
        _cycles: &[u64; 3],
        _extra: &[u64; 3],
        _passes: u64,
    ) {
    }
}

impl Observer for () {
    #[inline(always)]
    fn accepts_poll_passes(&mut self, _pcs: &[u32; 3]) -> bool {
        true
    }
}

/// A bus and a separate observer as one host for [`crate::Cpu::run_on`]
/// (what [`crate::Cpu::run_until`] and [`crate::Cpu::step`] run against):
/// every [`Bus`] method goes to `bus`, every [`Observer`] method to `obs`.
/// A host that owns its observer (the Mega Drive console) implements both
/// traits itself instead.
pub struct WithObserver<'a, B: ?Sized, O: ?Sized> {
    pub bus: &'a mut B,
    pub obs: &'a mut O,
}

impl<B: Bus + ?Sized, O: ?Sized> Bus for WithObserver<'_, B, O> {
    #[inline(always)]
    fn read_byte(&mut self, addr: u32, fc: FunctionCode, now: u64) -> Read<u8> {
        self.bus.read_byte(addr, fc, now)
    }
    #[inline(always)]
    fn read_word(&mut self, addr: u32, fc: FunctionCode, now: u64) -> Read<u16> {
        self.bus.read_word(addr, fc, now)
    }
    #[inline(always)]
    fn write_byte(&mut self, addr: u32, data: u8, fc: FunctionCode, now: u64) -> Write {
        self.bus.write_byte(addr, data, fc, now)
    }
    #[inline(always)]
    fn write_word(&mut self, addr: u32, data: u16, fc: FunctionCode, now: u64) -> Write {
        self.bus.write_word(addr, data, fc, now)
    }
    #[inline(always)]
    fn boundary(&mut self, now: u64) -> Boundary {
        self.bus.boundary(now)
    }
    #[inline(always)]
    fn boundary_quick(&mut self, now: u64) -> Option<u8> {
        self.bus.boundary_quick(now)
    }
    #[inline(always)]
    fn interrupt_ack(&mut self, level: u8, now: u64) -> IntAck {
        self.bus.interrupt_ack(level, now)
    }
    #[inline(always)]
    fn reset_instruction(&mut self, now: u64) {
        self.bus.reset_instruction(now)
    }
    #[inline(always)]
    fn tas_writeback(&self) -> bool {
        self.bus.tas_writeback()
    }
    #[inline(always)]
    fn address_error(&mut self, addr: u32, fc: FunctionCode, is_write: bool, now: u64) {
        self.bus.address_error(addr, fc, is_write, now)
    }
    #[inline(always)]
    fn halted(&mut self, now: u64) {
        self.bus.halted(now)
    }
    #[inline(always)]
    fn next_event(&mut self, now: u64) -> u64 {
        self.bus.next_event(now)
    }
    #[inline(always)]
    fn fetch_window(&mut self) -> Option<FetchWindow> {
        self.bus.fetch_window()
    }
    #[inline(always)]
    fn window_fetch(&mut self, addr: u32, word: u16, fc: FunctionCode, now: u64) {
        self.bus.window_fetch(addr, word, fc, now)
    }
    #[inline(always)]
    fn window_fetch_pair(&mut self, addr: u32, w0: u16, w1: u16, fc: FunctionCode, now: u64) {
        self.bus.window_fetch_pair(addr, w0, w1, fc, now)
    }
    #[inline(always)]
    fn read_long_plain(&mut self, addr: u32, fc: FunctionCode, now: u64) -> Option<u32> {
        self.bus.read_long_plain(addr, fc, now)
    }
    #[inline(always)]
    fn write_long_plain(
        &mut self,
        addr: u32,
        data: u32,
        low_first: bool,
        fc: FunctionCode,
        now: u64,
    ) -> bool {
        self.bus.write_long_plain(addr, data, low_first, fc, now)
    }
    #[inline(always)]
    fn program_word(&mut self, addr: u32) -> Option<u16> {
        self.bus.program_word(addr)
    }
    #[inline(always)]
    fn poll_read(
        &mut self,
        addr: u32,
        size: u32,
        fc: FunctionCode,
        now: u64,
        bus_word: u16,
    ) -> Option<u32> {
        self.bus.poll_read(addr, size, fc, now, bus_word)
    }
    #[inline(always)]
    fn poll_skip(&mut self, pass: &PollPass, now: u64, limit: u64) -> PollSkip {
        self.bus.poll_skip(pass, now, limit)
    }
}

impl<B: ?Sized, O: Observer + ?Sized> Observer for WithObserver<'_, B, O> {
    #[inline(always)]
    fn instruction(&mut self, pc: u32, cycles: u32) {
        self.obs.instruction(pc, cycles)
    }
    #[inline(always)]
    fn instruction_quick(&mut self, pc: u32, cycles: u32, _now: u64) {
        // The quick boundary was `bus`'s, not `obs`'s.
        self.obs.instruction(pc, cycles)
    }
    #[inline(always)]
    fn exception(&mut self, kind: ExceptionKind, vector: u8, handler: u32, cycles: u32) {
        self.obs.exception(kind, vector, handler, cycles)
    }
    #[inline(always)]
    fn call(&mut self, from_pc: u32, target: u32, return_addr: u32, sp: u32) {
        self.obs.call(from_pc, target, return_addr, sp)
    }
    #[inline(always)]
    fn ret(&mut self, from_pc: u32, target: u32, sp: u32) {
        self.obs.ret(from_pc, target, sp)
    }
    #[inline(always)]
    fn accepts_poll_passes(&mut self, pcs: &[u32; 3]) -> bool {
        self.obs.accepts_poll_passes(pcs)
    }
    #[inline(always)]
    fn poll_passes(&mut self, pcs: &[u32; 3], cycles: &[u64; 3], extra: &[u64; 3], passes: u64) {
        self.obs.poll_passes(pcs, cycles, extra, passes)
    }
}
