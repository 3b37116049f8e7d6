//! The fast path for polling loops.
//!
//! Games spend most of their idle time in loops such as SGDK's wait for
//! VBlank:
//!
//! ```text
//! loop: move.w  $C00004,d1     ; read a status port
//!       btst    #3,d1          ; test one bit
//!       beq.s   loop           ; until it changes
//! ```
//!
//! Executed normally, each pass decodes three instructions and makes six
//! program fetches and one data read. This module runs such a loop without
//! the decoder: per pass it performs the data read through
//! [`Bus::poll_read`], applies the three instructions' register effects and
//! charges their documented cycle counts, and still calls [`Bus::boundary`]
//! and the observer after every instruction, exactly as the normal path does.
//! So the bus sees the same data reads at the same times, every boundary
//! (refresh, line events, interrupt level) happens at the same time, and the
//! observer gets the same instruction reports; only the program fetches of
//! the loop's fixed code are not repeated, which is why the bus must vouch
//! for them ([`Bus::program_word`]: no wait states, no side effects a later
//! fetch would not overwrite). Any instruction boundary can end the fast
//! path (an interrupt becomes due, the run target is reached, the bus
//! declines a read, or the tested bit says the loop exits) with the CPU in
//! exactly the state the normal path would have left; the normal path then
//! continues.
//!
//! Skipping passes: at each pass start the core may ask the bus to skip
//! whole passes ([`Bus::poll_skip`]) when the observer takes them as one
//! report ([`Observer::accepts_poll_passes`]). The bus answers only for
//! passes whose reads it knows (same tested bit, no side effect) and whose
//! boundaries it can account for itself; the registers are not updated for
//! skipped passes because the pass that follows (always run normally)
//! overwrites everything a pass changes.
//!
//! Cycle counts: 68000 User's Manual, tables 8-4 (MOVE), 8-10 (BTST #,Dn:
//! 10) and 8-9 (Bcc taken: 10). Bus order (the conformance tests'): the
//! source's extension words are fetched first, 4 cycles each, then the
//! operand is read, then the next instruction's opcode is prefetched.

use crate::bus::{Bus, Observer, PollPass};
use crate::core::{Ctx, Z};

/// `poll_head` value meaning "no candidate".
pub(crate) const NO_POLL: u32 = u32::MAX;
/// Smallest 8-bit branch displacement (as u8) that may close a polling
/// loop: -16 bytes (the longest loop handled is 12 bytes).
pub(crate) const MIN_D8: u8 = 0xF0;

/// BTST #n,Dn: 68000 UM table 8-10.
const BTST_IMM_DN_CYCLES: u64 = 10;
/// Bcc.B taken: 68000 UM table 8-9.
const BCC_TAKEN_CYCLES: u64 = 10;

/// A recognised loop `MOVE.<b|w> <ea>,Dn ; BTST #n,Dn ; B<eq|ne>.s head`.
struct PollLoop {
    head: u32,
    /// Code words from `head` up to and including the word after the Bcc.
    words: [u16; 7],
    /// Bytes of the MOVE instruction (2, 4 or 6).
    move_len: u32,
    /// Source extension words (0-2): the operand read starts 4 cycles
    /// after each.
    ext: u32,
    /// Operand address (24-bit).
    addr: u32,
    /// Operand size in bytes (1 or 2).
    size: u32,
    dn: usize,
    bit: u32,
    /// The loop continues while the tested bit is 0 (BEQ) or 1 (BNE).
    while_zero: bool,
}

