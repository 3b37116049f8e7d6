//! Stepping: interrupt acceptance, `step`/`run_until`, the idle-loop pass
//! and the DD/FD prefix chain.

use crate::bus::{Bus, Hot, T_INT_ACK, T_M1, T_MEM};
use crate::Z80;

impl Z80 {
    /// Accept the maskable interrupt (IFF1 set, /INT asserted).
    #[inline(always)]
    pub(crate) fn interrupt<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut Hot) {
        self.qs[crate::Q] = 0;
        if self.halted {
            self.halted = false;
            self.pc = self.pc.wrapping_add(1);
        }
        self.rc = self.rc.wrapping_add(1);
        self.iff1 = false;
        self.iff2 = false;
        // The acknowledge M1 cycle comes first, then the pushes (and in IM 2
        // the vector reads): Young, "Interrupts", and Zilog UM0080 figures
        // "Interrupt Request/Acknowledge Cycle" / "Mode 2 Interrupt".
        ts.t += T_INT_ACK;
        let pc = self.pc;
        if self.im == 2 {
            let v = bus.int_vector();
            self.push(bus, ts, pc);
            let a = ((self.i as u16) << 8) | v as u16;
            let lo = self.rd(bus, ts, a) as u16;
            let hi = self.rd(bus, ts, a.wrapping_add(1)) as u16;
            self.pc = (hi << 8) | lo;
        } else {
            // IM 0 with 0xFF on the data bus (the Mega Drive) is RST 38h,
            // same as IM 1.
            self.push(bus, ts, pc);
            self.pc = 0x0038;
        }
        self.memptr = self.pc;
    }

    /// One step: accept a pending interrupt if allowed, then execute one
    /// instruction (or one more prefix byte of a DD/FD chain).
    #[inline(always)]
    pub fn step<Bs: Bus>(&mut self, bus: &mut Bs) {
        let mut ts = Hot::of(self, 0);
        if !self.gated(bus, &mut ts) {
            self.exec_next(bus, &mut ts);
        }
        ts.store(self);
    }

    /// Fetch and execute the next instruction (the step's checks done).
    /// `ts` holds the T-state counter and the interrupt gate apart from the
    /// registers (see [`Hot`]): in `run_until` it is a local
    /// of its own, which the compiler keeps in host registers even though
    /// the rest of the register file stays in memory.
    #[inline(always)]
    pub(crate) fn exec_next<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut Hot) {
        let op = self.fetch_op(bus, ts);
        self.begin();
        self.exec_main::<0, Bs>(bus, ts, op);
    }

    /// The start of a step behind an open gate: the end of an EI/DI or
    /// prefix delay, or a pending interrupt to accept; the gate is set anew.
    /// Returns whether it made the step itself (a pending prefix).
    #[inline(always)]
    pub(crate) fn gated<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut Hot) -> bool {
        let pending;
        (*ts, pending) = self.gate_checks(bus, Hot { ..*ts });
        if pending {
            self.step_pending_prefix(bus, ts);
        }
        pending
    }

    /// [`Z80::gated`] but the pending prefix step: out of line and by value,
    /// so that the run loop's own path stays short and its counters stay in
    /// host registers.
    #[cold]
    #[inline(never)]
    fn gate_checks<Bs: Bus>(&mut self, bus: &mut Bs, mut ts: Hot) -> (Hot, bool) {
        if self.int_blocked {
            self.int_blocked = false;
            if self.prefix != 0 {
                ts.gate = self.int_possible(bus);
                return (ts, true);
            }
        } else if self.iff1 && bus.int_line() {
            self.interrupt(bus, &mut ts);
        }
        ts.gate = self.int_possible(bus);
        (ts, false)
    }

    /// The step after a DD/FD that was followed by another prefix: that
    /// prefix was fetched already.
    #[inline(always)]
    pub(crate) fn step_pending_prefix<Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut Hot) {
        let op = self.prefix;
        self.prefix = 0;
        self.begin();
        match op {
            0xDD => self.prefixed::<1, Bs>(bus, ts),
            0xFD => self.prefixed::<2, Bs>(bus, ts),
            _ => {
                let op2 = self.fetch_op(bus, ts);
                self.exec_ed(bus, ts, op2);
            }
        }
    }

    /// With `int_blocked` clear: could a step take an interrupt before
    /// IFF1 or `int_blocked` is written again? (On a bus whose line may
    /// change during a run: whenever IFF1 is set.)
    #[inline(always)]
    fn int_possible<Bs: Bus>(&self, bus: &Bs) -> bool {
        self.iff1 && (!Bs::INT_LINE_STEADY || bus.int_line())
    }

    /// Run steps until the T-state counter reaches `until`. The registers
    /// live in a local copy meanwhile, and the T-state counter and the
    /// interrupt gate in a local of their own (`Hot`): the copy stays
    /// in memory (the CB/ED decoders index the register file at run time, so
    /// LLVM cannot split it into scalars), the counters in host registers.
    ///
    /// A CPU that starts the call idle (halted, or on `JR $` / `JP $`) with
    /// no interrupt to accept and code the bus lets it [`Bus::peek`] jumps
    /// to the end of the call in one go: same T-states, R, MEMPTR and Q as
    /// stepping there (see `skip_idle`).
    #[inline]
    pub fn run_until<Bs: Bus>(&mut self, bus: &mut Bs, until: u64) {
        self.run_until_with(bus, until, true);
    }

    /// [`Z80::run_until`], looking for an idle loop at the start only if
    /// `idle_pass` is set. The pass is the same as stepping (see
    /// `skip_idle`), so leaving it out changes no result, only the time a
    /// call takes: a host that knows the CPU is busy (the Mega Drive's
    /// catch-up, when the last call did not end where it started) saves the
    /// look-up. Always inlined, so that the host's catch-up and the run
    /// are one function (no second prologue, register-file spill and call
    /// a run); [`Z80::run_until`] is the one out-of-line copy per bus.
    #[inline(always)]
    pub fn run_until_with<Bs: Bus>(&mut self, bus: &mut Bs, until: u64, idle_pass: bool) {
        let mut cpu = self.clone();
        if idle_pass && cpu.tstates < until {
            cpu.skip_idle(bus, until);
        }
        let mut ts = Hot::of(&cpu, until);
        while ts.t < ts.until {
            // Behind a shut gate (see `Hot::gate`) there is nothing to check.
            if ts.gate && cpu.gated(bus, &mut ts) {
                continue;
            }
            cpu.exec_next(bus, &mut ts);
        }
        ts.store(&mut cpu);
        *self = cpu;
    }

    /// Pass over the idle loop at PC up to `until`, if there is one:
    /// `HALT` while halted (each pass re-fetches the HALT opcode: one M1
    /// cycle, 4 T, Zilog UM0080), `JR $` (18 FE: 4 + 3 + 5 = 12 T, UM0080
    /// "JR e") or `JP $` (C3 nn with nn = PC: 4 + 3 + 3 = 10 T, UM0080
    /// "JP nn"). Only when stepping would take no interrupt (IFF1 clear or
    /// /INT high; the line cannot change during these passes since they make
    /// no bus access that has an effect) and no prefix or EI/DI delay is
    /// pending. Every pass starts as many T-states later as it lasts, so the
    /// steps that `run_until` would make are the passes starting before
    /// `until`: n = ceil((until - now) / period). Each pass has one M1 (R + 1),
    /// writes no flags (Q: 0, the previous Q moves to "last" once), and a
    /// jump sets MEMPTR to its target, PC itself.
    #[inline]
    pub(crate) fn skip_idle<Bs: Bus>(&mut self, bus: &mut Bs, until: u64) {
        if self.int_blocked || self.prefix != 0 || (self.iff1 && bus.int_line()) {
            return;
        }
        let pc = self.pc;
        let Some(op) = bus.peek(pc) else {
            return;
        };
        let period = if self.halted {
            if op != 0x76 {
                return;
            }
            T_M1
        } else if op == 0x18 && bus.peek(pc.wrapping_add(1)) == Some(0xFE) {
            T_M1 + T_MEM + 5
        } else if op == 0xC3
            && bus.peek(pc.wrapping_add(1)) == Some(pc as u8)
            && bus.peek(pc.wrapping_add(2)) == Some((pc >> 8) as u8)
        {
            T_M1 + 2 * T_MEM
        } else {
            return;
        };
        let n = (until - self.tstates).div_ceil(period);
        self.tstates += n * period;
        // R counts M1 cycles modulo 128 (bit 7 kept apart): adding n mod 256
        // to the counter is n single increments.
        self.rc = self.rc.wrapping_add(n as u8);
        self.qs = [if n == 1 { self.qs[crate::Q] } else { 0 }, 0];
        if !self.halted {
            self.memptr = pc;
        }
    }

    /// After a `DEC A` (at PC - 1) that left A non-zero, in front of
    /// `JR NZ,-3` (20 FD) back to it: the countdown loop SGDK's drivers
    /// wait with. Makes the loop's next whole iterations (the `JR` taken,
    /// 4 + 3 + 5 = 12 T, Zilog UM0080 "JR cc,e"; then `DEC A`, 4 T) in one
    /// go, as many as stepping would start before the call's end and while
    /// A stays non-zero before each `JR`; the last `JR` (A zero) and the
    /// iteration the call's end cuts are left to the steps. Only behind a
    /// shut gate (no interrupt can be taken, no EI/DI/prefix delay) and on
    /// code the bus lets it [`Bus::peek`] (no side effect, no wait state).
    /// Each iteration: R + 2 (two M1), MEMPTR the `JR`'s target, the `DEC`'s
    /// flags (C kept), Q the `DEC`'s flags with the `JR`'s 0 before them.
    /// The counter goes in and out by value (`t`, returned), so that the
    /// run's stays in a host register.
    #[inline(never)]
    pub(crate) fn dec_a_loop<Bs: Bus>(&mut self, bus: &mut Bs, t: u64, until: u64) -> u64 {
        let pc = self.pc;
        if t + 12 >= until
            || bus.peek(pc) != Some(0x20)
            || bus.peek(pc.wrapping_add(1)) != Some(0xFD)
            || bus.peek(pc.wrapping_sub(1)) != Some(0x3D)
        {
            return t;
        }
        let a = self.reg[crate::registers::A];
        // Iteration j starts its JR at t + 16 j and its DEC at t + 16 j + 12;
        // both must start before `until`, and A (a - j) be non-zero.
        let k = (until - t - 12).div_ceil(16).min(a as u64);
        let a_new = a - k as u8;
        self.reg[crate::registers::A] = a_new;
        let f = (self.reg[crate::registers::F] & crate::flags::FLAG_C)
            | crate::flags::DEC_FLAGS[a_new.wrapping_add(1) as usize];
        self.reg[crate::registers::F] = f;
        self.qs = [0, f];
        self.rc = self.rc.wrapping_add((2 * k) as u8);
        self.memptr = pc.wrapping_sub(1);
        t + 16 * k
    }

    /// Start of an instruction: Q moves to "previous", the new Q is 0
    /// until the instruction writes the flags.
    #[inline(always)]
    pub(crate) fn begin(&mut self) {
        // [last Q, Q] little-endian: shifting right by 8 moves Q to last
        // Q and clears Q.
        self.qs = (u16::from_le_bytes(self.qs) >> 8).to_le_bytes();
    }

    /// After a DD (P = 1) or FD (P = 2) prefix; `begin` has run.
    #[inline(always)]
    pub(crate) fn prefixed<const P: u8, Bs: Bus>(&mut self, bus: &mut Bs, ts: &mut Hot) {
        let op = self.fetch_op(bus, ts);
        match op {
            // Another prefix: the first one acted as a 4 T no-op; no
            // interrupt is accepted in between (Young, "DD and FD prefixes").
            // No instruction ran: Q is as before.
            0xDD | 0xFD | 0xED => {
                self.prefix = op;
                self.int_blocked = true;
                ts.open_gate();
                self.qs[crate::Q] = self.qs[crate::LAST_Q];
            }
            0xCB => self.exec_xycb::<P, Bs>(bus, ts),
            _ => self.exec_main::<P, Bs>(bus, ts, op),
        }
    }
}
