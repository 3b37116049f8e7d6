//! The polling-loop fast path (`src/poll.rs`) against the plain run loop:
//! with and without the fast-path hooks, and with skipped passes, the bus,
//! the observer and the final state must see exactly the same.
//! (Moved from `src/poll.rs`'s unit tests to share the test binary's one
//! instantiation of the core.)

use retroprof_m68k::bus::*;

use crate::host::Cpu;
use crate::units::Ram;

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
