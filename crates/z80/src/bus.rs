//! The bus the Z80 sees, the T-states of its machine cycles, and the
//! CPU-side access helpers (memory, I/O, opcode fetch, stack).

use crate::Z80;

/// T-states of a memory read or write machine cycle (Zilog UM0080: MRD/MWR
/// cycles are 3 T).
pub(crate) const T_MEM: u64 = 3;
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
}

impl Z80 {
    #[inline(always)]
    pub(crate) fn rd<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64, a: u16) -> u8 {
        *ts += T_MEM;
        bus.read(a, ts)
    }
    #[inline(always)]
    pub(crate) fn wr<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64, a: u16, v: u8) {
        *ts += T_MEM;
        bus.write(a, v, ts)
    }
    #[inline(always)]
    pub(crate) fn io_rd<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64, port: u16) -> u8 {
        *ts += T_IO;
        bus.read_io(port, ts)
    }
    #[inline(always)]
    pub(crate) fn io_wr<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64, port: u16, v: u8) {
        *ts += T_IO;
        bus.write_io(port, v, ts)
    }
    /// R increment (one per M1 cycle; the low 7 bits count, bit 7 stays).
    #[inline(always)]
    pub(crate) fn inc_r(&mut self) {
        self.rc = self.rc.wrapping_add(1);
    }
    /// M1: opcode fetch, R increment.
    #[inline(always)]
    pub(crate) fn fetch_op<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64) -> u8 {
        let pc = self.pc;
        self.pc = pc.wrapping_add(1);
        self.inc_r();
        *ts += T_M1;
        bus.fetch(pc, ts)
    }
    #[inline(always)]
    pub(crate) fn imm8<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64) -> u8 {
        let pc = self.pc;
        self.pc = pc.wrapping_add(1);
        self.rd(bus, ts, pc)
    }
    #[inline(always)]
    pub(crate) fn imm16<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64) -> u16 {
        let lo = self.imm8(bus, ts) as u16;
        let hi = self.imm8(bus, ts) as u16;
        (hi << 8) | lo
    }
    #[inline(always)]
    pub(crate) fn push<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64, v: u16) {
        self.sp = self.sp.wrapping_sub(1);
        self.wr(bus, ts, self.sp, (v >> 8) as u8);
        self.sp = self.sp.wrapping_sub(1);
        self.wr(bus, ts, self.sp, v as u8);
    }
    #[inline(always)]
    pub(crate) fn pop<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut u64) -> u16 {
        let lo = self.rd(bus, ts, self.sp) as u16;
        self.sp = self.sp.wrapping_add(1);
        let hi = self.rd(bus, ts, self.sp) as u16;
        self.sp = self.sp.wrapping_add(1);
        (hi << 8) | lo
    }
}
