//! Exception processing (68000 UM section 6 and table 8-14; sequences as
//! recorded by the single-step test collection).
//!
//! Group 0 (address/bus error): the aborted access takes its 4 cycles, then
//! 8 idle cycles, then a 7-word frame written in the order PC low, SR,
//! PC high, IR, access address low, special status word, access address
//! high; vector fetch (2 reads) and queue refill (read, 2 idle, read).
//! Groups 1/2: callers spend their idle time, then PC low, SR, PC high,
//! vector fetch, refill.

use crate::bus::{Bus, ExceptionKind, FunctionCode, IntAck, Observer};
use crate::core::{Ctx, Fault, R, S_BIT, T_BIT};

impl<B: Bus + Observer> Ctx<'_, B> {
    /// Enter supervisor mode for exception processing; returns the old SR.
    #[inline(always)]
    pub(crate) fn enter_supervisor(&mut self) -> u16 {
        let old = self.c.sr;
        self.set_sr((old | S_BIT) & !T_BIT);
        old
    }

    #[inline(always)]
    fn push_w(&mut self, off: u32, v: u16) -> R<()> {
        let a = self.c.a[7].wrapping_sub(off);
        self.ww_fc(a, v, FunctionCode::SupervisorData)
    }

    /// Read the handler address from `vector` and refill the queue there.
    fn vector_jump(&mut self, vector: u8) -> R<u32> {
        let va = vector as u32 * 4;
        let hi = self.rw_fc(va, FunctionCode::SupervisorData)? as u32;
        let lo = self.rw_fc(va + 2, FunctionCode::SupervisorData)? as u32;
        let h = hi << 16 | lo;
        self.c.pc = h;
        self.c.ird = self.rw_fc(h, FunctionCode::SupervisorProgram)?;
        self.idle(2);
        self.c.irc = self.rw_fc(h.wrapping_add(2), FunctionCode::SupervisorProgram)?;
        self.c.pc = h.wrapping_add(4);
        Ok(h)
    }

    /// Group 1/2 exception: push the 3-word frame (`pc`, old SR) and jump
    /// through `vector`. The caller has already spent any idle time.
    pub fn exception(&mut self, kind: ExceptionKind, vector: u8, pc: u32, start: u64) -> R<()> {
        let old = self.enter_supervisor();
        self.exception_frame(kind, vector, pc, old, start)
    }

    /// As [`Self::exception`], with supervisor mode already entered and the
    /// SR to push given.
    pub fn exception_frame(
        &mut self,
        kind: ExceptionKind,
        vector: u8,
        pc: u32,
        old: u16,
        start: u64,
    ) -> R<()> {
        // If this entry faults, the group-0 exception that follows is
        // reported with these cycles included.
        self.c.exc_start = start;
        self.push_w(2, pc as u16)?;
        self.push_w(6, old)?;
        self.push_w(4, (pc >> 16) as u16)?;
        self.c.a[7] = self.c.a[7].wrapping_sub(6);
        let h = self.vector_jump(vector)?;
        self.c.exc_start = u64::MAX;
        let cyc = (self.c.cycles - start) as u32;
        self.c.exc_cycles += cyc as u64;
        self.b.exception(kind, vector, h, cyc);
        Ok(())
    }

    /// The end of an instruction that took a group 1/2 exception (`r`:
    /// its entry): `Err(Fault)` with `exc_taken` set when the entry
    /// succeeded, so the run loop accounts for the entry's cycles on its
    /// error path, not on every instruction's (see `Ctx::instruction`).
    #[inline(always)]
    pub(crate) fn taken(&mut self, r: R<()>) -> R<()> {
        r?;
        self.c.exc_taken = true;
        Err(Fault)
    }

    /// An exception caused by the instruction itself (illegal, line A/F,
    /// privilege violation): 4 idle cycles, PC of the instruction pushed.
    /// Called before the instruction's first fetch (PC is 4 past it).
    pub fn illegal_exc(&mut self, kind: ExceptionKind, vector: u8) -> R<()> {
        self.c.no_trace = true;
        let start = self.c.cycles;
        self.idle(4);
        let pc = self.c.pc.wrapping_sub(4);
        let r = self.exception(kind, vector, pc, start);
        self.taken(r)
    }

    pub fn privilege(&mut self) -> R<()> {
        self.illegal_exc(ExceptionKind::PrivilegeViolation, 8)
    }

    /// Trace exception, taken before the next instruction.
    pub(crate) fn trace_exception(&mut self) {
        let start = self.c.cycles;
        self.idle(4);
        let pc = self.c.pc.wrapping_sub(4);
        if let Err(f) = self.exception(ExceptionKind::Trace, 9, pc, start) {
            self.group0(f);
        }
    }

    /// Interrupt entry for `level` (UM: 44 cycles).
    pub(crate) fn interrupt(&mut self, level: u8) {
        let start = self.c.cycles;
        self.c.exc_start = start;
        // STOP leaves PC and the queue as they were, PC then being the
        // address of the next instruction.
        let pc = if self.c.stopped {
            self.c.pc
        } else {
            self.c.pc.wrapping_sub(4)
        };
        self.c.stopped = false;
        let r = (|| -> R<()> {
            self.idle(6);
            let old = self.c.sr;
            self.set_sr(((old | S_BIT) & !T_BIT & 0xF8FF) | ((level as u16) << 8));
            self.push_w(2, pc as u16)?;
            let ack = self.b.interrupt_ack(level, self.c.cycles);
            self.idle(4);
            self.idle(4);
            let vector = match ack {
                IntAck::Autovector => 24 + level,
                IntAck::Vector(v) => v,
                IntAck::Spurious => 24,
            };
            self.push_w(6, old)?;
            self.push_w(4, (pc >> 16) as u16)?;
            self.c.a[7] = self.c.a[7].wrapping_sub(6);
            let h = self.vector_jump(vector)?;
            self.c.exc_start = u64::MAX;
            let cyc = (self.c.cycles - start) as u32;
            self.c.exc_cycles += cyc as u64;
            self.b
                .exception(ExceptionKind::Interrupt(level), vector, h, cyc);
            Ok(())
        })();
        if let Err(f) = r {
            self.group0(f);
        }
    }

    /// Power-on / RESET-pin exception.
    pub(crate) fn reset_exception(&mut self) {
        let start = self.c.cycles;
        self.set_sr(0x2700);
        let r = (|| -> R<()> {
            // UM table 8-14: the reset exception takes 40 cycles (6 reads).
            self.idle(14);
            let hi = self.rw_fc(0, FunctionCode::SupervisorProgram)? as u32;
            let lo = self.rw_fc(2, FunctionCode::SupervisorProgram)? as u32;
            self.c.a[7] = hi << 16 | lo;
            let hi = self.rw_fc(4, FunctionCode::SupervisorProgram)? as u32;
            let lo = self.rw_fc(6, FunctionCode::SupervisorProgram)? as u32;
            let h = hi << 16 | lo;
            self.c.pc = h;
            self.c.ird = self.read_prog(h)?;
            self.idle(2);
            self.c.irc = self.read_prog(h.wrapping_add(2))?;
            self.c.pc = h.wrapping_add(4);
            let cyc = (self.c.cycles - start) as u32;
            self.b.exception(ExceptionKind::Reset, 0, h, cyc);
            Ok(())
        })();
        if r.is_err() {
            self.halt();
        }
    }

    pub(crate) fn halt(&mut self) {
        self.c.halted = true;
        self.c.attention = true;
        self.b.halted(self.c.cycles);
    }

    /// Address or bus error: the 7-word group-0 frame. A fault while doing
    /// this is a double bus fault: the CPU halts.
    pub(crate) fn group0(&mut self, _: Fault) {
        let f = self.c.fault;
        // Include a group 1/2 entry that this fault interrupted.
        let start = self.c.exc_start.min(self.c.cycles);
        self.c.exc_start = u64::MAX;
        self.c.pi_reg = 0xFF;
        let pc = self
            .c
            .pc
            .wrapping_sub(2)
            .wrapping_add(self.c.ir.pc_adj as i32 as u32);
        // IR: the opcode of the instruction being executed.
        let ir = self.c.ir.op;
        let info = (ir & 0xFFE0)
            | if f.write { 0 } else { 0x10 }
            | if f.inst { 8 } else { 0 }
            | f.fc as u16;
        let kind = if f.bus_error {
            ExceptionKind::BusError
        } else {
            ExceptionKind::AddressError
        };
        let vector = if f.bus_error { 2 } else { 3 };
        let r = (|| -> R<u32> {
            self.idle(8);
            let old = self.enter_supervisor();
            self.push_w(2, pc as u16)?;
            self.push_w(6, old)?;
            self.push_w(4, (pc >> 16) as u16)?;
            self.push_w(8, ir)?;
            self.push_w(10, f.addr as u16)?;
            self.push_w(14, info)?;
            self.push_w(12, (f.addr >> 16) as u16)?;
            self.c.a[7] = self.c.a[7].wrapping_sub(14);
            self.vector_jump(vector)
        })();
        match r {
            Ok(h) => {
                let cyc = (self.c.cycles - start) as u32;
                self.c.exc_cycles += cyc as u64;
                self.b.exception(kind, vector, h, cyc);
            }
            Err(_) => {
                // Double bus fault: the time spent until the halt is still
                // reported (handler 0) so that every cycle is accounted for.
                let cyc = (self.c.cycles - start) as u32;
                self.c.exc_cycles += cyc as u64;
                self.b.exception(kind, vector, 0, cyc);
                self.halt();
            }
        }
    }
}