impl<B: Bus + Observer> Ctx<'_, B> {
    /// Recognise the loop at `head`, reading its code through
    /// [`Bus::program_word`].
    fn poll_analyse(&mut self, head: u32) -> Option<PollLoop> {
        if head & 1 != 0 {
            return None;
        }
        let w0 = self.b.program_word(head & 0xFF_FFFF)?;
        // MOVE.B (01) / MOVE.W (11) with a data-register destination.
        let size = match w0 >> 12 {
            1 => 1,
            3 => 2,
            _ => return None,
        };
        if (w0 >> 6) & 7 != 0 {
            return None;
        }
        let dn = ((w0 >> 9) & 7) as usize;
        let (mode, reg) = ((w0 >> 3) & 7, (w0 & 7) as usize);
        let ext = match (mode, reg) {
            (2, _) => 0,          // (An)
            (5, _) | (7, 0) => 1, // (d16,An), abs.W
            (7, 1) => 2,          // abs.L
            _ => return None,
        };
        let move_len = 2 + 2 * ext;
        let mut words = [0u16; 7];
        let n = (move_len / 2 + 4) as usize;
        for (i, w) in words.iter_mut().enumerate().take(n) {
            *w = self
                .b
                .program_word(head.wrapping_add(2 * i as u32) & 0xFF_FFFF)?;
        }
        let m = (move_len / 2) as usize;
        // BTST #n,Dn on the same register.
        if words[m] != 0x0800 | dn as u16 {
            return None;
        }
        let bit = (words[m + 1] & 31) as u32;
        // BEQ.s / BNE.s back to the head.
        let bcc = words[m + 2];
        let while_zero = match bcc >> 8 {
            0x67 => true,
            0x66 => false,
            _ => return None,
        };
        let bcc_at = head.wrapping_add(move_len + 4);
        if bcc_at
            .wrapping_add(2)
            .wrapping_add(bcc as u8 as i8 as i32 as u32)
            != head
        {
            return None;
        }
        let addr = match (mode, ext) {
            (2, _) => self.c.a[reg],
            (5, _) => self.c.a[reg].wrapping_add(words[1] as i16 as i32 as u32),
            (_, 1) => words[1] as i16 as i32 as u32,
            _ => (words[1] as u32) << 16 | words[2] as u32,
        } & 0xFF_FFFF;
        if size == 2 && addr & 1 != 0 {
            return None;
        }
        Some(PollLoop {
            head,
            words,
            move_len,
            ext,
            addr,
            size,
            dn,
            bit,
            while_zero,
        })
    }

    /// Run the polling loop at `head` (the next instruction) until one of
    /// its instruction boundaries needs the normal path; see the module
    /// documentation. Returns true when it ran at least one instruction.
    #[inline(never)]
    pub(crate) fn poll_loop(&mut self, head: u32, target: u64) -> bool {
        let Some(l) = self.poll_analyse(head) else {
            self.c.poll_reject = head;
            return false;
        };
        let btst_at = l.head.wrapping_add(l.move_len);
        let bcc_at = btst_at.wrapping_add(4);
        let m = (l.move_len / 2) as usize;
        // The last word fetched before the operand read: the word after the
        // MOVE (the BTST opcode), whatever the addressing mode.
        let bus_word = l.words[m];
        let fc = self.fc_data();
        // `attention` was set by the Bcc to get here; from now on it means
        // an interrupt (or another slow-path reason) is due.
        self.c.update_attention();
        if self.c.attention {
            return false;
        }
        let pcs = [l.head, btst_at, bcc_at];
        let pass = PollPass {
            addr: l.addr,
            size: l.size,
            bit: l.bit,
            continue_if: !l.while_zero,
            read_offset: 4 * l.ext as u64,
            // MOVE: 8 + 4 per source extension word (UM table 8-4).
            cycles: [4 * l.ext as u64 + 8, BTST_IMM_DN_CYCLES, BCC_TAKEN_CYCLES],
        };
        // Whole passes may be skipped when the observer takes them in bulk.
        let skip = self.b.accepts_poll_passes(&pcs);
        let mut ran = false;
        loop {
            if skip {
                self.poll_skip(&pass, &pcs, target);
            }
            // MOVE <ea>,Dn
            let t0 = self.c.cycles;
            let Some(v) = self
                .b
                .poll_read(l.addr, l.size, fc, t0 + pass.read_offset, bus_word)
            else {
                if !ran {
                    // The bus does not offer this read (e.g. a RAM flag):
                    // do not analyse the loop again on every pass.
                    self.c.poll_reject = head;
                }
                return ran;
            };
            ran = true;
            self.c.inst_pc = l.head;
            self.c.cur_op = l.words[0];
            if l.size == 1 {
                self.set_logic::<1>(v);
                self.set_dreg::<1>(l.dn, v);
            } else {
                self.set_logic::<2>(v);
                self.set_dreg::<2>(l.dn, v);
            }
            self.c.ird = l.words[m];
            self.c.irc = l.words[m + 1];
            self.c.pc = btst_at.wrapping_add(4);
            self.c.cycles = t0 + pass.cycles[0];
            self.boundary(t0, Some(l.head));
            let exits = ((v >> l.bit) & 1 == 0) != l.while_zero;
            if exits || self.c.attention || self.c.cycles >= target {
                return true;
            }
            // BTST #n,Dn
            let t1 = self.c.cycles;
            self.c.inst_pc = btst_at;
            self.c.cur_op = l.words[m];
            let z = (self.c.d[l.dn] >> l.bit) & 1 == 0;
            self.c.sr = (self.c.sr & !Z) | if z { Z } else { 0 };
            self.c.ird = l.words[m + 2];
            self.c.irc = l.words[m + 3];
            self.c.pc = bcc_at.wrapping_add(4);
            self.c.cycles = t1 + pass.cycles[1];
            self.boundary(t1, Some(btst_at));
            if self.c.attention || self.c.cycles >= target {
                return true;
            }
            // Bcc.s head (taken)
            let t2 = self.c.cycles;
            self.c.inst_pc = bcc_at;
            self.c.cur_op = l.words[m + 2];
            self.c.ird = l.words[0];
            self.c.irc = l.words[1];
            self.c.pc = l.head.wrapping_add(4);
            self.c.cycles = t2 + pass.cycles[2];
            self.boundary(t2, Some(bcc_at));
            if self.c.attention || self.c.cycles >= target {
                return true;
            }
        }
    }

    /// Skip the whole passes the bus vouches for ([`Bus::poll_skip`]),
    /// starting at the loop head. The registers are left as they are: the
    /// next pass, which always runs, overwrites everything a pass changes
    /// (Dn's low byte or word, the flags; PC, the prefetch queue and
    /// `inst_pc`/`cur_op` are the same after every pass).
    #[inline(always)]
    fn poll_skip(&mut self, pass: &PollPass, pcs: &[u32; 3], target: u64) {
        let s = self.b.poll_skip(pass, self.c.cycles, target);
        if s.passes == 0 {
            return;
        }
        let mut cycles = [0u64; 3];
        for (i, c) in cycles.iter_mut().enumerate() {
            *c = pass.cycles[i] * s.passes + s.extra[i];
        }
        self.b.poll_passes(pcs, &cycles, &s.extra, s.passes);
        self.c.cycles = s.end;
    }
}

