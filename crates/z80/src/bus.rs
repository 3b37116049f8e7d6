//! The bus the Z80 sees, the T-states of its machine cycles, and the
//! CPU-side access helpers (memory, I/O, opcode fetch, stack).

use crate::Z80;

/// T-states of a memory read or write machine cycle (Zilog UM0080: MRD/MWR
/// cycles are 3 T).
pub const T_MEM: u64 = 3;
/// T-states of an opcode fetch (M1) cycle (Zilog UM0080: 4 T).
pub(crate) const T_M1: u64 = 4;
/// T-states of an I/O cycle (Zilog UM0080: 4 T including the automatic wait
/// state TW).
pub(crate) const T_IO: u64 = 4;
/// T-states of the interrupt-acknowledge M1 cycle in modes 0/1/2 (Young,
/// "Interrupts": M1 with two extra wait states, 7 T; IM 1 = 13 T, IM 2 = 19 T
/// in total).
pub(crate) const T_INT_ACK: u64 = 7;

/// What the Z80 sees around it. `t` is the CPU's T-state counter
/// ([`Z80::tstates`]) at the access, already including the machine cycle of
/// this access; the bus adds wait states by adding to it.
pub trait Bus {
    /// Memory read (MREQ, RD).
    fn read(&mut self, addr: u16, t: &mut u64) -> u8;
    /// Memory write (MREQ, WR).
    fn write(&mut self, addr: u16, value: u8, t: &mut u64);
    /// Two memory reads, of `addr` and then `addr + 1` (an immediate word,
    /// or a word popped from the stack), one machine cycle ([`T_MEM`]) each:
    /// `t` is the counter before the first cycle, and on return it includes
    /// both. By default the two [`Bus::read`]s, each at the T-state a
    /// single read would have; a bus may override it only with the same
    /// effect (the Mega Drive's: both bytes in Z80 RAM, one load).
    #[inline(always)]
    fn read_pair(&mut self, addr: u16, t: &mut u64) -> u16 {
        *t += T_MEM;
        let lo = self.read(addr, t);
        *t += T_MEM;
        let hi = self.read(addr.wrapping_add(1), t);
        u16::from_le_bytes([lo, hi])
    }
    /// Opcode fetch (M1); by default a plain read.
    #[inline(always)]
    fn fetch(&mut self, addr: u16, t: &mut u64) -> u8 {
        self.read(addr, t)
    }
    /// I/O read (IORQ, RD).
    #[inline(always)]
    fn read_io(&mut self, _port: u16, _t: &mut u64) -> u8 {
        0xFF
    }
    /// I/O write (IORQ, WR).
    #[inline(always)]
    fn write_io(&mut self, _port: u16, _value: u8, _t: &mut u64) {}
    /// Level of the /INT line (true = asserted).
    fn int_line(&self) -> bool;
    /// The byte at `addr` when fetching or reading it is plain memory: no
    /// side effect on the bus (its state, [`Bus::int_line`], any log) and
    /// no wait state; `None` otherwise. [`Z80::run_until`] uses it to pass
    /// over idle loops (`HALT`, `JR $`, `JP $`) without making those
    /// accesses one by one. By default nothing can be peeked (every access
    /// is made).
    #[inline(always)]
    fn peek(&self, _addr: u16) -> Option<u8> {
        None
    }
    /// Byte on the data bus during the interrupt acknowledge (IM 2 vector
    /// low byte). Mode 0 always executes `RST 38h`, i.e. assumes 0xFF.
    #[inline(always)]
    fn int_vector(&mut self) -> u8 {
        0xFF
    }
    /// `true` if [`Bus::int_line`] cannot change during one
    /// [`Z80::run_until`] or [`Z80::step`] call (no access of the CPU moves
    /// it; only the host between calls). Then the run loop looks at the line
    /// only when IFF1 or EI/DI/prefix state changes, not before every
    /// instruction. By default `false`: the line is read before every
    /// instruction while IFF1 is set.
    const INT_LINE_STEADY: bool = false;
}

/// What a run keeps apart from the register file, so that the compiler can
/// hold it in host registers (the register file stays in memory: the CB/ED
/// decoders index it at run time). R's counter is not here: incremented in
/// the register file (one read-modify-write per M1) it costs one host
/// instruction, in a host register three (the copies between the 256
/// handlers' registers) and one register the handlers then lack (#17,
/// crates/megadrive/README.md "The Z80's skeleton").
pub(crate) struct Hot {
    /// T-state counter ([`Z80::tstates`] during the run).
    pub(crate) t: u64,
    /// `false` only when the next step can neither take an interrupt nor
    /// have an EI/DI/prefix delay to end: IFF1 clear (or the line low on a
    /// bus with [`Bus::INT_LINE_STEADY`]) and no `int_blocked`. `true` is
    /// always safe (the step then checks as before); every write that sets
    /// IFF1 or `int_blocked` sets it.
    pub(crate) gate: bool,
    /// The call's end: [`Z80::run_until`]'s `until` (a step starts only
    /// while `t` is below it); 0 in [`Z80::step`]. Only the countdown-loop
    /// pass (`Z80::dec_a_loop`) reads it.
    pub(crate) until: u64,
}

impl Hot {
    /// The run state of `cpu` at the start of a call (the gate open unless
    /// IFF1 and `int_blocked` are both clear).
    #[inline(always)]
    pub(crate) fn of(cpu: &Z80, until: u64) -> Hot {
        Hot {
            t: cpu.tstates,
            gate: cpu.int_blocked || cpu.iff1,
            until,
        }
    }
    /// Back into `cpu` at the end of a call.
    #[inline(always)]
    pub(crate) fn store(self, cpu: &mut Z80) {
        cpu.tstates = self.t;
    }
    /// The next step must look at IFF1, `int_blocked` and the line.
    #[inline(always)]
    pub(crate) fn open_gate(&mut self) {
        self.gate = true;
    }
}

impl Z80 {
    #[inline(always)]
    pub(crate) fn rd<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut Hot, a: u16) -> u8 {
        ts.t += T_MEM;
        bus.read(a, &mut ts.t)
    }
    #[inline(always)]
    pub(crate) fn wr<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut Hot, a: u16, v: u8) {
        ts.t += T_MEM;
        bus.write(a, v, &mut ts.t)
    }
    #[inline(always)]
    pub(crate) fn io_rd<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut Hot, port: u16) -> u8 {
        ts.t += T_IO;
        bus.read_io(port, &mut ts.t)
    }
    #[inline(always)]
    pub(crate) fn io_wr<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut Hot, port: u16, v: u8) {
        ts.t += T_IO;
        bus.write_io(port, v, &mut ts.t)
    }
    /// M1: opcode fetch, R increment (one per M1 cycle; the low 7 bits
    /// count, bit 7 stays).
    #[inline(always)]
    pub(crate) fn fetch_op<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut Hot) -> u8 {
        let pc = self.pc;
        self.pc = pc.wrapping_add(1);
        self.rc = self.rc.wrapping_add(1);
        ts.t += T_M1;
        bus.fetch(pc, &mut ts.t)
    }
    #[inline(always)]
    pub(crate) fn imm8<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut Hot) -> u8 {
        let pc = self.pc;
        self.pc = pc.wrapping_add(1);
        self.rd(bus, ts, pc)
    }
    #[inline(always)]
    pub(crate) fn imm16<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut Hot) -> u16 {
        let pc = self.pc;
        self.pc = pc.wrapping_add(2);
        bus.read_pair(pc, &mut ts.t)
    }
    #[inline(always)]
    pub(crate) fn push<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut Hot, v: u16) {
        self.sp = self.sp.wrapping_sub(1);
        self.wr(bus, ts, self.sp, (v >> 8) as u8);
        self.sp = self.sp.wrapping_sub(1);
        self.wr(bus, ts, self.sp, v as u8);
    }
    #[inline(always)]
    pub(crate) fn pop<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut Hot) -> u16 {
        let sp = self.sp;
        self.sp = sp.wrapping_add(2);
        bus.read_pair(sp, &mut ts.t)
    }
}