#[cfg(test)]
mod tests {
    use crate::bus::*;
    use crate::cpu::Cpu;
    use crate::tests::Ram;
    use crate::{PollPass, PollSkip};

    /// RAM with a time-dependent status port, a refresh-like boundary
    /// penalty and a timed interrupt; `fast` enables the fast-path hooks.
    struct PollBus {
        ram: Ram,
        fast: bool,
        /// Offer `poll_skip` (and log what the skipped passes would have).
        skip: bool,
        skipped: u64,
        /// Bit 3 of the status reads 1 from this time on.
        flip_at: u64,
        irq_at: u64,
        ipl: u8,
        refresh_due: u64,
        /// Every event the bus saw: ("read", addr, now), ("boundary", 0, now).
        log: Vec<(&'static str, u32, u64)>,
        poll_reads: u32,
    }

    const STATUS: [u32; 2] = [0xC0_0004, 0xFF_8004];

    impl PollBus {
        fn new(program: &[u16], fast: bool) -> Self {
            let mut b = PollBus {
                ram: Ram::new(),
                fast,
                skip: false,
                skipped: 0,
                flip_at: 5_000,
                irq_at: 1_234,
                ipl: 0,
                refresh_due: 128,
                log: Vec::new(),
                poll_reads: 0,
            };
            b.w32(0, 0x8000);
            b.w32(4, 0x1000);
            for v in 2..256u32 {
                b.w32(v * 4, 0x3000);
            }
            b.w16(0x3000, 0x4E73); // every handler: RTE
            for (i, w) in program.iter().enumerate() {
                b.w16(0x1000 + 2 * i as u32, *w);
            }
            b
        }
        fn w16(&mut self, a: u32, v: u16) {
            self.ram.w16(a, v);
        }
        fn w32(&mut self, a: u32, v: u32) {
            self.ram.w32(a, v);
        }
        fn r16(&self, a: u32) -> u16 {
            self.ram.r16(a)
        }
        fn status(&mut self, addr: u32, now: u64) -> u16 {
            self.log.push(("read", addr, now));
            let mut v = ((now / 37) as u16 ^ 0x5A50) & !8;
            if now >= self.flip_at {
                v |= 8;
            }
            v
        }
        fn is_status(addr: u32) -> bool {
            STATUS.contains(&(addr & 0xFF_FFFE))
        }
    }

    impl Bus for PollBus {
        fn read_byte(&mut self, addr: u32, _fc: FunctionCode, now: u64) -> Read<u8> {
            if Self::is_status(addr) {
                let v = self.status(addr & !1, now);
                return Read::ok(if addr & 1 == 0 {
                    (v >> 8) as u8
                } else {
                    v as u8
                });
            }
            Read::ok(self.ram.mem[(addr & 0xFFFF) as usize])
        }
        fn read_word(&mut self, addr: u32, _fc: FunctionCode, now: u64) -> Read<u16> {
            if Self::is_status(addr) {
                return Read::ok(self.status(addr, now));
            }
            Read::ok(self.r16(addr))
        }
        fn write_byte(&mut self, addr: u32, data: u8, _fc: FunctionCode, now: u64) -> Write {
            self.log.push(("write", addr, now));
            self.ram.mem[(addr & 0xFFFF) as usize] = data;
            Write::OK
        }
        fn write_word(&mut self, addr: u32, data: u16, _fc: FunctionCode, now: u64) -> Write {
            self.log.push(("write", addr, now));
            self.w16(addr, data);
            Write::OK
        }
        fn boundary(&mut self, now: u64) -> Boundary {
            self.log.push(("boundary", 0, now));
            if now >= self.irq_at {
                self.ipl = 4;
                self.irq_at = u64::MAX;
            }
            let extra = if now >= self.refresh_due {
                self.refresh_due = now + 128;
                2
            } else {
                0
            };
            Boundary {
                extra,
                ipl: self.ipl,
            }
        }
        fn interrupt_ack(&mut self, _level: u8, _now: u64) -> IntAck {
            self.ipl = 0;
            IntAck::Autovector
        }
        fn program_word(&mut self, addr: u32) -> Option<u16> {
            self.fast.then(|| self.r16(addr))
        }
        fn poll_skip(&mut self, pass: &PollPass, now: u64, limit: u64) -> PollSkip {
            self.skip_passes(pass, now, limit)
        }
        fn poll_read(
            &mut self,
            addr: u32,
            size: u32,
            _fc: FunctionCode,
            now: u64,
            _bus_word: u16,
        ) -> Option<u32> {
            if !self.fast || !Self::is_status(addr) {
                return None;
            }
            self.poll_reads += 1;
            let v = self.status(addr & !1, now);
            Some(if size == 2 {
                v as u32
            } else if addr & 1 == 0 {
                (v >> 8) as u32
            } else {
                v as u32 & 0xFF
            })
        }
    }

    impl PollBus {
        /// The skip rule of this bus: reads before `flip_at` read bit 3 as
        /// 0, boundaries before `irq_at` only charge the refresh penalty.
        fn skip_passes(&mut self, p: &PollPass, now: u64, limit: u64) -> PollSkip {
            let mut s = PollSkip::none(now);
            if !self.skip || !Self::is_status(p.addr) || p.bit != 3 || p.continue_if {
                return s;
            }
            if p.size == 1 && p.addr & 1 == 0 {
                return s;
            }
            'pass: loop {
                let start = s.end;
                let read = start + p.read_offset;
                if read >= self.flip_at {
                    break;
                }
                let mut t = start;
                let mut due = self.refresh_due;
                let mut extra = [0u64; 3];
                let mut bounds = [0u64; 3];
                for i in 0..3 {
                    let b = t + p.cycles[i];
                    if b >= self.irq_at {
                        break 'pass;
                    }
                    bounds[i] = b;
                    let x = if b >= due {
                        due = b + 128;
                        2
                    } else {
                        0
                    };
                    t = b + x;
                    extra[i] = x;
                    if t >= limit {
                        break 'pass;
                    }
                }
                self.log.push(("read", p.addr & !1, read));
                for b in bounds {
                    self.log.push(("boundary", 0, b));
                }
                self.refresh_due = due;
                self.poll_reads += 1;
                self.skipped += 1;
                s.passes += 1;
                s.end = t;
                for (e, x) in s.extra.iter_mut().zip(extra) {
                    *e += x;
                }
            }
            s
        }
    }

    /// Per-PC instruction counts and cycles; `bulk`: takes skipped passes.
    #[derive(Default, PartialEq, Debug)]
    struct Tally {
        bulk: bool,
        per_pc: std::collections::BTreeMap<u32, (u64, u64)>,
        exc: Vec<(ExceptionKind, u32)>,
    }
    impl Observer for Tally {
        fn instruction(&mut self, pc: u32, cycles: u32) {
            let e = self.per_pc.entry(pc).or_default();
            e.0 += 1;
            e.1 += cycles as u64;
        }
        fn exception(&mut self, kind: ExceptionKind, _v: u8, _h: u32, cycles: u32) {
            self.exc.push((kind, cycles));
        }
        fn accepts_poll_passes(&mut self, _pcs: &[u32; 3]) -> bool {
            self.bulk
        }
        fn poll_passes(&mut self, pcs: &[u32; 3], cycles: &[u64; 3], extra: &[u64; 3], n: u64) {
            for i in 0..3 {
                assert!(extra[i] <= cycles[i]);
                let e = self.per_pc.entry(pcs[i]).or_default();
                e.0 += n;
                e.1 += cycles[i];
            }
        }
    }

    /// Run `program` with every pass executed (normal path) and with the
    /// fast path skipping passes: the bus log (the skipping bus logs what
    /// the skipped passes would have done), per-PC counts and cycles, the
    /// registers and the time must agree. Returns the passes skipped.
    fn same_with_skips(program: &[u16], chunk: u64, end: u64) -> u64 {
        let run = |fast: bool| {
            let mut bus = PollBus::new(program, fast);
            bus.skip = fast;
            let mut cpu = Cpu::new();
            cpu.reset(&mut bus);
            let mut tally = Tally {
                bulk: fast,
                ..Tally::default()
            };
            let mut t = 0;
            while t < end {
                t = (t + chunk).min(end);
                cpu.run_until(&mut bus, &mut tally, t);
            }
            (
                cpu.registers(),
                cpu.cycles(),
                tally.per_pc,
                tally.exc,
                bus.log,
                bus.skipped,
            )
        };
        let slow = run(false);
        let fast = run(true);
        assert_eq!(slow.0, fast.0, "registers");
        assert_eq!(slow.1, fast.1, "cycles");
        assert_eq!(slow.2, fast.2, "per-PC counts and cycles");
        assert_eq!(slow.3, fast.3, "exceptions");
        assert_eq!(slow.4, fast.4, "bus log");
        fast.5
    }

    #[derive(Default, PartialEq, Debug)]
    struct Log {
        ins: Vec<(u32, u32)>,
        exc: Vec<(ExceptionKind, u32)>,
    }
    impl Observer for Log {
        fn instruction(&mut self, pc: u32, cycles: u32) {
            self.ins.push((pc, cycles));
        }
        fn exception(&mut self, kind: ExceptionKind, _v: u8, _h: u32, cycles: u32) {
            self.exc.push((kind, cycles));
        }
    }

    /// Run `program` to `end` cycles in steps of `chunk` with and without
    /// the fast path: everything the bus and the observer see, and the
    /// final state, must be identical.
    fn same_both_ways(program: &[u16], chunk: u64, end: u64) -> u32 {
        let run = |fast: bool| {
            let mut bus = PollBus::new(program, fast);
            let mut cpu = Cpu::new();
            cpu.reset(&mut bus);
            let mut log = Log::default();
            let mut t = 0;
            while t < end {
                t = (t + chunk).min(end);
                cpu.run_until(&mut bus, &mut log, t);
            }
            (cpu.registers(), cpu.cycles(), log, bus.log, bus.poll_reads)
        };
        let slow = run(false);
        let fast = run(true);
        assert_eq!(slow.4, 0);
        assert_eq!(slow.0, fast.0, "registers");
        assert_eq!(slow.1, fast.1, "cycles");
        assert_eq!(slow.2, fast.2, "observer reports");
        assert_eq!(slow.3, fast.3, "bus log");
        fast.4
    }

    // move #$2000,sr (interrupts on)
    const SR_2000: [u16; 2] = [0x46FC, 0x2000];

    #[test]
    fn abs_long_word_loop_until_bit_set() {
        // loop: move.w $C00004,d1 ; btst #3,d1 ; beq.s loop ; move.w d1,d2 ;
        // bra.s *
        let mut p = SR_2000.to_vec();
        p.extend([
            0x3239, 0x00C0, 0x0004, 0x0801, 0x0003, 0x67F4, 0x3401, 0x60FE,
        ]);
        for chunk in [1_000_000, 997, 64, 13] {
            let n = same_both_ways(&p, chunk, 8_000);
            assert!(n > 50, "fast path used ({n} reads)");
        }
    }

    #[test]
    fn address_register_byte_loop_while_bit_clear_and_set() {
        // lea $C00004,a0 ; loop: move.b 1(a0),d0 ; btst #3,d0 ; beq.s loop ;
        // loop2: move.b (a0),d5... (the high byte's bit 3 varies)
        let mut p = SR_2000.to_vec();
        p.extend([0x41F9, 0x00C0, 0x0004]);
        p.extend([0x1028, 0x0001, 0x0800, 0x0003, 0x67F6]);
        // move.w (a0),d7 ; btst #4,d7 ; bne.s loop2 ; bra.s *
        p.extend([0x3E10, 0x0807, 0x0004, 0x66F8, 0x60FE]);
        for chunk in [1_000_000, 101] {
            let n = same_both_ways(&p, chunk, 9_000);
            assert!(n > 50, "fast path used ({n} reads)");
        }
    }

    #[test]
    fn abs_short_loop() {
        // loop: move.w $8004.w,d3 ; btst #3,d3 ; beq.s loop ; bra.s *
        let mut p = SR_2000.to_vec();
        p.extend([0x3638, 0x8004, 0x0803, 0x0003, 0x67F6, 0x60FE]);
        let n = same_both_ways(&p, 500, 7_000);
        assert!(n > 50, "fast path used ({n} reads)");
    }

    #[test]
    fn skipped_passes_match_every_pass_run() {
        // The loops of the tests above, skipping passes: word abs.L, byte
        // d16(An) (then a loop on a bit the bus does not vouch for), abs.W.
        let mut a = SR_2000.to_vec();
        a.extend([
            0x3239, 0x00C0, 0x0004, 0x0801, 0x0003, 0x67F4, 0x3401, 0x60FE,
        ]);
        let mut b = SR_2000.to_vec();
        b.extend([0x41F9, 0x00C0, 0x0004]);
        b.extend([0x1028, 0x0001, 0x0800, 0x0003, 0x67F6]);
        b.extend([0x3E10, 0x0807, 0x0004, 0x66F8, 0x60FE]);
        let mut c = SR_2000.to_vec();
        c.extend([0x3638, 0x8004, 0x0803, 0x0003, 0x67F6, 0x60FE]);
        for p in [&a, &b, &c] {
            for chunk in [1_000_000, 997, 64, 13] {
                let n = same_with_skips(p, chunk, 9_000);
                if chunk >= 64 {
                    assert!(n > 20, "passes skipped ({n})");
                }
            }
        }
    }

    #[test]
    fn other_loops_are_left_alone() {
        // A loop testing another register than it loads: not a polling loop.
        // loop: move.w $C00004,d1 ; btst #3,d2 ; beq.s loop
        let mut p = SR_2000.to_vec();
        p.extend([0x3239, 0x00C0, 0x0004, 0x0802, 0x0003, 0x67F4, 0x60FE]);
        assert_eq!(same_both_ways(&p, 1_000, 3_000), 0);
        // A loop on an address the bus does not offer (a RAM flag).
        let mut p = SR_2000.to_vec();
        p.extend([0x3239, 0x0000, 0x4000, 0x0801, 0x0003, 0x67F4, 0x60FE]);
        assert_eq!(same_both_ways(&p, 1_000, 3_000), 0);
    }
}
